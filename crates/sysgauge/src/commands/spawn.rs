//! `sysgauge spawn`: the cost of starting a process by every method, with
//! the parent-size sweep and one spawner per CPU. The same benchmarks as the
//! spawn slice of `sysgauge run` (same ids and params), over the whole
//! matrix; the profile sets the time per case. Prints the spawn tables from
//! sysgauge-report.

use crate::cli::SpawnArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Result};
use std::sync::Arc;
use sysgauge_bench::spawn::{Method, SpawnOptions, Target};
use sysgauge_bench::{benchmarks, Options};
use sysgauge_core::family_of;
use sysgauge_core::size::parse_size;
use sysgauge_report::TableFormat;

/// The spawn options and the methods chosen on the command line.
pub fn options_from(args: &SpawnArgs) -> Result<(SpawnOptions, Vec<Method>)> {
    let mut methods = Vec::new();
    for m in &args.methods {
        let m = m.trim();
        match Method::from_name(m) {
            Some(x) => methods.push(x),
            None => bail!(
                "--method: unknown method '{m}' (methods: {})",
                Method::ALL.map(|m| m.name()).join(", ")
            ),
        }
    }
    let mut targets = Vec::new();
    for t in &args.targets {
        match Target::parse(t.trim()) {
            Some(x) => targets.push(x),
            None => bail!(
                "--target: unknown target '{}' (use static or true)",
                t.trim()
            ),
        }
    }
    let mut sizes = Vec::new();
    for s in &args.parent_sizes {
        let bytes = parse_size(s).map_err(|e| anyhow::anyhow!("--parent-size: {e}"))?;
        if bytes % (1 << 20) != 0 {
            bail!(
                "--parent-size '{}' is not a whole number of MiB (e.g. 256MiB, 1GiB)",
                s.trim()
            );
        }
        let mib = bytes >> 20;
        if mib > 1 << 20 {
            bail!("--parent-size '{}' is more than 1 TiB", s.trim());
        }
        sizes.push(mib);
    }
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut spawners = Vec::new();
    for s in &args.spawners {
        let s = s.trim();
        let n = if s == "all" {
            cpus
        } else {
            match s.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => n,
                _ => bail!("--spawners '{s}' must be a number from 1 to 1024, or 'all'"),
            }
        };
        spawners.push(n);
    }
    Ok((
        SpawnOptions {
            matrix: true,
            targets: non_empty(targets),
            parent_mib: non_empty(sizes),
            spawners: non_empty(spawners),
        },
        methods,
    ))
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

pub fn run(args: SpawnArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let (spawn, methods) = options_from(&args)?;
    let options = Options {
        spawn: Arc::new(spawn),
        ..Default::default()
    };
    let selected: Vec<_> = benchmarks(&options)
        .into_iter()
        .filter(|b| family_of(b.id()) == "spawn")
        .filter(|b| methods.is_empty() || methods.iter().any(|m| m.id() == b.id()))
        .collect();
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("spawn", &cfg, &selected, &cancel, Vec::new())?;
    let text = sysgauge_bench::spawn::report::spawn_report(&outcome.record, TableFormat::Text);
    measure::finish(&cfg, &outcome, text)
}
