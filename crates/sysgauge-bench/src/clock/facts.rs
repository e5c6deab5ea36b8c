//! Per-CPU clock facts the clock check compares its measurement with, and
//! what it reports when a core runs slow: the `cpu MHz` of each processor
//! in /proc/cpuinfo, the cpufreq files of each CPU (current, maximum and
//! base frequency, governor), thermal zone temperatures and the thermal
//! throttle counters.
//!
//! The host crate collects the machine-wide facts (first CPU only); these
//! are per CPU and read at the moment of each measurement. Parsers take the
//! file's text; readers take a root directory so tests can use fixtures.
//! Anything missing is `None` or empty, never an error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `cpu MHz` of every `processor` block of /proc/cpuinfo.
pub fn parse_cpu_mhz(cpuinfo: &str) -> BTreeMap<u32, f64> {
    let mut out = BTreeMap::new();
    let mut current: Option<u32> = None;
    for line in cpuinfo.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "processor" => current = v.trim().parse().ok(),
            "cpu MHz" => {
                if let (Some(cpu), Ok(mhz)) = (current, v.trim().parse::<f64>()) {
                    if mhz.is_finite() && mhz > 0.0 {
                        out.insert(cpu, mhz);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A cpufreq value in kHz (as the kernel writes it) → MHz.
pub fn parse_khz(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v / 1000.0)
}

/// A thermal zone temperature in millidegrees Celsius → °C.
pub fn parse_millidegrees(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    // -273 °C and below, or absurd values, are a driver's "unknown".
    (v.is_finite() && v > -273_000.0 && v < 200_000.0).then_some(v / 1000.0)
}

/// Facts about one CPU's clock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuClockFacts {
    /// `cpu MHz` in /proc/cpuinfo (x86).
    pub reported_mhz: Option<f64>,
    /// cpufreq `scaling_cur_freq`.
    pub scaling_cur_mhz: Option<f64>,
    /// cpufreq `cpuinfo_max_freq`.
    pub max_mhz: Option<f64>,
    /// cpufreq `base_frequency` (intel_pstate, amd-pstate).
    pub base_mhz: Option<f64>,
    pub governor: Option<String>,
    /// Thermal throttle counters of this CPU (`core_throttle_count`, ...).
    pub throttle_counts: Vec<(String, u64)>,
}

/// Where the clock facts are read from (`/` on the live machine).
#[derive(Debug, Clone)]
pub struct FactsRoot {
    pub root: PathBuf,
}

impl FactsRoot {
    pub fn live() -> FactsRoot {
        FactsRoot {
            root: PathBuf::from("/"),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    /// The names in directory `rel` that `keep` accepts, sorted; none when
    /// the directory cannot be read.
    fn sorted_names(&self, rel: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.path(rel)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| keep(n))
            .collect();
        names.sort();
        names
    }

    /// The facts of `cpu`.
    pub fn cpu(&self, cpu: u32) -> CpuClockFacts {
        let base = format!("sys/devices/system/cpu/cpu{cpu}");
        let freq = |f: &str| {
            self.read(&format!("{base}/cpufreq/{f}"))
                .and_then(|t| parse_khz(&t))
        };
        let mut throttle_counts = Vec::new();
        let throttle = format!("{base}/thermal_throttle");
        for n in self.sorted_names(&throttle, |n| n.ends_with("_count")) {
            if let Some(v) = self
                .read(&format!("{throttle}/{n}"))
                .and_then(|t| t.trim().parse::<u64>().ok())
            {
                throttle_counts.push((n, v));
            }
        }
        CpuClockFacts {
            reported_mhz: self
                .read("proc/cpuinfo")
                .and_then(|t| parse_cpu_mhz(&t).get(&cpu).copied()),
            scaling_cur_mhz: freq("scaling_cur_freq"),
            max_mhz: freq("cpuinfo_max_freq"),
            base_mhz: freq("base_frequency"),
            governor: self
                .read(&format!("{base}/cpufreq/scaling_governor"))
                .map(|t| t.trim().to_string())
                .filter(|g| !g.is_empty()),
            throttle_counts,
        }
    }

    /// Every thermal zone as (type, °C), sorted by zone.
    pub fn thermal_zones(&self) -> Vec<(String, f64)> {
        self.sorted_names("sys/class/thermal", |n| n.starts_with("thermal_zone"))
            .iter()
            .filter_map(|z| {
                let zone: &Path = Path::new(z);
                let temp = self
                    .read(&format!("sys/class/thermal/{}/temp", zone.display()))
                    .and_then(|t| parse_millidegrees(&t))?;
                let kind = self
                    .read(&format!("sys/class/thermal/{}/type", zone.display()))
                    .map(|t| t.trim().to_string())
                    .unwrap_or_else(|| z.clone());
                Some((kind, temp))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_per_processor() {
        let text = "processor\t: 0\nmodel name\t: X @ 2.60GHz\ncpu MHz\t\t: 2600.000\n\n\
                    processor\t: 1\ncpu MHz\t\t: 1200.5\n\nprocessor\t: 2\ncpu MHz\t: bogus\n";
        let m = parse_cpu_mhz(text);
        assert_eq!(m.get(&0), Some(&2600.0));
        assert_eq!(m.get(&1), Some(&1200.5));
        assert_eq!(m.get(&2), None);
        assert!(parse_cpu_mhz("processor : 0\n").is_empty());
    }

    #[test]
    fn units() {
        assert_eq!(parse_khz("2600000\n"), Some(2600.0));
        assert_eq!(parse_khz("<unknown>"), None);
        assert_eq!(parse_millidegrees("45000"), Some(45.0));
        assert_eq!(parse_millidegrees("-274000"), None);
    }

    #[test]
    fn fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("proc/cpuinfo", "processor : 0\ncpu MHz : 800.0\n");
        w(
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
            "800000\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
            "4700000\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/cpufreq/base_frequency",
            "2600000\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count",
            "12\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/thermal_throttle/package_throttle_count",
            "3\n",
        );
        w(
            "sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_max_time_ms",
            "9\n",
        );
        w("sys/class/thermal/thermal_zone0/temp", "97000\n");
        w("sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
        w("sys/class/thermal/thermal_zone1/temp", "41500\n");
        let root = FactsRoot {
            root: dir.path().to_path_buf(),
        };
        let f = root.cpu(0);
        assert_eq!(f.reported_mhz, Some(800.0));
        assert_eq!(f.scaling_cur_mhz, Some(800.0));
        assert_eq!(f.max_mhz, Some(4700.0));
        assert_eq!(f.base_mhz, Some(2600.0));
        assert_eq!(f.governor.as_deref(), Some("powersave"));
        assert_eq!(
            f.throttle_counts,
            vec![
                ("core_throttle_count".to_string(), 12),
                ("package_throttle_count".to_string(), 3)
            ]
        );
        assert_eq!(
            root.thermal_zones(),
            vec![
                ("x86_pkg_temp".to_string(), 97.0),
                ("thermal_zone1".to_string(), 41.5)
            ]
        );
        assert_eq!(root.cpu(7), CpuClockFacts::default());
    }
}
