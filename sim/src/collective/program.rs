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

use super::bcast::{self, BcastTree};
use crate::cluster::{ClusterSpec, Endpoint, Path, Topology};
use std::sync::Arc;

/// Participant index: GPUs first, then PS servers.
pub type Participant = u32;

/// One point-to-point send of a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Send {
    /// The receiver.
    pub to: Participant,
    /// Bytes.
    pub bytes: f64,
    /// The NIC (index within a node) the send crosses nodes through on
    /// both sides, when it belongs to a channel pinned to one rail; `None`:
    /// each side's own ([`ClusterSpec::nic_of_gpu`]).
    pub nic: Option<u32>,
    /// The receiver's lane, when it is not the one [`Program::dst_lane`]
    /// names for the sender's lane (a pipeline whose data moves from lane
    /// to lane at a GPU: [`Phase::NvlsTree`], [`Phase::Sharp`]).
    pub lane: Option<u32>,
}

impl Send {
    fn to(to: Participant, bytes: f64) -> Send {
        Send {
            to,
            bytes,
            nic: None,
            lane: None,
        }
    }

    /// A send pinned to NIC `nic` (`None`: each side's own).
    fn via(to: Participant, bytes: f64, nic: Option<u32>) -> Send {
        Send {
            nic,
            ..Send::to(to, bytes)
        }
    }

    /// The send, to be counted in the receiver's lane `lane`.
    fn in_lane(self, lane: u32) -> Send {
        Send {
            lane: Some(lane),
            ..self
        }
    }
}

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
    /// One group alone: block `stage` of `size` consecutive ranks, ranks
    /// `stage·size .. (stage + 1)·size`; the other GPUs take no part. The
    /// GPUs of one model-parallel stage, which dtsim places stage-major
    /// (see `train::planner::mp`): a stage's data-parallel collective.
    Stage {
        /// Ranks in the block (the trainers).
        size: u32,
        /// Which block.
        stage: u32,
    },
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
    ///
    /// A ring across nodes runs in channels, as NCCL's does: over all GPUs
    /// (contiguous placement) one channel per NIC of a node, over rails one
    /// per NIC a GPU has of its own when NICs outnumber GPUs
    /// ([`Program::ring_channels`]). Each channel carries an equal share of
    /// every chunk and crosses nodes through one NIC, the same on every
    /// node, so a node's NICs are all used. Channel c of a ring over all
    /// GPUs enters each node at the GPU next to NIC c and visits the
    /// node's GPUs in order from there; its last GPU sends to the next
    /// node through NIC c (over the fabric to NIC c's GPU first, when NIC
    /// c is not its own: NCCL's PXN). One channel over one NIC is the
    /// plain ring of rank r to rank r + 1.
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
    /// Binomial-tree broadcast from member 0: ⌈log2 s⌉ steps of `bytes`,
    /// the mirror of [`Phase::BinomialReduce`]: in step k every member
    /// holding the buffer sends it 2^(⌈log2 s⌉ − 1 − k) members on, the
    /// farthest child first (as MPICH's `MPIR_Bcast_intra_binomial`), so
    /// a subtree is a run of consecutive members and, with several GPUs a
    /// node in contiguous placement, one copy crosses to each node.
    BinomialBcast {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        bytes: f64,
    },
    /// Broadcast from member 0 down a tree as Open MPI runs it
    /// (`ompi_coll_base_bcast_intra_generic`, which posts a send to every
    /// child at once, then waits for them all; its binomial, k-nomial,
    /// binary, chain and pipeline broadcasts, and `basic_linear`, a tree
    /// of one level): [`BcastTree`] gives each member's children and
    /// depth d(i). Unsegmented (`segments` 1, Open MPI's default), member
    /// i receives in step d(i) − 1 and sends to all its children in step
    /// d(i), so a member's sends share its link: as many steps as the
    /// tree's height H (the binomial tree's: the largest popcount below
    /// s, its root's ⌈log2 s⌉ sends at once). Segmented
    /// (`coll_tuned_bcast_algorithm_segmentsize`), the buffer goes in
    /// `segments` segments of `bytes`: member i sends segment j to all its
    /// children in step d(i) + j, once segment j has arrived and its sends
    /// of segment j − 1 are done (the generic loop waits for them before
    /// the next), so H + segments − 1 steps.
    TreeBcastAll {
        /// Groups.
        group: Grouping,
        /// The tree.
        tree: BcastTree,
        /// Bytes per send (one segment).
        bytes: f64,
        /// Segments the buffer is cut into (1: unsegmented).
        segments: u32,
    },
    /// Open MPI's split binary tree broadcast from member 0
    /// (`ompi_coll_base_bcast_intra_split_bintree`; [`bcast::split_send`]):
    /// the first half of the buffer goes down the binary tree's left
    /// subtree (odd members) and the second down the right (even), each
    /// member sending to its first child, then to its second (blocking
    /// sends, a step each), segment by segment where the half is cut into
    /// `segments` (`coll_tuned_bcast_algorithm_segmentsize`; a member
    /// forwards segment j while it receives j + 1); then odd member i
    /// swaps halves with member i + 1, and on an even count the root sends
    /// the second half to the last member. `bytes` is a half.
    SplitBinaryTree {
        /// Groups.
        group: Grouping,
        /// Bytes of a half.
        bytes: f64,
        /// Segments a half is cut into (1: unsegmented).
        segments: u32,
    },
    /// The binomial scatter of Open MPI's scatter-allgather broadcasts
    /// ([`bcast::scatter_send`]): ⌈log2 s⌉ steps; in step k a member that
    /// holds blocks [i, i + 2·mask) sends those of them from i + mask, and
    /// below s, to member i + mask (mask = 2^(⌈log2 s⌉ − 1 − k)).
    BinomialScatter {
        /// Groups.
        group: Grouping,
        /// Bytes of a block (the buffer over s).
        block: f64,
    },
    /// The recursive-doubling allgather of Open MPI's scatter-allgather
    /// broadcast ([`bcast::doubling_send`]): at mask 2^i member j swaps its
    /// group's blocks with member j ^ 2^i, then, where the partner group
    /// has members past s, i steps of recursive halving pass its blocks on
    /// to those who had no partner.
    BcastDoubling {
        /// Groups.
        group: Grouping,
        /// Bytes of a block.
        block: f64,
    },
    /// Pairwise exchange: s−1 steps; in step j member i sends `chunk` to
    /// member (i + j) mod s.
    Pairwise {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        chunk: f64,
    },
    /// AlltoAll all at once (Open MPI's `basic_linear`, and its
    /// `linear_sync` without a limit on outstanding requests, coll tuned's
    /// default): one step in which every member sends `chunk` to each of
    /// the s − 1 others, the sends sharing the member's links. In batches
    /// of `batch` > 0: step k sends member i's block to member i − d for
    /// every d of its batch below s but 0. With `with_self` (MPICH's
    /// scattered exchange, which posts `MPIR_CVAR_ALLTOALL_THROTTLE`
    /// receives and sends at a time, the member itself counted in the
    /// first batch, and waits for them all) the batches are the d in
    /// [k·batch, (k + 1)·batch), ⌈s/batch⌉ steps; without (Open MPI's
    /// `linear_sync` with a request limit, which replaces each request as
    /// it completes, the others only) [k·batch + 1, (k + 1)·batch],
    /// ⌈(s − 1)/batch⌉ steps.
    Linear {
        /// Groups.
        group: Grouping,
        /// Bytes per send.
        chunk: f64,
        /// Destinations a batch (0: all at once).
        batch: u32,
        /// Whether the member itself counts among the first batch's
        /// destinations.
        with_self: bool,
    },
    /// AlltoAll by Bruck's algorithm as Open MPI runs it
    /// (`ompi_coll_base_alltoall_intra_bruck`, its "modified Bruck"):
    /// after a local rotation member i's block j is for member i + j; in
    /// step k member i sends every block j with bit k of j set (j < s) to
    /// member i + 2^k (mod s), which keeps it at j, and receives as many
    /// from member i − 2^k; so ⌈log2 s⌉ steps of about s/2 blocks of
    /// `chunk`, a block reaching member i + j after the steps of j's bits.
    /// The final rotation costs no communication.
    BruckAllToAll {
        /// Groups.
        group: Grouping,
        /// Bytes of one block (one member's data for one other).
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
    /// AllGather by Bruck's algorithm (Bruck et al. 1997; MPICH's
    /// `MPIR_Allgather_intra_brucks`): in step k member i sends the parts
    /// it holds, min(2^k, s − 2^k) of them, to member i − 2^k (mod s) and
    /// receives as many from member i + 2^k, so ⌈log2 s⌉ steps for any
    /// group size, without recursive doubling's folds (the final local
    /// rotation costs no communication).
    Bruck {
        /// Groups.
        group: Grouping,
        /// Bytes contributed by each member.
        bytes: f64,
    },
    /// AllGather by neighbor exchange (Chen et al. 2005; Open MPI's
    /// `ompi_coll_base_allgather_intra_neighborexchange`), for an even
    /// group size s: s/2 steps; in step 0 each even member and the odd one
    /// after it swap their parts, in step 1 each member sends its pair's
    /// two parts to its other neighbour, and in step k ≥ 2 the two parts
    /// it received in step k − 1 (an even member's left neighbour in odd
    /// steps, its right one in even steps; an odd member's the other way
    /// round).
    NeighborExchange {
        /// Groups (of an even size).
        group: Grouping,
        /// Bytes contributed by each member.
        bytes: f64,
    },
    /// AllReduce by recursive exchanges between partners at distances 2^j
    /// (Thakur, Rabenseifner and Gropp 2005), as MPICH and Open MPI run
    /// it. `halving` false: recursive doubling, log2 p rounds in which
    /// each member swaps its whole `bytes` with member i XOR 2^j and adds
    /// what it receives (`MPIR_Allreduce_intra_recursive_doubling`,
    /// `ompi_coll_base_allreduce_intra_recursivedoubling`). `halving`
    /// true: Rabenseifner's algorithm, a reduce-scatter by recursive
    /// halving (round j sends half of what the member still reduces,
    /// `bytes`/2^(j+1), to member i XOR 2^j) then an all-gather by
    /// recursive doubling back (distances 2^(log2 p − 1) down to 1, sizes
    /// `bytes`/p up to `bytes`/2): 2·log2 p rounds, 2(p−1)/p·`bytes` sent
    /// a member (`MPIR_Allreduce_intra_reduce_scatter_allgather`,
    /// `ompi_coll_base_allreduce_intra_redscat_allgather`). Here p is the
    /// largest power of two ≤ s; on any other group size the first 2r
    /// members (r = s − p) fold in first, each even one sending its whole
    /// buffer to the odd one after it, which runs the rounds in its place,
    /// and out last, the odd one sending the result back: two more steps
    /// of `bytes` (MPICH's fold, and Open MPI's recursive doubling's; Open
    /// MPI's Rabenseifner swaps halves instead, the same bytes in one step
    /// more).
    RecursiveAllReduce {
        /// Groups.
        group: Grouping,
        /// The buffer, bytes.
        bytes: f64,
        /// Rabenseifner's halving and doubling, not recursive doubling.
        halving: bool,
    },
    /// Parameter-server push and pull of a variable sharded evenly over the
    /// servers: each worker sends `shard` bytes to every server and each
    /// server sends `shard` bytes to every worker. With `overlap` the push
    /// and pull stream concurrently (a server that returns each aggregated
    /// piece while the next arrives, the full-duplex accounting of Parallax
    /// Table 3): a first step in which every worker tells every server it
    /// is ready (a zero-byte message, so servers never pull before the
    /// workers have their gradients), then one step of pushes and pulls.
    /// Without `overlap`, the pull follows the push (two steps). `part`
    /// may keep the push alone or the pull alone (one step each), for a
    /// plan that puts the servers' work between them.
    Ps {
        /// Whether only GPU 0 of each node is a worker (local aggregation).
        leaders_only: bool,
        /// The GPUs that are workers: all ([`Grouping::All`]) or one
        /// model-parallel stage's ([`Grouping::Stage`], never with
        /// `leaders_only`).
        workers: Grouping,
        /// Bytes per worker-server pair in each direction.
        shard: Shards,
        /// Push and pull concurrently.
        overlap: bool,
        /// Push and pull, or one of them.
        part: PsPart,
    },
    /// Ring AllGatherv over all GPUs: s − 1 steps; in step k rank i
    /// forwards to rank i + 1 the block of rank (i − k) mod s, whose size
    /// is `blocks[(i − k) mod s]`. With equal blocks this is
    /// [`Phase::Ring`]'s AllGather.
    RingV {
        /// Bytes each rank contributes, by rank.
        blocks: Arc<[f64]>,
    },
    /// Pipelined broadcast from rank 0 down the ring (NCCL's broadcast):
    /// the buffer is cut into `chunks` pieces per channel (channels as in
    /// [`Phase::Ring`]); in step k the member at distance i from the root
    /// along its channel's ring forwards piece k − i to its successor, so
    /// s − 1 + chunks − 1 steps move every piece to every member. Lanes:
    /// one per channel ([`Program::lanes`]); steps stream
    /// ([`Program::streams`]).
    Chain {
        /// Bytes of one channel's part of the buffer.
        part: f64,
        /// Pieces each part is cut into.
        chunks: u32,
    },
    /// NVLink SHARP (NCCL's NVLS) inside each node: the NVSwitch reduces
    /// and multicasts. The buffer's `part` is cut into `chunks` pieces,
    /// each piece into G shards (one per GPU of the node), and every piece
    /// streams through up to four stages (six across nodes, below): each GPU sends the piece to its
    /// switch (`reduce`), the switch returns shard j, summed over the
    /// node's GPUs, to GPU j (NVLS's `multimem.ld_reduce`); GPU j sends its
    /// reduced shard to the switch (`gather`), which writes it to every
    /// GPU of the node (`multimem.st`). Per GPU each direction carries
    /// part·(1 + 1/G), against a ring's 2(G − 1)/G·part; the switch adds
    /// no capacity limit of its own. Lanes: 3, which follow the data (the
    /// pushes; the sums in and the shards out; the multicast in).
    ///
    /// `across`: over several nodes, with InfiniBand SHARP between the
    /// switches (NCCL's NVLS with CollNet): between the NVSwitch's return
    /// of shard j and GPU j's send of it back to the NVSwitch, GPU j sends
    /// the shard through its NIC to its rail's switches, which return the
    /// sum over every node's GPU j (as [`Phase::Sharp`]). Every stage of
    /// a piece is pipelined with the others. Lanes: 4.
    Nvls {
        /// Bytes of the buffer each GPU holds.
        part: f64,
        /// Pieces it is cut into.
        chunks: u32,
        /// Across nodes, through the rails' switches.
        across: bool,
    },
    /// NCCL's NVLS tree (`NVLSTree`): NVLink SHARP inside each node and a
    /// double binary tree of nodes between them, for networks whose
    /// switches do not reduce. The buffer's `part` is cut into `chunks`
    /// pieces and each piece into G shards. Each GPU sends the piece to
    /// its NVSwitch, which returns shard j, summed over the node, to GPU j
    /// in two halves, one per tree. The GPUs at position j of every node
    /// (NCCL's NVLS heads of one index) reduce each half up their tree,
    /// through their own NICs (split evenly over them), and the root sends
    /// the sum back down, as [`Phase::TreeReduce`]'s and
    /// [`Phase::TreeBcast`]'s double binary tree of nodes (NCCL's
    /// `connectNvls` builds it with `ncclGetDtree`, channel c on tree c mod
    /// 2, so each tree carries half). Each GPU j sends the summed halves to
    /// its NVSwitch, which multicasts the piece to every GPU of its node.
    ///
    /// Piece i: pushes in step i, the halves back in i + 1, a node at
    /// height h of tree t sends its half up in i + 2 + h, at depth d down
    /// (and to the NVSwitch) in i + 2 + H_t + d (H_t the tree's height:
    /// the root turns its sum round at once), the multicast in
    /// i + 3 + 2H (H the taller tree's). Lanes (6) follow the data, so no
    /// lane waits on a later stage of an earlier piece: a GPU's pushes;
    /// each tree's way up (the switch's half in, the children's sums in,
    /// the sum to the parent); each tree's way down (the parent's sum in,
    /// the children's and the NVSwitch's out); the multicast in. A
    /// switch's: the pushes in and halves out; the sums in and the
    /// multicast out. A GPU's NVLink carries part·(1 + 1/G) each way, as
    /// in one node; its NICs per direction part/G between two nodes and at
    /// most 2·part/G beyond (a node inside one tree is a leaf of the
    /// other).
    NvlsTree {
        /// Bytes of the buffer each GPU holds.
        part: f64,
        /// Pieces it is cut into.
        chunks: u32,
    },
    /// InfiniBand SHARP across nodes as NCCL's CollNet Direct runs it
    /// (`src/device/all_reduce.h`): each rail's switches reduce, and the
    /// GPUs of a node scatter to and gather from each other directly, all
    /// stages pipelined. The buffer's `part` is cut into `chunks` pieces
    /// and each piece into G shards; per piece, every GPU sends shard j
    /// to GPU j of its node (the scatter: G − 1 sends), GPU j sends the
    /// node's shard j (summed as it arrives) through its NIC to its rail's
    /// switch, which, once every node's is in, returns the sum to GPU j of
    /// every node, and GPU j sends the sum to every other GPU of its node
    /// (the gather). Per GPU each direction of the node's fabric carries
    /// 2(G − 1)/G of the part, as a ring's reduce-scatter and all-gather,
    /// and each NIC the part's shard once, against a ring's 2(M − 1)/M.
    /// The rail of the GPUs at position r of their nodes runs through GPU
    /// r's own NIC ([`crate::cluster::Pairing::nic_of_gpu`]; with more
    /// NICs than GPUs, through the first of its own only). Piece i: the
    /// scatter in step i, the shard up in
    /// i + 1, the sums down in i + 2, the gather in i + 3. Lanes (4)
    /// follow the data: the scatter out; the scatter in and the shard up
    /// (a switch: the shards in and the sums out); the sum in and the
    /// gather out; the gather in.
    Sharp {
        /// Bytes of the buffer each GPU holds.
        part: f64,
        /// Pieces it is cut into.
        chunks: u32,
    },
    /// The reduce half of NCCL's tree AllReduce: in each channel (one per
    /// NIC of a node, as rings) two complementary trees each carry half
    /// the channel's part, cut into `chunks` pieces. A tree is a chain
    /// through each node's GPUs (from the GPU next to the channel's NIC)
    /// hung under a binary tree of the nodes, the second tree the first
    /// mirrored (an even number of nodes) or shifted by one (odd): NCCL's
    /// double binary tree (`src/graph/trees.cc`), in which every node is a
    /// leaf of one tree. A member at height h (hops above its deepest
    /// descendant) sends the sum of piece j up in step j + h. Lanes:
    /// one per channel and tree ([`Program::lanes`]); steps stream.
    TreeReduce {
        /// Bytes of one tree's part of one channel.
        part: f64,
        /// Pieces each part is cut into.
        chunks: u32,
    },
    /// The broadcast half of NCCL's tree AllReduce, down the trees of
    /// [`Phase::TreeReduce`]: a member at depth d sends piece j to its
    /// children in step j + d.
    TreeBcast {
        /// Bytes of one tree's part of one channel.
        part: f64,
        /// Pieces each part is cut into.
        chunks: u32,
    },
    /// Point-to-point between two blocks of ranks: the member at index i
    /// of `from` (a [`Grouping::Stage`]) sends `bytes` to the member at
    /// index i of block `to` of the same size, in one step (every
    /// model-parallel trainer handing its activations, or their gradients,
    /// from one stage to the next at once).
    Shift {
        /// The senders.
        from: Grouping,
        /// The receivers' block.
        to: u32,
        /// Bytes per send.
        bytes: f64,
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

/// Which of a parameter server's transfers a [`Phase::Ps`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PsPart {
    /// The push of gradients and the pull of parameters.
    PushPull,
    /// The push alone: every worker sends every server its shard.
    Push,
    /// The pull alone: every server sends every worker its shard.
    Pull,
}

/// How a parameter-server variable is split over the servers.
#[derive(Debug, Clone, PartialEq)]
pub enum Shards {
    /// Every server holds the same number of bytes.
    Even(f64),
    /// Server j holds `bytes[j]` (partitions that do not divide evenly,
    /// sparse rows hashed unevenly).
    PerServer(Arc<[f64]>),
    /// Worker w exchanges `bytes[w·servers + j]` with server j (each
    /// worker's own sparse rows: the token model). Workers in order: the
    /// GPUs, or the nodes with local aggregation.
    PerWorker(Arc<[f64]>),
}

impl Shards {
    /// Bytes worker `w` (its index among the workers) exchanges with
    /// server `j` of `servers`.
    pub fn of(&self, w: u32, j: u32, servers: u32) -> f64 {
        match self {
            Shards::Even(b) => *b,
            Shards::PerServer(v) => v[j as usize],
            Shards::PerWorker(m) => m[(w * servers + j) as usize],
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
    /// How GPUs and NICs pair up (the GPU next to a channel's NIC).
    pairing: crate::cluster::Pairing,
    /// [`Program::lanes`] of each phase.
    lanes: Vec<u32>,
    servers: u32,
    /// The servers' dedicated machines ([`ClusterSpec::ps_machines`]; 0:
    /// server j on node j mod nodes).
    ps_machines: u32,
    /// NVSwitch participants (one per node, after the servers) of a
    /// program with a [`Phase::Nvls`] or [`Phase::NvlsTree`]; 0 otherwise.
    switches: u32,
    /// Rail switch participants (one per GPU of a node, after the
    /// NVSwitches) of a program with a [`Phase::Sharp`]; 0 otherwise.
    net_switches: u32,
    scattered: bool,
    /// The node trees of a [`Phase::TreeReduce`] or [`Phase::NvlsTree`],
    /// when the program has one.
    trees: Option<Arc<NodeTrees>>,
}

/// The piece pipelined collectives cut their buffer into: one step of
/// NCCL's Simple protocol, whose default 4 MiB buffer per connection
/// (`NCCL_BUFFSIZE`) is split into 8 steps (`NCCL_STEPS`). NCCL tunes the
/// piece per algorithm and size; one figure is used here.
pub const PIPELINE_CHUNK: f64 = 512.0 * 1024.0;

/// Most pieces a pipelined part is cut into: larger parts get larger
/// pieces, keeping the flow model's work bounded (at 4,096 pieces the
/// pipeline's fill is under 0.1 % of its length).
pub const MAX_PIPELINE_CHUNKS: u32 = 4096;

/// Pieces a pipelined part of `part` bytes is cut into.
pub fn pipeline_chunks(part: f64) -> u32 {
    let k = (part / PIPELINE_CHUNK).ceil();
    if k.is_finite() && k >= 1.0 {
        (k as u32).min(MAX_PIPELINE_CHUNKS)
    } else {
        1
    }
}

/// Channels of a ring over all GPUs (and of the pipelined broadcast down
/// it): one per NIC of a node across nodes in contiguous placement, else
/// one. [`Program::ring_channels`] and the collective's split of its
/// buffer both ask here, so they cannot disagree.
pub(crate) fn all_channels(nodes: u32, nics_per_node: u32, scattered: bool) -> u32 {
    if nodes > 1 && !scattered {
        nics_per_node
    } else {
        1
    }
}

/// Channels of NCCL's tree: one per NIC of a node across nodes, else one.
pub(crate) fn tree_channels(nodes: u32, nics_per_node: u32) -> u32 {
    if nodes > 1 { nics_per_node } else { 1 }
}

/// A stage of a [`Phase::Nvls`] piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NvlsStage {
    /// Every GPU sends the piece to its switch.
    Push,
    /// The switch returns each GPU its reduced shard.
    Return,
    /// Across nodes: each GPU sends its node's shard to its rail's
    /// switches.
    NetUp,
    /// Across nodes: the rail's switches return the sum over the nodes.
    NetDown,
    /// Each GPU sends its reduced shard to the switch.
    Up,
    /// The switch writes every shard to every GPU.
    Multicast,
}

/// (the sender's lane, the receiver's lane) of the stage at `index`.
/// GPUs and switches send in turn, so stage s goes from lane s/2 to lane
/// (s + 1)/2: a GPU's pushes run in a lane of their own, so it pushes the
/// next piece without waiting for the last one's sum; a sum it receives
/// and the shard it sends on share a lane; the multicast arrives in the
/// last, which nothing waits on until the phase ends. Lanes thus follow
/// data, not participants, and no lane waits on a later stage of an
/// earlier piece (a feedback that would add a round trip per piece).
fn nvls_lanes(index: usize) -> (u32, u32) {
    ((index / 2) as u32, index.div_ceil(2) as u32)
}

/// The stages of an NVLS piece, in order, inside a node or across nodes.
fn nvls_stages(across: bool) -> &'static [NvlsStage] {
    use NvlsStage::*;
    if across {
        &[Push, Return, NetUp, NetDown, Up, Multicast]
    } else {
        &[Push, Return, Up, Multicast]
    }
}

/// Whether a pipelined stage that handles piece `k − first` at local step
/// `k` has a piece there (pieces 0 to `chunks` − 1).
fn has_piece(k: u32, first: u32, chunks: u32) -> bool {
    k >= first && k - first < chunks
}

/// Whether lane `lane`'s stage of first step `first` sends at `at` = (the
/// lane being walked, its local step), or, `None`, in the steady state
/// (every stage at once).
fn sends_at(at: Option<(u32, u32)>, lane: u32, first: u32, chunks: u32) -> bool {
    at.is_none_or(|(l, k)| l == lane && has_piece(k, first, chunks))
}

/// Whether a stage of first step `first` whose messages count in lane
/// `lane` delivers at local step `k` to the lane asked for (`None`: any).
fn expects_at(asked: Option<u32>, lane: u32, k: u32, first: u32, chunks: u32) -> bool {
    asked.is_none_or(|l| l == lane) && has_piece(k, first, chunks)
}

/// [`Phase::NvlsTree`]'s lanes: a GPU's pushes (a switch's pushes in and
/// halves out) ...
const NVLS_TREE_PUSH: u32 = 0;
/// ... tree t's way up at `NVLS_TREE_UP + t` (a switch's sums in and
/// multicast out at `NVLS_TREE_UP`) ...
const NVLS_TREE_UP: u32 = 1;
/// ... tree t's way down at `NVLS_TREE_DOWN + t` ...
const NVLS_TREE_DOWN: u32 = 3;
/// ... and the multicast in.
const NVLS_TREE_CAST: u32 = 5;

/// NCCL's binary tree over `n` ranks (`ncclGetBtree`): rank 0 is the root
/// with one child; a rank's parent and children follow from its lowest set
/// bit. Returns (parent, children).
fn btree(n: u32, r: u32) -> (Option<u32>, [Option<u32>; 2]) {
    if r == 0 {
        // the root's one child: half the smallest power of two ≥ n
        return (None, [(n > 1).then(|| n.next_power_of_two() >> 1), None]);
    }
    let bit = r & r.wrapping_neg();
    let mut up = (r ^ bit) | (bit << 1);
    if up >= n {
        up = r ^ bit;
    }
    let mut low = bit >> 1;
    let first = (low > 0).then(|| r - low);
    while low > 0 && r + low >= n {
        low >>= 1;
    }
    let second = (low > 0).then(|| r + low);
    (Some(up), [first, second])
}

/// Tree `t` (0 or 1) of NCCL's double binary tree over `n` ranks
/// (`ncclGetDtree`): the binary tree, and the same mirrored (n even) or
/// shifted by one rank (n odd).
fn dtree(n: u32, t: u32, r: u32) -> (Option<u32>, [Option<u32>; 2]) {
    if t == 0 {
        return btree(n, r);
    }
    // n odd: shift by one rank; n even: mirror. `back` undoes `into`.
    let into = |x: u32| {
        if n % 2 == 1 {
            (x + n - 1) % n
        } else {
            n - 1 - x
        }
    };
    let back = |x: u32| if n % 2 == 1 { (x + 1) % n } else { n - 1 - x };
    let (up, down) = btree(n, into(r));
    (up.map(&back), [down[0].map(&back), down[1].map(&back)])
}

/// A GPU's place in one tree of a [`Phase::TreeReduce`].
struct TreeSpot {
    /// Hops down to its deepest descendant.
    height: u32,
    /// Hops up to the root.
    depth: u32,
    parent: Option<(Participant, Option<u32>)>,
    /// The next GPU of its node's chain, and (a node's top GPU) the top
    /// GPUs of its child nodes.
    children: [Option<(Participant, Option<u32>)>; 3],
}

/// The two trees of a double binary tree over nodes: each node's parent,
/// children, depth and height.
#[derive(Debug, Clone, PartialEq)]
struct NodeTrees {
    parent: [Vec<Option<u32>>; 2],
    children: [Vec<[Option<u32>; 2]>; 2],
    depth: [Vec<u32>; 2],
    height: [Vec<u32>; 2],
    /// Each tree's height (its root's).
    tall: [u32; 2],
}

impl NodeTrees {
    /// Tree `t`'s height: its root's.
    fn tall(&self, t: usize) -> u32 {
        self.tall[t]
    }

    fn new(n: u32) -> NodeTrees {
        let mut t = NodeTrees {
            parent: [vec![None; n as usize], vec![None; n as usize]],
            children: [vec![[None; 2]; n as usize], vec![[None; 2]; n as usize]],
            depth: [vec![0; n as usize], vec![0; n as usize]],
            height: [vec![0; n as usize], vec![0; n as usize]],
            tall: [0; 2],
        };
        for tree in 0..2 {
            for r in 0..n {
                let (up, down) = dtree(n, tree as u32, r);
                t.parent[tree][r as usize] = up;
                t.children[tree][r as usize] = down;
            }
            for r in 0..n {
                // walk up: depth of r, and r's distance under each ancestor
                let (mut a, mut d) = (r, 0u32);
                while let Some(up) = t.parent[tree][a as usize] {
                    d += 1;
                    let h = &mut t.height[tree][up as usize];
                    *h = (*h).max(d);
                    a = up;
                }
                t.depth[tree][r as usize] = d;
            }
            t.tall[tree] = t.height[tree].iter().copied().max().unwrap_or(0);
        }
        t
    }
}

/// Blocks a member sends in the step of distance `d` of Bruck's
/// AlltoAll over `s` members ([`Phase::BruckAllToAll`]): the block
/// indices j < s with the bit of `d` set.
fn bruck_blocks(s: u32, d: u32) -> u32 {
    // whole periods of 2d hold d each; the last part period its excess over d
    (s / (2 * d)) * d + (s % (2 * d)).saturating_sub(d)
}

/// The distances d of step `k` of a batched linear AlltoAll over `s`
/// members ([`Phase::Linear`] with `batch` > 0): [k·batch, (k + 1)·batch)
/// counting the member itself, [k·batch + 1, (k + 1)·batch] not, below s
/// and but 0.
fn linear_batch(k: u32, batch: u32, with_self: bool, s: u32) -> std::ops::Range<u32> {
    let first = u32::from(!with_self);
    let lo = k.saturating_mul(batch).saturating_add(first).max(1);
    let hi = (k + 1).saturating_mul(batch).saturating_add(first).min(s);
    lo..hi.max(lo)
}

fn ceil_log2(s: u32) -> u32 {
    if s <= 1 {
        0
    } else {
        32 - (s - 1).leading_zeros()
    }
}

/// How far step `k` of a binomial broadcast over `s` ≥ 2 members sends:
/// 2^(⌈log2 s⌉ − 1 − k), halving from the farthest child (1 past the
/// last step, which sends nothing).
fn bcast_distance(s: u32, k: u32) -> u32 {
    ceil_log2(s).checked_sub(k + 1).map_or(1, |e| 1u32 << e)
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

/// The member that member `idx` of a neighbor-exchange group of `s`
/// (even) swaps with in local step `k` ([`Phase::NeighborExchange`]):
/// its pair partner (an even member's right neighbour) in step 0 and
/// every even step, its other neighbour in odd ones.
fn neighbor_of(s: u32, idx: u32, k: u32) -> u32 {
    let right = (idx + 1) % s;
    let left = (idx + s - 1) % s;
    match (idx.is_multiple_of(2), k.is_multiple_of(2)) {
        (true, true) | (false, false) => right,
        (true, false) | (false, true) => left,
    }
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

/// Where member `idx` of a [`Phase::RecursiveAllReduce`] group of `s`
/// sends in local step `k`, and the fraction of the buffer it sends.
fn exchange_send(s: u32, idx: u32, k: u32, halving: bool) -> Option<(u32, f64)> {
    let (p2, log, fold) = doubling(s);
    let extras = s - p2;
    let rounds = if halving { 2 * log } else { log };
    match if fold { k.checked_sub(1) } else { Some(k) } {
        // fold in: an even member of the first 2r hands its buffer on
        None => (idx < 2 * extras && idx.is_multiple_of(2)).then(|| (idx + 1, 1.0)),
        Some(j) if j < rounds => {
            let n = exchanging(extras, idx)?;
            let (dist, share) = if !halving {
                (1u32 << j, 1.0)
            } else if j < log {
                // reduce-scatter: half of what is left
                (1u32 << j, 0.5f64.powi(j as i32 + 1))
            } else {
                // all-gather: back up from a p-th to a half
                let t = j - log;
                (1u32 << (log - 1 - t), 0.5f64.powi((log - t) as i32))
            };
            let partner = n ^ dist;
            let to = if partner < extras {
                2 * partner + 1
            } else {
                partner + extras
            };
            Some((to, share))
        }
        // fold out: the odd member returns the result
        Some(_) => (idx < 2 * extras && !idx.is_multiple_of(2)).then(|| (idx - 1, 1.0)),
    }
}

/// Member `idx`'s index among the power-of-two members that run a
/// [`Phase::RecursiveAllReduce`]'s rounds, with `extras` folded in: the
/// odd ones of the first 2·`extras`, then every member after them; `None`
/// for the even ones that folded in.
fn exchanging(extras: u32, idx: u32) -> Option<u32> {
    if idx < 2 * extras {
        (!idx.is_multiple_of(2)).then_some(idx / 2)
    } else {
        Some(idx - extras)
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
            pairing: spec.pairing(),
            lanes: Vec::new(),
            servers,
            ps_machines: spec.ps_machines,
            switches: 0,
            net_switches: 0,
            scattered: spec.placement == crate::cluster::Placement::Scattered,
            trees: None,
        };
        if phases
            .iter()
            .any(|ph| matches!(ph, Phase::Nvls { .. } | Phase::NvlsTree { .. }))
        {
            p.switches = spec.nodes;
        }
        if phases
            .iter()
            .any(|ph| matches!(ph, Phase::Sharp { .. } | Phase::Nvls { across: true, .. }))
        {
            p.net_switches = spec.gpus_per_node;
        }
        if phases.iter().any(|ph| {
            matches!(
                ph,
                Phase::TreeReduce { .. } | Phase::TreeBcast { .. } | Phase::NvlsTree { .. }
            )
        }) {
            p.trees = Some(Arc::new(NodeTrees::new(spec.nodes)));
        }
        for ph in phases {
            let steps = p.phase_steps(&ph);
            let last = *p.phase_start.last().unwrap();
            p.phase_start.push(last + steps);
            p.phases.push(ph);
            let lanes = p.phase_lanes(p.phases.len() - 1);
            p.lanes.push(lanes);
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

    /// Number of participants (GPUs, then servers, then switches).
    pub fn participants(&self) -> u32 {
        self.gpus + self.servers + self.switches + self.net_switches
    }

    /// The rail switch participant of the GPUs at `rail` in their node.
    fn net_switch(&self, rail: u32) -> Participant {
        self.gpus + self.servers + self.switches + rail
    }

    /// The NVSwitch participant of `node`.
    fn switch(&self, node: u32) -> Participant {
        self.gpus + self.servers + node
    }

    /// Whether `p` is a reducing switch (a node's NVSwitch, or a rail's
    /// InfiniBand switches). What a switch sends is the other half
    /// of a GPU's send through it (a ring's GPU-to-GPU hop, cut in two at
    /// the switch), so it is not counted as bytes sent.
    pub fn is_switch(&self, p: Participant) -> bool {
        p >= self.switch(0)
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
            Grouping::Block(k) | Grouping::Stage { size: k, .. } => k,
        }
    }

    /// Whether GPU `gpu` belongs to a group of `g` (every GPU does, but
    /// for [`Grouping::Stage`]).
    fn in_group(&self, gpu: u32, g: Grouping) -> bool {
        match g {
            Grouping::Stage { size, stage } => self.rank(gpu) / size == stage,
            _ => true,
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
            Phase::TreeBcastAll {
                group,
                tree,
                segments,
                ..
            } => match tree.height(self.group_size(group)) {
                0 => 0,
                depth => depth + segments.max(1) - 1,
            },
            Phase::SplitBinaryTree {
                group, segments, ..
            } => match self.group_size(group) {
                0 | 1 => 0,
                s => bcast::split_steps(s, segments) + 1,
            },
            Phase::BinomialScatter { group, .. } => bcast::scatter_steps(self.group_size(group)),
            Phase::BcastDoubling { group, .. } => bcast::doubling_steps(self.group_size(group)),
            Phase::BinomialReduce { group, .. } | Phase::BinomialBcast { group, .. } => {
                ceil_log2(self.group_size(group))
            }
            Phase::Pairwise { group, .. } => self.group_size(group).saturating_sub(1),
            Phase::Linear {
                group,
                batch,
                with_self,
                ..
            } => match self.group_size(group) {
                0 | 1 => 0,
                _ if batch == 0 => 1,
                s => (s - u32::from(!with_self)).div_ceil(batch),
            },
            Phase::BruckAllToAll { group, .. } => ceil_log2(self.group_size(group)),
            Phase::Shift { .. } => 1,
            Phase::RecursiveDoubling { group, .. } => {
                let (_, log, fold) = doubling(self.group_size(group));
                log + 2 * fold as u32
            }
            Phase::Bruck { group, .. } => ceil_log2(self.group_size(group)),
            Phase::RecursiveAllReduce { group, halving, .. } => {
                let (_, log, fold) = doubling(self.group_size(group));
                log * (1 + halving as u32) + 2 * fold as u32
            }
            Phase::NeighborExchange { group, .. } => self.group_size(group) / 2,
            Phase::Ps { part, .. } => match part {
                PsPart::PushPull => 2,
                PsPart::Push | PsPart::Pull => 1,
            },
            Phase::Chain { chunks, .. } if self.gpus > 1 => chunks + self.gpus - 2,
            Phase::TreeReduce { chunks, .. } | Phase::TreeBcast { chunks, .. } if self.gpus > 1 => {
                chunks + self.tree_height(0).max(self.tree_height(1)) - 1
            }
            Phase::Chain { .. } | Phase::TreeReduce { .. } | Phase::TreeBcast { .. } => 0,
            Phase::Nvls { chunks, across, .. } if self.gpus_per_node > 1 || across => {
                chunks + nvls_stages(across).len() as u32 - 1
            }
            Phase::Nvls { .. } => 0,
            Phase::NvlsTree { chunks, .. } if self.gpus > 1 => {
                chunks + 3 + 2 * self.node_tree_height()
            }
            Phase::NvlsTree { .. } => 0,
            Phase::Sharp { chunks, .. } if self.nodes > 1 => chunks + 3,
            Phase::Sharp { .. } => 0,
        }
    }

    /// Whether the steps of phase `i` stream: a participant moves on to
    /// its next step as soon as the last byte of its sends has left, not
    /// when they arrive, so consecutive pieces of a pipeline follow each
    /// other on a link while earlier ones are still on their way (the
    /// several steps NCCL keeps in flight per connection). The latency of a
    /// hop is then paid once per hop of the pipeline, not once per piece.
    /// Rings stream too: a GPU forwards a chunk once it has arrived, its
    /// own send of the step having left for the peer's FIFO, so a ring's
    /// latency is its chain of hops'.
    pub fn streams(&self, step: u32) -> bool {
        let (i, _) = self.phase_of(step);
        self.pipelined(i) || matches!(self.phases[i], Phase::Ring { .. })
    }

    /// Whether phase `i` is pipelined (its steps stream and it runs in
    /// lanes).
    fn pipelined(&self, i: usize) -> bool {
        matches!(
            self.phases[i],
            Phase::Chain { .. }
                | Phase::TreeReduce { .. }
                | Phase::TreeBcast { .. }
                | Phase::Nvls { .. }
                | Phase::NvlsTree { .. }
                | Phase::Sharp { .. }
        )
    }

    /// Independent lanes phase `i` runs in: a pipelined phase's channels
    /// (and trees) and a ring's channels, each its own stream whose steps
    /// wait only for their own messages (a GPU forwards channel 0's data
    /// without waiting for channel 1's, as NCCL's channels run on their
    /// own thread blocks); 1 for every other phase. A participant enters the next
    /// phase when all its lanes have finished this one.
    pub fn lanes(&self, i: usize) -> u32 {
        self.lanes[i]
    }

    fn phase_lanes(&self, i: usize) -> u32 {
        match self.phases[i] {
            Phase::Chain { .. } => self.ring_channels(Grouping::All),
            Phase::TreeReduce { .. } | Phase::TreeBcast { .. } => 2 * self.tree_channels(),
            // GPUs: pushes, then returns in and shards out, (across nodes:
            // then the rail's sums in and shards out,) then the multicast
            // in; switches alike (see `nvls_lanes`)
            Phase::Nvls { across, .. } => nvls_lanes(nvls_stages(across).len()).0 + 1,
            Phase::NvlsTree { .. } => NVLS_TREE_CAST + 1,
            Phase::Sharp { .. } => 4,
            Phase::Ring { group, .. } => self.ring_channels(group),
            _ => 1,
        }
    }

    /// The most lanes of any phase.
    pub fn max_lanes(&self) -> u32 {
        (0..self.phases.len())
            .map(|i| self.lanes(i))
            .max()
            .unwrap_or(1)
    }

    /// The phase a global step belongs to, and the step one past its end.
    pub fn phase_end(&self, step: u32) -> (usize, u32) {
        let (i, _) = self.phase_of(step);
        (i, self.phase_start[i + 1])
    }

    /// Participant `p`'s sends in lane `lane` of global step `step` (all
    /// of a non-pipelined step's sends are lane 0's).
    pub fn lane_sends(&self, p: Participant, lane: u32, step: u32, out: &mut Vec<Send>) {
        let (i, k) = self.phase_of(step);
        if self.pipelined(i) {
            self.pipeline_sends(&self.phases[i], p, Some((lane, k)), out);
        } else if let Phase::Ring { group, chunk, .. } = self.phases[i] {
            if p < self.gpus {
                self.ring_sends(p, group, chunk, Some(lane), out);
            }
        } else if lane == 0 {
            self.sends(p, step, out);
        }
    }

    /// The lane of its receiver that a message sent by `p` in lane `lane`
    /// of global step `step` counts in: the sender's, but for an
    /// NVSwitch's (NVLS), whose sums go on in the GPUs' next lane. (A send
    /// that names its own lane, [`Send::lane`], counts there.)
    pub fn dst_lane(&self, p: Participant, lane: u32, step: u32) -> u32 {
        let (i, _) = self.phase_of(step);
        match self.phases[i] {
            Phase::Nvls { .. } if p >= self.switch(0) => lane + 1,
            _ => lane,
        }
    }

    /// Messages participant `p` receives in lane `lane` of global step
    /// `step`.
    pub fn lane_recvs(&self, p: Participant, lane: u32, step: u32) -> u32 {
        let (i, k) = self.phase_of(step);
        if self.pipelined(i) {
            self.pipeline_recvs(&self.phases[i], p, Some(lane), k)
        } else if let Phase::Ring { group, .. } = self.phases[i] {
            // one message per channel, each in its own lane
            u32::from(p < self.gpus && self.in_group(p, group))
        } else if lane == 0 {
            self.expected_recvs(p, step)
        } else {
            0
        }
    }

    /// Channels of a pipelined tree: one per NIC of a node across nodes.
    fn tree_channels(&self) -> u32 {
        tree_channels(self.nodes, self.nics_per_node)
    }

    /// Height of the taller tree of nodes (hops from its root to its
    /// deepest leaf).
    fn node_tree_height(&self) -> u32 {
        let trees = self.trees.as_ref().expect("a program with a double tree");
        trees.tall(0).max(trees.tall(1))
    }

    /// Height of tree `t`'s root (its longest path to a leaf, in hops): a
    /// node's chain of G GPUs hangs under the node tree.
    fn tree_height(&self, t: usize) -> u32 {
        let trees = self.trees.as_ref().expect("a program with a double tree");
        self.gpus_per_node - 1 + trees.tall(t)
    }

    /// GPU `p`'s place in tree `t` of channel `c`: (height, depth, parent,
    /// children), each neighbour with the NIC the hop pins (hops between
    /// nodes run through the channel's NIC).
    fn tree_spot(&self, c: u32, t: usize, p: Participant) -> TreeSpot {
        let trees = self.trees.as_ref().expect("a program with a double tree");
        let g = self.gpus_per_node;
        let (node, local) = (p / g, p % g);
        let top = self.pairing.gpu_of_nic(c);
        let i = (local + g - top) % g;
        let gpu = |n: u32, pos: u32| n * g + (top + pos) % g;
        let mut spot = TreeSpot {
            height: g - 1 - i,
            depth: trees.depth[t][node as usize] + i,
            parent: None,
            children: [None; 3],
        };
        if i + 1 < g {
            spot.children[0] = Some((gpu(node, i + 1), None));
        }
        if i > 0 {
            spot.parent = Some((gpu(node, i - 1), None));
        } else {
            spot.height += trees.height[t][node as usize];
            spot.parent = trees.parent[t][node as usize].map(|u| (gpu(u, 0), Some(c)));
            for (k, child) in trees.children[t][node as usize].iter().enumerate() {
                spot.children[k + 1] = child.map(|u| (gpu(u, 0), Some(c)));
            }
        }
        spot
    }

    /// GPU `p`'s distance from the root along channel `c`'s ring of
    /// `channels` (see [`Phase::Chain`]) and its successor, with the NIC
    /// the hop pins.
    fn chain_spot(&self, c: u32, channels: u32, p: Participant) -> (u32, Participant, Option<u32>) {
        if channels == 1 {
            let (_, idx) = self.locate(p, Grouping::All);
            let next = self.member(0, (idx + 1) % self.gpus, Grouping::All);
            return (idx, next, None);
        }
        let g = self.gpus_per_node;
        let (node, local) = (p / g, p % g);
        let entry = self.pairing.gpu_of_nic(c);
        let pos = node * g + (local + g - entry) % g;
        let root = (g - entry) % g;
        let idx = (pos + self.gpus - root) % self.gpus;
        let next = (local + 1) % g;
        if next == entry {
            (idx, (node + 1) % self.nodes * g + entry, Some(c))
        } else {
            (idx, node * g + next, None)
        }
    }

    /// The sends of a pipelined phase at local step k of lane `at` = (lane,
    /// k), or of every lane in its steady state (every pipeline sending at
    /// once) when `at` is `None`.
    fn pipeline_sends(
        &self,
        ph: &Phase,
        p: Participant,
        at: Option<(u32, u32)>,
        out: &mut Vec<Send>,
    ) {
        if let Phase::Sharp { part, chunks } = *ph {
            let g = self.gpus_per_node;
            let shard = part / chunks as f64 / g as f64;
            let live = |lane: u32, first: u32| sends_at(at, lane, first, chunks);
            if p < self.gpus {
                let (node, local) = (p / g, p % g);
                let peers = (0..g).filter(|&j| j != local).map(|j| node * g + j);
                if live(0, 0) {
                    out.extend(peers.clone().map(|q| Send::to(q, shard).in_lane(1)));
                }
                if live(1, 1) {
                    out.push(Send::to(self.net_switch(local), shard).in_lane(1));
                }
                if live(2, 3) {
                    out.extend(peers.map(|q| Send::to(q, shard).in_lane(3)));
                }
            } else if p >= self.net_switch(0) && live(1, 2) {
                let rail = p - self.net_switch(0);
                out.extend((0..self.nodes).map(|n| Send::to(n * g + rail, shard).in_lane(2)));
            }
            return;
        }
        if let Phase::NvlsTree { part, chunks } = *ph {
            self.nvls_tree_sends(part, chunks, p, at, out);
            return;
        }
        if let Phase::Nvls {
            part,
            chunks,
            across,
        } = *ph
        {
            let g = self.gpus_per_node;
            let piece = part / chunks as f64;
            // the rails' switches come last (none: net_switch(0) is past every participant)
            let rails = p >= self.net_switch(0);
            for (s, stage) in nvls_stages(across).iter().enumerate() {
                if !sends_at(at, nvls_lanes(s).0, s as u32, chunks) {
                    continue;
                }
                match stage {
                    NvlsStage::Push if p < self.gpus => {
                        out.push(Send::to(self.switch(p / g), piece));
                    }
                    NvlsStage::Up if p < self.gpus => {
                        out.push(Send::to(self.switch(p / g), piece / g as f64));
                    }
                    NvlsStage::NetUp if p < self.gpus => {
                        out.push(Send::to(self.net_switch(p % g), piece / g as f64));
                    }
                    NvlsStage::Return | NvlsStage::Multicast if p >= self.gpus && !rails => {
                        let node = p - self.switch(0);
                        let bytes = if *stage == NvlsStage::Return {
                            piece / g as f64
                        } else {
                            piece
                        };
                        out.extend((0..g).map(|j| Send::to(node * g + j, bytes)));
                    }
                    NvlsStage::NetDown if rails => {
                        let rail = p - self.net_switch(0);
                        out.extend(
                            (0..self.nodes).map(|n| Send::to(n * g + rail, piece / g as f64)),
                        );
                    }
                    _ => {}
                }
            }
            return;
        }
        if p >= self.gpus {
            return;
        }
        let lanes = match at {
            Some((lane, _)) => lane..lane + 1,
            None => 0..self.lanes(self.phase_index(ph)),
        };
        // the lane is walked above: only the piece matters here
        let live = |first: u32, chunks: u32| at.is_none_or(|(_, k)| has_piece(k, first, chunks));
        match *ph {
            Phase::Chain { part, chunks } => {
                let channels = self.ring_channels(Grouping::All);
                for c in lanes {
                    let (idx, to, nic) = self.chain_spot(c, channels, p);
                    if idx + 1 < self.gpus && live(idx, chunks) {
                        out.push(Send::via(to, part / chunks as f64, nic));
                    }
                }
            }
            Phase::TreeReduce { part, chunks } => {
                for lane in lanes {
                    let spot = self.tree_spot(lane / 2, (lane % 2) as usize, p);
                    if let Some((to, nic)) = spot.parent
                        && live(spot.height, chunks)
                    {
                        out.push(Send::via(to, part / chunks as f64, nic));
                    }
                }
            }
            Phase::TreeBcast { part, chunks } => {
                for lane in lanes {
                    let spot = self.tree_spot(lane / 2, (lane % 2) as usize, p);
                    if live(spot.depth, chunks) {
                        for &(to, nic) in spot.children.iter().flatten() {
                            out.push(Send::via(to, part / chunks as f64, nic));
                        }
                    }
                }
            }
            _ => unreachable!("not a pipelined phase"),
        }
    }

    /// [`Phase::NvlsTree`]'s sends of participant `p` (see
    /// [`Program::pipeline_sends`] for `at`).
    fn nvls_tree_sends(
        &self,
        part: f64,
        chunks: u32,
        p: Participant,
        at: Option<(u32, u32)>,
        out: &mut Vec<Send>,
    ) {
        let trees = self.trees.as_ref().expect("a program with a double tree");
        let g = self.gpus_per_node;
        let piece = part / chunks as f64;
        // one tree's half of a GPU's shard
        let half = piece / (2 * g) as f64;
        // whether `lane` sends a piece at its local step (its piece's
        // step in that lane is `first` steps after the piece's push)
        let live = |lane: u32, first: u32| sends_at(at, lane, first, chunks);
        if p >= self.switch(0) {
            let node = p - self.switch(0);
            let gpus = node * g..(node + 1) * g;
            if live(NVLS_TREE_PUSH, 1) {
                for j in gpus.clone() {
                    out.extend((0..2).map(|t| Send::to(j, half).in_lane(NVLS_TREE_UP + t)));
                }
            }
            if live(NVLS_TREE_UP, 3 + 2 * self.node_tree_height()) {
                out.extend(gpus.map(|j| Send::to(j, piece).in_lane(NVLS_TREE_CAST)));
            }
            return;
        }
        let (node, local) = (p / g, p % g);
        let switch = self.switch(node);
        if live(NVLS_TREE_PUSH, 0) {
            out.push(Send::to(switch, piece));
        }
        // a half to node `to`'s GPU at this position, split over this
        // position's own NICs (the same on every node)
        let nics = self.pairing.own_nics(local);
        let across = |to: u32, lane: u32, out: &mut Vec<Send>| {
            out.extend((0..nics).map(|i| {
                Send::via(
                    to * g + local,
                    half / nics as f64,
                    Some(self.pairing.own_nic(local, i)),
                )
                .in_lane(lane)
            }));
        };
        let n = node as usize;
        for t in 0..2 {
            let (up, down) = (NVLS_TREE_UP + t as u32, NVLS_TREE_DOWN + t as u32);
            let (height, depth) = (trees.height[t][n], trees.depth[t][n]);
            let parent = trees.parent[t][n];
            if let Some(parent) = parent
                && live(up, 2 + height)
            {
                across(parent, up, out);
            }
            // the root turns its sum round in its way up's lane
            let lane = if parent.is_some() { down } else { up };
            if live(lane, 2 + trees.tall(t) + depth) {
                for &child in trees.children[t][n].iter().flatten() {
                    across(child, down, out);
                }
                out.push(Send::to(switch, half).in_lane(NVLS_TREE_UP));
            }
        }
    }

    /// Messages participant `p` receives in [`Phase::NvlsTree`] at local
    /// step `k`, in lane `lane` (every lane when `None`).
    fn nvls_tree_recvs(&self, chunks: u32, p: Participant, lane: Option<u32>, k: u32) -> u32 {
        let trees = self.trees.as_ref().expect("a program with a double tree");
        let g = self.gpus_per_node;
        let live = |l: u32, first: u32| expects_at(lane, l, k, first, chunks);
        let mut n = 0;
        if p >= self.switch(0) {
            let node = (p - self.switch(0)) as usize;
            if live(NVLS_TREE_PUSH, 0) {
                n += g;
            }
            for t in 0..2 {
                if live(NVLS_TREE_UP, 2 + trees.tall(t) + trees.depth[t][node]) {
                    n += g;
                }
            }
            return n;
        }
        let (node, local) = ((p / g) as usize, p % g);
        let nics = self.pairing.own_nics(local);
        for t in 0..2 {
            let (up, down) = (NVLS_TREE_UP + t as u32, NVLS_TREE_DOWN + t as u32);
            // the NVSwitch's half
            n += u32::from(live(up, 1));
            for &child in trees.children[t][node].iter().flatten() {
                if live(up, 2 + trees.height[t][child as usize]) {
                    n += nics;
                }
            }
            if let Some(parent) = trees.parent[t][node]
                && live(down, 2 + trees.tall(t) + trees.depth[t][parent as usize])
            {
                n += nics;
            }
        }
        n + u32::from(live(NVLS_TREE_CAST, 3 + 2 * self.node_tree_height()))
    }

    /// The index of phase `ph` in the program.
    fn phase_index(&self, ph: &Phase) -> usize {
        self.phases
            .iter()
            .position(|x| std::ptr::eq(x, ph))
            .expect("a phase of this program")
    }

    /// Messages GPU `p` receives at local step `k` of a pipelined phase, in
    /// lane `lane` (every lane when `None`).
    fn pipeline_recvs(&self, ph: &Phase, p: Participant, lane: Option<u32>, k: u32) -> u32 {
        if let Phase::Sharp { chunks, .. } = *ph {
            let live = |l: u32, first: u32| expects_at(lane, l, k, first, chunks);
            let peers = self.gpus_per_node - 1;
            return if p < self.gpus {
                // the scatter's shards, the sum, the gather's shards
                peers * u32::from(live(1, 0))
                    + u32::from(live(2, 2))
                    + peers * u32::from(live(3, 3))
            } else if p >= self.net_switch(0) {
                self.nodes * u32::from(live(1, 1))
            } else {
                0
            };
        }
        if let Phase::NvlsTree { chunks, .. } = *ph {
            return self.nvls_tree_recvs(chunks, p, lane, k);
        }
        if let Phase::Nvls { chunks, across, .. } = *ph {
            let g = self.gpus_per_node;
            let rails = p >= self.net_switch(0);
            let mut n = 0;
            for (s, stage) in nvls_stages(across).iter().enumerate() {
                if !expects_at(lane, nvls_lanes(s).1, k, s as u32, chunks) {
                    continue;
                }
                n += match stage {
                    NvlsStage::Push | NvlsStage::Up if p >= self.gpus && !rails => g,
                    NvlsStage::NetUp if rails => self.nodes,
                    NvlsStage::Return | NvlsStage::NetDown | NvlsStage::Multicast
                        if p < self.gpus =>
                    {
                        1
                    }
                    _ => 0,
                };
            }
            return n;
        }
        if p >= self.gpus {
            return 0;
        }
        let lanes = match lane {
            Some(l) => l..l + 1,
            None => 0..self.lanes(self.phase_index(ph)),
        };
        let live = |first: u32, chunks: u32| has_piece(k, first, chunks);
        let mut n = 0;
        match *ph {
            Phase::Chain { chunks, .. } => {
                let channels = self.ring_channels(Grouping::All);
                for c in lanes {
                    let (idx, _, _) = self.chain_spot(c, channels, p);
                    n += (idx > 0 && live(idx - 1, chunks)) as u32;
                }
            }
            Phase::TreeReduce { chunks, .. } => {
                for lane in lanes {
                    let (c, t) = (lane / 2, (lane % 2) as usize);
                    for &(child, _) in self.tree_spot(c, t, p).children.iter().flatten() {
                        n += live(self.tree_spot(c, t, child).height, chunks) as u32;
                    }
                }
            }
            Phase::TreeBcast { chunks, .. } => {
                for lane in lanes {
                    let spot = self.tree_spot(lane / 2, (lane % 2) as usize, p);
                    n += (spot.parent.is_some() && live(spot.depth - 1, chunks)) as u32;
                }
            }
            _ => unreachable!("not a pipelined phase"),
        }
        n
    }

    /// A pipelined phase's steady state, for the analytical model: every
    /// participant's sends of a step in which all its pipelines run, and
    /// the number of steps beyond its piece count (the pipeline's fill).
    /// `None` for other phases.
    pub fn steady_sends(&self, i: usize, p: Participant, out: &mut Vec<Send>) -> Option<u32> {
        if !self.pipelined(i) {
            return None;
        }
        let ph = &self.phases[i];
        self.pipeline_sends(ph, p, None, out);
        let chunks = match *ph {
            Phase::Chain { chunks, .. }
            | Phase::TreeReduce { chunks, .. }
            | Phase::TreeBcast { chunks, .. }
            | Phase::Nvls { chunks, .. }
            | Phase::NvlsTree { chunks, .. }
            | Phase::Sharp { chunks, .. } => chunks,
            _ => unreachable!(),
        };
        let steps = self.phase_range(i).len() as u32;
        Some(steps.saturating_sub(chunks))
    }

    /// The bytes whose 512 KiB pieces set pipelined phase `i`'s piece
    /// count ([`pipeline_chunks`]): one channel's or tree's part, a node's
    /// buffer for NVLS, and each GPU's shard of it where NCCL's chunk is a
    /// head's (the NVLS tree, CollNet).
    pub fn chunked_part(&self, i: usize) -> f64 {
        match self.phases[i] {
            Phase::Chain { part, .. }
            | Phase::TreeReduce { part, .. }
            | Phase::TreeBcast { part, .. } => part,
            Phase::Nvls { part, .. } | Phase::NvlsTree { part, .. } | Phase::Sharp { part, .. } => {
                part / self.gpus_per_node as f64
            }
            _ => unreachable!("not a pipelined phase"),
        }
    }

    /// The latency of a pipelined phase's longest path (in seconds): the
    /// chain from the root to its end, or a tree's deepest leaf to its
    /// root; the slowest channel and tree.
    pub fn pipeline_latency(&self, i: usize, topo: &Topology) -> f64 {
        let hop = |from: Participant, to: Participant, nic: Option<u32>| {
            topo.route(self.endpoint(from), self.endpoint(to), nic)
                .latency
        };
        match self.phases[i] {
            Phase::Chain { .. } => {
                let channels = self.ring_channels(Grouping::All);
                (0..channels)
                    .map(|c| {
                        (0..self.gpus)
                            .map(|p| {
                                let (idx, to, nic) = self.chain_spot(c, channels, p);
                                if idx + 1 < self.gpus {
                                    hop(p, to, nic)
                                } else {
                                    0.0
                                }
                            })
                            .fold(0.0, |a, b| a + b)
                    })
                    .fold(0.0, f64::max)
            }
            Phase::TreeReduce { .. } | Phase::TreeBcast { .. } => {
                let mut worst = 0.0f64;
                for lane in 0..self.lanes(i) {
                    let (c, t) = (lane / 2, (lane % 2) as usize);
                    for p in 0..self.gpus {
                        // p's latency to the root
                        let (mut a, mut lat) = (p, 0.0);
                        while let Some((up, nic)) = self.tree_spot(c, t, a).parent {
                            lat += hop(a, up, nic);
                            a = up;
                        }
                        worst = worst.max(lat);
                    }
                }
                worst
            }
            Phase::Sharp { .. } => {
                // the slowest scatter into GPU j, its rail's round trip, and
                // the slowest gather out of it
                let g = self.gpus_per_node;
                (0..g)
                    .map(|j| {
                        let sw = self.net_switch(j);
                        let into = (0..g).filter(|&p| p != j).map(|p| hop(p, j, None));
                        let out = (0..g).filter(|&q| q != j).map(|q| hop(j, q, None));
                        into.fold(0.0, f64::max)
                            + hop(j, sw, None)
                            + hop(sw, j, None)
                            + out.fold(0.0, f64::max)
                    })
                    .fold(0.0, f64::max)
            }
            Phase::Nvls { across, .. } => {
                let (gpu, sw) = (0, self.switch(0));
                nvls_stages(across)
                    .iter()
                    .map(|st| match st {
                        NvlsStage::Push | NvlsStage::Up => hop(gpu, sw, None),
                        NvlsStage::Return | NvlsStage::Multicast => hop(sw, gpu, None),
                        NvlsStage::NetUp => hop(gpu, self.net_switch(0), None),
                        NvlsStage::NetDown => hop(self.net_switch(0), gpu, None),
                    })
                    .sum()
            }
            Phase::NvlsTree { .. } => {
                let trees = self.trees.as_ref().expect("a program with a double tree");
                let (g, sw) = (self.gpus_per_node, self.switch(0));
                let nic = Some(self.pairing.own_nic(0, 0));
                // push and halves back, sums in and multicast out
                let nvlink = 2.0 * (hop(0, sw, None) + hop(sw, 0, None));
                let mut net = 0.0f64;
                for t in 0..2 {
                    // the slowest way up to the root and down from it
                    let (mut up, mut down) = (0.0f64, 0.0f64);
                    for node in 0..self.nodes {
                        let (mut a, mut u, mut d) = (node, 0.0, 0.0);
                        while let Some(parent) = trees.parent[t][a as usize] {
                            u += hop(a * g, parent * g, nic);
                            d += hop(parent * g, a * g, nic);
                            a = parent;
                        }
                        up = up.max(u);
                        down = down.max(d);
                    }
                    net = net.max(up + down);
                }
                nvlink + net
            }
            _ => 0.0,
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
            Grouping::Stage { size, stage } => {
                let r = self.rank(gpu);
                debug_assert_eq!(r / size, stage, "GPU {gpu} is not of stage {stage}");
                (0, r - stage * size)
            }
        }
    }

    /// The GPU a [`Phase::Shift`] from member `idx` of `from` sends to.
    fn shift_peer(&self, from: Grouping, to: u32, idx: u32) -> u32 {
        let Grouping::Stage { size, .. } = from else {
            unreachable!("a shift's senders are a stage")
        };
        self.gpu(to * size + idx)
    }

    /// The GPU at `index` of group `id`.
    fn member(&self, id: u32, index: u32, g: Grouping) -> u32 {
        let gp = self.gpus_per_node;
        match g {
            Grouping::All => self.gpu(index),
            Grouping::IntraNode => id * gp + index,
            Grouping::Rail => index * gp + id,
            Grouping::Block(k) => self.gpu(id * k + index),
            Grouping::Stage { size, stage } => self.gpu((stage + id) * size + index),
        }
    }

    /// The endpoint a participant runs on.
    pub fn endpoint(&self, p: Participant) -> Endpoint {
        if p < self.gpus {
            Endpoint::Gpu(p)
        } else if p >= self.net_switch(0) {
            Endpoint::NetSwitch {
                nic: self.pairing.nic_of_gpu(p - self.net_switch(0), 0),
            }
        } else if p >= self.switch(0) {
            Endpoint::Switch {
                node: p - self.switch(0),
            }
        } else if self.ps_machines > 0 {
            // server j on dedicated machine j mod M, its one NIC
            Endpoint::Host {
                node: self.nodes + (p - self.gpus) % self.ps_machines,
                nic: 0,
            }
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
    /// node 0's, is exact. True for rings, pairwise exchanges and the
    /// linear and Bruck AlltoAlls (member i sends to i + j, the same bytes
    /// for every member) in contiguous placement, per-node and per-rail rings, rings over blocks
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
            Phase::Ring { group, .. }
            | Phase::Pairwise { group, .. }
            | Phase::Linear { group, .. }
            | Phase::BruckAllToAll { group, .. } => match *group {
                Grouping::All => !self.scattered,
                Grouping::IntraNode | Grouping::Rail => true,
                Grouping::Block(k) => !self.scattered && self.gpus_per_node.is_multiple_of(k),
                Grouping::Stage { .. } => false,
            },
            Phase::Shift { .. } => false,
            Phase::BinomialReduce { .. }
            | Phase::BinomialBcast { .. }
            | Phase::TreeBcastAll { .. }
            | Phase::SplitBinaryTree { .. }
            | Phase::BinomialScatter { .. }
            | Phase::BcastDoubling { .. }
            | Phase::RecursiveDoubling { .. }
            | Phase::Bruck { .. }
            | Phase::RecursiveAllReduce { .. }
            | Phase::NeighborExchange { .. }
            | Phase::RingV { .. }
            | Phase::PairwiseV { .. }
            | Phase::Chain { .. }
            | Phase::TreeReduce { .. }
            | Phase::TreeBcast { .. }
            | Phase::Nvls { .. }
            | Phase::NvlsTree { .. }
            | Phase::Sharp { .. } => false,
            Phase::Ps { shard, workers, .. } => {
                matches!(shard, Shards::Even(_))
                    && self.ps_machines == 0
                    && self.servers.is_multiple_of(self.nodes)
                    && *workers == Grouping::All
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
        } else if p >= self.net_switch(0) {
            // a rail's switches belong to no node; no program with them is
            // node-symmetric, so this is never asked of them
            0
        } else if p >= self.switch(0) {
            p - self.switch(0)
        } else if self.ps_machines > 0 {
            self.nodes + (p - self.gpus) % self.ps_machines
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

    fn is_worker(&self, p: Participant, leaders_only: bool, group: Grouping) -> bool {
        p < self.gpus
            && (!leaders_only || p.is_multiple_of(self.gpus_per_node))
            && self.in_group(p, group)
    }

    fn workers(&self, leaders_only: bool, group: Grouping) -> u32 {
        if leaders_only {
            self.nodes
        } else {
            self.group_size(group)
        }
    }

    /// Channels a ring phase in `group` runs in (see [`Phase::Ring`]):
    /// over all GPUs in contiguous placement across nodes, one per NIC of a
    /// node; over rails with more NICs than GPUs, one per NIC each GPU has
    /// of its own (⌊NICs / GPUs⌋); otherwise one.
    pub fn ring_channels(&self, group: Grouping) -> u32 {
        if self.nodes <= 1 {
            return 1;
        }
        match group {
            Grouping::All => all_channels(self.nodes, self.nics_per_node, self.scattered),
            Grouping::Rail if self.nics_per_node > self.gpus_per_node => {
                self.nics_per_node / self.gpus_per_node
            }
            _ => 1,
        }
    }

    /// The sends of GPU `p` in one step of a ring in `group` of `chunk`
    /// bytes per send (see [`Phase::Ring`] for the channels).
    /// With `only`, the sends of that channel alone (its lane).
    fn ring_sends(
        &self,
        p: Participant,
        group: Grouping,
        chunk: f64,
        only: Option<u32>,
        out: &mut Vec<Send>,
    ) {
        let channels = self.ring_channels(group);
        let wanted = |c: u32| only.is_none_or(|o| o == c);
        let gp = self.gpus_per_node;
        let share = chunk / channels as f64;
        match group {
            Grouping::All if channels > 1 => {
                let (node, local) = (p / gp, p % gp);
                for c in (0..channels).filter(|&c| wanted(c)) {
                    // channel c enters every node at NIC c's GPU
                    let entry = self.pairing.gpu_of_nic(c);
                    let next = (local + 1) % gp;
                    out.push(if next == entry {
                        Send::via((node + 1) % self.nodes * gp + entry, share, Some(c))
                    } else {
                        Send::to(node * gp + next, share)
                    });
                }
            }
            Grouping::Rail if channels > 1 => {
                let (node, local) = (p / gp, p % gp);
                let to = (node + 1) % self.nodes * gp + local;
                out.extend(
                    (0..channels)
                        .filter(|&j| wanted(j))
                        .map(|j| Send::via(to, share, Some(self.pairing.own_nic(local, j)))),
                );
            }
            _ if !self.in_group(p, group) || !wanted(0) => {}
            _ => {
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                out.push(Send::to(self.member(id, (idx + 1) % s, group), chunk));
            }
        }
    }

    /// The path of `send` from participant `from` on `topo` (the topology
    /// of the cluster the program was built for).
    pub fn path(&self, topo: &Topology, from: Participant, send: &Send) -> Path {
        topo.route(self.endpoint(from), self.endpoint(send.to), send.nic)
    }

    /// Appends participant `p`'s sends in global step `step` to `out`.
    pub fn sends(&self, p: Participant, step: u32, out: &mut Vec<Send>) {
        let (i, k) = self.phase_of(step);
        match &self.phases[i] {
            Phase::Ps {
                leaders_only,
                workers,
                shard,
                overlap,
                part,
            } => {
                // overlap: step 0 "ready" signals, step 1 push and pull;
                // otherwise step 0 push, step 1 pull; a part alone: step 0
                let leaders_only = *leaders_only;
                let (ready, push, pull) = match part {
                    PsPart::PushPull if *overlap => (k == 0, k == 1, k == 1),
                    PsPart::PushPull => (false, k == 0, k == 1),
                    PsPart::Push => (false, k == 0, false),
                    PsPart::Pull => (false, false, k == 0),
                };
                // a worker's index among the workers
                let workers = *workers;
                let index = |w: Participant| if leaders_only { self.node_of(w) } else { w };
                let servers = self.servers;
                let worker = |w| self.is_worker(w, leaders_only, workers);
                if worker(p) && ready {
                    out.extend((0..servers).map(|j| Send::to(self.gpus + j, 0.0)));
                } else if worker(p) && push {
                    out.extend(
                        (0..servers)
                            .map(|j| Send::to(self.gpus + j, shard.of(index(p), j, servers))),
                    );
                } else if p >= self.gpus && pull {
                    let j = p - self.gpus;
                    out.extend(
                        (0..self.gpus)
                            .filter(|&w| worker(w))
                            .map(|w| Send::to(w, shard.of(index(w), j, servers))),
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
                out.push(Send::to(to, blocks[block as usize]));
            }
            &Phase::TreeBcastAll {
                group,
                tree,
                bytes,
                segments,
            } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return;
                }
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                // segment k − depth(idx), when there is one
                let depth = tree.depth(s, idx);
                if k >= depth && k - depth < segments.max(1) {
                    tree.children(s, idx, |c| {
                        out.push(Send::to(self.member(id, c, group), bytes))
                    });
                }
            }
            &Phase::SplitBinaryTree {
                group,
                bytes,
                segments,
            } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return;
                }
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                // a segment down the tree, the whole half in the swap
                let segment = bytes / segments.max(1) as f64;
                bcast::split_send(s, idx, k, segments, |to, swap| {
                    let b = if swap { bytes } else { segment };
                    out.push(Send::to(self.member(id, to, group), b))
                });
            }
            &Phase::BinomialScatter { group, block } | &Phase::BcastDoubling { group, block } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return;
                }
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                let send = if matches!(self.phases[i], Phase::BinomialScatter { .. }) {
                    bcast::scatter_send(s, idx, k)
                } else {
                    bcast::doubling_send(s, idx, k)
                };
                if let Some((to, blocks)) = send {
                    out.push(Send::to(self.member(id, to, group), block * blocks as f64));
                }
            }
            &Phase::Shift { from, to, bytes } => {
                if p < self.gpus && self.in_group(p, from) {
                    let (_, idx) = self.locate(p, from);
                    out.push(Send::to(self.shift_peer(from, to, idx), bytes));
                }
            }
            Phase::PairwiseV { matrix } => {
                if p >= self.gpus {
                    return;
                }
                let s = self.gpus;
                let (_, idx) = self.locate(p, Grouping::All);
                let j = (idx + k + 1) % s;
                let to = self.member(0, j, Grouping::All);
                out.push(Send::to(to, matrix[(idx * s + j) as usize]));
            }
            &Phase::Ring { group, chunk, .. } => {
                if p < self.gpus {
                    self.ring_sends(p, group, chunk, None, out);
                }
            }
            &Phase::RecursiveAllReduce {
                group,
                bytes,
                halving,
            } => {
                if p < self.gpus && self.in_group(p, group) {
                    let (id, idx) = self.locate(p, group);
                    let s = self.group_size(group);
                    if let Some((to, share)) = exchange_send(s, idx, k, halving) {
                        out.push(Send::to(self.member(id, to, group), bytes * share));
                    }
                }
            }
            ph @ (Phase::Chain { .. }
            | Phase::TreeReduce { .. }
            | Phase::TreeBcast { .. }
            | Phase::Nvls { .. }
            | Phase::NvlsTree { .. }
            | Phase::Sharp { .. }) => {
                for lane in 0..self.lanes(i) {
                    self.pipeline_sends(ph, p, Some((lane, k)), out);
                }
            }
            ph => {
                if p >= self.gpus {
                    return;
                }
                let (group, bytes) = match *ph {
                    Phase::BinomialReduce { group, bytes } => (group, bytes),
                    Phase::BinomialBcast { group, bytes } => (group, bytes),
                    Phase::Pairwise { group, chunk } => (group, chunk),
                    Phase::Linear { group, chunk, .. } => (group, chunk),
                    Phase::BruckAllToAll { group, chunk } => (group, chunk),
                    Phase::RecursiveDoubling { group, bytes } => (group, bytes),
                    Phase::Bruck { group, bytes } => (group, bytes),
                    Phase::NeighborExchange { group, bytes } => (group, bytes),
                    Phase::Ring { .. }
                    | Phase::Ps { .. }
                    | Phase::Shift { .. }
                    | Phase::RecursiveAllReduce { .. }
                    | Phase::TreeBcastAll { .. }
                    | Phase::SplitBinaryTree { .. }
                    | Phase::BinomialScatter { .. }
                    | Phase::BcastDoubling { .. }
                    | Phase::RingV { .. }
                    | Phase::PairwiseV { .. }
                    | Phase::Chain { .. }
                    | Phase::TreeReduce { .. }
                    | Phase::TreeBcast { .. }
                    | Phase::Nvls { .. }
                    | Phase::NvlsTree { .. }
                    | Phase::Sharp { .. } => {
                        unreachable!()
                    }
                };
                if !self.in_group(p, group) {
                    return;
                }
                let s = self.group_size(group);
                let (id, idx) = self.locate(p, group);
                if let &Phase::Linear {
                    batch, with_self, ..
                } = ph
                {
                    if batch == 0 {
                        // to every other member at once
                        for j in 1..s {
                            out.push(Send::to(self.member(id, (idx + j) % s, group), bytes));
                        }
                    } else {
                        // to member i − d for this step's batch of d
                        for d in linear_batch(k, batch, with_self, s) {
                            out.push(Send::to(self.member(id, (idx + s - d) % s, group), bytes));
                        }
                    }
                    return;
                }
                // (destination index, multiple of `bytes`)
                let to = match ph {
                    Phase::Pairwise { .. } => Some(((idx + k + 1) % s, 1)),
                    Phase::BruckAllToAll { .. } => {
                        let d = 1u32 << k;
                        Some(((idx + d) % s, bruck_blocks(s, d)))
                    }
                    Phase::BinomialReduce { .. } => {
                        let d = 1u32 << k;
                        (idx % (2 * d) == d).then(|| (idx - d, 1))
                    }
                    Phase::BinomialBcast { .. } => {
                        // the reduce's mirror: farthest child first
                        let d = bcast_distance(s, k);
                        (idx % (2 * d) == 0 && idx + d < s).then(|| (idx + d, 1))
                    }
                    Phase::RecursiveDoubling { .. } => doubling_send(s, idx, k),
                    Phase::Bruck { .. } => {
                        let d = 1u32 << k;
                        Some(((idx + s - d % s) % s, d.min(s - d)))
                    }
                    Phase::NeighborExchange { .. } => {
                        Some((neighbor_of(s, idx, k), if k == 0 { 1 } else { 2 }))
                    }
                    _ => unreachable!(),
                };
                if let Some((to, parts)) = to {
                    out.push(Send::to(self.member(id, to, group), bytes * parts as f64));
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
                workers,
                overlap,
                part,
                ..
            } => {
                // servers hear from every worker in step 0 (a push, or the
                // ready signal) and, with overlap, in step 1 (the push)
                let (push, pull) = match part {
                    PsPart::PushPull => (k == 0 || overlap, k == 1),
                    PsPart::Push => (k == 0, false),
                    PsPart::Pull => (false, k == 0),
                };
                if self.is_worker(p, leaders_only, workers) && pull {
                    self.servers
                } else if p >= self.gpus && push {
                    self.workers(leaders_only, workers)
                } else {
                    0
                }
            }
            Phase::TreeBcastAll {
                group,
                tree,
                segments,
                ..
            } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return 0;
                }
                // segment j arrives in the step its parent (a level up)
                // sends it
                let (_, idx) = self.locate(p, group);
                let first = tree.depth(self.group_size(group), idx);
                (idx > 0 && k + 1 >= first && k + 1 - first < segments.max(1)) as u32
            }
            Phase::SplitBinaryTree { group, .. }
            | Phase::BinomialScatter { group, .. }
            | Phase::BcastDoubling { group, .. } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return 0;
                }
                let s = self.group_size(group);
                let (_, idx) = self.locate(p, group);
                match self.phases[i] {
                    Phase::SplitBinaryTree { segments, .. } => {
                        bcast::split_recvs(s, idx, k, segments)
                    }
                    Phase::BinomialScatter { .. } => bcast::scatter_recv(s, idx, k) as u32,
                    _ => bcast::doubling_recv(s, idx, k) as u32,
                }
            }
            Phase::Shift { from, to, .. } => {
                let Grouping::Stage { size, .. } = from else {
                    unreachable!("a shift's senders are a stage")
                };
                let to = Grouping::Stage { size, stage: to };
                (p < self.gpus && self.in_group(p, to)) as u32
            }
            Phase::RecursiveAllReduce { group, .. } => {
                if p >= self.gpus || !self.in_group(p, group) {
                    return 0;
                }
                let (_, idx) = self.locate(p, group);
                let (p2, _, fold) = doubling(self.group_size(group));
                let extras = self.group_size(group) - p2;
                let last = self.phase_steps(&self.phases[i]) - 1;
                let got = if fold && k == 0 {
                    idx < 2 * extras && !idx.is_multiple_of(2)
                } else if fold && k == last {
                    idx < 2 * extras && idx.is_multiple_of(2)
                } else {
                    exchanging(extras, idx).is_some()
                };
                got as u32
            }
            // every rank receives one message in every step
            Phase::RingV { .. } | Phase::PairwiseV { .. } => (p < self.gpus) as u32,
            ref ph @ (Phase::Chain { .. }
            | Phase::TreeReduce { .. }
            | Phase::TreeBcast { .. }
            | Phase::Nvls { .. }
            | Phase::NvlsTree { .. }
            | Phase::Sharp { .. }) => self.pipeline_recvs(ph, p, None, k),
            ref ph => {
                if p >= self.gpus {
                    return 0;
                }
                let group = match *ph {
                    Phase::Ring { group, .. }
                    | Phase::BinomialReduce { group, .. }
                    | Phase::BinomialBcast { group, .. }
                    | Phase::Pairwise { group, .. }
                    | Phase::Linear { group, .. }
                    | Phase::BruckAllToAll { group, .. }
                    | Phase::RecursiveDoubling { group, .. } => group,
                    Phase::Bruck { group, .. } | Phase::NeighborExchange { group, .. } => group,
                    Phase::Ps { .. }
                    | Phase::Shift { .. }
                    | Phase::RecursiveAllReduce { .. }
                    | Phase::TreeBcastAll { .. }
                    | Phase::SplitBinaryTree { .. }
                    | Phase::BinomialScatter { .. }
                    | Phase::BcastDoubling { .. }
                    | Phase::RingV { .. }
                    | Phase::PairwiseV { .. }
                    | Phase::Chain { .. }
                    | Phase::TreeReduce { .. }
                    | Phase::TreeBcast { .. }
                    | Phase::Nvls { .. }
                    | Phase::NvlsTree { .. }
                    | Phase::Sharp { .. } => {
                        unreachable!()
                    }
                };
                if !self.in_group(p, group) {
                    return 0;
                }
                let s = self.group_size(group);
                let (_, idx) = self.locate(p, group);
                let d = 1u32 << k.min(31);
                let got = match ph {
                    // one message per channel (see `ring_sends`)
                    Phase::Ring { .. } => return self.ring_channels(group),
                    Phase::Pairwise { .. } | Phase::BruckAllToAll { .. } => true,
                    // from every other member, or this step's batch of them
                    Phase::Linear { batch: 0, .. } => return s - 1,
                    &Phase::Linear {
                        batch, with_self, ..
                    } => return linear_batch(k, batch, with_self, s).len() as u32,
                    Phase::BinomialReduce { .. } => idx % (2 * d) == 0 && idx + d < s,
                    Phase::BinomialBcast { .. } => {
                        let d = bcast_distance(s, k);
                        idx % (2 * d) == d
                    }
                    // every member hears from member i + 2^k
                    Phase::Bruck { .. } | Phase::NeighborExchange { .. } => true,
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
    /// Every tree shape Open MPI's broadcasts use, with other parameters.
    const TREES: [BcastTree; 10] = [
        BcastTree::Binomial,
        BcastTree::Knomial(2),
        BcastTree::Knomial(3),
        BcastTree::Knomial(4),
        BcastTree::Kary(2),
        BcastTree::Kary(3),
        BcastTree::Chain(1),
        BcastTree::Chain(3),
        BcastTree::Chain(4),
        BcastTree::Flat,
    ];

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
                for send in &out {
                    assert_ne!(send.to, p, "self-send at step {step}");
                    recv[send.to as usize] += 1;
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

    /// Lane by lane: every message a pipelined phase or a ring's channel
    /// sends in lane l of step s is expected once, in the lane
    /// [`Program::dst_lane`] names, by its receiver at step s; and nothing
    /// else is expected. Rings over all GPUs, rails, nodes and blocks, with
    /// and without shared PCIe switches (which move the GPU each channel
    /// enters a node at).
    #[test]
    fn pipelined_lanes_balance() {
        for (nodes, g, nics) in [
            (2, 1, 1),
            (1, 8, 1),
            (1, 3, 1),
            (2, 4, 1),
            (2, 4, 4),
            (3, 2, 4),
            (4, 8, 8),
            (5, 2, 2),
            (6, 1, 2),
        ] {
            let mut spec = ClusterSpec::flat(nodes, 1e9, 0.0);
            spec.gpus_per_node = g;
            spec.nics_per_node = nics;
            let part = 3.0 * PIPELINE_CHUNK;
            let mut programs = vec![
                vec![Phase::Chain { part, chunks: 3 }],
                vec![
                    Phase::TreeReduce { part, chunks: 3 },
                    Phase::TreeBcast { part, chunks: 3 },
                ],
                vec![Phase::Sharp { part, chunks: 3 }],
                vec![Phase::NvlsTree { part, chunks: 3 }],
            ];
            if nodes == 1 {
                programs.push(vec![Phase::Nvls {
                    part,
                    chunks: 3,
                    across: false,
                }]);
            } else {
                programs.push(vec![Phase::Nvls {
                    part,
                    chunks: 3,
                    across: true,
                }]);
            }
            // rings: a lane per channel
            let ring = |group| Phase::Ring {
                group,
                steps: 3,
                chunk: 1.0,
            };
            programs.push(vec![ring(Grouping::All)]);
            if nodes > 1 {
                programs.push(vec![ring(Grouping::Rail)]);
            }
            if g > 1 {
                programs.push(vec![ring(Grouping::IntraNode)]);
            }
            if g % 2 == 0 {
                programs.push(vec![ring(Grouping::Block(2))]);
            }
            // and the same under shared PCIe switches of two GPUs, where
            // they share the NICs equally
            let mut specs = vec![spec.clone()];
            let switches = g / 2;
            if g % 2 == 0 && (nics % switches == 0 || switches % nics == 0) {
                let mut s = spec.clone();
                s.pcie_switches = Some(crate::cluster::PcieSwitches {
                    gpus: 2,
                    uplink: crate::cluster::NicLink {
                        name: "u".into(),
                        link: crate::cluster::LinkParams {
                            bandwidth: 1e9,
                            latency: 0.0,
                        },
                    },
                });
                specs.push(s);
            }
            for (spec, phases) in specs
                .iter()
                .flat_map(|s| programs.iter().map(move |p| (s, p.clone())))
            {
                let prog = Program::new(spec, phases, 0);
                let n = prog.participants();
                let mut out = Vec::new();
                let mut messages = 0;
                for step in 0..prog.steps() {
                    let (i, _) = prog.phase_of(step);
                    let lanes = prog.lanes(i);
                    let mut recv = vec![0u32; (n * lanes) as usize];
                    for p in 0..n {
                        for lane in 0..lanes {
                            out.clear();
                            prog.lane_sends(p, lane, step, &mut out);
                            let to_lane = prog.dst_lane(p, lane, step);
                            for send in &out {
                                assert_ne!(send.to, p, "self-send at step {step}");
                                let to_lane = send.lane.unwrap_or(to_lane);
                                recv[(send.to * lanes + to_lane) as usize] += 1;
                                messages += 1;
                            }
                        }
                    }
                    for p in 0..n {
                        for lane in 0..lanes {
                            assert_eq!(
                                recv[(p * lanes + lane) as usize],
                                prog.lane_recvs(p, lane, step),
                                "{:?} nodes {nodes} g {g} nics {nics}: p {p} lane {lane} step {step}",
                                prog.phases()[i]
                            );
                        }
                    }
                }
                assert!(messages > 0 || prog.steps() == 0, "{:?}", prog.phases());
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
                // one model-parallel stage's GPUs alone, first and last
                for k in [1, 2, 3, 4]
                    .into_iter()
                    .filter(|k| (nodes * g).is_multiple_of(*k))
                {
                    let stages = nodes * g / k;
                    groups.push(Grouping::Stage { size: k, stage: 0 });
                    groups.push(Grouping::Stage {
                        size: k,
                        stage: stages - 1,
                    });
                    if stages > 1 {
                        check_balance(
                            &spec,
                            vec![Phase::Shift {
                                from: Grouping::Stage { size: k, stage: 0 },
                                to: 1,
                                bytes: 1.0,
                            }],
                            0,
                        );
                        check_balance(
                            &spec,
                            vec![Phase::Shift {
                                from: Grouping::Stage {
                                    size: k,
                                    stage: stages - 1,
                                },
                                to: stages - 2,
                                bytes: 1.0,
                            }],
                            0,
                        );
                        for part in [PsPart::Push, PsPart::Pull, PsPart::PushPull] {
                            check_balance(
                                &spec,
                                vec![Phase::Ps {
                                    leaders_only: false,
                                    workers: Grouping::Stage { size: k, stage: 1 },
                                    shard: Shards::Even(1.0),
                                    overlap: false,
                                    part,
                                }],
                                nodes,
                            );
                        }
                    }
                }
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
                    for tree in TREES {
                        check_balance(
                            &spec,
                            vec![Phase::TreeBcastAll {
                                group,
                                tree,
                                bytes: 1.0,
                                segments: 1,
                            }],
                            0,
                        );
                    }
                    for segments in [1, 3] {
                        check_balance(
                            &spec,
                            vec![Phase::SplitBinaryTree {
                                group,
                                bytes: 1.0,
                                segments,
                            }],
                            0,
                        );
                    }
                    check_balance(
                        &spec,
                        vec![
                            Phase::BinomialScatter { group, block: 1.0 },
                            Phase::BcastDoubling { group, block: 1.0 },
                        ],
                        0,
                    );
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
                    check_balance(&spec, vec![Phase::Bruck { group, bytes: 1.0 }], 0);
                    for batch in [0, 1, 3, 32] {
                        for with_self in [false, true] {
                            check_balance(
                                &spec,
                                vec![Phase::Linear {
                                    group,
                                    chunk: 1.0,
                                    batch,
                                    with_self,
                                }],
                                0,
                            );
                        }
                    }
                    check_balance(&spec, vec![Phase::BruckAllToAll { group, chunk: 1.0 }], 0);
                    for halving in [false, true] {
                        check_balance(
                            &spec,
                            vec![Phase::RecursiveAllReduce {
                                group,
                                bytes: 1.0,
                                halving,
                            }],
                            0,
                        );
                    }
                    let members = match group {
                        Grouping::All => spec.gpus(),
                        Grouping::IntraNode => spec.gpus_per_node,
                        Grouping::Rail => spec.nodes,
                        Grouping::Block(k) | Grouping::Stage { size: k, .. } => k,
                    };
                    if members.is_multiple_of(2) {
                        check_balance(
                            &spec,
                            vec![Phase::NeighborExchange { group, bytes: 1.0 }],
                            0,
                        );
                    }
                }
                for (overlap, part) in [
                    (true, PsPart::PushPull),
                    (false, PsPart::PushPull),
                    (false, PsPart::Push),
                    (false, PsPart::Pull),
                ] {
                    for leaders_only in [true, false] {
                        check_balance(
                            &spec,
                            vec![Phase::Ps {
                                leaders_only,
                                workers: Grouping::All,
                                shard: Shards::Even(1.0),
                                overlap,
                                part,
                            }],
                            nodes,
                        );
                    }
                }
            }
        }
    }

    /// Open MPI's binomial broadcast: steps are the largest popcount below
    /// s (every member but the root receiving exactly once, from its
    /// parent, in the step before it sends to all its children: the
    /// segmented test below, at one segment). On a flat network of one link class its α-β time
    /// is Σ over steps of (α + the busiest sender's children × m/B): for
    /// 8 members 3α + (3 + 2 + 1)·m/B, for 5 members 2α + (3 + 1)·m/B, where
    /// the textbook binomial takes ⌈log2 s⌉ (α + m/B).
    #[test]
    fn ompi_binomial_broadcast_sends_to_all_children_at_once() {
        assert_eq!(
            (1..=9)
                .map(|s| BcastTree::Binomial.height(s))
                .collect::<Vec<_>>(),
            [0, 1, 1, 2, 2, 2, 2, 3, 3]
        );
        // who sends to whom and when: `ompi_binomial_segments_follow_each_other`
        // (one segment is this broadcast)
        let (alpha, bw, m) = (3e-6, 1e9, 8e6);
        for (s, steps, loads) in [(8u32, 3.0, 6.0), (5, 2.0, 4.0)] {
            let spec = ClusterSpec::flat(s, bw, alpha);
            let c = crate::collective::Collective {
                algo: crate::collective::Algo::OmpiBinomial,
                ..crate::collective::Collective::new(crate::collective::Op::Broadcast)
            };
            let t = c.analytical(&spec).time(m);
            let want = steps * alpha + loads * m / bw;
            assert!(
                (t - want).abs() <= 1e-9 * want,
                "s = {s}: {t} against {want}"
            );
        }
    }

    /// Open MPI's segmented binomial broadcast: every member but the root
    /// receives each segment exactly once, from its parent, segment j in
    /// step popcount − 1 + j, and sends and receives balance; P + S − 1
    /// steps for S segments (40 group sizes; one segment is the
    /// unsegmented broadcast). On 8 ranks of one link class a member sends
    /// segment j when it has arrived and its sends of j − 1 are done, so
    /// the root (3 children) paces the pipe: its S segments take S(α + 3c)
    /// (c = m/(S·B)), then the last segment goes down two more levels,
    /// α + 2c and α + c: T = S(α + 3c) + 2α + 3c, which is 3α + 6m/B
    /// unsegmented, in both network models (1e-9: arithmetic; the flow
    /// model's one-picosecond ticks are far below it).
    #[test]
    fn ompi_binomial_segments_follow_each_other() {
        for s in 1..=40u32 {
            for segments in [1u32, 2, 5] {
                let spec = ClusterSpec::flat(s, 1e9, 0.0);
                let phases = vec![Phase::TreeBcastAll {
                    group: Grouping::All,
                    tree: BcastTree::Binomial,
                    bytes: 1.0,
                    segments,
                }];
                check_balance(&spec, phases.clone(), 0);
                let prog = Program::new(&spec, phases, 0);
                let depth = BcastTree::Binomial.height(s);
                let want_steps = if depth == 0 { 0 } else { depth + segments - 1 };
                assert_eq!(prog.steps(), want_steps, "s = {s}, {segments} segments");
                let mut got = vec![vec![0u32; segments as usize]; s as usize];
                let mut out = Vec::new();
                for step in 0..prog.steps() {
                    for p in 0..s {
                        out.clear();
                        prog.sends(p, step, &mut out);
                        for send in &out {
                            // the parent is the child without its highest bit
                            let child = send.to;
                            let parent = child & !(1 << (31 - child.leading_zeros()));
                            assert_eq!(p, parent, "s = {s}: {p} → {child}");
                            let j = step + 1 - child.count_ones();
                            got[child as usize][j as usize] += 1;
                        }
                    }
                }
                assert!(
                    got[0].iter().all(|&n| n == 0) && got[1..].iter().flatten().all(|&n| n == 1),
                    "s = {s}, {segments} segments: {got:?}"
                );
            }
        }
        let (alpha, bw, m) = (3e-6, 1e9, 8e6);
        let spec = ClusterSpec::flat(8, bw, alpha);
        for segments in [1u32, 2, 4, 16] {
            let c = crate::collective::Collective {
                algo: crate::collective::Algo::OmpiBinomial,
                segment: (m / segments as f64) as u64,
                ..crate::collective::Collective::new(crate::collective::Op::Broadcast)
            };
            let cs = m / (segments as f64 * bw);
            let want = segments as f64 * (alpha + 3.0 * cs) + 2.0 * alpha + 3.0 * cs;
            let a = c.analytical(&spec).time(m);
            let f = crate::collective::exec::run_flow(&c, &spec, m)
                .unwrap()
                .time
                .as_secs();
            for (model, t) in [("analytical", a), ("flow", f)] {
                assert!(
                    (t - want).abs() <= 1e-9 * want,
                    "{segments} segments, {model}: {t} against {want}"
                );
            }
        }
    }

    /// A stage's group is its block of ranks alone (others send and expect
    /// nothing), in scattered placement too; a shift pairs member i of one
    /// stage with member i of the other; a stage's PS workers are its GPUs.
    #[test]
    fn a_stage_runs_alone() {
        for placement in [
            crate::cluster::Placement::Contiguous,
            crate::cluster::Placement::Scattered,
        ] {
            let mut spec = ClusterSpec::flat(3, 1e9, 0.0);
            spec.gpus_per_node = 4;
            spec.placement = placement;
            let stage = Grouping::Stage { size: 4, stage: 1 };
            let prog = Program::new(
                &spec,
                vec![Phase::Ring {
                    group: stage,
                    steps: 3,
                    chunk: 1.0,
                }],
                0,
            );
            let mut out = Vec::new();
            let members: Vec<u32> = (4..8).map(|r| spec.gpu_of_rank(r)).collect();
            for p in 0..12 {
                out.clear();
                prog.sends(p, 0, &mut out);
                if members.contains(&p) {
                    assert_eq!(out.len(), 1, "{p}");
                    assert!(members.contains(&out[0].to), "{p} → {}", out[0].to);
                } else {
                    assert!(out.is_empty(), "{p} sends though outside the stage");
                }
            }
            let prog = Program::new(
                &spec,
                vec![Phase::Shift {
                    from: stage,
                    to: 2,
                    bytes: 7.0,
                }],
                0,
            );
            for r in 4..8 {
                out.clear();
                prog.sends(spec.gpu_of_rank(r), 0, &mut out);
                assert_eq!(out.len(), 1);
                assert_eq!(out[0].to, spec.gpu_of_rank(r + 4));
                assert_eq!(out[0].bytes, 7.0);
            }
        }
    }

    /// Walks a one-phase AllGather over `s` single-GPU nodes step by step,
    /// with the parts each member holds as a bit set (s ≤ 64):
    /// `parts(step, from, to, held, fresh)` names the parts a send carries,
    /// from what every member held before the step and what each received
    /// the step before. Checks that a member sends at most one message a
    /// step, that each carries as many bytes as parts, only parts its
    /// sender holds and none its receiver has, and that every member ends
    /// with all s parts, having received each of the s − 1 others once.
    /// Returns the program.
    fn gathers_everything_once(
        s: u32,
        phase: Phase,
        mut parts: impl FnMut(u32, u32, u32, &[u64], &[u64]) -> u64,
    ) -> Program {
        let prog = Program::new(&ClusterSpec::flat(s, 1e9, 0.0), vec![phase], 0);
        let mut has: Vec<u64> = (0..s).map(|i| 1u64 << i).collect();
        let mut fresh = vec![0u64; s as usize];
        let mut recv = vec![0.0; s as usize];
        let mut out = Vec::new();
        for step in 0..prog.steps() {
            let before = has.clone();
            let mut got = vec![0u64; s as usize];
            for p in 0..s {
                out.clear();
                prog.sends(p, step, &mut out);
                assert!(out.len() <= 1, "s {s} step {step}");
                for &Send { to: d, bytes, .. } in &out {
                    let parts = parts(step, p, d, &before, &fresh);
                    assert_eq!(bytes, parts.count_ones() as f64, "s {s} step {step}");
                    assert_eq!(parts & !before[p as usize], 0, "sends what it holds");
                    assert_eq!(parts & before[d as usize], 0, "duplicate parts, s {s}");
                    got[d as usize] |= parts;
                    recv[d as usize] += bytes;
                }
            }
            for (h, g) in has.iter_mut().zip(&got) {
                *h |= g;
            }
            fresh = got;
        }
        let all = if s == 64 { u64::MAX } else { (1u64 << s) - 1 };
        assert!(has.iter().all(|&h| h == all), "s {s}");
        assert!(recv.iter().all(|&r| r == (s - 1) as f64), "s {s}");
        prog
    }

    /// Recursive doubling: each round a member sends all it holds to its
    /// partner; a group whose size is not a power of two folds its extras
    /// in first and, last, sends each only the parts it lacks; for powers
    /// of two and not.
    #[test]
    fn recursive_doubling_gathers_everything_once() {
        for s in 1..=37u32 {
            let last = |steps: u32| steps.saturating_sub(1);
            let log = if s > 1 { 31 - s.leading_zeros() } else { 0 };
            let extra = if s.is_power_of_two() { 0 } else { 2 };
            let phase = Phase::RecursiveDoubling {
                group: Grouping::All,
                bytes: 1.0,
            };
            let prog = gathers_everything_once(s, phase, |step, p, d, held, _| {
                if step == last(log + extra) && !s.is_power_of_two() {
                    // the fold-out sends only what the extra lacks
                    held[p as usize] & !held[d as usize]
                } else {
                    held[p as usize]
                }
            });
            assert_eq!(prog.steps(), log + extra, "s {s}");
        }
    }

    /// Recursive doubling's and Rabenseifner's AllReduce on 1 to 37
    /// members, walked with each member's contributions to each of the p
    /// blocks of the buffer as a bit set (p the largest power of two ≤
    /// s). Rabenseifner's sends in a halving round the half of the
    /// sender's blocks that its partner keeps (bit j of the sender's
    /// index keeps the lower or upper half), and in a doubling round all
    /// it holds; every other send is the whole buffer. Each send's bytes
    /// must be those blocks' share; a reduction (fold-in, halving, every
    /// recursive-doubling round) must never add a contribution twice, a
    /// copy (doubling, fold-out) replaces the blocks; every member ends
    /// with every contribution in every block, each member hears one
    /// message where it expects one, and with s a power of two
    /// Rabenseifner's members send 2(s−1)/s of the buffer each.
    #[test]
    fn recursive_allreduces_reduce_everything_once() {
        for halving in [false, true] {
            for s in 1..=37u32 {
                let phase = Phase::RecursiveAllReduce {
                    group: Grouping::All,
                    bytes: 1.0,
                    halving,
                };
                let prog = Program::new(&ClusterSpec::flat(s, 1e9, 0.0), vec![phase], 0);
                let (p2, log, fold) = doubling(s);
                let extras = s - p2;
                let blocks = p2 as usize;
                let rounds = log * (1 + halving as u32);
                assert_eq!(prog.steps(), rounds + 2 * fold as u32, "s {s}");
                let mut has: Vec<Vec<u64>> = (0..s).map(|i| vec![1u64 << i; blocks]).collect();
                let mut range = vec![(0usize, blocks); s as usize];
                let mut sent = vec![0.0; s as usize];
                let mut out = Vec::new();
                for step in 0..prog.steps() {
                    let round = step.checked_sub(fold as u32).filter(|&r| r < rounds);
                    let (before, before_range) = (has.clone(), range.clone());
                    let mut heard = vec![0u32; s as usize];
                    for p in 0..s {
                        out.clear();
                        prog.sends(p, step, &mut out);
                        assert!(out.len() <= 1, "s {s} step {step}");
                        let Some(send) = out.first() else { continue };
                        let (from, to) = (p as usize, send.to as usize);
                        heard[to] += 1;
                        sent[from] += send.bytes;
                        let n = exchanging(extras, p);
                        let (lo, hi, reduce) = match round {
                            Some(j) if halving && j < log => {
                                let (lo, hi) = before_range[from];
                                let mid = (lo + hi) / 2;
                                // the half the partner keeps
                                if n.expect("a survivor") >> j & 1 == 0 {
                                    (mid, hi, true)
                                } else {
                                    (lo, mid, true)
                                }
                            }
                            Some(_) if halving => {
                                (before_range[from].0, before_range[from].1, false)
                            }
                            Some(_) => (0, blocks, true),
                            // the fold-in reduces, the fold-out copies
                            None => (0, blocks, step == 0 && fold),
                        };
                        assert_eq!(
                            send.bytes,
                            (hi - lo) as f64 / blocks as f64,
                            "s {s} step {step}"
                        );
                        for b in lo..hi {
                            if reduce {
                                assert_eq!(
                                    has[to][b] & before[from][b],
                                    0,
                                    "twice, s {s} step {step}"
                                );
                                has[to][b] |= before[from][b];
                            } else {
                                has[to][b] = before[from][b];
                            }
                        }
                    }
                    for p in 0..s {
                        assert_eq!(
                            prog.expected_recvs(p, step),
                            heard[p as usize],
                            "s {s} step {step}"
                        );
                        // a survivor's blocks after the round
                        if let (Some(j), Some(n)) = (round, exchanging(extras, p)) {
                            let (lo, hi) = before_range[p as usize];
                            if halving && j < log {
                                let mid = (lo + hi) / 2;
                                range[p as usize] = if n >> j & 1 == 0 {
                                    (lo, mid)
                                } else {
                                    (mid, hi)
                                };
                            } else if halving {
                                let dist = 1u32 << (2 * log - 1 - j);
                                let partner = n ^ dist;
                                let q = if partner < extras {
                                    2 * partner + 1
                                } else {
                                    partner + extras
                                };
                                let (plo, phi) = before_range[q as usize];
                                range[p as usize] = (lo.min(plo), hi.max(phi));
                            }
                        }
                    }
                }
                let all = if s == 64 { u64::MAX } else { (1u64 << s) - 1 };
                for (p, h) in has.iter().enumerate() {
                    assert!(
                        h.iter().all(|&b| b == all),
                        "s {s} halving {halving} member {p}: {h:?}"
                    );
                }
                if halving && s.is_power_of_two() {
                    let want = 2.0 * (s - 1) as f64 / s as f64;
                    assert!(
                        sent.iter().all(|&b| (b - want).abs() < 1e-12),
                        "s {s}: {sent:?}"
                    );
                }
            }
        }
    }

    /// Neighbor exchange on an even group: step 0 swaps each pair's own
    /// parts, step 1 the pair's two parts, and each later step the two
    /// parts a member received the step before, which its other neighbour
    /// lacks; s/2 steps, every member swapping with the partner that sends
    /// back to it and hearing one message a step.
    #[test]
    fn neighbor_exchange_gathers_everything_once() {
        for s in (2..=40u32).step_by(2) {
            let phase = Phase::NeighborExchange {
                group: Grouping::All,
                bytes: 1.0,
            };
            let prog = gathers_everything_once(s, phase, |step, p, d, held, fresh| {
                assert_eq!(neighbor_of(s, d, step), p, "s {s} step {step}");
                if step <= 1 {
                    held[p as usize]
                } else {
                    fresh[p as usize]
                }
            });
            assert_eq!(prog.steps(), s / 2);
            let mut out = Vec::new();
            for step in 0..prog.steps() {
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    assert_eq!(out.len(), 1, "s {s} step {step}");
                    assert_eq!(prog.expected_recvs(p, step), 1, "s {s} step {step}");
                }
            }
        }
    }

    /// Bruck's AllGather: in step k member i holds parts i … i + 2^k − 1
    /// (mod s) and sends the first min(2^k, s − 2^k) of them to member
    /// i − 2^k; ⌈log2 s⌉ steps, each member hearing one message a step.
    #[test]
    fn bruck_gathers_everything_once() {
        for s in 1..=37u32 {
            let phase = Phase::Bruck {
                group: Grouping::All,
                bytes: 1.0,
            };
            let prog = gathers_everything_once(s, phase, |step, p, d, _, _| {
                let dist = 1u32 << step;
                assert_eq!((d + dist) % s, p, "s {s} step {step}: to i − 2^k");
                // the first parts of p's run, p, p + 1, …
                (0..dist.min(s - dist)).fold(0u64, |acc, j| acc | 1 << ((p + j) % s))
            });
            for step in 0..prog.steps() {
                for p in 0..s {
                    assert_eq!(prog.expected_recvs(p, step), 1, "s {s} step {step}");
                }
            }
            assert_eq!(prog.steps(), ceil_log2(s), "s {s}");
        }
    }

    /// The AlltoAlls deliver every block once, to its member: each member
    /// starts with a block for every member (block j of member i for
    /// member i + j, Bruck's rotation); the program's sends are replayed,
    /// Bruck's moving the blocks whose index has the step's bit set to
    /// member i + 2^k (mod s), which keeps them at their index, the
    /// linear and pairwise ones moving block j to member i + j itself.
    /// At the end member i holds, at each j, the block from member i − j
    /// for itself, and has received s − 1 blocks' bytes (pairwise and
    /// linear) or the blocks Bruck's moves, each a block a step per bit
    /// of its index. Pairwise takes s − 1 steps, linear one (in batches of
    /// 4, MPICH's scattered exchange's way, ⌈s/4⌉, the member i − d
    /// getting its block in the step of d's batch, d from 0; Open MPI's
    /// `linear_sync`'s way, ⌈(s − 1)/4⌉, d from 1), Bruck's ⌈log2 s⌉; for
    /// s = 1 … 37.
    #[test]
    fn alltoalls_deliver_every_block_once() {
        for s in 1..=37u32 {
            for phase in [
                Phase::Pairwise {
                    group: Grouping::All,
                    chunk: 1.0,
                },
                Phase::Linear {
                    group: Grouping::All,
                    chunk: 1.0,
                    batch: 0,
                    with_self: false,
                },
                Phase::Linear {
                    group: Grouping::All,
                    chunk: 1.0,
                    batch: 4,
                    with_self: true,
                },
                Phase::Linear {
                    group: Grouping::All,
                    chunk: 1.0,
                    batch: 4,
                    with_self: false,
                },
                Phase::BruckAllToAll {
                    group: Grouping::All,
                    chunk: 1.0,
                },
            ] {
                let prog = Program::new(&ClusterSpec::flat(s, 1e9, 0.0), vec![phase.clone()], 0);
                let bruck = matches!(phase, Phase::BruckAllToAll { .. });
                // at[i][j]: (source, destination) of the block member i
                // holds at index j, None once it has left
                let mut at: Vec<Vec<Option<(u32, u32)>>> = (0..s)
                    .map(|i| (0..s).map(|j| Some((i, (i + j) % s))).collect())
                    .collect();
                // the linear and pairwise ones deliver straight to the
                // destination's slot for the source
                let mut delivered = vec![vec![false; s as usize]; s as usize];
                for i in 0..s {
                    delivered[i as usize][i as usize] = true;
                }
                let mut recv = vec![0.0; s as usize];
                let mut out = Vec::new();
                for step in 0..prog.steps() {
                    let mut moves = Vec::new();
                    for p in 0..s {
                        out.clear();
                        prog.sends(p, step, &mut out);
                        for &Send { to: d, bytes, .. } in &out {
                            recv[d as usize] += bytes;
                            if bruck {
                                let bit = 1u32 << step;
                                assert_eq!(d, (p + bit) % s, "s {s} step {step}");
                                let js: Vec<u32> = (1..s).filter(|j| j & bit != 0).collect();
                                assert_eq!(bytes, js.len() as f64, "s {s} step {step}");
                                for j in js {
                                    moves.push((p, d, j));
                                }
                            } else {
                                assert_eq!(bytes, 1.0);
                                let j = (d + s - p) % s;
                                let block = at[p as usize][j as usize].take();
                                assert_eq!(block, Some((p, d)), "s {s}: sent twice");
                                assert!(!delivered[d as usize][p as usize]);
                                delivered[d as usize][p as usize] = true;
                            }
                        }
                    }
                    // a step's sends leave before its receives land
                    let taken: Vec<_> = moves
                        .iter()
                        .map(|&(p, _, j)| at[p as usize][j as usize].take())
                        .collect();
                    for (&(_, d, j), block) in moves.iter().zip(taken) {
                        at[d as usize][j as usize] = block;
                    }
                    for p in 0..s {
                        let got = prog.expected_recvs(p, step);
                        let want = match phase {
                            Phase::Linear { batch: 0, .. } => s - 1,
                            // the batch's distances d, but 0
                            Phase::Linear {
                                batch,
                                with_self: true,
                                ..
                            } => (step * batch + batch).min(s) - (step * batch).max(1),
                            // from d = 1 on
                            Phase::Linear { batch, .. } => {
                                (step * batch + batch + 1).min(s) - (step * batch + 1)
                            }
                            _ => 1,
                        };
                        assert_eq!(got, want, "s {s} step {step}");
                    }
                }
                if bruck {
                    for i in 0..s {
                        for j in 0..s {
                            let want = Some(((i + s - j) % s, i));
                            assert_eq!(at[i as usize][j as usize], want, "s {s}: {i}, {j}");
                        }
                    }
                    let each: u32 = (0..ceil_log2(s))
                        .map(|k| (1..s).filter(|j| j & (1 << k) != 0).count() as u32)
                        .sum();
                    assert!(recv.iter().all(|&r| r == each as f64), "s {s}");
                    assert_eq!(prog.steps(), ceil_log2(s));
                } else {
                    assert!(delivered.iter().flatten().all(|&d| d), "s {s}");
                    assert!(recv.iter().all(|&r| r == (s - 1) as f64), "s {s}");
                    let steps = match phase {
                        Phase::Linear { batch: 0, .. } => u32::from(s > 1),
                        Phase::Linear {
                            batch,
                            with_self: true,
                            ..
                        } if s > 1 => s.div_ceil(batch),
                        Phase::Linear { batch, .. } if s > 1 => (s - 1).div_ceil(batch),
                        Phase::Linear { .. } => 0,
                        _ => s - 1,
                    };
                    assert_eq!(prog.steps(), steps, "s {s}");
                }
            }
        }
    }

    /// NCCL's binary tree over 14 ranks, as drawn in `trees.cc`: 0 — 8,
    /// 8 → 4, 12; 4 → 2, 6; 12 → 10, 13; 10 → 9, 11; and the double tree's
    /// second tree makes every interior rank of the first a leaf (mirror
    /// for even counts, shift for odd), so no rank but the first root
    /// (one child) forwards in both.
    #[test]
    fn double_binary_trees_are_nccls() {
        let kids = |n, t, r| {
            let (_, d) = dtree(n, t, r);
            d.iter().flatten().copied().collect::<Vec<u32>>()
        };
        assert_eq!(btree(14, 0), (None, [Some(8), None]));
        assert_eq!(kids(14, 0, 8), [4, 12]);
        assert_eq!(kids(14, 0, 4), [2, 6]);
        assert_eq!(kids(14, 0, 12), [10, 13]);
        assert_eq!(kids(14, 0, 10), [9, 11]);
        assert_eq!(btree(14, 13).0, Some(12));
        assert_eq!(btree(14, 1).0, Some(2));
        // the second tree's roots: n − 1 (even), 1 (odd)
        assert_eq!(dtree(12, 1, 11).0, None);
        assert_eq!(dtree(13, 1, 1).0, None);
        for n in 2..=64u32 {
            let trees = NodeTrees::new(n);
            for t in 0..2 {
                // a tree: one root, every other rank reached from it
                let roots = trees.parent[t].iter().filter(|p| p.is_none()).count();
                assert_eq!(roots, 1, "n {n} tree {t}");
                for r in 0..n {
                    for c in trees.children[t][r as usize].iter().flatten() {
                        assert_eq!(trees.parent[t][*c as usize], Some(r), "n {n} tree {t}");
                    }
                }
                let max_depth = *trees.depth[t].iter().max().unwrap();
                assert!(
                    max_depth <= 32 - (n - 1).leading_zeros() + 1,
                    "n {n}: depth {max_depth}"
                );
            }
            if n > 2 {
                for r in 0..n {
                    let inner =
                        |t: usize| trees.children[t][r as usize].iter().any(Option::is_some);
                    // (the first tree's root, with its single child, is
                    // the one exception, for odd counts)
                    assert!(
                        !(inner(0) && inner(1)) || (r == 0 && n % 2 == 1),
                        "n {n}: rank {r} forwards in both trees"
                    );
                }
            }
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

    /// Open MPI's trees as its builders make them
    /// (`coll_base_topo.c`), on 1-70 members: every member but the root
    /// is the child of exactly one member, a level above it, and the
    /// height is the deepest member; and the examples its source draws
    /// (`build_kmtree` on 10 members, radix 2, 3, 4; `build_tree` on 7;
    /// `build_bmtree` on 8) and `build_chain`'s runs on 10 members in 4
    /// chains (9 = 3 + 2 + 2 + 2).
    #[test]
    fn open_mpis_trees_match_their_builders() {
        for tree in TREES {
            for s in 1..=70u32 {
                let mut parents = vec![0u32; s as usize];
                let mut deepest = 0;
                for idx in 0..s {
                    let d = tree.depth(s, idx);
                    deepest = deepest.max(d);
                    tree.children(s, idx, |c| {
                        parents[c as usize] += 1;
                        assert_eq!(tree.depth(s, c), d + 1, "{tree:?}, s {s}: {idx} → {c}");
                    });
                }
                assert_eq!(parents[0], 0, "{tree:?}, s {s}");
                assert!(
                    parents[1..].iter().all(|&n| n == 1),
                    "{tree:?}, s {s}: {parents:?}"
                );
                assert_eq!(tree.height(s), deepest, "{tree:?}, s {s}");
            }
        }
        let kids = |tree: BcastTree, s: u32, idx: u32| {
            let mut v = Vec::new();
            tree.children(s, idx, |c| v.push(c));
            v.sort();
            v
        };
        let k4 = BcastTree::Knomial(4);
        assert_eq!(kids(k4, 10, 0), [1, 2, 3, 4, 8]);
        assert_eq!(kids(k4, 10, 4), [5, 6, 7]);
        assert_eq!(kids(k4, 10, 8), [9]);
        let k3 = BcastTree::Knomial(3);
        assert_eq!(kids(k3, 10, 0), [1, 2, 3, 6, 9]);
        assert_eq!(kids(k3, 10, 3), [4, 5]);
        assert_eq!(kids(k3, 10, 6), [7, 8]);
        let k2 = BcastTree::Knomial(2);
        assert_eq!(kids(k2, 10, 0), [1, 2, 4, 8]);
        assert_eq!(kids(k2, 10, 4), [5, 6]);
        assert_eq!(kids(k2, 10, 6), [7]);
        assert_eq!(kids(k2, 10, 8), [9]);
        let bin = BcastTree::Kary(2);
        assert_eq!(kids(bin, 7, 0), [1, 2]);
        assert_eq!(kids(bin, 7, 1), [3, 5]);
        assert_eq!(kids(bin, 7, 2), [4, 6]);
        let bm = BcastTree::Binomial;
        assert_eq!(kids(bm, 8, 0), [1, 2, 4]);
        assert_eq!(kids(bm, 8, 1), [3, 5]);
        assert_eq!(kids(bm, 8, 2), [6]);
        assert_eq!(kids(bm, 8, 3), [7]);
        let chains = BcastTree::Chain(4);
        assert_eq!(kids(chains, 10, 0), [1, 4, 6, 8]);
        for (idx, next) in [
            (1, vec![2]),
            (2, vec![3]),
            (3, vec![]),
            (4, vec![5]),
            (5, vec![]),
        ] {
            assert_eq!(kids(chains, 10, idx), next, "chain member {idx}");
        }
        assert_eq!(kids(BcastTree::Chain(1), 5, 3), [4]);
        assert_eq!(BcastTree::Chain(1).height(5), 4);
        assert_eq!(kids(BcastTree::Flat, 5, 0), [1, 2, 3, 4]);
    }

    /// The split binary tree delivers both halves to every member: the
    /// half of its subtree once in the descent, from its parent, and the
    /// other once in the last step (1-70 members).
    #[test]
    fn split_binary_tree_delivers_both_halves() {
        for s in 1..=70u32 {
            let spec = ClusterSpec::flat(s, 1e9, 0.0);
            let phases = vec![Phase::SplitBinaryTree {
                group: Grouping::All,
                bytes: 1.0,
                segments: 1,
            }];
            check_balance(&spec, phases.clone(), 0);
            let prog = Program::new(&spec, phases, 0);
            // the half each member holds: 0 (first), 1 (second), 2 both
            let mut has = vec![None::<u8>; s as usize];
            has[0] = Some(2);
            let mut out = Vec::new();
            for step in 0..prog.steps() {
                let mut got = Vec::new();
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    for send in &out {
                        // the half the receiver's subtree carries: odd
                        // members the first, even the second
                        let half = if send.to % 2 == 1 { 0 } else { 1 };
                        let last = step + 1 == prog.steps();
                        let want = if last { 1 - half } else { half };
                        assert!(
                            has[p as usize] == Some(want) || has[p as usize] == Some(2),
                            "s {s}, step {step}: {p} sends half {want} without it"
                        );
                        got.push((send.to, want));
                    }
                }
                for (to, half) in got {
                    let h = &mut has[to as usize];
                    *h = match *h {
                        None => Some(half),
                        Some(x) if x != half => Some(2),
                        x => panic!("s {s}: {to} got half {half} again ({x:?})"),
                    };
                }
            }
            assert!(has.iter().all(|&h| h == Some(2)), "s {s}: {has:?}");
            // in 3 segments a half: a member below the root receives its
            // subtree's three segments in order, two steps apart, and
            // sends segment j only after it received it (the root holds
            // them all)
            let segments = 3;
            let prog = Program::new(
                &spec,
                vec![Phase::SplitBinaryTree {
                    group: Grouping::All,
                    bytes: 3.0,
                    segments,
                }],
                0,
            );
            let descent = prog.steps().saturating_sub(1);
            // each member's children: whom it sends to in the descent
            let mut kids = vec![std::collections::BTreeSet::new(); s as usize];
            for step in 0..descent {
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    kids[p as usize].extend(out.iter().map(|x| x.to));
                }
            }
            let mut got = vec![Vec::<u32>::new(); s as usize];
            let mut sent = vec![0u32; s as usize];
            for step in 0..descent {
                let mut arrived = Vec::new();
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    for send in &out {
                        assert_eq!(send.bytes, 1.0, "s {s}: a segment");
                        let j = sent[p as usize] / kids[p as usize].len() as u32;
                        assert!(
                            p == 0 || (got[p as usize].len() as u32) > j,
                            "s {s}, step {step}: {p} sends segment {j} before it has it"
                        );
                        arrived.push(send.to);
                    }
                    sent[p as usize] += out.len() as u32;
                }
                for to in arrived {
                    got[to as usize].push(step);
                }
            }
            for (p, steps) in got.iter().enumerate().skip(1) {
                assert_eq!(steps.len(), segments as usize, "s {s}: {p} got {steps:?}");
                assert!(
                    steps.windows(2).all(|w| w[1] == w[0] + 2),
                    "s {s}: {p} {steps:?}"
                );
            }
        }
    }

    /// Open MPI's scatter-allgather broadcast delivers every block to
    /// every member exactly once in its allgather, and every send carries
    /// blocks its sender holds (1-70 members, replayed block by block:
    /// the scatter hands member i blocks [i, i + lowbit(i)); in the
    /// allgather a member starts from its own block, swaps its group's
    /// blocks at each mask, and the halving steps pass on the partner
    /// group's).
    #[test]
    fn scatter_allgather_delivers_every_block_once() {
        for s in 1..=70u32 {
            let spec = ClusterSpec::flat(s, 1e9, 0.0);
            let phases = vec![
                Phase::BinomialScatter {
                    group: Grouping::All,
                    block: 1.0,
                },
                Phase::BcastDoubling {
                    group: Grouping::All,
                    block: 1.0,
                },
            ];
            check_balance(&spec, phases.clone(), 0);
            let prog = Program::new(&spec, phases, 0);
            let scatter = bcast::scatter_steps(s);
            let mut out = Vec::new();
            // the scatter: what each member receives
            let mut scattered = vec![0u32; s as usize];
            scattered[0] = s;
            for step in 0..scatter {
                for p in 0..s {
                    out.clear();
                    prog.sends(p, step, &mut out);
                    for send in &out {
                        let low = send.to & send.to.wrapping_neg();
                        assert_eq!(send.bytes as u32, (send.to + low).min(s) - send.to);
                        assert!(scattered[p as usize] > send.bytes as u32, "s {s}");
                        scattered[send.to as usize] = send.bytes as u32;
                    }
                }
            }
            // the allgather, block by block
            let mut holds: Vec<Vec<bool>> =
                (0..s).map(|i| (0..s).map(|b| b == i).collect()).collect();
            let mut step = scatter;
            let levels = scatter;
            for i in 0..levels {
                let m = 1u32 << i;
                for half in std::iter::once(0).chain((0..i).rev().map(|h| 1u32 << h)) {
                    let mut moves = Vec::new();
                    for p in 0..s {
                        out.clear();
                        prog.sends(p, step, &mut out);
                        let root = p & !(m - 1);
                        for send in &out {
                            // an exchange carries the sender's group, a
                            // halving step the partner group's
                            let blocks: Vec<u32> = if half == 0 {
                                (root..(root + m).min(s)).collect()
                            } else {
                                (root + m..s).collect()
                            };
                            assert_eq!(send.bytes as usize, blocks.len(), "s {s}, step {step}");
                            for &b in &blocks {
                                assert!(holds[p as usize][b as usize], "s {s}: {p} lacks {b}");
                            }
                            moves.push((send.to, blocks));
                        }
                    }
                    for (to, blocks) in moves {
                        for b in blocks {
                            let h = &mut holds[to as usize][b as usize];
                            assert!(!*h, "s {s}, step {step}: {to} got block {b} twice");
                            *h = true;
                        }
                    }
                    step += 1;
                }
            }
            assert_eq!(step, prog.steps());
            assert!(holds.iter().flatten().all(|&h| h), "s {s}");
        }
    }

    /// Open MPI's broadcasts on one link class (α, B), in both network
    /// models (1e-9: arithmetic): basic linear α + (s − 1)m/B; the
    /// pipeline (s − 1)(α + m/B); 4 chains on 9 ranks 2α + (4 + 1)m/B;
    /// the binary tree on 7 ranks 2α + (2 + 2)m/B; the 4-nomial tree on 16
    /// ranks 2α + (6 + 3)m/B (the root's children 1, 2, 3, 4, 8, 12, then
    /// 4, 8 and 12's three each); the split binary tree on 7 ranks
    /// 5(α + m/2B) (a half a step: the root's two sends, its children's
    /// two, the last grandchild's, then the swap) in the α-β model, and
    /// 5α + 6·m/2B in the flow model, which sends as soon as a rank is
    /// ready: rank 5 has its half a step before rank 6 and sends it to 6
    /// while 6 still receives its own from rank 2, the two sharing 6's
    /// link (each 2·m/2B), and 6 swaps back after (Open MPI's rendezvous
    /// over its eager limit would hold 5's send until 6 posts its
    /// receive); scatter-allgather on 8
    /// ranks 6α + 2·(7/8)m/B, each half ⌈log2 s⌉α + (s − 1)/s·m/B as
    /// Open MPI's source states; with the ring 3α + 7α + 2·(7/8)m/B.
    #[test]
    fn open_mpis_broadcasts_alpha_beta() {
        use crate::collective::{Algo, Collective, Op};
        let (alpha, bw, m) = (4e-6, 1e9, 4e6);
        let c = m / bw;
        for (algo, s, want) in [
            (Algo::Linear, 6u32, alpha + 5.0 * c),
            (Algo::Pipeline, 5, 4.0 * (alpha + c)),
            (Algo::Chain, 9, 2.0 * alpha + 5.0 * c),
            (Algo::BinaryTree, 7, 2.0 * alpha + 4.0 * c),
            (Algo::Knomial, 16, 2.0 * alpha + 9.0 * c),
            (Algo::SplitBinaryTree, 7, 5.0 * (alpha + c / 2.0)),
            (Algo::ScatterAllgather, 8, 6.0 * alpha + 1.75 * c),
            (Algo::ScatterAllgatherRing, 8, 10.0 * alpha + 1.75 * c),
        ] {
            let spec = ClusterSpec::flat(s, bw, alpha);
            let coll = Collective::new(Op::Broadcast).with_algo(algo).unwrap();
            let a = coll.analytical(&spec).time(m);
            let f = crate::collective::exec::run_flow(&coll, &spec, m)
                .unwrap()
                .time
                .as_secs();
            let eager = (algo, s) == (Algo::SplitBinaryTree, 7);
            let flow_want = if eager {
                5.0 * alpha + 6.0 * c / 2.0
            } else {
                want
            };
            for (model, t, want) in [("analytical", a, want), ("flow", f, flow_want)] {
                assert!(
                    (t - want).abs() <= 1e-9 * want,
                    "{} on {s}, {model}: {t} against {want}",
                    algo.name()
                );
            }
        }
    }

    /// Open MPI's chains and k-nomial tree of another fanout than its
    /// default 4 (`Collective::fanout`), on one link class, in both
    /// network models: the 3-nomial tree on 16 ranks 3α + (5 + 4 + 2)m/B
    /// (the root's children 1, 2, 3, 6, 9; then 9's 10, 11, 12, 15; then
    /// 12's 13, 14); 2 chains on 16 ranks (8 and 7 members) 8α + (2 +
    /// 7)m/B; 40 chains on 10 ranks, as Open MPI caps them (at 32 and at
    /// s − 1), α + 9m/B; radix 2 has the shape of Open MPI's binomial tree,
    /// numbered the other way, so its time on one link class (3α + 6m/B on
    /// 8 ranks), radix 100 on 8 ranks the root sending to all (α + 7m/B);
    /// and `ompi`'s k-nomial tree (from 64 ranks) takes the radix.
    #[test]
    fn open_mpis_chains_and_radices() {
        use crate::collective::{Algo, Collective, Op};
        let (alpha, bw, m) = (4e-6, 1e9, 4e6);
        let c = m / bw;
        for (algo, fanout, s, want) in [
            (Algo::Knomial, 3, 16u32, 3.0 * alpha + 11.0 * c),
            (Algo::Chain, 2, 16, 8.0 * alpha + 9.0 * c),
            (Algo::Chain, 40, 10, alpha + 9.0 * c),
            (Algo::Knomial, 2, 8, 3.0 * alpha + 6.0 * c),
            (Algo::Knomial, 100, 8, alpha + 7.0 * c),
            (Algo::Ompi, 2, 64, 6.0 * alpha + 21.0 * c),
        ] {
            let spec = ClusterSpec::flat(s, bw, alpha);
            let coll = Collective {
                fanout,
                ..Collective::new(Op::Broadcast).with_algo(algo).unwrap()
            };
            let a = coll.analytical(&spec).time(m);
            let f = crate::collective::exec::run_flow(&coll, &spec, m)
                .unwrap()
                .time
                .as_secs();
            for (model, t) in [("analytical", a), ("flow", f)] {
                assert!(
                    (t - want).abs() <= 1e-9 * want,
                    "{}/{fanout} on {s}, {model}: {t} against {want}",
                    algo.name()
                );
            }
        }
        // Open MPI's binomial tree takes as long on one link class
        let spec = ClusterSpec::flat(8, bw, alpha);
        let k2 = Collective {
            fanout: 2,
            ..Collective::new(Op::Broadcast)
                .with_algo(Algo::Knomial)
                .unwrap()
        };
        let bin = Collective::new(Op::Broadcast)
            .with_algo(Algo::OmpiBinomial)
            .unwrap();
        assert_eq!(k2.analytical(&spec).time(m), bin.analytical(&spec).time(m));
    }
}
