//! Data parallelism with sparsified gradients: Top-k and gTop-k S-SGD
//! (Shi et al., ICDCS'19, `shared/papers/gtopk-global-topk-allreduce.txt`).
//!
//! As the authors' release does it, the whole model's gradient is one
//! buffer of m elements: after the last backward pass each GPU selects the
//! k = ρ·m largest-magnitude elements of it (gradient plus residual; the
//! residual's update is part of the same kernel), so nothing is sent while
//! the backward pass runs:
//!
//! ```text
//! compute: F_0 … F_{L−1} | B_{L−1} … B_0 | select | (merge)  | F_0 … (next)
//!                                             │       ▲  │      ▲
//!   channel:                                  └▶ S ───┘  └──────┘
//! ```
//!
//! * **Top-k** (gTop-k §II-E, Eq. 6): S is the TopK-AllGather of every
//!   GPU's k values and k indices (recursive doubling); each GPU then adds
//!   the P sets into its model (a scatter-add of kP elements the paper's
//!   breakdown does not charge, nor does dtsim).
//! * **gTop-k** (Alg. 2 and 3, Eq. 7): S is gTopKAllReduce, ⌈log2 P⌉
//!   rounds of a binomial tree in which each receiver merges the pair's
//!   sets and keeps the top k, then a broadcast of the result. The merges
//!   are the *merge* task after S: ⌈log2 P⌉ merges of 2k candidates, the
//!   receivers' chain that rank 0 runs every round of. Placing them after
//!   the collective rather than between its rounds keeps the iteration's
//!   critical path (every round waits for the previous round's merge, and
//!   nothing else runs meanwhile) and keeps the collective's schedule the
//!   closed form's (GT-A2).
//!
//! Every layer's next forward pass waits for the result (S, or the merges
//! for gTop-k). Values travel in the gradient's precision, indices in 4
//! bytes (`sim::collective::single::sparse_bytes`).

use super::super::TrainConfig;
use super::super::result::KernelUse;
use super::super::task::{ChannelSpec, ComputeKind, Dep, Label, Plan, Task, TaskId, Work};
use crate::collective::Payload;
use crate::collective::single::sparse_bytes;
use crate::names::Named;
use crate::strategy::DenseMethod;
use crate::time::SimTime;
use crate::workload::kernels::Kernel;

/// k: the elements each GPU selects from its m-element gradient at density
/// ρ (`round(ρ·m)`, at least 1, as `dtsim collective` counts it).
pub fn selected(m: u64, density: f64) -> u64 {
    ((density * m as f64).round() as u64).max(1)
}

/// The gTop-k merges one iteration runs on the critical path: ⌈log2 P⌉.
pub fn merge_rounds(gpus: u32) -> u32 {
    gpus.next_power_of_two().trailing_zeros()
}

/// The kernels the plan of `cfg` inserts, each with its cost an iteration
/// and its source: the Top-k selection over the m-element gradient, and
/// for gTop-k the ⌈log2 P⌉ merges of 2k candidates (DCT-DP's:
/// [`super::dct::kernel_uses`]). None for a method that does not
/// compress, or where nothing is sent (one GPU, no parameters).
pub fn kernel_uses(cfg: &TrainConfig) -> Vec<KernelUse> {
    let m = cfg.model.params();
    let gpus = cfg.cluster.gpus();
    if cfg.strategy.dense == DenseMethod::Dct {
        return super::dct::kernel_uses(cfg);
    }
    if !cfg.strategy.compressed() || gpus < 2 || m == 0 {
        return Vec::new();
    }
    let k = selected(m, cfg.strategy.density) as f64;
    let costs = &cfg.model.kernels;
    let mut uses = vec![KernelUse {
        kernel: Kernel::TopK.name().into(),
        task: SELECT.into(),
        seconds: costs.topk.time(m as f64, k),
        source: costs.topk.source.clone(),
    }];
    if cfg.strategy.dense == DenseMethod::GTopK {
        uses.push(KernelUse {
            kernel: Kernel::Merge.name().into(),
            task: MERGES.into(),
            seconds: costs.merge.time(2.0 * k, k) * merge_rounds(gpus) as f64,
            source: costs.merge.source.clone(),
        });
    }
    uses
}

/// Timeline names of the inserted tasks.
const SELECT: &str = "top-k selection";
const MERGES: &str = "gTop-k merges";

/// The plan.
pub fn plan(cfg: &TrainConfig) -> Plan {
    let layers = &cfg.model.layers;
    let l_count = layers.len() as u32;
    let m = cfg.model.params();
    let gtopk = cfg.strategy.dense == DenseMethod::GTopK;
    let k = selected(m, cfg.strategy.density);
    let kernels = kernel_uses(cfg);
    let comm = !kernels.is_empty();
    // ids: F_l = l, B_l = L + (L − 1 − l), then select, S, merge
    let select: TaskId = 2 * l_count;
    let sync: TaskId = select + 1;
    let merge: TaskId = sync + 1;
    let ready = if gtopk { merge } else { sync };
    let mut tasks = Vec::with_capacity(merge as usize + 1);
    for (l, layer) in layers.iter().enumerate() {
        let waits = comm && layer.params > 0;
        tasks.push(super::forward_task(l as u32, layer, waits.then_some(ready)));
    }
    for l in (0..l_count).rev() {
        tasks.push(super::backward_task(l, &layers[l as usize]));
    }
    if comm {
        tasks.push(Task {
            label: Label::Named(SELECT.into()),
            layer: None,
            work: Work::Compute {
                kind: ComputeKind::Kernel,
                duration: SimTime::from_secs(kernels[0].seconds),
            },
            deps: Vec::new(),
            priority: 0,
            lead: false,
        });
        let payload = sparse_bytes(k, cfg.model.gradient_precision);
        tasks.push(Task {
            label: Label::Named(
                if gtopk {
                    "gTop-k AllReduce"
                } else {
                    "Top-k AllGather"
                }
                .into(),
            ),
            layer: None,
            work: Work::Comm {
                channel: 0,
                collective: cfg.strategy.dense_collective(),
                payload: Payload::Uniform(payload as f64),
            },
            deps: vec![Dep {
                task: select,
                back: 0,
            }],
            priority: 0,
            lead: false,
        });
        if gtopk {
            tasks.push(Task {
                label: Label::Named(MERGES.into()),
                layer: None,
                work: Work::Compute {
                    kind: ComputeKind::Kernel,
                    duration: SimTime::from_secs(kernels[1].seconds),
                },
                deps: vec![Dep {
                    task: sync,
                    back: 0,
                }],
                priority: 0,
                lead: false,
            });
        }
    }
    Plan {
        tasks,
        channels: vec![ChannelSpec {
            name: "communication".into(),
            schedule: cfg.strategy.schedule,
            // one message an iteration: nothing to fuse or cut
            fusion: 0,
            partition: 0,
        }],
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        stages: 1,
        stage: Vec::new(),
        per_iteration: Default::default(),
    }
}
