//! Calibration of dtsim's cost models: parse nccl-tests and OSU logs, fit
//! α-β models per collective and size regime, write profiles that a scenario
//! names in `cluster.network`, and validate predictions against held-out
//! measurements.
//!
//! This crate is a placeholder in the workspace layout of `DESIGN.md`; its
//! contents arrive with the calibration issue.
#![warn(missing_docs)]
