//! Line charts: one line per series value through points of numeric x,
//! such as throughput against GPUs per method (Parallax Fig. 8, gTop-k
//! Fig. 10). What is particular to lines lives here: points sorted by x,
//! a logarithmic x ticked at the data, a y axis that starts at zero
//! when the data are not far from it, and error bars from a sweep's
//! percentiles: where the table has `Y_p5` and `Y_p95` beside the one y
//! column `Y` (`dtsim sweep --uncertainty`), each point has a bar from its
//! 5th to its 95th percentile.

use super::axes::{Axis, plottable, value_label};
use super::chart::{Chart, MARKERS, Series, Whisker, color};
use super::rows::{default_title, duplicate, series_of, valid_rows};
use super::units::{max_abs, titled, unit};
use super::{PlotError, PlotSpec, legend};
use crate::columns::numbers;
use polars::prelude::DataFrame;

/// The line chart of `df`: one line per series through its points, sorted
/// by x; `y` is the y column's values.
pub(super) fn chart(
    df: &DataFrame,
    spec: &PlotSpec,
    y: &[Option<f64>],
) -> Result<Chart, PlotError> {
    let x = numbers(df, &spec.x)?;
    let rows = valid_rows(df, spec, &[&|r| x[r].is_some(), &|r| y[r].is_some()])?;
    let (names, series) = series_of(df, spec, &rows)?;
    let xu = unit(
        crate::labels::quantity(&spec.x),
        max_abs(rows.iter().filter_map(|&r| x[r])),
        df,
    );
    let yu = unit(
        crate::labels::quantity(&spec.y[0]),
        max_abs(rows.iter().filter_map(|&r| y[r])),
        df,
    );

    let band = bands(df, spec, yu.factor);
    let band = |r: usize| band.as_ref().and_then(|b| b(r));
    let mut points: Vec<Vec<(f64, f64, usize)>> = vec![Vec::new(); names.len()];
    for &r in &rows {
        if let (Some(xv), Some(yv)) = (x[r], y[r]) {
            points[series[&r]].push((xv * xu.factor, yv * yu.factor, r));
        }
    }
    for (s, pts) in points.iter_mut().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        if let Some(w) = pts.windows(2).find(|w| w[0].0 == w[1].0) {
            let (a, b) = (w[0].2, w[1].2);
            let mut key = vec![(spec.x.as_str(), value_label(x[a].unwrap_or(f64::NAN)))];
            if let Some(name) = &spec.series {
                key.push((name.as_str(), names[s].clone()));
            }
            return Err(duplicate(df, spec, a, b, &key));
        }
    }
    let xs: Vec<f64> = points.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = points.iter().flatten().map(|p| p.1).collect();
    // the axis holds the bars too
    let extent: Vec<f64> = points
        .iter()
        .flatten()
        .filter_map(|p| band(p.2))
        .flat_map(|(lo, hi)| [lo, hi])
        .chain(ys.iter().copied())
        .collect();
    plottable(&xs, &spec.x)?;
    plottable(&ys, &spec.y.join(", "))?;
    let (ymin, ymax) = (
        extent.iter().copied().fold(f64::INFINITY, f64::min),
        extent.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    // start at zero when the data are not far from it: honest comparisons,
    // without flattening a narrow band of values
    let zero = (ymin >= 0.0 && ymin <= 0.5 * ymax) || (ymax <= 0.0 && ymax >= 0.5 * ymin);
    let lines: Vec<Series> = points
        .iter()
        .enumerate()
        .map(|(i, pts)| Series {
            color: color(i),
            marker: i % MARKERS,
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
        })
        .collect();
    let mut legend = legend::of_series(spec, &names, true);
    // a line drawn exactly over an earlier one would vanish: its legend
    // entry says which line it lies on
    for (i, entry) in legend.iter_mut().enumerate() {
        let same = |j: &usize| {
            points[*j]
                .iter()
                .map(|p| (p.0, p.1))
                .eq(points[i].iter().map(|p| (p.0, p.1)))
        };
        if let Some(j) = (0..i).find(same) {
            entry.label = format!("{} (same as {})", entry.label, names[j]);
        }
    }
    let whiskers: Vec<Whisker> = points
        .iter()
        .enumerate()
        .flat_map(|(i, pts)| {
            pts.iter().filter_map(move |p| {
                band(p.2).map(|(lo, hi)| Whisker {
                    x: p.0,
                    lo,
                    hi,
                    color: color(i),
                })
            })
        })
        .collect();
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::numeric(&xs, false, true),
        y: Axis::numeric(&extent, zero, false),
        x_title: titled(&spec.x, &xu),
        y_title: bars_said(!whiskers.is_empty(), titled(&spec.y[0], &yu)),
        x_grid: true,
        y_grid: true,
        whiskers,
        lines,
        rects: Vec::new(),
        marks: Vec::new(),
        legend_title: spec.series.as_deref().map(crate::labels::label),
        legend,
    })
}

/// Each row's 5th and 95th percentile of the one y column, scaled by
/// `factor`, where the table has `Y_p5` and `Y_p95` beside it (`dtsim sweep
/// --uncertainty`); `None` without them (or with several y columns).
pub(super) fn bands(
    df: &DataFrame,
    spec: &PlotSpec,
    factor: f64,
) -> Option<impl Fn(usize) -> Option<(f64, f64)>> {
    let [y] = spec.y.as_slice() else {
        return None;
    };
    let lo = numbers(df, &format!("{y}_p5")).ok()?;
    let hi = numbers(df, &format!("{y}_p95")).ok()?;
    Some(move |r: usize| Some((lo[r]? * factor, hi[r]? * factor)))
}

/// The y axis's title, saying what error bars are when there are any (a
/// `--ylabel` replaces it all).
pub(super) fn bars_said(bars: bool, title: String) -> String {
    if bars {
        format!("{title}; bars: 5th to 95th percentile")
    } else {
        title
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::Kind;
    use polars::prelude::{Column, DataFrame};

    fn table(bands: bool) -> DataFrame {
        let mut cols = vec![
            Column::new("gpus".into(), [8u32, 16, 32]),
            Column::new("throughput".into(), [100.0, 180.0, 300.0]),
        ];
        if bands {
            cols.push(Column::new("throughput_p5".into(), [95.0, 170.0, 270.0]));
            cols.push(Column::new("throughput_p95".into(), [104.0, 185.0, 330.0]));
        }
        DataFrame::new(3, cols).unwrap()
    }

    /// A sweep's percentiles become each point's error bar, and the y axis
    /// holds the bars; without them the lines have none.
    #[test]
    fn percentiles_are_error_bars() {
        let spec = PlotSpec::new("gpus", ["throughput"], Kind::Line);
        let df = table(true);
        let y = numbers(&df, "throughput").unwrap();
        let c = chart(&df, &spec, &y).unwrap();
        let bars: Vec<_> = c.whiskers.iter().map(|w| (w.x, w.lo, w.hi)).collect();
        assert_eq!(
            bars,
            [
                (8.0, 95.0, 104.0),
                (16.0, 170.0, 185.0),
                (32.0, 270.0, 330.0)
            ]
        );
        assert!(c.y.hi >= 330.0, "{:?}", c.y);
        assert!(
            c.y_title.ends_with("bars: 5th to 95th percentile"),
            "{}",
            c.y_title
        );
        let df = table(false);
        let c = chart(&df, &spec, &y).unwrap();
        assert!(c.whiskers.is_empty());
    }
}
