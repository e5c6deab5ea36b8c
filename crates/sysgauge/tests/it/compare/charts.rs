//! `chart`: PNG and SVG, sweep and latency charts across machines, and their errors.

use super::{built_machines, chart, csv_fixture, section};
use crate::common::{stderr_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};

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
    // A name that says the other format is refused, not written wrongly.
    let misnamed = sb.path().join("summary.svg");
    let out = chart(&sb, &csv, &["--png"], &misnamed).exits_with(2);
    let want = format!(
        "--png writes PNG data, but {} ends in .svg; give --svg {0}, or a name ending in .png",
        misnamed.display()
    );
    assert!(stderr_of(&out).contains(&want), "{}", stderr_of(&out));
    assert!(!misnamed.exists());
    let upper = sb.path().join("summary.PNG");
    chart(&sb, &csv, &["--svg"], &upper).exits_with(2);
    assert!(!upper.exists());
    // Any other name takes the format the option says.
    let plain = sb.path().join("summary.image");
    chart(&sb, &csv, &["--png"], &plain).succeeds();
    assert_eq!(&std::fs::read(&plain).unwrap()[..4], b"\x89PNG");
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
    let section = section(&html, "chart-sweep");
    assert_eq!(
        svg_lines_of(section, 1),
        2,
        "csvbox in the report's sweep chart"
    );
    assert!(svg_texts(section).contains(&"csvbox"));
}

/// Sixty characters a user gave each machine; the two last differ only
/// at their end.
const LONG_HOSTS: [&str; 3] = [
    "reference build server in the basement rack, bios 2.1 profile",
    "candidate-build-server-in-the-second-basement-rack-profile-07",
    "candidate-build-server-in-the-second-basement-rack-profile-08",
];

/// A CSV of three machines with long labels and long case names, two of
/// them by block size.
fn long_labelled_csv(dir: &Path) -> PathBuf {
    let mut text = String::from("host,benchmark,metric,value,unit,better,params\n");
    for (host, speed) in LONG_HOSTS.iter().zip([1.0, 0.6, 2.5]) {
        for bs in [16u64, 1024, 65536] {
            for (case, base) in [("alpha", 300.0), ("beta", 900.0)] {
                text.push_str(&format!(
                    "\"{host}\",{case}.a-workload-with-a-name-as-long-as-a-command-line,throughput,{},MB/s,higher,\"block_size={bs} threads=1 data=words\"\n",
                    base * speed * (1.0 + bs as f64 / 65536.0)
                ));
            }
        }
        text.push_str(&format!(
            "\"{host}\",gamma.another-long-named-case-of-a-custom-command,time,{},s,lower,\n",
            10.0 / speed
        ));
    }
    let file = dir.join("long-labels.csv");
    std::fs::write(&file, text).unwrap();
    file
}

/// Every text of every chart kind drawn from a comparison or from the
/// machines' own results, at the narrowest width and at a wide one, with
/// machine labels of sixty characters and long case names, lies wholly on
/// the chart and clear of every other text where a browser draws it:
/// headless Chromium loads the SVGs and measures each `<text>` (at 400
/// pixels the summary's title and the ratio chart's case labels ran off
/// the chart).
#[test]
fn chart_texts_are_whole_in_a_browser() {
    use crate::common::Browser;
    let sb = Sandbox::new();
    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    let csv = long_labelled_csv(sb.path());
    let json = built_machines(sb.path(), &LONG_HOSTS[1..]);
    let mut page = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body style=\"margin:0\">\n",
    );
    let mut charts = 0;
    for width in ["400", "1600"] {
        for (input, kind) in [
            (&csv, "summary"),
            (&csv, "ratios"),
            (&csv, "block-size"),
            (&json, "sweep"),
            (&json, "latency"),
        ] {
            let file = sb.path().join(format!("{kind}-{width}.svg"));
            chart(
                &sb,
                input,
                &["--kind", kind, "--width", width, "--svg"],
                &file,
            )
            .succeeds();
            let svg = std::fs::read_to_string(&file).unwrap();
            page.push_str(&format!(
                "<div class=\"chart\" data-name=\"{kind} at {width}\">{svg}</div>\n"
            ));
            charts += 1;
        }
    }
    // Boxes relative to each chart's own corner, in CSS pixels (the SVGs
    // are drawn at their own size: no scaling).
    page.push_str(
        r#"<pre id="boxes"></pre>
<script>
const out = [];
for (const div of document.querySelectorAll("div.chart")) {
  const svg = div.querySelector("svg");
  const c = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll("text")) {
    const text = t.textContent.trim();
    if (!text) continue;
    const b = t.getBoundingClientRect();
    out.push([div.dataset.name, text, b.left - c.left, b.top - c.top,
              b.right - c.left, b.bottom - c.top, c.width, c.height]);
  }
}
document.getElementById("boxes").textContent = JSON.stringify(out);
</script>
</body></html>
"#,
    );
    let html = sb.path().join("charts.html");
    std::fs::write(&html, &page).unwrap();
    let dom = browser.silent_dom(&html);
    let json = dom
        .split("<pre id=\"boxes\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no boxes in {dom}"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    type Box = (String, String, f64, f64, f64, f64, f64, f64);
    let boxes: Vec<Box> = serde_json::from_str(&json).unwrap();
    let drawn: std::collections::BTreeSet<&str> = boxes.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(drawn.len(), charts, "charts with text: {drawn:?}");
    // Every machine's label is there whole, on one line or more.
    for name in &drawn {
        let texts: String = boxes
            .iter()
            .filter(|b| b.0 == *name)
            .flat_map(|b| b.1.split(' '))
            .collect();
        for host in &LONG_HOSTS[1..] {
            let host: String = host.split(' ').collect();
            assert!(texts.contains(&host), "{name}: no {host} in {texts}");
        }
    }
    // Half a pixel for the browser's rounding.
    let e = 0.5;
    let mut faults = Vec::new();
    for (name, text, l, t, r, b, w, h) in &boxes {
        if *l < -e || *t < -e || *r > w + e || *b > h + e {
            faults.push(format!(
                "{name}: {text:?} at {l:.0},{t:.0}..{r:.0},{b:.0} is not inside {w}×{h}"
            ));
        }
    }
    for (i, p) in boxes.iter().enumerate() {
        for q in boxes[i + 1..].iter().filter(|q| q.0 == p.0) {
            if p.2 < q.4 - e && q.2 < p.4 - e && p.3 < q.5 - e && q.3 < p.5 - e {
                faults.push(format!(
                    "{}: {:?} at {:.0},{:.0}..{:.0},{:.0} runs into {:?} at {:.0},{:.0}..{:.0},{:.0}",
                    p.0, p.1, p.2, p.3, p.4, p.5, q.1, q.2, q.3, q.4, q.5
                ));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}
