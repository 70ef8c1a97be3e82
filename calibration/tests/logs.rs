//! Log parsers against real nccl-tests and OSU logs (`tests/fixtures/`, each
//! naming its source in its first line), and against truncated or garbled
//! variants of them.
//!
//! Values are checked against the files: first and last row, row count,
//! ranks, op, and the 1-based line of each row.

use std::path::{Path, PathBuf};

use calibration::logs::{
    Log, LogFileError, ParseError, Row, Tool, detect_tool, parse_file, parse_nccl_tests,
    parse_nccl_tests_named, parse_osu, parse_osu_named, parse_text,
};

/// The fixture directory of the workspace.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");

/// Path of a fixture, `dir` being `nccl-tests` or `osu`.
fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(FIXTURES).join(dir).join(name)
}

/// Text of a fixture.
fn read(dir: &str, name: &str) -> String {
    std::fs::read_to_string(fixture(dir, name)).unwrap()
}

/// Parses a fixture file.
fn parse(dir: &str, name: &str) -> Vec<Log> {
    parse_file(&fixture(dir, name)).unwrap_or_else(|e| panic!("{e}"))
}

/// Relative closeness, for numbers that went through unit conversions.
fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 1e-12 * expected.abs().max(1e-300)
}

/// Checks a row: line, size, out-of-place and in-place time (µs), algbw and
/// busbw (GB/s).
#[track_caller]
fn check_row(
    row: &Row,
    line: usize,
    size: u64,
    time_us: f64,
    in_place_us: Option<f64>,
    algbw: Option<f64>,
    busbw: Option<f64>,
) {
    assert_eq!(row.line, line, "{row:?}");
    assert_eq!(row.size_bytes, size, "{row:?}");
    assert!(
        close(row.time_s, time_us * 1e-6),
        "{row:?}: time {time_us} us"
    );
    match (row.in_place_time_s, in_place_us) {
        (Some(a), Some(e)) => assert!(close(a, e * 1e-6), "{row:?}: in-place {e} us"),
        (a, e) => assert_eq!(a, e, "{row:?}"),
    }
    for (actual, expected) in [(row.algbw_gbps, algbw), (row.busbw_gbps, busbw)] {
        match (actual, expected) {
            (Some(a), Some(e)) => assert!(close(a, e), "{row:?}: bandwidth {e} GB/s"),
            (a, e) => assert_eq!(a, e, "{row:?}"),
        }
    }
}

/// Fixture files of a directory.
fn fixtures(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(FIXTURES).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
}

mod every_fixture {
    use super::*;

    #[test]
    fn every_nccl_tests_fixture_parses() {
        let files = fixtures("nccl-tests");
        assert!(files.len() >= 9, "{files:?}");
        for path in files {
            let logs = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!logs.is_empty(), "{}", path.display());
            for log in &logs {
                assert_eq!(log.tool, Tool::NcclTests);
                assert!(!log.rows.is_empty());
                assert!(log.header[0].starts_with("# source: "), "{:?}", log.header);
                assert!(
                    log.rows
                        .windows(2)
                        .all(|w| w[0].size_bytes <= w[1].size_bytes)
                );
                assert!(log.rows.iter().all(|r| r.in_place_time_s.is_some()));
            }
        }
    }

    #[test]
    fn every_osu_fixture_parses() {
        let files = fixtures("osu");
        assert!(files.len() >= 6, "{files:?}");
        for path in files {
            let logs = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(logs.len(), 1, "{}", path.display());
            let log = &logs[0];
            assert_eq!(log.tool, Tool::Osu);
            assert!(log.header[0].starts_with("# source: "), "{:?}", log.header);
            assert!(
                log.rows
                    .windows(2)
                    .all(|w| w[0].size_bytes < w[1].size_bytes)
            );
            assert!(log.rows.iter().all(|r| r.in_place_time_s.is_none()));
        }
    }

    #[test]
    fn the_tool_is_told_from_the_content_alone() {
        for (dir, tool) in [("nccl-tests", Tool::NcclTests), ("osu", Tool::Osu)] {
            for path in fixtures(dir) {
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(detect_tool(&text, None), Some(tool), "{}", path.display());
            }
        }
    }

    #[test]
    fn crlf_line_ends_parse_the_same() {
        for (dir, name) in [
            (
                "nccl-tests",
                "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
            ),
            ("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt"),
        ] {
            let text = read(dir, name);
            let crlf = text.replace('\n', "\r\n");
            assert_eq!(
                parse_text(&crlf, Some(name)).unwrap(),
                parse_text(&text, Some(name)).unwrap()
            );
        }
    }
}

mod nccl_tests {
    use super::*;

    #[test]
    fn aws_p4de_srun_prefix_op_from_file_name() {
        let logs = parse("nccl-tests", "aws_2x_p4de_16xA100_efa_allreduce.txt");
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "allreduce");
        // The excerpt has no device lines: busbw/algbw tells the 16 ranks
        // (2 × 8 A100), from the rows whose bandwidths have digits enough.
        assert_eq!(log.ranks, Some(16));
        let how = log.ranks_inferred.as_deref().unwrap();
        assert!(
            how.starts_with("16 ranks inferred from busbw/algbw"),
            "{how}"
        );
        assert!(how.contains("rows too small to tell"), "{how}");
        assert_eq!(log.rows.len(), 29);
        let (first, last) = (&log.rows[0], &log.rows[28]);
        check_row(first, 4, 8, 164.3, Some(163.3), Some(0.0), Some(0.0));
        check_row(
            last,
            32,
            2_147_483_648,
            51406.0,
            Some(51406.0),
            Some(41.78),
            Some(78.33),
        );
        check_row(
            &log.rows[20],
            24,
            8_388_608,
            762.8,
            Some(760.7),
            Some(11.00),
            Some(20.62),
        );
    }

    #[test]
    fn without_a_file_name_the_collective_is_unknown() {
        let text = read("nccl-tests", "aws_2x_p4de_16xA100_efa_allreduce.txt");
        let err = parse_nccl_tests(&text).unwrap_err();
        assert!(
            matches!(err, ParseError::UnknownOp { line: 2, .. }),
            "{err}"
        );
        assert!(err.text().starts_with("0: #       size"), "{err}");
        assert!(
            err.to_string().contains("Collective test starting"),
            "{err}"
        );
        // A file name naming two collectives decides nothing.
        let err = parse_nccl_tests_named(&text, Some("allgather_vs_allreduce.txt")).unwrap_err();
        assert!(matches!(err, ParseError::UnknownOp { .. }), "{err}");
    }

    #[test]
    fn aws_batch_open_mpi_tag_output_prefix() {
        let logs = parse("nccl-tests", "aws_batch_1x_p5_8xH100_nvlink_allreduce.txt");
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "allreduce");
        // no rank lines: busbw/algbw tells the p5's 8 GPUs
        assert_eq!(log.ranks, Some(8));
        assert!(log.ranks_inferred.is_some());
        assert_eq!(log.rows.len(), 32);
        check_row(&log.rows[0], 5, 8, 12.90, Some(12.87), Some(0.0), Some(0.0));
        check_row(
            &log.rows[31],
            36,
            17_179_869_184,
            62239.0,
            Some(62200.0),
            Some(276.03),
            Some(483.05),
        );
    }

    #[test]
    fn dgx_spark_collective_test_starting_line() {
        let logs = parse(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
        );
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "allgather");
        assert_eq!(log.ranks, Some(2));
        assert!(
            log.header
                .iter()
                .any(|h| h.starts_with("# nThread 1 nGpus 1"))
        );
        assert_eq!(log.rows.len(), 6);
        check_row(
            &log.rows[0],
            13,
            536_870_912,
            14594.4,
            Some(13778.0),
            Some(36.79),
            Some(18.39),
        );
        check_row(
            &log.rows[5],
            18,
            17_179_869_184,
            361820.0,
            Some(354934.0),
            Some(47.48),
            Some(23.74),
        );
        // The same without the file name: the content names the collective.
        let text = read(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
        );
        assert_eq!(parse_nccl_tests(&text).unwrap(), logs);
    }

    #[test]
    fn gcp_a3mega_sixteen_rank_lines() {
        let logs = parse("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "allreduce");
        assert_eq!(log.ranks, Some(16));
        assert_eq!(log.rows.len(), 31);
        check_row(
            &log.rows[0],
            25,
            8,
            135.8,
            Some(123.5),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &log.rows[30],
            55,
            8_589_934_592,
            47535.0,
            Some(47743.0),
            Some(180.71),
            Some(338.82),
        );
    }

    #[test]
    fn old_layout_allgather_and_broadcast_back_to_back() {
        let name = "llv22_nccl_osx_1x2_gtx1080_old_layout_allgather_broadcast.txt";
        let logs = parse("nccl-tests", name);
        assert_eq!(logs.len(), 2);
        let (gather, bcast) = (&logs[0], &logs[1]);

        // No redop, no root: `size count type time algbw busbw error ...`.
        assert_eq!(gather.op, "allgather");
        assert_eq!(gather.ranks, Some(2));
        assert!(
            gather
                .header
                .contains(&"===begin all_gather_perf test===".to_string())
        );
        assert_eq!(gather.rows.len(), 25);
        check_row(
            &gather.rows[0],
            12,
            8,
            21.03,
            Some(20.68),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &gather.rows[24],
            36,
            134_217_728,
            87825.0,
            Some(85704.0),
            Some(0.76),
            Some(0.76),
        );

        // Root, no redop.
        assert_eq!(bcast.op, "broadcast");
        assert_eq!(bcast.ranks, Some(2));
        assert_eq!(bcast.rows.len(), 25);
        check_row(
            &bcast.rows[0],
            51,
            8,
            21.42,
            Some(21.28),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &bcast.rows[24],
            75,
            134_217_728,
            91250.0,
            Some(91248.0),
            Some(1.47),
            Some(1.47),
        );
        // The second run's header is its own.
        assert!(
            bcast
                .header
                .iter()
                .filter(|h| !h.starts_with("# source:"))
                .all(|h| !h.contains("all_gather_perf"))
        );
        assert!(bcast.header[0].starts_with("# source:"));
    }

    #[test]
    fn old_layout_reduce_scatter() {
        let logs = parse(
            "nccl-tests",
            "llv22_nccl_osx_1x2_gtx1080_old_layout_reduce_scatter.txt",
        );
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "reducescatter");
        assert_eq!(log.ranks, Some(2));
        assert_eq!(log.rows.len(), 25);
        check_row(
            &log.rows[0],
            12,
            8,
            20.91,
            Some(20.95),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &log.rows[24],
            36,
            134_217_728,
            168931.0,
            Some(184732.0),
            Some(0.40),
            Some(0.40),
        );
    }

    #[test]
    fn old_layout_alltoall_with_an_empty_redop_field() {
        let logs = parse(
            "nccl-tests",
            "nccl_tests_issue78_8node_64xV100_ib_old_layout_alltoall.txt",
        );
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "alltoall");
        // no rank lines, and busbw 0.51 against algbw 0.52 admits any n
        // from 27 up: the footer's six-digit average tells the 64
        assert_eq!(log.ranks, Some(64));
        assert!(log.ranks_inferred.as_deref().unwrap().contains("footer"));
        assert_eq!(log.rows.len(), 2);
        check_row(
            &log.rows[0],
            6,
            268_435_456,
            520935.0,
            Some(519562.0),
            Some(0.52),
            Some(0.51),
        );
        check_row(
            &log.rows[1],
            7,
            536_870_912,
            1041974.0,
            Some(1041299.0),
            Some(0.52),
            Some(0.51),
        );
    }

    #[test]
    fn new_layout_allgather_and_broadcast_after_shell_commands() {
        let logs = parse(
            "nccl-tests",
            "autodl_1x2_2080ti_pcie_allgather_broadcast.txt",
        );
        assert_eq!(logs.len(), 2);
        let (gather, bcast) = (&logs[0], &logs[1]);
        assert_eq!(gather.op, "allgather");
        assert_eq!(gather.ranks, Some(2));
        assert!(
            gather
                .header
                .iter()
                .any(|h| h.ends_with("./build/all_gather_perf -b 8 -e 1024M -f 2 -g2"))
        );
        assert_eq!(gather.rows.len(), 28);
        // Size 0 twice: nccl-tests rounds sizes down to ranks x element size.
        check_row(
            &gather.rows[0],
            12,
            0,
            0.33,
            Some(0.36),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &gather.rows[1],
            13,
            0,
            0.33,
            Some(0.33),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &gather.rows[27],
            39,
            1_073_741_824,
            141614.0,
            Some(139719.0),
            Some(7.58),
            Some(3.79),
        );
        assert_eq!(bcast.op, "broadcast");
        assert_eq!(bcast.ranks, Some(2));
        assert_eq!(bcast.rows.len(), 28);
        check_row(
            &bcast.rows[0],
            54,
            8,
            11.65,
            Some(11.37),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &bcast.rows[27],
            81,
            1_073_741_824,
            96800.0,
            Some(96803.0),
            Some(11.09),
            Some(11.09),
        );
    }

    #[test]
    fn alltoall_with_na_in_the_wrong_column() {
        let logs = parse("nccl-tests", "autodl_1x2_2080ti_pcie_alltoall.txt");
        assert_eq!(logs.len(), 1);
        let log = &logs[0];
        assert_eq!(log.op, "alltoall");
        assert_eq!(log.ranks, Some(2));
        assert_eq!(log.rows.len(), 28);
        check_row(
            &log.rows[0],
            12,
            0,
            12.97,
            Some(12.86),
            Some(0.0),
            Some(0.0),
        );
        check_row(
            &log.rows[27],
            39,
            1_073_741_824,
            116573.0,
            Some(113591.0),
            Some(9.21),
            Some(4.61),
        );
    }

    #[test]
    fn lines_from_other_ranks_and_stderr_are_skipped() {
        // The aws_batch fixture with lines of other ranks interleaved, as
        // `mpirun --tag-output` would print them (inserted for this test).
        let text = read("nccl-tests", "aws_batch_1x_p5_8xH100_nvlink_allreduce.txt");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(10, "[1,3]<stdout>:some output of rank 3");
        lines.insert(20, "[1,0]<stderr>:a warning of rank 0");
        let noisy = lines.join("\n");
        let logs = parse_nccl_tests_named(&noisy, Some("x_allreduce.txt")).unwrap();
        assert_eq!(logs[0].rows.len(), 32);
        assert_eq!(logs[0].rows[31].line, 38);
    }

    #[test]
    fn a_run_over_several_operators_gives_one_log_per_operator() {
        // Rows as printed by all_reduce_perf -o all (NVIDIA/nccl-tests issue
        // #167, first post), under the column titles of the nccl-tests
        // version of that issue.
        let text = "\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
      199680         49920     float     max      -1    125.8    1.59    2.98      0    125.1    1.60    2.99      0
      200704         50176     float     max      -1    125.3    1.60    3.00      0    124.6    1.61    3.02      0
      196608         49152     float     min      -1    125.5    1.57    2.94      0    124.9    1.57    2.95      0
      197632         49408     float     min      -1    125.4    1.58    2.96      0    124.4    1.59    2.98      0
";
        let logs = parse_nccl_tests_named(text, Some("issue167_allreduce.txt")).unwrap();
        assert_eq!(logs.len(), 2);
        assert!(logs[0].header.iter().any(|h| h.contains("redop max")));
        assert!(logs[1].header.iter().any(|h| h.contains("redop min")));
        assert_eq!(logs[1].rows[0].size_bytes, 196_608);
        assert_eq!(logs[1].rows[0].line, 5);
    }

    #[test]
    fn nranks_from_nccl_info_lines_when_no_device_lines() {
        // NCCL INFO lines as in NVIDIA/nccl-tests issue #29, before the
        // aws_p4de table (which lists no devices).
        let table = read("nccl-tests", "aws_2x_p4de_16xA100_efa_allreduce.txt");
        let text = format!(
            "server2:23920:24013 [7] NCCL INFO comm 0x7f5780001ca0 rank 15 nranks 32 cudaDev 7 nvmlDev 7 - Init COMPLETE\n{table}"
        );
        let logs = parse_nccl_tests_named(&text, Some("p4de_allreduce.txt")).unwrap();
        assert_eq!(logs[0].ranks, Some(32));
    }
}

mod osu {
    use super::*;

    #[test]
    fn osu_bw_host_buffers_with_validation() {
        let logs = parse("osu", "cscs_alps_osu_bw_cpu_internode_slingshot.txt");
        let log = &logs[0];
        assert_eq!(log.op, "bw");
        assert_eq!(log.ranks, Some(2));
        assert!(
            log.header
                .contains(&"# OSU MPI Bandwidth Test v7.5".to_string())
        );
        assert_eq!(log.rows.len(), 23);
        // time = size / bandwidth, OSU's MB being 10^6 B.
        check_row(&log.rows[0], 6, 1, 1.0 / 0.95, None, Some(0.95e-3), None);
        check_row(
            &log.rows[22],
            28,
            4_194_304,
            4_194_304.0 / 23982.18,
            None,
            Some(23.98218),
            None,
        );
    }

    #[test]
    fn osu_bw_cuda_device_buffers() {
        let logs = parse("osu", "eessi_pr716_osu_bw_cuda_2xA100_NV4_intranode.txt");
        let log = &logs[0];
        assert_eq!(log.op, "bw");
        assert_eq!(log.ranks, Some(2));
        assert!(
            log.header
                .iter()
                .any(|h| h.contains("Receive Buffer on DEVICE (D)"))
        );
        assert!(
            log.header
                .iter()
                .any(|h| h.ends_with("osu_bw -d cuda -m 33554432 D D"))
        );
        assert_eq!(log.rows.len(), 26);
        check_row(&log.rows[0], 7, 1, 1.0 / 1.01, None, Some(1.01e-3), None);
        check_row(
            &log.rows[25],
            32,
            33_554_432,
            33_554_432.0 / 93130.52,
            None,
            Some(93.13052),
            None,
        );
    }

    #[test]
    fn osu_latency_from_size_zero() {
        let logs = parse("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        let log = &logs[0];
        assert_eq!(log.op, "latency");
        assert_eq!(log.ranks, Some(2));
        assert_eq!(log.rows.len(), 24);
        check_row(&log.rows[0], 7, 0, 1.84, None, None, None);
        check_row(&log.rows[23], 30, 4_194_304, 497.37, None, None, None);
    }

    #[test]
    fn osu_alltoall_with_validation_column() {
        let logs = parse(
            "osu",
            "cscs_alps_osu_alltoall_cpu_2node_8ranks_validation.txt",
        );
        let log = &logs[0];
        assert_eq!(log.op, "alltoall");
        assert_eq!(log.ranks, None);
        assert_eq!(log.rows.len(), 21);
        check_row(&log.rows[0], 6, 1, 12.46, None, None, None);
        check_row(&log.rows[20], 26, 1_048_576, 519.85, None, None, None);
    }

    #[test]
    fn osu_allreduce_full_columns_after_a_blank_first_line() {
        let logs = parse("osu", "nwtnni_collective_osu_allreduce_ring_8node_full.txt");
        let log = &logs[0];
        assert_eq!(log.op, "allreduce");
        assert_eq!(log.ranks, None);
        assert_eq!(log.rows.len(), 19);
        // Avg Latency, not Min (78.46) or Max (95.03).
        check_row(&log.rows[0], 5, 4, 85.16, None, None, None);
        check_row(&log.rows[18], 23, 1_048_576, 5700.06, None, None, None);
    }

    #[test]
    fn osu_allgather() {
        let logs = parse("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let log = &logs[0];
        assert_eq!(log.op, "allgather");
        assert_eq!(log.rows.len(), 21);
        check_row(&log.rows[0], 5, 1, 10.18, None, None, None);
        check_row(&log.rows[20], 25, 1_048_576, 1111.72, None, None, None);
    }

    #[test]
    fn open_mpi_tag_output_on_an_osu_log() {
        // The libfabric osu_latency fixture as `mpirun --tag-output` prints
        // it (tags added for this test, as in open-mpi/ompi PR #12376).
        let text = read("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        let tagged: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("{l}\n")
                } else {
                    format!("[1,0]<stdout>: {l}\n")
                }
            })
            .collect();
        assert_eq!(parse_osu(&tagged).unwrap(), parse_osu(&text).unwrap());
    }

    #[test]
    fn command_line_or_file_name_when_the_title_is_missing() {
        // The olcf allgather fixture without its title line.
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let untitled: String = text
            .lines()
            .filter(|l| !l.starts_with("# OSU"))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = parse_osu(&untitled).unwrap_err();
        assert!(
            matches!(err, ParseError::UnknownOp { line: 3, .. }),
            "{err}"
        );
        let by_name = parse_osu_named(&untitled, Some("riker_osu_allgather.txt")).unwrap();
        assert_eq!(by_name.op, "allgather");
        let with_command = format!("$ srun -N4 -n16 ./osu_allgather\n{untitled}");
        assert_eq!(parse_osu(&with_command).unwrap().op, "allgather");
    }

    #[test]
    fn latency_tests_printing_avg_latency() {
        // osu_latency 7.5 with device buffers prints `Avg Latency(us)`
        // (eth-cscs/cray-network-stack examples/container/osu-ompi/README.md).
        let text = "\
# OSU MPI-CUDA Latency Test v7.5
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       3.95
2                       3.91
";
        let log = parse_osu(text).unwrap();
        assert_eq!(log.op, "latency");
        check_row(&log.rows[1], 5, 2, 3.91, None, None, None);
    }

    #[test]
    fn noise_before_the_title_is_skipped() {
        // Loader warnings as printed before osu_alltoall in an earlier version
        // of eth-cscs/cscs-docs docs/software/communication/openmpi.md.
        let text = read(
            "osu",
            "cscs_alps_osu_alltoall_cpu_2node_8ranks_validation.txt",
        );
        let warning = "/usr/local/libexec/osu-micro-benchmarks/mpi/./collective/osu_alltoall: /usr/lib/aarch64-linux-gnu/libnl-3.so.200: no version information available (required by /usr/lib64/libcxi.so.1)";
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(2, warning);
        lines.insert(2, warning);
        let log = parse_osu(&lines.join("\n")).unwrap();
        assert_eq!(log.op, "alltoall");
        assert_eq!(log.rows.len(), 21);
        assert_eq!(log.rows[0].line, 8);
    }

    #[test]
    fn trailing_lines_after_the_table_are_ignored() {
        // `time` output after the table, as in the flux-framework OSU runs.
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let timed = format!("{text}\nreal    0m9.502s\nuser    0m0.077s\n");
        assert_eq!(parse_osu(&timed).unwrap().rows.len(), 21);
    }
}

mod errors {
    use super::*;

    /// The first `n` lines of a fixture.
    fn head(dir: &str, name: &str, n: usize) -> String {
        read(dir, name)
            .lines()
            .take(n)
            .map(|l| format!("{l}\n"))
            .collect()
    }

    #[test]
    fn an_empty_file() {
        for text in ["", "\n\n   \n"] {
            let err = parse_text(text, None).unwrap_err();
            assert!(matches!(err, ParseError::Empty { line: 1, .. }), "{err}");
            assert!(matches!(
                parse_nccl_tests(text),
                Err(ParseError::Empty { .. })
            ));
            assert!(matches!(parse_osu(text), Err(ParseError::Empty { .. })));
        }
    }

    #[test]
    fn text_from_no_known_tool() {
        let err = parse_text("hello\nworld\n", None).unwrap_err();
        assert!(
            matches!(err, ParseError::UnknownTool { line: 2, .. }),
            "{err}"
        );
        assert_eq!(err.text(), "world");
    }

    #[test]
    fn only_header_lines_no_column_titles() {
        let text = head(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
            9,
        );
        let err = parse_nccl_tests(&text).unwrap_err();
        assert!(matches!(err, ParseError::NoTable { line: 9, .. }), "{err}");
        let text = head("osu", "cscs_alps_osu_bw_cpu_internode_slingshot.txt", 4);
        let err = parse_osu(&text).unwrap_err();
        assert!(matches!(err, ParseError::NoTable { line: 4, .. }), "{err}");
    }

    #[test]
    fn column_titles_but_no_rows() {
        let text = head(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
            12,
        );
        let err = parse_nccl_tests(&text).unwrap_err();
        assert!(matches!(err, ParseError::NoRows { line: 11, .. }), "{err}");
        assert!(err.text().starts_with("#       size"), "{err}");
        let text = head("osu", "cscs_alps_osu_bw_cpu_internode_slingshot.txt", 5);
        let err = parse_osu(&text).unwrap_err();
        assert!(matches!(err, ParseError::NoRows { line: 5, .. }), "{err}");
    }

    #[test]
    fn a_row_cut_short() {
        // The last row of aws_batch cut after its out-of-place time.
        let text = read("nccl-tests", "aws_batch_1x_p5_8xH100_nvlink_allreduce.txt");
        let cut = &text[..text.find("62239").unwrap() + "62239".len()];
        let err = parse_nccl_tests_named(cut, Some("x_allreduce.txt")).unwrap_err();
        match &err {
            ParseError::MissingColumn {
                line,
                column,
                expected,
                found,
                ..
            } => {
                assert_eq!(
                    (*line, column.as_str(), *expected, *found),
                    (36, "algbw", 13, 6)
                );
            }
            other => panic!("{other}"),
        }
        assert!(
            err.text().starts_with("[1,0]<stdout>: 17179869184"),
            "{err}"
        );

        // An OSU row with its latency missing.
        let text = read("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        let cut = text.replace("4194304               497.37", "4194304");
        let err = parse_osu(&cut).unwrap_err();
        assert!(
            matches!(&err, ParseError::MissingColumn { line: 30, column, .. } if column == "Latency (us)"),
            "{err}"
        );
    }

    #[test]
    fn a_row_with_an_extra_field() {
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let bad = text.replace(
            "4096                   31.29",
            "4096                   31.29  7",
        );
        let err = parse_osu(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                ParseError::ExtraColumn {
                    line: 17,
                    expected: 2,
                    found: 3,
                    ..
                }
            ),
            "{err}"
        );
        let text = read(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
        );
        let bad = text.replace("24.20       0", "24.20       0   0");
        let err = parse_nccl_tests(&bad).unwrap_err();
        assert!(
            matches!(err, ParseError::ExtraColumn { line: 18, .. }),
            "{err}"
        );
    }

    #[test]
    fn a_field_that_is_not_a_number() {
        let text = read("nccl-tests", "aws_2x_p4de_16xA100_efa_allreduce.txt");
        let bad = text.replacen("164.3", "164.x", 1);
        let err = parse_nccl_tests_named(&bad, Some("p4de_allreduce.txt")).unwrap_err();
        assert!(
            matches!(&err, ParseError::BadValue { line: 4, column, value, .. } if column == "time" && value == "164.x"),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("line 4: column `time` holds `164.x`"),
            "{err}"
        );

        let bad = text.replacen("      0    163.3", "    two    163.3", 1);
        let err = parse_nccl_tests_named(&bad, Some("p4de_allreduce.txt")).unwrap_err();
        assert!(
            matches!(&err, ParseError::BadValue { line: 4, column, .. } if column == "#wrong"),
            "{err}"
        );

        let text = read("osu", "cscs_alps_osu_bw_cpu_internode_slingshot.txt");
        let bad = text.replace("0.95              Pass", "0.95              Maybe");
        let err = parse_osu(&bad).unwrap_err();
        assert!(
            matches!(&err, ParseError::BadValue { line: 6, column, .. } if column == "Validation"),
            "{err}"
        );
        let bad = text.replace("1.90", "nan");
        let err = parse_osu(&bad).unwrap_err();
        assert!(
            matches!(&err, ParseError::BadValue { line: 7, .. }),
            "{err}"
        );
        let bad = text.replace("1.90", "0.00");
        let err = parse_osu(&bad).unwrap_err();
        assert!(
            matches!(&err, ParseError::BadValue { line: 7, expected, .. } if expected.contains("positive")),
            "{err}"
        );
    }

    #[test]
    fn sizes_out_of_order() {
        // Two rows swapped.
        let text = read("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.swap(29, 30);
        let err = parse_nccl_tests_named(&lines.join("\n"), Some("gcp_allreduce.txt")).unwrap_err();
        assert!(
            matches!(
                err,
                ParseError::SizeOrder {
                    line: 31,
                    size: 256,
                    previous: 512,
                    ..
                }
            ),
            "{err}"
        );

        let text = read("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.swap(9, 10);
        let err = parse_osu(&lines.join("\n")).unwrap_err();
        assert!(
            matches!(
                err,
                ParseError::SizeOrder {
                    line: 11,
                    size: 4,
                    previous: 8,
                    ..
                }
            ),
            "{err}"
        );
        // OSU never repeats a size.
        let mut lines: Vec<&str> = text.lines().collect();
        lines[10] = lines[9];
        let err = parse_osu(&lines.join("\n")).unwrap_err();
        assert!(
            matches!(
                err,
                ParseError::SizeOrder {
                    line: 11,
                    size: 4,
                    previous: 4,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_failure_inside_an_nccl_tests_table() {
        // The failure line of NVIDIA/nccl-tests issue #280, in the middle of a
        // table.
        let text = read("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(
            30,
            "c2211f46f318: Test NCCL failure common.cu:1005 'unhandled CUDA error'",
        );
        let err = parse_nccl_tests_named(&lines.join("\n"), Some("gcp_allreduce.txt")).unwrap_err();
        assert!(
            matches!(err, ParseError::Interrupted { line: 31, .. }),
            "{err}"
        );
        assert!(err.text().contains("Test NCCL failure"), "{err}");
    }

    /// What Slurm, Open MPI and the kernel print when a run dies, inside a
    /// table: an error at its line, as the docs list them.
    #[test]
    fn a_killed_or_cancelled_run_inside_a_table() {
        let text = read("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        for failure in [
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=123.0. Some of your processes may have been killed by the cgroup out-of-memory handler.",
            "[node1:1234] *** Process received signal ***",
            "slurmstepd: error: *** STEP 123.0 ON node1 CANCELLED AT 2026-11-29T10:00:00 DUE TO TIME LIMIT ***",
        ] {
            let mut lines: Vec<&str> = text.lines().collect();
            lines.insert(30, failure);
            let err =
                parse_nccl_tests_named(&lines.join("\n"), Some("gcp_allreduce.txt")).unwrap_err();
            assert!(
                matches!(err, ParseError::Interrupted { line: 31, .. }),
                "{failure}: {err}"
            );
        }
    }

    /// A benchmark that says its results were wrong is refused at the line
    /// that says so: nccl-tests' `#wrong` count, its footer's out-of-bounds
    /// count, an OSU row that failed validation.
    #[test]
    fn wrong_results_are_refused() {
        let text = read("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        let wrong = text.replacen(
            "    123.0    0.00    0.00      0    122.7    0.00    0.00      0",
            "    123.0    0.00    0.00     17    122.7    0.00    0.00      0",
            1,
        );
        assert_ne!(wrong, text);
        let err = parse_nccl_tests_named(&wrong, Some("gcp_allreduce.txt")).unwrap_err();
        assert!(
            matches!(err, ParseError::WrongResults { line: 29, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("17 wrong elements"), "{err}");
        let footer = text.replace(
            "# Out of bounds values : 0 OK",
            "# Out of bounds values : 3 FAILED",
        );
        assert_ne!(footer, text);
        let err = parse_nccl_tests_named(&footer, Some("gcp_allreduce.txt")).unwrap_err();
        assert!(matches!(err, ParseError::WrongResults { .. }), "{err}");
        assert!(err.to_string().contains("3 values out of bounds"), "{err}");
        let osu = read(
            "osu",
            "cscs_alps_osu_alltoall_cpu_2node_8ranks_validation.txt",
        );
        let failed = osu.replacen(
            "65536                  36.53              Pass",
            "65536                  36.53              Fail",
            1,
        );
        assert_ne!(failed, osu);
        let err = parse_osu(&failed).unwrap_err();
        assert!(
            matches!(err, ParseError::WrongResults { line: 22, .. }),
            "{err}"
        );
    }

    /// A time or a size that a profile could not hold is refused at its
    /// row, not written into a profile that dtsim then refuses to read.
    #[test]
    fn times_and_sizes_a_profile_cannot_hold() {
        let text = read("nccl-tests", "gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
        let huge = text.replacen(
            "    123.0    0.00    0.00      0    122.7",
            "    1e300    0.00    0.00      0    122.7",
            1,
        );
        assert_ne!(huge, text);
        let err = parse_nccl_tests_named(&huge, Some("gcp_allreduce.txt")).unwrap_err();
        assert!(
            matches!(err, ParseError::BadValue { line: 29, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("at most 1e6 s"), "{err}");
        let osu = read(
            "osu",
            "cscs_alps_osu_alltoall_cpu_2node_8ranks_validation.txt",
        );
        let big = osu.replacen(
            "1048576               519.85",
            "2251799813685248      519.85",
            1,
        );
        assert_ne!(big, osu);
        let err = parse_osu(&big).unwrap_err();
        assert!(matches!(err, ParseError::BadValue { .. }), "{err}");
        assert!(err.to_string().contains("at most 2^50 bytes"), "{err}");
    }

    #[test]
    fn a_crash_after_an_osu_table() {
        // The crash report of open-mpi/ompi issue #9761, after osu_alltoall.
        let text = read(
            "osu",
            "cscs_alps_osu_alltoall_cpu_2node_8ranks_validation.txt",
        );
        let crashed = format!(
            "{text}[b3170:50816:0:50816] Caught signal 7 (Bus error: nonexistent physical address)\n"
        );
        let err = parse_osu(&crashed).unwrap_err();
        assert!(
            matches!(err, ParseError::Interrupted { line: 27, .. }),
            "{err}"
        );
    }

    #[test]
    fn rows_outside_a_table() {
        // Rows with their column titles lost.
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let headless = text.replace("# Size       Avg Latency(us)\n", "");
        let err = parse_osu(&headless).unwrap_err();
        assert!(matches!(err, ParseError::StrayRow { line: 4, .. }), "{err}");

        let text = read(
            "nccl-tests",
            "dgx_spark_2node_2xGB10_roce200g_allgather.txt",
        );
        let headless: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("#       size"))
            .collect();
        let err = parse_nccl_tests(&headless.join("\n")).unwrap_err();
        assert!(
            matches!(err, ParseError::StrayRow { line: 12, place, .. } if place.starts_with("before")),
            "{err}"
        );

        // A row after the footer.
        let late = format!(
            "{text}   536870912      67108864     float    none      -1  14594.4   36.79   18.39       0  13778.0   38.97   19.48       0\n"
        );
        let err = parse_nccl_tests(&late).unwrap_err();
        assert!(
            matches!(err, ParseError::StrayRow { line: 23, place, .. } if place.starts_with("after")),
            "{err}"
        );

        // An OSU row after a line that is not the benchmark's: the line is
        // noise (skipped and counted), the row the table's.
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let late = format!("{text}real 0m1s\n2097152              2222.22\n");
        let log = parse_osu(&late).unwrap();
        assert_eq!(log.rows.last().unwrap().line, 27);
        assert_eq!(
            log.skipped,
            [calibration::logs::Skipped {
                line: 26,
                text: "real 0m1s".into()
            }]
        );
    }

    #[test]
    fn unsupported_benchmarks() {
        // reduce_perf from the AutoDL post of the autodl_* fixtures.
        let text = "\
root@autodl-container-xxxxx:~/nccl-tests# ./build/reduce_perf -b 8 -e 1024M -f 2 -g2
# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum       0    10.39    0.00    0.00      0     9.88    0.00    0.00      0
";
        let err = parse_nccl_tests(text).unwrap_err();
        assert!(
            matches!(&err, ParseError::UnsupportedTest { line: 1, test, .. } if test == "reduce_perf"),
            "{err}"
        );

        // osu_bibw as printed in the Wi4MPI documentation (cea-hpc/wi4mpi).
        let text = "\
# OSU MPI Bi-Directional Bandwidth Test v5.6.2
# Size      Bandwidth (MB/s)
1                       2.10
2                       5.52
";
        let err = parse_osu(text).unwrap_err();
        assert!(
            matches!(err, ParseError::UnsupportedTest { line: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn two_osu_tests_in_one_file() {
        let a = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let b = read("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        let err = parse_osu(&format!("{a}{b}")).unwrap_err();
        assert!(
            matches!(err, ParseError::MultipleTests { line: 30, .. }),
            "{err}"
        );
    }

    #[test]
    fn osu_column_titles_without_the_metric() {
        // osu_mbw_mr's column titles (a supported title above them).
        let text = "\
# OSU MPI Latency Test v5.6.2
# Size                  MB/s        Messages/s
1                       7.79        7790845.03
";
        let err = parse_osu(text).unwrap_err();
        assert!(
            matches!(err, ParseError::BadColumns { line: 2, .. }),
            "{err}"
        );
        // A bandwidth table under a latency title.
        let text = "\
# OSU MPI Latency Test v5.6.2
# Size      Bandwidth (MB/s)
1                       7.59
";
        let err = parse_osu(text).unwrap_err();
        assert!(
            matches!(err, ParseError::BadColumns { line: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn truncating_a_log_anywhere_never_panics() {
        // A log cut at any line (all fixtures) or any character (one of each
        // tool): rows before the cut parse, or the error names a line of the
        // text.
        for dir in ["nccl-tests", "osu"] {
            for path in fixtures(dir) {
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.file_name().and_then(|n| n.to_str());
                let ends = text.match_indices('\n').map(|(i, _)| i);
                for end in ends {
                    check_cut(&text[..end], name);
                }
            }
        }
        for (dir, name) in [
            (
                "nccl-tests",
                "nccl_tests_issue78_8node_64xV100_ib_old_layout_alltoall.txt",
            ),
            ("osu", "nwtnni_collective_osu_allreduce_ring_8node_full.txt"),
        ] {
            let text = read(dir, name);
            for end in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
                check_cut(&text[..end], Some(name));
            }
        }
    }

    /// Parses a cut log: any error names a line of it.
    fn check_cut(text: &str, name: Option<&str>) {
        match parse_text(text, name) {
            Ok(logs) => assert!(logs.iter().all(|l| !l.rows.is_empty())),
            Err(e) => assert!((1..=text.lines().count().max(1)).contains(&e.line()), "{e}"),
        }
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        let text = read("osu", "olcf_riker_osu_allgather_4node_16ranks.txt");
        let bom = format!("\u{feff}{text}");
        assert_eq!(parse_osu(&bom).unwrap(), parse_osu(&text).unwrap());
    }

    #[test]
    fn file_errors_name_the_path() {
        let missing = fixture("osu", "no_such_log.txt");
        let err = parse_file(&missing).unwrap_err();
        assert!(matches!(err, LogFileError::Io { .. }), "{err}");
        assert_eq!(err.path(), missing);

        let garbled = Path::new(env!("CARGO_TARGET_TMPDIR")).join("garbled_osu_latency.txt");
        let text = read("osu", "libfabric_cray_pr859_osu_latency_2node_aries.txt");
        std::fs::write(&garbled, text.replace("117.07", "117,07")).unwrap();
        let err = parse_file(&garbled).unwrap_err();
        match &err {
            LogFileError::Parse { source, .. } => assert_eq!(source.line(), 28),
            other => panic!("{other}"),
        }
        assert!(
            err.to_string()
                .contains("garbled_osu_latency.txt: line 28:"),
            "{err}"
        );
    }
}

/// An error quotes the offending line without its control characters (a
/// binary file's escape sequences would reach the terminal) and cut to
/// 240 characters.
#[test]
fn quoted_lines_are_printable_and_short() {
    let garbage = format!("\u{1b}[2J\u{7}binary\u{0}junk{}\n", "x".repeat(1000));
    let e = calibration::logs::parse_text(&garbage, None).unwrap_err();
    let msg = e.to_string();
    assert!(!msg.chars().any(|c| c.is_control()), "{msg:?}");
    assert!(e.text().starts_with('\u{FFFD}'), "{:?}", e.text());
    assert_eq!(
        e.text().chars().count(),
        241,
        "240 characters and the ellipsis"
    );
}

/// Logs as users have them (issue 13): headers cut, launcher, Slurm, Open
/// MPI and NCCL lines interleaved anywhere, every line prefixed; the rows
/// parse the same, the noise is counted, and the rank count, when the
/// header does not give it, comes from the bandwidth columns.
mod as_users_have_them {
    use super::*;

    /// Every nccl-tests fixture with its true rank count (from its source
    /// line) and the ops it holds.
    const TRUE_RANKS: &[(&str, u32)] = &[
        ("autodl_1x2_2080ti_pcie_allgather_broadcast.txt", 2),
        ("autodl_1x2_2080ti_pcie_alltoall.txt", 2),
        ("aws_2x_p4de_16xA100_efa_allreduce.txt", 16),
        ("aws_batch_1x_p5_8xH100_nvlink_allreduce.txt", 8),
        ("dgx_spark_2node_2xGB10_roce200g_allgather.txt", 2),
        ("gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt", 16),
        (
            "llv22_nccl_osx_1x2_gtx1080_old_layout_allgather_broadcast.txt",
            2,
        ),
        (
            "llv22_nccl_osx_1x2_gtx1080_old_layout_reduce_scatter.txt",
            2,
        ),
        (
            "nccl_tests_issue78_8node_64xV100_ib_old_layout_alltoall.txt",
            64,
        ),
    ];

    /// Lines real runs interleave with the benchmark's: Open MPI's help
    /// aggregation, Slurm, NCCL debug output, a shell's timing.
    const NOISE: &[&str] = &[
        "[gpu-node-07:41237] 15 more processes have sent help message help-mpi-btl-openib.txt / no active ports found",
        "[gpu-node-07:41237] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages",
        "srun: Warning: can't honor --ntasks-per-node set to 8 which doesn't match the requested tasks 16",
        "gpu-node-07:41250:41250 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7",
        "gpu-node-07:41250:41301 [0] NCCL WARN NET/IB : Got async event : port error",
        "slurmstepd: info: Setting TMPDIR to /scratch/job.12345",
    ];

    fn parse_as(text: &str, name: &str) -> Result<Vec<Log>, ParseError> {
        parse_nccl_tests_named(text, Some(name))
    }

    /// (size, time) of every row of every log.
    fn rows(logs: &[Log]) -> Vec<Vec<(u64, f64)>> {
        logs.iter()
            .map(|l| l.rows.iter().map(|r| (r.size_bytes, r.time_s)).collect())
            .collect()
    }

    /// The rank count: from the header where it has `# Rank` lines, else
    /// inferred, on every fixture; and, with the header's rank lines cut,
    /// inferred equal to it (broadcast's busbw equals its algbw at every
    /// rank count and tells nothing).
    #[test]
    fn the_rank_count_is_the_true_one_with_or_without_the_header() {
        for &(name, ranks) in TRUE_RANKS {
            let text = read("nccl-tests", name);
            let logs = parse_as(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            for log in &logs {
                assert_eq!(log.ranks, Some(ranks), "{name} {}", log.op);
            }
            let cut: String = text
                .lines()
                .filter(|l| {
                    !l.split_once('#')
                        .is_some_and(|(_, r)| r.trim_start().starts_with("Rank "))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let logs = parse_as(&cut, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            for log in &logs {
                if log.op == "broadcast" {
                    assert_eq!(log.ranks, None, "{name}: broadcast tells nothing");
                    continue;
                }
                assert_eq!(log.ranks, Some(ranks), "{name} {}: cut header", log.op);
                let how = log.ranks_inferred.as_deref();
                assert!(
                    how.is_some_and(|h| h.contains("inferred")),
                    "{name} {}: {how:?}",
                    log.op
                );
            }
        }
    }

    /// Noise inserted before the header, between the header and the rows,
    /// and between every two rows, with every line prefixed as srun
    /// `--label` prints it: the same rows, and every inserted line counted
    /// as skipped.
    #[test]
    fn noise_anywhere_is_skipped_and_counted() {
        for &(name, _) in TRUE_RANKS {
            let text = read("nccl-tests", name);
            let clean = parse_as(&text, name).unwrap();
            let mut noisy = String::new();
            let mut inserted = 0usize;
            // a fixture whose lines carry a launcher tag already keeps them
            let tagged = text.lines().skip(1).any(|l| {
                l.starts_with('[')
                    || l.split_once(':')
                        .is_some_and(|(a, _)| a.trim().parse::<u32>().is_ok())
            });
            let tag = if tagged { "" } else { "0: " };
            for (i, l) in text.lines().enumerate() {
                // not before the first line: our `# source:` note stays first
                if i > 0 {
                    let n = NOISE[i % NOISE.len()];
                    noisy.push_str(&format!("{tag}{n}\n"));
                    inserted += 1;
                }
                noisy.push_str(&format!("{tag}{l}\n"));
            }
            let logs = parse_as(&noisy, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(rows(&logs), rows(&clean), "{name}");
            let skipped: usize = logs.iter().map(|l| l.skipped.len()).sum();
            let before: usize = clean.iter().map(|l| l.skipped.len()).sum();
            assert_eq!(skipped, before + inserted, "{name}");
            for log in &logs {
                assert_eq!(
                    log.ranks,
                    clean[0]
                        .ranks
                        .filter(|_| log.op != "broadcast" || log.ranks.is_some()),
                    "{name}"
                );
            }
        }
    }

    /// Rows whose busbw/algbw tell different rank counts are refused,
    /// naming both lines.
    #[test]
    fn rows_that_disagree_on_the_ranks_are_refused() {
        let name = "aws_2x_p4de_16xA100_efa_allreduce.txt";
        let text = read("nccl-tests", name);
        // the last row says 41.78 algbw, 78.33 busbw (16 ranks); make it 8
        // ranks' 73.12
        let bad = text.replace("41.78   78.33", "41.78   73.12");
        assert_ne!(bad, text);
        let err = parse_as(&bad, name).unwrap_err();
        match &err {
            ParseError::RanksDisagree {
                ranks, other_ranks, ..
            } => assert_eq!((*ranks, *other_ranks), (8, 16), "{err}"),
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("--ranks"), "{err}");
    }
}
