//! `import` of other tools' outputs (mbw, Bonnie++, nbench, hyperfine,
//! fio, sysbench, YABS), through the real binary: the captured fixtures, and
//! fresh runs of the real programs compared with this machine's sysgauge
//! run of the same workload or with the captured output.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};
use sysgauge_compare::Comparison;

/// A captured output of another tool: `tool/name` under the bench crate's
/// fixtures.
fn tool_fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-bench/tests/fixtures")
        .join(path)
}

/// Program `name`, or None when it is not installed: the test is skipped
/// (failing under `SYSGAUGE_REQUIRE_ALL=1`, with Debian's `package` named).
fn installed(name: &str, package: &str) -> Option<PathBuf> {
    sysgauge_testkit::require_some(
        &format!("{name} is not installed"),
        sysgauge_core::bench::find_program(name),
        &format!("apt-get install {package}"),
    )
}

/// `results show` of the database's first run.
fn first_run_shown(sb: &Sandbox) -> String {
    let out = sb
        .cmd()
        .args(["results", "show", "--db"])
        .arg(sb.db())
        .arg("1")
        .succeeds();
    stdout_of(&out)
}

fn every_cell_has_a_ratio(row: &sysgauge_compare::CaseRow) -> bool {
    row.cells
        .iter()
        .all(|x| x.as_ref().and_then(|c| c.ratio).is_some())
}

/// The row of `id` and `metric`, which every machine has with a ratio.
fn row_with_ratios<'a>(c: &'a Comparison, id: &str, metric: &str) -> &'a sysgauge_compare::CaseRow {
    let row = c
        .rows
        .iter()
        .find(|r| r.bench_id == id && r.metric == metric)
        .unwrap_or_else(|| panic!("no {id} {metric} row: {c:?}"));
    assert!(every_cell_has_a_ratio(row), "{row:?}");
    row
}

/// `import FILE…` into the sandbox's database, format told from the
/// content.
fn import(sb: &Sandbox, files: &[&Path]) -> std::process::Output {
    sb.cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .args(files)
        .succeeds()
}

/// Run a real program, which must succeed; its standard output saved as
/// `name` in the sandbox, for import.
fn real_output(sb: &Sandbox, mut program: std::process::Command, name: &str) -> PathBuf {
    let out = program.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = sb.dir.path().join(name);
    std::fs::write(&file, &out.stdout).unwrap();
    file
}

fn compare_json(sb: &Sandbox, reference: &str) -> Comparison {
    crate::compare::comparison(sb, &["--reference", reference])
}

#[test]
fn captured_mbw_output_imports_under_its_own_names() {
    let sb = Sandbox::new();
    import(&sb, &[&tool_fixture("mbw/1.2.2-n3-16MiB.txt")]);
    let text = first_run_shown(&sb);
    for id in ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(text.contains("host 1.2.2-n3-16MiB"), "{text}");
    // A second import of the same file is recognised, not duplicated.
    let again = import(&sb, &[&tool_fixture("mbw/1.2.2-n3-16MiB.txt")]);
    let said = format!("{}{}", stdout_of(&again), stderr_of(&again));
    assert!(said.contains("0 new run(s), 1 already present"), "{said}");
}

/// The acceptance test's case: one mbw output, imported whole and as its
/// `AVG` lines alone (as write-ups keep it), compares as 1.000.
#[test]
fn an_mbw_output_compares_with_its_avg_lines_as_equal() {
    let sb = Sandbox::new();
    let full = tool_fixture("mbw/1.2.2-n3-16MiB.txt");
    let avg: String = std::fs::read_to_string(&full)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("AVG"))
        .map(|l| format!("{l}\n"))
        .collect();
    let avg_file = sb.dir.path().join("mbw-avg.txt");
    std::fs::write(&avg_file, avg).unwrap();
    import(&sb, &[&full]);
    import(&sb, &[&avg_file]);
    let c = compare_json(&sb, "1.2.2-n3-16MiB");
    // MCBLOCK too: its block size is in the preamble only, and the AVG
    // lines' is mbw's default, the same 262144 bytes.
    for id in ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"] {
        let row = row_with_ratios(&c, id, "copy");
        for cell in row.cells.iter().flatten() {
            let ratio = cell.ratio.unwrap();
            assert!((ratio - 1.0).abs() < 1e-9, "{id}: {ratio}");
        }
    }
}

/// `mbw -q` prints no preamble, so no block size: its MCBLOCK never met
/// the same machine's `mbw` MCBLOCK. Both are mbw's default block now.
#[test]
fn real_quiet_and_full_mbw_outputs_compare_on_every_test() {
    let Some(mbw) = installed("mbw", "mbw") else {
        return;
    };
    let sb = Sandbox::new();
    for (name, quiet) in [("mbw-full.txt", false), ("mbw-q.txt", true)] {
        let mut program = std::process::Command::new(&mbw);
        if quiet {
            program.arg("-q");
        }
        program.args(["-n", "3", "8"]);
        let file = real_output(&sb, program, name);
        import(&sb, &[&file]);
    }
    let c = compare_json(&sb, "mbw-full");
    for id in ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"] {
        row_with_ratios(&c, id, "copy");
    }
    assert!(c.missing.is_empty(), "{:?}", c.missing);
}

/// The acceptance test's cuts: `head -n 9` of `mbw -n 3 16` (DUMB after
/// 2 of its 3 runs, no MCBLOCK) imported as 2 results without a word, and
/// a Bonnie++ CSV line cut inside its latencies lost every latency. Both
/// are refused with the file, the line and the cause.
#[test]
fn cut_mbw_and_bonnie_csv_outputs_are_refused_at_the_cut() {
    let sb = Sandbox::new();
    let mbw = std::fs::read_to_string(tool_fixture("mbw/1.2.2-n3-16MiB.txt")).unwrap();
    let head: String = mbw.lines().take(9).map(|l| format!("{l}\n")).collect();
    let said = refused(&sb, &written(&sb, "mbw_cut.txt", &head));
    assert!(
        said.contains("mbw_cut.txt:line 9: the DUMB test at 16 MiB has 2 of its 3 runs")
            && said.contains("cut short"),
        "{said}"
    );
    let bonnie = std::fs::read_to_string(tool_fixture("bonnie/2.00a-256M-n2.txt")).unwrap();
    let csv_line = bonnie
        .lines()
        .filter(|l| l.matches(',').count() >= 20)
        .count();
    assert_eq!(csv_line, 1);
    let line = bonnie
        .lines()
        .position(|l| l.matches(',').count() >= 20)
        .unwrap()
        + 1;
    let cut = &bonnie.trim_end()[..bonnie.trim_end().len() - 60];
    let said = refused(&sb, &written(&sb, "bonnie_cut.txt", cut));
    assert!(
        said.contains(&format!("bonnie_cut.txt:line {line}: "))
            && said.contains("fields, expected 38 or 50"),
        "{said}"
    );
}

/// `-1088` K/sec is a number, a negative one: said so.
#[test]
fn a_negative_bonnie_cell_is_called_negative() {
    let sb = Sandbox::new();
    let bonnie = std::fs::read_to_string(tool_fixture("bonnie/2.00a-256M-n2.txt")).unwrap();
    let csv = bonnie
        .lines()
        .find(|l| l.matches(',').count() >= 20)
        .unwrap();
    let field = csv.split(',').nth(9).unwrap();
    let bad = csv.replacen(&format!(",{field},"), &format!(",-{field},"), 1);
    let said = refused(&sb, &written(&sb, "neg.txt", &format!("{bad}\n")));
    assert!(
        said.contains(&format!("neg.txt:line 1: '-{field}' is negative")),
        "{said}"
    );
}

#[test]
fn a_bad_mbw_line_is_refused_with_its_line() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("broken.txt");
    std::fs::write(
        &file,
        "Long uses 8 bytes. Allocating 2*1048576 elements = 16777216 bytes of memory.\n\
         AVG\tMethod: MEMCPY\tElapsed: 0.1\tMiB: 8.0\tCopy: fast MiB/s\n",
    )
    .unwrap();
    let said = refused(&sb, &file);
    assert!(said.contains("broken.txt:line 2:"), "{said}");
}

#[test]
fn real_mbw_runs_compare_with_each_other() {
    let Some(mbw) = installed("mbw", "mbw") else {
        return;
    };
    let sb = Sandbox::new();
    for name in ["mbw-a.txt", "mbw-b.txt"] {
        let mut program = std::process::Command::new(&mbw);
        program.args(["-n", "3", "8"]);
        let file = real_output(&sb, program, name);
        import(&sb, &[&file]);
    }
    let c = compare_json(&sb, "mbw-a");
    for id in ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"] {
        let row = row_with_ratios(&c, id, "copy");
        assert_eq!(row.params.get_u64("size"), Some(8 << 20));
    }
}

#[test]
fn captured_bonnie_output_imports_under_its_own_names() {
    let sb = Sandbox::new();
    let out = import(&sb, &[&tool_fixture("bonnie/2.00a-1G-n4.txt")]);
    // The cases Bonnie++ could not time are named, not stored as zeros.
    assert!(
        stderr_of(&out).contains("bonnie.seq-input-block was too fast"),
        "{}",
        stderr_of(&out)
    );
    let text = first_run_shown(&sb);
    assert!(text.contains("host testhost2"), "{text}");
    for id in [
        "bonnie.seq-output-char",
        "bonnie.seq-output-block",
        "bonnie.seq-create",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
}

#[test]
fn two_real_bonnie_runs_compare() {
    let Some(bonnie) = installed("bonnie++", "bonnie++") else {
        return;
    };
    let sb = Sandbox::new();
    let mut files = Vec::new();
    for host in ["bonnie-a", "bonnie-b"] {
        let dir = sb.scratch().join(host);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = std::process::Command::new(&bonnie);
        cmd.arg("-d")
            .arg(&dir)
            .args(["-s", "128M", "-r", "64", "-n", "1", "-m", host]);
        if sysgauge_testkit::is_root() {
            // Bonnie++ refuses to run as root unless told which user to be.
            cmd.args(["-u", "root"]);
        }
        files.push(real_output(&sb, cmd, &format!("{host}.txt")));
    }
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    import(&sb, &files);
    let c = compare_json(&sb, "bonnie-a");
    let both: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.cells.iter().all(Option::is_some))
        .collect();
    assert!(!both.is_empty(), "no case on both: {c:?}");
    for r in both {
        assert!(r.bench_id.starts_with("bonnie."), "{}", r.bench_id);
        assert!(every_cell_has_a_ratio(r), "{r:?}");
    }
}

#[test]
fn nbench_output_imports_and_compares_machine_against_machine() {
    let file = tool_fixture("nbench/linux-port-x86_64.txt");
    let sb = Sandbox::new();
    for host in ["board-a", "board-b"] {
        import_as(&sb, host, &[&file]);
    }
    let text = first_run_shown(&sb);
    for id in [
        "nbench.numeric-sort",
        "nbench.lu-decomposition",
        "nbench.index-integer",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    let c = compare_json(&sb, "board-a");
    assert_eq!(c.rows.len(), 15, "{c:?}");
    for r in &c.rows {
        assert_eq!(
            r.cells[1].as_ref().and_then(|c| c.ratio),
            Some(1.0),
            "{r:?}"
        );
    }
    // The CPU and kernel named in nbench's Linux data are the machine's.
    let run = exported_run(&sb, "1");
    assert_eq!(
        run.host.cpu.model.as_deref(),
        Some("Dual AuthenticAMD AMD EPYC 2445MHz")
    );
    assert_eq!(
        run.host.os.kernel_release.as_deref(),
        Some("6.18.44-fc-v657")
    );
}

/// The run `results export` gives for run `row`.
fn exported_run(sb: &Sandbox, row: &str) -> sysgauge_core::record::RunRecord {
    let out = sb
        .cmd()
        .args(["results", "export", "--format", "json", "--db"])
        .arg(sb.db())
        .arg(row)
        .succeeds();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The case `id` with `params` (canonical) of `run`.
fn result<'a>(
    run: &'a sysgauge_core::record::RunRecord,
    id: &str,
    params: &str,
) -> &'a sysgauge_core::record::ResultRecord {
    run.results
        .iter()
        .find(|r| r.bench_id == id && r.params.canonical() == params)
        .unwrap_or_else(|| panic!("no {id} {params} in {:?}", run.results))
}

fn samples(r: &sysgauge_core::record::ResultRecord, metric: &str) -> Vec<f64> {
    r.metrics
        .iter()
        .find(|m| m.name == metric)
        .map(|m| m.samples.clone())
        .unwrap_or_else(|| panic!("no {metric} in {r:?}"))
}

/// `import FILE` (format told from the content) into a fresh database;
/// the stored run.
fn import_one(sb: &Sandbox, file: &Path) -> sysgauge_core::record::RunRecord {
    import(sb, &[file]);
    exported_run(sb, "1")
}

/// A captured output (`tool/name`) imported alone into a fresh database;
/// the stored run.
fn imported_fixture(path: &str) -> sysgauge_core::record::RunRecord {
    import_one(&Sandbox::new(), &tool_fixture(path))
}

/// `import FILE` refused: exit 2, nothing stored, the message.
fn refused(sb: &Sandbox, file: &Path) -> String {
    let out = sb
        .cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(file)
        .exits_with(2);
    assert!(!sb.db().exists(), "a refused import left a database");
    stderr_of(&out)
}

#[test]
fn captured_hyperfine_export_imports_with_every_run_as_a_sample() {
    let run = imported_fixture("hyperfine/1.15-scan.json");
    assert_eq!(run.host_name(), "1.15-scan");
    assert_eq!(
        run.tags.get("format").map(String::as_str),
        Some("hyperfine")
    );
    let n2 = result(&run, "hyperfine.sleep-0-0-n", "n=2");
    assert_eq!(
        samples(n2, "wall"),
        [
            0.019762561100000003,
            0.023070731100000002,
            0.024336312100000004
        ]
    );
    assert_eq!(samples(n2, "user"), [0.0019252133333333336]);
    assert_eq!(samples(n2, "system"), [0.0]);
    assert_eq!(n2.metrics[0].unit, sysgauge_core::Unit::Seconds);
    assert_eq!(n2.metrics[0].better, sysgauge_core::Better::Lower);
    assert_eq!(run.results.len(), 3);
}

#[test]
fn a_hyperfine_export_compares_with_another_file() {
    // The same scan with every run twice as long: each ratio is 0.5, with
    // an interval from the three runs.
    let sb = Sandbox::new();
    let text = std::fs::read_to_string(tool_fixture("hyperfine/1.15-scan.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for r in doc["results"].as_array_mut().unwrap() {
        for t in r["times"].as_array_mut().unwrap() {
            *t = serde_json::json!(t.as_f64().unwrap() * 2.0);
        }
    }
    let slower = sb.dir.path().join("slower.json");
    std::fs::write(&slower, doc.to_string()).unwrap();
    let out = sb
        .cmd()
        .arg("compare")
        .arg(tool_fixture("hyperfine/1.15-scan.json"))
        .arg(&slower)
        .args(["--reference", "1.15-scan", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    let walls: Vec<_> = c.rows.iter().filter(|r| r.metric == "wall").collect();
    assert_eq!(walls.len(), 3, "{c:?}");
    for r in walls {
        let ratio = r.cells[1].as_ref().and_then(|x| x.ratio).unwrap();
        assert!((ratio - 0.5).abs() < 1e-9, "{r:?}");
    }
}

#[test]
fn a_real_hyperfine_run_compares_with_the_captured_export() {
    let Some(hyperfine) = installed("hyperfine", "hyperfine") else {
        return;
    };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("hyperfine-here.json");
    let mut program = std::process::Command::new(hyperfine);
    program
        .args(["--runs", "3", "--style", "none", "--export-json"])
        .arg(&file)
        .arg("sleep 0.01");
    real_output(&sb, program, "hyperfine-stdout.txt");
    import(
        &sb,
        &[&file, &tool_fixture("hyperfine/1.15-two-commands.json")],
    );
    let c = compare_json(&sb, "hyperfine-here");
    row_with_ratios(&c, "hyperfine.sleep-0-01", "wall");
}

#[test]
fn captured_fio_output_imports_as_disk_and_fio_cases() {
    let run = imported_fixture("fio/3.33-seq-64k-write-read.json");
    assert_eq!(run.host_name(), "3.33-seq-64k-write-read");
    assert_eq!(
        run.tags.get("fio_version").map(String::as_str),
        Some("fio-3.33")
    );
    let read = result(
        &run,
        "disk.seq-read",
        "block_size=65536,direct=true,size=16777216",
    );
    assert_eq!(samples(read, "throughput"), [372.827022]);
    assert_eq!(samples(read, "iops"), [5688.888889]);
    assert_eq!(samples(read, "latency_median"), [162.816]);
    // 1 MiB blocks from fio's ordinary-page buffer keep fio's names.
    let run = imported_fixture("fio/3.33-seq-write-read-randread.json");
    let rand = result(
        &run,
        "fio.randread",
        "block_size=4096,direct=true,direction=read,iodepth=1,ioengine=psync,numjobs=1,size=16777216",
    );
    assert_eq!(samples(rand, "iops"), [11130.434783]);
    assert_eq!(samples(rand, "latency_p99"), [164864.0]);
    // `results show` renders the imported disk cases in the disk table.
    let sb = Sandbox::new();
    import_one(&sb, &tool_fixture("fio/3.33-seq-64k-write-read.json"));
    let text = first_run_shown(&sb);
    assert!(text.contains("seq-read"), "{text}");
    // One sample has no spread known, in the disk table as in the summary.
    assert!(!text.contains('±'), "{text}");
    let disk_row = text
        .lines()
        .find(|l| l.trim_start().starts_with("seq-read"))
        .unwrap_or_else(|| panic!("no disk table row: {text}"));
    assert!(disk_row.contains("unknown"), "{disk_row}");
}

#[test]
fn fio_client_mode_gives_one_machine_per_server() {
    let sb = Sandbox::new();
    let out = import(&sb, &[&tool_fixture("fio/3.33-two-clients.json")]);
    assert!(
        stderr_of(&out).contains("2 new run(s)"),
        "{}",
        stderr_of(&out)
    );
    let c = compare_json(&sb, "127.0.0.1:8767");
    assert_eq!(
        c.rows.iter().filter(|r| r.bench_id == "fio.read").count(),
        8
    );
    for r in &c.rows {
        assert!(every_cell_has_a_ratio(r), "{r:?}");
    }
    // Both servers read 4 MiB in the same 6 ms.
    let throughput = c.rows.iter().find(|r| r.metric == "throughput").unwrap();
    assert_eq!(
        throughput.cells[1].as_ref().and_then(|x| x.ratio),
        Some(1.0)
    );
    // --host cannot name two machines.
    let sb = Sandbox::new();
    sb.cmd()
        .args(["import", "--host", "one", "--db"])
        .arg(sb.db())
        .arg(tool_fixture("fio/3.33-two-clients.json"))
        .usage_error("2 client hosts");
}

/// A real fio `job` on the directory `fio` under the scratch directory
/// (`target` names the place in fio's terms) and `sysgauge disk --only
/// CASE` of the same size (16 MiB) and block size (64 KiB) there, in one
/// database, fio's output imported as `name`: the comparison with `name`
/// as the reference, and disk's output. None when fio is not installed.
fn fio_against_disk(
    job: &[&str],
    target: impl FnOnce(&Path) -> String,
    name: &str,
    case: &str,
) -> Option<(Comparison, std::process::Output)> {
    let fio = installed("fio", "fio")?;
    let sb = Sandbox::new();
    let dir = sb.scratch().join("fio");
    std::fs::create_dir_all(&dir).unwrap();
    let mut program = std::process::Command::new(fio);
    program
        .arg("--output-format=json")
        .args(job)
        .arg(target(&dir));
    let file = real_output(&sb, program, &format!("{name}.json"));
    let disk = sb
        .cmd()
        .args(["disk", "--profile", "tiny", "--repetitions", "3"])
        .args(["--size", "16MiB", "--block-size", "64KiB", "--only", case])
        .arg("--path")
        .arg(&dir)
        .arg("--db")
        .arg(sb.db())
        .succeeds();
    import(&sb, &[&file]);
    Some((compare_json(&sb, name), disk))
}

/// A real fio job of this family's method (sequential 64 KiB O_DIRECT
/// reads, psync, one job) and `sysgauge disk` of the same file size and
/// block size are one case.
#[test]
fn a_real_fio_run_compares_with_sysgauge_disk_seq_read() {
    let Some((c, _)) = fio_against_disk(
        &[
            "--name=seqread",
            "--size=16m",
            "--bs=64k",
            "--rw=read",
            "--direct=1",
            "--ioengine=psync",
        ],
        |dir| format!("--directory={}", dir.display()),
        "fio-here",
        "seq-read",
    ) else {
        return;
    };
    let row = row_with_ratios(&c, "disk.seq-read", "throughput");
    assert_eq!(row.params.get_u64("block_size"), Some(64 << 10));
}

/// YABS's job run by the real fio (a 16 MiB file, one second) and
/// `sysgauge disk`'s queue-depth case of the same size are one case.
#[test]
fn a_real_fio_run_of_yabss_job_compares_with_sysgauge_disk_randrw() {
    let Some((c, out)) = fio_against_disk(
        &[
            "--name=rand_rw_64k",
            "--ioengine=libaio",
            "--rw=randrw",
            "--rwmixread=50",
            "--bs=64k",
            "--iodepth=64",
            "--numjobs=2",
            "--size=16M",
            "--runtime=1",
            "--direct=1",
            "--group_reporting",
        ],
        |dir| format!("--filename={}/test.fio", dir.display()),
        "fio-yabs",
        "randrw",
    ) else {
        return;
    };
    // The YABS-shaped table follows the disk table.
    let err = stdout_of(&out);
    assert!(err.contains("Mixed R/W 50/50"), "{err}");
    assert!(
        err.lines().any(|l| l.trim_start().starts_with("64k")),
        "{err}"
    );
    for metric in ["throughput", "iops", "read_throughput", "write_iops"] {
        let row = row_with_ratios(&c, "disk.randrw", metric);
        assert_eq!(row.params.get_u64("iodepth"), Some(64));
    }
}

#[test]
fn yabs_json_imports_its_disk_test_and_names_the_rest() {
    let sb = Sandbox::new();
    let file = tool_fixture("yabs/shaped-full.json");
    let out = import(&sb, &[&file]);
    let err = stderr_of(&out);
    assert!(
        err.contains("Geekbench 6") && err.contains("3 iperf3"),
        "{err}"
    );
    let run = exported_run(&sb, "1");
    assert_eq!(
        run.tags.get("yabs_version").map(String::as_str),
        Some("v2023-04-23")
    );
    assert_eq!(
        run.host.cpu.model.as_deref(),
        Some("AMD EPYC 7763 64-Core Processor")
    );
    assert_eq!(run.host.cpu.cores, Some(4));
    let c4k = result(
        &run,
        "disk.randrw",
        "block_size=4096,direct=true,iodepth=64,numjobs=2,rwmixread=50,size=2147483648",
    );
    assert_eq!(samples(c4k, "iops"), [90316.0]);
    // Pasted after its report, from an ARM machine: YABS's 512 MiB file.
    let run = imported_fixture("yabs/shaped-pasted-arm.txt");
    assert_eq!(run.results.len(), 4);
    assert!(run
        .results
        .iter()
        .all(|r| r.params.get_u64("size") == Some(512 << 20)));
    // Without a disk section: refused, saying why, nothing stored.
    let sb = Sandbox::new();
    let msg = refused(&sb, &tool_fixture("yabs/shaped-geekbench-only.json"));
    assert!(
        msg.contains("shaped-geekbench-only.json: fio: missing"),
        "{msg}"
    );
    assert!(msg.contains("only Geekbench or iperf3 ran"), "{msg}");
    let sb = Sandbox::new();
    let msg = refused(&sb, &tool_fixture("yabs/shaped-no-disk.json"));
    assert!(msg.contains("without -f/-d"), "{msg}");
    // A cut file names its line and column.
    let sb = Sandbox::new();
    let text = std::fs::read_to_string(tool_fixture("yabs/shaped-pasted-arm.txt")).unwrap();
    let bad = sb.dir.path().join("cut.txt");
    std::fs::write(&bad, text.replace("\"speed_r\":40211", "\"speed_r\":")).unwrap();
    let msg = refused(&sb, &bad);
    let json_line = text.lines().position(|l| l.starts_with('{')).unwrap() + 1;
    assert!(
        msg.contains(&format!("cut.txt:line {json_line} column")),
        "{msg}"
    );
}

#[test]
fn captured_sysbench_output_imports_with_its_params() {
    let run = imported_fixture("sysbench/1.0.20-cpu-t2-prime20000.txt");
    assert_eq!(
        run.tags.get("sysbench_version").map(String::as_str),
        Some("1.0.20")
    );
    let cpu = result(&run, "sysbench.cpu", "cpu_max_prime=20000,threads=2");
    assert_eq!(samples(cpu, "events"), [2687.33]);
    assert_eq!(samples(cpu, "latency_p95"), [0.83]);
    let run = imported_fixture("sysbench/1.0.20-memory-1M-2G-write.txt");
    let mem = result(
        &run,
        "sysbench.memory",
        "access_mode=seq,block_size=1048576,operation=write,scope=global,threads=1,total_size=2147483648",
    );
    assert_eq!(samples(mem, "operations"), [18233.80]);
    assert_eq!(samples(mem, "throughput"), [18233.80 * 1.048_576]);
}

#[test]
fn a_real_sysbench_run_compares_with_the_captured_output() {
    let Some(sysbench) = installed("sysbench", "sysbench") else {
        return;
    };
    let sb = Sandbox::new();
    let mut program = std::process::Command::new(sysbench);
    program.args(["cpu", "--time=1", "run"]);
    let file = real_output(&sb, program, "sysbench-here.txt");
    import(&sb, &[&file, &tool_fixture("sysbench/1.0.20-cpu.txt")]);
    let c = compare_json(&sb, "sysbench-here");
    let row = row_with_ratios(&c, "sysbench.cpu", "events");
    assert_eq!(row.params.get_u64("cpu_max_prime"), Some(10_000));
}

/// A cut-short or corrupted file of each new format is refused with its
/// place named, and nothing is stored.
#[test]
fn broken_hyperfine_fio_and_sysbench_files_are_refused_with_the_place() {
    let sb = Sandbox::new();
    let write = |name: &str, text: String| {
        let p = sb.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let read = |path: &str| std::fs::read_to_string(tool_fixture(path)).unwrap();

    let hf = read("hyperfine/1.15-scan.json");
    let cut = write("cut.json", hf[..hf.len() / 2].to_string());
    let said = refused(&sb, &cut);
    assert!(said.contains("cut.json:line "), "{said}");
    assert!(said.contains("cut short"), "{said}");
    // The first run of the second command (its value is also its min).
    let (head, tail) = hf.split_at(hf.match_indices("\"times\"").nth(1).unwrap().0);
    let bad = write(
        "bad-times.json",
        format!(
            "{head}{}",
            tail.replacen("0.019762561100000003", "\"slow\"", 1)
        ),
    );
    let said = refused(&sb, &bad);
    assert!(
        said.contains("bad-times.json: results[1] (sleep 0.02).times[0]: \"slow\" is not a number"),
        "{said}"
    );

    let fio = read("fio/3.33-seq-64k-write-read.json");
    let cut = write("cut-fio.json", fio[..fio.len() / 3].to_string());
    let said = refused(&sb, &cut);
    assert!(said.contains("cut-fio.json:line "), "{said}");
    let bad = write(
        "bad-fio.json",
        fio.replacen("\"iops\" : 5688.888889", "\"iops\" : -1", 1),
    );
    let said = refused(&sb, &bad);
    assert!(
        said.contains(
            "bad-fio.json: jobs[1] (seqread).read.iops: -1 is not a number of zero or more"
        ),
        "{said}"
    );

    let sysbench = read("sysbench/1.0.20-cpu.txt");
    let cut: String = sysbench
        .lines()
        .take(14)
        .map(|l| format!("{l}\n"))
        .collect();
    let cut = write("cut-sysbench.txt", cut);
    let said = refused(&sb, &cut);
    assert!(
        said.contains(
            "cut-sysbench.txt:line 14: the cpu run from line 1 has no 'events per second:' line"
        ),
        "{said}"
    );
    let bad = write("bad-sysbench.txt", sysbench.replace("3510.80", "lots"));
    let said = refused(&sb, &bad);
    assert!(said.contains("bad-sysbench.txt:line 15:"), "{said}");
}

/// A write-up machine's output of one tool (`rpib.nbench.txt`, …).
fn pasted_fixture(name: &str) -> PathBuf {
    tool_fixture(&format!("pasted/{name}"))
}

/// `import --host HOST FILE…`; stderr.
fn import_as(sb: &Sandbox, host: &str, files: &[&Path]) -> String {
    let out = sb
        .cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .args(["--host", host])
        .args(files)
        .succeeds();
    stderr_of(&out)
}

/// Results per family of `run`: (nbench, bonnie, other).
fn family_counts(run: &sysgauge_core::record::RunRecord) -> (usize, usize, usize) {
    let n = |p: &str| {
        run.results
            .iter()
            .filter(|r| r.bench_id.starts_with(p))
            .count()
    };
    (
        n("nbench."),
        n("bonnie."),
        run.results.len() - n("nbench.") - n("bonnie."),
    )
}

fn value(run: &sysgauge_core::record::RunRecord, id: &str, params: &str, metric: &str) -> f64 {
    samples(result(run, id, params), metric)[0]
}

/// What the Raspberry Pi B's text says, checked on its stored run.
fn is_the_pi(run: &sysgauge_core::record::RunRecord) {
    // 15 nbench rows and indexes, 11 timed Bonnie++ tests (one +++++),
    // 4 digests and ciphers at 5 sizes and 2 RSA sizes.
    assert_eq!(family_counts(run), (15, 11, 22), "{:?}", run.results);
    assert_eq!(value(run, "nbench.numeric-sort", "", "iterations"), 93.292);
    let aes = value(
        run,
        "crypto.aes-128-cbc",
        "block_size=8192,threads=1",
        "throughput",
    );
    assert!((aes - 14347.33 * 1000.0 / 1e6).abs() < 1e-9, "{aes}");
    let block = result(run, "bonnie.seq-input-block", "");
    assert!((samples(block, "throughput")[0] - 19512.0 * 1024.0 / 1e6).abs() < 1e-9);
    assert_eq!(
        block.metrics[0].name, "throughput",
        "the rate is the headline"
    );
    assert_eq!(block.details.get_u64("file_size"), Some(1 << 30));
    assert_eq!(block.workload_version, 2);
    // Host facts the tools printed.
    assert_eq!(
        run.host.cpu.model.as_deref(),
        Some("ARMv6-compatible processor rev 7 (v6l)")
    );
    assert_eq!(run.host.os.kernel_release.as_deref(), Some("3.6.11+"));
    assert_eq!(
        run.tags.get("openssl_version").map(String::as_str),
        Some("1.0.1e")
    );
    assert!(run
        .tags
        .get("openssl_compiler")
        .is_some_and(|c| c.starts_with("gcc")));
    assert_eq!(
        run.tags.get("bonnie_version").map(String::as_str),
        Some("1.96")
    );
}

#[test]
fn a_machines_tool_outputs_imported_with_one_host_are_one_run() {
    let sb = Sandbox::new();
    // Written on three days: the run starts at the oldest file's time and
    // ends at the newest's, whatever order they are named in.
    let day =
        |d: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + d * 86_400);
    let files: Vec<PathBuf> = [
        ("rpib.openssl.txt", 2),
        ("rpib.nbench.txt", 0),
        ("rpib.bonnie.txt", 1),
    ]
    .into_iter()
    .map(|(name, d)| {
        let copy = sb.dir.path().join(name);
        std::fs::copy(pasted_fixture(name), &copy).unwrap();
        let f = std::fs::File::options().write(true).open(&copy).unwrap();
        f.set_modified(day(d)).unwrap();
        copy
    })
    .collect();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let err = import_as(&sb, "rpib", &refs);
    assert!(err.contains("1 new run(s)"), "{err}");
    let run = exported_run(&sb, "1");
    assert_eq!(run.host_name(), "rpib");
    is_the_pi(&run);
    let time = |t: std::time::SystemTime| chrono::DateTime::<chrono::Utc>::from(t);
    assert_eq!(run.started_at, time(day(0)));
    assert_eq!(run.finished_at, Some(time(day(2))));
    let shown = first_run_shown(&sb);
    assert!(
        shown.contains("imported (openssl, nbench, bonnie)"),
        "{shown}"
    );
    // The same files again are the same run.
    let again = import_as(&sb, "rpib", &refs);
    assert!(again.contains("0 new run(s), 1 already present"), "{again}");
}

#[test]
fn a_pasted_block_of_three_tools_imports_whole() {
    let sb = Sandbox::new();
    let read = |n: &str| std::fs::read_to_string(pasted_fixture(n)).unwrap();
    let text = format!(
        "pi@raspberrypi ~ $ ./nbench\n{}\nNext the disk, on the SD card:\n\n{}\npi@raspberrypi ~ $ openssl speed md5 sha1 sha256 aes-128-cbc rsa1024 rsa2048\n{}",
        read("rpib.nbench.txt"),
        read("rpib.bonnie.txt"),
        read("rpib.openssl.txt")
    );
    let file = sb.dir.path().join("all.txt");
    std::fs::write(&file, &text).unwrap();
    let err = import_as(&sb, "rpib", &[&file]);
    // What was not read is named, with its lines.
    assert!(err.contains("lines 1, 36, 63 not read"), "{err}");
    let run = exported_run(&sb, "1");
    is_the_pi(&run);
    let shown = first_run_shown(&sb);
    assert!(
        shown.contains("imported (nbench, bonnie, openssl)"),
        "{shown}"
    );

    // Without --host, the nameless outputs are the file's and Bonnie++'s
    // is the machine it names: every result is stored either way.
    let sb = Sandbox::new();
    let out = import(&sb, &[&file]);
    assert!(
        stderr_of(&out).contains("2 new run(s)"),
        "{}",
        stderr_of(&out)
    );
    let a = exported_run(&sb, "1");
    let b = exported_run(&sb, "2");
    let total = |r: &sysgauge_core::record::RunRecord| family_counts(r);
    let (n1, b1, o1) = total(&a);
    let (n2, b2, o2) = total(&b);
    assert_eq!((n1 + n2, b1 + b2, o1 + o2), (15, 11, 22));

    // The same block pasted into standard input (`-`, read from a pipe).
    let sb3 = Sandbox::new();
    let out = sb3
        .cmd()
        .args(["import", "--db"])
        .arg(sb3.db())
        .args(["--host", "rpib", "-"])
        .write_stdin(text.clone())
        .succeeds();
    assert!(
        stderr_of(&out).contains("stdin: lines 1, 36, 63 not read"),
        "{}",
        stderr_of(&out)
    );
    is_the_pi(&exported_run(&sb3, "1"));
    sb3.cmd()
        .args(["import", "--db"])
        .arg(sb3.db())
        .args(["-", "-"])
        .usage_error("named more than once");

    // Prose alone is refused, nothing stored.
    let prose = sb.dir.path().join("prose.txt");
    std::fs::write(&prose, "My Pi is fast.\nVery fast.\n").unwrap();
    let sb2 = Sandbox::new();
    assert!(refused(&sb2, &prose).contains("cannot tell the format"));
}

#[test]
fn intel_against_the_pi_on_bonnie_block_input_is_about_21x() {
    let sb = Sandbox::new();
    for (host, prefix) in [("rpib", "rpib"), ("intel", "intel")] {
        let files: Vec<PathBuf> = ["nbench", "bonnie", "openssl"]
            .iter()
            .map(|t| pasted_fixture(&format!("{prefix}.{t}.txt")))
            .collect();
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        import_as(&sb, host, &refs);
    }
    let c = compare_json(&sb, "rpib");
    let intel = c.machines.iter().position(|m| m.label == "intel").unwrap();
    let ratio = |id: &str, metric: &str| {
        row_with_ratios(&c, id, metric).cells[intel]
            .as_ref()
            .and_then(|x| x.ratio)
            .unwrap()
    };
    // The two machines chose 1G and 63744M: the cases meet all the same.
    let block_in = ratio("bonnie.seq-input-block", "throughput");
    assert!((block_in - 409752.0 / 19512.0).abs() < 0.01, "{block_in}");
    assert!((20.5..21.5).contains(&block_in), "{block_in}");
    let sort = ratio("nbench.numeric-sort", "iterations");
    assert!((sort - 1247.3 / 93.292).abs() < 0.01, "{sort}");
    let row = c
        .rows
        .iter()
        .find(|r| {
            r.bench_id == "crypto.aes-128-cbc"
                && r.metric == "throughput"
                && r.params.get_u64("block_size") == Some(8192)
        })
        .unwrap();
    let aes = row.cells[intel].as_ref().and_then(|x| x.ratio).unwrap();
    assert!((aes - 134803.46 / 14347.33).abs() < 0.01, "{aes}");
}

#[test]
fn bonnie_output_with_progress_lines_needs_no_format() {
    let run = imported_fixture("pasted/intel.bonnie.txt");
    assert_eq!(run.host_name(), "intelbox");
    assert_eq!(family_counts(&run), (0, 6, 0));
    let r = result(&run, "bonnie.seq-output-block", "");
    assert_eq!(r.details.get_u64("file_size"), Some(63744 << 20));
}

/// Two outputs of one name from two folders (`a/result.txt`,
/// `b/result.txt`) get labels of their own, the same again when the same
/// data is imported into another database; the profile column still names
/// the tool.
#[test]
fn same_named_files_get_labels_of_their_own() {
    let sb = Sandbox::new();
    let mut files = Vec::new();
    for (dir, k) in [("a", 100), ("b", 110)] {
        let d = sb.path().join(dir);
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("result.txt");
        std::fs::write(
            &file,
            format!(
                "version: 1.0\ntype 16 bytes 64 bytes 256 bytes 1024 bytes 8192 bytes 16384 bytes\n\
                 md5 {k}.00k {k}.00k {k}.00k {k}.00k {k}.00k {k}.00k\n"
            ),
        )
        .unwrap();
        files.push(file);
    }
    let labels = |db: &Path| -> Vec<String> {
        let list = sb.listed_runs_on(db);
        let mut l: Vec<String> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect();
        l.sort();
        l
    };
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    import(&sb, &paths);
    let first = labels(&sb.db());
    assert_eq!(first.len(), 2, "{first:?}");
    assert_ne!(first[0], first[1], "the labels clash");
    for l in &first {
        assert!(l.starts_with("imported from result.txt, run "), "{l}");
        assert!(l.ends_with(" (openssl)"), "{l}");
    }
    // The same data, imported the other way round into another database.
    let other = sb.path().join("other.db");
    sb.cmd()
        .args(["import", "--db"])
        .arg(&other)
        .args([&files[1], &files[0]])
        .succeeds();
    assert_eq!(labels(&other), first);
    let listed = stdout_of(&sb.on_db("results").arg("list").succeeds());
    assert!(listed.contains("imported (openssl)"), "{listed}");
}

/// `text` written as `name` in the sandbox.
fn written(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let p = sb.dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The ids of a stored run's results, sorted.
fn ids_of(run: &sysgauge_core::record::RunRecord) -> Vec<String> {
    let mut ids: Vec<String> = run.results.iter().map(|r| r.bench_id.clone()).collect();
    ids.sort();
    ids
}

/// The acceptance test's pastes: a block that begins with sysbench's
/// output was read whole by sysbench, which skipped the mbw results, a
/// prompt, a pasted JSON file and prose after it without a word. Now
/// every tool's section is read and every other line is named, in one
/// warning; sysbench's own lines (`Initializing random number generator
/// …`) are not among them.
#[test]
fn a_block_that_begins_with_sysbench_reads_what_follows() {
    let read = |path: &str| std::fs::read_to_string(tool_fixture(path)).unwrap();
    let sysbench = read("sysbench/1.0.20-cpu.txt");
    let mbw = read("mbw/1.2.2-q-a-n2-8MiB.txt");
    let hyperfine = read("hyperfine/1.15-two-commands.json");
    let mbw_ids = ["mbw.dumb", "mbw.mcblock", "mbw.memcpy", "sysbench.cpu"];

    let sb = Sandbox::new();
    let both = written(&sb, "paste3.txt", &format!("{sysbench}{mbw}"));
    let said = import_as(&sb, "p3", &[&both]);
    assert_eq!(ids_of(&exported_run(&sb, "1")), mbw_ids);
    assert!(!said.contains("warning"), "{said}");

    let sb = Sandbox::new();
    let prompt = sysbench.lines().count() + 1;
    let text = format!("{sysbench}$ mbw -q -n 2 8\n{mbw}");
    let said = import_as(&sb, "p10", &[&written(&sb, "paste10.txt", &text)]);
    assert_eq!(ids_of(&exported_run(&sb, "1")), mbw_ids);
    assert_eq!(said.matches("warning").count(), 1, "{said}");
    assert!(
        said.contains(&format!("paste10.txt: line {prompt} not read")),
        "{said}"
    );

    let sb = Sandbox::new();
    let json_from = sysbench.lines().count() + 1;
    let json_to = json_from + hyperfine.lines().count() - 1;
    let text = format!("{sysbench}{hyperfine}");
    let said = import_as(&sb, "p14", &[&written(&sb, "paste14.txt", &text)]);
    assert_eq!(ids_of(&exported_run(&sb, "1")), ["sysbench.cpu"]);
    assert_eq!(said.matches("warning").count(), 1, "{said}");
    assert!(
        said.contains(&format!(
            "paste14.txt: lines {json_from}-{json_to} not read"
        )),
        "{said}"
    );

    let sb = Sandbox::new();
    let text = format!("{sysbench}and some prose at the end\n");
    let said = import_as(&sb, "p16", &[&written(&sb, "paste16.txt", &text)]);
    assert!(
        said.contains(&format!("paste16.txt: line {json_from} not read"))
            && said.contains("and some prose at the end"),
        "{said}"
    );
}

/// The nit of the same pass: `openssl speed`'s table followed by a pasted
/// hyperfine JSON file gave a warning per JSON line; the lines are named
/// in one.
#[test]
fn a_json_file_pasted_after_a_table_is_named_in_one_warning() {
    let sb = Sandbox::new();
    let table = std::fs::read_to_string(pasted_fixture("rpib.openssl.txt")).unwrap();
    let hyperfine =
        std::fs::read_to_string(tool_fixture("hyperfine/1.15-two-commands.json")).unwrap();
    let text = format!("{table}{hyperfine}");
    let said = import_as(&sb, "p15", &[&written(&sb, "paste15.txt", &text)]);
    assert_eq!(said.matches("warning").count(), 1, "{said}");
    let from = table.lines().count() + 1;
    let to = from + hyperfine.lines().count() - 1;
    assert!(
        said.contains(&format!("paste15.txt: lines {from}-{to} not read")),
        "{said}"
    );
}

/// fio's client mode writes its servers' `<vm> cj: (g=0): rw=randread,
/// bs=…` lines to standard output before the JSON; the file was taken for
/// a CSV (`unknown column '<vm> cj: (g=0): rw=randread'`). It is fio's,
/// without `--format`: a machine per server, `All clients` left out.
#[test]
fn fio_client_mode_as_written_to_stdout_needs_no_format() {
    let sb = Sandbox::new();
    let file = tool_fixture("fio/3.33-two-clients-stdout.json");
    import(&sb, &[&file]);
    let mut hosts: Vec<String> = (1..=2)
        .map(|k| {
            let run = exported_run(&sb, &k.to_string());
            assert_eq!(ids_of(&run), ["fio.randread"]);
            run.host.hostname.unwrap()
        })
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["127.0.0.1", "127.0.0.1:8766"]);
    let sb = Sandbox::new();
    sb.cmd()
        .args(["import", "--host", "one", "--db"])
        .arg(sb.db())
        .arg(&file)
        .usage_error("2 client hosts");
}

/// A file saved by Notepad starts with a UTF-8 BOM: fio's and hyperfine's
/// JSON were refused as lacking their keys, and `openssl speed -mr`'s
/// first record as no record. They import as without it.
#[test]
fn json_and_openssl_records_with_a_bom_import() {
    let crypto = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-crypto/tests/fixtures/openssl/1.1.0i-mr-md5-rsa2048-ecdhp256.txt");
    for (name, original) in [
        ("fio.json", tool_fixture("fio/3.33-seq-64k-write-read.json")),
        ("hf.json", tool_fixture("hyperfine/1.15-two-commands.json")),
        ("mr.txt", crypto),
    ] {
        let text = std::fs::read_to_string(&original).unwrap();
        let plain = import_one(&Sandbox::new(), &original);
        let sb = Sandbox::new();
        let bom = written(&sb, name, &format!("\u{feff}{text}"));
        let run = import_one(&sb, &bom);
        assert_eq!(ids_of(&run), ids_of(&plain), "{name}");
        assert!(!run.results.is_empty(), "{name}");
    }
}

/// `import <(ssh host cat out.txt)`: a pipe is read to its end as `-` is,
/// its machine named by `--host` or, with no name of its own, `pipe`.
#[test]
fn outputs_come_in_through_pipes() {
    let sb = Sandbox::new();
    let output = tool_fixture("sysbench/1.0.20-cpu.txt");
    let line = "\"$0\" import --db \"$1\" --host piped <(cat \"$2\") && \"$0\" import --db \"$1\" <(cat \"$2\")";
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(line)
        .arg(assert_cmd::cargo::cargo_bin("sysgauge"))
        .arg(sb.db())
        .arg(&output)
        .env("SYSGAUGE_NO_WAIT", "1")
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("host piped, 1 results (imported, from pipe)"),
        "{err}"
    );
    assert!(
        err.contains("host pipe, 1 results (imported, from pipe)"),
        "{err}"
    );
}

/// openssl's own lines in its output are read as part of it, not named as
/// not read: the `…:error:0308010C:digital envelope routines:…` messages
/// 3.x prints (on standard error, so in a `2>&1` paste) for an algorithm
/// its providers lack, and 0.9.8's `available timing options:` and
/// `timing function used:` preamble. The rows give their values as ever.
#[test]
fn openssl_error_and_timing_lines_are_part_of_its_output() {
    let crypto = |name: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../sysgauge-crypto/tests/fixtures/openssl")
            .join(name)
    };
    for (name, cases, id, mbps) in [
        (
            "3.0-human-table-legacy-not-run-with-stderr.txt",
            18,
            "hash.sha1",
            76.69876,
        ),
        ("0.9.8o-human-table.txt", 22, "hash.md5", 2.35277),
    ] {
        let sb = Sandbox::new();
        let said = stderr_of(&import(&sb, &[&crypto(name)]));
        assert!(!said.contains("not read"), "{name}: {said}");
        let run = exported_run(&sb, "1");
        assert_eq!(run.results.len(), cases, "{name}");
        let got = samples(result(&run, id, "block_size=16,threads=1"), "throughput");
        assert!(
            got.len() == 1 && (got[0] - mbps).abs() < 1e-9,
            "{name}: {got:?}"
        );
    }
}
