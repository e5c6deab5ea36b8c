//! The host facts a comparison shows: every machine's CPU, clocks,
//! BogoMIPS, memory, kernel, distribution, security modules, governor,
//! virtualization and build, as text, so that the facts that differ between
//! machines can be put above the numbers they explain.

use sysgauge_core::record::{RunRecord, RunStatus};

fn or_unknown(v: Option<String>) -> String {
    v.filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

fn mhz(v: Option<f64>) -> Option<String> {
    v.map(|m| format!("{m:.0} MHz"))
}

fn gib(bytes: Option<u64>) -> Option<String> {
    bytes.map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64))
}

/// Facts that describe one machine run, as (name, value) in display order.
/// Facts that always differ between runs (time, load) are not included.
pub fn host_facts(run: &RunRecord) -> Vec<(&'static str, String)> {
    let h = &run.host;
    let cpu = &h.cpu;
    let cores = match (cpu.cores, cpu.threads) {
        (Some(c), Some(t)) => Some(format!("{c} cores / {t} threads")),
        (None, Some(t)) => Some(format!("{t} threads")),
        (Some(c), None) => Some(format!("{c} cores")),
        (None, None) => None,
    };
    let arch = cpu
        .architecture
        .as_ref()
        .map(|a| match (cpu.kernel_bits, cpu.userland_bits) {
            (Some(k), Some(u)) if k != u => format!("{a} ({k}-bit kernel, {u}-bit userland)"),
            (Some(k), _) => format!("{a} ({k}-bit)"),
            _ => a.clone(),
        });
    let read = match (cpu.nominal_mhz, cpu.cpufreq_max_mhz) {
        (Some(n), Some(m)) => Some(format!("nominal {n:.0} MHz, max {m:.0} MHz")),
        (Some(n), None) => Some(format!("nominal {n:.0} MHz")),
        (None, Some(m)) => Some(format!("max {m:.0} MHz")),
        (None, None) => mhz(cpu.reported_mhz).map(|s| format!("reported {s}")),
    };
    // A rated clock the user gave (`--rated`) is what the run was judged
    // against: shown first, and named as given, beside what was read.
    let clocks = match (cpu.user_rated_mhz, read) {
        (Some(r), Some(read)) => Some(format!("rated {r:.0} MHz (given by the user); {read}")),
        (Some(r), None) => Some(format!("rated {r:.0} MHz (given by the user)")),
        (None, read) => read,
    };
    let sec = &h.security;
    let lsm = if sec.lsms.is_empty() && sec.apparmor.is_none() && sec.selinux.is_none() {
        None
    } else {
        let mut parts = Vec::new();
        if !sec.lsms.is_empty() {
            parts.push(sec.lsms.join(","));
        }
        if let Some(a) = &sec.apparmor {
            parts.push(format!("AppArmor {a}"));
        }
        if let Some(s) = &sec.selinux {
            parts.push(format!("SELinux {s}"));
        }
        Some(parts.join("; "))
    };
    // Another tool's output imported has no sysgauge build: the tool is
    // what measured it.
    let build = match run.build.profile.as_str() {
        "" | "unknown" => run.tags.get("format").map(|f| format!("none ({f} output)")),
        profile => Some(format!("{profile} ({})", run.build.target)),
    };
    vec![
        ("CPU", or_unknown(cpu.model.clone())),
        // Guests of different generations share model strings ("AMD EPYC").
        (
            "microarchitecture",
            or_unknown(cpu.microarchitecture.clone().or_else(|| {
                Some(format!(
                    "family {} model {}",
                    cpu.family?, cpu.model_number?
                ))
            })),
        ),
        ("architecture", or_unknown(arch)),
        ("cores", or_unknown(cores)),
        ("clocks", or_unknown(clocks)),
        (
            "BogoMIPS",
            or_unknown(cpu.bogomips.map(|b| format!("{b:.2}"))),
        ),
        ("memory", or_unknown(gib(h.memory.total_bytes))),
        ("kernel", or_unknown(h.os.kernel_release.clone())),
        ("distribution", or_unknown(h.os.distribution.clone())),
        ("security modules", or_unknown(lsm)),
        ("governor", or_unknown(cpu.governor.clone())),
        ("virtualization", or_unknown(cpu.virtualization.clone())),
        // Which file a tool measured through the page cache (Bonnie++
        // sizes it to defeat the cache: twice the RAM) is not in the case,
        // so that machines compare; the sizes are read beside the ratios.
        (FILE_SIZE_FACT, or_unknown(file_sizes(run))),
        ("build", or_unknown(build)),
        ("tool", format!("{} {}", run.command, run.tool_version)),
        ("profile", run.profile_shown()),
    ]
}

/// The fact of the sizes of the files cases worked on.
pub const FILE_SIZE_FACT: &str = "file size";

/// The result detail that holds the size of the file a case worked on
/// when it is not a param (Bonnie++'s imports: see docs/comparing.md).
pub const FILE_SIZE_DETAIL: &str = "file_size";

/// Facts that say what made a run, not what the machine is: they differ
/// between a sysgauge run and another tool's output imported, or between
/// outputs of different tools, without saying anything about the machines.
const MADE_BY: [&str; 3] = ["build", "tool", "profile"];

/// The sizes of the files a run's cases worked on, per family (`bonnie:
/// 256 MiB`), where its results record one.
fn file_sizes(run: &RunRecord) -> Option<String> {
    let mut sizes: Vec<String> = Vec::new();
    for r in &run.results {
        let size = match (
            r.details.get_u64(FILE_SIZE_DETAIL),
            r.details.get_str(FILE_SIZE_DETAIL),
        ) {
            (Some(b), _) => sysgauge_core::size::Bytes(b).to_string(),
            (None, Some(list)) => list
                .split(',')
                .map(|b| match b.trim().parse::<u64>() {
                    Ok(b) => sysgauge_core::size::Bytes(b).to_string(),
                    Err(_) => b.trim().to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
            (None, None) => continue,
        };
        let shown = format!("{}: {size}", r.family);
        if !sizes.contains(&shown) {
            sizes.push(shown);
        }
    }
    (!sizes.is_empty()).then(|| sizes.join("; "))
}

/// Whether the fact `name`, whose value for each of `runs` is `values`,
/// tells the machines apart. The facts of what made a run (build, tool,
/// profile) count only between sysgauge's own runs: an imported output's
/// are the tool's, not the machine's. A file size known for one machine
/// only sizes no case that compares.
pub fn fact_differs(name: &str, values: &[String], runs: &[&RunRecord]) -> bool {
    let known: Vec<&String> = if MADE_BY.contains(&name) {
        values
            .iter()
            .zip(runs)
            .filter(|(_, r)| r.status != RunStatus::Imported)
            .map(|(v, _)| v)
            .collect()
    } else if name == FILE_SIZE_FACT {
        values.iter().filter(|v| *v != "unknown").collect()
    } else {
        values.iter().collect()
    };
    if name == FILE_SIZE_FACT && known.len() < 2 {
        return false;
    }
    known.iter().any(|v| *v != known[0])
}

/// Facts whose values are not all equal across `runs`, each with one value
/// per run in order.
pub fn differing_facts(runs: &[&RunRecord]) -> Vec<(String, Vec<String>)> {
    let all: Vec<Vec<(&'static str, String)>> = runs.iter().map(|r| host_facts(r)).collect();
    let Some(first) = all.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, (name, _)) in first.iter().enumerate() {
        let values: Vec<String> = all.iter().map(|f| f[i].1.clone()).collect();
        if fact_differs(name, &values, runs) {
            out.push((name.to_string(), values));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(run: &RunRecord, name: &str) -> String {
        host_facts(run)
            .into_iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    fn clocks(run: &RunRecord) -> String {
        fact(run, "clocks")
    }

    #[test]
    fn an_imported_tools_output_has_no_build() {
        let mut run = crate::testutil::run_with("pi", None, Vec::new());
        assert_eq!(fact(&run, "build"), "release (x86_64-linux)");
        run.build.profile = "unknown".into();
        run.build.target = "unknown".into();
        assert_eq!(fact(&run, "build"), "unknown");
        run.tags.insert("format".into(), "openssl".into());
        assert_eq!(fact(&run, "build"), "none (openssl output)");
    }

    #[test]
    fn a_rated_clock_the_user_gave_is_shown_as_given() {
        let mut run = crate::testutil::run_with("vm", None, Vec::new());
        run.host.cpu.nominal_mhz = None;
        run.host.cpu.cpufreq_max_mhz = None;
        run.host.cpu.reported_mhz = Some(2994.0);
        assert_eq!(clocks(&run), "reported 2994 MHz");
        run.host.cpu.user_rated_mhz = Some(4500.0);
        assert_eq!(
            clocks(&run),
            "rated 4500 MHz (given by the user); reported 2994 MHz"
        );
        run.host.cpu.reported_mhz = None;
        assert_eq!(clocks(&run), "rated 4500 MHz (given by the user)");
    }
}
