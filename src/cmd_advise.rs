//! `dtsim advise FILE [--json]`.

use crate::error::{CliError, print_line};
use clap::Args;
use sim::names::Named;
use std::path::PathBuf;

/// Arguments of `dtsim advise`.
#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// The scenario file (TOML): its model and cluster; its strategy is
    /// marked in the ranking. It may sweep only `strategy.dense`,
    /// `.allreduce`, `.sparse` and `.schedule`, which the advice varies
    /// anyway.
    file: PathBuf,
    /// Print one JSON object per way tried on stdout (the ranked ones
    /// first, fastest first; then those that do not apply, with
    /// `refused`) instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: AdviseArgs) -> Result<(), CliError> {
    let advice = reports::advise::advise(&a.file)?;
    for w in &advice.warnings {
        note!("warning: {w}");
    }
    if a.json {
        for r in &advice.ranked {
            let line = serde_json::to_string(r).map_err(|e| CliError::Other(e.to_string()))?;
            print_line(line)?;
        }
        for r in &advice.refused {
            let line = serde_json::to_string(r).map_err(|e| CliError::Other(e.to_string()))?;
            print_line(line)?;
        }
        return Ok(());
    }
    let tried = advice.tried;
    let Some(first) = advice.ranked.first() else {
        print_line(format_args!(
            "{}: none of the {tried} ways dtsim knows applies to this model and cluster:",
            advice.file
        ))?;
        return refusals(&advice);
    };
    let r = &first.result;
    print_line(format_args!(
        "{}: {} on {} GPUs ({} machines, {}), {} a GPU; {tried} ways tried, {} apply ({} distinct), fastest first",
        advice.file,
        r.model,
        r.gpus,
        r.nodes,
        r.network,
        r.batch_per_gpu,
        tried - advice.refused.len(),
        advice.ranked.len()
    ))?;
    // the file's dedicated server machines serve the ways with servers only
    if let Some(m) = advice
        .ranked
        .iter()
        .filter_map(|r| r.result.ps_servers.as_ref())
        .map(|p| p.dedicated_machines)
        .find(|&m| m > 0)
    {
        print_line(format_args!(
            "  the ways with parameter servers run them on the file's {} dedicated machine{} (strategy.ps_machines); the other ways leave them idle",
            m,
            if m == 1 { "" } else { "s" }
        ))?;
    }
    let width = advice
        .ranked
        .iter()
        .map(|r| r.candidate.method().len() + if r.lossy { LOSSY.len() } else { 0 })
        .max()
        .unwrap_or(0)
        .max(8);
    // the way's busiest link and how busy it keeps it (the "why")
    let busiest = |x: &reports::advise::Ranked| match x.result.busiest_link.as_str() {
        "" => "-".to_string(),
        l => match x.result.busiest_link_utilisation * 100.0 {
            // (not "0%" for a link that carries something)
            u if u > 0.0 && u < 0.5 => format!("{l} (<1%)"),
            u => format!("{l} ({u:.0}%)"),
        },
    };
    let link = advice
        .ranked
        .iter()
        .map(|x| busiest(x).chars().count())
        .max()
        .unwrap_or(0);
    print_line(format_args!(
        "{:>4}  {:<width$} {:<14} {:>10} {:>14} {:>8} {:>13} {:>17}  {}",
        "rank",
        "method",
        "schedule",
        "iter (ms)",
        r.throughput_unit,
        "vs best",
        "exposed (ms)",
        "compression (ms)",
        "busiest link (busy)"
    ))?;
    for x in &advice.ranked {
        let mut method = x.candidate.method();
        if x.lossy {
            method.push_str(LOSSY);
        }
        let vs = if x.rank == 1 {
            "best".to_string()
        } else {
            format!("{:.1}%", x.vs_best * 100.0)
        };
        let schedule = schedules(x);
        // (no padding after the last column)
        let row = format!(
            "{:>4}  {:<width$} {:<14} {:>10.2} {:>14.1} {:>8} {:>13.2} {:>17.2}  {:<link$}{}",
            x.rank,
            method,
            schedule,
            x.result.iteration_time_s * 1e3,
            x.result.throughput,
            vs,
            x.result.exposed_comm_s * 1e3,
            x.result.compression_s * 1e3,
            busiest(x),
            if x.this_file { "  <- this file" } else { "" }
        );
        print_line(row.trim_end())?;
    }
    print_line(format_args!(
        "best: {}, {}: {:.1} {}",
        first.candidate.method(),
        schedules(first),
        first.result.throughput,
        first.result.throughput_unit
    ))?;
    if first.lossy {
        match advice.best_exact() {
            Some(e) => print_line(format_args!(
                "best that sends the whole gradient: {}, {} (rank {}, {:.1}% below the best)",
                e.candidate.method(),
                schedules(e),
                e.rank,
                -e.vs_best * 100.0
            ))?,
            None => print_line("no way that sends the whole gradient applies")?,
        }
    }
    match (advice.this_file(), &advice.own) {
        (Some(t), _) if t.rank == 1 => print_line("this file's strategy is the best")?,
        (Some(t), Some(own)) => print_line(format_args!(
            "this file's strategy ({}, {}): rank {}, {:.1}% below the best",
            own.method(),
            own.schedule,
            t.rank,
            -t.vs_best * 100.0
        ))?,
        // a way the advice does not try (an MPI library's AllReduce)
        (None, Some(own)) if !advice.refused.iter().any(|r| r.candidate == *own) => {
            print_line(format_args!(
                "this file's strategy ({}, {}) is not among the ways tried (the MPI \
                 libraries' AllReduce algorithms are left to `dtsim run`)",
                own.method(),
                own.schedule
            ))?
        }
        _ => {}
    }
    if advice.ranked.iter().any(|r| r.lossy) {
        print_line(
            "lossy: Top-k, gTop-k and DCT-DP change what the optimiser sees; how that slows \
             convergence is not modelled, only the time an iteration takes (a network name's `*` \
             is another thing: its preset's figures changed by the file)",
        )?;
    }
    refusals(&advice)
}

/// The mark of a lossy way in the method column (words, not a `*`, which
/// after a network's name says its preset was changed).
const LOSSY: &str = " (lossy)";

/// A ranked row's schedules: its own and those that give the same result.
fn schedules(r: &reports::advise::Ranked) -> String {
    std::iter::once(&r.candidate.schedule)
        .chain(&r.same_with)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ways that do not apply, grouped by why: each reason once, then
/// the methods it refuses (with their schedules where not every schedule
/// is refused).
fn refusals(advice: &reports::advise::Advice) -> Result<(), CliError> {
    if advice.refused.is_empty() {
        return Ok(());
    }
    print_line(format_args!(
        "not applicable here ({} of the {} ways):",
        advice.refused.len(),
        advice.tried
    ))?;
    let every = sim::strategy::Schedule::ALL.len();
    for g in advice.refusals() {
        print_line(format_args!("  {}", g.reason))?;
        let list: Vec<String> = g
            .methods
            .into_iter()
            .map(|(m, schedules)| {
                if schedules.len() == every {
                    m
                } else {
                    format!("{m} ({})", schedules.join(", "))
                }
            })
            .collect();
        print_line(format_args!("    refuses: {}", list.join("; ")))?;
    }
    Ok(())
}
