//! The command line's one error type, and the one place that turns it into
//! an exit code.
//!
//! The contract (docs/architecture.md, "Exit codes"): 0 success, 2 bad
//! input (the message says what is wrong and where), 1 anything else (a
//! measurement that failed, an output that could not be written, a limit
//! `dtsim validate` was told to enforce). A closed standard output (`dtsim
//! run … | head`) ends the command quietly with 0, as a Unix filter does.
//!
//! Each library error converts with `From`, deciding its kind by what
//! failed: the libraries know whether a failure was the input's (they
//! say so by variant), this module only maps kinds to codes.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// An error of a command, by kind.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit code 2.
    Input(String),
    /// Anything else: exit code 1.
    Other(String),
    /// Standard output was closed by its reader: exit code 0, no message.
    ClosedOutput,
}

impl CliError {
    /// The exit code of this kind of error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Other(_) => 1,
            CliError::ClosedOutput => 0,
        }
    }

    /// Prints the message on standard error (none for a closed output) and
    /// returns the exit code.
    pub fn report(&self) -> ExitCode {
        match self {
            CliError::Input(m) | CliError::Other(m) => note!("error: {m}"),
            CliError::ClosedOutput => {}
        }
        ExitCode::from(self.exit_code())
    }

    /// An error writing to standard output: a closed pipe ends quietly,
    /// anything else is a failure.
    pub fn writing(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::ClosedOutput
        } else {
            CliError::Other(format!("writing output: {e}"))
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::Other(m) => f.write_str(m),
            CliError::ClosedOutput => f.write_str("standard output was closed"),
        }
    }
}

/// Refuses an output path that names a directory, an existing one or one
/// ending in a separator (`--trace out/`), or no file at all (`""`,
/// `x/..`), before any work: the user's mistake (exit code 2), not a
/// failed write (1).
pub fn output_file(flag: &str, path: &std::path::Path) -> Result<(), CliError> {
    let text = path.to_string_lossy();
    let problem = if path.is_dir() {
        "is a directory"
    } else if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        "ends in a path separator"
    } else if path.file_name().is_none() || text.ends_with("/.") {
        // "", "x/..", "x/.": no file is named
        "names no file"
    } else if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        // a file is written whole beside its name and renamed into place,
        // which would replace the link, not write its target (a review)
        "is a symbolic link (the written file would replace the link, not write its target)"
    } else if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        // a device or a pipe would be replaced by a regular file (a review
        // replaced /dev/full, as root)
        "is not a regular file but a device, a pipe or a socket (the written file would replace it)"
    } else {
        return Ok(());
    };
    Err(CliError::Input(format!(
        "{flag} {}: {problem}; give the name of a file to write",
        path.display()
    )))
}

/// Refuses an output path that names one of the command's inputs (the
/// same file however spelt, through links too): writing it would destroy
/// the input, whole and at once. `what` is what would be written.
pub fn not_an_input(
    flag: &str,
    out: &std::path::Path,
    inputs: &[impl AsRef<std::path::Path>],
    what: &str,
) -> Result<(), CliError> {
    if let Ok(target) = std::fs::canonicalize(out)
        && let Some(input) = inputs
            .iter()
            .find(|i| std::fs::canonicalize(i).is_ok_and(|c| c == target))
    {
        return Err(CliError::Input(format!(
            "{flag} {}: that is an input ({}): writing {what} there would destroy it; name \
             another file",
            out.display(),
            input.as_ref().display()
        )));
    }
    Ok(())
}

/// Writes one line on standard output; see [`CliError::writing`].
pub fn print_line(line: impl fmt::Display) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").map_err(CliError::writing)
}

impl From<sim::scenario::ScenarioError> for CliError {
    fn from(e: sim::scenario::ScenarioError) -> Self {
        CliError::Input(e.to_string())
    }
}

/// An error of a library that says by variant whether it is the input's.
fn by_kind(input: bool, message: String) -> CliError {
    if input {
        CliError::Input(message)
    } else {
        CliError::Other(message)
    }
}

impl From<reports::sweep::SweepError> for CliError {
    fn from(e: reports::sweep::SweepError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

impl From<reports::run::RunError> for CliError {
    fn from(e: reports::run::RunError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

impl From<reports::plot::PlotError> for CliError {
    fn from(e: reports::plot::PlotError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

impl From<reports::report::ReportError> for CliError {
    fn from(e: reports::report::ReportError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

impl From<reports::table::TableError> for CliError {
    fn from(e: reports::table::TableError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

impl From<calibration::calibrate::CalibrateError> for CliError {
    fn from(e: calibration::calibrate::CalibrateError) -> Self {
        by_kind(e.is_input(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_exit_code() {
        assert_eq!(CliError::Input("x".into()).exit_code(), 2);
        assert_eq!(CliError::Other("x".into()).exit_code(), 1);
        assert_eq!(CliError::ClosedOutput.exit_code(), 0);
    }

    #[test]
    fn a_closed_pipe_is_quiet_and_other_write_errors_fail() {
        use std::io::{Error, ErrorKind};
        assert!(matches!(
            CliError::writing(Error::from(ErrorKind::BrokenPipe)),
            CliError::ClosedOutput
        ));
        let e = CliError::writing(Error::other("disk full"));
        assert!(matches!(&e, CliError::Other(m) if m == "writing output: disk full"));
    }

    #[test]
    fn sweep_and_table_errors_keep_their_kind() {
        use reports::sweep::SweepError;
        use reports::table::TableError;
        let write = || TableError::Write {
            path: "t.parquet".into(),
            message: "disk full".into(),
        };
        let read = TableError::Read {
            path: "t.csv".into(),
            message: "no such file".into(),
        };
        assert_eq!(CliError::from(write()).exit_code(), 1);
        assert_eq!(CliError::from(read).exit_code(), 2);
        assert_eq!(CliError::from(SweepError::Table(write())).exit_code(), 1);
        let ck = SweepError::Checkpoint {
            path: "t.parquet.checkpoint".into(),
            message: "read-only".into(),
        };
        assert_eq!(CliError::from(ck).exit_code(), 1);
        assert_eq!(
            CliError::from(SweepError::Shard("0/1".into())).exit_code(),
            2
        );
        let out = SweepError::Output {
            path: "dir".into(),
            message: "is a directory".into(),
        };
        assert_eq!(CliError::from(out).exit_code(), 2);
    }

    #[test]
    fn calibration_errors_keep_their_kind() {
        use calibration::calibrate::CalibrateError;
        let input: CliError = CalibrateError::Input("bad".into()).into();
        assert_eq!(input.exit_code(), 2);
        let failed: CliError = CalibrateError::FittedNetwork("bandwidth 0".into()).into();
        assert_eq!(failed.exit_code(), 1);
        assert_eq!(
            failed.to_string(),
            "the fitted network is out of range: bandwidth 0"
        );
    }
}
