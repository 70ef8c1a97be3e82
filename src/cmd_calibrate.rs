//! `dtsim calibrate net|kernels|collectives`: measure or read measurements,
//! fit cost models, write a profile.

use crate::CliError;
use calibration::fit::{Fit, Model, fit_linear_relative, fit_measurements};
use calibration::logs::{self, Log};
use calibration::profile::{
    FitEntry, KernelEntry, KernelModel, MeasurementEntry, NetworkEntry, Profile, Provenance,
    ResidualEntry, now_rfc3339,
};
use calibration::validate::{ranks_of, sim_points};
use clap::{Args, Subcommand, ValueEnum};
use kernels::{BackendError, CollectiveTiming};
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
    /// The profile to write.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum KernelBackend {
    Cpu,
    Cuda,
}

#[derive(Debug, Args)]
struct KernelArgs {
    /// Where to run the kernels.
    #[arg(long, value_enum, default_value_t = KernelBackend::Cpu)]
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
    #[arg(long, default_value_t = 11)]
    repeats: u32,
    /// The profile to write.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CollectiveBackend {
    Mpi,
    Nccl,
}

#[derive(Debug, Args)]
struct CollectiveArgs {
    /// MPI across the ranks of mpirun/srun, or NCCL across this host's GPUs.
    #[arg(long, value_enum)]
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
    #[arg(long, default_value_t = 10)]
    repeats: u32,
    /// The profile to write (by rank 0).
    #[arg(short, long)]
    output: PathBuf,
}

fn input(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

fn backend_error(e: BackendError) -> CliError {
    match e {
        BackendError::NotEnabled { .. } => CliError::Input(e.to_string()),
        _ => CliError::Other(e.to_string()),
    }
}

pub fn run(a: CalibrateArgs) -> Result<(), CliError> {
    match a.what {
        What::Net(n) => net(n),
        What::Kernels(k) => kernels_cmd(k),
        What::Collectives(c) => collectives(c),
    }
}

fn provenance(
    cmd: &str,
    sources: Vec<String>,
    host: Option<String>,
    notes: Vec<String>,
) -> Provenance {
    Provenance {
        tool: format!("dtsim {} calibrate {cmd}", env!("CARGO_PKG_VERSION")),
        created: now_rfc3339(),
        sources,
        host,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        notes,
    }
}

/// A fit as the profile records it.
fn fit_entry(source: &str, op: &str, ranks: u32, f: &Fit, screened: &[(u64, f64)]) -> FitEntry {
    FitEntry {
        source: source.to_string(),
        op: op.to_string(),
        ranks,
        median_abs_residual: f.median_abs_residual(),
        segments: f.segments.clone(),
        residuals: f
            .residuals
            .iter()
            .map(|&(size_bytes, residual)| ResidualEntry {
                size_bytes,
                residual,
            })
            .collect(),
        screened_out_bytes: screened.iter().map(|p| p.0).collect(),
    }
}

fn write(profile: &Profile, path: &PathBuf) -> Result<(), CliError> {
    std::fs::write(path, profile.to_toml())
        .map_err(|e| input(format!("{}: cannot write the profile: {e}", path.display())))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Reads logs of one tool, naming the file in errors.
pub fn read_logs(paths: &[PathBuf]) -> Result<Vec<(String, Log)>, CliError> {
    let mut out = Vec::new();
    for p in paths {
        let logs = logs::parse_file(p).map_err(|e| input(e.to_string()))?;
        for l in logs {
            out.push((p.display().to_string(), l));
        }
    }
    Ok(out)
}

/// The network entry a scenario uses: per-link latency from the
/// smallest-size regime and bandwidth from the largest-size regime that has
/// one (latency-only regimes have none). Point-to-point fits (OSU
/// latency/bw, ping-pong) describe a single link and are preferred; a
/// collective's fit describes the effective link of a flat N-rank cluster,
/// which is a NIC only when every rank is on its own node. The result is
/// checked against the simulator's limits.
fn network_from(fits: &[(String, String, Fit)]) -> Result<Option<NetworkEntry>, CliError> {
    let prefer = |op: &str| fits.iter().find(|(_, o, _)| o == op);
    let bandwidth_of = |f: &Fit| f.segments.iter().rev().find_map(|s| s.bandwidth());
    let lat = prefer("latency").or_else(|| prefer("pingpong"));
    let bw = prefer("bw").or_else(|| prefer("pingpong"));
    // one point-to-point log stands in for the other
    let (lat, bw) = (lat.or(bw), bw.or(lat));
    let entry = if let (Some((sl, _, fl)), Some((sb, _, fb))) = (lat, bw) {
        bandwidth_of(fb).map(|b| NetworkEntry {
            latency_s: fl.segments[0].alpha_s,
            bandwidth_bps: b,
            derived_from: format!(
                "point to point: latency of the smallest-size regime of {sl}, bandwidth of the largest-size regime of {sb}"
            ),
        })
    } else if let Some((src, op, f)) = prefer("allreduce").or_else(|| fits.first()) {
        let ranks = match f.model {
            Model::Collective { ranks, .. } => ranks,
            Model::PointToPoint => 2,
        };
        bandwidth_of(f).map(|b| NetworkEntry {
            latency_s: f.segments[0].alpha_s,
            bandwidth_bps: b,
            derived_from: format!(
                "{op} of {src} on {ranks} ranks, through the simulator's {op} model on a flat cluster of {ranks} single-GPU nodes: the effective per-link latency (smallest-size regime) and bandwidth (largest-size regime); a NIC's figures only if every rank had a node of its own"
            ),
        })
    } else {
        None
    };
    if let Some(e) = &entry {
        sim::limits::check_bandwidth(e.bandwidth_bps)
            .and_then(|_| sim::limits::check_latency(e.latency_s))
            .map_err(|m| CliError::Other(format!("the fitted network is out of range: {m}")))?;
    }
    Ok(entry)
}

fn net(a: NetArgs) -> Result<(), CliError> {
    if a.nccl_tests.is_empty() && a.osu.is_empty() {
        return Err(input("give at least one --nccl-tests or --osu log"));
    }
    let mut logs = read_logs(&a.nccl_tests)?;
    logs.extend(read_logs(&a.osu)?);
    let mut fits = Vec::new();
    let mut entries = Vec::new();
    let mut measurements = Vec::new();
    for (src, log) in &logs {
        let ranks = ranks_of(log, a.ranks).map_err(|e| input(format!("{src}: {e}")))?;
        let model = Model::for_op(&log.op, ranks)
            .ok_or_else(|| input(format!("{src}: no simulator model of `{}`", log.op)))?;
        let pts = sim_points(log, ranks);
        let (f, screened) = fit_measurements(model, &pts)
            .map_err(|e| input(format!("{src}: `{}`: {e}", log.op)))?;
        entries.push(fit_entry(src, &log.op, ranks, &f, &screened));
        measurements.extend(pts.iter().map(|&(size_bytes, time_s)| MeasurementEntry {
            op: log.op.clone(),
            size_bytes,
            time_s,
            ranks,
            source: src.clone(),
        }));
        fits.push((src.clone(), log.op.clone(), f));
    }
    let sources: std::collections::BTreeSet<String> = logs.iter().map(|(s, _)| s.clone()).collect();
    let profile = Profile {
        provenance: provenance("net", sources.into_iter().collect(), None, vec![]),
        network: network_from(&fits)?,
        fits: entries,
        measurements,
        ..Profile::default()
    };
    write(&profile, &a.output)
}

/// Fits a kernel's cost: `a + b·m + c·k` (k: selected or kept elements),
/// or `a + b·m·log2(m)` for the sort, on relative error.
fn kernel_model(
    kernel: &str,
    backend: &str,
    timings: &[&kernels::timing::KernelTiming],
) -> Option<KernelModel> {
    let sort = kernel.contains("sort") || kernel.contains("threshold");
    let rows: Vec<(Vec<f64>, f64)> = timings
        .iter()
        .map(|t| {
            let m = t.m as f64;
            let x = if sort {
                vec![1.0, m * m.max(2.0).log2()]
            } else {
                vec![1.0, m, t.k_or_kept as f64]
            };
            (x, t.timing.median_s)
        })
        .collect();
    // with too few distinct points for k, fall back to a + b·m
    let (coef, med, form) = match fit_linear_relative(&rows) {
        Some((c, r)) if !sort => (c, r, "a + b*m + c*k"),
        Some((c, r)) => (c, r, "a + b*m*log2(m)"),
        None if !sort => {
            let rows: Vec<(Vec<f64>, f64)> =
                rows.iter().map(|(x, t)| (x[..2].to_vec(), *t)).collect();
            let (c, r) = fit_linear_relative(&rows)?;
            (c, r, "a + b*m")
        }
        None => return None,
    };
    Some(KernelModel {
        kernel: kernel.into(),
        backend: backend.into(),
        form: form.into(),
        a_s: coef[0],
        b_s: coef[1],
        c_s: coef.get(2).copied().unwrap_or(0.0),
        median_abs_residual: med,
    })
}

fn kernels_cmd(a: KernelArgs) -> Result<(), CliError> {
    if a.sizes.is_empty() || a.sizes.contains(&0) {
        return Err(input("--sizes: give positive element counts"));
    }
    if a.densities.iter().any(|d| !(1e-6..=1.0).contains(d)) {
        return Err(input("--densities: each must be in [1e-6, 1]"));
    }
    if a.sizes.iter().any(|&m| m > 1 << 30) {
        return Err(input("--sizes: at most 2^30 elements"));
    }
    if a.repeats == 0 {
        return Err(input("--repeats must be at least 1"));
    }
    let (backend, timings) = match a.backend {
        KernelBackend::Cpu => (
            "cpu",
            kernels::timing::time_kernels(&a.sizes, &a.densities, a.repeats),
        ),
        KernelBackend::Cuda => (
            "cuda",
            kernels::cuda::time_kernels(&a.sizes, &a.densities, a.repeats)
                .map_err(backend_error)?,
        ),
    };
    let entries: Vec<KernelEntry> = timings
        .iter()
        .map(|t| KernelEntry {
            kernel: t.kernel.to_string(),
            backend: backend.into(),
            m: t.m as u64,
            density: t.density,
            median_s: t.timing.median_s,
            p25_s: t.timing.p25_s,
            p75_s: t.timing.p75_s,
            repeats: t.timing.repeats,
        })
        .collect();
    let mut names: Vec<&str> = timings.iter().map(|t| t.kernel).collect();
    names.sort();
    names.dedup();
    let models: Vec<KernelModel> = names
        .into_iter()
        .filter_map(|k| {
            let ts: Vec<&kernels::timing::KernelTiming> =
                timings.iter().filter(|t| t.kernel == k).collect();
            kernel_model(k, backend, &ts)
        })
        .collect();
    let profile = Profile {
        provenance: provenance(
            "kernels",
            vec![format!("{backend} kernels measured by dtsim")],
            Some(host()),
            vec![],
        ),
        kernels: entries,
        kernel_models: models,
        ..Profile::default()
    };
    write(&profile, &a.output)
}

fn host() -> String {
    let name = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default();
    format!("{} ({cpu})", name.trim())
}

fn sizes(a: &CollectiveArgs) -> Result<Vec<u64>, CliError> {
    let lo = sim::units::parse_bytes(&a.min_size).map_err(|e| input(format!("--min-size: {e}")))?;
    let hi = sim::units::parse_bytes(&a.max_size).map_err(|e| input(format!("--max-size: {e}")))?;
    if lo == 0 || hi < lo || hi > 1 << 34 {
        return Err(input(
            "--min-size must be ≥ 1 byte and ≤ --max-size ≤ 16 GiB",
        ));
    }
    let mut v = vec![lo];
    while v[v.len() - 1] * 2 <= hi {
        v.push(v[v.len() - 1] * 2);
    }
    Ok(v)
}

fn collectives(a: CollectiveArgs) -> Result<(), CliError> {
    let sizes = sizes(&a)?;
    let known = [
        "pingpong",
        "allreduce",
        "allgather",
        "reducescatter",
        "alltoall",
        "broadcast",
    ];
    for op in &a.ops {
        if !known.contains(&op.as_str()) {
            return Err(input(format!(
                "--ops: unknown operation `{op}`; known: {}",
                known.join(", ")
            )));
        }
    }
    if a.repeats == 0 {
        return Err(input("--repeats must be at least 1"));
    }
    let ops: Vec<&str> = a.ops.iter().map(|s| s.as_str()).collect();
    let (backend, timings, notes, host_name): (&str, Vec<CollectiveTiming>, Vec<String>, String) =
        match a.backend {
            CollectiveBackend::Mpi => {
                let run = kernels::mpi::measure(&ops, &sizes, a.repeats).map_err(backend_error)?;
                if run.rank != 0 {
                    return Ok(()); // rank 0 writes the profile
                }
                (
                    "mpi",
                    run.timings,
                    vec![format!("{} MPI ranks", run.size)],
                    format!("{} ({})", run.processor, host()),
                )
            }
            CollectiveBackend::Nccl => {
                let ops: Vec<&str> = ops.iter().copied().filter(|o| *o != "pingpong").collect();
                let t = kernels::cuda::time_collectives(&ops, &sizes, a.repeats)
                    .map_err(backend_error)?;
                ("nccl", t, vec![], host())
            }
        };
    let measurements: Vec<MeasurementEntry> = timings
        .iter()
        .map(|t| MeasurementEntry {
            op: t.op.clone(),
            size_bytes: t.size_bytes,
            time_s: t.time_s,
            ranks: t.ranks,
            source: String::new(),
        })
        .collect();
    let mut fits = Vec::new();
    let mut entries = Vec::new();
    let mut opnames: Vec<&str> = timings.iter().map(|t| t.op.as_str()).collect();
    opnames.sort();
    opnames.dedup();
    for op in opnames {
        let pts: Vec<(u64, f64)> = timings
            .iter()
            .filter(|t| t.op == op)
            .map(|t| (t.size_bytes, t.time_s))
            .collect();
        let ranks = timings
            .iter()
            .find(|t| t.op == op)
            .map(|t| t.ranks)
            .unwrap_or(2);
        let Some(model) = Model::for_op(op, ranks) else {
            continue;
        };
        if let Ok((f, screened)) = fit_measurements(model, &pts) {
            entries.push(fit_entry(
                &format!("{backend} measurement"),
                op,
                ranks,
                &f,
                &screened,
            ));
            fits.push((format!("{backend} {op}"), op.to_string(), f));
        }
    }
    let profile = Profile {
        provenance: provenance(
            "collectives",
            vec![format!("{backend} collectives measured by dtsim")],
            Some(host_name),
            notes,
        ),
        network: network_from(&fits)?,
        fits: entries,
        measurements,
        ..Profile::default()
    };
    write(&profile, &a.output)
}
