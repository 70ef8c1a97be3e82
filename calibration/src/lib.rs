//! Calibration of dtsim's cost models: parse nccl-tests and OSU logs, fit
//! α-β models per collective and size regime, write profiles that a scenario
//! names in `cluster.network`, and validate predictions against held-out
//! measurements.
#![warn(missing_docs)]

pub mod logs;
