//! The analytical (α-β) cost of a collective.
//!
//! Each step of the collective's program costs, for the slowest of its
//! transfers, the path latency α plus the bytes of the most loaded link on
//! the path divided by that link's bandwidth:
//!
//! ```text
//! T(m) = Σ_steps max_f ( α_f + m · max_{l ∈ path(f)} load_l / B_l )
//! ```
//!
//! with `load_l` the bytes per unit of buffer that the step puts on link l.
//! Links are full duplex, so a step in which every GPU sends one message
//! and receives one costs α + size/B, not twice that (CASES.md convention 1).
//! Transfers of one step that share a link (a PS server's NIC, a node's NIC
//! in a hierarchical AllReduce) share it; transfers of different collectives
//! never contend here — that is the flow model's job.
//!
//! For a ring over one link class the sum is the closed form of BaiduRing and
//! gTop-k Eq. 5: T = 2(N−1)α + 2(N−1)/N · m · β. A ring phase whose hops
//! differ (NVLink inside a node, a NIC between nodes) streams channel by
//! channel, and is priced by its longest path instead (see `Ring` below).
//! The model is compiled once per (collective, cluster) into a few (α, β)
//! pairs per distinct step, so evaluating it at a new size is O(steps with
//! distinct shapes), O(terms of its longest paths) for rings.

use super::program::{Phase, Program};
use super::{Collective, Payload};
use crate::cluster::{ClusterSpec, Topology};

/// A pipelined phase of a cost model ([`Phase::Chain`],
/// [`Phase::TreeReduce`], [`Phase::TreeBcast`]): cut into K(m) pieces, it takes K + `fill` steps
/// of one piece each, and its pieces stream (a hop's latency is paid once
/// per hop of the pipeline, not per piece):
///
/// ```text
/// T(m) = (K(m) + fill) · c · m / K(m) + latency,   K(m) = ⌈part · m / piece⌉
/// ```
///
/// with c the steady state's slowest transfer (its most loaded link's
/// bytes over capacity, per byte of buffer, every pipeline of every
/// participant sending at once) and `latency` the pipeline's longest path.
/// For a chain over one link class this is the store-and-forward pipeline
/// (N−1)(α + c·m/K) + (K−1)·c·m/K; counting the steady state in every
/// step overstates the fill and drain of a tree by at most its fill over
/// K + fill.
#[derive(Debug, Clone, PartialEq)]
struct Pipe {
    /// Bytes per byte of buffer whose pieces set the piece count
    /// ([`Program::chunked_part`]: a channel's or tree's part, or a GPU's
    /// shard for the NVLS phases and SHARP).
    part: f64,
    fill: u32,
    c: f64,
    latency: f64,
}

impl Pipe {
    fn time(&self, bytes: f64) -> f64 {
        let k = super::program::pipeline_chunks(self.part * bytes) as f64;
        (k + self.fill as f64) * self.c * bytes / k + self.latency
    }
}

/// A compiled α-β cost model: `T(m) = Σ mult · max_j (α_j + m·c_j)`, plus
/// the pipelined phases' own sums.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// (multiplicity, terms (α seconds, c seconds per byte of buffer)).
    steps: Vec<(u32, Vec<(f64, f64)>)>,
    pipes: Vec<Pipe>,
    /// Steps of the ring phases, each priced whole as one entry of
    /// `steps` (for [`CostModel::steps`]).
    ring_steps: u32,
    /// Open MPI's segmented binomial broadcast, whose steps depend on the
    /// buffer (in place of `steps`).
    segmented: Option<Segmented>,
    /// Bytes sent by all participants together, per byte of buffer.
    sent_per_byte: f64,
    gpus: u32,
    /// A selection ([`super::Algo::Mpich`]): from each size (bytes) on, the
    /// compiled model of the algorithm it runs there, by increasing size
    /// (in place of everything above); empty otherwise.
    selection: Vec<(f64, CostModel)>,
    /// Open MPI's segmented ring AllReduce, whose phases follow the
    /// buffer: its program is built and priced at each size asked (a ring
    /// of many steps prices as one entry), in place of everything above.
    per_size: Option<Box<(Collective, ClusterSpec)>>,
}

impl CostModel {
    /// Compiles the cost model of `coll` on `cluster`.
    pub fn new(coll: &Collective, cluster: &ClusterSpec) -> CostModel {
        if coll.segment > 0 && coll.algo == super::Algo::SegmentedRing {
            // the segmented ring: its phases follow the buffer (its
            // `steps` are the plain ring's, those of the smallest sizes)
            let mut model = CostModel::of_program(&coll.program(cluster, 0.0), cluster);
            model.per_size = Some(Box::new((*coll, cluster.clone())));
            return model;
        }
        if coll.segment > 0 && coll.algo.takes_segments(coll.op) {
            // its segment count, and so its steps, grow with the buffer
            return CostModel::segmented(coll, cluster);
        }
        let members = coll.group_size(cluster);
        let switches = coll.switches(members);
        if !switches.is_empty() {
            // one compiled model per stretch of sizes that runs one algorithm
            let selection = std::iter::once(0.0)
                .chain(switches)
                .map(|from| {
                    let chosen = Collective {
                        algo: coll.selected(members, from),
                        ..*coll
                    };
                    (from, CostModel::new(&chosen, cluster))
                })
                .collect();
            return CostModel {
                steps: Vec::new(),
                pipes: Vec::new(),
                ring_steps: 0,
                segmented: None,
                sent_per_byte: 0.0,
                gpus: cluster.gpus(),
                selection,
                per_size: None,
            };
        }
        // A program for a 1-byte buffer: every send's bytes are then the
        // fraction of the buffer it carries.
        CostModel::of_program(&coll.program(cluster, 1.0), cluster)
    }

    /// The time of one collective carrying `payload`, seconds, and the
    /// bytes every participant together sends: a [`Payload::Uniform`]
    /// through the compiled model of [`CostModel::new`], any other payload
    /// by walking its program send by send (the same sum, at its sizes).
    pub fn time_of(coll: &Collective, cluster: &ClusterSpec, payload: &Payload) -> (f64, f64) {
        let (model, x) = match payload {
            Payload::Uniform(b) => (CostModel::new(coll, cluster), *b),
            p => (
                CostModel::of_program(&coll.program_for(cluster, p), cluster),
                1.0,
            ),
        };
        (model.time(x), model.bytes_sent_total(x))
    }

    /// Compiles the cost model of a program: `time(x)` is the cost of the
    /// program with every send scaled by x (so a program built for a
    /// 1-byte buffer gives the cost at any buffer size, and one built with
    /// real sizes gives its cost at x = 1).
    pub fn of_program(prog: &super::program::Program, cluster: &ClusterSpec) -> CostModel {
        let topo = Topology::new(cluster);
        let mut load = vec![0.0f64; topo.capacities().len()];
        let mut scratch = Scratch::new(&topo);
        let mut steps: Vec<(u32, Vec<(f64, f64)>)> = Vec::new();
        let mut sent = 0.0;
        let mut ring_steps = 0;
        // Under node symmetry, node 0's participants with node k's links
        // mapped onto node 0's see exactly the loads of the whole cluster
        // (see `exec`), at 1/nodes of the work.
        let symmetric = prog.node_symmetric();
        let scale = if symmetric { cluster.nodes as f64 } else { 1.0 };
        let reps: Vec<u32> = (0..prog.participants())
            .filter(|&p| !symmetric || prog.node_of(p) == 0)
            .collect();
        let mut pipes = Vec::new();
        for (i, phase) in prog.phases().iter().enumerate() {
            if let Some(pipe) = pipe(prog, i, &topo, &reps) {
                sent += pipe.1 * scale;
                pipes.extend(pipe.0);
                continue;
            }
            let range = prog.phase_range(i);
            if matches!(phase, Phase::Ring { .. }) {
                if !range.is_empty() {
                    let ring = Ring::of(prog, i, range.start, &topo, &reps, symmetric, &mut load);
                    sent += ring.sent * range.len() as f64 * scale;
                    let terms = ring.terms(range.len() as u32);
                    if !terms.is_empty() {
                        ring_steps += range.len() as u32 - 1;
                        steps.push((1, terms));
                    }
                }
                continue;
            }
            for step in range {
                let (terms, step_sent) =
                    step_terms(prog, step..step + 1, &topo, &reps, symmetric, &mut scratch);
                sent += step_sent * scale;
                if terms.is_empty() {
                    continue;
                }
                match steps.last_mut() {
                    Some((m, t)) if *t == terms => *m += 1,
                    _ => steps.push((1, terms)),
                }
            }
        }
        CostModel {
            steps,
            pipes,
            ring_steps,
            segmented: None,
            sent_per_byte: sent,
            gpus: cluster.gpus(),
            selection: Vec::new(),
            per_size: None,
        }
    }

    /// Open MPI's segmented tree broadcasts ([`Segmented`]): the
    /// unsegmented tree's step d holds level d's sends (the members at
    /// depth d + 1's parents), and a step of the segmented one runs a
    /// window of consecutive levels, priced together.
    fn segmented(coll: &Collective, cluster: &ClusterSpec) -> CostModel {
        let whole = Collective {
            segment: 0,
            ..*coll
        };
        let prog = whole.program(cluster, 1.0);
        let mut model = CostModel::of_program(&prog, cluster);
        if coll.algo == super::Algo::SplitBinaryTree {
            // its descent's windows are strided, and priced per size
            model.steps.clear();
            model.segmented = Some(Segmented {
                segment: coll.segment as f64,
                depth: prog.steps(),
                windows: Vec::new(),
                deep: None,
                split: Some(SplitParts {
                    whole: (whole, cluster.clone()),
                    pipeline: Box::new(CostModel::new(
                        &Collective {
                            algo: super::Algo::Pipeline,
                            ..*coll
                        },
                        cluster,
                    )),
                }),
            });
            return model;
        }
        let depth = prog.steps();
        let mut pricer = Pricer::new(prog, cluster);
        // every window of a shallow tree, compiled once; a deep one's
        // (a chain of hundreds of ranks) priced as a size needs them
        let shallow = depth <= MAX_COMPILED_DEPTH;
        let mut windows = Vec::with_capacity(if shallow { (depth * depth) as usize } else { 0 });
        for lo in (0..depth).filter(|_| shallow) {
            for hi in 0..depth {
                windows.push(if hi < lo {
                    Vec::new()
                } else {
                    pricer.terms(lo..hi + 1)
                });
            }
        }
        model.steps.clear();
        model.segmented = Some(Segmented {
            segment: coll.segment as f64,
            depth,
            windows,
            deep: (!shallow).then(|| (whole, cluster.clone())),
            split: None,
        });
        model
    }

    /// A program whose phases follow the buffer, compiled for `bytes`
    /// (every send at its real size: its cost at x = 1).
    fn at_size(&self, bytes: f64) -> Option<CostModel> {
        self.per_size
            .as_ref()
            .map(|pc| CostModel::of_program(&pc.0.program(&pc.1, bytes), &pc.1))
    }

    /// The compiled model of the algorithm a selection runs for `bytes`.
    fn chosen(&self, bytes: f64) -> Option<&CostModel> {
        self.selection
            .iter()
            .rev()
            .find(|(from, _)| bytes >= *from)
            .or(self.selection.first())
            .map(|(_, m)| m)
    }

    /// Time in seconds for a buffer of `bytes`.
    pub fn time(&self, bytes: f64) -> f64 {
        if let Some(m) = self.chosen(bytes) {
            return m.time(bytes);
        }
        if let Some(at) = self.at_size(bytes) {
            return at.time(1.0);
        }
        self.steps
            .iter()
            .map(|(mult, terms)| *mult as f64 * price(terms, bytes))
            // from +0.0: an empty `f64` sum is -0.0, which prints as "-0"
            .fold(0.0, |a, b| a + b)
            + self
                .pipes
                .iter()
                .map(|p| p.time(bytes))
                .fold(0.0, |a, b| a + b)
            + self.segmented.as_ref().map_or(0.0, |s| s.time(bytes))
    }

    /// Bytes sent by all participants together for a buffer of `bytes`.
    pub fn bytes_sent_total(&self, bytes: f64) -> f64 {
        if let Some(m) = self.chosen(bytes) {
            return m.bytes_sent_total(bytes);
        }
        if let Some(at) = self.at_size(bytes) {
            return at.bytes_sent_total(1.0);
        }
        // the split binary tree runs Open MPI's pipeline where a segment
        // is larger than a half
        if let Some(Segmented {
            segment,
            split: Some(sp),
            ..
        }) = &self.segmented
            && *segment > bytes / 2.0
        {
            return sp.pipeline.bytes_sent_total(bytes);
        }
        self.sent_per_byte * bytes
    }

    /// Bytes sent per GPU (all participants' bytes divided by the GPUs, so
    /// that PS servers' pulls are charged to the GPUs of their node).
    pub fn bytes_sent_per_gpu(&self, bytes: f64) -> f64 {
        self.bytes_sent_total(bytes) / self.gpus as f64
    }

    /// Number of steps of the program (pipelined phases counted at one
    /// piece); of a selection, and of the segmented ring, the steps at its
    /// smallest sizes.
    pub fn steps(&self) -> u32 {
        if let Some(m) = self.selection.first() {
            return m.1.steps();
        }
        self.steps.iter().map(|(m, _)| *m).sum::<u32>()
            + self.ring_steps
            + self.pipes.iter().map(|p| p.fill + 1).sum::<u32>()
            + self.segmented.as_ref().map_or(0, |s| s.depth)
    }
}

/// Buffers [`step_terms`] reuses from step to step.
struct Scratch {
    /// Bytes on each link (zero but for `touched`).
    load: Vec<f64>,
    touched: Vec<u32>,
    flows: Vec<(f64, crate::cluster::Path)>,
    out: Vec<super::program::Send>,
}

impl Scratch {
    fn new(topo: &Topology) -> Scratch {
        Scratch {
            load: vec![0.0; topo.capacities().len()],
            touched: Vec::new(),
            flows: Vec::new(),
            out: Vec::new(),
        }
    }
}

/// The largest of `terms` (α seconds, c seconds per byte of buffer) for
/// a buffer of `x` bytes (0 for none: an empty step).
fn price(terms: &[(f64, f64)], x: f64) -> f64 {
    terms.iter().map(|&(a, c)| a + x * c).fold(0.0, f64::max)
}

/// A program with what [`step_terms`] prices its steps on: its cluster's
/// topology, the participants it prices (node 0's of a node-symmetric
/// program), and the scratch buffers (the segmented broadcasts' windows).
struct Pricer {
    prog: Program,
    topo: Topology,
    reps: Vec<u32>,
    symmetric: bool,
    scratch: Scratch,
}

impl Pricer {
    fn new(prog: Program, cluster: &ClusterSpec) -> Pricer {
        let topo = Topology::new(cluster);
        let symmetric = prog.node_symmetric();
        let reps: Vec<u32> = (0..prog.participants())
            .filter(|&q| !symmetric || prog.node_of(q) == 0)
            .collect();
        let scratch = Scratch::new(&topo);
        Pricer {
            prog,
            topo,
            reps,
            symmetric,
            scratch,
        }
    }

    /// [`step_terms`] of `steps` run together.
    fn terms(&mut self, steps: impl IntoIterator<Item = u32>) -> Vec<(f64, f64)> {
        let p = self;
        step_terms(
            &p.prog,
            steps,
            &p.topo,
            &p.reps,
            p.symmetric,
            &mut p.scratch,
        )
        .0
    }
}

/// The terms of one step that runs the sends of `steps` together (one
/// step of the program, or a window of steps run at once), sorted, and
/// the bytes they send: each message's latency and its seconds per byte
/// of buffer at its most loaded link, dominated terms dropped.
fn step_terms(
    prog: &Program,
    steps: impl IntoIterator<Item = u32>,
    topo: &Topology,
    reps: &[u32],
    symmetric: bool,
    x: &mut Scratch,
) -> (Vec<(f64, f64)>, f64) {
    let caps = topo.capacities();
    x.flows.clear();
    let mut sent = 0.0;
    for step in steps {
        for &p in reps {
            x.out.clear();
            prog.sends(p, step, &mut x.out);
            for send in &x.out {
                let mut path = prog.path(topo, p, send);
                if symmetric {
                    path.map_links(|l| topo.link_in_node0(l));
                }
                sent += send.bytes;
                for &l in path.links() {
                    if x.load[l as usize] == 0.0 {
                        x.touched.push(l);
                    }
                    x.load[l as usize] += send.bytes;
                }
                x.flows.push((path.latency, path));
            }
        }
    }
    let mut terms: Vec<(f64, f64)> = Vec::new();
    for (alpha, path) in &x.flows {
        let c = path
            .links()
            .iter()
            .map(|&l| x.load[l as usize] / caps[l as usize])
            .fold(0.0, f64::max);
        // keep only terms not dominated by another
        if terms.iter().any(|&(a, b)| a >= *alpha && b >= c) {
            continue;
        }
        terms.retain(|&(a, b)| !(*alpha >= a && c >= b));
        terms.push((*alpha, c));
    }
    for &l in &x.touched {
        x.load[l as usize] = 0.0;
    }
    x.touched.clear();
    terms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (terms, sent)
}

/// Open MPI's segmented tree broadcasts
/// ([`Phase::TreeBcastAll`] with segments): S = ⌈m / segment⌉
/// segments of m/S go down a tree of `depth` levels, step k running the
/// levels d with k − S < d ≤ k (each its members' sends of segment
/// k − d), so S + depth − 1 steps, each priced as the step of its window
/// of levels; S − depth + 1 of them (when S ≥ depth) run every level.
///
/// A tree of at most [`MAX_COMPILED_DEPTH`] levels has every window
/// compiled (depth² of them); a deeper one (a chain or pipeline over
/// hundreds of ranks, where depth³ sends would take minutes) prices the
/// S + depth − 1 windows a size needs when asked, O(depth·min(S, depth))
/// sends a call.
#[derive(Debug, Clone, PartialEq)]
struct Segmented {
    /// Bytes of a segment at most.
    segment: f64,
    /// Levels of the tree that send (the unsegmented tree's steps).
    depth: u32,
    /// Terms per byte of a segment of the window of levels lo..=hi, at
    /// `lo · depth + hi` (a shallow tree's).
    windows: Vec<Vec<(f64, f64)>>,
    /// A deep tree's unsegmented collective and cluster, whose windows
    /// are priced when asked.
    deep: Option<(Collective, ClusterSpec)>,
    /// Open MPI's split binary tree in segments ([`SplitParts`]; then
    /// `depth` is its unsegmented program's steps, the swap's among them).
    split: Option<SplitParts>,
}

/// Open MPI's split binary tree in segments of at most `segment` bytes
/// ([`super::bcast::split_send`]): with S segments a half, member v sends
/// segment j to its child r in step a(v) + 1 + 2j + r, the unsegmented
/// tree's step a(v) + 1 + r shifted by 2j; so step k of the segmented
/// descent runs the unsegmented descent steps of k's parity from k − 2(S
/// − 1) to k, priced together (a strided window), each send a segment;
/// then the swap of whole halves. From step D − 1 to 2S − 2 (D the
/// unsegmented descent's steps) the window holds every step of its
/// parity: those 2S − D steps alternate two prices. Priced per size,
/// O(D) windows of O(D) steps whatever S. Where a segment is larger than
/// a half, Open MPI runs its pipeline instead (`pipeline`).
#[derive(Debug, Clone, PartialEq)]
struct SplitParts {
    /// The unsegmented collective and its cluster.
    whole: (Collective, ClusterSpec),
    /// The pipeline in the same segments.
    pipeline: Box<CostModel>,
}

impl SplitParts {
    /// Seconds for a buffer of `bytes` in segments of at most `segment`;
    /// `steps`, the unsegmented program's (its descent's and the swap).
    fn time(&self, segment: f64, steps: u32, bytes: f64) -> f64 {
        let half = bytes / 2.0;
        if segment > half {
            return self.pipeline.time(bytes);
        }
        if steps == 0 {
            return 0.0;
        }
        let (coll, cluster) = &self.whole;
        // compiled for a 1-byte buffer: a send of the descent carries 0.5
        // of it, so a segment of `piece` bytes prices as 2·piece of buffer
        let mut pricer = Pricer::new(coll.program(cluster, 1.0), cluster);
        let s = ((half / segment).ceil() as u64).max(1);
        let piece = half / s as f64;
        let d = (steps - 1) as u64;
        let mut window = |k: u64, x: f64| {
            let lo = k.saturating_sub(2 * (s - 1));
            let hi = k.min(d.saturating_sub(1));
            let strided = (lo..=hi).filter(|t| t % 2 == k % 2).map(|t| t as u32);
            price(&pricer.terms(strided), x)
        };
        let descent = d + 2 * (s - 1);
        let (mut k, mut total) = (0u64, 0.0);
        while k < descent {
            if d >= 1 && k >= d - 1 && k + 1 < 2 * s {
                // every step of each parity: the two prices alternate over
                // k..2S − 1
                let run = 2 * s - 1 - k;
                let (now, next) = (window(k, 2.0 * piece), window(k + 1, 2.0 * piece));
                total += run.div_ceil(2) as f64 * now + (run / 2) as f64 * next;
                k += run;
            } else {
                total += window(k, 2.0 * piece);
                k += 1;
            }
        }
        // the swap, whole halves
        total + price(&pricer.terms(d as u32..d as u32 + 1), bytes)
    }
}

/// The deepest tree whose segmented windows are all compiled at once
/// ([`Segmented`]): 64 levels, 2,080 windows (every binomial, k-nomial
/// and binary tree; a chain over at most 65 ranks).
const MAX_COMPILED_DEPTH: u32 = 64;

impl Segmented {
    fn time(&self, bytes: f64) -> f64 {
        if let Some(sp) = &self.split {
            return sp.time(self.segment, self.depth, bytes);
        }
        let p = self.depth as u64;
        if p == 0 {
            return 0.0;
        }
        let s = ((bytes / self.segment).ceil() as u64).max(1);
        let piece = bytes / s as f64;
        // a deep tree's program, priced window by window
        let mut deep = self
            .deep
            .as_ref()
            .map(|(coll, cluster)| Pricer::new(coll.program(cluster, 1.0), cluster));
        let mut step = |lo: u64, hi: u64| match deep.as_mut() {
            Some(pricer) => price(&pricer.terms(lo as u32..hi as u32 + 1), piece),
            None => price(&self.windows[(lo * p + hi) as usize], piece),
        };
        let (mut k, mut total) = (0u64, 0.0);
        while k < s + p - 1 {
            let (lo, hi) = ((k + 1).saturating_sub(s), k.min(p - 1));
            // every level at once, from here to the root's last segment
            let run = if lo == 0 && hi == p - 1 { s - k } else { 1 };
            total += run as f64 * step(lo, hi);
            k += run;
        }
        total
    }
}

/// One step of a ring phase, every participant's hops: a hop is a
/// message of one channel (lane) from a participant to its successor,
/// with its latency α and its seconds per byte of buffer c (its most
/// loaded link's bytes over capacity, every hop of the step sending).
///
/// A ring's steps stream (`Program::streams`): a GPU forwards a channel's
/// data as soon as it has arrived and its own previous send has left. Its
/// step-s send starts at S(r, s) = max(S(r−1, s−1) + c_{r−1}·m + α_{r−1},
/// S(r, s−1) + c_r·m), so the phase's time is the longest path through
/// the (rank, step) lattice, each step either a diagonal (a hop: α + c·m)
/// or a stay (the rank's own send: c·m). A path of D diagonals runs back
/// over a window of D consecutive hops and spends its n − D stays at the
/// window's slowest sender:
///
/// ```text
/// T(m) = max over D and windows W of D hops:  Σ_W (α + c·m) + (n − D)·max_W c·m
/// ```
///
/// Growing D by a lap adds the same amount, so the best D lies within a
/// lap of either end: D < 2·len or D > n − len for a cycle of len hops,
/// O(len²) terms. On a ring whose hops are alike every path gives
/// n(α + c·m), BaiduRing's and gTop-k Eq. 5's closed form. A cycle of
/// more than [`MAX_EXACT_CYCLE`] unlike hops (a ring over many GPUs that
/// node symmetry does not fold) keeps D = 1 and D = n only.
struct Ring {
    /// Cycles of hops, each in ring order.
    cycles: Vec<Vec<Hop>>,
    /// Bytes per byte of buffer all hops of one step send.
    sent: f64,
}

impl Ring {
    fn of(
        prog: &Program,
        i: usize,
        step: u32,
        topo: &Topology,
        reps: &[u32],
        symmetric: bool,
        load: &mut [f64],
    ) -> Ring {
        let caps = topo.capacities();
        let lanes = prog.lanes(i);
        let mut out = Vec::new();
        // (source, lane, receiver, path)
        let mut hops: Vec<(u32, u32, u32, crate::cluster::Path)> = Vec::new();
        let mut sent = 0.0;
        for &p in reps {
            for lane in 0..lanes {
                out.clear();
                prog.lane_sends(p, lane, step, &mut out);
                for send in &out {
                    let mut path = prog.path(topo, p, send);
                    let to = if symmetric {
                        path.map_links(|l| topo.link_in_node0(l));
                        prog.representative(send.to)
                    } else {
                        send.to
                    };
                    for &l in path.links() {
                        load[l as usize] += send.bytes;
                    }
                    sent += send.bytes;
                    hops.push((p, lane, to, path));
                }
            }
        }
        let cost: Vec<Hop> = hops
            .iter()
            .map(|(_, _, _, path)| {
                let busy = path
                    .links()
                    .iter()
                    .map(|&l| load[l as usize] / caps[l as usize])
                    .fold(0.0, f64::max);
                Hop {
                    alpha: path.latency,
                    busy,
                }
            })
            .collect();
        for (_, _, _, path) in &hops {
            for &l in path.links() {
                load[l as usize] = 0.0;
            }
        }
        // hops come in (participant, lane) order, one each at most
        let at = |key: (u32, u32)| {
            hops.binary_search_by_key(&key, |&(p, lane, _, _)| (p, lane))
                .ok()
        };
        let mut seen = vec![false; hops.len()];
        let mut cycles = Vec::new();
        for start in 0..hops.len() {
            let mut cycle = Vec::new();
            let mut h = start;
            while !seen[h] {
                seen[h] = true;
                cycle.push(cost[h]);
                let (_, lane, to, _) = hops[h];
                match at((to, lane)) {
                    Some(next) => h = next,
                    None => break,
                }
            }
            debug_assert!(
                cycle.is_empty() || h == start,
                "a ring's hops close into a cycle"
            );
            if !cycle.is_empty() {
                cycles.push(cycle);
            }
        }
        Ring { cycles, sent }
    }

    /// The (α, c) terms of `n` steps: every window of n consecutive hops
    /// (laps of a cycle shorter than n counted whole) and every hop's stay,
    /// the dominated ones dropped.
    fn terms(&self, n: u32) -> Vec<(f64, f64)> {
        let n = n as usize;
        let mut all: Vec<(f64, f64)> = Vec::new();
        let mut lines: Vec<(f64, f64)> = Vec::new();
        for (k, cycle) in self.cycles.iter().enumerate() {
            // rings of a group repeat each other's hops
            if k > 0 && self.cycles[k - 1] == *cycle {
                continue;
            }
            all.extend(upper_envelope(std::mem::take(&mut lines)));
            let all = &mut lines;
            let len = cycle.len();
            if cycle.iter().all(|h| h == &cycle[0]) {
                let h = cycle[0];
                all.push((n as f64 * h.alpha, n as f64 * h.busy));
                continue;
            }
            let lap = cycle
                .iter()
                .fold((0.0, 0.0), |(a, c), h| (a + h.alpha, c + h.busy));
            if len > MAX_EXACT_CYCLE {
                // D = 1 (a stay at each sender) and D = n (every window of
                // n hops: whole laps and a rest), O(len)
                all.extend(cycle.iter().map(|h| (h.alpha, n as f64 * h.busy)));
                let (laps, rest) = ((n / len) as f64, n % len);
                let mut prefix = Vec::with_capacity(2 * len + 1);
                prefix.push((0.0, 0.0));
                for k in 0..2 * len {
                    let (a, c) = prefix[k];
                    let h = cycle[k % len];
                    prefix.push((a + h.alpha, c + h.busy));
                }
                for end in len..2 * len {
                    let (a1, c1) = prefix[end + 1];
                    let (a0, c0) = prefix[end + 1 - rest];
                    all.push((laps * lap.0 + a1 - a0, laps * lap.1 + c1 - c0));
                }
                continue;
            }
            for end in 0..len {
                // the window grows backwards from hop `end`
                let (mut a, mut c, mut slowest) = (0.0, 0.0, 0.0f64);
                let mut d = 0;
                while d < n {
                    if d == 2 * len && n > 3 * len {
                        // whole laps change nothing but the sums
                        let laps = (n - len - d) / len;
                        a += laps as f64 * lap.0;
                        c += laps as f64 * lap.1;
                        d += laps * len;
                    }
                    let h = cycle[(end + len - d % len) % len];
                    a += h.alpha;
                    c += h.busy;
                    slowest = slowest.max(h.busy);
                    d += 1;
                    all.push((a, c + (n - d) as f64 * slowest));
                }
            }
        }
        all.extend(upper_envelope(lines));
        upper_envelope(all)
    }
}

/// The lines α + c·m of `lines` that are the largest for some m ≥ 0, by
/// c ascending (the upper envelope of a max of lines, which is all that
/// [`CostModel::time`] reads): from the line on top at m = 0, each next
/// one is the line that overtakes the last soonest, O(lines × envelope).
fn upper_envelope(lines: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let Some(&first) = lines
        .iter()
        .max_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)))
    else {
        return Vec::new();
    };
    let mut hull = vec![first];
    let mut from = 0.0f64;
    loop {
        let (a0, c0) = *hull.last().expect("a line");
        // the steeper line that overtakes the last one soonest (at the
        // same point, the steepest)
        let mut best: Option<(f64, (f64, f64))> = None;
        for &(a, c) in &lines {
            if c <= c0 {
                continue;
            }
            let at = ((a0 - a) / (c - c0)).max(from);
            if best.is_none_or(|(m, (_, cb))| at < m || (at == m && c > cb)) {
                best = Some((at, (a, c)));
            }
        }
        match best {
            Some((at, line)) => {
                hull.push(line);
                from = at;
            }
            None => return hull,
        }
    }
}

/// A hop of a ring step: its latency, and its seconds per byte of buffer
/// with every hop of the step on the links it shares (other channels'
/// messages on a GPU's link): an upper bound on its transfer, since a
/// link carries at most one message of each channel at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hop {
    alpha: f64,
    busy: f64,
}

/// The longest cycle of unlike hops whose every path length is counted
/// ([`Ring`]): O(len²) terms.
const MAX_EXACT_CYCLE: usize = 256;

/// Phase `i` of `prog` as a [`Pipe`] (`None` inside when it has no steps)
/// and the bytes its participants send per byte of buffer; `None` when the
/// phase is not pipelined. `prog` is built for a 1-byte buffer, so it has
/// one piece per part and its sends are what a piece's stages carry per
/// byte of buffer.
fn pipe(prog: &Program, i: usize, topo: &Topology, reps: &[u32]) -> Option<(Option<Pipe>, f64)> {
    let caps = topo.capacities();
    let mut load = vec![0.0f64; caps.len()];
    let mut out = Vec::new();
    let mut paths = Vec::new();
    let mut fill = 0;
    let mut sent = 0.0;
    for &p in reps {
        out.clear();
        fill = prog.steady_sends(i, p, &mut out)?;
        for send in &out {
            if !prog.is_switch(p) {
                sent += send.bytes;
            }
            let path = prog.path(topo, p, send);
            for &l in path.links() {
                load[l as usize] += send.bytes;
            }
            paths.push(path);
        }
    }
    if prog.phase_range(i).is_empty() {
        return Some((None, 0.0));
    }
    // one pipeline's part per byte of buffer, which sets the piece count
    let part = prog.chunked_part(i);
    let c = paths
        .iter()
        .flat_map(|p| {
            p.links()
                .iter()
                .map(|&l| load[l as usize] / caps[l as usize])
        })
        .fold(0.0, f64::max);
    // every piece crosses every pipeline edge once: the steady state's
    // sends are what the whole phase sends
    Some((
        Some(Pipe {
            part,
            fill,
            c,
            latency: prog.pipeline_latency(i, topo),
        }),
        sent,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{Algo, Op};

    /// The streaming ring's recurrence run step by step: S(r, s) is when
    /// rank r starts its step-s send over hop r (to r + 1), R its
    /// receives; the phase ends with the last receive of step n − 1.
    fn lattice(cycle: &[Hop], n: usize, x: f64) -> f64 {
        let len = cycle.len();
        let mut start = vec![0.0f64; len];
        let mut end = 0.0f64;
        for s in 0..n {
            let recv: Vec<f64> = (0..len)
                .map(|r| {
                    let h = cycle[(r + len - 1) % len];
                    start[(r + len - 1) % len] + h.busy * x + h.alpha
                })
                .collect();
            if s + 1 == n {
                end = recv.iter().copied().fold(0.0, f64::max);
            }
            for r in 0..len {
                start[r] = recv[r].max(start[r] + cycle[r].busy * x);
            }
        }
        end
    }

    /// `got` equals the closed form `want` to a part in 10^12.
    fn close(got: f64, want: f64, what: &str) {
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "{what}: {got} against {want}"
        )
    }

    fn eval(terms: &[(f64, f64)], x: f64) -> f64 {
        terms.iter().map(|&(a, c)| a + c * x).fold(0.0, f64::max)
    }

    /// A library's selection (`chooser`) of `op` on `n` ranks of a flat
    /// cluster (5 µs, 1 GB/s): its switches are `switches`, and at each
    /// size of `runs` it selects the algorithm named there and takes that
    /// algorithm's time, analytically and in the flow model (to a
    /// picosecond a rank: one tick a step) unless `flow_differs` says
    /// the algorithm's flow is not its closed form.
    fn check_selection(
        op: Op,
        chooser: Algo,
        n: u32,
        switches: &[f64],
        runs: &[(f64, Algo)],
        flow_differs: impl Fn(Algo) -> bool,
    ) {
        let coll = |algo: Algo| Collective::new(op).with_algo(algo).unwrap();
        let chosen = coll(chooser);
        assert_eq!(chosen.switches(n), switches, "{n} ranks");
        let spec = ClusterSpec::flat(n, 1e9, 5e-6);
        for &(m, algo) in runs {
            let what = format!("{} on {n} ranks, {m} bytes", chooser.name());
            assert_eq!(chosen.selected(n, m), algo, "{what}");
            let want = coll(algo).analytical(&spec).time(m);
            close(chosen.analytical(&spec).time(m), want, &what);
            if !flow_differs(algo) {
                let flow = crate::collective::exec::run_flow(&chosen, &spec, m)
                    .unwrap()
                    .time
                    .as_secs();
                assert!(
                    (flow - want).abs() <= 1e-12 * n as f64,
                    "{what}: flow {flow} against {want}"
                );
            }
        }
    }

    /// AlltoAll's closed forms on a flat cluster (one link class, α and
    /// B; m a rank's send buffer, m/N a block): the pairwise exchange
    /// (N−1)(α + m/N/B); the linear one α + (N−1)·m/N/B, its N − 1 sends
    /// sharing the rank's link; Bruck's Σ_k (α + c_k·m/N/B) over ⌈log2 N⌉
    /// steps, c_k the block indices below N with bit k set. The flow
    /// model agrees to a picosecond a step, and every rank sends the N − 1
    /// blocks (pairwise, linear) or Σ c_k blocks (Bruck's, more than N − 1
    /// from N = 3: blocks travel a step per bit of their index); MPICH's
    /// scattered exchange Σ_k (α + b_k·m/N/B) over ⌈N/32⌉ batches of b_k
    /// distances (the linear one's time up to 32 ranks; on 33 and 70 ranks
    /// 2 and 3 steps). Open
    /// MPI's selection (`ompi`) switches where its table says and runs
    /// each algorithm's time between.
    #[test]
    fn alltoall_algorithms() {
        let (alpha, bw) = (5e-6, 1e9);
        let exchange = |algo: Algo| Collective::new(Op::AllToAll).with_algo(algo).unwrap();
        for n in [2u32, 3, 5, 8, 12, 16, 32, 33, 70] {
            let spec = ClusterSpec::flat(n, bw, alpha);
            let nf = n as f64;
            // MPICH's scattered exchange: batches of the distances
            // [32k, 32k + 32) below N, but 0, each a step
            let batches: Vec<f64> = (0..n.div_ceil(32))
                .map(|k| ((32 * k + 32).min(n) - (32 * k).max(1)) as f64)
                .collect();
            let log = 32 - (n - 1).leading_zeros();
            let blocks: Vec<f64> = (0..log)
                .map(|k| (1..n).filter(|j| j & (1 << k) != 0).count() as f64)
                .collect();
            for m in [1e3, 6e4, 1e6] {
                let what = format!("n {n}, m {m}");
                let block = m / nf;
                let cases = [
                    (
                        Algo::Pairwise,
                        (nf - 1.0) * (alpha + block / bw),
                        (nf - 1.0) * block,
                    ),
                    (
                        Algo::Linear,
                        alpha + (nf - 1.0) * block / bw,
                        (nf - 1.0) * block,
                    ),
                    (
                        Algo::Bruck,
                        blocks.iter().map(|c| alpha + c * block / bw).sum(),
                        blocks.iter().sum::<f64>() * block,
                    ),
                    (
                        Algo::Scattered,
                        batches.iter().map(|c| alpha + c * block / bw).sum(),
                        (nf - 1.0) * block,
                    ),
                ];
                for (algo, want, sent) in cases {
                    let what = format!("{what}, {}", algo.name());
                    let c = exchange(algo);
                    close(c.analytical(&spec).time(m), want, &what);
                    close(c.analytical(&spec).bytes_sent_total(m), nf * sent, &what);
                    let flow = crate::collective::exec::run_flow(&c, &spec, m)
                        .unwrap()
                        .time
                        .as_secs();
                    assert!((flow - want).abs() <= 1e-12 * nf, "{what}: flow {flow}");
                }
            }
        }
        // MPICH's scattered exchange in batches of 16 on 64 ranks: 15,
        // 16, 16 and 16 distances, 4α + 63·m/64/B; MPICH's selection with
        // that throttle the same, and with one of the ranks or more
        // (MPICH's 0) the linear exchange, α + 63·m/64/B
        let spec = ClusterSpec::flat(64, bw, alpha);
        let m = 64.0 * 1024.0;
        for (algo, fanout, want) in [
            (Algo::Scattered, 16, 4.0 * alpha + 63.0 * 1024.0 / bw),
            (Algo::Mpich, 16, 4.0 * alpha + 63.0 * 1024.0 / bw),
            (Algo::Mpich, 64, alpha + 63.0 * 1024.0 / bw),
            (Algo::Mpich, u32::MAX, alpha + 63.0 * 1024.0 / bw),
        ] {
            let c = Collective {
                fanout,
                ..exchange(algo)
            };
            let what = format!("{}/{fanout} on 64", algo.name());
            close(c.analytical(&spec).time(m), want, &what);
            let flow = crate::collective::exec::run_flow(&c, &spec, m)
                .unwrap()
                .time
                .as_secs();
            assert!((flow - want).abs() <= 1e-12 * 64.0, "{what}: flow {flow}");
        }
        // Open MPI 4.1's decision, by each block's bytes (m/N): its
        // switches as literals, and on each side of them the time of the
        // algorithm it runs, in both models
        for (n, switches, runs) in [
            (2u32, vec![], vec![(1e6, Algo::Pairwise)]),
            // linear below 512 KiB a block, pairwise to 1 MiB, linear on
            (
                4,
                vec![2_097_152.0, 4_194_304.0],
                vec![
                    (1e6, Algo::Linear),
                    (3e6, Algo::Pairwise),
                    (5e6, Algo::Linear),
                ],
            ),
            (8, vec![], vec![(1e3, Algo::Linear), (1e8, Algo::Linear)]),
            // linear under 4 bytes a block, Bruck's under 512, linear on
            (
                16,
                vec![64.0, 8192.0],
                vec![
                    (32.0, Algo::Linear),
                    (4096.0, Algo::Bruck),
                    (1e6, Algo::Linear),
                ],
            ),
            // Bruck's under 1 KiB a block, linear under 256 KiB, pairwise
            (
                64,
                vec![65_536.0, 16_777_216.0],
                vec![
                    (3e4, Algo::Bruck),
                    (1e6, Algo::Linear),
                    (3e7, Algo::Pairwise),
                ],
            ),
        ] {
            check_selection(Op::AllToAll, Algo::Ompi, n, &switches, &runs, |_| false);
        }
    }

    /// Open MPI's segmented ring AllReduce (`segmented-ring`, segment s
    /// bytes): P = ⌊c/(N·s/4)⌋ phases of c 4-byte elements (one more
    /// where the rest is at least N and over half of N·s/4), each a
    /// reduce-scatter ring of N − 1 steps of m/(N·P), then one allgather
    /// ring of m/N: (P + 1)(N − 1)α + 2(N − 1)·m/N/B on one link class, the
    /// plain ring's 2(N − 1)(α + m/N/B) below N·s bytes (its switch), and
    /// the plain ring's recursive doubling below 4N bytes (an element a
    /// rank), in both models; the phase count's rounding as Open MPI's.
    #[test]
    fn open_mpis_segmented_ring() {
        let (alpha, bw) = (5e-6, 1e9);
        let ring = |segment: u64| Collective {
            segment,
            ..Collective::new(Op::AllReduce)
                .with_algo(Algo::SegmentedRing)
                .unwrap()
        };
        let c = ring(4096);
        // 8 ranks, 1,024 elements a segment: a phase is 8,192 elements
        for (elems, phases) in [
            (8192 * 3 + 5000, 4),
            (8192 * 3 + 4000, 3),
            (8192 * 3 + 7, 3),
            (8192, 1),
            (8191, 0),
            (262_144, 32),
        ] {
            assert_eq!(c.ring_phases(8, 4.0 * elems as f64), phases, "{elems}");
        }
        // half an element or less rounds down, more rounds up; less than
        // an element, or none, is the plain ring
        assert_eq!(ring(4098).ring_phases(8, 4.0 * 8199.0), 1);
        assert_eq!(ring(4099).ring_phases(8, 4.0 * 8199.0), 0);
        assert_eq!(ring(3).ring_phases(8, 1e9), 0);
        assert_eq!(ring(0).ring_phases(8, 1e9), 0);
        // the plain ring's recursive doubling below an element a rank
        assert_eq!(c.switches(8), vec![32.0, 32_768.0]);
        assert_eq!(ring(0).switches(8), vec![32.0]);
        assert_eq!(c.selected(8, 31.0), Algo::RecursiveDoubling);
        assert_eq!(c.selected(8, 32.0), Algo::Ring);
        assert_eq!(c.selected(8, 32_767.0), Algo::Ring);
        assert_eq!(c.selected(8, 32_768.0), Algo::SegmentedRing);
        let spec = ClusterSpec::flat(8, bw, alpha);
        for (m, phases) in [
            (1_048_576.0, 32.0),
            (98_304.0 + 20_000.0, 4.0),
            (16_384.0, 0.0),
            (16.0, -1.0),
        ] {
            let want = if phases > 0.0 {
                (phases + 1.0) * 7.0 * alpha + 2.0 * 7.0 * m / 8.0 / bw
            } else if phases == 0.0 {
                14.0 * (alpha + m / 8.0 / bw)
            } else {
                // recursive doubling: 3 exchanges of the buffer
                3.0 * (alpha + m / bw)
            };
            let what = format!("segmented ring of {m} bytes");
            close(c.analytical(&spec).time(m), want, &what);
            let sent = if phases < 0.0 {
                8.0 * 3.0 * m
            } else {
                14.0 * m
            };
            close(c.analytical(&spec).bytes_sent_total(m), sent, &what);
            let flow = crate::collective::exec::run_flow(&c, &spec, m)
                .unwrap()
                .time
                .as_secs();
            assert!(
                (flow - want).abs() <= 1e-12 * 300.0,
                "{what}: flow {flow} against {want}"
            );
        }
        // without a segment size, the ring
        let plain = Collective::new(Op::AllReduce)
            .with_algo(Algo::Ring)
            .unwrap();
        close(
            ring(0).analytical(&spec).time(1e6),
            plain.analytical(&spec).time(1e6),
            "unsegmented",
        );
    }

    /// Open MPI's `linear_sync` with a request limit K (`linear-sync/K`):
    /// ⌈(N − 1)/K⌉ steps of the distances [kK + 1, (k + 1)K], on 8 ranks
    /// with 3 requests 3α + 7·m/8/B (3, 3 and 1 sends a rank), on 9 with 4
    /// 2α + 8·m/9/B (MPICH's batches of 4 take 3α), with 1
    /// the pairwise exchange's 7(α + m/8/B); without a limit, or with 7
    /// or more, the linear exchange's α + 7·m/8/B; on 33 ranks 32
    /// requests are no limit (where MPICH's batches of 32 take two
    /// steps). Open MPI's decision passes the limit to the `linear_sync`
    /// it picks, never to its `basic_linear`: on 8 ranks linear-sync/3
    /// below 256 KiB a block and the linear exchange from there (a
    /// switch at 2 MiB that the decision without a limit has not, since
    /// both then run alike), on 4 ranks its table's five bounds. Both
    /// models.
    #[test]
    fn open_mpis_linear_sync() {
        let (alpha, bw) = (5e-6, 1e9);
        let with = |algo: Algo, fanout: u32| Collective {
            fanout,
            ..Collective::new(Op::AllToAll).with_algo(algo).unwrap()
        };
        let check = |c: &Collective, n: u32, m: f64, want: f64, what: &str| {
            let spec = ClusterSpec::flat(n, bw, alpha);
            close(c.analytical(&spec).time(m), want, what);
            let flow = crate::collective::exec::run_flow(c, &spec, m)
                .unwrap()
                .time
                .as_secs();
            assert!(
                (flow - want).abs() <= 1e-12 * n as f64,
                "{what}: flow {flow}"
            );
        };
        let m = 8.0 * 4096.0;
        let block = 4096.0 / bw;
        for (k, want) in [
            (3, 3.0 * alpha + 7.0 * block),
            (1, 7.0 * (alpha + block)),
            (0, alpha + 7.0 * block),
            (7, alpha + 7.0 * block),
            (100, alpha + 7.0 * block),
        ] {
            let c = with(Algo::LinearSync, k);
            check(&c, 8, m, want, &format!("linear-sync/{k} on 8"));
            assert_eq!(c.selected(8, m), Algo::LinearSync);
        }
        // on 9 ranks with 4 requests: distances 1–4 and 5–8, two steps
        // (MPICH's batches of 4, counting the rank itself, take three)
        let m9 = 9.0 * 4096.0;
        check(
            &with(Algo::LinearSync, 4),
            9,
            m9,
            2.0 * alpha + 8.0 * block,
            "linear-sync/4 on 9",
        );
        check(
            &with(Algo::Scattered, 4),
            9,
            m9,
            3.0 * alpha + 8.0 * block,
            "scattered/4 on 9",
        );
        // on 33 ranks
        let m33 = 33.0 * 4096.0;
        check(
            &with(Algo::LinearSync, 32),
            33,
            m33,
            alpha + 32.0 * block,
            "linear-sync/32 on 33",
        );
        check(
            &with(Algo::Scattered, 0),
            33,
            m33,
            2.0 * alpha + 32.0 * block,
            "scattered on 33",
        );
        // the decision on 8 ranks: linear_sync below 256 KiB a block
        let ompi = with(Algo::Ompi, 3);
        assert_eq!(ompi.switches(8), vec![2_097_152.0]);
        assert!(with(Algo::Ompi, 0).switches(8).is_empty());
        assert!(with(Algo::Ompi, 7).switches(8).is_empty());
        assert_eq!(ompi.selected(8, m), Algo::LinearSync);
        assert_eq!(with(Algo::Ompi, 0).selected(8, m), Algo::Linear);
        check(
            &ompi,
            8,
            m,
            3.0 * alpha + 7.0 * block,
            "ompi/3 on 8, 4 KiB blocks",
        );
        let big = 8.0 * 262_144.0;
        assert_eq!(ompi.selected(8, big), Algo::Linear);
        check(
            &ompi,
            8,
            big,
            alpha + 7.0 * 262_144.0 / bw,
            "ompi/3 on 8, 256 KiB blocks",
        );
        // on 4 ranks: linear_sync, linear, linear_sync, linear, pairwise,
        // linear
        assert_eq!(
            with(Algo::Ompi, 2).switches(4),
            vec![32_768.0, 65_536.0, 262_144.0, 2_097_152.0, 4_194_304.0]
        );
        assert_eq!(
            with(Algo::Ompi, 0).switches(4),
            vec![2_097_152.0, 4_194_304.0]
        );
        // two ranks: one exchange, whatever the limit
        assert_eq!(with(Algo::Ompi, 1).selected(2, 1e5), Algo::Pairwise);
    }

    /// MPICH's AlltoAll selection, by each block's bytes (a whole number
    /// of them): Bruck's up to 256 on 8 ranks or more, the scattered
    /// exchange up to 32 KiB (in batches of 32 destinations: two on 40
    /// ranks), the pairwise exchange past it; its
    /// switches at the first buffer of whole blocks past each bound, and
    /// each size's time that of the algorithm it runs, in both models;
    /// and its nonblocking one's, Bruck's up to 2 KiB.
    #[test]
    fn mpichs_alltoall_selection() {
        for (n, switches, runs) in [
            (
                4u32,
                vec![32_769.0 * 4.0],
                vec![
                    (1e3, Algo::Scattered),
                    (131_072.0, Algo::Scattered),
                    (131_076.0, Algo::Pairwise),
                    (4e6, Algo::Pairwise),
                ],
            ),
            (
                8,
                vec![257.0 * 8.0, 32_769.0 * 8.0],
                vec![
                    (2048.0, Algo::Bruck),
                    (2056.0, Algo::Scattered),
                    (262_144.0, Algo::Scattered),
                    (262_152.0, Algo::Pairwise),
                ],
            ),
            (
                12,
                vec![257.0 * 12.0, 32_769.0 * 12.0],
                vec![
                    (3e3, Algo::Bruck),
                    (1e5, Algo::Scattered),
                    (1e6, Algo::Pairwise),
                ],
            ),
            (
                40,
                vec![257.0 * 40.0, 32_769.0 * 40.0],
                vec![
                    (1e4, Algo::Bruck),
                    (1e5, Algo::Scattered),
                    (4e6, Algo::Pairwise),
                ],
            ),
        ] {
            check_selection(Op::AllToAll, Algo::Mpich, n, &switches, &runs, |_| false);
        }
        // its nonblocking selection (`nb`): Bruck's up to 2 KiB a block on
        // 8 ranks or more, the same below 8
        for (n, switches, runs) in [
            (
                4u32,
                vec![32_769.0 * 4.0],
                vec![(1e3, Algo::Scattered), (4e6, Algo::Pairwise)],
            ),
            (
                8,
                vec![2049.0 * 8.0, 32_769.0 * 8.0],
                vec![
                    (2048.0, Algo::Bruck),
                    (16_384.0, Algo::Bruck),
                    (16_392.0, Algo::Scattered),
                    (262_144.0, Algo::Scattered),
                    (262_152.0, Algo::Pairwise),
                ],
            ),
            (
                40,
                vec![2049.0 * 40.0, 32_769.0 * 40.0],
                vec![
                    (8e4, Algo::Bruck),
                    (1e5, Algo::Scattered),
                    (4e6, Algo::Pairwise),
                ],
            ),
        ] {
            check_selection(Op::AllToAll, Algo::MpichNb, n, &switches, &runs, |_| false);
        }
    }

    /// Open MPI's split binary tree in segments: its strided windows
    /// price every size as the whole segmented program does, step by
    /// step (`CostModel::of_program` of the program built at that size, a
    /// step's sends sharing links), on one link class (1 to 40 ranks) and
    /// on 4 × 4 GPUs of two link classes, for 1, 2, 3, 7 and 100 segments a
    /// half; the closed forms on one link class of 3 ranks, (2S + 1)α +
    /// 1.5·m/B (the root's 2S sends, then the swap), and of 2 ranks, (S +
    /// 1)α + m/B (its S sends to its one child, the odd steps idle); and a
    /// segment larger than a half runs Open MPI's pipeline in segments.
    #[test]
    fn the_segmented_split_tree_is_priced_by_strided_windows() {
        let (alpha, bw, m) = (2e-6, 1e9, 4e6);
        let split = |segment: u64| Collective {
            segment,
            ..Collective::new(Op::Broadcast)
                .with_algo(Algo::SplitBinaryTree)
                .unwrap()
        };
        let mut specs: Vec<ClusterSpec> = (1..=40u32)
            .map(|n| ClusterSpec::flat(n, bw, alpha))
            .collect();
        specs.push(
            crate::cluster::build::Description::new(4, 4, "ib-edr-100g")
                .build()
                .unwrap(),
        );
        for spec in &specs {
            for segments in [1u64, 2, 3, 7, 100] {
                let coll = split((m as u64 / 2).div_ceil(segments));
                let whole = CostModel::of_program(&coll.program(spec, m), spec).time(1.0);
                let what = format!("{} GPUs, {segments} segments", spec.gpus());
                close(coll.analytical(spec).time(m), whole, &what);
            }
        }
        for segments in [1u64, 5, 64] {
            let coll = split((m as u64 / 2).div_ceil(segments));
            let s = segments as f64;
            let three = ClusterSpec::flat(3, bw, alpha);
            let want = (2.0 * s + 1.0) * alpha + 1.5 * m / bw;
            close(coll.analytical(&three).time(m), want, "3 ranks");
            let two = ClusterSpec::flat(2, bw, alpha);
            close(
                coll.analytical(&two).time(m),
                (s + 1.0) * alpha + m / bw,
                "2 ranks",
            );
        }
        // a segment over a half: the pipeline, in segments of it
        let spec = ClusterSpec::flat(8, bw, alpha);
        let pipeline = Collective {
            algo: Algo::Pipeline,
            ..split(3_000_000)
        };
        close(
            split(3_000_000).analytical(&spec).time(m),
            pipeline.analytical(&spec).time(m),
            "pipeline",
        );
        assert_eq!(
            split(3_000_000).analytical(&spec).bytes_sent_total(m),
            pipeline.analytical(&spec).bytes_sent_total(m)
        );
    }

    /// Open MPI's segmented pipeline on one link class: every step runs
    /// a window of levels, each sending one segment over its own link, so
    /// T = (S + N − 2)(α + m/(S·B)) for S segments down N − 1 levels; the
    /// same whether the windows are compiled (40 ranks, 39 levels) or
    /// priced when asked (100 and 300 ranks, deeper than
    /// MAX_COMPILED_DEPTH), and in the flow model (1e-12 relative:
    /// arithmetic).
    #[test]
    fn a_deep_segmented_pipeline_is_priced_window_by_window() {
        let (alpha, bw, m) = (2e-6, 1e9, 4e6);
        for n in [40u32, 100, 300] {
            let spec = ClusterSpec::flat(n, bw, alpha);
            for segments in [1u64, 8, 1000] {
                let coll = Collective {
                    segment: (m as u64).div_ceil(segments),
                    ..Collective::new(Op::Broadcast)
                        .with_algo(Algo::Pipeline)
                        .unwrap()
                };
                let s = (m / coll.segment as f64).ceil();
                let want = (s + n as f64 - 2.0) * (alpha + m / (s * bw));
                let what = format!("{n} ranks, {segments} segments");
                close(coll.analytical(&spec).time(m), want, &what);
                if n <= 100 && segments <= 8 {
                    let flow = crate::collective::exec::run_flow(&coll, &spec, m)
                        .unwrap()
                        .time
                        .as_secs();
                    close(flow, want, &format!("{what}, flow"));
                }
            }
        }
    }

    /// MPICH's broadcast selection: the textbook binomial tree below 8
    /// ranks and up to 12,288 bytes; on a power of two scatter and
    /// recursive-doubling allgather to 512 KiB, then scatter and ring
    /// allgather, which every other count runs from 12,289 bytes; its
    /// switches as literals and each size's time that of the algorithm it
    /// runs, in both models.
    #[test]
    fn mpichs_broadcast_selection() {
        for (n, switches, runs) in [
            (
                4u32,
                vec![],
                vec![(1e3, Algo::Binomial), (1e7, Algo::Binomial)],
            ),
            (
                8,
                vec![12289.0, 524289.0],
                vec![
                    (12288.0, Algo::Binomial),
                    (12289.0, Algo::ScatterAllgather),
                    (524288.0, Algo::ScatterAllgather),
                    (1e6, Algo::ScatterAllgatherRing),
                ],
            ),
            (
                12,
                vec![12289.0],
                vec![(1e4, Algo::Binomial), (1e5, Algo::ScatterAllgatherRing)],
            ),
        ] {
            check_selection(Op::Broadcast, Algo::Mpich, n, &switches, &runs, |_| false);
        }
    }

    /// Open MPI 4.1's broadcast decision (`ompi_coll_tuned_bcast_intra_dec_fixed`,
    /// by the buffer's bytes): its switches as literals where the
    /// algorithm changes, and on each side of them the algorithm it runs
    /// and that algorithm's time (flow within a picosecond a rank where
    /// the algorithm sends to no rank still receiving; the split binary
    /// tree's swaps do, see `open_mpis_broadcasts_alpha_beta`).
    #[test]
    fn open_mpis_broadcast_decision() {
        for (n, switches, runs) in [
            (
                3u32,
                vec![
                    32.0, 256.0, 512.0, 1024.0, 32768.0, 131072.0, 262144.0, 524288.0, 1048576.0,
                ],
                vec![
                    (2e4, Algo::Linear),
                    (2e5, Algo::Pipeline),
                    (6e5, Algo::OmpiBinomial),
                    (2e6, Algo::BinaryTree),
                ],
            ),
            // linear from 8 KiB, the pipeline (its `chain`) from 1 MiB
            (
                4,
                vec![64.0, 128.0, 2048.0, 8192.0, 1048576.0],
                vec![
                    (1e3, Algo::BinaryTree),
                    (4e3, Algo::OmpiBinomial),
                    (1e5, Algo::Linear),
                    (2e6, Algo::Pipeline),
                ],
            ),
            // linear from 32 KiB
            (
                8,
                vec![8.0, 64.0, 4096.0, 16384.0, 32768.0],
                vec![
                    (1e3, Algo::Knomial),
                    (1e4, Algo::BinaryTree),
                    (2e4, Algo::OmpiBinomial),
                    (1e5, Algo::Linear),
                    (4e6, Algo::Linear),
                ],
            ),
            (
                20,
                vec![4096.0, 1048576.0],
                vec![(2e5, Algo::OmpiBinomial), (2e6, Algo::ScatterAllgather)],
            ),
            (
                300,
                vec![16384.0, 32768.0],
                vec![(2e4, Algo::SplitBinaryTree), (1e5, Algo::Knomial)],
            ),
        ] {
            check_selection(Op::Broadcast, Algo::Ompi, n, &switches, &runs, |algo| {
                algo == Algo::SplitBinaryTree
            });
        }
    }

    /// AllGather's closed forms on a flat cluster (one link class, α and
    /// B): recursive doubling ⌈log2 N⌉ steps whose parts double, (N−1)/N·m
    /// in all, on a power of two; Bruck's the same steps and bytes on any
    /// N; and MPICH's selection runs each below its threshold and the
    /// ring, (N−1)α + (N−1)/N·m/B, from there. The flow model, one
    /// transfer a link a step, agrees.
    #[test]
    fn allgather_algorithms_and_mpichs_selection() {
        let (alpha, bw) = (5e-6, 1e9);
        let gather = |algo: Algo| Collective::new(Op::AllGather).with_algo(algo).unwrap();
        for n in [2u32, 3, 5, 8, 12, 16] {
            let spec = ClusterSpec::flat(n, bw, alpha);
            let nf = n as f64;
            let log = (nf.log2()).ceil();
            let bytes = |m: f64| (nf - 1.0) / nf * m / bw;
            for m in [1e3, 6e4, 1e5, 5e5, 524_288.0, 4e6] {
                let what = format!("n {n}, m {m}");
                let ring = gather(Algo::Ring).analytical(&spec).time(m);
                close(ring, (nf - 1.0) * alpha + bytes(m), &what);
                let bruck = gather(Algo::Bruck).analytical(&spec).time(m);
                close(bruck, log * alpha + bytes(m), &what);
                if n.is_power_of_two() {
                    let rd = gather(Algo::RecursiveDoubling).analytical(&spec).time(m);
                    close(rd, log * alpha + bytes(m), &what);
                }
                let mpich = gather(Algo::Mpich);
                let want = if n.is_power_of_two() && m < 524_288.0
                    || !n.is_power_of_two() && m < 81_920.0
                {
                    log * alpha + bytes(m)
                } else {
                    ring
                };
                close(mpich.analytical(&spec).time(m), want, &what);
                let flow = crate::collective::exec::run_flow(&mpich, &spec, m)
                    .unwrap()
                    .time
                    .as_secs();
                // the flow model's clock ticks in picoseconds: one a step
                assert!((flow - want).abs() <= 1e-12 * nf, "{what}: flow {flow}");
                // every algorithm sends each rank the N − 1 parts it lacks
                close(
                    mpich.analytical(&spec).bytes_sent_total(m),
                    (nf - 1.0) * m,
                    &what,
                );
            }
            let sw = gather(Algo::Mpich).switches(n);
            assert_eq!(
                sw,
                vec![if n.is_power_of_two() {
                    524_288.0
                } else {
                    81_920.0
                }]
            );
            assert!(gather(Algo::Ring).switches(n).is_empty());
        }
    }

    /// Open MPI's default AllGather (4.1 and later): on fewer than 32
    /// ranks recursive doubling at every size (Bruck's when the count is
    /// not a power of two; one swap on 2), on 32 to 63 recursive doubling
    /// (or Bruck's) under 1 KiB a rank, neighbor exchange, N/2 steps of
    /// (N−1)/N·m in all, under 64 KiB, the ring from there; the flow model
    /// agrees with each closed form.
    #[test]
    fn open_mpis_allgather_selection() {
        let (alpha, bw) = (5e-6, 1e9);
        let ompi = Collective::new(Op::AllGather)
            .with_algo(Algo::Ompi)
            .unwrap();
        for (n, per_rank, steps) in [
            (2u32, 1e6, 1.0),
            (4, 1e3, 2.0),
            (4, 1e7, 2.0),
            (6, 1e6, 3.0),
            (16, 1e6, 4.0),
            (48, 512.0, 6.0),
            (48, 4096.0, 24.0),
            (48, 65536.0, 47.0),
            (33, 4096.0, 32.0),
            (64, 256.0, 6.0),
            (64, 8192.0, 32.0),
        ] {
            let spec = ClusterSpec::flat(n, bw, alpha);
            let nf = n as f64;
            let m = per_rank * nf;
            let want = steps * alpha + (nf - 1.0) / nf * m / bw;
            let got = ompi.analytical(&spec).time(m);
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "n {n}, {per_rank} B a rank: {got} against {want}"
            );
            let flow = crate::collective::exec::run_flow(&ompi, &spec, m)
                .unwrap()
                .time
                .as_secs();
            assert!(
                (flow - want).abs() <= 1e-12 * nf,
                "n {n}: flow {flow} against {want}"
            );
        }
        // where it switches on 48 ranks, in bytes of output
        assert_eq!(ompi.switches(48), vec![1024.0 * 48.0, 65536.0 * 48.0]);
        assert!(ompi.switches(16).is_empty());
    }

    /// AllReduce's MPI algorithms' closed forms on a flat cluster (α, B),
    /// with p the largest power of two ≤ N and a fold of one whole-buffer
    /// step in and out when p < N: recursive doubling log2 p·(α + m/B),
    /// Rabenseifner's 2·log2 p·α + 2(p−1)/p·m/B; MPICH's selection runs
    /// the one below 4p bytes (9 on two ranks) and the other from there,
    /// and Open MPI's follows its table, its ring running recursive
    /// doubling on fewer 4-byte elements than ranks (4 ranks: recursive
    /// doubling under 8 KiB, Rabenseifner's from there; 2 ranks: the ring
    /// from 4 to 8 and from 16 to 256 KiB; 16 ranks: recursive doubling
    /// under 4 KiB; 128 ranks: a binomial reduce and broadcast under 128
    /// KiB). The flow model agrees with each (with a fold, up to one
    /// round's message a round later: see below), and each rank of
    /// Rabenseifner's sends 2(p−1)/p of the buffer on a power of two.
    #[test]
    fn allreduce_mpi_algorithms_and_selections() {
        let (alpha, bw) = (5e-6, 1e9);
        let reduce = |algo: Algo| Collective::new(Op::AllReduce).with_algo(algo).unwrap();
        for n in [2u32, 3, 4, 5, 6, 8, 12, 16] {
            let spec = ClusterSpec::flat(n, bw, alpha);
            let p = 1u32 << (31 - n.leading_zeros());
            let (pf, log) = (p as f64, (p as f64).log2());
            let fold = |m: f64| if p < n { 2.0 * (alpha + m / bw) } else { 0.0 };
            let rd = |m: f64| log * (alpha + m / bw) + fold(m);
            let rab = |m: f64| 2.0 * log * alpha + 2.0 * (pf - 1.0) / pf * m / bw + fold(m);
            let ring = |m: f64| 2.0 * (n - 1) as f64 * (alpha + m / (n as f64) / bw);
            for m in [8.0, 100.0, 4096.0, 8191.0, 8192.0, 65536.0, 262_144.0, 4e6] {
                let what = format!("n {n}, m {m}");
                let mpich_rd = m < (4.0 * pf).max(9.0);
                // (the table's ring under 8, 16 or 64 bytes carries fewer
                // 4-byte elements than ranks: recursive doubling)
                let ompi = match n {
                    2 | 3 if (4096.0..8192.0).contains(&m) => ring(m),
                    2 | 3 if m < 16384.0 => rd(m),
                    2 | 3 if m < 262_144.0 => ring(m),
                    4..=15 if m < 8192.0 => rd(m),
                    16..=31 if m < 4096.0 => rd(m),
                    _ => rab(m),
                };
                for (algo, want) in [
                    (Algo::RecursiveDoubling, rd(m)),
                    (Algo::Rabenseifner, rab(m)),
                    (Algo::Mpich, if mpich_rd { rd(m) } else { rab(m) }),
                    (Algo::Ompi, ompi),
                ] {
                    let coll = reduce(algo);
                    let got = coll.analytical(&spec).time(m);
                    assert!(
                        (got - want).abs() <= 1e-12 * want,
                        "{what} {}: {got} against {want}",
                        algo.name()
                    );
                    let flow = crate::collective::exec::run_flow(&coll, &spec, m)
                        .unwrap()
                        .time
                        .as_secs();
                    // the flow model's clock ticks in picoseconds: one a step.
                    // Where a fold runs, the members that do not fold in
                    // start their rounds at once, and their messages to a
                    // folding member share its link with the fold-in: at
                    // most one round's message a round more (its inbound
                    // link carries one message a round early: the buffer
                    // in recursive doubling, at most half of it in
                    // Rabenseifner's), which the step sum leaves out
                    let tick = 1e-12 * 4.0 * n as f64;
                    let round = if coll.selected(n, m) == Algo::RecursiveDoubling {
                        m
                    } else {
                        m / 2.0
                    };
                    let late = if p < n { log * round / bw } else { 0.0 };
                    assert!(
                        flow >= want - tick && flow <= want + late + tick,
                        "{what} {}: flow {flow} against {want}",
                        algo.name()
                    );
                }
                if n == p {
                    let sent = reduce(Algo::Rabenseifner)
                        .analytical(&spec)
                        .bytes_sent_total(m);
                    assert!((sent - 2.0 * (pf - 1.0) * m).abs() <= 1e-9 * sent, "{what}");
                }
            }
        }
        let mpich = reduce(Algo::Mpich);
        for (n, at) in [
            (2, 9.0),
            (3, 9.0),
            (4, 16.0),
            (5, 16.0),
            (8, 32.0),
            (100, 256.0),
        ] {
            assert_eq!(mpich.switches(n), vec![at], "{n}");
        }
        let ompi = reduce(Algo::Ompi);
        assert_eq!(ompi.switches(4), vec![8192.0]);
        assert_eq!(ompi.switches(2), vec![4096.0, 8192.0, 16384.0, 262_144.0]);
        // 40 ranks: the table's ring under 128 bytes is all fallback
        assert_eq!(ompi.switches(40), vec![128.0]);
        assert_eq!(ompi.selected(40, 100.0), Algo::RecursiveDoubling);
        // 4096 ranks: a reduce and a broadcast under 2 KiB, then recursive
        // doubling (the ring's 2 to 16 KiB carry fewer elements than ranks)
        assert_eq!(ompi.switches(4096), vec![2048.0, 32768.0]);
        assert_eq!(ompi.selected(4096, 8192.0), Algo::RecursiveDoubling);
        // the table's ring runs only on 2 and 3 ranks: elsewhere its
        // buffers carry fewer elements than ranks
        assert_eq!(ompi.selected(8192, 10000.0), Algo::RecursiveDoubling);
        assert_eq!(ompi.selected(3, 20000.0), Algo::Ring);
        // 128 ranks: a reduce and a broadcast under 128 KiB
        let spec = ClusterSpec::flat(128, bw, alpha);
        let binomial = reduce(Algo::Binomial).analytical(&spec).time(65536.0);
        assert_eq!(ompi.analytical(&spec).time(65536.0), binomial);
        assert_eq!(ompi.selected(128, 65536.0), Algo::Binomial);
        assert_eq!(ompi.selected(128, 200_000.0), Algo::RecursiveDoubling);
        assert_eq!(ompi.selected(128, 262_144.0), Algo::Rabenseifner);
    }

    /// The terms are the recurrence's longest path at every size, on
    /// rings of unlike hops (two classes, as NVLink and a NIC, and
    /// arbitrary ones), for steps fewer and more than a lap.
    #[test]
    fn ring_terms_are_the_longest_path() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for len in [2usize, 3, 4, 6, 8, 16] {
            for n in [1usize, 3, len, 2 * len - 2, 5 * len + 3] {
                let cycle: Vec<Hop> = (0..len)
                    .map(|_| Hop {
                        alpha: next() * 1e-5,
                        busy: next() * 1e-9,
                    })
                    .collect();
                let ring = Ring {
                    cycles: vec![cycle.clone()],
                    sent: 0.0,
                };
                let terms = ring.terms(n as u32);
                for x in [0.0, 1e3, 1e4, 1e5, 1e6, 1e8] {
                    let (got, want) = (eval(&terms, x), lattice(&cycle, n, x));
                    assert!(
                        (got - want).abs() <= 1e-12 * want.max(1e-12),
                        "len {len} n {n} x {x}: terms {got}, lattice {want}"
                    );
                }
            }
        }
    }

    /// Past [`MAX_EXACT_CYCLE`] hops only D = 1 and D = n are counted:
    /// two real paths, so never above the longest, and within one lap of
    /// it (a lap of hops and transfers) on a ring of two hop classes.
    #[test]
    fn long_rings_keep_the_endpoints() {
        let len = MAX_EXACT_CYCLE + 44;
        let cycle: Vec<Hop> = (0..len)
            .map(|k| {
                if k % 4 == 3 {
                    Hop {
                        alpha: 20e-6,
                        busy: 4e-9,
                    }
                } else {
                    Hop {
                        alpha: 3e-6,
                        busy: 0.5e-9,
                    }
                }
            })
            .collect();
        let lap = |x: f64| cycle.iter().map(|h| h.alpha + h.busy * x).sum::<f64>();
        let ring = Ring {
            cycles: vec![cycle.clone()],
            sent: 0.0,
        };
        let n = 2 * len - 2;
        let terms = ring.terms(n as u32);
        for x in [0.0, 1e4, 1e6, 1e8] {
            let (got, want) = (eval(&terms, x), lattice(&cycle, n, x));
            assert!(
                got <= want * (1.0 + 1e-12) && want - got <= lap(x),
                "x {x}: {got} vs {want}"
            );
        }
    }
}
