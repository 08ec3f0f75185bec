//! The face network run by our own kernels (`kernels`): the ONNX graph read once (by
//! `tract-onnx`'s protobuf reader) into a list of steps over planar maps.
//!
//! Why not tract's own run: its 3×3 depthwise convolutions (half of YuNet's layers)
//! are scalar loops, its `Resize` walks ndarray indices one element at a time, and it
//! allocates every map afresh; on a 2 MP photo it took 194 ms where OpenCV takes 41
//! (docs/PERFORMANCE.md). YuNet needs only five operations — convolutions (1×1, 3×3
//! depthwise, the 3×3 stride-2 stem), ReLU, 2×2 max pooling, nearest upsampling and
//! addition — so they are done here, and tract's run stays as the reference the
//! tests compare this one with. A graph using anything else is refused when it is
//! read, never half run.

use std::collections::HashMap;

use tract_onnx::pb::{ModelProto, TensorProto};
use tract_onnx::prelude::Framework;

use crate::media::image::faces::layer::{Map, Op};
use crate::media::image::faces::layers::{eval, Pool};
use crate::media::image::faces::read::{conv, ints, upsample};

struct Step {
    op: Op,
    inputs: Vec<usize>,
    output: usize,
}

/// One output the decoder reads: the map in `slot`, read cell by cell (channels
/// innermost, as the graph's transpose to NHWC lays it), through a sigmoid or not.
struct Head {
    slot: usize,
    sigmoid: bool,
}

/// The network, ready to run on inputs of any size that is a multiple of its strides.
pub struct Network {
    steps: Vec<Step>,
    slots: usize,
    /// The last step reading each slot (`usize::MAX` for heads: read at the end).
    last_use: Vec<usize>,
    heads: Vec<Head>,
}

impl Network {
    /// The network of an ONNX file, keeping its first `outputs` outputs (and only the
    /// layers they need).
    pub fn parse(bytes: &[u8], outputs: usize) -> Result<Network, String> {
        let proto = tract_onnx::onnx()
            .proto_model_for_read(&mut &bytes[..])
            .map_err(|e| format!("{e:#}"))?;
        Network::from_proto(&proto, outputs)
    }

    /// `parse` of a decoded file.
    pub fn from_proto(proto: &ModelProto, outputs: usize) -> Result<Network, String> {
        let graph = proto.graph.as_ref().ok_or("no graph")?;
        let inits: HashMap<&str, &TensorProto> = graph
            .initializer
            .iter()
            .map(|t| (t.name.as_str(), t))
            .collect();
        let producer: HashMap<&str, usize> = (graph.node.iter().enumerate())
            .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
            .collect();
        let input = graph.input.first().ok_or("no input")?.name.as_str();
        // The heads: each output traced back through its sigmoid, reshape and transpose
        // to the map it reads.
        let mut head_names = Vec::new();
        for output in graph.output.iter().take(outputs) {
            let (mut name, mut sigmoid) = (output.name.as_str(), false);
            while let Some(node) = producer.get(name).map(|&i| &graph.node[i]) {
                match node.op_type.as_str() {
                    "Sigmoid" => sigmoid = true,
                    "Reshape" => {}
                    "Transpose" => {
                        let perm = ints(node, "perm").unwrap_or_default();
                        if perm != [0, 2, 3, 1] {
                            return Err(format!("a transpose by {perm:?}"));
                        }
                    }
                    _ => break,
                }
                name = node.input.first().ok_or("a node without input")?;
            }
            head_names.push((name, sigmoid));
        }
        // The nodes those maps need.
        let mut needed = vec![false; graph.node.len()];
        let mut stack: Vec<&str> = head_names.iter().map(|h| h.0).collect();
        while let Some(name) = stack.pop() {
            if let Some(&i) = producer.get(name) {
                if !needed[i] {
                    needed[i] = true;
                    stack.extend(graph.node[i].input.iter().map(String::as_str));
                }
            }
        }
        let mut readers: HashMap<&str, usize> = HashMap::new();
        for node in (graph.node.iter().zip(&needed)).filter(|n| *n.1) {
            for name in &node.0.input {
                *readers.entry(name.as_str()).or_default() += 1;
            }
        }
        let mut slot_of: HashMap<&str, usize> = HashMap::from([(input, 0)]);
        let mut steps: Vec<Step> = Vec::new();
        for node in (graph.node.iter().zip(&needed))
            .filter(|n| *n.1)
            .map(|n| n.0)
        {
            let slot = |name: &str| {
                slot_of
                    .get(name)
                    .copied()
                    .ok_or_else(|| format!("{} reads {name}, not computed", node.op_type))
            };
            let first = slot(node.input.first().ok_or("a node without input")?)?;
            let out_name = node.output.first().ok_or("a node without output")?.as_str();
            let (op, inputs) = match node.op_type.as_str() {
                "Relu" => {
                    // Done by the convolution before it when nothing else reads its map.
                    let fused = steps.last_mut().filter(|s| {
                        s.output == first && readers.get(node.input[0].as_str()) == Some(&1)
                    });
                    if let Some(Op::Conv { relu, .. }) = fused.map(|s| &mut s.op) {
                        *relu = true;
                        slot_of.insert(out_name, first);
                        continue;
                    }
                    (Op::Relu, vec![first])
                }
                "Conv" => (conv(node, &inits)?, vec![first]),
                "MaxPool" => {
                    let pads = ints(node, "pads").unwrap_or_default();
                    let ok = ints(node, "kernel_shape").is_some_and(|k| k == [2, 2])
                        && ints(node, "strides").is_some_and(|s| s == [2, 2])
                        && pads.iter().all(|&p| p == 0)
                        && node.get_attr_opt::<i64>("ceil_mode").ok().flatten() != Some(1);
                    if !ok {
                        return Err("a max pooling other than 2×2, stride 2".into());
                    }
                    (Op::MaxPool2, vec![first])
                }
                "Resize" | "Upsample" => (upsample(node, &inits)?, vec![first]),
                "Add" => (Op::Add, vec![first, slot(&node.input[1])?]),
                other => return Err(format!("the operation {other}")),
            };
            let output = slot_of.len();
            slot_of.insert(out_name, output);
            steps.push(Step { op, inputs, output });
        }
        let slots = slot_of.len() + 1;
        let mut last_use = vec![0; slots];
        for (i, step) in steps.iter().enumerate() {
            for &s in &step.inputs {
                last_use[s] = i;
            }
        }
        let mut heads = Vec::new();
        for (name, sigmoid) in head_names {
            let slot = *slot_of
                .get(name)
                .ok_or_else(|| format!("{name} not computed"))?;
            last_use[slot] = usize::MAX;
            heads.push(Head { slot, sigmoid });
        }
        Ok(Network {
            steps,
            slots,
            last_use,
            heads,
        })
    }

    /// The heads' values for `input` (height and width multiples of 32), each cell by
    /// cell with its channels innermost.
    pub fn run(&self, input: Map) -> Result<Vec<Vec<f32>>, String> {
        let mut pool = Pool::kept();
        let heads = self.run_in(input, &mut pool);
        pool.keep();
        heads
    }

    /// `run` with the buffers of `pool`, every map's buffer given back to it after.
    pub(super) fn run_in(&self, input: Map, pool: &mut Pool) -> Result<Vec<Vec<f32>>, String> {
        let mut maps: Vec<Option<Map>> = (0..self.slots).map(|_| None).collect();
        maps[0] = Some(input);
        for (i, step) in self.steps.iter().enumerate() {
            let arg = |k: usize| {
                maps[step.inputs[k]]
                    .as_ref()
                    .ok_or("a map read after it was dropped")
            };
            let second = step.inputs.get(1).map(|_| arg(1)).transpose()?;
            let out = eval(&step.op, arg(0)?, second, pool)?;
            for &s in &step.inputs {
                if self.last_use[s] == i {
                    if let Some(map) = maps[s].take() {
                        pool.give(map.data);
                    }
                }
            }
            maps[step.output] = Some(out);
        }
        let heads = (self.heads.iter())
            .map(|head| {
                let map = maps[head.slot].as_ref().ok_or("a head not computed")?;
                Ok(cells(map, head.sigmoid))
            })
            .collect();
        for map in maps.into_iter().flatten() {
            pool.give(map.data);
        }
        heads
    }

    /// A buffer whose first `len` values are zeros, for an input, from the buffers
    /// kept between runs.
    pub fn zeroed(len: usize) -> Vec<f32> {
        let mut pool = Pool::kept();
        let buffer = pool.zeroed(len);
        pool.keep();
        buffer
    }
}

/// `map` read cell by cell, channels innermost.
fn cells(map: &Map, sigmoid: bool) -> Vec<f32> {
    let plane = map.width * map.height;
    let mut out = vec![0f32; plane * map.channels];
    for c in 0..map.channels {
        for (p, &v) in map.data[c * plane..(c + 1) * plane].iter().enumerate() {
            out[p * map.channels + c] = if sigmoid { 1.0 / (1.0 + (-v).exp()) } else { v };
        }
    }
    out
}
