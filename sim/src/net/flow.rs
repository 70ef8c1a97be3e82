//! Max-min fair bandwidth sharing between flows.
//!
//! A flow has a path of directed links and a number of bytes. At any
//! instant the rates of the active flows are the max-min fair allocation
//! (progressive filling): repeatedly take the link whose remaining capacity
//! divided by its number of unfixed flows is smallest, give each of those
//! flows that share, and remove them. Rates change only when the set of
//! flows changes, so between changes every flow's finish time is known
//! exactly; the network is *settled* (remaining bytes brought up to date)
//! only at changes.
//!
//! Only the flows whose rates can change are refilled: those connected to
//! a started or ended flow through shared links (its component in the
//! flow–link graph). The max-min rates of a component depend on its own
//! flows and links alone, and progressive filling restricted to it runs
//! the same operations on each of its links in the same order as over the
//! whole network (the least share first, ties by link id), so the rates
//! are the same to the bit; every other flow keeps its rate. (The order
//! of a link's flows does not matter: they all take the link's share, and
//! each subtracts it from its other links, the same value whichever
//! subtracts first.) A pairwise AlltoAll's flows, each alone on its
//! links, then cost O(h) a change instead of O(F·h).
//!
//! Complexity: a recomputation costs O(C·h + L_C·log L_C) heap work in
//! practice (O(C·h·log L_C) at worst) for the C flows of the changed
//! components over their L_C links, plus O(F) to bring every flow's
//! finish time up to date; [`FlowNet::next_finish`] is O(1) after it.
//! Callers batch all changes that happen at one instant and recompute
//! once.

use crate::cluster::{LinkId, MAX_PATH_LINKS, Path};
use crate::time::{PS_PER_S, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Handle of an active flow.
pub type FlowId = u32;

#[derive(Debug, Clone)]
struct Flow {
    path: Path,
    remaining: f64,
    /// Bytes per second.
    rate: f64,
    finish: SimTime,
    tag: u64,
    fixed: bool,
    /// Where it stands in each of its links' `on_link` lists (while
    /// indexed), by the link's place in its path.
    slot: [u32; MAX_PATH_LINKS],
}

/// A set of links and the flows crossing them.
#[derive(Debug, Clone)]
pub struct FlowNet {
    capacity: Vec<f64>,
    flows: Vec<Flow>,
    free: Vec<FlowId>,
    active: Vec<FlowId>,
    settled_at: SimTime,
    dirty: bool,
    next_finish: SimTime,
    recomputations: u64,
    /// Refill only the changed components ([`FlowNet::recompute`]); off,
    /// every flow every time (the tests' reference).
    incremental: bool,
    /// [`SEARCH_FROM`] (the tests search from fewer).
    search_from: usize,
    /// Whether `on_link` and `changed` are kept ([`FlowNet::index`]).
    indexed: bool,
    /// Active flows on each link, in no order, each with the place of the
    /// link in its path (while indexed).
    on_link: Vec<Vec<(FlowId, u8)>>,
    /// Links of the flows started or ended since the last recomputation
    /// (while indexed).
    changed: Vec<LinkId>,
    /// Component search: visit stamps per link and per flow, the stamp of
    /// this search, its queue and the flows found.
    link_seen: Vec<u32>,
    flow_seen: Vec<u32>,
    stamp: u32,
    queue: Vec<LinkId>,
    component: Vec<FlowId>,
    // scratch space for progressive filling, reused between recomputations
    link_count: Vec<u32>,
    link_rem: Vec<f64>,
    link_start: Vec<u32>,
    link_fill: Vec<u32>,
    link_flows: Vec<FlowId>,
    touched: Vec<LinkId>,
    /// Links by fair share, least first, ties by id: [`entry`]'s packing.
    heap: BinaryHeap<Reverse<u128>>,
}

/// Active flows from which a recomputation looks for the changed
/// components; below, it refills every flow, faster than keeping the
/// index the search needs (`ring` and `dp-iter` of `cargo bench --bench
/// scale`, docs/benchmarks.md).
const SEARCH_FROM: usize = 16;

/// A heap entry for link `l` at share key `k`: `k` above `l`, so that one
/// integer comparison orders entries as the pair (k, l) would, the least
/// share first and ties by link id.
fn entry(k: u64, l: LinkId) -> u128 {
    ((k as u128) << 32) | l as u128
}

/// `v.ceil() as u64` for `v` ≥ 0 (saturating, NaN to 0, as the cast
/// does) without a call into libm's `ceil`, which the baseline x86-64
/// target makes (no SSE4.1 rounding instruction): the truncating cast is
/// the floor of a non-negative value, one more where it was not whole.
fn ceil_ps(v: f64) -> u64 {
    let t = v as u64;
    if (t as f64) < v {
        t.saturating_add(1)
    } else {
        t
    }
}

/// Orders positive finite `f64` by bit pattern (monotonic for non-negative
/// values), so the heap needs no float comparison.
fn key(x: f64) -> u64 {
    debug_assert!(x >= 0.0);
    x.to_bits()
}

impl FlowNet {
    /// A network with the given directed-link capacities (bytes/s).
    pub fn new(capacity: &[f64]) -> FlowNet {
        let n = capacity.len();
        FlowNet {
            capacity: capacity.to_vec(),
            flows: Vec::new(),
            free: Vec::new(),
            active: Vec::new(),
            settled_at: SimTime::ZERO,
            dirty: false,
            next_finish: SimTime::MAX,
            recomputations: 0,
            incremental: true,
            search_from: SEARCH_FROM,
            indexed: false,
            on_link: vec![Vec::new(); n],
            changed: Vec::new(),
            link_seen: vec![0; n],
            flow_seen: Vec::new(),
            stamp: 0,
            queue: Vec::new(),
            component: Vec::new(),
            link_count: vec![0; n],
            link_rem: vec![0.0; n],
            link_start: vec![0; n + 1],
            link_fill: vec![0; n],
            link_flows: Vec::new(),
            touched: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    /// Number of active flows.
    pub fn active(&self) -> usize {
        self.active.len()
    }

    /// How many times rates were recomputed.
    pub fn recomputations(&self) -> u64 {
        self.recomputations
    }

    /// Current rate of a flow, bytes/s (valid after [`FlowNet::recompute`]).
    pub fn rate(&self, f: FlowId) -> f64 {
        self.flows[f as usize].rate
    }

    /// Brings remaining bytes up to `now` at the current rates.
    fn settle(&mut self, now: SimTime) {
        if now == self.settled_at {
            return;
        }
        let dt = (now - self.settled_at).as_secs();
        for &f in &self.active {
            let fl = &mut self.flows[f as usize];
            fl.remaining = (fl.remaining - fl.rate * dt).max(0.0);
        }
        self.settled_at = now;
    }

    /// Starts a flow of `bytes` over a non-empty `path` at `now`.
    pub fn start(&mut self, now: SimTime, path: Path, bytes: f64, tag: u64) -> FlowId {
        assert!(!path.links().is_empty(), "a flow needs at least one link");
        self.settle(now);
        let flow = Flow {
            path,
            remaining: bytes,
            rate: 0.0,
            finish: SimTime::MAX,
            tag,
            fixed: false,
            slot: [0; MAX_PATH_LINKS],
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.flows[id as usize] = flow;
                id
            }
            None => {
                self.flows.push(flow);
                self.flow_seen.push(0);
                (self.flows.len() - 1) as FlowId
            }
        };
        if self.indexed {
            self.link_in(id);
            self.changed.extend_from_slice(path.links());
        }
        self.active.push(id);
        self.dirty = true;
        id
    }

    /// The earliest finish time among active flows (`SimTime::MAX` if none).
    /// Recomputes rates first if flows started or ended.
    pub fn next_finish(&mut self) -> SimTime {
        if self.dirty {
            self.recompute();
        }
        self.next_finish
    }

    /// Removes every flow finishing at or before `now`, appending their
    /// tags to `done` in flow-start order. The caller must not skip past a
    /// finish time: call with `now <= next_finish()`.
    pub fn finish_until(&mut self, now: SimTime, done: &mut Vec<u64>) {
        if self.dirty {
            self.recompute();
        }
        if now < self.next_finish {
            return;
        }
        self.settle(now);
        // order-preserving compaction: completions come out in start order
        let mut kept = 0;
        for i in 0..self.active.len() {
            let f = self.active[i];
            if self.flows[f as usize].finish <= now {
                done.push(self.flows[f as usize].tag);
                self.free.push(f);
                if self.indexed {
                    self.link_out(f);
                }
            } else {
                self.active[kept] = f;
                kept += 1;
            }
        }
        self.active.truncate(kept);
        self.dirty = true;
    }

    /// Max-min fair rates by progressive filling of the components that
    /// changed (module documentation); then each flow's finish.
    pub fn recompute(&mut self) {
        self.dirty = false;
        self.recomputations += 1;
        let mut flows = std::mem::take(&mut self.component);
        flows.clear();
        if !self.incremental || !self.index() || !self.changed_components(&mut flows) {
            flows.clear();
            flows.extend_from_slice(&self.active);
        }
        self.changed.clear();
        self.fill(&flows);
        self.component = flows;
        self.finish_times();
    }

    /// Keeps the index of the active flows on each link while there are
    /// enough of them to search (from `search_from`, until under half
    /// that): a few flows are refilled faster than the index is kept.
    /// True if the index was kept since the last recomputation, so that
    /// `changed` holds every change since.
    fn index(&mut self) -> bool {
        let n = self.active.len();
        if self.indexed {
            if n >= self.search_from / 2 {
                return true;
            }
            // the lists hold the active flows alone: empty them
            for &f in &self.active {
                for &l in self.flows[f as usize].path.links() {
                    self.on_link[l as usize].clear();
                }
            }
            self.indexed = false;
        } else if n >= self.search_from {
            for i in 0..self.active.len() {
                self.link_in(self.active[i]);
            }
            self.indexed = true;
        }
        false
    }

    /// Enters flow `f` in its links' `on_link` lists.
    fn link_in(&mut self, f: FlowId) {
        let path = self.flows[f as usize].path;
        for (k, &l) in path.links().iter().enumerate() {
            let on = &mut self.on_link[l as usize];
            self.flows[f as usize].slot[k] = on.len() as u32;
            on.push((f, k as u8));
        }
    }

    /// Takes flow `f` out of its links' `on_link` lists (the last of each
    /// list takes its place), noting the links as changed.
    fn link_out(&mut self, f: FlowId) {
        let path = self.flows[f as usize].path;
        for (k, &l) in path.links().iter().enumerate() {
            let at = self.flows[f as usize].slot[k] as usize;
            let on = &mut self.on_link[l as usize];
            debug_assert_eq!(on[at], (f, k as u8));
            on.swap_remove(at);
            if let Some(&(g, kg)) = on.get(at) {
                self.flows[g as usize].slot[kg as usize] = at as u32;
            }
            self.changed.push(l);
        }
    }

    /// The flows connected through shared links to a link of a flow
    /// started or ended since the last recomputation, into `out`; false
    /// (and `out` partial) once they are over half the active flows, where
    /// the search would cost about as much as it saves.
    fn changed_components(&mut self, out: &mut Vec<FlowId>) -> bool {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // the stamps wrapped: clear the old marks
            self.link_seen.fill(0);
            self.flow_seen.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        self.queue.clear();
        for &l in &self.changed {
            if self.link_seen[l as usize] != stamp {
                self.link_seen[l as usize] = stamp;
                self.queue.push(l);
            }
        }
        let limit = self.active.len() / 2;
        while let Some(l) = self.queue.pop() {
            for &(f, _) in &self.on_link[l as usize] {
                if self.flow_seen[f as usize] == stamp {
                    continue;
                }
                self.flow_seen[f as usize] = stamp;
                out.push(f);
                if out.len() > limit {
                    return false;
                }
                for &m in self.flows[f as usize].path.links() {
                    if self.link_seen[m as usize] != stamp {
                        self.link_seen[m as usize] = stamp;
                        self.queue.push(m);
                    }
                }
            }
        }
        true
    }

    /// Progressive filling of `flows`, which must be whole components: no
    /// other active flow shares a link with them.
    fn fill(&mut self, flows: &[FlowId]) {
        // count flows per link
        for &f in flows {
            let fl = &mut self.flows[f as usize];
            fl.fixed = false;
            for &l in fl.path.links() {
                let l = l as usize;
                if self.link_count[l] == 0 {
                    self.touched.push(l as LinkId);
                }
                self.link_count[l] += 1;
            }
        }
        // CSR adjacency link -> flows (touched links only)
        let mut total = 0u32;
        for &l in &self.touched {
            let l = l as usize;
            self.link_start[l] = total;
            self.link_fill[l] = total;
            total += self.link_count[l];
            self.link_rem[l] = self.capacity[l];
        }
        // every slot below `total` is written next: grow only
        if self.link_flows.len() < total as usize {
            self.link_flows.resize(total as usize, 0);
        }
        for &f in flows {
            for &l in self.flows[f as usize].path.links() {
                let l = l as usize;
                self.link_flows[self.link_fill[l] as usize] = f;
                self.link_fill[l] += 1;
            }
        }
        self.heap.clear();
        for &l in &self.touched {
            let share = self.capacity[l as usize] / self.link_count[l as usize] as f64;
            self.heap.push(Reverse(entry(key(share), l)));
        }
        let mut unfixed = flows.len();
        // A link's fair share only grows as other links' flows are fixed
        // (each takes at most the link's share), except by a rounding
        // ulp. So an increase is not pushed: the link's older, smaller
        // entry comes out first and is put back at its current share. A
        // decrease is pushed at once. Every link thus keeps an entry no
        // larger than its share, and the first entry that comes out at
        // its link's current share is the link of least share (ties: the
        // smallest id), as if every change had been pushed.
        // (links left in the heap once every flow is fixed carry nothing)
        while unfixed > 0
            && let Some(Reverse(e)) = self.heap.pop()
        {
            let (k, l) = ((e >> 32) as u64, e as u32 as LinkId);
            let li = l as usize;
            let count = self.link_count[li];
            if count == 0 {
                continue;
            }
            let share = self.link_rem[li].max(0.0) / count as f64;
            let ks = key(share);
            if ks != k {
                if ks > k {
                    self.heap.push(Reverse(entry(ks, l)));
                }
                continue;
            }
            for idx in self.link_start[li]..self.link_fill[li] {
                let f = self.link_flows[idx as usize];
                if self.flows[f as usize].fixed {
                    continue;
                }
                self.flows[f as usize].fixed = true;
                self.flows[f as usize].rate = share;
                unfixed -= 1;
                let path = self.flows[f as usize].path;
                for &m in path.links() {
                    let mi = m as usize;
                    let before = self.link_rem[mi].max(0.0) / self.link_count[mi] as f64;
                    self.link_rem[mi] -= share;
                    self.link_count[mi] -= 1;
                    if mi != li && self.link_count[mi] > 0 {
                        let s = self.link_rem[mi].max(0.0) / self.link_count[mi] as f64;
                        if key(s) < key(before) {
                            self.heap.push(Reverse(entry(key(s), m)));
                        }
                    }
                }
            }
        }
        for &l in &self.touched {
            self.link_count[l as usize] = 0;
        }
        self.touched.clear();
    }

    /// Each active flow's finish time at its rate, from the settled time.
    fn finish_times(&mut self) {
        let now = self.settled_at;
        let mut next = SimTime::MAX;
        for &f in &self.active {
            let fl = &mut self.flows[f as usize];
            fl.finish = if fl.remaining <= 0.0 {
                now
            } else if fl.rate > 0.0 {
                now + SimTime(ceil_ps(fl.remaining / fl.rate * PS_PER_S))
            } else {
                SimTime::MAX
            };
            next = next.min(fl.finish);
        }
        self.next_finish = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterSpec, Endpoint, LinkParams, Placement, Topology};

    /// `ceil_ps` is `ceil() as u64` on whole and fractional values, at
    /// the edges of the range, and on infinity and NaN.
    #[test]
    fn ceil_ps_is_the_ceiling() {
        let two63 = 9_223_372_036_854_775_808.0;
        for v in [
            0.0,
            0.25,
            1.0,
            1.5,
            2.0 - f64::EPSILON,
            123_456_789.000_001,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            two63,
            two63 * 2.0,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ] {
            assert_eq!(ceil_ps(v), v.ceil() as u64, "{v}");
        }
    }

    fn star(nodes: u32) -> Topology {
        Topology::new(&ClusterSpec {
            nodes,
            gpus_per_node: 1,
            network: "t".into(),
            inter: LinkParams {
                bandwidth: 1e9,
                latency: 0.0,
            },
            intra_name: "t".into(),
            intra: LinkParams {
                bandwidth: 1e12,
                latency: 0.0,
            },
            nic_link: None,
            pcie_switches: None,
            gpudirect: false,
            measured_end_to_end: false,
            nics_per_node: 1,
            oversubscription: 1.0,
            placement: Placement::Contiguous,
            cpu_cores: 36,
            ps_machines: 0,
            nic_efficiency: 1.0,
        })
    }

    #[test]
    fn incast_shares_the_receiver_and_rates_rise_when_flows_end() {
        let t = star(4);
        let mut net = FlowNet::new(t.capacities());
        // three senders into GPU 0, one of them half the size
        for (i, bytes) in [(1u32, 1e9), (2, 1e9), (3, 0.5e9)] {
            net.start(
                SimTime::ZERO,
                t.path(Endpoint::Gpu(i), Endpoint::Gpu(0)),
                bytes,
                i as u64,
            );
        }
        let t1 = net.next_finish();
        // each gets 1/3 GB/s; the small one ends at 1.5 s
        assert_eq!(t1, SimTime::from_secs(1.5));
        let mut done = vec![];
        net.finish_until(t1, &mut done);
        assert_eq!(done, [3]);
        // the other two then have 0.5 GB left each at 0.5 GB/s: 1 s more
        let t2 = net.next_finish();
        assert!((t2.as_secs() - 2.5).abs() < 1e-9);
        net.finish_until(t2, &mut done);
        assert_eq!(done, [3, 1, 2]);
        assert_eq!(net.next_finish(), SimTime::MAX);
    }

    /// Progressive filling the slow way: scan every link for the least
    /// share (ties: the smallest id), fix its flows in start order.
    fn reference_rates(caps: &[f64], paths: &[Vec<LinkId>]) -> Vec<f64> {
        let mut rem = caps.to_vec();
        let mut count = vec![0u32; caps.len()];
        for p in paths {
            for &l in p {
                count[l as usize] += 1;
            }
        }
        let mut rate = vec![None; paths.len()];
        loop {
            let best = (0..caps.len()).filter(|&l| count[l] > 0).min_by(|&a, &b| {
                let (sa, sb) = (
                    rem[a].max(0.0) / count[a] as f64,
                    rem[b].max(0.0) / count[b] as f64,
                );
                sa.partial_cmp(&sb).unwrap().then(a.cmp(&b))
            });
            let Some(l) = best else { break };
            let share = rem[l].max(0.0) / count[l] as f64;
            for (f, p) in paths.iter().enumerate() {
                if rate[f].is_none() && p.contains(&(l as LinkId)) {
                    rate[f] = Some(share);
                    for &m in p {
                        rem[m as usize] -= share;
                        count[m as usize] -= 1;
                    }
                }
            }
        }
        rate.into_iter().map(Option::unwrap).collect()
    }

    proptest::proptest! {
        /// The heap's shortcuts (increases not pushed) give the rates of
        /// plain progressive filling, to the bit.
        #[test]
        fn rates_are_those_of_plain_progressive_filling(
            caps in proptest::collection::vec(1e3f64..1e10, 2..12),
            raw in proptest::collection::vec(proptest::collection::vec(0usize..100, 1..5), 1..40),
        ) {
            let paths: Vec<Vec<LinkId>> = raw
                .iter()
                .map(|p| {
                    let mut v: Vec<LinkId> = p.iter().map(|&l| (l % caps.len()) as LinkId).collect();
                    v.sort();
                    v.dedup();
                    v.truncate(6);
                    v
                })
                .collect();
            let mut net = FlowNet::new(&caps);
            let ids: Vec<FlowId> = paths
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut path = Path::new(0.0);
                    for &l in p {
                        path.push(l);
                    }
                    net.start(SimTime::ZERO, path, 1e6, i as u64)
                })
                .collect();
            net.recompute();
            let want = reference_rates(&caps, &paths);
            for (id, w) in ids.iter().zip(&want) {
                proptest::prop_assert_eq!(net.rate(*id).to_bits(), w.to_bits());
            }
        }
    }

    proptest::proptest! {
        /// Refilling only the changed components gives every flow the
        /// rate, and so the finish time, of refilling every flow, to the
        /// bit, through random starts (1 to 4 at an instant, on 1 to 3 of
        /// up to 16 links, so components form, merge and split) and ends;
        /// searching from any flow count, or from 6 (the index built and
        /// dropped as the flows pass 6 and 3); with paths that cross a
        /// link twice or not.
        #[test]
        fn refilling_the_changed_components_is_refilling_everything(
            search_from in proptest::sample::select(vec![0usize, 6]),
            repeats in proptest::bool::ANY,
            caps in proptest::collection::vec(1e6f64..1e10, 2..16),
            steps in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        (proptest::collection::vec(0usize..64, 1..4), 1e3f64..1e7),
                        0..4,
                    ),
                    proptest::bool::ANY,
                ),
                1..60,
            ),
        ) {
            let mut fast = FlowNet::new(&caps);
            fast.search_from = search_from;
            let mut every = FlowNet::new(&caps);
            every.incremental = false;
            let mut now = SimTime::ZERO;
            let (mut done_fast, mut done_every) = (Vec::new(), Vec::new());
            let mut tag = 0u64;
            for (starts, advance) in &steps {
                for (links, bytes) in starts {
                    let mut v: Vec<LinkId> =
                        links.iter().map(|&l| (l % caps.len()) as LinkId).collect();
                    if !repeats {
                        v.sort();
                        v.dedup();
                    }
                    let mut path = Path::new(0.0);
                    for &l in &v {
                        path.push(l);
                    }
                    let a = fast.start(now, path, *bytes, tag);
                    let b = every.start(now, path, *bytes, tag);
                    proptest::prop_assert_eq!(a, b);
                    tag += 1;
                }
                let (tf, te) = (fast.next_finish(), every.next_finish());
                proptest::prop_assert_eq!(tf, te);
                for &f in &fast.active {
                    proptest::prop_assert_eq!(fast.rate(f).to_bits(), every.rate(f).to_bits());
                }
                if *advance && tf != SimTime::MAX {
                    now = tf;
                    fast.finish_until(now, &mut done_fast);
                    every.finish_until(now, &mut done_every);
                    proptest::prop_assert_eq!(&done_fast, &done_every);
                }
            }
            // drain: every flow ends at the same instant in both
            loop {
                let (tf, te) = (fast.next_finish(), every.next_finish());
                proptest::prop_assert_eq!(tf, te);
                if tf == SimTime::MAX {
                    break;
                }
                fast.finish_until(tf, &mut done_fast);
                every.finish_until(tf, &mut done_every);
            }
            proptest::prop_assert_eq!(done_fast, done_every);
            proptest::prop_assert_eq!(fast.active(), 0);
        }
    }

    /// A change refills its component alone: ending a flow whose links
    /// carry no other refills nothing, starting one on links of its own
    /// refills it alone, and starting one that joins two components
    /// refills both and itself; the other flows keep their rates.
    #[test]
    fn a_change_refills_only_its_component() {
        let t = star(12);
        let mut net = FlowNet::new(t.capacities());
        net.search_from = 0;
        let mut go = |from: u32, to: u32, bytes: f64, tag: u64| {
            net.start(
                SimTime::ZERO,
                t.path(Endpoint::Gpu(from), Endpoint::Gpu(to)),
                bytes,
                tag,
            )
        };
        // a and b share 0's downlink; c (small), g, h and i are alone
        let a = go(1, 0, 1e9, 0);
        let b = go(2, 0, 1e9, 1);
        let c = go(3, 2, 1e6, 2);
        let g = go(6, 7, 1e9, 3);
        let h = go(8, 9, 1e9, 4);
        let i = go(10, 11, 1e9, 5);
        // the first recomputation builds the index and refills everything
        net.recompute();
        assert_eq!((net.rate(a), net.rate(c), net.rate(g)), (0.5e9, 1e9, 1e9));
        let mut done = Vec::new();
        let end = net.next_finish();
        net.finish_until(end, &mut done);
        assert_eq!(done, [2]);
        let mut found = Vec::new();
        assert!(net.changed_components(&mut found));
        assert!(found.is_empty(), "{found:?}");
        net.recompute();
        // d (4 -> 5) is alone
        let d = net.start(end, t.path(Endpoint::Gpu(4), Endpoint::Gpu(5)), 1e9, 6);
        let mut found = Vec::new();
        assert!(net.changed_components(&mut found));
        assert_eq!(found, [d]);
        net.recompute();
        // e (1 -> 3) joins a's component through 1's uplink: a, b and e,
        // 3 of 7 flows, under half
        let e = net.start(end, t.path(Endpoint::Gpu(1), Endpoint::Gpu(3)), 1e9, 7);
        let mut found = Vec::new();
        assert!(net.changed_components(&mut found));
        found.sort();
        assert_eq!(found, [a, b, e]);
        net.recompute();
        assert_eq!(
            (net.rate(a), net.rate(b), net.rate(e)),
            (0.5e9, 0.5e9, 0.5e9)
        );
        for f in [d, g, h, i] {
            assert_eq!(net.rate(f), 1e9);
        }
    }

    #[test]
    fn max_min_gives_unused_share_to_unconstrained_flows() {
        // flows a: 1->0, b: 2->0, c: 1->3. Link 1-up carries a and c; 0-down carries a, b.
        let t = star(4);
        let mut net = FlowNet::new(t.capacities());
        let a = net.start(
            SimTime::ZERO,
            t.path(Endpoint::Gpu(1), Endpoint::Gpu(0)),
            1e9,
            0,
        );
        let b = net.start(
            SimTime::ZERO,
            t.path(Endpoint::Gpu(2), Endpoint::Gpu(0)),
            1e9,
            1,
        );
        let c = net.start(
            SimTime::ZERO,
            t.path(Endpoint::Gpu(1), Endpoint::Gpu(3)),
            1e9,
            2,
        );
        net.recompute();
        assert_eq!(net.rate(a), 0.5e9);
        assert_eq!(net.rate(b), 0.5e9);
        assert_eq!(net.rate(c), 0.5e9);
    }
}
