//! Our run of the network against tract's (the reference it replaced): the same
//! outputs, on a photograph and on noise, with the SIMD kernels and the portable ones.

use tract_onnx::prelude::*;

use super::engine::Network;
use super::layer::Map;
use super::layers::{Pool, KEPT_BYTES};
use super::model::MODEL_BYTES;
use super::portable::PORTABLE;

/// tract's parse of the model (its outputs' shapes left to follow from the input's:
/// the export names one symbol for every grid's cell count).
fn tract_model() -> InferenceModel {
    let mut model = tract_onnx::onnx()
        .model_for_read(&mut &MODEL_BYTES[..])
        .expect("tract parses the model");
    for output in 0..model.outputs.len() {
        model
            .set_output_fact(output, InferenceFact::default())
            .expect("an output");
    }
    model
}

/// tract's first nine outputs for `input` (`[3][height][width]`), flattened.
fn tract_run(input: &[f32], height: usize, width: usize) -> Vec<Vec<f32>> {
    let plan = tract_model()
        .with_input_fact(0, f32::fact([1, 3, height, width]).into())
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .expect("tract plans the model");
    let tensor = Tensor::from_shape(&[1, 3, height, width], input).expect("a tensor");
    let outputs = plan.run(tvec!(tensor.into())).expect("tract runs");
    (outputs.iter().take(9))
        .map(|t| t.as_slice::<f32>().expect("floats").to_vec())
        .collect()
}

fn ours(input: &[f32], height: usize, width: usize) -> Vec<Vec<f32>> {
    let network = Network::parse(MODEL_BYTES, 9).expect("our engine reads the model");
    let map = Map {
        channels: 3,
        height,
        width,
        data: input.to_vec(),
    };
    network.run(map).expect("our engine runs")
}

/// Planar BGR of the astronaut at 256 × 256, and noise at 96 × 160.
fn inputs() -> Vec<(Vec<f32>, usize, usize)> {
    let rgb = super::tests::astronaut().to_rgb8();
    let plane = 256 * 256;
    let mut photo = vec![0f32; 3 * plane];
    for (i, p) in rgb.pixels().enumerate() {
        for c in 0..3 {
            photo[(2 - c) * plane + i] = f32::from(p[c]);
        }
    }
    let mut seed = 7u32;
    let noise = (0..3 * 96 * 160)
        .map(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 24) as f32
        })
        .collect();
    vec![(photo, 256, 256), (noise, 96, 160)]
}

fn assert_close(ours: &[Vec<f32>], reference: &[Vec<f32>]) {
    assert_eq!(ours.len(), reference.len());
    for (i, (a, b)) in ours.iter().zip(reference).enumerate() {
        assert_eq!(a.len(), b.len(), "output {i}'s length");
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-3 * (1.0 + y.abs()),
                "output {i}[{k}]: {x} vs {y}"
            );
        }
    }
}

#[test]
fn the_model_gives_its_outputs_in_the_order_the_decoder_reads() {
    let model = tract_model();
    let names: Vec<String> = (model.output_outlets().expect("outputs").iter())
        .map(|o| model.outlet_label(*o).unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        names[..9],
        [
            "cls_8", "cls_16", "cls_32", "obj_8", "obj_16", "obj_32", "bbox_8", "bbox_16",
            "bbox_32"
        ]
    );
}

#[test]
fn our_run_of_the_network_gives_tracts_outputs() {
    for (input, height, width) in inputs() {
        let ours = ours(&input, height, width);
        assert_close(&ours, &tract_run(&input, height, width));
        // And the same bits on a second run.
        assert_eq!(ours, self::ours(&input, height, width));
    }
}

#[test]
fn the_portable_kernels_give_the_simd_kernels_outputs() {
    for (input, height, width) in inputs() {
        let simd = ours(&input, height, width);
        PORTABLE.with(|p| p.set(true));
        let portable = ours(&input, height, width);
        PORTABLE.with(|p| p.set(false));
        assert_close(&portable, &simd);
    }
}

#[test]
fn a_graph_with_an_operation_we_do_not_run_is_refused_when_read() {
    // The model with its first convolution made another operation: refused, not half
    // run.
    let mut proto = tract_onnx::onnx()
        .proto_model_for_read(&mut &MODEL_BYTES[..])
        .expect("the model decodes");
    let graph = proto.graph.as_mut().expect("a graph");
    let conv = (graph.node.iter_mut())
        .find(|n| n.op_type == "Conv")
        .expect("a convolution");
    conv.op_type = "Cosh".into();
    let err = Network::from_proto(&proto, 9).err().expect("refused");
    assert!(err.contains("Cosh"), "{err}");
    // And a depthwise convolution with another window than 3×3.
    let mut proto = tract_onnx::onnx()
        .proto_model_for_read(&mut &MODEL_BYTES[..])
        .expect("the model decodes");
    let graph = proto.graph.as_mut().expect("a graph");
    let depthwise = (graph.node.iter_mut())
        .find(|n| n.attribute.iter().any(|a| a.name == "group" && a.i > 1))
        .expect("a depthwise convolution");
    for a in &mut depthwise.attribute {
        if a.name == "strides" {
            a.ints = vec![2, 2];
        }
    }
    let err = Network::from_proto(&proto, 9).err().expect("refused");
    assert!(err.contains("depthwise"), "{err}");
}

#[test]
fn the_buffers_a_run_at_the_largest_size_keeps_fit_what_is_kept_between_runs() {
    // 960 × 540 brought to 960 × 544: the largest input of a 16:9 photo.
    let network = Network::parse(MODEL_BYTES, 9).expect("our engine reads the model");
    let mut pool = Pool::default();
    let map = Map {
        channels: 3,
        height: 544,
        width: 960,
        data: vec![0.0; 3 * 544 * 960],
    };
    network.run_in(map, &mut pool).expect("our engine runs");
    let bytes = pool.bytes();
    assert!(
        bytes > 3 * 544 * 960 * 4 && bytes <= KEPT_BYTES,
        "{bytes} bytes"
    );
}
