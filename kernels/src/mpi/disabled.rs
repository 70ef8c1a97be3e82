//! Stand-in for the MPI backend in a build without the `mpi` feature: the one
//! place that says it is not enabled in this build.

use super::{MpiRun, Op};
use crate::BackendError;

/// Always [`BackendError::NotEnabled`]; its message says how to rebuild.
pub(super) fn measure(_ops: &[Op], _sizes: &[u64], _repeats: u32) -> Result<MpiRun, BackendError> {
    Err(BackendError::NotEnabled { feature: "mpi" })
}
