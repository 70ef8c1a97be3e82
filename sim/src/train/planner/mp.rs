//! Model parallelism, DCT-MP, and hybrid data × model parallelism (Gupta
//! et al., DCT, `shared/papers/dct-communication-thresholding.txt`, §2.2,
//! Algorithm 2; §3.3's hybrid training).
//!
//! **Trainers and stages.** With `strategy.mp_stages` S > 1 the cluster's
//! P GPUs form T = P / S trainers. A trainer is a chain of S stages, each
//! one GPU owning a contiguous range of layers ([`stage_split`]: the
//! split that minimises the largest stage's forward plus backward time).
//! Placement is stage-major, as Megatron-LM orders its pipeline ranks
//! (the pipeline index varies slowest): rank r is stage r / T of trainer
//! r mod T, so the T GPUs of a stage are consecutive ranks, and inside a
//! node as far as T allows.
//!
//! **One mini-batch, no micro-batches.** A trainer runs its batch through
//! the stages in turn and back, as DCT's trainers do (§3.3 describes no
//! pipelining; GPipe-style micro-batching is named as an alternative in
//! §1 and not used): stage s + 1 starts its forward pass when stage s's
//! activation has arrived, and stage s its backward pass when the
//! gradient of that activation has come back. A stage idles meanwhile, so
//! a trainer computes at most one stage at a time: the scaling efficiency
//! (throughput over GPUs × one GPU's) is at most 1/S.
//!
//! ```text
//! stage 0: F F [K] ─X_0─▶                                ┌─▶ B B
//! stage 1:               F F [K] ─X_1─▶        ┌─ [K] ◀─G_1 … B B [K] ─G_0─┘
//! stage 2:                             F F B B ┘
//! ```
//!
//! X_s (an activation) and G_s (its gradient) are point-to-point transfers
//! from every trainer's stage s to its stage s + 1 at once (and back), on
//! the `activations` channel ([`Op::SendRecv`]).
//!
//! **DCT-MP** (`mp_sparsity` η > 0): the activation at a split is a B × d
//! matrix (B the batch, d = `activation_bytes` / (4·B) fp32 elements a
//! sample). Each row keeps its d − ⌊d·η⌋ largest magnitudes
//! (Algorithm 2's τ_i), found by a threshold kernel over every row and
//! applied by a mask kernel (`[K]`) before X_s; the backward pass applies the
//! same mask to the gradient (`[K]`) before G_s. dtsim's declared encoding:
//! forward, the kept values (4 bytes) plus the mask as a bitmap of
//! ⌈d/8⌉ bytes a row or as 4-byte indices, whichever is smaller; backward,
//! the kept values alone (the receiver holds the mask). The receiver's
//! scatter of the kept values into a dense matrix is not costed.
//!
//! **Hybrid.** With T > 1 trainers, stage s of every trainer synchronises
//! its layers' gradients with the stage s of the others, by the dense
//! method over those T GPUs ([`Grouping::Stage`]): a ring or binomial
//! AllReduce, a parameter-server push and pull, or DCT-DP's thresholded
//! push and dense pull. Each stage has its own channel, so stages
//! synchronise concurrently (sharing the NICs in the flow model).

use super::super::TrainConfig;
use super::super::result::KernelUse;
use super::super::task::{
    ChannelSpec, ComputeKind, Dep, Label, PerIteration, Plan, Task, TaskId, Work,
};
use super::dct::{kept, push_bytes};
use crate::collective::program::Grouping;
use crate::collective::{Algo, Collective, Op, Payload};
use crate::names::Named;
use crate::strategy::{DenseMethod, Schedule};
use crate::time::SimTime;
use crate::workload::Model;
use crate::workload::kernels::{Kernel, KernelCost};

/// Bytes of an activation element (fp32).
pub const ACTIVATION_BYTES: u64 = 4;

/// The layer ranges of S stages: `split[s]..split[s + 1]` is stage s's
/// (`split[0] = 0`, `split[S] = L`). Of the contiguous splits into S
/// non-empty ranges, one that minimises the largest stage's compute
/// (forward plus backward): the smallest such maximum is found by
/// bisection over greedy packing, and the ranges are then packed greedily
/// under it, each stage leaving at least a layer for each stage after it.
///
/// # Panics
/// If S is 0 or exceeds the layers (validation refuses both).
pub fn stage_split(model: &Model, s: u32) -> Vec<u32> {
    let cost: Vec<u64> = model
        .layers
        .iter()
        .map(|l| (l.forward + l.backward).0)
        .collect();
    let n = cost.len();
    assert!(s >= 1 && s as usize <= n, "{s} stages of {n} layers");
    // the stages greedy packing needs under a cap on a stage's compute
    let stages_under = |cap: u64| {
        let (mut count, mut sum) = (1u32, 0u64);
        for &c in &cost {
            if sum + c > cap && sum > 0 {
                count += 1;
                sum = 0;
            }
            sum += c;
        }
        count
    };
    let (mut lo, mut hi) = (
        cost.iter().copied().max().unwrap_or(0),
        cost.iter().sum::<u64>(),
    );
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if stages_under(mid) <= s {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let mut split = vec![0u32];
    let mut sum = 0u64;
    for (i, &c) in cost.iter().enumerate() {
        let open = split.len() as u32; // stages begun so far
        let layers_left = (n - i) as u32;
        let stages_left = s - open;
        if i > 0 && (sum + c > lo || layers_left == stages_left) && stages_left > 0 {
            split.push(i as u32);
            sum = 0;
        }
        sum += c;
    }
    split.push(n as u32);
    debug_assert_eq!(split.len(), s as usize + 1);
    split
}

/// The stages' layer ranges for `strategy`: the splits it places by hand
/// (`mp_splits`), or [`stage_split`]'s balance by compute.
pub fn stages_of(model: &Model, strategy: &crate::strategy::Strategy) -> Vec<u32> {
    if strategy.mp_splits.is_empty() {
        return stage_split(model, strategy.mp_stages);
    }
    std::iter::once(0)
        .chain(strategy.mp_splits.iter().map(|&l| l + 1))
        .chain(std::iter::once(model.layers.len() as u32))
        .collect()
}

/// Each stage's layers by name, "first..last" (or the one layer), for
/// results.
pub fn stage_layers(model: &Model, strategy: &crate::strategy::Strategy) -> Vec<String> {
    stages_of(model, strategy)
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0] as usize, w[1] as usize - 1);
            if a == b {
                model.layers[a].name.clone()
            } else {
                format!("{}..{}", model.layers[a].name, model.layers[b].name)
            }
        })
        .collect()
}

/// What crosses one split: (forward bytes, backward bytes, d elements a
/// row, kept elements a row), for an activation of `bytes` over a batch of
/// `batch` rows at sparsity η. At η = 0 both directions carry the
/// activation dense.
pub fn split_bytes(bytes: u64, batch: u32, eta: f64) -> (u64, u64, u64, u64) {
    let rows = batch.max(1) as u64;
    let d = bytes / ACTIVATION_BYTES / rows;
    if eta <= 0.0 || d == 0 {
        return (bytes, bytes, d, d);
    }
    let k = kept(d, eta);
    let values = rows * k * ACTIVATION_BYTES;
    let bitmap = rows * d.div_ceil(8);
    let indices = rows * k * ACTIVATION_BYTES;
    (values + bitmap.min(indices), values, d, k)
}

/// The cost of a kernel run over `rows` rows of `n` elements, `k` of each
/// kept, in one launch on a device that runs `parallel` rows at once (a
/// CPU's cores; 1 on a GPU, whose cost is the whole device's): the
/// per-row terms for ⌈rows / parallel⌉ rows, the constant once.
fn rows_time(c: &KernelCost, rows: u64, n: u64, k: u64, parallel: u32) -> f64 {
    let one = c.time(n as f64, k as f64);
    let waves = rows.div_ceil(parallel.max(1) as u64);
    ((one - c.a_s) * waves as f64 + c.a_s).max(0.0)
}

/// A micro-batch's rows (the trainer's batch over M; validation makes M
/// divide it).
fn micro_rows(cfg: &TrainConfig) -> u32 {
    cfg.model.batch_per_gpu / cfg.strategy.mp_microbatches.max(1)
}

/// DCT-MP's kernels at a split whose activation is `bytes` for the whole
/// batch, for one micro-batch: forward (the rows' thresholds and the
/// mask) and backward (the mask on the gradient), seconds.
fn split_kernels(cfg: &TrainConfig, bytes: u64) -> (f64, f64) {
    let rows = micro_rows(cfg);
    let mb = cfg.strategy.mp_microbatches.max(1) as u64;
    let (_, _, d, k) = split_bytes(bytes / mb, rows, cfg.strategy.mp_sparsity);
    let c = &cfg.model.kernels;
    let mask = rows_time(&c.mask, rows as u64, d, k, c.row_parallelism);
    (
        rows_time(&c.threshold, rows as u64, d, k, c.row_parallelism) + mask,
        mask,
    )
}

/// The kernels DCT-MP inserts, an iteration summed over a trainer's
/// splits, after DCT-DP's when the trainers use it.
pub fn kernel_uses(cfg: &TrainConfig) -> Vec<KernelUse> {
    let s = cfg.strategy.mp_stages;
    if s < 2 || cfg.strategy.mp_sparsity <= 0.0 {
        return Vec::new();
    }
    let split = stages_of(&cfg.model, &cfg.strategy);
    let (mut thr, mut mask) = (0.0, 0.0);
    let c = &cfg.model.kernels;
    let mb = cfg.strategy.mp_microbatches.max(1) as f64;
    for w in split.windows(2).take(s as usize - 1) {
        let bytes = cfg.model.layers[w[1] as usize - 1].activation_bytes;
        let (fwd, bwd) = split_kernels(cfg, bytes);
        thr += mb * (fwd - bwd);
        mask += mb * 2.0 * bwd;
    }
    vec![
        KernelUse {
            kernel: Kernel::Threshold.name().into(),
            task: "DCT-MP row thresholds (forward)".into(),
            seconds: thr,
            source: c.threshold.source.clone(),
        },
        KernelUse {
            kernel: Kernel::Mask.name().into(),
            task: "DCT-MP masks (forward and backward)".into(),
            seconds: mask,
            source: c.mask.source.clone(),
        },
    ]
}

/// A compute task of a kernel.
fn kernel_task(name: String, layer: u32, duration: f64) -> Task {
    Task {
        label: Label::Named(name),
        layer: Some(layer),
        work: Work::Compute {
            kind: ComputeKind::Kernel,
            duration: SimTime::from_secs(duration),
        },
        deps: Vec::new(),
        priority: layer as u64,
        lead: false,
    }
}

/// A communication task.
fn comm_task(
    name: Label,
    layer: u32,
    channel: u32,
    collective: Collective,
    bytes: u64,
    after: TaskId,
) -> Task {
    Task {
        label: name,
        layer: Some(layer),
        work: Work::Comm {
            channel,
            collective,
            payload: Payload::Uniform(bytes as f64),
        },
        deps: vec![Dep {
            task: after,
            back: 0,
        }],
        priority: layer as u64,
        lead: false,
    }
}

/// Tasks in the making, with the stage of each.
struct Builder {
    tasks: Vec<Task>,
    stage: Vec<u32>,
}

impl Builder {
    fn push(&mut self, task: Task, stage: u32) -> TaskId {
        self.tasks.push(task);
        self.stage.push(stage);
        (self.tasks.len() - 1) as TaskId
    }
}

/// The plan (S > 1).
pub fn plan(cfg: &TrainConfig) -> Plan {
    let model = &cfg.model;
    let st = &cfg.strategy;
    let s_count = st.mp_stages;
    let mb = st.mp_microbatches.max(1);
    let trainers = cfg.cluster.gpus() / s_count;
    let split = stages_of(model, st);
    let eta = st.mp_sparsity;
    let sync = trainers > 1;
    let dct = st.dense == DenseMethod::Dct;
    let group = |s: u32| Grouping::Stage {
        size: trainers,
        stage: s,
    };
    let transfer = |s: u32, algo| Collective {
        algo,
        group: group(s),
        ..Collective::new(Op::SendRecv)
    };
    // the dense method over stage s's GPUs
    let dp = |s: u32, algo: Option<Algo>| {
        let base = st.dense_collective();
        Collective {
            algo: algo.unwrap_or(base.algo),
            local_aggregation: false,
            group: group(s),
            ..base
        }
    };
    // channels: with one micro-batch no two transfers overlap, and one
    // `activations` channel carries them all; with several, each split has
    // a channel a direction (a stage sends micro-batch m + 1 while the next
    // forwards micro-batch m), then one per stage's synchronisation
    let fwd_ch = |s: u32| if mb == 1 { 0 } else { s };
    let bwd_ch = |s: u32| if mb == 1 { 0 } else { s_count - 1 + (s - 1) };
    let transfer_channels = if mb == 1 { 1 } else { 2 * (s_count - 1) };
    let sync_ch = |s: u32| transfer_channels + s;
    // one micro-batch: the layer's time and bytes over M
    let part = |t: SimTime| SimTime(t.0 / mb as u64);
    let rows = micro_rows(cfg);
    let tag = |m: u32| {
        if mb == 1 {
            String::new()
        } else {
            format!(" mb{m}")
        }
    };
    let value = model.gradient_precision.bytes();
    let c = &model.kernels;
    let mut b = Builder {
        tasks: Vec::new(),
        stage: Vec::new(),
    };
    // forward passes, micro-batch by micro-batch, stage by stage, each
    // split's transfer after its stage's last layer (GPipe's order: a
    // stage runs every micro-batch's forward pass, then their backward
    // passes in reverse); the synchronisation a first forward pass waits
    // for is filled in when that task exists
    let mut first_fwd = vec![0 as TaskId; model.layers.len()];
    for m in 0..mb {
        let mut arrived: Option<TaskId> = None;
        for s in 0..s_count {
            let range = split[s as usize]..split[s as usize + 1];
            let mut last_fwd = 0;
            for l in range.clone() {
                let layer = &model.layers[l as usize];
                let mut t = super::forward_task(l, layer, None);
                if mb > 1 {
                    t.label = Label::Named(format!("fwd {}{}", layer.name, tag(m)));
                    t.work = Work::Compute {
                        kind: ComputeKind::Forward,
                        duration: part(layer.forward),
                    };
                }
                if let Some(x) = arrived.take() {
                    t.deps.push(Dep { task: x, back: 0 });
                }
                last_fwd = b.push(t, s);
                if m == 0 {
                    first_fwd[l as usize] = last_fwd;
                }
            }
            if s + 1 < s_count {
                let last = range.end - 1;
                let bytes = model.layers[last as usize].activation_bytes / mb as u64;
                let (fb, _, _, _) = split_bytes(bytes, rows, eta);
                let mut after = last_fwd;
                if eta > 0.0 {
                    let (k, _) = split_kernels(cfg, bytes * mb as u64);
                    after = b.push(
                        kernel_task(format!("DCT-MP mask {s}→{}{}", s + 1, tag(m)), last, k),
                        s,
                    );
                }
                let x = comm_task(
                    Label::Named(format!("activation {s}→{}{}", s + 1, tag(m))),
                    last,
                    fwd_ch(s),
                    transfer(s, Algo::Next),
                    fb,
                    after,
                );
                arrived = Some(b.push(x, s));
            }
        }
    }
    // backward passes, micro-batches in reverse, from the last stage down,
    // each split's gradient after the first layer of the stage above it;
    // a layer's synchronisation after its last micro-batch's backward pass
    // (micro-batch 0's: the gradients accumulate)
    let mut synced: Vec<Option<TaskId>> = vec![None; model.layers.len()];
    let mut per_iteration = std::collections::BTreeMap::new();
    for m in (0..mb).rev() {
        let mut returned: Option<TaskId> = None;
        for s in (0..s_count).rev() {
            let range = split[s as usize]..split[s as usize + 1];
            let ch = sync_ch(s);
            for l in range.clone().rev() {
                let layer = &model.layers[l as usize];
                let mut t = super::backward_task(l, layer);
                if mb > 1 {
                    t.label = Label::Named(format!("bwd {}{}", layer.name, tag(m)));
                    t.work = Work::Compute {
                        kind: ComputeKind::Backward,
                        duration: part(layer.backward),
                    };
                }
                if let Some(g) = returned.take() {
                    t.deps.push(Dep { task: g, back: 0 });
                }
                let bw = b.push(t, s);
                if s > 0 && l == range.start {
                    // the gradient of the activation stage s − 1 handed
                    // down as soon as the stage's first layer has it: its
                    // mask goes on the stream before that layer's own
                    // DCT-DP threshold, which the transfer does not need
                    let bytes = model.layers[l as usize - 1].activation_bytes / mb as u64;
                    let (_, bb, _, _) = split_bytes(bytes, rows, eta);
                    let mut after = bw;
                    if eta > 0.0 {
                        let (_, k) = split_kernels(cfg, bytes * mb as u64);
                        after = b.push(
                            kernel_task(format!("DCT-MP mask {s}→{}{}", s - 1, tag(m)), l, k),
                            s,
                        );
                    }
                    let g = comm_task(
                        Label::Named(format!("gradient {s}→{}{}", s - 1, tag(m))),
                        l,
                        bwd_ch(s),
                        transfer(s, Algo::Prev),
                        bb,
                        after,
                    );
                    returned = Some(b.push(g, s));
                }
                if m != 0 || !sync || layer.params == 0 {
                    continue;
                }
                let n = layer.params;
                synced[l as usize] = Some(if dct {
                    let mut after = bw;
                    if st.dct_sparsity > 0.0 {
                        let (nf, k) = (n as f64, kept(n, st.dct_sparsity) as f64);
                        let mask = c.mask.time(nf, k);
                        let sort = c.threshold.time(nf, k);
                        after = b.push(
                            kernel_task(format!("{} DCT threshold", layer.name), l, mask),
                            s,
                        );
                        per_iteration.insert(
                            after,
                            PerIteration::Periodic {
                                every: st.dct_lifespan,
                                first: SimTime::from_secs(sort + mask),
                            },
                        );
                    }
                    let p = b.push(
                        comm_task(
                            Label::Named(format!("{} DCT push", layer.name)),
                            l,
                            ch,
                            dp(s, Some(Algo::Push)),
                            push_bytes(n, st.dct_sparsity, value),
                            after,
                        ),
                        s,
                    );
                    b.push(
                        comm_task(
                            Label::Parameters,
                            l,
                            ch,
                            dp(s, Some(Algo::Pull)),
                            n * value,
                            p,
                        ),
                        s,
                    )
                } else {
                    b.push(
                        comm_task(Label::Parameters, l, ch, dp(s, None), n * value, bw),
                        s,
                    )
                });
            }
        }
    }
    // the next iteration's first forward pass of a layer waits for its
    // synchronised parameters (the later micro-batches follow it on the
    // stream)
    for (l, s) in synced.iter().enumerate() {
        if let Some(task) = *s {
            b.tasks[first_fwd[l] as usize]
                .deps
                .push(Dep { task, back: 1 });
        }
    }
    let mut channels = Vec::new();
    let plain = |name: String| ChannelSpec {
        name,
        schedule: Schedule::Fifo,
        fusion: 0,
        partition: 0,
    };
    if mb == 1 {
        channels.push(plain("activations".into()));
    } else {
        channels.extend((0..s_count - 1).map(|s| plain(format!("activations {s}→{}", s + 1))));
        channels.extend((1..s_count).map(|s| plain(format!("gradients {s}→{}", s - 1))));
    }
    if sync {
        channels.extend((0..s_count).map(|s| ChannelSpec {
            name: format!("stage {s}"),
            schedule: st.schedule,
            fusion: if dct { 0 } else { st.fusion },
            partition: st.partition,
        }));
    }
    Plan {
        tasks: b.tasks,
        channels,
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        per_iteration,
        stages: s_count,
        stage: b.stage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Layer;

    fn model(costs: &[u64]) -> Model {
        let mut m = Model::from_preset("resnet50", "titan-xp", 8).unwrap();
        m.layers = costs
            .iter()
            .enumerate()
            .map(|(i, &c)| Layer {
                name: format!("l{i}"),
                params: 1,
                forward: SimTime(c),
                backward: SimTime(c),
                activation_bytes: 0,
                embedding: None,
                variables: Vec::new(),
            })
            .collect();
        m
    }

    /// The split minimises the largest stage and gives every stage a
    /// layer: [5, 1, 1, 1, 1, 5] in 3 is {5}{1 1 1 1}{5} (largest 5, where
    /// any other split has a stage of 6 or more), and as many stages as
    /// layers is one layer each.
    #[test]
    fn stages_are_balanced_by_compute() {
        let m = model(&[5, 1, 1, 1, 1, 5]);
        assert_eq!(stage_split(&m, 3), vec![0, 1, 5, 6]);
        assert_eq!(stage_split(&m, 6), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(stage_split(&m, 1), vec![0, 6]);
        let m = model(&[1, 1, 1, 1]);
        assert_eq!(stage_split(&m, 2), vec![0, 2, 4]);
        // a heavy first layer: the rest is spread, every stage non-empty
        let m = model(&[10, 1, 1, 1]);
        assert_eq!(stage_split(&m, 3), vec![0, 1, 3, 4]);
    }

    /// DCT-A1's MP accounting for dtsim's declared encoding: forward the
    /// kept values plus the smaller of a bitmap and the indices, backward
    /// the values alone; dense at η = 0.
    #[test]
    fn split_bytes_follow_the_declared_encoding() {
        // DLRM's split: d = 256 a sample, a batch of 100
        let (b, d) = (100u32, 256u64);
        let bytes = b as u64 * d * 4;
        assert_eq!(split_bytes(bytes, b, 0.0), (bytes, bytes, 256, 256));
        for (eta, k) in [(0.75, 64u64), (0.9, 26), (0.95, 13)] {
            let (f, bw, dd, kk) = split_bytes(bytes, b, eta);
            assert_eq!((dd, kk), (d, k), "{eta}");
            assert_eq!(bw, 100 * k * 4, "{eta}");
            // the bitmap (32 bytes a row) is smaller than k indices
            assert_eq!(f, 100 * (k * 4 + 32), "{eta}");
        }
        // a Transformer FFN split, d = 1024 a token: at 99% 11 indices (44
        // bytes) beat the 128-byte bitmap
        let (f, bw, _, k) = split_bytes(1024 * 4, 1, 0.99);
        assert_eq!(k, 1024 - 1013);
        assert_eq!((f, bw), (k * 8, k * 4));
    }
}
