//! What a cluster loses besides bytes: the defaults a scenario gets for
//! each loss unless it says `ideal = true` (the pure α-β bound, every loss
//! off). Each loss has its own key, which wins over both; the sources of
//! each default are in docs/models.md ("What a cluster loses besides
//! bytes") and docs/research/losses.md.
//!
//! * **Stragglers** (`model.compute_jitter`): each GPU's compute time in
//!   each iteration is its nominal time × a log-normal factor of mean 1
//!   and this coefficient of variation ([`crate::train::jitter`]); off
//!   unless set, for speed ([`Losses::defaults`]).
//! * **Per-message overhead** (`strategy.message_overhead`): every message
//!   a channel sends (a fused buffer, a bucket, a PS partition's push or
//!   pull; a message with nothing to send costs nothing) occupies its
//!   channel this long before its transfer starts: the
//!   collective's launch and the framework's bookkeeping.
//! * **NIC efficiency** (`cluster.nic_efficiency`): the fraction of the
//!   network's per-NIC bandwidth a collective achieves.

/// Coefficient of variation of a GPU's per-iteration compute time on a
/// dedicated cluster, 0.5%: the value to set for stragglers, which are
/// not on by default (see [`Losses::defaults`]). ByteDance's straggler study's healthy jobs vary
/// 0.4–0.7% across data-parallel ranks per step (derived from the traces
/// of its artifact, docs/models.md §4.1); PyTorch's DDP benchmark on one
/// DGX-1 V100 bounds a single GPU's at 0.29% (p95/p50 ≤ 1.005,
/// docs/research/losses.md §1).
pub const TYPICAL_COMPUTE_JITTER: f64 = 0.005;

/// Seconds each message costs before its transfer: NCCL's base latency of
/// a ring collective in the Simple protocol, 8.4 µs, unchanged from NCCL
/// 2.7.8 to 2.30.7 (`src/graph/tuning.cc`, `baseLat`;
/// docs/research/losses.md §2). NCCL adds it to every call's modelled
/// time on top of the per-hop latencies, which dtsim's network already
/// charges.
pub const TYPICAL_MESSAGE_OVERHEAD_S: f64 = 8.4e-6;

/// The fraction of a preset's per-NIC bandwidth a large collective
/// reaches: 1. The RDMA presets' and `eth-1g`'s bandwidths are already
/// measured rates (what NCCL reaches on InfiniBand and RoCE is 96–98% of
/// line rate, which those measurements are: docs/research/losses.md §3);
/// `eth-10g` and `eth-25g` are TCP goodput by specification, and no
/// measurement of what a collective reaches at 10 or 25 GbE was found (at
/// 32–100 Gb/s over sockets NCCL measured 32–94%, which does not carry
/// over). A calibration profile's bandwidth is what was measured.
pub const TYPICAL_NIC_EFFICIENCY: f64 = 1.0;

/// The losses of one run, as resolved from a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Whether the scenario asked for the pure bound (`ideal = true`):
    /// every loss defaults to none.
    pub ideal: bool,
    /// `model.compute_jitter`.
    pub compute_jitter: f64,
    /// `strategy.message_overhead`, seconds.
    pub message_overhead_s: f64,
    /// `cluster.nic_efficiency`.
    pub nic_efficiency: f64,
}

impl Losses {
    /// The defaults: a typical dedicated cluster, or none with `ideal`.
    /// Stragglers are off either way: simulating them means following
    /// every GPU instead of one, which made a 10,000-point sweep of up to
    /// 1,000 GPUs 300 times slower (195 s against 0.64 s, docs/benchmarks.md),
    /// past the sweeps' 10 s target; a scenario turns them on with
    /// `model.compute_jitter` ([`TYPICAL_COMPUTE_JITTER`] for a dedicated
    /// cluster).
    pub fn defaults(ideal: bool) -> Losses {
        if ideal {
            Losses {
                ideal,
                compute_jitter: 0.0,
                message_overhead_s: 0.0,
                nic_efficiency: 1.0,
            }
        } else {
            Losses {
                ideal,
                compute_jitter: 0.0,
                message_overhead_s: TYPICAL_MESSAGE_OVERHEAD_S,
                nic_efficiency: TYPICAL_NIC_EFFICIENCY,
            }
        }
    }
}
