//! Timelines as Chrome trace-event files.
//!
//! The format is the JSON "trace event" format that Perfetto and
//! chrome://tracing load: an object with a `traceEvents` array. Times are
//! microseconds.
//!
//! * One process per GPU (named `GPU g (node n)`), with a `compute` thread
//!   (the compute tasks the engine ran: forward and backward passes named
//!   by layer, inserted kernels, and the waits of the stream on a
//!   dependency such as a layer's parameters) and one communication thread
//!   per channel of the plan (`communication` when there is one channel,
//!   and for the channel named `communication` beside others,
//!   `communication: NAME` otherwise; each fused collective message, named
//!   by operation, size and the layers it carries).
//! * Flow arrows from each GPU's message to the same message on every
//!   shown GPU it sends to in the collective (its ring successor, its tree
//!   parent and children, ...), from the collective's step program.
//!   Sends to a parameter server's host have no GPU process to point at.
//! * A counter per GPU, `link utilisation (%)`, with one series per link
//!   the GPU's traffic crosses: `intra up` / `intra down` (its intra-node
//!   link), `NIC k up` / `NIC k down` (the NIC it maps to,
//!   [`sim::cluster::ClusterSpec::nic_of_gpu`], on multi-node clusters)
//!   and `core up` / `core down` (its node's core link, when the fabric is
//!   oversubscribed); links the collective leaves idle stay at 0. During
//!   a message of m bytes lasting d seconds a link l of capacity B_l shows
//!
//!   ```text
//!   u_l = m · w_l / (d · B_l) × 100 %
//!   ```
//!
//!   where m · w_l is the bytes the collective puts on l
//!   ([`sim::collective::links`]; w_l, the bytes per byte of buffer, is
//!   computed once per trace, as the loads are linear in m). It is the
//!   average over the message, not an instantaneous rate: a ring that
//!   waits a latency α before each of its 2(N−1) steps shows
//!   1 − 2(N−1)α/d on its NIC. It is set when the message starts and back
//!   to 0 when it ends. It cannot exceed 100 % (the analytical step cost
//!   and the flow model's max-min rates never move more than B_l · d over
//!   l); values are clamped to [0, 100] against the rounding of d to the
//!   picosecond. The same values are in each message's `args`.
//! * A process per dedicated server machine (`strategy.ps_machines`),
//!   after the GPUs (`server machine m`), with the same counter over its
//!   one NIC (`NIC up` / `NIC down`).
//!
//! Everything comes from the recorded [`Timeline`]. When the engine
//! followed one representative GPU (`Timeline::gpus` = 1: every GPU
//! computes alike), its compute and communication spans stand for every
//! shown GPU (their link counters still differ where the collective treats
//! GPUs differently: a PS server's node, a tree's root, a NIC shared by a
//! ring's node-crossing hop); when it simulated every GPU (stragglers),
//! each GPU shows its own compute spans and stalls. Messages are
//! collectives of all GPUs, so every GPU shows each of them. With several
//! channels each has its own counter, `link utilisation (%) NAME`; a
//! message whose payload differs per rank has no counter (its loads are
//! not a multiple of one size). A trace of thousands of GPUs is mostly
//! repetition, hence `max_gpus`. `docs/traces.md` describes the trace for
//! users.

use serde_json::{Map, Value, json};
use sim::SimTime;
use sim::cluster::{LinkId, Topology};
use sim::collective::program::Grouping;
use sim::collective::{Algo, Collective, Op};
use sim::train::task::ComputeKind;
use sim::train::timeline::{CommSpan, ComputeSpan, Stall};
use sim::train::{Timeline, TrainConfig};
use std::io::Write as _;

fn us(t: SimTime) -> f64 {
    t.as_secs() * 1e6
}

/// The start and duration, in µs, of a span from `start` to `end`, as
/// the trace writes them (`ts`, `dur`). A reader takes the end as
/// `ts + dur`; the timeline plot does the same with the recorded spans, so
/// a report's picture and the picture of its trace file agree to the bit.
pub(crate) fn micros(start: SimTime, end: SimTime) -> (f64, f64) {
    let ts = us(start);
    (ts, us(end) - ts)
}

/// The categories (`cat`) of a dtsim trace's events. The writer below and
/// the timeline plot, which reads traces back ([`crate::plot::Gantt`]),
/// both take the names from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// A compute task on a GPU's stream (`args.pass` says which kind).
    Compute,
    /// A compute stream waiting for a dependency.
    Stall,
    /// A collective message on a channel.
    Communication,
    /// A flow arrow from a message to the same message on a peer GPU.
    Transfer,
}

impl Category {
    /// Every category, in the order above.
    pub const ALL: [Category; 4] = [
        Category::Compute,
        Category::Stall,
        Category::Communication,
        Category::Transfer,
    ];

    /// The category's name in the trace.
    pub fn name(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::Stall => "stall",
            Category::Communication => "communication",
            Category::Transfer => "transfer",
        }
    }

    /// The category named `name`, if dtsim writes one.
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Every kind of compute task, in the order of [`ComputeKind`].
const COMPUTE_KINDS: [ComputeKind; 3] = [
    ComputeKind::Forward,
    ComputeKind::Backward,
    ComputeKind::Kernel,
];

/// A compute event's `args.pass`: `fwd`, `bwd` or `kernel`.
pub(crate) fn pass_name(kind: ComputeKind) -> &'static str {
    match kind {
        ComputeKind::Forward => "fwd",
        ComputeKind::Backward => "bwd",
        ComputeKind::Kernel => "kernel",
    }
}

/// The kind of compute task whose `args.pass` is `name`.
pub(crate) fn pass_kind(name: &str) -> Option<ComputeKind> {
    COMPUTE_KINDS.into_iter().find(|&k| pass_name(k) == name)
}

/// The name of GPU `g`'s process: `GPU g (node n)`.
pub(crate) fn process_name(cfg: &TrainConfig, g: u32) -> String {
    format!("GPU {g} (node {})", cfg.cluster.node_of_gpu(g))
}

/// Thread id of every GPU's compute track; channel `c`'s communication
/// track is `1 + c`.
pub(crate) const COMPUTE_TID: u32 = 0;

/// The name of thread `tid` of every GPU: `compute`, then one
/// communication track per channel (`communication` when the plan has
/// one channel, and for the dense channel, named `communication`, beside
/// others; `communication: NAME` otherwise).
pub(crate) fn thread_name(timeline: &Timeline, tid: u32) -> String {
    if tid == COMPUTE_TID {
        "compute".to_string()
    } else {
        match timeline.channels.get((tid - 1) as usize) {
            // one channel, or the dense channel beside others (named
            // `communication` itself)
            Some(c) if timeline.channels.len() > 1 && c != "communication" => {
                format!("communication: {c}")
            }
            _ => "communication".to_string(),
        }
    }
}

/// The start of each iteration, µs (`otherData.iteration_starts_us`).
pub(crate) fn iteration_starts_us(timeline: &Timeline) -> Vec<f64> {
    timeline.iteration_starts.iter().map(|&t| us(t)).collect()
}

/// GPUs a trace of at most `max_gpus` GPUs shows, at least one: the
/// first ones; with model-parallel stages, trainer 0's GPUs, one a stage
/// in stage order (in stage-major placement the first GPUs are all of
/// stage 0).
pub(crate) fn shown_gpus(cfg: &TrainConfig, max_gpus: u32) -> Vec<u32> {
    let n = cfg.cluster.gpus().min(max_gpus.max(1));
    let stages = cfg.strategy.mp_stages.max(1);
    if stages > 1 {
        let trainers = cfg.cluster.gpus() / stages;
        (0..stages.min(n))
            .map(|s| cfg.cluster.gpu_of_rank(s * trainers))
            .collect()
    } else {
        (0..n).collect()
    }
}

/// Whether the GPU of rank `rank` takes part in message `m`: every GPU in
/// every collective, but with model-parallel stages a stage's
/// synchronisation (its GPUs only) and a transfer between two stages
/// (theirs).
fn takes_part(rank: u32, m: &CommSpan) -> bool {
    let Grouping::Stage { size, stage } = m.collective.group else {
        return true;
    };
    let mine = rank / size.max(1);
    let other = match (m.collective.op, m.collective.algo) {
        (Op::SendRecv, Algo::Next) => Some(stage + 1),
        (Op::SendRecv, _) => stage.checked_sub(1),
        _ => None,
    };
    mine == stage || other == Some(mine)
}

/// A span that a GPU's tracks show.
pub(crate) enum Shown<'a> {
    /// A compute task, on the compute track.
    Compute(&'a ComputeSpan),
    /// A wait of the compute stream, on the compute track.
    Stall(&'a Stall),
    /// Message `i` of [`Timeline::comm`], on its channel's track.
    Message(usize, &'a CommSpan),
}

impl Shown<'_> {
    /// The thread (track) it is on.
    pub(crate) fn tid(&self) -> u32 {
        match self {
            Shown::Compute(_) | Shown::Stall(_) => COMPUTE_TID,
            Shown::Message(_, m) => 1 + m.channel,
        }
    }
}

/// What GPU `g` shows, in the trace's order: its compute tasks, its
/// stalls, then every message it takes part in (collectives of all GPUs;
/// with model-parallel stages, its stage's and its transfers). When the engine
/// followed one representative GPU (`Timeline::gpus` = 1), the
/// representative's compute spans and stalls stand for every GPU's; with
/// model-parallel stages, it followed one GPU a stage (simulated GPU s
/// for stage s), whose spans stand for its stage's GPUs.
pub(crate) fn shown_spans<'a>(
    timeline: &'a Timeline,
    cfg: &TrainConfig,
    g: u32,
) -> impl Iterator<Item = Shown<'a>> {
    let every = timeline.gpus == cfg.cluster.gpus();
    let stages = cfg.strategy.mp_stages.max(1);
    let stage = cfg.cluster.rank_of_gpu(g) / (cfg.cluster.gpus() / stages).max(1);
    let own = move |gpu: u32| if every { gpu == g } else { gpu == stage };
    let compute = timeline.compute.iter().filter(move |c| own(c.gpu));
    let stalls = timeline.stalls.iter().filter(move |s| own(s.gpu));
    let rank = cfg.cluster.rank_of_gpu(g);
    compute
        .map(Shown::Compute)
        .chain(stalls.map(Shown::Stall))
        .chain(
            timeline
                .comm
                .iter()
                .enumerate()
                .filter(move |(_, m)| takes_part(rank, m))
                .map(|(i, m)| Shown::Message(i, m)),
        )
}

fn human_bytes(b: u64) -> String {
    sim::units::HumanBytes(b as f64).to_string()
}

/// Name of the link-utilisation counter.
pub const LINK_UTILISATION: &str = "link utilisation (%)";

/// The links GPU `g`'s traffic can cross, named as in the trace: its
/// intra-node link, its own PCIe link (nodes whose fabric is not PCIe),
/// its shared PCIe switch's uplink (with `cluster.gpus_per_pcie_switch`),
/// its own NICs (multi-node clusters), its node's core link
/// (oversubscribed fabrics), each up and down. Links the collective leaves
/// idle are kept, at 0 %: that one is idle is part of the picture (a
/// collective that uses one rail of several, or no NIC at all inside one
/// node).
fn gpu_links(topo: &Topology, g: u32) -> Vec<(String, LinkId)> {
    let spec = topo.spec();
    let node = spec.node_of_gpu(g);
    let mut links = vec![
        ("intra up".to_string(), topo.gpu_up(g)),
        ("intra down".to_string(), topo.gpu_down(g)),
    ];
    if spec.nic_link.is_some() {
        links.push(("PCIe up".to_string(), topo.pcie_up(g)));
        links.push(("PCIe down".to_string(), topo.pcie_down(g)));
    }
    if spec.pcie_switches.is_some() {
        let sw = spec.pairing().switch_of_gpu(g % spec.gpus_per_node);
        let up = topo.uplink_up(node, sw);
        links.push((format!("PCIe switch {sw} uplink up"), up));
        links.push((format!("PCIe switch {sw} uplink down"), up + 1));
    }
    if spec.nodes > 1 {
        for nic in (0..spec.nics_per_node).filter(|&n| spec.is_own_nic(g, n)) {
            links.push((format!("NIC {nic} up"), topo.nic_up(node, nic)));
            links.push((format!("NIC {nic} down"), topo.nic_down(node, nic)));
        }
        if let Some((up, down)) = topo.core_links(node) {
            links.push(("core up".to_string(), up));
            links.push(("core down".to_string(), down));
        }
    }
    links
}

/// Average utilisation in [0, 1] of a link of capacity `cap` (bytes/s)
/// carrying `bytes` during `secs`. The model never moves more than
/// `cap · secs` over a link (`sim::collective::links`, utilisation bound),
/// so the clamp only removes the rounding of `secs` to the picosecond.
fn utilisation(bytes: f64, secs: f64, cap: f64) -> f64 {
    if secs > 0.0 && cap > 0.0 {
        (bytes / (secs * cap)).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// For each of the first `shown` GPUs, the other shown GPUs it sends to in
/// collective `coll` (from its step program; the peers do not depend on
/// the message size). Sends to a parameter server's host have no GPU to
/// point at and are left out.
fn gpu_peers(cfg: &TrainConfig, coll: &Collective, shown: &[u32]) -> Vec<Vec<u32>> {
    let prog = coll.program(&cfg.cluster, 1048576.0);
    let gpus = cfg.cluster.gpus();
    let mut sends = Vec::new();
    shown
        .iter()
        .map(|&g| {
            let mut to = std::collections::BTreeSet::new();
            if g < prog.participants() {
                for step in 0..prog.steps() {
                    sends.clear();
                    prog.sends(g, step, &mut sends);
                    to.extend(
                        sends
                            .iter()
                            .filter(|s| {
                                s.bytes > 0.0 && s.to < gpus && shown.contains(&s.to) && s.to != g
                            })
                            .map(|s| s.to),
                    );
                }
            }
            to.into_iter().collect()
        })
        .collect()
}

/// What the trace needs of each collective its messages use: the bytes
/// per byte of buffer on every link (one program walk per collective; the
/// loads are linear in the buffer size) and each shown GPU's peers.
struct CollectiveInfo {
    coll: Collective,
    per_byte: Vec<f64>,
    peers: Vec<Vec<u32>>,
}

/// Builds the trace of `timeline` for the first `max_gpus` GPUs of `cfg`,
/// in memory (see [`write_chrome_trace`] for a trace of many GPUs).
pub fn chrome_trace(cfg: &TrainConfig, timeline: &Timeline, max_gpus: u32) -> Value {
    let mut ev = Vec::new();
    let other = trace_events(cfg, timeline, max_gpus, |e| {
        ev.push(e);
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(other) = other;
    json!({
        "traceEvents": ev,
        "displayTimeUnit": "ms",
        "otherData": other,
    })
}

/// Writes the same trace as [`chrome_trace`] to `out` one event at a time,
/// so memory holds the timeline and one event, not the whole trace (a
/// trace of a thousand GPUs runs to hundreds of megabytes). The keys come
/// in a different order from [`chrome_trace`]'s serialisation (events
/// first); the JSON value is the same.
pub fn write_chrome_trace(
    cfg: &TrainConfig,
    timeline: &Timeline,
    max_gpus: u32,
    out: impl std::io::Write,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(out);
    w.write_all(b"{\"traceEvents\":[")?;
    let mut first = true;
    let other = trace_events(cfg, timeline, max_gpus, |e| {
        if !first {
            w.write_all(b",")?;
        }
        first = false;
        serde_json::to_writer(&mut w, &e).map_err(std::io::Error::from)
    })?;
    w.write_all(b"],\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    serde_json::to_writer(&mut w, &other).map_err(std::io::Error::from)?;
    w.write_all(b"}")?;
    w.flush()
}

/// Hands every event of the trace to `emit`, in order; returns the
/// trace's `otherData`.
fn trace_events<E>(
    cfg: &TrainConfig,
    timeline: &Timeline,
    max_gpus: u32,
    mut emit: impl FnMut(Value) -> Result<(), E>,
) -> Result<Value, E> {
    let gpus = cfg.cluster.gpus();
    let shown = shown_gpus(cfg, max_gpus);
    let topo = Topology::new(&cfg.cluster);
    let caps = topo.capacities();
    let mut colls: Vec<CollectiveInfo> = Vec::new();
    // a library's selection (`mpich`, `ompi`) runs another algorithm at
    // each size: its loads and peers are those of the one it runs
    let running = |m: &CommSpan| m.collective.running_at(&cfg.cluster, m.bytes as f64);
    for m in &timeline.comm {
        let coll = running(m);
        if !colls.iter().any(|c| c.coll == coll) {
            colls.push(CollectiveInfo {
                coll,
                per_byte: coll.link_bytes(&cfg.cluster, 1.0),
                peers: gpu_peers(cfg, &coll, &shown),
            });
        }
    }
    let info = |c: &Collective| colls.iter().find(|i| i.coll == *c).expect("collected");
    let layer_name = |l: u32| cfg.model.layer_name(l);
    let task_name = |t: u32| {
        timeline
            .tasks
            .get(t as usize)
            .map(|t| t.name.as_str())
            .unwrap_or("task")
    };
    let channels = timeline.channels.len();
    let counter = |c: u32| {
        if channels <= 1 {
            LINK_UTILISATION.to_string()
        } else {
            format!("{LINK_UTILISATION} {}", timeline.channels[c as usize])
        }
    };
    let mut arrow: u64 = 0;
    for (pos, &g) in shown.iter().enumerate() {
        emit(
            json!({"ph": "M", "name": "process_name", "pid": g, "args": {"name": process_name(cfg, g)}}),
        )?;
        emit(
            json!({"ph": "M", "name": "process_sort_index", "pid": g, "args": {"sort_index": g}}),
        )?;
        for tid in COMPUTE_TID..=channels.max(1) as u32 {
            emit(
                json!({"ph": "M", "name": "thread_name", "pid": g, "tid": tid, "args": {"name": thread_name(timeline, tid)}}),
            )?;
        }
        let links = gpu_links(&topo, g);
        for span in shown_spans(timeline, cfg, g) {
            let tid = span.tid();
            match span {
                Shown::Compute(c) => {
                    let (ts, dur) = micros(c.start, c.end);
                    emit(json!({
                        "ph": "X", "pid": g, "tid": tid, "cat": Category::Compute.name(),
                        "name": task_name(c.task),
                        "ts": ts, "dur": dur,
                        "args": {"iteration": c.iter, "layer": timeline.layer(c.task), "pass": pass_name(c.kind)},
                    }))?;
                }
                Shown::Stall(s) => {
                    let (ts, dur) = micros(s.start, s.end);
                    emit(json!({
                        "ph": "X", "pid": g, "tid": tid, "cat": Category::Stall.name(),
                        "name": format!("wait for {}", task_name(s.on)),
                        "ts": ts, "dur": dur,
                        "args": {"iteration": s.iter, "layer": timeline.layer(s.task)},
                    }))?;
                }
                Shown::Message(i, m) => {
                    let ci = info(&running(m));
                    let layers: Vec<u32> = m
                        .pieces
                        .iter()
                        .filter_map(|p| timeline.layer(p.task))
                        .collect();
                    let layers = match (layers.iter().min(), layers.iter().max()) {
                        (Some(&a), Some(&b)) if a == b => layer_name(a),
                        (Some(&a), Some(&b)) => format!("{}..{}", layer_name(a), layer_name(b)),
                        // pieces of tasks that belong to no layer: name the first
                        _ => task_name(m.pieces[0].task).to_string(),
                    };
                    let (ts, dur) = micros(m.start, m.end);
                    let te = us(m.end);
                    let secs = (m.end - m.start).as_secs();
                    // per-rank payloads have no single per-byte load: no counter
                    let util: Map<String, Value> = if m.uniform {
                        links
                            .iter()
                            .map(|(name, l)| {
                                let l = *l as usize;
                                let u = utilisation(m.bytes as f64 * ci.per_byte[l], secs, caps[l]);
                                (name.clone(), json!(100.0 * u))
                            })
                            .collect()
                    } else {
                        Map::new()
                    };
                    let mut op = format!("{}/{}", m.collective.op.name(), m.collective.algo.name());
                    if ci.coll.algo != m.collective.algo {
                        op = format!("{op}:{}", ci.coll.algo.name());
                    }
                    emit(json!({
                        "ph": "X", "pid": g, "tid": tid, "cat": Category::Communication.name(),
                        "name": format!("{op} {} [{layers}]", human_bytes(m.bytes)),
                        "ts": ts, "dur": dur,
                        "args": {
                            "bytes": m.bytes,
                            "bytes_sent_per_gpu": m.sent_per_gpu,
                            "pieces": m.pieces.iter().map(|p| p.pieces).sum::<u32>(),
                            "iterations": m.pieces.iter().map(|p| p.iter).collect::<std::collections::BTreeSet<_>>(),
                            "link_utilisation_pct": util.clone(),
                        },
                    }))?;
                    // an arrow to the copy of the message on each GPU this one sends
                    // to (among those shown)
                    for &to in &ci.peers[pos] {
                        let id = arrow;
                        arrow += 1;
                        emit(
                            json!({"ph": "s", "pid": g, "tid": tid, "cat": Category::Transfer.name(), "name": "send", "id": id, "ts": ts}),
                        )?;
                        emit(
                            json!({"ph": "f", "bp": "e", "pid": to, "tid": tid, "cat": Category::Transfer.name(), "name": "send", "id": id, "ts": te}),
                        )?;
                    }
                    if !links.is_empty() && !util.is_empty() {
                        let zero: Map<String, Value> =
                            links.iter().map(|(n, _)| (n.clone(), json!(0.0))).collect();
                        emit(
                            json!({"ph": "C", "pid": g, "name": counter(m.channel), "ts": ts, "args": util}),
                        )?;
                        // back to 0 at the end, unless the channel's next message
                        // starts then and sets its own values (two values at one
                        // instant would leave the order to the viewer)
                        let next = timeline.comm[i + 1..]
                            .iter()
                            .find(|n| n.channel == m.channel);
                        if next.is_none_or(|n| !n.uniform || n.start != m.end) {
                            emit(
                                json!({"ph": "C", "pid": g, "name": counter(m.channel), "ts": te, "args": zero}),
                            )?;
                        }
                    }
                }
            }
        }
    }
    // the dedicated server machines (`strategy.ps_machines`), as many as
    // GPUs are shown: a process each after the GPUs, holding its NIC's
    // counter (every uniform message's load there, as the GPUs' links)
    let machines = cfg.cluster.ps_machines.min(shown.len() as u32);
    for m in 0..machines {
        let pid = gpus + m;
        emit(
            json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("server machine {m}")}}),
        )?;
        emit(
            json!({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}}),
        )?;
        let up = topo.server_nic_up(m);
        let links = [("NIC up", up), ("NIC down", up + 1)];
        for (i, msg) in timeline.comm.iter().enumerate().filter(|(_, m)| m.uniform) {
            let ci = info(&running(msg));
            let secs = (msg.end - msg.start).as_secs();
            let util: Map<String, Value> = links
                .iter()
                .map(|&(name, l)| {
                    let l = l as usize;
                    let u = utilisation(msg.bytes as f64 * ci.per_byte[l], secs, caps[l]);
                    (name.to_string(), json!(100.0 * u))
                })
                .collect();
            let (ts, te) = (us(msg.start), us(msg.end));
            emit(
                json!({"ph": "C", "pid": pid, "name": counter(msg.channel), "ts": ts, "args": util}),
            )?;
            let next = timeline.comm[i + 1..]
                .iter()
                .find(|n| n.channel == msg.channel);
            if next.is_none_or(|n| !n.uniform || n.start != msg.end) {
                let zero: Map<String, Value> = links
                    .iter()
                    .map(|(n, _)| (n.to_string(), json!(0.0)))
                    .collect();
                emit(
                    json!({"ph": "C", "pid": pid, "name": counter(msg.channel), "ts": te, "args": zero}),
                )?;
            }
        }
    }
    // capacities behind the utilisation counters, to turn % into bytes/s
    let mut bandwidths = Map::new();
    bandwidths.insert("intra".into(), json!(cfg.cluster.intra.bandwidth));
    if let Some(n) = &cfg.cluster.nic_link {
        bandwidths.insert("PCIe".into(), json!(n.link.bandwidth));
    }
    if let Some(sw) = &cfg.cluster.pcie_switches {
        bandwidths.insert("PCIe switch uplink".into(), json!(sw.uplink.link.bandwidth));
    }
    if cfg.cluster.nodes > 1 {
        bandwidths.insert("NIC".into(), json!(cfg.cluster.inter.bandwidth));
        if cfg.cluster.oversubscription > 1.0 {
            bandwidths.insert("core".into(), json!(cfg.cluster.core_bandwidth()));
        }
    }
    let coll = cfg.strategy.dense_collective();
    Ok(json!({
        "scenario": cfg.name,
        "gpus": gpus,
        "gpus_shown": shown.len(),
        "gpus_simulated": timeline.gpus,
        "channels": timeline.channels,
        "collective": format!("{}/{}", coll.op.name(), coll.algo.name()),
        "network_model": cfg.net_model.name(),
        "link_bandwidth_bytes_per_s": bandwidths,
        "iteration_starts_us": iteration_starts_us(timeline),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan's one channel, and the dense channel (`communication`)
    /// beside a sparse one, are `communication`; every other channel is
    /// `communication: NAME` (the dense channel read `communication:
    /// communication` until 2026-11-29).
    #[test]
    fn communication_threads_are_named_once() {
        let t = |channels: &[&str]| Timeline {
            channels: channels.iter().map(|c| c.to_string()).collect(),
            ..Timeline::default()
        };
        assert_eq!(thread_name(&t(&["communication"]), COMPUTE_TID), "compute");
        assert_eq!(thread_name(&t(&["communication"]), 1), "communication");
        let both = t(&["communication", "sparse"]);
        assert_eq!(thread_name(&both, 1), "communication");
        assert_eq!(thread_name(&both, 2), "communication: sparse");
        let mp = t(&["activations", "stage 0"]);
        assert_eq!(thread_name(&mp, 1), "communication: activations");
        assert_eq!(thread_name(&mp, 2), "communication: stage 0");
    }
}
