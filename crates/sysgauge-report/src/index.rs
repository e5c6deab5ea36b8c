//! The index lines that end a run summary: per family and overall, the run
//! against the embedded reference machine (1000 = as fast as it).

use crate::format::counted;
use crate::table::{Table, TableFormat};
use sysgauge_compare::{IndexLine, IndexReport};

fn cases_note(l: &IndexLine) -> String {
    let mut note = match (l.cases, l.unmatched) {
        (0, _) => "no case in common with the reference".to_string(),
        (n, 0) => counted(n, "case"),
        (n, u) => format!("{}; {u} not in the reference", counted(n, "case")),
    };
    if !l.left_out.is_empty() {
        note.push_str(&format!("; {} left out (below)", l.left_out.len()));
    }
    if l.disturbed > 0 {
        note.push_str(&format!("; {} disturbed", l.disturbed));
    }
    // Apart from this run's: `--exclude-disturbed` cannot leave these out.
    if l.reference_disturbed > 0 {
        note.push_str(&format!(
            "; {} disturbed on the reference machine",
            l.reference_disturbed
        ));
    }
    note
}

/// "Index against the reference machine …", one line per family plus
/// overall with its 95 % interval, then the cases left out and why.
pub fn index_text(report: &IndexReport, baseline_version: u32, machine: &str) -> String {
    let mut t = Table::columns("family, >index, >95 % interval, based on");
    let row = |l: &IndexLine| {
        vec![
            l.family.clone(),
            l.index
                .map(|v| format!("{v:.0}"))
                .unwrap_or_else(|| "-".to_string()),
            l.interval
                .filter(|_| l.index.is_some())
                .map(|i| format!("{:.0}-{:.0}", i.low, i.high))
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
    let mut text = format!(
        "Index (1000 = the reference machine of baseline v{baseline_version}; geometric mean of ratios):\n\
         reference machine: {machine}\n{}",
        t.render(TableFormat::Text)
    );
    if !report.overall.left_out.is_empty() {
        text.push_str("left out of the index (a result that is not a measure of its machine, here or on the reference):\n");
        for why in &report.overall.left_out {
            text.push_str(&format!("  - {why}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_compare::Interval;

    #[test]
    fn lines() {
        let line = |family: &str, index: Option<f64>, cases, unmatched| IndexLine {
            family: family.into(),
            index,
            interval: index.map(|v| Interval {
                low: v - 10.0,
                high: v + 12.0,
            }),
            cases,
            unmatched,
            left_out: Vec::new(),
            disturbed: 0,
            reference_disturbed: 0,
        };
        let mut disk = line("store", Some(900.0), 3, 0);
        disk.disturbed = 1;
        disk.reference_disturbed = 2;
        disk.left_out = vec!["store.write throughput: a write cache".into()];
        let mut overall = line("all", Some(1234.4), 12, 4);
        overall.left_out = disk.left_out.clone();
        let r = IndexReport {
            families: vec![
                line("hash", Some(1234.4), 9, 0),
                line("cpu", None, 0, 4),
                disk,
            ],
            overall,
        };
        let s = index_text(&r, 3, "box");
        assert!(s.starts_with("Index (1000 = the reference machine of baseline v3;"));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "reference machine: box");
        assert!(
            lines[4].starts_with("hash") && lines[4].contains("1234      1224-1246  9 cases"),
            "{s}"
        );
        assert!(
            lines[5].contains("-              -  no case in common"),
            "{s}"
        );
        assert!(
            lines[6].contains(
                "3 cases; 1 left out (below); 1 disturbed; 2 disturbed on the reference machine"
            ),
            "{s}"
        );
        assert!(
            lines[7].starts_with("overall")
                && lines[7].contains("12 cases; 4 not in the reference"),
            "{s}"
        );
        assert!(
            s.contains("  - store.write throughput: a write cache"),
            "{s}"
        );
    }
}
