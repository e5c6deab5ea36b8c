//! `sysgauge procs`: which processes burn user and kernel time, read from
//! /proc/PID/stat. One snapshot shows CPU time since each process started;
//! `--interval S` takes two snapshots and shows CPU % over the interval
//! (user and system separately). Above the processes, `top`'s header: the
//! load average, the running and blocked counts, and the CPU line
//! (us/sy/ni/id/wa/hi/si/st) in total and per CPU, over the interval (or
//! since boot). An inspection tool, not a benchmark: it stores nothing.

use crate::exit::Exit;
use crate::output;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use sysgauge_host::format_bytes_binary;
use sysgauge_host::procs::{self, printable, state_name, CpuLine, ProcsReport, SortBy};
use sysgauge_report::{Align, Table, TableFormat};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProcSortArg {
    User,
    System,
    Total,
    Pid,
}

#[derive(Debug, Args)]
pub struct ProcsArgs {
    /// Sort by this column (largest first; pid ascending).
    #[arg(long, value_enum, default_value_t = ProcSortArg::System)]
    pub sort: ProcSortArg,

    /// Show this many processes (0 = all).
    #[arg(long, short = 'n', value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Take two snapshots this many seconds apart and show CPU % over the interval.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,

    /// Print as JSON (docs/output-schema.md).
    #[arg(long)]
    pub json: bool,

    /// Read this /proc instead of /proc (for tests and saved copies).
    #[arg(long, value_name = "DIR", default_value = "/proc", hide = true)]
    pub proc_root: PathBuf,
}

pub fn run(args: ProcsArgs) -> Result<Exit> {
    let sort = match args.sort {
        ProcSortArg::User => SortBy::User,
        ProcSortArg::System => SortBy::System,
        ProcSortArg::Total => SortBy::Total,
        ProcSortArg::Pid => SortBy::Pid,
    };
    if let Some(i) = args.interval {
        if !(i.is_finite() && i > 0.0 && i <= 3600.0) {
            bail!("--interval must be a number of seconds above 0 and at most 3600, not {i}");
        }
    }
    let read = || {
        procs::snapshot(&args.proc_root)
            .with_context(|| format!("cannot list {}", args.proc_root.display()))
    };
    let hz = procs::clock_ticks();
    let report = match args.interval {
        None => procs::report(None, &read()?, sort, args.top, hz),
        Some(secs) => {
            let before = read()?;
            let t0 = std::time::Instant::now();
            let cancel = crate::signals::install()?;
            // Sleep in small steps so Ctrl-C ends the wait promptly.
            let wait = std::time::Duration::from_secs_f64(secs);
            while t0.elapsed() < wait {
                if cancel.is_cancelled() {
                    return Ok(Exit::Interrupted);
                }
                std::thread::sleep((wait - t0.elapsed()).min(std::time::Duration::from_millis(50)));
            }
            let after = read()?;
            let elapsed = t0.elapsed().as_secs_f64();
            procs::report(Some((&before, elapsed)), &after, sort, args.top, hz)
        }
    };
    if args.json {
        output::stdout(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        output::stdout(&render(&report))?;
    }
    Ok(Exit::Ok)
}

/// The summary line: processes per state, how many in D, what was missed.
pub fn summary_line(r: &ProcsReport) -> String {
    let states: Vec<String> = r.states.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let d = r.states.get("D").copied().unwrap_or(0);
    let mut line = format!(
        "{} processes, {} threads ({}); {d} in D ({})",
        r.total,
        r.threads,
        states.join(", "),
        state_name("D")
    );
    if r.unreadable + r.vanished + r.malformed > 0 {
        line.push_str(&format!(
            "; not shown: {} unreadable, {} vanished while read, {} malformed",
            r.unreadable, r.vanished, r.malformed
        ));
    }
    line.push('\n');
    line
}

/// The load average and the running/blocked counts, with the diagnosis a
/// load well above the running count calls for.
fn load_line(r: &ProcsReport) -> Option<String> {
    let count = |v: Option<u64>| v.map_or("?".to_string(), |n| n.to_string());
    let mut line = String::new();
    if let Some([a, b, c]) = r.load {
        line.push_str(&format!("load average: {a:.2}, {b:.2}, {c:.2}; "));
    }
    if r.load.is_none() && r.running.is_none() && r.blocked.is_none() {
        return None;
    }
    line.push_str(&format!(
        "{} running, {} blocked on I/O now\n",
        count(r.running),
        count(r.blocked)
    ));
    if let (Some([load, ..]), Some(running)) = (r.load, r.running) {
        // Linux's load average counts uninterruptible (D) tasks beside
        // runnable ones: a load far above the runnable count is waiting.
        if load >= 1.0 && load >= 2.0 * running.max(1) as f64 {
            let d = r.states.get("D").copied().unwrap_or(0);
            line.push_str(&format!(
                "high load, few running: the load average also counts tasks in D ({d} now), \
                 so most of this load is waiting (usually for I/O), not using CPU\n"
            ));
        }
    }
    Some(line)
}

/// `top`'s CPU lines as a table: all CPUs, then each.
fn cpu_table(lines: &[CpuLine]) -> String {
    let headers = [
        ("CPU %", Align::Left),
        ("us", Align::Right),
        ("sy", Align::Right),
        ("ni", Align::Right),
        ("id", Align::Right),
        ("wa", Align::Right),
        ("hi", Align::Right),
        ("si", Align::Right),
        ("st", Align::Right),
    ];
    let mut t = Table::new(&headers);
    for l in lines {
        let mut row = vec![l.cpu.clone()];
        for v in [
            l.user, l.system, l.nice, l.idle, l.iowait, l.irq, l.softirq, l.steal,
        ] {
            row.push(format!("{v:.1}"));
        }
        t.push(row);
    }
    t.render(TableFormat::Text)
}

fn render(r: &ProcsReport) -> String {
    let interval = r.interval_seconds.is_some();
    let mut headers = vec![
        ("pid", Align::Right),
        ("state", Align::Left),
        ("threads", Align::Right),
    ];
    if interval {
        headers.push(("user %", Align::Right));
        headers.push(("system %", Align::Right));
    }
    headers.extend([
        ("user s", Align::Right),
        ("system s", Align::Right),
        ("RSS", Align::Right),
        ("command", Align::Left),
    ]);
    let mut t = Table::new(&headers);
    for p in &r.processes {
        let mut row = vec![p.pid.to_string(), p.state.clone(), p.threads.to_string()];
        if interval {
            row.push(
                p.user_percent
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_default(),
            );
            row.push(
                p.system_percent
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_default(),
            );
        }
        // Clock ticks are 10 ms on most systems: two decimals say it all.
        row.push(format!("{:.2}", p.user_seconds));
        row.push(format!("{:.2}", p.system_seconds));
        row.push(p.rss_bytes.map(format_bytes_binary).unwrap_or_default());
        row.push(printable(&p.command));
        t.push(row);
    }
    let mut out = summary_line(r);
    if let Some(line) = load_line(r) {
        out.push_str(&line);
    }
    if !r.cpu.is_empty() {
        match r.interval_seconds {
            Some(s) => out.push_str(&format!("where the CPUs' time went over {s:.2} s:\n")),
            None => out.push_str("where the CPUs' time went since boot:\n"),
        }
        out.push_str(&cpu_table(&r.cpu));
    }
    if let Some(s) = r.interval_seconds {
        out.push_str(&format!(
            "CPU % over {s:.2} s (100 % = one CPU busy), sorted by {}\n",
            r.sort
        ));
    } else {
        out.push_str(&format!(
            "CPU time since each process started, sorted by {}\n",
            r.sort
        ));
    }
    out.push_str(&t.render(TableFormat::Text));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(load: f64, running: u64, d: usize) -> ProcsReport {
        ProcsReport {
            schema_version: procs::PROCS_JSON_VERSION,
            interval_seconds: Some(1.0),
            sort: "user".into(),
            total: 0,
            states: [("D".to_string(), d)].into_iter().collect(),
            threads: 0,
            unreadable: 0,
            vanished: 0,
            malformed: 0,
            cpu: Vec::new(),
            running: Some(running),
            blocked: Some(d as u64),
            load: Some([load, load, load]),
            processes: Vec::new(),
        }
    }

    #[test]
    fn high_load_with_few_running_is_called_waiting() {
        let waiting = load_line(&report(6.0, 1, 5)).unwrap_or_default();
        assert!(waiting.contains("high load, few running"), "{waiting}");
        assert!(waiting.contains("D (5 now)"), "{waiting}");
        let busy = load_line(&report(6.0, 6, 0)).unwrap_or_default();
        assert!(busy.starts_with("load average: 6.00, 6.00, 6.00; 6 running, 0 blocked"));
        assert!(!busy.contains("high load"), "{busy}");
        let idle = load_line(&report(0.1, 1, 0)).unwrap_or_default();
        assert!(!idle.contains("high load"), "{idle}");
    }
}
