//! nccl-tests output: `all_reduce_perf`, `all_gather_perf`,
//! `reduce_scatter_perf`, `alltoall_perf`, `broadcast_perf`.
//!
//! A run prints header comments (`# nThread ...`, `# Rank N ...`), a
//! column-title line, a units line, one row per size, and a footer
//! (`# Out of bounds values ...`, `# Avg bus bandwidth ...`). The column
//! titles differ between versions, so each row is read against its own
//! table's titles:
//!
//! ```text
//! 2.11+   size count type redop root time algbw busbw #wrong time algbw busbw #wrong
//! older   size count type redop      time algbw busbw error  time algbw busbw error
//!         size count type            time algbw busbw error  ...   (all_gather)
//!         size count type       root time algbw busbw error  ...   (broadcast)
//! ```
//!
//! The first `time algbw busbw` group is out-of-place, the second in-place.
//! Old alltoall rows leave the `redop` field empty, so a row one field short
//! whose `redop` position holds a number is read with an empty `redop`.

use std::collections::BTreeSet;

use super::{
    Launcher, Line, Log, ParseError, Row, Skipped, Tool, field_f64, field_u64, is_failure, lines,
    no_table, op_from_file_name, within_profile_time, within_size_limit,
};

/// The benchmarks this parser supports, for error messages.
const SUPPORTED: &str =
    "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf";

/// The column-title line, for error messages.
const COLUMN_TITLE: &str =
    "an nccl-tests column-title line (`#  size  count  type  redop  root  time  algbw  busbw ...`)";

/// File-name fragments (lower case, `_` and `-` removed) naming a collective.
const FILE_NAMES: &[(&str, &str)] = &[
    ("allreduce", "allreduce"),
    ("allgather", "allgather"),
    ("reducescatter", "reducescatter"),
    ("alltoall", "alltoall"),
    ("broadcast", "broadcast"),
    ("bcast", "broadcast"),
];

/// Parses nccl-tests output. A file may hold several runs back to back; each
/// gives one [`Log`] (one per data type and operator when a run sweeps
/// several, as with `-d all`).
///
/// The collective comes from the `# Collective test starting: ...` line, or
/// else from the last line before the table that names a benchmark binary (a
/// shell command line, an `echo`); see [`parse_nccl_tests_named`] to fall
/// back on a file name.
///
/// Sizes must not decrease within a run. They may repeat: nccl-tests rounds
/// each size down to a multiple of ranks × element size, so small sizes
/// print as several `0` rows (see `tests/fixtures/nccl-tests/autodl_*`).
pub fn parse_nccl_tests(text: &str) -> Result<Vec<Log>, ParseError> {
    parse_nccl_tests_named(text, None)
}

/// Like [`parse_nccl_tests`], falling back on `file_name` for the collective
/// when the log itself does not say (`..._allreduce.txt`; one collective must
/// be named, `bcast` counts as broadcast).
pub fn parse_nccl_tests_named(text: &str, file_name: Option<&str>) -> Result<Vec<Log>, ParseError> {
    let sources: Vec<String> = lines(text)
        .filter(Line::is_source)
        .map(|l| l.body.to_string())
        .collect();
    let mut parser = Parser {
        file_name,
        sources,
        pending: Pending::default(),
        table: None,
        tables_seen: false,
        logs: Vec::new(),
        skipped: Vec::new(),
        last_table: 0,
    };
    for line in lines(text) {
        parser.line(line)?;
    }
    parser.finish_table()?;
    if parser.logs.is_empty() {
        return Err(no_table(text, COLUMN_TITLE));
    }
    // lines after the last table go to the last log
    if let Some(last) = parser.logs.last_mut() {
        last.skipped.append(&mut parser.skipped);
    }
    Ok(parser.logs)
}

/// Whether `body` is an nccl-tests column-title line: a comment whose first
/// word is `size` and which has a `time` column.
pub(super) fn is_column_title(body: &str) -> bool {
    let Some(rest) = body.strip_prefix('#') else {
        return false;
    };
    rest.split_whitespace().next() == Some("size") && rest.split_whitespace().any(|t| t == "time")
}

/// A benchmark binary named in the log.
#[derive(Debug, Clone, PartialEq)]
enum Binary {
    /// One of ours, with its op.
    Supported(&'static str),
    /// Another nccl-tests binary (`reduce_perf`, `sendrecv_perf`, ...).
    Unsupported(String),
}

/// The benchmark `token` names, if it names one: its last path component,
/// stripped of punctuation, is `<collective>_perf` or `<collective>_perf_mpi`.
fn binary(token: &str) -> Option<Binary> {
    let base = token.rsplit('/').next().unwrap_or(token);
    let base = base.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let stem = base.strip_suffix("_mpi").unwrap_or(base);
    let name = stem.strip_suffix("_perf")?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
        return None;
    }
    Some(match name {
        "all_reduce" => Binary::Supported("allreduce"),
        "all_gather" => Binary::Supported("allgather"),
        "reduce_scatter" => Binary::Supported("reducescatter"),
        "alltoall" => Binary::Supported("alltoall"),
        "broadcast" => Binary::Supported("broadcast"),
        _ => Binary::Unsupported(base.to_string()),
    })
}

/// The last benchmark binary a line names.
fn binary_in(body: &str) -> Option<Binary> {
    body.split_whitespace().filter_map(binary).next_back()
}

/// Lines that are neither table nor header: NCCL's own debug output.
fn is_noise(body: &str) -> bool {
    ["NCCL INFO", "NCCL WARN", "NCCL TRACE", "NCCL version"]
        .iter()
        .any(|n| body.contains(n))
}

/// Footer comments that end a table.
fn is_footer(body: &str) -> bool {
    let rest = body.trim_start_matches('#').trim_start();
    [
        "Out of bounds values",
        "Avg bus bandwidth",
        "Collective test concluded",
    ]
    .iter()
    .any(|f| rest.starts_with(f))
}

/// The count of nccl-tests' `# Out of bounds values : N OK|FAILED` footer.
fn out_of_bounds(body: &str) -> Option<u64> {
    let rest = body.trim_start_matches('#').trim_start();
    let rest = rest.strip_prefix("Out of bounds values")?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    rest.split_whitespace().next()?.parse().ok()
}

/// Comments that start a new run's header.
fn starts_run(body: &str) -> bool {
    let rest = body.trim_start_matches('#').trim_start();
    [
        "nThread ",
        "Collective test starting",
        "nccl-tests version",
        "rccl-tests version",
    ]
    .iter()
    .any(|f| rest.starts_with(f))
}

/// What the lines since the last table say about the next one.
#[derive(Debug, Default)]
struct Pending {
    /// Header comments and command lines, in order.
    header: Vec<String>,
    /// The `# Collective test starting:` benchmark, with its line.
    starting: Option<(Binary, usize, String)>,
    /// The last benchmark named elsewhere, with its line.
    mentioned: Option<(Binary, usize, String)>,
    /// Ranks listed by `# Rank N ...` device lines.
    ranks: BTreeSet<u32>,
    /// `nranks N` from `NCCL INFO` lines.
    nranks: Option<u32>,
}

impl Pending {
    /// Records a comment line outside a table.
    fn comment(&mut self, line: &Line<'_>) {
        let rest = line.body.trim_start_matches('#').trim();
        if rest.is_empty() || is_footer(line.body) {
            return;
        }
        if let Some(name) = rest.strip_prefix("Collective test starting:") {
            if let Some(b) = binary(name.trim()) {
                self.starting = Some((b, line.number, line.text()));
            }
        } else if let Some(b) = binary_in(rest) {
            self.mentioned = Some((b, line.number, line.text()));
        }
        let mut words = rest.split_whitespace();
        if let (Some("Rank"), Some(rank)) = (words.next(), words.next()) {
            self.ranks.extend(rank.parse::<u32>().ok());
        }
        self.header.push(line.body.to_string());
    }

    /// Records a non-comment line outside a table: kept if it names a
    /// benchmark (a command line); whether it was kept.
    fn other(&mut self, line: &Line<'_>) -> bool {
        match binary_in(line.body) {
            Some(b) => {
                self.mentioned = Some((b, line.number, line.text()));
                self.header.push(line.body.to_string());
                true
            }
            None => false,
        }
    }

    /// Records `nranks N` from an NCCL debug line.
    fn noise(&mut self, body: &str) {
        let words: Vec<&str> = body.split_whitespace().collect();
        let nranks = words.windows(2).filter_map(|pair| match pair {
            ["nranks", n] => n.parse::<u32>().ok(),
            _ => None,
        });
        self.nranks = self.nranks.into_iter().chain(nranks).max();
    }
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Bytes.
    Size,
    /// Elements.
    Count,
    /// Data type.
    Type,
    /// Reduction operator (`sum`, `none`, or empty in old alltoall rows).
    Redop,
    /// Root rank, `-1` if none.
    Root,
    /// Time, in the units line's unit.
    Time,
    /// Algorithm bandwidth, GB/s.
    Algbw,
    /// Bus bandwidth, GB/s.
    Busbw,
    /// Count of wrong elements, or `N/A`.
    Wrong,
    /// Old versions' maximum relative error, or `N/A`.
    Error,
    /// A column this parser does not know: kept unread.
    Other,
}

/// One column of a table.
#[derive(Debug, Clone)]
struct Column {
    /// Its title.
    name: String,
    /// What it holds.
    kind: Kind,
    /// 0 before the first `time`, 1 out-of-place, 2 in-place.
    group: u8,
}

/// The table being read.
#[derive(Debug)]
struct Table<'a> {
    /// Its columns.
    columns: Vec<Column>,
    /// Index of the `redop` column.
    redop: Option<usize>,
    /// The column-title line's number and text.
    title: (usize, String),
    /// The launcher tag of the column-title line: lines from other ranks are
    /// skipped.
    launcher: Option<Launcher<'a>>,
    /// The collective.
    op: &'static str,
    /// Ranks, if known.
    ranks: Option<u32>,
    /// Header lines.
    header: Vec<String>,
    /// Seconds per unit of the time columns.
    time_scale: f64,
    /// Rows, split where type, redop or root change.
    segments: Vec<Segment>,
}

/// Rows of one data type, operator and root.
#[derive(Debug)]
struct Segment {
    /// Type, redop and root as printed.
    key: [String; 3],
    /// The rows.
    rows: Vec<Row>,
}

/// The line-by-line state.
struct Parser<'a, 'n> {
    /// Fallback for the collective.
    file_name: Option<&'n str>,
    /// `# source:` lines, for every log's header.
    sources: Vec<String>,
    /// What the lines since the last table said.
    pending: Pending,
    /// The open table.
    table: Option<Table<'a>>,
    /// Whether a table was seen.
    tables_seen: bool,
    /// Finished logs.
    logs: Vec<Log>,
    /// Lines skipped since the last table ended.
    skipped: Vec<Skipped>,
    /// Index in `logs` of the last table's first log.
    last_table: usize,
}

impl<'a> Parser<'a, '_> {
    /// Records a line as skipped.
    fn skip(&mut self, line: &Line<'_>) {
        self.skipped.push(Skipped {
            line: line.number,
            text: line.text(),
        });
    }

    /// Reads one line.
    fn line(&mut self, line: Line<'a>) -> Result<(), ParseError> {
        if line.body.is_empty() || line.is_source() {
            return Ok(());
        }
        if self
            .table
            .as_ref()
            .is_some_and(|t| line.foreign_to(t.launcher))
        {
            self.skip(&line);
            return Ok(());
        }
        if is_noise(line.body) {
            self.pending.noise(line.body);
            self.skip(&line);
            return Ok(());
        }
        if line.is_comment() {
            return self.comment(line);
        }
        if line.is_data_row() {
            let place = if self.tables_seen {
                "after the end of a table and before the next column-title line"
            } else {
                "before any column-title line"
            };
            return match &mut self.table {
                Some(table) => table.row(&line),
                None => Err(ParseError::StrayRow {
                    line: line.number,
                    text: line.text(),
                    place,
                }),
            };
        }
        if self.table.is_some() {
            if binary_in(line.body).is_none() {
                // a failure report breaks the run off; any other line
                // (launcher, Slurm, Open MPI's help aggregation) is noise
                if is_failure(line.body) {
                    return Err(ParseError::Interrupted {
                        line: line.number,
                        text: line.text(),
                        expected: "a data row or the `# Out of bounds values` footer",
                    });
                }
                self.skip(&line);
                return Ok(());
            }
            self.finish_table()?;
        }
        if !self.pending.other(&line) {
            self.skip(&line);
        }
        Ok(())
    }

    /// Reads a comment line.
    fn comment(&mut self, line: Line<'a>) -> Result<(), ParseError> {
        if is_column_title(line.body) {
            self.finish_table()?;
            self.start_table(&line)?;
            return Ok(());
        }
        if let Some(avg) = avg_busbw(line.body) {
            // the footer after the table's rows (the table ended at `# Out
            // of bounds values`): it tells the ranks where the rows could not
            self.finish_table()?;
            self.footer_ranks(avg);
            return Ok(());
        }
        let Some(table) = &mut self.table else {
            self.pending.comment(&line);
            return Ok(());
        };
        if is_footer(line.body) {
            if let Some(n) = out_of_bounds(line.body).filter(|&n| n > 0) {
                return Err(ParseError::WrongResults {
                    line: line.number,
                    text: line.text(),
                    what: format!("{n} values out of bounds"),
                });
            }
            return self.finish_table();
        }
        if starts_run(line.body) {
            self.finish_table()?;
            self.pending.comment(&line);
            return Ok(());
        }
        if table.segments.is_empty() && table.units(line.body) {
            return Ok(());
        }
        if !line.body.trim_start_matches('#').trim().is_empty() {
            self.skip(&line);
        }
        Ok(())
    }

    /// Opens a table at its column-title line.
    fn start_table(&mut self, line: &Line<'a>) -> Result<(), ParseError> {
        let columns = columns(line)?;
        let pending = std::mem::take(&mut self.pending);
        let named = pending.starting.clone().or(pending.mentioned.clone());
        let op = match named {
            Some((Binary::Supported(op), _, _)) => op,
            Some((Binary::Unsupported(test), number, text)) => {
                return Err(ParseError::UnsupportedTest {
                    line: number,
                    text,
                    test,
                    supported: SUPPORTED,
                });
            }
            None => op_from_file_name(self.file_name, FILE_NAMES).ok_or_else(|| {
                ParseError::UnknownOp {
                    line: line.number,
                    text: line.text(),
                    expected: "a `# Collective test starting: <benchmark>` line or a command \
                               line naming the benchmark (`all_reduce_perf`, ...) before the table",
                }
            })?,
        };
        let ranks = if pending.ranks.is_empty() {
            pending.nranks
        } else {
            u32::try_from(pending.ranks.len()).ok()
        };
        let mut header = self.sources.clone();
        header.extend(pending.header);
        self.tables_seen = true;
        self.table = Some(Table {
            redop: columns.iter().position(|c| c.kind == Kind::Redop),
            columns,
            title: (line.number, line.text()),
            launcher: line.launcher,
            op,
            ranks,
            header,
            time_scale: 1e-6,
            segments: Vec::new(),
        });
        Ok(())
    }

    /// Closes the open table, if any, into logs.
    fn finish_table(&mut self) -> Result<(), ParseError> {
        let Some(table) = self.table.take() else {
            return Ok(());
        };
        if table.segments.is_empty() {
            return Err(ParseError::NoRows {
                line: table.title.0,
                text: table.title.1,
            });
        }
        let split = table.segments.len() > 1;
        self.last_table = self.logs.len();
        let mut skipped = std::mem::take(&mut self.skipped);
        for segment in table.segments {
            let mut header = table.header.clone();
            if split {
                let [ty, redop, root] = &segment.key;
                header.push(format!(
                    "rows with type {ty}, redop {redop}, root {root} (one table split by type/redop/root)"
                ));
            }
            let (ranks, ranks_inferred) = match table.ranks {
                Some(r) => (Some(r), None),
                None => match infer_ranks(table.op, &segment.rows)? {
                    Some((r, how)) => (Some(r), Some(how)),
                    None => (None, None),
                },
            };
            self.logs.push(Log {
                tool: Tool::NcclTests,
                op: table.op.to_string(),
                ranks,
                header,
                rows: segment.rows,
                ranks_inferred,
                // the table's own skipped lines go with its first log
                skipped: std::mem::take(&mut skipped),
            });
        }
        Ok(())
    }
}

impl Parser<'_, '_> {
    /// The last table's ranks from its footer's average bus bandwidth,
    /// where its rows could not tell them ([`footer_ranks`]).
    fn footer_ranks(&mut self, avg: f64) {
        let logs = &mut self.logs[self.last_table..];
        if let [log] = logs
            && log.ranks.is_none()
            && let Some((n, how)) = footer_ranks(&log.op, &log.rows, avg)
        {
            log.ranks = Some(n);
            log.ranks_inferred = Some(how);
        }
    }
}

/// The value of an `# Avg bus bandwidth    : 0.507636` footer.
fn avg_busbw(body: &str) -> Option<f64> {
    let rest = body.trim_start_matches('#').trim_start();
    let value = rest.strip_prefix("Avg bus bandwidth")?.trim_start();
    let value = value.strip_prefix(':')?.split_whitespace().next()?;
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The ranks a table's footer tells: nccl-tests averages busbw over every
/// row, out-of-place and in-place, and prints the mean with six decimals;
/// algbw is size / time, and the times are printed to a few parts in
/// 10⁴. So the mean busbw over the mean algbw is the bus factor to about
/// that precision: accepted when it lands within 0.2 of a whole n.
fn footer_ranks(op: &str, rows: &[Row], avg: f64) -> Option<(u32, String)> {
    ranks_from_factor(op, 0.0)?;
    let mut algbw = Vec::new();
    for r in rows {
        for t in [Some(r.time_s), r.in_place_time_s].into_iter().flatten() {
            if t > 0.0 {
                algbw.push(r.size_bytes as f64 / t / 1e9);
            }
        }
    }
    if algbw.is_empty() {
        return None;
    }
    let f = avg / (algbw.iter().sum::<f64>() / algbw.len() as f64);
    let n = ranks_from_factor(op, f).filter(|n| n.is_finite())?;
    let whole = n.round();
    ((n - whole).abs() <= 0.2 && (1.0..=f64::from(MAX_INFERRED_RANKS)).contains(&whole)).then(|| {
        (
            whole as u32,
            format!(
                "{whole} ranks inferred from the footer's average bus bandwidth ({avg} GB/s) over the rows' mean algbw (size/time, {} values): {n:.2}; the log has no `# Rank` lines and its rows' busbw/algbw do not tell",
                algbw.len()
            ),
        )
    })
}

/// Reads the columns of a column-title line.
fn columns(line: &Line<'_>) -> Result<Vec<Column>, ParseError> {
    let titles = line.body.trim_start_matches('#');
    let mut group = 0u8;
    let mut columns = Vec::new();
    for name in titles.split_whitespace() {
        let kind = match name {
            "size" => Kind::Size,
            "count" => Kind::Count,
            "type" => Kind::Type,
            "redop" | "op" => Kind::Redop,
            "root" => Kind::Root,
            "time" => {
                group = group.saturating_add(1);
                Kind::Time
            }
            "algbw" => Kind::Algbw,
            "busbw" => Kind::Busbw,
            "#wrong" | "wrong" => Kind::Wrong,
            "error" => Kind::Error,
            _ => Kind::Other,
        };
        columns.push(Column {
            name: name.to_string(),
            kind,
            group,
        });
    }
    let sizes = columns.iter().filter(|c| c.kind == Kind::Size).count();
    if sizes != 1 {
        return Err(ParseError::BadColumns {
            line: line.number,
            text: line.text(),
            reason: format!("names `size` {sizes} times; expected exactly one `size` column"),
        });
    }
    Ok(columns)
}

impl Table<'_> {
    /// Reads the units line (`#  (B)  (elements)  (us)  (GB/s) ...`): times
    /// are in microseconds unless it says `(ms)`. Whether it was one.
    fn units(&mut self, body: &str) -> bool {
        let words: Vec<&str> = body.trim_start_matches('#').split_whitespace().collect();
        if words.contains(&"(ms)") {
            self.time_scale = 1e-3;
        } else if words.contains(&"(us)") {
            self.time_scale = 1e-6;
        }
        words.iter().any(|w| w.starts_with('('))
    }

    /// Reads one data row.
    fn row(&mut self, line: &Line<'_>) -> Result<(), ParseError> {
        let mut fields: Vec<&str> = line.body.split_whitespace().collect();
        let expected = self.columns.len();
        // Old alltoall rows print nothing under `redop`: accept a row one field
        // short if what sits there is the next column's number.
        let empty_redop = self.redop.filter(|&r| {
            fields.len() + 1 == expected && fields.get(r).is_some_and(|f| f.parse::<f64>().is_ok())
        });
        if let Some(r) = empty_redop {
            fields.insert(r, "");
        }
        if fields.len() < expected {
            return Err(ParseError::MissingColumn {
                line: line.number,
                text: line.text(),
                column: self.columns[fields.len()].name.clone(),
                expected,
                found: fields.len(),
            });
        }
        if fields.len() > expected {
            return Err(ParseError::ExtraColumn {
                line: line.number,
                text: line.text(),
                expected,
                found: fields.len(),
            });
        }

        let mut size = 0;
        let mut key: [String; 3] = Default::default();
        let mut time = [None; 3];
        let mut algbw = None;
        let mut busbw = None;
        for (column, &value) in self.columns.iter().zip(&fields) {
            let name = column.name.as_str();
            let group = usize::from(column.group.min(2));
            match column.kind {
                Kind::Size => size = within_size_limit(line, name, field_u64(line, name, value)?)?,
                Kind::Count => {
                    field_u64(line, name, value)?;
                }
                Kind::Type => key[0] = value.to_string(),
                Kind::Redop => key[1] = value.to_string(),
                Kind::Root => {
                    if value.parse::<i64>().is_err() {
                        return Err(bad(line, name, value, "an integer rank (-1 for none)"));
                    }
                    key[2] = value.to_string();
                }
                Kind::Time => {
                    let t = field_f64(line, name, value, "a non-negative time")?;
                    time[group] =
                        Some(within_profile_time(line, name, value, t * self.time_scale)?);
                }
                Kind::Algbw | Kind::Busbw => {
                    let bw = field_f64(line, name, value, "a non-negative bandwidth in GB/s")?;
                    if group == 1 {
                        if column.kind == Kind::Algbw {
                            algbw = Some(bw);
                        } else {
                            busbw = Some(bw);
                        }
                    }
                }
                Kind::Wrong => match value.parse::<u64>() {
                    Ok(0) => {}
                    Ok(n) => {
                        return Err(ParseError::WrongResults {
                            line: line.number,
                            text: line.text(),
                            what: format!("{n} wrong elements in `{name}`"),
                        });
                    }
                    Err(_) if value == "N/A" => {}
                    Err(_) => {
                        return Err(bad(line, name, value, "a count of wrong elements or N/A"));
                    }
                },
                Kind::Error => {
                    if value != "N/A" {
                        field_f64(line, name, value, "a relative error or N/A")?;
                    }
                }
                Kind::Other => {}
            }
        }
        let Some(time_s) = time[1] else {
            unreachable!("a column-title line has a `time` column");
        };

        let same = self.segments.last().is_some_and(|s| s.key == key);
        if !same {
            self.segments.push(Segment {
                key,
                rows: Vec::new(),
            });
        }
        let Some(segment) = self.segments.last_mut() else {
            unreachable!("a segment was just pushed");
        };
        let previous = segment.rows.last().map(|r| r.size_bytes);
        if let Some(previous) = previous.filter(|&p| size < p) {
            return Err(ParseError::SizeOrder {
                line: line.number,
                text: line.text(),
                size,
                previous,
                expected: "sizes that never decrease within a run",
            });
        }
        segment.rows.push(Row {
            size_bytes: size,
            time_s,
            in_place_time_s: time[2],
            algbw_gbps: algbw,
            busbw_gbps: busbw,
            line: line.number,
        });
        Ok(())
    }
}

/// The rank count n whose nccl-tests bus-bandwidth factor is `f` (busbw =
/// algbw × f): the inverse of `sim::collective::Op::busbw_factor`, 2(n−1)/n
/// for AllReduce and (n−1)/n for AllGather, ReduceScatter and AlltoAll, so
/// n = c/(c − f) with c their limit, 2 or 1 (infinite from f = c on). `None`
/// for the collectives whose factor does not depend on n (broadcast's is
/// 1 at every n: it tells nothing).
fn ranks_from_factor(op: &str, f: f64) -> Option<f64> {
    let c = match op {
        "allreduce" => 2.0,
        "allgather" | "reducescatter" | "alltoall" => 1.0,
        _ => return None,
    };
    Some(if f >= c { f64::INFINITY } else { c / (c - f) })
}

/// The most ranks an inference considers.
const MAX_INFERRED_RANKS: u32 = 1 << 20;

/// The rank count a table's busbw/algbw columns tell, with how it was
/// found, for a table without rank lines. nccl-tests prints both with two
/// decimals, so each is known within ±0.005 GB/s: a row tells n when
/// exactly one n ≥ 1 has a factor inside the interval its two values
/// allow (rows of small bandwidth allow many and tell nothing). Every
/// telling row must agree, or the log is refused; `None` when no row tells.
fn infer_ranks(op: &str, rows: &[Row]) -> Result<Option<(u32, String)>, ParseError> {
    const HALF: f64 = 0.005;
    if ranks_from_factor(op, 0.0).is_none() {
        return Ok(None);
    }
    let mut told: Option<(u32, usize)> = None;
    let mut lines = Vec::new();
    let mut vague = 0usize;
    for r in rows {
        let (Some(alg), Some(bus)) = (r.algbw_gbps, r.busbw_gbps) else {
            continue;
        };
        if alg - HALF <= 0.0 {
            vague += 1;
            continue;
        }
        let (lo, hi) = (
            (bus - HALF).max(0.0) / (alg + HALF),
            (bus + HALF) / (alg - HALF),
        );
        // the factor grows with n, so the n whose factor lies in
        // [lo, hi] are those from n_of(lo) to n_of(hi)
        let n_of = |f: f64| ranks_from_factor(op, f).unwrap_or(f64::INFINITY);
        let (first, last) = (n_of(lo).ceil().max(1.0), n_of(hi).floor());
        if !(last - first).is_finite() || last - first >= 1.0 || last < first {
            if last < first {
                // no n fits: a row busbw/algbw cannot come from
                return Err(ParseError::BadValue {
                    line: r.line,
                    text: format!("busbw {bus} with algbw {alg}"),
                    column: "busbw".into(),
                    value: format!("{bus}"),
                    expected: "busbw = algbw × 2(n−1)/n (AllReduce) or × (n−1)/n for some rank count n",
                });
            }
            vague += 1;
            continue;
        }
        let n = first as u32;
        if n > MAX_INFERRED_RANKS {
            vague += 1;
            continue;
        }
        match told {
            Some((m, at)) if m != n => {
                return Err(ParseError::RanksDisagree {
                    line: r.line,
                    text: format!("busbw {bus} GB/s, algbw {alg} GB/s"),
                    ranks: n,
                    other_line: at,
                    other_ranks: m,
                });
            }
            Some(_) => {}
            None => told = Some((n, r.line)),
        }
        lines.push(r.line);
    }
    Ok(told.map(|(n, _)| {
            let (a, b) = (lines[0], lines[lines.len() - 1]);
            let rows = if a == b {
                format!("the row at line {a}")
            } else {
                format!("{} rows at lines {a}–{b}", lines.len())
            };
            let vague = if vague > 0 {
                format!("; {vague} rows too small to tell")
            } else {
                String::new()
            };
            (
                n,
                format!("{n} ranks inferred from busbw/algbw ({rows} agree{vague}); the log has no `# Rank` lines"),
            )
        }))
}

/// A `BadValue` error.
fn bad(line: &Line<'_>, column: &str, value: &str, expected: &'static str) -> ParseError {
    super::bad_value(line, column, value, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_recognised_by_their_file_name() {
        assert_eq!(
            binary("./build/all_reduce_perf"),
            Some(Binary::Supported("allreduce"))
        );
        assert_eq!(
            binary("/x/broadcast_perf_mpi"),
            Some(Binary::Supported("broadcast"))
        );
        assert_eq!(
            binary("reduce_perf;"),
            Some(Binary::Unsupported("reduce_perf".into()))
        );
        assert_eq!(binary("perf"), None);
        assert_eq!(binary("nccl-tests/build"), None);
    }

    #[test]
    fn column_titles_need_size_and_time() {
        assert!(is_column_title(
            "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        ));
        assert!(!is_column_title("#        (B)    (elements)     (us)"));
        assert!(!is_column_title("# Size       Avg Latency(us)"));
    }
}
