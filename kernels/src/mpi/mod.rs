//! MPI collectives timed across the ranks of `mpirun` (feature `mpi`).
//!
//! dtsim's collective models need α (latency) and β (time per byte) for the
//! network a user actually has. This module measures them the way the OSU
//! micro-benchmarks and nccl-tests do, but over whatever MPI the cluster
//! provides: a ping-pong between two ranks, and AllReduce, AllGather,
//! AlltoAll and Broadcast across every rank. It owns the measurement only;
//! fitting lives in the `calibration` crate.
//!
//! The public API is the same in every build. Without the `mpi` feature,
//! [`measure`] returns [`BackendError::NotEnabled`], and that is the only
//! place such a build says so (`disabled.rs`); the real backend is in
//! `enabled.rs`.
//!
//! # Running
//!
//! Every rank runs the same program with the same arguments; rank 0 collects
//! the timings:
//!
//! ```text
//! mpirun -np 4 dtsim calibrate collectives --backend mpi -o p.toml
//! # on one machine with fewer cores than ranks, or as root (CI):
//! mpirun --allow-run-as-root --oversubscribe -np 4 target/release/examples/mpi_timings
//! ```
//!
//! Building needs the MPI headers and libclang (for the `mpi` crate's
//! bindings); on Debian or Ubuntu:
//! `apt-get install -y openmpi-bin libopenmpi-dev libclang-dev`, then
//! `cargo build --release --features mpi`.
//!
//! # What is measured
//!
//! For each operation and size: a few untimed warm-up calls and a check that
//! the result is right (a fast wrong collective fails loudly, on every rank).
//! Then the operation's sizes are timed in `repeats` rounds, one call of
//! each size a round (smallest first), each `barrier; t0 = MPI_Wtime(); op;
//! MPI_Wtime() - t0`. A repetition's time is the maximum over ranks (the
//! collective is done when its slowest rank is); the reported time is the
//! median over repetitions. Rounds rather than a size's repetitions back to
//! back, so that a slow spell of the cluster (another job, a busy core, a
//! retransmission) costs one repetition of several sizes, which the median
//! drops, instead of every repetition of one size, which it cannot. Google
//! Benchmark interleaves repetitions of different benchmarks for the same
//! reason (its "random interleaving", google/benchmark#1051, which it
//! reports lowers run-to-run variance by 40% on average); the rounds here
//! interleave in a fixed order, so that no seed is needed. An operation's
//! buffers for all its sizes are held at once: on each rank, for sizes
//! doubling to S, about twice those of S alone.
//!
//! Buffers are `f32` and sizes follow nccl-tests' meaning, rounded down to a
//! whole number of `f32` per rank (at least one), so the reported
//! `size_bytes` is what was actually moved and may differ from the size asked
//! for:
//!
//! | op          | `size_bytes` is                     | per rank                       |
//! |-------------|-------------------------------------|--------------------------------|
//! | `pingpong`  | the message, one way                | ranks 0 and 1 only             |
//! | `allreduce` | the buffer (sum of `f32`)           | whole buffer                   |
//! | `broadcast` | the buffer, from rank 0             | whole buffer                   |
//! | `allgather` | the total output                    | contributes `size / ranks`     |
//! | `alltoall`  | each rank's send buffer             | sends `size / ranks` per peer  |
//!
//! Ping-pong reports the one-way time, half a round trip, timed on rank 0,
//! with `ranks = 2`; ranks other than 0 and 1 wait at the barrier. It needs
//! at least two ranks: asking for it in a world of one is an error
//! ([`BackendError::Failed`]) rather than a silently missing row, because a
//! calibration from ping-pong alone would otherwise have nothing to fit.
//!
//! # Forcing the algorithm the simulator models
//!
//! Open MPI's `tuned` collective component picks an algorithm by message
//! size and rank count, so an unforced run mixes algorithms across sizes and
//! no single cost model fits it. For validation, force the ones dtsim
//! models (`sim::collective`: ring AllReduce and AllGather, pairwise
//! AlltoAll, binomial-tree Broadcast):
//!
//! ```text
//! mpirun --mca coll_tuned_use_dynamic_rules 1 \
//!        --mca coll_tuned_allreduce_algorithm 4 \
//!        --mca coll_tuned_allgather_algorithm 4 \
//!        --mca coll_tuned_alltoall_algorithm 2 \
//!        --mca coll_tuned_bcast_algorithm 6 \
//!        -np 4 dtsim calibrate collectives --backend mpi -o p.toml
//! ```
//!
//! | parameter                        | id | algorithm                       |
//! |----------------------------------|----|---------------------------------|
//! | `coll_tuned_allreduce_algorithm` | 4  | ring (reduce-scatter + allgather) |
//! | `coll_tuned_allgather_algorithm` | 4  | ring                            |
//! | `coll_tuned_alltoall_algorithm`  | 2  | pairwise exchange               |
//! | `coll_tuned_bcast_algorithm`     | 6  | binomial tree                   |
//!
//! The forced ids take effect only with `coll_tuned_use_dynamic_rules 1`;
//! `0` means "let Open MPI decide". The ids are the enum tables
//! `allreduce_algorithms`, `allgather_algorithms`, `alltoall_algorithms` and
//! `bcast_algorithms` in Open MPI's
//! `ompi/mca/coll/tuned/coll_tuned_{allreduce,allgather,alltoall,bcast}_decision.c`,
//! and `ompi_info --param coll tuned --level 9` prints
//! them for the installed version (checked against Debian 12's Open MPI
//! 4.1.4: allreduce 0 ignore, 1 basic_linear, 2 nonoverlapping,
//! 3 recursive_doubling, 4 ring, 5 segmented_ring, 6 rabenseifner; allgather
//! 1 linear, 2 bruck, 3 recursive_doubling, 4 ring, 5 neighbor, 6 two_proc;
//! alltoall 1 linear, 2 pairwise, 3 modified_bruck, 4 linear_sync,
//! 5 two_proc; bcast 1 basic_linear, 2 chain, 3 pipeline,
//! 4 split_binary_tree, 5 binary_tree, 6 binomial, ...). Newer releases
//! append ids (upstream adds allreduce 7 allgather_reduce) but have kept
//! these. The parameters steer `tuned` only: if `ompi_info` shows another
//! collective component with a higher priority on your installation (such
//! as `han`), exclude it (`--mca coll ^han`) so the forced algorithm is the
//! one that runs.
//!
//! # Once per process
//!
//! [`measure`] initialises MPI itself and finalises it on return; MPI cannot
//! be initialised again in the same process, so a second call (or a call in
//! a program that initialised MPI some other way) returns
//! [`BackendError::Failed`] saying so.
//!
//! # Example
//!
//! ```no_run
//! use kernels::BackendError;
//!
//! match kernels::mpi::measure(&["pingpong", "allreduce"], &[4096, 1 << 20], 10) {
//!     Ok(run) if run.rank == 0 => {
//!         for t in &run.timings {
//!             println!("{} {} {:e} {}", t.op, t.size_bytes, t.time_s, t.ranks);
//!         }
//!     }
//!     Ok(_) => {} // other ranks: timings are on rank 0
//!     Err(e @ BackendError::NotEnabled { .. }) => eprintln!("{e}"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```

use crate::{BackendError, CollectiveTiming};

#[cfg(feature = "mpi")]
mod enabled;
#[cfg(feature = "mpi")]
use enabled as backend;

#[cfg(not(feature = "mpi"))]
mod disabled;
#[cfg(not(feature = "mpi"))]
use disabled as backend;

/// The operations [`measure`] knows, by the names it accepts and reports.
pub const OPS: [&str; 5] = [
    "pingpong",
    "allreduce",
    "allgather",
    "alltoall",
    "broadcast",
];

/// What one rank saw of a [`measure`] run.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiRun {
    /// This process's rank in `MPI_COMM_WORLD`.
    pub rank: u32,
    /// Number of ranks in `MPI_COMM_WORLD`.
    pub size: u32,
    /// `MPI_Get_processor_name` of this rank (usually the host name).
    pub processor: String,
    /// The first line of `MPI_Get_library_version`: which MPI library ran
    /// ("Open MPI v4.1.6, package: …", "MPICH Version: 4.1.2").
    pub library: String,
    /// One timing per operation and size, in the order asked for, on rank 0;
    /// empty on every other rank.
    pub timings: Vec<CollectiveTiming>,
}

/// Times `ops` at each of `sizes` (bytes) across all ranks of
/// `MPI_COMM_WORLD`, `repeats` times each, and returns the medians on rank 0.
///
/// Every rank must call this with the same arguments. `ops` are names from
/// [`OPS`]; see the [module documentation](self) for what each size means,
/// how times are reduced, and how to force Open MPI's algorithm.
///
/// # Errors
///
/// * [`BackendError::NotEnabled`] in a build without the `mpi` feature.
/// * [`BackendError::Failed`] for an unknown op, `repeats == 0`, a size of
///   more than `i32::MAX` `f32` elements, `pingpong` in a world of one rank,
///   MPI already initialised in this process, or a collective whose result
///   was wrong. Every rank returns the same error, so none is left waiting.
///
/// An MPI error inside a call aborts the job (`MPI_ERRORS_ARE_FATAL`, MPI's
/// default), as `mpirun` expects.
pub fn measure(ops: &[&str], sizes: &[u64], repeats: u32) -> Result<MpiRun, BackendError> {
    let ops = parse_ops(ops)?;
    if repeats == 0 {
        return Err(BackendError::Failed(
            "MPI timing needs at least one repeat (got 0)".into(),
        ));
    }
    if let Some(&big) = sizes.iter().find(|&&s| s / 4 > i32::MAX as u64) {
        return Err(BackendError::Failed(format!(
            "MPI message of {big} bytes is too large: MPI counts are 32-bit, \
             at most {} f32 elements",
            i32::MAX
        )));
    }
    backend::measure(&ops, sizes, repeats)
}

/// Whether this build has the MPI backend (the `mpi` feature).
pub fn is_enabled() -> bool {
    cfg!(feature = "mpi")
}

/// An operation [`measure`] can time; parsed from its name once, so the
/// backends match on a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    PingPong,
    AllReduce,
    AllGather,
    AllToAll,
    Broadcast,
}

impl Op {
    /// The name [`measure`] accepts and reports, one of [`OPS`].
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn name(self) -> &'static str {
        match self {
            Op::PingPong => OPS[0],
            Op::AllReduce => OPS[1],
            Op::AllGather => OPS[2],
            Op::AllToAll => OPS[3],
            Op::Broadcast => OPS[4],
        }
    }
}

/// Parses op names, rejecting unknown ones with the list of known ones.
fn parse_ops(ops: &[&str]) -> Result<Vec<Op>, BackendError> {
    ops.iter()
        .map(|&name| match name {
            "pingpong" => Ok(Op::PingPong),
            "allreduce" => Ok(Op::AllReduce),
            "allgather" => Ok(Op::AllGather),
            "alltoall" => Ok(Op::AllToAll),
            "broadcast" => Ok(Op::Broadcast),
            other => Err(BackendError::Failed(format!(
                "unknown MPI operation `{other}`; expected one of {}",
                OPS.join(", ")
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_in_ops_parses_back_to_itself() {
        let parsed = parse_ops(&OPS).unwrap();
        let names: Vec<_> = parsed.iter().map(|op| op.name()).collect();
        assert_eq!(names, OPS);
    }

    #[test]
    fn unknown_op_is_rejected_before_mpi_starts() {
        let err = measure(&["allreduce", "reducescatter"], &[4096], 1).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`reducescatter`"), "{msg}");
        assert!(msg.contains("pingpong, allreduce"), "{msg}");
    }

    #[test]
    fn zero_repeats_and_huge_sizes_are_rejected() {
        assert!(matches!(
            measure(&["allreduce"], &[4096], 0),
            Err(BackendError::Failed(_))
        ));
        assert!(matches!(
            measure(&["allreduce"], &[u64::MAX], 1),
            Err(BackendError::Failed(_))
        ));
    }

    #[cfg(not(feature = "mpi"))]
    #[test]
    fn without_the_feature_measure_says_so() {
        assert!(!is_enabled());
        assert_eq!(
            measure(&["allreduce"], &[4096], 1),
            Err(BackendError::NotEnabled { feature: "mpi" })
        );
    }
}
