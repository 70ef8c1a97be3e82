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
    #[arg(long, default_value = "1KiB")]
    min_size: String,
    /// Largest size.
    #[arg(long, default_value = "4MiB")]
    max_size: String,
    /// Timed repeats per size.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
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

fn parse_size(flag: &str, text: &str) -> Result<u64, CliError> {
    sim::units::parse_bytes(text).map_err(|e| CliError::Input(format!("{flag}: {e}")))
}

pub fn run(a: CalibrateArgs) -> Result<(), CliError> {
    let who = requester();
    let (profile, output) = match a.what {
        What::Net(n) => {
            let req = NetRequest {
                nccl_tests: n.nccl_tests,
                osu: n.osu,
                ranks: n.ranks,
                shape: n.shape,
            };
            (Some(calibrate::net(&req, &who)?), n.output)
        }
        What::Kernels(k) => {
            let req = KernelRequest {
                backend: k.backend,
                sizes: k.sizes,
                densities: k.densities,
                repeats: k.repeats,
            };
            (Some(calibrate::kernels(&req, &who)?), k.output)
        }
        What::Collectives(c) => {
            let req = CollectiveRequest {
                backend: c.backend,
                ops: c.ops,
                min_size: parse_size("--min-size", &c.min_size)?,
                max_size: parse_size("--max-size", &c.max_size)?,
                repeats: c.repeats,
            };
            // under MPI, only rank 0 has a profile to write
            (calibrate::collectives(&req, &who)?, c.output)
        }
    };
    if let Some(p) = profile {
        calibrate::write_profile(&p, &output)?;
        // what the logs did not say, or said among other things
        for f in &p.fits {
            if let Some(how) = &f.ranks_inferred {
                eprintln!("{} `{}`: {how}", f.source, f.op);
            }
            if !f.screened_out_bytes.is_empty() {
                eprintln!(
                    "{} `{}`: kept out of the fit as measurement anomalies (throughput under 60% of the best at a smaller size): {} B",
                    f.source,
                    f.op,
                    f.screened_out_bytes
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" B, ")
                );
            }
            if f.skipped_lines > 0 {
                eprintln!(
                    "{} `{}`: skipped {} line{} that {} not the benchmark's (`dtsim validate --verbose` lists them)",
                    f.source,
                    f.op,
                    f.skipped_lines,
                    if f.skipped_lines == 1 { "" } else { "s" },
                    if f.skipped_lines == 1 { "is" } else { "are" }
                );
            }
        }
        eprintln!("wrote {}", output.display());
    }
    Ok(())
}
