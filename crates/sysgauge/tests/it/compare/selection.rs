//! Which machines and runs a name selects in `compare` and `baseline
//! make`: a file beside its own machine, names several machines share,
//! a partial run named by its label, files with no database.

use super::{comparison, csv_fixture, import};
use crate::common::{stdout_of, Outcome, Sandbox};
use std::path::PathBuf;
use sysgauge_core::record::{Metric, RunRecord, RunStatus};

/// `base` as run `n` of machine `host` (machine-id `id`, or none), its
/// numbers times `scale`, started `100 - n` hours before `base`.
fn as_run(base: &RunRecord, host: &str, id: Option<&str>, n: i64, scale: f64) -> RunRecord {
    let mut r = base.clone();
    r.run_id = format!("6f9c0a52-0000-4000-8000-{n:012}");
    r.host.hostname = Some(host.into());
    r.host.identity = Default::default();
    r.host.identity.machine_id = id.map(str::to_string);
    r.label = None;
    // In the past (a record from the future is refused), in order of n.
    let shift = chrono::Duration::hours(n - 100);
    r.started_at += shift;
    r.finished_at = r.finished_at.map(|t| t + shift);
    for res in &mut r.results {
        for m in &mut res.metrics {
            let samples = m.samples.iter().map(|v| v * scale).collect();
            *m = Metric::new(&m.name, m.unit.clone(), m.better, samples).unwrap();
        }
    }
    r
}

fn write(sb: &Sandbox, name: &str, r: &RunRecord) -> PathBuf {
    let f = sb.path().join(name);
    std::fs::write(&f, serde_json::to_vec(r).unwrap()).unwrap();
    f
}

/// `import pi4.json`, then `compare pi4.json pi4`: the file's run is set
/// apart from its machine as `pi4@RUN` is, so no case compares the run
/// with itself; a run set apart is labelled by its run, even when the
/// machine's newest run is an import that knows only the host name.
#[test]
fn a_file_of_a_stored_run_is_set_apart_from_its_machine() {
    let sb = Sandbox::new();
    let base = sb.tiny_run_record("hash.md5");
    let id = Some("1111aaaa2222bbbb3333cccc4444dddd");
    let first = write(&sb, "box.json", &as_run(&base, "box", id, 1, 1.0));
    let second = write(&sb, "box2.json", &as_run(&base, "box", id, 2, 2.0));
    let out = import(&sb, &[first.clone(), second]);
    assert!(out.status.success(), "{}", crate::common::stderr_of(&out));
    let c = comparison(&sb, &[first.to_str().unwrap(), "box"]);
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["box (box.json)", "box (run 3)"]);
    let rest: Vec<&str> = c.machines[1]
        .runs
        .iter()
        .map(|r| r.run_id.as_str())
        .collect();
    assert_eq!(rest, ["6f9c0a52-0000-4000-8000-000000000002"]);
    let ratio = c.rows[0].cells[1].as_ref().and_then(|x| x.ratio).unwrap();
    assert!((ratio - 2.0).abs() < 1e-6, "{ratio}");

    // The machine's newest run: an import that knows only the host name.
    let csv = sb.path().join("box.csv");
    std::fs::write(
        &csv,
        "host,benchmark,metric,value,unit\nbox,tool.x,rate,5,op/s\n",
    )
    .unwrap();
    assert!(import(&sb, &[csv]).status.success());
    let c = comparison(&sb, &["box@2", "box"]);
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["box (run 2)", "box"]);
}

/// A `--reference` that names several machines (a host name two machines
/// share, a label given on two hosts), or a host name `baseline make`
/// would take one run of, is refused with the candidates; a label as
/// shown picks one.
#[test]
fn a_name_of_several_machines_is_no_reference() {
    let sb = Sandbox::new();
    let base = sb.tiny_run_record("hash.md5");
    let mut files = vec![
        write(
            &sb,
            "t1.json",
            &as_run(&base, "twin", Some("aaaa1111aaaa1111"), 1, 1.0),
        ),
        write(
            &sb,
            "t2.json",
            &as_run(&base, "twin", Some("bbbb2222bbbb2222"), 2, 2.0),
        ),
        write(
            &sb,
            "o.json",
            &as_run(&base, "other", Some("cccc3333cccc3333"), 3, 3.0),
        ),
    ];
    for (n, host, id) in [
        (4, "lab1", "dddd4444dddd4444"),
        (5, "lab2", "eeee5555eeee5555"),
    ] {
        let mut r = as_run(&base, host, Some(id), n, 1.5);
        r.label = Some("shared".into());
        files.push(write(&sb, &format!("{host}.json"), &r));
    }
    assert!(import(&sb, &files).status.success());

    let refused = |args: &[&str], expect: &str, names: &[&str]| {
        let out = sb.on_db("compare").args(args).usage_error(expect);
        let err = crate::common::stderr_of(&out);
        for n in names {
            assert!(err.contains(n), "{n}: {err}");
        }
    };
    let twins = ["twin (aaaa1111)", "twin (bbbb2222)"];
    refused(
        &["other", "twin", "--reference", "twin"],
        "the reference 'twin' names 2 of the compared machines:",
        &twins,
    );
    refused(
        &["other", "--reference", "twin"],
        "the reference 'twin' names 2 machines:",
        &twins,
    );
    refused(
        &["other", "shared", "--reference", "shared"],
        "the reference 'shared' names 2 of the compared machines:",
        &["shared (lab1, dddd4444)", "shared (lab2, eeee5555)"],
    );
    let c = comparison(&sb, &["other", "twin", "--reference", "twin (bbbb2222)"]);
    assert_eq!(c.reference, "twin (bbbb2222)");
    let make = |name: &str| {
        let mut c = sb.cmd();
        c.args(["baseline", "make", "--db"])
            .arg(sb.db())
            .args(["--machine", "M", name]);
        c
    };
    let out = make("twin").usage_error("'twin' names 2 machines:");
    let err = crate::common::stderr_of(&out);
    assert!(
        err.contains("twin (machine aaaa1111") && err.contains("twin (machine bbbb2222"),
        "{err}"
    );
    make("shared").usage_error("'shared' names 2 machines: shared (lab");
}

/// `NAME@LABEL` finds a run that did not complete as `NAME@NUMBER` does,
/// and says it is interrupted in the Machines table.
#[test]
fn an_interrupted_run_is_found_by_its_label_and_marked() {
    let sb = Sandbox::new();
    let base = sb.tiny_run_record("hash.md5");
    let id = Some("1111aaaa2222bbbb");
    let mut cut = as_run(&base, "box", id, 2, 2.0);
    cut.status = RunStatus::Interrupted;
    cut.label = Some("cut-short".into());
    let files = [
        write(&sb, "whole.json", &as_run(&base, "box", id, 1, 1.0)),
        write(&sb, "cut.json", &cut),
    ];
    assert!(import(&sb, &files).status.success());
    let c = comparison(&sb, &["box@cut-short", "box"]);
    assert_eq!(c.machines[0].runs[0].status.as_deref(), Some("interrupted"));
    assert_eq!(c.machines[1].runs[0].status, None);
    let text = stdout_of(
        &sb.on_db("compare")
            .args(["box@cut-short", "box"])
            .succeeds(),
    );
    assert!(
        text.contains("run (tiny), interrupted, "),
        "the Machines table says so: {text}"
    );
    sb.on_db("compare")
        .args(["box@nothing", "box"])
        .usage_error("(interrupted)");
}

/// Files need no database: `$SYSGAUGE_DB` naming a file that does not
/// exist does not stop a comparison of files alone.
#[test]
fn files_compare_without_a_database() {
    let sb = Sandbox::new();
    let missing = sb.path().join("none.sqlite");
    let out = sb
        .cmd()
        .env("SYSGAUGE_DB", &missing)
        .arg("compare")
        .arg(csv_fixture("three-hosts.csv"))
        .args(["--reference", "hostx"])
        .succeeds();
    assert!(stdout_of(&out).contains("Reference: hostx."));
    assert!(!missing.exists());
}
