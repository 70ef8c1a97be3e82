//! Fitting α-β cost models to measured times.
//!
//! A measured operation is modelled the way the simulator costs it: on a
//! flat cluster of N ranks joined by links of latency α and bandwidth B, the
//! simulator's analytical model of the collective (`sim::collective`) gives
//!
//! ```text
//! T(m) = S·α + F·m/B
//! ```
//!
//! with S the number of steps and F the bytes on the busiest link per byte of
//! buffer (ring AllReduce: S = 2(N−1), F = 2(N−1)/N; a ping-pong: S = F = 1).
//! S and F are read off the simulator itself, so the fit and the prediction
//! use one model. Where a segment or piece count grows with the size (Open
//! MPI's segmented broadcast, NCCL's pipelined tree), S and F·m become
//! S(m) and G(m), read off the simulator at each measured size
//! ([`Model::terms`]): the time is still linear in α and β at every size. α and β = 1/B are fitted by least squares on the *relative*
//! error, Σ ((T(mᵢ) − tᵢ)/tᵢ)², so small and large messages weigh alike.
//!
//! NCCL and MPI switch protocol and algorithm with the message size (NCCL's
//! LL, LL128 and Simple protocols; MPI's eager and rendezvous), so one line
//! misfits small messages by 2–3×. Two shapes model that ([`Shape`]):
//!
//! * **Protocols** (the default), NCCL's own shape: the library runs the
//!   fastest of a few protocols, each a line `S·αₚ + F·m/Bₚ` of the same
//!   algorithm with its own latency and bandwidth, so the time is their
//!   lower envelope `T(m) = minₚ (S·αₚ + F·m/Bₚ)` (NCCL's `tuning.cc`
//!   computes a latency and a bandwidth per algorithm and protocol and
//!   takes the fastest). Up to three protocols, 2 parameters each; where
//!   one protocol gives way to the next is not a parameter but follows
//!   from the lines, so a fit holds between and beyond the measured sizes,
//!   and at another rank count S and F change and the crossovers move
//!   with them (two protocols cross where each step's message, m·F/S, has
//!   one size: the library's switch point).
//! * **Regimes**: the sizes cut into contiguous regimes, each with its own
//!   (α, β), by segmented least squares (dynamic programming over
//!   breakpoints); kept as an option for comparison
//!   (docs/calibration.md says where each shape wins).
//!
//! The regimes choose their number by a penalty (BIC, `n·ln(SSE/n) +
//! (3k − 1)·ln n` for k regimes of α, β and a break); the protocols choose
//! theirs, and the rounding, by cross-validation (each fitted size
//! predicted by a fit without it, up to 16 folds), a richer choice winning
//! only by more than 0.1% of the score (closer is a tie of rounding). Both floor errors at 0.1% RMS relative error, below which
//! differences are timer noise, so a line is added only where it pays.

use sim::cluster::ClusterSpec;
use sim::collective::{Algo, Collective, Op};
use sim::names::Named;

/// The simulator's structure coefficients of an operation on N ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Structure {
    /// Latency terms: T grows by `steps · α`.
    pub steps: f64,
    /// Bytes term per byte of buffer: T grows by `bytes · m / B`.
    pub bytes: f64,
}

/// How a measured operation maps onto the simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// A point-to-point message (ping-pong one-way time, osu_latency/osu_bw):
    /// T = α + m/B.
    PointToPoint,
    /// A collective of the simulator over `ranks` ranks, one per node.
    Collective {
        /// The simulator's collective.
        op: Op,
        /// Ranks.
        ranks: u32,
        /// The algorithm: the operation's default, but the binomial tree
        /// for broadcast (the algorithm MPI measurements force), or the
        /// one the user names ([`Algos`]).
        algo: Algo,
        /// Broadcast down one of Open MPI's trees, or AllReduce by its
        /// segmented ring ([`Algo::takes_segments`]): its segment size in
        /// bytes (`coll_tuned_bcast_algorithm_segmentsize`,
        /// `coll_tuned_allreduce_algorithm_segmentsize`); 0, unsegmented.
        segment: u64,
        /// Broadcast down Open MPI's chains or k-nomial tree: the chains or
        /// the radix (0, Open MPI's default, 4); AlltoAll by MPICH's
        /// scattered exchange: the batch (0, MPICH's default, 32); by Open
        /// MPI's `linear_sync`: the requests outstanding (0, its default,
        /// no limit) ([`Algo::takes_fanout`], [`Collective::fanout`]).
        fanout: u32,
    },
}

impl Model {
    /// The model for a tool's op name, or `None` if the simulator has no
    /// collective of that name. `ranks` is needed for collectives.
    pub fn for_op(op: &str, ranks: u32) -> Option<Model> {
        match op {
            "latency" | "bw" | "pingpong" => Some(Model::PointToPoint),
            other => Op::from_name(other).map(|op| Model::Collective {
                op,
                ranks,
                algo: fitted_collective(op).algo,
                segment: 0,
                fanout: 0,
            }),
        }
    }

    /// The cluster the model runs on: a flat cluster of single-GPU nodes.
    pub fn cluster(&self, alpha: f64, bandwidth: f64) -> ClusterSpec {
        let n = match self {
            Model::PointToPoint => 2,
            Model::Collective { ranks, .. } => *ranks,
        };
        ClusterSpec::flat(n.max(1), bandwidth, alpha)
    }

    /// Predicted time of `bytes` with latency `alpha` (s) and bandwidth
    /// `bandwidth` (B/s), from the simulator's analytical model.
    pub fn predict(&self, bytes: f64, alpha: f64, bandwidth: f64) -> f64 {
        match self.collective() {
            None => alpha + bytes / bandwidth,
            Some(c) => c.analytical(&self.cluster(alpha, bandwidth)).time(bytes),
        }
    }

    /// The simulator's collective this model runs, with its segment size
    /// and fanout; `None` for a point-to-point model.
    pub fn collective(&self) -> Option<Collective> {
        match *self {
            Model::PointToPoint => None,
            Model::Collective {
                op,
                algo,
                segment,
                fanout,
                ..
            } => Some(Collective {
                segment,
                fanout,
                ..fitted_collective(op)
                    .with_algo(algo)
                    .expect("a model's algorithm is its operation's")
            }),
        }
    }

    /// The latency and bandwidth terms of `bytes`, `T = S(m)·α + G(m)/B`:
    /// S(m) seconds per second of α and G(m) bytes per B/s of bandwidth,
    /// read off the simulator at that size (at a bandwidth at which the
    /// bytes cost 1e-15 of a latency, and at zero latency). For a model
    /// whose time is a straight line in the size they are S and F·m of
    /// [`Model::structure`]; for a pipelined or segmented one they change
    /// with the size (the piece or segment count), but the time is still
    /// linear in α and 1/B at every size, which is all a fit needs.
    pub fn terms(&self, bytes: f64) -> (f64, f64) {
        let steps = self.predict(bytes, 1.0, bytes.max(1.0) * 1e15);
        (steps, self.predict(bytes, 0.0, 1.0))
    }

    /// Whether the time is a straight line in the size, `S·α + F·m/B`
    /// with S and F fixed ([`Model::structure`]): at every fourth power of
    /// two from 1 KiB to 16 GiB (unit α and B). A pipeline's piece count
    /// grows over part of that range (a tree's from 1 MiB), a segmented
    /// broadcast's segment count from its segment size, bending it.
    pub fn is_straight(&self) -> bool {
        let s = self.structure();
        probe_sizes().all(|size| {
            let t = self.predict(size, 1.0, 1.0);
            (t - (s.steps + s.bytes * size)).abs() <= 1e-9 * t
        })
    }

    /// Whether the time is linear in α and 1/B at every size, what a fit
    /// needs ([`Model::terms`]): checked at every fourth power of two
    /// from 1 KiB to 16 GiB, at three (α, B) pairs (1 µs and 100 GB/s,
    /// 100 µs and 100 MB/s, 50 µs and 3 GB/s). A model whose piece count
    /// followed α/B (an optimal pipeline depth) would fail.
    pub fn is_linear_in_alpha_and_beta(&self) -> bool {
        probe_sizes().all(|size| {
            let (s, g) = self.terms(size);
            [(1e-6, 1e11), (1e-4, 1e8), (5e-5, 3e9)]
                .iter()
                .all(|&(alpha, bw)| {
                    let t = self.predict(size, alpha, bw);
                    (t - (s * alpha + g / bw)).abs() <= 1e-9 * t
                })
        })
    }

    /// The size of one message per byte of buffer: F/S, the bytes each
    /// step sends (1 for a model of no steps), except where a step's sends
    /// go out at once (Open MPI's tree broadcasts and basic linear: each is
    /// the whole buffer; its split binary tree: a half; the linear
    /// AlltoAll: each is a block, 1/N of it; the segmented ring: a block,
    /// cut to the segment size by the fit's `regime_segment`); what a
    /// regime fitted by
    /// message size is chosen by.
    pub fn bytes_per_step(&self) -> f64 {
        // Open MPI's trees send the whole buffer to each child at once, the
        // linear AlltoAll a block to every other rank: a message is the
        // buffer or the block, though F/S counts the step's concurrent
        // sends together
        match *self {
            Model::Collective {
                op: Op::Broadcast,
                algo,
                ..
            } if algo.bcast_tree().is_some() => return 1.0,
            Model::Collective {
                op: Op::Broadcast,
                algo: Algo::SplitBinaryTree,
                ..
            } => return 0.5,
            Model::Collective {
                op: Op::AllToAll,
                algo: Algo::Linear | Algo::LinearSync | Algo::Scattered,
                ranks,
                ..
            } => return 1.0 / ranks.max(1) as f64,
            // the segmented ring's messages are a block's segments: a
            // block, of which the segment size is the most (a regime's
            // `regime_segment`)
            Model::Collective {
                op: Op::AllReduce,
                algo: Algo::SegmentedRing,
                ranks,
                ..
            } => return 1.0 / ranks.max(1) as f64,
            _ => {}
        }
        let st = self.structure();
        if st.steps > 0.0 {
            st.bytes / st.steps
        } else {
            1.0
        }
    }

    /// The buffer sizes at which the modelled library changes algorithm
    /// (MPICH's selection, `--algo allgather=mpich`; [`Collective::switches`]):
    /// a regime never spans one, and a size is predicted by the regimes on
    /// its side. Empty for a model of one algorithm.
    pub fn switches(&self) -> Vec<f64> {
        match (*self, self.collective()) {
            (Model::Collective { ranks, .. }, Some(c)) => c.switches(ranks),
            _ => Vec::new(),
        }
    }

    /// Which stretch between [`Model::switches`] a buffer of `bytes` lies
    /// in: 0 below the first switch (and always, without switches).
    pub fn zone(&self, bytes: f64) -> usize {
        self.switches().iter().filter(|&&s| bytes >= s).count()
    }

    /// The algorithm run for a buffer of `bytes`: a selection's choice at
    /// that size ([`Collective::selected`]), else the model's algorithm;
    /// `None` for a point-to-point model.
    pub fn algo_at(&self, bytes: f64) -> Option<Algo> {
        match (*self, self.collective()) {
            (Model::Collective { ranks, .. }, Some(c)) => Some(c.selected(ranks, bytes)),
            _ => None,
        }
    }

    /// [`Model::bytes_per_step`] of the algorithm a buffer of `m` bytes
    /// runs ([`Model::algo_at`]): a selection's messages are those of the
    /// algorithm it chose at that size.
    pub fn bytes_per_step_at(&self, m: f64) -> f64 {
        match (*self, self.algo_at(m)) {
            (
                Model::Collective {
                    op,
                    ranks,
                    segment,
                    fanout,
                    ..
                },
                Some(algo),
            ) => Model::Collective {
                op,
                ranks,
                algo,
                segment,
                fanout,
            }
            .bytes_per_step(),
            _ => self.bytes_per_step(),
        }
    }

    /// This model running the algorithm of `algo`'s kind that it runs at
    /// some size ([`same_kind`]: a selection's recursive doubling and
    /// Bruck's are one kind), or `None` if it runs none of that kind.
    pub fn running(&self, algo: Algo) -> Option<Model> {
        let Model::Collective {
            op,
            ranks,
            segment,
            fanout,
            ..
        } = *self
        else {
            return None;
        };
        std::iter::once(0.0)
            .chain(self.switches())
            .filter_map(|m| self.algo_at(m))
            .find(|&a| same_kind(a, algo))
            .map(|algo| Model::Collective {
                op,
                ranks,
                algo,
                segment,
                fanout,
            })
    }

    /// S and F of `T(m) = S·α + F·m/B`, read off the simulator by evaluating
    /// its model at unit latency and bandwidth.
    pub fn structure(&self) -> Structure {
        let t0 = self.predict(0.0, 1.0, 1.0);
        let t1 = self.predict(1.0, 1.0, 1.0);
        Structure {
            steps: t0,
            bytes: t1 - t0,
        }
    }
}

/// Whether two algorithms are of one kind for matching regimes across rank
/// counts: the same, or recursive doubling and Bruck's (⌈log2 N⌉ steps
/// whose messages double, the one a library runs on a power-of-two count,
/// the other on the rest).
pub fn same_kind(a: Algo, b: Algo) -> bool {
    let log_steps = |x: Algo| matches!(x, Algo::RecursiveDoubling | Algo::Bruck);
    a == b || log_steps(a) && log_steps(b)
}

/// The sizes the shape checks of a [`Model`] probe: every fourth power of
/// two from 1 KiB to 16 GiB, bytes.
fn probe_sizes() -> impl Iterator<Item = f64> {
    (10..=34).step_by(2).map(|k| (1u64 << k) as f64)
}

/// The algorithms fits model operations with where the user names one
/// (`dtsim validate --algo OP=ALGO`), instead of the fit's default:
/// Open MPI's binomial broadcast, which sends to every child at once
/// (`broadcast=ompi-binomial`), segmented (`broadcast=ompi-binomial:64KiB`,
/// Open MPI's `coll_tuned_bcast_algorithm_segmentsize`), or NCCL's
/// pipelined tree (`allreduce=tree`), say; Open MPI's chains and k-nomial
/// tree with another fanout or radix than its default 4
/// (`broadcast=chain/8`, `broadcast=knomial/2:64KiB`), MPICH's scattered
/// AlltoAll with another batch than its 32 (`alltoall=scattered/16`,
/// `alltoall=mpich/16`), Open MPI's `linear_sync` with a request limit
/// (`alltoall=linear-sync/8`, `alltoall=ompi/8`). A fit reads the
/// latency and bandwidth terms off the model at each measured size
/// ([`Model::terms`]), so any algorithm whose time is linear in α and
/// 1/B at every size can be named; its piece count may grow with the size.
///
/// It also carries the transport's eager limit where the user gives it
/// ([`Algos::with_eager_limit`]): a library setting every operation's
/// messages obey, which a [`Shape::Regimes`] fit breaks its regimes at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Algos(Vec<(Op, Algo, u64, u32)>, u64);

impl Algos {
    /// From `OP=ALGO[/FANOUT][:SEGMENT]` specifications
    /// (`broadcast=ompi-binomial`, `broadcast=ompi-binomial:64KiB`,
    /// `broadcast=knomial/2`: [`Collective::fanout`]); an operation named
    /// twice takes the last.
    ///
    /// # Errors
    /// What is wrong with a specification: no `=`, an unknown operation
    /// or algorithm, an algorithm the operation does not have, a segment
    /// size that is not a size, is 0 or is given to another algorithm than
    /// Open MPI's broadcast, a fanout that is not a whole number, is given
    /// to an algorithm without one, is 0 chains, a radix below 2 or a
    /// batch of 0, or an algorithm whose time is not linear in its latency
    /// and bandwidth.
    pub fn parse(specs: &[String]) -> Result<Algos, String> {
        let mut out: Vec<(Op, Algo, u64, u32)> = Vec::new();
        for spec in specs {
            let (op, algo) = spec.split_once('=').ok_or_else(|| {
                format!("--algo {spec}: give OP=ALGO, e.g. broadcast=ompi-binomial")
            })?;
            let (algo, segment) = match algo.split_once(':') {
                Some((a, seg)) => {
                    let bytes = sim::units::parse_bytes(seg.trim())
                        .map_err(|e| format!("--algo {spec}: segment size `{seg}`: {e}"))?;
                    if bytes == 0 {
                        return Err(format!(
                            "--algo {spec}: a segment size must be at least 1 byte (leave \
                             `:{seg}` out for no segments)"
                        ));
                    }
                    (a, bytes)
                }
                None => (algo, 0),
            };
            let (algo, fanout) = match algo.split_once('/') {
                Some((a, f)) => {
                    let k: u32 = f.trim().parse().map_err(|_| {
                        format!(
                            "--algo {spec}: the fanout `{f}` is not a whole number (the chains of \
                             chain/K, the radix of knomial/K, the batch of scattered/K, the \
                             requests of linear-sync/K)"
                        )
                    })?;
                    (a, Some(k))
                }
                None => (algo, None),
            };
            let op = Op::from_name(op.trim()).ok_or_else(|| {
                format!(
                    "--algo {spec}: unknown operation `{op}`; known: {}",
                    Op::names().join(", ")
                )
            })?;
            let algo = Algo::from_name(algo.trim()).ok_or_else(|| {
                format!(
                    "--algo {spec}: unknown algorithm `{algo}`; known: {}",
                    Algo::names().join(", ")
                )
            })?;
            Collective::new(op).with_algo(algo).ok_or_else(|| {
                format!(
                    "--algo {spec}: {} has no `{}` algorithm",
                    op.name(),
                    algo.name()
                )
            })?;
            if fanout.is_some() && !algo.takes_fanout(op) {
                return Err(format!(
                    "--algo {spec}: a fanout applies to {} only, not to {}={}",
                    Algo::FANOUT_USES,
                    op.name(),
                    algo.name()
                ));
            }
            if let Some(why) = fanout.and_then(|k| algo.fanout_error(op, k)) {
                return Err(format!("--algo {spec}: {why}"));
            }
            let fanout = fanout.unwrap_or(0);
            // the fit's cluster: single-GPU nodes on one plain network
            let flat = Model::Collective {
                op,
                ranks: 4,
                algo,
                segment,
                fanout,
            }
            .cluster(1e-6, 1e10);
            if let Some(why) = Collective::new(op)
                .with_algo(algo)
                .and_then(|c| c.hardware_refusal(&flat))
            {
                return Err(format!(
                    "--algo {spec}: a fit models its ranks as single-GPU nodes on one plain \
                     network, where `{}` cannot run ({why})",
                    algo.name()
                ));
            }
            if op == Op::AllReduce && segment > 0 && segment < 4 {
                return Err(format!(
                    "--algo {spec}: the segmented ring's segment must hold one 4-byte element \
                     at least (Open MPI runs the plain ring on less)"
                ));
            }
            if segment > 0 && !algo.takes_segments(op) {
                return Err(format!(
                    "--algo {spec}: a segment size applies to the broadcasts down Open MPI's \
                     trees (broadcast=ompi-binomial:SIZE, chain, pipeline, binary-tree, \
                     knomial, split-binary-tree) and its segmented ring \
                     (allreduce=segmented-ring:SIZE) only, not to {}={}",
                    op.name(),
                    algo.name()
                ));
            }
            // a fit needs T = S(m)·α + G(m)/B at every size, on 4, 8 and
            // 16 ranks: a model whose structure followed α/B could not be
            // fitted by least squares over α and 1/B
            let bent = [4u32, 8, 16].into_iter().any(|ranks| {
                !Model::Collective {
                    op,
                    ranks,
                    algo,
                    segment,
                    fanout,
                }
                .is_linear_in_alpha_and_beta()
            });
            if bent {
                return Err(format!(
                    "--algo {spec}: `{}`'s time is not linear in its latency and bandwidth \
                     at every size, so a fit cannot read their terms off it",
                    algo.name()
                ));
            }
            out.retain(|(o, ..)| *o != op);
            out.push((op, algo, segment, fanout));
        }
        Ok(Algos(out, 0))
    }

    /// These settings with the transport's eager limit, bytes (0: not
    /// known): a point-to-point message of at least this many bytes goes
    /// by the rendezvous protocol (a handshake, then the data), a smaller
    /// one eagerly (Open MPI's `btl_tcp_eager_limit`, 64 KiB by default,
    /// counts its match header against the limit, so a payload of exactly
    /// the limit goes by rendezvous; UCX's `UCX_RNDV_THRESH`). A
    /// [`Shape::Regimes`] fit keeps the two protocols' sizes in regimes
    /// of their own ([`fit`]).
    pub fn with_eager_limit(mut self, bytes: u64) -> Algos {
        self.1 = bytes;
        self
    }

    /// The transport's eager limit, bytes; 0 where not given
    /// ([`Algos::with_eager_limit`]).
    pub fn eager_limit(&self) -> u64 {
        self.1
    }

    /// The model of `op` on `ranks` ranks: [`Model::for_op`], with this
    /// set's algorithm (and segment size and fanout) where it names one
    /// for the operation.
    pub fn model(&self, op: &str, ranks: u32) -> Option<Model> {
        match Model::for_op(op, ranks)? {
            Model::Collective {
                op,
                ranks,
                algo,
                segment,
                fanout,
            } => {
                let (algo, segment, fanout) = self
                    .0
                    .iter()
                    .find(|(o, ..)| *o == op)
                    .map_or((algo, segment, fanout), |&(_, a, s, f)| (a, s, f));
                Some(Model::Collective {
                    op,
                    ranks,
                    algo,
                    segment,
                    fanout,
                })
            }
            p => Some(p),
        }
    }

    /// These algorithms, and `defaults`' for the operations these do not
    /// name (what the user named wins over a library's default).
    pub fn with_defaults(&self, defaults: &Algos) -> Algos {
        let mut out = self.0.clone();
        for d in &defaults.0 {
            if !out.iter().any(|(op, ..)| *op == d.0) {
                out.push(*d);
            }
        }
        let eager = if self.1 > 0 { self.1 } else { defaults.1 };
        Algos(out, eager)
    }

    /// Whether it names an algorithm for `op`.
    pub fn names(&self, op: Op) -> bool {
        self.0.iter().any(|(o, ..)| *o == op)
    }

    /// Whether it names no algorithm (an eager limit is not one).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A provenance note for each algorithm named: `fitted with
    /// broadcast=ompi-binomial (--algo)`, `fitted with
    /// broadcast=ompi-binomial:65536 (--algo; segments of 65536 bytes)`,
    /// `fitted with broadcast=knomial/2 (--algo; radix 2)`.
    /// The eager limit, where given, adds `fitted with the eager limit
    /// 65536 B (--eager-limit; …)`.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.notes_by_op().into_iter().map(|(_, n)| n).collect();
        if self.1 > 0 {
            notes.push(format!(
                "fitted with the eager limit {} B (--eager-limit; messages of at least it by \
                 rendezvous, in size regimes of their own)",
                self.1
            ));
        }
        notes
    }

    /// [`Algos::notes`], each with the operation it is about.
    pub fn notes_by_op(&self) -> Vec<(Op, String)> {
        self.notes_by_op_from("--algo")
    }

    /// [`Algos::notes_by_op`], saying `why` each algorithm was named
    /// (`--algo`; "as the MPI library and its settings chose").
    pub fn notes_by_op_from(&self, why: &str) -> Vec<(Op, String)> {
        self.0
            .iter()
            .map(|&(op, algo, segment, fanout)| {
                let mut spec = format!("{}={}", op.name(), algo.name());
                let mut what = vec![why.to_string()];
                if fanout > 0 {
                    spec += &format!("/{fanout}");
                    what.push(match (op, algo) {
                        (Op::AllToAll, Algo::LinearSync | Algo::Ompi) => {
                            format!("{fanout} requests outstanding")
                        }
                        (Op::AllToAll, _) if fanout == u32::MAX => "all at once".to_string(),
                        (Op::AllToAll, _) => format!("batches of {fanout}"),
                        (_, Algo::Chain) => format!("{fanout} chains"),
                        _ => format!("radix {fanout}"),
                    });
                }
                if segment > 0 {
                    spec += &format!(":{segment}");
                    what.push(format!("segments of {segment} bytes"));
                }
                (op, format!("fitted with {spec} ({})", what.join("; ")))
            })
            .collect()
    }
}

/// The collective a fit models for `op`: its default algorithm, but the
/// binomial tree for broadcast, the algorithm MPI measurements force
/// (docs/calibration.md); NCCL's pipelined ring broadcast, the
/// simulator's default, is fitted where the user names it
/// (`--algo broadcast=ring`, [`Algos`]).
fn fitted_collective(op: Op) -> Collective {
    let c = Collective::new(op);
    match op {
        Op::Broadcast => c
            .with_algo(Algo::Binomial)
            .expect("broadcast has a binomial tree"),
        _ => c,
    }
}

/// One size regime's fit (also how profiles store it; the type is
/// defined with the profile format in [`sim::profile`]).
pub use sim::profile::Segment;

/// How a fit shapes an operation's time over message sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The fastest of up to three protocols, each a line of the
    /// algorithm's structure (NCCL's shape; the module's documentation).
    Protocols,
    /// Up to eight contiguous size regimes, each its own line.
    Regimes,
}

impl Named for Shape {
    const ALL: &'static [Shape] = &[Shape::Protocols, Shape::Regimes];
    const WHAT: &'static str = "fit shape";
    fn name(self) -> &'static str {
        match self {
            Shape::Protocols => "protocols",
            Shape::Regimes => "regimes",
        }
    }
}

/// The communication library a measurement comes from, which names the
/// protocols of a [`Shape::Protocols`] fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// NCCL (nccl-tests logs, the NCCL backend): LL, LL128, Simple.
    Nccl,
    /// MPI (OSU logs, the MPI and CPU backends): short, eager, rendezvous.
    Mpi,
}

impl Library {
    /// The library of a tool or backend name ("nccl-tests", "nccl",
    /// "osu", "mpi", …).
    pub fn of_tool(tool: &str) -> Library {
        if tool.starts_with("nccl") {
            Library::Nccl
        } else {
            Library::Mpi
        }
    }

    /// The shape a fit of this library's measurements takes unless the
    /// user chooses: NCCL runs the protocol its cost model finds fastest
    /// (`tuning.cc`), so its times follow the fastest of the protocol
    /// lines ([`Shape::Protocols`]); an MPI library switches protocol at
    /// a configured size (the eager limit), not where the next protocol
    /// becomes faster, so its times jump at the switch and are fitted by
    /// size ([`Shape::Regimes`]). docs/calibration.md shows each shape
    /// winning on its library's logs.
    pub fn default_shape(self) -> Shape {
        match self {
            Library::Nccl => Shape::Protocols,
            Library::Mpi => Shape::Regimes,
        }
    }

    /// Names of `k` fitted protocols by ascending bandwidth: a library's
    /// protocols rank the same way in latency and in bandwidth (NCCL's LL
    /// has the lowest latency and a quarter to half the bandwidth, LL128
    /// most of it, Simple all of it at the highest latency; MPI's short
    /// and eager messages are copied through buffers, rendezvous moves the
    /// data once after a handshake). Two lines are named after the
    /// protocols libraries enable everywhere (NCCL's LL128 only on some
    /// platforms), one line after the bulk protocol.
    pub fn protocols(self, k: usize) -> &'static [&'static str] {
        match (self, k) {
            (Library::Nccl, 1) => &["Simple"],
            (Library::Nccl, 2) => &["LL", "Simple"],
            (Library::Nccl, _) => &["LL", "LL128", "Simple"],
            (Library::Mpi, 1) => &["rendezvous"],
            (Library::Mpi, 2) => &["eager", "rendezvous"],
            (Library::Mpi, _) => &["short", "eager", "rendezvous"],
        }
    }
}

/// A fitted cost model of one operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// How the operation maps onto the simulator.
    pub model: Model,
    /// How the lines make the time: the fastest protocol, or by size.
    pub shape: Shape,
    /// How sharply a [`Shape::Protocols`] fit switches from one protocol
    /// to the next ([`blend`]'s q; ∞: at the lines' crossing).
    pub sharpness: f64,
    /// For a point-to-point fit driving Open MPI's segmented broadcast:
    /// its segment size, bytes, so that a regime is chosen by the size of
    /// the messages Open MPI sends, full segments (and a shorter last
    /// one): min(buffer, segment); 0, by the buffer × the scale.
    pub regime_segment: u64,
    /// The model whose messages the regimes were fitted on, where it is
    /// not `model`: the ping-pong driving a collective, or the collective
    /// at another rank count. A buffer's regime is then chosen by the
    /// size of the messages it sends, the buffer scaled by the ratio of
    /// the two models' message sizes per byte of buffer
    /// ([`Model::bytes_per_step_at`]: 1/N for a ring over a ping-pong's
    /// 1), of the algorithm it runs; `None`, by the buffer's size.
    pub regime_from: Option<Model>,
    /// The transport's eager limit the regimes were fitted apart at,
    /// bytes ([`Algos::with_eager_limit`]; 0: none): a buffer whose
    /// messages are at least this large is predicted by the regimes
    /// fitted on rendezvous sizes (their `protocol`), a smaller one by the
    /// eager ones, where the fit has both.
    pub eager_limit: u64,
    /// Size regimes by increasing size, or protocols by increasing
    /// bandwidth ([`Shape`]).
    pub segments: Vec<Segment>,
    /// Relative residual (predicted − measured)/measured of each fitted
    /// point, by size.
    pub residuals: Vec<(u64, f64)>,
}

impl Fit {
    /// Predicted time of `bytes`, from the simulator with the α and B of
    /// the regime whose fitted size range contains it. Between two regimes
    /// (a size no regime covers, where the library switches protocol or
    /// algorithm at a point the fitted sizes do not pin down) both regimes'
    /// predictions are candidates and the prediction is their geometric
    /// mean, which is off by at most half the ratio between them whichever
    /// regime the library actually uses there. Below the first regime or
    /// above the last, that regime's line extends.
    pub fn predict(&self, bytes: u64) -> f64 {
        let m = bytes as f64;
        let at = |s: &Segment| self.model.predict(m, s.alpha_s, s.bandwidth_bps);
        if self.shape == Shape::Protocols {
            return blend(self.segments.iter().map(at), self.sharpness);
        }
        let bytes = self.regime_bytes(m);
        let segments: Vec<&Segment> = self.same_algorithm(m).into_iter().map(|(_, s)| s).collect();
        let first = segments[0];
        if bytes <= first.min_bytes {
            return at(first);
        }
        for w in segments.windows(2) {
            let (a, b) = (w[0], w[1]);
            if bytes <= a.max_bytes {
                return at(a);
            }
            if bytes < b.min_bytes {
                return (at(a) * at(b)).sqrt();
            }
        }
        at(segments.last().expect("a fit has a regime"))
    }

    /// The regimes fitted on sizes that ran the algorithm a buffer of `m`
    /// bytes runs (the library's selection; [`Model::switches`]), or all
    /// of them where none did, or where the model has one algorithm; and
    /// of those, where the fit knows the eager limit, the ones of the
    /// protocol `m`'s messages go by ([`Fit::eager_limit`]), where any.
    fn same_algorithm(&self, m: f64) -> Vec<(usize, &Segment)> {
        let same = self.same_algorithm_any_protocol(m);
        if self.eager_limit == 0 {
            return same;
        }
        let protocol = rendezvous_protocol(self.message_bytes(m), self.eager_limit);
        let on: Vec<(usize, &Segment)> = same
            .iter()
            .copied()
            .filter(|(_, s)| s.protocol.as_deref() == Some(protocol))
            .collect();
        if on.is_empty() { same } else { on }
    }

    /// The bytes of each message a buffer of `m` bytes sends on the wire
    /// (this fit's model; a segment at most, for Open MPI's segmented
    /// broadcast): what the transport's eager limit is compared with.
    fn message_bytes(&self, m: f64) -> f64 {
        let b = m * self.model.bytes_per_step_at(m);
        if self.regime_segment > 0 {
            b.min(self.regime_segment as f64)
        } else {
            b
        }
    }

    /// [`Fit::same_algorithm`] before the protocol's choice.
    fn same_algorithm_any_protocol(&self, m: f64) -> Vec<(usize, &Segment)> {
        let all = || self.segments.iter().enumerate().collect::<Vec<_>>();
        // the regimes' sizes are those of the model they were fitted on: a
        // ping-pong's messages know no algorithm
        let fitted = match self.regime_from {
            Some(Model::PointToPoint) => return all(),
            Some(from) => from,
            None => self.model,
        };
        if self.model.switches().is_empty() || fitted.switches().is_empty() {
            return all();
        }
        // the regimes fitted on sizes that ran an algorithm of the same
        // kind (their thresholds, and the algorithms between them, differ
        // with the rank count)
        let Some(algo) = self.model.algo_at(m) else {
            return all();
        };
        let same: Vec<(usize, &Segment)> = self
            .segments
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                fitted
                    .algo_at(s.min_bytes as f64)
                    .is_some_and(|a| same_kind(a, algo))
            })
            .collect();
        if same.is_empty() { all() } else { same }
    }

    /// The size that selects the regime of a buffer of `m` bytes.
    fn regime_bytes(&self, m: f64) -> u64 {
        let scale = match self.regime_from {
            // the messages of the algorithm `m` runs, over those of the
            // same kind of algorithm where the regimes were fitted
            // ([`Fit::same_algorithm`])
            Some(from) => {
                let here = self.model.bytes_per_step_at(m);
                // only an algorithm some regime was fitted on: else the
                // regimes are all of them ([`Fit::same_algorithm`]), and
                // the fitted model's messages at `m` stand for theirs
                let fitted = self
                    .model
                    .algo_at(m)
                    .filter(|&a| {
                        self.segments.iter().any(|s| {
                            from.algo_at(s.min_bytes as f64)
                                .is_some_and(|f| same_kind(f, a))
                        })
                    })
                    .and_then(|a| from.running(a))
                    .map_or_else(|| from.bytes_per_step_at(m), |f| f.bytes_per_step());
                here / fitted
            }
            None => 1.0,
        };
        let b = m * scale;
        let b = if self.regime_segment > 0 {
            b.min(self.regime_segment as f64)
        } else {
            b
        };
        b.round() as u64
    }

    /// The protocol line a [`Shape::Protocols`] fit runs `bytes` with:
    /// the fastest (the first of equals).
    fn fastest(&self, bytes: u64) -> usize {
        let m = bytes as f64;
        let mut best = (0, f64::INFINITY);
        for (i, s) in self.segments.iter().enumerate() {
            let t = self.model.predict(m, s.alpha_s, s.bandwidth_bps);
            if t < best.1 {
                best = (i, t);
            }
        }
        best.0
    }

    /// What the fit runs `bytes` with, in words: "ring LL128" (the
    /// algorithm and the protocol), "pingpong eager", or for regimes
    /// "regime 2" / "between regimes 2 and 3".
    pub fn via(&self, bytes: u64) -> String {
        let algo = self
            .model
            .algo_at(bytes as f64)
            .map_or("pingpong", |a| a.name());
        if self.shape == Shape::Protocols {
            let s = &self.segments[self.fastest(bytes)];
            return format!("{algo} {}", s.protocol.as_deref().unwrap_or("?"));
        }
        // regimes are numbered over the whole fit
        let same = self.same_algorithm(bytes as f64);
        let bytes = self.regime_bytes(bytes as f64);
        let n = same.len();
        // regimes fitted apart at the eager limit say their protocol
        let named = |s: &Segment| {
            s.protocol
                .as_deref()
                .map_or(String::new(), |p| format!(" ({p})"))
        };
        for (i, (k, s)) in same.iter().enumerate() {
            if bytes <= s.max_bytes || i + 1 == n {
                return format!("{algo} regime {}{}", k + 1, named(s));
            }
            if bytes < same[i + 1].1.min_bytes {
                return format!("{algo} between regimes {} and {}", k + 1, same[i + 1].0 + 1);
            }
        }
        unreachable!("a fit has a regime")
    }

    /// Median of |residual| over the fitted points.
    pub fn median_abs_residual(&self) -> f64 {
        median(self.residuals.iter().map(|r| r.1.abs()).collect())
    }
}

/// Why a fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Fewer than two usable points.
    #[error("need at least 2 measurements with positive time to fit, got {0}")]
    TooFewPoints(usize),
    /// The times do not grow with size in any way a bandwidth can explain.
    #[error("the times do not grow with the message size; no bandwidth can be fitted ({0})")]
    NoBandwidth(String),
    /// An eager limit given to a protocol fit.
    #[error(
        "an eager limit breaks size regimes at a configured size; a protocol fit's lines cross \
         where the times say: give --fit regimes with --eager-limit"
    )]
    EagerLimitNeedsRegimes,
}

/// Median of a list (NaN if empty), by statrs.
pub fn median(v: Vec<f64>) -> f64 {
    use statrs::statistics::{Data, Median};
    if v.is_empty() {
        return f64::NAN;
    }
    Data::new(v).median()
}

/// A measured point with the model's latency and bandwidth terms at its
/// size ([`Model::terms`]): the model predicts `s·α + g·β` there.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pt {
    /// Size, bytes.
    m: f64,
    /// Measured time, s.
    t: f64,
    /// Latency terms S(m).
    s: f64,
    /// Bandwidth terms G(m), bytes.
    g: f64,
}

impl Pt {
    /// The model's time with latency `a` and seconds per byte `b`.
    fn at(&self, a: f64, b: f64) -> f64 {
        self.s * a + self.g * b
    }
}

/// Least squares of one regime on relative error. Returns (α, β, SSE).
fn fit_line(pts: &[Pt]) -> (f64, f64, f64) {
    // minimise Σ (a·x1 + b·x2 − 1)², x1 = S/t, x2 = G/t
    let (mut s11, mut s12, mut s22, mut s1, mut s2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in pts {
        let x1 = p.s / p.t;
        let x2 = p.g / p.t;
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        s1 += x1;
        s2 += x2;
    }
    let det = s11 * s22 - s12 * s12;
    let (mut a, mut b) = if det.abs() > 1e-300 * s11.max(1.0) * s22.max(1.0) && det > 0.0 {
        ((s1 * s22 - s2 * s12) / det, (s2 * s11 - s1 * s12) / det)
    } else {
        (f64::NAN, f64::NAN)
    };
    // constrained fits when the free one leaves the physical region
    if !(a >= 0.0 && b > 0.0) {
        // α = 0: b = s2/s22 ; β → 0: a = s1/s11; take the better physical one
        let cand_b = if s22 > 0.0 { s2 / s22 } else { 0.0 };
        let cand_a = if s11 > 0.0 { s1 / s11 } else { 0.0 };
        let sse = |a: f64, b: f64| {
            pts.iter()
                .map(|p| ((p.at(a, b) - p.t) / p.t).powi(2))
                .sum::<f64>()
        };
        // β ≈ 0 reads as latency-only (`sim::profile::LATENCY_ONLY_BPS`)
        let tiny = 1e-30;
        if cand_b > 0.0 && sse(0.0, cand_b) <= sse(cand_a, tiny) {
            a = 0.0;
            b = cand_b;
        } else {
            a = cand_a.max(0.0);
            b = tiny;
        }
    }
    let sse = pts.iter().map(|p| ((p.at(a, b) - p.t) / p.t).powi(2)).sum();
    (a, b, sse)
}

fn r2(pts: &[Pt], a: f64, b: f64) -> f64 {
    use statrs::statistics::Statistics;
    if pts.len() < 3 {
        return f64::NAN;
    }
    let mean = pts.iter().map(|p| p.t).mean();
    let ss_tot: f64 = pts.iter().map(|p| (p.t - mean).powi(2)).sum();
    let ss_res: f64 = pts.iter().map(|p| (p.at(a, b) - p.t).powi(2)).sum();
    if ss_tot == 0.0 {
        f64::NAN
    } else {
        1.0 - ss_res / ss_tot
    }
}

/// Refuses a fit whose every line is latency-only: the times do not grow
/// with the size over sorted `pts`.
fn needs_bandwidth(pts: &[Pt], segments: &[Segment]) -> Result<(), FitError> {
    if segments.iter().all(|s| s.bandwidth().is_none()) {
        return Err(FitError::NoBandwidth(format!(
            "sizes {}..{} bytes",
            pts[0].m,
            pts[pts.len() - 1].m
        )));
    }
    Ok(())
}

/// The points a fit can use (a positive, finite time), by size, with
/// `model`'s terms at each ([`Model::terms`]; S and F·m of its
/// [`Model::structure`] where its time is a straight line in the size);
/// at least two.
fn usable(model: &Model, points: &[(u64, f64)]) -> Result<Vec<Pt>, FitError> {
    let pts = model_points(model, points);
    if pts.len() < 2 {
        return Err(FitError::TooFewPoints(pts.len()));
    }
    Ok(pts)
}

/// `points` of a positive, finite time, by size, each with `model`'s
/// latency and bandwidth terms at its size ([`Pt`]).
fn model_points(model: &Model, points: &[(u64, f64)]) -> Vec<Pt> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.1 > 0.0 && p.1.is_finite())
        .map(|&(m, t)| (m as f64, t))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let st = model.structure();
    let straight = model.is_straight();
    pts.into_iter()
        .map(|(m, t)| {
            let (s, g) = if straight {
                (st.steps, st.bytes * m)
            } else {
                model.terms(m)
            };
            Pt { m, t, s, g }
        })
        .collect()
}

/// Fits `model` to (size bytes, seconds) points with up to `max_segments`
/// size regimes of at least `min_points` points each.
pub fn fit(
    model: Model,
    points: &[(u64, f64)],
    max_segments: usize,
    min_points: usize,
) -> Result<Fit, FitError> {
    let pts = usable(&model, points)?;
    let n = pts.len();
    let min_points = min_points.max(2);
    // a regime stays on one side of every size at which the library
    // changes algorithm where both sides have the points to fit a line;
    // a switch next to a stretch of fewer sizes is not known to the
    // regimes (that stretch joins its neighbours)
    let zones: Vec<usize> = pts.iter().map(|p| model.zone(p.m)).collect();
    let stretches = model.switches().len() + 1;
    let count = |z: usize| zones.iter().filter(|&&x| x == z).count();
    let enforced: Vec<bool> = (0..stretches.saturating_sub(1))
        .map(|k| count(k) >= min_points && count(k + 1) >= min_points)
        .collect();
    // the side of every enforced switch a point lies on
    let side: Vec<usize> = zones
        .iter()
        .map(|&z| {
            enforced[..z.min(enforced.len())]
                .iter()
                .filter(|&&e| e)
                .count()
        })
        .collect();
    let inf = f64::INFINITY;
    // cost[i][j]: SSE of one regime over pts[i..j]
    let seg_cost = |i: usize, j: usize| {
        if side[i] != side[j - 1] {
            inf
        } else {
            fit_line(&pts[i..j]).2
        }
    };
    let kmax = max_segments.max(1).min(n / min_points).max(1);
    // dp[k][j]: best SSE covering pts[..j] with k regimes; back-pointers
    let mut dp = vec![vec![inf; n + 1]; kmax + 1];
    let mut back = vec![vec![0usize; n + 1]; kmax + 1];
    dp[0][0] = 0.0;
    for k in 1..=kmax {
        for j in (k * min_points)..=n {
            for i in ((k - 1) * min_points)..=(j - min_points) {
                if dp[k - 1][i] == inf {
                    continue;
                }
                let c = dp[k - 1][i] + seg_cost(i, j);
                if c < dp[k][j] {
                    dp[k][j] = c;
                    back[k][j] = i;
                }
            }
        }
    }
    // choose k by a BIC-style penalty on relative SSE; relative errors
    // below 0.1% RMS are treated as timer noise, so a regime is never added
    // to chase noise
    let nf = n as f64;
    let score = |k: usize| {
        let sse = dp[k][n].max(nf * 1e-6);
        // k regimes have 3k − 1 parameters: α and β each, and k − 1 breaks
        nf * (sse / nf).ln() + (3 * k - 1) as f64 * nf.ln()
    };
    let best_k = (1..=kmax)
        .filter(|&k| dp[k][n] < inf)
        .min_by(|&a, &b| score(a).total_cmp(&score(b)))
        .unwrap_or(1);
    let mut bounds = Vec::new();
    let mut j = n;
    for k in (1..=best_k).rev() {
        let i = back[k][j];
        bounds.push((i, j));
        j = i;
    }
    bounds.reverse();
    let mut segments = Vec::new();
    let mut residuals = Vec::new();
    for (i, j) in bounds {
        let seg = &pts[i..j];
        // a regime whose time does not grow with size (pure latency) gets
        // β ≈ 0, i.e. a bandwidth so high it never matters
        let (a, b, _) = fit_line(seg);
        for p in seg {
            residuals.push((p.m as u64, (p.at(a, b) - p.t) / p.t));
        }
        segments.push(Segment {
            min_bytes: seg[0].m as u64,
            max_bytes: seg[seg.len() - 1].m as u64,
            alpha_s: a,
            bandwidth_bps: 1.0 / b,
            points: seg.len(),
            r2: r2(seg, a, b),
            protocol: None,
        });
    }
    needs_bandwidth(&pts, &segments)?;
    Ok(Fit {
        model,
        shape: Shape::Regimes,
        sharpness: f64::INFINITY,
        regime_segment: 0,
        regime_from: None,
        eager_limit: 0,
        segments,
        residuals,
    })
}

/// The MPI protocol a message of `bytes` goes by under the transport's
/// eager limit `eager` (> 0; [`Algos::with_eager_limit`]).
fn rendezvous_protocol(bytes: f64, eager: u64) -> &'static str {
    if bytes >= eager as f64 {
        "rendezvous"
    } else {
        "eager"
    }
}

/// [`fit`], knowing the transport's eager limit `eager` (bytes; 0: not
/// known, [`fit`] itself): the sizes whose messages
/// ([`Model::bytes_per_step_at`]) go eagerly and those that go by
/// rendezvous are fitted apart, each in up to `max_segments` regimes
/// named after their protocol, since the library changes protocol there
/// whatever the times say. A protocol with fewer than `min_points` sizes
/// (the one size above the limit of a sweep fitted on every other size)
/// cannot fit a line of its own: its regime takes the bandwidth of the
/// other protocol's nearest regime, the wire being the same, and fits its
/// latency (the handshake's round trip, or the eager copies', added to
/// each step) through its points.
pub fn fit_with_eager_limit(
    model: Model,
    points: &[(u64, f64)],
    max_segments: usize,
    min_points: usize,
    eager: u64,
) -> Result<Fit, FitError> {
    if eager == 0 {
        return fit(model, points, max_segments, min_points);
    }
    let usable_pts: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|p| p.1 > 0.0 && p.1.is_finite())
        .collect();
    let protocol =
        |m: u64| rendezvous_protocol(m as f64 * model.bytes_per_step_at(m as f64), eager);
    let (rndv, eagerly): (Points, Points) = usable_pts
        .iter()
        .partition(|p| protocol(p.0) == "rendezvous");
    let min_points = min_points.max(2);
    let named = |mut f: Fit, name: &str| {
        for s in &mut f.segments {
            s.protocol = Some(name.to_string());
        }
        f.eager_limit = eager;
        f
    };
    let big = |v: &Vec<(u64, f64)>| v.len() >= min_points;
    let mut f = match (big(&eagerly), big(&rndv)) {
        // one protocol has too few sizes to say anything of the other
        (false, false) => return fit(model, points, max_segments, min_points),
        (true, false) if rndv.is_empty() => {
            named(fit(model, &eagerly, max_segments, min_points)?, "eager")
        }
        (false, true) if eagerly.is_empty() => {
            named(fit(model, &rndv, max_segments, min_points)?, "rendezvous")
        }
        (true, true) => {
            let mut a = named(fit(model, &eagerly, max_segments, min_points)?, "eager");
            let b = named(fit(model, &rndv, max_segments, min_points)?, "rendezvous");
            a.segments.extend(b.segments);
            a.residuals.extend(b.residuals);
            a
        }
        // one protocol fits lines of its own; the other's few sizes take
        // the bandwidth of its nearest regime
        (true, false) => lend(
            named(fit(model, &eagerly, max_segments, min_points)?, "eager"),
            &rndv,
            "rendezvous",
        )?,
        (false, true) => lend(
            named(fit(model, &rndv, max_segments, min_points)?, "rendezvous"),
            &eagerly,
            "eager",
        )?,
    };
    f.segments.sort_by_key(|s| s.min_bytes);
    f.residuals.sort_by_key(|r| r.0);
    Ok(f)
}

/// `fitted` with a regime of protocol `name` for the few sizes `few`:
/// the bandwidth of `fitted`'s regime nearest them, and the latency
/// through them ([`latency_through`]).
fn lend(mut fitted: Fit, few: &[(u64, f64)], name: &str) -> Result<Fit, FitError> {
    let near = nearest_regime(&fitted.segments, few);
    let bandwidth = fitted.segments[near].bandwidth_bps;
    let (seg, res) = latency_through(&fitted.model, few, bandwidth, name)?;
    fitted.segments.push(seg);
    fitted.residuals.extend(res);
    Ok(fitted)
}

/// The regime of `segments` nearest in size to `pts` (by the log of the
/// size, between their ranges).
fn nearest_regime(segments: &[Segment], pts: &[(u64, f64)]) -> usize {
    let mid = pts.iter().map(|p| (p.0.max(1) as f64).ln()).sum::<f64>() / pts.len().max(1) as f64;
    let gap = |s: &Segment| {
        let (lo, hi) = (
            (s.min_bytes.max(1) as f64).ln(),
            (s.max_bytes.max(1) as f64).ln(),
        );
        (lo - mid).max(mid - hi).max(0.0)
    };
    (0..segments.len())
        .min_by(|&i, &j| gap(&segments[i]).total_cmp(&gap(&segments[j])))
        .unwrap_or(0)
}

/// One regime of protocol `name` through `pts` (fewer than a line needs)
/// with the bandwidth `bandwidth_bps`: the latency that minimises their
/// relative error, at least 0. The regime and its points' residuals.
fn latency_through(
    model: &Model,
    pts: &[(u64, f64)],
    bandwidth_bps: f64,
    name: &str,
) -> Result<(Segment, Vec<(u64, f64)>), FitError> {
    // a single point is what this is for
    let pts = model_points(model, pts);
    if pts.is_empty() {
        return Err(FitError::TooFewPoints(0));
    }
    let b = 1.0 / bandwidth_bps;
    // minimise Σ ((s·α + g·β − t)/t)² over α, β fixed
    let (num, den) = pts.iter().fold((0.0, 0.0), |(n, d), p| {
        let x = p.s / p.t;
        (n + x * (1.0 - p.g * b / p.t), d + x * x)
    });
    let a = if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    let residuals = pts
        .iter()
        .map(|p| (p.m as u64, (p.at(a, b) - p.t) / p.t))
        .collect();
    Ok((
        Segment {
            min_bytes: pts[0].m as u64,
            max_bytes: pts[pts.len() - 1].m as u64,
            alpha_s: a,
            bandwidth_bps,
            points: pts.len(),
            r2: r2(&pts, a, b),
            protocol: Some(name.to_string()),
        },
        residuals,
    ))
}

/// The most protocols a [`Shape::Protocols`] fit uses: NCCL has three
/// (LL, LL128, Simple).
pub const MAX_PROTOCOLS: usize = 3;

/// The sharpnesses q a [`Shape::Protocols`] fit tries: ∞, the plain
/// minimum, and blends that round each switch from one protocol to the
/// next ([`blend`]).
pub const SHARPNESS: [f64; 5] = [f64::INFINITY, 16.0, 8.0, 4.0, 2.0];

/// The time of the fastest of `times`, with the switch rounded by the
/// sharpness `q`: `(Σ tₚ^(−q))^(−1/q)`, the plain minimum at q = ∞ and at
/// most 2^(−1/q) below it where two protocols tie. A library does not
/// switch protocol at one size for every buffer: NCCL also grows the
/// channels it uses with the size and pipelines chunks of one protocol
/// while the other's last ones drain, so measured times run below both
/// lines near a switch; q measures how far.
pub fn blend(times: impl Iterator<Item = f64> + Clone, q: f64) -> f64 {
    let low = times.clone().fold(f64::INFINITY, f64::min);
    if q.is_infinite() || low.is_nan() || low <= 0.0 {
        return low;
    }
    // the sharpnesses tried are powers of two (SHARPNESS): powers by
    // multiplication and roots by square roots, which a fit calls millions
    // of times on a long log, in place of `powf`
    if let Some(halvings) = [2.0, 4.0, 8.0, 16.0].iter().position(|&x| x == q) {
        let s: f64 = times.map(|t| (low / t).powi(q as i32)).sum();
        let mut root = s;
        for _ in 0..=halvings {
            root = root.sqrt();
        }
        return low / root;
    }
    let s: f64 = times.map(|t| (t / low).powf(-q)).sum();
    low * s.powf(-1.0 / q)
}

/// Relative SSE of the blended lower envelope of `lines` (α, β pairs)
/// with sharpness `q` over `pts`.
fn envelope_sse(pts: &[Pt], lines: &[(f64, f64)], q: f64) -> f64 {
    pts.iter()
        .map(|p| {
            let e = blend(lines.iter().map(|&(a, b)| p.at(a, b)), q);
            ((e - p.t) / p.t).powi(2)
        })
        .sum()
}

/// Solves the small dense system `a·x = b` by Gaussian elimination with
/// partial pivoting; `None` if it is singular.
pub(crate) fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].is_nan() || a[piv][col].abs() <= 1e-300 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        let (top, rest) = a.split_at_mut(col + 1);
        let pivot = &top[col];
        for (k, row) in rest.iter_mut().enumerate() {
            let f = row[col] / pivot[col];
            for (x, &y) in row.iter_mut().zip(pivot).skip(col) {
                *x -= f * y;
            }
            b[col + 1 + k] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r][c] * x[c]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Refits `lines` for the blend of sharpness `q` by Levenberg–Marquardt
/// on the relative residuals, over ln α and ln β (which keeps both
/// positive). Returns the lines and their SSE.
fn refine_blend(pts: &[Pt], lines: &[(f64, f64)], q: f64) -> (Vec<(f64, f64)>, f64) {
    let t_min = pts.iter().map(|p| p.t).fold(f64::INFINITY, f64::min);
    let steps = pts.iter().map(|p| p.s).fold(1.0, f64::max);
    let floor_a = 1e-6 * t_min / steps;
    let mut theta: Vec<f64> = lines
        .iter()
        .flat_map(|&(a, b)| [a.max(floor_a).ln(), b.max(1e-30).ln()])
        .collect();
    let unpack = |th: &[f64]| -> Vec<(f64, f64)> {
        th.chunks(2).map(|c| (c[0].exp(), c[1].exp())).collect()
    };
    let residuals = |th: &[f64]| -> Vec<f64> {
        let l = unpack(th);
        pts.iter()
            .map(|p| (blend(l.iter().map(|&(a, b)| p.at(a, b)), q) - p.t) / p.t)
            .collect()
    };
    let cost = |r: &[f64]| r.iter().map(|x| x * x).sum::<f64>();
    let p = theta.len();
    let mut r = residuals(&theta);
    let mut c = cost(&r);
    let mut lambda = 1e-3;
    for _ in 0..200 {
        // numerical Jacobian, central differences in log space
        let h = 1e-6;
        let mut jac = vec![vec![0.0; p]; r.len()];
        for j in 0..p {
            let (mut up, mut down) = (theta.clone(), theta.clone());
            up[j] += h;
            down[j] -= h;
            let (ru, rd) = (residuals(&up), residuals(&down));
            for i in 0..r.len() {
                jac[i][j] = (ru[i] - rd[i]) / (2.0 * h);
            }
        }
        let mut jtj = vec![vec![0.0; p]; p];
        let mut jtr = vec![0.0; p];
        for (row, &ri) in jac.iter().zip(&r) {
            for a in 0..p {
                jtr[a] -= row[a] * ri;
                for b in 0..p {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let mut stepped = false;
        while lambda < 1e12 {
            let mut damped = jtj.clone();
            for (k, row) in damped.iter_mut().enumerate() {
                row[k] += lambda * jtj[k][k].max(1e-12);
            }
            if let Some(d) = solve(damped, jtr.clone()) {
                let next: Vec<f64> = theta.iter().zip(&d).map(|(t, d)| t + d).collect();
                let rn = residuals(&next);
                let cn = cost(&rn);
                if cn < c {
                    let gain = (c - cn) / c.max(1e-300);
                    theta = next;
                    r = rn;
                    c = cn;
                    lambda = (lambda / 3.0).max(1e-12);
                    stepped = gain > 1e-10;
                    break;
                }
            }
            lambda *= 4.0;
        }
        if !stepped {
            break;
        }
    }
    (unpack(&theta), c)
}

/// The line of `lines` that is lowest at `p` (the first of equals).
fn lowest(lines: &[(f64, f64)], p: &Pt) -> usize {
    let mut best = (0, f64::INFINITY);
    for (i, &(a, b)) in lines.iter().enumerate() {
        let t = p.at(a, b);
        if t < best.1 {
            best = (i, t);
        }
    }
    best.0
}

/// Cut positions a split search tries at most (per cut).
const SPLIT_GRID: usize = 48;

/// The best lower envelope of `k` lines over sorted `pts`: every split of
/// the sizes into k contiguous groups of at least [`MIN_POINTS`] points
/// (the lowest line of an envelope of lines of falling slope runs over a
/// contiguous range of sizes) gives a line per group; the split whose
/// envelope has the smallest SSE is kept, then refined by refitting each
/// line on the points it is lowest at until the SSE stops falling. Lines
/// lowest at no point are dropped. Returns the lines by falling β
/// (rising bandwidth).
fn best_envelope(pts: &[Pt], k: usize) -> Vec<(f64, f64)> {
    let n = pts.len();
    let mut best: (f64, Vec<(f64, f64)>) = (f64::INFINITY, Vec::new());
    // cuts[0] = 0 < cuts[1] < … < cuts[k] = n, groups of ≥ MIN_POINTS
    let mut cuts = vec![0usize; k + 1];
    fn splits(
        n: usize,
        k: usize,
        at: usize,
        cuts: &mut Vec<usize>,
        each: &mut dyn FnMut(&[usize]),
    ) {
        if at == k {
            if n - cuts[k - 1] >= MIN_POINTS {
                cuts[k] = n;
                each(cuts);
            }
            return;
        }
        let lo = cuts[at - 1] + MIN_POINTS;
        let hi = n.saturating_sub(MIN_POINTS * (k - at));
        // at most about SPLIT_GRID positions a cut: a long sweep (nccl-tests
        // without -f steps sizes linearly) is searched on a grid, which
        // the refinement below then moves point by point
        let stride = n.div_ceil(SPLIT_GRID).max(1);
        let mut c = lo;
        while c <= hi {
            cuts[at] = c;
            splits(n, k, at + 1, cuts, each);
            c += stride;
        }
    }
    splits(n, k, 1, &mut cuts, &mut |c: &[usize]| {
        let lines: Vec<(f64, f64)> = c
            .windows(2)
            .map(|w| {
                let (a, b, _) = fit_line(&pts[w[0]..w[1]]);
                (a, b)
            })
            .collect();
        let sse = envelope_sse(pts, &lines, f64::INFINITY);
        if sse < best.0 {
            best = (sse, lines);
        }
    });
    let (mut sse, mut lines) = best;
    // refine: each line refitted on the points it is lowest at
    for _ in 0..50 {
        let mut groups: Vec<Vec<Pt>> = vec![Vec::new(); lines.len()];
        for p in pts {
            groups[lowest(&lines, p)].push(*p);
        }
        let next: Vec<(f64, f64)> = lines
            .iter()
            .zip(&groups)
            .map(|(&l, g)| {
                if g.len() >= MIN_POINTS {
                    let (a, b, _) = fit_line(g);
                    (a, b)
                } else {
                    l
                }
            })
            .collect();
        let s = envelope_sse(pts, &next, f64::INFINITY);
        if s < sse * (1.0 - 1e-12) {
            sse = s;
            lines = next;
        } else {
            break;
        }
    }
    let mut used: Vec<bool> = vec![false; lines.len()];
    for p in pts {
        used[lowest(&lines, p)] = true;
    }
    let mut lines: Vec<(f64, f64)> = lines
        .into_iter()
        .zip(used)
        .filter(|l| l.1)
        .map(|l| l.0)
        .collect();
    lines.sort_by(|a, b| b.1.total_cmp(&a.1));
    lines
}

/// The `k` protocol lines of sharpness `q` fitted to `pts` from the
/// plain envelope `hard` ([`best_envelope`]'s), and their SSE: infinite
/// when a line is the fastest at none of the points (a protocol that never
/// runs; in a blend such a line would only bend its neighbours' switch,
/// which is the sharpness's job).
fn envelope(pts: &[Pt], hard: &[(f64, f64)], k: usize, q: f64) -> (Vec<(f64, f64)>, f64) {
    let (lines, sse) = if q.is_infinite() {
        (hard.to_vec(), envelope_sse(pts, hard, q))
    } else {
        refine_blend(pts, hard, q)
    };
    let mut used = vec![false; lines.len()];
    for p in pts {
        used[lowest(&lines, p)] = true;
    }
    let sse = if lines.len() == k && used.iter().all(|&u| u) {
        sse
    } else {
        f64::INFINITY
    };
    (lines, sse)
}

/// Folds of the cross-validation: each point alone up to this many
/// points (leave-one-out), this many interleaved folds beyond.
const FOLDS: usize = 16;

/// Cross-validated SSE of `k` lines at each sharpness of [`SHARPNESS`]:
/// each size but the smallest and the largest predicted by the fit to the
/// sizes outside its fold (leave-one-out up to [`FOLDS`] such sizes;
/// beyond, [`FOLDS`] interleaved folds, every FOLDS-th size in one);
/// infinite where a fold leaves too few points to fit k lines or a fit
/// leaves a line unused, or with fewer than 3 points.
fn cross_validated(pts: &[Pt], k: usize) -> [f64; SHARPNESS.len()] {
    let n = pts.len();
    // the smallest and largest sizes are always fitted: left out, they
    // would be extrapolated, not predicted between measured sizes, and
    // one such miss would outweigh every other fold
    let interior = n.saturating_sub(2);
    let folds = interior.min(FOLDS);
    if folds == 0 {
        return [f64::INFINITY; SHARPNESS.len()];
    }
    let mut score = [0.0; SHARPNESS.len()];
    for f in 0..folds {
        let held = |i: usize| i > 0 && i + 1 < n && (i - 1) % folds == f;
        let (mut out, mut rest) = (Vec::new(), Vec::new());
        for (i, &p) in pts.iter().enumerate() {
            if held(i) {
                out.push(p);
            } else {
                rest.push(p);
            }
        }
        if rest.len() < k * MIN_POINTS {
            return [f64::INFINITY; SHARPNESS.len()];
        }
        let hard = best_envelope(&rest, k);
        for (s, &q) in score.iter_mut().zip(&SHARPNESS) {
            let (lines, sse) = envelope(&rest, &hard, k, q);
            *s += if sse.is_finite() {
                envelope_sse(&out, &lines, q)
            } else {
                f64::INFINITY
            };
        }
    }
    score
}

/// Fits `model` to (size bytes, seconds) points as the fastest of up to
/// [`MAX_PROTOCOLS`] protocols ([`Shape::Protocols`]), the protocols named
/// after `library`'s.
pub fn fit_protocols(
    model: Model,
    points: &[(u64, f64)],
    library: Library,
) -> Result<Fit, FitError> {
    let pts = usable(&model, points)?;
    let n = pts.len();
    let kmax = MAX_PROTOCOLS.min(n / MIN_POINTS).max(1);
    let nf = n as f64;
    // each (protocols, sharpness) candidate is scored by how well it
    // predicts each fitted size when fitted without it (cross-validation),
    // the error a user of the fit meets between measured sizes; scores are
    // floored at 0.1% RMS (timer noise), and a richer candidate (more
    // protocols, or a rounded switch) must predict better by 0.1% of the
    // score to be chosen over a simpler one (closer scores are a tie of
    // rounding, which the simpler candidate wins on every platform)
    let floor = nf * 1e-6;
    let mut candidates: Vec<(f64, usize, f64)> = Vec::new();
    for k in 1..=kmax {
        let scores = cross_validated(&pts, k);
        for (&q, &s) in SHARPNESS.iter().zip(&scores) {
            // one protocol has no switch to round
            if k == 1 && q.is_finite() {
                continue;
            }
            candidates.push((s.max(floor), k, q));
        }
    }
    // simplest first (as enumerated), each replacing the best so far only
    // by a clear margin; then the full-data fit of the choice, falling
    // back to the next best where it leaves a protocol unused
    let mut order: Vec<usize> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        match order.last() {
            Some(&b) if c.0 >= candidates[b].0 * 0.999 => {}
            _ if c.0.is_finite() || order.is_empty() => order.push(i),
            _ => {}
        }
    }
    let mut chosen = None;
    for &i in order.iter().rev() {
        let (_, k, q) = candidates[i];
        let hard = best_envelope(&pts, k);
        let (lines, sse) = envelope(&pts, &hard, k, q);
        if sse.is_finite() || k == 1 {
            chosen = Some((lines, q));
            break;
        }
    }
    let (lines, sharpness) = chosen.unwrap_or_else(|| (best_envelope(&pts, 1), f64::INFINITY));
    let mut lines = lines;
    lines.sort_by(|a, b| b.1.total_cmp(&a.1));
    let names = library.protocols(lines.len());
    let mut groups: Vec<Vec<Pt>> = vec![Vec::new(); lines.len()];
    for p in &pts {
        groups[lowest(&lines, p)].push(*p);
    }
    let mut residuals: Vec<(u64, f64)> = pts
        .iter()
        .map(|p| {
            let e = blend(lines.iter().map(|&(a, b)| p.at(a, b)), sharpness);
            (p.m as u64, (e - p.t) / p.t)
        })
        .collect();
    residuals.sort_by_key(|r| r.0);
    let segments: Vec<Segment> = lines
        .iter()
        .zip(&groups)
        .zip(names)
        .map(|((&(a, b), g), name)| Segment {
            min_bytes: g.first().map_or(0, |p| p.m as u64),
            max_bytes: g.last().map_or(0, |p| p.m as u64),
            alpha_s: a,
            bandwidth_bps: 1.0 / b,
            points: g.len(),
            r2: r2(g, a, b),
            protocol: Some((*name).to_string()),
        })
        .collect();
    needs_bandwidth(&pts, &segments)?;
    Ok(Fit {
        model,
        shape: Shape::Protocols,
        sharpness,
        regime_segment: 0,
        regime_from: None,
        eager_limit: 0,
        segments,
        residuals,
    })
}

/// Measured (size bytes, seconds) points.
pub type Points = Vec<(u64, f64)>;

/// The regime settings every fit of dtsim uses, in `calibrate` and in
/// `validate` alike, so that what is validated is what profiles contain:
/// up to 8 regimes of at least 2 points. NCCL changes algorithm, protocol
/// and channel count several times over a size sweep, so regimes may be
/// short; the BIC penalty keeps them from chasing noise.
pub const MAX_REGIMES: usize = 8;
/// See [`MAX_REGIMES`].
pub const MIN_POINTS: usize = 2;

/// Why a (size bytes, seconds) point measures no message, if it does not:
/// a size of 0, for which the library returns at once (nccl-tests' first
/// rows), or a time of 0, under the log's resolution. Such points are
/// kept out of every fit and held-out set, and listed with this reason.
pub fn unmeasured(size_bytes: u64, time_s: f64) -> Option<&'static str> {
    if size_bytes == 0 {
        Some("size 0: nothing is sent (the library returns at once), so it measures no message")
    } else if time_s.is_nan() || time_s <= 0.0 {
        Some("a time of 0: under the log's resolution, not a measurement")
    } else {
        None
    }
}

/// A fit of `shape` ([`fit_protocols`], or [`fit_with_eager_limit`]
/// with dtsim's regime settings and the transport's eager limit `eager`,
/// bytes, 0 where not known; `None`: the library's
/// [`Library::default_shape`]), after [`screen`]ing anomalies out.
/// Returns the fit and the screened-out points.
///
/// # Errors
/// Too few points, no size that shows the bandwidth, or an eager limit
/// given to a protocol fit, whose lines cross where the times say, not at
/// a configured size ([`FitError::EagerLimitNeedsRegimes`]).
pub fn fit_measurements(
    model: Model,
    points: &[(u64, f64)],
    shape: Option<Shape>,
    library: Library,
    eager: u64,
) -> Result<(Fit, Vec<(u64, f64)>), FitError> {
    // points that measure no message never reach the fit
    let (none, measured): (Points, Points) =
        points.iter().partition(|p| unmeasured(p.0, p.1).is_some());
    let (kept, mut dropped) = screen_for(&model, &measured);
    dropped.extend(none);
    dropped.sort_by_key(|p| p.0);
    let f = match shape.unwrap_or(library.default_shape()) {
        Shape::Protocols if eager > 0 => return Err(FitError::EagerLimitNeedsRegimes),
        Shape::Protocols => fit_protocols(model, &kept, library)?,
        Shape::Regimes => fit_with_eager_limit(model, &kept, MAX_REGIMES, MIN_POINTS, eager)?,
    };
    Ok((f, dropped))
}

/// Why [`screen`] kept each of `dropped` out of a fit of `points`: its
/// throughput against the best at a smaller size, in words.
pub fn screen_reasons(model: &Model, points: &[(u64, f64)], dropped: &[(u64, f64)]) -> Vec<String> {
    dropped
        .iter()
        .map(|&(m, t)| {
            if let Some(why) = unmeasured(m, t) {
                return why.to_string();
            }
            let zone = model.zone(m as f64);
            let best = points
                .iter()
                .filter(|p| p.0 < m && p.1 > 0.0 && model.zone(p.0 as f64) == zone)
                .map(|p| p.0 as f64 / p.1)
                .fold(0.0f64, f64::max);
            let thr = if t > 0.0 { m as f64 / t } else { 0.0 };
            format!(
                "its throughput, {}, is under 60% of the best at a smaller size, {} (a measurement anomaly: swapping, a competing job, a throttled link)",
                sim::units::HumanRate(thr),
                sim::units::HumanRate(best)
            )
        })
        .collect()
}

/// Separates measurement anomalies from a size sweep: a point of at least
/// 1 MiB whose throughput (size/time) is below 60% of the best throughput
/// at any smaller size. Bandwidth does not fall by half as messages grow;
/// when a log shows it (swapping, a competing job, a throttled link), the
/// point measures the anomaly, not the network, and fitting through it
/// would drag the largest regime off. Screened points are still predicted
/// and reported by validation; they are only kept out of the fit.
pub fn screen(points: &[(u64, f64)]) -> (Points, Points) {
    screen_for(&Model::PointToPoint, points)
}

/// [`screen`] for measurements `model` makes: a selection
/// ([`Model::switches`]) may run a slower algorithm from its switch on
/// (MPICH's ring after its recursive doubling), so a point is compared
/// with the smaller sizes that ran the same algorithm only.
pub fn screen_for(model: &Model, points: &[(u64, f64)]) -> (Points, Points) {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    let mut best = 0.0f64;
    let mut zone = 0;
    for (m, t) in sorted {
        let z = model.zone(m as f64);
        if z != zone {
            (zone, best) = (z, 0.0);
        }
        let thr = if t > 0.0 { m as f64 / t } else { 0.0 };
        if m >= 1 << 20 && thr < 0.6 * best {
            dropped.push((m, t));
        } else {
            kept.push((m, t));
        }
        best = best.max(thr);
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Broadcast is fitted as the binomial tree, whose time is linear in
    /// the size (⌈log2 8⌉ = 3 steps of the whole buffer), so the structure
    /// read at 0 and 1 byte predicts 4 MiB too; the pipelined ring, whose
    /// F falls with the size, would miss it.
    #[test]
    fn broadcast_is_fitted_as_a_linear_model() {
        let m = Model::for_op("broadcast", 8).unwrap();
        let s = m.structure();
        assert!(
            (s.steps - 3.0).abs() < 1e-9 && (s.bytes - 3.0).abs() < 1e-9,
            "{s:?}"
        );
        let (alpha, b, bytes) = (2e-6, 1e10, 4.0 * 1048576.0);
        let linear = s.steps * alpha + s.bytes * bytes / b;
        assert!((m.predict(bytes, alpha, b) - linear).abs() < 1e-12 * linear);
    }

    /// A message of an AlltoAll is a block, m/N, whichever algorithm sends
    /// it: the pairwise exchange one a step (F/S), the linear one all N −
    /// 1 at once (its F/S would be (N − 1)/N); Bruck's sends c_k blocks a
    /// step, m/2 on 8 ranks. Open MPI's selection takes the message of the
    /// algorithm it runs at each size (linear below 2 MiB on 4 ranks,
    /// pairwise to 4 MiB).
    #[test]
    fn an_alltoalls_message_is_a_block() {
        let model = |algo: &str, ranks| {
            Algos::parse(&[format!("alltoall={algo}")])
                .unwrap()
                .model("alltoall", ranks)
                .unwrap()
        };
        for ranks in [4u32, 8] {
            for algo in ["pairwise", "linear"] {
                let m = model(algo, ranks).bytes_per_step();
                assert!(
                    (m - 1.0 / ranks as f64).abs() < 1e-12,
                    "{algo} {ranks}: {m}"
                );
            }
        }
        assert!((model("bruck", 8).bytes_per_step() - 0.5).abs() < 1e-12);
        let ompi = model("ompi", 4);
        for (m, want) in [(1e6, 0.25), (3e6, 0.25), (5e6, 0.25)] {
            assert!((ompi.bytes_per_step_at(m) - want).abs() < 1e-12, "{m}");
        }
    }

    /// A broadcast's message down Open MPI's trees is the whole buffer
    /// (a segment of it, segmented), though a step sends it to several
    /// children at once (F/S is N − 1 for basic linear on 8 ranks, 2.5
    /// for 4 chains on 9); the split binary tree's is a half; the
    /// textbook binomial's, one child a step, the buffer by F/S; the
    /// decision's at each size that of the algorithm it runs.
    #[test]
    fn a_broadcasts_message_is_the_buffer() {
        let model = |algo: &str, ranks| {
            Algos::parse(&[format!("broadcast={algo}")])
                .unwrap()
                .model("broadcast", ranks)
                .unwrap()
        };
        for ranks in [4u32, 8, 9] {
            for (algo, want) in [
                ("linear", 1.0),
                ("chain", 1.0),
                ("pipeline", 1.0),
                ("binary-tree", 1.0),
                ("knomial", 1.0),
                ("ompi-binomial", 1.0),
                ("binomial", 1.0),
                ("split-binary-tree", 0.5),
            ] {
                let m = model(algo, ranks).bytes_per_step();
                assert!((m - want).abs() < 1e-12, "{algo} {ranks}: {m}");
            }
        }
        // F/S for the linear broadcast: 7 sends in one step
        let st = model("linear", 8).structure();
        assert!((st.bytes / st.steps - 7.0).abs() < 1e-12);
        let ompi = model("ompi", 8);
        for m in [1e3, 1e5, 4e6] {
            assert!((ompi.bytes_per_step_at(m) - 1.0).abs() < 1e-12, "{m}");
        }
    }

    /// `--algo OP=ALGO`: an algorithm the operation has and whose time is
    /// linear in its latency and bandwidth replaces the fit's default for
    /// that operation alone; anything else is refused with what is wrong.
    #[test]
    fn named_algorithms_replace_the_default_where_they_can_be_fitted() {
        let spec = |s: &str| Algos::parse(&[s.to_string()]);
        let a = spec("broadcast=ompi-binomial").unwrap();
        assert!(matches!(
            a.model("broadcast", 8),
            Some(Model::Collective {
                algo: Algo::OmpiBinomial,
                ..
            })
        ));
        // other operations keep their default; a point-to-point stays one
        assert_eq!(a.model("allreduce", 8), Model::for_op("allreduce", 8));
        assert_eq!(a.model("pingpong", 2), Some(Model::PointToPoint));
        assert!(Algos::default().is_empty() && !a.is_empty());
        // 3α + 6·m/B on 8 ranks of one link class (docs/calibration.md)
        let st = a.model("broadcast", 8).unwrap().structure();
        assert!(
            (st.steps - 3.0).abs() < 1e-9 && (st.bytes - 6.0).abs() < 1e-9,
            "{st:?}"
        );
        for (bad, says) in [
            ("broadcast", "give OP=ALGO"),
            ("bcast=binomial", "unknown operation `bcast`"),
            ("broadcast=fast", "unknown algorithm `fast`"),
            ("broadcast=nvls", "broadcast has no `nvls` algorithm"),
            ("allreduce=sharp", "where `sharp` cannot run"),
            ("allreduce=nvls-tree", "where `nvls-tree` cannot run"),
            (
                "broadcast=binomial:64KiB",
                "applies to the broadcasts down Open MPI's trees",
            ),
            ("broadcast=linear:64KiB", "not to broadcast=linear"),
            ("broadcast=ompi-binomial:0", "at least 1 byte"),
            ("broadcast=ompi-binomial:lots", "segment size `lots`"),
            ("broadcast=knomial/1", "1 is not a k-nomial radix"),
            ("broadcast=ompi/0:64KiB", "0 is not a k-nomial radix"),
            ("broadcast=chain/0", "at least 1 chain"),
            ("broadcast=binomial/3", "not to broadcast=binomial"),
            ("allreduce=ring/3", "not to allreduce=ring"),
            (
                "broadcast=knomial/x",
                "the fanout `x` is not a whole number",
            ),
            ("alltoall=scattered/0", "at least 1 destination a batch"),
            ("alltoall=pairwise/4", "not to alltoall=pairwise"),
            ("alltoall=linear/4", "not to alltoall=linear"),
        ] {
            let e = spec(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // Open MPI's chains and k-nomial tree of another fanout, on 8
        // ranks of one link class: the k-nomial tree of radix 2 takes as
        // long as its binomial tree (the same shape, numbered the other
        // way); of radix 8, and 7 chains, the root sending to
        // all at once (α + 7·m/B); one chain, the pipeline (7α + 7·m/B)
        for (name, steps, bytes) in [
            ("broadcast=knomial/2", 3.0, 6.0),
            ("broadcast=knomial/8", 1.0, 7.0),
            ("broadcast=chain/7", 1.0, 7.0),
            ("broadcast=chain/1", 7.0, 7.0),
            // 4 chains of 2 members (the default): 4·m/B, then one more
            ("broadcast=chain", 2.0, 5.0),
        ] {
            let st = spec(name)
                .unwrap()
                .model("broadcast", 8)
                .unwrap()
                .structure();
            assert!(
                (st.steps - steps).abs() < 1e-9 && (st.bytes - bytes).abs() < 1e-9,
                "{name}: {st:?}"
            );
        }
        let k = spec("broadcast=knomial/2:64KiB").unwrap();
        assert!(matches!(
            k.model("broadcast", 8),
            Some(Model::Collective {
                algo: Algo::Knomial,
                segment: 65536,
                fanout: 2,
                ..
            })
        ));
        assert_eq!(
            k.notes(),
            ["fitted with broadcast=knomial/2:65536 (--algo; radix 2; segments of 65536 bytes)"]
        );
        assert_eq!(
            spec("broadcast=chain/8").unwrap().notes(),
            ["fitted with broadcast=chain/8 (--algo; 8 chains)"]
        );
        // MPICH's scattered exchange in batches of 2 destinations on 8
        // ranks: distances {1}, {2, 3}, {4, 5}, {6, 7}, a step each
        let sc = spec("alltoall=scattered/2").unwrap();
        let st = sc.model("alltoall", 8).unwrap().structure();
        assert!(
            (st.steps - 4.0).abs() < 1e-9 && (st.bytes - 7.0 / 8.0).abs() < 1e-9,
            "{st:?}"
        );
        assert_eq!(
            sc.notes(),
            ["fitted with alltoall=scattered/2 (--algo; batches of 2)"]
        );
        // Open MPI's linear_sync with 3 requests outstanding on 8 ranks:
        // distances {1, 2, 3}, {4, 5, 6}, {7}; with 0 (no limit) the
        // linear exchange's one step; its decision with 3 runs it for 4
        // KiB blocks (a switch where it turns to basic linear, at 256 KiB
        // a block), and says so
        for (name, steps) in [
            ("alltoall=linear-sync/3", 3.0),
            ("alltoall=linear-sync/0", 1.0),
            ("alltoall=linear-sync", 1.0),
            ("alltoall=ompi/3", 3.0),
        ] {
            let m = spec(name).unwrap().model("alltoall", 8).unwrap();
            let (st, g) = m.terms(32_768.0);
            assert!(
                (st - steps).abs() < 1e-9 && (g - 7.0 / 8.0 * 32_768.0).abs() < 1e-6,
                "{name}: {st} {g}"
            );
        }
        let ls = spec("alltoall=ompi/3").unwrap();
        let m = ls.model("alltoall", 8).unwrap();
        assert_eq!(m.switches(), [2_097_152.0]);
        assert_eq!(m.algo_at(32_768.0), Some(Algo::LinearSync));
        assert_eq!(m.algo_at(4e6), Some(Algo::Linear));
        assert_eq!(m.bytes_per_step_at(32_768.0), 1.0 / 8.0);
        assert_eq!(
            ls.notes(),
            ["fitted with alltoall=ompi/3 (--algo; 3 requests outstanding)"]
        );
        // named twice: the last wins
        let twice = Algos::parse(&[
            "broadcast=ompi-binomial".to_string(),
            "broadcast=binomial".to_string(),
        ])
        .unwrap();
        assert_eq!(twice.model("broadcast", 8), Model::for_op("broadcast", 8));
    }

    /// Open MPI's segmented broadcast and NCCL's pipelined tree are not
    /// straight lines in the size (their segment or piece count grows
    /// with it) but are linear in α and 1/B at every size, so a fit reads
    /// their terms there: on 8 ranks of one link class the segmented
    /// broadcast's terms are the closed form of docs/calibration.md,
    /// S = n_s + 2 and G = (n_s + 1)·3·m/n_s for n_s ≥ 3 segments.
    #[test]
    fn segmented_and_pipelined_models_have_terms_at_each_size() {
        let algos = |s: &str| Algos::parse(&[s.to_string()]).unwrap();
        let seg = algos("broadcast=ompi-binomial:64KiB")
            .model("broadcast", 8)
            .unwrap();
        assert!(matches!(
            seg,
            Model::Collective {
                algo: Algo::OmpiBinomial,
                segment: 65536,
                ..
            }
        ));
        assert!(!seg.is_straight() && seg.is_linear_in_alpha_and_beta());
        for m in [1u64 << 20, 1 << 24, 3 << 22] {
            let n = (m as f64 / 65536.0).ceil();
            let (s, g) = seg.terms(m as f64);
            assert!((s - (n + 2.0)).abs() < 1e-9 * s, "{m}: S = {s}");
            let g_want = (n + 1.0) * 3.0 * m as f64 / n;
            assert!((g - g_want).abs() < 1e-9 * g_want, "{m}: G = {g}");
        }
        // at one segment it is the unsegmented tree: 3α + 6·m/B
        let (s, g) = seg.terms(65536.0);
        assert!((s - 3.0).abs() < 1e-9 && (g - 6.0 * 65536.0).abs() < 1e-6);
        let tree = algos("allreduce=tree").model("allreduce", 8).unwrap();
        assert!(!tree.is_straight() && tree.is_linear_in_alpha_and_beta());
        // the straight models keep their fixed S and F·m
        let ring = Model::for_op("allreduce", 8).unwrap();
        assert!(ring.is_straight());
        let (s, g) = ring.terms(1e6);
        assert!((s - 14.0).abs() < 1e-9 && (g - 1.75e6).abs() < 1e-3);
    }

    /// Times made by the segmented broadcast on 8 ranks with two MPI
    /// regimes are fitted back exactly when the fit models it, and
    /// predict 16 ranks exactly. The unsegmented tree fits the same times
    /// too (past a few segments the segments' latencies, m/segment · α,
    /// grow with m like bytes and pass for bandwidth), but reads another
    /// link, and misses at 16 ranks, where the root's share of the bytes
    /// differs between the two algorithms.
    #[test]
    fn recovers_a_segmented_broadcast() {
        let algos = |s: &str| Algos::parse(&[s.to_string()]).unwrap();
        let seg = algos("broadcast=ompi-binomial:64KiB");
        let plain = algos("broadcast=ompi-binomial");
        let line = |b: u64| {
            if b < 1 << 16 {
                (2e-6, 2e9)
            } else {
                (20e-6, 10e9)
            }
        };
        let times = |ranks: u32| -> Vec<(u64, f64)> {
            let m = seg.model("broadcast", ranks).unwrap();
            (10..=27)
                .map(|k| {
                    let b = 1u64 << k;
                    let (a, bw) = line(b);
                    (b, m.predict(b as f64, a, bw))
                })
                .collect()
        };
        let (eight, sixteen) = (times(8), times(16));
        let at16 = |algos: &Algos| {
            let f = fit(
                algos.model("broadcast", 8).unwrap(),
                &eight,
                MAX_REGIMES,
                MIN_POINTS,
            )
            .unwrap();
            let g = Fit {
                model: algos.model("broadcast", 16).unwrap(),
                ..f.clone()
            };
            let worst = sixteen
                .iter()
                .map(|&(b, t)| ((g.predict(b) - t) / t).abs())
                .fold(0.0, f64::max);
            (f, worst)
        };
        let (f, worst) = at16(&seg);
        assert_eq!(f.segments.len(), 2, "{f:?}");
        assert!(f.median_abs_residual() < 1e-9, "{f:?}");
        let last = &f.segments[1];
        assert!((last.alpha_s - 20e-6).abs() / 20e-6 < 1e-6, "{last:?}");
        assert!((last.bandwidth_bps - 10e9).abs() / 10e9 < 1e-6, "{last:?}");
        assert!(worst < 1e-9, "{worst}");
        // at large sizes the plain tree reads 6·m/B' = 3·m/B + m·α/segment
        // at 8 ranks and predicts 10·m/B' at 16, where the truth is
        // 4·m/B + m·α/segment: 1.008 against 0.705 ns a byte, 43% over
        let (f, worst) = at16(&plain);
        assert!(f.median_abs_residual() < 1e-3, "{f:?}");
        assert!(worst > 0.4, "{worst}");
    }

    /// The default models are straight lines in the size at every rank
    /// count (so their fits keep reading S and F once, as before terms
    /// were read per size), and every algorithm the fit's flat cluster can
    /// run is linear in α and 1/B (the guard in [`Algos::parse`] refuses
    /// none of today's).
    #[test]
    fn defaults_are_straight_and_every_algorithm_can_be_fitted() {
        for op in Op::ALL {
            for ranks in [2u32, 3, 4, 5, 7, 8, 16, 33, 64, 128, 256, 1000, 1024, 4096] {
                let m = Model::for_op(op.name(), ranks).unwrap();
                assert!(m.is_straight(), "{} on {ranks}", op.name());
            }
            for &algo in op.algorithms() {
                let spec = format!("{}={}", op.name(), algo.name());
                match Algos::parse(std::slice::from_ref(&spec)) {
                    Ok(_) => {}
                    Err(e) => assert!(e.contains("cannot run"), "{spec}: {e}"),
                }
            }
        }
    }

    /// MPICH's selection (`--algo allgather=mpich`): on one link (α, B)
    /// its times jump at 512 KiB where recursive doubling gives way to the
    /// ring; the regimes break there and not elsewhere, each side recovers
    /// the link exactly, every size (the switch itself included) is
    /// predicted by its own side's regime, and a point says which
    /// algorithm ran it.
    #[test]
    fn regimes_break_where_mpich_changes_algorithm() {
        let mpich = Algos::parse(&["allgather=mpich".to_string()])
            .unwrap()
            .model("allgather", 16)
            .unwrap();
        assert_eq!(mpich.switches(), vec![524_288.0]);
        assert!(!mpich.is_straight());
        let (alpha, bw) = (4e-6, 8e9);
        let (f, pts) = two_regimes_of(mpich, (alpha, bw), 22);
        for s in &f.segments {
            assert_eq!(
                mpich.zone(s.min_bytes as f64),
                mpich.zone(s.max_bytes as f64),
                "a regime spans the switch: {s:?}"
            );
        }
        for m in [3u64 << 12, 524_287, 524_288, 3 << 19, 3 << 21] {
            let want = mpich.predict(m as f64, alpha, bw);
            let got = f.predict(m);
            assert!(
                (got - want).abs() / want < 1e-6,
                "{m}: {got} against {want}"
            );
        }
        assert_eq!(f.via(1 << 18), "recursive-doubling regime 1");
        assert_eq!(f.via(1 << 20), "ring regime 2");
        // the selection's steps: 4 below the switch, 15 from it
        let t = |m: f64| mpich.terms(m).0;
        assert!((t(524_287.0) - 4.0).abs() < 1e-9 && (t(524_288.0) - 15.0).abs() < 1e-9);
        // the same times fitted as the ring alone do not fit one line
        let ring = Model::for_op("allgather", 16).unwrap();
        assert!(fit(ring, &pts, 1, 2).unwrap().median_abs_residual() > 0.01);
    }

    /// The link [`two_regimes_of_one_link`] times: 20 µs, 1.25 GB/s.
    const ONE_LINK: (f64, f64) = (20e-6, 1.25e9);

    /// `model`'s times on [`ONE_LINK`] at every power of two from 1 KiB to
    /// 8 MiB, fitted in up to 8 regimes: two come out, one each side of
    /// its one switch, and each recovers the link.
    fn two_regimes_of_one_link(model: Model) -> Fit {
        two_regimes_of(model, ONE_LINK, 23).0
    }

    /// `model`'s times on the link `(alpha, bw)` at every power of two from
    /// 1 KiB to 2^`top` bytes, fitted in up to 8 regimes: two come out,
    /// each recovering the link. The fit and the times.
    fn two_regimes_of(model: Model, (alpha, bw): (f64, f64), top: u32) -> (Fit, Vec<(u64, f64)>) {
        let pts: Vec<(u64, f64)> = (10..=top)
            .map(|k| {
                let b = 1u64 << k;
                (b, model.predict(b as f64, alpha, bw))
            })
            .collect();
        let f = fit(model, &pts, 8, 2).unwrap();
        assert_eq!(f.segments.len(), 2, "{f:?}");
        for s in &f.segments {
            assert!((s.alpha_s - alpha).abs() / alpha < 1e-6, "{s:?}");
            assert!((s.bandwidth_bps - bw).abs() / bw < 1e-6, "{s:?}");
        }
        (f, pts)
    }

    /// Open MPI's decision with a request limit (`--algo alltoall=ompi/3`)
    /// on 8 ranks: its `linear_sync` (3 steps) below 256 KiB a block, basic
    /// linear (1 step) from there; synthetic times of one link break the
    /// regimes at its 2 MiB switch, each side recovers the link, and each
    /// point says which ran it.
    #[test]
    fn regimes_break_where_open_mpi_turns_to_basic_linear() {
        let ompi = Algos::parse(&["alltoall=ompi/3".to_string()])
            .unwrap()
            .model("alltoall", 8)
            .unwrap();
        assert_eq!(ompi.switches(), vec![2_097_152.0]);
        let f = two_regimes_of_one_link(ompi);
        assert_eq!(f.via(1 << 18), "linear-sync regime 1");
        assert_eq!(f.via(1 << 22), "linear regime 2");
        let t = |m: f64| ompi.terms(m).0;
        assert!((t(2_097_151.0) - 3.0).abs() < 1e-9 && (t(2_097_152.0) - 1.0).abs() < 1e-9);
    }

    /// Open MPI's segmented ring (`--algo allreduce=segmented-ring:4KiB`)
    /// on 8 ranks: the plain ring below 32 KiB, (P + 1)·7 steps from there
    /// (P phases of 8,192 elements: 33·7 at 1 MiB), the ring's bytes;
    /// synthetic times of one link break the regimes at the switch and
    /// recover the link on both sides, and each point says which ran it.
    #[test]
    fn a_segmented_ring_is_fitted_by_its_phases() {
        let algos = Algos::parse(&["allreduce=segmented-ring:4KiB".to_string()]).unwrap();
        assert_eq!(
            algos.notes(),
            ["fitted with allreduce=segmented-ring:4096 (--algo; segments of 4096 bytes)"]
        );
        let ring = algos.model("allreduce", 8).unwrap();
        assert_eq!(ring.switches(), vec![32.0, 32_768.0]);
        let (s, g) = ring.terms(1_048_576.0);
        assert!((s - 231.0).abs() < 1e-9, "{s}");
        assert!((g - 14.0 / 8.0 * 1_048_576.0).abs() < 1e-3, "{g}");
        assert!((ring.terms(16_384.0).0 - 14.0).abs() < 1e-9);
        assert!(ring.is_linear_in_alpha_and_beta());
        let (alpha, bw) = ONE_LINK;
        let f = two_regimes_of_one_link(ring);
        assert_eq!(f.via(1 << 12), "ring regime 1");
        assert_eq!(f.via(1 << 20), "segmented-ring regime 2");
        for m in [3u64 << 12, 100_000, 3 << 20] {
            let want = ring.predict(m as f64, alpha, bw);
            assert!((f.predict(m) - want).abs() / want < 1e-6, "{m}");
        }
        // a segment size for the plain ring, or of less than an element,
        // is refused
        let e = Algos::parse(&["allreduce=ring:4KiB".to_string()]).unwrap_err();
        assert!(e.contains("allreduce=segmented-ring:SIZE"), "{e}");
        let e = Algos::parse(&["allreduce=segmented-ring:3".to_string()]).unwrap_err();
        assert!(e.contains("one 4-byte element"), "{e}");
        // one element a segment: a fit's probes to 16 GiB stay priced (the
        // program's steps capped at 2^31)
        let one = Algos::parse(&["allreduce=segmented-ring:4".to_string()]).unwrap();
        let m = one.model("allreduce", 2).unwrap();
        assert!(
            m.predict(16.0 * (1u64 << 30) as f64, 1e-6, 1e10)
                .is_finite()
        );
    }

    #[test]
    fn structure_of_a_ring_is_the_closed_form() {
        let m = Model::for_op("allreduce", 8).unwrap();
        let s = m.structure();
        assert!((s.steps - 14.0).abs() < 1e-9);
        assert!((s.bytes - 14.0 / 8.0).abs() < 1e-12);
        assert_eq!(
            Model::PointToPoint.structure(),
            Structure {
                steps: 1.0,
                bytes: 1.0
            }
        );
    }

    #[test]
    fn recovers_alpha_and_beta_exactly() {
        let m = Model::for_op("allreduce", 16).unwrap();
        let pts: Vec<(u64, f64)> = (10..28)
            .map(|p| {
                let b = 1u64 << p;
                (b, m.predict(b as f64, 5e-6, 20e9))
            })
            .collect();
        let f = fit(m, &pts, 3, 4).unwrap();
        assert_eq!(f.segments.len(), 1, "{f:?}");
        assert!((f.segments[0].alpha_s - 5e-6).abs() / 5e-6 < 1e-6);
        assert!((f.segments[0].bandwidth_bps - 20e9).abs() / 20e9 < 1e-6);
        assert!(f.median_abs_residual() < 1e-9);
    }

    #[test]
    fn finds_protocol_regimes() {
        // two regimes: small messages α=2us,B=1GB/s; large α=50us,B=20GB/s
        let m = Model::PointToPoint;
        let pts: Vec<(u64, f64)> = (4..28)
            .map(|p| {
                let b = 1u64 << p;
                let t = if b < (1 << 16) {
                    2e-6 + b as f64 / 1e9
                } else {
                    50e-6 + b as f64 / 20e9
                };
                (b, t)
            })
            .collect();
        let f = fit(m, &pts, 3, 3).unwrap();
        assert!(f.segments.len() >= 2, "{f:?}");
        assert!(f.median_abs_residual() < 1e-6);
        assert!((f.predict(1 << 26) - (50e-6 + (1u64 << 26) as f64 / 20e9)).abs() < 1e-9);
    }

    /// Times of the fastest of three protocols (α per step, B per link)
    /// of a ring AllReduce on `ranks`, blended with sharpness `q`.
    fn three_protocols(ranks: u32, q: f64) -> (Model, Vec<(u64, f64)>) {
        let m = Model::for_op("allreduce", ranks).unwrap();
        let lines = [(0.8e-6, 4e9), (1.5e-6, 40e9), (6e-6, 90e9)];
        let pts = (3..=30)
            .map(|p| {
                let b = 1u64 << p;
                let t = blend(lines.iter().map(|&(a, bw)| m.predict(b as f64, a, bw)), q);
                (b, t)
            })
            .collect();
        (m, pts)
    }

    /// Data made by a known (algorithm, protocol) model are fitted back
    /// to its parameters: three protocols, each α and B, and where each
    /// is the fastest.
    #[test]
    fn recovers_three_protocols() {
        let (m, pts) = three_protocols(8, f64::INFINITY);
        let f = fit_protocols(m, &pts, Library::Nccl).unwrap();
        assert_eq!(f.segments.len(), 3, "{f:?}");
        assert!(f.sharpness.is_infinite());
        for (s, (a, bw, name)) in f.segments.iter().zip([
            (0.8e-6, 4e9, "LL"),
            (1.5e-6, 40e9, "LL128"),
            (6e-6, 90e9, "Simple"),
        ]) {
            assert!((s.alpha_s - a).abs() / a < 1e-6, "{s:?}");
            assert!((s.bandwidth_bps - bw).abs() / bw < 1e-6, "{s:?}");
            assert_eq!(s.protocol.as_deref(), Some(name));
        }
        assert!(f.median_abs_residual() < 1e-9);
        // LL and LL128 cross where 14·0.7 µs = 1.75·m·(1/4e9 − 1/40e9):
        // m = 24.9 KB; LL128 and Simple where 14·4.5 µs = 1.75·m·(1/40e9
        // − 1/90e9): m = 2.59 MB
        assert_eq!(f.via(16 << 10), "ring LL");
        assert_eq!(f.via(32 << 10), "ring LL128");
        assert_eq!(f.via(2 << 20), "ring LL128");
        assert_eq!(f.via(4 << 20), "ring Simple");
    }

    /// A switch rounded by the sharpness (q = 4) is fitted back too: the
    /// sharpness and every line.
    #[test]
    fn recovers_a_rounded_switch() {
        let (m, pts) = three_protocols(8, 4.0);
        let f = fit_protocols(m, &pts, Library::Nccl).unwrap();
        assert_eq!((f.segments.len(), f.sharpness), (3, 4.0), "{f:?}");
        for (s, (a, bw)) in f
            .segments
            .iter()
            .zip([(0.8e-6, 4e9), (1.5e-6, 40e9), (6e-6, 90e9)])
        {
            assert!((s.alpha_s - a).abs() / a < 1e-4, "{s:?}");
            assert!((s.bandwidth_bps - bw).abs() / bw < 1e-4, "{s:?}");
        }
        assert!(f.median_abs_residual() < 1e-6);
    }

    /// One straight line is fitted as one protocol: a second would
    /// predict the points left out no better.
    #[test]
    fn one_line_is_one_protocol() {
        let m = Model::for_op("allgather", 4).unwrap();
        let pts: Vec<(u64, f64)> = (10..28)
            .map(|p| (1u64 << p, m.predict((1u64 << p) as f64, 3e-6, 12e9)))
            .collect();
        let f = fit_protocols(m, &pts, Library::Mpi).unwrap();
        assert_eq!(f.segments.len(), 1, "{f:?}");
        assert_eq!(f.segments[0].protocol.as_deref(), Some("rendezvous"));
        assert!((f.segments[0].bandwidth_bps - 12e9).abs() / 12e9 < 1e-6);
    }

    /// The blend is the minimum at q = ∞, 2^(−1/q) of it where two tie,
    /// and never above the minimum.
    #[test]
    fn blend_rounds_the_minimum() {
        let v = [3.0, 5.0];
        assert_eq!(blend(v.iter().copied(), f64::INFINITY), 3.0);
        let tie = blend([2.0, 2.0].iter().copied(), 4.0);
        assert!((tie - 2.0 * 2f64.powf(-0.25)).abs() < 1e-12);
        for q in SHARPNESS {
            assert!(blend(v.iter().copied(), q) <= 3.0);
        }
    }

    #[test]
    fn too_few_points() {
        assert!(matches!(
            fit(Model::PointToPoint, &[(8, 1e-6)], 3, 3),
            Err(FitError::TooFewPoints(1))
        ));
    }
}

/// Least squares on relative error for `t ≈ Σ cⱼ·xⱼ` (features `x` per
/// observation, e.g. `[1, m, k]` for a kernel's `a + b·m + c·k`). Returns
/// the coefficients and the median |relative residual|, or `None` if the
/// features do not determine the coefficients.
pub fn fit_linear_relative(rows: &[(Vec<f64>, f64)]) -> Option<(Vec<f64>, f64)> {
    let p = rows.first()?.0.len();
    if p == 0
        || rows.len() < p
        || rows
            .iter()
            .any(|r| r.0.len() != p || r.1.is_nan() || r.1 <= 0.0)
    {
        return None;
    }
    // normal equations of Σ (x·c/t − 1)²
    let mut a = vec![vec![0.0f64; p + 1]; p];
    for (x, t) in rows {
        for i in 0..p {
            for j in 0..p {
                a[i][j] += x[i] * x[j] / (t * t);
            }
            a[i][p] += x[i] / t;
        }
    }
    // Gaussian elimination with partial pivoting
    for col in 0..p {
        let piv = (col..p).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, &y) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * y;
                }
            }
        }
    }
    let coef: Vec<f64> = (0..p).map(|i| a[i][p] / a[i][i]).collect();
    if coef.iter().any(|c| !c.is_finite()) {
        return None;
    }
    let res = rows
        .iter()
        .map(|(x, t)| ((x.iter().zip(&coef).map(|(a, b)| a * b).sum::<f64>() - t) / t).abs())
        .collect();
    Some((coef, median(res)))
}

#[cfg(test)]
mod linear_tests {
    use super::*;

    #[test]
    fn recovers_a_kernel_model() {
        let rows: Vec<(Vec<f64>, f64)> = [(1e4, 10.0), (1e5, 100.0), (1e6, 1000.0), (1e6, 5000.0)]
            .iter()
            .map(|&(m, k)| (vec![1.0, m, k], 2e-6 + 3e-9 * m + 4e-8 * k))
            .collect();
        let (c, r) = fit_linear_relative(&rows).unwrap();
        assert!(
            (c[0] - 2e-6).abs() < 1e-12
                && (c[1] - 3e-9).abs() < 1e-15
                && (c[2] - 4e-8).abs() < 1e-14
        );
        assert!(r < 1e-9);
        assert!(fit_linear_relative(&rows[..2]).is_none());
    }
}

#[cfg(test)]
mod eager_limit_tests {
    use super::*;

    /// A ring AllReduce on 8 ranks over a TCP transport whose eager limit
    /// is 64 KiB: a step's message (m/8) of at least 64 KiB pays a
    /// rendezvous handshake of 150 µs more latency, on the same 500 MB/s
    /// wire (α 50 µs). Times at every power of two from 16 KiB to 2^`top`.
    fn ring_with_rendezvous(top: u32) -> (Model, Vec<(u64, f64)>) {
        let m = Model::for_op("allreduce", 8).unwrap();
        let pts = (14..=top)
            .map(|k| {
                let b = 1u64 << k;
                let alpha = if b / 8 >= 65_536 { 200e-6 } else { 50e-6 };
                (b, m.predict(b as f64, alpha, 5e8))
            })
            .collect();
        (m, pts)
    }

    /// Every other size fitted, one of them (1 MiB) above the limit: the
    /// eager sizes give the wire, the one rendezvous size its latency, and
    /// the held-out 512 KiB (messages of exactly the limit) is predicted
    /// as the rendezvous it is, to rounding; without the limit a regime
    /// spans the switch and misses it.
    #[test]
    fn one_size_above_the_limit_fits_its_latency_on_the_eager_wire() {
        let (m, pts) = ring_with_rendezvous(20);
        let fitted: Vec<(u64, f64)> = pts.iter().copied().step_by(2).collect();
        assert_eq!(fitted.last().unwrap().0, 1 << 20);
        let f = fit_with_eager_limit(m, &fitted, MAX_REGIMES, MIN_POINTS, 65_536).unwrap();
        assert_eq!(f.eager_limit, 65_536);
        let last = f.segments.last().unwrap();
        assert_eq!(last.protocol.as_deref(), Some("rendezvous"));
        assert_eq!((last.points, last.min_bytes), (1, 1 << 20));
        assert!((last.alpha_s - 200e-6).abs() < 1e-12, "{last:?}");
        assert!((last.bandwidth_bps - 5e8).abs() < 1e-3, "{last:?}");
        for s in &f.segments[..f.segments.len() - 1] {
            assert_eq!(s.protocol.as_deref(), Some("eager"), "{s:?}");
        }
        for &(b, t) in &pts {
            assert!(
                (f.predict(b) - t).abs() < 1e-9 * t,
                "{b}: {} {t}",
                f.predict(b)
            );
        }
        assert_eq!(f.via(1 << 19), "ring regime 2 (rendezvous)");
        assert_eq!(f.via(1 << 18), "ring regime 1 (eager)");
        let plain = fit(m, &fitted, MAX_REGIMES, MIN_POINTS).unwrap();
        let (b, t) = pts[5];
        assert_eq!(b, 1 << 19);
        assert!(
            (plain.predict(b) - t).abs() > 0.1 * t,
            "{}",
            plain.predict(b)
        );
    }

    /// With two sizes or more on each side each protocol fits a line of its
    /// own; a sweep wholly on one side fits as without the limit, named.
    #[test]
    fn each_protocol_with_the_sizes_for_a_line_fits_its_own() {
        let (m, pts) = ring_with_rendezvous(23);
        let f = fit_with_eager_limit(m, &pts, MAX_REGIMES, MIN_POINTS, 65_536).unwrap();
        assert_eq!(f.segments.len(), 2, "{f:?}");
        let lines = [(50e-6, "eager", 1 << 14), (200e-6, "rendezvous", 1 << 19)];
        for (s, (alpha, name, lo)) in f.segments.iter().zip(lines) {
            assert!((s.alpha_s - alpha).abs() < 1e-12, "{s:?}");
            assert!((s.bandwidth_bps - 5e8).abs() < 1e-3, "{s:?}");
            assert_eq!((s.protocol.as_deref(), s.min_bytes), (Some(name), lo));
        }
        let below: Vec<(u64, f64)> = pts.iter().copied().take(4).collect();
        let f = fit_with_eager_limit(m, &below, MAX_REGIMES, MIN_POINTS, 65_536).unwrap();
        let g = fit(m, &below, MAX_REGIMES, MIN_POINTS).unwrap();
        assert_eq!(f.segments.len(), g.segments.len());
        assert!(
            f.segments
                .iter()
                .all(|s| s.protocol.as_deref() == Some("eager"))
        );
        // 0: not known, the plain fit
        assert_eq!(
            fit_with_eager_limit(m, &pts, MAX_REGIMES, MIN_POINTS, 0).unwrap(),
            fit(m, &pts, MAX_REGIMES, MIN_POINTS).unwrap()
        );
    }

    /// A protocol fit's lines cross where the times say: an eager limit is
    /// refused there, and carried by the settings otherwise.
    #[test]
    fn an_eager_limit_needs_the_regimes() {
        let (m, pts) = ring_with_rendezvous(23);
        let e = fit_measurements(m, &pts, Some(Shape::Protocols), Library::Mpi, 65_536);
        assert_eq!(e.unwrap_err(), FitError::EagerLimitNeedsRegimes);
        let e = fit_measurements(m, &pts, None, Library::Nccl, 65_536);
        assert_eq!(e.unwrap_err(), FitError::EagerLimitNeedsRegimes);
        assert!(fit_measurements(m, &pts, None, Library::Mpi, 65_536).is_ok());
        let a = Algos::parse(&["broadcast=ompi-binomial".into()])
            .unwrap()
            .with_eager_limit(4096);
        assert_eq!(a.eager_limit(), 4096);
        assert_eq!(a.notes().len(), 2);
        assert!(
            a.notes()[1].starts_with("fitted with the eager limit 4096 B"),
            "{:?}",
            a.notes()
        );
        assert_eq!(Algos::default().with_defaults(&a).eager_limit(), 4096);
    }
}
