//! `dtsim calibrate net|kernels|collectives`: measure or read measurements,
//! fit cost models, write a profile.

use crate::error::CliError;
use calibration::calibrate::{
    self, CollectiveBackend, CollectiveRequest, KernelBackend, KernelRequest, NetRequest, Requester,
};
use calibration::fit::Shape;
use clap::{Args, Subcommand};
use sim::names::Named;
use std::path::PathBuf;

/// Arguments of `dtsim calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Fit the network from nccl-tests and OSU micro-benchmark logs.
    Net(NetArgs),
    /// Time Top-k, threshold sorting and masking kernels and fit their cost.
    Kernels(KernelArgs),
    /// Measure collectives with MPI (under mpirun) or NCCL (local GPUs).
    Collectives(CollectiveArgs),
    /// Fit the losses besides bytes (stragglers, per-message overhead, NIC
    /// efficiency) to measured training runs of a scenario's points.
    Training(TrainingArgs),
}

#[derive(Debug, Args)]
struct TrainingArgs {
    /// The scenario whose points were measured [default: each run's, from
    /// the measured file's `scenario` column].
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// The measured runs: a CSV file with the scenario's swept keys and
    /// `iteration_time_s` or `throughput`, and, without --scenario, a
    /// `scenario` column naming each run's file (docs/calibration.md).
    #[arg(long)]
    measured: PathBuf,
    /// The losses to fit, comma-separated: compute_jitter,
    /// message_overhead, nic_efficiency (the others keep the scenario's
    /// values).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "compute_jitter,message_overhead,nic_efficiency"
    )]
    params: Vec<String>,
    /// The profile to write.
    #[arg(short, long)]
    output: PathBuf,
}

/// `--params` as losses.
pub(crate) fn loss_params(names: &[String]) -> Result<Vec<sim::losses::Param>, CliError> {
    let mut out = Vec::new();
    for n in names {
        let p = sim::losses::Param::parse(n.trim())
            .map_err(|m| CliError::Input(format!("--params: {m}")))?;
        if out.contains(&p) {
            return Err(CliError::Input(format!("--params: `{n}` is named twice")));
        }
        out.push(p);
    }
    out.sort();
    Ok(out)
}

/// The fitted losses, a line each, as `calibrate training` and `validate
/// --training` print them.
pub(crate) fn describe_fit(f: &calibration::training::TrainingFit) -> String {
    use sim::losses::Param;
    let mut s = String::new();
    for (i, p) in Param::ALL.iter().enumerate() {
        let v = f.values[i];
        let shown = |x: f64| match p {
            Param::MessageOverhead => format!("{:.2} us", x * 1e6),
            _ => format!("{:.2}%", x * 100.0),
        };
        let how = match f.fitted.iter().position(|n| n == p.name()) {
            None => "held".to_string(),
            Some(j) if f.unidentified.contains(&f.fitted[j]) => {
                "not fitted: no run depends on it (the scenario's value, held)".into()
            }
            Some(j) if f.collinear.contains(&f.fitted[j]) => {
                "fitted, but moved by the runs only together with the others named so: no uncertainty"
                    .into()
            }
            Some(j) if f.at_bound.contains(&f.fitted[j]) => {
                "fitted, on a bound of its range".into()
            }
            Some(j) if f.standard_errors[j].is_finite() => {
                format!(
                    "fitted, ± {} (one standard error)",
                    shown(f.standard_errors[j])
                )
            }
            Some(_) => "fitted".into(),
        };
        s.push_str(&format!("  {:<17} {:>10}  {how}\n", p.name(), shown(v)));
    }
    s.push_str(&format!(
        "  rms of ln(predicted/measured): {:.4} ({} iterations, {} simulations)\n",
        f.rms_log_residual, f.iterations, f.simulations
    ));
    s
}

#[derive(Debug, Args)]
struct NetArgs {
    /// nccl-tests logs (all_reduce_perf, all_gather_perf, ...).
    #[arg(long = "nccl-tests", num_args = 1..)]
    nccl_tests: Vec<PathBuf>,
    /// OSU micro-benchmark logs (osu_latency, osu_bw, osu_allreduce, ...).
    #[arg(long, num_args = 1..)]
    osu: Vec<PathBuf>,
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
    /// Fit an operation as this algorithm instead of the default
    /// (repeatable): e.g. broadcast=ompi-binomial, Open MPI's binomial
    /// broadcast, which sends to every child at once;
    /// broadcast=ompi-binomial:64KiB, the same in 64 KiB segments
    /// (linear, chain, pipeline, binary-tree, split-binary-tree, knomial,
    /// scatter-allgather, scatter-allgather-ring: Open MPI's others; ompi
    /// and mpich, the libraries' choices by size);
    /// allreduce=tree, NCCL's pipelined tree; allreduce=segmented-ring:64KiB,
    /// Open MPI's segmented ring in 64 KiB segments; allgather=mpich, MPICH's
    /// choice of recursive doubling, Bruck's or the ring by size (ompi,
    /// Open MPI's); allreduce=mpich or allreduce=ompi, the libraries'
    /// choice of recursive doubling, Rabenseifner's or the ring;
    /// alltoall=linear, linear-sync, scattered, bruck, ompi, mpich or
    /// mpich-nb: Open MPI's linear exchanges (basic and with a request
    /// limit), MPICH's scattered one (linear in batches of 32), Open MPI's
    /// modified Bruck, and the libraries' choices among them and the
    /// pairwise one (mpich-nb: MPICH's nonblocking one, waited for).
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
    /// The profile to write.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Debug, Args)]
struct KernelArgs {
    /// Where to run the kernels.
    #[arg(long, default_value = Named::name(KernelBackend::Cpu), value_parser = crate::named::<KernelBackend>())]
    backend: KernelBackend,
    /// Sizes (elements), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "65536,262144,1048576,4194304"
    )]
    sizes: Vec<usize>,
    /// Densities k/m, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.001,0.01")]
    densities: Vec<f64>,
    /// Timed repeats per point.
    #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
    /// The profile to write.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Debug, Args)]
struct CollectiveArgs {
    /// MPI across the ranks of mpirun/srun, or NCCL across this host's GPUs.
    #[arg(long, value_parser = crate::named::<CollectiveBackend>())]
    backend: CollectiveBackend,
    /// Operations, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "pingpong,allreduce,allgather,alltoall,broadcast"
    )]
    ops: Vec<String>,
    /// Smallest size, bytes (with a unit if you like: "1KiB").
    #[arg(long, default_value = "1KiB", allow_hyphen_values = true)]
    min_size: String,
    /// Largest size.
    #[arg(long, default_value = "4MiB", allow_hyphen_values = true)]
    max_size: String,
    /// Timed repeats per size (under MPI taken in rounds: one call of each size a round).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
    /// Fit an operation as this algorithm instead of the default
    /// (repeatable): e.g. broadcast=ompi-binomial, Open MPI's binomial
    /// broadcast, which sends to every child at once;
    /// broadcast=ompi-binomial:64KiB, the same in 64 KiB segments
    /// (linear, chain, pipeline, binary-tree, split-binary-tree, knomial,
    /// scatter-allgather, scatter-allgather-ring: Open MPI's others; ompi
    /// and mpich, the libraries' choices by size);
    /// allreduce=tree, NCCL's pipelined tree; allreduce=segmented-ring:64KiB,
    /// Open MPI's segmented ring in 64 KiB segments; allgather=mpich, MPICH's
    /// choice of recursive doubling, Bruck's or the ring by size (ompi,
    /// Open MPI's); allreduce=mpich or allreduce=ompi, the libraries'
    /// choice of recursive doubling, Rabenseifner's or the ring;
    /// alltoall=linear, linear-sync, scattered, bruck, ompi, mpich or
    /// mpich-nb: Open MPI's linear exchanges (basic and with a request
    /// limit), MPICH's scattered one (linear in batches of 32), Open MPI's
    /// modified Bruck, and the libraries' choices among them and the
    /// pairwise one (mpich-nb: MPICH's nonblocking one, waited for).
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
    /// The profile to write (by rank 0).
    #[arg(short, long)]
    output: PathBuf,
}

/// This command, as profiles record who made them.
fn requester() -> Requester {
    Requester {
        tool: format!("dtsim {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect::<Vec<_>>().join(" "),
    }
}

fn algos(specs: &[String]) -> Result<calibration::fit::Algos, CliError> {
    calibration::fit::Algos::parse(specs).map_err(CliError::Input)
}

fn parse_size(flag: &str, text: &str) -> Result<u64, CliError> {
    sim::units::parse_bytes(text).map_err(|e| CliError::Input(format!("{flag}: {e}")))
}

pub fn run(a: CalibrateArgs) -> Result<(), CliError> {
    // refused before a measurement that may take minutes
    let out = match &a.what {
        What::Net(n) => &n.output,
        What::Kernels(k) => &k.output,
        What::Collectives(c) => &c.output,
        What::Training(t) => &t.output,
    };
    crate::error::output_file("-o", out)?;
    // the profile must not replace a log or a file it is made from
    let inputs: Vec<&PathBuf> = match &a.what {
        What::Net(n) => n.nccl_tests.iter().chain(&n.osu).collect(),
        What::Training(t) => t.scenario.iter().chain([&t.measured]).collect(),
        What::Kernels(_) | What::Collectives(_) => Vec::new(),
    };
    crate::error::not_an_input("-o", out, &inputs, "the profile")?;
    let who = requester();
    // a kernel calibration's checkpoint, which its finished profile replaces
    let mut checkpoint = None;
    let (profile, output) = match a.what {
        What::Training(t) => {
            let req = calibration::training::TrainingRequest {
                scenario: t.scenario,
                measured: t.measured,
                params: loss_params(&t.params)?,
            };
            let (profile, fit) = calibration::training::calibrate(&req, &who)?;
            note_part!("{}", describe_fit(&fit));
            for w in &fit.warnings {
                note!("warning: {w}");
            }
            for p in &profile.training_points {
                note!(
                    "  {}: measured {:.4} s, predicted {:.4} s ({:+.1}%)",
                    p.point,
                    p.measured_s,
                    p.predicted_s,
                    (p.predicted_s / p.measured_s - 1.0) * 100.0
                );
            }
            (Some(profile), t.output)
        }
        What::Net(n) => {
            let req = NetRequest {
                nccl_tests: n.nccl_tests,
                osu: n.osu,
                ranks: n.ranks,
                shape: n.shape,
                algos: algos(&n.algos)?.with_eager_limit(n.eager_limit.unwrap_or(0)),
            };
            (Some(calibrate::net(&req, &who)?), n.output)
        }
        What::Kernels(k) => {
            let req = KernelRequest {
                backend: k.backend,
                sizes: k.sizes,
                densities: k.densities,
                repeats: k.repeats,
                checkpoint: calibrate::checkpoint_of(&k.output),
            };
            let profile = calibrate::kernels(&req, &who)?;
            checkpoint = req.checkpoint;
            (Some(profile), k.output)
        }
        What::Collectives(c) => {
            let req = CollectiveRequest {
                backend: c.backend,
                ops: c.ops,
                min_size: parse_size("--min-size", &c.min_size)?,
                max_size: parse_size("--max-size", &c.max_size)?,
                repeats: c.repeats,
                algos: algos(&c.algos)?.with_eager_limit(c.eager_limit.unwrap_or(0)),
            };
            // under MPI, only rank 0 has a profile to write
            (calibrate::collectives(&req, &who)?, c.output)
        }
    };
    if let Some(p) = profile {
        calibrate::write_profile(&p, &output)?;
        if let Some(partial) = &checkpoint {
            let _ = std::fs::remove_file(partial);
        }
        // what the logs did not say, or said among other things
        for f in &p.fits {
            if let Some(how) = &f.ranks_inferred {
                note!("{} `{}`: {how}", f.source, f.op);
            }
            for (bytes, why) in [
                (
                    &f.screened_out_bytes,
                    "measurement anomalies (throughput under 60% of the best at a smaller size)",
                ),
                (
                    &f.unmeasured_bytes,
                    "measuring no message (a size or a time of 0)",
                ),
            ] {
                if !bytes.is_empty() {
                    let sizes: Vec<String> = bytes.iter().map(u64::to_string).collect();
                    note!(
                        "{} `{}`: kept out of the fit as {why}: {} B",
                        f.source,
                        f.op,
                        sizes.join(" B, ")
                    );
                }
            }
            if f.skipped_lines > 0 {
                note!(
                    "{} `{}`: skipped {} line{} that {} not the benchmark's (`dtsim validate --verbose` lists them)",
                    f.source,
                    f.op,
                    f.skipped_lines,
                    if f.skipped_lines == 1 { "" } else { "s" },
                    if f.skipped_lines == 1 { "is" } else { "are" }
                );
            }
        }
        if p.provenance.notes.iter().any(|n| n == calibrate::ONE_GPU) {
            note!("note: {}", calibrate::ONE_GPU);
        }
        note!("wrote {}", output.display());
    }
    Ok(())
}
