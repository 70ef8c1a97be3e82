//! Timelines: what a training run did, span by span, as a Gantt picture
//! with one row per GPU and track (compute, each communication channel).
//!
//! The picture is drawn from a [`Gantt`], which comes either from the
//! recorded timeline of a run ([`Gantt::from_timeline`]: what a report
//! draws) or from a Chrome trace file ([`Gantt::from_trace`]: `dtsim plot
//! --timeline`). Both take the rows' names, the spans' categories and
//! their times from [`crate::trace`], so a report's picture is the picture
//! of the trace file beside it, to the bit.

use super::PlotError;
use super::axes::Axis;
use super::chart::{Bar, Chart, PALETTE};
use super::legend::LegendEntry;
use crate::trace::{self, Category, Shown};
use plotters::style::RGBColor;
use serde_json::Value;
use sim::train::task::ComputeKind;
use sim::train::{Timeline, TrainConfig};
use std::collections::{BTreeMap, BTreeSet};

/// Iterations a timeline shows when not told otherwise.
pub const DEFAULT_TIMELINE_ITERATIONS: u32 = 2;
/// GPUs a timeline shows at most: dtsim's data-parallel GPUs run in
/// lockstep, so more rows repeat the same picture.
pub const MAX_TIMELINE_GPUS: usize = 4;
/// Largest trace time (`ts`, `dur`) a timeline accepts, µs (~31 years):
/// beyond it the picture's arithmetic would overflow.
const MAX_TRACE_US: f64 = 1e15;

/// A run's spans, ready to be drawn as a Gantt picture
/// ([`super::plot_gantt`]).
///
/// Tracks are the rows: a GPU's compute track and its communication
/// tracks, each named `PROCESS THREAD` (`GPU 0 (node 0) compute`). Spans
/// keep the order of the trace's events, which is the order they are
/// drawn in. Times are µs, as in a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Gantt {
    /// What ran (the scenario's name), for the title.
    name: Option<String>,
    /// GPUs of the run, when known (the picture shows at most
    /// [`MAX_TIMELINE_GPUS`]).
    gpus: Option<u64>,
    /// One GPU was simulated for all (no stragglers): its rows stand for
    /// every GPU's, and the picture says so once.
    alike: bool,
    /// Every track that holds a span, by GPU, then thread.
    tracks: Vec<Track>,
    spans: Vec<Span>,
    /// Start of each iteration, ascending.
    iteration_starts: Vec<f64>,
}

/// A row of the picture.
#[derive(Debug, Clone, PartialEq)]
struct Track {
    gpu: u64,
    label: String,
}

/// A span on track `track` (an index into [`Gantt::tracks`]).
#[derive(Debug, Clone, PartialEq)]
struct Span {
    track: usize,
    style: SpanStyle,
    start: f64,
    end: f64,
}

/// How a span is coloured, in legend order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SpanStyle {
    Forward,
    Backward,
    Kernel,
    Compute,
    Stall,
    Communication,
    Other,
}

impl SpanStyle {
    /// The style of a span of `category` (none: not one dtsim writes) and,
    /// for compute, of what kind.
    fn of(category: Option<Category>, pass: Option<ComputeKind>) -> SpanStyle {
        match (category, pass) {
            (Some(Category::Compute), Some(ComputeKind::Forward)) => SpanStyle::Forward,
            (Some(Category::Compute), Some(ComputeKind::Backward)) => SpanStyle::Backward,
            (Some(Category::Compute), Some(ComputeKind::Kernel)) => SpanStyle::Kernel,
            (Some(Category::Compute), _) => SpanStyle::Compute,
            (Some(Category::Stall), _) => SpanStyle::Stall,
            (Some(Category::Communication), _) => SpanStyle::Communication,
            _ => SpanStyle::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            SpanStyle::Forward => "Forward pass",
            SpanStyle::Backward => "Backward pass",
            SpanStyle::Kernel => "Compression (inserted kernels)",
            SpanStyle::Compute => "Compute",
            SpanStyle::Stall => "Waiting for communication",
            SpanStyle::Communication => "Communication",
            SpanStyle::Other => "Other",
        }
    }

    fn color(self) -> RGBColor {
        match self {
            SpanStyle::Forward => PALETTE[0],
            SpanStyle::Backward => PALETTE[1],
            SpanStyle::Kernel => PALETTE[3],
            SpanStyle::Compute => PALETTE[5],
            SpanStyle::Stall => PALETTE[2],
            SpanStyle::Communication => PALETTE[4],
            SpanStyle::Other => PALETTE[6],
        }
    }
}

/// A span before the tracks are numbered: (gpu, thread), style, start, end.
type RawSpan = ((u64, u64), SpanStyle, f64, f64);

fn bad_trace(message: impl Into<String>) -> PlotError {
    PlotError::BadTrace(message.into())
}

/// The iterations a timeline shows: `iterations`, by default
/// [`DEFAULT_TIMELINE_ITERATIONS`]; at least one.
pub(super) fn iterations_shown(iterations: Option<u32>) -> Result<u32, PlotError> {
    match iterations.unwrap_or(DEFAULT_TIMELINE_ITERATIONS) {
        0 => Err(PlotError::BadSpec(
            "a timeline shows at least one iteration".into(),
        )),
        n => Ok(n),
    }
}

impl Gantt {
    /// The same picture, titled by `name` (what ran: a scenario, a point
    /// of a sweep) instead of the scenario's name.
    pub fn named(mut self, name: impl Into<String>) -> Gantt {
        self.name = Some(name.into());
        self
    }

    /// The recorded `timeline` of a run of `cfg`, for its first `max_gpus`
    /// GPUs: the spans, names and iteration starts that
    /// [`trace::chrome_trace`] writes for the same arguments, without
    /// writing and parsing the trace.
    pub fn from_timeline(cfg: &TrainConfig, timeline: &Timeline, max_gpus: u32) -> Gantt {
        let mut spans = Vec::new();
        // when one GPU was simulated for all, every GPU's rows are its rows:
        // they are drawn once, not repeated
        let shown = if timeline.gpus == 1 {
            vec![0]
        } else {
            trace::shown_gpus(cfg, max_gpus)
        };
        for g in shown {
            for shown in trace::shown_spans(timeline, cfg, g) {
                let ((start, end), style) = match shown {
                    Shown::Compute(c) => (
                        (c.start, c.end),
                        SpanStyle::of(Some(Category::Compute), Some(c.kind)),
                    ),
                    Shown::Stall(s) => {
                        ((s.start, s.end), SpanStyle::of(Some(Category::Stall), None))
                    }
                    Shown::Message(_, m) => (
                        (m.start, m.end),
                        SpanStyle::of(Some(Category::Communication), None),
                    ),
                };
                let (ts, dur) = trace::micros(start, end);
                let key = (u64::from(g), u64::from(shown.tid()));
                spans.push((key, style, ts, ts + dur));
            }
        }
        let label = |(g, tid): (u64, u64)| {
            format!(
                "{} {}",
                trace::process_name(cfg, g as u32),
                trace::thread_name(timeline, tid as u32)
            )
        };
        let mut starts = trace::iteration_starts_us(timeline);
        starts.sort_by(f64::total_cmp);
        Gantt::assemble(
            Some(cfg.name.clone()),
            Some(u64::from(cfg.cluster.gpus())),
            timeline.gpus == 1,
            spans,
            label,
            starts,
        )
    }

    /// Reads a Chrome trace as `dtsim run --trace` writes it: its complete
    /// ("X") events, the process and thread names, and
    /// `otherData.iteration_starts_us`, `otherData.scenario` and
    /// `otherData.gpus` where present. Refused ([`PlotError::BadTrace`],
    /// saying which part): a trace without a `traceEvents` array, an event
    /// without `ph`, and an X event without integer `pid` and `tid` or
    /// with times that are not numbers of µs within ±10¹⁵.
    pub fn from_trace(trace: &Value) -> Result<Gantt, PlotError> {
        let events = trace
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or_else(|| bad_trace("no `traceEvents` array"))?;
        let mut spans = Vec::new();
        let mut processes = BTreeMap::new();
        let mut threads = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            let int = |key: &str| {
                e.get(key).and_then(Value::as_u64).ok_or_else(|| {
                    bad_trace(format!(
                        "traceEvents[{i}]: `{key}` is not a non-negative integer"
                    ))
                })
            };
            let num = |key: &str| {
                e.get(key)
                    .and_then(Value::as_f64)
                    .filter(|v| v.abs() <= MAX_TRACE_US)
                    .ok_or_else(|| {
                        bad_trace(format!(
                            "traceEvents[{i}]: `{key}` is not a number of microseconds within ±1e15"
                        ))
                    })
            };
            let name = e.pointer("/args/name").and_then(Value::as_str);
            match e.get("ph").and_then(Value::as_str) {
                Some("M") => match (e.get("name").and_then(Value::as_str), name) {
                    (Some("process_name"), Some(n)) => {
                        processes.insert(int("pid")?, n.to_string());
                    }
                    (Some("thread_name"), Some(n)) => {
                        threads.insert((int("pid")?, int("tid")?), n.to_string());
                    }
                    _ => {}
                },
                Some("X") => {
                    let start = num("ts")?;
                    let dur = num("dur")?;
                    if dur < 0.0 {
                        return Err(bad_trace(format!("traceEvents[{i}]: negative `dur`")));
                    }
                    let category = e
                        .get("cat")
                        .and_then(Value::as_str)
                        .and_then(Category::from_name);
                    let pass = e
                        .pointer("/args/pass")
                        .and_then(Value::as_str)
                        .and_then(trace::pass_kind);
                    let key = (int("pid")?, int("tid")?);
                    spans.push((key, SpanStyle::of(category, pass), start, start + dur));
                }
                Some(_) => {}
                None => return Err(bad_trace(format!("traceEvents[{i}]: no `ph` string"))),
            }
        }
        let starts = match trace.pointer("/otherData/iteration_starts_us") {
            None => Vec::new(),
            Some(v) => {
                let list = v
                    .as_array()
                    .ok_or_else(|| bad_trace("`otherData.iteration_starts_us` is not an array"))?;
                let mut starts = list
                    .iter()
                    .map(|s| s.as_f64().filter(|s| s.abs() <= MAX_TRACE_US))
                    .collect::<Option<Vec<f64>>>()
                    .ok_or_else(|| {
                        bad_trace(
                            "`otherData.iteration_starts_us` holds a non-number or one beyond ±1e15",
                        )
                    })?;
                // dtsim writes them rising; out of order they would title
                // the iterations wrongly (a review: sorted, `[5, 4, 3]`
                // drew four iterations titled 1–2)
                if let Some(w) = starts.windows(2).position(|w| w[1] <= w[0]) {
                    return Err(bad_trace(format!(
                        "`otherData.iteration_starts_us` must rise: entry {} ({}) is not after entry {} ({})",
                        w + 1,
                        starts[w + 1],
                        w,
                        starts[w]
                    )));
                }
                starts.sort_by(f64::total_cmp);
                starts
            }
        };
        let label = |(pid, tid): (u64, u64)| {
            let process = processes
                .get(&pid)
                .cloned()
                .unwrap_or_else(|| format!("pid {pid}"));
            let thread = threads
                .get(&(pid, tid))
                .cloned()
                .unwrap_or_else(|| format!("thread {tid}"));
            format!("{process} {thread}")
        };
        let name = trace
            .pointer("/otherData/scenario")
            .and_then(Value::as_str)
            .map(str::to_string);
        let gpus = trace.pointer("/otherData/gpus").and_then(Value::as_u64);
        // one GPU simulated for all (no stragglers): its rows once
        let alike = trace
            .pointer("/otherData/gpus_simulated")
            .and_then(Value::as_u64)
            == Some(1);
        if alike && let Some(first) = spans.iter().map(|s| s.0.0).min() {
            spans.retain(|s| s.0.0 == first);
        }
        Ok(Gantt::assemble(name, gpus, alike, spans, label, starts))
    }

    /// A Gantt of `spans`, in their order, with one track per (GPU,
    /// thread) that holds any, sorted, and named by `label`.
    fn assemble(
        name: Option<String>,
        gpus: Option<u64>,
        alike: bool,
        spans: Vec<RawSpan>,
        label: impl Fn((u64, u64)) -> String,
        iteration_starts: Vec<f64>,
    ) -> Gantt {
        let keys: Vec<(u64, u64)> = spans
            .iter()
            .map(|s| s.0)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let track_of: BTreeMap<(u64, u64), usize> =
            keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        Gantt {
            name,
            gpus,
            alike,
            tracks: keys
                .iter()
                .map(|&k| Track {
                    gpu: k.0,
                    label: label(k),
                })
                .collect(),
            spans: spans
                .into_iter()
                .map(|(k, style, start, end)| Span {
                    track: track_of[&k],
                    style,
                    start,
                    end,
                })
                .collect(),
            iteration_starts,
        }
    }

    /// The chart of `iterations` iterations (at least one) from the start
    /// of iteration 1, or of the whole run without iteration starts.
    pub(super) fn chart(&self, iterations: u32) -> Result<Chart, PlotError> {
        let n = iterations as usize;
        let starts = &self.iteration_starts;
        if self.spans.is_empty() {
            return Err(PlotError::Empty);
        }
        let begin = self
            .spans
            .iter()
            .map(|s| s.start)
            .fold(f64::INFINITY, f64::min);
        let end = self
            .spans
            .iter()
            .map(|s| s.end)
            .fold(f64::NEG_INFINITY, f64::max);
        // iteration 0 warms up (its forward pass has no parameters to wait
        // for); the picture starts at iteration 1 when there is one
        let first = usize::from(starts.len() >= 2);
        let (w0, w1) = match starts.get(first) {
            Some(&s) => (s, starts.get(first + n).copied().unwrap_or(end)),
            None => (begin, end),
        };
        if w1 <= w0 {
            return Err(PlotError::Empty);
        }

        // the first GPUs' tracks are the rows, top to bottom
        let gpus: BTreeSet<u64> = self.tracks.iter().map(|t| t.gpu).collect();
        let shown: BTreeSet<u64> = gpus.iter().copied().take(MAX_TIMELINE_GPUS).collect();
        let rows: Vec<usize> = (0..self.tracks.len())
            .filter(|&t| shown.contains(&self.tracks[t].gpu))
            .collect();
        let row_of: BTreeMap<usize, usize> =
            rows.iter().enumerate().map(|(i, &t)| (t, i)).collect();

        let span_us = w1 - w0;
        let (unit, factor) = if span_us >= 1e6 {
            ("s", 1e-6)
        } else if span_us >= 1e3 {
            ("ms", 1e-3)
        } else {
            ("µs", 1.0)
        };
        // rows run top to bottom; the y axis runs bottom to top
        let y_of = |row: usize| (rows.len() - 1 - row) as f64;
        let mut styles = BTreeSet::new();
        let mut rects = Vec::new();
        for s in &self.spans {
            let Some(&row) = row_of.get(&s.track) else {
                continue;
            };
            let (a, b) = (s.start.max(w0), s.end.min(w1));
            if b <= a {
                continue;
            }
            styles.insert(s.style);
            rects.push(Bar {
                x0: (a - w0) * factor,
                x1: (b - w0) * factor,
                y0: y_of(row) + 0.15,
                y1: y_of(row) + 0.85,
                color: s.style.color(),
                // each layer's pass is a span: edges show where layers meet
                edged: matches!(s.style, SpanStyle::Forward | SpanStyle::Backward),
            });
        }
        if rects.is_empty() {
            return Err(PlotError::Empty);
        }
        // the iterations' starts, labelled above the plotting area
        let marks: Vec<(f64, String)> = starts
            .iter()
            .enumerate()
            .filter(|&(_, &s)| s >= w0 && s < w1)
            .map(|(k, &s)| ((s - w0) * factor, format!("iteration {k}")))
            .collect();
        // a channel's row is named by the channel ("GPU 0 (node 0)
        // activations 0→1"), the trace's thread names being long enough
        // to squeeze the plot
        let labels: Vec<String> = rows
            .iter()
            .rev()
            .map(|&t| self.tracks[t].label.replace(" communication: ", " "))
            .collect();

        let scenario = self
            .name
            .as_ref()
            .map(|s| format!(" of {s}"))
            .unwrap_or_default();
        let iterations = match marks.len() {
            0 => String::new(),
            1 => format!(": {}", marks[0].1),
            k => format!(": iterations {first}–{}", first + k - 1),
        };
        let total = self.gpus.unwrap_or(gpus.len() as u64);
        let gpus = if self.alike && total > 1 {
            format!(" (one GPU shown: all {total} run alike)")
        } else if (shown.len() as u64) < total {
            format!(" ({} of {total} GPUs)", shown.len())
        } else {
            String::new()
        };
        let since = if marks.is_empty() {
            "Time since the first event".to_string()
        } else {
            format!("Time since the start of iteration {first}")
        };
        Ok(Chart {
            title: format!("Timeline{scenario}{iterations}{gpus}"),
            x: Axis::linear(0.0, span_us * factor, true),
            y: Axis::categories(labels),
            x_title: format!("{since} ({unit})"),
            y_title: String::new(),
            x_grid: true,
            y_grid: false,
            lines: Vec::new(),
            rects,
            marks,
            whiskers: Vec::new(),
            legend_title: None,
            legend: styles
                .iter()
                .map(|s| LegendEntry {
                    label: s.label().to_string(),
                    color: s.color(),
                    marker: None,
                })
                .collect(),
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// 2 GPUs, iterations at 0, 100, 200, 300 µs; one event per iteration
    /// per track, plus one in iteration 0 only.
    pub(in crate::plot) fn trace() -> Value {
        let mut events = vec![
            serde_json::json!({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}),
        ];
        for g in 0..2 {
            for (k, start) in [0.0, 100.0, 200.0, 300.0].iter().enumerate() {
                let pass = if k % 2 == 0 { "fwd" } else { "bwd" };
                events.push(serde_json::json!({"ph": "X", "pid": g, "tid": 0, "cat": "compute", "ts": start + 10.0, "dur": 50.0, "args": {"pass": pass}}));
                events.push(serde_json::json!({"ph": "X", "pid": g, "tid": 1, "cat": "communication", "ts": start + 60.0, "dur": 30.0}));
            }
        }
        serde_json::json!({"traceEvents": events, "otherData": {"scenario": "tiny", "gpus": 2, "iteration_starts_us": [0.0, 100.0, 200.0, 300.0]}})
    }

    #[test]
    fn timeline_shows_iterations_after_the_first() {
        let c = chart(&trace(), None).unwrap();
        // iterations 1 and 2: 2 GPUs × 2 tracks × 2 iterations
        assert_eq!(c.rects.len(), 8);
        assert_eq!(
            c.marks.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(),
            ["iteration 1", "iteration 2"]
        );
        assert_eq!(c.x_title, "Time since the start of iteration 1 (µs)");
        assert_eq!(c.title, "Timeline of tiny: iterations 1–2");
        // rows top to bottom: GPU 0 compute, GPU 0 comm, pid 1 compute, pid 1 comm
        assert_eq!(
            c.y.labels.last().map(String::as_str),
            Some("GPU 0 thread 0")
        );
        assert_eq!(c.legend.len(), 3);
        let one = chart(&trace(), Some(1)).unwrap();
        assert_eq!(one.rects.len(), 4);
        assert!(matches!(
            chart(&trace(), Some(0)),
            Err(PlotError::BadSpec(_))
        ));
        assert!(matches!(
            chart(&serde_json::json!({"events": []}), None),
            Err(PlotError::BadTrace(_))
        ));
    }

    /// A trace whose run simulated one GPU for all (`gpus_simulated` 1)
    /// draws that GPU's rows once, not once per GPU the trace repeats; a
    /// layer's pass has an edge, so adjacent layers stay apart.
    #[test]
    fn one_gpu_for_all_is_drawn_once_with_layer_edges() {
        let mut t = trace();
        t["otherData"]["gpus_simulated"] = serde_json::json!(1);
        let c = chart(&t, None).unwrap();
        // iterations 1 and 2: 1 GPU × 2 tracks × 2 iterations
        assert_eq!(c.rects.len(), 4);
        assert_eq!(c.y.labels.len(), 2, "{:?}", c.y.labels);
        assert!(
            c.title.ends_with("(one GPU shown: all 2 run alike)"),
            "{}",
            c.title
        );
        let edged: Vec<bool> = c.rects.iter().map(|r| r.edged).collect();
        // the compute track's passes are edged, communication is not
        assert_eq!(edged.iter().filter(|e| **e).count(), 2, "{edged:?}");
    }

    /// A run's Gantt is the Gantt of its trace, read from memory or from
    /// the file's text: the report draws the former, `dtsim plot
    /// --timeline` the latter, and their pictures must agree. With one
    /// representative GPU and with stragglers (every GPU its own spans),
    /// showing fewer GPUs than the run has and more.
    #[test]
    fn a_runs_gantt_is_its_traces() {
        let text = "warmup_iterations = 1\niterations = 2\n\
                    [cluster]\nnodes = 2\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                    [model]\npreset = \"resnet50\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\n";
        let points = sim::scenario::load_str(text, "t.toml", "t").unwrap();
        let mut cfg = points[0].config.clone();
        for jitter in [0.0, 0.2] {
            cfg.model.compute_jitter = jitter;
            let (_, tl) = sim::train::simulate_traced(&cfg).unwrap();
            assert_eq!(tl.gpus > 1, jitter > 0.0);
            for max in [1, 2, 8] {
                let gantt = Gantt::from_timeline(&cfg, &tl, max);
                let styles: BTreeSet<SpanStyle> = gantt.spans.iter().map(|s| s.style).collect();
                assert!(
                    styles.contains(&SpanStyle::Forward)
                        && styles.contains(&SpanStyle::Communication)
                );
                let trace = crate::trace::chrome_trace(&cfg, &tl, max);
                assert_eq!(gantt, Gantt::from_trace(&trace).unwrap(), "max {max}");
                let text = serde_json::to_string(&trace).unwrap();
                let read: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(
                    gantt,
                    Gantt::from_trace(&read).unwrap(),
                    "max {max}, read back"
                );
            }
        }
    }

    /// The chart `plot_timeline` draws of `trace`.
    fn chart(trace: &Value, iterations: Option<u32>) -> Result<Chart, PlotError> {
        let shown = iterations_shown(iterations)?;
        Gantt::from_trace(trace)?.chart(shown)
    }
}
