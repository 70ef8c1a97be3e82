//! Calibration of dtsim's cost models: parse nccl-tests and OSU logs
//! ([`logs`]), fit α-β models per operation and size regime ([`fit`]), keep
//! the results with their provenance in profiles ([`profile`]) that a
//! scenario names in `cluster.network`, and validate the simulator's
//! predictions against held-out measurements ([`validate`]).
#![warn(missing_docs)]

pub mod fit;
pub mod logs;
pub mod profile;
pub mod validate;
