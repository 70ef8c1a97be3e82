//! Calibration of dtsim's cost models: parse nccl-tests and OSU logs
//! ([`logs`]), fit α-β models per operation and size regime ([`fit`]), keep
//! the results with their provenance in profiles ([`profile`]) that a
//! scenario names in `cluster.network`, and validate the simulator's
//! predictions against held-out measurements ([`validate`]). [`calibrate`]
//! holds each calibration the command line offers, whole, from a parsed
//! request to the profile to write.
#![warn(missing_docs)]

pub mod calibrate;
pub mod fit;
pub mod logs;
pub mod profile;
pub mod training;
pub mod validate;
