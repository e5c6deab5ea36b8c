//! Other tools' outputs imported again, machines whose files share a name,
//! and what compare, report and `results show` say of imported numbers:
//! with the genuine outputs of acceptance test 6 (`fixtures/accept6`).

use super::comparison;
use crate::common::{stderr_of, stdout_of, Browser, Outcome, Sandbox};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/compare/fixtures/accept6")
        .join(name)
}

fn fixtures(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| fixture(n)).collect()
}

const FIVE: [&str; 5] = [
    "ssl_table.txt",
    "sb_mem.txt",
    "mbw.txt",
    "bonnie2.txt",
    "sb_cpu.txt",
];

fn run_ids(sb: &Sandbox) -> Vec<String> {
    sb.listed_runs()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

/// The same outputs in another order, or one of them again alone, store
/// nothing: each output already stored for its host is said to be present.
/// The run's id does not depend on the order of the files.
#[test]
fn outputs_imported_again_in_any_order_or_alone_are_already_present() {
    let sb = Sandbox::new();
    let import = |names: &[&str]| {
        sb.on_db("import")
            .args(["--host", "separate"])
            .args(fixtures(names))
            .succeeds()
    };
    let first = import(&FIVE);
    assert!(
        stderr_of(&first).contains("1 new run(s)"),
        "{}",
        stderr_of(&first)
    );
    let turned = import(&[
        "sb_cpu.txt",
        "ssl_table.txt",
        "sb_mem.txt",
        "mbw.txt",
        "bonnie2.txt",
    ]);
    let said = stderr_of(&turned);
    assert!(said.contains("0 new run(s)"), "{said}");
    assert!(
        said.contains("already imported: the output of")
            && said.contains("sb_cpu.txt for host separate is in run 1"),
        "{said}"
    );
    let alone = import(&["ssl_table.txt"]);
    let said = stderr_of(&alone);
    assert!(
        said.contains("0 new run(s)")
            && said.contains("ssl_table.txt for host separate is in run 1"),
        "{said}"
    );
    assert_eq!(run_ids(&sb).len(), 1);

    // A new output beside stored ones is stored alone.
    let more = import(&["ssl_table.txt", "bonnie.txt"]);
    let said = stderr_of(&more);
    assert!(
        said.contains("1 new run(s)") && said.contains("from"),
        "{said}"
    );
    let ids = run_ids(&sb);
    assert_eq!(ids.len(), 2);
    let newest = sb.stored_run(2);
    assert!(
        newest.results.iter().all(|r| r.family == "bonnie"),
        "bonnie.txt's cases only"
    );

    // In a fresh database, another order gives the same run id.
    let other = Sandbox::new();
    other
        .on_db("import")
        .args(["--host", "separate"])
        .args(fixtures(&[
            "bonnie2.txt",
            "sb_cpu.txt",
            "mbw.txt",
            "ssl_table.txt",
            "sb_mem.txt",
        ]))
        .succeeds();
    assert!(ids.contains(&run_ids(&other)[0]), "{ids:?}");
}

/// A database written before run ids were independent of the order (any
/// other id for the same outputs): the outputs imported again are found by
/// their numbers.
#[test]
fn outputs_stored_under_another_run_id_are_found_by_their_numbers() {
    let sb = Sandbox::new();
    sb.on_db("import")
        .args(["--host", "separate"])
        .args(fixtures(&FIVE))
        .succeeds();
    let mut run = sb.stored_run(1);
    run.run_id = "0b7e1a2c-1111-4222-8333-444455556666".to_string();
    let old = Sandbox::new();
    let file = old.path().join("old.json");
    std::fs::write(&file, serde_json::to_vec(&run).unwrap()).unwrap();
    old.on_db("import").arg(&file).succeeds();
    let again = old
        .on_db("import")
        .args(["--host", "separate"])
        .args(fixtures(&["mbw.txt", "ssl_table.txt"]))
        .succeeds();
    let said = stderr_of(&again);
    assert!(said.contains("0 new run(s)"), "{said}");
    assert_eq!(run_ids(&old).len(), 1);
}

fn two_speed_files(sb: &Sandbox) {
    for m in ["m1", "m2"] {
        std::fs::create_dir_all(sb.path().join(m)).unwrap();
        std::fs::copy(
            fixture(&format!("{m}/speed.txt")),
            sb.path().join(m).join("speed.txt"),
        )
        .unwrap();
    }
}

/// Two machines' files of one name imported together: a warning names both
/// and `--host`. Compared as files, their labels keep the directories, and
/// `--reference` takes the file it is given.
#[test]
fn two_files_of_one_name_are_warned_about_and_told_apart() {
    let sb = Sandbox::new();
    two_speed_files(&sb);
    let out = sb
        .on_db("import")
        .args(["m1/speed.txt", "m2/speed.txt"])
        .succeeds();
    let said = stderr_of(&out);
    assert!(
        said.contains("m1/speed.txt and m2/speed.txt both give host 'speed'")
            && said.contains("--host"),
        "{said}"
    );
    let c = comparison(
        &sb,
        &[
            "m1/speed.txt",
            "m2/speed.txt",
            "--reference",
            "m2/speed.txt",
        ],
    );
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(labels, ["speed (m1/speed.txt)", "speed (m2/speed.txt)"]);
    assert_eq!(c.reference, "speed (m2/speed.txt)");
    // The same file by another path; and a file not among the compared
    // ones joins them first.
    let c = comparison(
        &sb,
        &[
            "m1/speed.txt",
            "m2/speed.txt",
            "--reference",
            "./m2/speed.txt",
        ],
    );
    assert_eq!(c.reference, "speed (m2/speed.txt)");
    let c = comparison(&sb, &["m1/speed.txt", "--reference", "m2/speed.txt"]);
    assert_eq!(c.reference, "speed (m2/speed.txt)");
    assert_eq!(c.machines.len(), 2);
    let ratio = c.rows[0].cells[1].as_ref().unwrap().ratio.unwrap();
    assert!((ratio - 2.0).abs() < 0.01, "m1 is twice as fast: {ratio}");
}

/// Bonnie++'s file sizes are shown beside its ratios: in the facts that
/// differ (text, Markdown, JSON) and in the report's host facts.
#[test]
fn bonnie_file_sizes_are_shown_where_its_ratios_are() {
    let sb = Sandbox::new();
    sb.on_db("import")
        .args(fixtures(&["bonnie.txt", "bonnie2.txt"]))
        .succeeds();
    let text = stdout_of(&sb.on_db("compare").args(["boxA", "boxB"]).succeeds());
    let row = text
        .lines()
        .find(|l| l.starts_with("file size"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("64 MiB") && row.contains("256 MiB"), "{row}");
    let md = stdout_of(
        &sb.on_db("compare")
            .args(["boxA", "boxB", "--format", "md"])
            .succeeds(),
    );
    assert!(md.contains("| file size") && md.contains("256 MiB"), "{md}");
    let c = comparison(&sb, &["boxA", "boxB"]);
    let fact = c
        .differing_facts
        .iter()
        .find(|f| f.fact == "file size")
        .unwrap();
    assert_eq!(fact.values, ["bonnie: 64 MiB", "bonnie: 256 MiB"]);

    let html = sb.path().join("bonnie.html");
    sb.on_db("report")
        .arg(&html)
        .args(["boxA", "boxB"])
        .succeeds();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<tr class=\"differs\"><th>file size</th><td>bonnie: 64 MiB</td><td>bonnie: 256 MiB</td>"),
        "{page}"
    );
    let Some(browser) = Browser::find(&sb) else {
        return;
    };
    let dom = browser.silent_dom(&html);
    assert!(dom.contains("bonnie: 256 MiB"));
}

/// Machines whose outputs came from different tools differ in what made
/// their runs (`none (openssl,sysbench output)`, `none (openssl output)`),
/// not as machines: those facts are not listed as differing.
#[test]
fn what_tools_made_imported_runs_is_no_fact_that_differs() {
    let sb = Sandbox::new();
    two_speed_files(&sb);
    sb.on_db("import")
        .args(["--host", "boxA"])
        .args(fixtures(&["ssl_table.txt", "sb_cpu.txt"]))
        .succeeds();
    sb.on_db("import")
        .args(["--host", "boxB", "m2/speed.txt"])
        .succeeds();
    let c = comparison(&sb, &["boxA", "boxB"]);
    let facts: Vec<&str> = c.differing_facts.iter().map(|f| f.fact.as_str()).collect();
    for made_by in ["build", "tool", "profile"] {
        assert!(!facts.contains(&made_by), "{facts:?}");
    }
}

/// A number of one sample has no spread known, not a spread of 0.0 %.
#[test]
fn a_single_sample_shows_no_spread() {
    let sb = Sandbox::new();
    sb.on_db("import")
        .args(["--host", "boxA"])
        .args(fixtures(&["ssl_table.txt", "mbw.txt"]))
        .succeeds();
    let text = stdout_of(&sb.on_db("results").args(["show", "1"]).succeeds());
    assert!(!text.contains("±0.0%"), "{text}");
    let md5 = text.lines().find(|l| l.starts_with("hash.md5")).unwrap();
    assert!(md5.contains("unknown"), "{md5}");
    // mbw's three runs per test give a spread.
    let mbw = text.lines().find(|l| l.starts_with("mbw.memcpy")).unwrap();
    assert!(mbw.contains('±'), "{mbw}");
}

/// One output twice in one import (a file and a pasted block holding it;
/// a copy with CRLF line endings beside its original) is stored once: the
/// second is said to be the first, and no warning calls them two machines.
#[test]
fn one_output_twice_in_one_import_is_stored_once() {
    let sb = Sandbox::new();
    let sysbench = std::fs::read_to_string(fixture("sb_cpu.txt")).unwrap();
    let mbw = std::fs::read_to_string(fixture("mbw.txt")).unwrap();
    let paste = sb.path().join("paste.txt");
    std::fs::write(&paste, format!("{sysbench}{mbw}")).unwrap();
    let out = sb
        .on_db("import")
        .args(["--host", "z"])
        .arg(fixture("sb_cpu.txt"))
        .arg(&paste)
        .succeeds();
    let said = stderr_of(&out);
    assert!(
        said.contains("paste.txt for host z is the one in") && said.contains("1 new run(s)"),
        "{said}"
    );
    assert_eq!(run_ids(&sb).len(), 1, "{said}");
    let stored = sb.stored_run(1);
    let sysbench_results = stored
        .results
        .iter()
        .filter(|r| r.family == "sysbench")
        .count();
    assert_eq!(sysbench_results, 1, "{said}");
    assert!(stored.results.iter().any(|r| r.family == "mbw"), "{said}");

    // Without --host: a CRLF copy of a Bonnie++ output beside it.
    let crlf = sb.path().join("crlf").join("bonnie2.txt");
    std::fs::create_dir_all(crlf.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(fixture("bonnie2.txt")).unwrap();
    std::fs::write(&crlf, text.replace('\n', "\r\n")).unwrap();
    let out = sb
        .on_db("import")
        .arg(fixture("bonnie2.txt"))
        .arg(&crlf)
        .succeeds();
    let said = stderr_of(&out);
    assert!(said.contains("is the one in"), "{said}");
    assert!(!said.contains("both give host"), "{said}");
    assert_eq!(run_ids(&sb).len(), 2, "{said}");
}

/// A captured output of another tool under `crate/tests/fixtures/tool`.
fn crate_fixture(krate: &str, tool_and_name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("tests/fixtures")
        .join(tool_and_name)
}

/// An output skipped as already stored, or as the one a file named before
/// it holds, says only that: its warnings (Bonnie++'s `+++++`, hyperfine's
/// 0 s, openssl's rows it did not run, sysbench's assumed access mode)
/// were said when it was first imported.
#[test]
fn warnings_of_a_skipped_output_are_not_said_again() {
    let files = [
        fixture("bonnie2.txt"),
        fixture("sb_mem.txt"),
        crate_fixture("sysgauge-bench", "hyperfine/1.15-two-commands.json"),
        crate_fixture(
            "sysgauge-crypto",
            "openssl/3.0-human-table-md4-bf-not-run.txt",
        ),
    ];
    let warned = [
        "was too fast for Bonnie++ to time",
        "--memory-access-mode",
        "hyperfine timed 'true' at 0 s",
        "openssl did not run it",
    ];
    let sb = Sandbox::new();
    let first = stderr_of(&sb.on_db("import").args(&files).succeeds());
    for w in warned {
        assert!(first.contains(w), "{w}: {first}");
    }
    let again = stderr_of(&sb.on_db("import").args(&files).succeeds());
    assert!(again.contains("0 new run(s)"), "{again}");
    assert_eq!(again.matches("already imported").count(), 4, "{again}");
    assert!(!again.contains("warning"), "{again}");

    // A copy named after its original in one import: the original's
    // warnings once, none for the copy.
    let fresh = Sandbox::new();
    let copy = fresh.path().join("copy.txt");
    std::fs::copy(fixture("bonnie2.txt"), &copy).unwrap();
    let twice = stderr_of(
        &fresh
            .on_db("import")
            .arg(fixture("bonnie2.txt"))
            .arg(&copy)
            .succeeds(),
    );
    assert!(twice.contains("is the one in"), "{twice}");
    assert_eq!(
        twice
            .matches("bonnie.seq-stat was too fast for Bonnie++ to time")
            .count(),
        1,
        "{twice}"
    );
    assert!(!twice.contains("copy.txt: boxB"), "{twice}");
}
