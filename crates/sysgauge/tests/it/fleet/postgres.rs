//! A fleet into PostgreSQL, then `compare` and `report` over it.

use super::{available, measuring_tiny_md5, Lab};
use crate::common::{stderr_of, stdout_of, Sandbox};

/// The namespace fleet into PostgreSQL (reached from the hub's namespace
/// through the server's unix socket), then `compare` and `report` over the
/// database, and the same fleet again: idempotent, one run per host per
/// fleet run.
#[test]
fn fleet_into_postgres_then_compare_and_report() {
    if !available() {
        return;
    }
    let Some(pg) =
        sysgauge_testkit::require_postgres("fleet_into_postgres_then_compare_and_report")
    else {
        return;
    };
    pg.create_database("fleet");
    let url = pg.socket_url("fleet");
    let lab = Lab::running(3);
    let sb = Sandbox::new();
    let inventory = lab.inventory();
    let args = measuring_tiny_md5(&["--inventory", &inventory, "--limit", "lab"]);
    let out = lab.fleet_cmd_on(url.as_ref(), &args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(
        pg.psql("fleet", "SELECT count(*) FROM runs WHERE source = 'fleet'"),
        "3"
    );
    // The retry state of a fleet into PostgreSQL went to the fleet's data
    // directory (the test's), not the user's.
    let states: Vec<String> = std::fs::read_dir(lab.xdg().join("sysgauge"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.ends_with(".fleet.json"))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(states.len(), 1, "{states:?}");
    let on_pg = |args: &[&str]| {
        let out = sb.cmd().args(args).arg("--db").arg(&url).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
        stdout_of(&out)
    };
    let table = on_pg(&["compare"]);
    for label in ["alpha", "bravo", "charlie", "hash.md5"] {
        assert!(table.contains(label), "missing {label}:\n{table}");
    }
    let grouped = on_pg(&["compare", "--group-by", "group"]);
    assert!(
        grouped.starts_with("3 hosts in 1 group by group."),
        "{grouped}"
    );
    let html = sb.path().join("fleet.html");
    on_pg(&["report", &html.display().to_string()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("alpha") && page.contains("charlie"));
    // Again: three more runs, none lost or doubled; the hosts keep nothing.
    let out = lab.fleet_cmd_on(url.as_ref(), &args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(pg.psql("fleet", "SELECT count(*) FROM runs"), "6");
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
    // And the runs move to SQLite whole.
    let copy = sb.path().join("copy.db");
    on_pg(&["results", "sync", "--to", &copy.display().to_string()]);
    let runs = sb.listed_runs_on(&copy);
    assert_eq!(runs.as_array().map(Vec::len), Some(6), "{runs}");
}
