//! Collectives as per-participant step programs of point-to-point sends.
//!
//! A collective is a sequence of *phases* (a ring pass, a binomial reduce,
//! a pairwise exchange, a parameter-server exchange). Phases are cut into
//! global steps that every participant walks through in order. In step `k`
//! a participant sends its messages and waits for the messages addressed to
//! it in step `k`; only then does it enter step `k + 1`. A participant with
//! nothing to do in a step passes through it at once. There is no global
//! barrier: neighbours synchronise only through their messages, as NCCL and
//! MPI implementations do.
//!
//! Participants `0..gpus` are GPUs (by global index); participants
//! `gpus..gpus + servers` are parameter-server processes on node hosts.
//!
//! A program stores only its shape, never a list of transfers, so a ring
//! over 4096 GPUs costs a few words of memory.

use crate::cluster::{ClusterSpec, Endpoint};
use std::sync::Arc;

/// Participant index: GPUs first, then PS servers.
pub type Participant = u32;

/// Which participants form the groups a phase runs in (every group runs
/// the phase at once, on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grouping {
    /// One group of all GPUs, in the cluster's rank placement order.
    All,
    /// One group per node, of that node's GPUs.
    IntraNode,
    /// One group per local GPU index ("rail"): GPU i of every node.
    Rail,
    /// Groups of k consecutive ranks (placement order): ranks 0..k, k..2k,
    /// … (model-parallel trainers, pipeline neighbours). k divides the
    /// GPU count.
    Block(u32),
}

/// One phase of a collective.
///
/// The uniform phases carry one size for every send of a kind; the `…V`
/// phases (and [`Shards::PerServer`]) carry a size per rank or per pair,
/// for payloads that differ between ranks (AllGatherv, AlltoAllv, pushes
/// to unequal PS shards). They run in the group of all GPUs, indexed by
/// rank (the cluster's placement order).
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// `steps` steps in which every member sends `chunk` bytes to the next
    /// member of its group (ring reduce-scatter, all-gather, all-reduce).
    Ring {
        /// Groups the rings run in.
        group: Grouping,
        /// Number of steps.
        steps: u32,
        /// Bytes per send.
        chunk: f64,
    },
    /// Binomial-tree reduction to member 0: ⌈log2 s⌉ steps of `bytes`.
    BinomialReduce {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        bytes: f64,
    },
    /// Binomial-tree broadcast from member 0: ⌈log2 s⌉ steps of `bytes`.
    BinomialBcast {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        bytes: f64,
    },
    /// Pairwise exchange: s−1 steps; in step j member i sends `chunk` to
    /// member (i + j) mod s.
    Pairwise {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        chunk: f64,
    },
    /// AllGather by recursive doubling (Thakur et al. 2005; the gTop-k
    /// paper's TopKAllReduce): every member contributes `bytes`, and in
    /// round j member i exchanges everything it has gathered so far with
    /// member i XOR 2^j, so log2 s rounds of `bytes`·2^j each. A group
    /// whose size s is not a power of two folds its r = s − 2^⌊log2 s⌋
    /// extra members in first (member 2^⌊log2 s⌋ + i sends its part to
    /// member i) and out last (member i sends the s − 1 parts the extra
    /// lacks back): two more steps.
    RecursiveDoubling {
        /// Groups.
        group: Grouping,
        /// Bytes contributed by each member.
        bytes: f64,
    },
    /// Parameter-server push and pull of a variable sharded evenly over the
    /// servers: each worker sends `shard` bytes to every server and each
    /// server sends `shard` bytes to every worker. With `overlap` the push
    /// and pull stream concurrently (a server that returns each aggregated
    /// piece while the next arrives, the full-duplex accounting of Parallax
    /// Table 3): a first step in which every worker tells every server it
    /// is ready (a zero-byte message, so servers never pull before the
    /// workers have their gradients), then one step of pushes and pulls.
    /// Without `overlap`, the pull follows the push (two steps).
    Ps {
        /// Whether only GPU 0 of each node is a worker (local aggregation).
        leaders_only: bool,
        /// Bytes per worker-server pair in each direction.
        shard: Shards,
        /// Push and pull concurrently.
        overlap: bool,
    },
    /// Ring AllGatherv over all GPUs: s − 1 steps; in step k rank i
    /// forwards to rank i + 1 the block of rank (i − k) mod s, whose size
    /// is `blocks[(i − k) mod s]`. With equal blocks this is
    /// [`Phase::Ring`]'s AllGather.
    RingV {
        /// Bytes each rank contributes, by rank.
        blocks: Arc<[f64]>,
    },
    /// Pairwise AlltoAllv over all GPUs: s − 1 steps; in step k rank i
    /// sends `matrix[i·s + j]` bytes to rank j = (i + k + 1) mod s. With
    /// equal entries this is [`Phase::Pairwise`].
    PairwiseV {
        /// Bytes from rank i to rank j at `i·s + j` (row-major s × s; the
        /// diagonal stays on its GPU and is never sent).
        matrix: Arc<[f64]>,
    },
}

/// How a parameter-server variable is split over the servers.
#[derive(Debug, Clone, PartialEq)]
pub enum Shards {
    /// Every server holds the same number of bytes.
    Even(f64),
    /// Server j holds `bytes[j]` (partitions that do not divide evenly,
    /// sparse rows hashed unevenly).
    PerServer(Arc<[f64]>),
}

impl Shards {
    /// Bytes of server `j`'s shard.
    pub fn of(&self, j: u32) -> f64 {
        match self {
            Shards::Even(b) => *b,
            Shards::PerServer(v) => v[j as usize],
        }
    }
}

/// A collective's program over a cluster.
#[derive(Debug, Clone)]
pub struct Program {
    phases: Vec<Phase>,
    /// First global step of each phase, plus the total at the end.
    phase_start: Vec<u32>,
    gpus: u32,
    nodes: u32,
    gpus_per_node: u32,
    nics_per_node: u32,
    servers: u32,
    scattered: bool,
}

fn ceil_log2(s: u32) -> u32 {
    if s <= 1 {
        0
    } else {
        32 - (s - 1).leading_zeros()
    }
}

/// Shape of a recursive-doubling AllGather over `s` members: the largest
/// power of two p2 ≤ s, its exponent, and whether extras fold in and out.
fn doubling(s: u32) -> (u32, u32, bool) {
    if s <= 1 {
        return (s, 0, false);
    }
    let log = 31 - s.leading_zeros();
    let p2 = 1u32 << log;
    (p2, log, p2 != s)
}

/// Where member `idx` of a recursive-doubling group of `s` sends in local
/// step `k`, and how many members' parts it sends (see
/// [`Phase::RecursiveDoubling`]).
fn doubling_send(s: u32, idx: u32, k: u32) -> Option<(u32, u32)> {
    let (p2, log, fold) = doubling(s);
    let extras = s - p2;
    let round = if fold { k.checked_sub(1) } else { Some(k) };
    match round {
        // fold in: an extra member hands its part to its partner
        None => (idx >= p2).then(|| (idx - p2, 1)),
        Some(j) if j < log => {
            if idx >= p2 {
                return None;
            }
            // the parts gathered so far: member idx's block of 2^j
            // members, plus the extras folded into that block
            let d = 1u32 << j;
            let block = idx & !(d - 1);
            let folded = extras.min(block + d).saturating_sub(block);
            Some((idx ^ d, d + folded))
        }
        // fold out: the s − 1 parts the extra member lacks
        Some(_) => (idx < extras).then(|| (idx + p2, s - 1)),
    }
}

impl Program {
    /// Builds a program from phases; `servers` PS processes are placed one
    /// per node in turn (server j on node j mod nodes).
    pub fn new(spec: &ClusterSpec, phases: Vec<Phase>, servers: u32) -> Program {
        let mut p = Program {
            phases: Vec::new(),
            phase_start: vec![0],
            gpus: spec.gpus(),
            nodes: spec.nodes,
            gpus_per_node: spec.gpus_per_node,
            nics_per_node: spec.nics_per_node,
            servers,
            scattered: spec.placement == crate::cluster::Placement::Scattered,
        };
        for ph in phases {
            let steps = p.phase_steps(&ph);
            let last = *p.phase_start.last().unwrap();
            p.phase_start.push(last + steps);
            p.phases.push(ph);
        }
        p
    }

    /// The phases.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// The phases, to change their sizes (not their step counts).
    pub(crate) fn phases_mut(&mut self) -> &mut [Phase] {
        &mut self.phases
    }

    /// Number of participants (GPUs plus servers).
    pub fn participants(&self) -> u32 {
        self.gpus + self.servers
    }

    /// Number of global steps.
    pub fn steps(&self) -> u32 {
        *self.phase_start.last().unwrap()
    }

    /// Global step range of phase `i`.
    pub fn phase_range(&self, i: usize) -> std::ops::Range<u32> {
        self.phase_start[i]..self.phase_start[i + 1]
    }

    fn group_size(&self, g: Grouping) -> u32 {
        match g {
            Grouping::All => self.gpus,
            Grouping::IntraNode => self.gpus_per_node,
            Grouping::Rail => self.nodes,
            Grouping::Block(k) => k,
        }
    }

    fn phase_steps(&self, ph: &Phase) -> u32 {
        match *ph {
            Phase::RingV { .. } | Phase::PairwiseV { .. } => self.gpus - 1,
            Phase::Ring { group, steps, .. } => {
                if self.group_size(group) > 1 {
                    steps
                } else {
                    0
                }
            }
            Phase::BinomialReduce { group, .. } | Phase::BinomialBcast { group, .. } => {
                ceil_log2(self.group_size(group))
            }
            Phase::Pairwise { group, .. } => self.group_size(group).saturating_sub(1),
            Phase::RecursiveDoubling { group, .. } => {
                let (_, log, fold) = doubling(self.group_size(group));
                log + 2 * fold as u32
            }
            Phase::Ps { .. } => 2,
        }
    }

    /// Rank (placement order) of a GPU.
    fn rank(&self, gpu: u32) -> u32 {
        let gp = self.gpus_per_node;
        if self.scattered {
            (gpu % gp) * self.nodes + gpu / gp
        } else {
            gpu
        }
    }

    /// GPU of a rank (placement order).
    fn gpu(&self, rank: u32) -> u32 {
        if self.scattered {
            (rank % self.nodes) * self.gpus_per_node + rank / self.nodes
        } else {
            rank
        }
    }

    /// (group id, index in group) of a GPU.
    fn locate(&self, gpu: u32, g: Grouping) -> (u32, u32) {
        let gp = self.gpus_per_node;
        match g {
            Grouping::All => (0, self.rank(gpu)),
            Grouping::IntraNode => (gpu / gp, gpu % gp),
            Grouping::Rail => (gpu % gp, gpu / gp),
            Grouping::Block(k) => {
                let r = self.rank(gpu);
                (r / k, r % k)
            }
        }
    }

    /// The GPU at `index` of group `id`.
    fn member(&self, id: u32, index: u32, g: Grouping) -> u32 {
        let gp = self.gpus_per_node;
        match g {
            Grouping::All => self.gpu(index),
            Grouping::IntraNode => id * gp + index,
            Grouping::Rail => index * gp + id,
            Grouping::Block(k) => self.gpu(id * k + index),
        }
    }

    /// The endpoint a participant runs on.
    pub fn endpoint(&self, p: Participant) -> Endpoint {
        if p < self.gpus {
            Endpoint::Gpu(p)
        } else {
            let j = p - self.gpus;
            Endpoint::Host {
                node: j % self.nodes,
                nic: (j / self.nodes) % self.nics_per_node,
            }
        }
    }

    /// Whether the program is invariant under shifting every participant by
    /// one node (GPU g → g + gpus_per_node, a server to the same server slot
    /// of the next node). Then all nodes behave identically and a
    /// simulation of node 0's participants, with node k's links mapped onto
    /// node 0's, is exact. True for rings and pairwise exchanges in
    /// contiguous placement, per-node and per-rail rings, rings over blocks
    /// of ranks inside a node, and PS with a
    /// whole number of servers per node and even shards; false for
    /// binomial trees (rooted), scattered placement, and payloads that
    /// differ per rank (which a node shift does not preserve in general).
    pub fn node_symmetric(&self) -> bool {
        if self.nodes <= 1 {
            return false;
        }
        self.phases.iter().all(|ph| match ph {
            // per-node and per-rail groups, and blocks inside a node, map
            // onto groups of the same role under the shift
            Phase::Ring { group, .. } | Phase::Pairwise { group, .. } => match *group {
                Grouping::All => !self.scattered,
                Grouping::IntraNode | Grouping::Rail => true,
                Grouping::Block(k) => !self.scattered && self.gpus_per_node.is_multiple_of(k),
            },
            Phase::BinomialReduce { .. }
            | Phase::BinomialBcast { .. }
            | Phase::RecursiveDoubling { .. }
            | Phase::RingV { .. }
            | Phase::PairwiseV { .. } => false,
            Phase::Ps { shard, .. } => {
                matches!(shard, Shards::Even(_)) && self.servers.is_multiple_of(self.nodes)
            }
        })
    }

    /// Node 0's participant that plays `p`'s role (see
    /// [`Program::node_symmetric`]).
    pub fn representative(&self, p: Participant) -> Participant {
        if p < self.gpus {
            p % self.gpus_per_node
        } else {
            let j = p - self.gpus;
            self.gpus + j - j % self.nodes
        }
    }

    /// Node of a participant.
    pub fn node_of(&self, p: Participant) -> u32 {
        if p < self.gpus {
            p / self.gpus_per_node
        } else {
            (p - self.gpus) % self.nodes
        }
    }

    fn phase_of(&self, step: u32) -> (usize, u32) {
        // phases are few; a linear scan beats a binary search here
        let i = self
            .phase_start
            .windows(2)
            .position(|w| step < w[1])
            .expect("step past the end of the program");
        (i, step - self.phase_start[i])
    }

    fn is_worker(&self, p: Participant, leaders_only: bool) -> bool {
        p < self.gpus && (!leaders_only || p.is_multiple_of(self.gpus_per_node))
    }

    fn workers(&self, leaders_only: bool) -> u32 {
        if leaders_only { self.nodes } else { self.gpus }
    }

    /// Appends participant `p`'s sends in global step `step` to `out` as
    /// (destination, bytes).
    pub fn sends(&self, p: Participant, step: u32, out: &mut Vec<(Participant, f64)>) {
        let (i, k) = self.phase_of(step);
        match &self.phases[i] {
            Phase::Ps {
                leaders_only,
                shard,
                overlap,
            } => {
                // overlap: step 0 "ready" signals, step 1 push and pull;
                // otherwise step 0 push, step 1 pull
                let (leaders_only, overlap) = (*leaders_only, *overlap);
                let push = if overlap { k == 1 } else { k == 0 };
                let pull = k == 1;
                if self.is_worker(p, leaders_only) && overlap && k == 0 {
                    out.extend((0..self.servers).map(|j| (self.gpus + j, 0.0)));
                } else if self.is_worker(p, leaders_only) && push {
                    out.extend((0..self.servers).map(|j| (self.gpus + j, shard.of(j))));
                } else if p >= self.gpus && pull {
                    let bytes = shard.of(p - self.gpus);
                    out.extend(
                        (0..self.gpus)
                            .filter(|&w| self.is_worker(w, leaders_only))
                            .map(|w| (w, bytes)),
                    );
                }
            }
            Phase::RingV { blocks } => {
                if p >= self.gpus {
                    return;
                }
                let s = self.gpus;
                let (_, idx) = self.locate(p, Grouping::All);
                let block = (idx + s - k % s) % s;
                let to = self.member(0, (idx + 1) % s, Grouping::All);
                out.push((to, blocks[block as usize]));
            }
            Phase::PairwiseV { matrix } => {
                if p >= self.gpus {
                    return;
                }
                let s = self.gpus;
                let (_, idx) = self.locate(p, Grouping::All);
                let j = (idx + k + 1) % s;
                let to = self.member(0, j, Grouping::All);
                out.push((to, matrix[(idx * s + j) as usize]));
            }
            ph => {
                if p >= self.gpus {
                    return;
                }
                let (group, bytes) = match *ph {
                    Phase::Ring { group, chunk, .. } => (group, chunk),
                    Phase::BinomialReduce { group, bytes } => (group, bytes),
                    Phase::BinomialBcast { group, bytes } => (group, bytes),
                    Phase::Pairwise { group, chunk } => (group, chunk),
                    Phase::RecursiveDoubling { group, bytes } => (group, bytes),
                    Phase::Ps { .. } | Phase::RingV { .. } | Phase::PairwiseV { .. } => {
                        unreachable!()
                    }
                };
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                // (destination index, multiple of `bytes`)
                let to = match ph {
                    Phase::Ring { .. } => Some(((idx + 1) % s, 1)),
                    Phase::Pairwise { .. } => Some(((idx + k + 1) % s, 1)),
                    Phase::BinomialReduce { .. } => {
                        let d = 1u32 << k;
                        (idx % (2 * d) == d).then(|| (idx - d, 1))
                    }
                    Phase::BinomialBcast { .. } => {
                        let d = 1u32 << k;
                        (idx < d && idx + d < s).then(|| (idx + d, 1))
                    }
                    Phase::RecursiveDoubling { .. } => doubling_send(s, idx, k),
                    _ => unreachable!(),
                };
                if let Some((to, parts)) = to {
                    out.push((self.member(id, to, group), bytes * parts as f64));
                }
            }
        }
    }

    /// How many messages participant `p` receives in global step `step`.
    pub fn expected_recvs(&self, p: Participant, step: u32) -> u32 {
        let (i, k) = self.phase_of(step);
        match self.phases[i] {
            Phase::Ps {
                leaders_only,
                overlap,
                ..
            } => {
                // servers hear from every worker in step 0 (a push, or the
                // ready signal) and, with overlap, in step 1 (the push)
                let push = k == 0 || overlap;
                let pull = k == 1;
                if self.is_worker(p, leaders_only) && pull {
                    self.servers
                } else if p >= self.gpus && push {
                    self.workers(leaders_only)
                } else {
                    0
                }
            }
            // every rank receives one message in every step
            Phase::RingV { .. } | Phase::PairwiseV { .. } => (p < self.gpus) as u32,
            ref ph => {
                if p >= self.gpus {
                    return 0;
                }
                let group = match *ph {
                    Phase::Ring { group, .. }
                    | Phase::BinomialReduce { group, .. }
                    | Phase::BinomialBcast { group, .. }
                    | Phase::Pairwise { group, .. }
                    | Phase::RecursiveDoubling { group, .. } => group,
                    Phase::Ps { .. } | Phase::RingV { .. } | Phase::PairwiseV { .. } => {
                        unreachable!()
                    }
                };
                let s = self.group_size(group);
                let (_, idx) = self.locate(p, group);
                let d = 1u32 << k.min(31);
                let got = match ph {
                    Phase::Ring { .. } | Phase::Pairwise { .. } => true,
                    Phase::BinomialReduce { .. } => idx % (2 * d) == 0 && idx + d < s,
                    Phase::BinomialBcast { .. } => idx >= d && idx < 2 * d,
                    Phase::RecursiveDoubling { .. } => {
                        // rounds are exchanges; a fold's receiver is its
                        // sender's partner
                        let (p2, log, fold) = doubling(s);
                        match if fold { k.checked_sub(1) } else { Some(k) } {
                            None => idx < s - p2,
                            Some(j) if j < log => idx < p2,
                            Some(_) => idx >= p2,
                        }
                    }
                    _ => unreachable!(),
                };
                got as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every send has a matching expected receive, step by step.
    fn check_balance(spec: &ClusterSpec, phases: Vec<Phase>, servers: u32) {
        let prog = Program::new(spec, phases, servers);
        let n = prog.participants();
        let mut out = Vec::new();
        for step in 0..prog.steps() {
            let mut recv = vec![0u32; n as usize];
            for p in 0..n {
                out.clear();
                prog.sends(p, step, &mut out);
                for &(d, _) in &out {
                    assert_ne!(d, p, "self-send at step {step}");
                    recv[d as usize] += 1;
                }
            }
            for p in 0..n {
                assert_eq!(
                    recv[p as usize],
                    prog.expected_recvs(p, step),
                    "p {p} step {step}"
                );
            }
        }
    }

    #[test]
    fn sends_and_receives_balance() {
        for (nodes, g) in [(1, 1), (1, 5), (3, 1), (3, 4), (4, 2), (5, 8)] {
            for placement in [
                crate::cluster::Placement::Contiguous,
                crate::cluster::Placement::Scattered,
            ] {
                let mut spec = ClusterSpec::flat(nodes, 1e9, 0.0);
                spec.gpus_per_node = g;
                spec.placement = placement;
                let n = spec.gpus() as f64;
                let mut groups = vec![Grouping::All, Grouping::IntraNode, Grouping::Rail];
                groups.extend(
                    [1, 2, 3, 4]
                        .into_iter()
                        .filter(|k| (nodes * g).is_multiple_of(*k))
                        .map(Grouping::Block),
                );
                for group in groups {
                    check_balance(
                        &spec,
                        vec![Phase::Ring {
                            group,
                            steps: 3,
                            chunk: 1.0,
                        }],
                        0,
                    );
                    check_balance(&spec, vec![Phase::BinomialReduce { group, bytes: 1.0 }], 0);
                    check_balance(&spec, vec![Phase::BinomialBcast { group, bytes: 1.0 }], 0);
                    check_balance(
                        &spec,
                        vec![Phase::Pairwise {
                            group,
                            chunk: 1.0 / n,
                        }],
                        0,
                    );
                    check_balance(
                        &spec,
                        vec![Phase::RecursiveDoubling { group, bytes: 1.0 }],
                        0,
                    );
                }
                for overlap in [true, false] {
                    for leaders_only in [true, false] {
                        check_balance(
                            &spec,
                            vec![Phase::Ps {
                                leaders_only,
                                shard: Shards::Even(1.0),
                                overlap,
                            }],
                            nodes,
                        );
                    }
                }
            }
        }
    }

    /// Recursive doubling gathers every member's part on every member, and
    /// each member receives exactly the s − 1 parts it lacks (no part
    /// twice), for powers of two and not.
    #[test]
    fn recursive_doubling_gathers_everything_once() {
        for s in 1..=37u32 {
            let spec = ClusterSpec::flat(s, 1e9, 0.0);
            let prog = Program::new(
                &spec,
                vec![Phase::RecursiveDoubling {
                    group: Grouping::All,
                    bytes: 1.0,
                }],
                0,
            );
            // which parts each member holds, as a bit set (s ≤ 64)
            let mut has: Vec<u64> = (0..s).map(|i| 1u64 << i).collect();
            let mut recv = vec![0.0; s as usize];
            let mut out = Vec::new();
            for step in 0..prog.steps() {
                let before = has.clone();
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    for &(d, bytes) in &out {
                        // a send carries what the sender holds
                        let parts = if step + 1 == prog.steps() && !s.is_power_of_two() {
                            // the fold-out sends only what the extra lacks
                            before[p as usize] & !before[d as usize]
                        } else {
                            before[p as usize]
                        };
                        assert_eq!(bytes, parts.count_ones() as f64, "s {s} step {step}");
                        assert_eq!(parts & before[d as usize], 0, "duplicate parts, s {s}");
                        has[d as usize] |= parts;
                        recv[d as usize] += bytes;
                    }
                }
            }
            let all = if s == 64 { u64::MAX } else { (1u64 << s) - 1 };
            assert!(has.iter().all(|&h| h == all), "s {s}");
            assert!(recv.iter().all(|&r| r == (s - 1) as f64), "s {s}");
            let log = if s > 1 { 31 - s.leading_zeros() } else { 0 };
            let extra = if s.is_power_of_two() { 0 } else { 2 };
            assert_eq!(prog.steps(), log + extra, "s {s}");
        }
    }

    #[test]
    fn binomial_has_log_steps() {
        let spec = ClusterSpec::flat(5, 1e9, 0.0);
        let p = Program::new(
            &spec,
            vec![Phase::BinomialBcast {
                group: Grouping::All,
                bytes: 1.0,
            }],
            0,
        );
        assert_eq!(p.steps(), 3);
    }
}
