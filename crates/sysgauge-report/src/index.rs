//! The index lines that end a run summary: per family and overall, the run
//! against the embedded reference machine (1000 = as fast as it).

use crate::table::{Table, TableFormat};
use sysgauge_compare::{IndexLine, IndexReport};

fn cases_note(l: &IndexLine) -> String {
    match (l.cases, l.unmatched) {
        (0, _) => "no case in common with the reference".to_string(),
        (n, 0) => format!("{n} cases"),
        (n, u) => format!("{n} cases; {u} not in the reference"),
    }
}

/// "Index against the reference machine …" and one line per family plus
/// overall.
pub fn index_text(report: &IndexReport, baseline_version: u32, machine: &str) -> String {
    let mut t = Table::columns("family, >index, based on");
    let row = |l: &IndexLine| {
        vec![
            l.family.clone(),
            l.index
                .map(|v| format!("{v:.0}"))
                .unwrap_or_else(|| "-".to_string()),
            cases_note(l),
        ]
    };
    for l in &report.families {
        t.push(row(l));
    }
    let mut overall = row(&report.overall);
    overall[0] = "overall".to_string();
    t.push(overall);
    format!(
        "Index (1000 = the reference machine of baseline v{baseline_version}; geometric mean of ratios):\n\
         reference machine: {machine}\n{}",
        t.render(TableFormat::Text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let r = IndexReport {
            families: vec![
                IndexLine {
                    family: "hash".into(),
                    index: Some(1234.4),
                    cases: 9,
                    unmatched: 0,
                },
                IndexLine {
                    family: "cpu".into(),
                    index: None,
                    cases: 0,
                    unmatched: 4,
                },
            ],
            overall: IndexLine {
                family: "all".into(),
                index: Some(1234.4),
                cases: 9,
                unmatched: 4,
            },
        };
        let s = index_text(&r, 3, "box");
        assert!(s.starts_with("Index (1000 = the reference machine of baseline v3;"));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "reference machine: box");
        assert!(
            lines[4].starts_with("hash") && lines[4].contains("1234  9 cases"),
            "{s}"
        );
        assert!(lines[5].contains("-  no case in common"), "{s}");
        assert!(
            lines[6].starts_with("overall") && lines[6].contains("9 cases; 4 not in the reference"),
            "{s}"
        );
    }
}
