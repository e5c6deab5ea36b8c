//! Machines as users know them: runs of a host, names, tools of one host,
//! groups, history through a rename, baselines and missing cases.

use super::{chart, comparison, import, openssl_fixture};
use crate::common::{stderr_of, stdout_of, Outcome, Sandbox};
use std::path::PathBuf;

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
    // A version the embedded baseline (or an older one) already carried
    // is refused: indexes under it would not be comparable.
    let embedded = sysgauge_registry::baseline::embedded().unwrap().version;
    let taken = embedded.to_string();
    // Its own output file: the quiet-machine case above may have written `file`.
    let not_written = sb.path().join("reused.json");
    let out = not_written.to_str().unwrap_or("x");
    let reused = make(&["--force", "--allow-noisy", "--version", &taken, "-o", out]);
    assert_eq!(reused.status.code(), Some(2));
    assert!(
        stderr_of(&reused).contains(&format!(
            "--version {embedded} is not above the embedded baseline's version {embedded}"
        )),
        "{}",
        stderr_of(&reused)
    );
    assert!(!not_written.exists());
    // The same run twice is no re-measurement of itself.
    let twice = sb
        .cmd()
        .args(["baseline", "make", "--db"])
        .arg(sb.db())
        .args([
            "1",
            "1",
            "--machine",
            "test box",
            "--force",
            "--allow-noisy",
        ])
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2));
    assert!(
        stderr_of(&twice).contains("run 1 ('1') is named twice"),
        "{}",
        stderr_of(&twice)
    );
    // A bad --version is said before the runs are judged.
    let zero = make(&["--version", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert_eq!(
        stderr_of(&zero).lines().count(),
        1,
        "one line: {}",
        stderr_of(&zero)
    );
    let next = (embedded + 5).to_string();
    let path = file.to_str().unwrap_or("x");
    let forced = make(&["--force", "--allow-noisy", "--version", &next, "-o", path]);
    assert!(forced.status.success(), "{}", stderr_of(&forced));
    let b = sysgauge_registry::baseline::parse(&std::fs::read_to_string(&file).unwrap_or_default())
        .unwrap();
    assert_eq!((b.version, b.machine.as_str()), (embedded + 5, "test box"));
    assert!(b.recorded_with.starts_with("sysgauge "));
}

#[test]
fn a_host_is_all_of_its_runs_and_a_run_can_be_pinned() {
    let sb = Sandbox::new();
    sb.tiny_run().args(["--only", "hash.md5"]).succeeds();
    sb.tiny_run().args(["--only", "hash.sha256"]).succeeds();
    sb.tiny_run().args(["--only", "hash.md5"]).succeeds();
    let v = sb.listed_runs();
    let host = v[0]["host"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let latest = v[0]["run_id"].as_str().unwrap_or("").to_string();
    let second = v[1]["run_id"].as_str().unwrap_or("").to_string();
    let c = comparison(&sb, &[host.as_str(), "1"]);
    assert_eq!(c.machines.len(), 2);
    // The host is its runs but run 1, named on its own beside it: md5
    // from run 3, sha256 from run 2.
    assert_eq!(c.machines[0].run_id, latest, "the newest run heads it");
    let refs: Vec<&str> = c.machines[0]
        .runs
        .iter()
        .map(|r| r.reference.as_str())
        .collect();
    assert_eq!(refs, ["3", "2"]);
    assert_eq!(c.machines[0].label, host);
    assert_eq!(c.machines[1].label, format!("{host} (run 1)"));
    let md5 = c
        .rows
        .iter()
        .find(|r| r.bench_id == "hash.md5")
        .unwrap_or_else(|| panic!("no md5 row"));
    assert_eq!(
        md5.cells[0].as_ref().and_then(|c| c.run.as_deref()),
        Some("3")
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
    let c = comparison(&sb, &[&format!("{host}@2"), "1"]);
    assert_eq!(c.machines[0].runs.len(), 1);
    assert_eq!(c.machines[0].run_id, second);
    sb.on_db("compare")
        .args(["2", &format!("{host}@2")])
        .usage_error("at least two machines");
    sb.on_db("compare")
        .args([format!("{host}@9"), "1".into()])
        .usage_error("has no run '9'");
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
    let c = comparison(&sb, &["h1", "h2"]);
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["h1", "h2"]);
    let text = stdout_of(&sb.on_db("compare").args(["h1", "h2"]).succeeds());
    assert!(
        text.contains("Reference: h1.") && text.contains("h2 ratio"),
        "{text}"
    );
    // The host name names both lab machines.
    let c = comparison(&sb, &["lab"]);
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
    let c = comparison(&sb, &["rpi1", "rpi2"]);
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
            let mut r = RunRecord::new(
                &uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, host.as_bytes()).to_string(),
                "run",
                "0.1.0",
            );
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
    sb.on_db("results")
        .args(["export", "--format", "csv"])
        .usage_error("name the run to export");

    sb.on_db("compare")
        .args(["--group-by", "tag:"])
        .usage_error("'tag:' is not a grouping (group, cpu, arch or tag:NAME)");
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
        // Samples of a steady machine around the real run's median, so
        // the halving is significant whatever load the real run met.
        for res in &mut r.results {
            for m in &mut res.metrics {
                let median = m.summary.median;
                m.samples = [1.0, 1.01, 0.99, 1.0, 1.005, 0.995]
                    .iter()
                    .map(|x| x * median * speed)
                    .collect();
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

    let c = comparison(&sb, &["big", "small"]);
    assert_eq!(c.missing.len(), 41);
    assert!(c
        .missing
        .iter()
        .filter(|m| m.family == "tool")
        .all(|m| m.missing_on(&c.machines) == ["small"] && m.present_on == ["big"]));

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
