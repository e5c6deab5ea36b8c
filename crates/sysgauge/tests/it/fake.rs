//! Output, comparisons and exit codes of the real binary on the fake
//! family (`SYSGAUGE_FAKE_FAMILY`, sysgauge_bench::fake), whose cases
//! return scripted values: every number here is stated exactly, and none of
//! these tests depends on the machine's speed or load.

use crate::common::{self, stderr_of, stdout_of, Outcome, Sandbox};
use sysgauge_core::record::Status;

const VARIABLE: &str = "SYSGAUGE_FAKE_FAMILY";

/// A tiny stored `run --only fake` with `script`, its record written to
/// `json` (a file in the sandbox).
fn fake_run(sb: &Sandbox, script: &str, json: &str) -> assert_cmd::Command {
    let mut c = sb.tiny_run();
    c.env(VARIABLE, script)
        .args(["--only", "fake", "--json"])
        .arg(sb.path().join(json));
    c
}

/// Two stored fake runs, the default script's (`slow.json`) and one at
/// 250 MB/s and 40 us (`fast.json`): their record files, slow first.
fn slow_and_fast(sb: &Sandbox) -> [std::path::PathBuf; 2] {
    fake_run(sb, "", "slow.json").succeeds();
    fake_run(sb, "rate=250,latency=40", "fast.json").succeeds();
    [sb.path().join("slow.json"), sb.path().join("fast.json")]
}

fn value(run: &sysgauge_core::RunRecord, id: &str) -> f64 {
    let r = run
        .results
        .iter()
        .find(|r| r.bench_id == id)
        .unwrap_or_else(|| panic!("no {id} in the run"));
    r.metrics.first().map_or(f64::NAN, |m| m.value())
}

#[test]
fn a_run_prints_stores_and_shows_the_scripted_numbers() {
    let sb = Sandbox::new();
    let out = fake_run(&sb, "rate=250,latency=40", "run.json").succeeds();
    let text = stdout_of(&out);
    assert!(
        text.contains("fake.rate             250.0  MB/s   ±0.0%  3"),
        "{text}"
    );
    assert!(
        text.contains("fake.latency          40.00  µs     ±0.0%  3"),
        "{text}"
    );
    let run = common::read_record(&sb.path().join("run.json"));
    assert_eq!(
        (value(&run, "fake.rate"), value(&run, "fake.latency")),
        (250.0, 40.0)
    );
    assert!(run.results.iter().all(|r| matches!(r.status, Status::Ok)));
    // The stored run reads back with the same numbers.
    let shown = sb.on_db("results").args(["show", &run.run_id]).succeeds();
    let shown = stdout_of(&shown);
    assert!(
        shown.contains("250.0") && shown.contains("40.00"),
        "{shown}"
    );
    // Without the variable the family does not exist.
    sb.tiny_run()
        .env_remove(VARIABLE)
        .args(["--only", "fake"])
        .usage_error("unknown family or benchmark 'fake'");
    let listed = sb.cmd().env_remove(VARIABLE).arg("list").succeeds();
    assert!(!stdout_of(&listed).contains("fake."));
    let listed = sb.cmd().env(VARIABLE, "").arg("list").succeeds();
    assert!(stdout_of(&listed).contains("fake.rate"));
}

/// Microseconds are `µs` wherever people read them (the progress lines,
/// the summary, `results show`, `list`), and `us` where a format stores
/// them (the record's JSON, CSV): one spelling per kind of reader.
#[test]
fn microseconds_are_spelt_one_way_for_people() {
    let sb = Sandbox::new();
    let out = fake_run(&sb, "latency=40", "run.json").succeeds();
    let shown = [stderr_of(&out), stdout_of(&out)].concat();
    assert!(shown.contains("40.00 µs"), "{shown}");
    assert!(shown.contains("40.00  µs"), "{shown}");
    let run = common::read_record(&sb.path().join("run.json"));
    let show = sb.on_db("results").args(["show", &run.run_id]).succeeds();
    let list = sb.cmd().env(VARIABLE, "").arg("list").succeeds();
    for text in [shown, stdout_of(&show), stdout_of(&list)] {
        assert!(text.contains("µs"), "{text}");
        assert!(
            !text.split_whitespace().any(|w| w == "us"),
            "ASCII us beside µs: {text}"
        );
    }
    // The stored unit is schema: ASCII, as it always was.
    let latency = run.results.iter().find(|r| r.bench_id == "fake.latency");
    let unit = latency
        .and_then(|r| r.metrics.first())
        .map(|m| m.unit.symbol());
    assert_eq!(unit, Some("us"));
    let csv = sb
        .on_db("results")
        .args(["export", &run.run_id, "--format", "csv"])
        .succeeds();
    assert!(stdout_of(&csv).contains(",us,"), "{}", stdout_of(&csv));
}

#[test]
fn results_show_and_export_take_every_name_of_one_run() {
    let sb = Sandbox::new();
    fake_run(&sb, "", "before.json")
        .args(["--label", "before"])
        .succeeds();
    fake_run(&sb, "rate=250", "after.json")
        .args(["--label", "after"])
        .succeeds();
    let before = common::read_record(&sb.path().join("before.json"));
    let after = common::read_record(&sb.path().join("after.json"));
    let host = after.host_name().to_string();
    let shows = |key: &str, run: &sysgauge_core::RunRecord| {
        let out = stdout_of(&sb.on_db("results").args(["show", key]).succeeds());
        assert!(
            out.starts_with("Run ") && out.contains(&format!("({})", run.run_id)),
            "results show {key} is not run {}:\n{out}",
            run.run_id
        );
        let json = stdout_of(&sb.on_db("results").args(["export", key]).succeeds());
        assert!(json.contains(&run.run_id), "results export {key}:\n{json}");
    };
    // A label, NAME@RUN with a label or a run number, a host name (its
    // latest complete run), a run number and a run-id prefix.
    shows("before", &before);
    shows("after", &after);
    shows(&format!("{host}@before"), &before);
    shows(&format!("{host}@1"), &before);
    shows(&host, &after);
    shows("2", &after);
    shows(&before.run_id[..8], &before);
    sb.on_db("results")
        .args(["show", "nothing-of-that-name"])
        .usage_error("no run 'nothing-of-that-name'");
}

/// `compare HOST@1 HOST`: the run against the rest of its machine, never
/// against itself (a case only the named run has is missing on the rest,
/// not a ratio of 1.00).
#[test]
fn a_run_against_its_machine_is_against_the_rest_of_it() {
    let sb = Sandbox::new();
    fake_run(&sb, "", "first.json").succeeds();
    fake_run(&sb, "rate=250,skip=fake.latency", "second.json").succeeds();
    let host = common::read_record(&sb.path().join("first.json"))
        .host_name()
        .to_string();
    let out = sb
        .on_db("compare")
        .args([&format!("{host}@1"), &host, "--format", "json"])
        .succeeds();
    let c: sysgauge_compare::Comparison =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout_of(&out)));
    let rows: Vec<(&str, Option<f64>)> = c
        .rows
        .iter()
        .map(|r| {
            (
                r.bench_id.as_str(),
                r.cells[1].as_ref().and_then(|x| x.ratio),
            )
        })
        .collect();
    assert_eq!(rows, [("fake.rate", Some(2.5))], "{}", stdout_of(&out));
    assert_eq!(c.missing.len(), 1);
    assert_eq!(c.missing[0].bench_id, "fake.latency");
    assert_eq!(c.overall.cells[1].cases, 1);
}

#[test]
fn exit_codes_follow_the_cases() {
    let sb = Sandbox::new();
    // A skipped case is not a failure: exit 0, with the reason and remedy.
    let out = fake_run(&sb, "skip=fake.latency", "skip.json").succeeds();
    let text = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(
        text.contains("skipped: SYSGAUGE_FAKE_FAMILY skips it"),
        "{text}"
    );
    assert!(
        text.contains("leave skip=fake.latency out of SYSGAUGE_FAKE_FAMILY"),
        "{text}"
    );
    // A failed case: exit 1, the run and the other case kept.
    let out = fake_run(&sb, "fail=fake.latency", "fail.json").exits_with(1);
    assert!(stdout_of(&out).contains("FAILED: SYSGAUGE_FAKE_FAMILY fails it"));
    let run = common::read_record(&sb.path().join("fail.json"));
    assert_eq!(value(&run, "fake.rate"), 100.0);
    assert!(run
        .results
        .iter()
        .any(|r| r.bench_id == "fake.latency" && matches!(r.status, Status::Failed { .. })));
    // A malformed script fails every case, naming what is wrong.
    let out = fake_run(&sb, "rate=fast", "bad.json").exits_with(1);
    assert!(
        stdout_of(&out).contains("SYSGAUGE_FAKE_FAMILY: rate=fast is not a positive number"),
        "{}",
        stdout_of(&out)
    );
    // Bad options are usage errors before anything runs, each naming the
    // bound it breaks (beyond u32 too, not the integer type's).
    for (option, value, says) in [
        ("--repetitions", "0", "--repetitions must be at least 1"),
        (
            "--repetitions",
            "99999999999999",
            "--repetitions 99999999999999 is more than 1000",
        ),
        (
            "--noise-threshold",
            "0",
            "--noise-threshold must be a percentage above 0 and below 100, not 0",
        ),
    ] {
        sb.cmd()
            .env(VARIABLE, "")
            .args(["run", "--profile", "tiny", "--only", "fake", "--db"])
            .arg(sb.db())
            .args([option, value])
            .usage_error(says);
    }
}

#[test]
fn compare_states_exact_ratios_and_means() {
    let sb = Sandbox::new();
    let files = slow_and_fast(&sb);
    let out = sb.cmd().arg("compare").args(&files).succeeds();
    let text = stdout_of(&out);
    // Higher is better for the rate, lower for the latency: both ratios
    // say how much faster the second machine is.
    assert!(text.contains("2.50 (2.50–2.50)"), "{text}");
    assert!(text.contains("1.25 (1.25–1.25)"), "{text}");
    let out = sb
        .cmd()
        .arg("compare")
        .args(["--format", "json"])
        .args(&files)
        .succeeds();
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout_of(&out)));
    let rows = json["rows"].as_array().cloned().unwrap_or_default();
    let ratio = |id: &str| {
        rows.iter()
            .find(|r| r["bench_id"] == id)
            .and_then(|r| r["cells"][1]["ratio"].as_f64())
            .unwrap_or_else(|| panic!("no ratio for {id}: {rows:?}"))
    };
    assert_eq!(ratio("fake.rate"), 2.5);
    assert_eq!(ratio("fake.latency"), 1.25);
    // The family's geometric mean is sqrt(2.5 × 1.25).
    assert!(text.contains("1.77"), "{text}");
    // The other way round, the same numbers inverted.
    let out = sb
        .cmd()
        .arg("compare")
        .args([&files[1], &files[0]])
        .succeeds();
    let text = stdout_of(&out);
    assert!(text.contains("0.400 (0.400–0.400)"), "{text}");
    assert!(text.contains("0.800 (0.800–0.800)"), "{text}");
}

/// `path`'s record with every metric's samples repeated to `n` of them.
fn with_samples(path: &std::path::Path, n: usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    let mut run: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    for r in run["results"].as_array_mut().into_iter().flatten() {
        for m in r["metrics"].as_array_mut().into_iter().flatten() {
            let v = m["samples"][0].clone();
            m["samples"] = serde_json::Value::Array(vec![v; n]);
            m["summary"]["n"] = n.into();
        }
    }
    std::fs::write(path, run.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn huge_sample_sets_compare_with_a_bounded_interval_that_says_so() {
    let sb = Sandbox::new();
    let files = slow_and_fast(&sb);
    let out = sb.cmd().arg("compare").args(&files).succeeds();
    assert!(!stderr_of(&out).contains("resampled from"));
    for f in &files {
        with_samples(f, 20_000);
    }
    let out = sb.cmd().arg("compare").args(&files).succeeds();
    let err = stderr_of(&out);
    assert!(
        err.contains("more than 4096 samples has its interval resampled from 4096 of them"),
        "{err}"
    );
    assert!(
        stdout_of(&out).contains("2.50 (2.50–2.50)"),
        "{}",
        stdout_of(&out)
    );
}

/// A long label is clipped in `results list` (one readable row) and kept
/// whole in the run.
#[test]
fn results_list_clips_a_long_label() {
    let sb = Sandbox::new();
    let label = "x".repeat(500);
    fake_run(&sb, "", "long.json")
        .args(["--label", &label])
        .succeeds();
    let out = sb.on_db("results").arg("list").succeeds();
    let text = stdout_of(&out);
    assert!(text.contains(&format!("{}…", "x".repeat(60))), "{text}");
    assert!(!text.contains(&"x".repeat(61)), "{text}");
    let shown = stdout_of(&sb.on_db("results").args(["show", "1"]).succeeds());
    assert!(shown.contains(&label), "{shown}");
}
