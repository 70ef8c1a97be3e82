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
    /// A table could not be written (a failure, not the input's).
    #[error("{path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
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
pub fn read(path: &Path) -> Result<DataFrame, TableError> {
    let format = Format::of(path)?;
    let file = std::fs::File::open(path).map_err(|e| reading(path, e))?;
    match format {
        Format::Csv => CsvReadOptions::default()
            .with_has_header(true)
            .into_reader_with_file_handle(file)
            .finish()
            .map_err(|e| reading(path, e)),
        Format::Parquet => ParquetReader::new(file)
            .finish()
            .map_err(|e| reading(path, e)),
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
