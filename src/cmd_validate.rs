//! `dtsim validate`: fit on part of the measurements, predict the rest with
//! the simulator, print the error of every point.

use crate::error::{CliError, print_line};
use calibration::calibrate::{self, Limits, ValidateRequest, percent as pct};
use calibration::fit::Shape;
use calibration::validate::{LARGE_BYTES, Validation};
use clap::Args;
use sim::names::Named;
use std::path::PathBuf;

/// Arguments of `dtsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// nccl-tests logs.
    #[arg(long = "nccl-tests", num_args = 1..)]
    nccl_tests: Vec<PathBuf>,
    /// OSU micro-benchmark logs.
    #[arg(long, num_args = 1..)]
    osu: Vec<PathBuf>,
    /// A profile written by `dtsim calibrate collectives`: its ping-pong
    /// fit predicts its measured collectives (or, with --predict, its
    /// collectives' fits predict another profile's).
    #[arg(long)]
    measurements: Option<PathBuf>,
    /// A second profile: each of its collectives predicted from the fit
    /// of the same operation in --measurements (at the nearest rank
    /// count), every point held out.
    #[arg(long, requires = "measurements")]
    predict: Option<PathBuf>,
    /// Ranks of collective logs that do not say (OSU collectives), 2 to
    /// 1048576.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=sim::limits::MAX_GPUS as i64))]
    ranks: Option<u32>,
    /// How each operation's time is fitted over sizes: the fastest of up
    /// to three protocols, or up to eight size regimes [default:
    /// protocols for NCCL's measurements, which switch to the faster
    /// protocol; regimes for MPI's, which switch at a size].
    #[arg(long = "fit", value_parser = crate::named::<Shape>())]
    shape: Option<Shape>,
    /// Model an operation with this algorithm instead of the fit's
    /// default (repeatable): e.g. broadcast=ompi-binomial, Open MPI's
    /// binomial broadcast, which sends to every child at once;
    /// broadcast=ompi-binomial:64KiB, the same in 64 KiB segments
    /// (linear, chain, pipeline, binary-tree, split-binary-tree, knomial,
    /// scatter-allgather, scatter-allgather-ring: Open MPI's others;
    /// broadcast=ompi and broadcast=mpich, the libraries' choices by
    /// size); allreduce=tree, NCCL's pipelined tree;
    /// allreduce=segmented-ring:64KiB, Open MPI's segmented ring in 64 KiB
    /// segments; allgather=mpich,
    /// MPICH's selection (recursive doubling below 512 KiB of output on a power
    /// of two ranks, Bruck's below 80 KiB on others, the ring from there),
    /// whose switch the size regimes break at; allgather=ompi, Open MPI
    /// 4.1's; allreduce=rabenseifner, allreduce=mpich, allreduce=ompi, the
    /// MPI libraries' allreduce; alltoall=linear, alltoall=linear-sync,
    /// alltoall=scattered, alltoall=bruck, alltoall=ompi, alltoall=mpich,
    /// alltoall=mpich-nb, Open MPI's alltoalls, MPICH's scattered exchange
    /// (linear in batches of 32) and the libraries' choices among them and
    /// the pairwise exchange (mpich-nb: MPICH's nonblocking one, waited
    /// for). A profile that names its MPI library is
    /// fitted with the library's own choice unless this names another.
    /// Open MPI's chains and k-nomial tree take a fanout after a slash,
    /// its default being 4: broadcast=chain/8, eight chains;
    /// broadcast=knomial/2, radix 2; broadcast=ompi/2, its choice by size
    /// with its k-nomial tree of radix 2; MPICH's scattered alltoall a
    /// batch: alltoall=scattered/16 or alltoall=mpich/16, 16 destinations
    /// at a time (its default is 32); and Open MPI's linear_sync a request
    /// limit: alltoall=linear-sync/8 or alltoall=ompi/8, 8 sends and 8
    /// receives outstanding (its default is none).
    #[arg(long = "algo", value_name = "OP=ALGO[/FANOUT][:SEGMENT]")]
    algos: Vec<String>,
    #[arg(long, value_name = "SIZE", value_parser = crate::eager_limit, long_help = crate::EAGER_LIMIT_HELP, help = crate::EAGER_LIMIT_HELP)]
    eager_limit: Option<u64>,
    /// One JSON object per collective on stdout (with --training, one
    /// object: every held-out run and the summary).
    #[arg(long)]
    json: bool,
    /// Fail (exit 1) if any collective's median |error| over its held-out
    /// points exceeds this fraction (0.05 = 5%).
    #[arg(long, allow_negative_numbers = true)]
    max_median_error: Option<f64>,
    /// Fail (exit 1) if any collective's median |log2(predicted/measured)|
    /// exceeds this (1 = a factor of 2 either way).
    #[arg(long, allow_negative_numbers = true)]
    max_median_log2_ratio: Option<f64>,
    /// List every line of the logs that was skipped as not the
    /// benchmark's (launcher, Slurm, Open MPI help, NCCL debug lines).
    #[arg(long)]
    verbose: bool,
    /// Measured training runs (a CSV file of the scenario's swept keys and
    /// `iteration_time_s` or `throughput`, and, without --scenario, a
    /// `scenario` column naming each run's file): fit the losses on part
    /// of them, predict the rest.
    #[arg(
        long,
        conflicts_with_all = ["nccl_tests", "osu", "measurements", "ranks", "shape", "algos", "eager_limit", "verbose"]
    )]
    training: Option<PathBuf>,
    /// The scenario whose points --training measured [default: each
    /// run's, from the file's `scenario` column].
    #[arg(long, requires = "training")]
    scenario: Option<PathBuf>,
    /// With --training: fit on the runs whose KEY takes one of these
    /// values, predict the others (e.g. cluster.nodes=1,2) [default: leave
    /// each run out in turn].
    #[arg(long = "fit-on", requires = "training", value_name = "KEY=V1,V2")]
    fit_on: Option<String>,
    /// With --training: the losses to fit.
    #[arg(
        long,
        requires = "training",
        value_delimiter = ',',
        default_value = "compute_jitter,message_overhead,nic_efficiency"
    )]
    params: Vec<String>,
}

pub fn run(a: ValidateArgs) -> Result<(), CliError> {
    let limits = Limits {
        max_median_error: a.max_median_error,
        max_median_log2_ratio: a.max_median_log2_ratio,
    };
    limits.check()?;
    // clap leaves `requires` unchecked beside the logs `--training`
    // conflicts with: say what these mean without it
    if a.training.is_none() {
        for (flag, given) in [
            ("--scenario", a.scenario.is_some()),
            ("--fit-on", a.fit_on.is_some()),
        ] {
            if given {
                return Err(CliError::Input(format!(
                    "{flag} goes with --training (measured training runs); it means nothing beside logs or profiles"
                )));
            }
        }
    }
    if let Some(measured) = &a.training {
        return training(&a, measured.clone(), a.scenario.clone());
    }
    let algos = calibration::fit::Algos::parse(&a.algos)
        .map_err(CliError::Input)?
        .with_eager_limit(a.eager_limit.unwrap_or(0));
    let named: Vec<sim::collective::Op> = sim::collective::Op::ALL
        .into_iter()
        .filter(|&op| algos.names(op))
        .collect();
    let req = ValidateRequest {
        nccl_tests: a.nccl_tests,
        osu: a.osu,
        measurements: a.measurements,
        ranks: a.ranks,
        predict: a.predict,
        shape: a.shape,
        algos,
    };
    let results = calibrate::validate(&req)?;
    // a log's own rank count wins over --ranks: say so where they differ
    if let Some(given) = req.ranks {
        for v in results.iter().filter(|v| {
            v.ranks != given
                && matches!(v.tool.as_str(), "nccl-tests" | "osu")
                && !matches!(v.op.as_str(), "latency" | "bw")
        }) {
            note!(
                "warning: --ranks {given}: {} says its `{}` ran on {} ranks{}, and that count is used",
                v.source,
                v.op,
                v.ranks,
                v.ranks_inferred
                    .as_deref()
                    .map_or(String::new(), |how| format!(" ({how})"))
            );
        }
    }
    // an algorithm named for an operation none of the measurements holds
    // changes nothing: say so rather than let it pass for applied
    for op in named {
        if !results.iter().any(|v| v.op == op.name()) {
            note!(
                "warning: --algo {}=…: no {} among the measurements, so it applies to nothing",
                op.name(),
                op.name()
            );
        }
    }
    for v in &results {
        if a.json {
            let line = serde_json::to_string(v).map_err(|e| CliError::Other(e.to_string()))?;
            print_line(line)?;
        } else {
            print_line(table(v, a.verbose))?;
        }
    }
    for line in calibrate::check_limits(&results, &limits)? {
        note!("{line}");
    }
    Ok(())
}

/// One validation as the human table shows it (ends with a blank line):
/// with `verbose`, every skipped line of its log.
fn table(v: &Validation, verbose: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let protocols = v.shape == Shape::Protocols.name();
    let _ = writeln!(
        s,
        "{} · {} {} on {} ranks · fitted on {} ({} {}{})",
        v.source,
        v.tool,
        v.op,
        v.ranks,
        v.fitted_on,
        v.regimes.len(),
        if protocols { "protocol" } else { "regime" },
        if v.regimes.len() == 1 { "" } else { "s" }
    );
    if let Some(q) = v.sharpness {
        let _ = writeln!(
            s,
            "  switches rounded: the fastest protocol blended with the others, (Σ t^-q)^(-1/q), q = {q}"
        );
    }
    if let Some(how) = &v.ranks_inferred {
        let _ = writeln!(s, "  ranks: {how}");
    }
    match (v.skipped_lines.len(), verbose) {
        (0, _) => {}
        (n, false) => {
            let _ = writeln!(
                s,
                "  skipped {n} line{} that {} not the benchmark's (--verbose lists them)",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" }
            );
        }
        (n, true) => {
            let _ = writeln!(
                s,
                "  skipped {n} line{} that {} not the benchmark's:",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" }
            );
            for l in &v.skipped_lines {
                let _ = writeln!(s, "    line {}: {}", l.line, l.text);
            }
        }
    }
    for p in &v.screened {
        let _ = writeln!(
            s,
            "  screened out of the fit: {} B ({:.2} us): {}",
            p.size_bytes,
            p.measured_s * 1e6,
            p.reason
        );
    }
    for r in &v.regimes {
        // R² is undefined below 3 points or when the times do not vary
        let r2 = if r.r2.is_finite() {
            format!("{:.4}", r.r2)
        } else {
            format!(
                "n/a ({} point{})",
                r.points,
                if r.points == 1 { "" } else { "s" }
            )
        };
        let bw = match r.bandwidth() {
            Some(b) => format!("bandwidth {}", sim::units::HumanRate(b)),
            None => "latency only (time flat in size)".into(),
        };
        match &r.protocol {
            // regimes fitted apart at the eager limit, named by protocol
            Some(name) if !protocols => {
                // one size cannot show a bandwidth: the fit lent it
                let bw = if r.points < 2 {
                    format!("{bw} (the other protocol's nearest regime's)")
                } else {
                    bw
                };
                let _ = writeln!(
                    s,
                    "  regime {}..{} B ({name}): alpha {:.2} us, {bw}, R² {r2}",
                    r.min_bytes,
                    r.max_bytes,
                    r.alpha_s * 1e6,
                );
            }
            Some(name) => {
                let fastest = match r.points {
                    0 => "fastest at none of the fitted sizes".to_string(),
                    n => format!(
                        "fastest at {n} of the fitted sizes ({}..{} B), R² {r2}",
                        r.min_bytes, r.max_bytes
                    ),
                };
                let _ = writeln!(
                    s,
                    "  protocol {name}: alpha {:.2} us, {bw}; {fastest}",
                    r.alpha_s * 1e6,
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "  regime {}..{} B: alpha {:.2} us, {bw}, R² {r2}",
                    r.min_bytes,
                    r.max_bytes,
                    r.alpha_s * 1e6,
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "  {:>14} {:>14} {:>14} {:>8}  via",
        "size (B)", "measured (us)", "predicted (us)", "error"
    );
    for p in &v.points {
        let _ = writeln!(
            s,
            "  {:>14} {:>14.2} {:>14.2} {:>8}  {}",
            p.size_bytes,
            p.measured_s * 1e6,
            p.predicted_s * 1e6,
            pct(p.error),
            p.via
        );
    }
    // a blank line after each validation
    let _ = writeln!(
        s,
        "  held out: median |error| {} (max {}); at ≥ {} KiB: median {} (max {}); median |log2(pred/meas)| {:.2}",
        pct(v.median_abs_error),
        pct(v.max_abs_error),
        LARGE_BYTES / 1024,
        pct(v.median_abs_error_large),
        pct(v.max_abs_error_large),
        v.median_abs_log2_ratio
    );
    s
}

/// `dtsim validate --training RUNS.csv [--scenario FILE]`.
fn training(
    a: &ValidateArgs,
    measured: PathBuf,
    scenario: Option<PathBuf>,
) -> Result<(), CliError> {
    use calibration::training;
    if a.max_median_log2_ratio.is_some() {
        return Err(CliError::Input(
            "--max-median-log2-ratio is for collectives; with --training give --max-median-error"
                .into(),
        ));
    }
    let req = training::TrainingValidateRequest {
        scenario,
        measured,
        params: crate::cmd_calibrate::loss_params(&a.params)?,
        fit_on: a
            .fit_on
            .as_deref()
            .map(training::parse_fit_on)
            .transpose()?,
    };
    let v = training::validate(&req)?;
    if a.json {
        let line = serde_json::to_string(&v).map_err(|e| CliError::Other(e.to_string()))?;
        print_line(line)?;
    } else {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} · {} · fitted: {}",
            req.measured.display(),
            v.split,
            v.fitted.join(", ")
        );
        let width = v
            .held_out
            .iter()
            .map(|h| h.point.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let _ = writeln!(
            s,
            "  {:<width$}  {:>12} {:>12} {:>8}  {:>12} {:>8}",
            "point", "measured (s)", "predicted", "error", "uncalibrated", "error"
        );
        for h in &v.held_out {
            let _ = writeln!(
                s,
                "  {:<width$}  {:>12.5} {:>12.5} {:>8}  {:>12.5} {:>8}",
                h.point,
                h.measured_s,
                h.predicted_s,
                format!("{:+.1}%", h.error * 100.0),
                h.uncalibrated_s,
                format!("{:+.1}%", h.uncalibrated_error * 100.0)
            );
        }
        let _ = writeln!(
            s,
            "  held out: median |error| {} (max {}); uncalibrated: median {}",
            pct(v.median_abs_error),
            pct(v.max_abs_error),
            pct(v.uncalibrated_median_abs_error)
        );
        print_line(s)?;
    }
    if let Some(m) = a.max_median_error
        && v.median_abs_error > m
    {
        return Err(CliError::Other(format!(
            "held-out median |error| {} exceeds --max-median-error {}",
            pct(v.median_abs_error),
            pct(m)
        )));
    }
    Ok(())
}
