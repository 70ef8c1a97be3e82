//! Real kernels and collectives that dtsim measures to calibrate its cost
//! models: Top-k selection, threshold masking and sorting on the CPU, and
//! (behind the `cuda` and `mpi` features) CUDA kernels, NCCL and MPI
//! collectives.
//!
//! This crate is a placeholder in the workspace layout of `DESIGN.md`; its
//! contents arrive with the calibration issue.
#![warn(missing_docs)]
