//! The face model and the runtime that runs it: YuNet-n (libfacedetection.train,
//! Apache-2.0, `models/LICENSE-yunet`), 323 KB of ONNX compiled into the binary and
//! run in this process by `tract` (pure Rust, MIT/Apache-2.0). Nothing is fetched at
//! build or run time and no GPU is used.
//!
//! The ONNX file takes any input size (its height and width are symbolic); tract
//! optimises a plan for one concrete size, which costs a few milliseconds, so plans
//! are kept per size. Inputs are brought to at most [`super::DETECT_SIDE`] a side and
//! padded to a multiple of 32, so only a few dozen sizes ever occur; at most
//! [`PLANS_KEPT`] are kept. One thread per run (tract runs a plan on the calling
//! thread): the same input gives the same boxes, bit for bit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tract_onnx::prelude::*;

use crate::media::error::MediaError;

/// YuNet-n, exported with dynamic height and width.
static MODEL_BYTES: &[u8] = include_bytes!("../../../../models/yunet_n.onnx");

/// Optimised plans kept at once (each a few MB of packed weights).
const PLANS_KEPT: usize = 8;

type Plan = TypedRunnableModel<TypedModel>;

/// The plans kept, by input height and width.
type Plans = Mutex<HashMap<(usize, usize), Arc<Plan>>>;

/// The parsed model, before it is given a size.
fn parsed() -> Result<&'static InferenceModel, MediaError> {
    static PARSED: OnceLock<Result<InferenceModel, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            let mut model = tract_onnx::onnx()
                .model_for_read(&mut &MODEL_BYTES[..])
                .map_err(|e| format!("{e:#}"))?;
            // The export named one symbol (`dim`) for the cell count of every output,
            // though each grid has its own, and tract fails to unify them; the file in
            // models/ has those shapes removed, and this keeps any that remain from
            // binding: the outputs' shapes follow from the input's.
            for output in 0..model.outputs.len() {
                model
                    .set_output_fact(output, InferenceFact::default())
                    .map_err(|e| format!("{e:#}"))?;
            }
            Ok(model)
        })
        .as_ref()
        .map_err(|e| fault(e))
}

/// The plan for an input of `height` × `width` (each a multiple of 32).
fn plan(height: usize, width: usize) -> Result<Arc<Plan>, MediaError> {
    static PLANS: OnceLock<Plans> = OnceLock::new();
    let plans = PLANS.get_or_init(Default::default);
    if let Some(plan) = lock(plans).get(&(height, width)) {
        return Ok(plan.clone());
    }
    let plan = parsed()?
        .clone()
        .with_input_fact(0, f32::fact([1, 3, height, width]).into())
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .map_err(|e| fault(&format!("{e:#}")))?;
    let plan = Arc::new(plan);
    let mut plans = lock(plans);
    if plans.len() >= PLANS_KEPT {
        // Any one goes: sizes come from aspect ratios, and a busy one is rebuilt in ms.
        if let Some(key) = plans.keys().next().copied() {
            plans.remove(&key);
        }
    }
    plans.insert((height, width), plan.clone());
    Ok(plan)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn fault(why: &str) -> MediaError {
    MediaError::Io(std::io::Error::other(format!(
        "the face detector failed ({why})"
    )))
}

/// The model's twelve outputs for one input, each flattened: per stride 8, 16 and 32,
/// the class score, the objectness (both 0–1), the box (4 per cell) and the five
/// landmarks (10 per cell, unused here).
pub(super) struct RawOutputs {
    pub cls: [Vec<f32>; 3],
    pub obj: [Vec<f32>; 3],
    pub bbox: [Vec<f32>; 3],
}

/// Runs the model on `input`: BGR, 0–255, planar (`[3][height][width]`), `height`
/// and `width` multiples of 32.
pub(super) fn run(input: Vec<f32>, height: usize, width: usize) -> Result<RawOutputs, MediaError> {
    let plan = plan(height, width)?;
    let tensor =
        Tensor::from_shape(&[1, 3, height, width], &input).map_err(|e| fault(&e.to_string()))?;
    drop(input);
    let outputs = plan
        .run(tvec!(tensor.into()))
        .map_err(|e| fault(&e.to_string()))?;
    if outputs.len() < 9 {
        return Err(fault("the model gave fewer outputs than it has"));
    }
    let flat = |i: usize| -> Result<Vec<f32>, MediaError> {
        Ok(outputs[i]
            .as_slice::<f32>()
            .map_err(|e| fault(&e.to_string()))?
            .to_vec())
    };
    Ok(RawOutputs {
        cls: [flat(0)?, flat(1)?, flat(2)?],
        obj: [flat(3)?, flat(4)?, flat(5)?],
        bbox: [flat(6)?, flat(7)?, flat(8)?],
    })
}

/// The output names, in order (for the test that pins the layout `run` reads).
#[cfg(test)]
pub(super) fn output_names() -> Vec<String> {
    let model = parsed().expect("the model parses");
    model
        .output_outlets()
        .expect("outputs")
        .iter()
        .map(|o| model.outlet_label(*o).unwrap_or_default().to_string())
        .collect()
}
