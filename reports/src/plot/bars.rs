//! Grouped bars: one group per x category, one bar per series value
//! (EmbRace Fig. 7), the form of a report's speedup plot. Bars start at
//! zero (or at the bottom of a logarithmic axis). Where the table has the
//! y column's `_p5` and `_p95` (`dtsim sweep --uncertainty`), each bar
//! has an error bar from its 5th to its 95th percentile, as lines do.

use super::axes::{Axis, plottable};
use super::chart::{Bar, Chart, Whisker, color};
use super::rows::{categories, default_title, duplicate, keys, series_of, valid_rows};
use super::units::{max_abs, titled, unit};
use super::{PlotError, PlotSpec, legend};
use polars::prelude::DataFrame;
use std::collections::BTreeMap;

/// Width of a group of bars within its category's unit slot.
pub(super) const GROUP_WIDTH: f64 = 0.8;

/// The grouped-bar chart of `df`: one group per x category, one bar per
/// series in it; `y` is the y column's values.
pub(super) fn chart(
    df: &DataFrame,
    spec: &PlotSpec,
    y: &[Option<f64>],
) -> Result<Chart, PlotError> {
    let xkeys = keys(df, &spec.x)?;
    let rows = valid_rows(df, spec, &[&|r| xkeys.is_valid(r), &|r| y[r].is_some()])?;
    let (cats, cat) = categories(&xkeys, &rows);
    let (names, series) = series_of(df, spec, &rows)?;
    let yu = unit(
        crate::labels::quantity(&spec.y[0]),
        max_abs(rows.iter().filter_map(|&r| y[r])),
        df,
    );

    let mut cells: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for &r in &rows {
        if let Some(&other) = cells.get(&(cat[&r], series[&r])) {
            let mut key = vec![(spec.x.as_str(), cats[cat[&r]].clone())];
            if let Some(name) = &spec.series {
                key.push((name.as_str(), names[series[&r]].clone()));
            }
            return Err(duplicate(df, spec, other, r, &key));
        }
        cells.insert((cat[&r], series[&r]), r);
    }
    let bands = super::line::bands(df, spec, yu.factor);
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|&r| y[r])
        .map(|v| v * yu.factor)
        .collect();
    plottable(&values, &spec.y[0])?;
    // the axis holds the error bars too
    let extent: Vec<f64> = rows
        .iter()
        .filter_map(|&r| bands.as_ref().and_then(|b| b(r)))
        .flat_map(|(lo, hi)| [lo, hi])
        .chain(values.iter().copied())
        .collect();
    let yaxis = Axis::numeric(&extent, true, false);
    let base = if yaxis.log { yaxis.lo } else { 0.0 };
    let width = GROUP_WIDTH / names.len() as f64;
    let rects = cells
        .iter()
        .filter_map(|(&(c, s), &r)| {
            let x0 = c as f64 + (1.0 - GROUP_WIDTH) / 2.0 + s as f64 * width;
            y[r].map(|v| Bar {
                x0,
                x1: x0 + width,
                y0: base,
                y1: v * yu.factor,
                color: color(s),
                edged: false,
            })
        })
        .collect();
    // a bar's error bar in a darker shade of its colour, at its middle
    let darker =
        |c: plotters::style::RGBColor| plotters::style::RGBColor(c.0 / 2, c.1 / 2, c.2 / 2);
    let whiskers = cells
        .iter()
        .filter_map(|(&(c, s), &r)| {
            let (lo, hi) = bands.as_ref()?(r)?;
            let x0 = c as f64 + (1.0 - GROUP_WIDTH) / 2.0 + s as f64 * width;
            Some(Whisker {
                x: x0 + width / 2.0,
                lo,
                hi,
                color: darker(color(s)),
            })
        })
        .collect();
    let legend = legend::of_series(spec, &names, false);
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::categories(cats),
        y: yaxis,
        x_title: crate::labels::label(&spec.x),
        y_title: super::line::bars_said(bands.is_some(), titled(&spec.y[0], &yu)),
        x_grid: false,
        y_grid: true,
        lines: Vec::new(),
        rects,
        marks: Vec::new(),
        whiskers,
        legend_title: spec.series.as_deref().map(crate::labels::label),
        legend,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::Kind;
    use polars::prelude::Column;

    /// Each bar has its error bar at its middle, in a darker shade of its
    /// colour, and the axis holds the bars.
    #[test]
    fn percentiles_are_error_bars_on_bars() {
        let df = DataFrame::new(
            2,
            vec![
                Column::new("network".into(), ["eth-10g", "ib-edr-100g"]),
                Column::new("throughput".into(), [100.0, 300.0]),
                Column::new("throughput_p5".into(), [90.0, 280.0]),
                Column::new("throughput_p95".into(), [120.0, 340.0]),
            ],
        )
        .unwrap();
        let spec = PlotSpec::new("network", ["throughput"], Kind::Bar);
        let y = crate::columns::numbers(&df, "throughput").unwrap();
        let c = chart(&df, &spec, &y).unwrap();
        assert_eq!(c.whiskers.len(), 2);
        for (w, b) in c.whiskers.iter().zip(&c.rects) {
            assert!((w.x - (b.x0 + b.x1) / 2.0).abs() < 1e-12);
            assert!(w.lo < b.y1 && b.y1 < w.hi);
        }
        assert_eq!((c.whiskers[1].lo, c.whiskers[1].hi), (280.0, 340.0));
        assert!(c.y.hi >= 340.0);
        assert!(c.y_title.ends_with("bars: 5th to 95th percentile"));
    }
}
