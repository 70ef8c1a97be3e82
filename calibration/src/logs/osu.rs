//! OSU micro-benchmark output: `osu_latency`, `osu_bw`, `osu_allreduce`,
//! `osu_alltoall`, `osu_allgather`, host or device buffers (`-d cuda`,
//! `D D`).
//!
//! A test prints a title naming it, a few comments, a column-title line and
//! one row per size:
//!
//! ```text
//! # OSU MPI-CUDA All-to-All Personalized Exchange Latency Test v7.5
//! # Datatype: MPI_CHAR.
//! # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
//! 1                      22.07             21.01             23.52        1000
//! ```
//!
//! The columns after `Size` depend on the test, version and flags (`-f`
//! adds Min/Max/Iterations, `--validation` adds Validation, `-T` tail
//! latencies); they are read from the column-title line. The latency or
//! bandwidth column gives the row's time. OSU prints no table footer: the
//! table ends at the first line that is not a row, and a crash report after
//! it is an error.

use super::{
    Launcher, Line, Log, ParseError, Row, Skipped, Tool, field_f64, field_u64, is_failure, lines,
    no_table, op_from_file_name, within_profile_time, within_size_limit,
};

/// The benchmarks this parser supports, for error messages.
const SUPPORTED: &str = "osu_latency, osu_bw, osu_allreduce, osu_alltoall, osu_allgather";

/// The column-title line, for error messages.
const COLUMN_TITLE: &str = "an OSU column-title line (`# Size  Latency (us)`, \
                            `# Size  Bandwidth (MB/s)` or `# Size  Avg Latency(us) ...`)";

/// File-name fragments (lower case, `_` and `-` removed) naming a test.
const FILE_NAMES: &[(&str, &str)] = &[
    ("osulatency", "latency"),
    ("osubw", "bw"),
    ("allreduce", "allreduce"),
    ("alltoall", "alltoall"),
    ("allgather", "allgather"),
];

/// Phrases of a crash report after the last row.
const CRASH: &[&str] = &[
    "caught signal",
    "segmentation fault",
    "bus error",
    "core dumped",
    "exited on signal",
    "killed by signal",
    "aborting",
];

/// Parses the output of one OSU test. The test comes from its title (`# OSU
/// MPI Latency Test v5.0`), or else from a command line naming the binary;
/// see [`parse_osu_named`] to fall back on a file name.
///
/// Sizes must strictly increase. osu_bw rows give `time_s = size /
/// bandwidth` (OSU's MB/s are 10⁶ B/s) and `algbw_gbps = MB/s / 1000`;
/// latency rows give the (average) latency.
pub fn parse_osu(text: &str) -> Result<Log, ParseError> {
    parse_osu_named(text, None)
}

/// Like [`parse_osu`], falling back on `file_name` for the test when the
/// log has no title or command line naming it (`..._osu_bw_...txt`).
pub fn parse_osu_named(text: &str, file_name: Option<&str>) -> Result<Log, ParseError> {
    let mut header: Vec<String> = lines(text)
        .filter(Line::is_source)
        .map(|l| l.body.to_string())
        .collect();
    let mut title: Option<(Result<&'static str, String>, usize, String)> = None;
    let mut command: Option<(Result<&'static str, String>, usize, String)> = None;
    let mut table: Option<Table<'_>> = None;
    let mut skipped = Vec::new();
    let mut skip = |line: &Line<'_>| {
        skipped.push(Skipped {
            line: line.number,
            text: line.text(),
        })
    };

    for line in lines(text) {
        if line.body.is_empty() || line.is_source() {
            continue;
        }
        if table.as_ref().is_some_and(|t| line.foreign_to(t.launcher)) {
            skip(&line);
            continue;
        }
        if line.is_comment() {
            if is_title(line.body) {
                if table.is_some() || title.is_some() {
                    return Err(ParseError::MultipleTests {
                        line: line.number,
                        text: line.text(),
                    });
                }
                title = Some((title_op(line.body), line.number, line.text()));
                header.push(line.body.to_string());
            } else if is_column_title(line.body) {
                if table.is_some() {
                    return Err(ParseError::MultipleTests {
                        line: line.number,
                        text: line.text(),
                    });
                }
                table = Some(Table::new(&line)?);
            } else if table.is_none() {
                if let Some(op) = binary_in(line.body) {
                    command = Some((op, line.number, line.text()));
                }
                if line.body.trim_start_matches('#').trim().is_empty() {
                    continue;
                }
                header.push(line.body.to_string());
            } else if !line.body.trim_start_matches('#').trim().is_empty() {
                skip(&line);
            }
            continue;
        }
        if line.is_data_row() {
            match &mut table {
                None => {
                    return Err(ParseError::StrayRow {
                        line: line.number,
                        text: line.text(),
                        place: "before any column-title line",
                    });
                }
                Some(t) => t.row(&line)?,
            }
            continue;
        }
        match &table {
            // a failure report breaks the run off; any other line
            // (launcher, Slurm, Open MPI's help aggregation) is noise,
            // between rows too
            Some(t) if !t.rows.is_empty() => {
                let lower = line.body.to_ascii_lowercase();
                if CRASH.iter().any(|c| lower.contains(c)) || is_failure(line.body) {
                    return Err(ParseError::Interrupted {
                        line: line.number,
                        text: line.text(),
                        expected: "no failure report after the last row",
                    });
                }
                skip(&line);
            }
            Some(_) => skip(&line),
            None => {
                if let Some(op) = binary_in(line.body) {
                    command = Some((op, line.number, line.text()));
                    header.push(line.body.to_string());
                } else if line.body.starts_with("$ ") {
                    header.push(line.body.to_string());
                } else {
                    skip(&line);
                }
            }
        }
    }

    let Some(table) = table else {
        return Err(no_table(text, COLUMN_TITLE));
    };
    if table.rows.is_empty() {
        return Err(ParseError::NoRows {
            line: table.title.0,
            text: table.title.1,
        });
    }
    let op = match title.or(command) {
        Some((Ok(op), _, _)) => op,
        Some((Err(test), line, text)) => {
            return Err(ParseError::UnsupportedTest {
                line,
                text,
                test,
                supported: SUPPORTED,
            });
        }
        None => op_from_file_name(file_name, FILE_NAMES).ok_or_else(|| ParseError::UnknownOp {
            line: table.title.0,
            text: table.title.1.clone(),
            expected: "an OSU title (`# OSU MPI Latency Test v7.x`) or a command line naming \
                       the benchmark (`osu_latency`, ...) before the table",
        })?,
    };
    let wanted = if op == "bw" {
        Metric::Bandwidth
    } else {
        Metric::Latency
    };
    if table.metric != wanted {
        let reason = match wanted {
            Metric::Bandwidth => "has no `Bandwidth (MB/s)` column, which osu_bw prints",
            Metric::Latency => {
                "has no latency column (`Latency (us)` or `Avg Latency(us)`), \
                                which latency tests print"
            }
        };
        return Err(ParseError::BadColumns {
            line: table.title.0,
            text: table.title.1,
            reason: reason.to_string(),
        });
    }
    Ok(Log {
        tool: Tool::Osu,
        op: op.to_string(),
        ranks: matches!(op, "latency" | "bw").then_some(2),
        header,
        rows: table.rows,
        ranks_inferred: None,
        skipped,
    })
}

/// Whether `body` is an OSU title: `# OSU <api> <name> Test [vX.Y]`.
pub(super) fn is_title(body: &str) -> bool {
    body.strip_prefix('#')
        .map(str::trim_start)
        .is_some_and(|rest| rest.starts_with("OSU ") && rest.contains(" Test"))
}

/// Whether `body` is an OSU column-title line: a comment whose first word is
/// `Size`.
pub(super) fn is_column_title(body: &str) -> bool {
    body.strip_prefix('#')
        .is_some_and(|rest| rest.split_whitespace().next() == Some("Size"))
}

/// The op a title names, or the test's name if it is not supported.
fn title_op(body: &str) -> Result<&'static str, String> {
    let rest = body.trim_start_matches('#').trim_start();
    let rest = rest.strip_prefix("OSU ").unwrap_or(rest);
    let name = rest.split(" Test").next().unwrap_or(rest).trim();
    // Drop the API word: `MPI`, `MPI-CUDA`, `MPI-ROCM`, `NCCL`, ...
    let test = name.split_once(' ').map_or("", |(_, test)| test).trim();
    match test.to_ascii_lowercase().as_str() {
        "latency" => Ok("latency"),
        "bandwidth" => Ok("bw"),
        "allreduce latency" => Ok("allreduce"),
        "all-to-all personalized exchange latency" | "alltoall latency" => Ok("alltoall"),
        "allgather latency" => Ok("allgather"),
        _ => Err(format!("OSU {name}")),
    }
}

/// The op of the last OSU binary a line names, or the binary's name if it is
/// not supported.
fn binary_in(body: &str) -> Option<Result<&'static str, String>> {
    body.split_whitespace()
        .filter_map(|token| {
            let base = token.rsplit('/').next().unwrap_or(token);
            let base = base.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            let name = base.strip_prefix("osu_")?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                return None;
            }
            Some(match name {
                "latency" => Ok("latency"),
                "bw" => Ok("bw"),
                "allreduce" => Ok("allreduce"),
                "alltoall" => Ok("alltoall"),
                "allgather" => Ok("allgather"),
                _ => Err(base.to_string()),
            })
        })
        .next_back()
}

/// Which measurement gives a row's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    /// Microseconds.
    Latency,
    /// MB/s (10⁶ B/s).
    Bandwidth,
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Bytes.
    Size,
    /// The row's time.
    Metric(Metric),
    /// Another latency (min, max, tail).
    Number,
    /// Iteration count.
    Iterations,
    /// `Pass` or `Fail`.
    Validation,
    /// A word this parser does not know.
    Unknown,
}

/// Column titles OSU prints, each one field in a data row.
const LABELS: &[(&str, Kind)] = &[
    ("Size", Kind::Size),
    ("Avg Latency(us)", Kind::Metric(Metric::Latency)),
    ("Avg Latency (us)", Kind::Metric(Metric::Latency)),
    ("Latency (us)", Kind::Metric(Metric::Latency)),
    ("Latency(us)", Kind::Metric(Metric::Latency)),
    ("Bandwidth (MB/s)", Kind::Metric(Metric::Bandwidth)),
    ("Min Latency(us)", Kind::Number),
    ("Max Latency(us)", Kind::Number),
    ("Min Latency (us)", Kind::Number),
    ("Max Latency (us)", Kind::Number),
    ("P50 Tail Lat(us)", Kind::Number),
    ("P90 Tail Lat(us)", Kind::Number),
    ("P99 Tail Lat(us)", Kind::Number),
    ("Iterations", Kind::Iterations),
    ("Validation", Kind::Validation),
];

/// The table being read.
#[derive(Debug)]
struct Table<'a> {
    /// Column titles and kinds.
    columns: Vec<(String, Kind)>,
    /// Whether every title was recognised, so rows must match them exactly.
    exact: bool,
    /// Index of the metric column.
    metric_at: usize,
    /// What the metric column holds.
    metric: Metric,
    /// The column-title line's number and text.
    title: (usize, String),
    /// The launcher tag of the column-title line.
    launcher: Option<Launcher<'a>>,
    /// Rows read.
    rows: Vec<Row>,
}

impl<'a> Table<'a> {
    /// Reads a column-title line.
    fn new(line: &Line<'a>) -> Result<Self, ParseError> {
        let bad = |reason: &str| ParseError::BadColumns {
            line: line.number,
            text: line.text(),
            reason: reason.to_string(),
        };
        let mut rest = line.body.trim_start_matches('#');
        let mut columns = Vec::new();
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            let known = LABELS
                .iter()
                .filter(|(label, _)| rest.starts_with(label))
                .max_by_key(|(label, _)| label.len());
            let (label, kind) = match known {
                Some(&(label, kind)) => (label, kind),
                None => {
                    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    (&rest[..end], Kind::Unknown)
                }
            };
            columns.push((label.to_string(), kind));
            rest = &rest[label.len()..];
        }
        let Some(metric_at) = columns
            .iter()
            .position(|(_, k)| matches!(k, Kind::Metric(_)))
        else {
            return Err(bad(
                "has no latency or bandwidth column; expected `Latency (us)`, \
                            `Avg Latency(us)` or `Bandwidth (MB/s)` after `Size`",
            ));
        };
        let Kind::Metric(metric) = columns[metric_at].1 else {
            unreachable!("position() found a metric column");
        };
        let first_unknown = columns.iter().position(|(_, k)| *k == Kind::Unknown);
        if first_unknown.is_some_and(|u| u < metric_at) {
            return Err(bad(
                "has a title this parser does not know before the latency or \
                            bandwidth column, so the columns cannot be matched to the rows",
            ));
        }
        Ok(Table {
            exact: first_unknown.is_none(),
            columns,
            metric_at,
            metric,
            title: (line.number, line.text()),
            launcher: line.launcher,
            rows: Vec::new(),
        })
    }

    /// Reads one data row.
    fn row(&mut self, line: &Line<'_>) -> Result<(), ParseError> {
        let fields: Vec<&str> = line.body.split_whitespace().collect();
        let expected = if self.exact {
            self.columns.len()
        } else {
            self.metric_at + 1
        };
        if fields.len() < expected {
            return Err(ParseError::MissingColumn {
                line: line.number,
                text: line.text(),
                column: self.columns[fields.len()].0.clone(),
                expected,
                found: fields.len(),
            });
        }
        if self.exact && fields.len() > expected {
            return Err(ParseError::ExtraColumn {
                line: line.number,
                text: line.text(),
                expected,
                found: fields.len(),
            });
        }
        let size = within_size_limit(
            line,
            &self.columns[0].0,
            field_u64(line, &self.columns[0].0, fields[0])?,
        )?;
        let mut time_s = 0.0;
        let mut algbw_gbps = None;
        for ((name, kind), &value) in self.columns.iter().zip(&fields).take(expected).skip(1) {
            match kind {
                Kind::Metric(Metric::Latency) => {
                    let us = field_f64(line, name, value, "a latency in microseconds")?;
                    time_s = within_profile_time(line, name, value, us * 1e-6)?;
                }
                Kind::Metric(Metric::Bandwidth) => {
                    let mbps = field_f64(line, name, value, "a positive bandwidth in MB/s")?;
                    if mbps <= 0.0 {
                        return Err(ParseError::BadValue {
                            line: line.number,
                            text: line.text(),
                            column: name.clone(),
                            value: value.to_string(),
                            expected: "a positive bandwidth in MB/s",
                        });
                    }
                    // Lossless for sizes below 2^53 bytes.
                    time_s = within_profile_time(line, name, value, size as f64 / (mbps * 1e6))?;
                    algbw_gbps = Some(mbps / 1e3);
                }
                Kind::Number => {
                    field_f64(line, name, value, "a latency in microseconds")?;
                }
                Kind::Iterations => {
                    field_u64(line, name, value)?;
                }
                Kind::Validation => {
                    if value == "Fail" {
                        return Err(ParseError::WrongResults {
                            line: line.number,
                            text: line.text(),
                            what: format!("`{name}` says Fail"),
                        });
                    }
                    if value != "Pass" {
                        return Err(ParseError::BadValue {
                            line: line.number,
                            text: line.text(),
                            column: name.clone(),
                            value: value.to_string(),
                            expected: "Pass or Fail",
                        });
                    }
                }
                Kind::Size | Kind::Unknown => {}
            }
        }
        let previous = self.rows.last().map(|r| r.size_bytes);
        if let Some(previous) = previous.filter(|&p| size <= p) {
            return Err(ParseError::SizeOrder {
                line: line.number,
                text: line.text(),
                size,
                previous,
                expected: "strictly increasing sizes",
            });
        }
        self.rows.push(Row {
            size_bytes: size,
            time_s,
            in_place_time_s: None,
            algbw_gbps,
            busbw_gbps: None,
            line: line.number,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_tests() {
        assert_eq!(title_op("# OSU MPI Latency Test v5.0"), Ok("latency"));
        assert_eq!(title_op("# OSU MPI-CUDA Bandwidth Test v7.2"), Ok("bw"));
        assert_eq!(
            title_op("# OSU MPI-CUDA All-to-All Personalized Exchange Latency Test v7.5"),
            Ok("alltoall")
        );
        assert_eq!(
            title_op("# OSU MPI Allgather Latency Test v7.5.2"),
            Ok("allgather")
        );
        assert_eq!(
            title_op("# OSU MPI Bi-Directional Bandwidth Test v5.6.2"),
            Err("OSU MPI Bi-Directional Bandwidth".to_string())
        );
        assert!(title_op("# OSU MPI Non-blocking Allgather Latency Test v5.3.2").is_err());
    }

    #[test]
    fn binaries_name_tests() {
        assert_eq!(
            binary_in("$ srun -N2 ./pt2pt/osu_bw --validation"),
            Some(Ok("bw"))
        );
        assert_eq!(
            binary_in("mpirun -np 2 osu_bibw"),
            Some(Err("osu_bibw".to_string()))
        );
        assert_eq!(binary_in("# Datatype: MPI_CHAR."), None);
    }
}
