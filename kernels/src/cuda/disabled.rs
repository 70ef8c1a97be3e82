//! The build without the `cuda` feature: the same functions as `enabled.rs`,
//! each returning [`BackendError::NotEnabled`], whose message says how to
//! rebuild with the feature. This is the one place that says so.

use super::DeviceInfo;
use crate::timing::KernelTiming;
use crate::{BackendError, CollectiveTiming};

/// The error every function here returns.
fn not_enabled<T>() -> Result<T, BackendError> {
    Err(BackendError::NotEnabled { feature: "cuda" })
}

/// The CUDA devices of this machine. Not in this build.
///
/// # Errors
/// Always [`BackendError::NotEnabled`]: rebuild with `--features cuda`.
pub fn devices() -> Result<Vec<DeviceInfo>, BackendError> {
    not_enabled()
}

/// The versions of the CUDA libraries. Not in this build: none.
pub fn library_versions() -> Vec<String> {
    Vec::new()
}

/// Times the GPU compression kernels. Not in this build.
///
/// # Errors
/// Always [`BackendError::NotEnabled`]: rebuild with `--features cuda`.
pub fn time_kernels(
    _sizes: &[usize],
    _densities: &[f64],
    _repeats: u32,
) -> Result<Vec<KernelTiming>, BackendError> {
    not_enabled()
}

/// Device memory bandwidth in bytes per second. Not in this build.
///
/// # Errors
/// Always [`BackendError::NotEnabled`]: rebuild with `--features cuda`.
pub fn memory_bandwidth() -> Result<f64, BackendError> {
    not_enabled()
}

/// Times NCCL collectives across the GPUs of this machine. Not in this
/// build.
///
/// # Errors
/// Always [`BackendError::NotEnabled`]: rebuild with `--features cuda`.
pub fn time_collectives(
    _ops: &[&str],
    _sizes: &[u64],
    _repeats: u32,
) -> Result<Vec<CollectiveTiming>, BackendError> {
    not_enabled()
}

/// Times NCCL collectives across the ranks of an MPI job. Not in this
/// build (it has `mpi` but not `cuda`).
///
/// # Errors
/// Always [`BackendError::NotEnabled`]: rebuild with `--features cuda,mpi`.
#[cfg(feature = "mpi")]
pub fn time_collectives_mpi(
    _world: &::mpi::topology::SimpleCommunicator,
    _ops: &[&str],
    _sizes: &[u64],
    _repeats: u32,
) -> Result<Vec<CollectiveTiming>, BackendError> {
    not_enabled()
}
