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
pub use validate::{advice, validate};

use crate::train::TrainConfig;
use grid::KeyLines;
pub(crate) use grid::line_of;
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
    /// Settings that are valid but probably a mistake, located like errors
    /// (see [`advice`]); the command line prints them as warnings.
    pub warnings: Vec<ScenarioError>,
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
    let whole = |message: String| ScenarioError {
        file: file.clone(),
        line: None,
        key: None,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| whole(format!("cannot read the scenario: {e}")))?;
    let text = match String::from_utf8(bytes) {
        Ok(t) if !t.contains('\0') => t,
        _ => {
            return Err(whole(
                "is not a text file; a scenario is TOML text (docs/scenarios.md)".into(),
            ));
        }
    };
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
    let blank = |l: &str| l.trim().is_empty() || l.trim_start().starts_with('#');
    if text.lines().all(blank) {
        return Err(ScenarioError {
            file: file.into(),
            line: None,
            key: None,
            message: "is empty; a scenario needs at least a [cluster] and a [model] table (docs/scenarios.md)".into(),
        });
    }
    let lines = KeyLines::scan(text);
    let base: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let mut message = user_words(e.message());
        let key = line.and_then(|l| lines.key_on(l));
        // the reader names no key: a repeated table header says which
        // table; an inline table, that a key of it; else the line's key
        if message == "duplicate key"
            && let Some(t) = line.and_then(|l| text.lines().nth(l - 1)).map(str::trim)
        {
            let header = t.split('#').next().unwrap_or(t).trim();
            message = if t.starts_with('[')
                && !t.starts_with("[[")
                && header.ends_with(']')
                && !header.contains([',', '"', '\''])
            {
                format!("the table {header} is given twice; give its keys under one {header}")
            } else if t.contains('{') {
                "a key of this inline table is given twice; keep one".into()
            } else {
                "is given twice in its table; keep one".into()
            };
        }
        if let Some(better) = line.and_then(|l| layout_hint(text, l, key.as_deref())) {
            message = better;
        }
        ScenarioError {
            file: file.into(),
            line,
            key,
            message,
        }
    })?;
    Grid::new(file, stem, dir, lines, base)
}

/// A message of the TOML reader in the user's words: an unknown key with
/// the nearest known one, and types as scenarios spell them (a table, a
/// list, a whole number) rather than the reader's internal type names.
pub(crate) fn user_words(message: &str) -> String {
    let m = message.trim();
    if let Some(rest) = m.strip_prefix("unknown field `")
        && let Some((name, expected)) = rest.split_once('`')
    {
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        return crate::names::unknown("key", name, &known);
    }
    if let Some(rest) = m.strip_prefix("invalid type: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        let found = found
            .replace("floating point", "the number")
            .replace("integer", "the whole number")
            .replace("boolean", "the boolean")
            .replace("string", "the text");
        let found = match found.as_str() {
            "map" => "a table".to_string(),
            "sequence" => "a list".to_string(),
            _ => found,
        };
        // a whole number beyond 64 bits reaches the reader as an i128
        if let Some(n) = found.strip_suffix(" as i128") {
            return format!(
                "{n} is too large (a whole number here is at most {}); expected {}",
                i64::MAX,
                type_words(expected)
            );
        }
        return format!("expected {}, got {found}", type_words(expected));
    }
    type_words(m)
}

/// What a reader's error at line `l` (1-based) means where the file's
/// layout, not a value, is at fault (a review: each read as a type error
/// of another key):
/// * a `[sweep]` key written as a bare dotted path (`cluster.nodes =
///   [1, 2]`), which TOML reads as a table `cluster` holding `nodes`;
/// * `[[model.layers.embedding]]`, a list of tables where a layer's
///   embedding is one table;
/// * `[model.layers.embedding]` before any `[[model.layers]]`, which
///   makes the first layer, so that the next `[[model.layers]]` repeats
///   it.
fn layout_hint(text: &str, l: usize, key: Option<&str>) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    // a line without its comment, and without spaces (`[[ model.layers ]]`)
    let uncommented = |t: &'_ str| t.split('#').next().unwrap_or_default().trim().to_string();
    let compact = |t: &str| uncommented(t).split_whitespace().collect::<String>();
    let here = uncommented(lines.get(l - 1)?);
    if let Some(path) = key.and_then(|k| k.strip_prefix("sweep."))
        && path.contains('.')
        && !here.starts_with('"')
        && !here.starts_with('\'')
    {
        return Some(format!(
            "a [sweep] key is a dotted path in quotes: write `\"{path}\" = [...]` (unquoted, TOML reads `{path}` as tables inside [sweep])"
        ));
    }
    if compact(&here) == "[[model.layers.embedding]]" {
        return Some(
            "a layer's embedding is one table: write `[model.layers.embedding]` (single brackets) after its `[[model.layers]]`".into(),
        );
    }
    if compact(&here) == "[[model.layers]]" {
        let before = &lines[..l - 1];
        let first_layer = before.iter().position(|t| compact(t) == "[[model.layers]]");
        let embedding = before
            .iter()
            .position(|t| compact(t) == "[model.layers.embedding]");
        if let Some(e) = embedding
            && first_layer.is_none_or(|f| e < f)
        {
            return Some(format!(
                "the `[model.layers.embedding]` of line {} comes before any `[[model.layers]]`: a layer's embedding follows its `[[model.layers]]` entry",
                e + 1
            ));
        }
    }
    None
}

/// The reader's names of types in scenario words.
fn type_words(text: &str) -> String {
    let mut out = text
        .replace("a sequence", "a list")
        .replace("a map", "a table")
        .replace("i64", "a whole number")
        .replace("f64", "a number");
    // `struct RawCluster` and the like: serde's names for our tables
    while let Some(i) = out.find("struct Raw") {
        let end = out[i + "struct ".len()..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(out.len(), |j| i + "struct ".len() + j);
        out.replace_range(i..end, "a table");
    }
    out
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

    /// Layout slips are said as such, at their line (a review: each read
    /// as a type error of another key).
    #[test]
    fn layout_slips_say_what_to_write() {
        let base = "name = \"t\"\n[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\ngpu = \"h200\"\nbatch_per_gpu = 8\n";
        let layer = "[[model.layers]]\nparams = 1000\nforward = \"1ms\"\nbackward = \"1ms\"\n";
        let table = "vocab = 10\ndim = 4\ndensity = 0.1\n";
        for (text, line, says) in [
            (
                format!("{base}{layer}[sweep]\ncluster.nodes = [1, 2]\n"),
                13,
                "a [sweep] key is a dotted path in quotes: write `\"cluster.nodes\" = [...]`",
            ),
            (
                format!("{base}{layer}[[model.layers.embedding]]\n{table}"),
                12,
                "write `[model.layers.embedding]` (single brackets)",
            ),
            (
                format!("{base}[model.layers.embedding]\n{table}{layer}"),
                12,
                "the `[model.layers.embedding]` of line 8 comes before any `[[model.layers]]`",
            ),
        ] {
            let e = err(&text);
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        // a quoted sweep key's own error is the reader's
        let e = err(&format!("{base}{layer}[sweep]\n\"cluster.nodes\" = 3\n"));
        assert!(!e.message.contains("in quotes"), "{e}");
    }

    #[test]
    fn unknown_key_names_line() {
        let e = err(&GOOD.replace("gpus_per_node = 4", "gpus_per_node = 4\nspeed = 3"));
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("speed"), "{e}");
    }

    /// Messages of the form layer name the key and line, in the user's
    /// words: no type of ours, a suggestion for a typo.
    #[test]
    fn form_errors_name_the_key_in_the_users_words() {
        // (change to GOOD, line, key, message); GOOD opens with a blank line
        let cases = [
            (
                ("nodes = 2", "nodes = 4.5"),
                4,
                "cluster.nodes",
                "must be a whole number, got 4.5",
            ),
            (
                ("nodes = 2", "nodes = 1e20"),
                4,
                "cluster.nodes",
                "1e20 is too large (a whole number here is at most 9223372036854775807)",
            ),
            (
                ("nodes = 2", "nodes = \"two\""),
                4,
                "cluster.nodes",
                "expected a whole number, got the text \"two\"",
            ),
            (
                ("gpus_per_node = 4", "gpus_per_nod = 4"),
                5,
                "cluster.gpus_per_nod",
                "unknown key `gpus_per_nod` (did you mean `gpus_per_node`?); known: nodes, gpus_per_node, ",
            ),
            (
                ("[model]", "[modle]"),
                7,
                "modle",
                "unknown key `modle` (did you mean `model`?); known: name, seed, ",
            ),
            (
                ("[model]", "[model]\nlayers = 3"),
                8,
                "model.layers",
                "expected a list, got the whole number `3`",
            ),
            (
                ("nodes = 2", "nodes = 99999999999999999999"),
                4,
                "cluster.nodes",
                "the whole number `99999999999999999999` is too large (a whole number here is at most 9223372036854775807)",
            ),
        ];
        for ((from, to), line, key, message) in cases {
            let e = err(&GOOD.replace(from, to));
            assert_eq!((e.line, e.key.as_deref()), (Some(line), Some(key)), "{e}");
            assert!(e.message.starts_with(message), "{to}: {e}");
            assert!(!e.message.contains("Raw"), "{e}");
        }
        let e = err("cluster = 3\n");
        assert_eq!(
            e.to_string(),
            "f.toml:1: `cluster`: expected a table, got the whole number `3`"
        );
    }

    /// A whole number may be written as a float (1.3e9); its value is kept.
    #[test]
    fn an_exact_integer_written_as_a_float_is_accepted() {
        let p = load_str(
            &GOOD
                .replace("nodes = 2", "nodes = 2.0")
                .replace("batch_per_gpu = 64", "batch_per_gpu = 6.4e1"),
            "f.toml",
            "f",
        )
        .unwrap();
        assert_eq!(p[0].config.cluster.nodes, 2);
        assert_eq!(p[0].config.model.batch_per_gpu, 64);
        let swept = format!("{GOOD}[sweep]\n\"cluster.nodes\" = [1.0, 4e0, 2.5]\n");
        let e = load_str(&swept, "f.toml", "f").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
        assert!(
            e.message.ends_with("must be a whole number, got 2.5"),
            "{e}"
        );
    }

    /// An empty file, or one of comments, says so; so does a binary one.
    #[test]
    fn empty_and_binary_files_say_what_they_are() {
        let e = err("  \n# nothing yet\n");
        assert_eq!(
            e.to_string(),
            "f.toml: is empty; a scenario needs at least a [cluster] and a [model] table (docs/scenarios.md)"
        );
        let dir = std::env::temp_dir().join(format!("dtsim-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in [
            ("bin.toml", &b"\x00\x01\xff"[..]),
            ("latin1.toml", b"name = \"caf\xe9\""),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = open_file(&p).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: is not a text file; a scenario is TOML text (docs/scenarios.md)",
                    p.display()
                )
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
