//! Renderings of a `Comparison`: an aligned text table, Markdown, CSV (one
//! row per machine and case, for spreadsheets) and JSON (the versioned
//! document itself). The HTML report reuses the pieces here.
//!
//! Layout: a line naming the reference and how to read the ratios; the
//! host facts that differ; one row per case with each machine's value and
//! ratio (with its 95 % interval when there is one, `~` when the difference
//! is not significant); the means per family and overall, with the BogoMIPS
//! ratio beside them; then the cases some machines lack and the numbers
//! left out.

use crate::format::{counted, format_value, unit_label};
use crate::table::{Align, Table, TableFormat};
use std::collections::HashMap;
use sysgauge_compare::{Cell, Comparison, Interval, MeanCell, OVERALL};
use sysgauge_core::record::Params;

/// Output formats of `sysgauge compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Table,
    Markdown,
    Csv,
    Json,
}

/// A ratio with three significant digits (`0.625`, `2.50`, `12.3`).
pub fn format_ratio(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".to_string()
    } else {
        let digits = (-a.log10()).floor() as usize + 3;
        format!("{v:.digits$}")
    }
}

fn interval_text(iv: &Interval) -> String {
    format!("{}–{}", format_ratio(iv.low), format_ratio(iv.high))
}

/// `0.625`, `2.01 (1.98–2.04)`, `1.00 (0.97–1.03) ~`.
pub fn ratio_cell(ratio: Option<f64>, ci: Option<&Interval>, significant: Option<bool>) -> String {
    let Some(r) = ratio else {
        return "-".to_string();
    };
    let mut s = format_ratio(r);
    if let Some(iv) = ci {
        s.push_str(&format!(" ({})", interval_text(iv)));
    }
    if significant == Some(false) {
        s.push_str(" ~");
    }
    s
}

fn cell_ratio(c: &Option<Cell>) -> String {
    match c {
        Some(c) => ratio_cell(c.ratio, c.ci.as_ref(), c.significant),
        None => "-".to_string(),
    }
}

/// The value, marked `!` when the machine was disturbed while it ran and
/// `#` when it is code-bound there.
fn cell_value(c: &Option<Cell>) -> String {
    c.as_ref()
        .map(|c| {
            let mut v = format_value(c.value);
            if c.disturbed {
                v.push_str(" !");
            }
            if c.code_bound.is_some() {
                v.push_str(" #");
            }
            v
        })
        .unwrap_or_else(|| "-".to_string())
}

/// What the `#` mark means, under a cases table that has one.
pub const CODE_BOUND_NOTE: &str = "# = code-bound: sysgauge's code for the case is known to run \
     slower than the best reference tool on that machine's CPU (listed under \"Code-bound \
     numbers\"), so the ratio partly measures sysgauge's code, not the machine";

/// One line per code-bound number: the case, the machine, and by how much
/// its code trails the reference there (a case's metrics share one line).
pub fn code_bound_lines(c: &Comparison) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut lines = Vec::new();
    for r in &c.rows {
        for (m, cell) in c.machines.iter().zip(&r.cells) {
            let Some(why) = cell.as_ref().and_then(|x| x.code_bound.as_deref()) else {
                continue;
            };
            if seen.insert((&r.bench_id, &r.params, &m.label)) {
                lines.push(format!(
                    "{} on {}: {why}",
                    case_name(&r.bench_id, &r.params, "").trim_end(),
                    m.label
                ));
            }
        }
    }
    lines
}

/// True when some number of the comparison is code-bound.
pub fn has_code_bound(c: &Comparison) -> bool {
    c.rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|x| x.code_bound.is_some())
}

/// The sentence above every comparison.
pub fn preamble(c: &Comparison) -> String {
    format!(
        "Reference: {}. Ratios are direction-adjusted: above 1 means faster than the reference. \
         Intervals are bootstrap 95 % intervals from the raw samples; ~ marks a difference that is not significant.",
        c.reference
    )
}

/// Host facts that differ between the machines.
pub fn facts_table(c: &Comparison) -> Table {
    let mut cols: Vec<(&str, Align)> = vec![("fact", Align::Left)];
    for m in &c.machines {
        cols.push((m.label.as_str(), Align::Left));
    }
    let mut t = Table::new(&cols);
    for f in &c.differing_facts {
        let mut row = vec![f.fact.clone()];
        row.extend(f.values.iter().cloned());
        t.push(row);
    }
    t
}

/// Whether some machine's numbers come from more than one run (then every
/// case row says which run each number is from).
pub fn several_runs(c: &Comparison) -> bool {
    c.machines.iter().any(|m| m.runs.len() > 1)
}

/// Each machine: the name it goes by, its host, and the runs its numbers
/// come from (number or file, date, what made it, label), newest first.
pub fn machines_table(c: &Comparison) -> Table {
    let mut t = Table::columns("machine, host, runs");
    for m in &c.machines {
        let runs: Vec<String> = m
            .runs
            .iter()
            .map(|r| {
                let mut s = format!(
                    "{} ({}, {}, {}{} case{}",
                    r.reference,
                    r.started_at.get(..10).unwrap_or(&r.started_at),
                    r.kind,
                    r.status
                        .as_ref()
                        .map(|st| format!("{st}, "))
                        .unwrap_or_default(),
                    r.cases,
                    if r.cases == 1 { "" } else { "s" }
                );
                if let Some(l) = &r.label {
                    s.push_str(&format!(", label {l}"));
                }
                s.push(')');
                s
            })
            .collect();
        t.push(vec![m.label.clone(), m.host.clone(), runs.join("; ")]);
    }
    t
}

/// The runs each machine's number for a row came from, in machine order
/// (`-` where a machine has none).
fn row_runs(r: &sysgauge_compare::CaseRow) -> String {
    r.cells
        .iter()
        .map(|c| {
            c.as_ref()
                .and_then(|c| c.run.clone())
                .unwrap_or_else(|| "-".to_string())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One row per case: value and ratio per machine (the reference shows its
/// value only); a metric that is not its case's headline is marked `*`
/// (shown, never in the means); when a machine is several runs, the runs
/// the numbers came from.
pub fn cases_table<'a>(
    c: &Comparison,
    rows: impl Iterator<Item = &'a sysgauge_compare::CaseRow>,
) -> Table {
    let reference = c.reference_index();
    let mut headers: Vec<String> = vec![
        "benchmark".into(),
        "params".into(),
        "metric".into(),
        "unit".into(),
    ];
    for (i, m) in c.machines.iter().enumerate() {
        headers.push(m.label.clone());
        if i != reference {
            headers.push(format!("{} ratio", m.label));
        }
    }
    let runs = several_runs(c);
    if runs {
        headers.push("runs".into());
    }
    let last = headers.len() - 1;
    let cols: Vec<(&str, Align)> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let left = i < 4 || (runs && i == last);
            (h.as_str(), if left { Align::Left } else { Align::Right })
        })
        .collect();
    let mut t = Table::new(&cols);
    for r in rows {
        let mut row = vec![
            r.bench_id.clone(),
            r.params.to_string(),
            if r.headline {
                r.metric.clone()
            } else {
                format!("{} *", r.metric)
            },
            format!(
                "{} ({})",
                unit_label(&r.unit),
                if r.better == sysgauge_core::Better::Lower {
                    "lower is better"
                } else {
                    "higher is better"
                }
            ),
        ];
        for (i, cell) in r.cells.iter().enumerate() {
            row.push(cell_value(cell));
            if i != reference {
                row.push(cell_ratio(cell));
            }
        }
        if runs {
            row.push(row_runs(r));
        }
        t.push(row);
    }
    t
}

fn mean_cells(m: &MeanCell) -> (String, String, String) {
    let arith = m.arith_mean.map(format_ratio).unwrap_or_else(|| "-".into());
    let geo = m.geomean.map(format_ratio).unwrap_or_else(|| "-".into());
    let mut ci = m
        .geomean_ci
        .as_ref()
        .map(interval_text)
        .unwrap_or_else(|| "-".into());
    if m.significant == Some(false) {
        ci.push_str(" ~");
    }
    (arith, geo, ci)
}

/// Means of the ratios per family and overall, one line per machine other
/// than the reference, and the BogoMIPS ratio.
pub fn summary_table(c: &Comparison) -> Table {
    let reference = c.reference_index();
    let mut t = Table::columns("family, machine, >cases, >mean, >geomean, >95% interval");
    for g in c.families.iter().chain(std::iter::once(&c.overall)) {
        for (i, m) in g.cells.iter().enumerate() {
            if i == reference {
                continue;
            }
            let (a, geo, ci) = mean_cells(m);
            t.push(vec![
                g.family.clone(),
                c.machines[i].label.clone(),
                m.cases.to_string(),
                a,
                geo,
                ci,
            ]);
        }
    }
    for (i, b) in c.bogomips_ratio.iter().enumerate() {
        if i == reference {
            continue;
        }
        let v = b.map(format_ratio).unwrap_or_else(|| "unknown".into());
        t.push(vec![
            "BogoMIPS".into(),
            c.machines[i].label.clone(),
            "-".into(),
            v.clone(),
            v,
            "-".into(),
        ]);
    }
    t
}

/// "id params metric", the params left out when there are none.
fn case_name(bench_id: &str, params: &Params, metric: &str) -> String {
    if params.is_empty() {
        format!("{bench_id} {metric}")
    } else {
        format!("{bench_id} {params} {metric}")
    }
}

/// A missing case's line names the machines lacking it when they are at
/// most this many, or no more than the machines having it; otherwise it
/// counts them. Hundreds of machines that share no case lack hundreds of
/// thousands of cases each: naming every lacking machine on every line
/// would grow with machines² × cases.
pub const NAMED_LACKING: usize = 8;

/// One missing case's line: where it is and where it is not.
fn missing_line(c: &Comparison, m: &sysgauge_compare::MissingCase) -> String {
    let lacking = m.missing_count(&c.machines);
    let mut s = format!(
        "{} — on {}; missing on ",
        case_name(&m.bench_id, &m.params, &m.metric),
        m.present_on.join(", ")
    );
    if lacking <= NAMED_LACKING.max(m.present_on.len()) {
        s.push_str(&m.missing_on(&c.machines).join(", "));
    } else {
        s.push_str(&format!("the other {lacking} machines"));
    }
    if let Some(n) = &m.note {
        s.push_str(&format!(" ({n})"));
    }
    s
}

/// Cases some machines lack, a line each.
pub fn missing_lines(c: &Comparison) -> Vec<String> {
    c.missing.iter().map(|m| missing_line(c, m)).collect()
}

/// What a rendering shows beyond the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// List every case some machines lack (by default, one line per
    /// family sums them up; the JSON document always lists them all).
    pub verbose: bool,
}

/// The cases of one family that some machines lack: a line summing them
/// up and one line per case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingFamily {
    pub family: String,
    /// `cpu: 3 cases only on rpi1`, `bonnie: 12 cases on some machines
    /// only; missing on rpi1 (12), rpi2 (3)`.
    pub summary: String,
    /// The cases, as `missing_lines` words them (as many as asked for).
    pub lines: Vec<String>,
    /// How many cases the family lacks somewhere.
    pub cases: usize,
    /// The machines lacking some of its cases, in the comparison's order,
    /// and how many each lacks.
    pub lacking: Vec<(String, usize)>,
}

/// At most this many machines are named in a family's summary line; the
/// rest are counted (the CSV and `--verbose` have every one).
pub const NAMED_IN_SUMMARY: usize = 10;

/// The cases some machines lack, per family in order of first appearance.
/// A comparison of many machines lacks hundreds of cases (an imported tool
/// only one machine ran, a profile with more sizes), so the summary says
/// how many per family and which machines lack how many; the lines are
/// there for those who ask.
///
/// Counted in one pass over the cases and the machines that have them (a
/// comparison of hundreds of machines can lack hundreds of thousands of
/// cases), so the work grows with the results compared plus families ×
/// machines; at most `lines_per_family` lines are made per family.
pub fn missing_by_family(c: &Comparison, lines_per_family: usize) -> Vec<MissingFamily> {
    let mut families: Vec<(String, Vec<usize>)> = Vec::new();
    let mut family_of: HashMap<&str, usize> = HashMap::new();
    for (i, m) in c.missing.iter().enumerate() {
        match family_of.get(m.family.as_str()) {
            Some(&f) => families[f].1.push(i),
            None => {
                family_of.insert(&m.family, families.len());
                families.push((m.family.clone(), vec![i]));
            }
        }
    }
    let machine_of: HashMap<&str, usize> = c
        .machines
        .iter()
        .enumerate()
        .map(|(i, m)| (m.label.as_str(), i))
        .collect();
    // Per machine, how many of the family's cases it has: reset after each
    // family through the cases' own machines, so no family costs a pass
    // over the machines beyond its summary.
    let mut has = vec![0usize; c.machines.len()];
    families
        .into_iter()
        .map(|(family, cases)| {
            for &i in &cases {
                for l in &c.missing[i].present_on {
                    if let Some(&k) = machine_of.get(l.as_str()) {
                        has[k] += 1;
                    }
                }
            }
            let lacking: Vec<(String, usize)> = c
                .machines
                .iter()
                .zip(&has)
                .filter(|(_, &n)| n < cases.len())
                .map(|(m, &n)| (m.label.clone(), cases.len() - n))
                .collect();
            for &i in &cases {
                for l in &c.missing[i].present_on {
                    if let Some(&k) = machine_of.get(l.as_str()) {
                        has[k] = 0;
                    }
                }
            }
            let first = &c.missing[cases[0]];
            let only_one = first.present_on.len() == 1
                && cases
                    .iter()
                    .all(|&i| c.missing[i].present_on == first.present_on);
            let mut summary = if only_one {
                format!(
                    "{family}: {} only on {}",
                    counted(cases.len(), "case"),
                    first.present_on[0]
                )
            } else {
                let mut named: Vec<String> = lacking
                    .iter()
                    .take(NAMED_IN_SUMMARY)
                    .map(|(l, n)| format!("{l} ({n})"))
                    .collect();
                if lacking.len() > NAMED_IN_SUMMARY {
                    let more = lacking.len() - NAMED_IN_SUMMARY;
                    named.push(format!(
                        "and {more} more machine{}",
                        if more == 1 { "" } else { "s" }
                    ));
                }
                format!(
                    "{family}: {} on some machines only; missing on {}",
                    counted(cases.len(), "case"),
                    named.join(", ")
                )
            };
            let other_versions = cases
                .iter()
                .filter(|&&i| c.missing[i].note.is_some())
                .count();
            if other_versions > 0 {
                summary.push_str(&format!(
                    "; {other_versions} of them present elsewhere in another workload version"
                ));
            }
            MissingFamily {
                family,
                summary,
                lines: cases
                    .iter()
                    .take(lines_per_family)
                    .map(|&i| missing_line(c, &c.missing[i]))
                    .collect(),
                cases: cases.len(),
                lacking,
            }
        })
        .collect()
}

/// The text or Markdown section of the cases some machines lack: a line
/// per family, or with `verbose` a line per case.
fn missing_section(c: &Comparison, tf: TableFormat, verbose: bool) -> String {
    if c.missing.is_empty() {
        return String::new();
    }
    let item = if tf == TableFormat::Markdown {
        "- "
    } else {
        "  "
    };
    let mut out = String::from("\n");
    if verbose {
        out.push_str(&section_heading(tf, "Cases not on every machine"));
        for l in missing_lines(c) {
            out.push_str(&format!("{item}{l}\n"));
        }
    } else {
        out.push_str(&section_heading(
            tf,
            "Cases not on every machine (--verbose lists each case)",
        ));
        for f in missing_by_family(c, 0) {
            out.push_str(&format!("{item}{}\n", f.summary));
        }
    }
    out
}

/// CSV rows of the cases some machines lack: by default one `missing_cases`
/// row per family and machine lacking some (the count under `samples`),
/// with `verbose` one `missing` row per case and machine lacking it.
fn missing_csv_rows(c: &Comparison, verbose: bool, t: &mut Table) {
    let row = |kind: &str,
               family: &str,
               case: Option<&sysgauge_compare::MissingCase>,
               machine: &str,
               count: String| {
        vec![
            kind.to_string(),
            family.to_string(),
            case.map(|m| m.bench_id.clone()).unwrap_or_default(),
            case.map(|m| m.params.canonical()).unwrap_or_default(),
            case.map(|m| m.metric.clone()).unwrap_or_default(),
            String::new(),
            String::new(),
            machine.to_string(),
            c.reference.clone(),
            String::new(),
            count,
        ]
    };
    if verbose {
        // A row per case and machine lacking it, as asked: this output
        // alone grows with machines × cases.
        for m in &c.missing {
            for machine in m.missing_on(&c.machines) {
                t.push(row("missing", &m.family, Some(m), machine, String::new()));
            }
        }
        return;
    }
    for f in missing_by_family(c, 0) {
        for (machine, n) in &f.lacking {
            t.push(row(
                "missing_cases",
                &f.family,
                None,
                machine,
                n.to_string(),
            ));
        }
    }
}

/// Numbers left out of the rows.
pub fn excluded_lines(c: &Comparison) -> Vec<String> {
    c.excluded
        .iter()
        .map(|e| {
            format!(
                "{} on {}: {}",
                case_name(&e.bench_id, &e.params, &e.metric),
                e.machine,
                e.reason
            )
        })
        .collect()
}

/// Render a comparison (the cases some machines lack summed up per family).
pub fn render_comparison(c: &Comparison, format: CompareFormat) -> String {
    render_comparison_with(c, format, RenderOptions::default())
}

/// Render a comparison with `options`.
pub fn render_comparison_with(
    c: &Comparison,
    format: CompareFormat,
    options: RenderOptions,
) -> String {
    let verbose = options.verbose;
    match format {
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(c).unwrap_or_else(|_| "{}".to_string());
            s.push('\n');
            s
        }
        CompareFormat::Csv => csv(c, verbose),
        CompareFormat::Table => text(c, TableFormat::Text, verbose),
        CompareFormat::Markdown => text(c, TableFormat::Markdown, verbose),
    }
}

/// A section heading in a text (`Title:`) or Markdown (`## Title`) rendering.
pub(crate) fn section_heading(tf: TableFormat, s: &str) -> String {
    if tf == TableFormat::Markdown {
        format!("## {s}\n\n")
    } else {
        format!("{s}:\n")
    }
}

fn text(c: &Comparison, tf: TableFormat, verbose: bool) -> String {
    let md = tf == TableFormat::Markdown;
    let heading = |s: &str| section_heading(tf, s);
    let mut out = String::new();
    if md {
        out.push_str("# sysgauge comparison\n\n");
    }
    out.push_str(&preamble(c));
    out.push_str("\n\n");
    out.push_str(&heading("Machines"));
    out.push_str(&machines_table(c).render(tf));
    out.push('\n');
    if !c.differing_facts.is_empty() {
        out.push_str(&heading("Host facts that differ"));
        out.push_str(&facts_table(c).render(tf));
        out.push('\n');
    }
    out.push_str(&heading("Cases"));
    if c.rows.is_empty() {
        out.push_str("No case is present on two machines.\n");
    } else {
        out.push_str(&cases_table(c, c.rows.iter()).render(tf));
        let mut notes: Vec<&str> = Vec::new();
        if c.rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .any(|c| c.disturbed)
        {
            notes.push(
                "! = the machine was disturbed while the case ran (other processes, steal, throttling, waits: see the run's findings); --exclude-disturbed leaves such numbers out",
            );
        }
        if has_code_bound(c) {
            notes.push(CODE_BOUND_NOTE);
        }
        if c.rows.iter().any(|r| !r.headline) {
            notes.push(
                "* = not the case's headline metric (a CPU share, a latency beside a throughput, an index of other cases): shown with its ratio, never counted in the means",
            );
        }
        if several_runs(c) {
            notes.push(
                "runs: the run (number or file) each machine's number came from, in machine order; a machine is all of its runs, each case its newest result (NAME@RUN compares one run)",
            );
        }
        // In Markdown a line right after a table is one more row of it, and
        // lines in a row are one paragraph: a blank line before each note.
        for n in notes {
            if md {
                out.push('\n');
            }
            out.push_str(n);
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(&heading(&format!(
        "Means of ratios to {} per family and over all cases ({OVERALL}), and what BogoMIPS claims",
        c.reference
    )));
    out.push_str(&summary_table(c).render(tf));
    let list = |out: &mut String, title: &str, lines: Vec<String>| {
        if lines.is_empty() {
            return;
        }
        out.push('\n');
        out.push_str(&heading(title));
        for l in lines {
            out.push_str(if md { "- " } else { "  " });
            out.push_str(&l);
            out.push('\n');
        }
    };
    out.push_str(&missing_section(c, tf, verbose));
    list(&mut out, "Numbers left out", excluded_lines(c));
    list(&mut out, "Code-bound numbers", code_bound_lines(c));
    out
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn csv(c: &Comparison, verbose: bool) -> String {
    let mut t = Table::columns("kind, family, benchmark, params, metric, unit, better, machine, reference, >value, >samples, >ratio, >ci_low, >ci_high, significant, headline, run, code_bound, reason");
    for r in &c.rows {
        for (i, cell) in r.cells.iter().enumerate() {
            let Some(cell) = cell else { continue };
            t.push(vec![
                "case".into(),
                r.family.clone(),
                r.bench_id.clone(),
                r.params.canonical(),
                r.metric.clone(),
                r.unit.clone(),
                r.better.as_str().into(),
                c.machines[i].label.clone(),
                c.reference.clone(),
                cell.value.to_string(),
                cell.samples.to_string(),
                opt(cell.ratio),
                opt(cell.ci.map(|x| x.low)),
                opt(cell.ci.map(|x| x.high)),
                cell.significant.map(|b| b.to_string()).unwrap_or_default(),
                r.headline.to_string(),
                cell.run.clone().unwrap_or_default(),
                cell.code_bound.clone().unwrap_or_default(),
            ]);
        }
    }
    for g in c.families.iter().chain(std::iter::once(&c.overall)) {
        for (i, m) in g.cells.iter().enumerate() {
            for (kind, v, ci) in [
                ("arith_mean", m.arith_mean, None),
                ("geomean", m.geomean, m.geomean_ci),
            ] {
                t.push(vec![
                    kind.into(),
                    g.family.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    c.machines[i].label.clone(),
                    c.reference.clone(),
                    String::new(),
                    m.cases.to_string(),
                    opt(v),
                    opt(ci.map(|x| x.low)),
                    opt(ci.map(|x| x.high)),
                    if kind == "geomean" {
                        m.significant.map(|b| b.to_string()).unwrap_or_default()
                    } else {
                        String::new()
                    },
                ]);
            }
        }
    }
    for (i, b) in c.bogomips_ratio.iter().enumerate() {
        t.push(vec![
            "bogomips_ratio".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "higher".into(),
            c.machines[i].label.clone(),
            c.reference.clone(),
            opt(c.machines[i].bogomips),
            String::new(),
            opt(*b),
        ]);
    }
    missing_csv_rows(c, verbose, &mut t);
    excluded_csv_rows(c, &mut t);
    t.render(TableFormat::Csv)
}

/// CSV rows of the numbers left out of the rows, one `excluded` row per
/// machine and metric with the reason, as the text and JSON list them: a
/// script must be able to tell a case withheld from one never measured.
fn excluded_csv_rows(c: &Comparison, t: &mut Table) {
    // The family of a case as its rows say (an imported case's family is
    // its record's), else the id's prefix.
    let family = |e: &sysgauge_compare::Excluded| -> String {
        c.rows
            .iter()
            .find(|r| r.bench_id == e.bench_id)
            .map(|r| r.family.clone())
            .or_else(|| {
                c.missing
                    .iter()
                    .find(|m| m.bench_id == e.bench_id)
                    .map(|m| m.family.clone())
            })
            .unwrap_or_else(|| sysgauge_core::record::family_of(&e.bench_id).to_string())
    };
    for e in &c.excluded {
        let mut row = vec![
            "excluded".to_string(),
            family(e),
            e.bench_id.clone(),
            e.params.canonical(),
            e.metric.clone(),
            String::new(),
            String::new(),
            e.machine.clone(),
            c.reference.clone(),
        ];
        row.resize(18, String::new());
        row.push(e.reason.clone());
        t.push(row);
    }
}

#[cfg(test)]
mod tests;
