//! `sysgauge procs`: which processes burn user and kernel time, read from
//! /proc/PID/stat. One snapshot shows CPU time since each process started;
//! `--interval S` takes two snapshots and shows CPU % over the interval
//! (user and system separately). An inspection tool, not a benchmark: it
//! stores nothing.

use crate::cli::{ProcSortArg, ProcsArgs};
use crate::exit::Exit;
use crate::output;
use anyhow::{bail, Context, Result};
use sysgauge_host::procs::{self, printable, state_name, ProcsReport, SortBy};
use sysgauge_report::{Align, Table, TableFormat};

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
        row.push(printable(&p.command));
        t.push(row);
    }
    let mut out = summary_line(r);
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
