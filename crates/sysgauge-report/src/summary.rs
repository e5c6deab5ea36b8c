//! The end-of-run summary (one line per case: value, unit, spread), the
//! findings with their remedies, and whole-run exports (JSON, CSV, Markdown).

use crate::format::{format_value, unit_label};
use crate::table::{Table, TableFormat};
use sysgauge_core::record::{Finding, Metric, ResultRecord, RunRecord, Severity, Status};
use sysgauge_core::rounds::{shown_spread, spreads, ROUND_REPETITIONS};

/// One line per benchmark case. A run measured in rounds (`--rounds`) shows
/// the within-round spread (the median of the rounds' own spreads) beside
/// the between-round spread, and n as rounds × repetitions.
pub fn summary_table(run: &RunRecord, format: TableFormat) -> String {
    let rounds = run.results.iter().any(|r| spreads(r).is_some());
    let mut t = if rounds {
        Table::columns("benchmark, params, >value, unit, >spread, >between rounds, >n, note")
    } else {
        Table::columns("benchmark, params, >value, unit, >spread, >n, note")
    };
    for r in &run.results {
        let params = r.params.to_string();
        match (&r.status, r.primary()) {
            (Status::Ok, Some(m)) => {
                let mut row = vec![
                    r.bench_id.clone(),
                    params,
                    format_value(m.value()),
                    unit_label(m.unit.symbol()).to_string(),
                ];
                match spreads(r) {
                    Some((between, within)) => row.extend([
                        format!("±{:.1}%", within * 100.0),
                        format!("±{:.1}%", between * 100.0),
                        format!(
                            "{}×{}",
                            m.summary.n,
                            r.details.get_u64(ROUND_REPETITIONS).unwrap_or(1)
                        ),
                    ]),
                    None if rounds => {
                        row.extend([spread_cell(r, m), "-".to_string(), m.summary.n.to_string()])
                    }
                    None => row.extend([spread_cell(r, m), m.summary.n.to_string()]),
                }
                row.push(warning_codes(r));
                t.push(row);
            }
            (status, _) => t.push_note(vec![r.bench_id.clone(), params], status_note(status)),
        }
    }
    t.render(format)
}

/// The spread a table shows beside `m`, a metric of `r` (its coefficient
/// of variation, or the within-round one: `shown_spread`), or `unknown`
/// where its samples cannot show one: a single sample (`openssl speed` and
/// most tools imported report one number), or a mean of 0 (a 0 s hyperfine
/// time), which has no relative spread. `±0.0%` would claim a steadiness
/// nobody measured. The summary and every family's table print it so.
pub fn spread_cell(r: &ResultRecord, m: &Metric) -> String {
    let cov = shown_spread(r, m);
    if m.summary.n < 2 || m.summary.mean == 0.0 || !cov.is_finite() {
        "unknown".to_string()
    } else {
        format!("±{:.1}%", cov * 100.0)
    }
}

/// What the machine did during each case (the telemetry in the details):
/// this process's CPU in percent of one CPU, other processes' CPUs, shares
/// of all CPUs' time stolen and waiting for I/O, pressure stalls, the
/// lowest clock and the highest temperature; empty when no case has any.
pub fn telemetry_table(run: &RunRecord, format: TableFormat) -> String {
    let mut t = Table::columns(
        "benchmark, params, >%CP, >other CPUs, >steal %, >iowait %, >stall ms cpu/mem/io, >MHz min, >°C max, disturbed",
    );
    let text = |r: &ResultRecord, k: &str| r.details.get_str(k).unwrap_or("-").to_string();
    let int = |r: &ResultRecord, k: &str| {
        r.details
            .get_int(k)
            .map_or("-".to_string(), |v| v.to_string())
    };
    for r in run
        .results
        .iter()
        .filter(|r| r.details.get_int("cpu_percent").is_some())
    {
        t.push(vec![
            r.bench_id.clone(),
            r.params.to_string(),
            int(r, "cpu_percent"),
            text(r, "other_cpus"),
            text(r, "steal_percent"),
            text(r, "iowait_percent"),
            format!(
                "{}/{}/{}",
                int(r, "psi_cpu_ms"),
                int(r, "psi_memory_ms"),
                int(r, "psi_io_ms")
            ),
            int(r, "mhz_min"),
            int(r, "temp_max_c"),
            r.disturbed().unwrap_or("").to_string(),
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    t.render(format)
}

/// The codes of a case's warnings and worse, each once (a case with several
/// noisy metrics has several `noisy` findings), for a table's note column.
pub fn warning_codes(r: &ResultRecord) -> String {
    let mut codes: Vec<&str> = Vec::new();
    for f in r
        .findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
    {
        if !codes.contains(&f.code.as_str()) {
            codes.push(&f.code);
        }
    }
    codes.join(", ")
}

/// What a table says in place of a value: why the case was skipped or
/// failed, or that it measured nothing.
pub fn status_note(status: &Status) -> String {
    match status {
        Status::Skipped { reason, .. } => format!("skipped: {reason}"),
        Status::Failed { error } => format!("FAILED: {error}"),
        Status::Ok => "no metric".into(),
    }
}

/// Findings of the run and of its results, most severe first. Findings
/// that share a code and a remedy are listed together with the remedy said
/// once; identical findings are shown once. Skip hints come last.
pub fn findings_text(run: &RunRecord) -> String {
    let mut all: Vec<&Finding> = run.findings.iter().collect();
    for r in &run.results {
        all.extend(r.findings.iter());
    }
    // Stable sort: within a severity, the order of the run is kept.
    all.sort_by_key(|f| std::cmp::Reverse(f.severity));
    struct Group<'a> {
        code: &'a str,
        severity: Severity,
        remedy: Option<&'a str>,
        messages: Vec<&'a str>,
    }
    let mut groups: Vec<Group> = Vec::new();
    for f in all {
        let remedy = f.remedy.as_deref();
        match groups
            .iter_mut()
            .find(|g| g.code == f.code && g.remedy == remedy && g.severity == f.severity)
        {
            Some(g) => {
                if !g.messages.contains(&f.message.as_str()) {
                    g.messages.push(&f.message);
                }
            }
            None => groups.push(Group {
                code: &f.code,
                severity: f.severity,
                remedy,
                messages: vec![&f.message],
            }),
        }
    }
    let mut out = String::new();
    for g in groups {
        if g.messages.len() == 1 {
            out.push_str(&format!(
                "[{}] {}: {}\n",
                g.severity.as_str(),
                g.code,
                g.messages[0]
            ));
        } else {
            out.push_str(&format!(
                "[{}] {} ({} cases):\n",
                g.severity.as_str(),
                g.code,
                g.messages.len()
            ));
            for m in &g.messages {
                out.push_str(&format!("    - {m}\n"));
            }
        }
        if let Some(remedy) = g.remedy {
            out.push_str(&format!("    what to do: {remedy}\n"));
        }
    }
    let mut hints: Vec<String> = Vec::new();
    for r in &run.results {
        if let Status::Skipped {
            reason,
            hint: Some(hint),
        } = &r.status
        {
            let line = format!(
                "[skipped] {}: {reason}\n    what to do: {hint}\n",
                r.bench_id
            );
            if !hints.contains(&line) {
                hints.push(line);
            }
        }
    }
    for h in hints {
        out.push_str(&h);
    }
    out
}

/// Formats `results export` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Csv,
    Markdown,
}

/// A whole run as JSON (the run record), CSV (one row per metric) or
/// Markdown (host line, summary table, findings).
pub fn export_run(run: &RunRecord, format: ExportFormat) -> String {
    match format {
        ExportFormat::Json => {
            let mut s = serde_json::to_string_pretty(run).unwrap_or_else(|_| "{}".to_string());
            s.push('\n');
            s
        }
        ExportFormat::Csv => metrics_table(run).render(TableFormat::Csv),
        ExportFormat::Markdown => {
            let esc = crate::table::markdown_text;
            let mut s = format!(
                "# sysgauge run {}\n\nHost: {} · started {} · profile {} · status {}",
                esc(&run.run_id),
                esc(run.host_name()),
                run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                run.profile_shown(),
                run.status.as_str()
            );
            if let Some(l) = &run.label {
                s.push_str(&format!(" · label {}", esc(l)));
            }
            if !run.tags.is_empty() {
                let tags: Vec<String> = run.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s.push_str(&format!(" · tags {}", esc(&tags.join(", "))));
            }
            s.push_str("\n\n");
            s.push_str(&summary_table(run, TableFormat::Markdown));
            let f = findings_text(run);
            if !f.is_empty() {
                s.push_str("\n## Findings\n\n```\n");
                s.push_str(&f);
                s.push_str("```\n");
            }
            s
        }
    }
}

/// One row per metric with its full summary, for spreadsheets.
fn metrics_table(run: &RunRecord) -> Table {
    let mut t = Table::columns("run_id, host, benchmark, params, status, metric, unit, better, >median, >mean, >min, >max, >stddev, >cov, >mad, >n");
    for r in &run.results {
        let case = || {
            vec![
                run.run_id.clone(),
                run.host_name().to_string(),
                r.bench_id.clone(),
                r.params.canonical(),
                r.status.label().to_string(),
            ]
        };
        if r.metrics.is_empty() {
            t.push(case());
        }
        for m in &r.metrics {
            let s = &m.summary;
            let mut row = case();
            row.extend([
                m.name.clone(),
                m.unit.symbol().to_string(),
                m.better.as_str().to_string(),
                s.median.to_string(),
                s.mean.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                s.stddev.to_string(),
                s.cov.to_string(),
                s.mad.to_string(),
                s.n.to_string(),
            ]);
            t.push(row);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    use sysgauge_core::record::{Params, RunStatus};
    use sysgauge_core::{Better, Metric, Unit};

    fn run() -> RunRecord {
        let now = chrono::Utc::now();
        let ok = ResultRecord {
            started_at: now,
            duration_seconds: 1.0,
            findings: vec![Finding::new("noisy", Severity::Warning, "too much spread")
                .with_remedy("calm down")],
            ..ResultRecord::new(
                "beta.sha256",
                Params::new().with("block_size", 8192u64),
                Status::Ok,
                vec![Metric::new(
                    "throughput",
                    Unit::MBps,
                    Better::Higher,
                    vec![1000.0, 1100.0, 900.0],
                )
                .unwrap_or_else(|| panic!("metric"))],
            )
        };
        let skipped = ResultRecord {
            bench_id: "beta.md5".into(),
            status: Status::Skipped {
                reason: "no md5".into(),
                hint: Some("install it".into()),
            },
            metrics: vec![],
            findings: vec![],
            ..ok.clone()
        };
        let failed = ResultRecord {
            bench_id: "beta.sha1".into(),
            status: Status::Failed {
                error: "wrong digest".into(),
            },
            metrics: vec![],
            findings: vec![],
            ..ok.clone()
        };
        RunRecord {
            started_at: now,
            finished_at: Some(now),
            status: RunStatus::Complete,
            results: vec![ok, skipped, failed],
            ..RunRecord::new("r1", "run", "0")
        }
    }

    #[test]
    fn summary_lines() {
        let s = summary_table(&run(), TableFormat::Text);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].contains("beta.sha256")
                && lines[2].contains("1000.0")
                && lines[2].contains("±10.0%")
        );
        assert!(lines[2].ends_with("noisy"));
        let mut twice = run();
        let again = twice.results[0].findings[0].clone();
        twice.results[0].findings.push(again);
        let s2 = summary_table(&twice, TableFormat::Text);
        assert!(!s2.contains("noisy, noisy"), "{s2}");
        assert!(lines[3].contains("skipped: no md5"));
        assert!(lines[4].contains("FAILED: wrong digest"));
    }

    #[test]
    fn findings_with_remedies() {
        let f = findings_text(&run());
        assert!(f.contains("[warning] noisy: too much spread\n    what to do: calm down\n"));
        assert!(f.contains("[skipped] beta.md5: no md5\n    what to do: install it\n"));
    }

    #[test]
    fn grouped_findings() {
        let mut r = run();
        let extra =
            Finding::new("noisy", Severity::Warning, "another case").with_remedy("calm down");
        r.results[1].findings.push(extra);
        r.results[2].findings.push(
            Finding::new("noisy", Severity::Warning, "too much spread").with_remedy("calm down"),
        );
        let f = findings_text(&r);
        assert!(f.contains("[warning] noisy (2 cases):\n    - too much spread\n    - another case\n    what to do: calm down\n"), "{f}");
        assert_eq!(f.matches("what to do: calm down").count(), 1);
    }

    #[test]
    fn exports() {
        let r = run();
        let json = export_run(&r, ExportFormat::Json);
        let back: RunRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        let csv = export_run(&r, ExportFormat::Csv);
        assert_eq!(csv.lines().count(), 4);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap_or("")
            .contains("beta.sha256,block_size=8192,ok,throughput,MB/s,higher,1000"));
        let md = export_run(&r, ExportFormat::Markdown);
        assert!(md.contains("| benchmark | params |"));
        assert!(md.contains("## Findings"));
        // The label and tags are there, and text from the record is
        // escaped as in every Markdown table.
        let mut r = r;
        r.host.hostname = Some("<script>x</script>".into());
        r.label = Some("a|b".into());
        r.tags.insert("site".into(), "<b>lab</b>".into());
        let md = export_run(&r, ExportFormat::Markdown);
        let head = md.lines().nth(2).unwrap_or_default();
        assert!(
            head.starts_with("Host: &lt;script&gt;x&lt;/script&gt; · started"),
            "{head}"
        );
        assert!(head.contains(" · label a\\|b · tags "), "{head}");
        assert!(head.contains("site=&lt;b&gt;lab&lt;/b&gt;"), "{head}");
        assert!(!md.contains("<script>") && !md.contains("<b>"), "{md}");
    }
}
