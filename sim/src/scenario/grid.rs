//! A scenario's `[sweep]` grid, and where each key sits in the file.
//!
//! This file exists so that a sweep of a billion points never has to be
//! held in memory: a [`Grid`] keeps the scenario once, in its raw form,
//! and builds point i on demand by setting the swept keys (`set_path`)
//! and validating that one scenario. It also owns the map from dotted keys
//! to source lines (`KeyLines`, `line_of`) that every located error
//! uses, since a swept value's error points at its `[sweep]` line rather
//! than at the key it replaces.

use super::raw::RawScenario;
use super::{Invalid, Point, ScenarioError, advice, invalid, validate};
use crate::limits;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A scenario's grid of points, produced one at a time.
///
/// A `[sweep]` of k keys with n₁ … n_k values has n₁·…·n_k points; point i
/// is the mixed-radix decomposition of i over the keys in sorted order, the
/// last key varying fastest. Building point i costs one validation of one
/// scenario, so a sweep never needs to hold the whole grid.
#[derive(Debug, Clone)]
pub struct Grid {
    file: String,
    stem: String,
    dir: Option<PathBuf>,
    lines: KeyLines,
    base: RawScenario,
    /// The scenario without its `[sweep]`, as a table to set keys in.
    base_table: toml::Table,
    keys: Vec<String>,
    values: Vec<Vec<toml::Value>>,
    len: usize,
}

impl Grid {
    /// The grid of a scenario whose form has been read: checks that every
    /// swept key has a value and that the grid is not too large.
    pub(super) fn new(
        file: &str,
        stem: &str,
        dir: Option<&Path>,
        lines: KeyLines,
        base: RawScenario,
    ) -> Result<Grid, ScenarioError> {
        let mut grid = Grid {
            file: file.into(),
            stem: stem.into(),
            dir: dir.map(Path::to_path_buf),
            lines,
            keys: base.sweep.keys().cloned().collect(),
            values: base.sweep.values().cloned().collect(),
            len: 1,
            base_table: toml::Table::new(),
            base,
        };
        for (k, v) in grid.keys.iter().zip(&grid.values) {
            if v.is_empty() {
                return Err(grid.locate(invalid(k, "a sweep needs at least one value"), true));
            }
        }
        let mut len: usize = 1;
        for (k, v) in grid.keys.iter().zip(&grid.values) {
            len = len
                .checked_mul(v.len())
                .filter(|&n| n as u64 <= limits::MAX_SWEEP_POINTS)
                .ok_or_else(|| {
                    grid.locate(
                        invalid(
                            k,
                            format!(
                                "the sweep grid has more than {} points; split it into several scenarios",
                                limits::MAX_SWEEP_POINTS
                            ),
                        ),
                        true,
                    )
                })?;
        }
        grid.len = len;
        if !grid.keys.is_empty() {
            let mut t = toml::Table::try_from(&grid.base).expect("raw scenarios serialise");
            t.remove("sweep");
            grid.base_table = t;
        }
        // the same value twice gives two identical points, which tables,
        // plots and reports cannot tell apart (a key that does not fit the
        // scenario is left to the points, which say why)
        for (k, v) in grid.keys.iter().zip(&grid.values) {
            for (i, a) in v.iter().enumerate() {
                let Some(j) = v[..i].iter().position(|b| same_value(a, b)) else {
                    continue;
                };
                let mut t = grid.base_table.clone();
                let fits = set_path(&mut t, k, a.clone()).is_ok()
                    && toml::Value::Table(t).try_into::<RawScenario>().is_ok();
                if fits {
                    return Err(grid.locate(
                        invalid(
                            k,
                            format!(
                                "lists {} and {a} (entries {} and {}), the same value twice: each point of a sweep must differ; remove one",
                                v[j],
                                j + 1,
                                i + 1
                            ),
                        ),
                        true,
                    ));
                }
            }
        }
        Ok(grid)
    }

    /// Points in the grid (1 without a sweep).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a grid has at least one point.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The swept keys, sorted.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The values a swept key takes (in the order of the file).
    pub fn values(&self, key: &str) -> Option<&[toml::Value]> {
        let i = self.keys.iter().position(|k| k == key)?;
        Some(&self.values[i])
    }

    /// The swept keys and their values at point `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn swept(&self, i: usize) -> BTreeMap<String, toml::Value> {
        assert!(i < self.len, "point {i} of a grid of {}", self.len);
        let mut rem = i;
        let mut out = BTreeMap::new();
        for (k, v) in self.keys.iter().zip(&self.values).rev() {
            out.insert(k.clone(), v[rem % v.len()].clone());
            rem /= v.len();
        }
        out
    }

    /// An error about the swept key `key`, located at its line in the
    /// file's `[sweep]` (for commands that take a sweep of some keys only,
    /// such as `dtsim advise`).
    pub fn sweep_error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        self.locate((key.to_string(), message.into()), true)
    }

    fn locate(&self, (key, message): Invalid, swept: bool) -> ScenarioError {
        ScenarioError {
            file: self.file.clone(),
            line: if swept {
                self.lines.get(&format!("sweep.{key}"))
            } else {
                self.lines.get(&key)
            },
            key: Some(key),
            message,
        }
    }

    /// Validates and returns point `i`.
    ///
    /// # Panics
    /// If `i` is not below [`Grid::len`].
    pub fn point(&self, i: usize) -> Result<Point, ScenarioError> {
        if self.keys.is_empty() {
            assert_eq!(i, 0, "a scenario without a sweep has one point");
        }
        self.point_with(self.swept(i))
    }

    /// Validates the scenario with the dotted keys of `sweep` set to its
    /// values (a point of the grid, or any other setting of keys, as
    /// measured runs give them); an error in one of these keys names it,
    /// located at its `[sweep]` line when the grid sweeps it.
    pub fn point_with(&self, sweep: BTreeMap<String, toml::Value>) -> Result<Point, ScenarioError> {
        let dir = self.dir.as_deref();
        if sweep.is_empty() {
            let cfg = validate(&self.base, &self.stem, dir).map_err(|e| self.locate(e, false))?;
            let warnings = advice(&self.base, &cfg)
                .into_iter()
                .map(|w| self.locate(w, false))
                .collect();
            return Ok(Point {
                config: cfg,
                sweep: BTreeMap::new(),
                warnings,
            });
        }
        // the scenario without its sweep, as a table to set keys in
        let unset = || {
            if self.keys.is_empty() {
                toml::Table::try_from(&self.base).expect("raw scenarios serialise")
            } else {
                self.base_table.clone()
            }
        };
        let mut table = unset();
        for (k, v) in &sweep {
            set_path(&mut table, k, v.clone()).map_err(|m| self.locate(invalid(k, m), true))?;
        }
        let mut raw: RawScenario =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    // the key the message names, else the one whose value
                    // alone does not fit (found again, on this error path only)
                    let fits_alone = |k: &String| {
                        let mut t = unset();
                        set_path(&mut t, k, sweep[k].clone()).is_ok()
                            && toml::Value::Table(t).try_into::<RawScenario>().is_ok()
                    };
                    let keys: Vec<&String> = sweep.keys().collect();
                    let key = keys
                        .iter()
                        .find(|k| e.message().contains(k.rsplit('.').next().unwrap_or(k)))
                        .or_else(|| keys.iter().find(|k| !fits_alone(k)))
                        .unwrap_or(&keys[0]);
                    self.locate(
                        invalid(
                            key,
                            format!(
                                "swept value does not fit: {}",
                                super::user_words(e.message())
                            ),
                        ),
                        true,
                    )
                })?;
        if ["strategy.dense", "strategy.sparse", "strategy.schedule"]
            .iter()
            .any(|k| sweep.contains_key(*k))
        {
            super::strategy::drop_other_methods_keys(&mut raw, &|k| sweep.contains_key(k));
        }
        // the machines' cores at a point of a sweep over the machines
        // that has none
        if sweep.contains_key("strategy.ps_machines")
            && raw.strategy.ps_machines == Some(0)
            && !sweep.contains_key("strategy.ps_machine_cores")
        {
            raw.strategy.ps_machine_cores = None;
        }
        let cfg = validate(&raw, &self.stem, dir).map_err(|(k, m)| {
            if sweep.contains_key(&k) {
                return self.locate((k, m), true);
            }
            // a key of the file refused beside a swept key of its table
            // (a table's `density` beside a swept `tokens_per_batch`):
            // the sweep's line is where the point went wrong (a review:
            // only the file's line was named)
            let table = |key: &str| key.rsplit_once('.').map(|(t, _)| t.to_string());
            // (the file's own error, at every point, stays the file's: the
            // file is validated again for it, on this error path only)
            let own = || validate(&self.base, &self.stem, dir).is_err_and(|(b, _)| b == k);
            match sweep
                .keys()
                .find(|sk| table(sk).is_some() && table(sk) == table(&k))
                .filter(|_| !own())
            {
                Some(sk) => self.locate(
                    (
                        sk.clone(),
                        format!("at this point of the sweep, `{k}` of the file: {m}"),
                    ),
                    true,
                ),
                None => self.locate((k, m), false),
            }
        })?;
        let warnings = advice(&raw, &cfg)
            .into_iter()
            .map(|(k, m)| {
                let swept = sweep.contains_key(&k);
                self.locate((k, m), swept)
            })
            .collect();
        Ok(Point {
            config: cfg,
            sweep,
            warnings,
        })
    }

    /// Every point, in order, held in memory.
    pub fn points(&self) -> Result<Vec<Point>, ScenarioError> {
        (0..self.len).map(|i| self.point(i)).collect()
    }

    /// Validates every point without keeping any, so that a bad value is
    /// reported before a long run starts; returns the points' warnings
    /// (settings that are probably a mistake), each once, in order.
    pub fn check(&self) -> Result<Vec<ScenarioError>, ScenarioError> {
        let mut warnings: Vec<ScenarioError> = Vec::new();
        for i in 0..self.len {
            for w in self.point(i)?.warnings {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        Ok(warnings)
    }
}

/// Whether two swept values are the same point: equal, the same number
/// written as an integer and as a float (`8` and `8.0`), or the same
/// quantity written two ways (`"25Gbps"` and `"3.125GB/s"`, `"1us"` and
/// `"1000ns"`, `"1MiB"` and `1048576`).
fn same_value(a: &toml::Value, b: &toml::Value) -> bool {
    use crate::units::{parse_bandwidth, parse_bytes, parse_seconds};
    use toml::Value::{Float, Integer, String as Text};
    match (a, b) {
        (Integer(x), Float(y)) | (Float(y), Integer(x)) => *x as f64 == *y,
        (Text(x), Text(y)) if x != y => {
            // equal to the rounding of their units (1000 ns is 1.0000000000000002 µs)
            let same = |p: &dyn Fn(&str) -> Option<f64>| matches!((p(x), p(y)), (Some(u), Some(v)) if (u - v).abs() <= 1e-12 * u.abs().max(v.abs()));
            same(&|t| parse_bandwidth(t).ok())
                || same(&|t| parse_seconds(t).ok())
                || same(&|t| parse_bytes(t).ok().map(|b| b as f64))
        }
        (Text(x), Integer(n)) | (Integer(n), Text(x)) => {
            parse_bytes(x).is_ok_and(|b| *n >= 0 && b == *n as u64)
        }
        _ => a == b,
    }
}

/// Sets a dotted key in a TOML table, creating tables on the way; a part
/// `name[i]` steps into the i-th table of the array of tables `name`
/// (`model.layers[0].embedding.density`), which must exist.
fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty key")?;
    let mut t = table;
    // inside an entry of an array of tables (a custom layer), the tables
    // a key steps into are the file's: a sweep does not write one (a layer
    // without a table would get one with the swept key alone)
    let mut entry: Option<String> = None;
    let mut walked: Vec<&str> = Vec::new();
    for p in parts {
        walked.push(p);
        if let Some((name, index)) = p.strip_suffix(']').and_then(|q| q.split_once('[')) {
            let i: usize = index
                .parse()
                .map_err(|_| format!("`{p}`: the index in brackets must be a whole number"))?;
            let array = t
                .get_mut(name)
                .and_then(toml::Value::as_array_mut)
                .ok_or_else(|| {
                    format!("`{name}` is not an array of tables, so `{key}` cannot be swept")
                })?;
            let n = array.len();
            t = array
                .get_mut(i)
                .ok_or_else(|| {
                    let entries = if n == 1 { "entry" } else { "entries" };
                    format!("`{name}` has {n} {entries} (from [0]), so `{key}` cannot be swept")
                })?
                .as_table_mut()
                .ok_or_else(|| format!("`{p}` is not a table, so `{key}` cannot be swept"))?;
            entry = Some(walked.join("."));
            continue;
        }
        if let Some(e) = entry.as_ref().filter(|_| !t.contains_key(p)) {
            return Err(format!(
                "`{e}` has no `{p}` table in the file, so `{key}` cannot be swept: give the table under that entry, with its other keys, and sweep its key"
            ));
        }
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is not a table, so `{key}` cannot be swept"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// The 1-based line of byte `offset` in `text` (a scenario's, a
/// profile's).
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Lines of the keys and tables of a TOML file, by dotted path
/// (`cluster.nodes`, `model.layers[2].params`, `sweep.cluster.nodes`).
///
/// A light scan that understands table headers, arrays of tables and
/// `key = value` lines, which is how scenario files are written; keys it
/// cannot place fall back to their table's header line.
#[derive(Debug, Clone)]
pub(super) struct KeyLines {
    /// Each dotted key (or table) at the line it first appears on.
    first: BTreeMap<String, usize>,
    /// The dotted key (or table) written on each line, repeats included.
    on: BTreeMap<usize, String>,
}

/// The square brackets `line` opens less those it closes, outside
/// strings and comments.
fn brackets(line: &str) -> i64 {
    let (mut n, mut quote, mut escaped) = (0i64, None::<char>, false);
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' => break,
                '[' => n += 1,
                ']' => n -= 1,
                _ => {}
            },
        }
    }
    n
}

impl KeyLines {
    /// Scans `text` once.
    pub(super) fn scan(text: &str) -> KeyLines {
        let mut map = BTreeMap::new();
        let mut on = BTreeMap::new();
        let mut table = String::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        // open brackets of a value that runs over several lines (an array
        // of arrays): its lines are neither keys nor table headers
        let mut open = 0i64;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if open > 0 {
                open = (open + brackets(line)).max(0);
                continue;
            }
            if let Some(h) = line.strip_prefix("[[") {
                let name = h.split("]]").next().unwrap_or("").trim().to_string();
                let c = counts.entry(name.clone()).or_insert(0);
                // nested arrays of tables are not used by scenarios
                table = format!("{name}[{c}]");
                *c += 1;
                map.entry(table.clone()).or_insert(i + 1);
                on.insert(i + 1, table.clone());
            } else if let Some(h) = line.strip_prefix('[') {
                let name = h.split(']').next().unwrap_or("").trim();
                // [model.layers.embedding] belongs to the latest layer
                table = match counts
                    .iter()
                    .find(|(k, _)| name.starts_with(&format!("{k}.")))
                {
                    Some((k, c)) => format!("{k}[{}]{}", c - 1, &name[k.len()..]),
                    None => name.to_string(),
                };
                map.entry(table.clone()).or_insert(i + 1);
                on.insert(i + 1, table.clone());
            } else if let Some((k, v)) = line.split_once('=') {
                let k = k.trim().trim_matches('"').trim_matches('\'');
                if k.is_empty() || k.starts_with('#') {
                    continue;
                }
                open = brackets(v).max(0);
                let full = if table.is_empty() {
                    k.to_string()
                } else {
                    format!("{table}.{k}")
                };
                map.entry(full.clone()).or_insert(i + 1);
                on.insert(i + 1, full);
            }
        }
        KeyLines { first: map, on }
    }

    /// The dotted key (or the table) written on 1-based `line`, if any; a
    /// key given twice is named on either line.
    pub(super) fn key_on(&self, line: usize) -> Option<String> {
        self.on.get(&line).cloned()
    }

    /// The line of `key`, or of the nearest enclosing table that appears.
    fn get(&self, key: &str) -> Option<usize> {
        let mut k = key;
        loop {
            if let Some(&l) = self.first.get(k) {
                return Some(l);
            }
            match k.rfind(['.', '[']) {
                Some(i) => k = &k[..i],
                None => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::load_str;
    use super::super::tests::{GOOD, err};

    /// A value over several lines whose lines start with `[` (a sweep
    /// over `mp_splits`, an array of arrays) is not a table header: the
    /// keys after it are located on their own lines, and the sweep's.
    #[test]
    fn multi_line_arrays_are_not_table_headers() {
        let text = format!(
            "{GOOD}[strategy]\nmp_stages = 2\n[sweep]\n\"strategy.mp_splits\" = [\n  [\"layer4.0\"], # a split\n  [\"layer2.0\"],\n]\n\"strategy.schedule\" = [\n  \"fifo\",\n  \"bogus\",\n]\n"
        );
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("strategy.schedule"), "{e}");
        let line = text
            .lines()
            .position(|l| l.starts_with("\"strategy.schedule\""))
            .unwrap()
            + 1;
        assert_eq!(e.line, Some(line), "{e}");
        let lines = super::KeyLines::scan(&text);
        assert!(
            lines.key_on(line - 3).is_none(),
            "{:?}",
            lines.key_on(line - 3)
        );
        assert_eq!(super::brackets("a = [[1, 2], [3,"), 2);
        assert_eq!(super::brackets("x = \"[\\\"]\" # ]"), 0);
    }

    #[test]
    fn sweep_expands_last_key_fastest() {
        let text = format!(
            "{GOOD}\n[sweep]\n\"cluster.nodes\" = [1, 2]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n"
        );
        let p = load_str(&text, "f.toml", "f").unwrap();
        let got: Vec<(u32, &str)> = p
            .iter()
            .map(|p| (p.config.cluster.nodes, p.config.strategy.schedule.name()))
            .collect();
        assert_eq!(
            got,
            [(1, "fifo"), (1, "priority"), (2, "fifo"), (2, "priority")]
        );
    }

    #[test]
    fn repeated_sweep_values_are_refused_on_their_line() {
        for (key, values, shown) in [
            (
                "cluster.nodes",
                "[1, 2, 1]",
                "lists 1 and 1 (entries 1 and 3)",
            ),
            (
                "cluster.nodes",
                "[2, 2.0]",
                "lists 2 and 2.0 (entries 1 and 2)",
            ),
            (
                "strategy.schedule",
                "[\"fifo\", \"fifo\"]",
                "lists \"fifo\" and \"fifo\"",
            ),
            (
                "cluster.bandwidth",
                "[\"25Gbps\", \"3.125GB/s\"]",
                "(entries 1 and 2)",
            ),
            (
                "cluster.bandwidth",
                "[\"25Gbps\", \"25 Gbps\"]",
                "(entries 1 and 2)",
            ),
            (
                "cluster.latency",
                "[\"2us\", \"1us\", \"1000ns\"]",
                "(entries 2 and 3)",
            ),
            (
                "strategy.fusion",
                "[\"1MiB\", 1048576]",
                "(entries 1 and 2)",
            ),
        ] {
            let text = format!("{GOOD}\n[sweep]\n\"{key}\" = {values}\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(e.line, Some(text.lines().count()), "{e}");
            assert!(e.message.contains(shown), "{e}");
            assert!(e.message.contains("the same value twice"), "{e}");
        }
        // different quantities, and an unknown key's own message first
        let text = format!("{GOOD}\n[sweep]\n\"cluster.bandwidth\" = [\"25Gbps\", \"25GB/s\"]\n");
        assert!(crate::scenario::load_str(&text, "f.toml", "f").is_ok());
        let e = err(&format!("{GOOD}\n[sweep]\n\"strategy.bogus\" = [1, 1]\n"));
        assert!(e.message.contains("unknown key `bogus`"), "{e}");
    }

    #[test]
    fn bad_sweep_value_points_at_sweep_line() {
        let text = format!("{GOOD}\n[sweep]\n\"cluster.nodes\" = [1, 0]\n");
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"));
        assert_eq!(
            e.line,
            Some(
                text.lines()
                    .position(|l| l.starts_with("\"cluster.nodes\""))
                    .unwrap()
                    + 1
            )
        );
    }

    /// A key of the file refused only beside a swept key of its table is
    /// located at the sweep's line, naming both (a review: a table's
    /// `density` beside a swept `tokens_per_batch` named the file's line
    /// alone); the file's own error stays at its line.
    #[test]
    fn a_file_key_refused_beside_a_swept_one_points_at_the_sweep() {
        let text = "name = \"t\"\n[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\ngpu = \"h200\"\nbatch_per_gpu = 8\n[[model.layers]]\nparams = 1000\nforward = \"1ms\"\nbackward = \"1ms\"\n[model.layers.embedding]\nvocab = 1000\ndim = 4\ndensity = 0.1\n[strategy]\nsparse = \"ps\"\n[sweep]\n\"model.layers[0].embedding.tokens_per_batch\" = [100]\n";
        let e = err(text);
        assert_eq!(
            e.key.as_deref(),
            Some("model.layers[0].embedding.tokens_per_batch")
        );
        assert_eq!(e.line, Some(19), "{e}");
        assert!(
            e.message
                .starts_with("at this point of the sweep, `model.layers[0].embedding.density` of the file: give either"),
            "{e}"
        );
        let own = format!(
            "{}\n[sweep]\n\"cluster.nodes\" = [1, 2]\n",
            GOOD.replace("ib-edr-100g", "eth-10x")
        );
        let e = err(&own);
        assert_eq!(e.key.as_deref(), Some("cluster.network"), "{e}");
        assert!(e.message.starts_with("unknown network"), "{e}");
    }

    /// A key may step into an array of tables by index: a custom layer's
    /// embedding density is sweepable; an index past the end, or into
    /// something that is not an array of tables, is refused on the sweep's
    /// line.
    #[test]
    fn sweeps_index_arrays_of_tables() {
        let custom = "[cluster]\nnodes = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\nname = \"emb\"\nparams = 0\nforward = \"1ms\"\nbackward = \"1ms\"\n[model.layers.embedding]\nvocab = 1000\ndim = 8\ndensity = 0.5\n[[model.layers]]\nname = \"fc\"\nparams = 10\nforward = \"1ms\"\nbackward = \"2ms\"\n";
        let text = format!(
            "{custom}[sweep]\n\"model.layers[0].embedding.density\" = [0.1, 0.2]\n\"model.layers[1].params\" = [10, 20]\n"
        );
        let p = load_str(&text, "f.toml", "f").unwrap();
        let got: Vec<(f64, u64)> = p
            .iter()
            .map(|p| {
                let l = &p.config.model.layers;
                (l[0].embedding.as_ref().unwrap().density(), l[1].params)
            })
            .collect();
        assert_eq!(got, [(0.1, 10), (0.1, 20), (0.2, 10), (0.2, 20)]);
        for (key, what) in [
            ("model.layers[2].params", "has 2 entries"),
            ("model.layers[x].params", "whole number"),
            ("cluster[0].nodes", "not an array of tables"),
            // layer 1 has no table: not one made of the swept key alone
            (
                "model.layers[1].embedding.density",
                "`model.layers[1]` has no `embedding` table in the file",
            ),
        ] {
            let text = format!("{custom}[sweep]\n\"{key}\" = [1, 2]\n");
            let e = err(&text);
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert!(e.message.contains(what), "{e}");
            let line = text.lines().position(|l| l.contains(key)).unwrap() + 1;
            assert_eq!(e.line, Some(line), "{e}");
        }
    }

    /// A swept value of the wrong type is blamed on its own key, even when
    /// the parser's message names no field and another key comes first.
    #[test]
    fn a_swept_value_of_the_wrong_type_blames_its_key() {
        let text = format!(
            "{GOOD}\n[sweep]\n\"cluster.network\" = [\"eth-10g\", \"ib-edr-100g\"]\n\"cluster.nodes\" = [1, \"x\"]\n"
        );
        let e = err(&text);
        assert_eq!(e.key.as_deref(), Some("cluster.nodes"), "{e}");
        let line = text
            .lines()
            .position(|l| l.starts_with("\"cluster.nodes\""))
            .unwrap()
            + 1;
        assert_eq!(e.line, Some(line));
    }
}
