//! Runs a collective's program on the flow network model.
//!
//! Each participant walks through the program's steps; in a step it starts
//! its sends (each a flow on its path's links at once, delivered its path
//! latency after its last byte left: α + m/B alone on a link, the α-β
//! cost) and waits for the sends of its step to be delivered and for the
//! messages addressed to it in that step to arrive. Messages that arrive early, for a later step, are
//! counted in a small per-participant window. Memory is O(participants +
//! messages in flight); nothing is stored per step.
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
        self.sent.iter().sum::<f64>() / gpus as f64
    }
}

#[derive(Debug, Clone, Copy)]
struct Xfer {
    src: Participant,
    /// The participant that receives (node 0's counterpart under symmetry).
    dst: Participant,
    step: u32,
    bytes: f64,
    path: Path,
}

struct State {
    step: u32,
    outstanding: u32,
    window: VecDeque<u32>,
}

struct Runner<'a> {
    prog: &'a Program,
    topo: Topology,
    symmetric: bool,
    net: FlowNet,
    queue: EventQueue<u32>,
    xfers: Vec<Xfer>,
    free: Vec<u32>,
    parts: Vec<State>,
    out: Vec<(Participant, f64)>,
    done_tags: Vec<u64>,
    finished: u32,
    clock: SimTime,
    end: SimTime,
    sent: Vec<f64>,
    received: Vec<f64>,
    link_bytes: Vec<f64>,
    messages: u64,
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
    let topo = Topology::new(cluster);
    let n = prog.participants() as usize;
    let links = topo.capacities().len();
    if prog.steps() == 0 {
        // nothing to send (one GPU): done at once
        return Ok(FlowOutcome {
            time: SimTime::ZERO,
            sent: vec![0.0; n],
            received: vec![0.0; n],
            link_bytes: vec![0.0; links],
            messages: 0,
            events: 0,
            symmetric: false,
        });
    }
    let mut r = Runner {
        prog,
        net: FlowNet::new(topo.capacities()),
        topo,
        symmetric,
        queue: EventQueue::new(),
        xfers: Vec::new(),
        free: Vec::new(),
        parts: (0..n)
            .map(|_| State {
                step: 0,
                outstanding: 0,
                window: VecDeque::new(),
            })
            .collect(),
        out: Vec::new(),
        done_tags: Vec::new(),
        finished: 0,
        clock: SimTime::ZERO,
        end: SimTime::ZERO,
        sent: vec![0.0; n],
        received: vec![0.0; n],
        link_bytes: vec![0.0; links],
        messages: 0,
    };
    let active: Vec<Participant> = (0..n as u32)
        .filter(|&p| !symmetric || prog.node_of(p) == 0)
        .collect();
    for &p in &active {
        r.begin(p);
        r.advance(p);
    }
    loop {
        let tq = r.queue.peek_time().unwrap_or(SimTime::MAX);
        let tn = r.net.next_finish();
        if tq == SimTime::MAX && tn == SimTime::MAX {
            // a saturated time stands for "beyond the representable range"
            if r.net.active() > 0 || !r.queue.is_empty() {
                return Err(SimError::TimeOverflow("a collective".into()));
            }
            break;
        }
        if tn <= tq {
            r.clock = tn;
            r.done_tags.clear();
            r.net.finish_until(tn, &mut r.done_tags);
            // the last byte has left: delivered a path latency later
            for &t in &r.done_tags {
                let latency = r.xfers[t as usize].path.latency;
                r.queue.push(tn + SimTime::from_secs(latency), t as u32);
            }
        } else {
            r.clock = tq;
            while r.queue.peek_time() == Some(tq) {
                let (_, x) = r.queue.pop().expect("peeked");
                r.complete(x);
            }
        }
    }
    assert_eq!(
        r.finished as usize,
        active.len(),
        "collective deadlocked: a participant never finished"
    );
    let events = r.queue.events_processed() + r.net.recomputations();
    let mut messages = r.messages;
    if symmetric {
        // every node did what node 0 did
        let nodes = cluster.nodes as usize;
        for p in 0..n as u32 {
            let rep = prog.representative(p) as usize;
            r.sent[p as usize] = r.sent[rep];
            r.received[p as usize] = r.received[rep];
        }
        let node0: Vec<(usize, f64)> = r
            .link_bytes
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, b)| b > 0.0)
            .collect();
        for l in 0..links {
            let rep = r.topo.link_in_node0(l as u32) as usize;
            if let Some(&(_, b)) = node0.iter().find(|&&(i, _)| i == rep) {
                r.link_bytes[l] = b;
            }
        }
        messages *= nodes as u64;
    }
    Ok(FlowOutcome {
        time: r.end,
        sent: r.sent,
        received: r.received,
        link_bytes: r.link_bytes,
        messages,
        events,
        symmetric,
    })
}

impl Runner<'_> {
    /// Starts participant `p`'s current step (if any steps remain).
    fn begin(&mut self, p: Participant) {
        let step = self.parts[p as usize].step;
        if step >= self.prog.steps() {
            return;
        }
        self.out.clear();
        self.prog.sends(p, step, &mut self.out);
        self.parts[p as usize].outstanding = self.out.len() as u32;
        for i in 0..self.out.len() {
            let (dst, bytes) = self.out[i];
            let mut path = self
                .topo
                .path(self.prog.endpoint(p), self.prog.endpoint(dst));
            let dst = if self.symmetric {
                path.map_links(|l| self.topo.link_in_node0(l));
                self.prog.representative(dst)
            } else {
                dst
            };
            let x = Xfer {
                src: p,
                dst,
                step,
                bytes,
                path,
            };
            let id = match self.free.pop() {
                Some(id) => {
                    self.xfers[id as usize] = x;
                    id
                }
                None => {
                    self.xfers.push(x);
                    (self.xfers.len() - 1) as u32
                }
            };
            self.sent[p as usize] += bytes;
            self.messages += 1;
            if bytes <= 0.0 || path.links().is_empty() {
                // nothing to transmit: delivered after the latency
                self.queue
                    .push(self.clock + SimTime::from_secs(path.latency), id);
            } else {
                self.net.start(self.clock, path, bytes, id as u64);
            }
        }
    }

    /// Moves `p` through every step it can complete now.
    fn advance(&mut self, p: Participant) {
        let total = self.prog.steps();
        loop {
            let st = &mut self.parts[p as usize];
            if st.step >= total {
                return;
            }
            let got = st.window.front().copied().unwrap_or(0);
            if st.outstanding > 0 || got < self.prog.expected_recvs(p, st.step) {
                return;
            }
            st.window.pop_front();
            st.step += 1;
            if st.step == total {
                self.finished += 1;
                self.end = self.end.max(self.clock);
                return;
            }
            self.begin(p);
        }
    }

    fn complete(&mut self, x: u32) {
        let xf = self.xfers[x as usize];
        self.free.push(x);
        self.received[xf.dst as usize] += xf.bytes;
        for &l in xf.path.links() {
            self.link_bytes[l as usize] += xf.bytes;
        }
        self.parts[xf.src as usize].outstanding -= 1;
        let d = &mut self.parts[xf.dst as usize];
        assert!(xf.step >= d.step, "message for a step already left");
        let idx = (xf.step - d.step) as usize;
        if d.window.len() <= idx {
            d.window.resize(idx + 1, 0);
        }
        d.window[idx] += 1;
        self.advance(xf.src);
        self.advance(xf.dst);
    }
}
