//! Result tables: read and write CSV or Parquet through polars.

use polars::prelude::*;
use std::path::Path;

/// Why a table could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file name has no extension we know.
    #[error("{0}: the file name must end in .csv or .parquet")]
    Format(String),
    /// I/O or polars failure, with the file.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
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

fn io(path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Reads a CSV or Parquet table.
pub fn read(path: &Path) -> Result<DataFrame, TableError> {
    let format = Format::of(path)?;
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    match format {
        Format::Csv => CsvReadOptions::default()
            .with_has_header(true)
            .into_reader_with_file_handle(file)
            .finish()
            .map_err(|e| io(path, e)),
        Format::Parquet => ParquetReader::new(file).finish().map_err(|e| io(path, e)),
    }
}

/// Writes a table atomically: to a temporary file beside `path`, then
/// renamed over it, so a reader never sees half a table.
pub fn write(df: &mut DataFrame, path: &Path) -> Result<(), TableError> {
    let format = Format::of(path)?;
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    {
        let mut file = std::fs::File::create(&tmp).map_err(|e| io(path, e))?;
        match format {
            Format::Csv => CsvWriter::new(&mut file)
                .include_header(true)
                .finish(df)
                .map_err(|e| io(path, e))?,
            Format::Parquet => {
                ParquetWriter::new(&mut file)
                    .finish(df)
                    .map_err(|e| io(path, e))?;
            }
        }
        file.sync_all().map_err(|e| io(path, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}
