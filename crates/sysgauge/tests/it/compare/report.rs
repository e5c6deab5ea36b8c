//! The HTML report, rendered in headless Chromium.

use super::{built_machines, csv_fixture, import, openssl_fixture, section};
use crate::common::{Browser, Outcome, Sandbox};
use std::path::{Path, PathBuf};

/// Asserts that `dom` has a section with each of `ids`.
fn assert_sections(dom: &str, ids: &[&str]) {
    for id in ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing from the DOM"
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
    let dom = browser.silent_dom(&html);
    assert_sections(
        &dom,
        &[
            "facts",
            "summary",
            "cases",
            "family-hash",
            "family-other",
            "missing",
            "method",
        ],
    );
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
    let missing = section(&dom, "missing");
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
    let dom = browser.silent_dom(&html);
    assert_sections(
        &dom,
        &[
            "chart-sweep",
            "chart-latency",
            "family-crypto",
            "family-sweep",
        ],
    );
    assert!(dom.contains("data-chart=\"sweep\"") && dom.contains("fastbox"));
    let shot = sb.path().join("machines.png");
    browser.screenshot(&html, &shot);
    keep_report(&html, &shot, "machines");
}
