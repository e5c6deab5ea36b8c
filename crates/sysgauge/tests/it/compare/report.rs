//! The HTML report, rendered in headless Chromium.

use super::{built_machines, csv_fixture, import, openssl_fixture};
use crate::common::{run_bounded, stderr_of, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};

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
