//! Load, uptime and boot time: /proc/loadavg, /proc/uptime, /proc/stat.
//!
//! A loaded machine measures slower, so the load at collection time travels
//! with the run; boot time tells runs of one boot apart from the next
//! (a reboot may change clocks, governors and caches).

use crate::sysroot::SysRoot;
use chrono::{DateTime, Utc};
use sysgauge_core::host::LoadInfo;

fn finite(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// Parses /proc/loadavg (`1.16 0.49 0.19 2/86 9063`) into the 1, 5 and 15
/// minute load averages.
pub fn parse_loadavg(text: &str) -> Option<(f64, f64, f64)> {
    let mut it = text.split_whitespace();
    Some((
        finite(it.next()?)?,
        finite(it.next()?)?,
        finite(it.next()?)?,
    ))
}

/// Parses /proc/uptime (`735.90 1253.64`) into seconds since boot.
pub fn parse_uptime(text: &str) -> Option<f64> {
    finite(text.split_whitespace().next()?)
}

/// The boot time (`btime`, seconds since the epoch) from /proc/stat.
pub fn parse_stat_btime(text: &str) -> Option<DateTime<Utc>> {
    let secs = text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<i64>()
        .ok()?;
    DateTime::from_timestamp(secs, 0)
}

/// Collects load, uptime and boot time.
pub(crate) fn collect_load(root: &SysRoot) -> LoadInfo {
    let load = root.read_proc("loadavg").and_then(|t| parse_loadavg(&t));
    LoadInfo {
        load1: load.map(|l| l.0),
        load5: load.map(|l| l.1),
        load15: load.map(|l| l.2),
        uptime_seconds: root.read_proc("uptime").and_then(|t| parse_uptime(&t)),
        boot_time: root.read_proc("stat").and_then(|t| parse_stat_btime(&t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses() {
        assert_eq!(
            parse_loadavg("1.16 0.49 0.19 2/86 9063\n"),
            Some((1.16, 0.49, 0.19))
        );
        assert_eq!(parse_loadavg("1.16 0.49"), None);
        assert_eq!(parse_uptime("735.90 1253.64\n"), Some(735.9));
        assert_eq!(parse_uptime("NaN 1"), None);
        let bt = parse_stat_btime("cpu  1 2 3\nbtime 1795320712\nprocesses 9\n");
        assert_eq!(bt.map(|t| t.timestamp()), Some(1_795_320_712));
        assert_eq!(parse_stat_btime("btime x\n"), None);
    }

    proptest! {
        #[test]
        fn never_panic(text in "\\PC{0,200}") {
            let _ = parse_loadavg(&text);
            let _ = parse_uptime(&text);
            let _ = parse_stat_btime(&text);
        }

        #[test]
        fn btime_any_number(n in any::<i64>()) {
            let _ = parse_stat_btime(&format!("btime {n}\n"));
        }
    }
}
