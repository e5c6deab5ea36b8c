//! Renderings of `FleetGroups` (`compare --group-by`): the groups and their
//! hosts, each case's median per group (with the host count and the spread
//! as min–max), and the hosts that stand out from their group, worst first.
//! Text, Markdown, CSV (one row per group and case, then one per outlier)
//! and the JSON document; the HTML report takes the tables.

use crate::compare::{section_heading, CompareFormat};
use crate::format::{format_value, unit_label};
use crate::table::{Table, TableFormat};
use sysgauge_compare::fleet::{MIN_DEVIATION, MIN_HOSTS_FOR_OUTLIERS, OUTLIER_Z};
use sysgauge_compare::{FleetGroups, GroupCell};

/// The groups, one line each.
pub fn groups_table(g: &FleetGroups) -> Table {
    let mut t = Table::columns("group, >hosts, members");
    for h in &g.groups {
        t.push(vec![
            h.name.clone(),
            h.hosts.len().to_string(),
            h.hosts.join(", "),
        ]);
    }
    t
}

fn cell_text(c: &Option<GroupCell>) -> String {
    match c {
        None => "-".into(),
        Some(c) if c.hosts == 1 => format_value(c.median),
        Some(c) => format!(
            "{} ({}–{}, n={})",
            format_value(c.median),
            format_value(c.min),
            format_value(c.max),
            c.hosts
        ),
    }
}

/// One row per case, one column per group: the median (min–max, n).
pub fn medians_table(g: &FleetGroups) -> Table {
    let mut spec = String::from("benchmark, params, metric, unit");
    for h in &g.groups {
        // The spec is comma-separated: a group name with a comma would
        // split; the name shows in full in the groups table.
        spec.push_str(&format!(", >{}", h.name.replace(',', ";")));
    }
    let mut t = Table::columns(&spec);
    for r in &g.rows {
        let mut row = vec![
            r.bench_id.clone(),
            r.params.to_string(),
            r.metric.clone(),
            unit_label(&r.unit).to_string(),
        ];
        row.extend(r.cells.iter().map(cell_text));
        t.push(row);
    }
    t
}

/// One row per outlier, worst first.
pub fn outliers_table(g: &FleetGroups) -> Table {
    let mut t = Table::columns(
        "host, group, benchmark, params, metric, >value, >group median, >deviation, >z, verdict",
    );
    for o in &g.outliers {
        t.push(vec![
            o.host.clone(),
            o.group.clone(),
            o.bench_id.clone(),
            o.params.to_string(),
            o.metric.clone(),
            format!("{} {}", format_value(o.value), unit_label(&o.unit)),
            format!("{} {}", format_value(o.group_median), unit_label(&o.unit)),
            format!("{:+.1} %", o.deviation * 100.0),
            o.z.map(|z| format!("{z:.1}")).unwrap_or_else(|| "∞".into()),
            if o.worse { "worse" } else { "better" }.into(),
        ]);
    }
    t
}

/// How to read the outlier table (the rule and its thresholds).
pub fn outlier_rule() -> String {
    format!(
        "A host is listed when its value is more than {OUTLIER_Z} modified z-scores (0.6745 × (x − median) / MAD) and at least {:.0} % away from its group's median; groups of fewer than {MIN_HOSTS_FOR_OUTLIERS} hosts with the case are not judged.",
        MIN_DEVIATION * 100.0
    )
}

/// `compare --group-by` in one of the comparison formats.
pub fn render_groups(g: &FleetGroups, format: CompareFormat) -> String {
    let tf = match format {
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(g).unwrap_or_else(|_| "{}".to_string());
            s.push('\n');
            return s;
        }
        CompareFormat::Csv => return csv(g),
        CompareFormat::Table => TableFormat::Text,
        CompareFormat::Markdown => TableFormat::Markdown,
    };
    let md = tf == TableFormat::Markdown;
    let heading = |s: &str| section_heading(tf, s);
    let mut out = String::new();
    if md {
        out.push_str(&format!("# sysgauge: hosts grouped by {}\n\n", g.group_by));
    }
    let hosts: usize = {
        let mut all: Vec<&String> = g.groups.iter().flat_map(|h| &h.hosts).collect();
        all.sort();
        all.dedup();
        all.len()
    };
    out.push_str(&format!(
        "{} in {} by {}.\n\n",
        crate::format::counted(hosts, "host"),
        crate::format::counted(g.groups.len(), "group"),
        g.group_by
    ));
    out.push_str(&heading("Groups"));
    out.push_str(&groups_table(g).render(tf));
    out.push('\n');
    out.push_str(&heading("Median per group (lowest–highest host, hosts)"));
    if g.rows.is_empty() {
        out.push_str("No case is present on two hosts.\n");
    } else {
        out.push_str(&medians_table(g).render(tf));
    }
    out.push('\n');
    out.push_str(&heading("Hosts that stand out from their group"));
    out.push_str(&outlier_rule());
    out.push_str("\n\n");
    if g.outliers.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str(&outliers_table(g).render(tf));
        let counts: Vec<String> = g
            .outliers_by_host()
            .iter()
            .map(|(h, n)| format!("{h} ({n})"))
            .collect();
        out.push_str(&format!(
            "\nOutlying cases per host: {}\n",
            counts.join(", ")
        ));
    }
    out
}

fn csv(g: &FleetGroups) -> String {
    let mut t = Table::columns(
        "kind, group, host, benchmark, params, metric, unit, better, >hosts, >median, >mad, >min, >max, >value, >deviation, >z",
    );
    for r in &g.rows {
        for (h, c) in g.groups.iter().zip(&r.cells) {
            let Some(c) = c else { continue };
            t.push(vec![
                "group".into(),
                h.name.clone(),
                String::new(),
                r.bench_id.clone(),
                r.params.canonical(),
                r.metric.clone(),
                r.unit.clone(),
                r.better.as_str().into(),
                c.hosts.to_string(),
                c.median.to_string(),
                c.mad.map(|m| m.to_string()).unwrap_or_default(),
                c.min.to_string(),
                c.max.to_string(),
            ]);
        }
    }
    for o in &g.outliers {
        t.push(vec![
            "outlier".into(),
            o.group.clone(),
            o.host.clone(),
            o.bench_id.clone(),
            o.params.canonical(),
            o.metric.clone(),
            o.unit.clone(),
            String::new(),
            String::new(),
            o.group_median.to_string(),
            String::new(),
            String::new(),
            String::new(),
            o.value.to_string(),
            o.deviation.to_string(),
            o.z.map(|z| z.to_string()).unwrap_or_else(|| "inf".into()),
        ]);
    }
    t.render(TableFormat::Csv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_compare::testutil::{run_with, throughput};
    use sysgauge_compare::{compare, group_hosts, Machine};

    fn groups() -> FleetGroups {
        let machines: Vec<Machine> = [
            ("a1", 100.0),
            ("a2", 101.0),
            ("a3", 99.0),
            ("a4", 60.0),
            ("b1", 300.0),
        ]
        .iter()
        .map(|(h, v)| {
            Machine::new(
                h.to_string(),
                run_with(h, None, vec![throughput("t.case", &[*v, *v])]),
            )
        })
        .collect();
        let c = compare(&machines, 0, &[]).unwrap_or_else(|e| panic!("{e}"));
        let membership: Vec<Vec<String>> = ["a", "a", "a", "a", "b"]
            .iter()
            .map(|g| vec![g.to_string()])
            .collect();
        group_hosts(&c, &membership, "tag:rack")
    }

    #[test]
    fn text_shows_medians_and_the_outlier() {
        let text = render_groups(&groups(), CompareFormat::Table);
        assert!(
            text.starts_with("5 hosts in 2 groups by tag:rack."),
            "{text}"
        );
        let medians = text
            .lines()
            .find(|l| l.starts_with("t.case"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(medians.contains("99.50 (60.00–101.0, n=4)"), "{medians}");
        assert!(medians.trim_end().ends_with("300.0"), "{medians}");
        let outlier = text
            .lines()
            .find(|l| l.starts_with("a4"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            outlier.contains("-39.7 %") && outlier.contains("worse"),
            "{outlier}"
        );
        assert!(text.contains("Outlying cases per host: a4 (1)"), "{text}");
    }

    #[test]
    fn csv_and_json() {
        let g = groups();
        let csv = render_groups(&g, CompareFormat::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with("kind,group,host,benchmark"));
        assert_eq!(lines.iter().filter(|l| l.starts_with("group,")).count(), 2);
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("outlier,a,a4,"))
                .count(),
            1
        );
        let json = render_groups(&g, CompareFormat::Json);
        let back: FleetGroups = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, g);
    }
}
