//! Runs collectives' programs on the flow network model.
//!
//! Each participant walks through the program's steps; in a step it starts
//! its sends (each a flow on its path's links at once, delivered its path
//! latency after its last byte left: α + m/B alone on a link, the α-β
//! cost) and waits for the messages addressed to it in that step to
//! arrive and for its own sends to be delivered, or, where the step
//! streams (rings and pipelines, [`Program::streams`]), to have left.
//! Phases that run in lanes (a ring's or a pipeline's channels,
//! [`Program::lanes`]) walk each lane on its own. Messages that arrive
//! early, for a later step, are counted in a small per-lane window.
//! Memory is O(participants + messages in flight); nothing is stored per
//! step.
//!
//! A [`Network`] holds any number of collectives in flight on one shared
//! max-min network: the training engine starts each message on it and
//! advances it between its own events, so collectives of different
//! channels contend. [`run_flow`] and [`run_program`] run one collective
//! alone on a network of its own.
//!
//! **Symmetry.** When the program is invariant under shifting every
//! participant by one node ([`Program::node_symmetric`]: rings, pairwise
//! exchanges, hierarchical AllReduce, PS with servers on every node), all
//! nodes do the same thing at the same time. Then only node 0's
//! participants are simulated: a message to node k's participant is
//! delivered to its node-0 counterpart, and the links of node k on its path
//! are replaced by node 0's ([`Topology::link_in_node0`]). Each node-0 link
//! then carries exactly the flows its real counterparts carry, so the
//! max-min rates, and the times, are those of the full simulation, at
//! 1/nodes of the cost: a ring over N GPUs costs O(N·G) instead of O(N²).
//! [`run_program_full`] skips the shortcut; tests check that both agree.

use super::Collective;
use super::program::{Participant, Program};
use crate::cluster::{ClusterSpec, Path, Topology};
use crate::limits::SimError;
use crate::net::flow::FlowNet;
use crate::queue::EventQueue;
use crate::time::SimTime;
use std::collections::VecDeque;

/// The outcome of a collective on the flow model.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowOutcome {
    /// Completion time of the last participant.
    pub time: SimTime,
    /// Bytes sent by each participant (GPUs, then servers).
    pub sent: Vec<f64>,
    /// Bytes received by each participant.
    pub received: Vec<f64>,
    /// Bytes carried by each directed link (indexed by
    /// [`crate::cluster::LinkId`] of the cluster's [`Topology`]).
    pub link_bytes: Vec<f64>,
    /// Messages (point-to-point transfers) carried, cluster-wide.
    pub messages: u64,
    /// Events processed (message deliveries plus max-min recomputations)
    /// by the simulation, which may be fewer than `messages` under
    /// symmetry.
    pub events: u64,
    /// Whether the node-symmetry shortcut was used.
    pub symmetric: bool,
}

impl FlowOutcome {
    /// Bytes sent per GPU, all participants' bytes divided by the GPUs.
    pub fn bytes_sent_per_gpu(&self, gpus: u32) -> f64 {
        // from +0.0: an empty `f64` sum is -0.0, which prints as "-0"
        self.sent.iter().fold(0.0, |a, b| a + b) / gpus as f64
    }
}

/// Handle of a collective running on a [`Network`].
pub type InstanceId = u32;

#[derive(Debug, Clone, Copy)]
struct Xfer {
    inst: InstanceId,
    src: Participant,
    /// The participant that receives (node 0's counterpart under symmetry).
    dst: Participant,
    /// The lane of the sender ([`Program::lanes`]).
    lane: u32,
    /// The lane of the receiver (the send's own, else
    /// [`Program::dst_lane`]).
    dst_lane: u32,
    step: u32,
    bytes: f64,
    path: Path,
    /// The sender moved on when the last byte left ([`Program::streams`]).
    streamed: bool,
}

#[derive(Debug, Clone, Default)]
struct State {
    step: u32,
    /// Whether `step` has begun (its sends are out); a lane that reached
    /// a phase boundary waits, not begun, for the participant's others.
    begun: bool,
    outstanding: u32,
    window: VecDeque<u32>,
}

/// One collective in flight.
#[derive(Debug)]
struct Instance {
    prog: Program,
    /// `prog.steps()`, kept at hand for the hot loop.
    steps: u32,
    /// Progress of each simulated participant's lanes, at
    /// [`Instance::at`].
    parts: Vec<State>,
    /// Each participant's slot in `parts` (`u32::MAX`: not simulated)
    /// when the network is folded; `None`: slot = participant.
    slots: Option<Vec<u32>>,
    /// `prog.max_lanes()`.
    lanes: u32,
    /// Simulated participants that have not finished.
    remaining: u32,
    start: SimTime,
    end: SimTime,
    sent: Vec<f64>,
    received: Vec<f64>,
    messages: u64,
}

impl Instance {
    /// Where lane `lane` of participant `p` is in `parts`.
    fn at(&self, p: Participant, lane: u32) -> usize {
        let slot = match &self.slots {
            Some(s) => s[p as usize],
            None => p,
        };
        (slot * self.lanes + lane) as usize
    }
}

/// A finished collective, as [`Network::take`] returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// When it started.
    pub start: SimTime,
    /// When its last participant finished.
    pub end: SimTime,
    /// Bytes sent by each participant (GPUs, then servers), every node's
    /// filled in under symmetry.
    pub sent: Vec<f64>,
    /// Bytes received by each participant.
    pub received: Vec<f64>,
    /// Point-to-point messages, cluster-wide.
    pub messages: u64,
}

impl Finished {
    /// Bytes sent per GPU, all participants' bytes divided by the GPUs.
    pub fn bytes_sent_per_gpu(&self, gpus: u32) -> f64 {
        // from +0.0: an empty `f64` sum is -0.0, which prints as "-0"
        self.sent.iter().fold(0.0, |a, b| a + b) / gpus as f64
    }
}

/// Collectives in flight on one shared flow network.
///
/// Every transfer of every running collective is a flow of one
/// [`FlowNet`], so collectives started while others run share links
/// max-min fairly with them. The caller drives time: [`Network::next_time`]
/// says when something happens next, [`Network::step`] makes it happen,
/// and [`Network::take`] collects the collectives that finished. Started
/// with `fold`, the network simulates node 0's participants only (see the
/// module docs); every program started on it must then be
/// [`Program::node_symmetric`], and all must start on every node at once,
/// which holds when collectives start at instants common to all ranks.
pub struct Network {
    topo: Topology,
    fold: bool,
    net: FlowNet,
    deliveries: EventQueue<u32>,
    xfers: Vec<Xfer>,
    free: Vec<u32>,
    insts: Vec<Option<Instance>>,
    free_insts: Vec<InstanceId>,
    finished: Vec<InstanceId>,
    out: Vec<super::program::Send>,
    done_tags: Vec<u64>,
    clock: SimTime,
    link_bytes: Vec<f64>,
}

impl Network {
    /// An idle network over `cluster`'s links, at time zero.
    pub fn new(cluster: &ClusterSpec, fold: bool) -> Network {
        let topo = Topology::new(cluster);
        let links = topo.capacities().len();
        Network {
            net: FlowNet::new(topo.capacities()),
            topo,
            fold: fold && cluster.nodes > 1,
            deliveries: EventQueue::new(),
            xfers: Vec::new(),
            free: Vec::new(),
            insts: Vec::new(),
            free_insts: Vec::new(),
            finished: Vec::new(),
            out: Vec::new(),
            done_tags: Vec::new(),
            clock: SimTime::ZERO,
            link_bytes: vec![0.0; links],
        }
    }

    /// Whether only node 0's participants are simulated.
    pub fn folded(&self) -> bool {
        self.fold
    }

    /// Starts `prog` at `now` (not before the network's last event). A
    /// program with no steps finishes at once (see [`Network::take`]).
    ///
    /// # Panics
    /// If the network is folded and `prog` is not node-symmetric, or
    /// `now` is in the network's past.
    pub fn start(&mut self, now: SimTime, prog: Program) -> InstanceId {
        assert!(now >= self.clock, "a collective started in the past");
        assert!(
            !self.fold || prog.node_symmetric(),
            "a folded network runs node-symmetric programs only"
        );
        self.clock = now;
        let n = prog.participants() as usize;
        let active: Vec<Participant> = (0..n as u32)
            .filter(|&p| !self.fold || prog.node_of(p) == 0)
            .collect();
        let lanes = prog.max_lanes();
        // folded: states for node 0's participants only
        let slots = self.fold.then(|| {
            let mut slots = vec![u32::MAX; n];
            for (k, &p) in active.iter().enumerate() {
                slots[p as usize] = k as u32;
            }
            slots
        });
        let states = if self.fold { active.len() } else { n };
        let inst = Instance {
            parts: vec![State::default(); states * lanes as usize],
            slots,
            lanes,
            remaining: active.len() as u32,
            start: now,
            end: now,
            sent: vec![0.0; n],
            received: vec![0.0; n],
            messages: 0,
            steps: prog.steps(),
            prog,
        };
        let id = match self.free_insts.pop() {
            Some(id) => {
                self.insts[id as usize] = Some(inst);
                id
            }
            None => {
                self.insts.push(Some(inst));
                (self.insts.len() - 1) as InstanceId
            }
        };
        if self.inst(id).steps == 0 || active.is_empty() {
            // nothing to send (one GPU): done at once
            self.inst_mut(id).remaining = 0;
            self.finished.push(id);
            return id;
        }
        for &p in &active {
            for lane in 0..lanes {
                self.begin(id, p, lane);
            }
            for lane in 0..lanes {
                self.advance(id, p, lane);
            }
        }
        id
    }

    /// When the next flow finishes or message is delivered
    /// (`SimTime::MAX` when nothing is in flight, or when what is in
    /// flight would end beyond the representable range: see
    /// [`Network::busy`]).
    pub fn next_time(&mut self) -> SimTime {
        let tq = self.deliveries.peek_time().unwrap_or(SimTime::MAX);
        tq.min(self.net.next_finish())
    }

    /// Collectives started and not yet taken (running, or finished and
    /// waiting for [`Network::take`]).
    pub fn in_flight(&self) -> usize {
        self.insts.len() - self.free_insts.len()
    }

    /// Whether anything is in flight.
    pub fn busy(&self) -> bool {
        self.net.active() > 0 || !self.deliveries.is_empty()
    }

    /// Processes everything that happens at [`Network::next_time`]: flows
    /// whose last byte leaves then are handed to their receivers a path
    /// latency later; messages delivered then move their participants
    /// on. Returns false, doing nothing, when nothing is in flight (or
    /// only what ends beyond the representable range).
    pub fn step(&mut self) -> bool {
        let tq = self.deliveries.peek_time().unwrap_or(SimTime::MAX);
        let tn = self.net.next_finish();
        if tq == SimTime::MAX && tn == SimTime::MAX {
            return false;
        }
        if tn <= tq {
            self.clock = tn;
            self.done_tags.clear();
            self.net.finish_until(tn, &mut self.done_tags);
            // the last byte has left: delivered a path latency later; a
            // streaming sender moves on now
            for i in 0..self.done_tags.len() {
                let t = self.done_tags[i] as u32;
                let x = self.xfers[t as usize];
                self.deliveries
                    .push(tn + SimTime::from_secs(x.path.latency), t);
                if x.streamed {
                    let inst = self.inst_mut(x.inst);
                    let at = inst.at(x.src, x.lane);
                    inst.parts[at].outstanding -= 1;
                    self.advance(x.inst, x.src, x.lane);
                }
            }
        } else {
            self.clock = tq;
            while self.deliveries.peek_time() == Some(tq) {
                let (_, x) = self.deliveries.pop().expect("peeked");
                self.complete(x);
            }
        }
        true
    }

    /// The collectives that finished since the last call, in the order
    /// they finished, appended to `out` and forgotten by the network.
    pub fn take(&mut self, out: &mut Vec<(InstanceId, Finished)>) {
        for i in 0..self.finished.len() {
            let id = self.finished[i];
            let inst = self.insts[id as usize].take().expect("a live instance");
            self.free_insts.push(id);
            out.push((id, self.unfold(inst)));
        }
        self.finished.clear();
    }

    /// Events processed: message deliveries plus max-min recomputations.
    pub fn events(&self) -> u64 {
        self.deliveries.events_processed() + self.net.recomputations()
    }

    /// Bytes each directed link carried so far, all collectives together
    /// (every node's filled in under symmetry).
    pub fn link_bytes(&self) -> Vec<f64> {
        if !self.fold {
            return self.link_bytes.clone();
        }
        // node k's links carried what node 0's did
        (0..self.link_bytes.len() as u32)
            .map(|l| self.link_bytes[self.topo.link_in_node0(l) as usize])
            .collect()
    }

    fn unfold(&self, mut inst: Instance) -> Finished {
        let mut messages = inst.messages;
        if self.fold {
            // every node did what node 0 did
            for p in 0..inst.prog.participants() {
                let rep = inst.prog.representative(p) as usize;
                inst.sent[p as usize] = inst.sent[rep];
                inst.received[p as usize] = inst.received[rep];
            }
            messages *= self.topo.spec().nodes as u64;
        }
        Finished {
            start: inst.start,
            end: inst.end,
            sent: inst.sent,
            received: inst.received,
            messages,
        }
    }

    fn inst(&self, id: InstanceId) -> &Instance {
        self.insts[id as usize].as_ref().expect("a live instance")
    }

    fn inst_mut(&mut self, id: InstanceId) -> &mut Instance {
        self.insts[id as usize].as_mut().expect("a live instance")
    }

    /// Starts lane `lane` of participant `p` on its current step (if any
    /// steps remain and the lane runs in this phase).
    fn begin(&mut self, id: InstanceId, p: Participant, lane: u32) {
        let inst = self.insts[id as usize].as_mut().expect("a live instance");
        let at = inst.at(p, lane);
        let step = inst.parts[at].step;
        if step >= inst.steps {
            return;
        }
        inst.parts[at].begun = true;
        self.out.clear();
        inst.prog.lane_sends(p, lane, step, &mut self.out);
        let streamed = inst.prog.streams(step);
        let dst_lane = inst.prog.dst_lane(p, lane, step);
        inst.parts[at].outstanding = self.out.len() as u32;
        for i in 0..self.out.len() {
            let send = self.out[i];
            let (dst, bytes) = (send.to, send.bytes);
            let mut path = inst.prog.path(&self.topo, p, &send);
            let dst = if self.fold {
                path.map_links(|l| self.topo.link_in_node0(l));
                inst.prog.representative(dst)
            } else {
                dst
            };
            let x = Xfer {
                inst: id,
                src: p,
                dst,
                lane,
                dst_lane: send.lane.unwrap_or(dst_lane),
                step,
                bytes,
                path,
                streamed,
            };
            let xid = match self.free.pop() {
                Some(xid) => {
                    self.xfers[xid as usize] = x;
                    xid
                }
                None => {
                    self.xfers.push(x);
                    (self.xfers.len() - 1) as u32
                }
            };
            if !inst.prog.is_switch(p) {
                inst.sent[p as usize] += bytes;
            }
            inst.messages += 1;
            if bytes <= 0.0 || path.links().is_empty() {
                // nothing to transmit: delivered after the latency
                self.deliveries
                    .push(self.clock + SimTime::from_secs(path.latency), xid);
                if streamed {
                    inst.parts[at].outstanding -= 1;
                }
            } else {
                self.net.start(self.clock, path, bytes, xid as u64);
            }
        }
    }

    /// Moves lane `lane` of `p` through every step it can complete now. A
    /// lane that finishes a phase waits for the participant's other lanes;
    /// the last to arrive starts them all on the next phase. A lane the
    /// phase does not use passes over it at once.
    fn advance(&mut self, id: InstanceId, p: Participant, lane: u32) {
        loop {
            let clock = self.clock;
            let inst = self.insts[id as usize].as_mut().expect("a live instance");
            let total = inst.steps;
            let lanes = inst.lanes;
            let at = inst.at(p, lane);
            let step = inst.parts[at].step;
            if step >= total {
                return;
            }
            let (phase, end) = inst.prog.phase_end(step);
            let st = &mut inst.parts[at];
            if !st.begun {
                return;
            }
            st.begun = false;
            if lane >= inst.prog.lanes(phase) {
                // not this lane's phase: nothing was sent to it there
                let skip = (end - step) as usize;
                debug_assert!(st.window.iter().take(skip).all(|&n| n == 0));
                st.window.drain(..skip.min(st.window.len()));
                st.step = end;
            } else {
                let got = st.window.front().copied().unwrap_or(0);
                if st.outstanding > 0 || got < inst.prog.lane_recvs(p, lane, step) {
                    st.begun = true;
                    return;
                }
                st.window.pop_front();
                st.step += 1;
            }
            if st.step < end {
                self.begin(id, p, lane);
                continue;
            }
            // a phase boundary: go on when every lane of p is here
            let base = inst.at(p, 0);
            if inst.parts[base..base + lanes as usize]
                .iter()
                .any(|s| s.step < end)
            {
                return;
            }
            if end == total {
                inst.remaining -= 1;
                inst.end = inst.end.max(clock);
                if inst.remaining == 0 {
                    self.finished.push(id);
                }
                return;
            }
            for other in 0..lanes {
                self.begin(id, p, other);
            }
            for other in (0..lanes).filter(|&o| o != lane) {
                self.advance(id, p, other);
            }
        }
    }

    fn complete(&mut self, x: u32) {
        let xf = self.xfers[x as usize];
        self.free.push(x);
        for &l in xf.path.links() {
            self.link_bytes[l as usize] += xf.bytes;
        }
        let inst = self.inst_mut(xf.inst);
        inst.received[xf.dst as usize] += xf.bytes;
        if !xf.streamed {
            let at = inst.at(xf.src, xf.lane);
            inst.parts[at].outstanding -= 1;
        }
        let at = inst.at(xf.dst, xf.dst_lane);
        let d = &mut inst.parts[at];
        assert!(xf.step >= d.step, "message for a step already left");
        let idx = (xf.step - d.step) as usize;
        if d.window.len() <= idx {
            d.window.resize(idx + 1, 0);
        }
        d.window[idx] += 1;
        // a streaming sender moved on when the last byte left
        if !xf.streamed {
            self.advance(xf.inst, xf.src, xf.lane);
        }
        self.advance(xf.inst, xf.dst, xf.dst_lane);
    }
}

/// Simulates `coll` for a buffer of `bytes` on `cluster`'s flow network.
pub fn run_flow(
    coll: &Collective,
    cluster: &ClusterSpec,
    bytes: f64,
) -> Result<FlowOutcome, SimError> {
    let prog = coll.program(cluster, bytes);
    run_program(&prog, cluster)
        .map_err(|_| SimError::TimeOverflow(format!("a {} of {bytes} bytes", coll.op.name())))
}

/// Simulates a program, using node symmetry where the program has it.
pub fn run_program(prog: &Program, cluster: &ClusterSpec) -> Result<FlowOutcome, SimError> {
    run(prog, cluster, prog.node_symmetric())
}

/// Simulates a program participant by participant, never using symmetry.
pub fn run_program_full(prog: &Program, cluster: &ClusterSpec) -> Result<FlowOutcome, SimError> {
    run(prog, cluster, false)
}

fn run(prog: &Program, cluster: &ClusterSpec, symmetric: bool) -> Result<FlowOutcome, SimError> {
    let mut net = Network::new(cluster, symmetric);
    let symmetric = net.folded() && prog.steps() > 0;
    net.start(SimTime::ZERO, prog.clone());
    while net.step() {}
    if net.busy() {
        // a saturated time stands for "beyond the representable range"
        return Err(SimError::TimeOverflow("a collective".into()));
    }
    let mut done = Vec::with_capacity(1);
    net.take(&mut done);
    let (_, f) = done
        .pop()
        .expect("collective deadlocked: a participant never finished");
    Ok(FlowOutcome {
        time: f.end,
        link_bytes: net.link_bytes(),
        events: net.events(),
        sent: f.sent,
        received: f.received,
        messages: f.messages,
        symmetric,
    })
}
