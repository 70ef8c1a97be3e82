//! The dense variables (tensors) of the presets' layers: what a parameter
//! server stores, places and receives one at a time.
//!
//! A framework's parameter servers hold whole variables: TensorFlow's
//! `replica_device_setter`, with the `GreedyLoadBalancingStrategy` that
//! Parallax passes it (snuspl/parallax, `ps/between_graph_parallel.py`),
//! puts each variable, in creation order, on the server holding the
//! fewest bytes so far, and every worker pushes and pulls each trainable
//! variable as a tensor of its own. A preset layer is a block of several
//! variables (a bottleneck block's convolutions and batch norms), so the
//! planner needs them one by one.
//!
//! The lists follow the architectures the presets count (`preset_data`'s
//! sources): torchvision's ResNet-50 v1.5 and Inception-v3 (each
//! convolution without bias, its batch norm's scale and shift as two
//! variables), Parallax's LM (`examples/lm1b/language_model.py`: `W`,
//! `B`, `W_P`), and for the NMT, whose blocks are GNMT-4's scaled to
//! Parallax's 94.1M, one variable per LSTM cell (kernel and bias as one)
//! in the block's cells, each of an equal share. Every list adds up to
//! its layer's parameters (tested). A layer not listed is one variable;
//! a custom layer may list its own (`[[model.layers]] variables`).

/// Element counts of the dense variables of layer `layer` of preset
/// `model`, in creation order, or `None` where the layer is one variable
/// (or the preset is not listed).
pub fn preset_variables(model: &str, layer: &str) -> Option<Vec<u64>> {
    match model {
        "resnet50" => resnet50(layer),
        "inception_v3" => inception_v3(layer),
        "lm" => match layer {
            // W [emb + proj, 4 x state], B [4 x state], W_P [state, proj]
            "lstm" => Some(vec![1024 * 8192, 8192, 2048 * 512]),
            _ => None,
        },
        "nmt" => {
            let cells = match layer {
                "encoder_l1_bi" | "encoder_l3_l4" => 2,
                "decoder_l1_l4" => 4,
                _ => return None,
            };
            Some(vec![0; cells])
        }
        _ => None,
    }
}

/// A convolution of `k` elements per filter position (kh·kw), `cin` to
/// `cout` channels, without bias, and its batch norm's scale and shift.
fn conv_bn(out: &mut Vec<u64>, k: u64, cin: u64, cout: u64) {
    out.extend([k * cin * cout, cout, cout]);
}

/// torchvision's ResNet-50 v1.5 (`conv1` with `bn1`; bottleneck blocks
/// of `planes`, the first of each stage with its downsample; `fc`).
fn resnet50(layer: &str) -> Option<Vec<u64>> {
    let mut v = Vec::new();
    if layer == "conv1" {
        conv_bn(&mut v, 49, 3, 64);
        return Some(v);
    }
    if layer == "fc" {
        return Some(vec![2048 * 1000, 1000]);
    }
    let rest = layer.strip_prefix("layer")?;
    let (stage, block) = rest.split_once('.')?;
    let stage: u32 = stage.parse().ok()?;
    let block: u32 = block.parse().ok()?;
    if !(1..=4).contains(&stage) {
        return None;
    }
    let planes = 64u64 << (stage - 1);
    let inplanes = if block == 0 {
        if stage == 1 { 64 } else { planes * 2 }
    } else {
        planes * 4
    };
    conv_bn(&mut v, 1, inplanes, planes);
    conv_bn(&mut v, 9, planes, planes);
    conv_bn(&mut v, 1, planes, planes * 4);
    if block == 0 {
        conv_bn(&mut v, 1, inplanes, planes * 4);
    }
    Some(v)
}

/// torchvision's Inception-v3 without the auxiliary classifier: each
/// `BasicConv2d` a convolution and its batch norm.
fn inception_v3(layer: &str) -> Option<Vec<u64>> {
    let mut v = Vec::new();
    // (kh·kw, in, out) of each BasicConv2d, in creation order
    let convs: Vec<(u64, u64, u64)> = match layer {
        "Conv2d_1a_3x3" => vec![(9, 3, 32)],
        "Conv2d_2a_3x3" => vec![(9, 32, 32)],
        "Conv2d_2b_3x3" => vec![(9, 32, 64)],
        "Conv2d_3b_1x1" => vec![(1, 64, 80)],
        "Conv2d_4a_3x3" => vec![(9, 80, 192)],
        "Mixed_5b" => inception_a(192, 32),
        "Mixed_5c" => inception_a(256, 64),
        "Mixed_5d" => inception_a(288, 64),
        "Mixed_6a" => vec![(9, 288, 384), (1, 288, 64), (9, 64, 96), (9, 96, 96)],
        "Mixed_6b" => inception_c(128),
        "Mixed_6c" | "Mixed_6d" => inception_c(160),
        "Mixed_6e" => inception_c(192),
        "Mixed_7a" => vec![
            (1, 768, 192),
            (9, 192, 320),
            (1, 768, 192),
            (7, 192, 192),
            (7, 192, 192),
            (9, 192, 192),
        ],
        "Mixed_7b" => inception_e(1280),
        "Mixed_7c" => inception_e(2048),
        "fc" => return Some(vec![2048 * 1000, 1000]),
        _ => return None,
    };
    for (k, cin, cout) in convs {
        conv_bn(&mut v, k, cin, cout);
    }
    Some(v)
}

fn inception_a(cin: u64, pool: u64) -> Vec<(u64, u64, u64)> {
    vec![
        (1, cin, 64),
        (1, cin, 48),
        (25, 48, 64),
        (1, cin, 64),
        (9, 64, 96),
        (9, 96, 96),
        (1, cin, pool),
    ]
}

fn inception_c(c7: u64) -> Vec<(u64, u64, u64)> {
    vec![
        (1, 768, 192),
        (1, 768, c7),
        (7, c7, c7),
        (7, c7, 192),
        (1, 768, c7),
        (7, c7, c7),
        (7, c7, c7),
        (7, c7, c7),
        (7, c7, 192),
        (1, 768, 192),
    ]
}

fn inception_e(cin: u64) -> Vec<(u64, u64, u64)> {
    vec![
        (1, cin, 320),
        (1, cin, 384),
        (3, 384, 384),
        (3, 384, 384),
        (1, cin, 448),
        (9, 448, 384),
        (3, 384, 384),
        (3, 384, 384),
        (1, cin, 192),
    ]
}

/// Layer `params` split as `preset_variables` says: the list where it is
/// given (the NMT's equal cells, `0` entries, take equal shares of
/// `params`, the first ones one element more where they do not divide
/// it), else one variable.
pub fn split(model: &str, layer: &str, params: u64) -> Vec<u64> {
    match preset_variables(model, layer) {
        Some(v) if !v.is_empty() && v.iter().all(|&x| x == 0) => {
            let n = v.len() as u64;
            (0..n)
                .map(|i| params / n + u64::from(i < params % n))
                .collect()
        }
        Some(v) => v,
        None => vec![params],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::preset_data::PRESETS;

    /// Every listed layer's variables add up to the preset's parameters,
    /// and the counts are the architectures' (161 tensors in
    /// torchvision's ResNet-50).
    #[test]
    fn the_lists_add_up_to_the_layers() {
        for name in ["resnet50", "inception_v3", "lm", "nmt"] {
            let p = PRESETS.iter().find(|p| p.name == name).unwrap();
            let mut count = 0;
            for l in p.layers {
                if l.params == 0 {
                    continue;
                }
                let v = split(name, l.name, l.params);
                assert_eq!(v.iter().sum::<u64>(), l.params, "{name} {}", l.name);
                assert!(v.iter().all(|&x| x > 0), "{name} {}", l.name);
                count += v.len();
            }
            let want = match name {
                // 53 convolutions with 2 batch-norm variables each, fc's 2
                "resnet50" => 161,
                // 94 BasicConv2d, fc's 2
                "inception_v3" => 284,
                "lm" => 3,
                // 2 + 1 + 2 + 1 + 4 + 1 cells and layers
                "nmt" => 11,
                _ => unreachable!(),
            };
            assert_eq!(count, want, "{name}");
        }
    }
}
