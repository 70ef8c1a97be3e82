//! How a model is synchronised: the method, its parameters, and the
//! communication schedule.

use crate::collective::{Algo, Collective, Op};

/// The synchronisation method for dense gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenseMethod {
    /// AllReduce with the given algorithm (ring, tree, hierarchical,
    /// binomial, nvls, nvls-tree, sharp).
    AllReduce(Algo),
    /// Parameter servers.
    Ps,
    /// Top-k S-SGD (gTop-k paper §II-E, Eq. 6): each GPU selects the k
    /// largest-magnitude elements of its whole gradient
    /// ([`Strategy::density`] of them) and every GPU gathers every other's
    /// k values and indices (recursive-doubling AllGather).
    TopK,
    /// gTop-k S-SGD (gTop-k Alg. 3, Eq. 7): the selected sets are merged up
    /// a binomial tree, each receiver keeping the global top k, and the
    /// result broadcast.
    GTopK,
    /// DCT-DP (Gupta et al., DCT Algorithm 1): each layer's gradient
    /// masked by a threshold that is re-sorted every
    /// [`Strategy::dct_lifespan`] iterations, keeping 1 − η
    /// ([`Strategy::dct_sparsity`]); the kept values and their indices are
    /// pushed to the parameter servers, the parameters pulled back.
    Dct,
}

/// The synchronisation method for sparse (embedding) gradients
/// (`strategy.sparse`; what each sends is in `sim::train::planner::sparse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SparseMethod {
    /// Parameter servers: push the rows' gradients to the servers that own
    /// them, pull the updated rows (Parallax; with `dense = "allreduce"`,
    /// its hybrid).
    Ps,
    /// Every GPU gathers every other GPU's sparse gradient (AllGatherv;
    /// Horovod's default for sparse tensors).
    AllGather,
    /// The table's gradient treated as dense, summed by AllReduce.
    AllReduce,
    /// EmbRace: the table split by columns over the GPUs; an AlltoAll of
    /// lookup results in the forward pass and of their gradients in the
    /// backward pass.
    AllToAll,
}

impl crate::names::Named for SparseMethod {
    const ALL: &'static [SparseMethod] = &[
        SparseMethod::Ps,
        SparseMethod::AllGather,
        SparseMethod::AllReduce,
        SparseMethod::AllToAll,
    ];
    const WHAT: &'static str = "sparse method";
    fn name(self) -> &'static str {
        match self {
            SparseMethod::Ps => "ps",
            SparseMethod::AllGather => "allgather",
            SparseMethod::AllReduce => "allreduce",
            SparseMethod::AllToAll => "alltoall",
        }
    }
}

/// How many pieces each sparse variable is split into over the parameter
/// servers (`strategy.ps_partitions`; Parallax §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partitions {
    /// One per server (the default): the variable spread evenly.
    #[default]
    PerServer,
    /// A given number.
    Fixed(u32),
    /// Parallax's search: sampled, fitted, and the optimum taken
    /// (`sim::train::partitions`).
    Auto,
}

/// The communication schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// First ready, first sent (wait-free backpropagation).
    #[default]
    Fifo,
    /// The tensor the next forward pass needs first goes first; tensors are
    /// cut into `partition`-sized pieces so a long transfer can be
    /// overtaken (ByteScheduler, P3).
    Priority,
}

impl Schedule {
    /// Name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Fifo => "fifo",
            Schedule::Priority => "priority",
        }
    }
}

impl crate::names::Named for Schedule {
    const ALL: &'static [Schedule] = &[Schedule::Fifo, Schedule::Priority];
    const WHAT: &'static str = "schedule";
    fn name(self) -> &'static str {
        Schedule::name(self)
    }
}

/// A validated strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    /// Dense method.
    pub dense: DenseMethod,
    /// Schedule.
    pub schedule: Schedule,
    /// Tensor fusion buffer in bytes (0 = off).
    pub fusion: u64,
    /// Priority scheduling partition size in bytes (0 = whole tensors).
    pub partition: u64,
    /// PS: aggregate the GPUs of a machine first.
    pub local_aggregation: bool,
    /// PS: number of servers (0 = one per machine).
    pub ps_servers: u32,
    /// CPU cores of each dedicated server machine's host
    /// (`strategy.ps_machine_cores`; 0: the GPU machines' `cpu_cores`).
    pub ps_machine_cores: u32,
    /// Sparse method; `None` for a model without sparse parts.
    pub sparse: Option<SparseMethod>,
    /// Partitions of each sparse variable on the servers (sparse PS).
    pub ps_partitions: Partitions,
    /// EmbRace's vertical sparse scheduling (sparse AlltoAll): coalesced
    /// gradients, sent as prior rows (the next batch's) and delayed rows.
    pub vertical_scheduling: bool,
    /// Sparse AllGather through host memory (`strategy.allgather_staging =
    /// "host"`): each GPU's sparse gradient copied to the host before the
    /// AllGather and the gathered gradients copied back after it, as
    /// Horovod's CPU AllGather kernel makes TensorFlow do (Horovod before
    /// `HOROVOD_GPU_ALLGATHER`; Parallax's AR baseline, §6).
    pub host_staged_allgather: bool,
    /// Dense PS: each variable whole on one server, as TensorFlow places
    /// them, with TensorFlow's server CPU (`strategy.ps_placement =
    /// "whole"`, `train::planner::ps`); `false` (`"sharded"`): every
    /// variable spread evenly over the servers (MXNet's and BytePS's
    /// servers split large tensors) and no server CPU for dense variables.
    pub ps_whole_variables: bool,
    /// Top-k and gTop-k: the density ρ, k = ρ·m of the m gradient
    /// elements (`strategy.density`; default 0.001, the gTop-k paper's
    /// setting for CNNs, §IV-B).
    pub density: f64,
    /// DCT-DP: the sparsity η, the fraction of each layer's gradient left
    /// out (`strategy.dct_sparsity`; default 0.95, DCT §3.3's).
    pub dct_sparsity: f64,
    /// DCT-DP: the threshold's life-span L, the iterations between two
    /// sorts (`strategy.dct_lifespan`; default 1000, DCT §3.3's).
    pub dct_lifespan: u32,
    /// Model parallelism: the stages S of a trainer (`strategy.mp_stages`;
    /// default 1, data parallelism alone). The GPUs form GPUs / S
    /// trainers, each a chain of S stages (`train::planner::mp`).
    pub mp_stages: u32,
    /// DCT-MP: the sparsity η of the activations and their gradients
    /// between stages (`strategy.mp_sparsity`; default 0, uncompressed).
    pub mp_sparsity: f64,
    /// Model parallelism: the stages' layer ranges placed by hand, as the
    /// index of the last layer of every stage but the last, ascending
    /// (`strategy.mp_splits`, given by layer name); empty: balanced by
    /// compute (`train::planner::mp::stage_split`).
    pub mp_splits: Vec<u32>,
    /// Model parallelism: the micro-batches M a trainer's batch is cut
    /// into and pipelined through its stages, GPipe's schedule
    /// (`strategy.mp_microbatches`; default 1, no pipelining).
    pub mp_microbatches: u32,
    /// Seconds every message occupies its channel before its transfer
    /// starts: the collective's launch and the framework's bookkeeping
    /// (`strategy.message_overhead`, `sim::losses`; 0 here, a scenario's
    /// default is the typical cluster's).
    pub message_overhead_s: f64,
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy {
            dense: DenseMethod::AllReduce(Algo::Ring),
            schedule: Schedule::Fifo,
            fusion: 64 << 20,
            partition: 4 << 20,
            local_aggregation: true,
            ps_servers: 0,
            ps_machine_cores: 0,
            sparse: None,
            ps_partitions: Partitions::PerServer,
            vertical_scheduling: false,
            host_staged_allgather: false,
            ps_whole_variables: false,
            density: 0.001,
            dct_sparsity: 0.95,
            dct_lifespan: 1000,
            mp_stages: 1,
            mp_sparsity: 0.0,
            mp_microbatches: 1,
            mp_splits: Vec::new(),
            message_overhead_s: 0.0,
        }
    }
}

impl Strategy {
    /// The parameter servers on `cluster` of whichever method uses them
    /// (a dense PS, DCT-DP's, a sparse PS beside any dense method):
    /// `ps_servers`, or one a server machine.
    pub fn server_count(&self, cluster: &crate::cluster::ClusterSpec) -> u32 {
        Collective {
            ps_servers: self.ps_servers,
            ..Collective::new(Op::Ps)
        }
        .servers(cluster)
    }

    /// The collective that synchronises one dense message.
    pub fn dense_collective(&self) -> Collective {
        match self.dense {
            DenseMethod::AllReduce(algo) => Collective {
                algo,
                ..Collective::new(Op::AllReduce)
            },
            DenseMethod::Ps => Collective {
                ps_servers: self.ps_servers,
                local_aggregation: self.local_aggregation,
                ..Collective::new(Op::Ps)
            },
            DenseMethod::TopK => Collective::new(Op::TopK),
            DenseMethod::GTopK => Collective::new(Op::GTopK),
            DenseMethod::Dct => Collective {
                ps_servers: self.ps_servers,
                local_aggregation: false,
                algo: Algo::Push,
                ..Collective::new(Op::Ps)
            },
        }
    }

    /// Name of the sparse method for results ("none" without one).
    pub fn sparse_name(&self) -> &'static str {
        self.sparse.map_or("none", |m| crate::names::Named::name(m))
    }

    /// Name of the dense method for results ("allreduce", "ps", "topk",
    /// "gtopk", "dct").
    pub fn dense_name(&self) -> &'static str {
        match self.dense {
            DenseMethod::AllReduce(_) => "allreduce",
            DenseMethod::Ps => "ps",
            DenseMethod::TopK => "topk",
            DenseMethod::GTopK => "gtopk",
            DenseMethod::Dct => "dct",
        }
    }

    /// Whether the dense method sparsifies gradients (Top-k, gTop-k,
    /// DCT-DP).
    pub fn compressed(&self) -> bool {
        matches!(
            self.dense,
            DenseMethod::TopK | DenseMethod::GTopK | DenseMethod::Dct
        )
    }
}
