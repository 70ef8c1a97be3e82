//! Scenario files: TOML in, validated [`TrainConfig`]s out.
//!
//! Two stages, as `shared/DESIGN.md` asks:
//! 1. [`raw`]: serde reads the form — unknown keys and wrong types are
//!    errors with the line and column toml reports;
//! 2. [`validate()`]: meaning — presets resolved, units parsed, impossible
//!    values refused; each error names its key, and the key's line is found
//!    in the source.
//!
//! A `[sweep]` table maps dotted keys to lists; the scenario becomes the
//! grid of every combination, keys in sorted order, the last key varying
//! fastest. Every error message reads `FILE:LINE: KEY: what is wrong`.
//!
//! Where things live:
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`ScenarioError`], [`Point`], the entry points (`load_*`, `open_*`) |
//! | [`raw`] | the form: serde types, one per table |
//! | `grid.rs` | [`Grid`]: a `[sweep]` expanded point by point; key lines |
//! | `validate.rs` | [`validate()`]: the cluster, the model, and the small checks |
//! | `strategy.rs` | `[strategy]`: methods, schedule, and keys refused until their issue lands |
//!
//! ```
//! let text = r#"
//! [cluster]
//! nodes = 2
//! network = "eth-10g"
//! [model]
//! preset = "resnet50"
//! gpu = "titan-xp"
//! batch_per_gpu = 32
//! "#;
//! let points = sim::scenario::load_str(text, "s.toml", "s").unwrap();
//! assert_eq!(points[0].config.cluster.gpus(), 2);
//!
//! let bad = text.replace("nodes = 2", "nodes = 0");
//! let e = sim::scenario::load_str(&bad, "s.toml", "s").unwrap_err();
//! assert!(e.to_string().starts_with("s.toml:3: `cluster.nodes`: "), "{e}");
//! ```

mod grid;
pub mod raw;
mod strategy;
mod validate;

pub use grid::Grid;
pub use validate::validate;

use crate::train::TrainConfig;
use grid::{KeyLines, line_of};
use raw::RawScenario;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A scenario problem, located in its file.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The dotted key, when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": ")?;
        if let Some(k) = &self.key {
            write!(f, "`{k}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// One point of a scenario's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The configuration to simulate.
    pub config: TrainConfig,
    /// The swept keys and their values at this point (empty without a sweep).
    pub sweep: BTreeMap<String, toml::Value>,
}

/// A semantic error before it is located: (dotted key, message).
type Invalid = (String, String);

fn invalid(key: &str, msg: impl Into<String>) -> Invalid {
    (key.to_string(), msg.into())
}

/// Reads and validates a scenario file into its grid of points.
///
/// Every point is held in memory; a sweep of very many points should use
/// [`open_file`] and take the points one at a time.
pub fn load_file(path: &Path) -> Result<Vec<Point>, ScenarioError> {
    open_file(path)?.points()
}

/// Validates scenario text; `file` names it in errors, `stem` is the
/// default scenario name.
pub fn load_str(text: &str, file: &str, stem: &str) -> Result<Vec<Point>, ScenarioError> {
    load_str_in(text, file, stem, None)
}

/// As [`load_str`], resolving relative profile paths in `cluster.network`
/// against `dir` (the scenario's directory; the working directory if
/// `None`).
pub fn load_str_in(
    text: &str,
    file: &str,
    stem: &str,
    dir: Option<&Path>,
) -> Result<Vec<Point>, ScenarioError> {
    open_str_in(text, file, stem, dir)?.points()
}

/// Reads a scenario file into its [`Grid`], checking its form but not yet
/// the meaning of each point (see [`Grid::check`]).
pub fn open_file(path: &Path) -> Result<Grid, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        key: None,
        message: format!("cannot read the scenario: {e}"),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    open_str_in(&text, &file, &stem, path.parent())
}

/// Reads scenario text into its [`Grid`] (see [`load_str_in`] for the
/// arguments).
pub fn open_str_in(
    text: &str,
    file: &str,
    stem: &str,
    dir: Option<&Path>,
) -> Result<Grid, ScenarioError> {
    let lines = KeyLines::scan(text);
    let base: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        ScenarioError {
            file: file.into(),
            line,
            key: None,
            message: e.message().trim().to_string(),
        }
    })?;
    Grid::new(file, stem, dir, lines, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario every test starts from: 2 × 4 GPUs, ResNet-50.
    pub(super) const GOOD: &str = r#"
name = "t"
[cluster]
nodes = 2
gpus_per_node = 4
network = "ib-edr-100g"
[model]
preset = "resnet50"
batch_per_gpu = 64
gpu = "titan-xp"
"#;

    /// The error `text` is refused with.
    pub(super) fn err(text: &str) -> ScenarioError {
        load_str(text, "f.toml", "f").unwrap_err()
    }

    #[test]
    fn good_file_loads() {
        let p = load_str(GOOD, "f.toml", "f").unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].config.cluster.gpus(), 8);
    }

    #[test]
    fn unknown_key_names_line() {
        let e = err(&GOOD.replace("gpus_per_node = 4", "gpus_per_node = 4\nspeed = 3"));
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("speed"), "{e}");
    }
}
