//! The face network's layers read from its ONNX nodes: only the forms YuNet uses
//! (see `engine`), anything else refused with what it is.

use std::collections::HashMap;

use tract_onnx::pb::{NodeProto, TensorProto};

use crate::media::image::faces::layer::{Conv, Op};
use crate::media::image::faces::portable::Window;

pub(super) fn conv(node: &NodeProto, inits: &HashMap<&str, &TensorProto>) -> Result<Op, String> {
    let tensor = |k: usize| -> Result<(Vec<usize>, Vec<f32>), String> {
        let name = node.input.get(k).ok_or("a convolution without weights")?;
        let t = inits
            .get(name.as_str())
            .ok_or("weights that are not constants")?;
        Ok((t.dims.iter().map(|&d| d as usize).collect(), floats(t)?))
    };
    let (dims, weights) = tensor(1)?;
    let [outputs, per_group, kh, kw] = dims[..] else {
        return Err("a convolution that is not 2-D".into());
    };
    let bias = match node.input.get(2).filter(|b| !b.is_empty()) {
        Some(_) => tensor(2)?.1,
        None => vec![0.0; outputs],
    };
    let group = node
        .get_attr_opt::<i64>("group")
        .ok()
        .flatten()
        .unwrap_or(1) as usize;
    let strides = ints(node, "strides").unwrap_or_else(|| vec![1, 1]);
    let pads = ints(node, "pads").unwrap_or_else(|| vec![0; 4]);
    let dilations = ints(node, "dilations").unwrap_or_else(|| vec![1, 1]);
    let same = |v: &[i64]| v.windows(2).all(|p| p[0] == p[1]);
    let plain = kh == kw && same(&strides) && same(&pads) && dilations.iter().all(|&d| d == 1);
    let auto_pad = node.get_attr_opt::<&str>("auto_pad").ok().flatten();
    if !plain || auto_pad.is_some_and(|a| a != "NOTSET") || bias.len() != outputs {
        return Err("a convolution with uneven strides, padding or dilations".into());
    }
    let window = Window {
        size: kh,
        stride: strides.first().copied().unwrap_or(1) as usize,
        pad: pads.first().copied().unwrap_or(0) as usize,
    };
    let kind = match (group, window) {
        (
            1,
            Window {
                size: 1,
                stride: 1,
                pad: 0,
            },
        ) => Conv::Pointwise,
        (
            g,
            Window {
                size: 3,
                stride: 1,
                pad: 1,
            },
        ) if g == outputs && per_group == 1 => Conv::Depthwise3,
        (1, _) => Conv::General(window),
        _ => return Err("a grouped convolution other than 3×3 depthwise".into()),
    };
    Ok(Op::Conv {
        kind,
        weights,
        bias,
        relu: false,
    })
}

pub(super) fn upsample(
    node: &NodeProto,
    inits: &HashMap<&str, &TensorProto>,
) -> Result<Op, String> {
    let attr = |name: &str| node.get_attr_opt::<&str>(name).ok().flatten();
    let nearest = attr("mode") == Some("nearest")
        && matches!(
            attr("coordinate_transformation_mode"),
            None | Some("asymmetric")
        )
        && matches!(attr("nearest_mode"), None | Some("floor"));
    let scales = node
        .input
        .iter()
        .skip(1)
        .filter_map(|name| inits.get(name.as_str()))
        .map(|t| floats(t))
        .find(|v| v.as_ref().map_or(true, |v| v.len() == 4))
        .ok_or("an upsampling by sizes")??;
    let factor = scales[2];
    let whole = factor >= 1.0 && factor.fract() == 0.0;
    if !nearest || scales[..2] != [1.0, 1.0] || scales[3] != factor || !whole {
        return Err("an upsampling other than nearest by a whole factor".into());
    }
    Ok(Op::Upsample(factor as usize))
}

/// An attribute of integers; `None` when absent (or not integers).
pub(super) fn ints(node: &NodeProto, name: &str) -> Option<Vec<i64>> {
    node.get_attr_opt_slice::<i64>(name)
        .ok()
        .flatten()
        .map(<[i64]>::to_vec)
}

/// The values of a float tensor.
pub(super) fn floats(t: &TensorProto) -> Result<Vec<f32>, String> {
    if t.data_type != 1 {
        return Err(format!("a constant of type {}", t.data_type));
    }
    if t.raw_data.is_empty() {
        return Ok(t.float_data.clone());
    }
    Ok(t.raw_data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}
