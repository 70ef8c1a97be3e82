//! Real kernels and collectives that dtsim measures to calibrate its cost
//! models.
//!
//! * [`cpu`]: exact Top-k selection, threshold by sorting (DCT-DP), and
//!   threshold masking, with simple reference implementations to check
//!   against. Always built.
//! * [`timing`]: the timing harness (warm-up, repeats, median and spread).
//! * [`cuda`]: CUDA kernels and NCCL collectives (feature `cuda`; loads the
//!   CUDA libraries at run time and reports a clear error where there are
//!   none).
//! * [`mpi`]: MPI collectives across the ranks of `mpirun` (feature `mpi`).
#![warn(missing_docs)]

pub mod cpu;
pub mod cuda;
pub mod launcher;
pub mod mpi;
pub mod timing;

/// One measured collective: the operation, its size and its time.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveTiming {
    /// Operation: "allreduce", "allgather", "reducescatter", "broadcast",
    /// "alltoall", or "pingpong" (one-way time of a ping-pong).
    pub op: String,
    /// Message size in bytes, with nccl-tests' meaning for each op.
    pub size_bytes: u64,
    /// Median time in seconds (for MPI: the maximum over ranks of each
    /// repeat, then the median over repeats).
    pub time_s: f64,
    /// Ranks that took part.
    pub ranks: u32,
}

/// Why a measurement backend cannot run here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// The backend was not compiled into this build.
    #[error(
        "the `{feature}` backend is not enabled in this build; rebuild with `cargo build --release --features {feature}`"
    )]
    NotEnabled {
        /// Cargo feature name.
        feature: &'static str,
    },
    /// A library or device the backend needs is missing.
    #[error("{0}")]
    Unavailable(String),
    /// The backend ran and failed.
    #[error("{0}")]
    Failed(String),
}
