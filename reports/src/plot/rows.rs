//! A table's rows as a chart needs them: a column's values as keys
//! (numbers or text), the categories of an x or series column, the rows
//! with values in every plotted column, and the error for two rows that
//! would be drawn at one place. Shared by the line, bar and stacked
//! charts, so that they read a table alike and refuse duplicates with one
//! message.

use super::axes::value_label;
use super::{Kind, PlotError, PlotSpec};
use crate::columns::{ColumnError, column, numbers, texts};
use polars::prelude::DataFrame;
use std::collections::BTreeMap;

/// A column's values as category keys.
pub(super) enum Keys {
    Numbers(Vec<Option<f64>>),
    Texts(Vec<Option<String>>),
}

/// A column's values as keys: numbers when the column is numeric, else
/// text.
pub(super) fn keys(df: &DataFrame, name: &str) -> Result<Keys, ColumnError> {
    let col = column(df, name)?;
    if col.dtype().is_primitive_numeric() {
        return numbers(df, name).map(Keys::Numbers);
    }
    texts(df, name).map(Keys::Texts)
}

impl Keys {
    /// Whether row `row` has a value.
    pub(super) fn is_valid(&self, row: usize) -> bool {
        match self {
            Keys::Numbers(v) => v[row].is_some(),
            Keys::Texts(v) => v[row].is_some(),
        }
    }
}

/// The categories of `keys` over `rows`: labels (numbers ascending, texts
/// in order of first appearance) and each row's category index.
pub(super) fn categories(keys: &Keys, rows: &[usize]) -> (Vec<String>, BTreeMap<usize, usize>) {
    let mut index = BTreeMap::new();
    let labels = match keys {
        Keys::Numbers(values) => {
            let mut distinct: Vec<f64> = rows.iter().filter_map(|&r| values[r]).collect();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            for &r in rows {
                if let Some(v) = values[r] {
                    let i = distinct.partition_point(|d| d.total_cmp(&v).is_lt());
                    index.insert(r, i);
                }
            }
            distinct.into_iter().map(value_label).collect()
        }
        Keys::Texts(values) => {
            let mut labels: Vec<String> = Vec::new();
            let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
            for &r in rows {
                if let Some(v) = &values[r] {
                    let next = labels.len();
                    let i = *seen.entry(v.as_str()).or_insert(next);
                    if i == next {
                        labels.push(v.clone());
                    }
                    index.insert(r, i);
                }
            }
            labels
        }
    };
    (labels, index)
}

/// The error for rows `a` and `b`, which would be drawn at the same place
/// since they agree on `key` (the x and series columns and values). It
/// names the other columns in which they differ, the plotted ones aside.
pub(super) fn duplicate(
    df: &DataFrame,
    spec: &PlotSpec,
    a: usize,
    b: usize,
    key: &[(&str, String)],
) -> PlotError {
    let same = key
        .iter()
        .map(|(c, v)| format!("{c} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let differ: Vec<String> = df
        .columns()
        .iter()
        .filter(|c| !spec.y.iter().any(|y| y == c.name().as_str()))
        // a sweep's row number always differs, and says nothing
        .filter(|c| !matches!(c.name().as_str(), "point" | "grid_points"))
        .filter(|c| c.get(a).ok() != c.get(b).ok())
        .map(|c| c.name().to_string())
        .collect();
    let how = match differ.len() {
        0 => String::new(),
        n if n <= 4 => format!(" but differ in {}", differ.join(", ")),
        _ => format!(" but differ in {}, …", differ[..4].join(", ")),
    };
    let keys = key
        .iter()
        .map(|(c, _)| *c)
        .collect::<Vec<_>>()
        .join(" and ");
    // a swept key (a dotted name) before a result column it moves
    let pick = differ.iter().find(|c| c.contains('.')).or(differ.first());
    let series = match (&spec.series, pick) {
        (None, Some(c)) if spec.kind != Kind::Stacked => {
            format!(", or make {c} the series")
        }
        _ => String::new(),
    };
    PlotError::BadSpec(format!(
        "rows {} and {} both have {same}{how}: filter the table to one row per {keys}{series} (dtsim plot --where COL=VALUE)",
        a + 1,
        b + 1,
    ))
}

/// The series of the rows: labels and each valid row's index. Without a
/// series column, every row is in one series named after `y`.
pub(super) fn series_of(
    df: &DataFrame,
    spec: &PlotSpec,
    rows: &[usize],
) -> Result<(Vec<String>, BTreeMap<usize, usize>), PlotError> {
    match &spec.series {
        Some(name) => Ok(categories(&keys(df, name)?, rows)),
        None => Ok((
            vec![spec.y[0].clone()],
            rows.iter().map(|&r| (r, 0)).collect(),
        )),
    }
}

/// The rows that pass every check and have a series value (when there
/// is a series); none is [`PlotError::Empty`].
pub(super) fn valid_rows(
    df: &DataFrame,
    spec: &PlotSpec,
    checks: &[&dyn Fn(usize) -> bool],
) -> Result<Vec<usize>, PlotError> {
    let series = match &spec.series {
        Some(name) => Some(keys(df, name)?),
        None => None,
    };
    let rows: Vec<usize> = (0..df.height())
        .filter(|&r| checks.iter().all(|c| c(r)))
        .filter(|&r| series.as_ref().is_none_or(|s| s.is_valid(r)))
        .collect();
    if rows.is_empty() {
        return Err(PlotError::Empty);
    }
    Ok(rows)
}

/// The title made from the spec's columns, when it names none.
pub(super) fn default_title(spec: &PlotSpec) -> String {
    use crate::labels::{in_sentence, label};
    // "Throughput against GPUs, one line per dense method": the first
    // name starts the sentence, the others are inside it
    let names: Vec<String> = spec
        .y
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                label(c)
            } else {
                in_sentence(&label(c))
            }
        })
        .collect();
    let y = match spec.kind {
        Kind::Stacked => names.join(" + "),
        _ => names.join(", "),
    };
    let x = in_sentence(&label(&spec.x));
    let base = match spec.kind {
        Kind::Line => format!("{y} against {x}"),
        Kind::Bar | Kind::Stacked => format!("{y} per {x}"),
    };
    match (&spec.series, spec.kind) {
        (Some(s), Kind::Line) => format!("{base}, one line per {}", in_sentence(&label(s))),
        (Some(s), _) => format!("{base}, one bar per {}", in_sentence(&label(s))),
        (None, _) => base,
    }
}
