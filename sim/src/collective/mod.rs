//! Collective operations: what each one sends, and what it costs.
//!
//! Every collective is built from point-to-point sends ([`program`]) and
//! can be costed two ways:
//!
//! * [`analytical::CostModel`]: each step costs the latency of its slowest
//!   path plus its bytes over the most loaded link of that path (α-β with
//!   full-duplex links). For a ring AllReduce over N GPUs with one link
//!   class this is exactly 2(N−1)α + 2(N−1)/N·m·β (BaiduRing; gTop-k Eq. 5).
//! * [`exec::run_flow`]: the same sends as flows of the max-min fair
//!   network model, each participant moving on as soon as its own messages
//!   of a step are done.
//!
//! [`links::link_bytes`] sums the bytes each link carries during a
//! collective (the same in both models), for link-utilisation counters.
//!
//! ```text
//!  ring AllReduce, N = 4, 2(N−1) = 6 steps of m/4:
//!     GPU0 ──▶ GPU1
//!      ▲        │       steps 1-3: reduce-scatter (each GPU ends with 1/4 summed)
//!      │        ▼       steps 4-6: all-gather   (each GPU ends with all of it)
//!     GPU3 ◀── GPU2
//! ```
//!
//! ```
//! use sim::cluster::ClusterSpec;
//! use sim::collective::{Collective, Op};
//! // BaiduRing BR-A1: 1.2 GB over 40 GPUs on 6 GB/s links, no latency.
//! let cluster = ClusterSpec::flat(40, 6e9, 0.0);
//! let c = Collective::new(Op::AllReduce);
//! let t = c.analytical(&cluster).time(1.2e9);
//! assert!((t - 0.390).abs() < 1e-9);
//! ```

pub mod analytical;
pub mod bcast;
pub mod exec;
pub mod links;
pub mod program;
pub mod single;

use crate::cluster::ClusterSpec;
use program::{Grouping, Phase, Program, PsPart, Shards};
use std::sync::Arc;

/// A collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Sum over all GPUs, result on all GPUs. Size: the buffer.
    AllReduce,
    /// Concatenation of every GPU's part on every GPU. Size: the whole
    /// output (N parts), as nccl-tests counts it.
    AllGather,
    /// Sum, each GPU keeping 1/N. Size: the whole input.
    ReduceScatter,
    /// Root's buffer to every GPU. Size: the buffer.
    Broadcast,
    /// Every GPU sends a distinct 1/N of its buffer to every other GPU.
    /// Size: one GPU's send buffer.
    AllToAll,
    /// Parameter-server push of gradients and pull of parameters. Size: the
    /// variable, sharded evenly over the servers.
    Ps,
    /// Top-k sparsified AllReduce by AllGather (the gTop-k paper's
    /// TopKAllReduce, Eq. 6): every GPU's k selected values and their
    /// indices go to every GPU, which sums them. Size: one GPU's sparse
    /// payload, 2k elements (k values and k indices).
    TopK,
    /// gTop-k sparse AllReduce (gTop-k Alg. 2, Eq. 7): a binomial-tree
    /// reduction in which every receiver merges the two payloads and keeps
    /// the global top k, so each message stays 2k elements, then a binomial
    /// broadcast of the result. Size: one GPU's sparse payload (2k
    /// elements).
    GTopK,
    /// Point-to-point between the GPUs of two model-parallel stages: each
    /// GPU of the stage its [`Grouping::Stage`] names sends the buffer to
    /// the GPU at the same place of the next stage ([`Algo::Next`]: the
    /// forward pass's activations) or of the previous one ([`Algo::Prev`]:
    /// their gradients). Size: one GPU's send. Planners' only: not among
    /// [`Op::ALL`], so not on the command line.
    SendRecv,
}

impl Op {
    /// All operations, in a fixed order.
    pub const ALL: [Op; 8] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::Broadcast,
        Op::AllToAll,
        Op::Ps,
        Op::TopK,
        Op::GTopK,
    ];

    /// Name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "allreduce",
            Op::AllGather => "allgather",
            Op::ReduceScatter => "reducescatter",
            Op::Broadcast => "broadcast",
            Op::AllToAll => "alltoall",
            Op::Ps => "ps",
            Op::TopK => "topk",
            Op::GTopK => "gtopk",
            Op::SendRecv => "sendrecv",
        }
    }

    /// The algorithms this operation supports; the first is the default.
    pub fn algorithms(self) -> &'static [Algo] {
        match self {
            Op::AllReduce => &[
                Algo::Ring,
                Algo::Tree,
                Algo::Hierarchical,
                Algo::Binomial,
                Algo::Nvls,
                Algo::NvlsTree,
                Algo::Sharp,
                Algo::RecursiveDoubling,
                Algo::Rabenseifner,
                Algo::SegmentedRing,
                Algo::Mpich,
                Algo::Ompi,
            ],
            Op::AllGather => &[
                Algo::Ring,
                Algo::RecursiveDoubling,
                Algo::Bruck,
                Algo::NeighborExchange,
                Algo::Mpich,
                Algo::Ompi,
            ],
            Op::ReduceScatter => &[Algo::Ring],
            Op::Broadcast => &[
                Algo::Ring,
                Algo::Mpich,
                Algo::Binomial,
                Algo::OmpiBinomial,
                Algo::Linear,
                Algo::Chain,
                Algo::Pipeline,
                Algo::BinaryTree,
                Algo::SplitBinaryTree,
                Algo::Knomial,
                Algo::ScatterAllgather,
                Algo::ScatterAllgatherRing,
                Algo::Ompi,
            ],
            Op::AllToAll => &[
                Algo::Pairwise,
                Algo::Linear,
                Algo::LinearSync,
                Algo::Scattered,
                Algo::Bruck,
                Algo::Mpich,
                Algo::MpichNb,
                Algo::Ompi,
            ],
            Op::Ps => &[Algo::Overlapped, Algo::Sequential, Algo::Push, Algo::Pull],
            Op::TopK => &[Algo::RecursiveDoubling, Algo::Ring],
            Op::GTopK => &[Algo::Tree],
            Op::SendRecv => &[Algo::Next, Algo::Prev],
        }
    }

    /// nccl-tests' bus-bandwidth factor: busbw = algbw × factor.
    /// AllReduce 2(n−1)/n; AllGather, ReduceScatter, AlltoAll (n−1)/n;
    /// Broadcast 1 (nccl-tests `doc/PERFORMANCE.md`). For PS we report the
    /// bandwidth of the busiest server NIC direction: workers/servers.
    /// The sparse operations have no nccl-tests definition; by our
    /// convention the factor counts payloads: n−1 for Top-k (nccl-tests'
    /// AllGather factor, (n−1)/n of an output of n payloads; what every GPU
    /// sends in a ring or a power-of-two recursive doubling, while the
    /// folds of other sizes make the folding GPUs send more) and ⌈log2 n⌉
    /// for gTop-k (what its root sends, once per broadcast round).
    pub fn busbw_factor(self, n: u32) -> f64 {
        let nf = n as f64;
        match self {
            Op::AllReduce => 2.0 * (nf - 1.0) / nf,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (nf - 1.0) / nf,
            Op::Broadcast | Op::Ps | Op::SendRecv => 1.0,
            Op::TopK => nf - 1.0,
            Op::GTopK => n.next_power_of_two().trailing_zeros() as f64,
        }
    }

    /// Whether the size is a sparse payload (Top-k, gTop-k) rather than a
    /// dense buffer.
    pub fn is_sparse(self) -> bool {
        matches!(self, Op::TopK | Op::GTopK)
    }
}

/// An algorithm implementing an [`Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algo {
    /// Ring: 2(N−1) steps of m/N (AllReduce), N−1 (AllGather,
    /// ReduceScatter), in one channel per NIC across nodes; Broadcast:
    /// pieces pipelined down the ring from rank 0 (NCCL's ring broadcast).
    Ring,
    /// AllReduce: NCCL's tree, pieces reduced up and broadcast down a
    /// double binary tree of nodes with a chain inside each node,
    /// pipelined ([`program::Phase::TreeReduce`], [`program::Phase::TreeBcast`]). gTop-k: the binomial
    /// tree of its paper (2⌈log2 N⌉ steps of its payload).
    Tree,
    /// Intra-node ring reduce-scatter, inter-node ring AllReduce per rail
    /// (GPU i of every node), intra-node ring all-gather.
    Hierarchical,
    /// Binomial tree, not pipelined: a broadcast from rank 0 in ⌈log2 N⌉
    /// steps of m; an AllReduce as a binomial reduce to rank 0 and that
    /// broadcast (2⌈log2 N⌉ steps of m).
    Binomial,
    /// Pairwise exchange: N−1 steps of m/N.
    Pairwise,
    /// PS push and pull stream concurrently (full-duplex, Parallax Table 3).
    Overlapped,
    /// PS pull after the push.
    Sequential,
    /// PS push alone: every worker sends every server its shard.
    Push,
    /// PS pull alone: every server sends every worker its shard.
    Pull,
    /// Recursive doubling: ⌊log2 N⌋ exchange rounds (plus a fold in and
    /// out when N is not a power of two); an AllGather's messages double
    /// from round to round ([`program::Phase::RecursiveDoubling`]), an
    /// AllReduce's are the whole buffer
    /// ([`program::Phase::RecursiveAllReduce`]).
    RecursiveDoubling,
    /// AllReduce by NVLink SHARP (NCCL's NVLS): the node's NVSwitch sums
    /// and multicasts, pipelined ([`program::Phase::Nvls`]). On nodes
    /// whose NVSwitch reduces (`intra = "nvlink4"`: third-generation
    /// NVSwitch, H100/H200 HGX); across nodes with InfiniBand SHARP
    /// between the switches (NCCL's NVLS with CollNet).
    Nvls,
    /// AllReduce by NCCL's NVLS tree (`NVLSTree`): NVLink SHARP inside
    /// each node, a double binary tree of nodes between them per GPU
    /// position, pipelined ([`program::Phase::NvlsTree`]); for networks
    /// whose switches do not reduce (an AWS p5 over EFA). On one node it is
    /// [`Algo::Nvls`].
    NvlsTree,
    /// AllReduce with InfiniBand SHARP across nodes, as NCCL's CollNet
    /// Direct: each GPU scatters its buffer's shards to the node's GPUs,
    /// GPU j's shard is summed by its rail's switches, and GPU j gathers
    /// it back to the node's GPUs, all pipelined
    /// ([`program::Phase::Sharp`]); on one node, the node's ring. On
    /// `ib-hdr-200g` and `ib-ndr-400g` (Quantum and Quantum-2 switches,
    /// SHARPv2 and v3).
    Sharp,
    /// Broadcast as Open MPI's binomial tree runs it (coll tuned's
    /// `binomial`): each rank sends to all its children at once once it
    /// has the buffer (or a segment of it), so a rank's sends share its
    /// link ([`program::Phase::TreeBcastAll`]). The textbook binomial
    /// (`binomial`) sends to one child a step.
    OmpiBinomial,
    /// Broadcast down Open MPI's chains (coll tuned's `chain`, 4 chains,
    /// its `coll_tuned_bcast_algorithm_chain_fanout` default): the ranks
    /// below the root in 4 runs of consecutive ranks, each rank sending
    /// to the next of its run ([`bcast::BcastTree::Chain`]).
    Chain,
    /// Broadcast down one chain, rank i to rank i + 1 (Open MPI's
    /// `pipeline`, and its `chain` as the fixed decision calls it, with
    /// no fanout, which its chain builder takes as one).
    Pipeline,
    /// Broadcast down Open MPI's binary tree (coll tuned's
    /// `binary_tree`), each rank sending to both children at once
    /// ([`bcast::BcastTree::Kary`]).
    BinaryTree,
    /// Broadcast by Open MPI's split binary tree (coll tuned's
    /// `split_binary_tree`): each half down one subtree, then pairs swap
    /// halves ([`program::Phase::SplitBinaryTree`]).
    SplitBinaryTree,
    /// Broadcast down Open MPI's k-nomial tree of radix 4 (coll tuned's
    /// `knomial`, `coll_tuned_bcast_algorithm_knomial_radix` 4, its
    /// default; [`bcast::BcastTree::Knomial`]).
    Knomial,
    /// Broadcast by a binomial scatter of N blocks and a recursive-doubling
    /// allgather (Open MPI's `scatter_allgather`;
    /// [`program::Phase::BinomialScatter`], [`program::Phase::BcastDoubling`]).
    ScatterAllgather,
    /// Broadcast by a binomial scatter of N blocks and a ring allgather
    /// (Open MPI's `scatter_allgather_ring`).
    ScatterAllgatherRing,
    /// AllGather by Bruck's algorithm: ⌈log2 N⌉ steps for any N, each
    /// rank sending what it holds to rank i − 2^k ([`program::Phase::Bruck`]).
    /// AlltoAll by Open MPI's modified Bruck: ⌈log2 N⌉ steps, in step k
    /// each rank sending the blocks whose index has bit k set, about half
    /// its buffer, to rank i + 2^k ([`program::Phase::BruckAllToAll`]).
    Bruck,
    /// AlltoAll all at once: every rank sends each other rank its block
    /// in one step, the N − 1 sends sharing its links (Open MPI's
    /// `basic_linear`, and its `linear_sync` without a request limit;
    /// [`program::Phase::Linear`]).
    /// Broadcast all at once: the root sends every other rank the buffer
    /// in one step (Open MPI's `basic_linear`).
    Linear,
    /// AlltoAll by Open MPI's `linear_sync`
    /// (`ompi_coll_base_alltoall_intra_linear_sync`): rank i posts
    /// receives from i + 1, i + 2, … and sends to i − 1, i − 2, …, at
    /// most K of each outstanding (`coll_tuned_alltoall_algorithm_max_requests`,
    /// [`Collective::fanout`]), each completed one replaced by the next.
    /// Modelled as ⌈(N − 1)/K⌉ steps, step k sending to the distances
    /// [kK + 1, (k + 1)K]: on links shared alike a rank's K sends, and the
    /// K receives of each of their destinations, end together, so its
    /// window refills all at once ([`program::Phase::Linear`]); blocks
    /// under the transport's eager limit, whose sends complete when handed
    /// over, slide through faster, closer to [`Algo::Linear`]
    /// (docs/calibration.md). Without a limit (0, Open MPI's default, or
    /// K ≥ N − 1) it is [`Algo::Linear`].
    LinearSync,
    /// AlltoAll by MPICH's scattered exchange
    /// (`MPIR_Alltoall_intra_scattered`): every send and receive posted
    /// at once, in batches of b destinations (`MPIR_CVAR_ALLTOALL_THROTTLE`:
    /// [`MPICH_ALLTOALL_THROTTLE`], 32, by default, or
    /// [`Collective::fanout`]; the rank itself among the first), each
    /// batch waited for before the next: ⌈N/b⌉ steps, one (as
    /// [`Algo::Linear`]) up to b ranks ([`program::Phase::Linear`]).
    Scattered,
    /// The algorithm MPICH chooses by default (its collective selection,
    /// `maint/tuning/coll/mpir/generic.json`; [`Collective::selected`]).
    /// AllGather, by the thresholds `MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE` =
    /// 524288 and `MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE` = 81920 bytes of
    /// gathered output: recursive doubling below 512 KiB on a power-of-two
    /// communicator, Bruck below 80 KiB on any other, the ring from there.
    /// AllReduce: recursive doubling for a buffer of at most 8 bytes or
    /// fewer elements than the largest power of two p ≤ N (4-byte
    /// elements assumed, as nccl-tests and OSU send floats), Rabenseifner's
    /// from there. Broadcast: the textbook binomial tree below 8 ranks or
    /// up to 12 KiB, then scatter and recursive-doubling allgather on a
    /// power of two up to 512 KiB, scatter and ring allgather otherwise
    /// (`mpich_bcast`). AlltoAll, by each block's bytes: Bruck's up to 256
    /// on 8 ranks or more, the scattered exchange (every send posted at
    /// once, in batches of 32 destinations) up to 32 KiB, the pairwise
    /// exchange past it (`mpich_alltoall`). The
    /// algorithm, and so the steps, change with the size. MPICH ch4's
    /// node-aware compositions are not modelled.
    Mpich,
    /// AlltoAll as MPICH runs it with `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=nb`
    /// (`MPIR_Alltoall_allcomm_nb`: its nonblocking AlltoAll, waited
    /// for), whose own selection (`generic.json`'s `ialltoall`, MPICH 3.4
    /// to 5.0, the same) runs the schedules of the blocking algorithms
    /// with another threshold: Bruck's for blocks of at most 2,048 bytes
    /// on 8 ranks or more (where the blocking selection stops at 256), the
    /// scattered exchange (`sched_permuted_sendrecv`, in batches of
    /// `MPIR_CVAR_ALLTOALL_THROTTLE`) up to 32 KiB, the pairwise exchange
    /// past it (`mpich_alltoall`).
    MpichNb,
    /// AllGather by neighbor exchange: N/2 steps for an even N, each rank
    /// swapping two parts with alternate neighbours
    /// ([`program::Phase::NeighborExchange`]); the ring for an odd N, as
    /// Open MPI falls back.
    NeighborExchange,
    /// The algorithm Open MPI 4.1 and later choose by default (coll
    /// tuned's fixed decisions; [`Collective::selected`]). AllGather
    /// (`ompi_coll_tuned_allgather_intra_dec_fixed`): by the ranks and
    /// each rank's bytes, recursive doubling, Bruck's, neighbor exchange
    /// or the ring. AllReduce (`ompi_coll_tuned_allreduce_intra_dec_fixed`,
    /// commutative operations): by the ranks and the buffer, recursive
    /// doubling, the ring, Rabenseifner's or a reduce and a broadcast.
    /// AlltoAll (`ompi_coll_tuned_alltoall_intra_dec_fixed`): by the ranks
    /// and each block's bytes, the linear exchange, the pairwise one or
    /// Bruck's. Broadcast (`ompi_coll_tuned_bcast_intra_dec_fixed`): by the
    /// ranks and the buffer, basic linear, the pipeline, the binary,
    /// split binary, binomial or k-nomial tree, or scatter-allgather, all
    /// unsegmented.
    Ompi,
    /// AllReduce by Open MPI's segmented ring
    /// (`ompi_coll_base_allreduce_intra_ring_segmented`, with
    /// `coll_tuned_allreduce_algorithm_segmentsize`, [`Collective::segment`]):
    /// each rank's block is cut into P phases' segments of about the
    /// segment size, and P reduce-scatter rings of N − 1 steps, one a
    /// phase, run one after another before one allgather ring of whole
    /// blocks: (P + 1)(N − 1) steps, the ring's bytes. P =
    /// ⌊count/(N·s)⌋ (one more where the rest is at least N elements and
    /// over half of N·s), s the segment in elements (4-byte elements
    /// assumed, as nccl-tests and OSU send floats); fewer than N·s elements,
    /// or no segment size, run the plain ring ([`Collective::ring_phases`]),
    /// and fewer than N its recursive doubling, as Open MPI's ring does.
    SegmentedRing,
    /// AllReduce by Rabenseifner's algorithm: a reduce-scatter by
    /// recursive halving, then an all-gather by recursive doubling,
    /// 2⌊log2 N⌋ steps sending 2(N−1)/N of the buffer a rank on a power of
    /// two ([`program::Phase::RecursiveAllReduce`]); what MPICH and Open
    /// MPI run for large buffers.
    Rabenseifner,
    /// Point-to-point to the next model-parallel stage ([`Op::SendRecv`]).
    Next,
    /// Point-to-point to the previous model-parallel stage.
    Prev,
}

impl Algo {
    /// Every algorithm, in a fixed order.
    pub const ALL: [Algo; 31] = [
        Algo::Ring,
        Algo::Tree,
        Algo::Hierarchical,
        Algo::Binomial,
        Algo::Pairwise,
        Algo::Overlapped,
        Algo::Sequential,
        Algo::Push,
        Algo::Pull,
        Algo::RecursiveDoubling,
        Algo::Nvls,
        Algo::NvlsTree,
        Algo::Sharp,
        Algo::OmpiBinomial,
        Algo::Bruck,
        Algo::Mpich,
        Algo::MpichNb,
        Algo::NeighborExchange,
        Algo::Ompi,
        Algo::Rabenseifner,
        Algo::SegmentedRing,
        Algo::Linear,
        Algo::LinearSync,
        Algo::Scattered,
        Algo::Chain,
        Algo::Pipeline,
        Algo::BinaryTree,
        Algo::SplitBinaryTree,
        Algo::Knomial,
        Algo::ScatterAllgather,
        Algo::ScatterAllgatherRing,
    ];

    /// Name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Tree => "tree",
            Algo::Hierarchical => "hierarchical",
            Algo::Binomial => "binomial",
            Algo::Pairwise => "pairwise",
            Algo::Overlapped => "overlapped",
            Algo::Sequential => "sequential",
            Algo::Push => "push",
            Algo::Pull => "pull",
            Algo::RecursiveDoubling => "recursive-doubling",
            Algo::Nvls => "nvls",
            Algo::NvlsTree => "nvls-tree",
            Algo::Sharp => "sharp",
            Algo::OmpiBinomial => "ompi-binomial",
            Algo::Bruck => "bruck",
            Algo::Mpich => "mpich",
            Algo::MpichNb => "mpich-nb",
            Algo::NeighborExchange => "neighbor-exchange",
            Algo::Ompi => "ompi",
            Algo::Rabenseifner => "rabenseifner",
            Algo::SegmentedRing => "segmented-ring",
            Algo::Linear => "linear",
            Algo::LinearSync => "linear-sync",
            Algo::Scattered => "scattered",
            Algo::Chain => "chain",
            Algo::Pipeline => "pipeline",
            Algo::BinaryTree => "binary-tree",
            Algo::SplitBinaryTree => "split-binary-tree",
            Algo::Knomial => "knomial",
            Algo::ScatterAllgather => "scatter-allgather",
            Algo::ScatterAllgatherRing => "scatter-allgather-ring",
            Algo::Next => "next",
            Algo::Prev => "prev",
        }
    }

    /// Whether `op` by this algorithm can be cut into segments
    /// ([`Collective::segment`]): the broadcasts down Open MPI's trees,
    /// which its generic broadcast pipelines segment by segment, and its
    /// split binary tree, which sends each half down its subtree so; the
    /// AllReduce by its segmented ring, which cuts each block so.
    pub fn takes_segments(self, op: Op) -> bool {
        (op == Op::AllReduce && self == Algo::SegmentedRing)
            || op == Op::Broadcast
                && matches!(
                    self,
                    Algo::OmpiBinomial
                        | Algo::Chain
                        | Algo::Pipeline
                        | Algo::BinaryTree
                        | Algo::Knomial
                        | Algo::SplitBinaryTree
                )
    }

    /// Whether `op` by this algorithm takes a [`Collective::fanout`]: the
    /// broadcasts down Open MPI's chains (their number) and its k-nomial
    /// tree (its radix), and its fixed decision, whose k-nomial tree takes
    /// the radix (`coll_tuned_bcast_algorithm_knomial_radix` reaches it:
    /// `ompi_coll_tuned_bcast_intra_do_this` passes it; the decision's
    /// chain gets no fanout and is one chain, [`Algo::Pipeline`]).
    /// AlltoAll by MPICH's scattered exchange, and by its selections,
    /// which run it for medium blocks: the destinations a batch
    /// (`MPIR_CVAR_ALLTOALL_THROTTLE`). AlltoAll by Open MPI's
    /// `linear_sync`, and by its fixed decision, which passes the limit to
    /// the `linear_sync` it picks: the requests of each kind outstanding
    /// (`coll_tuned_alltoall_algorithm_max_requests`).
    pub fn takes_fanout(self, op: Op) -> bool {
        match op {
            Op::Broadcast => matches!(self, Algo::Chain | Algo::Knomial | Algo::Ompi),
            Op::AllToAll => matches!(
                self,
                Algo::Scattered | Algo::Mpich | Algo::MpichNb | Algo::LinearSync | Algo::Ompi
            ),
            _ => false,
        }
    }

    /// What a fanout is, for the algorithms that take one
    /// ([`Algo::takes_fanout`]), in one phrase for messages.
    pub const FANOUT_USES: &'static str = "broadcast by chain (the chains), knomial or ompi \
        (the k-nomial tree's radix), alltoall by scattered, mpich or mpich-nb (MPICH's \
        destinations a batch) and by linear-sync or ompi (Open MPI's requests outstanding)";

    /// What is wrong with a fanout of `f` for `op` by this algorithm, one
    /// that takes a fanout ([`Algo::takes_fanout`]): 0 chains, a k-nomial
    /// radix below 2 (Open MPI's tree builder never ends at radix 1), a
    /// batch of 0 destinations (a request limit of 0 is Open MPI's
    /// default, none); `None` if nothing is.
    pub fn fanout_error(self, op: Op, f: u32) -> Option<String> {
        match (op, self) {
            (Op::Broadcast, Algo::Chain) if f == 0 => {
                Some("a chain broadcast needs at least 1 chain".to_string())
            }
            (Op::Broadcast, Algo::Chain) => None,
            (Op::Broadcast, _) if f < 2 => Some(format!(
                "{f} is not a k-nomial radix: Open MPI's must be at least 2 (a tree of radix 1 never branches)"
            )),
            (Op::AllToAll, Algo::Scattered | Algo::Mpich | Algo::MpichNb) if f == 0 => Some(
                "the scattered exchange needs at least 1 destination a batch (as many as the ranks or more: all at once)"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// The tree a broadcast by this algorithm goes down
    /// ([`program::Phase::TreeBcastAll`]), for those that go down one.
    pub fn bcast_tree(self) -> Option<bcast::BcastTree> {
        use bcast::BcastTree;
        match self {
            Algo::OmpiBinomial => Some(BcastTree::Binomial),
            Algo::Linear => Some(BcastTree::Flat),
            Algo::Chain => Some(BcastTree::Chain(OMPI_CHAINS)),
            Algo::Pipeline => Some(BcastTree::Chain(1)),
            Algo::BinaryTree => Some(BcastTree::Kary(2)),
            Algo::Knomial => Some(BcastTree::Knomial(OMPI_KNOMIAL_RADIX)),
            _ => None,
        }
    }
}

/// Open MPI's `coll_tuned_bcast_algorithm_chain_fanout` default: the
/// chains of a forced `chain` broadcast (`ompi_info --param coll tuned
/// --level 9`, 4.1.4); another is [`Collective::fanout`].
pub const OMPI_CHAINS: u32 = 4;

/// Open MPI's `coll_tuned_bcast_algorithm_knomial_radix` default, which
/// its fixed decision's k-nomial broadcast uses too (4.1.4); another is
/// [`Collective::fanout`].
pub const OMPI_KNOMIAL_RADIX: u32 = 4;

/// What one run of a collective carries.
///
/// Most collectives move the same amount from every rank
/// ([`Payload::Uniform`], the fast path: a program that stores one size,
/// costed by a compiled α-β model or a cached flow run). The others carry
/// a size per rank, per pair or per server; their programs are walked send
/// by send.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// The operation's size as [`Op`] defines it (the buffer, the whole
    /// AllGather output, one GPU's AlltoAll send buffer, the PS variable).
    Uniform(f64),
    /// AllGatherv: the bytes each rank contributes, by rank (the
    /// cluster's placement order). Equal blocks of m/N are
    /// `Uniform(m)`.
    PerRank(Arc<[f64]>),
    /// AlltoAllv: bytes from rank i to rank j at `i·N + j` (row-major
    /// N × N, ranks in the cluster's placement order, not GPU ids; the
    /// diagonal is not sent). Equal entries of m/N are `Uniform(m)`.
    PerPair(Arc<[f64]>),
    /// PS with unequal shards: the bytes of the variable on each server
    /// (every worker pushes, and pulls, server j's `shards[j]`).
    PerServer(Arc<[f64]>),
    /// PS whose workers push different rows (sparse gradients of the token
    /// model): worker w pushes to, and pulls from, server j
    /// `bytes[w·servers + j]`, row-major workers × servers; the workers
    /// are the GPUs in id order, or the nodes with local aggregation
    /// (their first GPUs push and pull, after an intra-node reduce, before
    /// an intra-node broadcast, of `intra` bytes).
    PerWorker {
        /// Servers (the row length).
        servers: u32,
        /// Bytes per worker and server.
        bytes: Arc<[f64]>,
        /// With local aggregation, the bytes of the intra-node stages.
        intra: f64,
    },
}

impl Payload {
    /// Whether every rank moves the same amount.
    pub fn is_uniform(&self) -> bool {
        matches!(self, Payload::Uniform(_))
    }

    /// The buffer size in the sense of [`Op`] (for tables and traces): the
    /// uniform size, the sum of AllGatherv blocks (the whole output), the
    /// largest row of an AlltoAllv (one GPU's send buffer), the sum of the
    /// PS shards (the variable), the largest worker's PS push.
    pub fn bytes(&self) -> f64 {
        match self {
            Payload::Uniform(b) => *b,
            Payload::PerRank(v) | Payload::PerServer(v) => v.iter().sum(),
            Payload::PerPair(m) => {
                let n = (m.len() as f64).sqrt().round() as usize;
                m.chunks(n.max(1))
                    .map(|row| row.iter().sum::<f64>())
                    .fold(0.0, f64::max)
            }
            // the largest worker's push (one worker's variable)
            Payload::PerWorker { servers, bytes, .. } => bytes
                .chunks(*servers as usize)
                .map(|row| row.iter().sum::<f64>())
                .fold(0.0, f64::max),
        }
    }
}

/// A collective over all GPUs of a cluster (and its PS servers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collective {
    /// The operation.
    pub op: Op,
    /// The algorithm (one of `op.algorithms()`).
    pub algo: Algo,
    /// PS: number of servers (0 = one per node).
    pub ps_servers: u32,
    /// PS: reduce the GPUs of a node first and let one GPU per node push
    /// and pull (Parallax "local aggregation").
    pub local_aggregation: bool,
    /// The groups it runs in: all GPUs (the default), or each node's, each
    /// rail's, or each block of k consecutive ranks, every group running
    /// its own instance at once (the size is then each group's buffer).
    /// Only [`Grouping::All`] for PS, hierarchical AllReduce and per-rank
    /// payloads ([`Collective::with_group`]).
    pub group: Grouping,
    /// Broadcast down one of Open MPI's trees (`ompi-binomial`, `chain`,
    /// `pipeline`, `binary-tree`, `knomial`, `split-binary-tree`:
    /// [`Algo::takes_segments`]): its segment size in bytes
    /// (`coll_tuned_bcast_algorithm_segmentsize`); 0, unsegmented (its
    /// default, and what its fixed decision runs). The split binary tree
    /// cuts each half so, and runs the pipeline in such segments where one
    /// is larger than a half, as Open MPI does. AllReduce by Open MPI's
    /// segmented ring: the segment of a block
    /// (`coll_tuned_allreduce_algorithm_segmentsize`;
    /// [`Collective::ring_phases`]). Other algorithms ignore it.
    pub segment: u64,
    /// Broadcast down Open MPI's chains (`chain`): how many
    /// (`coll_tuned_bcast_algorithm_chain_fanout`); down its k-nomial tree
    /// (`knomial`, and the k-nomial tree its fixed decision `ompi` picks):
    /// the radix (`coll_tuned_bcast_algorithm_knomial_radix`). 0, Open
    /// MPI's default for both, 4 ([`OMPI_CHAINS`], [`OMPI_KNOMIAL_RADIX`]).
    /// AlltoAll by MPICH's scattered exchange (`scattered`, and `mpich`
    /// where it runs it): the destinations a batch
    /// (`MPIR_CVAR_ALLTOALL_THROTTLE`; as many as the ranks or more: all
    /// at once); 0, MPICH's default, [`MPICH_ALLTOALL_THROTTLE`].
    /// AlltoAll by Open MPI's `linear_sync` (`linear-sync`, and `ompi`
    /// where it picks it): the sends, and the receives, a rank keeps
    /// outstanding (`coll_tuned_alltoall_algorithm_max_requests`; the
    /// ranks less one or more: all at once); 0, Open MPI's default, no
    /// limit. Other algorithms ignore it ([`Algo::takes_fanout`]).
    pub fanout: u32,
}

impl Collective {
    /// `op` with its default algorithm, one PS server per node, local
    /// aggregation off, over all GPUs.
    pub fn new(op: Op) -> Collective {
        Collective {
            op,
            algo: op.algorithms()[0],
            ps_servers: 0,
            local_aggregation: false,
            group: Grouping::All,
            segment: 0,
            fanout: 0,
        }
    }

    /// The segments a broadcast of `bytes` in [`Collective::segment`]s
    /// sends the buffer in: ⌈bytes/segment⌉ down a tree, and the split
    /// binary tree's two halves ⌈(bytes/2)/segment⌉ each (the pipeline's,
    /// where a segment is larger than a half); those each rank's block goes
    /// in by the segmented ring on groups of `members` ranks, its
    /// [`Collective::ring_phases`] (1 where it runs the plain ring); 1
    /// unsegmented.
    pub fn segments(&self, members: u32, bytes: u64) -> u64 {
        let seg = self.segment;
        if seg == 0 || !self.algo.takes_segments(self.op) {
            return 1;
        }
        if self.op == Op::AllReduce {
            return self.ring_phases(members, bytes as f64).max(1);
        }
        if self.algo == Algo::SplitBinaryTree && !self.split_runs_pipeline(bytes as f64) {
            2 * (bytes as f64 / 2.0 / seg as f64).ceil().max(1.0) as u64
        } else {
            bytes.div_ceil(seg).max(1)
        }
    }

    /// Whether this broadcast, Open MPI's split binary tree in segments,
    /// runs Open MPI's pipeline for a buffer of `bytes` instead: where a
    /// segment is larger than a half.
    pub fn split_runs_pipeline(&self, bytes: f64) -> bool {
        self.op == Op::Broadcast
            && self.algo == Algo::SplitBinaryTree
            && self.segment > 0
            && self.segment as f64 > bytes / 2.0
    }

    /// The tree a broadcast by `algo` (this collective's, or the one its
    /// selection runs) goes down, with this collective's
    /// [`Collective::fanout`] where `algo` takes one.
    pub fn bcast_tree(&self, algo: Algo) -> Option<bcast::BcastTree> {
        use bcast::BcastTree;
        match (algo, self.fanout) {
            (_, 0) => algo.bcast_tree(),
            (Algo::Chain, f) => Some(BcastTree::Chain(f)),
            (Algo::Knomial, k) => Some(BcastTree::Knomial(k)),
            _ => algo.bcast_tree(),
        }
    }

    /// Run in `group` instead; `None` where the algorithm has a structure
    /// of its own (PS servers, hierarchical AllReduce, the pipelined tree
    /// and broadcast), or where a block
    /// size of 0 or one that does not divide the GPUs of `cluster` is asked.
    pub fn with_group(self, group: Grouping, cluster: &ClusterSpec) -> Option<Collective> {
        let fits = match group {
            Grouping::Block(k) => k > 0 && cluster.gpus().is_multiple_of(k),
            Grouping::Stage { size, stage } => {
                size > 0 && cluster.gpus().is_multiple_of(size) && stage < cluster.gpus() / size
            }
            _ => true,
        };
        let allowed = match (self.op, group) {
            (_, Grouping::All) => self.op != Op::SendRecv,
            // a stage's own PS workers (servers on every node), without
            // local aggregation; a point-to-point from one stage to its
            // neighbour
            (Op::Ps, Grouping::Stage { .. }) => !self.local_aggregation,
            (Op::SendRecv, Grouping::Stage { size, stage }) => match self.algo {
                Algo::Next => stage + 1 < cluster.gpus() / size,
                _ => stage > 0,
            },
            (Op::SendRecv, _) => false,
            _ => !self.spans_the_cluster(),
        };
        (fits && allowed).then_some(Collective { group, ..self })
    }

    /// Whether the algorithm is built on the whole cluster's structure
    /// (PS servers on every node, hierarchical AllReduce's node rings, the
    /// pipelined tree and broadcast's channels) and so runs over all GPUs
    /// only.
    pub fn spans_the_cluster(&self) -> bool {
        self.op == Op::Ps
            || matches!(
                (self.op, self.algo),
                (
                    Op::AllReduce,
                    Algo::Hierarchical | Algo::Tree | Algo::Nvls | Algo::NvlsTree | Algo::Sharp
                ) | (Op::Broadcast, Algo::Ring)
            )
    }

    /// Why the collective cannot run on `cluster`, if it cannot: NVLS and
    /// the NVLS tree need an NVSwitch that reduces, and NVLS across nodes
    /// InfiniBand switches that reduce between them (the NVLS tree joins
    /// the nodes by a tree on any network); SHARP needs InfiniBand
    /// switches that reduce (HDR, NDR).
    pub fn hardware_refusal(&self, cluster: &ClusterSpec) -> Option<String> {
        if self.algo == Algo::Sharp {
            let net = cluster.network.trim_end_matches('*');
            return (!SHARP_NETWORKS.contains(&net)).then(|| {
                format!(
                    "`sharp` needs InfiniBand switches that reduce (SHARP on Quantum, Quantum-2: network = {}); this cluster's network is `{}`",
                    SHARP_NETWORKS.join(" or "),
                    cluster.network
                )
            });
        }
        if !matches!(self.algo, Algo::Nvls | Algo::NvlsTree) {
            None
        } else if !cluster.in_switch_reduction() {
            Some(format!(
                "`{}` needs NVSwitches that reduce (NVLink SHARP: intra = \"nvlink4\", H100/H200 HGX); this cluster's GPU fabric is `{}`",
                self.algo.name(),
                cluster.intra_name
            ))
        } else if self.algo == Algo::Nvls
            && cluster.nodes > 1
            && !SHARP_NETWORKS.contains(&cluster.network.trim_end_matches('*'))
        {
            Some(format!(
                "`nvls` across nodes reduces in InfiniBand SHARP switches between the NVSwitches (network = {}); this cluster's network is `{}`: use `nvls-tree` (NCCL's NVLS with a tree between nodes)",
                SHARP_NETWORKS.join(" or "),
                cluster.network
            ))
        } else {
            None
        }
    }

    /// Members of each of its groups on `cluster`.
    pub fn group_size(&self, cluster: &ClusterSpec) -> u32 {
        match self.group {
            Grouping::All => cluster.gpus(),
            Grouping::IntraNode => cluster.gpus_per_node,
            Grouping::Rail => cluster.nodes,
            Grouping::Block(k) | Grouping::Stage { size: k, .. } => k,
        }
    }

    /// With a given algorithm; `None` if `op` does not support it.
    pub fn with_algo(self, algo: Algo) -> Option<Collective> {
        self.op
            .algorithms()
            .contains(&algo)
            .then_some(Collective { algo, ..self })
    }

    /// The algorithm a selection ([`Algo::Mpich`], [`Algo::Ompi`]) runs
    /// for a buffer of `bytes` on groups of `members` ranks; any other
    /// algorithm is itself. For AllGather MPICH compares the gathered
    /// output (`total_msg_size`) with its thresholds: under 524288 bytes on
    /// a power-of-two communicator, recursive doubling; under 81920 bytes
    /// on any other, Bruck's; else the ring. Open MPI looks each rank's
    /// bytes up in a table by the rank count (`ompi_allgather`). Neighbor
    /// exchange on an odd count runs the ring. For AllReduce MPICH runs
    /// recursive doubling below a few bytes a rank
    /// (`mpich_allreduce_switch`) and Rabenseifner's from there; Open MPI
    /// looks the buffer up in a table by the rank count
    /// (`ompi_allreduce`). For AlltoAll both look up each block's bytes
    /// (`mpich_alltoall`, `ompi_alltoall`); for Broadcast the buffer's
    /// (`mpich_bcast`, `ompi_bcast`).
    pub fn selected(&self, members: u32, bytes: f64) -> Algo {
        match (self.op, self.algo) {
            // Open MPI's neighbor exchange runs the ring on an odd count
            (Op::AllGather, Algo::NeighborExchange) if !members.is_multiple_of(2) => Algo::Ring,
            (Op::AllGather | Op::AllReduce | Op::AllToAll | Op::Broadcast, Algo::Ompi) => {
                let (table, unit, past) = self.ompi_table(members);
                let chosen = table
                    .into_iter()
                    .find(|&(below, _)| bytes / unit < below)
                    .map_or(past, |(_, a)| a);
                // its linear_sync without a request limit is the linear
                // exchange, step for step
                if chosen == Algo::LinearSync && self.requests(members) == 0 {
                    return Algo::Linear;
                }
                // its allreduce's ring runs recursive doubling on fewer
                // elements than ranks (4-byte elements)
                if self.op == Op::AllReduce && chosen == Algo::Ring && bytes < 4.0 * members as f64
                {
                    Algo::RecursiveDoubling
                } else {
                    chosen
                }
            }
            (Op::AllReduce, Algo::Mpich) => {
                if bytes < mpich_allreduce_switch(members) {
                    Algo::RecursiveDoubling
                } else {
                    Algo::Rabenseifner
                }
            }
            (Op::Broadcast, Algo::Mpich) => mpich_bcast(members, bytes),
            // Open MPI's segmented ring runs its plain ring on fewer
            // elements than a phase needs, which runs recursive doubling on
            // fewer elements than ranks (4-byte elements)
            (Op::AllReduce, Algo::SegmentedRing) if bytes < 4.0 * members as f64 => {
                Algo::RecursiveDoubling
            }
            (Op::AllReduce, Algo::SegmentedRing) if self.ring_phases(members, bytes) == 0 => {
                Algo::Ring
            }
            (Op::AllToAll, Algo::Mpich) => mpich_alltoall(members, bytes, MPICH_ALLTOALL_SHORT),
            (Op::AllToAll, Algo::MpichNb) => mpich_alltoall(members, bytes, MPICH_IALLTOALL_SHORT),
            (Op::AllGather, Algo::Mpich) => {
                if members.is_power_of_two() && bytes < MPICH_ALLGATHER_LONG {
                    Algo::RecursiveDoubling
                } else if !members.is_power_of_two() && bytes < MPICH_ALLGATHER_SHORT {
                    Algo::Bruck
                } else {
                    Algo::Ring
                }
            }
            (_, algo) => algo,
        }
    }

    /// This collective as it runs a buffer of `bytes` on `cluster`: a
    /// selection ([`Algo::Mpich`], [`Algo::Ompi`]) with the algorithm it
    /// chooses there ([`Collective::selected`]), anything else itself.
    pub fn running_at(&self, cluster: &ClusterSpec, bytes: f64) -> Collective {
        Collective {
            algo: self.selected(self.group_size(cluster), bytes),
            ..*self
        }
    }

    /// The buffer sizes, bytes, at which a selection ([`Algo::Mpich`],
    /// [`Algo::Ompi`]) on
    /// groups of `members` ranks changes algorithm: from each, up to the
    /// next, one algorithm runs ([`Collective::selected`]). Empty for
    /// every other algorithm.
    pub fn switches(&self, members: u32) -> Vec<f64> {
        match (self.op, self.algo) {
            // the table's bounds in bytes of the buffer, and the
            // allreduce's ring's fallback
            (Op::AllGather | Op::AllReduce | Op::AllToAll | Op::Broadcast, Algo::Ompi)
                if members > 1 =>
            {
                let (table, unit, _) = self.ompi_table(members);
                let fallback = (self.op == Op::AllReduce).then_some(4.0 * members as f64);
                self.changes(
                    members,
                    table
                        .into_iter()
                        .map(|(below, _)| below * unit)
                        .chain(fallback),
                )
            }
            (Op::AllGather, Algo::Mpich) if members > 1 => {
                if members.is_power_of_two() {
                    vec![MPICH_ALLGATHER_LONG]
                } else {
                    vec![MPICH_ALLGATHER_SHORT]
                }
            }
            (Op::AllReduce, Algo::Mpich) if members > 1 => vec![mpich_allreduce_switch(members)],
            // the plain ring's recursive doubling below an element a rank,
            // and the first buffer of a phase's elements, N segments
            (Op::AllReduce, Algo::SegmentedRing) if members > 1 => {
                let per = self.ring_segment_elements();
                let n = members as f64;
                self.changes(
                    members,
                    [4.0 * n, 4.0 * n * per as f64]
                        .into_iter()
                        .filter(|&b| b > 0.0),
                )
            }
            (Op::Broadcast, Algo::Mpich) if members > 1 => self.changes(
                members,
                [MPICH_BCAST_SHORT, MPICH_BCAST_LONG]
                    .map(|b| b + 1.0)
                    .into_iter(),
            ),
            // the first buffer of whole blocks past each bound
            (Op::AllToAll, Algo::Mpich | Algo::MpichNb) if members > 1 => self.changes(
                members,
                [
                    MPICH_ALLTOALL_SHORT,
                    MPICH_IALLTOALL_SHORT,
                    MPICH_ALLTOALL_MEDIUM,
                ]
                .map(|b| (b + 1.0) * members as f64)
                .into_iter(),
            ),
            _ => Vec::new(),
        }
    }

    /// Open MPI's fixed decision for this collective on `members` ranks:
    /// its table ((bound, algorithm) by increasing bound), the buffer bytes
    /// a unit of its bounds stands for (the allgather's table counts a
    /// rank's share and the alltoall's a block, 1/`members` of the
    /// buffer; the allreduce's and the broadcast's the buffer), and the
    /// algorithm past its
    /// last bound.
    ///
    /// # Panics
    /// For an operation without Open MPI's selection.
    fn ompi_table(&self, members: u32) -> (Vec<(f64, Algo)>, f64, Algo) {
        let share = members.max(1) as f64;
        match self.op {
            Op::AllGather => (ompi_allgather(members), share, Algo::Ring),
            Op::AllReduce => (ompi_allreduce(members), 1.0, Algo::Rabenseifner),
            Op::AllToAll => (ompi_alltoall(members), share, Algo::Pairwise),
            Op::Broadcast => (ompi_bcast(members), 1.0, Algo::Knomial),
            op => unreachable!("{} has no Open MPI selection", op.name()),
        }
    }

    /// Which of `bounds` (bytes; any order, infinite ones ignored) the
    /// selection's algorithm changes at on groups of `members` ranks, by
    /// increasing size: [`Collective::switches`] of a selection whose
    /// algorithm is the same between two consecutive bounds.
    fn changes(&self, members: u32, bounds: impl Iterator<Item = f64>) -> Vec<f64> {
        let mut bounds: Vec<f64> = bounds.filter(|b| b.is_finite()).collect();
        bounds.sort_by(f64::total_cmp);
        let mut out = Vec::new();
        let mut was = self.selected(members, 0.0);
        for b in bounds {
            let now = self.selected(members, b);
            if now != was {
                out.push(b);
                was = now;
            }
        }
        out
    }

    /// The requests of each kind a rank of an AlltoAll by Open MPI's
    /// `linear_sync` keeps outstanding on groups of `members` ranks
    /// ([`Collective::fanout`]): 0, all at once, where it sets no limit or
    /// one of at least the ranks less one (Open MPI posts them all then).
    pub fn requests(&self, members: u32) -> u32 {
        if self.fanout >= members.saturating_sub(1) {
            0
        } else {
            self.fanout
        }
    }

    /// The phases of an AllReduce by Open MPI's segmented ring of a
    /// buffer of `bytes` on `members` ranks ([`Algo::SegmentedRing`],
    /// `ompi_coll_base_allreduce_intra_ring_segmented`), each block cut in
    /// as many segments: with c = ⌊bytes/4⌋ elements (4-byte elements
    /// assumed) and s the segment in elements (`COLL_BASE_COMPUTED_SEGCOUNT`:
    /// the segment's bytes over 4, rounded up past half an element, where
    /// a segment holds at least one element and fewer than c), ⌊c/(N·s)⌋,
    /// one more where the rest is at least N and over half of N·s; 0, the
    /// plain ring, where c < N·s (no segment size among those cases).
    pub fn ring_phases(&self, members: u32, bytes: f64) -> u64 {
        let n = members as u64;
        let count = (bytes.max(0.0) / 4.0).floor() as u64;
        let seg = self.segment;
        let per = if seg >= 4 && seg < 4u64.saturating_mul(count) {
            self.ring_segment_elements()
        } else {
            count
        };
        let round = n.saturating_mul(per);
        if n < 2 || round == 0 || count < round {
            return 0;
        }
        let rest = count % round;
        count / round + u64::from(rest >= n && rest > round / 2)
    }

    /// The segmented ring's segment in 4-byte elements
    /// (`COLL_BASE_COMPUTED_SEGCOUNT`: the segment's bytes over 4, one more
    /// past half an element), where it holds fewer than the buffer's.
    fn ring_segment_elements(&self) -> u64 {
        self.segment / 4 + u64::from(self.segment % 4 > 2)
    }

    /// Number of PS servers on `cluster`: `ps_servers`, or by default one
    /// a machine (a dedicated one where the cluster has them).
    pub fn servers(&self, cluster: &ClusterSpec) -> u32 {
        if self.op != Op::Ps {
            0
        } else if self.ps_servers == 0 {
            cluster.server_machines()
        } else {
            self.ps_servers
        }
    }

    /// The step program for a buffer of `bytes` (each group's, when the
    /// collective runs in groups).
    ///
    /// # Panics
    /// If [`Collective::group`] is not one [`Collective::with_group`]
    /// allows.
    pub fn program(&self, cluster: &ClusterSpec, bytes: f64) -> Program {
        assert!(
            self.with_group(self.group, cluster).is_some(),
            "{}/{} cannot run in {:?}",
            self.op.name(),
            self.algo.name(),
            self.group
        );
        let size = self.group_size(cluster);
        let n = size as f64;
        let g = cluster.gpus_per_node as f64;
        let nodes = cluster.nodes as f64;
        let all = self.group;
        let phases = match (self.op, self.algo) {
            (Op::AllReduce, Algo::Ring) => vec![Phase::Ring {
                group: all,
                steps: 2 * (size - 1),
                chunk: bytes / n,
            }],
            (Op::AllReduce, Algo::Tree) => {
                let part = bytes / (2 * tree_channels(cluster)) as f64;
                let chunks = program::pipeline_chunks(part);
                vec![
                    Phase::TreeReduce { part, chunks },
                    Phase::TreeBcast { part, chunks },
                ]
            }
            // NCCL's chunk is each GPU's shard of a piece
            (Op::AllReduce, Algo::Sharp) if cluster.nodes > 1 => vec![Phase::Sharp {
                part: bytes,
                chunks: program::pipeline_chunks(bytes / g),
            }],
            // one node: no network to reduce in; the node's rings
            (Op::AllReduce, Algo::Sharp) => {
                let intra = |steps| Phase::Ring {
                    group: Grouping::IntraNode,
                    steps,
                    chunk: bytes / g,
                };
                vec![
                    intra(cluster.gpus_per_node - 1),
                    intra(cluster.gpus_per_node - 1),
                ]
            }
            // NCCL's chunk is each GPU's shard of a piece (its NVLS head's)
            (Op::AllReduce, Algo::NvlsTree) if cluster.nodes > 1 => vec![Phase::NvlsTree {
                part: bytes,
                chunks: program::pipeline_chunks(bytes / g),
            }],
            (Op::AllReduce, Algo::Nvls | Algo::NvlsTree) => vec![Phase::Nvls {
                part: bytes,
                chunks: program::pipeline_chunks(bytes / g),
                across: cluster.nodes > 1,
            }],
            (Op::AllReduce, Algo::Binomial) | (Op::GTopK, Algo::Tree) => vec![
                Phase::BinomialReduce { group: all, bytes },
                Phase::BinomialBcast { group: all, bytes },
            ],
            (Op::AllReduce, Algo::Hierarchical) => vec![
                Phase::Ring {
                    group: Grouping::IntraNode,
                    steps: cluster.gpus_per_node - 1,
                    chunk: bytes / g,
                },
                Phase::Ring {
                    group: Grouping::Rail,
                    steps: 2 * (cluster.nodes - 1),
                    chunk: bytes / (g * nodes),
                },
                Phase::Ring {
                    group: Grouping::IntraNode,
                    steps: cluster.gpus_per_node - 1,
                    chunk: bytes / g,
                },
            ],
            // a selection, and the segmented ring where it runs the plain
            // ring or its recursive doubling: the algorithm chosen
            (
                Op::AllGather | Op::AllReduce | Op::AllToAll | Op::Broadcast,
                Algo::Mpich | Algo::Ompi,
            )
            | (Op::AllToAll, Algo::MpichNb)
            | (Op::AllReduce, Algo::SegmentedRing)
                if self.selected(size, bytes) != self.algo =>
            {
                let chosen = Collective {
                    algo: self.selected(size, bytes),
                    ..*self
                };
                return chosen.program(cluster, bytes);
            }
            // P reduce-scatter rings over a segment of each block, one
            // after another, then the allgather ring of whole blocks; at
            // most 2^31 steps (a buffer of billions of segments), so that
            // the program's step count stays in a u32
            (Op::AllReduce, Algo::SegmentedRing) => {
                let p = self
                    .ring_phases(size, bytes)
                    .clamp(1, (1u64 << 31) / (size as u64 - 1).max(1));
                vec![
                    Phase::Ring {
                        group: all,
                        steps: (size - 1) * p as u32,
                        chunk: bytes / n / p as f64,
                    },
                    Phase::Ring {
                        group: all,
                        steps: size - 1,
                        chunk: bytes / n,
                    },
                ]
            }
            (Op::AllReduce, Algo::RecursiveDoubling | Algo::Rabenseifner) => {
                vec![Phase::RecursiveAllReduce {
                    group: all,
                    bytes,
                    halving: self.algo == Algo::Rabenseifner,
                }]
            }
            (Op::AllGather, Algo::RecursiveDoubling) => vec![Phase::RecursiveDoubling {
                group: all,
                bytes: bytes / n,
            }],
            (Op::AllGather, Algo::Bruck) => vec![Phase::Bruck {
                group: all,
                bytes: bytes / n,
            }],
            (Op::AllGather, Algo::NeighborExchange) if size.is_multiple_of(2) => {
                vec![Phase::NeighborExchange {
                    group: all,
                    bytes: bytes / n,
                }]
            }
            // Open MPI's neighbor exchange runs the ring on an odd count
            (Op::AllGather, Algo::NeighborExchange) => vec![Phase::Ring {
                group: all,
                steps: size - 1,
                chunk: bytes / n,
            }],
            (Op::AllGather | Op::ReduceScatter, Algo::Ring) => vec![Phase::Ring {
                group: all,
                steps: size - 1,
                chunk: bytes / n,
            }],
            (Op::TopK, Algo::RecursiveDoubling) => {
                vec![Phase::RecursiveDoubling { group: all, bytes }]
            }
            (Op::TopK, Algo::Ring) => vec![Phase::Ring {
                group: all,
                steps: size - 1,
                chunk: bytes,
            }],
            (Op::Broadcast, Algo::Ring) => {
                let part = bytes / ring_channels(cluster) as f64;
                vec![Phase::Chain {
                    part,
                    chunks: program::pipeline_chunks(part),
                }]
            }
            (Op::Broadcast, algo) if algo.bcast_tree().is_some() => {
                // equal segments of at most `segment` bytes (Open MPI's last
                // is the remainder)
                let segments = if self.segment > 0 && algo.takes_segments(Op::Broadcast) {
                    (bytes / self.segment as f64).ceil().max(1.0) as u32
                } else {
                    1
                };
                vec![Phase::TreeBcastAll {
                    group: all,
                    tree: self.bcast_tree(algo).expect("a tree"),
                    bytes: bytes / segments as f64,
                    segments,
                }]
            }
            // Open MPI runs its pipeline (a chain of one) in segments
            // instead where a segment is larger than a half
            (Op::Broadcast, Algo::SplitBinaryTree) if self.split_runs_pipeline(bytes) => {
                let segments = (bytes / self.segment as f64).ceil().max(1.0) as u32;
                vec![Phase::TreeBcastAll {
                    group: all,
                    tree: bcast::BcastTree::Chain(1),
                    bytes: bytes / segments as f64,
                    segments,
                }]
            }
            (Op::Broadcast, Algo::SplitBinaryTree) => {
                let half = bytes / 2.0;
                let segments = if self.segment > 0 {
                    (half / self.segment as f64).ceil().max(1.0) as u32
                } else {
                    1
                };
                vec![Phase::SplitBinaryTree {
                    group: all,
                    bytes: half,
                    segments,
                }]
            }
            (Op::Broadcast, Algo::ScatterAllgather | Algo::ScatterAllgatherRing) => {
                let block = bytes / n;
                let scatter = Phase::BinomialScatter { group: all, block };
                if self.algo == Algo::ScatterAllgather {
                    vec![scatter, Phase::BcastDoubling { group: all, block }]
                } else {
                    vec![
                        scatter,
                        Phase::Ring {
                            group: all,
                            steps: size - 1,
                            chunk: block,
                        },
                    ]
                }
            }
            (Op::Broadcast, _) => vec![Phase::BinomialBcast { group: all, bytes }],
            (Op::AllToAll, Algo::Scattered) => vec![Phase::Linear {
                group: all,
                chunk: bytes / n,
                batch: match self.fanout {
                    0 => MPICH_ALLTOALL_THROTTLE,
                    k => k,
                },
                with_self: true,
            }],
            (Op::AllToAll, Algo::Linear) => vec![Phase::Linear {
                group: all,
                chunk: bytes / n,
                batch: 0,
                with_self: false,
            }],
            (Op::AllToAll, Algo::LinearSync) => vec![Phase::Linear {
                group: all,
                chunk: bytes / n,
                batch: self.requests(size),
                with_self: false,
            }],
            (Op::AllToAll, Algo::Bruck) => vec![Phase::BruckAllToAll {
                group: all,
                chunk: bytes / n,
            }],
            (Op::AllToAll, _) => vec![Phase::Pairwise {
                group: all,
                chunk: bytes / n,
            }],
            (Op::SendRecv, algo) => {
                let Grouping::Stage { stage, .. } = self.group else {
                    unreachable!("with_group allows stages only")
                };
                let to = if algo == Algo::Next {
                    stage + 1
                } else {
                    stage - 1
                };
                vec![Phase::Shift {
                    from: self.group,
                    to,
                    bytes,
                }]
            }
            (Op::Ps, algo) => {
                let shard = bytes / self.servers(cluster) as f64;
                let overlap = algo == Algo::Overlapped;
                let part = match algo {
                    Algo::Push => PsPart::Push,
                    Algo::Pull => PsPart::Pull,
                    _ => PsPart::PushPull,
                };
                let la = self.local_aggregation && cluster.gpus_per_node > 1;
                let ps = Phase::Ps {
                    leaders_only: la,
                    workers: self.group,
                    shard: Shards::Even(shard),
                    overlap,
                    part,
                };
                if la {
                    // the node's reduce before its push, its broadcast
                    // after its pull
                    let reduce = Phase::BinomialReduce {
                        group: Grouping::IntraNode,
                        bytes,
                    };
                    let bcast = Phase::BinomialBcast {
                        group: Grouping::IntraNode,
                        bytes,
                    };
                    match part {
                        PsPart::PushPull => vec![reduce, ps, bcast],
                        PsPart::Push => vec![reduce, ps],
                        PsPart::Pull => vec![ps, bcast],
                    }
                } else {
                    vec![ps]
                }
            }
            (op, algo) => panic!("{} does not support {}", op.name(), algo.name()),
        };
        Program::new(cluster, phases, self.servers(cluster))
    }

    /// The step program for `payload`: [`Payload::Uniform`] is
    /// [`Collective::program`]; the per-rank payloads give the `…v`
    /// variants (see [`Payload`] for which operation takes which).
    ///
    /// # Panics
    /// If the payload does not fit the operation or the cluster (a planner
    /// bug, never user input: planners build payloads from validated
    /// scenarios).
    pub fn program_for(&self, cluster: &ClusterSpec, payload: &Payload) -> Program {
        let n = cluster.gpus() as usize;
        assert!(
            payload.is_uniform() || self.group == Grouping::All,
            "a per-rank payload runs over all GPUs"
        );
        match payload {
            Payload::Uniform(bytes) => self.program(cluster, *bytes),
            Payload::PerRank(blocks) => {
                assert!(
                    self.op == Op::AllGather && blocks.len() == n,
                    "a per-rank payload of {} sizes for {} on {n} GPUs",
                    blocks.len(),
                    self.op.name()
                );
                Program::new(
                    cluster,
                    vec![Phase::RingV {
                        blocks: blocks.clone(),
                    }],
                    0,
                )
            }
            Payload::PerPair(matrix) => {
                assert!(
                    self.op == Op::AllToAll && matrix.len() == n * n,
                    "a per-pair payload of {} sizes for {} on {n} GPUs",
                    matrix.len(),
                    self.op.name()
                );
                Program::new(
                    cluster,
                    vec![Phase::PairwiseV {
                        matrix: matrix.clone(),
                    }],
                    0,
                )
            }
            Payload::PerServer(shards) => {
                let servers = self.servers(cluster);
                assert!(
                    self.op == Op::Ps && shards.len() == servers as usize,
                    "a per-server payload of {} shards for {} with {servers} servers",
                    shards.len(),
                    self.op.name()
                );
                // the intra-node reduce and broadcast of local aggregation
                // carry the whole variable
                let mut prog = self.program(cluster, shards.iter().sum());
                for ph in prog.phases_mut() {
                    if let Phase::Ps { shard, .. } = ph {
                        *shard = Shards::PerServer(shards.clone());
                    }
                }
                prog
            }
            Payload::PerWorker {
                servers,
                bytes,
                intra,
            } => {
                let la = self.local_aggregation && cluster.gpus_per_node > 1;
                let workers = if la { cluster.nodes } else { cluster.gpus() };
                assert!(
                    self.op == Op::Ps
                        && *servers == self.servers(cluster)
                        && bytes.len() == (workers * servers) as usize,
                    "a per-worker payload of {} sizes for {} with {} servers, {workers} workers",
                    bytes.len(),
                    self.op.name(),
                    self.servers(cluster)
                );
                let mut prog = self.program(cluster, *intra);
                for ph in prog.phases_mut() {
                    if let Phase::Ps { shard, .. } = ph {
                        *shard = Shards::PerWorker(bytes.clone());
                    }
                }
                prog
            }
        }
    }

    /// Bytes each directed link of `cluster`'s [`crate::cluster::Topology`]
    /// carries during one run on a buffer of `bytes`, indexed by
    /// [`crate::cluster::LinkId`] ([`links::link_bytes`] of
    /// [`Collective::program`]). Proportional to `bytes` (for a selection,
    /// [`Algo::Mpich`], between two of its [`Collective::switches`]).
    pub fn link_bytes(&self, cluster: &ClusterSpec, bytes: f64) -> Vec<f64> {
        let topo = crate::cluster::Topology::new(cluster);
        links::link_bytes(&self.program(cluster, bytes), &topo)
    }

    /// The closed-form cost model of this collective on `cluster`.
    pub fn analytical(&self, cluster: &ClusterSpec) -> analytical::CostModel {
        analytical::CostModel::new(self, cluster)
    }
}

/// Open MPI's default AllGather on `members` ranks (coll tuned's fixed
/// decision, `ompi_coll_tuned_allgather_intra_dec_fixed`, Open MPI 4.1 to
/// 5.0; read off the source and checked against 4.1.4's compiled
/// library): (each rank's bytes below which, algorithm), by increasing
/// size, the last unbounded. Its recursive doubling runs Bruck's on a
/// count that is not a power of two, and its neighbor exchange the ring
/// on an odd count; two ranks swap their halves once (as the ring's one
/// step).
fn ompi_allgather(members: u32) -> Vec<(f64, Algo)> {
    const RD: u8 = 3;
    const BRUCK: u8 = 2;
    const RING: u8 = 4;
    const NEIGHBOR: u8 = 5;
    let pow2 = members.is_power_of_two();
    let algo = |a: u8| match a {
        RD if pow2 => Algo::RecursiveDoubling,
        RD | BRUCK => Algo::Bruck,
        NEIGHBOR if members.is_multiple_of(2) => Algo::NeighborExchange,
        _ => Algo::Ring,
    };
    let rows: &[(f64, u8)] = match members {
        0..=2 => &[(f64::INFINITY, RING)],
        3..=31 => &[(f64::INFINITY, RD)],
        32..=63 => &[(1024.0, RD), (65536.0, NEIGHBOR), (f64::INFINITY, RING)],
        64..=127 => &[(512.0, RD), (65536.0, NEIGHBOR), (f64::INFINITY, RING)],
        128..=255 => &[
            (512.0, RD),
            (131072.0, NEIGHBOR),
            (524288.0, RING),
            (1048576.0, NEIGHBOR),
            (f64::INFINITY, RING),
        ],
        256..=511 => &[
            (32.0, RD),
            (128.0, BRUCK),
            (1024.0, RD),
            (131072.0, NEIGHBOR),
            (524288.0, RING),
            (1048576.0, NEIGHBOR),
            (f64::INFINITY, RING),
        ],
        512..=1023 => &[
            (64.0, RD),
            (256.0, BRUCK),
            (2048.0, RD),
            (f64::INFINITY, NEIGHBOR),
        ],
        1024..=2047 => &[
            (4.0, RD),
            (8.0, BRUCK),
            (16.0, RD),
            (32.0, BRUCK),
            (256.0, RD),
            (512.0, BRUCK),
            (4096.0, RD),
            (f64::INFINITY, NEIGHBOR),
        ],
        2048..=4095 => &[
            (32.0, BRUCK),
            (128.0, RD),
            (512.0, BRUCK),
            (4096.0, RD),
            (f64::INFINITY, NEIGHBOR),
        ],
        _ => &[
            (2.0, RD),
            (8.0, BRUCK),
            (16.0, RD),
            (512.0, BRUCK),
            (4096.0, RD),
            (f64::INFINITY, NEIGHBOR),
        ],
    };
    rows.iter().map(|&(below, a)| (below, algo(a))).collect()
}

/// Open MPI's default AlltoAll on `members` ranks (coll tuned's fixed
/// decision, `ompi_coll_tuned_alltoall_intra_dec_fixed`, Open MPI 4.1 to
/// 5.0; read off the source, and its choices below 32 ranks and its
/// thresholds beyond checked against 4.1.4's compiled library): (each
/// block's bytes, a rank's data for one other, below which, algorithm),
/// by increasing size, the last unbounded. Its `basic_linear` is
/// [`Algo::Linear`], its `linear_sync` [`Algo::LinearSync`] (which it
/// passes `coll_tuned_alltoall_algorithm_max_requests`, and which without
/// one, the default, [`Collective::selected`] reports as
/// [`Algo::Linear`]), its `modified_bruck` [`Algo::Bruck`]; on two ranks
/// every algorithm, `two_proc` and `linear_sync` included, is one
/// exchange, the pairwise one's.
fn ompi_alltoall(members: u32) -> Vec<(f64, Algo)> {
    use Algo::{Bruck as BR, Linear as L, LinearSync as LS, Pairwise as PW};
    const ALL: f64 = f64::INFINITY;
    match members {
        0..=2 => vec![(ALL, PW)],
        3..=7 => vec![
            (8192.0, LS),
            (16384.0, L),
            (65536.0, LS),
            (524288.0, L),
            (1048576.0, PW),
            (ALL, L),
        ],
        8..=15 => vec![(262144.0, LS), (ALL, L)],
        16..=31 => vec![
            (4.0, LS),
            (512.0, BR),
            (8192.0, LS),
            (32768.0, L),
            (262144.0, LS),
            (524288.0, L),
            (ALL, LS),
        ],
        32..=63 => vec![(512.0, BR), (524288.0, L), (ALL, LS)],
        64..=127 => vec![
            (1024.0, BR),
            (2048.0, L),
            (4096.0, LS),
            (262144.0, L),
            (ALL, PW),
        ],
        128..=255 => vec![(1024.0, BR), (2048.0, LS), (262144.0, L), (ALL, PW)],
        256..=511 => vec![(1024.0, BR), (8192.0, LS), (32768.0, L), (ALL, PW)],
        512..=1023 => vec![
            (512.0, BR),
            (8192.0, LS),
            (16384.0, L),
            (131072.0, LS),
            (262144.0, L),
            (ALL, PW),
        ],
        1024..=2047 => vec![
            (512.0, BR),
            (1024.0, LS),
            (2048.0, L),
            (16384.0, LS),
            (262144.0, L),
            (ALL, LS),
        ],
        2048..=4095 => vec![
            (1024.0, BR),
            (4096.0, LS),
            (8192.0, L),
            (131072.0, LS),
            (ALL, L),
        ],
        _ => vec![
            (2048.0, BR),
            (8192.0, LS),
            (16384.0, L),
            (32768.0, LS),
            (65536.0, L),
            (ALL, LS),
        ],
    }
}

/// Open MPI's default broadcast on `members` ranks (coll tuned's fixed
/// decision, `ompi_coll_tuned_bcast_intra_dec_fixed`, Open MPI 4.1 to
/// 5.0; read off the source and checked against 4.1.4's compiled
/// library): (buffer bytes below which, algorithm), by increasing size,
/// the last unbounded. It passes no segment size, so every tree runs
/// unsegmented, and no chain fanout to its `chain`, which Open MPI's
/// chain builder takes as one chain: [`Algo::Pipeline`]. Its k-nomial
/// tree has radix [`OMPI_KNOMIAL_RADIX`], or the one
/// `coll_tuned_bcast_algorithm_knomial_radix` sets, which the fixed
/// decision passes it too ([`Collective::fanout`]). Its scatter-allgather runs basic linear on fewer elements
/// than ranks, which its rows (from 256 KiB) never meet below 32,768
/// ranks of 8-byte elements, and is left out.
fn ompi_bcast(members: u32) -> Vec<(f64, Algo)> {
    use Algo::{
        BinaryTree as BT, Knomial as KN, Linear as LIN, OmpiBinomial as BIN, Pipeline as PIPE,
        ScatterAllgather as SAG, SplitBinaryTree as SBT,
    };
    const ALL: f64 = f64::INFINITY;
    match members {
        0..=3 => vec![
            (32.0, PIPE),
            (256.0, BT),
            (512.0, PIPE),
            (1024.0, KN),
            (32768.0, LIN),
            (131072.0, BT),
            // its `chain`, with no fanout: one chain
            (262144.0, PIPE),
            (524288.0, LIN),
            (1048576.0, BIN),
            (ALL, BT),
        ],
        4..=7 => vec![
            (64.0, BT),
            (128.0, BIN),
            (2048.0, BT),
            (8192.0, BIN),
            (1048576.0, LIN),
            // its `chain`, with no fanout: one chain
            (ALL, PIPE),
        ],
        8..=15 => vec![
            (8.0, KN),
            (64.0, BT),
            (4096.0, KN),
            (16384.0, BT),
            (32768.0, BIN),
            (ALL, LIN),
        ],
        16..=31 => vec![(4096.0, KN), (1048576.0, BIN), (ALL, SAG)],
        32..=63 => vec![(2048.0, BIN), (ALL, KN)],
        64..=127 => vec![(ALL, KN)],
        128..=255 => vec![
            (2.0, BIN),
            (16384.0, BT),
            (32768.0, LIN),
            (65536.0, BT),
            (ALL, KN),
        ],
        256..=1023 => vec![(16384.0, KN), (32768.0, SBT), (ALL, KN)],
        1024..=2047 => vec![(524288.0, KN), (ALL, SAG)],
        2048..=4095 => vec![(262144.0, KN), (ALL, SAG)],
        _ => vec![(8192.0, KN), (16384.0, BT), (262144.0, KN), (ALL, SAG)],
    }
}

/// Open MPI's default AllReduce on `members` ranks for a commutative
/// operation (coll tuned's fixed decision,
/// `ompi_coll_tuned_allreduce_intra_dec_fixed`, Open MPI 4.1 to 5.0; read
/// off the source and checked against 4.1.4's compiled library): (buffer
/// bytes below which, algorithm), by increasing size, the last unbounded.
/// Its segmented ring is called with no segment size and
/// so runs the plain ring; its "nonoverlapping" reduce-then-broadcast
/// (under 128 KiB from 128 ranks, under 2 or 4 KiB from 256) is modelled
/// as the binomial reduce and broadcast, though Open MPI's own reduce and
/// broadcast decisions may pick other trees. Its ring runs recursive
/// doubling on fewer elements than ranks, which [`Collective::selected`]
/// applies (4-byte elements); Rabenseifner's own fallback on fewer
/// elements than the largest power of two ≤ N, a linear reduce and
/// broadcast, never meets this table (its Rabenseifner rows start at 4·p
/// bytes or more below 16,384 ranks) and is left out.
fn ompi_allreduce(members: u32) -> Vec<(f64, Algo)> {
    use Algo::{
        Binomial as NONOVERLAP, Rabenseifner as RAB, RecursiveDoubling as RD, Ring as RING,
    };
    const ALL: f64 = f64::INFINITY;
    match members {
        0..=3 => vec![
            (8.0, RING),
            (4096.0, RD),
            (8192.0, RING),
            (16384.0, RD),
            // the ring to 64 KiB, the "segmented" one (the ring) to 256 KiB
            (262144.0, RING),
            (ALL, RAB),
        ],
        4..=7 => vec![(16.0, RING), (8192.0, RD), (ALL, RAB)],
        8..=15 => vec![(8192.0, RD), (ALL, RAB)],
        16..=31 => vec![(64.0, RING), (4096.0, RD), (ALL, RAB)],
        32..=63 => vec![(128.0, RING), (ALL, RAB)],
        64..=127 => vec![(262144.0, RD), (ALL, RAB)],
        128..=255 => vec![(131072.0, NONOVERLAP), (262144.0, RD), (ALL, RAB)],
        256..=511 => vec![(4096.0, NONOVERLAP), (ALL, RAB)],
        512..=2047 => vec![(2048.0, NONOVERLAP), (16384.0, RD), (ALL, RAB)],
        2048..=4095 => vec![
            (2048.0, NONOVERLAP),
            (4096.0, RING),
            (16384.0, RD),
            (ALL, RAB),
        ],
        _ => vec![
            (2048.0, NONOVERLAP),
            (16384.0, RING),
            (32768.0, RD),
            (ALL, RAB),
        ],
    }
}

/// The buffer, bytes, from which MPICH's AllReduce on `members` ranks runs
/// Rabenseifner's algorithm rather than recursive doubling: more than 8
/// bytes and at least as many elements as the largest power of two p ≤
/// `members` (`count < pow2` in its selection), with 4-byte elements.
fn mpich_allreduce_switch(members: u32) -> f64 {
    let pof2 = if members == 0 {
        1
    } else {
        1u32 << (31 - members.leading_zeros())
    };
    (4.0 * pof2 as f64).max(9.0)
}

/// MPICH's `MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE` default, bytes of gathered
/// output: below it a power-of-two communicator gathers by recursive
/// doubling ([`Algo::Mpich`]).
const MPICH_ALLGATHER_LONG: f64 = 524_288.0;

/// MPICH's `MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE` default, bytes of gathered
/// output: below it any other communicator gathers by Bruck's algorithm.
const MPICH_ALLGATHER_SHORT: f64 = 81_920.0;

/// MPICH's broadcast selection (`maint/tuning/coll/mpir/generic.json`,
/// 3.4 to 5.0; read from 4.0.2's `libmpich.so`, where the file is
/// compiled in; MPICH 3.3's `MPIR_CVAR_BCAST_*` defaults have the same
/// values, compared with `<`):
/// the textbook binomial tree on fewer than [`MPICH_BCAST_MIN_PROCS`]
/// ranks or for a buffer of at most [`MPICH_BCAST_SHORT`] bytes; from
/// there scatter and recursive-doubling allgather on a power-of-two count
/// up to [`MPICH_BCAST_LONG`] bytes, scatter and ring allgather past it
/// and on every other count.
fn mpich_bcast(members: u32, bytes: f64) -> Algo {
    // at most a whole byte count: below the next one, as its switches
    // have it, for any buffer
    if members < MPICH_BCAST_MIN_PROCS || bytes < MPICH_BCAST_SHORT + 1.0 {
        Algo::Binomial
    } else if members.is_power_of_two() && bytes < MPICH_BCAST_LONG + 1.0 {
        Algo::ScatterAllgather
    } else {
        Algo::ScatterAllgatherRing
    }
}

/// MPICH's AlltoAll selection (`maint/tuning/coll/mpir/generic.json`,
/// read from 4.0.2's `libmpich.so`, where the file is compiled in), by
/// each block's bytes (`avg_msg_size`: the send count times the type's
/// size, a rank's data for one other): Bruck's for blocks of at most
/// [`MPICH_ALLTOALL_SHORT`] bytes on 8 ranks or more; the scattered
/// exchange, every send and receive posted at once, in batches of
/// `MPIR_CVAR_ALLTOALL_THROTTLE`, 32 destinations, the rank itself among
/// them ([`Algo::Scattered`]: one batch up to 32 ranks, as
/// [`Algo::Linear`]), for blocks of at most [`MPICH_ALLTOALL_MEDIUM`];
/// the pairwise exchange past it. MPICH pairs
/// ranks by exclusive or on a power of two, where [`Algo::Pairwise`]
/// sends to rank + k and receives from rank − k: each step moves one
/// block a rank either way, the same on one link class. Its nonblocking
/// selection ([`Algo::MpichNb`]) is the same with Bruck's up to `short`
/// = [`MPICH_IALLTOALL_SHORT`] bytes a block.
fn mpich_alltoall(members: u32, bytes: f64, short: f64) -> Algo {
    // at most a whole byte count: below the next one
    let block = bytes / members.max(1) as f64;
    if members >= 8 && block < short + 1.0 {
        Algo::Bruck
    } else if block < MPICH_ALLTOALL_MEDIUM + 1.0 {
        Algo::Scattered
    } else {
        Algo::Pairwise
    }
}

/// MPICH's AlltoAll: blocks of at most this many bytes run Bruck's
/// algorithm on 8 ranks or more ([`mpich_alltoall`]).
const MPICH_ALLTOALL_SHORT: f64 = 256.0;

/// MPICH's nonblocking AlltoAll (`generic.json`'s `ialltoall`, 3.4 to
/// 5.0): blocks of at most this many bytes run Bruck's algorithm on 8
/// ranks or more ([`Algo::MpichNb`]).
const MPICH_IALLTOALL_SHORT: f64 = 2048.0;

/// MPICH's AlltoAll: blocks of at most this many bytes run the scattered
/// exchange ([`mpich_alltoall`]).
const MPICH_ALLTOALL_MEDIUM: f64 = 32_768.0;

/// `MPIR_CVAR_ALLTOALL_THROTTLE`'s default: the destinations MPICH's
/// scattered AlltoAll posts at a time, the rank itself among the first
/// ([`Algo::Scattered`]; MPICH 3.3 to 5.0, `alltoall.c`'s CVAR table).
pub const MPICH_ALLTOALL_THROTTLE: u32 = 32;

/// `MPIR_CVAR_BCAST_SHORT_MSG_SIZE`'s default, bytes: a broadcast of at
/// most this runs the binomial tree ([`mpich_bcast`]).
const MPICH_BCAST_SHORT: f64 = 12_288.0;

/// `MPIR_CVAR_BCAST_LONG_MSG_SIZE`'s default, bytes: past it a
/// power-of-two communicator's broadcast runs the ring allgather.
const MPICH_BCAST_LONG: f64 = 524_288.0;

/// `MPIR_CVAR_BCAST_MIN_PROCS`'s default: fewer ranks always run the
/// binomial tree.
const MPICH_BCAST_MIN_PROCS: u32 = 8;

/// The network presets whose switches reduce (SHARPv2 on Quantum HDR,
/// SHARPv3 on Quantum-2 NDR; EDR's SHARPv1 reduced small messages only).
const SHARP_NETWORKS: [&str; 2] = ["ib-hdr-200g", "ib-ndr-400g"];

/// Channels of a ring over all GPUs of `cluster` ([`Program::ring_channels`]).
fn ring_channels(cluster: &ClusterSpec) -> u32 {
    program::all_channels(
        cluster.nodes,
        cluster.nics_per_node,
        cluster.placement == crate::cluster::Placement::Scattered,
    )
}

/// Channels of NCCL's tree on `cluster`: one per NIC across nodes.
fn tree_channels(cluster: &ClusterSpec) -> u32 {
    program::tree_channels(cluster.nodes, cluster.nics_per_node)
}

impl crate::names::Named for Op {
    const ALL: &'static [Op] = &Op::ALL;
    const WHAT: &'static str = "operation";
    fn name(self) -> &'static str {
        Op::name(self)
    }
}

impl crate::names::Named for Algo {
    const ALL: &'static [Algo] = &Algo::ALL;
    const WHAT: &'static str = "algorithm";
    fn name(self) -> &'static str {
        Algo::name(self)
    }
}
