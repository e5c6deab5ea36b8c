//! The HTML report: one self-contained file (inline CSS, inline SVG charts,
//! no script, no external reference), so it opens from a `file://` URL,
//! by mail, or on a machine without network access.
//!
//! Sections, each with an `id` so tests and readers can find them: host
//! facts (the facts that differ marked), the summary (geometric mean of
//! ratios per family with its chart, and the BogoMIPS ratio), the figures
//! families draw from the machines' own results (`ReportFigure`: the sweep,
//! memory latency; one section each, given only when some machine has the
//! data), the hosts in groups when they were grouped (medians per group,
//! the hosts that stand out), the full comparison table, one section per family (its ratio
//! chart, its values by block size when it has them, its rows), the cases
//! some machines lack and the numbers left out.

#[cfg(test)]
use crate::chart::lines::LineFigure;
use crate::chart::{chart_svg, machine_color, ChartError, ChartKind, Figure};
use crate::compare::{
    cases_table, code_bound_lines, excluded_lines, machines_table, missing_by_family, preamble,
    summary_table, RenderOptions,
};
use crate::fleet::{groups_table, medians_table, outlier_rule, outliers_table};
use crate::table::TableFormat;
use sysgauge_compare::{fact_differs, host_facts, Comparison, FleetGroups, FILE_SIZE_FACT};
use sysgauge_core::record::RunRecord;

/// Escape text for HTML element content and attribute values. Control
/// characters (from imported host names, say) become visible `\u{..}`
/// escapes: invalid in XHTML/SVG and invisible or worse in HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A section id for a family name (`family-hash`).
pub fn family_id(family: &str) -> String {
    let s: String = family
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("family-{s}")
}

const STYLE: &str = r#"
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1em 2em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.differs td { background: #fff4d6; }
figure.chart { margin: 1em 0; overflow-x: auto; }
figure.chart svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: middle; }
.note { color: #555; font-size: 0.9em; }
details.missing summary { cursor: pointer; }
details.missing ul { margin-top: 0.3em; }
"#;

fn table_html(t: &crate::table::Table) -> String {
    t.render(TableFormat::Html)
}

/// The comparison's chart of `kind` as a figure; where it has nothing to
/// draw, a note saying why when the chart is `missing_note` (its name),
/// else nothing.
fn chart_figure(
    c: &Comparison,
    kind: &ChartKind,
    width: u32,
    name: &str,
    caption: &str,
    missing_note: Option<&str>,
) -> Result<String, ChartError> {
    match chart_svg(c, kind, width) {
        Ok(svg) => Ok(figure(name, caption, &svg)),
        Err(ChartError::NoData(why)) => Ok(missing_note
            .map(|what| format!("<p class=\"note\">No {what} chart: {}.</p>\n", esc(&why)))
            .unwrap_or_default()),
        Err(e) => Err(e),
    }
}

fn figure(name: &str, caption: &str, svg: &str) -> String {
    format!(
        "<figure class=\"chart\" data-chart=\"{}\">\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
        esc(name),
        esc(caption)
    )
}

/// A figure drawn from the machines' own results rather than from the
/// comparison's rows (so a machine's points count even where no other
/// machine has the same case): a section of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFigure {
    /// The section's id is `chart-NAME`; the figure's `data-chart` is NAME.
    pub name: String,
    /// The section's heading and its link in the navigation.
    pub heading: String,
    pub caption: String,
    pub figure: Figure,
}

/// The whole report. `runs` are the compared machines' runs, in the
/// comparison's machine order; `figures` the families' figures of them
/// (each drawn with the same machine colours); `generated` says when and
/// by what; `groups`, when the hosts were grouped (`--group-by`), adds the
/// per-group medians and the hosts that stand out.
pub fn render_html(
    c: &Comparison,
    runs: &[&RunRecord],
    figures: &[ReportFigure],
    groups: Option<&FleetGroups>,
    generated: &str,
    width: u32,
) -> Result<String, ChartError> {
    render_html_with(
        c,
        runs,
        figures,
        groups,
        generated,
        width,
        RenderOptions::default(),
    )
}

/// The whole report, with `options` (`verbose`: the lists of missing
/// cases open).
pub fn render_html_with(
    c: &Comparison,
    runs: &[&RunRecord],
    figures: &[ReportFigure],
    groups: Option<&FleetGroups>,
    generated: &str,
    width: u32,
    options: RenderOptions,
) -> Result<String, ChartError> {
    let mut h = String::new();
    let labels: Vec<&str> = c.machines.iter().map(|m| m.label.as_str()).collect();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!(
        "<title>sysgauge report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&labels.join(", "))
    ));
    h.push_str("<header id=\"top\">\n<h1>sysgauge: how these machines compare</h1>\n");
    h.push_str(&format!("<p class=\"note\">{}</p>\n", esc(generated)));
    h.push_str(&format!("<p>{}</p>\n<p>Machines: ", esc(&preamble(c))));
    for (i, l) in labels.iter().enumerate() {
        let col = machine_color(i);
        h.push_str(&format!(
            "<span class=\"machine\"><span class=\"swatch\" style=\"background: rgb({},{},{})\"></span>{}</span> ",
            col.0,
            col.1,
            col.2,
            esc(l)
        ));
    }
    h.push_str("</p>\n");
    // Where each machine's numbers come from, and the names users gave.
    h.push_str(&table_html(&machines_table(c)));
    h.push_str(
        "</header>\n<nav>\n<a href=\"#facts\">Host facts</a><a href=\"#summary\">Summary</a>",
    );
    if groups.is_some() {
        h.push_str("<a href=\"#groups\">Groups</a>");
    }
    for f in figures {
        h.push_str(&format!(
            "<a href=\"#chart-{}\">{}</a>",
            esc(&f.name),
            esc(&f.heading)
        ));
    }
    h.push_str("<a href=\"#cases\">Comparison table</a>");
    for g in &c.families {
        h.push_str(&format!(
            "<a href=\"#{}\">{}</a>",
            family_id(&g.family),
            esc(&g.family)
        ));
    }
    if !c.missing.is_empty() {
        h.push_str("<a href=\"#missing\">Missing cases</a>");
    }
    h.push_str("\n</nav>\n");

    // Host facts: every fact, the ones that differ marked.
    h.push_str("<section id=\"facts\">\n<h2>Host facts</h2>\n<p class=\"note\">Facts that differ between the machines are highlighted: they may explain the numbers below.</p>\n<table>\n<tr><th>fact</th>");
    for l in &labels {
        h.push_str(&format!("<th>{}</th>", esc(l)));
    }
    h.push_str("</tr>\n");
    let facts: Vec<Vec<(&'static str, String)>> = runs.iter().map(|r| host_facts(r)).collect();
    if let Some(first) = facts.first() {
        for (i, (name, _)) in first.iter().enumerate() {
            let values: Vec<String> = facts.iter().map(|f| f[i].1.clone()).collect();
            // A fact no machine has (no case worked on a file of a size
            // the case does not say) is left out.
            if *name == FILE_SIZE_FACT && values.iter().all(|v| v == "unknown") {
                continue;
            }
            let differs = fact_differs(name, &values, runs);
            h.push_str(&format!(
                "<tr{}><th>{}</th>",
                if differs { " class=\"differs\"" } else { "" },
                esc(name)
            ));
            for v in &values {
                h.push_str(&format!("<td>{}</td>", esc(v)));
            }
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table>\n</section>\n");

    // Summary.
    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    h.push_str(&chart_figure(
        c,
        &ChartKind::Summary,
        width,
        "summary",
        &format!("Geometric mean of the ratios to {} per family and over all cases; whiskers are 95 % intervals.", c.reference),
        Some("summary"),
    )?);
    h.push_str("<p class=\"note\">Means of the ratios per family and over all cases (all), one line per machine; the BogoMIPS lines show what BogoMIPS alone would claim.</p>\n");
    h.push_str(&table_html(&summary_table(c)));
    h.push_str("</section>\n");

    if let Some(g) = groups {
        h.push_str(&format!(
            "<section id=\"groups\">\n<h2>Hosts grouped by {}</h2>\n",
            esc(&g.group_by)
        ));
        h.push_str(&table_html(&groups_table(g)));
        h.push_str("<h3>Median per group (lowest–highest host, hosts)</h3>\n");
        h.push_str(&table_html(&medians_table(g)));
        h.push_str(&format!(
            "<h3 id=\"outliers\">Hosts that stand out from their group</h3>\n<p class=\"note\">{}</p>\n",
            esc(&outlier_rule())
        ));
        if g.outliers.is_empty() {
            h.push_str("<p>None.</p>\n");
        } else {
            h.push_str(&table_html(&outliers_table(g)));
        }
        h.push_str("</section>\n");
    }

    // The families' figures of the machines' own results.
    for f in figures {
        h.push_str(&format!(
            "<section id=\"chart-{}\" class=\"figure\">\n<h2>{}</h2>\n",
            esc(&f.name),
            esc(&f.heading)
        ));
        h.push_str(&figure(&f.name, &f.caption, &f.figure.svg(width)?));
        h.push_str("</section>\n");
    }

    // The full table.
    h.push_str("<section id=\"cases\">\n<h2>Comparison table</h2>\n");
    if c.rows.is_empty() {
        h.push_str("<p>No case is present on two machines.</p>\n");
    } else {
        h.push_str(&table_html(&cases_table(c, c.rows.iter())));
    }
    h.push_str("</section>\n");

    // One section per family.
    for g in &c.families {
        let fam = &g.family;
        h.push_str(&format!(
            "<section id=\"{}\" class=\"family\">\n<h2>{}</h2>\n",
            family_id(fam),
            esc(fam)
        ));
        let family = Some(fam.clone());
        h.push_str(&chart_figure(
            c,
            &ChartKind::Ratios {
                family: family.clone(),
            },
            width,
            &format!("ratios-{fam}"),
            &format!("Ratio of each {fam} case to {}.", c.reference),
            Some("ratio"),
        )?);
        h.push_str(&chart_figure(
            c,
            &ChartKind::BlockSize { family },
            width,
            &format!("block-size-{fam}"),
            &format!("{fam}: each machine's value by block size."),
            None,
        )?);
        h.push_str(&table_html(&cases_table(c, c.family_rows(fam))));
        h.push_str("</section>\n");
    }

    let list = |h: &mut String, id: &str, title: &str, lines: Vec<String>| {
        if lines.is_empty() {
            return;
        }
        h.push_str(&format!(
            "<section id=\"{id}\">\n<h2>{}</h2>\n<ul>\n",
            esc(title)
        ));
        for l in lines {
            h.push_str(&format!("<li>{}</li>\n", esc(&l)));
        }
        h.push_str("</ul>\n</section>\n");
    };
    h.push_str(&missing_html(c, options.verbose));
    list(&mut h, "excluded", "Numbers left out", excluded_lines(c));
    list(
        &mut h,
        "code-bound",
        "Code-bound numbers",
        code_bound_lines(c),
    );

    h.push_str("<footer>\n<h2 id=\"method\">How to read this</h2>\n<p class=\"note\">Each value is the median of the repetitions of a case. A ratio divides a machine's value by the reference's, turned round for times and latencies, so above 1 always means faster. Only equal benchmark ids, parameters, workload versions and metrics are compared. Intervals are percentile-bootstrap 95 % intervals computed from the raw samples (shown where both machines have at least two); a ratio or mean marked ~ is not significantly different from 1. A value marked ! was measured while its machine was disturbed (other processes, stolen time, throttling or waits; the run's findings say which); --exclude-disturbed leaves such values out. A value marked # is code-bound: sysgauge's code for that case is known to run slower than the best reference tool on that machine's CPU (the list of code-bound numbers says by how much), so its ratio partly measures sysgauge's code, not the machine. The geometric mean is the fair average of ratios; the arithmetic mean is shown beside it as spreadsheets do.</p>\n</footer>\n</body>\n</html>\n");
    Ok(h)
}

/// At most this many cases are listed per family in a report: 500
/// machines that share no case lack 300,000, which would make a page no
/// browser opens (`compare --verbose` and the JSON document list them all).
const LINES_PER_FAMILY: usize = 1000;

/// The cases some machines lack: a line per family, each opening (a
/// `<details>`, so no script) on the family's cases; open from the start
/// with `verbose`. Hundreds of such cases are common and would bury the
/// rest of the report.
fn missing_html(c: &Comparison, verbose: bool) -> String {
    if c.missing.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<section id=\"missing\">\n<h2>Cases not on every machine</h2>\n<p class=\"note\">One line per family; open a line for its cases.</p>\n",
    );
    for f in missing_by_family(c, LINES_PER_FAMILY) {
        h.push_str(&format!(
            "<details class=\"missing\" data-family=\"{}\"{}>\n<summary>{}</summary>\n<ul>\n",
            esc(&f.family),
            if verbose { " open" } else { "" },
            esc(&f.summary)
        ));
        for l in &f.lines {
            h.push_str(&format!("<li>{}</li>\n", esc(l)));
        }
        if f.cases > f.lines.len() {
            h.push_str(&format!(
                "<li class=\"note\">and {} more (sysgauge compare --verbose or --format json lists every case)</li>\n",
                f.cases - f.lines.len()
            ));
        }
        h.push_str("</ul>\n</details>\n");
    }
    h.push_str("</section>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::comparison;

    /// Ratios of 1e189 and infinity (values a database may hold) give a
    /// report of the usual size: its charts' axes are bounded.
    #[test]
    fn extreme_ratios_give_a_report_of_bounded_size() {
        let c = crate::testutil::extreme_comparison();
        let html = render_html(&c, &[], &[], None, "generated for a test", 900).unwrap();
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.len() < 1_000_000, "{} bytes", html.len());
    }

    #[test]
    fn report_is_self_contained_with_sections_and_charts() {
        let c = comparison();
        // The comparison's runs are not kept in it; facts come from runs.
        let runs = crate::testutil::runs();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let html = render_html(&c, &refs, &[], None, "generated for a test", 1000).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        for id in [
            "facts",
            "summary",
            "cases",
            "family-beta",
            "family-gamma",
            "missing",
            "method",
        ] {
            assert!(html.contains(&format!("id=\"{id}\"")), "no section {id}");
        }
        assert_eq!(
            html.matches("<svg").count(),
            4,
            "summary, two ratio charts, one block-size chart"
        );
        assert!(html.contains("data-chart=\"block-size-beta\""));
        assert!(!html.contains("data-chart=\"block-size-gamma\""));
        // Text from records is escaped.
        assert!(html.contains("hostx &lt;CPU&gt; &amp; co"));
        assert!(html.contains("class=\"differs\""));
        // Nothing is fetched: no scripts, links, images or URLs besides the
        // SVG namespace.
        for bad in ["<script", "<link", "<img", "src=", "url("] {
            assert!(!html.contains(bad), "found {bad}");
        }
        assert_eq!(
            html.matches("http").count(),
            html.matches("http://www.w3.org/2000/svg").count()
        );
    }

    #[test]
    fn a_section_per_figure_given() {
        use crate::chart::lines::{LinePanel, Marker, Series, TickFormat, XAxis, XScale};
        let c = comparison();
        let runs = crate::testutil::runs();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let figure = ReportFigure {
            name: "demo".into(),
            heading: "Demo <figure>".into(),
            caption: "Each machine's demo.".into(),
            figure: Figure::Lines(LineFigure {
                title: "demo".into(),
                legend: vec![(1, "hosta".into())],
                key: Vec::new(),
                x: XAxis {
                    label: "n".into(),
                    scale: XScale::Linear,
                    ticks: TickFormat::Count,
                },
                shared: true,
                panels: vec![LinePanel {
                    title: "p".into(),
                    y_label: "MB/s".into(),
                    log_y: false,
                    series: vec![Series {
                        machine: 1,
                        marker: Marker::Filled,
                        tag: None,
                        points: vec![(1.0, 2.0), (2.0, 3.0)],
                    }],
                    marks: Vec::new(),
                }],
            }),
        };
        let html = render_html(&c, &refs, &[figure], None, "test", 1000).unwrap();
        assert!(html.contains(
            "<section id=\"chart-demo\" class=\"figure\">\n<h2>Demo &lt;figure&gt;</h2>"
        ));
        assert!(html.contains("<a href=\"#chart-demo\">Demo &lt;figure&gt;</a>"));
        assert!(html.contains("data-chart=\"demo\""));
        assert_eq!(html.matches("<svg").count(), 5);
        // After the summary, before the full table.
        let at = |s: &str| html.find(s).unwrap_or(usize::MAX);
        assert!(at("id=\"summary\"") < at("id=\"chart-demo\""));
        assert!(at("id=\"chart-demo\"") < at("id=\"cases\""));
    }

    #[test]
    fn ids_and_escaping() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(esc("h\u{1b}[2J\u{1}\n"), "h\\u{1b}[2J\\u{1}\n");
        assert_eq!(family_id("hash"), "family-hash");
        assert_eq!(family_id("My Fam"), "family-my-fam");
    }

    #[test]
    fn grouped_hosts_get_their_section() {
        let c = comparison();
        let runs = crate::testutil::runs();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let membership: Vec<Vec<String>> =
            c.machines.iter().map(|_| vec!["rack<1>".into()]).collect();
        let g = sysgauge_compare::group_hosts(&c, &membership, "tag:rack");
        let plain = render_html(&c, &refs, &[], None, "test", 1000).unwrap();
        assert!(!plain.contains("id=\"groups\""));
        let html = render_html(&c, &refs, &[], Some(&g), "test", 1000).unwrap();
        assert!(html.contains("<a href=\"#groups\">Groups</a>"));
        assert!(html.contains("<h2>Hosts grouped by tag:rack</h2>"));
        assert!(html.contains("rack&lt;1&gt;"), "group names are escaped");
        assert!(html.contains("id=\"outliers\""));
    }

    #[test]
    fn missing_cases_collapse_per_family() {
        let mut c = comparison();
        for n in 0..40u64 {
            c.missing.push(sysgauge_compare::MissingCase {
                family: "delta".into(),
                bench_id: "delta.x".into(),
                params: sysgauge_core::record::Params::new().with("size", n),
                workload_version: 1,
                metric: "t<p>".into(),
                present_on: vec!["hostx".into()],
                note: None,
            });
        }
        let runs = crate::testutil::runs();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let html = render_html(&c, &refs, &[], None, "test", 1000).unwrap();
        let section = html
            .split("<section id=\"missing\">")
            .nth(1)
            .and_then(|s| s.split("</section>").next())
            .unwrap_or_else(|| panic!("no missing section"));
        assert_eq!(section.matches("<details").count(), 2, "{section}");
        assert!(!section.contains(" open>"), "collapsed: {section}");
        assert!(section.contains(
            "<details class=\"missing\" data-family=\"delta\">\n<summary>delta: 40 cases only on hostx</summary>"
        ));
        assert!(section.contains(
            "<summary>gamma: 1 case on some machines only; missing on hostb (1)</summary>"
        ));
        assert_eq!(section.matches("<li>delta.x size=").count(), 40);
        assert!(section.contains("t&lt;p&gt;"), "escaped");
        let open = render_html_with(
            &c,
            &refs,
            &[],
            None,
            "test",
            1000,
            RenderOptions { verbose: true },
        )
        .unwrap();
        assert_eq!(
            open.matches("<details class=\"missing\" data-family=")
                .count(),
            2
        );
        assert_eq!(open.matches("\" open>\n<summary>").count(), 2);
    }
}
