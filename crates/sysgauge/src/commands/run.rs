//! `sysgauge run`: the bounded-time suite. Chooses benchmarks by family or
//! id (`--only`, `--skip`), runs them, stores the run, prints the summary
//! table and the findings. Families marked `in_default_run: false` in the
//! registry (ssh) run only when `--only` names them or one of their ids.

use crate::cli::RunArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{bail, Result};
use sysgauge_bench::{benchmarks, families, family_info, Options};
use sysgauge_core::{family_of, Benchmark};
use sysgauge_report::{summary_table, TableFormat};

pub fn run(args: RunArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Options {
        sweep: std::sync::Arc::new(sysgauge_bench::sweep::SweepOptions::for_run(&args.only)),
        ..Options::default()
    };
    let all = benchmarks(&options);
    let mut selected = select(all, &args.only, &args.skip)?;
    if selected.is_empty() {
        bail!("--only/--skip leave no benchmark to run");
    }
    // The clock check runs first (the registry lists it first) and again
    // after everything else, so a run whose clocks dropped is flagged.
    if selected.iter().any(|b| family_of(b.id()) == "clock") {
        selected.push(sysgauge_bench::clock::end_of_run(&options.clock));
    }
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("run", &cfg, &selected, &cancel, Vec::new())?;
    let mut text = summary_table(&outcome.record, TableFormat::Text);
    text.push_str(&measure::findings_section(&outcome.record));
    if outcome.record.results.iter().any(|r| r.is_ok()) {
        text.push('\n');
        text.push_str(&measure::baseline_index_text(&outcome.record));
    }
    text.push_str(&measure::closing_lines(&outcome, outcome.exit));
    measure::print_human(&cfg, &text)?;
    Ok(outcome.exit)
}

/// Apply `--only` and `--skip`. Each entry is a family name or a full
/// benchmark id; unknown entries are an error naming what is known.
pub fn select(
    all: Vec<Box<dyn Benchmark>>,
    only: &[String],
    skip: &[String],
) -> Result<Vec<Box<dyn Benchmark>>> {
    let known_families: Vec<&str> = families().iter().map(|f| f.name).collect();
    let check = |entry: &str, option: &str| -> Result<()> {
        let e = entry.trim();
        if e.is_empty() {
            bail!("{option} has an empty entry");
        }
        let known = if e.contains('.') {
            all.iter().any(|b| b.id() == e)
        } else {
            known_families.contains(&e)
        };
        if !known {
            bail!(
                "{option}: unknown family or benchmark '{e}' (families: {}; `sysgauge list` shows every benchmark id)",
                known_families.join(", ")
            );
        }
        Ok(())
    };
    for e in only {
        check(e, "--only")?;
    }
    for e in skip {
        check(e, "--skip")?;
    }
    let matches = |b: &dyn Benchmark, list: &[String]| {
        list.iter()
            .any(|e| e.trim() == b.id() || e.trim() == family_of(b.id()))
    };
    // Without --only, the opt-in families (in_default_run: false) stay out.
    let in_default =
        |b: &dyn Benchmark| family_info(family_of(b.id())).is_none_or(|f| f.in_default_run);
    Ok(all
        .into_iter()
        .filter(|b| {
            if only.is_empty() {
                in_default(b.as_ref())
            } else {
                matches(b.as_ref(), only)
            }
        })
        .filter(|b| !matches(b.as_ref(), skip))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[Box<dyn Benchmark>]) -> Vec<String> {
        v.iter().map(|b| b.id().to_string()).collect()
    }

    #[test]
    fn opt_in_families_run_only_when_named() {
        let all = || benchmarks(&Options::default());
        let default = select(all(), &[], &[]).unwrap();
        assert!(!ids(&default).iter().any(|i| i.starts_with("ssh.")));
        assert!(ids(&default).iter().any(|i| i.starts_with("hash.")));
        let only = select(all(), &["ssh".to_string()], &[]).unwrap();
        assert_eq!(ids(&only), ["ssh.transfer", "ssh.handshake"]);
        let one = select(
            all(),
            &["ssh.handshake".to_string(), "hash".to_string()],
            &[],
        )
        .unwrap();
        assert!(ids(&one).contains(&"ssh.handshake".to_string()));
        assert!(!ids(&one).contains(&"ssh.transfer".to_string()));
        let skipped = select(all(), &[], &["hash".to_string()]).unwrap();
        assert!(!ids(&skipped)
            .iter()
            .any(|i| i.starts_with("ssh.") || i.starts_with("hash.")));
    }
}
