//! Column access for plots and reports: a column by name (or an error
//! that lists the table's columns), its values as numbers or text, a label
//! joining several columns, the rows holding one value of a column
//! (`dtsim plot --where`), a table's settings (the swept keys), and the
//! speedup of each row over the baseline point that differs from it in
//! the compared key alone.
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
    #[error("no column `{column}` in the table{}; it has: {}", hint(column, available), available.join(", "))]
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

/// " (did you mean `X`?)" for the column nearest a misspelt one.
fn hint(column: &str, available: &[String]) -> String {
    let known: Vec<&str> = available.iter().map(String::as_str).collect();
    sim::names::did_you_mean(column, &known)
}

impl ColumnError {
    /// Whether the error is the input's (exit code 2): always, since
    /// every column error is about the table or the columns the user
    /// named (a column polars cannot read as text is the table's).
    pub fn is_input(&self) -> bool {
        match self {
            ColumnError::Unknown { .. }
            | ColumnError::NotNumeric { .. }
            | ColumnError::Filter { .. }
            | ColumnError::Speedup(_)
            | ColumnError::Table(_) => true,
        }
    }
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
pub fn row_texts(
    df: &DataFrame,
    columns: &[String],
) -> Result<Vec<Option<Vec<String>>>, ColumnError> {
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

/// The columns that say which point a row is (its settings): for a table
/// laid out as `dtsim sweep` writes it, the swept keys, between
/// `grid_points` and the first result column; for any other table, the
/// columns with dotted names (`cluster.network`) and those that are
/// neither a result column of dtsim, nor `point` or `grid_points`, nor
/// floating-point (a measurement, most likely), in the table's order.
pub fn settings(df: &DataFrame) -> Vec<String> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let results = crate::sweep::result_columns();
    let start = names.iter().position(|c| c == "grid_points");
    let end = names.iter().position(|c| c == results[0]);
    if let (Some(a), Some(b)) = (start, end)
        && a < b
    {
        return names[a + 1..b].to_vec();
    }
    names
        .into_iter()
        .filter(|c| {
            c.contains('.')
                || !(results.contains(&c.as_str())
                    || c == "point"
                    || c == "grid_points"
                    || df.column(c).is_ok_and(|c| c.dtype().is_float()))
        })
        .collect()
}

/// Whether two values of `key` train different things, whose samples per
/// second are not comparable: the model (`model.preset`, a custom
/// model's `model.layers…`, a whole swept `model` table) and the batch
/// per GPU, as swept keys or as result columns. One model's samples/s
/// over another's is no speedup, nor is a fastest-to-slowest ratio taken
/// across them.
pub fn incomparable(key: &str) -> bool {
    matches!(
        key,
        "model" | "sweep.model" | "model.preset" | "batch_per_gpu" | "model.batch_per_gpu"
    ) || key.starts_with("model.layers")
}

/// `df` with a column [`SPEEDUP`]: how many times better each row's `y`
/// is than the `y` of its baseline row, the row whose `key` is
/// `baseline` and which differs from it in `key` alone: the same `x`, the
/// same value of every other setting ([`settings`]) and the same
/// `throughput_unit` (so the baseline rows read 1). Higher is better
/// (y / baseline) except for times, columns ending in `_s`, where lower
/// is better (baseline / y: half the iteration time is a speedup of 2).
/// Rows without a baseline row are null: "ps over allreduce" is taken
/// network by network, batch by batch.
///
/// Refused: a `key` that is [`incomparable`] (a model), a `baseline` that
/// `key` never takes (the message lists the values it does take), and
/// two rows with the same settings and `key` (the speedup would be
/// ambiguous: the table holds a point twice).
pub fn speedup(
    df: &DataFrame,
    x: &str,
    y: &str,
    key: &str,
    baseline: &str,
) -> Result<DataFrame, ColumnError> {
    if incomparable(key) {
        return Err(ColumnError::Speedup(format!(
            "no speedup over `{key}`: its values are different models or batches, \
             whose samples per second are not comparable; compare methods, networks or \
             other settings of one model (--series strategy.dense --where {key}=…)"
        )));
    }
    let mut by = vec![x.to_string()];
    for c in settings(df)
        .into_iter()
        .chain(["throughput_unit".to_string()])
    {
        if c != key && c != y && !by.contains(&c) && df.column(&c).is_ok() {
            by.push(c);
        }
    }
    let groups = row_texts(df, &by)?;
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

    fn speedups(d: &DataFrame) -> Vec<Option<f64>> {
        d.column(SPEEDUP).unwrap().f64().unwrap().iter().collect()
    }

    /// Each row is compared with the baseline row that differs from it in
    /// the compared key alone: ring on 100g has no ps row on 100g, so it
    /// has no speedup (not 300 / 150, ps on 10g).
    #[test]
    fn speedup_compares_points_that_differ_in_the_key_alone() {
        assert_eq!(settings(&table()), ["method", "net"]);
        let d = speedup(&table(), "gpus", "throughput", "method", "ps").unwrap();
        assert_eq!(speedups(&d), vec![Some(1.0), Some(1.0), Some(1.2), None]);
        // a table as dtsim sweep writes it: its settings are the swept keys
        let swept = df!(
            "point" => [0i64, 1, 2, 3],
            "grid_points" => [4i64; 4],
            "model.compute_jitter" => [0.0, 0.0, 0.1, 0.1],
            "strategy.dense" => ["ps", "allreduce", "ps", "allreduce"],
            "scenario" => ["s"; 4],
            "gpus" => [8i64; 4],
            "throughput" => [100.0, 150.0, 50.0, 100.0],
        )
        .unwrap();
        assert_eq!(settings(&swept), ["model.compute_jitter", "strategy.dense"]);
        let d = speedup(&swept, "gpus", "throughput", "strategy.dense", "ps").unwrap();
        assert_eq!(
            speedups(&d),
            vec![Some(1.0), Some(1.5), Some(1.0), Some(2.0)]
        );
    }

    #[test]
    fn a_time_speeds_up_when_it_shrinks() {
        let df = df!(
            "gpus" => [4i64, 4],
            "method" => ["ps", "ring"],
            "iteration_time_s" => [0.2, 0.05],
        )
        .unwrap();
        let d = speedup(&df, "gpus", "iteration_time_s", "method", "ps").unwrap();
        assert_eq!(speedups(&d), vec![Some(1.0), Some(4.0)]);
    }

    #[test]
    fn speedup_refuses_models_unknown_baselines_and_duplicates() {
        let e = speedup(&table(), "gpus", "throughput", "method", "gtopk").unwrap_err();
        assert!(e.to_string().contains("it has: ps, ring"), "{e}");
        let twice = table().vstack(&table()).unwrap();
        let e = speedup(&twice, "gpus", "throughput", "method", "ps").unwrap_err();
        assert!(
            e.to_string().contains("two rows have gpus = 4, net = 10g"),
            "{e}"
        );
        let models = df!(
            "gpus" => [4i64, 4],
            "model.preset" => ["vgg16", "resnet50"],
            "throughput" => [100.0, 400.0],
        )
        .unwrap();
        let e = speedup(&models, "gpus", "throughput", "model.preset", "vgg16").unwrap_err();
        assert!(e.to_string().contains("not comparable"), "{e}");
        assert!(e.is_input());
        assert!(incomparable("model.layers[2].params") && !incomparable("model.gpu"));
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
