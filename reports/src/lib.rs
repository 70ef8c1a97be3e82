//! Reports of dtsim results: sweeps written as tidy tables (polars: CSV,
//! Parquet), comparison plots (plotters: PNG, SVG) and timelines.
//!
//! This crate is a placeholder in the workspace layout of `DESIGN.md`; its
//! contents arrive with the reports issue.
#![warn(missing_docs)]
