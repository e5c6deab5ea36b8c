//! `import` of other tools' outputs (mbw, Bonnie++), through the real
//! binary: the captured fixtures, and fresh runs of the real programs
//! compared with this machine's sysgauge run of the same workload or with
//! each other.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::PathBuf;
use sysgauge_compare::Comparison;

fn mbw_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-bench/tests/fixtures/mbw")
        .join(name)
}

fn bonnie_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-bench/tests/fixtures/bonnie")
        .join(name)
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

fn compare_json(sb: &Sandbox, reference: &str) -> Comparison {
    let out = sb
        .cmd()
        .args(["compare", "--db"])
        .arg(sb.db())
        .args(["--reference", reference, "--format", "json"])
        .succeeds();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn captured_mbw_output_imports_with_its_own_and_mem_ids() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(mbw_fixture("1.2.2-n3-16MiB.txt"))
        .succeeds();
    let text = first_run_shown(&sb);
    for id in ["mem.memcpy", "mbw.dumb", "mbw.mcblock"] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(text.contains("host 1.2.2-n3-16MiB"), "{text}");
    // A second import of the same file is recognised, not duplicated.
    let again = sb
        .cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(mbw_fixture("1.2.2-n3-16MiB.txt"))
        .succeeds();
    let said = format!("{}{}", stdout_of(&again), stderr_of(&again));
    assert!(said.contains("0 new run(s), 1 already present"), "{said}");
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
    let out = sb
        .cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(&file)
        .exits_with(2);
    assert!(
        stderr_of(&out).contains("broken.txt:line 2:"),
        "{}",
        stderr_of(&out)
    );
    assert!(!sb.db().exists());
}

#[test]
fn a_real_mbw_run_compares_with_sysgauge_mem_memcpy() {
    let Some(mbw) = sysgauge_core::bench::find_program("mbw") else {
        sysgauge_testkit::require("mbw is not installed", false, "apt-get install mbw");
        return;
    };
    let sb = Sandbox::new();
    let out = std::process::Command::new(mbw)
        .args(["-n", "3", "-t0", "8"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = sb.dir.path().join("mbw-here.txt");
    std::fs::write(&file, &out.stdout).unwrap();
    sb.cmd()
        .args(["mem", "--profile", "tiny", "--repetitions", "3"])
        .args([
            "--size",
            "8MiB",
            "--no-huge-pages",
            "--only",
            "memcpy",
            "--db",
        ])
        .arg(sb.db())
        .arg("--scratch-dir")
        .arg(sb.scratch())
        .succeeds();
    sb.cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(&file)
        .succeeds();
    let c = compare_json(&sb, "mbw-here");
    let row = c
        .rows
        .iter()
        .find(|r| r.bench_id == "mem.memcpy")
        .unwrap_or_else(|| panic!("no mem.memcpy row: {c:?}"));
    assert_eq!(row.params.get_u64("size"), Some(8 << 20));
    assert!(every_cell_has_a_ratio(row), "{row:?}");
}

#[test]
fn captured_bonnie_output_imports_under_its_own_names() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .arg(bonnie_fixture("2.00a-1G-n4.txt"))
        .succeeds();
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
    let Some(bonnie) = sysgauge_core::bench::find_program("bonnie++") else {
        sysgauge_testkit::require(
            "bonnie++ is not installed",
            false,
            "apt-get install bonnie++",
        );
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
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file = sb.dir.path().join(format!("{host}.txt"));
        std::fs::write(&file, &out.stdout).unwrap();
        files.push(file);
    }
    sb.cmd()
        .args(["import", "--db"])
        .arg(sb.db())
        .args(&files)
        .succeeds();
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
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-bench/tests/fixtures/nbench/linux-port-x86_64.txt");
    let sb = Sandbox::new();
    for host in ["board-a", "board-b"] {
        sb.cmd()
            .args(["import", "--db"])
            .arg(sb.db())
            .args(["--host", host])
            .arg(&file)
            .succeeds();
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
    let out = sb
        .cmd()
        .args(["results", "export", "--format", "json", "--db"])
        .arg(sb.db())
        .arg("1")
        .succeeds();
    let run: sysgauge_core::record::RunRecord = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        run.host.cpu.model.as_deref(),
        Some("Dual AuthenticAMD AMD EPYC 2445MHz")
    );
    assert_eq!(
        run.host.os.kernel_release.as_deref(),
        Some("6.18.44-fc-v657")
    );
}
