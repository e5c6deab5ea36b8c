//! Tests of the comparison renderings.

use super::*;
use crate::testutil::comparison;

/// Whether a line of `text` starts with `start` and contains `part`.
fn has_line(text: &str, start: &str, part: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with(start) && l.contains(part))
}

#[test]
fn ratio_formatting() {
    for (ratio, shown) in [
        (0.625, "0.625"),
        (2.5, "2.50"),
        (12.34, "12.3"),
        (150.0, "150"),
        (0.0207692, "0.0208"),
        (f64::NAN, "-"),
    ] {
        assert_eq!(format_ratio(ratio), shown, "{ratio}");
    }
    let iv = Interval {
        low: 0.98,
        high: 1.03,
    };
    assert_eq!(
        ratio_cell(Some(1.0), Some(&iv), Some(false)),
        "1.00 (0.980–1.03) ~"
    );
    assert_eq!(ratio_cell(Some(2.0), None, None), "2.00");
    assert_eq!(ratio_cell(None, None, None), "-");
}

#[test]
fn text_table_has_every_part() {
    let c = comparison();
    let t = render_comparison(&c, CompareFormat::Table);
    assert!(t.starts_with("Reference: hostx."));
    assert!(t.contains("Host facts that differ:\nfact"));
    assert!(t.contains("kernel"), "the kernels differ: {t}");
    let sha = t
        .lines()
        .find(|l| l.starts_with("beta.sha256") && l.contains("block_size=8192"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        sha.contains("0.625 (") && sha.contains("2.50 ("),
        "intervals shown: {sha}"
    );
    assert!(t.contains("Means of ratios to hostx"));
    assert!(has_line(&t, "all", "hostb"), "{t}");
    assert!(has_line(&t, "BogoMIPS", "0.0208"), "{t}");
    assert!(
        t.contains(
            "Cases not on every machine (--verbose lists each case):\n  gamma: 1 case on some machines only; missing on hostb (1)\n"
        ),
        "{t}"
    );
    let v = render_comparison_with(&c, CompareFormat::Table, RenderOptions { verbose: true });
    assert!(v.contains(
        "Cases not on every machine:\n  gamma.copy bandwidth — on hostx, hosta; missing on hostb"
    ));
}

#[test]
fn markdown_csv_json() {
    let c = comparison();
    let md = render_comparison(&c, CompareFormat::Markdown);
    assert!(md.starts_with("# sysgauge comparison\n"));
    assert!(md.contains("## Cases\n\n| benchmark | params |"));
    assert!(md.contains("- gamma: 1 case on some machines only"));
    let csv = render_comparison(&c, CompareFormat::Csv);
    let header = csv.lines().next().unwrap_or("");
    assert_eq!(header, "kind,family,benchmark,params,metric,unit,better,machine,reference,value,samples,ratio,ci_low,ci_high,significant,headline,run,code_bound,reason");
    assert!(csv.lines().any(
        |l| l.starts_with("case,beta,beta.sha256,block_size=16,threads=1")
            || l.starts_with("case,beta,beta.sha256,\"block_size=16,threads=1\"")
    ));
    assert!(has_line(&csv, "geomean,all,", ",hostb,"), "{csv}");
    assert!(has_line(&csv, "bogomips_ratio,", ",hosta,"), "{csv}");
    let json = render_comparison(&c, CompareFormat::Json);
    let back: Comparison = serde_json::from_str(&json).unwrap();
    assert_eq!(back, c);
}

/// A number left out (here: not a measure of its machine) has an
/// `excluded` CSV row with its reason, as the text and the JSON list it;
/// in Markdown the notes under the cases table are paragraphs of their
/// own, not rows of the table.
#[test]
fn excluded_numbers_have_csv_rows_and_markdown_notes_stand_apart() {
    use sysgauge_compare::testutil::{run_with, throughput};
    use sysgauge_compare::{compare, Machine};
    let mut shaky = throughput("beta.sha256", &[10.0]);
    shaky.details.insert(
        sysgauge_core::UNTRUSTED,
        "does not repeat: 9.0 % between rounds (other processes)",
    );
    let mut secondary = throughput("beta.md5", &[30.0]);
    secondary.metrics.push(
        sysgauge_core::record::Metric::new(
            "cpu",
            sysgauge_core::Unit::Percent,
            sysgauge_core::Better::Lower,
            vec![50.0],
        )
        .unwrap_or_else(|| panic!("metric")),
    );
    let pi = Machine::new("pi", run_with("pi", None, vec![shaky, secondary]));
    let nas = Machine::new(
        "nas",
        run_with(
            "nas",
            None,
            vec![
                throughput("beta.sha256", &[20.0]),
                throughput("beta.md5", &[60.0]),
            ],
        ),
    );
    let c = compare(&[pi, nas], 0, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.excluded.len(), 1, "{:?}", c.excluded);
    let csv = render_comparison(&c, CompareFormat::Csv);
    let row = csv
        .lines()
        .find(|l| l.starts_with("excluded,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(
        row.starts_with("excluded,beta,beta.sha256,")
            && row.contains(",pi,pi,")
            && row.ends_with(",not a measure of the machine: does not repeat: 9.0 % between rounds (other processes)"),
        "{row}"
    );
    let md = render_comparison(&c, CompareFormat::Markdown);
    let note = md
        .find("* = not the case's headline")
        .unwrap_or_else(|| panic!("{md}"));
    assert!(md[..note].ends_with("|\n\n"), "{md}");
}

/// A machine of two runs and a case with a secondary metric: the text
/// names each machine's runs, gives each number's run, marks the
/// secondary metric and leaves it out of the means.
#[test]
fn runs_and_secondary_metrics_are_shown() {
    use sysgauge_compare::testutil::{run_with, throughput};
    use sysgauge_compare::{compare, Machine};
    use sysgauge_core::{Better, Unit};
    let mut bonnie = throughput("beta.block", &[100.0]);
    bonnie.metrics.push(
        sysgauge_core::record::Metric::new("cpu", Unit::Percent, Better::Lower, vec![50.0])
            .unwrap_or_else(|| panic!("metric")),
    );
    let mut old = run_with("pi", None, vec![throughput("beta.sha256", &[10.0])]);
    old.run_id = "old-run".into();
    old.started_at -= chrono::Duration::days(1);
    let new = run_with("pi", None, vec![bonnie.clone()]);
    let pi = Machine::from_runs("pi", vec![(new, "7".into()), (old, "3".into())]);
    let mut other_bonnie = bonnie;
    other_bonnie.metrics[0] =
        sysgauge_core::record::Metric::new("throughput", Unit::MBps, Better::Higher, vec![200.0])
            .unwrap_or_else(|| panic!("metric"));
    other_bonnie.metrics[1] =
        sysgauge_core::record::Metric::new("cpu", Unit::Percent, Better::Lower, vec![5.0])
            .unwrap_or_else(|| panic!("metric"));
    let nas = Machine::new(
        "nas",
        run_with(
            "nas",
            None,
            vec![throughput("beta.sha256", &[20.0]), other_bonnie],
        ),
    );
    let c = compare(&[pi, nas], 0, &[]).unwrap_or_else(|e| panic!("{e}"));
    let t = render_comparison(&c, CompareFormat::Table);
    assert!(t.contains("Machines:"), "{t}");
    assert!(t.contains("7 ("), "{t}");
    assert!(t.contains("3 ("), "{t}");
    let sha = t
        .lines()
        .find(|l| l.starts_with("beta.sha256"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(sha.trim_end().ends_with("3 -"), "{sha}");
    assert!(t.contains("cpu *"), "{t}");
    // Means: sha256 2.0 and block 2.0; the cpu ratio (10) is not in them.
    let all = &c.overall.cells[1];
    assert_eq!(all.cases, 2);
    assert!((all.geomean.unwrap_or(0.0) - 2.0).abs() < 1e-9, "{all:?}");
}

/// A comparison lacking many cases: 30 `delta` cases only hostx has, and
/// 12 `bonnie` cases hosta lacks, 5 of which hostb lacks too (2 of those
/// there in another workload version).
fn with_many_missing() -> Comparison {
    let mut c = comparison();
    // The machines lacking a case are the comparison's others.
    let case = |family: &str, id: &str, n: u64, present: &[&str], note: bool| {
        sysgauge_compare::MissingCase {
            family: family.into(),
            bench_id: id.into(),
            params: Params::new().with("size", n),
            workload_version: 1,
            metric: "throughput".into(),
            present_on: present.iter().map(|s| s.to_string()).collect(),
            note: note.then(|| {
                "not compared: hostb has workload version 2 (this case is version 1)".into()
            }),
        }
    };
    for n in 0..30 {
        c.missing
            .push(case("delta", "delta.x", n, &["hostx"], false));
    }
    for n in 0..12 {
        if n < 5 {
            c.missing
                .push(case("bonnie", "bonnie.block", n, &["hostx"], n < 2));
        } else {
            c.missing.push(case(
                "bonnie",
                "bonnie.block",
                n,
                &["hostx", "hostb"],
                false,
            ));
        }
    }
    c
}

#[test]
fn missing_cases_are_summed_up_per_family() {
    let c = with_many_missing();
    let t = render_comparison(&c, CompareFormat::Table);
    let section = t
        .split("Cases not on every machine (--verbose lists each case):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary section:\n{t}"));
    let lines: Vec<&str> = section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(
        lines,
        [
            "  gamma: 1 case on some machines only; missing on hostb (1)",
            "  delta: 30 cases only on hostx",
            "  bonnie: 12 cases on some machines only; missing on hosta (12), hostb (5); 2 of them present elsewhere in another workload version",
        ]
    );
    assert!(!t.contains("delta.x"), "no case listed without --verbose");

    let verbose = RenderOptions { verbose: true };
    let v = render_comparison_with(&c, CompareFormat::Table, verbose);
    assert_eq!(v.matches("\n  delta.x size=").count(), 30, "{v}");
    assert_eq!(v.matches("\n  bonnie.block size=").count(), 12, "{v}");
    assert!(!v.contains("delta: 30 cases"));

    let md = render_comparison(&c, CompareFormat::Markdown);
    assert!(
        md.contains("## Cases not on every machine (--verbose lists each case)\n\n- gamma: 1 case")
    );
    assert!(md.contains("\n- delta: 30 cases only on hostx\n"));
    let md = render_comparison_with(&c, CompareFormat::Markdown, verbose);
    assert_eq!(md.matches("\n- delta.x size=").count(), 30);

    // CSV: a count per family and machine lacking some, else every case
    // and machine lacking it.
    let csv = render_comparison(&c, CompareFormat::Csv);
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("missing")).collect();
    assert_eq!(
        rows,
        [
            "missing_cases,gamma,,,,,,hostb,hostx,,1,,,,,,,,",
            "missing_cases,delta,,,,,,hosta,hostx,,30,,,,,,,,",
            "missing_cases,delta,,,,,,hostb,hostx,,30,,,,,,,,",
            "missing_cases,bonnie,,,,,,hosta,hostx,,12,,,,,,,,",
            "missing_cases,bonnie,,,,,,hostb,hostx,,5,,,,,,,,",
        ]
    );
    let csv = render_comparison_with(&c, CompareFormat::Csv, verbose);
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("missing,")).collect();
    assert_eq!(rows.len(), 1 + 60 + 12 + 5);
    assert!(rows.contains(&"missing,bonnie,bonnie.block,size=7,throughput,,,hosta,hostx,,,,,,,,,,"));

    // JSON is the document: every case, whatever the options.
    for o in [RenderOptions::default(), verbose] {
        let back: Comparison =
            serde_json::from_str(&render_comparison_with(&c, CompareFormat::Json, o)).unwrap();
        assert_eq!(back.missing.len(), 43);
    }
}

/// `n` machines of `cases` cases each, no case on two of them.
fn sharing_nothing(n: usize, cases: usize) -> Comparison {
    use sysgauge_compare::testutil::{run_with, throughput};
    let machines: Vec<sysgauge_compare::Machine> = (0..n)
        .map(|h| {
            let results = (0..cases)
                .map(|k| throughput(&format!("tool.h{h}c{k}"), &[100.0 + k as f64]))
                .collect();
            sysgauge_compare::Machine::new(
                format!("host{h}"),
                run_with(&format!("host{h}"), None, results),
            )
        })
        .collect();
    sysgauge_compare::compare(&machines, 0, &[]).unwrap()
}

/// Machines that share no case: every rendering grows with machines ×
/// cases at most, never with machines² × cases. A case's line counts the
/// machines lacking it instead of naming hundreds; the summary names ten
/// machines and counts the rest; the report lists at most 1,000 cases per
/// family.
#[test]
fn machines_sharing_nothing_render_linearly() {
    let cases = 6;
    let mut sizes: Vec<[usize; 4]> = Vec::new();
    for n in [30, 60, 120] {
        let c = sharing_nothing(n, cases);
        let table = render_comparison(&c, CompareFormat::Table);
        let summary = table
            .split("Cases not on every machine (--verbose lists each case):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{table}"));
        assert!(
            summary.contains(&format!(
                "  tool: {} cases on some machines only; missing on host0 ({}), host1 ({})",
                n * cases,
                (n - 1) * cases,
                (n - 1) * cases
            )),
            "{summary}"
        );
        assert!(
            summary.contains(&format!(", and {} more machines\n", n - NAMED_IN_SUMMARY)),
            "{summary}"
        );
        let verbose =
            render_comparison_with(&c, CompareFormat::Table, RenderOptions { verbose: true });
        let lines: Vec<&str> = verbose
            .lines()
            .filter(|l| l.starts_with("  tool.h"))
            .collect();
        assert_eq!(lines.len(), n * cases);
        assert!(
            lines[0].ends_with(&format!(
                "— on host0; missing on the other {} machines",
                n - 1
            )),
            "{}",
            lines[0]
        );
        let runs: Vec<sysgauge_core::RunRecord> = Vec::new();
        let html =
            crate::html::render_html(&c, &runs.iter().collect::<Vec<_>>(), &[], None, "t", 800)
                .unwrap();
        let json = render_comparison(&c, CompareFormat::Json);
        sizes.push([table.len(), verbose.len(), html.len(), json.len()]);
    }
    // Doubling the machines at most doubles each rendering (plus a little
    // for longer names); a line naming every machine lacking a case would
    // quadruple it.
    for w in sizes.windows(2) {
        for (k, (small, big)) in w[0].iter().zip(&w[1]).enumerate() {
            let growth = *big as f64 / *small as f64;
            assert!(growth < 2.3, "rendering {k}: {sizes:?}");
        }
    }
}

/// A report lists at most 1,000 of a family's missing cases and says how
/// many more there are.
#[test]
fn report_lists_a_thousand_missing_cases_per_family() {
    let c = sharing_nothing(3, 400);
    let runs: Vec<sysgauge_core::RunRecord> = Vec::new();
    let html = crate::html::render_html(&c, &runs.iter().collect::<Vec<_>>(), &[], None, "t", 800)
        .unwrap();
    assert_eq!(html.matches("<li>tool.h").count(), 1000);
    assert!(html.contains("<li class=\"note\">and 200 more (sysgauge compare --verbose"));
}

/// A number whose code is known to trail the reference tool on its
/// machine's CPU is marked `#` in its cell, explained under the table and
/// listed with the reason; the JSON carries the reason in its cell; the
/// other machine's number of the same case is not marked.
#[test]
fn code_bound_numbers_are_marked_and_listed() {
    use sysgauge_compare::testutil::{run_with, throughput_at};
    use sysgauge_compare::{compare, Machine};
    let why = "sysgauge's code (sysgauge-avx512vl) is known to run slower than OpenSSL 3.0 on \
               AMD Zen 4: 0.91x, about 9 % below; this figure understates the machine";
    let mut slow = throughput_at("beta.sha512", 8192, &[700.0, 705.0, 710.0]);
    slow.details.insert(sysgauge_core::record::CODE_BOUND, why);
    let zen4 = run_with(
        "zen4",
        None,
        vec![slow, throughput_at("beta.md5", 8192, &[700.0])],
    );
    let zen3 = run_with(
        "zen3",
        None,
        vec![
            throughput_at("beta.sha512", 8192, &[640.0, 645.0, 650.0]),
            throughput_at("beta.md5", 8192, &[700.0]),
        ],
    );
    let c = compare(
        &[
            Machine::new("zen3", zen3.clone()),
            Machine::new("zen4", zen4.clone()),
        ],
        0,
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let t = render_comparison(&c, CompareFormat::Table);
    let sha = t
        .lines()
        .find(|l| l.starts_with("beta.sha512"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(sha.contains("705.0 #"), "{sha}");
    assert!(!sha.contains("645.0 #"), "{sha}");
    assert!(!has_line(&t, "beta.md5", "#"), "{t}");
    assert!(t.contains(CODE_BOUND_NOTE), "{t}");
    assert!(t.contains("Code-bound numbers"), "{t}");
    assert!(
        t.contains(&format!(
            "beta.sha512 block_size=8192 threads=1 on zen4: {why}"
        )),
        "{t}"
    );
    let csv = render_comparison(&c, CompareFormat::Csv);
    assert!(
        csv.lines()
            .next()
            .unwrap_or("")
            .ends_with(",run,code_bound,reason"),
        "{csv}"
    );
    assert_eq!(csv.matches("about 9 % below").count(), 1, "{csv}");
    let json = render_comparison(&c, CompareFormat::Json);
    assert!(
        json.contains(&format!("\"code_bound\": \"{why}\"")),
        "{json}"
    );
    assert_eq!(json.matches("\"code_bound\"").count(), 1, "{json}");

    // Nothing code-bound: neither the note nor the list.
    let plain = render_comparison(&comparison(), CompareFormat::Table);
    assert!(
        !plain.contains("code-bound") && !plain.contains("Code-bound"),
        "{plain}"
    );

    let html = crate::html::render_html(&c, &[&zen3, &zen4], &[], None, "test", 640)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(html.contains("id=\"code-bound\""), "{html}");
    assert!(html.contains("known to run slower than OpenSSL 3.0 on AMD Zen 4"));
}
