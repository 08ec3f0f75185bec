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

use tract_onnx::pb::{ModelProto, NodeProto, TensorProto};
use tract_onnx::prelude::Framework;

use crate::media::image::faces::kernels::{self, Product, Window};

/// A planar map: `channels` planes of `height` rows of `width`.
pub struct Map {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub data: Vec<f32>,
}

enum Conv {
    /// 1×1, stride 1.
    Pointwise,
    /// 3×3, stride 1, padding 1, one input channel per output channel.
    Depthwise3,
    /// Any square window over all the input channels.
    General(Window),
}

enum Op {
    Conv {
        kind: Conv,
        weights: Vec<f32>,
        bias: Vec<f32>,
        relu: bool,
    },
    Relu,
    MaxPool2,
    Upsample(usize),
    Add,
}

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
        let mut maps: Vec<Option<Map>> = (0..self.slots).map(|_| None).collect();
        maps[0] = Some(input);
        let mut pool = Pool::default();
        for (i, step) in self.steps.iter().enumerate() {
            let arg = |k: usize| {
                maps[step.inputs[k]]
                    .as_ref()
                    .ok_or("a map read after it was dropped")
            };
            let second = step.inputs.get(1).map(|_| arg(1)).transpose()?;
            let out = eval(&step.op, arg(0)?, second, &mut pool)?;
            for &s in &step.inputs {
                if self.last_use[s] == i {
                    if let Some(map) = maps[s].take() {
                        pool.give(map.data);
                    }
                }
            }
            maps[step.output] = Some(out);
        }
        self.heads
            .iter()
            .map(|head| {
                let map = maps[head.slot].as_ref().ok_or("a head not computed")?;
                Ok(cells(map, head.sigmoid))
            })
            .collect()
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

/// The buffers of the maps a run no longer reads, for the maps it makes next: a run
/// touches fresh memory (page faults, zeroing) only for its first few maps.
#[derive(Default)]
struct Pool(Vec<Vec<f32>>);

impl Pool {
    /// A buffer of `len` values, any values: every kernel writes all of its output.
    fn take(&mut self, len: usize) -> Vec<f32> {
        let best = (self.0.iter().enumerate())
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let mut buffer = match best {
            Some(i) => self.0.swap_remove(i),
            None => Vec::new(),
        };
        buffer.truncate(len);
        buffer.resize(len, 0.0);
        buffer
    }

    fn give(&mut self, buffer: Vec<f32>) {
        self.0.push(buffer);
    }
}

fn eval(op: &Op, x: &Map, y: Option<&Map>, pool: &mut Pool) -> Result<Map, String> {
    let (c, h, w) = (x.channels, x.height, x.width);
    let plane = w * h;
    let mut like = |channels, height, width| Map {
        channels,
        height,
        width,
        data: pool.take(channels * height * width),
    };
    Ok(match op {
        Op::Conv {
            kind,
            weights,
            bias,
            relu,
        } => {
            let relu = *relu;
            match kind {
                Conv::Pointwise => {
                    let mut out = like(bias.len(), h, w);
                    let p = Product {
                        x: &x.data,
                        x_stride: plane,
                        inputs: c,
                        n: plane,
                        weights,
                        bias,
                        relu,
                    };
                    kernels::product(&p, &mut out.data, plane);
                    out
                }
                Conv::Depthwise3 => {
                    let mut out = like(c, h, w);
                    for ch in 0..c {
                        let k: &[f32; 9] = weights[9 * ch..9 * ch + 9].try_into().expect("9");
                        let range = ch * plane..(ch + 1) * plane;
                        let (src, dest) = (&x.data[range.clone()], &mut out.data[range]);
                        kernels::depthwise3(src, (w, h), k, bias[ch], relu, dest);
                    }
                    out
                }
                Conv::General(window) => {
                    let mut out = like(bias.len(), window.out(h), window.out(w));
                    general(x, *window, weights, bias, relu, &mut out.data);
                    out
                }
            }
        }
        Op::Relu => {
            let mut out = like(c, h, w);
            for (o, v) in out.data.iter_mut().zip(&x.data) {
                *o = v.max(0.0);
            }
            out
        }
        Op::MaxPool2 => {
            let mut out = like(c, h / 2, w / 2);
            let (oh, ow) = (h / 2, w / 2);
            for ch in 0..c {
                for oy in 0..oh {
                    let r0 = &x.data[ch * plane + 2 * oy * w..][..w];
                    let r1 = &x.data[ch * plane + (2 * oy + 1) * w..][..w];
                    let dest = &mut out.data[(ch * oh + oy) * ow..][..ow];
                    for (ox, d) in dest.iter_mut().enumerate() {
                        *d = r0[2 * ox]
                            .max(r0[2 * ox + 1])
                            .max(r1[2 * ox].max(r1[2 * ox + 1]));
                    }
                }
            }
            out
        }
        Op::Upsample(f) => {
            let (oh, ow) = (h * f, w * f);
            let mut out = like(c, oh, ow);
            for ch in 0..c {
                for oy in 0..oh {
                    let src = &x.data[ch * plane + (oy / f) * w..][..w];
                    let dest = &mut out.data[(ch * oh + oy) * ow..][..ow];
                    for (ox, d) in dest.iter_mut().enumerate() {
                        *d = src[ox / f];
                    }
                }
            }
            out
        }
        Op::Add => {
            let y = y.ok_or("an addition of one map")?;
            if (y.channels, y.height, y.width) != (c, h, w) {
                return Err("an addition of maps of different shapes".into());
            }
            let mut out = like(c, h, w);
            for (o, (a, b)) in out.data.iter_mut().zip(x.data.iter().zip(&y.data)) {
                *o = a + b;
            }
            out
        }
    })
}

/// A convolution over all the input channels with `window`: bands of output rows
/// unrolled into columns, then the product of the weights with them, into `out`.
fn general(x: &Map, window: Window, weights: &[f32], bias: &[f32], relu: bool, out: &mut [f32]) {
    let (oh, ow) = (window.out(x.height), window.out(x.width));
    let taps = x.channels * window.size * window.size;
    // Bands of about 64 K values of columns: they stay in the core's cache.
    let band = (65_536 / (taps * ow).max(1)).max(1);
    let mut cols = Vec::new();
    let mut y = 0;
    while y < oh {
        let rows = y..(y + band).min(oh);
        let n = rows.len() * ow;
        let shape = (x.channels, x.width, x.height);
        kernels::im2col(&x.data, shape, window, rows.clone(), &mut cols);
        let p = Product {
            x: &cols,
            x_stride: n,
            inputs: taps,
            n,
            weights,
            bias,
            relu,
        };
        kernels::product(&p, &mut out[y * ow..], oh * ow);
        y = rows.end;
    }
}

fn conv(node: &NodeProto, inits: &HashMap<&str, &TensorProto>) -> Result<Op, String> {
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

fn upsample(node: &NodeProto, inits: &HashMap<&str, &TensorProto>) -> Result<Op, String> {
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
fn ints(node: &NodeProto, name: &str) -> Option<Vec<i64>> {
    node.get_attr_opt_slice::<i64>(name)
        .ok()
        .flatten()
        .map(<[i64]>::to_vec)
}

/// The values of a float tensor.
fn floats(t: &TensorProto) -> Result<Vec<f32>, String> {
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
