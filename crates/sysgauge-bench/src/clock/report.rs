//! The clock check as a table: one line per phase (and per CPU when the
//! user named CPUs) with the measured
//! (effective) clock, what the kernel reports, the nominal clock and the
//! measured share of it. Rendered from `clock.effective` records only.

use sysgauge_core::record::{ResultRecord, Status};
use sysgauge_report::summary::spread_cell;
use sysgauge_report::table::{Table, TableFormat};

/// The clock table of a run (empty when it has no clock results).
pub fn clock_table(results: &[ResultRecord], format: TableFormat) -> String {
    let mut t = Table::columns(">cpu, phase, >measured MHz, >spread, >cpu MHz, >cpufreq MHz, >nominal MHz, >of nominal, nominal from, governor");
    let int = |r: &ResultRecord, k: &str| {
        r.details
            .get_int(k)
            .map_or("-".to_string(), |v| v.to_string())
    };
    for r in results.iter().filter(|r| r.bench_id == "clock.effective") {
        // One CPU, or all of them measured in turn (their pooled samples,
        // each CPU's own median in the details).
        let cpu = match (r.params.get_int("cpu"), r.details.get_str("per_cpu_mhz")) {
            (Some(c), _) => c.to_string(),
            (None, Some(each)) => format!("all ({each})"),
            (None, None) => "-".into(),
        };
        let phase = r.params.get_str("phase").unwrap_or("-").to_string();
        let (measured, spread, share) = match (&r.status, r.primary()) {
            (Status::Ok, Some(m)) => {
                let share = r
                    .details
                    .get_int("nominal_mhz")
                    .filter(|n| *n > 0)
                    .map_or("-".to_string(), |n| {
                        format!("{:.0} %", 100.0 * m.value() / n as f64)
                    });
                (format!("{:.0}", m.value()), spread_cell(r, m), share)
            }
            (Status::Skipped { reason, .. }, _) => {
                (format!("skipped: {reason}"), String::new(), String::new())
            }
            (Status::Failed { error }, _) => {
                (format!("FAILED: {error}"), String::new(), String::new())
            }
            (Status::Ok, None) => ("-".into(), String::new(), String::new()),
        };
        t.push(vec![
            cpu,
            phase,
            measured,
            spread,
            int(r, "reported_mhz"),
            int(r, "scaling_cur_mhz"),
            int(r, "nominal_mhz"),
            share,
            r.details
                .get_str("nominal_source")
                .unwrap_or("none")
                .to_string(),
            r.details.get_str("governor").unwrap_or("-").to_string(),
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    t.render(format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::{Metric, Params};
    use sysgauge_core::{Better, Unit};

    #[test]
    fn one_line_per_cpu() {
        let mut details = Params::new()
            .with("reported_mhz", 2600i64)
            .with("nominal_mhz", 2600i64)
            .with("nominal_source", "the model name");
        details.insert("governor", "performance");
        let r = ResultRecord {
            details,
            duration_seconds: 0.1,
            ..ResultRecord::new(
                "clock.effective",
                Params::new().with("cpu", 1u64).with("phase", "start"),
                Status::Ok,
                Metric::new(
                    "effective",
                    Unit::MHz,
                    Better::Higher,
                    vec![1300.0, 1300.0, 1300.0],
                )
                .into_iter()
                .collect(),
            )
        };
        let text = clock_table(&[r], TableFormat::Text);
        let line = text.lines().nth(2).unwrap_or("");
        assert!(
            line.contains("start")
                && line.contains("1300")
                && line.contains("50 %")
                && line.contains("performance"),
            "{text}"
        );
        assert_eq!(clock_table(&[], TableFormat::Text), "");
    }
}
