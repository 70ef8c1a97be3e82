//! Stacked bars: one bar per x category with the y columns stacked in it,
//! a time breakdown (gTop-k Fig. 11), the form of a report's breakdown
//! plot. The stacked columns must share a unit; the legend lists the top
//! of the stack first.

use super::axes::{Axis, plottable};
use super::bars::GROUP_WIDTH;
use super::chart::{Bar, Chart, color};
use super::legend::LegendEntry;
use super::rows::{categories, default_title, duplicate, keys, valid_rows};
use super::units::{max_abs, unit};
use super::{PlotError, PlotSpec};
use crate::labels::Quantity;
use polars::prelude::DataFrame;
use std::collections::BTreeMap;

/// The stacked-bar chart of `df`: one bar per x category, `ys` (the y
/// columns' values) stacked in it, bottom first.
pub(super) fn chart(
    df: &DataFrame,
    spec: &PlotSpec,
    ys: &[Vec<Option<f64>>],
) -> Result<Chart, PlotError> {
    let quantity = crate::labels::quantity(&spec.y[0]);
    if let Some(other) = spec
        .y
        .iter()
        .find(|c| crate::labels::quantity(c) != quantity)
    {
        return Err(PlotError::BadSpec(format!(
            "stacked columns must share a unit: `{}` is {} but `{other}` is {}",
            spec.y[0],
            quantity.describe(),
            crate::labels::quantity(other).describe()
        )));
    }
    let xkeys = keys(df, &spec.x)?;
    let rows = valid_rows(
        df,
        spec,
        &[&|r| xkeys.is_valid(r), &|r| {
            ys.iter().all(|y| y[r].is_some())
        }],
    )?;
    let (cats, cat) = categories(&xkeys, &rows);
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    for &r in &rows {
        if let Some(&other) = seen.get(&cat[&r]) {
            return Err(duplicate(
                df,
                spec,
                other,
                r,
                &[(spec.x.as_str(), cats[cat[&r]].clone())],
            ));
        }
        seen.insert(cat[&r], r);
        for (name, y) in spec.y.iter().zip(ys) {
            if let Some(v) = y[r].filter(|v| *v < 0.0) {
                return Err(PlotError::BadSpec(format!(
                    "row {} has {name} = {v}: stacked bars need values ≥ 0",
                    r + 1
                )));
            }
        }
    }
    let totals: Vec<f64> = seen
        .values()
        .map(|&r| ys.iter().filter_map(|y| y[r]).sum())
        .collect();
    plottable(&totals, &format!("the sum of {}", spec.y.join(", ")))?;
    let u = unit(quantity, max_abs(totals.iter().copied()), df);
    let mut rects = Vec::new();
    for (&c, &r) in &seen {
        let mut bottom = 0.0;
        for (j, y) in ys.iter().enumerate() {
            let v = y[r].unwrap_or(0.0) * u.factor;
            rects.push(Bar {
                x0: c as f64 + (1.0 - GROUP_WIDTH) / 2.0,
                x1: c as f64 + (1.0 + GROUP_WIDTH) / 2.0,
                y0: bottom,
                y1: bottom + v,
                color: color(j),
                edged: false,
            });
            bottom += v;
        }
    }
    let scaled: Vec<f64> = totals.iter().map(|t| t * u.factor).collect();
    let max = scaled.iter().copied().fold(0.0, f64::max);
    let names: Vec<String> = spec.y.iter().map(|c| crate::labels::label(c)).collect();
    let y_title = match (quantity, &u.name) {
        (Quantity::Time, Some(name)) => format!("Time ({name})"),
        (_, Some(name)) => format!("{} ({name})", names.join(" + ")),
        (_, None) => names.join(" + "),
    };
    // the legend lists the top of the stack first, as the eye meets it
    let legend = spec
        .y
        .iter()
        .enumerate()
        .rev()
        .map(|(j, n)| LegendEntry {
            label: crate::labels::label(n),
            color: color(j),
            marker: None,
        })
        .collect();
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::categories(cats),
        y: Axis::linear(0.0, max, true),
        x_title: crate::labels::label(&spec.x),
        y_title,
        x_grid: false,
        y_grid: true,
        lines: Vec::new(),
        rects,
        marks: Vec::new(),
        whiskers: Vec::new(),
        legend_title: None,
        legend,
    })
}
