//! `sysgauge run`: the bounded-time suite. Chooses benchmarks by family or
//! id (`--only`, `--skip`), runs them, stores the run, prints the summary
//! table and the findings. Families marked `in_default_run: false` in the
//! registry (ssh) run only when `--only` names them or one of their ids.

use super::clock::RatedArg;
use crate::cli::MeasureArgs;
use crate::cli::{ImplementationArgs, SelectArgs};
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use anyhow::{anyhow, Result};
use clap::Args;
use sysgauge_bench::clock::ClockOptions;
use sysgauge_bench::sweep::SweepOptions;
use sysgauge_core::{family_of, Benchmark};
use sysgauge_crypto::crypto::CryptoOptions;
use sysgauge_crypto::hash::HashOptions;
use sysgauge_crypto::implementation::{validate, Forced};
use sysgauge_crypto::speed::implementation_catalog;
use sysgauge_family::family::Options;
use sysgauge_registry::{benchmarks, family_info};
use sysgauge_report::{summary_table, TableFormat};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    #[command(flatten)]
    pub select: SelectArgs,

    #[command(flatten)]
    pub implementation: ImplementationArgs,

    #[command(flatten)]
    pub rated: RatedArg,

    /// After the summary, each hash and crypto case's implementation and
    /// how it was chosen: every candidate's trial rate, or forced, from the
    /// stored details.
    #[arg(long)]
    pub implementations: bool,

    /// Leave cases measured while the machine was disturbed (other
    /// processes, steal, throttling, waits) out of the closing index.
    #[arg(long)]
    pub exclude_disturbed: bool,
}

pub fn run(args: RunArgs) -> Result<Exit> {
    let mut cfg = MeasureConfig::from_args(&args.measure)?;
    cfg.rated_mhz = args.rated.mhz();
    // The clock options are given, not defaulted, so that the end-of-run
    // check below shares them (and the start's readings) with the first.
    let forced = forced_implementations(&args.implementation)?;
    let options = Options::default()
        .with(SweepOptions::for_run(&args.select.only))
        .with(ClockOptions {
            rated_mhz: args.rated.mhz(),
            ..Default::default()
        })
        .with(HashOptions {
            implementation: forced.clone(),
            ..Default::default()
        })
        .with(CryptoOptions {
            implementation: forced.clone(),
            ..Default::default()
        });
    let mut selected = select(benchmarks(&options), &args.select)?;
    check_implementations(&forced, &selected)?;
    // The clock check runs first (the registry lists it first) and again
    // after everything else, so a run whose clocks dropped is flagged.
    if selected.iter().any(|b| family_of(b.id()) == "clock") {
        selected.push(sysgauge_bench::clock::end_of_run(
            &options.get::<ClockOptions>(),
        ));
    }
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("run", &cfg, &selected, &cancel, Vec::new())?;
    let mut text = summary_table(&outcome.record, TableFormat::Text);
    if args.implementations {
        text.push_str(&sysgauge_crypto::crypto::report::implementations_section(
            &outcome.record.results,
        ));
    }
    text.push_str(&measure::findings_section(&outcome.record));
    if outcome.record.results.iter().any(|r| r.is_ok()) {
        text.push('\n');
        let mut record = outcome.record.clone();
        if args.exclude_disturbed {
            sysgauge_compare::leave_out_disturbed(&mut record);
        }
        text.push_str(&measure::baseline_index_text(&record));
    }
    text.push_str(&measure::closing_lines(&outcome, outcome.exit));
    measure::print_human(&cfg, &text)?;
    Ok(outcome.exit)
}

/// `--implementation` as typed rules.
pub fn forced_implementations(args: &ImplementationArgs) -> Result<Forced> {
    Ok(Forced::parse(&args.implementation)?)
}

/// `--implementation` checked against the hashes and ciphers about to run,
/// before any of them does.
pub fn check_implementations(forced: &Forced, selected: &[Box<dyn Benchmark>]) -> Result<()> {
    if forced.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = selected.iter().map(|b| b.id()).collect();
    validate(forced, &implementation_catalog(), &|id| ids.contains(&id)).map_err(|e| anyhow!(e))
}

/// `run`'s selection: without `--only`, the families the registry marks
/// opt-in (`in_default_run: false`) stay out.
pub fn select(all: Vec<Box<dyn Benchmark>>, sel: &SelectArgs) -> Result<Vec<Box<dyn Benchmark>>> {
    measure::select_from(all, &sel.only, &sel.skip, |b| {
        family_info(family_of(b.id())).is_none_or(|f| f.in_default_run)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_registry::opt_in_example;

    fn ids(v: &[Box<dyn Benchmark>]) -> Vec<String> {
        v.iter().map(|b| b.id().to_string()).collect()
    }

    fn sel(only: &[&str], skip: &[&str]) -> SelectArgs {
        let p = |v: &[&str]| v.iter().map(|s| s.parse().unwrap()).collect();
        SelectArgs {
            only: p(only),
            skip: p(skip),
        }
    }

    fn forced(rules: &[&str]) -> Forced {
        forced_implementations(&ImplementationArgs {
            implementation: rules.iter().map(|s| s.to_string()).collect(),
        })
        .unwrap()
    }

    #[test]
    fn implementation_names_are_checked_before_running() {
        let all = || {
            select(
                benchmarks(&Options::default()),
                &sel(&["hash", "crypto"], &[]),
            )
            .unwrap()
        };
        assert!(check_implementations(&forced(&[]), &all()).is_ok());
        assert!(check_implementations(&forced(&["aws-lc", "sha512=rustcrypto"]), &all()).is_ok());
        let e = check_implementations(&forced(&["nope"]), &all()).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("'nope' is not an implementation"), "{e}");
        assert!(e.contains("aws-lc") && e.contains("rustcrypto"), "{e}");
        // md5 has no aws-lc implementation: asked for by name, it is an error.
        let e = check_implementations(&forced(&["md5=aws-lc"]), &all()).unwrap_err();
        let md5 = sysgauge_crypto::hash::Algorithm::Md5.id();
        let expected = format!(
            "{md5}: implementation 'aws-lc' is not one of its own; it has sysgauge, rustcrypto"
        );
        assert!(e.to_string().contains(&expected), "{e}");
        // A bare name no selected algorithm has.
        let md4 = select(benchmarks(&Options::default()), &sel(&["md4"], &[])).unwrap();
        let e = check_implementations(&forced(&["aws-lc"]), &md4).unwrap_err();
        assert!(
            e.to_string().contains("no selected algorithm has 'aws-lc'"),
            "{e}"
        );
        assert!(forced_implementations(&ImplementationArgs {
            implementation: vec!["sha512=".into()]
        })
        .is_err());
    }

    #[test]
    fn run_takes_the_rated_clock() {
        use clap::Parser;
        let parsed = crate::cli::Cli::try_parse_from(["sysgauge", "run", "--rated", "3.2GHz"]);
        match parsed.map(|c| c.command) {
            Ok(crate::cli::Command::Run(a)) => assert_eq!(a.rated.mhz(), Some(3200.0)),
            other => panic!("{other:?}"),
        }
        assert!(crate::cli::Cli::try_parse_from(["sysgauge", "run", "--rated", "3.2"]).is_err());
    }

    #[test]
    fn opt_in_families_run_only_when_named() {
        let all = || benchmarks(&Options::default());
        let (family, first) = opt_in_example();
        let in_family =
            |v: &[Box<dyn Benchmark>]| ids(v).iter().filter(|i| family_of(i) == family).count();
        assert_eq!(in_family(&select(all(), &sel(&[], &[])).unwrap()), 0);
        let whole = select(all(), &sel(&[family], &[])).unwrap();
        assert!(in_family(&whole) >= 2, "{:?}", ids(&whole));
        assert_eq!(in_family(&whole), whole.len());
        let one = select(all(), &sel(&[&first, "hash"], &[])).unwrap();
        assert_eq!(in_family(&one), 1);
        assert!(ids(&one).contains(&first));
        let skipped = select(all(), &sel(&[], &["hash"])).unwrap();
        assert!(!ids(&skipped).iter().any(|i| family_of(i) == "hash"));
        assert!(select(all(), &sel(&["hash"], &["hash"])).is_err());
    }
}
