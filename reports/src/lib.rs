//! Reports of dtsim results.
//!
//! * [`sweep`]: a scenario's grid evaluated in parallel, checkpointed and
//!   resumable, into a tidy table ([`table`]: CSV or Parquet through
//!   polars); shards and their merge.
//! * [`plot`]: line, grouped-bar and stacked-bar charts of tables, and
//!   Gantt pictures of timelines (plotters: PNG, SVG), one module per kind;
//!   [`columns`]: reading a table's columns, and the columns derived from
//!   them (series labels, `--where` filters, speedup over a baseline).
//! * [`labels`]: the human name of every column, one table for plots,
//!   reports and tables.
//! * [`trace`]: a training run's timeline as a Chrome trace-event file
//!   (loads in Perfetto and chrome://tracing), and the trace's names
//!   (categories, tracks) that the timeline plot reads back.
//! * [`report`]: a sweep's Markdown report with its standard plots.
//! * [`run`]: a scenario's points simulated one at a time, and the trace of
//!   a single point (`dtsim run`).
//! * [`advise`]: every way to synchronise a scenario's model on its
//!   cluster, simulated and ranked (`dtsim advise`).
#![warn(missing_docs)]

pub mod advise;
pub mod columns;
pub mod labels;
pub mod plot;
pub mod report;
pub mod run;
pub mod sweep;
pub mod table;
pub mod trace;

use std::path::Path;

/// Creates the missing directories above `path`: every output of dtsim
/// may name a directory that does not exist yet (docs/architecture.md,
/// "Exit codes and outputs").
pub fn create_parent(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p),
        _ => Ok(()),
    }
}

/// Writes `out` through a temporary file beside it (`.NAME.partial.EXT`:
/// the extension stays last, as encoders choose by it): `write` fills the
/// temporary file, which is renamed into place when it succeeds and
/// removed when it fails; missing parent directories are created. A
/// failed write (a full disk, a file-size limit) leaves neither a
/// truncated file nor a clobbered earlier one. The error
/// is the I/O or `write`'s message.
pub fn write_via_temp(
    out: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy())
        .unwrap_or_default();
    let tmp = out.with_file_name(format!(".{name}.partial.{ext}"));
    create_parent(out).map_err(|e| e.to_string())?;
    // a clean I/O message for a read-only directory
    std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
    let done = write(&tmp).and_then(|()| std::fs::rename(&tmp, out).map_err(|e| e.to_string()));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}
