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
    Launcher, Line, Log, ParseError, Row, Tool, field_f64, field_u64, lines, no_table,
    op_from_file_name,
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
    };
    for line in lines(text) {
        parser.line(line)?;
    }
    parser.finish_table()?;
    if parser.logs.is_empty() {
        return Err(no_table(text, COLUMN_TITLE));
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
    /// benchmark (a command line), else ignored.
    fn other(&mut self, line: &Line<'_>) {
        if let Some(b) = binary_in(line.body) {
            self.mentioned = Some((b, line.number, line.text()));
            self.header.push(line.body.to_string());
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
}

impl<'a> Parser<'a, '_> {
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
            return Ok(());
        }
        if is_noise(line.body) {
            self.pending.noise(line.body);
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
                return Err(ParseError::Interrupted {
                    line: line.number,
                    text: line.text(),
                    expected: "a data row or the `# Out of bounds values` footer",
                });
            }
            self.finish_table()?;
        }
        self.pending.other(&line);
        Ok(())
    }

    /// Reads a comment line.
    fn comment(&mut self, line: Line<'a>) -> Result<(), ParseError> {
        if is_column_title(line.body) {
            self.finish_table()?;
            self.start_table(&line)?;
            return Ok(());
        }
        let Some(table) = &mut self.table else {
            self.pending.comment(&line);
            return Ok(());
        };
        if is_footer(line.body) {
            return self.finish_table();
        }
        if starts_run(line.body) {
            self.finish_table()?;
            self.pending.comment(&line);
            return Ok(());
        }
        if table.segments.is_empty() {
            table.units(line.body);
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
        for segment in table.segments {
            let mut header = table.header.clone();
            if split {
                let [ty, redop, root] = &segment.key;
                header.push(format!(
                    "rows with type {ty}, redop {redop}, root {root} (one table split by type/redop/root)"
                ));
            }
            self.logs.push(Log {
                tool: Tool::NcclTests,
                op: table.op.to_string(),
                ranks: table.ranks,
                header,
                rows: segment.rows,
            });
        }
        Ok(())
    }
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
    /// are in microseconds unless it says `(ms)`.
    fn units(&mut self, body: &str) {
        let words: Vec<&str> = body.trim_start_matches('#').split_whitespace().collect();
        if words.contains(&"(ms)") {
            self.time_scale = 1e-3;
        } else if words.contains(&"(us)") {
            self.time_scale = 1e-6;
        }
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
                Kind::Size => size = field_u64(line, name, value)?,
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
                    time[group] = Some(t * self.time_scale);
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
                Kind::Wrong => {
                    if value != "N/A" && value.parse::<u64>().is_err() {
                        return Err(bad(line, name, value, "a count of wrong elements or N/A"));
                    }
                }
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
