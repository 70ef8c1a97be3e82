//! Reports of dtsim results.
//!
//! * [`sweep`]: a scenario's grid evaluated in parallel, checkpointed and
//!   resumable, into a tidy table ([`table`]: CSV or Parquet through
//!   polars); shards and their merge.
//! * [`plot`]: line, grouped-bar and stacked-bar charts of tables, and
//!   Gantt pictures of timelines (plotters: PNG, SVG); [`derive`](mod@derive): the
//!   derived columns they use (series labels, speedup over a baseline).
//! * [`trace`]: a training run's timeline as a Chrome trace-event file
//!   (loads in Perfetto and chrome://tracing).
//! * [`report`]: a sweep's Markdown report with its standard plots.
#![warn(missing_docs)]

pub mod derive;
pub mod plot;
pub mod report;
pub mod sweep;
pub mod table;
pub mod trace;
