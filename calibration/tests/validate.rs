//! Validation on every nccl-tests fixture: fit every other size, predict
//! the rest with the simulator, and meet the bounds on held-out
//! sizes of 64 KiB and above: median |error| ≤ 5%, max ≤ 15%.

use calibration::fit::Algos;
use calibration::logs::parse_file;
use calibration::validate::{LARGE_BYTES, ValidateError, validate_log};
use std::path::PathBuf;

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    v.sort();
    v
}

/// Ranks of fixtures whose excerpt lacks the `# Rank` lines, from each
/// file's `# source:` note.
fn known_ranks(file: &str) -> Option<u32> {
    [
        ("aws_2x_p4de_16xA100", 16),
        ("aws_batch_1x_p5_8xH100", 8),
        ("dgx_spark_2node_2xGB10", 2),
        ("gcp_a3mega_2node_16xH100", 16),
        ("nccl_tests_issue78_8node_64xV100", 64),
        ("cscs_alps_osu_alltoall_cpu_2node_8ranks", 8),
        ("nwtnni_collective_osu_allreduce_ring_8node", 8),
        ("olcf_riker_osu_allgather_4node_16ranks", 16),
    ]
    .iter()
    .find(|(k, _)| file.contains(k))
    .map(|&(_, r)| r)
}

/// The one fixture the bounds cannot apply to: issue 78's alltoall has two
/// sizes, nothing to hold out (validation refuses it, and the test checks
/// that it does).
const BOUNDS_EXEMPT: [&str; 1] = ["nccl_tests_issue78_8node_64xV100"];

#[test]
fn every_nccl_tests_fixture_validates_within_bounds() {
    let shape = None;
    let files = fixtures("nccl-tests");
    assert!(files.len() >= 4);
    let mut checked = 0;
    for f in files {
        let name = f.display().to_string();
        let exempt = BOUNDS_EXEMPT.iter().any(|e| name.contains(e));
        for log in parse_file(&f).unwrap() {
            let v = match validate_log(&log, &name, known_ranks(&name), shape, &Algos::default()) {
                Ok(v) => v,
                Err(ValidateError::TooFewSizes { n, .. }) if exempt => {
                    assert!(n < 4);
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            let large = v
                .points
                .iter()
                .filter(|p| p.size_bytes >= LARGE_BYTES)
                .count();
            eprintln!(
                "{} {}: ≥64KiB median {:.3} max {:.3} ({} points); all held-out median {:.3} max {:.3}; <64KiB median {:.3}",
                f.file_name().unwrap().to_string_lossy(),
                v.op,
                v.median_abs_error_large,
                v.max_abs_error_large,
                large,
                v.median_abs_error,
                v.max_abs_error,
                v.median_abs_error_small
            );
            // every held-out point is predicted by the simulator
            for p in &v.points {
                assert!(p.predicted_s > 0.0 && p.predicted_s.is_finite());
                assert!((p.error - (p.predicted_s - p.measured_s) / p.measured_s).abs() < 1e-12);
            }
            if exempt {
                continue;
            }
            assert!(large >= 3, "{name}: too few large held-out points");
            assert!(
                v.median_abs_error_large <= 0.05,
                "{name} {}: median {}",
                v.op,
                v.median_abs_error_large
            );
            assert!(
                v.max_abs_error_large <= 0.15,
                "{name} {}: max {}",
                v.op,
                v.max_abs_error_large
            );
            checked += 1;
        }
    }
    // the four logs from shared/validation plus the other real excerpts
    assert!(checked >= 10, "only {checked} validations checked");
}

/// The anomaly screen keeps a sudden bandwidth collapse at the end of a
/// sweep out of the fit: the macOS port's reduce_scatter runs its largest
/// size at about half the bandwidth of the sizes below.
#[test]
fn anomalies_are_screened_out_of_the_fit() {
    use calibration::fit::screen;
    let f = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/nccl-tests/llv22_nccl_osx_1x2_gtx1080_old_layout_reduce_scatter.txt"
    ));
    let log = &parse_file(&f).unwrap()[0];
    let pts = calibration::validate::points_of(log);
    let (kept, dropped) = screen(&pts);
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].0, 134_217_728);
    assert_eq!(kept.len(), pts.len() - 1);
    // a clean sweep loses nothing
    let g = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt"
    ));
    let log = &parse_file(&g).unwrap()[0];
    assert!(screen(&calibration::validate::points_of(log)).1.is_empty());
}

/// A rank count no collective runs on, from the log or the command line,
/// is refused by name rather than sized into memory.
#[test]
fn impossible_rank_counts_are_refused() {
    use calibration::validate::ranks_of;
    let mut log = parse_file(&fixtures("nccl-tests")[0]).unwrap().remove(0);
    for r in [0u32, 1, (1 << 20) + 1, u32::MAX] {
        log.ranks = Some(r);
        let e = ranks_of(&log, None).unwrap_err();
        assert!(matches!(e, ValidateError::BadRanks(_, n) if n == r), "{e}");
        assert!(e.to_string().contains("needs 2 to 1048576"), "{e}");
    }
    log.ranks = Some(16);
    assert_eq!(ranks_of(&log, None).unwrap(), 16);
}

/// Fit at one rank count, predict another: measurements made by the
/// simulator's own ring AllReduce and binomial broadcast at 4 ranks (a
/// known α and B, two protocol regimes switching at 64 KiB messages)
/// predict the same collectives at 8 and 16 ranks exactly: each regime is
/// chosen by the size of the messages its steps send, where the switch
/// is.
#[test]
fn a_fit_at_one_rank_count_predicts_another() {
    let (a1, b1, a2, b2) = (5e-6, 2e9, 12e-6, 10e9);
    let series = |op: &str, ranks: u32| {
        synthetic(&Algos::default(), op, ranks, doubling(10, 26), |m, size| {
            let st = m.structure();
            // the library switches protocol at 64 KiB messages
            if size as f64 * st.bytes / st.steps < 65536.0 {
                (a1, b1)
            } else {
                (a2, b2)
            }
        })
    };
    for op in ["allreduce", "broadcast"] {
        let four = series(op, 4);
        for n in [8, 16] {
            let v = across_regimes(&four, &series(op, n), &Algos::default());
            assert_eq!((v.ranks, v.points.len()), (n, 17));
            assert_eq!(v.fitted_on, "4 ranks");
            assert!(
                v.max_abs_error < 1e-6,
                "{op} at {n}: max error {}",
                v.max_abs_error
            );
        }
    }
}

/// MPICH's selection across rank counts and from a ping-pong: allgathers
/// made by MPICH's selection on one link (α, B) at 16 ranks predict those
/// at 8 (the same 512 KiB switch) and at 12 (Bruck's below 80 KiB, the
/// ring above) exactly, each size by the regime fitted on the same
/// algorithm's side of the switch; a ping-pong of that link predicts
/// them too, each size's messages those of the algorithm it runs.
#[test]
fn mpichs_selection_across_rank_counts() {
    use calibration::validate::validate_from_pingpong;
    let (alpha, bw) = (8e-6, 3e9);
    let mpich = algos("allgather=mpich");
    let series = |ranks| {
        synthetic(&mpich, "allgather", ranks, doubling(12, 24), |_, _| {
            (alpha, bw)
        })
    };
    let sixteen = series(16);
    for n in [8, 12] {
        let target = series(n);
        let v = across_regimes(&sixteen, &target, &mpich);
        assert!(v.max_abs_error < 1e-6, "at {n}: {}", v.max_abs_error);
        // the ring alone, fitted and predicting, misses below the switch
        let ring = across_regimes(&sixteen, &target, &Algos::default());
        assert!(ring.max_abs_error > 0.05, "at {n}: {}", ring.max_abs_error);
        let ping: Vec<(u64, f64)> = doubling(6, 24)
            .map(|b| (b, alpha + b as f64 / bw))
            .collect();
        let v = validate_from_pingpong(
            &ping,
            "allgather",
            n,
            &target.points,
            "synthetic",
            None,
            &mpich,
        )
        .unwrap();
        assert!(
            v.max_abs_error < 1e-6,
            "from the ping-pong at {n}: {}",
            v.max_abs_error
        );
    }
}

/// Across rank counts whose switches differ, a size is looked up in the
/// regimes of the algorithm it runs, at the size that sends the same
/// messages there. The link has two protocols, switching at 16 KiB
/// messages; fitted at 64 ranks (recursive doubling below 512 KiB, the
/// ring above), the allgathers at 12 ranks (Bruck below 80 KiB, the ring
/// above) are predicted exactly, 256 KiB included: the ring's 21 KiB
/// messages at 12 ranks are those of 1.33 MiB at 64, where 64 ranks run
/// the ring too, on the second protocol.
#[test]
fn mpichs_selection_across_unlike_switches() {
    let mpich = algos("allgather=mpich");
    let series = |ranks: u32, sizes: &[u64]| {
        synthetic(
            &mpich,
            "allgather",
            ranks,
            sizes.iter().map(|&k| k << 10),
            two_protocols(16384.0),
        )
    };
    // every regime of the 64-rank fit with at least two sizes (KiB)
    let fitted = [
        4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 448, 512, 640, 768, 896, 1024, 2048, 4096, 8192,
    ];
    let targets = [16, 32, 64, 96, 128, 256, 384, 512, 1024, 4096];
    let v = across_regimes(&series(64, &fitted), &series(12, &targets), &mpich);
    assert_exact(&v, "at 12");
}

/// Open MPI's selection (`allgather=ompi`) across rank counts whose
/// algorithms differ in number and order: 48 ranks run Bruck's, neighbor
/// exchange and the ring by each rank's bytes, 33 Bruck's and the ring,
/// 64 recursive doubling, neighbor exchange and the ring. Each algorithm
/// here runs on a link of its own (a different α and B), so a size is
/// predicted exactly only from the regimes fitted on its own algorithm's
/// sizes (recursive doubling's from Bruck's: one kind): fitted at 48,
/// both other counts are.
#[test]
fn open_mpis_selection_across_rank_counts() {
    use sim::collective::Algo;
    let ompi = algos("allgather=ompi");
    let series = |ranks: u32| {
        let sizes = doubling(8, 22).map(|b| b * ranks as u64);
        synthetic(&ompi, "allgather", ranks, sizes, |m, b| {
            match m.algo_at(b as f64) {
                Some(Algo::Bruck | Algo::RecursiveDoubling) => (2e-6, 1e9),
                Some(Algo::NeighborExchange) => (5e-6, 2e9),
                _ => (9e-6, 3e9),
            }
        })
    };
    let fitted = series(48);
    for n in [33, 64] {
        assert_exact(
            &across_regimes(&fitted, &series(n), &ompi),
            &format!("at {n}"),
        );
    }
}

/// Open MPI's allreduce selection (`allreduce=ompi`) across rank counts:
/// 64 ranks run recursive doubling under 256 KiB and Rabenseifner's from
/// there, 16 ranks recursive doubling under 4 KiB, 100 ranks (a fold of
/// 36 extra ranks) under 256 KiB again. Each algorithm runs on a link of
/// its own, so a size is predicted exactly only from the regimes fitted
/// on its own algorithm's sizes: fitted at 64, both other counts are, and
/// the ring alone (the fits' textbook AllReduce) misses by more than 5%.
#[test]
fn open_mpis_allreduce_selection_across_rank_counts() {
    use sim::collective::Algo;
    let ompi = algos("allreduce=ompi");
    let series = |truth: &Algos, ranks: u32| {
        synthetic(
            truth,
            "allreduce",
            ranks,
            doubling(10, 23),
            |m, b| match m.algo_at(b as f64) {
                Some(Algo::RecursiveDoubling) => (2e-6, 1e9),
                _ => (5e-6, 3e9),
            },
        )
    };
    let fitted = series(&ompi, 64);
    for n in [16, 100] {
        let v = across_regimes(&fitted, &series(&ompi, n), &ompi);
        assert_exact(&v, &format!("at {n}"));
        let ring = across_regimes(&fitted, &series(&ompi, n), &Algos::default());
        let worst = ring
            .points
            .iter()
            .map(|p| p.error.abs())
            .fold(0.0, f64::max);
        assert!(worst > 0.05, "the ring at {n}: {worst}");
    }
}

/// The same across a link of two protocols, switching at 256 KiB
/// messages, where a size must be looked up at the size whose steps send
/// the same messages on the fitted count. Fitted at 64 ranks (recursive
/// doubling below 256 KiB, its messages the buffer; Rabenseifner's from
/// there, its messages 0.164 of the buffer on average, the second
/// protocol from 1560 KiB), 16 ranks (Rabenseifner's from 4 KiB, 0.234
/// of the buffer) and 100 (a fold of 36 ranks: 0.284) are predicted
/// exactly, 1480 KiB at 16 ranks and 1280 KiB at 100 included: their
/// messages (347 and 363 KiB) take the second protocol, though the same
/// buffers at 64 ranks take the first.
#[test]
fn open_mpis_allreduce_selection_across_protocols() {
    let ompi = algos("allreduce=ompi");
    let series = |ranks: u32, kib: &[u64]| {
        synthetic(
            &ompi,
            "allreduce",
            ranks,
            kib.iter().map(|&k| k << 10),
            two_protocols(262_144.0),
        )
    };
    let fitted = series(
        64,
        &[
            1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1280, 1536, 2048, 4096, 8192,
        ],
    );
    for (n, kib) in [
        (16, &[1u64, 2, 128, 512, 1480, 4096][..]),
        (100, &[1, 4, 32, 64, 512, 1280, 4096][..]),
    ] {
        assert_exact(
            &across_regimes(&fitted, &series(n, kib), &ompi),
            &format!("at {n}"),
        );
    }
}

/// A stretch between two of a selection's switches with one fitted size
/// lets those two go (its size joins a neighbour's regime), and the
/// regimes keep to the other switches: on 128 ranks Open MPI runs
/// neighbor exchange again between 512 KiB and 1 MiB a rank, where a
/// doubling sweep has one size, and no regime spans its first two
/// switches (512 B and 128 KiB a rank).
#[test]
fn a_short_stretch_drops_only_its_own_switches() {
    use calibration::fit::{Library, Shape, fit_measurements};
    let m = algos("allgather=ompi").model("allgather", 128).unwrap();
    let points: Vec<(u64, f64)> = (6..=23)
        .map(|k| {
            let b = (1u64 << k) * 128;
            (b, m.predict(b as f64, 4e-6, 2e9))
        })
        .collect();
    let (f, _) = fit_measurements(m, &points, Some(Shape::Regimes), Library::Mpi, 0).unwrap();
    for switch in [512.0 * 128.0, 131072.0 * 128.0] {
        for r in &f.segments {
            assert!(
                (r.max_bytes as f64) < switch || r.min_bytes as f64 >= switch,
                "a regime spans {switch}: {r:?}"
            );
        }
    }
    assert!(f.median_abs_residual() < 1e-9, "{f:?}");
}

/// Every point of `v` predicted exactly (within 1e-6), else a failure
/// naming `what`, the point, the regime it took and the fitted regimes.
fn assert_exact(v: &calibration::validate::Validation, what: &str) {
    for p in &v.points {
        assert!(
            p.error.abs() < 1e-6,
            "{what}, {} B: {} ({}) {:?}",
            p.size_bytes,
            p.error,
            p.via,
            v.regimes
        );
    }
}

/// A link of two protocols for [`synthetic`], switching at messages of
/// `switch` bytes (a step's message, the buffer times the algorithm's
/// bytes a step per byte at that size): 5 µs and 1 GB/s below, 20 µs and
/// 4 GB/s from there.
fn two_protocols(switch: f64) -> impl Fn(&calibration::fit::Model, u64) -> (f64, f64) {
    move |m, b| {
        if b as f64 * m.bytes_per_step_at(b as f64) < switch {
            (5e-6, 1e9)
        } else {
            (20e-6, 4e9)
        }
    }
}

/// The algorithms of one `--algo` specification.
fn algos(spec: &str) -> Algos {
    Algos::parse(&[spec.to_string()]).unwrap()
}

/// Fixtures run by a library whose algorithm selection dtsim models, and
/// the `--algo` that names it: OLCF's `osu_allgather` ran MPICH 5.0.1
/// (its `# source:` note), which gathers by recursive doubling below 512
/// KiB of output on 16 ranks and by the ring from there.
const LIBRARY_ALGOS: [(&str, &str); 1] =
    [("olcf_riker_osu_allgather_4node_16ranks", "allgather=mpich")];

/// OLCF's MPICH allgather jumps 3.2 times between 256 KiB and 512 KiB of
/// output (49 to 156 µs), where MPICH changes from recursive doubling to
/// the ring. Fitted as the ring alone, a regime spans the jump and the
/// held-out 512 KiB misses by 42%; fitted with MPICH's selection, the
/// regimes break at the switch, 512 KiB is the ring's (extrapolated down
/// from 1 MiB: 11% under, the ring's 1 to 16 MiB curving above one line),
/// and every held-out size is within the 15% bound. The median at ≥ 64
/// KiB, 5.6%, still misses the 5% bound.
#[test]
fn mpichs_selection_predicts_the_olcf_allgather() {
    let f = fixtures("osu")
        .into_iter()
        .find(|f| f.display().to_string().contains(LIBRARY_ALGOS[0].0))
        .unwrap();
    let name = f.display().to_string();
    let log = parse_file(&f).unwrap().remove(0);
    let run = |a: &Algos| validate_log(&log, &name, known_ranks(&name), None, a).unwrap();
    let (ring, mpich) = (run(&Algos::default()), run(&algos(LIBRARY_ALGOS[0].1)));
    assert!(
        ring.max_abs_error_large > 0.4,
        "{}",
        ring.max_abs_error_large
    );
    assert!(
        mpich.max_abs_error_large <= 0.15,
        "{}",
        mpich.max_abs_error_large
    );
    assert!(mpich.max_abs_error <= 0.15, "{}", mpich.max_abs_error);
    assert!(mpich.median_abs_error_large < ring.median_abs_error_large);
    for p in &mpich.points {
        let algo = if p.size_bytes < 524_288 {
            "recursive-doubling"
        } else {
            "ring"
        };
        assert!(p.via.starts_with(algo), "{}: {}", p.size_bytes, p.via);
    }
    // no regime spans the switch
    for r in &mpich.regimes {
        assert!(r.max_bytes < 524_288 || r.min_bytes >= 524_288, "{r:?}");
    }
}

/// nccl-tests' first rows are of size 0, for which NCCL returns at once:
/// 0.33 µs on the 2080 Ti log, which fitted as the latency of the fastest
/// protocol made the profile's latency 30 times too small. They are kept
/// out of the fit and the held-out points and listed with the reason; the
/// sizes still alternate as the log lists them.
#[test]
fn size_zero_rows_measure_no_message() {
    let f = fixtures("nccl-tests")
        .into_iter()
        .find(|f| {
            f.display()
                .to_string()
                .contains("autodl_1x2_2080ti_pcie_allgather_broadcast")
        })
        .unwrap();
    let name = f.display().to_string();
    let logs = parse_file(&f).unwrap();
    assert!(logs.iter().any(|l| l.rows[0].size_bytes == 0));
    for log in logs.iter().filter(|l| l.rows[0].size_bytes == 0) {
        let v = validate_log(log, &name, None, None, &Algos::default()).unwrap();
        assert!(v.points.iter().all(|p| p.size_bytes > 0), "{}", log.op);
        let zero = v.screened.iter().find(|p| p.size_bytes == 0).unwrap();
        assert!(
            zero.reason.starts_with("size 0: nothing is sent"),
            "{}",
            zero.reason
        );
        assert!(v.regimes.iter().all(|r| r.min_bytes > 0), "{:?}", v.regimes);
        // the fastest protocol's latency is a real message's, microseconds
        assert!(v.regimes[0].alpha_s > 5e-6, "{} {:?}", log.op, v.regimes[0]);
    }
}

/// Fixtures whose transport's eager limit is known, and the limit:
/// nwtnni's `osu_allreduce` ran Open MPI's ring across eight CloudLab
/// c220g5 hosts, whose NICs (Intel X520 10 GbE) carry no RDMA, so over
/// the TCP transport, whose `btl_tcp_eager_limit` is 64 KiB by default.
const LIBRARY_EAGER: [(&str, u64); 1] =
    [("nwtnni_collective_osu_allreduce_ring_8node_full", 65_536)];

/// nwtnni's ring AllReduce jumps 2.7 times from 256 to 512 KiB, where
/// each step's message (a buffer over 8 ranks) reaches Open MPI's TCP
/// eager limit. Fitted on every other size, one fitted size (1 MiB) lies
/// above it: without the limit a regime spans the jump and the held-out
/// 512 KiB misses by a third; with it, the eager sizes give the wire and
/// 1 MiB the rendezvous latency, and 512 KiB, predicted as the rendezvous
/// it is, comes within the 15% bound (14.2% under: the rendezvous moves
/// its bytes faster than the eager wire lent to it, 1.2 ms a 512 KiB
/// from 512 KiB to 1 MiB against 0.39 ms a 128 KiB below). The median at
/// ≥ 64 KiB (two held-out sizes) falls from 17.1% to 9.0%, still over
/// the 5% bound.
#[test]
fn the_eager_limit_predicts_nwtnnis_jump() {
    let f = fixtures("osu")
        .into_iter()
        .find(|f| f.display().to_string().contains(LIBRARY_EAGER[0].0))
        .unwrap();
    let name = f.display().to_string();
    let log = parse_file(&f).unwrap().remove(0);
    let run = |a: &Algos| validate_log(&log, &name, Some(8), None, a).unwrap();
    let plain = run(&Algos::default());
    let eager = run(&Algos::default().with_eager_limit(LIBRARY_EAGER[0].1));
    assert!(
        plain.max_abs_error_large > 0.3,
        "{}",
        plain.max_abs_error_large
    );
    assert!(
        eager.max_abs_error_large <= 0.15,
        "{}",
        eager.max_abs_error_large
    );
    assert!(
        eager.median_abs_error_large < 0.10 && eager.median_abs_error_large > 0.05,
        "{}",
        eager.median_abs_error_large
    );
    let at = |v: &calibration::validate::Validation, b: u64| {
        v.points.iter().find(|p| p.size_bytes == b).unwrap().clone()
    };
    assert!(
        at(&eager, 524_288).via.ends_with("(rendezvous)"),
        "{:?}",
        at(&eager, 524_288)
    );
    assert!(
        at(&eager, 131_072).via.ends_with("(eager)"),
        "{:?}",
        at(&eager, 131_072)
    );
    // the small sizes are the eager ones, fitted as before
    for b in [8, 128, 512, 2048] {
        assert_eq!(at(&eager, b).predicted_s, at(&plain, b).predicted_s, "{b}");
    }
    let last = eager.regimes.last().unwrap();
    assert_eq!(
        (last.points, last.protocol.as_deref()),
        (1, Some("rendezvous"))
    );
    let below = &eager.regimes[eager.regimes.len() - 2];
    assert_eq!(last.bandwidth_bps, below.bandwidth_bps);
    assert!(last.alpha_s > below.alpha_s, "{last:?} {below:?}");
}

/// An operation's times on `ranks` ranks as the algorithm `truth` names
/// makes them, at `sizes`, with the latency and bandwidth `line` gives
/// each size under the model (its protocol, or the algorithm it runs).
fn synthetic(
    truth: &Algos,
    op: &str,
    ranks: u32,
    sizes: impl IntoIterator<Item = u64>,
    line: impl Fn(&calibration::fit::Model, u64) -> (f64, f64),
) -> calibration::calibrate::OpSeries {
    let m = truth.model(op, ranks).unwrap();
    calibration::calibrate::OpSeries {
        op: op.into(),
        ranks,
        points: sizes
            .into_iter()
            .map(|size| {
                let (a, b) = line(&m, size);
                (size, m.predict(size as f64, a, b))
            })
            .collect(),
    }
}

/// Powers of two from 2^`lo` to 2^`hi` bytes.
fn doubling(lo: u32, hi: u32) -> impl Iterator<Item = u64> {
    (lo..=hi).map(|k| 1u64 << k)
}

/// `fitted` fitted by MPI's size regimes with `algos`, predicting
/// `target`.
fn across_regimes(
    fitted: &calibration::calibrate::OpSeries,
    target: &calibration::calibrate::OpSeries,
    algos: &Algos,
) -> calibration::validate::Validation {
    use calibration::fit::{Library, Shape};
    calibration::validate::validate_across(
        fitted,
        target,
        "synthetic",
        Some(Shape::Regimes),
        Library::Mpi,
        algos,
    )
    .unwrap()
}

/// `--algo broadcast=ompi-binomial`: measurements made by Open MPI's
/// binomial broadcast (every child at once, its sends sharing the link)
/// on 4 ranks, one link class, are predicted exactly at 8 and 16 ranks
/// when the fit models that algorithm, and missed when it keeps the
/// textbook tree (one child a step), whose bytes term grows as log2 N
/// where Open MPI's grows faster (3 m/B against 6 m/B at 8 ranks).
#[test]
fn a_named_algorithm_is_the_one_fitted_and_predicted() {
    let ompi = algos("broadcast=ompi-binomial");
    let series = |ranks| {
        synthetic(&ompi, "broadcast", ranks, doubling(16, 24), |_, _| {
            (20e-6, 1.25e9)
        })
    };
    let four = series(4);
    for n in [8, 16] {
        let across = |algos: &Algos| across_regimes(&four, &series(n), algos);
        let right = across(&ompi);
        assert!(right.max_abs_error < 1e-6, "{}", right.max_abs_error);
        assert!(
            right
                .points
                .iter()
                .all(|p| p.via.starts_with("ompi-binomial"))
        );
        // the textbook tree under-predicts: at 8 ranks 3 m/B against 6
        let wrong = across(&Algos::default());
        assert!(
            wrong.median_abs_error > 0.2,
            "{n}: {}",
            wrong.median_abs_error
        );
    }
}

/// Fit at one rank count, predict another, with NCCL's shape: data made by
/// the fastest of three protocols (each an α per step and a B per link)
/// of the ring AllReduce and the ring AllGather at 4 ranks predict 8 and
/// 16 ranks exactly, where the steps' structure moves every switch; and
/// each point names the protocol that ran it.
#[test]
fn a_protocol_fit_at_one_rank_count_predicts_another() {
    use calibration::calibrate::OpSeries;
    use calibration::fit::{Library, Model, Shape, blend};
    use calibration::validate::validate_across;
    let lines = [(0.8e-6, 4e9), (1.5e-6, 40e9), (6e-6, 90e9)];
    let series = |op: &str, ranks: u32| {
        let m = Model::for_op(op, ranks).unwrap();
        let points = (3..=30)
            .map(|k| {
                let size = 1u64 << k;
                let t = blend(
                    lines.iter().map(|&(a, b)| m.predict(size as f64, a, b)),
                    f64::INFINITY,
                );
                (size, t)
            })
            .collect();
        OpSeries {
            op: op.into(),
            ranks,
            points,
        }
    };
    for op in ["allreduce", "allgather"] {
        let four = series(op, 4);
        for n in [8, 16] {
            let v = validate_across(
                &four,
                &series(op, n),
                "synthetic",
                Some(Shape::Protocols),
                Library::Nccl,
                &Algos::default(),
            )
            .unwrap();
            assert_eq!(
                (v.ranks, v.points.len(), v.shape.as_str()),
                (n, 28, "protocols")
            );
            assert!(
                v.max_abs_error < 1e-6,
                "{op} at {n}: max error {}",
                v.max_abs_error
            );
            assert_eq!(v.points[0].via, "ring LL");
            assert_eq!(v.points.last().unwrap().via, "ring Simple");
            assert!(v.points.iter().any(|p| p.via == "ring LL128"));
        }
    }
}

/// A percentage for the tables, "—" where there is no value.
fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", 100.0 * x)
    } else {
        "—".into()
    }
}

/// A table row of one validation.
fn row(what: &str, v: &calibration::validate::Validation, default: bool) -> String {
    format!(
        "| {what} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} |\n",
        v.op,
        v.ranks,
        v.shape,
        if default { " (default)" } else { "" },
        v.regimes.len(),
        pct(v.median_abs_error_large),
        pct(v.max_abs_error_large),
        pct(v.median_abs_error_small),
        pct(v.median_abs_error),
        pct(v.max_abs_error),
    )
}

/// A committed profile of `tests/fixtures/profiles`.
fn fixture_profile(file: &str) -> calibration::profile::Profile {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/profiles"
    ))
    .join(file);
    calibration::profile::Profile::from_toml(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A profile's measured series and the library that made them.
fn profile_series(file: &str) -> Vec<calibration::calibrate::OpSeries> {
    let prof = fixture_profile(file);
    calibration::calibrate::by_op(
        prof.measurements
            .iter()
            .map(|m| (m.op.as_str(), m.ranks, m.size_bytes, m.time_s)),
    )
}

/// The algorithms a measured profile is fitted with: `user`'s, and the
/// MPI library's own choices where the profile names its library
/// (`calibrate::with_library_defaults`, as `dtsim validate` does).
fn profile_algos(file: &str, user: &Algos) -> Algos {
    let prof = fixture_profile(file);
    calibration::calibrate::with_library_defaults(user, &prof.provenance.notes).0
}

/// The measured profiles of the tables: (file, what the table calls it).
const PROFILES: [(&str, &str); 25] = [
    ("mpi-4ranks-ci-vm.toml", "CI VM, Open MPI shared memory"),
    ("mpi-emulated-2hosts.toml", "emulated cluster, 2 hosts"),
    ("mpi-emulated-4hosts.toml", "emulated cluster, 4 hosts"),
    (
        "mpi-emulated-100mbit-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts",
    ),
    (
        "mpi-emulated-100mbit-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts",
    ),
    (
        "mpi-emulated-100mbit-wide-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, 16 KiB–16 MiB",
    ),
    (
        "mpi-emulated-100mbit-wide-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, 16 KiB–16 MiB",
    ),
    (
        "mpi-4ranks-ci-vm-unforced.toml",
        "CI VM, Open MPI shared memory, its own allreduce",
    ),
    (
        "mpi-emulated-100mbit-library-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, Open MPI's own choice",
    ),
    (
        "mpi-emulated-100mbit-library-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, Open MPI's own choice",
    ),
    (
        "mpi-emulated-100mbit-library-alltoall-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, Open MPI's own choice, its alltoall too",
    ),
    (
        "mpi-emulated-100mbit-library-alltoall-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, Open MPI's own choice, its alltoall too",
    ),
    (
        "mpi-emulated-100mbit-library-bcast-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, Open MPI's own choice, its broadcast too",
    ),
    (
        "mpi-emulated-100mbit-library-bcast-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, Open MPI's own choice, its broadcast too",
    ),
    (
        "mpi-emulated-100mbit-fq-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, queues in turn, no TCP put",
    ),
    (
        "mpi-emulated-100mbit-fq-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, queues in turn, no TCP put",
    ),
    (
        "mpi-emulated-100mbit-library-fq-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, queues in turn, no TCP put, Open MPI's own choice",
    ),
    (
        "mpi-emulated-100mbit-library-fq-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, queues in turn, no TCP put, Open MPI's own choice",
    ),
    (
        "mpi-emulated-100mbit-mpich-2hosts.toml",
        "emulated cluster at 100 Mbit/s, 2 hosts, queues in turn, MPICH's own choice",
    ),
    (
        "mpi-emulated-100mbit-rounds-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, queues in turn, no TCP put, timed in rounds",
    ),
    (
        "mpi-emulated-100mbit-rounds-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, queues in turn, no TCP put, timed in rounds",
    ),
    (
        "mpi-emulated-100mbit-library-rounds-4hosts.toml",
        "emulated cluster at 100 Mbit/s, 4 hosts, queues in turn, no TCP put, timed in rounds, Open MPI's own choice",
    ),
    (
        "mpi-emulated-100mbit-library-rounds-8hosts.toml",
        "emulated cluster at 100 Mbit/s, 8 hosts, queues in turn, no TCP put, timed in rounds, Open MPI's own choice",
    ),
    (
        "mpi-4ranks-ci-vm-rounds.toml",
        "CI VM, Open MPI shared memory, the ring forced, timed in rounds",
    ),
    (
        "mpi-4ranks-ci-vm-unforced-rounds.toml",
        "CI VM, Open MPI shared memory, its own allreduce, timed in rounds",
    ),
];

/// The harness run three times in a row with the sizes timed in rounds
/// (2026-11-27, 19:49–20:01 UTC): (profile at 4 hosts, at 8 hosts, the
/// run), the textbook algorithms forced and then Open MPI's own choice.
/// The first of each is also in [`PROFILES`].
const ROUNDS: [(&str, &str, &str); 6] = [
    (PROFILES[19].0, PROFILES[20].0, "forced, run a"),
    (
        "mpi-emulated-100mbit-rounds-b-4hosts.toml",
        "mpi-emulated-100mbit-rounds-b-8hosts.toml",
        "forced, run b",
    ),
    (
        "mpi-emulated-100mbit-rounds-c-4hosts.toml",
        "mpi-emulated-100mbit-rounds-c-8hosts.toml",
        "forced, run c",
    ),
    (
        PROFILES[21].0,
        PROFILES[22].0,
        "Open MPI's own choice, run a",
    ),
    (
        "mpi-emulated-100mbit-library-rounds-b-4hosts.toml",
        "mpi-emulated-100mbit-library-rounds-b-8hosts.toml",
        "Open MPI's own choice, run b",
    ),
    (
        "mpi-emulated-100mbit-library-rounds-c-4hosts.toml",
        "mpi-emulated-100mbit-library-rounds-c-8hosts.toml",
        "Open MPI's own choice, run c",
    ),
];

/// The algorithms a run of [`ROUNDS`] is fitted and predicted with, as
/// its profiles name them: the forced ones, or Open MPI's own choice.
fn rounds_algos(four: &str) -> Algos {
    profile_algos(four, &Algos::default())
}

/// The algorithms the emulated cluster's measurements ran, as the fits
/// model them: Open MPI's binomial broadcast (algorithm 6) sends to
/// every child at once.
fn open_mpi_broadcast() -> Algos {
    algos("broadcast=ompi-binomial")
}

/// The emulated cluster's cross-rank predictions: each operation's
/// measurements at `from` fitted (by `shape`) and predicting those at
/// `to`, with `algos`.
fn across_profiles(
    from: &str,
    to: &str,
    shape: calibration::fit::Shape,
    algos: &Algos,
) -> Vec<calibration::validate::Validation> {
    use calibration::fit::Library;
    use calibration::validate::validate_across;
    let (a, b) = (profile_series(from), profile_series(to));
    b.iter()
        .filter(|s| s.op != "pingpong")
        .map(|target| {
            let fitted = a.iter().find(|s| s.op == target.op).unwrap();
            validate_across(fitted, target, "emulated", Some(shape), Library::Mpi, algos).unwrap()
        })
        .collect()
}

/// The held-out tables of docs/calibration.md: every fixture log and
/// measured profile, fitted on every other size by each shape, and the
/// emulated cluster's fits at one host count predicting another's (2 → 4
/// hosts at 1 Gbit/s; 4 → 8 hosts at 100 Mbit/s, two runs, with the
/// textbook broadcast and with Open MPI's; runs with Open MPI's own
/// allreduce and allgather, alltoall and broadcast; and the forced and
/// the library run since the hosts' queues are served in turn and Open
/// MPI's TCP put is off; MPICH on 2 hosts at one count). A profile that
/// names its MPI library is
/// fitted with the library's choices, as `dtsim validate` fits it.
/// The docs hold exactly this text (`DTSIM_BLESS=1 cargo test -p
/// calibration --test validate` rewrites it there).
fn held_out_tables() -> String {
    use calibration::fit::{Library, Shape};
    use calibration::validate::validate_series;
    let mut t = String::from(
        "| measurements | op | ranks | fit | lines | ≥ 64 KiB median | ≥ 64 KiB max | < 64 KiB median | all median | all max |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for dir in ["nccl-tests", "osu"] {
        for f in fixtures(dir) {
            let name = f.display().to_string();
            let stem = f.file_stem().unwrap().to_string_lossy().to_string();
            for log in parse_file(&f).unwrap() {
                let library = Library::of_tool(log.tool.name());
                for shape in [Shape::Protocols, Shape::Regimes] {
                    let default = shape == library.default_shape();
                    match validate_log(
                        &log,
                        &name,
                        known_ranks(&name),
                        Some(shape),
                        &Algos::default(),
                    ) {
                        Ok(v) => t += &row(&format!("{dir}/{stem}"), &v, default),
                        Err(ValidateError::TooFewSizes { n, .. }) => {
                            if default {
                                t += &format!(
                                    "| {dir}/{stem} | {} | | {n} sizes: nothing to hold out | | | | | | |\n",
                                    log.op
                                );
                            }
                        }
                        Err(e) => panic!("{name}: {e}"),
                    }
                }
                // the transport's eager limit, where known (regimes only)
                for (_, eager) in LIBRARY_EAGER.iter().filter(|(k, _)| stem.contains(k)) {
                    let v = validate_log(
                        &log,
                        &name,
                        known_ranks(&name),
                        Some(Shape::Regimes),
                        &Algos::default().with_eager_limit(*eager),
                    )
                    .unwrap();
                    t += &row(
                        &format!("{dir}/{stem}, eager limit {} KiB", eager / 1024),
                        &v,
                        library.default_shape() == Shape::Regimes,
                    );
                }
                // the library's own algorithm selection, where modelled
                for (_, spec) in LIBRARY_ALGOS.iter().filter(|(k, _)| stem.contains(k)) {
                    for shape in [Shape::Protocols, Shape::Regimes] {
                        let v = validate_log(
                            &log,
                            &name,
                            known_ranks(&name),
                            Some(shape),
                            &algos(spec),
                        )
                        .unwrap();
                        t += &row(
                            &format!("{dir}/{stem}, {spec}"),
                            &v,
                            shape == library.default_shape(),
                        );
                    }
                }
            }
        }
    }
    for (file, what) in PROFILES {
        // a profile that names its MPI library is fitted with its choices
        let algos = profile_algos(file, &Algos::default());
        for s in profile_series(file) {
            if s.op == "pingpong" {
                continue;
            }
            for shape in [Shape::Protocols, Shape::Regimes] {
                let v = validate_series(&s, file, Some(shape), Library::Mpi, &algos).unwrap();
                t += &row(what, &v, shape == Library::Mpi.default_shape());
            }
        }
    }
    t += "\n| emulated cluster: fitted at → predicted | op | ranks | fit | lines | ≥ 64 KiB median | ≥ 64 KiB max | < 64 KiB median | all median | all max |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
    let runs = [
        (
            PROFILES[1].0,
            PROFILES[2].0,
            "2 → 4 hosts",
            Algos::default(),
            None,
        ),
        (
            PROFILES[3].0,
            PROFILES[4].0,
            "4 → 8 hosts, 100 Mbit/s",
            Algos::default(),
            None,
        ),
        (
            PROFILES[3].0,
            PROFILES[4].0,
            "4 → 8 hosts, 100 Mbit/s, broadcast=ompi-binomial",
            open_mpi_broadcast(),
            Some("broadcast"),
        ),
        (
            PROFILES[5].0,
            PROFILES[6].0,
            "4 → 8 hosts, 100 Mbit/s, 16 KiB–16 MiB",
            Algos::default(),
            None,
        ),
        (
            PROFILES[5].0,
            PROFILES[6].0,
            "4 → 8 hosts, 100 Mbit/s, 16 KiB–16 MiB, broadcast=ompi-binomial",
            open_mpi_broadcast(),
            Some("broadcast"),
        ),
        // Open MPI's own allreduce and allgather (Rabenseifner's and
        // recursive doubling), as the profiles' library notes say
        (
            PROFILES[8].0,
            PROFILES[9].0,
            "4 → 8 hosts, 100 Mbit/s, Open MPI's own choice, broadcast=ompi-binomial",
            profile_algos(PROFILES[8].0, &open_mpi_broadcast()),
            None,
        ),
        // Open MPI's own alltoall (linear, and the pairwise exchange for
        // 512 KiB to 1 MiB blocks on 4 ranks), as the profiles say
        (
            PROFILES[10].0,
            PROFILES[11].0,
            "4 → 8 hosts, 100 Mbit/s, Open MPI's own alltoall",
            profile_algos(PROFILES[10].0, &open_mpi_broadcast()),
            Some("alltoall"),
        ),
        // Open MPI's own broadcast (basic linear, and the pipeline from
        // 1 MiB on 4 ranks), as the profiles say
        (
            PROFILES[12].0,
            PROFILES[13].0,
            "4 → 8 hosts, 100 Mbit/s, Open MPI's own broadcast",
            profile_algos(PROFILES[12].0, &Algos::default()),
            Some("broadcast"),
        ),
        // the hosts' queues served in turn and Open MPI's TCP put off
        // (2026-11-27 evening): the textbook algorithms forced, and Open
        // MPI's own choice of all four
        (
            PROFILES[14].0,
            PROFILES[15].0,
            "4 → 8 hosts, 100 Mbit/s, queues in turn, no TCP put, broadcast=ompi-binomial",
            open_mpi_broadcast(),
            None,
        ),
        (
            PROFILES[16].0,
            PROFILES[17].0,
            "4 → 8 hosts, 100 Mbit/s, queues in turn, no TCP put, Open MPI's own choice",
            profile_algos(PROFILES[16].0, &Algos::default()),
            None,
        ),
    ];
    // the same harness with the sizes timed in rounds, three runs of each
    let rounds = ROUNDS.iter().map(|&(four, eight, run)| {
        (
            four,
            eight,
            format!("4 → 8 hosts, 100 Mbit/s, queues in turn, no TCP put, timed in rounds, {run}"),
            rounds_algos(four),
            None,
        )
    });
    let runs = runs
        .into_iter()
        .map(|(from, to, what, algos, only)| (from, to, what.to_string(), algos, only))
        .chain(rounds);
    // (the runs that name an algorithm for one operation show its rows)
    for (from, to, what, algos, only) in runs {
        let by_shape: Vec<(Shape, Vec<calibration::validate::Validation>)> =
            [Shape::Protocols, Shape::Regimes]
                .into_iter()
                .map(|shape| (shape, across_profiles(from, to, shape, &algos)))
                .collect();
        for i in 0..by_shape[0].1.len() {
            for (shape, vs) in &by_shape {
                let v = &vs[i];
                if only.is_some_and(|op| v.op != op) {
                    continue;
                }
                t += &row(&what, v, *shape == Library::Mpi.default_shape());
            }
        }
    }
    t
}

#[test]
fn the_held_out_tables_in_the_docs_are_these() {
    let doc_path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/calibration.md"
    ));
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let (begin, end) = (
        "<!-- held-out tables: begin (calibration/tests/validate.rs writes them) -->\n",
        "<!-- held-out tables: end -->",
    );
    let i = doc.find(begin).expect("the begin marker") + begin.len();
    let j = doc.find(end).expect("the end marker");
    let table = held_out_tables();
    if std::env::var_os("DTSIM_BLESS").is_some() {
        std::fs::write(&doc_path, format!("{}{}{}", &doc[..i], table, &doc[j..])).unwrap();
        return;
    }
    assert_eq!(
        doc[i..j],
        table,
        "docs/calibration.md's held-out tables are stale: DTSIM_BLESS=1 cargo test -p calibration --test validate"
    );
}

/// `--algo broadcast=ompi-binomial:64KiB`: measurements made by Open
/// MPI's segmented broadcast on 4 ranks (two MPI regimes, one link class)
/// are predicted exactly at 8 and 16 ranks when the fit models it, and
/// missed by 59% and 120% at the largest size when it models the
/// unsegmented tree, whose bytes term reads the segments' latencies as
/// bandwidth.
#[test]
fn a_segmented_broadcast_is_fitted_and_predicted_across_ranks() {
    let seg = algos("broadcast=ompi-binomial:64KiB");
    let line = |_: &calibration::fit::Model, b: u64| {
        if b < 1 << 16 {
            (3e-6, 1e9)
        } else {
            (25e-6, 5e9)
        }
    };
    let series = |ranks| synthetic(&seg, "broadcast", ranks, doubling(12, 26), line);
    let four = series(4);
    for n in [8, 16] {
        let across = |algos: &Algos| across_regimes(&four, &series(n), algos);
        let right = across(&seg);
        assert!(right.max_abs_error < 1e-6, "{n}: {}", right.max_abs_error);
        // the unsegmented tree reads 3·m/B' = 2·m/B + m·α/segment at 4
        // ranks (0.78 ns a byte); at large sizes it predicts 6·m/B' at 8
        // ranks and 10·m/B' at 16 where the truth is 3·m/B + m·α/segment
        // and 4·m/B + m·α/segment: 59% and 120% high
        let wrong = across(&algos("broadcast=ompi-binomial"));
        let want = if n == 8 { 0.59 } else { 1.20 };
        assert!(
            (wrong.max_abs_error - want).abs() < 0.01,
            "{n}: {}",
            wrong.max_abs_error
        );
    }
}

/// A ping-pong fit driving Open MPI's segmented broadcast chooses each
/// regime by the size of a segment, the message Open MPI sends: with the
/// eager regime up to 64 KiB and 64 KiB segments, every size runs eager,
/// and the prediction is exact; without the segment size in the fit
/// (the unsegmented tree's messages are the whole buffer) the large sizes
/// would run the rendezvous line.
#[test]
fn a_pingpong_fit_picks_the_regime_of_a_segment() {
    use calibration::fit::{Model, Shape};
    use calibration::validate::validate_from_pingpong;
    let seg = algos("broadcast=ompi-binomial:64KiB");
    let (eager, rendezvous) = ((2e-6, 2e9), (30e-6, 8e9));
    let line = |b: u64| if b <= 1 << 16 { eager } else { rendezvous };
    let pingpong: Vec<(u64, f64)> = (8..=24)
        .map(|k| {
            let b = 1u64 << k;
            let (a, bw) = line(b);
            (b, Model::PointToPoint.predict(b as f64, a, bw))
        })
        .collect();
    let m = seg.model("broadcast", 8).unwrap();
    let measured: Vec<(u64, f64)> = (12..=24)
        .map(|k| {
            let b = 1u64 << k;
            (b, m.predict(b as f64, eager.0, eager.1))
        })
        .collect();
    let v = validate_from_pingpong(
        &pingpong,
        "broadcast",
        8,
        &measured,
        "synthetic",
        Some(Shape::Regimes),
        &seg,
    )
    .unwrap();
    assert!(v.max_abs_error < 1e-6, "{}", v.max_abs_error);
    assert!(v.points.iter().all(|p| p.via == "ompi-binomial regime 1"));
}

/// A ping-pong fit cannot drive a pipelined algorithm (NCCL's tree): its
/// pieces change size with the buffer, so no regime is theirs; refused
/// with what to do instead.
#[test]
fn a_pingpong_fit_does_not_drive_a_pipeline() {
    use calibration::fit::{Model, Shape};
    use calibration::validate::validate_from_pingpong;
    let tree = algos("allreduce=tree");
    let pingpong: Vec<(u64, f64)> = (8..=24)
        .map(|k| {
            let b = 1u64 << k;
            (b, Model::PointToPoint.predict(b as f64, 2e-6, 5e9))
        })
        .collect();
    let e = validate_from_pingpong(
        &pingpong,
        "allreduce",
        8,
        &pingpong,
        "synthetic",
        Some(Shape::Regimes),
        &tree,
    )
    .unwrap_err();
    assert!(matches!(e, ValidateError::Pipelined(..)), "{e}");
    assert!(
        e.to_string()
            .contains("fit the operation's own measurements"),
        "{e}"
    );
}

/// Issue 13's cross-rank bounds on our own MPI measurements across hosts:
/// the emulated cluster of `scripts/emulated-cluster.sh` at 100 Mbit/s
/// (the committed run of 2026-11-26 22:02 UTC), fitted at 4 hosts by
/// MPI's default shape (size regimes) with Open MPI's broadcast modelled
/// as it runs, predicts every collective at 8 hosts within a median
/// |error| of 5% and a maximum of 15% at every size (all ≥ 64 KiB). The
/// textbook binomial broadcast, one child a step, misses by about a
/// quarter: the algorithm, not the link, decides that one.
#[test]
fn the_emulated_cluster_meets_the_cross_rank_bounds() {
    use calibration::fit::Shape;
    let (four, eight) = (PROFILES[3].0, PROFILES[4].0);
    let vs = four_to_eight(four, eight, &open_mpi_broadcast());
    for v in &vs {
        assert_within_bounds(&v.op, v);
    }
    let textbook = across_profiles(four, eight, Shape::Regimes, &Algos::default());
    let b = textbook.iter().find(|v| v.op == "broadcast").unwrap();
    assert!(
        b.median_abs_error_large > 0.2,
        "{}",
        b.median_abs_error_large
    );
}

/// Open MPI's own alltoall across the emulated hosts (`ALGORITHMS=library`,
/// the committed run of 2026-11-27 11:33 UTC, which leaves the alltoall
/// to Open MPI's fixed decision): the profiles name the library, so the
/// fits model its choice (`alltoall=ompi`: linear, and the pairwise
/// exchange for 512 KiB to 1 MiB blocks on 4 ranks); fitted at 4 hosts
/// by MPI's default shape, it predicts 8 hosts within issue 13's median
/// bound, 5% (3.1%); the maximum, at 4 MiB, is 15.3%, just over the
/// 15% bound (docs/calibration.md).
#[test]
fn open_mpis_own_alltoall_across_hosts() {
    use calibration::fit::Shape;
    let (four, eight) = (PROFILES[10].0, PROFILES[11].0);
    let algos = profile_algos(four, &open_mpi_broadcast());
    let v = across_profiles(four, eight, Shape::Regimes, &algos)
        .into_iter()
        .find(|v| v.op == "alltoall")
        .unwrap();
    assert_eq!((v.ranks, v.points.len()), (8, 7));
    assert!(
        v.median_abs_error_large <= 0.05,
        "median {:.3}",
        v.median_abs_error_large
    );
    // the fit models Open MPI's choice: linear on 8 ranks at every size
    assert!(
        v.points.iter().all(|p| p.via.starts_with("linear")),
        "{:?}",
        v.points.iter().map(|p| &p.via).collect::<Vec<_>>()
    );
}

/// Open MPI's own broadcast across the emulated hosts (`ALGORITHMS=library`,
/// the committed run of 2026-11-27 14:16 UTC, which leaves every
/// collective to Open MPI's fixed decision): the profiles name the
/// library, so the fits model its choice (`broadcast=ompi`: basic linear
/// from 8 KiB, and on 4 ranks the unsegmented pipeline from 1 MiB, both
/// 3·m/B there; on 8 ranks basic linear from 32 KiB, the root's 7 sends
/// sharing its link); fitted at 4 hosts by MPI's default shape, 8 hosts
/// are predicted within issue 13's bounds, median 5% and max 15% (0.4%
/// and 0.9% measured). With the textbook binomial tree (⌈log2 N⌉ steps
/// of m/B' each) the same fit misses by about a third: 4 ranks' 3·m/B
/// read as 2 steps gives B' = 2B/3, and 8 ranks 3·m/B' = 4.5·m/B where
/// basic linear takes 7·m/B (−36%).
#[test]
fn open_mpis_own_broadcast_across_hosts() {
    use calibration::fit::Shape;
    let (four, eight) = (PROFILES[12].0, PROFILES[13].0);
    let algos = profile_algos(four, &Algos::default());
    let bcast = |algos: &Algos| {
        across_profiles(four, eight, Shape::Regimes, algos)
            .into_iter()
            .find(|v| v.op == "broadcast")
            .unwrap()
    };
    let v = bcast(&algos);
    assert_eq!((v.ranks, v.points.len()), (8, 7));
    assert_within_bounds("broadcast", &v);
    assert!(
        v.points.iter().all(|p| p.via.starts_with("linear")),
        "{:?}",
        v.points.iter().map(|p| &p.via).collect::<Vec<_>>()
    );
    let textbook = bcast(&Algos::default());
    assert!(
        textbook.median_abs_error_large > 0.3,
        "textbook median {:.3}",
        textbook.median_abs_error_large
    );
}

/// MPICH 4.0.2 across two emulated hosts (2026-11-27, `MPI=mpich
/// ALGORITHMS=library HOSTS=2`, UCX over TCP): the profile names MPICH,
/// so every collective is fitted with MPICH's own choice (the notes say
/// so, and `dtsim validate` does the same), and fitted on every other
/// size each is predicted within issue 13's bounds at 64 KiB and more
/// (every collective ran at 1.05–1.08 times its link time).
#[test]
fn mpichs_own_collectives_across_two_hosts() {
    use calibration::fit::{Library, Shape};
    use calibration::validate::validate_series;
    let file = PROFILES[18].0;
    let notes = fixture_profile(file).provenance.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("MPI library: MPICH Version:"))
    );
    let algos = profile_algos(file, &Algos::default());
    let mut ops = Vec::new();
    for s in profile_series(file) {
        if s.op == "pingpong" {
            continue;
        }
        let fitted = format!(
            "fitted with {}=mpich (as the MPI library and its settings chose)",
            s.op
        );
        assert!(notes.contains(&fitted), "{}", s.op);
        let v = validate_series(&s, file, Some(Shape::Regimes), Library::Mpi, &algos).unwrap();
        assert_within_bounds(&s.op, &v);
        ops.push(s.op.clone());
    }
    assert_eq!(ops, ["allgather", "allreduce", "alltoall", "broadcast"]);
}

/// The four collectives fitted at 4 hosts predicting 8 (MPI's default
/// shape), each with its 7 sizes held out; the profiles must hold all
/// four, in this order.
fn four_to_eight(four: &str, eight: &str, algos: &Algos) -> Vec<calibration::validate::Validation> {
    let vs = across_profiles(four, eight, calibration::fit::Shape::Regimes, algos);
    let ops: Vec<&str> = vs.iter().map(|v| v.op.as_str()).collect();
    assert_eq!(
        ops,
        ["allgather", "allreduce", "alltoall", "broadcast"],
        "{eight}"
    );
    for v in &vs {
        assert_eq!((v.ranks, v.points.len()), (8, 7), "{}", v.op);
    }
    vs
}

/// Issue 13's bounds on the held-out sizes of 64 KiB and more: median
/// |error| at most 5%, max at most 15%.
fn assert_within_bounds(what: &str, v: &calibration::validate::Validation) {
    assert!(
        v.median_abs_error_large <= 0.05 && v.max_abs_error_large <= 0.15,
        "{what}: median {:.3}, max {:.3}",
        v.median_abs_error_large,
        v.max_abs_error_large
    );
}

/// The harness with each host's queue served in turn (TCP's bare
/// acknowledgements first, then each destination host) and Open MPI's
/// TCP put off (run of 2026-11-27 17:24 UTC, the textbook algorithms
/// forced as in the run of 2026-11-26 asserted above): fitted at 4
/// hosts, 8 are predicted within issue 13's bounds, median 5% and max
/// 15%, by every collective. The collectives now run at 1.03–1.09 times
/// their link time at every size and both counts (docs/calibration.md,
/// "Open MPI's TCP put and the hosts' queues"; 1.2–1.7 times from 256 or
/// 512 KiB with one queue a host).
#[test]
fn the_emulated_cluster_with_its_queues_in_turn() {
    let vs = four_to_eight(PROFILES[14].0, PROFILES[15].0, &open_mpi_broadcast());
    for v in &vs {
        assert_within_bounds(&v.op, v);
    }
}

/// Open MPI's own choice of all four collectives (recursive doubling,
/// Rabenseifner's, linear or on 4 ranks the pairwise exchange for the
/// 2 MiB buffer, and basic linear or the pipeline for the broadcast), on
/// the same harness (run of 2026-11-27 17:16 UTC; the profiles name the
/// library, so the fits model its choice): fitted at 4 hosts, 8 are
/// predicted within 5% median by every collective, and the allgather
/// and the broadcast within 15% at every size. The allreduce's and the
/// alltoall's maxima miss the bound (38.6% and 23.3%): in the 8-host run
/// the allreduce took 1.27 and 1.74 times its link time at 512 KiB and
/// 4 MiB, the alltoall 1.27–1.38 times at 128–512 KiB, where the other
/// sizes run at 1.04–1.11 (other runs slow other sizes). The same
/// collectives measured with one queue a host and the put on (the run of
/// 07:37 UTC, above) missed the allreduce by more than 20% median, with
/// the same model.
#[test]
fn open_mpis_own_collectives_across_hosts_with_queues_in_turn() {
    let algos = profile_algos(PROFILES[16].0, &Algos::default());
    let vs = four_to_eight(PROFILES[16].0, PROFILES[17].0, &algos);
    for v in &vs {
        let (op, median, max) = (&v.op, v.median_abs_error_large, v.max_abs_error_large);
        assert!(median <= 0.05, "{op}: median {median:.3}");
        // the allreduce's and the alltoall's single slow sizes at 8 hosts
        let slow = op == "allreduce" || op == "alltoall";
        assert_eq!(max > 0.15, slow, "{op}: max {max:.3}");
    }
    let before = four_to_eight(
        PROFILES[8].0,
        PROFILES[9].0,
        &profile_algos(PROFILES[8].0, &open_mpi_broadcast()),
    );
    let allreduce = before.iter().find(|v| v.op == "allreduce").unwrap();
    assert!(
        allreduce.median_abs_error_large > 0.2,
        "before: allreduce median {:.3}",
        allreduce.median_abs_error_large
    );
}

/// The sizes timed in rounds (one call of each size a round, the median
/// of a size's rounds; `kernels::mpi`), three runs of the harness with
/// the textbook algorithms forced: fitted at 4 hosts, 8 are predicted
/// within issue 13's bounds by every collective in every run.
#[test]
fn timed_in_rounds_the_forced_runs_meet_the_bounds() {
    for &(four, eight, run) in &ROUNDS[..3] {
        let vs = four_to_eight(four, eight, &rounds_algos(four));
        for v in &vs {
            assert_within_bounds(&format!("{run}: {}", v.op), v);
        }
    }
}

/// Shared memory on a 2-core VM (an AMD EPYC), 4 ranks, the allreduce
/// fitted on every other size of one profile (MPI's default shape),
/// timed in rounds (2026-11-27, 23:09 UTC, three runs each, 16 KiB to
/// 16 MiB, 50 rounds): Open MPI's own allreduce (Rabenseifner's) meets
/// issue 13's bounds at 64 KiB and more in every run (median 1.8–2.7%,
/// max ≤ 8.9%); the forced ring is within the max (≤ 14.2%) and misses
/// the 5% median in two of three runs (4.8%, 5.8%, 5.2%), pinned with
/// bounds just above those (6% and 15%). The block-timed profile of the
/// same sizes and repeats missed 9.9% median, on another VM (an Intel
/// Xeon): the comparison mixes the timing with the machine.
#[test]
fn timed_in_rounds_shared_memory_fits_its_own_sizes() {
    use calibration::fit::{Library, Shape};
    use calibration::validate::validate_series;
    let allreduce = |file: &str| {
        let algos = profile_algos(file, &Algos::default());
        let s = profile_series(file)
            .into_iter()
            .find(|s| s.op == "allreduce")
            .unwrap_or_else(|| panic!("{file}: no allreduce"));
        validate_series(&s, file, Some(Shape::Regimes), Library::Mpi, &algos).unwrap()
    };
    for run in ["", "-b", "-c"] {
        let own = format!("mpi-4ranks-ci-vm-unforced-rounds{run}.toml");
        assert_within_bounds(&own, &allreduce(&own));
        let ring = format!("mpi-4ranks-ci-vm-rounds{run}.toml");
        let v = allreduce(&ring);
        assert!(
            v.median_abs_error_large <= 0.06 && v.max_abs_error_large <= 0.15,
            "{ring}: median {:.3}, max {:.3}",
            v.median_abs_error_large,
            v.max_abs_error_large
        );
    }
    // block-timed, the same sizes and repeats as Open MPI's own above
    let before = allreduce(PROFILES[7].0);
    assert!(before.median_abs_error_large > 0.09, "{before:?}");
}

/// Open MPI's own choice of all four collectives, timed in rounds, three
/// runs: every collective within 5% median in every run, and the
/// allgather, alltoall and broadcast within 15% at every size (the
/// alltoall missed 23.3% with each size's repetitions back to back,
/// [`open_mpis_own_collectives_across_hosts_with_queues_in_turn`]). The
/// allreduce (Rabenseifner's) meets the max in run a and misses it in b
/// and c, 28.3% and 21.8%, at sizes slow by 1.27–1.39 times that differ
/// by run (4 MiB in b; 512 KiB and 4 MiB in c): slow in at least three
/// of their five rounds (the median is), so not a passing spell.
#[test]
fn timed_in_rounds_open_mpis_own_choice_misses_only_the_allreduces_max() {
    for (i, &(four, eight, run)) in ROUNDS[3..].iter().enumerate() {
        let vs = four_to_eight(four, eight, &rounds_algos(four));
        for v in &vs {
            let (op, median, max) = (&v.op, v.median_abs_error_large, v.max_abs_error_large);
            assert!(median <= 0.05, "{run}: {op}: median {median:.3}");
            let misses = op == "allreduce" && i > 0;
            assert_eq!(max > 0.15, misses, "{run}: {op}: max {max:.3}");
        }
    }
}
