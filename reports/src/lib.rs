//! Reports of dtsim results.
//!
//! * [`trace`]: a training run's timeline as a Chrome trace-event file
//!   (loads in Perfetto and chrome://tracing).
//!
//! Sweeps written as tidy tables (polars: CSV, Parquet) and comparison
//! plots (plotters) arrive with the rest of the reports issue.
#![warn(missing_docs)]

pub mod plot;
pub mod sweep;
pub mod table;
pub mod trace;
