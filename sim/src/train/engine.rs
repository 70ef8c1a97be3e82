//! The engine: a plan's tasks executed on GPUs, hosts and channels,
//! iteration after iteration.
//!
//! Resources and their rules:
//!
//! * each simulated GPU has one compute stream that runs the plan's compute
//!   tasks in order, iteration after iteration; before a task starts, its
//!   dependencies must be met for that GPU (a wait is a [`Stall`]);
//! * each simulated node has a host with `plan.host_cores` cores for CPU
//!   tasks, first ready first served, and, where the parameter servers
//!   have machines of their own ([`Plan::on_server_machines`]), a server
//!   machine's host of as many cores beside it for the servers' tasks;
//! * each channel has one message on the wire at a time ([`Channel`]); a
//!   communication task joins its queue when its dependencies are met on
//!   every GPU and every GPU has entered its iteration, and is done for
//!   every GPU when its last piece's message ends.
//!
//! Events at one instant are all applied before any channel decides what
//! to send next, so a gradient that becomes ready at the instant a message
//! ends joins the next fusion, whichever of the two events was scheduled
//! first. (Tasks that become ready at one instant still join a FIFO queue
//! in the order their events are applied.) The network's events at an
//! instant come before the engine's own.
//!
//! **Modes.** [`Mode::Representative`] follows GPU 0 alone and lets it
//! stand for all: exact when every GPU computes the same, because
//! communication is decided group-wide and ends for all ranks at once.
//! With model-parallel stages ([`Plan::stages`] S > 1) it follows trainer
//! 0, one GPU of each stage, each standing for its stage's GPUs.
//! [`Mode::EveryGpu`] runs every GPU's stream (stragglers). A plan's
//! iteration state is kept only while some task of it is unfinished, so
//! memory does not grow with the number of iterations.

use super::channel::{Channel, Slice};
use super::comm::{Comm, Started};
use super::jitter::Jitter;
use super::result::{Record, RunResult, Sent, result};
use super::task::{ChannelId, ComputeKind, Dependents, PerIteration, Plan, TaskId, Work};
use super::timeline::{CommSpan, ComputeSpan, Stall, TaskInfo, Timeline};
use super::{Options, TrainConfig};
use crate::collective::exec::{Finished, InstanceId};
use crate::collective::{Collective, Payload};
use crate::limits::SimError;
use crate::queue::EventQueue;
use crate::time::SimTime;
use std::collections::VecDeque;

/// Which GPUs the engine simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// GPU 0 stands for every GPU (all compute alike).
    Representative,
    /// Every GPU's compute stream is simulated.
    EveryGpu,
}

impl Mode {
    /// The mode a configuration needs: every GPU when asked to, when a
    /// trace is to show each GPU, or when stragglers (jitter) make GPUs
    /// differ in a way one GPU cannot stand for. With stragglers and a
    /// single stage one GPU still stands for all, running each iteration
    /// at the slowest GPU's speed (the private `Slowest`): every collective of a
    /// data-parallel plan spans all GPUs and starts when the last of them
    /// is ready, every compute task waits only on its own stream and on
    /// such collectives, and a factor holds for a whole iteration, so the
    /// slowest GPU of an iteration is the last to be ready for each of
    /// its collectives and sets every time the others wait for. Model
    /// parallelism keeps every GPU: a stage's transfers go trainer by
    /// trainer, each trainer at its own GPUs' speeds.
    ///
    /// Host tasks whose work differs by node ([`PerIteration::PerNode`]:
    /// parameter servers holding different variables) need every node's
    /// host, so every GPU too: one host cannot stand for hosts that
    /// differ.
    pub fn of(cfg: &TrainConfig, plan: &Plan, opts: Options) -> Mode {
        let jitter = cfg.model.compute_jitter > 0.0;
        let hosts_differ = plan
            .per_iteration
            .values()
            .any(|p| matches!(p, PerIteration::PerNode(_)));
        if opts.every_gpu
            || hosts_differ
            || (jitter && (opts.trace || plan.stages > 1 || !barrier(plan)))
        {
            Mode::EveryGpu
        } else {
            Mode::Representative
        }
    }
}

/// Whether each iteration starts on every GPU at once: the first compute
/// task of the stream waits for a collective of the previous iteration
/// that itself waits (through collectives and CPU tasks) for the last
/// compute task, so no GPU starts an iteration before every GPU has
/// ended the last; and no host task waits on a GPU's compute directly. Without it (a first layer with no parameters to
/// synchronise, a plan with no communication) a GPU that was fast can
/// start early, and the slowest GPU of an iteration no longer sets every
/// time the others wait for.
fn barrier(plan: &Plan) -> bool {
    // a host task that waits on a GPU's compute (a machine's local
    // aggregation) is queued on its host when that machine's GPUs finish:
    // a fast machine can queue it ahead of other work the slowest queues
    // it behind, so the slowest GPU no longer sets every time
    let host_waits_on_compute = plan.tasks.iter().any(|t| {
        matches!(t.work, Work::Cpu { .. })
            && t.deps.iter().any(|d| {
                d.back == 0 && matches!(plan.tasks[d.task as usize].work, Work::Compute { .. })
            })
    });
    if host_waits_on_compute {
        return false;
    }
    let orders = plan.stage_orders();
    let (Some(&first), Some(&last)) = (orders[0].first(), orders[0].last()) else {
        return false;
    };
    let is_comm = |t: TaskId| matches!(plan.tasks[t as usize].work, Work::Comm { .. });
    // does `t` (a comm or CPU task) wait, this iteration, for `last`?
    let mut seen = vec![false; plan.tasks.len()];
    let mut reaches = |start: TaskId| -> bool {
        let mut stack = vec![start];
        while let Some(t) = stack.pop() {
            if t == last {
                return true;
            }
            if std::mem::replace(&mut seen[t as usize], true) {
                continue;
            }
            if matches!(plan.tasks[t as usize].work, Work::Compute { .. }) {
                continue; // another compute task: not the stream's end
            }
            stack.extend(
                plan.tasks[t as usize]
                    .deps
                    .iter()
                    .filter(|d| d.back == 0)
                    .map(|d| d.task),
            );
        }
        false
    };
    plan.tasks[first as usize]
        .deps
        .iter()
        .any(|d| d.back == 1 && is_comm(d.task) && reaches(d.task))
}

/// Each iteration's slowest and mean compute factor over every GPU
/// ([`Jitter::factor`]): the representative GPU runs at the slowest, and
/// its compute time is counted at the mean, as every GPU's would average.
#[derive(Debug, Clone)]
struct Slowest {
    /// Per iteration: (max, mean) of the GPUs' factors.
    factors: Vec<(f64, f64)>,
}

impl Slowest {
    fn new(jitter: &Jitter, gpus: u32, iterations: u32) -> Slowest {
        Slowest {
            factors: (0..iterations)
                .map(|i| {
                    let (mut max, mut sum) = (0.0f64, 0.0);
                    for g in 0..gpus {
                        let f = jitter.factor(g, i);
                        max = max.max(f);
                        sum += f;
                    }
                    (max, sum / gpus as f64)
                })
                .collect(),
        }
    }
}

/// Engine events, dispatched by `match`: each says that something ended.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// The running compute task of a GPU's stream.
    Compute { gpu: u32 },
    /// A CPU task on a node's host.
    Cpu { node: u32, iter: u32, task: TaskId },
    /// The message on a channel.
    Message { channel: ChannelId },
    /// The message on a channel has paid its overhead and starts its
    /// transfer.
    Launch { channel: ChannelId },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamState {
    /// Between tasks.
    Idle,
    /// Running its task since `since`.
    Running { since: SimTime },
    /// Its next task waits since `since`, for `on` when the wait began.
    Blocked { since: SimTime, on: TaskId },
    /// Reached the end of the measured window.
    Stopped,
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    iter: u32,
    /// Index of the next (or running) task in stream order.
    pos: u32,
    /// Whether the GPU has entered `iter` (counted by the comm tasks).
    entered: bool,
    state: StreamState,
    /// The next task's dependencies before this index are met (a met
    /// dependency stays met): a blocked stream resumes its scan here.
    met: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Compute(ComputeKind),
    Cpu,
    Comm,
}

/// The unfinished state of one iteration.
#[derive(Debug, Clone)]
struct IterState {
    /// Comm tasks: dependencies (and GPUs yet to enter) outstanding.
    pending: Vec<u32>,
    /// CPU tasks on each simulated node: the same, at `task · nodes + node`.
    node_pending: Vec<u32>,
    /// Comm tasks: pieces not yet delivered.
    pieces: Vec<u32>,
    /// Comm tasks: done for every GPU.
    done: Vec<bool>,
    /// CPU tasks: done on a node, at `task · nodes + node`.
    node_done: Vec<bool>,
    /// Completions outstanding (GPUs × compute, comm, nodes × CPU tasks).
    left: u64,
}

/// A message on the wire.
#[derive(Debug, Clone)]
struct Msg {
    pieces: Vec<Slice>,
    collective: Collective,
    bytes: u64,
    uniform: bool,
    start: SimTime,
    /// Bytes each GPU sends (known at the start, except on the shared
    /// network, which says at the end).
    per_gpu: f64,
    /// What it carries, until its transfer starts (it waits out the
    /// message overhead first).
    waiting: Option<Payload>,
}

#[derive(Debug, Clone, Default)]
struct Host {
    busy: u32,
    queue: VecDeque<(u32, TaskId)>,
    /// Picoseconds of CPU work started in the measured iterations.
    work_ps: u128,
    /// The longest task started in the measured iterations, if any.
    longest: Option<(SimTime, TaskId)>,
}

struct Engine<'a> {
    cfg: &'a TrainConfig,
    plan: &'a Plan,
    kind: Vec<Kind>,
    /// Each stage's compute tasks in stream order.
    orders: Vec<Vec<TaskId>>,
    /// The stage of each simulated GPU's stream.
    stream_stage: Vec<u32>,
    dependents: Dependents,
    gpus: u32,
    nodes: u32,
    mode: Mode,
    q: EventQueue<Event>,
    comm: Comm,
    channels: Vec<Channel>,
    dirty: Vec<bool>,
    msgs: Vec<Option<Msg>>,
    live: Vec<Option<ChannelId>>,
    streams: Vec<Stream>,
    iters: VecDeque<IterState>,
    base: u32,
    hosts: Vec<Host>,
    jitter: Jitter,
    /// With stragglers in the representative mode: each iteration's
    /// slowest and mean factor.
    slowest: Option<Slowest>,
    /// What each message costs its channel before its transfer.
    overhead: SimTime,
    stop: u32,
    start_max: Vec<SimTime>,
    start_count: Vec<u32>,
    busy: Vec<(u128, u128)>,
    sent: Vec<Sent>,
    timeline: Option<Timeline>,
    /// The current instant (the queue's clock lags when the network acts).
    clock: SimTime,
    /// Emptied piece lists of ended messages, for reuse.
    spare: Vec<Vec<Slice>>,
    done_buf: Vec<(InstanceId, Finished)>,
    /// Blocked streams by the task each waits for now: a completion of
    /// that task (in any iteration or scope) re-examines them, and no
    /// other stream, since every other one still waits for its own.
    waiters: Vec<Vec<u32>>,
    /// [`Options::index_waiters`].
    index_waiters: bool,
}

/// Runs `plan` for `cfg`: warm-up and measured iterations, then the
/// result (and the timeline when `opts.trace`).
pub fn run(
    cfg: &TrainConfig,
    plan: &Plan,
    opts: Options,
) -> Result<(RunResult, Option<Timeline>), SimError> {
    let mode = Mode::of(cfg, plan, opts);
    let stages = plan.stages.max(1);
    let (gpus, nodes) = match mode {
        Mode::Representative => (stages, 1),
        Mode::EveryGpu => (cfg.cluster.gpus(), cfg.cluster.nodes),
    };
    // stage-major placement: rank r is stage r / trainers
    let trainers = cfg.cluster.gpus() / stages;
    let stream_stage: Vec<u32> = match mode {
        Mode::Representative => (0..stages).collect(),
        Mode::EveryGpu => (0..gpus)
            .map(|g| cfg.cluster.rank_of_gpu(g) / trainers)
            .collect(),
    };
    let stop = cfg.warmup_iterations + cfg.iterations;
    let kind = plan
        .tasks
        .iter()
        .map(|t| match t.work {
            Work::Compute { kind, .. } => Kind::Compute(kind),
            Work::Cpu { .. } => Kind::Cpu,
            Work::Comm { .. } => Kind::Comm,
        })
        .collect();
    let orders = plan.stage_orders();
    assert!(
        orders.iter().all(|o| !o.is_empty()),
        "every stage needs a compute task"
    );
    let timeline = opts.trace.then(|| Timeline {
        gpus,
        tasks: plan
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskInfo {
                name: plan.name(i as TaskId, |l| cfg.model.layer_name(l)),
                layer: t.layer,
                kind: match t.work {
                    Work::Compute { kind, .. } => Some(kind),
                    _ => None,
                },
            })
            .collect(),
        channels: plan.channels.iter().map(|c| c.name.clone()).collect(),
        ..Timeline::default()
    });
    let jitter = Jitter::new(cfg.seed, cfg.model.compute_jitter);
    let mut e = Engine {
        cfg,
        plan,
        kind,
        orders,
        stream_stage,
        dependents: plan.dependents(),
        gpus,
        nodes,
        mode,
        q: EventQueue::new(),
        comm: Comm::new(&cfg.cluster, cfg.net_model, plan, opts),
        channels: plan.channels.iter().cloned().map(Channel::new).collect(),
        dirty: vec![false; plan.channels.len()],
        msgs: vec![None; plan.channels.len()],
        live: Vec::new(),
        streams: vec![
            Stream {
                iter: 0,
                pos: 0,
                entered: false,
                state: StreamState::Idle,
                met: 0,
            };
            gpus as usize
        ],
        iters: VecDeque::new(),
        base: 0,
        // a server machine's host beside each node's, where servers have
        // machines of their own
        hosts: vec![
            Host::default();
            nodes as usize * (1 + usize::from(plan.on_server_machines.contains(&true)))
        ],
        slowest: (mode == Mode::Representative && !jitter.is_none())
            .then(|| Slowest::new(&jitter, cfg.cluster.gpus(), stop + 1)),
        jitter,
        overhead: SimTime::from_secs(cfg.strategy.message_overhead_s),
        stop,
        start_max: vec![SimTime::ZERO; stop as usize + 1],
        start_count: vec![0; stop as usize + 1],
        busy: vec![(0, 0); stop as usize],
        sent: Vec::new(),
        timeline,
        clock: SimTime::ZERO,
        spare: Vec::new(),
        done_buf: Vec::new(),
        waiters: vec![Vec::new(); plan.tasks.len()],
        index_waiters: opts.index_waiters,
    };
    e.run()?;
    // messages in start order (they were recorded as they ended)
    e.sent.sort_by_key(|m| (m.start, m.channel));
    let record = Record {
        starts: e.start_max.clone(),
        busy: std::mem::take(&mut e.busy),
        gpus,
        sent: std::mem::take(&mut e.sent),
        channels: plan.channels.iter().map(|c| c.name.clone()).collect(),
        events: e.q.events_processed() + e.comm.events(),
    };
    let mut r = result(cfg, plan, &record);
    r.host_tasks = super::planner::host::tasks(cfg, plan);
    r.host_cpu = e.busiest_host(&r);
    let mut timeline = e.timeline.take();
    if let Some(t) = &mut timeline {
        t.iteration_starts = e.start_max;
        t.comm.sort_by_key(|m| (m.start, m.channel));
    }
    Ok((r, timeline))
}

impl Engine<'_> {
    fn now(&self) -> SimTime {
        self.clock
    }

    /// The host whose CPU worked longest in the measured iterations of
    /// `r`, with its cores and longest task; `None` where no host ran a
    /// CPU task of any length (no servers, no tables in host memory).
    fn busiest_host(&self, r: &super::RunResult) -> Option<super::result::HostCpu> {
        let (h, host) = self
            .hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| h.work_ps > 0)
            // the first of equals: the lowest node
            .max_by(|a, b| a.1.work_ps.cmp(&b.1.work_ps).then(b.0.cmp(&a.0)))?;
        let nodes = self.nodes as usize;
        let server = h >= nodes;
        let cores = self.host_cores(h);
        let n = f64::from(self.cfg.iterations.max(1));
        let busy_s = host.work_ps as f64 * 1e-12 / n;
        let (longest, task) = host.longest.expect("a host that worked started a task");
        let layer_name = |l: u32| self.cfg.model.layers[l as usize].name.clone();
        Some(super::result::HostCpu {
            host: if server {
                format!("server machine beside node {}", h - nodes)
            } else {
                format!("node {h}")
            },
            cores,
            busy_s,
            utilisation: if r.iteration_time_s > 0.0 {
                busy_s / (f64::from(cores.max(1)) * r.iteration_time_s)
            } else {
                0.0
            },
            longest_task: self.plan.name(task, layer_name),
            longest_task_s: longest.as_secs(),
        })
    }

    fn node_of(&self, gpu: u32) -> u32 {
        match self.mode {
            Mode::Representative => 0,
            Mode::EveryGpu => self.cfg.cluster.node_of_gpu(gpu),
        }
    }

    /// Simulated GPUs that run each compute task (those of its stage).
    fn gpus_per_stage(&self) -> u32 {
        self.gpus / self.orders.len() as u32
    }

    /// The compute task at `pos` of GPU `g`'s stream.
    fn task_at(&self, g: u32, pos: u32) -> TaskId {
        self.orders[self.stream_stage[g as usize] as usize][pos as usize]
    }

    /// Simulated GPUs on a simulated node.
    fn gpus_on_node(&self) -> u32 {
        match self.mode {
            // the simulated GPUs (one per stage) all stand on node 0
            Mode::Representative => self.gpus,
            Mode::EveryGpu => self.cfg.cluster.gpus_per_node,
        }
    }

    fn run(&mut self) -> Result<(), SimError> {
        for g in 0..self.gpus {
            self.advance(g);
        }
        loop {
            // the end of an instant: channels decide what to send next
            self.kick()?;
            let t = self
                .comm
                .next_time()
                .min(self.q.peek_time().unwrap_or(SimTime::MAX));
            if t == SimTime::MAX {
                if self.comm.busy() || !self.q.is_empty() {
                    // times saturate at MAX: the run left the representable range
                    return Err(SimError::TimeOverflow(format!(
                        "{} iterations of `{}`",
                        self.stop, self.cfg.name
                    )));
                }
                break;
            }
            self.clock = t;
            loop {
                if self.comm.next_time() == t {
                    self.comm.step(&mut self.done_buf);
                    self.finish_live();
                } else if self.q.peek_time() == Some(t) {
                    let (_, ev) = self.q.pop().expect("peeked");
                    match ev {
                        Event::Compute { gpu } => self.on_compute(gpu),
                        Event::Cpu { node, iter, task } => self.on_cpu(node, iter, task),
                        Event::Message { channel } => self.on_message_end(channel, t),
                        Event::Launch { channel } => self.launch(channel)?,
                    }
                } else {
                    break;
                }
            }
        }
        assert!(
            self.start_count.iter().all(|&c| c == self.gpus),
            "training stalled before the measured window ended (a scheduler bug)"
        );
        assert!(
            self.msgs.iter().all(Option::is_none) && self.comm.in_flight() == 0,
            "a message never ended (a collective deadlocked)"
        );
        Ok(())
    }

    /// Messages of the shared network that finished now: each ends through
    /// the queue, like the other backends' messages and any event of this
    /// instant, before channels decide again.
    fn finish_live(&mut self) {
        let gpus = self.cfg.cluster.gpus();
        for (id, f) in self.done_buf.drain(..) {
            let ch = self.live[id as usize]
                .take()
                .expect("a finished message of a channel");
            if let Some(m) = &mut self.msgs[ch as usize] {
                m.per_gpu = f.bytes_sent_per_gpu(gpus);
            }
            self.q.push(f.end, Event::Message { channel: ch });
        }
    }

    // ---- compute streams ------------------------------------------------

    /// Moves GPU `g`'s stream on as far as it can go now: enters a new
    /// iteration, waits for a dependency, or starts its next task.
    fn advance(&mut self, g: u32) {
        let s = self.streams[g as usize];
        if matches!(s.state, StreamState::Running { .. } | StreamState::Stopped) {
            return;
        }
        let now = self.now();
        if s.pos == 0 && !s.entered {
            self.enter(g, s.iter);
            self.streams[g as usize].entered = true;
            if self.stream_stage[g as usize] > 0 {
                // a later model-parallel stage: an iteration begins with
                // stage 0's first task (the instants the window is
                // measured between), so this stream is only counted in;
                // at the window's end it stops here, as its next task
                // waits for stage 0's activation of an iteration that is
                // not run
                self.start_count[s.iter as usize] += 1;
                if s.iter == self.stop {
                    self.streams[g as usize].state = StreamState::Stopped;
                    return;
                }
            }
        }
        let task = self.task_at(g, s.pos);
        let from = if self.index_waiters { s.met } else { 0 };
        if let Some((at, on)) = self.unmet(g, s.iter, task, from) {
            self.streams[g as usize].met = at;
            if s.state == StreamState::Idle {
                self.streams[g as usize].state = StreamState::Blocked { since: now, on };
            }
            // waits for `on` now (the stall keeps the task it began on)
            self.waiters[on as usize].push(g);
            return;
        }
        if let StreamState::Blocked { since, on } = s.state
            && let Some(t) = &mut self.timeline
        {
            t.stalls.push(Stall {
                gpu: g,
                iter: s.iter,
                task,
                on,
                start: since,
                end: now,
            });
        }
        if s.pos == 0 && self.stream_stage[g as usize] == 0 {
            let i = s.iter as usize;
            self.start_max[i] = self.start_max[i].max(now);
            self.start_count[i] += 1;
            if s.iter == self.stop {
                // the measured window is complete
                self.streams[g as usize].state = StreamState::Stopped;
                return;
            }
        }
        debug_assert!(
            matches!(self.plan.tasks[task as usize].work, Work::Compute { .. }),
            "stream order holds compute tasks"
        );
        let duration = self.plan.duration(task, s.iter);
        let d = match &self.slowest {
            _ if self.jitter.is_none() => duration,
            Some(sl) => SimTime::from_secs(duration.as_secs() * sl.factors[s.iter as usize].0),
            None => SimTime::from_secs(duration.as_secs() * self.jitter.factor(g, s.iter)),
        };
        self.streams[g as usize].state = StreamState::Running { since: now };
        self.q.push(now + d, Event::Compute { gpu: g });
    }

    /// The first dependency of task `task` of iteration `iter` that is not
    /// met on GPU `g`, with its index, looking from index `from` on (those
    /// before are met); `None`: it may start.
    fn unmet(&self, g: u32, iter: u32, task: TaskId, from: u32) -> Option<(u32, TaskId)> {
        let met = |d: &super::task::Dep| {
            let Some(k) = iter.checked_sub(d.back) else {
                return true; // no previous iteration
            };
            if k < self.base {
                return true; // that iteration is finished
            }
            let st = &self.iters[(k - self.base) as usize];
            match self.kind[d.task as usize] {
                // stream order: earlier compute tasks are done
                Kind::Compute(_) => true,
                Kind::Comm => st.done[d.task as usize],
                Kind::Cpu => st.node_done[(d.task * self.nodes + self.node_of(g)) as usize],
            }
        };
        let deps = &self.plan.tasks[task as usize].deps;
        deps[from as usize..]
            .iter()
            .position(|d| !met(d))
            .map(|i| (from + i as u32, deps[from as usize + i].task))
    }

    fn on_compute(&mut self, g: u32) {
        let now = self.now();
        let s = self.streams[g as usize];
        let StreamState::Running { since } = s.state else {
            unreachable!("a compute task ended on an idle stream")
        };
        let task = self.task_at(g, s.pos);
        let Kind::Compute(kind) = self.kind[task as usize] else {
            unreachable!()
        };
        let ps = match &self.slowest {
            // the GPUs' mean compute, not the slowest's
            Some(sl) => {
                let nominal = self.plan.duration(task, s.iter).as_secs();
                SimTime::from_secs(nominal * sl.factors[s.iter as usize].1).0 as u128
            }
            None => (now - since).0 as u128,
        };
        let b = &mut self.busy[s.iter as usize];
        match kind {
            ComputeKind::Kernel => b.1 += ps,
            _ => b.0 += ps,
        }
        if let Some(t) = &mut self.timeline {
            t.compute.push(ComputeSpan {
                gpu: g,
                iter: s.iter,
                task,
                kind,
                start: since,
                end: now,
            });
        }
        let st = &mut self.streams[g as usize];
        st.state = StreamState::Idle;
        st.met = 0;
        st.pos += 1;
        if st.pos as usize == self.orders[self.stream_stage[g as usize] as usize].len() {
            st.pos = 0;
            st.iter += 1;
            st.entered = false;
        }
        self.completed(s.iter, task, Scope::Gpu(g));
        self.advance(g);
    }

    // ---- iteration state and dependencies -------------------------------

    fn state(&mut self, iter: u32) -> &mut IterState {
        &mut self.iters[(iter - self.base) as usize]
    }

    /// GPU `g` enters iteration `iter`: its state exists from now on, and
    /// its communication and CPU tasks count the GPU as arrived.
    fn enter(&mut self, g: u32, iter: u32) {
        while self.base + self.iters.len() as u32 <= iter {
            let st = self.fresh_state();
            self.iters.push_back(st);
        }
        let node = self.node_of(g);
        for t in 0..self.plan.tasks.len() as TaskId {
            match self.kind[t as usize] {
                Kind::Comm => self.comm_dep_met(iter, t),
                Kind::Cpu => self.cpu_dep_met(iter, t, node),
                Kind::Compute(_) => {}
            }
        }
    }

    fn fresh_state(&self) -> IterState {
        let n = self.plan.tasks.len();
        let nodes = self.nodes as usize;
        let per_stage = self.gpus_per_stage();
        let mut pending = vec![0u32; n];
        let mut node_pending = vec![0u32; n * nodes];
        let mut left = 0u64;
        for (t, task) in self.plan.tasks.iter().enumerate() {
            let same_iter = task.deps.iter().filter(|d| d.back == 0);
            match self.kind[t] {
                Kind::Compute(_) => left += per_stage as u64,
                Kind::Comm => {
                    left += 1;
                    // every GPU enters, then each dependency's completions
                    // (a compute task's on the GPUs of its stage)
                    pending[t] = self.gpus
                        + same_iter
                            .map(|d| match self.kind[d.task as usize] {
                                Kind::Compute(_) => per_stage,
                                Kind::Comm => 1,
                                Kind::Cpu => self.nodes,
                            })
                            .sum::<u32>();
                }
                Kind::Cpu => {
                    left += self.nodes as u64;
                    let per_node = self.gpus_on_node()
                        + same_iter
                            .map(|d| match self.kind[d.task as usize] {
                                Kind::Compute(_) => self.gpus_on_node(),
                                Kind::Comm | Kind::Cpu => 1,
                            })
                            .sum::<u32>();
                    node_pending[t * nodes..(t + 1) * nodes].fill(per_node);
                }
            }
        }
        IterState {
            pending,
            node_pending,
            pieces: vec![0; n],
            done: vec![false; n],
            node_done: vec![false; n * nodes],
            left,
        }
    }

    /// One dependency of comm task `t` of `iter` is met; queue it when all are.
    fn comm_dep_met(&mut self, iter: u32, t: TaskId) {
        let st = self.state(iter);
        st.pending[t as usize] -= 1;
        if st.pending[t as usize] > 0 {
            return;
        }
        let task = &self.plan.tasks[t as usize];
        let Work::Comm {
            channel,
            collective,
            ..
        } = &task.work
        else {
            unreachable!()
        };
        let payload = self.plan.payload(t, iter);
        let uniform = payload.is_uniform();
        debug_assert!(
            payload.bytes().fract() == 0.0,
            "task {t}: planners send whole bytes"
        );
        let n = self.channels[*channel as usize].enqueue_at(
            iter.saturating_sub(u32::from(task.lead)),
            iter,
            t,
            task.priority,
            payload.bytes() as u64,
            uniform.then_some(*collective),
        );
        self.dirty[*channel as usize] = true;
        self.state(iter).pieces[t as usize] = n;
    }

    /// The host CPU task `t` runs on for `node`: the node's, or the server
    /// machine's beside it ([`Plan::on_server_machines`]).
    fn host_of(&self, t: TaskId, node: u32) -> usize {
        node as usize + self.nodes as usize * usize::from(self.plan.on_server_machine(t))
    }

    /// One dependency of CPU task `t` of `iter` on `node` is met; queue it
    /// on the host when all are.
    fn cpu_dep_met(&mut self, iter: u32, t: TaskId, node: u32) {
        let i = (t * self.nodes + node) as usize;
        let st = self.state(iter);
        st.node_pending[i] -= 1;
        if st.node_pending[i] == 0 {
            // a server's task on a host that holds none of its work ends
            // at once, without waiting for a core
            let idle = matches!(
                self.plan.per_iteration.get(&t),
                Some(PerIteration::PerNode(_))
            ) && self.plan.host_duration(t, iter, node) == SimTime::ZERO;
            let host = self.host_of(t, node);
            if idle {
                // `on_cpu` frees the core it did not wait for
                self.hosts[host].busy += 1;
                let now = self.now();
                self.q.push(
                    now,
                    Event::Cpu {
                        node,
                        iter,
                        task: t,
                    },
                );
                return;
            }
            self.hosts[host].queue.push_back((iter, t));
            self.run_host(host);
        }
    }

    /// The cores of host `host` ([`Engine::host_of`]): a server machine's
    /// host has cores of its own (`Plan::server_host_cores`, else the
    /// nodes').
    fn host_cores(&self, host: usize) -> u32 {
        match self.plan.server_host_cores {
            c if host >= self.nodes as usize && c > 0 => c,
            _ => self.plan.host_cores,
        }
    }

    /// Starts what host `host` ([`Engine::host_of`]) has queued, as its
    /// cores allow.
    fn run_host(&mut self, host: usize) {
        let now = self.now();
        let node = (host % self.nodes as usize) as u32;
        let cores = self.host_cores(host);
        while self.hosts[host].busy < cores.max(1) {
            let Some((iter, task)) = self.hosts[host].queue.pop_front() else {
                return;
            };
            self.hosts[host].busy += 1;
            let duration = self.plan.host_duration(task, iter, node);
            if iter >= self.cfg.warmup_iterations && iter < self.stop {
                let h = &mut self.hosts[host];
                h.work_ps += u128::from(duration.0);
                if h.longest.is_none_or(|(d, _)| duration > d) {
                    h.longest = Some((duration, task));
                }
            }
            self.q.push(now + duration, Event::Cpu { node, iter, task });
        }
    }

    fn on_cpu(&mut self, node: u32, iter: u32, task: TaskId) {
        let host = self.host_of(task, node);
        self.hosts[host].busy -= 1;
        self.completed(iter, task, Scope::Node(node));
        self.run_host(host);
    }

    /// Task `task` of `iter` completed in `scope`: tell its dependents.
    fn completed(&mut self, iter: u32, task: TaskId, scope: Scope) {
        let nodes = self.nodes;
        let st = self.state(iter);
        st.left -= 1;
        match scope {
            Scope::All => st.done[task as usize] = true,
            Scope::Node(n) => st.node_done[(task * nodes + n) as usize] = true,
            Scope::Gpu(_) => {}
        }
        let mut wake = false;
        for k in 0..self.dependents.of(task).len() {
            let (d, back) = self.dependents.of(task)[k];
            if back > 0 {
                // only compute tasks wait on the previous iteration
                wake = true;
                continue;
            }
            match (self.kind[d as usize], scope) {
                (Kind::Compute(_), Scope::Gpu(_)) => {} // stream order
                (Kind::Compute(_), _) => wake = true,
                (Kind::Comm, _) => self.comm_dep_met(iter, d),
                (Kind::Cpu, Scope::Gpu(g)) => {
                    let n = self.node_of(g);
                    self.cpu_dep_met(iter, d, n)
                }
                (Kind::Cpu, Scope::Node(n)) => self.cpu_dep_met(iter, d, n),
                (Kind::Cpu, Scope::All) => {
                    for n in 0..nodes {
                        self.cpu_dep_met(iter, d, n);
                    }
                }
            }
        }
        // forget finished iterations
        while self.iters.front().is_some_and(|s| s.left == 0) {
            self.iters.pop_front();
            self.base += 1;
        }
        if wake {
            // A blocked stream waits for a comm or CPU task (compute tasks
            // are met by stream order), and until that task completes in
            // the stream's iteration and scope it stays blocked: only the
            // streams waiting for `task` can have become free. (An
            // iteration is forgotten after all its completions, each of
            // which re-examined its waiters.) In GPU order, as when every
            // blocked stream was re-examined, which keeps the events'.
            let mut woken = std::mem::take(&mut self.waiters[task as usize]);
            if self.index_waiters {
                woken.sort_unstable();
            } else {
                // the reference: every blocked stream
                for w in &mut self.waiters {
                    w.clear();
                }
                woken.clear();
                woken.extend((0..self.gpus).filter(|&g| {
                    matches!(self.streams[g as usize].state, StreamState::Blocked { .. })
                }));
            }
            for &g in &woken {
                self.advance(g);
            }
            // the list's allocation serves again
            woken.clear();
            if self.waiters[task as usize].is_empty() {
                self.waiters[task as usize] = woken;
            }
        }
    }

    // ---- channels and messages ------------------------------------------

    /// Starts the next message on every channel that may have one.
    fn kick(&mut self) -> Result<(), SimError> {
        // a message that ends as it starts (nothing to send) frees its
        // channel, and may ready tasks of others, at once: go round again
        while let Some(ch) = self.dirty.iter().position(|&d| d) {
            self.dirty[ch] = false;
            let mut pieces = self.spare.pop().unwrap_or_default();
            if !self.channels[ch].next_message(&mut pieces) {
                self.spare.push(pieces);
                continue;
            }
            let head = &self.plan.tasks[pieces[0].task as usize];
            let Work::Comm { collective, .. } = &head.work else {
                unreachable!()
            };
            let payload = self.plan.payload(pieces[0].task, pieces[0].iter);
            let total: u64 = pieces.iter().map(|p| p.bytes).sum();
            let uniform = payload.is_uniform();
            let payload = if uniform {
                Payload::Uniform(total as f64)
            } else {
                payload.clone()
            };
            let now = self.now();
            let collective = *collective;
            self.msgs[ch] = Some(Msg {
                pieces,
                collective,
                bytes: total,
                uniform,
                start: now,
                per_gpu: 0.0,
                waiting: Some(payload),
            });
            // a message with something to send first occupies its channel
            // for the overhead (its launch, the framework's bookkeeping)
            if total > 0 && self.overhead > SimTime::ZERO {
                self.q.push(
                    now + self.overhead,
                    Event::Launch {
                        channel: ch as ChannelId,
                    },
                );
                continue;
            }
            self.launch(ch as ChannelId)?;
        }
        Ok(())
    }

    /// Starts the transfer of the message waiting on channel `ch`.
    fn launch(&mut self, ch: ChannelId) -> Result<(), SimError> {
        let ch = ch as usize;
        let now = self.now();
        let msg = self.msgs[ch].as_mut().expect("a message on the channel");
        let payload = msg.waiting.take().expect("a message waiting to start");
        let collective = msg.collective;
        let started = self.comm.start(now, collective, &payload)?;
        if let Started::Ends(_, per_gpu) = started {
            msg.per_gpu = per_gpu;
        }
        {
            match started {
                Started::Ends(end, _) => {
                    self.q.push(
                        end,
                        Event::Message {
                            channel: ch as ChannelId,
                        },
                    );
                }
                Started::Live(id) => {
                    if self.live.len() <= id as usize {
                        self.live.resize(id as usize + 1, None);
                    }
                    self.live[id as usize] = Some(ch as ChannelId);
                    // a program with nothing to send ends at once
                    self.comm.take_finished(&mut self.done_buf);
                    self.finish_live();
                }
            }
        }
        Ok(())
    }

    /// The message on `ch` ended at `end`.
    fn on_message_end(&mut self, ch: ChannelId, end: SimTime) {
        let mut msg = self.msgs[ch as usize]
            .take()
            .expect("a message on the channel");
        self.sent.push(Sent {
            channel: ch,
            start: msg.start,
            end,
            per_gpu: msg.per_gpu,
            task: msg.pieces[0].task,
            iter: msg.pieces[0].iter,
            bytes: msg.bytes,
            uniform: msg.uniform,
        });
        self.channels[ch as usize].busy = false;
        self.dirty[ch as usize] = true;
        for p in &msg.pieces {
            let st = self.state(p.iter);
            st.pieces[p.task as usize] -= p.pieces;
            if st.pieces[p.task as usize] == 0 {
                self.completed(p.iter, p.task, Scope::All);
            }
        }
        if let Some(t) = &mut self.timeline {
            t.comm.push(CommSpan {
                channel: ch,
                collective: msg.collective,
                start: msg.start,
                end,
                bytes: msg.bytes,
                sent_per_gpu: msg.per_gpu,
                uniform: msg.uniform,
                pieces: msg.pieces.clone(),
            });
        }
        msg.pieces.clear();
        self.spare.push(msg.pieces);
    }
}

/// Where a task completed.
#[derive(Debug, Clone, Copy)]
enum Scope {
    Gpu(u32),
    Node(u32),
    All,
}
