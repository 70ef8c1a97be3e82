//! The result of one scenario point, from what the engine executed.
//!
//! Every figure is measured over the window from the start of iteration
//! `warmup` to the start of iteration `warmup + iterations`, and divided
//! by `iterations`:
//!
//! * `compute_s`: forward and backward passes of the measured iterations,
//!   averaged over the simulated GPUs; `compression_s`: the kernels a
//!   method inserts, likewise;
//! * `comm_s`: time at least one channel has a message on the wire, inside
//!   the window (the union over channels); `comm_by_channel`: each
//!   channel's own busy time;
//! * `exposed_comm_s`: iteration time minus compute and compression, the
//!   time a compute stream waits (with stragglers this includes waiting
//!   for the slowest GPU's gradients: the communication cannot start
//!   before them);
//! * `bytes_sent_per_gpu` and `messages_per_iteration`: messages that start
//!   inside the window; `links`: the bytes those messages put on each
//!   kind of link ([`super::links`]).

use super::TrainConfig;
use super::task::{ChannelId, Plan, TaskId};
use crate::strategy::{DenseMethod, SparseMethod};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The result of one scenario point. Field order is the output order:
/// each scalar field is a column of a sweep table, in this order, named
/// and typed as the field (`reports::sweep` reads them through serde).
/// `Default` is the empty result (zeros, empty names), which gives an
/// empty table its column types.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Scenario name.
    pub scenario: String,
    /// Machines.
    pub nodes: u32,
    /// GPUs.
    pub gpus: u32,
    /// Inter-node network.
    pub network: String,
    /// Network model.
    pub net_model: String,
    /// Model.
    pub model: String,
    /// GPU type.
    pub gpu: String,
    /// Samples per GPU per iteration.
    pub batch_per_gpu: u32,
    /// Dense method.
    pub dense: String,
    /// AllReduce algorithm (or PS variant).
    pub algo: String,
    /// Sparse method ("none": the model has no sparse part).
    pub sparse: String,
    /// Schedule.
    pub schedule: String,
    /// Losses besides bytes (`sim::losses`): the coefficient of variation
    /// of a GPU's per-iteration compute time (stragglers).
    pub compute_jitter: f64,
    /// Seconds each message occupies its channel before its transfer.
    pub message_overhead_s: f64,
    /// The fraction of the network's per-NIC bandwidth collectives reach.
    pub nic_efficiency: f64,
    /// Seconds per iteration.
    pub iteration_time_s: f64,
    /// Samples (or, for the NLP presets, words or tokens) per second,
    /// whole cluster.
    pub throughput: f64,
    /// Unit of `throughput`.
    pub throughput_unit: String,
    /// Throughput over (GPUs × single-GPU throughput).
    pub scaling_efficiency: f64,
    /// GPU compute per iteration (forward and backward passes, mean over
    /// GPUs), seconds.
    pub compute_s: f64,
    /// Time at least one communication channel is busy per iteration,
    /// seconds.
    pub comm_s: f64,
    /// Time the compute stream waits per iteration, seconds.
    pub exposed_comm_s: f64,
    /// Inserted kernels (compression) per iteration, seconds.
    pub compression_s: f64,
    /// Bytes sent per GPU per iteration (all endpoints' bytes / GPUs).
    pub bytes_sent_per_gpu: f64,
    /// The busiest link of the measured iterations, named by its owner,
    /// kind and direction (`node0-nic0-up`)
    /// (the busiest link of `links`' first kind); empty when nothing
    /// crosses a link.
    pub busiest_link: String,
    /// That link's bytes an iteration over its capacity times the
    /// iteration time (0 when nothing crosses a link).
    pub busiest_link_utilisation: f64,
    /// Collective messages per iteration.
    pub messages_per_iteration: f64,
    /// Events the simulation processed (training events plus flow events).
    pub events: u64,
    /// Busy time per iteration of each communication channel, seconds, by
    /// channel name.
    #[serde(default)]
    pub comm_by_channel: BTreeMap<String, f64>,
    /// `strategy.ps_partitions = "auto"`: the samples, the fitted θ and
    /// the partitions chosen (Parallax §3.2); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_search: Option<super::partitions::PartitionSearch>,
    /// The parameter servers of a run that uses them (`dense = "ps"` or
    /// `"dct"`, or `sparse = "ps"`): how many, and the machines dedicated
    /// to them (`strategy.ps_machines`; 0: on the GPU machines); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ps_servers: Option<PsServers>,
    /// `strategy.ps_placement = "whole"`: where the dense variables sit
    /// and what their pushes cost each server (why a PS of whole
    /// variables is as fast as it is); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ps_placement: Option<super::planner::ps::Placement>,
    /// The kernels the method inserts on each GPU's compute stream (Top-k
    /// selection, gTop-k's merges, DCT-DP's thresholds and masks), each
    /// with its mean cost an iteration and
    /// where that cost comes from; empty for methods that insert none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelUse>,
    /// The host tasks of the embedding tables in host memory
    /// (`placement = "host"`): each lookup, copy and update, with its
    /// mean seconds an iteration (each GPU's process does its own at
    /// once); empty when no table is there or the method runs none
    /// (a sparse PS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_tasks: Vec<HostTask>,
    /// The host CPU that worked longest in the measured iterations (the
    /// parameter servers' partitions and polling threads, the workers'
    /// receipts, tables in host memory), where any host ran CPU work: what
    /// an iteration spends waiting for CPUs, which `exposed_comm_s`
    /// otherwise holds without a name; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<HostCpu>,
    /// Bytes per link (DESIGN's "bytes per GPU and per link"): each kind
    /// of link that carries bytes in the measured iterations, with its
    /// busiest link's bytes and utilisation an iteration and the kind's
    /// mean, busiest kind first ([`super::links`]); empty when nothing
    /// crosses a link (one GPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<super::LinkLoad>,
}

/// Where a run's parameter servers are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PsServers {
    /// The servers.
    pub servers: u32,
    /// The machines dedicated to them (server j on machine j mod these);
    /// 0: server j on GPU machine j mod the machines.
    pub dedicated_machines: u32,
    /// Cores of each dedicated machine's host (`strategy.ps_machine_cores`,
    /// or the GPU machines' `cpu_cores`); 0 without dedicated machines.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub machine_cores: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The busiest host CPU of a run ([`RunResult::host_cpu`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCpu {
    /// Which host: "node 3", or "server machine beside node 3" (a
    /// dedicated server machine, `strategy.ps_machines`).
    pub host: String,
    /// Its cores (`cluster.cpu_cores`, or `strategy.ps_machine_cores`).
    pub cores: u32,
    /// Seconds of CPU work it runs an iteration, summed over its cores
    /// and threads (mean over the measured iterations).
    pub busy_s: f64,
    /// `busy_s` over its cores' time in an iteration: above 1 the
    /// iteration waits for this CPU.
    pub utilisation: f64,
    /// Its longest single task in the measured iterations (a polling
    /// thread's chain, a partition's aggregation, a table's update).
    pub longest_task: String,
    /// That task's seconds: an iteration holds it whole.
    pub longest_task_s: f64,
}

/// A host task of a table in host memory, and its mean seconds an
/// iteration over the measured iterations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostTask {
    /// The task ("embedding update on host").
    pub task: String,
    /// Mean seconds an iteration.
    pub seconds: f64,
}

/// A kernel a run inserts: what it is, what it costs an iteration at the
/// GPUs' nominal speed, and the source of its cost model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelUse {
    /// The kernel's name ("topk", "merge", "threshold", "mask").
    pub kernel: String,
    /// The task that runs it, as timelines name it.
    pub task: String,
    /// Seconds an iteration on one GPU.
    pub seconds: f64,
    /// Where the cost model comes from (a preset's measurement, a
    /// derivation from one, a calibration profile).
    pub source: String,
}

/// One message, as the result needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sent {
    pub channel: ChannelId,
    pub start: SimTime,
    pub end: SimTime,
    /// Bytes each GPU sends for it.
    pub per_gpu: f64,
    /// Its first piece's task and iteration (whose collective and, for a
    /// payload that differs per rank, payload it carries).
    pub task: TaskId,
    pub iter: u32,
    /// Its size (a uniform payload's bytes).
    pub bytes: u64,
    /// Whether its payload is the same on every rank.
    pub uniform: bool,
}

/// What the engine hands over at the end of a run.
pub(super) struct Record {
    /// Start of each iteration, `warmup + iterations + 1` of them.
    pub starts: Vec<SimTime>,
    /// Per iteration, picoseconds of (model compute, inserted kernels)
    /// summed over the simulated GPUs.
    pub busy: Vec<(u128, u128)>,
    /// GPUs simulated.
    pub gpus: u32,
    /// Every message, in start order.
    pub sent: Vec<Sent>,
    /// Channel names.
    pub channels: Vec<String>,
    /// Events processed.
    pub events: u64,
}

/// Seconds of the union of `spans` (sorted by start) inside `[t0, t1)`,
/// adding each stretch where at least one span is active.
fn busy_secs(spans: impl Iterator<Item = (SimTime, SimTime)>, t0: SimTime, t1: SimTime) -> f64 {
    let mut total = 0.0;
    let mut cur: Option<(SimTime, SimTime)> = None;
    for (s, e) in spans {
        let (s, e) = (s.max(t0), e.min(t1));
        if e <= s {
            continue;
        }
        match &mut cur {
            // strictly overlapping spans merge (touching ones stay apart)
            Some((_, ce)) if s < *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = cur {
                    total += (ce - cs).as_secs();
                }
                cur = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        total += (ce - cs).as_secs();
    }
    total
}

pub(super) fn result(cfg: &TrainConfig, plan: &Plan, r: &Record) -> RunResult {
    let w = cfg.warmup_iterations as usize;
    let n = cfg.iterations as usize;
    let (t0, t1) = (r.starts[w], r.starts[w + n]);
    let iters = cfg.iterations as f64;
    let iter_s = (t1 - t0).as_secs() / iters;
    // GPU-iterations the busy sums cover
    let runs = r.gpus as u128 * cfg.iterations as u128;
    // picoseconds per GPU-iteration: the whole part exactly, then the rest
    let per_run = |ps: u128| (ps / runs) as f64 + (ps % runs) as f64 / runs as f64;
    let (model, kernels) = r.busy[w..w + n]
        .iter()
        .fold((0u128, 0u128), |(a, b), &(x, y)| (a + x, b + y));
    let compute_s = per_run(model) / crate::time::PS_PER_S;
    let compression_s = per_run(kernels) / crate::time::PS_PER_S;
    let spans = |ch: Option<ChannelId>| {
        r.sent
            .iter()
            .filter(move |m| ch.is_none_or(|c| m.channel == c))
            .map(|m| (m.start, m.end))
    };
    let comm_s = busy_secs(spans(None), t0, t1) / iters;
    let comm_by_channel = r
        .channels
        .iter()
        .enumerate()
        .map(|(c, name)| {
            (
                name.clone(),
                busy_secs(spans(Some(c as ChannelId)), t0, t1) / iters,
            )
        })
        .collect();
    let in_window = |t: SimTime| t >= t0 && t < t1;
    // (from +0: an empty sum of floats is −0, which JSON would print)
    let sent: f64 = r
        .sent
        .iter()
        .filter(|m| in_window(m.start))
        .map(|m| m.per_gpu)
        .fold(0.0, |a, b| a + b)
        / iters;
    let msgs = r.sent.iter().filter(|m| in_window(m.start)).count() as f64 / iters;
    let links = super::links::loads(
        cfg,
        plan,
        r.sent.iter().filter(|m| in_window(m.start)),
        iters,
        iter_s,
    );
    let gpus = cfg.cluster.gpus();
    // a trainer of S model-parallel stages processes one batch
    let trainers = gpus / cfg.strategy.mp_stages.max(1);
    let throughput =
        trainers as f64 * cfg.model.batch_per_gpu as f64 * cfg.model.words_per_sample / iter_s;
    RunResult {
        scenario: cfg.name.clone(),
        nodes: cfg.cluster.nodes,
        gpus,
        network: cfg.cluster.network.clone(),
        net_model: cfg.net_model.name().into(),
        model: cfg.model.name.clone(),
        gpu: cfg.model.gpu.clone(),
        batch_per_gpu: cfg.model.batch_per_gpu,
        dense: cfg.strategy.dense_name().into(),
        algo: cfg.strategy.dense_collective().algo.name().into(),
        sparse: cfg.strategy.sparse_name().into(),
        schedule: cfg.strategy.schedule.name().into(),
        compute_jitter: cfg.model.compute_jitter,
        message_overhead_s: cfg.strategy.message_overhead_s,
        nic_efficiency: cfg.cluster.nic_efficiency,
        iteration_time_s: iter_s,
        throughput,
        throughput_unit: cfg.model.throughput_unit.clone(),
        scaling_efficiency: throughput
            / (gpus as f64 * cfg.model.single_gpu_throughput() * cfg.model.words_per_sample),
        compute_s,
        comm_s,
        exposed_comm_s: (iter_s - compute_s - compression_s).max(0.0),
        compression_s,
        bytes_sent_per_gpu: sent,
        busiest_link: links.first().map(|l| l.busiest.clone()).unwrap_or_default(),
        busiest_link_utilisation: links.first().map_or(0.0, |l| l.utilisation),
        messages_per_iteration: msgs,
        events: r.events,
        comm_by_channel,
        partition_search: None,
        ps_servers: {
            let st = &cfg.strategy;
            let uses = matches!(st.dense, DenseMethod::Ps | DenseMethod::Dct)
                || st.sparse == Some(SparseMethod::Ps);
            uses.then(|| PsServers {
                servers: st.server_count(&cfg.cluster),
                dedicated_machines: cfg.cluster.ps_machines,
                machine_cores: if cfg.cluster.ps_machines > 0 {
                    super::planner::sparse::server_cores(cfg)
                } else {
                    0
                },
            })
        },
        ps_placement: super::planner::ps::summary(cfg),
        kernels: {
            let mut k = super::planner::compressed::kernel_uses(cfg);
            k.extend(super::planner::mp::kernel_uses(cfg));
            k
        },
        host_tasks: Vec::new(),
        host_cpu: None,
        links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }

    #[test]
    fn busy_time_is_the_union_inside_the_window() {
        let spans = [(t(0), t(10)), (t(5), t(12)), (t(12), t(14)), (t(20), t(40))];
        // window [2, 30): [2,12) + [12,14) + [20,30) = 10 + 2 + 10 µs
        let got = busy_secs(spans.iter().copied(), t(2), t(30));
        assert!((got - 22e-6).abs() < 1e-15, "{got}");
        assert_eq!(busy_secs(spans.iter().copied(), t(15), t(18)), 0.0);
    }
}
