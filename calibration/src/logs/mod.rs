//! Parsers for the benchmark logs users already have: nccl-tests and the OSU
//! micro-benchmarks.
//!
//! Calibration fits dtsim's cost models to measurements, and most clusters
//! already hold measurements in the form of `all_reduce_perf` or
//! `osu_latency` output. This module turns such a log into [`Log`]s: one per
//! collective (one per run, when a file holds several runs back to back),
//! each a list of [`Row`]s of message size and time, with the header lines
//! kept for provenance. It owns nothing else: fitting and validation read the
//! `Log`s.
//!
//! ```text
//!  log file                                     Vec<Log>
//!  ┌───────────────────────────────────┐        ┌──────────────────────────┐
//!  │ # source: ...                     │        │ tool: NcclTests          │
//!  │ 0: # Collective test starting:    │ ─────▶ │ op:   "allreduce"        │
//!  │ 0: #  size count type ... time    │ parse  │ ranks: Some(16)          │
//!  │ 0:        8    2 float ... 164.3  │        │ rows: [Row{size_bytes: 8,│
//!  │ 0:       16    4 float ... 161.4  │        │   time_s: 164.3e-6, ..}] │
//!  └───────────────────────────────────┘        └──────────────────────────┘
//! ```
//!
//! What the parsers accept, learnt from real logs (see `tests/fixtures/`):
//!
//! - **Launcher prefixes** are stripped: `0: ` (srun `--label`) and
//!   `[1,0]<stdout>:` (Open MPI `--tag-output`). Once a table has started,
//!   lines tagged with another rank, or with `<stderr>`, are skipped.
//! - **Column layouts** are read from the column-title line, never from fixed
//!   positions: nccl-tests before 2.11 printed no `root` column, no `redop`
//!   column for all_gather, an `error` column instead of `#wrong`, and an
//!   empty `redop` field in alltoall rows.
//! - **`# source:` lines** (our provenance notes) may appear anywhere; they
//!   go into every log's `header` and never count as content.
//! - Lines that are not the benchmark's, anywhere (launcher and Slurm
//!   lines, Open MPI's help aggregation, `NCCL INFO`/`WARN` lines, shell
//!   output), are skipped and kept in [`Log::skipped`]; a failure report
//!   (`Test NCCL failure`, a signal, a launcher's exit code) inside a table is an error. A table ends at its footer,
//!   a new run or column-title line, a command line naming a benchmark, or
//!   the end of the file.
//! - Without `# Rank` lines, nccl-tests' rank count is inferred from its
//!   busbw/algbw columns or its `# Avg bus bandwidth` footer
//!   ([`Log::ranks_inferred`] says how).
//!
//! Anything else fails with a [`ParseError`] that names the 1-based line and
//! quotes it: a row with a missing or extra field, a field that is not a
//! number, sizes out of order, a column-title line with no rows after it, a
//! data row outside any table, an empty file. The parsers never panic on
//! input.
//!
//! # Example
//!
//! The first rows of a real `osu_latency` log (`tests/fixtures/osu/
//! libfabric_cray_pr859_osu_latency_2node_aries.txt`):
//!
//! ```
//! use calibration::logs::{parse_osu, Tool};
//!
//! let text = concat!(
//!     "# OSU MPI Latency Test v5.0\n",
//!     "# Size          Latency (us)\n",
//!     "0                       1.84\n",
//!     "1                       1.85\n",
//! );
//! let log = parse_osu(text).unwrap();
//! assert_eq!(log.tool, Tool::Osu);
//! assert_eq!(log.op, "latency");
//! assert_eq!(log.rows.len(), 2);
//! assert_eq!(log.rows[1].size_bytes, 1);
//! assert!((log.rows[1].time_s - 1.85e-6).abs() < 1e-15);
//! assert_eq!(log.rows[1].line, 4);
//! ```

mod nccl;
mod osu;

use std::fmt;
use std::path::{Path, PathBuf};

pub use nccl::{parse_nccl_tests, parse_nccl_tests_named};
pub use osu::{parse_osu, parse_osu_named};

/// Which tool produced a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    /// NVIDIA nccl-tests (`all_reduce_perf`, `all_gather_perf`, ...).
    NcclTests,
    /// The OSU micro-benchmarks (`osu_latency`, `osu_bw`, `osu_allreduce`, ...).
    Osu,
}

impl Tool {
    /// The tool's usual name: `"nccl-tests"` or `"osu"`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::NcclTests => "nccl-tests",
            Tool::Osu => "osu",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One parsed log: one collective (op) of one tool.
///
/// A nccl-tests file with several runs back to back gives one `Log` per run;
/// a run over several data types or reduction operators (`-d all`, `-o all`)
/// gives one `Log` per type and operator, each with its own size sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    /// The tool that wrote the log.
    pub tool: Tool,
    /// The collective measured. nccl-tests: `"allreduce"`, `"allgather"`,
    /// `"reducescatter"`, `"alltoall"`, `"broadcast"`. OSU: `"latency"`
    /// (osu_latency), `"bw"` (osu_bw), `"allreduce"`, `"alltoall"`,
    /// `"allgather"`.
    pub op: String,
    /// Number of ranks, when the log says: nccl-tests counts its `# Rank N`
    /// device lines (or, without them, takes `nranks` from `NCCL INFO`
    /// lines); osu_latency and osu_bw always run on exactly 2 ranks; OSU
    /// collectives do not print their rank count, so `None`.
    pub ranks: Option<u32>,
    /// Header lines, for provenance: our `# source:` notes first, then the
    /// tool's own comment lines (`# nThread 1 nGpus 1 ...`, `# Rank 0 ...`,
    /// `# OSU MPI Latency Test v5.0`, ...) and command lines naming the
    /// benchmark, as they appear in the file.
    pub header: Vec<String>,
    /// The measurements, in file order: sizes never decrease (nccl-tests may
    /// repeat a size, see [`parse_nccl_tests`]) and strictly increase in OSU
    /// logs.
    pub rows: Vec<Row>,
    /// How `ranks` was found when the log has no rank lines: nccl-tests'
    /// busbw/algbw columns (busbw = algbw × 2(n−1)/n for AllReduce,
    /// × (n−1)/n for AllGather, ReduceScatter and AlltoAll), said with the
    /// rows that tell it; `None` when the header said, or nothing did.
    pub ranks_inferred: Option<String>,
    /// Lines the parser skipped as not the benchmark's (launcher, Slurm,
    /// Open MPI help and NCCL debug lines, other ranks' and standard
    /// error's lines), with their 1-based numbers: those before and inside
    /// this log's table (and after the file's last table, in its last log).
    pub skipped: Vec<Skipped>,
}

/// A line a parser skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// 1-based line number.
    pub line: usize,
    /// The line, as errors quote it.
    pub text: String,
}

/// Substrings (lower case) of lines that report a failed run: a table they
/// interrupt is an error, not noise.
pub(crate) const FAILURES: &[&str] = &[
    "test nccl failure",
    "test cuda failure",
    "nccl failure",
    "cuda failure",
    "unhandled cuda error",
    "unhandled system error",
    "caught signal",
    "segmentation fault",
    "bus error",
    "core dumped",
    "terminate called",
    "mpi_abort",
    "job step aborted",
    "exited with exit code",
    "killed",
    "oom-kill",
    "oom_kill",
    "out of memory",
    "received signal",
    "due to time limit",
    "due to preemption",
    "due to node failure",
    "cancelled at",
];

/// Whether `body` reports a failed run ([`FAILURES`]).
pub(crate) fn is_failure(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    FAILURES.iter().any(|f| lower.contains(f))
}

/// One measurement: one message size.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Message size in bytes, as the tool prints it (nccl-tests: the `size`
    /// column, which is the per-rank buffer for allreduce and broadcast and the
    /// gathered total for allgather, reducescatter and alltoall; OSU: the
    /// `Size` column, the per-rank message).
    pub size_bytes: u64,
    /// Seconds. nccl-tests: out-of-place time; osu_latency: one-way latency;
    /// osu_bw: size / bandwidth; OSU collectives: average latency.
    pub time_s: f64,
    /// nccl-tests in-place time in seconds, if the log has in-place columns.
    pub in_place_time_s: Option<f64>,
    /// Algorithm bandwidth in GB/s (10⁹ B/s) as printed: nccl-tests `algbw`
    /// (out-of-place); osu_bw's `Bandwidth (MB/s)` divided by 1000. `None`
    /// where the tool prints no bandwidth.
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth in GB/s as printed by nccl-tests (`busbw`, out-of-place);
    /// `None` for OSU.
    pub busbw_gbps: Option<f64>,
    /// 1-based line of this row in the file.
    pub line: usize,
}

/// Why a log could not be parsed. Every variant carries the 1-based `line`
/// that failed and its `text` (the whole line, launcher prefix included), and
/// its message says what was expected there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// The text holds no line with content.
    #[error("line {line}: the log is empty; expected nccl-tests or OSU micro-benchmark output")]
    Empty {
        /// Always 1.
        line: usize,
        /// The first line (empty or blank).
        text: String,
    },
    /// The text ends before any column-title line.
    #[error("line {line}: the log ends without a column-title line; expected {expected}: `{text}`")]
    NoTable {
        /// The last line of the text.
        line: usize,
        /// Its text.
        text: String,
        /// The column-title line this tool prints.
        expected: &'static str,
    },
    /// Neither an OSU title nor an nccl-tests column-title line was found, and
    /// the file name does not name the tool either.
    #[error(
        "line {line}: cannot tell which tool wrote this log; expected an nccl-tests column-title \
         line (`#  size  count  type ... time  algbw  busbw ...`) or an OSU title \
         (`# OSU MPI ... Test v7.x`): `{text}`"
    )]
    UnknownTool {
        /// The last line of the text.
        line: usize,
        /// Its text.
        text: String,
    },
    /// A column-title line lacks a column the parser needs.
    #[error("line {line}: column-title line {reason}: `{text}`")]
    BadColumns {
        /// The column-title line.
        line: usize,
        /// Its text.
        text: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// A column-title line with no data row after it: a truncated log, or a
    /// run that failed before its first measurement.
    #[error(
        "line {line}: no data rows follow this column-title line (truncated log or failed run?); \
         expected one row per message size: `{text}`"
    )]
    NoRows {
        /// The column-title line.
        line: usize,
        /// Its text.
        text: String,
    },
    /// A data row with fewer fields than the column-title line names.
    #[error(
        "line {line}: data row has {found} field{s} but the column titles name {expected}; \
         column `{column}` is missing (truncated row?): `{text}`",
        s = if *.found == 1 { "" } else { "s" }
    )]
    MissingColumn {
        /// The data row.
        line: usize,
        /// Its text.
        text: String,
        /// The first column with no field.
        column: String,
        /// Fields the column-title line names.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// A data row with more fields than the column-title line names.
    #[error(
        "line {line}: data row has {found} field{s} but the column titles name {expected}: `{text}`",
        s = if *.found == 1 { "" } else { "s" }
    )]
    ExtraColumn {
        /// The data row.
        line: usize,
        /// Its text.
        text: String,
        /// Fields the column-title line names.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// A field that does not hold what its column holds (a non-number, a
    /// negative time, ...).
    #[error("line {line}: column `{column}` holds `{value}`, expected {expected}: `{text}`")]
    BadValue {
        /// The data row.
        line: usize,
        /// Its text.
        text: String,
        /// The column's title.
        column: String,
        /// The offending field.
        value: String,
        /// What the column holds.
        expected: &'static str,
    },
    /// A message size out of order: smaller than the row before (nccl-tests),
    /// or not larger than it (OSU).
    #[error("line {line}: size {size} B follows size {previous} B; expected {expected}: `{text}`")]
    SizeOrder {
        /// The data row.
        line: usize,
        /// Its text.
        text: String,
        /// Its size.
        size: u64,
        /// The size of the row before.
        previous: u64,
        /// The order the tool prints sizes in.
        expected: &'static str,
    },
    /// A data row outside any table.
    #[error(
        "line {line}: data row {place}; expected a column-title line before data rows: `{text}`"
    )]
    StrayRow {
        /// The data row.
        line: usize,
        /// Its text.
        text: String,
        /// Where it is: before any column-title line, or after a table ended.
        place: &'static str,
    },
    /// The benchmark's output breaks off: a failure report inside an
    /// nccl-tests table (such as `Test NCCL failure ...`, a signal, a
    /// launcher's "exited with exit code"), or a crash report after an OSU
    /// table.
    #[error(
        "line {line}: the benchmark's output breaks off here (failed run?); expected {expected}: `{text}`"
    )]
    Interrupted {
        /// The line that breaks the table.
        line: usize,
        /// Its text.
        text: String,
        /// What should have been there.
        expected: &'static str,
    },
    /// The benchmark says its results were wrong: nccl-tests' `#wrong`
    /// count above 0 or its footer's `Out of bounds values : N FAILED`, an
    /// OSU row's `Validation` of `Fail`. Its times measure a collective
    /// that did not work.
    #[error(
        "line {line}: the benchmark reports wrong results ({what}); its times do not measure a \
         working collective: rerun it, or cut the failed run out of the log: `{text}`"
    )]
    WrongResults {
        /// The line that says so.
        line: usize,
        /// Its text.
        text: String,
        /// What it says, in words.
        what: String,
    },
    /// The collective cannot be determined from the content or the file name.
    #[error(
        "line {line}: cannot tell which collective this table measures; expected {expected} \
         (or a file name that names the collective): `{text}`"
    )]
    UnknownOp {
        /// The column-title line.
        line: usize,
        /// Its text.
        text: String,
        /// What would have named it.
        expected: &'static str,
    },
    /// A benchmark the parsers recognise but do not support.
    #[error(
        "line {line}: benchmark `{test}` is not supported; expected one of {supported}: `{text}`"
    )]
    UnsupportedTest {
        /// The line naming the benchmark.
        line: usize,
        /// Its text.
        text: String,
        /// The benchmark as named in the log.
        test: String,
        /// The supported benchmarks.
        supported: &'static str,
    },
    /// A second OSU test in a file that already had one.
    #[error(
        "line {line}: a second OSU test starts here; expected one test per file (split the file): \
         `{text}`"
    )]
    MultipleTests {
        /// The line starting the second test.
        line: usize,
        /// Its text.
        text: String,
    },
    /// The busbw/algbw columns of a table with no rank lines tell different
    /// rank counts in different rows.
    #[error(
        "line {line}: this row's busbw/algbw says {ranks} ranks, but line {other_line}'s says          {other_ranks}; expected one rank count per table (give `# Rank` lines or --ranks): `{text}`"
    )]
    RanksDisagree {
        /// The later of the two rows.
        line: usize,
        /// Its text.
        text: String,
        /// The rank count it tells.
        ranks: u32,
        /// The earlier row.
        other_line: usize,
        /// The rank count that one tells.
        other_ranks: u32,
    },
}

impl ParseError {
    /// The 1-based line that failed.
    pub fn line(&self) -> usize {
        match self {
            ParseError::Empty { line, .. }
            | ParseError::NoTable { line, .. }
            | ParseError::UnknownTool { line, .. }
            | ParseError::BadColumns { line, .. }
            | ParseError::NoRows { line, .. }
            | ParseError::MissingColumn { line, .. }
            | ParseError::ExtraColumn { line, .. }
            | ParseError::BadValue { line, .. }
            | ParseError::SizeOrder { line, .. }
            | ParseError::StrayRow { line, .. }
            | ParseError::Interrupted { line, .. }
            | ParseError::WrongResults { line, .. }
            | ParseError::UnknownOp { line, .. }
            | ParseError::UnsupportedTest { line, .. }
            | ParseError::MultipleTests { line, .. }
            | ParseError::RanksDisagree { line, .. } => *line,
        }
    }

    /// The text of the line that failed.
    pub fn text(&self) -> &str {
        match self {
            ParseError::Empty { text, .. }
            | ParseError::NoTable { text, .. }
            | ParseError::UnknownTool { text, .. }
            | ParseError::BadColumns { text, .. }
            | ParseError::NoRows { text, .. }
            | ParseError::MissingColumn { text, .. }
            | ParseError::ExtraColumn { text, .. }
            | ParseError::BadValue { text, .. }
            | ParseError::SizeOrder { text, .. }
            | ParseError::StrayRow { text, .. }
            | ParseError::Interrupted { text, .. }
            | ParseError::WrongResults { text, .. }
            | ParseError::UnknownOp { text, .. }
            | ParseError::UnsupportedTest { text, .. }
            | ParseError::MultipleTests { text, .. }
            | ParseError::RanksDisagree { text, .. } => text,
        }
    }
}

/// Why a log file could not be parsed: [`ParseError`] or an I/O error, with
/// the file's path.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    /// The file could not be read.
    #[error("{}: cannot read the log: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file was read but its content does not parse.
    #[error("{}: {source}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Which line failed and why.
        source: ParseError,
    },
}

impl LogFileError {
    /// The file that failed.
    pub fn path(&self) -> &Path {
        match self {
            LogFileError::Io { path, .. } | LogFileError::Parse { path, .. } => path,
        }
    }
}

/// Reads and parses a log file, telling the tool from its content (the file
/// name is the fallback, see [`detect_tool`]); the file name is also the
/// fallback for the collective. Bytes that are not UTF-8 are replaced, not
/// rejected: logs carry odd bytes in lines the parsers skip.
pub fn parse_file(path: &Path) -> Result<Vec<Log>, LogFileError> {
    let bytes = std::fs::read(path).map_err(|source| LogFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let name = path.file_name().map(|n| n.to_string_lossy());
    parse_text(&text, name.as_deref()).map_err(|source| LogFileError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses a log held in memory, telling the tool from its content, with
/// `file_name` (if any) as the fallback for the tool and the collective.
pub fn parse_text(text: &str, file_name: Option<&str>) -> Result<Vec<Log>, ParseError> {
    match detect_tool(text, file_name) {
        Some(Tool::NcclTests) => parse_nccl_tests_named(text, file_name),
        Some(Tool::Osu) => parse_osu_named(text, file_name).map(|log| vec![log]),
        None if text.trim().is_empty() => Err(no_table(text, "")),
        None => {
            let (line, text) = last_line(text);
            Err(ParseError::UnknownTool { line, text })
        }
    }
}

/// Tells which tool wrote `text`: an OSU title (`# OSU ... Test`) means OSU,
/// an nccl-tests column-title line (`#  size  count ... time ...`) means
/// nccl-tests, an OSU column-title line (`# Size  Latency (us)`) means OSU;
/// failing all three, a file name containing `osu` or `nccl` decides.
pub fn detect_tool(text: &str, file_name: Option<&str>) -> Option<Tool> {
    let mut osu_columns = false;
    for line in lines(text) {
        if osu::is_title(line.body) {
            return Some(Tool::Osu);
        }
        if nccl::is_column_title(line.body) {
            return Some(Tool::NcclTests);
        }
        osu_columns |= osu::is_column_title(line.body);
    }
    if osu_columns {
        return Some(Tool::Osu);
    }
    let name = file_name?.to_ascii_lowercase();
    if name.contains("osu") {
        Some(Tool::Osu)
    } else if name.contains("nccl") || name.contains("_perf") {
        Some(Tool::NcclTests)
    } else {
        None
    }
}

/// A launcher's tag on a line: srun `--label` (`0: `) or Open MPI
/// `--tag-output` (`[1,0]<stdout>:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Launcher<'a> {
    /// The rank as printed (`"0"`).
    rank: &'a str,
    /// Whether the line came from the rank's standard error.
    stderr: bool,
}

/// One line of input, its launcher prefix split off.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    /// 1-based line number.
    number: usize,
    /// The whole line, trailing whitespace removed: what errors quote.
    raw: &'a str,
    /// The launcher tag, if the line had one.
    launcher: Option<Launcher<'a>>,
    /// The line without tag, trimmed.
    body: &'a str,
}

impl Line<'_> {
    /// The line's text for an error message.
    fn text(&self) -> String {
        shown(self.raw)
    }

    /// Whether the line starts with a digit: a data row, or something garbled
    /// where a data row should be.
    fn is_data_row(&self) -> bool {
        self.body.as_bytes().first().is_some_and(u8::is_ascii_digit)
    }

    /// Whether the line is a comment (`# ...`).
    fn is_comment(&self) -> bool {
        self.body.starts_with('#')
    }

    /// Whether the line is one of our `# source:` provenance notes.
    fn is_source(&self) -> bool {
        self.body
            .strip_prefix('#')
            .is_some_and(|rest| rest.trim_start().starts_with("source:"))
    }

    /// Whether a table started by a line tagged `owner` should skip this
    /// line: it comes from another rank, or from standard error.
    fn foreign_to(&self, owner: Option<Launcher<'_>>) -> bool {
        match (self.launcher, owner) {
            (Some(mine), _) if mine.stderr => true,
            (Some(mine), Some(owner)) => mine.rank != owner.rank,
            _ => false,
        }
    }
}

/// Splits `text` into [`Line`]s, launcher tags removed (and a leading UTF-8
/// byte-order mark, which editors on Windows add).
fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines().enumerate().map(|(i, raw)| {
        let raw = raw.trim_end();
        let (launcher, body) = strip_launcher(raw);
        Line {
            number: i + 1,
            raw,
            launcher,
            body: body.trim(),
        }
    })
}

/// Removes a launcher tag: `[1,0]<stdout>:` (Open MPI `--tag-output`) or
/// `0: ` (srun `--label`, possibly right-aligned as ` 0: `).
fn strip_launcher(line: &str) -> (Option<Launcher<'_>>, &str) {
    let trimmed = line.trim_start();
    if let Some(tagged) = strip_open_mpi_tag(trimmed) {
        return tagged;
    }
    let srun = trimmed.split_once(':').filter(|(rank, body)| {
        is_digits(rank) && (body.is_empty() || body.starts_with([' ', '\t']))
    });
    if let Some((rank, body)) = srun {
        let launcher = Launcher {
            rank,
            stderr: false,
        };
        return (Some(launcher), body);
    }
    (None, line)
}

/// Removes an Open MPI `--tag-output` tag, `[job,rank]<stdout>:` or
/// `[job,rank]<stderr>:`.
fn strip_open_mpi_tag(line: &str) -> Option<(Option<Launcher<'_>>, &str)> {
    let (ids, rest) = line.strip_prefix('[')?.split_once(']')?;
    let (job, rank) = ids.split_once(',')?;
    if !is_digits(job) || !is_digits(rank) {
        return None;
    }
    let (stderr, body) = match rest.strip_prefix("<stdout>:") {
        Some(body) => (false, body),
        None => (true, rest.strip_prefix("<stderr>:")?),
    };
    Some((Some(Launcher { rank, stderr }), body))
}

/// Whether `s` is a non-empty run of ASCII digits.
fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A line of the input as an error message quotes it: control characters
/// (a binary file's, say) shown as `�`, and at most 240 characters.
fn shown(line: &str) -> String {
    const MAX: usize = 240;
    let mut out: String = line
        .chars()
        .take(MAX)
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    if line.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

/// The last line of `text` and its 1-based number (1 for empty text).
fn last_line(text: &str) -> (usize, String) {
    match text.lines().enumerate().last() {
        Some((i, line)) => (i + 1, shown(line.trim_end())),
        None => (1, String::new()),
    }
}

/// Error for input with no table: `Empty` when nothing but blank lines,
/// otherwise `NoTable` at the last line.
fn no_table(text: &str, expected: &'static str) -> ParseError {
    let (line, last) = last_line(text);
    if text.trim().is_empty() {
        ParseError::Empty {
            line: 1,
            text: shown(text.lines().next().unwrap_or("").trim_end()),
        }
    } else {
        ParseError::NoTable {
            line,
            text: last,
            expected,
        }
    }
}

/// The collective a file name names, after lower-casing and removing `_`
/// and `-`: each `(needle, op)` pair whose needle the name contains votes
/// for its op; exactly one op must win.
fn op_from_file_name(name: Option<&str>, table: &[(&str, &'static str)]) -> Option<&'static str> {
    let stem: String = name?
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect();
    let mut found: Option<&'static str> = None;
    for (needle, op) in table {
        if stem.contains(needle) {
            match found {
                Some(other) if other != *op => return None,
                _ => found = Some(op),
            }
        }
    }
    found
}

/// Parses a field as a non-negative integer.
fn field_u64(line: &Line<'_>, column: &str, value: &str) -> Result<u64, ParseError> {
    value.parse().map_err(|_| ParseError::BadValue {
        line: line.number,
        text: line.text(),
        column: column.to_string(),
        value: shown(value),
        expected: "a non-negative integer",
    })
}

/// Parses a field as a finite, non-negative number.
fn field_f64(
    line: &Line<'_>,
    column: &str,
    value: &str,
    expected: &'static str,
) -> Result<f64, ParseError> {
    match value.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(bad_value(line, column, value, expected)),
    }
}

/// A measured time (seconds) a profile can hold
/// ([`sim::profile::MAX_MEASURED_TIME_S`]), or the error naming `line`'s
/// `column` and `value`: a log whose times `dtsim calibrate` wrote into a
/// profile that dtsim then refuses to read is refused here, at its line.
fn within_profile_time(
    line: &Line<'_>,
    column: &str,
    value: &str,
    time_s: f64,
) -> Result<f64, ParseError> {
    if time_s <= sim::profile::MAX_MEASURED_TIME_S {
        Ok(time_s)
    } else {
        Err(bad_value(
            line,
            column,
            value,
            "a time of at most 1e6 s (11.6 days), the longest a profile holds",
        ))
    }
}

/// A message size dtsim simulates ([`sim::limits::MAX_BYTES`]), or the
/// error naming `line`'s `column`.
fn within_size_limit(line: &Line<'_>, column: &str, size: u64) -> Result<u64, ParseError> {
    if size <= sim::limits::MAX_BYTES {
        Ok(size)
    } else {
        Err(bad_value(
            line,
            column,
            &size.to_string(),
            "a size of at most 2^50 bytes (1 PiB), the largest dtsim simulates",
        ))
    }
}

/// A [`ParseError::BadValue`] for `value` in `column` of `line`.
fn bad_value(line: &Line<'_>, column: &str, value: &str, expected: &'static str) -> ParseError {
    ParseError::BadValue {
        line: line.number,
        text: line.text(),
        column: column.to_string(),
        value: shown(value),
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_srun_and_open_mpi_tags() {
        let (l, b) = strip_launcher("0:            8             2     float");
        assert_eq!(
            l,
            Some(Launcher {
                rank: "0",
                stderr: false
            })
        );
        assert_eq!(b.trim(), "8             2     float");
        let (l, b) = strip_launcher("[1,0]<stdout>:# Avg bus bandwidth    : 156.742");
        assert_eq!(l.map(|l| l.rank), Some("0"));
        assert_eq!(b, "# Avg bus bandwidth    : 156.742");
        let (l, _) = strip_launcher("[1,3]<stderr>: warning");
        assert!(l.is_some_and(|l| l.stderr && l.rank == "3"));
        // A data row or a comment is not a tag.
        assert_eq!(strip_launcher("1024   2.18").0, None);
        assert_eq!(strip_launcher("# Avg bus bandwidth : 1").0, None);
        assert_eq!(strip_launcher("12:30 started").0, None);
    }

    #[test]
    fn file_name_votes_must_agree() {
        let table = [("allreduce", "allreduce"), ("allgather", "allgather")];
        assert_eq!(
            op_from_file_name(Some("aws_2x_p4de_all-reduce.txt"), &table),
            Some("allreduce")
        );
        assert_eq!(
            op_from_file_name(Some("x_allgather_allreduce.txt"), &table),
            None
        );
        assert_eq!(op_from_file_name(None, &table), None);
    }
}
