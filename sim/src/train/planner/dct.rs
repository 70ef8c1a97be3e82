//! DCT-DP: data parallelism with each layer's gradient thresholded (Gupta
//! et al., DCT, `shared/papers/dct-communication-thresholding.txt`, §2.1,
//! Algorithm 1).
//!
//! After layer l's backward pass its trainer masks the gradient (plus the
//! error-feedback residual, which costs no communication) with the layer's
//! threshold τ_l, keeping the n − ⌊n·η⌋ elements at or above it, and
//! pushes the kept values with their 4-byte indices to the parameter
//! servers; then it pulls the layer's parameters back, dense (the servers
//! keep the model; a trainer reads all of it, as from any parameter
//! server). τ_l is re-computed by copying and sorting the layer's
//! magnitudes once every life-span L iterations (iterations 0, L, 2L, …)
//! and reused in between:
//!
//! ```text
//! compute: F_0 … F_{L−1} | B_{L−1} T_{L−1} B_{L−2} T_{L−2} … B_0 T_0 | F_0 …
//!                                   │                                   ▲
//!   channel:                        └▶ push_{L−1} ▶ pull_{L−1} ─────────┘
//! ```
//!
//! At η = 0 nothing is thresholded: no T_l, and the push is dense (the
//! same system without compression, the baseline of DCT's figures).
//!
//! T_l (the threshold kernel) costs the mask every iteration and the sort
//! on top in every L-th (`PerIteration::Periodic`), so iteration times
//! differ: a run's result is its mean over the measured window, which
//! should hold a whole number of life-spans (docs/scenarios.md).

use super::super::TrainConfig;
use super::super::result::KernelUse;
use super::super::task::{ChannelSpec, ComputeKind, Dep, Label, PerIteration, Plan, Task, Work};
use crate::collective::single::INDEX_BYTES;
use crate::collective::{Algo, Collective, Payload};
use crate::names::Named;
use crate::time::SimTime;
use crate::workload::kernels::Kernel;

/// The elements a layer of `n` keeps at sparsity η: n − ⌊n·η⌋, with a
/// product within a relative 1e-12 of an integer taken as that integer (so
/// that 100 × 0.29 keeps 71, not 72), and one at least where n > 0: the
/// count CASES DCT-A1 gives, and that `kernels::cpu::threshold_rank`
/// keeps.
pub fn kept(n: u64, eta: f64) -> u64 {
    if n == 0 {
        return 0;
    }
    let p = n as f64 * eta;
    let nearest = p.round();
    let rank = if (p - nearest).abs() <= 1e-12 * nearest.max(1.0) {
        nearest
    } else {
        p.floor()
    };
    n - (rank as u64).min(n - 1)
}

/// Bytes a trainer pushes for a layer of `n` elements at sparsity η:
/// dtsim's declared encoding for DCT-DP is the kept values in the
/// gradient's precision (`value_bytes`) with a 4-byte index each, or the
/// layer dense (values only) where that is smaller (η < 1/2 in fp32).
pub fn push_bytes(n: u64, eta: f64, value_bytes: u64) -> u64 {
    (kept(n, eta) * (value_bytes + INDEX_BYTES)).min(n * value_bytes)
}

/// Whether DCT-DP thresholds at all: at η = 0 it keeps everything, so it
/// runs no kernel and pushes dense: the same system without compression,
/// the paper's baseline.
fn thresholds(cfg: &TrainConfig) -> bool {
    cfg.strategy.dct_sparsity > 0.0
}

/// The layers that communicate, with their elements: those with
/// parameters, when there is more than one GPU.
fn layers(cfg: &TrainConfig) -> Vec<(u32, u64)> {
    if cfg.cluster.gpus() < 2 {
        return Vec::new();
    }
    cfg.model
        .layers
        .iter()
        .enumerate()
        .filter(|(_, l)| l.params > 0)
        .map(|(i, l)| (i as u32, l.params))
        .collect()
}

/// The kernels DCT-DP inserts, an iteration on average: the sorts (once
/// every L iterations, each layer's) and the masks (every iteration).
pub fn kernel_uses(cfg: &TrainConfig) -> Vec<KernelUse> {
    let ls = layers(cfg);
    if ls.is_empty() || !thresholds(cfg) {
        return Vec::new();
    }
    let (eta, life) = (cfg.strategy.dct_sparsity, cfg.strategy.dct_lifespan);
    let c = &cfg.model.kernels;
    let sum = |f: &dyn Fn(f64, f64) -> f64| -> f64 {
        ls.iter()
            .map(|&(_, n)| f(n as f64, kept(n, eta) as f64))
            .sum()
    };
    vec![
        KernelUse {
            kernel: Kernel::Threshold.name().into(),
            // the sort's cost over its life-span: the long run's mean, not
            // the measured window's (`compression_s`), which holds
            // ⌊iterations/L⌋ sorts or one more
            task: format!("DCT threshold (every {life} iterations, its cost spread over them)"),
            seconds: sum(&|n, k| c.threshold.time(n, k)) / life as f64,
            source: c.threshold.source.clone(),
        },
        KernelUse {
            kernel: Kernel::Mask.name().into(),
            task: "DCT mask".into(),
            seconds: sum(&|n, k| c.mask.time(n, k)),
            source: c.mask.source.clone(),
        },
    ]
}

/// The plan.
pub fn plan(cfg: &TrainConfig) -> Plan {
    let model = &cfg.model;
    let l_count = model.layers.len() as u32;
    let comm = layers(cfg);
    let (eta, life) = (cfg.strategy.dct_sparsity, cfg.strategy.dct_lifespan);
    let value = model.gradient_precision.bytes();
    let c = &model.kernels;
    // ids: F_l = l; then the backward stream B_{L−1} [T_{L−1}] … B_0 [T_0];
    // then per communicating layer its push and its pull
    let mut next = l_count;
    let mut bwd = vec![0u32; l_count as usize];
    let mut thr = vec![None; l_count as usize];
    for l in (0..l_count).rev() {
        bwd[l as usize] = next;
        next += 1;
        if thresholds(cfg) && comm.iter().any(|&(i, _)| i == l) {
            thr[l as usize] = Some(next);
            next += 1;
        }
    }
    let mut push = vec![None; l_count as usize];
    for &(l, _) in &comm {
        push[l as usize] = Some(next);
        next += 2;
    }
    let pull = |l: u32| push[l as usize].map(|p| p + 1);
    let mut tasks: Vec<Task> = Vec::with_capacity(next as usize);
    for (l, layer) in model.layers.iter().enumerate() {
        tasks.push(super::forward_task(l as u32, layer, pull(l as u32)));
    }
    let mut per_iteration = std::collections::BTreeMap::new();
    for l in (0..l_count).rev() {
        let layer = &model.layers[l as usize];
        tasks.push(super::backward_task(l, layer));
        if let Some(t) = thr[l as usize] {
            let (n, k) = (layer.params as f64, kept(layer.params, eta) as f64);
            let mask = SimTime::from_secs(c.mask.time(n, k));
            let sort = SimTime::from_secs(c.threshold.time(n, k));
            tasks.push(Task {
                label: Label::Named(format!("{} DCT threshold", layer.name)),
                layer: Some(l),
                work: Work::Compute {
                    kind: ComputeKind::Kernel,
                    duration: mask,
                },
                deps: Vec::new(),
                priority: l as u64,
                lead: false,
            });
            per_iteration.insert(
                t,
                PerIteration::Periodic {
                    every: life,
                    first: sort + mask,
                },
            );
        }
    }
    let ps = |algo| Collective {
        algo,
        ..cfg.strategy.dense_collective()
    };
    for &(l, n) in &comm {
        let p = push[l as usize].expect("a communicating layer has a push");
        // the push waits for the mask, or without one for the backward pass
        let t = thr[l as usize].unwrap_or(bwd[l as usize]);
        tasks.push(Task {
            label: Label::Named(format!("{} DCT push", model.layers[l as usize].name)),
            layer: Some(l),
            work: Work::Comm {
                channel: 0,
                collective: ps(Algo::Push),
                payload: Payload::Uniform(push_bytes(n, eta, value) as f64),
            },
            deps: vec![Dep { task: t, back: 0 }],
            priority: l as u64,
            lead: false,
        });
        tasks.push(Task {
            label: Label::Parameters,
            layer: Some(l),
            work: Work::Comm {
                channel: 0,
                collective: ps(Algo::Pull),
                payload: Payload::Uniform((n * value) as f64),
            },
            deps: vec![Dep { task: p, back: 0 }],
            priority: l as u64,
            lead: false,
        });
    }
    debug_assert_eq!(tasks.len(), next as usize);
    let st = &cfg.strategy;
    let mut plan = Plan {
        tasks,
        channels: vec![ChannelSpec {
            name: "communication".into(),
            schedule: st.schedule,
            // a push and a pull a layer, each its own message
            fusion: 0,
            partition: st.partition,
        }],
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        stages: 1,
        stage: Vec::new(),
        per_iteration,
    };
    // the embedding tables, by the sparse method (DCT thresholds the dense
    // layers only, §3.1)
    let chains = super::sparse::add(cfg, &mut plan, |l| l, |l| bwd[l as usize]);
    super::chain_receives(&mut plan, chains);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DCT-A1's counts: n − ⌊n·η⌋ kept, integer products snapped, at least
    /// one; values-only compression 1/(1 − η), halved with 4-byte indices
    /// on fp32 values.
    #[test]
    fn kept_elements_and_push_bytes() {
        assert_eq!(kept(100, 0.29), 71);
        assert_eq!(kept(1000, 0.95), 50);
        assert_eq!(kept(1001, 0.95), 51);
        assert_eq!(kept(10, 0.999), 1);
        assert_eq!(kept(7, 0.0), 7);
        assert_eq!(kept(0, 0.5), 0);
        let n = 1_000_000;
        for (eta, values_only) in [(0.75, 4.0), (0.9, 10.0), (0.95, 20.0), (0.99, 100.0)] {
            let dense = (n * 4) as f64;
            let values = (kept(n, eta) * 4) as f64;
            assert!((dense / values - values_only).abs() < 1e-9, "{eta}");
            let pushed = push_bytes(n, eta, 4) as f64;
            assert!((dense / pushed - values_only / 2.0).abs() < 1e-9, "{eta}");
        }
        // below η = 1/2 the indices would make it larger than dense
        assert_eq!(push_bytes(n, 0.25, 4), n * 4);
        assert_eq!(push_bytes(n, 0.0, 4), n * 4);
        // 16-bit values: 6 bytes a kept element, dense below η = 1/3
        assert_eq!(push_bytes(1000, 0.9, 2), 600);
        assert_eq!(push_bytes(1000, 0.3, 2), 2000);
    }
}
