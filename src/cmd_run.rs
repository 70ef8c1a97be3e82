//! `dtsim run FILE [--json]`.

use crate::error::{CliError, print_line};
use clap::Args;
use reports::run::Request;
use sim::units::HumanBytes;
use std::path::PathBuf;

/// Arguments of `dtsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Print one JSON object per point on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Write the run's timeline as a Chrome trace-event file (Perfetto,
    /// chrome://tracing); the scenario must have a single point.
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// GPUs to show in the trace, the first K (with stragglers each shows
    /// its own passes and waits; without, one representative GPU's).
    #[arg(long, default_value_t = 8, value_name = "K", requires = "trace")]
    trace_gpus: u32,
    /// Simulate each point N times (2 to 10000; 100 if N is left out),
    /// over the seeds seed, seed + 1, …, and give the 5th, 50th and 95th
    /// percentiles of the iteration time and the throughput (a line under
    /// each point; `_p5`, `_p50`, `_p95` fields in --json). Stragglers and
    /// the token model are what vary from seed to seed; a point with
    /// neither runs once.
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "100",
        value_parser = crate::uncertainty_runs
    )]
    uncertainty: Option<u32>,
}

pub fn run(a: RunArgs) -> Result<(), CliError> {
    if let Some(out) = &a.trace {
        crate::error::output_file("--trace", out)?;
        // a review wrote a trace over its own scenario
        crate::error::not_an_input("--trace", out, &[&a.file], "the trace")?;
    }
    let runs = reports::run::start(&Request {
        file: a.file,
        trace: a.trace.clone(),
        trace_gpus: a.trace_gpus,
        uncertainty: a.uncertainty,
    })?;
    for w in runs.warnings() {
        note!("warning: {w}");
    }
    if let Some(out) = &a.trace {
        note!("wrote {}", out.display());
    }
    let bound = runs.label_width();
    let methods = runs.method_width();
    // the header goes out with the first row, so that an error before it
    // prints no table at all; the label column fits every row's label
    let mut width: Option<(usize, usize, String)> = None;
    // said under the first point and wherever a point's differ
    let mut losses: Option<reports::run::Losses> = None;
    for p in runs {
        let p = p?;
        if a.json {
            let line = serde_json::to_string(&p).map_err(|e| CliError::Other(e.to_string()))?;
            print_line(line)?;
            continue;
        }
        let label = p.label();
        let r = &p.result;
        let mut dense = if r.dense == "allreduce" {
            format!("ar-{}", r.algo)
        } else {
            r.dense.to_string()
        };
        // the sparse method after the dense one ("ar-ring+ps": Parallax's
        // hybrid), for a model with sparse parts
        if r.sparse != "none" {
            dense = format!("{dense}+{}", r.sparse);
        }
        let (width, mw, ref unit) = match width {
            Some(ref w) => w.clone(),
            None => {
                let w = bound.max(label.len()).max(28);
                // room for "ar-hierarchical+allgather" when the model has
                // sparse parts
                // (and for the MPI libraries' longer names)
                // (a swept algorithm's rows add the sparse method too)
                let swept = match p.result.sparse.as_str() {
                    _ if methods == 0 => 0,
                    "none" => methods,
                    s => methods + 1 + s.len(),
                };
                let mw = if p.result.sparse == "none" { 10 } else { 25 }
                    .max(dense.len())
                    .max(swept);
                print_line(format_args!(
                    "{:<w$} {:>5} {:<14} {:<mw$} {:<9} {:>10} {:>12} {:>6} {:>9} {:>9} {:>9} {:>11}",
                    "scenario",
                    "gpus",
                    "network",
                    if p.result.sparse == "none" {
                        "dense"
                    } else {
                        "dense+sparse"
                    },
                    "schedule",
                    "iter (ms)",
                    // the first point's unit (a row of another model, in a
                    // sweep of presets, names its own)
                    p.result.throughput_unit,
                    "eff",
                    "compute",
                    "comm",
                    "exposed",
                    "sent/GPU"
                ))?;
                width
                    .insert((w, mw, p.result.throughput_unit.clone()))
                    .clone()
            }
        };
        // + 0.0: a zero that came out negative (-0.0) prints as 0
        let ms = |s: f64| s * 1e3 + 0.0;
        print_line(format_args!(
            "{:<width$} {:>5} {:<14} {:<mw$} {:<9} {:>10.2} {:>12} {:>5.1}% {:>7.2}ms {:>7.2}ms {:>7.2}ms {:>11}",
            label,
            r.gpus,
            r.network,
            dense,
            r.schedule,
            ms(r.iteration_time_s),
            Throughput(
                r.throughput,
                (r.throughput_unit != *unit).then_some(&r.throughput_unit)
            ),
            r.scaling_efficiency * 100.0,
            ms(r.compute_s),
            ms(r.comm_s),
            ms(r.exposed_comm_s),
            HumanBytes(r.bytes_sent_per_gpu).to_string()
        ))?;
        if let Some(i) = &p.interval {
            let what = if i.uncertainty_samples == 1 {
                "the same every run (nothing drawn from the seed)".to_string()
            } else if p.fitted_draws && p.result.compute_jitter == 0.0 {
                format!("over {} draws of the fitted losses", i.uncertainty_samples)
            } else if p.fitted_draws {
                format!(
                    "over {} seeds and draws of the fitted losses",
                    i.uncertainty_samples
                )
            } else {
                format!("over {} seeds", i.uncertainty_samples)
            };
            print_line(format_args!(
                "  p5 / p50 / p95 {what}: iteration {:.2} / {:.2} / {:.2} ms, {} {:.1} / {:.1} / {:.1}",
                ms(i.iteration_time_s_p5),
                ms(i.iteration_time_s_p50),
                ms(i.iteration_time_s_p95),
                r.throughput_unit,
                i.throughput_p5,
                i.throughput_p50,
                i.throughput_p95
            ))?;
        }
        if losses != Some(p.losses()) {
            losses = Some(p.losses());
            match (&p.training_profile, &p.loss_sources) {
                (Some(f), Some(src)) => {
                    // each loss's source (a review: a loss the scenario
                    // set itself read as fitted)
                    let mut from = Vec::new();
                    if !src.fitted.is_empty() {
                        from.push(format!("{} fitted to measured runs", src.fitted.join(", ")));
                    }
                    if !src.held.is_empty() {
                        from.push(format!("{} held by its fit", src.held.join(", ")));
                    }
                    if !src.own.is_empty() {
                        from.push(format!("{} the scenario's own", src.own.join(", ")));
                    }
                    print_line(format_args!(
                        "  losses besides bytes: {} (training profile {f}: {})",
                        p.losses(),
                        from.join("; ")
                    ))?
                }
                _ => print_line(format_args!("  losses besides bytes: {}", p.losses()))?,
            }
        }
        if let Some(mp) = &p.model_parallel {
            print_line(format_args!(
                "  model parallel: {} stages ({}), {} trainer{}, {} micro-batch{}",
                mp.stages.len(),
                mp.stages.join(" | "),
                mp.trainers,
                if mp.trainers == 1 { "" } else { "s" },
                mp.microbatches,
                if mp.microbatches == 1 { "" } else { "es" }
            ))?;
        }
        for k in &r.kernels {
            print_line(format_args!(
                "  {}: {:.2} ms an iteration ({})",
                k.task,
                ms(k.seconds),
                k.source
            ))?;
        }
        if !r.host_tasks.is_empty() {
            let tasks: Vec<String> = r
                .host_tasks
                .iter()
                .map(|t| format!("{} {:.2} ms", t.task, ms(t.seconds)))
                .collect();
            print_line(format_args!(
                "  tables in host memory, an iteration of each GPU's process: {}",
                tasks.join(", ")
            ))?;
        }
        if let Some(h) = &r.host_cpu {
            print_line(format_args!(
                "  host CPU: busiest {}, {:.2} ms of work an iteration on {} core{} ({:.0}% of their time); its longest task `{}` {:.2} ms ({:.0}% of the iteration)",
                h.host,
                ms(h.busy_s),
                h.cores,
                if h.cores == 1 { "" } else { "s" },
                h.utilisation * 100.0,
                h.longest_task,
                ms(h.longest_task_s),
                if r.iteration_time_s > 0.0 {
                    h.longest_task_s / r.iteration_time_s * 100.0
                } else {
                    0.0
                }
            ))?;
        }
        if let Some(ps) = r.ps_servers.as_ref().filter(|p| p.dedicated_machines > 0) {
            print_line(format_args!(
                "  parameter servers: {} on {} dedicated machine{} of {} cores (strategy.ps_machines), none on the GPU machines",
                ps.servers,
                ps.dedicated_machines,
                if ps.dedicated_machines == 1 { "" } else { "s" },
                ps.machine_cores
            ))?;
        }
        if !r.links.is_empty() {
            print_line(format_args!(
                "  busiest links an iteration: {}",
                busiest_links(&r.links)
            ))?;
        }
        if let Some(pl) = &r.ps_placement {
            let b = pl.busiest();
            let n = pl.bytes_per_push.len().max(1) as f64;
            let mean = pl.bytes_per_push.iter().sum::<f64>() / n;
            print_line(format_args!(
                "  ps_placement = \"whole\": {} dense variable{} on {} server{}; a push sends the busiest server {} ({} variable{}; {} on average); its busiest receiving thread spends {:.2} ms an iteration on them",
                pl.variables.iter().sum::<u32>(),
                if pl.variables.iter().sum::<u32>() == 1 {
                    ""
                } else {
                    "s"
                },
                pl.variables.len(),
                if pl.variables.len() == 1 { "" } else { "s" },
                HumanBytes(pl.bytes_per_push[b]),
                pl.variables[b],
                if pl.variables[b] == 1 { "" } else { "s" },
                HumanBytes(mean),
                ms(pl.receive_thread_s[b])
            ))?;
        }
        if let Some(s) = &r.partition_search {
            let samples: Vec<String> = s
                .samples
                .iter()
                .map(|x| format!("{} → {:.2} ms", x.partitions, ms(x.iteration_time_s)))
                .collect();
            let mut counts: Vec<u32> = s.samples.iter().map(|x| x.partitions).collect();
            counts.sort_unstable();
            counts.dedup();
            // Eq. 1 has three terms: fewer counts do not determine them
            // (θ is then zeros in --json), and without θ1, θ2 > 0 it has no
            // minimum; the search takes its fastest sample either way
            let fit = if counts.len() < 3 {
                format!(
                    "{} partition count{} sampled, too few to fit Eq. 1's three terms; chosen the fastest, {}",
                    counts.len(),
                    if counts.len() == 1 { "" } else { "s" },
                    s.chosen
                )
            } else {
                format!(
                    "fit θ0 = {:.4} s, θ1 = {:.4} s, θ2 = {:.3e} s; chosen {} partitions{}",
                    s.theta[0],
                    s.theta[1],
                    s.theta[2],
                    s.chosen,
                    if s.theta[1] > 0.0 && s.theta[2] > 0.0 {
                        ""
                    } else {
                        " (the fastest sample: the fit has no minimum)"
                    }
                )
            };
            print_line(format_args!(
                "  ps_partitions = \"auto\": sampled {}; {fit}",
                samples.join(", "),
            ))?;
        }
    }
    Ok(())
}

/// A throughput for the human table: one decimal, and its unit where the
/// column's header names another (a sweep over presets of different
/// units).
struct Throughput<'a>(f64, Option<&'a String>);

impl std::fmt::Display for Throughput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self.1 {
            None => format!("{:.1}", self.0),
            Some(unit) => format!("{:.1} {unit}", self.0),
        };
        f.pad(&text)
    }
}

/// The three busiest kinds of link of a run, for its human output: each
/// kind's busiest link, its bytes an iteration and how busy they keep it,
/// and where the kind's load is uneven (a hot spot) the kind's mean; a
/// link's two directions as one where they carry the same (the rest are
/// in `--json`).
fn busiest_links(loads: &[sim::train::LinkLoad]) -> String {
    let base = |k: &str| {
        k.strip_suffix("-up")
            .or_else(|| k.strip_suffix("-down"))
            .unwrap_or(k)
            .to_string()
    };
    let mut used = vec![false; loads.len()];
    let mut out = Vec::new();
    for (i, k) in loads.iter().enumerate() {
        if used[i] || out.len() == 3 {
            continue;
        }
        // the other direction of the same links, carrying the same (but
        // for the float sums' rounding)
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        let pair = (i + 1..loads.len()).find(|&j| {
            let o = &loads[j];
            !used[j]
                && base(&o.kind) == base(&k.kind)
                && base(&o.busiest) == base(&k.busiest)
                && same(o.bytes_per_iteration, k.bytes_per_iteration)
                && same(o.mean_bytes_per_iteration, k.mean_bytes_per_iteration)
        });
        let (name, each, kind) = match pair {
            Some(j) => {
                used[j] = true;
                (base(&k.busiest), " each way", base(&k.kind))
            }
            None => (k.busiest.clone(), "", k.kind.clone()),
        };
        let busy = match k.utilisation * 100.0 {
            p if p > 0.0 && p < 0.05 => "<0.1".to_string(),
            p => format!("{p:.1}"),
        };
        let uneven = k.links > 1 && k.mean_bytes_per_iteration < 0.999 * k.bytes_per_iteration;
        let mean = if uneven {
            format!(
                "; {} on average over the {} {kind} links",
                HumanBytes(k.mean_bytes_per_iteration),
                k.links
            )
        } else {
            String::new()
        };
        out.push(format!(
            "{name} {}{each} ({busy}% busy{mean})",
            HumanBytes(k.bytes_per_iteration)
        ));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use sim::train::LinkLoad;

    fn load(kind: &str, busiest: &str, bytes: f64) -> LinkLoad {
        LinkLoad {
            kind: kind.into(),
            links: 4,
            busiest: busiest.into(),
            bytes_per_iteration: bytes,
            utilisation: 0.545,
            mean_bytes_per_iteration: bytes,
        }
    }

    /// A link's two directions are one entry where they carry the same
    /// but for float rounding (166003300 and 166003299.99999997 bytes, a
    /// model-parallel DCT-DP run's), and two where they differ.
    #[test]
    fn directions_join_across_rounding() {
        let pair = [
            load("nic-down", "node0-nic0-down", 166_003_300.0),
            load("nic-up", "node0-nic0-up", 166_003_299.999_999_97),
        ];
        assert_eq!(
            super::busiest_links(&pair),
            "node0-nic0 158.3 MiB each way (54.5% busy)"
        );
        let apart = [
            load("nic-down", "node0-nic0-down", 166_003_300.0),
            load("nic-up", "node0-nic0-up", 166_000_000.0),
        ];
        assert!(super::busiest_links(&apart).contains("node0-nic0-up 158.3 MiB (54.5% busy)"));
    }
}
