//! `import`, `compare`, `report`, `chart` and `baseline`, driven through the
//! real binary on temporary databases, with the CSV and openssl fixtures.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};
use sysgauge_compare::{Comparison, COMPARE_SCHEMA_VERSION};

fn csv_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-compare/tests/fixtures/csv")
        .join(name)
}

fn openssl_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sysgauge-crypto/tests/fixtures/openssl")
        .join(name)
}

fn import(sb: &Sandbox, files: &[PathBuf]) -> std::process::Output {
    sb.on_db("import").args(files).output().unwrap()
}

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

    let json = sb
        .on_db("compare")
        .args(["--reference", "hostx", "--format", "json"])
        .succeeds();
    // Strict: every struct in Comparison denies unknown fields.
    let c: Comparison = serde_json::from_slice(&json.stdout).unwrap();
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
    let out = sb
        .cmd()
        .arg("compare")
        .arg(csv_fixture("bad-zero.csv"))
        .exits_with(2);
    assert!(stderr_of(&out).contains("bad-zero.csv:3:"));
    // An unknown family.
    let out = sb.on_db("compare").args(["--family", "disk"]).exits_with(2);
    assert!(stderr_of(&out).contains("no results for family 'disk'"));
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
    let out = sb
        .on_db("compare")
        .args(["--reference", "openssl-here", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
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
        let out = sb
            .cmd()
            .args(["compare", "--db"])
            .arg(sb.db())
            .args(["1", &(k + 2).to_string(), "--reference", host])
            .args(["--format", "json"])
            .succeeds();
        let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
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

/// Headless Chromium, to load a report as a reader's browser would.
struct Browser {
    program: PathBuf,
    profile: PathBuf,
    home: PathBuf,
}

impl Browser {
    /// Chromium, or None when it is not installed (the caller returns;
    /// under `SYSGAUGE_REQUIRE_ALL=1` the test fails instead).
    fn find(sb: &Sandbox) -> Option<Browser> {
        let found = ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|p| sysgauge_core::bench::find_program(p));
        let program = sysgauge_testkit::require_some(
            "chromium is not installed (the browser part of the report tests)",
            found,
            "apt-get install chromium",
        )?;
        Some(Browser {
            program,
            profile: sb.path().join("chromium-profile"),
            home: sb.path().to_path_buf(),
        })
    }

    /// Load `page` with `extra` options, the console logged to stderr.
    fn load(&self, page: &Path, extra: &[&str]) -> std::process::Output {
        let mut c = std::process::Command::new(&self.program);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", self.profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .env("HOME", &self.home);
        run_bounded(c, std::time::Duration::from_secs(120))
    }

    /// The DOM of `page` after it has loaded, and what it wrote to the
    /// console. A report has no script, so every console line is a defect:
    /// an SVG attribute the browser could not parse, a resource it tried
    /// to fetch.
    fn dom_and_console(&self, page: &Path) -> (String, Vec<String>) {
        let out = self.load(page, &["--dump-dom"]);
        assert!(out.status.success(), "chromium failed: {}", stderr_of(&out));
        let console = stderr_of(&out)
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect();
        (stdout_of(&out), console)
    }

    /// A screenshot of `page`: it really paints (not an empty or tiny
    /// image).
    fn screenshot(&self, page: &Path, file: &Path) {
        let out = self.load(
            page,
            &[
                &format!("--screenshot={}", file.display()),
                "--window-size=1280,2400",
                "--hide-scrollbars",
            ],
        );
        assert!(
            out.status.success(),
            "chromium screenshot failed: {}",
            stderr_of(&out)
        );
        let png = std::fs::read(file).unwrap_or_else(|e| panic!("no screenshot: {e}"));
        assert_eq!(&png[1..4], b"PNG");
        assert!(
            png.len() > 20_000,
            "screenshot is suspiciously small ({} bytes)",
            png.len()
        );
    }

    /// The console check can fail: a page with an SVG attribute the
    /// browser rejects is caught.
    fn assert_console_is_read(&self, dir: &Path) {
        let probe = dir.join("probe.html");
        std::fs::write(
            &probe,
            "<!DOCTYPE html>\n<html><body><svg width=\"20\" height=\"20\"><rect width=\"-5\" height=\"5\"/></svg></body></html>\n",
        )
        .unwrap();
        let (_, console) = self.dom_and_console(&probe);
        assert!(
            console
                .iter()
                .any(|l| l.contains("A negative value is not valid")),
            "the browser's console is not read: {console:?}"
        );
    }
}

/// Keep the report and its screenshot where `SYSGAUGE_KEEP_REPORT` says.
fn keep_report(html: &Path, shot: &Path, prefix: &str) {
    if let Some(dir) = std::env::var_os("SYSGAUGE_KEEP_REPORT") {
        let dir = PathBuf::from(dir);
        let _ = std::fs::copy(shot, dir.join(format!("{prefix}.png")));
        let _ = std::fs::copy(html, dir.join(format!("{prefix}.html")));
    }
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let sb = Sandbox::new();
    assert!(import(
        &sb,
        &[
            csv_fixture("three-hosts.csv"),
            csv_fixture("repeated-samples-crlf.csv")
        ]
    )
    .status
    .success());
    let html = sb.path().join("report.html");
    sb.cmd()
        .arg("report")
        .arg(&html)
        .args(["--db"])
        .arg(sb.db())
        .args(["hostx", "hosta", "hostb", "pi", "--reference", "hostx"])
        .succeeds();
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(!text.contains("<script") && !text.contains("<link"));
    // No machine here has sweep or latency results: no such sections.
    assert!(!text.contains("chart-sweep") && !text.contains("chart-latency"));

    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    // The DOM after the page has loaded: every section and chart is there.
    let (dom, console) = browser.dom_and_console(&html);
    assert_eq!(console, Vec::<String>::new(), "console messages");
    for id in [
        "facts",
        "summary",
        "cases",
        "family-hash",
        "family-other",
        "missing",
        "method",
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing from the DOM"
        );
    }
    assert!(dom.contains("data-chart=\"summary\""));
    assert!(dom.contains("data-chart=\"ratios-hash\""));
    assert!(dom.contains("data-chart=\"ratios-other\""));
    assert!(
        dom.matches("<svg").count() >= 3,
        "charts missing from the DOM"
    );
    assert!(dom.contains("0.625") && dom.contains("hostx"));
    // The cases some machines lack: a collapsed list per family, its
    // summary line in the page and its cases in the DOM.
    let missing = dom
        .split("<section id=\"missing\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap_or_else(|| panic!("no missing section in the DOM"));
    assert!(
        missing.contains("<details class=\"missing\" data-family=\"hash\">"),
        "{missing}"
    );
    assert!(!missing.contains(" open>"), "collapsed: {missing}");
    assert!(
        missing.contains("<summary>hash: ") && missing.contains("<li>hash.md5 throughput"),
        "{missing}"
    );
    let shot = sb.path().join("report.png");
    browser.screenshot(&html, &shot);
    keep_report(&html, &shot, "report");
}

/// Run a command with a time limit; the child is killed if it overruns.
fn run_bounded(mut cmd: std::process::Command, limit: std::time::Duration) -> std::process::Output {
    use std::process::Stdio;
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the browser: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; the pid is our
            // own child, which has not been reaped (wait has not returned).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
            panic!("the browser did not finish within {limit:?}");
        }
    }
}

/// `sysgauge chart CSV OPTIONS FILE`: the chart `options` ask for, of the
/// results in `csv`, written to `file`.
fn chart(sb: &Sandbox, csv: &Path, options: &[&str], file: &Path) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.arg("chart").arg(csv).args(options).arg(file);
    c
}

#[test]
fn charts_as_png_and_svg() {
    let sb = Sandbox::new();
    let csv = csv_fixture("three-hosts.csv");
    let png = sb.path().join("summary.png");
    chart(&sb, &csv, &["--reference", "hostx", "--png"], &png).succeeds();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let svg = sb.path().join("ratios.svg");
    let ratios = ["--kind", "ratios", "--family", "other", "--svg"];
    chart(&sb, &csv, &ratios, &svg).succeeds();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("dd-zero"));
    // No block-size data in this CSV: a clear error, no file.
    let none = sb.path().join("none.svg");
    let block_size = ["--kind", "block-size", "--family", "other", "--svg"];
    let out = chart(&sb, &csv, &block_size, &none).exits_with(2);
    assert!(stderr_of(&out).contains("block_size"));
    assert!(!none.exists());
}

/// Two machines' runs built here and written as one sysgauge JSON file,
/// as `results export --format json` writes them: `fastbox` (sweep at
/// N = 64, 128, 256; latency at five working sets; L2 2 MiB) and `slowbox`
/// (N = 64, 128 only; latency at three; L2 1 MiB), both with dd and
/// sha256sum at 1 and 64 copies and crypto.aes-128-cbc at openssl's block
/// sizes.
fn built_machines(dir: &Path, hosts: &[&str]) -> PathBuf {
    use sysgauge_core::host::CacheInfo;
    use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, RunStatus, Status};
    use sysgauge_core::{Better, Unit};
    let metric = |name: &str, unit: Unit, better: Better, v: f64| {
        Metric::new(name, unit, better, vec![v, v * 1.01, v * 0.99]).unwrap()
    };
    let machine = |host: &str| -> RunRecord {
        let (speed, ns, l2) = match host {
            "fastbox" => (2.0, vec![1.0, 1.5, 4.0, 20.0, 80.0], 2u64 << 20),
            _ => (1.0, vec![2.0, 9.0, 150.0], 1 << 20),
        };
        let mut results = Vec::new();
        for n in [64u64, 128, 256]
            .into_iter()
            .take(if speed > 1.0 { 3 } else { 2 })
        {
            for (program, base) in [("dd", 900.0), ("sha256sum", 300.0)] {
                for copies in [1u64, 64] {
                    let mbps = base
                        * speed
                        * if copies == 1 { 0.5 } else { 1.0 }
                        * (1.0 + n as f64 / 1000.0);
                    results.push(ResultRecord::new(
                        &format!("sweep.{program}"),
                        Params::new()
                            .with("copies", copies)
                            .with("iterations", n)
                            .with("data", "words"),
                        Status::Ok,
                        vec![
                            metric("throughput", Unit::MBps, Better::Higher, mbps),
                            metric("wall_time", Unit::Seconds, Better::Lower, n as f64 / mbps),
                        ],
                    ));
                }
            }
        }
        for (ws, ns) in [4096u64, 64 << 10, 1 << 20, 16 << 20, 64 << 20]
            .iter()
            .zip(&ns)
        {
            results.push(ResultRecord::new(
                "mem.latency",
                Params::new()
                    .with("working_set", *ws)
                    .with("huge_pages", true),
                Status::Ok,
                vec![metric("latency", Unit::Nanoseconds, Better::Lower, *ns)],
            ));
        }
        let version = sysgauge_registry::workload_version_of("crypto.aes-128-cbc");
        for (i, bs) in [16u64, 64, 256, 1024, 8192, 16384].iter().enumerate() {
            results.push(ResultRecord {
                workload_version: version,
                ..ResultRecord::new(
                    "crypto.aes-128-cbc",
                    Params::new().with("block_size", *bs).with("threads", 1u64),
                    Status::Ok,
                    vec![metric(
                        "throughput",
                        Unit::MBps,
                        Better::Higher,
                        (400.0 + 100.0 * i as f64) * speed,
                    )],
                )
            });
        }
        let mut run = RunRecord::new(&format!("00000000-0000-4000-8000-{host:0>12}"), "run", "0");
        run.status = RunStatus::Complete;
        run.finished_at = Some(run.started_at);
        run.host.hostname = Some(host.to_string());
        run.host.cpu.caches = [(1, "data", 48u64 << 10), (2, "unified", l2)]
            .into_iter()
            .map(|(level, kind, size_bytes)| CacheInfo {
                level,
                kind: kind.to_string(),
                size_bytes,
                shared_by: None,
                instances: None,
            })
            .collect();
        run.results = results;
        run
    };
    let runs: Vec<RunRecord> = hosts.iter().map(|h| machine(h)).collect();
    let file = dir.join(format!("{}.json", hosts.join("-")));
    std::fs::write(&file, serde_json::to_string_pretty(&runs).unwrap()).unwrap();
    file
}

#[test]
fn sweep_and_latency_charts_across_machines() {
    use sysgauge_report::chart::lines::{svg_lines_of, svg_texts};
    let sb = Sandbox::new();
    let both = built_machines(sb.path(), &["fastbox", "slowbox"]);
    let svg_of = |options: &[&str]| -> String {
        let file = sb.path().join("chart.svg");
        let _ = std::fs::remove_file(&file);
        chart(&sb, &both, options, &file).succeeds();
        std::fs::read_to_string(&file).unwrap()
    };
    // The sweep: a chart per program, a line per machine and copy count.
    let svg = svg_of(&["--kind", "sweep", "--svg"]);
    assert_eq!(
        svg_lines_of(&svg, 0),
        4,
        "fastbox: dd and sha256sum, ×1 and ×64"
    );
    assert_eq!(svg_lines_of(&svg, 1), 4, "slowbox: the same");
    let texts = svg_texts(&svg);
    // N from 64 to 256: a linear axis.
    for t in [
        "fastbox",
        "slowbox",
        "dd",
        "sha256sum",
        "64 copies",
        "100",
        "200",
    ] {
        assert!(texts.contains(&t), "no {t} in {texts:?}");
    }
    // One program.
    let svg = svg_of(&["--kind", "sweep", "--program", "sha256sum", "--svg"]);
    assert_eq!((svg_lines_of(&svg, 0), svg_lines_of(&svg, 1)), (2, 2));
    assert!(!svg_texts(&svg).contains(&"dd"));
    // Latency: one line each, the L2s differ, so each is marked.
    let svg = svg_of(&["--kind", "latency", "--svg"]);
    assert_eq!((svg_lines_of(&svg, 0), svg_lines_of(&svg, 1)), (1, 1));
    let texts = svg_texts(&svg);
    for t in ["L1d 48 KiB", "L2 2 MiB", "L2 1 MiB", "4 KiB", "64 MiB"] {
        assert!(texts.contains(&t), "no {t} in {texts:?}");
    }
    // PNG, and a single machine is enough.
    let one = built_machines(sb.path(), &["slowbox"]);
    for (kind, file) in [("sweep", &both), ("latency", &one)] {
        let png = sb.path().join(format!("{kind}.png"));
        chart(
            &sb,
            file,
            &["--kind", kind, "--width", "800", "--png"],
            &png,
        )
        .succeeds();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{kind}");
        let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        assert_eq!(w, 800);
        if let Some(dir) = std::env::var_os("SYSGAUGE_KEEP_REPORT") {
            let _ = std::fs::copy(&png, PathBuf::from(dir).join(format!("{kind}.png")));
        }
    }
}

#[test]
fn sweep_and_latency_chart_errors() {
    let sb = Sandbox::new();
    let csv = csv_fixture("three-hosts.csv");
    let both = built_machines(sb.path(), &["fastbox", "slowbox"]);
    let file = sb.path().join("none.png");
    let cases: Vec<(&Path, Vec<&str>, &str)> = vec![
        (
            &csv,
            vec!["--kind", "sweep"],
            "no sweep results in these runs: run `sysgauge sweep`",
        ),
        (
            &csv,
            vec!["--kind", "latency"],
            "no mem.latency results in these runs: run `sysgauge mem --only latency`",
        ),
        (
            &both,
            vec!["--kind", "sweep", "--program", "b2sum"],
            "no program 'b2sum' in these runs (there are: dd, sha256sum)",
        ),
        (
            &both,
            vec!["--kind", "latency", "--program", "dd"],
            "--program selects the charts of --kind sweep; --kind latency has one chart",
        ),
        (
            &csv,
            vec!["--kind", "ratios", "--program", "dd"],
            "--program selects the charts of --kind sweep; --kind ratios has none",
        ),
        (
            &both,
            vec!["--kind", "sweep", "--family", "hash"],
            "--kind sweep draws its own family's results; --family does not apply",
        ),
    ];
    for (input, mut options, want) in cases {
        options.push("--png");
        let out = chart(&sb, input, &options, &file).exits_with(2);
        let err = stderr_of(&out);
        assert!(err.contains(want), "{options:?}: wanted {want:?} in {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!file.exists(), "{options:?} wrote a file");
    }
    // An unknown kind is a usage error naming the kinds there are.
    let out = chart(&sb, &both, &["--kind", "pie", "--png"], &file).exits_with(2);
    let err = stderr_of(&out);
    assert_eq!(
        err.trim_end(),
        "sysgauge: error: invalid value 'pie' for '--kind <KIND>' (possible values: summary, ratios, block-size, sweep, latency, net-loss, net-rtt, net-tcp, net-udp)"
    );
    assert!(!file.exists());
}

/// The report of a machine measured here (a real tiny sweep), two built
/// machines imported from a JSON file and one imported `openssl speed`
/// table: the sweep, latency and crypto block-size figures are there, one
/// line per machine that has the data, and Chromium renders it without a
/// console message.
#[test]
fn report_across_measured_and_imported_machines_renders_in_chromium() {
    use sysgauge_report::chart::lines::svg_lines_of;
    for program in ["sha256sum", "dd"] {
        if !sysgauge_testkit::require(
            &format!("{program} is not installed"),
            sysgauge_core::bench::find_program(program).is_some(),
            "apt-get install coreutils",
        ) {
            return;
        }
    }
    let sb = Sandbox::new();
    sb.tiny("sweep")
        .args(["--program", "sha256sum,dd"])
        .succeeds();
    let host = sb.listed_runs()[0]["host"].as_str().unwrap().to_string();
    import(&sb, &[built_machines(sb.path(), &["fastbox", "slowbox"])]);
    sb.on_db("import")
        .args(["--host", "pasted-table"])
        .arg(openssl_fixture("3.0-human-table-with-progress-lines.txt"))
        .succeeds();
    let html = sb.path().join("machines.html");
    sb.on_db("report")
        .arg(&html)
        .args([host.as_str(), "fastbox", "slowbox", "pasted-table"])
        .args(["--reference", "fastbox"])
        .succeeds();
    let text = std::fs::read_to_string(&html).unwrap();
    let figure = |name: &str| -> &str {
        let at = text
            .find(&format!("data-chart=\"{name}\""))
            .unwrap_or_else(|| panic!("no {name} figure"));
        let end = text[at..].find("</figure>").unwrap_or(text.len() - at);
        &text[at..at + end]
    };
    // Machines 0 (measured here), 1 and 2 (built) have sweeps; the openssl
    // table (3) has none. The tiny sweep: dd and sha256sum at K = 1 and 4.
    let sweep = figure("sweep");
    assert_eq!(
        (0..4).map(|m| svg_lines_of(sweep, m)).collect::<Vec<_>>(),
        [4, 4, 4, 0]
    );
    let latency = figure("latency");
    assert_eq!(
        (0..4).map(|m| svg_lines_of(latency, m)).collect::<Vec<_>>(),
        [0, 1, 1, 0]
    );
    // aes-128-cbc by block size: the built machines and the openssl table.
    let crypto = figure("block-size-crypto");
    assert!(crypto.contains("crypto.aes-128-cbc threads=1 throughput"));
    assert_eq!(
        (0..4).map(|m| svg_lines_of(crypto, m)).collect::<Vec<_>>(),
        [0, 1, 1, 1]
    );
    for id in ["chart-sweep", "chart-latency"] {
        assert!(
            text.contains(&format!("<a href=\"#{id}\">")),
            "no link to {id}"
        );
    }
    // A report of one family has that family's figures only.
    let crypto = sb.path().join("crypto.html");
    sb.on_db("report")
        .arg(&crypto)
        .args(["fastbox", "slowbox", "pasted-table", "--family", "crypto"])
        .succeeds();
    let only = std::fs::read_to_string(&crypto).unwrap();
    assert!(only.contains("data-chart=\"block-size-crypto\""));
    assert!(!only.contains("chart-sweep") && !only.contains("chart-latency"));

    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    browser.assert_console_is_read(sb.path());
    let (dom, console) = browser.dom_and_console(&html);
    assert_eq!(console, Vec::<String>::new(), "console messages");
    for id in [
        "chart-sweep",
        "chart-latency",
        "family-crypto",
        "family-sweep",
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing from the DOM"
        );
    }
    assert!(dom.contains("data-chart=\"sweep\"") && dom.contains("fastbox"));
    let shot = sb.path().join("machines.png");
    browser.screenshot(&html, &shot);
    keep_report(&html, &shot, "machines");
}

#[test]
fn run_summary_ends_with_the_index_and_baseline_commands_work() {
    let sb = Sandbox::new();
    let out = sb.tiny_run().args(["--only", "hash.sha256"]).succeeds();
    let text = stdout_of(&out);
    let at = text
        .find("Index (1000 = the reference machine of baseline v")
        .unwrap_or_else(|| panic!("no index in {text}"));
    let index = &text[at..];
    assert!(index.lines().any(|l| l.starts_with("hash ")), "{index}");
    assert!(index.lines().any(|l| l.starts_with("overall ")), "{index}");

    let show = sb.cmd().args(["baseline", "show", "--json"]).succeeds();
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert!(v["version"].as_u64().unwrap_or(0) >= 1);
    assert_eq!(v["stale"], serde_json::json!([]));
    let quiet = v["quiet"]["cases"].as_array().map_or(0, Vec::len);
    assert!(quiet > 50, "every reference case is judged: {}", v["quiet"]);
    let text = stdout_of(&sb.cmd().args(["baseline", "show"]).succeeds());
    assert!(
        text.contains("How quiet the recording was") && text.contains("others' CPUs"),
        "{text}"
    );

    // A tiny debug run is refused as a baseline unless forced.
    let make = |extra: &[&str]| {
        sb.cmd()
            .args(["baseline", "make", "--db"])
            .arg(sb.db())
            .args(["1", "--machine", "test box"])
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = make(&[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr_of(&refused).contains("quick, standard profiles"),
        "{}",
        stderr_of(&refused)
    );
    let file = sb.path().join("reference.json");
    // A run measured beside other work is refused, naming its cases; a
    // quiet machine's tiny run (one round) passes.
    let noisy = make(&["--force", "-o", file.to_str().unwrap_or("x")]);
    if !noisy.status.success() {
        let err = stderr_of(&noisy);
        assert_eq!(noisy.status.code(), Some(2), "{err}");
        assert!(
            err.contains("measured on a noisy machine")
                && err.contains("hash.sha256")
                && err.contains("--allow-noisy"),
            "{err}"
        );
    }
    let forced = make(&[
        "--force",
        "--allow-noisy",
        "--version",
        "7",
        "-o",
        file.to_str().unwrap_or("x"),
    ]);
    assert!(forced.status.success(), "{}", stderr_of(&forced));
    let b = sysgauge_registry::baseline::parse(&std::fs::read_to_string(&file).unwrap_or_default())
        .unwrap();
    assert_eq!((b.version, b.machine.as_str()), (7, "test box"));
    assert!(b.recorded_with.starts_with("sysgauge "));
}

#[test]
fn a_host_is_all_of_its_runs_and_a_run_can_be_pinned() {
    let sb = Sandbox::new();
    sb.tiny_run().args(["--only", "hash.md5"]).succeeds();
    sb.tiny_run().args(["--only", "hash.sha256"]).succeeds();
    let v = sb.listed_runs();
    let host = v[0]["host"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let latest = v[0]["run_id"].as_str().unwrap_or("").to_string();
    let out = sb
        .on_db("compare")
        .args([host.as_str(), "1", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.machines.len(), 2);
    // The host is both runs: md5 from run 1, sha256 from run 2.
    assert_eq!(c.machines[0].run_id, latest, "the newest run heads it");
    let refs: Vec<&str> = c.machines[0]
        .runs
        .iter()
        .map(|r| r.reference.as_str())
        .collect();
    assert_eq!(refs, ["2", "1"]);
    assert_eq!(c.machines[0].label, host);
    assert_eq!(c.machines[1].label, format!("{host} (run 1)"));
    let md5 = c
        .rows
        .iter()
        .find(|r| r.bench_id == "hash.md5")
        .unwrap_or_else(|| panic!("no md5 row"));
    assert_eq!(
        md5.cells[0].as_ref().and_then(|c| c.run.as_deref()),
        Some("1")
    );
    let text = stdout_of(
        &sb.on_db("compare")
            .args([host.as_str()])
            .arg("1")
            .succeeds(),
    );
    assert!(text.contains("Machines:"), "{text}");
    assert!(
        text.contains("2 (") && text.contains("run (tiny)"),
        "{text}"
    );
    // NAME@RUN pins one run; the same run named twice is one machine.
    let out = sb
        .on_db("compare")
        .args([
            format!("{host}@2"),
            "1".to_string(),
            "--format".into(),
            "json".into(),
        ])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.machines[0].runs.len(), 1);
    assert_eq!(c.machines[0].run_id, latest);
    let out = sb
        .on_db("compare")
        .args(["2", &format!("{host}@2")])
        .exits_with(2);
    assert!(stderr_of(&out).contains("at least two machines"));
    let out = sb
        .on_db("compare")
        .args([format!("{host}@9"), "1".into()])
        .exits_with(2);
    assert!(
        stderr_of(&out).contains("has no run '9'"),
        "{}",
        stderr_of(&out)
    );
}

/// Runs labelled `A` and `B` are compared as `A` and `B`; fleet hosts
/// that share a host name and a machine-id (cloned VMs, a namespace lab)
/// but have inventory names `h1`, `h2` are compared as `h1` and `h2`.
#[test]
fn names_users_gave_are_the_machines_names() {
    let sb = Sandbox::new();
    sb.tiny_run()
        .args(["--only", "hash.md5", "--label", "A"])
        .succeeds();
    sb.tiny_run()
        .args(["--only", "hash.md5", "--label", "B"])
        .succeeds();
    let text = stdout_of(&sb.on_db("compare").args(["A", "B"]).succeeds());
    assert!(text.contains("Reference: A."), "{text}");
    let header = text
        .lines()
        .find(|l| l.starts_with("benchmark"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        header.contains(" A ") && header.contains("B ratio"),
        "{header}"
    );

    // Two fleet hosts of one image: same host name, same machine-id.
    let record = sb.tiny_run_record("hash.md5");
    let mut files = Vec::new();
    for (alias, id) in [
        ("h1", "6f9c0a52-0000-4000-8000-000000000001"),
        ("h2", "6f9c0a52-0000-4000-8000-000000000002"),
    ] {
        let mut r = record.clone();
        r.run_id = id.to_string();
        r.host.hostname = Some("lab".into());
        r.host.identity.machine_id = Some("0123456789abcdef0123456789abcdef".into());
        r.label = None;
        r.tags.insert("alias".into(), alias.into());
        let f = sb.path().join(format!("{alias}.json"));
        std::fs::write(&f, serde_json::to_vec(&r).unwrap()).unwrap();
        files.push(f);
    }
    let out = import(&sb, &files);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = sb
        .on_db("compare")
        .args(["h1", "h2", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["h1", "h2"]);
    let text = stdout_of(&sb.on_db("compare").args(["h1", "h2"]).succeeds());
    assert!(
        text.contains("Reference: h1.") && text.contains("h2 ratio"),
        "{text}"
    );
    // The host name names both lab machines.
    let out = sb
        .on_db("compare")
        .args(["lab", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    let mut labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    labels.sort_unstable();
    assert_eq!(labels, ["h1", "h2"]);
}

/// One machine's outputs of three tools, imported with one `--host` as
/// three files, are one machine in `compare`: the nbench, openssl and
/// Bonnie++ rows all show, and none of Bonnie++'s `%CP` or latency rows
/// count in a family mean.
#[test]
fn three_tools_of_one_host_compare_whole() {
    let sb = Sandbox::new();
    let fixture = |dir: &str, name: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../sysgauge-bench/tests/fixtures")
            .join(dir)
            .join(name)
    };
    let files = [
        openssl_fixture("3.0-sha256-md5-8k.txt"),
        fixture("nbench", "linux-port-x86_64.txt"),
        fixture("bonnie", "2.00a-1G-n4.txt"),
    ];
    for host in ["rpi1", "rpi2"] {
        for f in &files {
            let out = sb
                .on_db("import")
                .args(["--host", host])
                .arg(f)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr_of(&out));
        }
    }
    let out = sb
        .on_db("compare")
        .args(["rpi1", "rpi2", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&out.stdout).unwrap();
    // openssl speed's digests are the hash family's cases.
    for family in ["hash", "nbench", "bonnie"] {
        assert!(
            c.rows.iter().any(|r| r.family == family),
            "no {family} row: {:?}",
            c.rows.iter().map(|r| &r.bench_id).collect::<Vec<_>>()
        );
    }
    assert_eq!(c.machines[0].runs.len(), 3);
    let secondary: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| !r.headline)
        .map(|r| r.metric.as_str())
        .collect();
    assert!(!secondary.is_empty(), "Bonnie++'s %CP rows are secondary");
    // Every mean counts headline rows only.
    for g in c.families.iter().chain(std::iter::once(&c.overall)) {
        let headline = c
            .rows
            .iter()
            .filter(|r| r.headline && (g.family == "all" || r.family == g.family))
            .filter(|r| r.cells[1].as_ref().and_then(|x| x.ratio).is_some())
            .count();
        assert_eq!(g.cells[1].cases, headline, "{}", g.family);
    }
}

/// A host name with an escape sequence, a bell and markup, from a CSV:
/// `import` and `results list` print it escaped, and the SVG chart holds
/// no control character and no raw markup from it.
#[test]
fn foreign_host_names_reach_no_terminal_or_svg_raw() {
    let sb = Sandbox::new();
    let csv = sb.path().join("evil.csv");
    std::fs::write(
        &csv,
        "host,benchmark,metric,value,unit\n\
         hostx,hash.sha256,throughput,80,MB/s\n\
         \"ev\u{1b}]0;pwned\u{7}<b>il\",hash.sha256,throughput,40,MB/s\n",
    )
    .unwrap();
    let out = import(&sb, std::slice::from_ref(&csv));
    assert!(out.status.success(), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("ev\\u{1b}]0;pwned\\u{7}<b>il"), "{err}");
    let out = sb.on_db("results").arg("list").output().unwrap();
    let list = stdout_of(&out);
    assert!(list.contains("ev\\u{1b}]0;pwned"), "{list}");
    assert!(
        !list.chars().any(|c| c.is_control() && c != '\n'),
        "{list:?}"
    );
    let svg = sb.path().join("evil.svg");
    chart(&sb, &csv, &["--reference", "hostx", "--svg"], &svg).succeeds();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(!text.contains("<b>"), "raw markup in the SVG");
    assert!(text.contains("&lt;b&gt;il"), "the label is missing");
    let bad = text
        .chars()
        .find(|&c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'));
    assert_eq!(bad, None);
}

/// A fleet of imported hosts in two racks (a run tag) and two CPU models:
/// `compare --group-by` gives each case's median per group and names the
/// one host far below its rack; `report --group-by` has the section; a bad
/// grouping is a usage error.
#[test]
fn fleet_groups_medians_and_the_host_that_stands_out() {
    use sysgauge_core::record::{Metric, Params, ResultRecord, RunRecord, RunStatus, Status};
    use sysgauge_core::{Better, Unit};
    let sb = Sandbox::new();
    let hosts = [
        ("r1-a", "r1", "CPU A", 1000.0),
        ("r1-b", "r1", "CPU A", 1010.0),
        ("r1-c", "r1", "CPU B", 990.0),
        ("r1-d", "r1", "CPU B", 600.0),
        ("r2-a", "r2", "CPU A", 2000.0),
        ("r2-b", "r2", "CPU A", 2020.0),
        ("r2-c", "r2", "CPU B", 1980.0),
    ];
    let runs: Vec<RunRecord> = hosts
        .iter()
        .map(|(host, rack, cpu, v)| {
            let mut r = RunRecord::new(&format!("fleet-{host}"), "run", "0.1.0");
            r.status = RunStatus::Complete;
            r.host.hostname = Some(host.to_string());
            r.host.cpu.model = Some(cpu.to_string());
            r.tags.insert("rack".into(), rack.to_string());
            r.results.push(ResultRecord::new(
                "probe.copy",
                Params::new().with("size", 4096u64),
                Status::Ok,
                vec![Metric::new(
                    "throughput",
                    Unit::MBps,
                    Better::Higher,
                    vec![*v, v * 1.001, v * 0.999],
                )
                .unwrap()],
            ));
            r
        })
        .collect();
    let file = sb.path().join("fleet.json");
    std::fs::write(&file, serde_json::to_string(&runs).unwrap()).unwrap();
    sb.on_db("import").arg(&file).succeeds();

    // Every stored host (none named), grouped by the rack tag.
    let out = sb
        .on_db("compare")
        .args(["--group-by", "tag:rack"])
        .succeeds();
    let text = stdout_of(&out);
    assert!(
        text.starts_with("7 hosts in 2 groups by tag:rack."),
        "{text}"
    );
    let medians = text
        .lines()
        .find(|l| l.starts_with("probe.copy"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(medians.contains("995.0 (600.0–1010.0, n=4)"), "{medians}");
    assert!(medians.contains("2000.0 (1980.0–2020.0, n=3)"), "{medians}");
    let outliers: Vec<&str> = text.lines().filter(|l| l.starts_with("r1-d ")).collect();
    assert_eq!(outliers.len(), 1, "{text}");
    assert!(
        outliers[0].contains("r1") && outliers[0].contains("worse"),
        "{}",
        outliers[0]
    );
    assert!(text.contains("Outlying cases per host: r1-d (1)"), "{text}");

    // By CPU model, as the JSON document: no host stands out there (each
    // CPU model spans both racks, so each group's spread is wide).
    let out = sb
        .on_db("compare")
        .args(["--group-by", "cpu", "--format", "json"])
        .succeeds();
    let g: sysgauge_compare::FleetGroups = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(g.group_by, "cpu");
    let names: Vec<(&str, usize)> = g
        .groups
        .iter()
        .map(|h| (h.name.as_str(), h.hosts.len()))
        .collect();
    assert_eq!(names, [("CPU A", 4), ("CPU B", 3)]);
    assert!(g.outliers.is_empty(), "{:?}", g.outliers);

    let html = sb.path().join("fleet.html");
    sb.on_db("report")
        .arg(&html)
        .args(["--group-by", "tag:rack"])
        .succeeds();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Hosts grouped by tag:rack</h2>"));
    assert!(page.contains("<td>r1-d</td>"), "the outlier row");

    // The whole fleet as one Prometheus textfile, written whole.
    let prom = sb.path().join("sysgauge.prom");
    sb.on_db("results")
        .args(["export", "--format", "prometheus", "-o"])
        .arg(&prom)
        .succeeds();
    let text = std::fs::read_to_string(&prom).unwrap();
    let series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("sysgauge_throughput_bytes_per_second{"))
        .collect();
    assert_eq!(series.len(), 7, "{text}");
    let r1d = series
        .iter()
        .find(|l| l.contains("host=\"r1-d\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        r1d.contains("id=\"probe.copy\",params=\"size=4096\""),
        "{r1d}"
    );
    assert!(r1d.ends_with(" 600000000"), "{r1d}");
    assert_eq!(
        text.matches("# TYPE sysgauge_throughput_bytes_per_second gauge")
            .count(),
        1
    );
    let names: Vec<String> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains("prom"))
        .collect();
    assert_eq!(names, ["sysgauge.prom"], "no temporary file is left");
    // Other formats need a run named.
    let out = sb
        .on_db("results")
        .args(["export", "--format", "csv"])
        .exits_with(2);
    assert!(
        stderr_of(&out).contains("name the run to export"),
        "{}",
        stderr_of(&out)
    );

    let out = sb
        .on_db("compare")
        .args(["--group-by", "tag:"])
        .exits_with(2);
    assert!(
        stderr_of(&out).contains("'tag:' is not a grouping (group, cpu, arch or tag:NAME)"),
        "{}",
        stderr_of(&out)
    );
}

/// `results history`: a machine's runs oldest first with their index and
/// the change between runs; a renamed machine (same machine-id) keeps its
/// history; another machine with the same host name is not merged in.
#[test]
fn history_follows_a_machine_through_a_rename() {
    let sb = Sandbox::new();
    let (template, _) = sb.tiny_unstored_run("hash.sha256");
    let variant = |n: u32, host: &str, machine_id: &str, speed: f64| {
        let mut r = template.clone();
        r.run_id = format!("00000000-0000-4000-8000-00000000000{n}");
        r.started_at = template.started_at - chrono::Duration::days(10 - i64::from(n));
        r.finished_at = Some(r.started_at + chrono::Duration::minutes(1));
        r.host.hostname = Some(host.to_string());
        r.host.identity.machine_id = Some(machine_id.to_string());
        for res in &mut r.results {
            for m in &mut res.metrics {
                for s in &mut m.samples {
                    *s *= speed;
                }
                m.summary = sysgauge_core::Summary::from_samples(&m.samples).unwrap();
            }
        }
        r
    };
    let mine = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
    let runs = vec![
        variant(1, "old-name", mine, 1.0),
        variant(2, "old-name", mine, 1.0),
        variant(3, "new-name", mine, 0.5),
        variant(4, "old-name", "ffffffffffffffffffffffffffffffff", 1.0),
    ];
    let file = sb.path().join("history.json");
    std::fs::write(&file, serde_json::to_string(&runs).unwrap()).unwrap();
    sb.on_db("import").arg(&file).succeeds();

    let out = sb
        .on_db("results")
        .args(["history", "new-name", "--json"])
        .succeeds();
    let entries: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = entries.as_array().unwrap();
    let hosts: Vec<&str> = entries
        .iter()
        .map(|e| e["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["old-name", "old-name", "new-name"]);
    let overall: Vec<f64> = entries
        .iter()
        .map(|e| e["index"]["overall"]["index"].as_f64().unwrap())
        .collect();
    assert!((overall[1] / overall[0] - 1.0).abs() < 1e-9, "{overall:?}");
    assert!((overall[2] / overall[1] - 0.5).abs() < 1e-6, "{overall:?}");
    assert!(entries[0]["change"].is_null());
    let change = entries[2]["change"].as_f64().unwrap();
    assert!((change + 0.5).abs() < 1e-6, "{change}");
    assert_eq!(entries[2]["significant"], true);

    // The same history by machine-id; the table marks the drop.
    let out = sb.on_db("results").args(["history", &mine[..8]]).succeeds();
    let text = stdout_of(&out);
    let last = text
        .lines()
        .find(|l| l.contains("new-name"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(last.contains("-50.0 % *"), "{last}");
    assert!(
        text.lines().next().unwrap().trim_end().ends_with("hash"),
        "{text}"
    );

    // `old-name` is two machines now: the command asks which.
    let out = sb
        .on_db("results")
        .args(["history", "old-name"])
        .exits_with(2);
    let err = stderr_of(&out);
    assert!(err.contains("'old-name' names 2 machines"), "{err}");
}

/// A CSV of two machines where one has many more cases: `compare` sums the
/// cases the other lacks up in one line per family, lists them with
/// `--verbose` and always in JSON; the report collapses them.
#[test]
fn missing_cases_are_summed_up_unless_verbose() {
    let sb = Sandbox::new();
    let mut csv = String::from("host,benchmark,metric,value,unit,better,params\n");
    for host in ["big", "small"] {
        csv.push_str(&format!("{host},hash.sha256,throughput,80,MB/s,higher,\n"));
    }
    for n in 1..=40 {
        csv.push_str(&format!(
            "big,tool.read,throughput,{n},MB/s,higher,size={n}\n"
        ));
        if n <= 3 {
            csv.push_str(&format!(
                "small,tool.read,throughput,{n},MB/s,higher,size={n}\n"
            ));
        }
    }
    for n in 1..=4 {
        csv.push_str(&format!("small,other.x,time,{n},s,,n={n}\n"));
    }
    let file = sb.path().join("two.csv");
    std::fs::write(&file, csv).unwrap();
    assert!(import(&sb, std::slice::from_ref(&file)).status.success());

    let text = stdout_of(&sb.on_db("compare").args(["big", "small"]).succeeds());
    let section = text
        .split("Cases not on every machine (--verbose lists each case):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary:\n{text}"));
    let lines: Vec<&str> = section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(
        lines,
        [
            "  tool: 37 cases only on big",
            "  other: 4 cases only on small"
        ],
        "{text}"
    );
    assert!(!text.contains("tool.read size="), "{text}");

    let verbose = stdout_of(
        &sb.on_db("compare")
            .args(["big", "small", "--verbose"])
            .succeeds(),
    );
    assert!(
        verbose.contains("Cases not on every machine:\n"),
        "{verbose}"
    );
    assert_eq!(
        verbose.matches("\n  tool.read size=").count(),
        37,
        "{verbose}"
    );
    assert_eq!(verbose.matches("\n  other.x n=").count(), 4, "{verbose}");

    let md = stdout_of(
        &sb.on_db("compare")
            .args(["big", "small", "--format", "md"])
            .succeeds(),
    );
    assert!(md.contains("\n- tool: 37 cases only on big\n"), "{md}");
    let csv = stdout_of(
        &sb.on_db("compare")
            .args(["big", "small", "--format", "csv"])
            .succeeds(),
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("missing_cases,tool,,,,,,small,") && l.contains(",37,")),
        "{csv}"
    );
    let csv = stdout_of(
        &sb.on_db("compare")
            .args(["big", "small", "--format", "csv", "-v"])
            .succeeds(),
    );
    assert_eq!(
        csv.lines()
            .filter(|l| l.starts_with("missing,tool,tool.read,size="))
            .count(),
        37
    );

    let json = sb
        .on_db("compare")
        .args(["big", "small", "--format", "json"])
        .succeeds();
    let c: Comparison = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(c.missing.len(), 41);
    assert!(c
        .missing
        .iter()
        .filter(|m| m.family == "tool")
        .all(|m| m.missing_on == ["small"]));

    for (verbose, open) in [(false, 0), (true, 2)] {
        let html = sb.path().join(format!("report-{verbose}.html"));
        let mut cmd = sb.cmd();
        cmd.arg("report")
            .arg(&html)
            .arg("--db")
            .arg(sb.db())
            .args(["big", "small"]);
        if verbose {
            cmd.arg("--verbose");
        }
        cmd.succeeds();
        let text = std::fs::read_to_string(&html).unwrap();
        assert!(text.contains("<summary>tool: 37 cases only on big</summary>"));
        assert_eq!(text.matches("<li>tool.read size=").count(), 37);
        assert_eq!(text.matches("<details class=\"missing\"").count(), 2);
        assert_eq!(text.matches("\" open>\n<summary>").count(), open);
    }
}

/// A machine imported from CSV with sweep rows (the rate alone, as a
/// write-up's table gives it) is drawn beside a sysgauge JSON machine, by
/// `chart --kind sweep` and in the report's sweep section.
#[test]
fn sweep_chart_includes_machines_imported_from_csv() {
    use sysgauge_report::chart::lines::{svg_lines_of, svg_texts};
    let sb = Sandbox::new();
    let json = built_machines(sb.path(), &["fastbox"]);
    let csv = sb.path().join("csvbox.csv");
    let mut text = String::from("host,benchmark,metric,value,unit,better,params\n");
    for n in [64, 128, 256] {
        for (copies, mbps) in [(1, 150), (64, 400)] {
            text.push_str(&format!(
                "csvbox,sweep.sha256sum,throughput,{},MB/s,higher,\"copies={copies} iterations={n} data=words\"\n",
                mbps + n
            ));
        }
    }
    std::fs::write(&csv, text).unwrap();

    let svg = sb.path().join("sweep.svg");
    sb.cmd()
        .arg("chart")
        .arg(&json)
        .arg(&csv)
        .args(["--kind", "sweep", "--svg"])
        .arg(&svg)
        .succeeds();
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        svg_lines_of(&svg, 0),
        4,
        "fastbox: dd and sha256sum, ×1 and ×64"
    );
    assert_eq!(svg_lines_of(&svg, 1), 2, "csvbox: sha256sum, ×1 and ×64");
    let texts = svg_texts(&svg);
    for t in ["fastbox", "csvbox", "sha256sum", "dd"] {
        assert!(texts.contains(&t), "no {t} in {texts:?}");
    }

    let html = sb.path().join("report.html");
    sb.cmd()
        .arg("report")
        .arg(&html)
        .arg(&json)
        .arg(&csv)
        .succeeds();
    let html = std::fs::read_to_string(&html).unwrap();
    let section = html
        .split("<section id=\"chart-sweep\"")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap_or_else(|| panic!("no sweep section"));
    assert_eq!(
        svg_lines_of(section, 1),
        2,
        "csvbox in the report's sweep chart"
    );
    assert!(svg_texts(section).contains(&"csvbox"));
}
