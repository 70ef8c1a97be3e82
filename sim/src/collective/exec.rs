//! Runs a collective's program on the flow network model.
//!
//! Each participant walks through the program's steps; in a step it starts
//! its sends (each becomes a flow after its path latency) and waits for the
//! sends of its step to finish and for the messages addressed to it in that
//! step to arrive. Messages that arrive early, for a later step, are
//! counted in a small per-participant window. Memory is O(participants +
//! messages in flight); nothing is stored per step.

use super::Collective;
use super::program::{Participant, Program};
use crate::cluster::{ClusterSpec, Topology};
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
    /// Messages (point-to-point transfers) carried.
    pub messages: u64,
    /// Events processed (transfer entries plus flow completions).
    pub events: u64,
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
    dst: Participant,
    step: u32,
    bytes: f64,
}

struct State {
    step: u32,
    outstanding: u32,
    window: VecDeque<u32>,
}

struct Runner<'a> {
    prog: &'a Program,
    topo: Topology,
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
pub fn run_flow(coll: &Collective, cluster: &ClusterSpec, bytes: f64) -> FlowOutcome {
    let prog = coll.program(cluster, bytes);
    run_program(&prog, cluster)
}

/// Simulates a program on `cluster`'s flow network.
pub fn run_program(prog: &Program, cluster: &ClusterSpec) -> FlowOutcome {
    let topo = Topology::new(cluster);
    let n = prog.participants() as usize;
    let mut r = Runner {
        prog,
        net: FlowNet::new(topo.capacities()),
        topo,
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
        link_bytes: Vec::new(),
        messages: 0,
    };
    r.link_bytes = vec![0.0; r.topo.capacities().len()];
    for p in 0..n as u32 {
        r.begin(p);
        r.advance(p);
    }
    loop {
        let tq = r.queue.peek_time().unwrap_or(SimTime::MAX);
        let tn = r.net.next_finish();
        if tq == SimTime::MAX && tn == SimTime::MAX {
            break;
        }
        if tn <= tq {
            r.clock = tn;
            r.done_tags.clear();
            r.net.finish_until(tn, &mut r.done_tags);
            let tags = std::mem::take(&mut r.done_tags);
            for &t in &tags {
                r.complete(tn, t as u32);
            }
            r.done_tags = tags;
        } else {
            r.clock = tq;
            while r.queue.peek_time() == Some(tq) {
                let (_, x) = r.queue.pop().expect("peeked");
                let xf = r.xfers[x as usize];
                let path = r.topo.path(prog.endpoint(xf.src), prog.endpoint(xf.dst));
                if xf.bytes <= 0.0 || path.links().is_empty() {
                    r.complete(tq, x);
                } else {
                    r.net.start(tq, path, xf.bytes, x as u64);
                }
            }
        }
    }
    assert_eq!(
        r.finished as usize, n,
        "collective deadlocked: a participant never finished"
    );
    FlowOutcome {
        time: r.end,
        events: r.queue.events_processed() + r.messages,
        sent: r.sent,
        received: r.received,
        link_bytes: r.link_bytes,
        messages: r.messages,
    }
}

impl Runner<'_> {
    fn now(&self) -> SimTime {
        self.clock
    }

    /// Starts participant `p`'s current step (if any steps remain).
    fn begin(&mut self, p: Participant) {
        let step = self.parts[p as usize].step;
        if step >= self.prog.steps() {
            return;
        }
        self.out.clear();
        self.prog.sends(p, step, &mut self.out);
        self.parts[p as usize].outstanding = self.out.len() as u32;
        let now = self.now();
        for i in 0..self.out.len() {
            let (dst, bytes) = self.out[i];
            let x = Xfer {
                src: p,
                dst,
                step,
                bytes,
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
            let lat = self
                .topo
                .path(self.prog.endpoint(p), self.prog.endpoint(dst))
                .latency;
            self.queue.push(now + SimTime::from_secs(lat), id);
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
                self.end = self.end.max(self.now());
                return;
            }
            self.begin(p);
        }
    }

    fn complete(&mut self, now: SimTime, x: u32) {
        debug_assert_eq!(now, self.clock);
        let xf = self.xfers[x as usize];
        self.free.push(x);
        self.received[xf.dst as usize] += xf.bytes;
        let path = self
            .topo
            .path(self.prog.endpoint(xf.src), self.prog.endpoint(xf.dst));
        for &l in path.links() {
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
