//! Import tests against the CSV fixtures under tests/fixtures/csv.

use super::*;
use crate::comparison::{compare, Machine};

/// A fixture with its benchmark ids moved to a sample family: the fixtures
/// are shared with the binary's tests, which need real ids, while the import
/// logic tested here must not depend on any family.
macro_rules! fixture {
    ($name:literal) => {
        &include_str!(concat!("../../tests/fixtures/csv/", $name)).replace("hash.", "beta.")
    };
}

fn known(id: &str) -> Option<u32> {
    (id == "beta.sha256").then_some(3)
}

fn ctx(name: &str) -> ImportContext<'_> {
    ImportContext {
        source_name: name,
        at: chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap(),
        tool_version: "0.1.0",
        workload_version: &known,
    }
}

fn csv(text: &str, name: &str) -> Vec<RunRecord> {
    parse_csv(text, &ctx(name)).unwrap()
}

fn csv_err(text: &str, name: &str) -> ImportError {
    match parse_csv(text, &ctx(name)) {
        Err(e) => e,
        Ok(r) => panic!("{name} was accepted: {r:?}"),
    }
}

#[test]
fn three_hosts_become_three_runs() {
    let runs = csv(fixture!("three-hosts.csv"), "three-hosts.csv");
    let hosts: Vec<&str> = runs.iter().map(|r| r.host_name()).collect();
    assert_eq!(hosts, ["hostx", "hosta", "hostb"]);
    let x = &runs[0];
    assert_eq!(x.status, RunStatus::Imported);
    assert_eq!(x.command, "import");
    assert_eq!(x.host.cpu.bogomips, Some(5200.0));
    assert_eq!(runs[2].host.cpu.cores, Some(4));
    assert_eq!(x.tags.get("format").map(String::as_str), Some("csv"));
    assert_eq!(x.results.len(), 3);
    let sha = &x.results[0];
    assert_eq!(sha.bench_id, "beta.sha256");
    assert_eq!(sha.family, "beta");
    assert_eq!(
        sha.workload_version, 3,
        "known benchmarks take today's workload version"
    );
    assert_eq!(
        sha.params,
        Params::new()
            .with("block_size", 8192u64)
            .with("threads", 1u64)
    );
    let time = &x.results[1];
    assert_eq!(
        (time.bench_id.as_str(), time.family.as_str()),
        ("sha256sum-512x", "other")
    );
    assert_eq!(time.workload_version, 1);
    assert_eq!(
        time.metrics[0].better,
        Better::Lower,
        "seconds default to lower is better"
    );
    assert_eq!(time.metrics[0].unit, Unit::Seconds);
    let dd = &x.results[2];
    assert_eq!(dd.params.get_str("bs"), Some("1M"));
    assert_eq!(dd.params.get_u64("count"), Some(1000));
    // Deterministic ids: the same rows give the same runs.
    let again = csv(fixture!("three-hosts.csv"), "elsewhere/three-hosts.csv");
    assert_eq!(again[1].run_id, runs[1].run_id);
    // Another host's rows changing does not change hostx's id.
    let edited = fixture!("three-hosts.csv").replace(
        "hosta,beta.sha256,throughput,50",
        "hosta,beta.sha256,throughput,51",
    );
    let edited = csv(&edited, "three-hosts.csv");
    assert_eq!(edited[0].run_id, runs[0].run_id);
    assert_ne!(edited[1].run_id, runs[1].run_id);
}

#[test]
fn hand_checkable_comparison_of_the_csv() {
    let runs = csv(fixture!("three-hosts.csv"), "three-hosts.csv");
    let machines: Vec<Machine> = runs
        .into_iter()
        .map(|r| Machine::new(r.host_name().to_string(), r))
        .collect();
    let c = compare(&machines, 0, &[]).unwrap();
    let ratio = |row: usize, m: usize| {
        c.rows[row].cells[m]
            .as_ref()
            .and_then(|x| x.ratio)
            .unwrap_or(f64::NAN)
    };
    assert_eq!((ratio(0, 1), ratio(0, 2)), (0.625, 2.5));
    assert_eq!((ratio(1, 1), ratio(1, 2)), (0.5, 2.5));
    assert_eq!((ratio(2, 1), ratio(2, 2)), (0.25, 4.0));
    let o = |m: usize| &c.overall.cells[m];
    let near = |a: Option<f64>, b: f64| (a.unwrap_or(f64::NAN) - b).abs() < 1e-12;
    assert!(near(o(1).arith_mean, (0.625 + 0.5 + 0.25) / 3.0));
    assert!(near(o(1).geomean, (0.625f64 * 0.5 * 0.25).cbrt()));
    assert!(near(o(2).arith_mean, 3.0));
    assert!(near(o(2).geomean, 25f64.cbrt()));
    let other = c
        .families
        .iter()
        .find(|f| f.family == "other")
        .unwrap_or_else(|| panic!("no other family"));
    assert!(near(other.cells[2].geomean, 10f64.sqrt()));
    assert!(near(c.bogomips_ratio[1], 108.0 / 5200.0));
}

#[test]
fn repeated_rows_are_samples_and_crlf_is_fine() {
    let runs = csv(fixture!("repeated-samples-crlf.csv"), "r.csv");
    assert_eq!(runs.len(), 2);
    let m = &runs[0].results[0].metrics[0];
    assert_eq!(m.samples, vec![10.5, 11.0, 10.0]);
    assert_eq!(m.value(), 10.5);
    assert_eq!(runs[0].results[0].params, Params::new());
}

#[test]
fn columns_in_any_order_and_case() {
    let runs = csv(fixture!("columns-reordered.csv"), "c.csv");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].host_name(), "box2");
    let m = &runs[1].results[0].metrics[0];
    assert_eq!(
        (m.value(), &m.unit, m.better),
        (25000.0, &Unit::KBps, Better::Higher)
    );
}

#[test]
fn bad_csv_names_file_and_line() {
    let e = csv_err(fixture!("bad-non-numeric.csv"), "bad-non-numeric.csv");
    assert_eq!(e.line, Some(3));
    assert_eq!(
        e.to_string(),
        "bad-non-numeric.csv:3: value 'fast' is not a number"
    );
    // Each refused file, the line its error names and what it says.
    let at_a_line = [
        (fixture!("bad-zero.csv"), "z.csv", 3, "positive"),
        (fixture!("bad-negative.csv"), "n.csv", 2, "positive"),
        (fixture!("bad-truncated.csv"), "t.csv", 3, "fields"),
        (
            fixture!("bad-header.csv"),
            "h.csv",
            1,
            "unknown column 'machine'",
        ),
        (fixture!("bad-unit-conflict.csv"), "u.csv", 3, "line 2"),
        (fixture!("bad-params.csv"), "p.csv", 2, "KEY=VALUE"),
    ];
    for (text, name, line, says) in at_a_line {
        let e = csv_err(text, name);
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    // Refused as a whole: what the error says.
    let whole_file: [(&str, &str); 5] = [
        (fixture!("bad-header-only.csv"), "no data rows"),
        (
            "host,benchmark,metric,value,unit\na,host,speed,3,x\n",
            "not a host fact",
        ),
        (
            "host,benchmark,metric,value,unit\na,x.y,m,1,\n",
            "unit is empty",
        ),
        ("host,benchmark,metric,value\n", "no 'unit' column"),
        (
            "host,benchmark,metric,value,unit,better\na,x.y,m,1,s,sideways\n",
            "sideways",
        ),
    ];
    for (text, says) in whole_file {
        let e = csv_err(text, "f.csv");
        assert!(e.message.contains(says), "{e}");
    }
}

#[test]
fn params_syntax() {
    let p = parse_params("block_size=8192, threads=2;mode=seq flag=true").unwrap();
    assert_eq!(
        p.canonical(),
        "block_size=8192,flag=true,mode=seq,threads=2"
    );
    assert_eq!(p.get_bool("flag"), Some(true));
    assert!(parse_params("a=1 a=2").is_err());
    assert!(parse_params("=1").is_err());
    assert_eq!(parse_params("  ").unwrap(), Params::new());
}

fn json_run() -> RunRecord {
    let mut r = csv(fixture!("three-hosts.csv"), "three-hosts.csv").remove(0);
    r.status = RunStatus::Complete;
    r
}

#[test]
fn json_one_record_or_an_array() {
    let run = json_run();
    let one = serde_json::to_string_pretty(&run).unwrap_or_default();
    let back = parse_json(&one, &ctx("run.json")).unwrap();
    assert_eq!(back, vec![run.clone()]);
    let many = serde_json::to_string(&vec![run.clone(), run.clone()]).unwrap_or_default();
    assert_eq!(parse_json(&many, &ctx("runs.json")).map(|v| v.len()), Ok(2));
}

#[test]
fn bad_json_names_file_and_line() {
    let text = serde_json::to_string_pretty(&json_run()).unwrap_or_default();
    let truncated = &text[..text.len() / 2];
    let e = parse_json(truncated, &ctx("cut.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert!(e.message.contains("truncated"), "{e}");
    assert_eq!(e.line, Some(truncated.split('\n').count()));
    let e = parse_json("{\n  \"schema_version\": 1,\n  oops\n}", &ctx("m.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert_eq!(e.line, Some(3));
    assert!(e.to_string().starts_with("m.json:3: not valid JSON"), "{e}");
    let newer = text.replacen(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 99",
        1,
    );
    let e = parse_json(&newer, &ctx("n.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert!(e.message.contains("schema_version 99"), "{e}");
    let unknown = text.replacen("\"command\"", "\"surprise\": 1, \"command\"", 1);
    let e = parse_json(&unknown, &ctx("u.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert!(e.message.contains("surprise"), "{e}");
    let e = parse_json("{\"a\": 1}", &ctx("x.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert!(e.message.contains("no schema_version"), "{e}");
    let e = parse_json("[]", &ctx("x.json"))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert!(e.message.contains("no run record"), "{e}");
}

#[test]
fn json_is_validated_like_csv() {
    use serde_json::json;
    type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "running",
            Box::new(|v| v["status"] = json!("running")),
            "status running",
        ),
        (
            "zero where higher is better",
            Box::new(|v| v["results"][0]["metrics"][0]["samples"] = json!([0.0])),
            "sample 1: 0 where higher is better",
        ),
        (
            "negative",
            Box::new(|v| v["results"][0]["metrics"][0]["samples"] = json!([5.0, -1.0])),
            "sample 2: -1 is negative",
        ),
        (
            "1e308",
            Box::new(|v| v["results"][0]["metrics"][0]["samples"] = json!([1e308, 1e308])),
            "throughput' sample 1: 1e308 is beyond",
        ),
        (
            "1e-210",
            Box::new(|v| v["results"][0]["metrics"][0]["samples"] = json!([1e-210, 1.0])),
            "throughput' sample 1: 1e-210 is below what sysgauge accepts (1e-100",
        ),
        (
            "a run id not a UUID",
            Box::new(|v| v["run_id"] = json!("../x?y#z")),
            "the run record: run_id '../x?y#z' is not a UUID",
        ),
        (
            "finished before started",
            Box::new(|v| {
                v["started_at"] = json!("2026-01-02T03:04:05Z");
                v["finished_at"] = json!("2020-01-01T00:00:00Z");
            }),
            "finished_at 2020-01-01 00:00:00 UTC is before started_at 2026-01-02 03:04:05 UTC",
        ),
        (
            "empty id",
            Box::new(|v| v["results"][0]["bench_id"] = json!("")),
            "benchmark id '' is malformed",
        ),
        (
            "malformed id",
            Box::new(|v| v["results"][0]["bench_id"] = json!("hash..sha 256")),
            "is malformed",
        ),
        (
            "duplicate case",
            Box::new(|v| {
                let first = v["results"][0].clone();
                v["results"].as_array_mut().unwrap().push(first);
            }),
            "appears twice",
        ),
        (
            "year 9999",
            Box::new(|v| v["started_at"] = json!("9999-01-01T00:00:00Z")),
            "started_at 9999-01-01 00:00:00 UTC is in the future",
        ),
        (
            "result in the future",
            Box::new(|v| v["results"][0]["started_at"] = json!("2999-01-01T00:00:00Z")),
            "started_at 2999",
        ),
        (
            "absurd past",
            Box::new(|v| v["started_at"] = json!("1970-01-01T00:00:00Z")),
            "is before 2000",
        ),
        (
            "duplicate metric",
            Box::new(|v| {
                let m = v["results"][0]["metrics"][0].clone();
                v["results"][0]["metrics"].as_array_mut().unwrap().push(m);
            }),
            "metric 'throughput' appears twice",
        ),
        (
            "negative duration",
            Box::new(|v| v["results"][0]["duration_seconds"] = json!(-1.0)),
            "duration_seconds -1",
        ),
    ];
    for (what, edit, want) in cases {
        let e = json_edited(edit).expect_err(what);
        let text = e.to_string();
        assert!(text.starts_with("bad.json: "), "{what}: {text}");
        assert!(text.contains(want), "{what}: {text}");
    }
    // A zero where lower is better is a measurement (0 % loss) and imports.
    let ok = json_edited(|v| {
        v["results"][0]["metrics"][0]["better"] = json!("lower");
        v["results"][0]["metrics"][0]["samples"] = json!([0.0, 1.0]);
    });
    assert!(ok.is_ok(), "{ok:?}");
    // A few minutes ahead is clock skew, not an error; so is a run that
    // ends a few minutes before it starts (a clock stepped back).
    let soon = (Utc::now() + chrono::Duration::seconds(60)).to_rfc3339();
    let now = Utc::now().to_rfc3339();
    let skewed = json_edited(|v| {
        v["started_at"] = json!(soon);
        v["finished_at"] = json!(now);
    });
    assert!(skewed.is_ok(), "{skewed:?}");
    // The smallest value accepted.
    assert!(json_edited(|v| v["results"][0]["metrics"][0]["samples"] = json!([1e-100])).is_ok());
}

/// Another spelling of a UUID is the same run id, written as sysgauge
/// writes it: a copy of a stored run in upper case is recognised.
#[test]
fn run_ids_are_written_as_sysgauge_writes_them() {
    let id = "3F2B8C1E-9D4A-4C6B-8E2F-1A2B3C4D5E6F";
    for spelled in [
        format!(" {id} "),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        id.replace('-', ""),
    ] {
        let runs = json_edited(|v| v["run_id"] = serde_json::json!(spelled)).unwrap();
        assert_eq!(runs[0].run_id, id.to_lowercase(), "{spelled}");
    }
    assert_eq!(
        canonical_run_id("not-a-uuid").unwrap_err(),
        "run_id 'not-a-uuid' is not a UUID (sysgauge writes one such as \
         3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f)"
    );
}

#[test]
fn csv_rejects_values_its_summaries_cannot_hold() {
    let e = csv_err(
        "host,benchmark,metric,value,unit\nh,hash.sha256,throughput,1e308,MB/s\n",
        "big.csv",
    );
    assert_eq!(e.line, Some(2));
    assert!(e.to_string().contains("1e308 is beyond"), "{e}");
    let e = csv_err(
        "host,benchmark,metric,value,unit\nh,hash sha256,throughput,1,MB/s\n",
        "id.csv",
    );
    assert!(e.to_string().contains("is malformed"), "{e}");
}

#[test]
fn foreign_text_has_its_control_characters_escaped() {
    let runs = json_edited(|v| {
        v["host"]["hostname"] = serde_json::json!("evil\u{1b}]0;pwned\u{7}\u{1b}[2J");
        v["label"] = serde_json::json!("a\rb");
        v["tags"] = serde_json::json!({"k\u{1}": "v\u{9b}"});
    })
    .unwrap();
    let r = &runs[0];
    assert_eq!(r.host_name(), "evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J");
    assert_eq!(r.label.as_deref(), Some("a\\u{d}b"));
    assert_eq!(r.tags.get("k\\u{1}").map(String::as_str), Some("v\\u{9b}"));
    let runs = csv(
        "host,benchmark,metric,value,unit\n\"h\u{1b}[31m\",hash.sha256,throughput,1,MB/s\n",
        "ctl.csv",
    );
    assert_eq!(runs[0].host_name(), "h\\u{1b}[31m");
}

/// 20,000 rows, each its own case, on 100 hosts: grouping is by hash maps
/// (it was a scan of every earlier case per row), and every row lands in
/// the right case.
#[test]
fn csv_grouping_of_twenty_thousand_cases() {
    let mut text = String::from("host,benchmark,metric,value,unit,params\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "h{},hash.sha256,throughput,{},MB/s,n={}\n",
            i % 100,
            i + 1,
            i / 100
        ));
    }
    // And a repeat of the first case: a second sample, not a new case.
    text.push_str("h0,hash.sha256,throughput,7,MB/s,n=0\n");
    let runs = csv(&text, "big.csv");
    assert_eq!(runs.len(), 100);
    assert!(runs.iter().all(|r| r.results.len() == 200));
    let h0 = runs.iter().find(|r| r.host_name() == "h0").unwrap();
    let first = &h0.results[0];
    assert_eq!(first.params.canonical(), "n=0");
    assert_eq!(first.metrics[0].samples, vec![1.0, 7.0]);
}

#[test]
fn host_fact_columns_reach_the_comparison() {
    let text = "\
host,benchmark,metric,value,unit,bogomips,cpu_model,cores,mhz,arch,os,kernel
pi3,hash.sha256,throughput,20,MB/s,38.40,Cortex-A53,4,1200,aarch64,Raspbian 9,4.14.98
pi3,hash.md5,throughput,40,MB/s,38.40,,,,,,
laptop,hash.sha256,throughput,400,MB/s,5200,Core i5-8250U,4,1600,x86_64,Debian 10,4.19.0
laptop,hash.md5,throughput,600,MB/s,,,,,,,
";
    let runs = csv(text, "facts.csv");
    let pi = &runs[0].host;
    assert_eq!(pi.cpu.bogomips, Some(38.4));
    assert_eq!(pi.cpu.model.as_deref(), Some("Cortex-A53"));
    assert_eq!(pi.cpu.cores, Some(4));
    assert_eq!(pi.cpu.nominal_mhz, Some(1200.0));
    assert_eq!(pi.cpu.architecture.as_deref(), Some("aarch64"));
    assert_eq!(pi.os.distribution.as_deref(), Some("Raspbian 9"));
    assert_eq!(pi.os.kernel_release.as_deref(), Some("4.14.98"));
    let machines: Vec<Machine> = runs
        .into_iter()
        .map(|run| Machine::new(run.host_name().to_string(), run))
        .collect();
    let c = compare(&machines, 1, &[]).unwrap();
    let ratio = c.bogomips_ratio[0].unwrap();
    assert!((ratio - 38.4 / 5200.0).abs() < 1e-12, "{ratio}");
    assert!(
        c.differing_facts
            .iter()
            .any(|f| f.values.iter().any(|v| v.contains("Cortex-A53"))),
        "{:?}",
        c.differing_facts
    );
    // The facts are part of the data: other facts, another run id.
    let other = csv(&text.replace("38.40", "38.50"), "facts.csv");
    assert_ne!(other[0].run_id, machines[0].run.run_id);
}

#[test]
fn host_fact_columns_are_checked() {
    let contradiction = csv_err(
        "host,benchmark,metric,value,unit,cores\nh,a.b,m,1,s,4\nh,a.c,m,1,s,8\n",
        "c.csv",
    );
    assert_eq!(contradiction.line, Some(3));
    assert!(
        contradiction
            .message
            .contains("cores is '8' here but '4' on line 2"),
        "{contradiction}"
    );
    let bad = csv_err(
        "host,benchmark,metric,value,unit,mhz\nh,a.b,m,1,s,fast\n",
        "m.csv",
    );
    assert!(
        bad.message.contains("mhz 'fast' is not a positive number"),
        "{bad}"
    );
    let unknown = csv_err(
        "host,benchmark,metric,value,unit,ram\nh,a.b,m,1,s,4\n",
        "u.csv",
    );
    assert!(
        unknown.message.contains("host facts bogomips,cpu_model"),
        "{unknown}"
    );
}

/// `json_run()` as a JSON value, changed by `edit`, then imported.
fn json_edited(edit: impl FnOnce(&mut serde_json::Value)) -> Result<Vec<RunRecord>, ImportError> {
    let mut v = serde_json::to_value(json_run()).unwrap();
    edit(&mut v);
    parse_json(&v.to_string(), &ctx("bad.json"))
}
