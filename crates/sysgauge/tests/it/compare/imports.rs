//! CSV and openssl files imported and compared, and the bad input refused.

use super::{comparison, csv_fixture, import, openssl_fixture};
use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::PathBuf;
use sysgauge_compare::{Comparison, COMPARE_SCHEMA_VERSION};

fn runs_in_db(sb: &Sandbox) -> usize {
    if !sb.db().exists() {
        return 0;
    }
    sb.listed_runs().as_array().map(|a| a.len()).unwrap_or(0)
}

#[test]
fn csv_compare_reproduces_hand_arithmetic() {
    let sb = Sandbox::new();
    let out = import(&sb, &[csv_fixture("three-hosts.csv")]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("3 new run(s)"));
    // Re-importing is a no-op.
    let again = import(&sb, &[csv_fixture("three-hosts.csv")]);
    assert!(again.status.success(), "{}", stderr_of(&again));
    assert!(stderr_of(&again).contains("0 new run(s), 3 already present"));
    assert_eq!(runs_in_db(&sb), 3);

    let table = sb
        .on_db("compare")
        .args(["hosta", "hostb", "--reference", "hostx"])
        .succeeds();
    let text = stdout_of(&table);
    assert!(text.contains("Reference: hostx."), "{text}");
    let sha = text
        .lines()
        .find(|l| l.starts_with("hash.sha256"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = sha.split_whitespace().collect();
    for want in ["80.00", "50.00", "0.625", "200.0", "2.50"] {
        assert!(cells.contains(&want), "{want} missing in {sha}");
    }
    assert!(text.contains("BogoMIPS"), "{text}");

    let c = comparison(&sb, &["--reference", "hostx"]);
    assert_eq!(c.schema_version, COMPARE_SCHEMA_VERSION);
    assert_eq!(c.reference, "hostx");
    let idx = |label: &str| {
        c.machines
            .iter()
            .position(|m| m.label == label)
            .unwrap_or_else(|| panic!("no {label}"))
    };
    let (a, b) = (idx("hosta"), idx("hostb"));
    let sha = c
        .rows
        .iter()
        .find(|r| r.bench_id == "hash.sha256")
        .unwrap_or_else(|| panic!("no sha256 row"));
    let ratio = |m: usize| sha.cells[m].as_ref().and_then(|x| x.ratio);
    assert_eq!((ratio(a), ratio(b)), (Some(0.625), Some(2.5)));
    let near = |v: Option<f64>, w: f64| (v.unwrap_or(f64::NAN) - w).abs() < 1e-12;
    assert!(near(
        c.overall.cells[a].arith_mean,
        (0.625 + 0.5 + 0.25) / 3.0
    ));
    assert!(near(
        c.overall.cells[a].geomean,
        (0.625f64 * 0.5 * 0.25).cbrt()
    ));
    assert!(near(c.overall.cells[b].arith_mean, 3.0));
    assert!(near(c.overall.cells[b].geomean, 25f64.cbrt()));
    assert!(near(c.bogomips_ratio[a], 108.0 / 5200.0));

    for (format, marker) in [("md", "| hash.sha256 |"), ("csv", "case,hash,hash.sha256,")] {
        let out = sb
            .on_db("compare")
            .args(["--reference", "hostx", "--format", format])
            .succeeds();
        assert!(
            stdout_of(&out).contains(marker),
            "{format}: {}",
            stdout_of(&out)
        );
    }
}

#[test]
fn compare_files_directly_without_a_database() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .arg("compare")
        .arg(csv_fixture("three-hosts.csv"))
        .args([
            "--reference",
            "hostb",
            "--family",
            "hash",
            "--format",
            "json",
        ])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.reference, "hostb");
    assert_eq!(c.rows.len(), 1);
    assert!(
        !sb.path().join("xdg").exists(),
        "compare created a database"
    );
}

/// Every bad input: exit 2, a message naming the file and line, and the
/// database exactly as it was.
#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let sb = Sandbox::new();
    let good = csv_fixture("three-hosts.csv");
    assert!(import(&sb, std::slice::from_ref(&good)).status.success());
    let before = runs_in_db(&sb);
    let truncated_json = sb.path().join("truncated.json");
    let export = sb
        .on_db("results")
        .args(["export", "1", "--format", "json"])
        .output()
        .unwrap();
    let full = stdout_of(&export);
    std::fs::write(&truncated_json, &full[..full.len() / 2]).unwrap();
    let malformed_json = sb.path().join("malformed.json");
    std::fs::write(
        &malformed_json,
        "{\n  \"schema_version\": 1,\n  \"run_id\": oops\n}\n",
    )
    .unwrap();
    // A real openssl table with one cell that is not a rate: once a
    // warning blaming the openssl version, and the row's numbers lost.
    let bad_cell = sb.path().join("bad-cell.txt");
    let table =
        std::fs::read_to_string(openssl_fixture("3.0-human-table-digests-ciphers-pkey.txt"))
            .unwrap();
    assert!(table.contains(" 275387.90k "));
    std::fs::write(&bad_cell, table.replacen("275387.90k", "slow", 1)).unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            csv_fixture("bad-non-numeric.csv"),
            "bad-non-numeric.csv:3: value 'fast' is not a number",
        ),
        (
            csv_fixture("bad-zero.csv"),
            "bad-zero.csv:3: value 0 must be a positive number",
        ),
        (
            csv_fixture("bad-negative.csv"),
            "bad-negative.csv:2: value -80 must be a positive number",
        ),
        (
            csv_fixture("bad-truncated.csv"),
            "bad-truncated.csv:3: this row has 3 fields",
        ),
        (
            csv_fixture("bad-header.csv"),
            "bad-header.csv:1: unknown column 'machine'",
        ),
        (
            openssl_fixture("truncated-mid-line.txt"),
            "truncated-mid-line.txt:line 2:",
        ),
        (
            bad_cell,
            "bad-cell.txt:line 11: 'sha256' at 64 bytes: 'slow' is not a number",
        ),
        (truncated_json, "truncated.json:"),
        (malformed_json, "malformed.json:3: not valid JSON"),
    ];
    for (file, want) in cases {
        // The good file first: a bad file later in the list must still
        // leave nothing behind (the import is all-or-nothing).
        let fresh = Sandbox::new();
        let out = import(&fresh, &[good.clone(), file.clone()]);
        assert_eq!(out.status.code(), Some(2), "{}", file.display());
        let err = stderr_of(&out);
        assert!(
            err.contains(want),
            "{}: wanted {want:?} in {err}",
            file.display()
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            !fresh.db().exists(),
            "{}: a database was created",
            file.display()
        );
        // And into an existing database: unchanged.
        let out = import(&sb, std::slice::from_ref(&file));
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(runs_in_db(&sb), before);
    }
    // Unknown reference host.
    let out = sb
        .on_db("compare")
        .args(["--reference", "nosuchhost"])
        .exits_with(2);
    let err = stderr_of(&out);
    assert!(
        err.contains("unknown reference 'nosuchhost'") && err.contains("hostx"),
        "{err}"
    );
    // A value of zero in a file given to compare directly.
    sb.cmd()
        .arg("compare")
        .arg(csv_fixture("bad-zero.csv"))
        .usage_error("bad-zero.csv:3:");
    // An unknown family.
    sb.on_db("compare")
        .args(["--family", "disk"])
        .usage_error("no results for family 'disk'");
}

#[test]
fn openssl_output_compares_with_a_sysgauge_run() {
    let sb = Sandbox::new();
    sb.tiny_run()
        .args(["--only", "hash.sha256,hash.md5"])
        .succeeds();
    sb.on_db("import")
        .args(["--host", "openssl-here"])
        .arg(openssl_fixture("3.0-sha256-md5-8k.txt"))
        .succeeds();
    let c = comparison(&sb, &["--reference", "openssl-here"]);
    let ids: Vec<&str> = c.rows.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, ["hash.md5", "hash.sha256"], "{c:?}");
    for r in &c.rows {
        assert_eq!(r.params.get_u64("block_size"), Some(8192));
        assert!(r
            .cells
            .iter()
            .all(|x| x.as_ref().and_then(|c| c.ratio).is_some()));
    }
}

/// `openssl speed -multi 2` without `-mr` (its table has no `type …`
/// header) imports as the same cases as with `-mr`: threads=2, so the two
/// compare; with standard error captured too.
#[test]
fn the_openssl_multi_table_compares_with_its_mr_twin() {
    let sb = Sandbox::new();
    for (host, file) in [
        (
            "multi-table",
            "3.0-multi2-human-table-sha256-rsa2048-8k.txt",
        ),
        ("multi-mr", "3.0-multi2-sha256-rsa2048.txt"),
        ("multi-stderr", "3.0-multi2-human-table-with-stderr.txt"),
    ] {
        let out = sb
            .on_db("import")
            .args(["--host", host])
            .arg(openssl_fixture(file))
            .succeeds();
        assert_eq!(stderr_of(&out).matches("warning").count(), 0, "{file}");
    }
    let c = comparison(&sb, &["1", "2", "--reference", "multi-mr"]);
    let cases: Vec<(&str, Option<u64>, Option<u64>)> = c
        .rows
        .iter()
        .map(|r| {
            assert!(
                r.cells
                    .iter()
                    .all(|x| x.as_ref().and_then(|c| c.ratio).is_some()),
                "{r:?}"
            );
            (
                r.bench_id.as_str(),
                r.params.get_u64("block_size"),
                r.params.get_u64("threads"),
            )
        })
        .collect();
    assert_eq!(
        cases,
        [
            ("hash.sha256", Some(8192), Some(2)),
            ("crypto.rsa-2048", None, Some(2)),
            ("crypto.rsa-2048", None, Some(2))
        ],
        "{c:?}"
    );
    let run = sb.stored_run(3);
    assert_eq!(run.results.len(), 13);
    assert!(run
        .results
        .iter()
        .all(|r| r.params.get_u64("threads") == Some(2)));
}

/// Tables of three openssl versions (3.0, and 1.1.1w and 1.1.0i built from
/// their sources) each compare with this machine's crypto run: a ratio for
/// every algorithm and block size both have.
#[test]
fn a_human_openssl_table_compares_with_a_sysgauge_run() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["crypto", "--profile", "tiny", "--repetitions", "3", "--db"])
        .arg(sb.db())
        .arg("--scratch-dir")
        .arg(sb.scratch())
        .args(["--only", "md5,sha256,aes-128-cbc,rsa-2048"])
        .succeeds();
    let tables = [
        ("openssl-3.0", "3.0-human-table-with-progress-lines.txt"),
        ("openssl-1.1.1w", "1.1.1w-human-table-with-progress.txt"),
        ("openssl-1.1.0i", "1.1.0i-human-table.txt"),
    ];
    for (host, file) in tables {
        sb.cmd()
            .args(["import", "--db"])
            .arg(sb.db())
            .args(["--host", host])
            .arg(openssl_fixture(file))
            .succeeds();
    }
    for (k, (host, _)) in tables.iter().enumerate() {
        // Run 1 is the crypto run; the tables are runs 2, 3 and 4.
        let c = comparison(&sb, &["1", &(k + 2).to_string(), "--reference", host]);
        let mut compared = std::collections::BTreeSet::new();
        for r in &c.rows {
            if r.cells.iter().all(Option::is_some) {
                assert!(
                    r.cells
                        .iter()
                        .all(|x| x.as_ref().and_then(|c| c.ratio).is_some()),
                    "{host}: {r:?}"
                );
                compared.insert(r.bench_id.as_str());
            }
        }
        let measured: std::collections::BTreeSet<&str> = c
            .rows
            .iter()
            .filter(|r| r.cells.iter().any(|x| x.is_some()))
            .map(|r| r.bench_id.as_str())
            .collect();
        for id in [
            "hash.md5",
            "hash.sha256",
            "crypto.aes-128-cbc",
            "crypto.rsa-2048",
        ] {
            assert!(
                compared.contains(id),
                "{host}: {id} not compared: {compared:?} of {measured:?}"
            );
        }
    }
}
