//! Grouped bars: one group per x category, one bar per series value
//! (EmbRace Fig. 7), the form of a report's speedup plot. Bars start at
//! zero (or at the bottom of a logarithmic axis).

use super::axes::{Axis, plottable};
use super::chart::{Bar, Chart, color};
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
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|&r| y[r])
        .map(|v| v * yu.factor)
        .collect();
    plottable(&values, &spec.y[0])?;
    let yaxis = Axis::numeric(&values, true, false);
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
    let legend = legend::of_series(spec, &names, false);
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::categories(cats),
        y: yaxis,
        x_title: crate::labels::label(&spec.x),
        y_title: titled(&spec.y[0], &yu),
        x_grid: false,
        y_grid: true,
        lines: Vec::new(),
        rects,
        marks: Vec::new(),
        legend_title: spec.series.as_deref().map(crate::labels::label),
        legend,
    })
}
