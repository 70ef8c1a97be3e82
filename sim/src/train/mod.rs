//! Training, iteration after iteration, as tasks on shared resources.
//!
//! An iteration is a graph of *tasks* ([`task`]) that a *planner*
//! ([`planner`]) builds from the model, the strategy and the cluster, and
//! that the *engine* ([`engine`]) executes on resources:
//!
//! * GPU compute on each GPU's compute stream (forward and backward passes,
//!   inserted kernels), in the plan's order;
//! * CPU work on a node's host, a number of cores at a time;
//! * communication: a collective with a payload (the same on every rank,
//!   or per rank, per pair, per server) on a named *channel*
//!   ([`channel`]: one NCCL stream, a PS thread), where the channel's
//!   policy (FIFO or priority, fusion, partitioning) decides what goes on
//!   the wire next;
//! * dependencies both ways, within an iteration or on the previous one: a
//!   forward pass may wait for a collective, a collective for a pass.
//!
//! ```text
//! plan (one iteration, every GPU runs it):
//!   compute: F1 F2 … FL | BL … B2 B1 | F1 F2 …       (next iteration)
//!                           │     │  │    ▲
//!   S_l needs B_l ──────────┘     │  │    │ F_l needs S_l of the
//!                                 ▼  ▼    │ previous iteration
//!   channel "communication": [ fused / partitioned messages ] ─┘
//! ```
//!
//! The engine knows no method names: today's data-parallel AllReduce and
//! parameter-server training are the planners [`planner::allreduce`] and
//! [`planner::ps`]; the sparse and compressed methods will be planners of
//! their own.
//!
//! **Every GPU when they differ, one when they don't.** When every GPU
//! computes the same (no jitter), the engine follows one representative
//! GPU; otherwise each GPU's compute stream is its own
//! ([`engine::Mode`]). Collectives are decided for the whole group at
//! once: a message starts when each of its pieces is ready on every rank
//! (as Horovod's coordinator and NCCL's call order require), and it ends
//! for every rank when its last participant finishes. So where both modes
//! apply they give identical results, which the tests check.
//!
//! **The network** ([`comm`]): in the `analytical` model each message costs
//! its collective's α-β time alone, even when another channel's message
//! runs at the same time. In the `flow` model every transfer in flight is
//! a flow of one shared max-min network, so concurrent collectives on
//! different channels slow each other down; where a plan has a single
//! channel no two collectives can overlap, and a collective's flow result
//! for a size is computed once and reused.
//!
//! **Stragglers** ([`jitter`]): `model.compute_jitter` = c > 0 multiplies
//! each GPU's compute time in each iteration by its own draw from a
//! log-normal distribution of mean 1 and coefficient of variation c.
//!
//! Iteration time is measured start to start: from the start of iteration
//! `warmup` to that of iteration `warmup + iterations` (an iteration starts
//! when the last GPU starts its first task of it), divided by
//! `iterations`. [`result`] turns what the engine executed into a
//! [`RunResult`]; [`timeline`] holds the record a trace is drawn from.

pub mod channel;
pub mod comm;
pub mod engine;
pub mod jitter;
pub mod links;
pub mod partitions;
pub mod planner;
pub mod result;
pub mod task;
pub mod timeline;

pub use links::LinkLoad;
pub use result::{HostTask, KernelUse, PsServers, RunResult};
pub use timeline::{CommSpan, ComputeSpan, Stall, Timeline};

use crate::cluster::ClusterSpec;
use crate::limits::SimError;
use crate::net::NetModel;
use crate::strategy::Strategy;
use crate::workload::Model;

/// Everything a training simulation needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    /// Scenario name.
    pub name: String,
    /// Seed: every random draw (compute jitter) derives from it.
    pub seed: u64,
    /// Iterations simulated before measuring.
    pub warmup_iterations: u32,
    /// Measured iterations.
    pub iterations: u32,
    /// The cluster.
    pub cluster: ClusterSpec,
    /// Network model.
    pub net_model: NetModel,
    /// The model.
    pub model: Model,
    /// The strategy.
    pub strategy: Strategy,
    /// Losses taken from a training profile (`training_profile`), with
    /// their fit's uncertainty; `None` otherwise.
    pub fitted_losses: Option<crate::losses::FittedLosses>,
}

impl TrainConfig {
    /// Whether a run draws anything from its seed (compute jitter, words
    /// of the token model, or, under `--uncertainty`, losses from a
    /// training profile's fit): runs of other seeds then differ.
    pub fn draws(&self) -> bool {
        self.model.compute_jitter > 0.0
            || self
                .fitted_losses
                .as_ref()
                .is_some_and(crate::losses::FittedLosses::uncertain)
            || self.model.layers.iter().any(|l| {
                l.embedding
                    .as_ref()
                    .is_some_and(|e| matches!(e.rows, crate::workload::Rows::Tokens { .. }))
            })
    }
}

/// How the engine runs a plan. The defaults are what `dtsim` uses; the
/// others exist to check the shortcuts against the long way round (tests,
/// benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Record the [`Timeline`].
    pub trace: bool,
    /// Simulate every GPU's compute stream even when all are identical.
    pub every_gpu: bool,
    /// Flow model: reuse a collective's isolated flow result where the plan
    /// lets no two collectives overlap (otherwise every transfer of every
    /// message runs in the shared network).
    pub reuse_isolated: bool,
    /// Flow model: simulate node 0's participants only when every
    /// collective of the plan is node-symmetric (exact; see
    /// [`crate::collective::exec`]).
    pub fold_nodes: bool,
    /// On a completion, re-examine only the blocked streams waiting for
    /// the completed task, each from the dependency it waits for (a met
    /// dependency stays met). Off, every blocked stream is re-examined
    /// from its task's first dependency on every completion that may free
    /// one: the same results to the bit, in time quadratic in the GPUs
    /// (the tests' reference).
    pub index_waiters: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            trace: false,
            every_gpu: false,
            reuse_isolated: true,
            fold_nodes: true,
            index_waiters: true,
        }
    }
}

/// The index of `x` in `v`, appended if absent: the few collectives a run
/// meets, numbered in the order they first appear (deterministic, unlike a
/// hash).
pub(crate) fn intern<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
    match v.iter().position(|k| *k == x) {
        Some(i) => i,
        None => {
            v.push(x);
            v.len() - 1
        }
    }
}

/// Simulates a training job.
///
/// Fails only when simulated time leaves the representable range (a
/// scenario validated by [`crate::scenario`] keeps each input in bounds,
/// but extreme combinations can still add up).
pub fn simulate(cfg: &TrainConfig) -> Result<RunResult, SimError> {
    simulate_with(cfg, Options::default()).map(|(r, _)| r)
}

/// [`simulate`], also recording the [`Timeline`] (every compute pass,
/// message and stall of every simulated GPU; memory grows with
/// iterations × tasks × simulated GPUs).
pub fn simulate_traced(cfg: &TrainConfig) -> Result<(RunResult, Timeline), SimError> {
    let opts = Options {
        trace: true,
        ..Options::default()
    };
    simulate_with(cfg, opts).map(|(r, t)| (r, t.unwrap_or_default()))
}

/// Simulates with explicit [`Options`]; the timeline is `Some` when
/// `opts.trace` is set.
pub fn simulate_with(
    cfg: &TrainConfig,
    opts: Options,
) -> Result<(RunResult, Option<timeline::Timeline>), SimError> {
    let st = &cfg.strategy;
    if st.ps_partitions == crate::strategy::Partitions::Auto
        && st.sparse == Some(crate::strategy::SparseMethod::Ps)
        && cfg.cluster.gpus() > 1
    {
        return partitions::search(cfg, opts);
    }
    simulate_plain(cfg, opts)
}

/// One run of the plan of `cfg` as it stands.
fn simulate_plain(
    cfg: &TrainConfig,
    opts: Options,
) -> Result<(RunResult, Option<timeline::Timeline>), SimError> {
    let plan = planner::plan(cfg);
    engine::run(cfg, &plan, opts)
}
