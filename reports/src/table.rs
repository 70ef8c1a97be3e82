//! Result tables: read and write CSV or Parquet through polars.

use polars::prelude::*;
use std::path::Path;

/// Why a table could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file name has no extension we know.
    #[error("{0}: the file name must end in .csv or .parquet")]
    Format(String),
    /// A table could not be read or parsed (bad input), with the file.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// A row of a CSV table that cannot be read as it stands (bad input):
    /// more or fewer fields than the header, a quoted field left open, a
    /// value that is not of its column's type.
    #[error("{path}, line {line}{}: {message}", at_column(.column))]
    Row {
        /// The file.
        path: String,
        /// The line the row starts on (1: the header).
        line: u64,
        /// The column of the bad value, if one is at fault.
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A table could not be written (a failure, not the input's).
    #[error("{path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

/// `, column `NAME``, or nothing.
fn at_column(column: &Option<String>) -> String {
    column
        .as_ref()
        .map(|c| format!(", column `{c}`"))
        .unwrap_or_default()
}

impl TableError {
    /// Whether the error is the input's (exit code 2): a name without a
    /// known extension, a table that cannot be read.
    pub fn is_input(&self) -> bool {
        !matches!(self, TableError::Write { .. })
    }
}

/// Table formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header.
    Csv,
    /// Apache Parquet.
    Parquet,
}

impl Format {
    /// The format a path's extension names.
    pub fn of(path: &Path) -> Result<Format, TableError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => Ok(Format::Csv),
            Some("parquet") => Ok(Format::Parquet),
            _ => Err(TableError::Format(path.display().to_string())),
        }
    }
}

fn reading(path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn writing(path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Reads a CSV or Parquet table.
///
/// A CSV table's text is checked first: polars reads a row with
/// fewer fields than the header (a file cut short, say) as if the
/// missing ones were empty, and a value that does not parse as its column
/// turns the whole column into text; either is refused, with the file,
/// the line and (for a value) the column.
pub fn read(path: &Path) -> Result<DataFrame, TableError> {
    let format = Format::of(path)?;
    let file = std::fs::File::open(path).map_err(|e| reading(path, e))?;
    match format {
        Format::Csv => {
            check_csv(path, std::io::BufReader::new(&file))?;
            use std::io::Seek;
            let mut file = file;
            file.rewind().map_err(|e| reading(path, e))?;
            CsvReadOptions::default()
                .with_has_header(true)
                .into_reader_with_file_handle(file)
                .finish()
                .map_err(|e| reading(path, e))
        }
        Format::Parquet => ParquetReader::new(file)
            .finish()
            .map_err(|e| reading(path, e)),
    }
}

/// What the values of a column of a sweep table must read as (empty
/// cells aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A whole number from 0 to `u32::MAX`.
    U32,
    /// A whole number from 0 to `u64::MAX`.
    U64,
    /// A number (`NaN` and `inf` included, as polars writes them).
    F64,
    /// A finite number above 0, and present: a run's throughput and
    /// iteration time, which every point has (a review's hand-edited -5,
    /// 0, NaN or empty throughput made a report's "fastest" and ratios
    /// nonsense, exit 0).
    Positive,
}

impl Expect {
    /// Why `text` is not a value of this type, if it is not.
    fn refuse(self, text: &str) -> Option<String> {
        let whole = |max: u64| match text.parse::<u64>() {
            Ok(v) if v <= max => None,
            Ok(_) => Some(format!("`{text}` is too large (at most {max})")),
            Err(_) => Some(format!("`{text}` is not a whole number ≥ 0")),
        };
        match self {
            Expect::U32 => whole(u32::MAX as u64),
            Expect::U64 => whole(u64::MAX),
            Expect::F64 => text
                .parse::<f64>()
                .is_err()
                .then(|| format!("`{text}` is not a number")),
            Expect::Positive => match text.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => None,
                _ if text.is_empty() => Some("is empty: every point has one".into()),
                _ => Some(format!("`{text}` is not a finite number above 0")),
            },
        }
    }
}

/// Checks the text of a CSV table before polars reads it, splitting it as
/// polars does (a field that starts with `"` is quoted, `""` within it
/// being one quote; a `\r` before a line's end is dropped):
///
/// * every row has as many fields as the header (a blank line is a row of
///   one empty field); a last row without its line end and with fewer
///   fields is named as what it most likely is, a file cut short;
/// * no quoted field is left open at the end of the file;
/// * in a sweep table (one with `point` and `grid_points` columns), every
///   non-empty value of dtsim's own numeric columns
///   ([`crate::sweep::numeric_columns`]) parses as the column's type.
///
/// Errors name the file, the line the row starts on and, for a value, its
/// column.
fn check_csv(path: &Path, mut input: impl std::io::BufRead) -> Result<(), TableError> {
    let mut rows = Rows {
        path,
        in_header: true,
        names: Vec::new(),
        expect: Vec::new(),
        fields: 0,
        field: Vec::new(),
        keep: true,
        bad: None,
        row_bytes: 0,
        row_line: 1,
    };
    let mut quoted = false; // the field started with a quote
    let mut in_quotes = false;
    let mut at_start = true; // of a field
    let mut line: u64 = 1; // the line being read
    let mut prev = 0u8; // the byte before
    let mut first = true; // before the first byte (a byte-order mark)
    loop {
        let buf = input.fill_buf().map_err(|e| reading(path, e))?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        let mut bytes = buf;
        if first {
            first = false;
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        for &c in bytes {
            if in_quotes {
                rows.row_bytes += 1;
                if c == b'"' {
                    in_quotes = false;
                } else if rows.keep {
                    rows.field.push(c);
                }
                if c == b'\n' {
                    line += 1;
                }
                prev = c;
                continue;
            }
            match c {
                b',' => {
                    rows.row_bytes += 1;
                    rows.end_field();
                    (at_start, quoted) = (true, false);
                }
                b'\n' => {
                    rows.end_row(false, prev == b'\r')?;
                    line += 1;
                    rows.row_line = line;
                    (at_start, quoted) = (true, false);
                }
                // opens a quoted field, or (after its closing quote) is a
                // quote within it
                b'"' if at_start || quoted => {
                    rows.row_bytes += 1;
                    if !at_start && rows.keep {
                        rows.field.push(b'"');
                    }
                    (at_start, quoted, in_quotes) = (false, true, true);
                }
                _ => {
                    rows.row_bytes += 1;
                    if rows.keep {
                        rows.field.push(c);
                    }
                    at_start = false;
                }
            }
            prev = c;
        }
        input.consume(n);
    }
    if in_quotes {
        return Err(rows.error(
            None,
            "a quoted field is not closed: the file looks truncated".into(),
        ));
    }
    if rows.row_bytes > 0 {
        // the last row, without its line end
        rows.end_row(true, prev == b'\r')?;
    }
    Ok(())
}

/// [`check_csv`]'s rows: the header, then each row checked against it.
struct Rows<'a> {
    path: &'a Path,
    /// Whether the row being read is the header.
    in_header: bool,
    /// The header's names.
    names: Vec<String>,
    /// The type each column's values must have, if checked.
    expect: Vec<Option<Expect>>,
    /// Fields of the row finished so far.
    fields: usize,
    /// The bytes of the field being read, if kept: when its column is
    /// checked, or it is a name of the header.
    field: Vec<u8>,
    keep: bool,
    /// The row's first value not of its column's type: column and why.
    bad: Option<(usize, String)>,
    /// Bytes of the row so far (but its line end), and the line it starts
    /// on.
    row_bytes: usize,
    row_line: u64,
}

impl Rows<'_> {
    fn error(&self, column: Option<String>, message: String) -> TableError {
        TableError::Row {
            path: self.path.display().to_string(),
            line: self.row_line,
            column,
            message,
        }
    }

    fn end_field(&mut self) {
        let k = self.fields;
        self.fields += 1;
        if self.in_header {
            self.names
                .push(String::from_utf8_lossy(&self.field).into_owned());
            self.field.clear();
            return;
        }
        if self.keep {
            if self.bad.is_none()
                && let Some(Some(e)) = self.expect.get(k)
                && (!self.field.is_empty() || *e == Expect::Positive)
            {
                self.bad = e
                    .refuse(&String::from_utf8_lossy(&self.field))
                    .map(|why| (k, why));
            }
            self.field.clear();
        }
        self.keep = matches!(self.expect.get(self.fields), Some(Some(_)));
    }

    /// Ends a row, its last field ending in `\r` if `cr`: the header, or
    /// a row checked against it; `cut`: the last row, without its line
    /// end.
    fn end_row(&mut self, cut: bool, cr: bool) -> Result<(), TableError> {
        if cr {
            // (kept or not, the field holds the `\r` if anything)
            self.field.pop();
            self.row_bytes -= 1;
        }
        self.end_field();
        let (n, want) = (self.fields, self.names.len());
        if self.in_header {
            self.in_header = false;
            let has = |c: &str| self.names.iter().any(|n| n == c);
            if has("point") && has("grid_points") {
                let known = crate::sweep::numeric_columns();
                self.expect = self
                    .names
                    .iter()
                    .map(|n| known.iter().find(|(k, _)| k == n).map(|(_, e)| *e))
                    .collect();
            }
        } else if n != want {
            let message = if self.row_bytes == 0 {
                format!("an empty line; a row has the header's {want} fields")
            } else if cut && n < want {
                format!("{n} fields, the header has {want}: the file looks truncated")
            } else {
                format!("{n} fields, the header has {want}")
            };
            return Err(self.error(None, message));
        } else if let Some((k, why)) = self.bad.take() {
            let why = if cut {
                format!("{why}: the file looks truncated")
            } else {
                why
            };
            return Err(self.error(Some(self.names[k].clone()), why));
        }
        self.fields = 0;
        self.row_bytes = 0;
        self.keep = matches!(self.expect.first(), Some(Some(_)));
        Ok(())
    }
}

/// Writes a table atomically: to a temporary file beside `path`, then
/// renamed over it, so a reader never sees half a table.
pub fn write(df: &mut DataFrame, path: &Path) -> Result<(), TableError> {
    let mut w = Writer::create(path, df.schema())?;
    w.write(df)?;
    w.finish()
}

/// A table written in batches of rows (each batch a Parquet row group),
/// so that a long sweep never holds its whole table; the file appears
/// under its name only when [`Writer::finish`] renames it into place, and
/// a writer dropped unfinished removes its temporary file.
pub struct Writer {
    path: std::path::PathBuf,
    tmp: std::path::PathBuf,
    inner: Option<Inner>,
}

enum Inner {
    Csv(polars::io::csv::write::BatchedWriter<std::fs::File>),
    // boxed: the Parquet writer's state is large beside the CSV one's
    Parquet(Box<polars::io::parquet::write::BatchedWriter<std::fs::File>>),
}

impl Writer {
    /// Starts the table `path` (.csv or .parquet) with columns `schema`.
    pub fn create(path: &Path, schema: &Schema) -> Result<Writer, TableError> {
        let format = Format::of(path)?;
        // a fixed name: a writer killed part-way leaves a file the next
        // writer of the same table truncates and replaces
        let tmp = path.with_extension(format!(
            "{}.tmp",
            path.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        crate::create_parent(path).map_err(|e| writing(path, e))?;
        let file = std::fs::File::create(&tmp).map_err(|e| writing(path, e))?;
        let inner = match format {
            Format::Csv => Inner::Csv(
                CsvWriter::new(file)
                    .include_header(true)
                    .batched(schema)
                    .map_err(|e| writing(path, e))?,
            ),
            Format::Parquet => Inner::Parquet(Box::new(
                ParquetWriter::new(file)
                    .batched(schema)
                    .map_err(|e| writing(path, e))?,
            )),
        };
        Ok(Writer {
            path: path.to_path_buf(),
            tmp,
            inner: Some(inner),
        })
    }

    /// Appends rows (columns as in the schema given to [`Writer::create`]).
    pub fn write(&mut self, df: &mut DataFrame) -> Result<(), TableError> {
        df.align_chunks_par();
        match self.inner.as_mut().expect("not finished") {
            Inner::Csv(w) => w.write_batch(df),
            Inner::Parquet(w) => w.write_batch(df),
        }
        .map_err(|e| writing(&self.path, e))
    }

    /// Ends the table, syncs it to disk and renames it into place.
    pub fn finish(mut self) -> Result<(), TableError> {
        match self.inner.take().expect("not finished") {
            Inner::Csv(mut w) => w.finish().map_err(|e| writing(&self.path, e))?,
            Inner::Parquet(w) => {
                w.finish().map_err(|e| writing(&self.path, e))?;
            }
        }
        std::fs::File::open(&self.tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| writing(&self.path, e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| writing(&self.path, e))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if self.inner.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
