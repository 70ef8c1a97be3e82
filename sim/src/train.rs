//! Data-parallel training, iteration after iteration.
//!
//! Every GPU runs the same model on its own batch; the simulation follows
//! one representative GPU (all GPUs are identical and start together, so
//! they stay in lockstep) and the cluster-wide collectives that synchronise
//! them:
//!
//! ```text
//! compute: F1 F2 … FL | BL … B2 B1 | F1 F2 …       (next iteration)
//!                         │     │  │    ▲
//!   gradient of layer l ──┘     │  │    │ F_l waits for layer l's
//!   ready when B_l ends         ▼  ▼    │ synchronised parameters
//! comm:                   [ fused / partitioned messages ] ─┘
//! ```
//!
//! * Wait-free backpropagation: a layer's gradient is ready when its
//!   backward ends, and goes to the communication scheduler at once.
//! * The scheduler has one channel (one collective at a time, as on one
//!   NCCL stream). `fifo` sends in the order gradients became ready;
//!   `priority` sends the piece the next forward pass needs first (lowest
//!   layer, earliest iteration), with tensors cut into `partition`-sized
//!   pieces so a long transfer can be overtaken (ByteScheduler, P3).
//! * Tensor fusion: when the channel frees up, the ready pieces at the head
//!   of the queue are fused into one message of at most `fusion` bytes
//!   (always at least one piece; `fusion = 0` sends pieces one by one).
//! * A message costs the collective's time for its size, from the
//!   analytical α-β model or from a flow simulation of the collective. The
//!   flow result for a size is computed once and reused: one collective at
//!   a time owns the network, so the same size always takes the same time.
//!
//! Iteration time is measured start to start: the time between the first
//! forward of iteration `warmup` and that of iteration
//! `warmup + iterations`, divided by `iterations`.

use crate::cluster::ClusterSpec;
use crate::collective::Collective;
use crate::collective::analytical::CostModel;
use crate::collective::exec::run_flow;
use crate::limits::SimError;
use crate::net::NetModel;
use crate::queue::EventQueue;
use crate::strategy::{Schedule, Strategy};
use crate::time::SimTime;
use crate::workload::Model;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Everything a training simulation needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    /// Scenario name.
    pub name: String,
    /// Seed (reserved for compute jitter; the current model is
    /// deterministic without it).
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
}

/// The result of one scenario point. Field order is the output order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Seconds per iteration.
    pub iteration_time_s: f64,
    /// Samples per second, whole cluster.
    pub throughput: f64,
    /// Unit of `throughput`.
    pub throughput_unit: String,
    /// Throughput over (GPUs × single-GPU throughput).
    pub scaling_efficiency: f64,
    /// GPU compute per iteration, seconds.
    pub compute_s: f64,
    /// Time the communication channel is busy per iteration, seconds.
    pub comm_s: f64,
    /// Time the GPU waits on the network per iteration, seconds.
    pub exposed_comm_s: f64,
    /// Compression compute per iteration, seconds (no compression yet: 0).
    pub compression_s: f64,
    /// Bytes sent per GPU per iteration (all endpoints' bytes / GPUs).
    pub bytes_sent_per_gpu: f64,
    /// Collective messages per iteration.
    pub messages_per_iteration: f64,
    /// Events the simulation processed (training events plus flow events).
    pub events: u64,
}

/// One compute pass of one layer, on every GPU (they run in lockstep).
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeSpan {
    /// Iteration.
    pub iter: u32,
    /// Forward (true) or backward.
    pub forward: bool,
    /// Layer index.
    pub layer: u32,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
}

/// One collective message on the communication channel.
#[derive(Debug, Clone, PartialEq)]
pub struct CommSpan {
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Buffer bytes of the (fused) message.
    pub bytes: u64,
    /// Bytes each GPU sends for it.
    pub sent_per_gpu: f64,
    /// The tensor pieces it carries: (iteration, layer, bytes).
    pub pieces: Vec<(u32, u32, u64)>,
}

/// A forward pass waiting for a layer's synchronised parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// Iteration of the waiting forward pass.
    pub iter: u32,
    /// Layer it waits for.
    pub layer: u32,
    /// Start of the wait.
    pub start: SimTime,
    /// End of the wait.
    pub end: SimTime,
}

/// What happened when, for traces and timeline plots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Compute passes, in start order.
    pub compute: Vec<ComputeSpan>,
    /// Collective messages, in start order.
    pub comm: Vec<CommSpan>,
    /// Waits of the compute stream on the network.
    pub stalls: Vec<Stall>,
    /// First forward of each iteration.
    pub iteration_starts: Vec<SimTime>,
}

/// The cost of one message.
enum CommCost {
    None,
    Analytical(CostModel),
    Flow {
        coll: Collective,
        cluster: ClusterSpec,
        cache: BTreeMap<u64, (SimTime, f64)>,
        events: u64,
    },
}

impl CommCost {
    /// (duration, bytes sent per GPU) of a message of `bytes`.
    fn cost(&mut self, bytes: u64) -> Result<(SimTime, f64), SimError> {
        match self {
            CommCost::None => Ok((SimTime::ZERO, 0.0)),
            CommCost::Analytical(m) => {
                let t = m.time(bytes as f64);
                if t >= SimTime::MAX.as_secs() {
                    return Err(SimError::TimeOverflow(format!(
                        "a message of {bytes} bytes"
                    )));
                }
                Ok((SimTime::from_secs(t), m.bytes_sent_per_gpu(bytes as f64)))
            }
            CommCost::Flow {
                coll,
                cluster,
                cache,
                events,
            } => {
                if let Some(&c) = cache.get(&bytes) {
                    return Ok(c);
                }
                let out = run_flow(coll, cluster, bytes as f64)?;
                *events += out.events;
                let c = (out.time, out.bytes_sent_per_gpu(cluster.gpus()));
                cache.insert(bytes, c);
                Ok(c)
            }
        }
    }

    fn events(&self) -> u64 {
        match self {
            CommCost::Flow { events, .. } => *events,
            _ => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pass {
    Forward,
    Backward,
}

/// Training events, dispatched by `match`.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// A layer's forward or backward pass ended.
    ComputeDone { iter: u32, pass: Pass, layer: u32 },
    /// The message on the channel finished.
    CommDone,
}

/// A piece of a gradient tensor waiting for or on the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Piece {
    /// Scheduling key: (seq) for FIFO, (iter, layer, index) for priority.
    key: (u64, u64, u64),
    iter: u32,
    layer: u32,
    bytes: u64,
}

struct Sim<'a> {
    cfg: &'a TrainConfig,
    q: EventQueue<Event>,
    cost: CommCost,
    ready: BTreeSet<Piece>,
    inflight: Vec<Piece>,
    channel_busy: bool,
    seq: u64,
    /// Pieces of layer l's gradient still on or waiting for the channel.
    pending: Vec<u32>,
    /// Index of the iteration whose parameters layer l has synchronised.
    synced: Vec<Option<u32>>,
    /// A forward pass waiting for a layer's parameters: (iter, layer, since).
    waiting: Option<(u32, u32, SimTime)>,
    fwd_start: Vec<SimTime>,
    stop_iter: u32,
    window: (SimTime, SimTime),
    comm_log: Vec<(SimTime, SimTime, f64)>,
    messages: Vec<SimTime>,
    error: Option<SimError>,
    timeline: Option<Timeline>,
}

/// Simulates a training job.
///
/// Fails only when simulated time leaves the representable range (a
/// scenario validated by [`crate::scenario`] keeps each input in bounds,
/// but extreme combinations can still add up).
pub fn simulate(cfg: &TrainConfig) -> Result<RunResult, SimError> {
    run_sim(cfg, false).map(|(r, _)| r)
}

/// [`simulate`], also recording the [`Timeline`] (every compute pass,
/// message and stall; memory grows with iterations × layers).
pub fn simulate_traced(cfg: &TrainConfig) -> Result<(RunResult, Timeline), SimError> {
    run_sim(cfg, true).map(|(r, t)| (r, t.unwrap_or_default()))
}

fn run_sim(cfg: &TrainConfig, trace: bool) -> Result<(RunResult, Option<Timeline>), SimError> {
    let gpus = cfg.cluster.gpus();
    let coll = cfg.strategy.dense_collective();
    let cost = if gpus <= 1 {
        CommCost::None
    } else {
        match cfg.net_model {
            NetModel::Analytical => CommCost::Analytical(coll.analytical(&cfg.cluster)),
            NetModel::Flow => CommCost::Flow {
                coll,
                cluster: cfg.cluster.clone(),
                cache: BTreeMap::new(),
                events: 0,
            },
        }
    };
    let layers = cfg.model.layers.len();
    let stop_iter = cfg.warmup_iterations + cfg.iterations;
    let mut s = Sim {
        cfg,
        q: EventQueue::new(),
        cost,
        ready: BTreeSet::new(),
        inflight: Vec::new(),
        channel_busy: false,
        seq: 0,
        pending: vec![0; layers],
        synced: vec![None; layers],
        waiting: None,
        fwd_start: Vec::with_capacity(stop_iter as usize + 1),
        stop_iter,
        window: (SimTime::ZERO, SimTime::ZERO),
        comm_log: Vec::new(),
        messages: Vec::new(),
        error: None,
        timeline: trace.then(Timeline::default),
    };
    s.run()?;
    let result = s.result();
    if let Some(t) = &mut s.timeline {
        t.iteration_starts = s.fwd_start.clone();
    }
    Ok((result, s.timeline))
}

impl Sim<'_> {
    fn layers(&self) -> u32 {
        self.cfg.model.layers.len() as u32
    }

    fn comm_enabled(&self) -> bool {
        !matches!(self.cost, CommCost::None)
    }

    /// Whether the forward of `layer` in iteration `iter` may start.
    fn params_ready(&self, iter: u32, layer: u32) -> bool {
        if iter == 0 || !self.comm_enabled() || self.cfg.model.layers[layer as usize].params == 0 {
            return true;
        }
        matches!(self.synced[layer as usize], Some(i) if i + 1 >= iter)
    }

    fn start_compute(&mut self, iter: u32, pass: Pass, layer: u32) {
        let now = self.q.now();
        if pass == Pass::Forward {
            if !self.params_ready(iter, layer) {
                self.waiting = Some((iter, layer, now));
                return;
            }
            if layer == 0 {
                self.fwd_start.push(now);
                if iter == self.stop_iter {
                    return; // measured window complete
                }
            }
        }
        let l = &self.cfg.model.layers[layer as usize];
        let d = if pass == Pass::Forward {
            l.forward
        } else {
            l.backward
        };
        if let Some(t) = &mut self.timeline {
            t.compute.push(ComputeSpan {
                iter,
                forward: pass == Pass::Forward,
                layer,
                start: now,
                end: now + d,
            });
        }
        self.q
            .push(now + d, Event::ComputeDone { iter, pass, layer });
    }

    fn run(&mut self) -> Result<(), SimError> {
        self.start_compute(0, Pass::Forward, 0);
        while let Some((t, ev)) = self.q.pop() {
            if t == SimTime::MAX {
                // times saturate at MAX: the run left the representable range
                return Err(SimError::TimeOverflow(format!(
                    "{} iterations of `{}`",
                    self.stop_iter, self.cfg.name
                )));
            }
            match ev {
                Event::ComputeDone { iter, pass, layer } => self.on_compute(iter, pass, layer),
                Event::CommDone => self.on_comm_done(),
            }
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        assert_eq!(
            self.fwd_start.len(),
            self.stop_iter as usize + 1,
            "training stalled before the measured window ended (a scheduler bug)"
        );
        let w = self.cfg.warmup_iterations as usize;
        self.window = (self.fwd_start[w], self.fwd_start[self.stop_iter as usize]);
        Ok(())
    }

    fn on_compute(&mut self, iter: u32, pass: Pass, layer: u32) {
        let last = self.layers() - 1;
        match pass {
            Pass::Forward if layer < last => self.start_compute(iter, Pass::Forward, layer + 1),
            Pass::Forward => self.start_compute(iter, Pass::Backward, last),
            Pass::Backward => {
                self.enqueue_gradient(iter, layer);
                if layer > 0 {
                    self.start_compute(iter, Pass::Backward, layer - 1);
                } else {
                    self.start_compute(iter + 1, Pass::Forward, 0);
                }
            }
        }
    }

    fn enqueue_gradient(&mut self, iter: u32, layer: u32) {
        let bytes = self.cfg.model.layers[layer as usize].grad_bytes();
        if !self.comm_enabled() || bytes == 0 {
            return;
        }
        let st = &self.cfg.strategy;
        let part = match st.schedule {
            Schedule::Priority if st.partition > 0 => st.partition,
            _ => bytes,
        };
        let n = bytes.div_ceil(part);
        self.pending[layer as usize] = n as u32;
        for i in 0..n {
            let b = part.min(bytes - i * part);
            let key = match st.schedule {
                Schedule::Fifo => (self.seq, 0, 0),
                Schedule::Priority => (iter as u64, layer as u64, i),
            };
            self.seq += 1;
            self.ready.insert(Piece {
                key,
                iter,
                layer,
                bytes: b,
            });
        }
        self.kick();
    }

    /// Starts the next (fused) message if the channel is free.
    fn kick(&mut self) {
        if self.channel_busy || self.ready.is_empty() {
            return;
        }
        let fusion = self.cfg.strategy.fusion;
        let mut total = 0u64;
        self.inflight.clear();
        while let Some(&p) = self.ready.first() {
            if !self.inflight.is_empty() && total + p.bytes > fusion {
                break;
            }
            self.ready.pop_first();
            total += p.bytes;
            self.inflight.push(p);
        }
        let (d, sent) = match self.cost.cost(total) {
            Ok(c) => c,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let now = self.q.now();
        if let Some(t) = &mut self.timeline {
            t.comm.push(CommSpan {
                start: now,
                end: now + d,
                bytes: total,
                sent_per_gpu: sent,
                pieces: self
                    .inflight
                    .iter()
                    .map(|p| (p.iter, p.layer, p.bytes))
                    .collect(),
            });
        }
        self.comm_log.push((now, now + d, sent));
        self.messages.push(now);
        self.channel_busy = true;
        self.q.push(now + d, Event::CommDone);
    }

    fn on_comm_done(&mut self) {
        self.channel_busy = false;
        let done = std::mem::take(&mut self.inflight);
        for p in &done {
            let l = p.layer as usize;
            self.pending[l] -= 1;
            if self.pending[l] == 0 {
                self.synced[l] = Some(p.iter);
            }
        }
        self.inflight = done;
        if let Some((iter, layer, since)) = self.waiting
            && self.params_ready(iter, layer)
        {
            self.waiting = None;
            let now = self.q.now();
            if let Some(t) = &mut self.timeline {
                t.stalls.push(Stall {
                    iter,
                    layer,
                    start: since,
                    end: now,
                });
            }
            self.start_compute(iter, Pass::Forward, layer);
        }
        self.kick();
    }

    fn result(&self) -> RunResult {
        let cfg = self.cfg;
        let (t0, t1) = self.window;
        let iters = cfg.iterations as f64;
        let iter_s = (t1 - t0).as_secs() / iters;
        let compute_s = cfg.model.compute_time().as_secs();
        let in_window = |t: SimTime| t >= t0 && t < t1;
        // busy time of the channel inside the window, so that a message
        // straddling the window's edges counts only its part inside
        let comm_s: f64 = self
            .comm_log
            .iter()
            .map(|&(s, e, _)| (e.min(t1).saturating_sub(s.max(t0))).as_secs())
            .sum::<f64>()
            / iters;
        let sent: f64 = self
            .comm_log
            .iter()
            .filter(|(s, _, _)| in_window(*s))
            .map(|(_, _, b)| b)
            .sum::<f64>()
            / iters;
        let msgs = self.messages.iter().filter(|t| in_window(**t)).count() as f64 / iters;
        let gpus = cfg.cluster.gpus();
        let throughput = gpus as f64 * cfg.model.batch_per_gpu as f64 / iter_s;
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
            sparse: "none".into(),
            schedule: cfg.strategy.schedule.name().into(),
            iteration_time_s: iter_s,
            throughput,
            throughput_unit: "samples/s".into(),
            scaling_efficiency: throughput / (gpus as f64 * cfg.model.single_gpu_throughput()),
            compute_s,
            comm_s,
            exposed_comm_s: (iter_s - compute_s).max(0.0),
            compression_s: 0.0,
            bytes_sent_per_gpu: sent,
            messages_per_iteration: msgs,
            events: self.q.events_processed() + self.cost.events(),
        }
    }
}
