//! Drawing a [`Chart`] with plotters and writing it as PNG or SVG: the
//! bundled font, the layout of title, axes and legend, the markers, and
//! writing through a temporary file. The only module that talks to a
//! plotters backend, so every kind of chart is laid out by one function
//! and a picture's bytes depend only on its `Chart`.

use super::chart::{Chart, MARKERS};
use super::{DEFAULT_HEIGHT, DEFAULT_WIDTH, PlotError, legend};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::OnceLock;

/// DejaVu Sans 2.37 (Bitstream Vera license, `assets/LICENSE-DejaVu.txt`).
const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// The family name the font is registered under and every text asks for.
const FAMILY: &str = "sans-serif";

/// Picture formats, chosen by the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Png,
    Svg,
}

impl Format {
    /// The format `path`'s extension names; another name is the user's
    /// mistake (a bad `-o`), not a failure to write.
    pub(super) fn of(path: &Path) -> Result<Format, PlotError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("png") => Ok(Format::Png),
            Some("svg") => Ok(Format::Svg),
            _ => Err(PlotError::BadSpec(format!(
                "{}: the file name must end in .png or .svg",
                path.display()
            ))),
        }
    }
}

/// An error writing the picture `path`.
fn output_error(path: &Path, message: impl std::fmt::Display) -> PlotError {
    PlotError::Output {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Registers the bundled font with plotters, once per process.
pub(super) fn register_fonts() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok();
        assert!(ok, "the bundled DejaVu Sans font does not parse");
    });
}

/// [`crate::write_via_temp`], its error an output error of `out`.
fn write_via_temp(
    out: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), PlotError> {
    crate::write_via_temp(out, write).map_err(|e| output_error(out, e))
}

/// Draws `chart` and writes it. A PNG is drawn into memory first, so a
/// failed drawing leaves no partial file.
pub(super) fn render(
    chart: &Chart,
    out: &Path,
    format: Format,
    w: u32,
    h: u32,
) -> Result<(), PlotError> {
    register_fonts();
    let drawing = |e: String| output_error(out, format!("drawing failed: {e}"));
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
                draw(&root, chart).map_err(drawing)?;
                root.present().map_err(|e| drawing(e.to_string()))?;
            }
            write_via_temp(out, |tmp| {
                std::fs::write(tmp, svg).map_err(|e| e.to_string())
            })
        }
        Format::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw(&root, chart).map_err(drawing)?;
                root.present().map_err(|e| drawing(e.to_string()))?;
            }
            write_via_temp(out, |tmp| {
                let mut file = BitMapBackend::new(tmp, (w, h));
                file.blit_bitmap((0, 0), (w, h), &rgb)
                    .map_err(|e| e.to_string())?;
                file.present()
                    .map_err(|e| format!("cannot write the PNG: {e}"))
            })
        }
    }
}

/// Lengths and font sizes for a picture: chosen for 1200×800 and scaled
/// by the smaller of the picture's ratios to that (within 0.4–4×).
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale(f64);

impl Scale {
    /// The scale of the picture `root`.
    fn of<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>) -> Scale {
        let (w, h) = root.dim_in_pixel();
        Scale(
            (f64::from(w) / f64::from(DEFAULT_WIDTH))
                .min(f64::from(h) / f64::from(DEFAULT_HEIGHT))
                .clamp(0.4, 4.0),
        )
    }

    /// `v` pixels of the 1200×800 picture, in this one's pixels.
    pub(super) fn px(self, v: f64) -> i32 {
        (v * self.0).round() as i32
    }

    /// The bundled font at `size` points of the 1200×800 picture, black.
    pub(super) fn font(self, size: f64) -> TextStyle<'static> {
        TextStyle::from((FAMILY, size * self.0).into_font()).color(&BLACK)
    }
}

/// A drawing error as text.
pub(super) fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draws a marker of kind `marker` centred on pixel `at`.
pub(super) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    marker: usize,
    r: i32,
    color: RGBColor,
) -> Result<(), String> {
    let fill = color.filled();
    match marker % MARKERS {
        0 => area.draw(&Circle::new((x, y), r, fill)),
        1 => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], fill)),
        2 => area.draw(&TriangleMarker::new((x, y), r + r / 3, fill)),
        _ => area.draw(&Polygon::new(
            vec![
                (x, y - r - r / 3),
                (x + r + r / 3, y),
                (x, y + r + r / 3),
                (x - r - r / 3, y),
            ],
            fill,
        )),
    }
    .map_err(text)
}

/// Draws `chart` on `root`: title, legend column on the right, axes with
/// their titles, then the marks. Sizes scale with the picture, from the
/// 1200×800 the font sizes were chosen for.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &Chart,
) -> Result<(), String> {
    let scale = Scale::of(root);
    let px = |v: f64| scale.px(v);
    let font = |size: f64| scale.font(size);
    let desc_font = font(26.0);
    let tick_font = font(22.0);
    let size = |t: &str, f: &TextStyle| root.estimate_text_size(t, f).map_err(text);
    // a title wider than the picture is set smaller (to 16 pt at least)
    // rather than cut off at both ends
    let mut title_font = font(32.0);
    if !c.title.is_empty() {
        let (w, _) = size(&c.title, &title_font)?;
        let room = root.dim_in_pixel().0 as f64 - 2.0 * px(24.0) as f64;
        if w as f64 > room {
            title_font = font((32.0 * room / w as f64).max(16.0));
        }
    }

    root.fill(&WHITE).map_err(text)?;
    let area = root.margin(px(14.0), px(10.0), px(14.0), px(24.0));
    let area = if c.title.is_empty() {
        area
    } else {
        area.titled(&c.title, title_font.clone()).map_err(text)?
    };

    // legend column on the right
    let (area_w, _) = area.dim_in_pixel();
    let legend_w = legend::width(root, c, scale, area_w)?;
    let (plot, legend_area) = area.split_horizontally(area_w as i32 - legend_w);

    // label areas sized from the labels they hold
    let tick = px(6.0);
    let (_, tick_h) = size("0123456789", &tick_font)?;
    let (_, desc_h) = size("Ag", &desc_font)?;
    let mut y_label_w = 0;
    for l in &c.y.labels {
        y_label_w = y_label_w.max(size(l, &tick_font)?.0 as i32);
    }
    let desc_room = |t: &str| {
        if t.is_empty() {
            0
        } else {
            desc_h as i32 + px(14.0)
        }
    };

    let y_area = 2 * tick + y_label_w + px(8.0) + desc_room(&c.y_title);
    // a category label too wide for its slot wraps under its own bar, at
    // its commas, spaces or hyphens, onto up to three lines; a line still
    // too wide is cut short ("…")
    let mut x_labels: Vec<Vec<String>> = c.x.labels.iter().map(|l| vec![l.clone()]).collect();
    let mut x_rows = 1;
    let mut right = px(16.0);
    if c.x.categorical && !x_labels.is_empty() {
        let (plot_w, _) = plot.dim_in_pixel();
        let slot = (plot_w as i32 - y_area - px(16.0)) / x_labels.len() as i32;
        let limit = slot - px(12.0);
        for lines in &mut x_labels {
            let whole = lines[0].clone();
            if size(&whole, &tick_font)?.0 as i32 <= limit {
                continue;
            }
            // words keep their separator at their end ("eth-", "10g,")
            let mut words: Vec<String> = Vec::new();
            let mut word = String::new();
            for ch in whole.chars() {
                word.push(ch);
                if matches!(ch, ',' | ' ' | '-') {
                    words.push(std::mem::take(&mut word));
                }
            }
            words.push(word);
            let mut wrapped: Vec<String> = vec![String::new()];
            for w in words {
                let last = wrapped.last_mut().expect("one line");
                let joined = format!("{last}{w}");
                if last.is_empty() || size(joined.trim(), &tick_font)?.0 as i32 <= limit {
                    *last = joined;
                } else {
                    wrapped.push(w);
                }
            }
            // more than three lines: the rest joins the third
            while wrapped.len() > 3 {
                let extra = wrapped.pop().expect("more than three");
                wrapped[2].push_str(&extra);
            }
            for l in &mut wrapped {
                *l = l.trim().to_string();
                // cut from the middle, keeping both ends ("network-pre…-ib-7"):
                // labels of a sweep tend to differ at the end; one character
                // fewer a round, so this ends by "…" at worst
                let chars: Vec<char> = l.chars().collect();
                let mut keep = chars.len();
                while size(l, &tick_font)?.0 as i32 > limit && keep > 0 {
                    keep -= 1;
                    let head: String = chars[..keep.div_ceil(2)].iter().collect();
                    let tail: String = chars[chars.len() - keep / 2..].iter().collect();
                    *l = format!("{head}…{tail}");
                }
            }
            x_rows = x_rows.max(wrapped.len() as i32);
            *lines = wrapped;
        }
        // the last label may stick out past its slot on the right
        if let Some(last) = x_labels.last() {
            let mut widest = 0;
            for l in last {
                widest = widest.max(size(l, &tick_font)?.0 as i32);
            }
            right = right.max(widest / 2 - slot / 2 + px(6.0));
        }
    }
    let row_step = tick_h as i32 + px(6.0);
    let x_area = 2 * tick + x_rows * row_step + px(2.0) + desc_room(&c.x_title);

    // room above the plotting area for the marks' labels
    let mark_font = font(20.0).pos(Pos::new(HPos::Left, VPos::Bottom));
    let marks_h = if c.marks.is_empty() {
        0
    } else {
        size("iteration", &mark_font)?.1 as i32 + px(8.0)
    };
    let mut chart = ChartBuilder::on(&plot)
        .margin_top(px(12.0) + marks_h)
        .margin_right(right)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(c.x.clone(), c.y.clone())
        .map_err(text)?;
    // a numeric axis's labels that would run together in a narrow plot
    // (long row labels, a wide legend) are thinned to every k-th
    let every = if c.x.categorical || c.x.labels.is_empty() {
        1
    } else {
        let (plot_w, _) = plot.dim_in_pixel();
        let room = (plot_w as i32 - y_area - right).max(1);
        let mut widest = 0;
        for l in &c.x.labels {
            widest = widest.max(size(l, &tick_font)?.0 as i32);
        }
        let needed = c.x.labels.len() as i32 * (widest + px(16.0));
        (needed + room - 1) / room
    }
    .max(1) as usize;
    let x_label = |v: &f64| {
        if c.x.categorical {
            return String::new();
        }
        match c.x.ticks.iter().position(|t| t == v) {
            Some(i) if i % every != 0 => String::new(),
            _ => c.x.label(*v),
        }
    };
    let y_label = |v: &f64| c.y.label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style(tick_font.clone())
        .axis_desc_style(desc_font.clone())
        .bold_line_style(BLACK.mix(0.18))
        .light_line_style(BLACK.mix(0.06))
        .axis_style(BLACK.stroke_width(px(1.5).max(1) as u32))
        .set_all_tick_mark_size(tick);
    if !c.x_title.is_empty() {
        mesh.x_desc(c.x_title.as_str());
    }
    if !c.y_title.is_empty() {
        mesh.y_desc(c.y_title.as_str());
    }
    if !c.x_grid {
        mesh.disable_x_mesh();
    }
    if !c.y_grid {
        mesh.disable_y_mesh();
    }
    mesh.draw().map_err(text)?;
    if c.x.categorical {
        let centred = tick_font.pos(Pos::new(HPos::Center, VPos::Top));
        for (t, lines) in c.x.ticks.iter().zip(&x_labels) {
            let (x, y) = chart.backend_coord(&(*t, c.y.lo));
            for (row, l) in lines.iter().enumerate() {
                root.draw_text(l, &centred, (x, y + 2 * tick + row as i32 * row_step))
                    .map_err(text)?;
            }
        }
    }

    chart
        .draw_series(
            c.rects
                .iter()
                .map(|b| Rectangle::new([(b.x0, b.y0), (b.x1, b.y1)], b.color.filled())),
        )
        .map_err(text)?;
    // a darker edge on edged bars: a third of the way to black
    let darker = |c: RGBColor| RGBColor(c.0 / 3 * 2, c.1 / 3 * 2, c.2 / 3 * 2);
    chart
        .draw_series(c.rects.iter().filter(|b| b.edged).map(|b| {
            Rectangle::new(
                [(b.x0, b.y0), (b.x1, b.y1)],
                darker(b.color).stroke_width(1),
            )
        }))
        .map_err(text)?;
    for l in &c.lines {
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                l.color.stroke_width(px(3.0).max(1) as u32),
            ))
            .map_err(text)?;
        for p in &l.points {
            draw_marker(root, chart.backend_coord(p), l.marker, px(7.0), l.color)?;
        }
    }
    // error bars: a vertical line from low to high with end caps
    for w in &c.whiskers {
        let (top, bottom) = (
            chart.backend_coord(&(w.x, w.hi)),
            chart.backend_coord(&(w.x, w.lo)),
        );
        let cap = px(6.0);
        let style = w.color.stroke_width(px(2.0).max(1) as u32);
        for path in [
            vec![top, bottom],
            vec![(top.0 - cap, top.1), (top.0 + cap, top.1)],
            vec![(bottom.0 - cap, bottom.1), (bottom.0 + cap, bottom.1)],
        ] {
            root.draw(&PathElement::new(path, style)).map_err(text)?;
        }
    }
    // a mark's label is left out where it would run into the last one
    // drawn (iterations a few pixels apart in a narrow plot)
    let mut free_from = i32::MIN;
    for (x, label) in &c.marks {
        let top = chart.backend_coord(&(*x, c.y.hi));
        let bottom = chart.backend_coord(&(*x, c.y.lo));
        root.draw(&PathElement::new(
            vec![(top.0, top.1 - marks_h + px(4.0)), bottom],
            BLACK.mix(0.7).stroke_width(px(2.0).max(1) as u32),
        ))
        .map_err(text)?;
        // where the whole label does not fit, its last word ("2" of
        // "iteration 2")
        let at = top.0 + px(4.0);
        let last = label.rsplit(' ').next().unwrap_or(label);
        for shown in [label.as_str(), last] {
            let w = size(shown, &mark_font)?.0 as i32;
            let next = c
                .marks
                .iter()
                .map(|m| chart.backend_coord(&(m.0, c.y.hi)).0)
                .find(|&x| x > top.0);
            let fits = next.is_none_or(|n| at + w + px(4.0) <= n);
            if at >= free_from && (fits || shown == last) {
                root.draw_text(shown, &mark_font, (at, top.1 - px(4.0)))
                    .map_err(text)?;
                free_from = at + w + px(8.0);
                break;
            }
        }
    }

    // the legend, aligned with the top of the plotting area
    if !c.legend.is_empty() {
        let (x0, _) = legend_area.get_base_pixel();
        let (_, ys) = chart.plotting_area().get_pixel_range();
        legend::draw(root, c, scale, legend_w, (x0, ys.start))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::timeline::tests::trace;
    use super::super::{Gantt, Kind, PlotSpec, table_chart};
    use super::*;
    use polars::prelude::df;
    use std::collections::BTreeSet;

    /// Renders into memory and counts distinct colours: the picture is not
    /// blank. (The integration tests cannot decode a PNG without an image
    /// crate; this checks the same drawing code pixel by pixel.)
    #[test]
    fn pictures_have_many_colours() {
        register_fonts();
        let df = df!(
            "gpus" => [4i64, 8, 16, 4, 8, 16],
            "method" => ["ring", "ring", "ring", "ps", "ps", "ps"],
            "throughput" => [1200.0, 2300.0, 4400.0, 1100.0, 1900.0, 2800.0],
        )
        .unwrap();
        let mut spec = PlotSpec::new("gpus", ["throughput"], Kind::Line);
        spec.series = Some("method".into());
        for chart in [
            table_chart(&df, &spec).unwrap(),
            Gantt::from_trace(&trace()).unwrap().chart(2).unwrap(),
        ] {
            let (w, h) = (600u32, 400u32);
            let mut rgb = vec![0u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw(&root, &chart).unwrap();
                root.present().unwrap();
            }
            let colours: BTreeSet<&[u8]> = rgb.chunks(3).collect();
            assert!(colours.len() > 50, "{} colours", colours.len());
            let white = rgb.chunks(3).filter(|p| *p == [255, 255, 255]).count();
            let share = white as f64 / f64::from(w * h);
            assert!(share > 0.3 && share < 0.99, "white share {share}");
        }
    }
}
