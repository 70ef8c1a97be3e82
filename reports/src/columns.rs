//! Column access for plots and reports: a column by name (or an error
//! that lists the table's columns), its values as numbers or text, a label
//! joining several columns, the rows holding one value of a column
//! (`dtsim plot --where`), and the speedup of each row over a baseline
//! series.
//!
//! It exists so that the plots ([`crate::plot`]) and the report
//! ([`crate::report`]) read tables one way and refuse bad column names
//! with one message; it knows nothing of drawing, and its errors
//! ([`ColumnError`]) are wrapped by theirs.

use polars::prelude::*;
use std::collections::BTreeMap;

/// The name [`speedup`] gives its column; the plots show it as ×.
pub const SPEEDUP: &str = "speedup";

/// Why a column could not be read or derived.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ColumnError {
    /// The table has no column of that name.
    #[error("no column `{column}` in the table; it has: {}", available.join(", "))]
    Unknown {
        /// The column asked for.
        column: String,
        /// The table's columns, in order.
        available: Vec<String>,
    },
    /// A column that must hold numbers (the x of a line chart, every y)
    /// holds something else.
    #[error(
        "column `{column}` is not numeric: every y column, and a line chart's x, must hold numbers"
    )]
    NotNumeric {
        /// The column.
        column: String,
    },
    /// A `--where COL=VALUE` filter that is malformed or keeps no row.
    #[error("--where {filter}: {message}")]
    Filter {
        /// The filter as given.
        filter: String,
        /// What is wrong with it.
        message: String,
    },
    /// A speedup that cannot be taken: an unknown baseline, or two rows
    /// it would compare with the same baseline; the message says which.
    #[error("{0}")]
    Speedup(String),
    /// polars could not convert or add a column; the message says which.
    #[error("{0}")]
    Table(String),
}

/// A column of `df`, or [`ColumnError::Unknown`] listing the table's
/// columns.
pub fn column<'a>(df: &'a DataFrame, name: &str) -> Result<&'a Column, ColumnError> {
    df.column(name).map_err(|_| ColumnError::Unknown {
        column: name.to_string(),
        available: df
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect(),
    })
}

/// A column's values as text (numbers as polars prints them: `4`, `0.5`);
/// `None` for nulls.
pub fn texts(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>, ColumnError> {
    let col = column(df, name)?;
    let unreadable =
        |e: PolarsError| ColumnError::Table(format!("column `{name}` cannot be read as text: {e}"));
    let s = col.cast(&DataType::String).map_err(unreadable)?;
    let ca = s.str().map_err(unreadable)?;
    Ok(ca.iter().map(|v| v.map(str::to_string)).collect())
}

/// A numeric column's values as `f64`; `None` for nulls and non-finite
/// values.
pub fn numbers(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>, ColumnError> {
    let col = column(df, name)?;
    let not_numeric = || ColumnError::NotNumeric {
        column: name.to_string(),
    };
    if !col.dtype().is_primitive_numeric() {
        return Err(not_numeric());
    }
    let c = col.cast(&DataType::Float64).map_err(|_| not_numeric())?;
    let ca = c.f64().map_err(|_| not_numeric())?;
    Ok(ca.iter().map(|v| v.filter(|x| x.is_finite())).collect())
}

/// Each row's values of `columns` as text (as [`texts`] prints them);
/// `None` for a row with a null in any of them.
fn row_texts(df: &DataFrame, columns: &[String]) -> Result<Vec<Option<Vec<String>>>, ColumnError> {
    let cols = columns
        .iter()
        .map(|c| texts(df, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..df.height())
        .map(|r| cols.iter().map(|c| c[r].clone()).collect())
        .collect())
}

/// `df` with a text column `name` joining the values of `columns` with
/// `", "` (a series label for several swept keys at once).
pub fn with_label(
    df: &DataFrame,
    columns: &[String],
    name: &str,
) -> Result<DataFrame, ColumnError> {
    let label: Vec<Option<String>> = row_texts(df, columns)?
        .into_iter()
        .map(|v| v.map(|v| v.join(", ")))
        .collect();
    let mut out = df.clone();
    out.with_column(Column::new(name.into(), label))
        .map_err(|e| ColumnError::Table(e.to_string()))?;
    Ok(out)
}

/// The rows of `df` whose `column` reads `value` (as [`texts`] prints it).
pub fn holding(df: &DataFrame, column: &str, value: &str) -> Result<DataFrame, ColumnError> {
    let t = texts(df, column)?;
    let mask: Vec<bool> = t.iter().map(|v| v.as_deref() == Some(value)).collect();
    df.filter(&BooleanChunked::new("mask".into(), mask.as_slice()))
        .map_err(|e| ColumnError::Table(e.to_string()))
}

/// The rows of `df` whose column reads the value of `filter`, given as
/// `COL=VALUE` (`dtsim plot --where`). No row left is an error listing the
/// values the column takes.
pub fn keep_where(df: &DataFrame, filter: &str) -> Result<DataFrame, ColumnError> {
    let bad = |message: String| ColumnError::Filter {
        filter: filter.to_string(),
        message,
    };
    let (col, value) = filter
        .split_once('=')
        .ok_or_else(|| bad("expected COL=VALUE".into()))?;
    let kept = holding(df, col, value)?;
    if kept.height() == 0 {
        let mut values: Vec<String> = texts(df, col)?.into_iter().flatten().collect();
        values.sort();
        values.dedup();
        return Err(bad(format!(
            "no row has {col} = {value}; it takes {}",
            values.join(", ")
        )));
    }
    Ok(kept)
}

/// `df` with a column [`SPEEDUP`]: how many times better each row's `y`
/// is than the `y` of the row that has the same values in the `by` columns
/// and whose `key` is `baseline` (so the baseline rows read 1). Higher is
/// better (y / baseline) except for times, columns ending in `_s`, where
/// lower is better (baseline / y: half the iteration time is a speedup of
/// 2). Rows without a baseline row are null.
///
/// `dtsim plot --baseline` matches on x alone; a report matches on x and
/// every other series key, so "ps over allreduce" is taken network by
/// network.
///
/// Refused: a `baseline` that `key` never takes (the message lists the
/// values it does take), and two rows with the same `by` values and `key`
/// (the speedup would be ambiguous; filter the table first).
pub fn speedup(
    df: &DataFrame,
    by: &[String],
    y: &str,
    key: &str,
    baseline: &str,
) -> Result<DataFrame, ColumnError> {
    let groups = row_texts(df, by)?;
    let group = |r: usize| groups[r].clone();
    let ys = numbers(df, y)?;
    let lower_is_better = y.ends_with("_s");
    let ks = texts(df, key)?;
    let mut seen = BTreeMap::new();
    for (r, k) in ks.iter().enumerate() {
        if let (Some(g), Some(k)) = (group(r), k)
            && seen.insert((g.clone(), k.clone()), r).is_some()
        {
            return Err(ColumnError::Speedup(format!(
                "two rows have {} and {key} = {k}: a speedup over `{baseline}` \
                 needs one row per ({}, {key}); filter the table first",
                by.iter()
                    .zip(&g)
                    .map(|(c, v)| format!("{c} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                by.join(", ")
            )));
        }
    }
    if !ks.iter().any(|s| s.as_deref() == Some(baseline)) {
        let mut values: Vec<&str> = ks.iter().flatten().map(String::as_str).collect();
        values.sort_unstable();
        values.dedup();
        return Err(ColumnError::Speedup(format!(
            "baseline `{baseline}` is not a value of `{key}` (it has: {})",
            values.join(", ")
        )));
    }
    let base: BTreeMap<Vec<String>, f64> = (0..df.height())
        .filter(|&r| ks[r].as_deref() == Some(baseline))
        .filter_map(|r| Some((group(r)?, ys[r]?)))
        .collect();
    let sp: Vec<Option<f64>> = (0..df.height())
        .map(|r| {
            let b = *base.get(&group(r)?)?;
            let v = ys[r]?;
            if lower_is_better {
                (v > 0.0).then(|| b / v)
            } else {
                (b > 0.0).then(|| v / b)
            }
        })
        .collect();
    let mut out = df.clone();
    out.with_column(Column::new(SPEEDUP.into(), sp))
        .map_err(|e| ColumnError::Table(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> DataFrame {
        df!(
            "gpus" => [4i64, 8, 4, 8],
            "method" => ["ps", "ps", "ring", "ring"],
            "net" => ["10g", "10g", "10g", "100g"],
            "throughput" => [100.0, 150.0, 120.0, 300.0],
        )
        .unwrap()
    }

    #[test]
    fn speedup_divides_by_the_baseline_at_the_same_x() {
        let by = ["gpus".to_string()];
        let d = speedup(&table(), &by, "throughput", "method", "ps").unwrap();
        let s: Vec<Option<f64>> = d.column(SPEEDUP).unwrap().f64().unwrap().iter().collect();
        assert_eq!(s, vec![Some(1.0), Some(1.0), Some(1.2), Some(2.0)]);
        // matched on the network too: ring on 100g has no ps row to compare with
        let by = ["gpus".to_string(), "net".to_string()];
        let d = speedup(&table(), &by, "throughput", "method", "ps").unwrap();
        let s: Vec<Option<f64>> = d.column(SPEEDUP).unwrap().f64().unwrap().iter().collect();
        assert_eq!(s, vec![Some(1.0), Some(1.0), Some(1.2), None]);
    }

    #[test]
    fn a_time_speeds_up_when_it_shrinks() {
        let df = df!(
            "gpus" => [4i64, 4],
            "method" => ["ps", "ring"],
            "iteration_time_s" => [0.2, 0.05],
        )
        .unwrap();
        let by = ["gpus".to_string()];
        let d = speedup(&df, &by, "iteration_time_s", "method", "ps").unwrap();
        let s: Vec<Option<f64>> = d.column(SPEEDUP).unwrap().f64().unwrap().iter().collect();
        assert_eq!(s, vec![Some(1.0), Some(4.0)]);
    }

    #[test]
    fn speedup_refuses_unknown_baselines_and_duplicates() {
        let by = ["gpus".to_string()];
        let e = speedup(&table(), &by, "throughput", "method", "gtopk").unwrap_err();
        assert!(e.to_string().contains("it has: ps, ring"), "{e}");
        let by = ["net".to_string()];
        let e = speedup(&table(), &by, "throughput", "method", "ps").unwrap_err();
        assert!(e.to_string().contains("two rows"), "{e}");
    }

    #[test]
    fn labels_join_columns_and_holding_filters() {
        let d = with_label(&table(), &["method".into(), "net".into()], "series").unwrap();
        assert_eq!(
            texts(&d, "series").unwrap()[3].as_deref(),
            Some("ring, 100g")
        );
        let h = holding(&d, "gpus", "8").unwrap();
        assert_eq!(h.height(), 2);
        assert_eq!(
            numbers(&h, "throughput").unwrap(),
            vec![Some(150.0), Some(300.0)]
        );
    }
}
