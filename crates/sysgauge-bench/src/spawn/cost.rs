//! Cost, not waiting: a spawn cell's wall time beside the CPU time of the
//! parent and its children, and the two ways a cell measures waiting
//! rather than spawning.
//!
//! - **Waiting.** On a quiet machine a spawn's wall time is mostly CPU
//!   (the parent's system calls, the child's exec and exit) plus a few
//!   wake-ups. When the wall time is several times the CPU time, and by
//!   more than half a millisecond, the spawns spent their time runnable
//!   behind other work or asleep, not spawning: the cell is marked
//!   disturbed (comparisons and indexes can leave it out).
//! - **The tick.** On a busy machine a parent that sleeps in `waitpid` may
//!   be woken only at the next scheduler tick, so a cell lands on whole
//!   ticks (3990–4007 µs on a 250 Hz kernel) while its CPU time is a small
//!   fraction of that: the figure is the kernel's HZ, not a spawn cost.
//!   The tick length is CONFIG_HZ from /boot/config-RELEASE when that file
//!   exists, else whichever of the usual rates (100, 250, 300, 1000 Hz)
//!   the value sits on, the coarsest first.

use sysgauge_core::{Finding, Severity};

/// Finding: the cell's wall time is mostly waiting.
pub const WAITED: &str = "spawn-waited";
/// Finding: the cell's wall time sits on whole scheduler ticks.
pub const TICK: &str = "spawn-tick";

/// Wall time at least this many times the CPU time is waiting...
const WAIT_RATIO: f64 = 3.0;
/// ...when it also exceeds the CPU time by this many µs (a wake-up or two
/// on an idle virtual CPU is part of a spawn's cost; milliseconds are not).
const WAIT_EXCESS_US: f64 = 500.0;
/// How close to a whole number of ticks, as a share of one tick.
const TICK_TOLERANCE: f64 = 0.02;
/// At most this many ticks per spawn count as landing on the tick.
const TICK_MAX: f64 = 3.0;
/// The CPU time must be at most this share of the wall time.
const TICK_CPU_SHARE: f64 = 0.5;
/// Kernel tick rates in use, coarsest tick first.
const USUAL_HZ: [u32; 4] = [100, 250, 300, 1000];

/// What a cell's medians say about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellJudgement {
    /// Why the cell is disturbed (waiting), if it is.
    pub waiting: Option<String>,
    /// The kernel rate (Hz) and the number of ticks the cell sits on.
    pub tick: Option<(u32, u32)>,
    /// Wall time over CPU time.
    pub wall_per_cpu: Option<f64>,
}

/// Judge a cell from its median wall time and median CPU time (parent +
/// children) per spawn, both in µs; `hz` is the kernel's CONFIG_HZ when
/// known.
pub fn judge(wall_us: f64, cpu_us: f64, hz: Option<u32>) -> CellJudgement {
    let mut j = CellJudgement::default();
    if !(wall_us.is_finite() && cpu_us.is_finite() && wall_us > 0.0 && cpu_us >= 0.0) {
        return j;
    }
    j.wall_per_cpu = (cpu_us > 0.0).then(|| wall_us / cpu_us);
    if wall_us >= WAIT_RATIO * cpu_us && wall_us - cpu_us >= WAIT_EXCESS_US {
        j.waiting = Some(format!(
            "{wall_us:.0} µs of wall time per spawn for {cpu_us:.0} µs of CPU time: the spawns waited (behind other work, or for a wake-up), so the figure is not their cost"
        ));
    }
    if cpu_us <= TICK_CPU_SHARE * wall_us {
        let rates: Vec<u32> = match hz {
            Some(h) if h > 0 => vec![h],
            _ => USUAL_HZ.to_vec(),
        };
        j.tick = rates.into_iter().find_map(|h| {
            let tick = 1e6 / f64::from(h);
            let k = (wall_us / tick).round();
            ((1.0..=TICK_MAX).contains(&k) && (wall_us - k * tick).abs() <= TICK_TOLERANCE * tick)
                .then_some((h, k as u32))
        });
    }
    j
}

impl CellJudgement {
    /// The findings for a cell called `case` (`spawn.posix-spawn (…)`).
    pub fn findings(&self, case: &str, wall_us: f64, cpu_us: f64) -> Vec<Finding> {
        let mut v = Vec::new();
        if let Some(why) = &self.waiting {
            v.push(
                Finding::new(WAITED, Severity::Warning, format!("{case}: {why}"))
                    .with_remedy("measure on a quiet machine (sysgauge waits for one unless --no-wait), or compare the CPU times (parent_cpu, children_cpu)"),
            );
        }
        if let Some((hz, k)) = self.tick {
            let tick_ms = 1e3 / f64::from(hz);
            v.push(
                Finding::new(
                    TICK,
                    Severity::Warning,
                    format!(
                        "{case}: {wall_us:.0} µs per spawn is {k} tick{} of a {hz} Hz kernel ({tick_ms:.3} ms each) while the spawn used {cpu_us:.0} µs of CPU: the parent was woken by the scheduler tick, so the figure is the tick, not the spawn",
                        if k == 1 { "" } else { "s" }
                    ),
                )
                .with_remedy("measure on a quiet machine; the CPU times (parent_cpu, children_cpu) still hold"),
            );
        }
        v
    }
}

/// CONFIG_HZ from a kernel config's text.
pub fn parse_config_hz(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|h| *h > 0)
}

/// The running kernel's CONFIG_HZ, when /boot holds its config.
pub fn kernel_hz() -> Option<u32> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let text = std::fs::read_to_string(format!("/boot/config-{}", release.trim())).ok()?;
    parse_config_hz(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_cell_is_its_cost() {
        // The development VM's posix-spawn of the static target: wall a
        // little above CPU (wake-ups).
        let j = judge(186.9, 88.9, Some(250));
        assert_eq!(j.waiting, None);
        assert_eq!(j.tick, None);
        assert!((j.wall_per_cpu.unwrap_or(0.0) - 186.9 / 88.9).abs() < 1e-9);
        // fork of a 1 GiB parent: milliseconds, all CPU.
        let j = judge(4000.0, 3900.0, None);
        assert!(j.waiting.is_none() && j.tick.is_none(), "{j:?}");
        assert!(j.findings("x", 4000.0, 3900.0).is_empty());
    }

    #[test]
    fn a_cell_on_the_tick_is_flagged_with_the_rate() {
        // The busy machine's cells: 3990–4007 µs on a 250 Hz kernel.
        for wall in [3990.0, 4000.0, 4007.0] {
            let j = judge(wall, 150.0, None);
            assert_eq!(j.tick, Some((250, 1)), "{wall}");
            assert!(j.waiting.is_some());
            let f = j.findings("spawn.posix-spawn (parent_mib=1024)", wall, 150.0);
            let codes: Vec<&str> = f.iter().map(|f| f.code.as_str()).collect();
            assert_eq!(codes, [WAITED, TICK]);
            assert!(
                f[1].message
                    .contains("1 tick of a 250 Hz kernel (4.000 ms each)"),
                "{}",
                f[1].message
            );
        }
        // Two ticks of 1000 Hz when the config says so.
        assert_eq!(judge(2010.0, 100.0, Some(1000)).tick, Some((1000, 2)));
        // 10 ms: a 100 Hz tick, the coarsest that fits.
        assert_eq!(judge(10_050.0, 300.0, None).tick, Some((100, 1)));
        // Between ticks, or with CPU near the wall time: no tick.
        assert_eq!(judge(4500.0, 150.0, Some(250)).tick, None);
        assert_eq!(judge(4000.0, 2500.0, Some(250)).tick, None);
        // More than three ticks is not a spawn waiting for one.
        assert_eq!(judge(16_000.0, 150.0, Some(250)).tick, None);
    }

    #[test]
    fn waiting_needs_ratio_and_excess() {
        // Ratio 4 but only 300 µs of waiting: wake-ups, not waiting.
        assert!(judge(400.0, 100.0, None).waiting.is_none());
        // 2 ms of waiting but ratio 1.5: a slow, busy spawn.
        assert!(judge(6000.0, 4000.0, None).waiting.is_none());
        assert!(judge(2000.0, 300.0, None).waiting.is_some());
        // Nonsense in, nothing out.
        assert_eq!(judge(f64::NAN, 1.0, None), CellJudgement::default());
        assert_eq!(judge(0.0, 0.0, None), CellJudgement::default());
    }

    #[test]
    fn config_hz() {
        let text = "# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n";
        assert_eq!(parse_config_hz(text), Some(250));
        assert_eq!(parse_config_hz("CONFIG_HZ=x\n"), None);
        assert_eq!(parse_config_hz(""), None);
    }
}
