//! `sysgauge baseline show|make`: the reference baseline compiled into the
//! binary (what it is, which of its cases are stale), and making a new
//! baseline file from stored runs of the quick and standard profiles. The procedure
//! for re-recording is in docs/baseline.md.

use crate::cli::DbArg;
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::machines::resolve_stored;
use crate::output;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;
use sysgauge_core::record::{RunRecord, RunStatus, Status};
use sysgauge_registry::baseline::{self, Baseline, BASELINE_FORMAT, BASELINE_PROFILES};

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub action: BaselineAction,
}

#[derive(Debug, Subcommand)]
pub enum BaselineAction {
    /// Describe the embedded baseline: version, machine, cases, stale cases.
    Show {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a baseline file from stored runs of the quick and standard profiles (see docs/baseline.md).
    Make {
        #[command(flatten)]
        db: DbArg,
        /// The reference runs, one per profile (quick, standard): a run number,
        /// run-id prefix, label or NAME@RUN, or a host or fleet alias (its
        /// newest run); a later run of a profile already given re-measures
        /// it: each case above the quiet limits is taken from the first of
        /// them that measured it within the limits (`run --only … --rounds 3`).
        #[arg(value_name = "RUN", required = true, num_args = 1..)]
        runs: Vec<String>,
        /// Description of the reference machine (CPU, cores, memory, VM or bare metal).
        #[arg(long, value_name = "TEXT")]
        machine: String,
        /// Version of the new baseline (default: the embedded one's plus 1).
        #[arg(long, value_name = "N")]
        version: Option<u32>,
        /// Write to FILE (e.g. crates/sysgauge-family/baseline/reference.json) instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Accept runs that are not complete, release-build runs of the quick and standard profiles.
        #[arg(long)]
        force: bool,
        /// Write the baseline even when cases were measured on a noisy machine
        /// (other processes above 0.05 CPUs, any steal, rounds varying more
        /// than 2 %), with a warning naming them.
        #[arg(long)]
        allow_noisy: bool,
    },
}

pub fn run(args: BaselineArgs) -> Result<Exit> {
    match args.action {
        BaselineAction::Show { json } => show(json),
        BaselineAction::Make {
            db,
            runs,
            machine,
            version,
            output: out,
            force,
            allow_noisy,
        } => {
            if let Some(p) = &out {
                check_output_path(p, "--output")?;
            }
            let embedded = baseline::embedded().map(|b| b.version).unwrap_or(0);
            let version = match version {
                // One version, one reference: indexes under a version are
                // comparable only if no other baseline ever carried it.
                Some(v) if v <= embedded => bail!(
                    "--version {v} is not above the embedded baseline's version {embedded}; \
                     indexes under one version must come from one reference: give {} or more, or leave --version out",
                    embedded + 1
                ),
                Some(v) => v,
                None => embedded + 1,
            };
            if machine.trim().is_empty() {
                bail!("--machine must describe the reference machine (CPU, cores, memory, VM or bare metal)");
            }
            let Some(store) = crate::db::open_for_reading(db.db.as_deref())? else {
                bail!("no runs stored yet, so no run to make a baseline from (see `sysgauge results list`)");
            };
            let mut records = Vec::new();
            let mut again: Vec<RunRecord> = Vec::new();
            for run in &runs {
                let row = resolve_stored(&store, run)?
                    .with_context(|| format!("'{run}' is neither a stored run nor a host with runs (see `sysgauge results list`)"))?;
                let record = store.load_run(row)?;
                check_reference_run(row, &record, force)?;
                if records
                    .iter()
                    .chain(&again)
                    .any(|r: &RunRecord| r.run_id == record.run_id)
                {
                    bail!(
                        "run {row} ('{run}') is named twice; a re-measurement must be another run"
                    );
                }
                if records
                    .iter()
                    .any(|r: &RunRecord| r.profile == record.profile)
                {
                    again.push(record);
                } else {
                    records.push(record);
                }
            }
            records.sort_by_key(|r| BASELINE_PROFILES.iter().position(|p| *p == r.profile));
            if !force {
                for p in BASELINE_PROFILES {
                    if !records.iter().any(|r| r.profile == p) {
                        bail!("no run of the {p} profile: the baseline holds one run per profile ({}), so every run gets a full index; record it with `sysgauge run --profile {p}`, or pass --force", profile_list());
                    }
                }
            }
            for main in &mut records {
                let of_profile: Vec<RunRecord> = again
                    .iter()
                    .filter(|r| r.profile == main.profile)
                    .cloned()
                    .collect();
                if of_profile.is_empty() {
                    continue;
                }
                let replaced = baseline::take_remeasured(main, &of_profile);
                eprintln!(
                    "{} of the {} profile's cases taken from its re-measurements (they met the quiet limits there, not in run {})",
                    replaced.len(),
                    main.profile,
                    main.run_id
                );
            }
            check_quiet(&records, allow_noisy)?;
            let first = &records[0];
            let b = Baseline {
                format: BASELINE_FORMAT,
                version,
                machine: machine.trim().to_string(),
                recorded_with: format!(
                    "sysgauge {} {} ({} build, {})",
                    first.tool_version,
                    records
                        .iter()
                        .map(|r| format!("{} --profile {}", r.command, r.profile))
                        .collect::<Vec<_>>()
                        .join("; "),
                    first.build.profile,
                    first.build.target
                ),
                runs: records,
            };
            let text = serde_json::to_string_pretty(&b)? + "\n";
            // What is written must be what the binary will accept.
            baseline::parse(&text).context("the new baseline does not check out")?;
            match out {
                Some(p) => {
                    output::to_file_or_stdout(&p, &text)
                        .with_context(|| format!("writing the baseline to {}", p.display()))?;
                    eprintln!(
                        "wrote baseline version {version} ({} results) to {}; rebuild sysgauge to embed it",
                        b.results().count(),
                        p.display()
                    );
                }
                None => output::stdout(&text)?,
            }
            Ok(Exit::Ok)
        }
    }
}

fn show(json: bool) -> Result<Exit> {
    let b = baseline::embedded()?;
    let stale = baseline::stale_cases(b);
    if json {
        let v = serde_json::json!({
            "format": b.format,
            "version": b.version,
            "machine": b.machine,
            "recorded_with": b.recorded_with,
            "runs": b.runs.iter().map(|r| serde_json::json!({
                "profile": r.profile.as_str(),
                "run_id": r.run_id,
                "started_at": r.started_at.to_rfc3339(),
                "results": r.results.len(),
            })).collect::<Vec<_>>(),
            "stale": stale,
            "quiet": {
                "limits": {
                    "other_cpus": baseline::QUIET_OTHER_CPUS,
                    "steal_percent": 0.0,
                    "between_round_spread_percent": baseline::QUIET_SPREAD_PERCENT,
                },
                "cases": baseline::quietness(&b.runs),
            },
        });
        output::stdout(&(serde_json::to_string_pretty(&v)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    let mut per_family: BTreeMap<&str, usize> = BTreeMap::new();
    for r in b.results().filter(|r| matches!(r.status, Status::Ok)) {
        *per_family.entry(r.family.as_str()).or_default() += 1;
    }
    let mut text = format!(
        "Embedded baseline version {} (1000 = this machine in every index)\n\
         machine:       {}\n\
         recorded with: {}\n\
         recorded at:   {}\n\
         cases:         {}\n",
        b.version,
        b.machine,
        b.recorded_with,
        b.runs
            .iter()
            .map(|r| format!(
                "{} ({})",
                r.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                r.profile
            ))
            .collect::<Vec<_>>()
            .join(", "),
        per_family
            .iter()
            .map(|(f, n)| format!("{f} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if stale.is_empty() {
        text.push_str("stale cases:   none\n");
    } else {
        text.push_str("stale cases (left out of every index until the baseline is re-recorded):\n");
        for s in &stale {
            text.push_str(&format!("  {s}\n"));
        }
    }
    text.push_str(&quiet_text(b));
    output::stdout(&text)?;
    Ok(Exit::Ok)
}

/// Refuse (or, with `allow_noisy`, warn loudly about) reference runs with
/// cases measured on a noisy machine, naming them: a reference that does
/// not repeat makes every user's index wander with it.
fn check_quiet(records: &[RunRecord], allow_noisy: bool) -> Result<()> {
    let all = baseline::quietness(records);
    let noisy: Vec<&baseline::CaseQuiet> = all.iter().filter(|c| !c.noisy.is_empty()).collect();
    if noisy.is_empty() {
        return Ok(());
    }
    const SHOWN: usize = 30;
    let mut list: String = noisy
        .iter()
        .take(SHOWN)
        .map(|c| format!("\n  {}: {}", c.case, c.noisy.join("; ")))
        .collect();
    if noisy.len() > SHOWN {
        list.push_str(&format!("\n  … and {} more", noisy.len() - SHOWN));
    }
    let head = format!(
        "{} of the {} reference cases were measured on a noisy machine (limits: other processes at most {} CPUs, no steal, rounds within {} %):{list}",
        noisy.len(),
        all.len(),
        baseline::QUIET_OTHER_CPUS,
        baseline::QUIET_SPREAD_PERCENT
    );
    if allow_noisy {
        eprintln!(
            "sysgauge: WARNING: {head}\nsysgauge: WARNING: writing the baseline anyway (--allow-noisy): every index against it inherits this noise"
        );
        Ok(())
    } else {
        bail!("{head}\nrecord the runs again on a quiet machine (stop other work; with --rounds 3), or pass --allow-noisy")
    }
}

/// Median and maximum of `v`, `-` when empty.
fn median_max(v: &mut [f64], places: usize) -> String {
    if v.is_empty() {
        return "-".to_string();
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    format!("{median:.places$} / {:.places$}", v[n - 1])
}

/// How quiet the recording was: per family, other processes' CPUs and
/// the between-round spread (median / max over its cases), the cases with
/// steal, and every case above the limits.
fn quiet_text(b: &Baseline) -> String {
    let cases = baseline::quietness(&b.runs);
    let mut t = sysgauge_report::Table::columns(
        "family, >cases, >others' CPUs median / max, >with steal, >round spread % median / max, >above limits",
    );
    let mut families: Vec<&str> = Vec::new();
    for c in &cases {
        let f = c.case.split('.').next().unwrap_or("");
        if !families.contains(&f) {
            families.push(f);
        }
    }
    for f in families {
        let of: Vec<&baseline::CaseQuiet> = cases
            .iter()
            .filter(|c| c.case.split('.').next() == Some(f))
            .collect();
        let mut others: Vec<f64> = of.iter().filter_map(|c| c.other_cpus).collect();
        let mut spread: Vec<f64> = of.iter().filter_map(|c| c.spread_percent).collect();
        t.push(vec![
            f.to_string(),
            of.len().to_string(),
            median_max(&mut others, 2),
            of.iter()
                .filter(|c| c.steal_percent.is_some_and(|s| s > 0.0))
                .count()
                .to_string(),
            median_max(&mut spread, 1),
            of.iter()
                .filter(|c| !c.noisy.is_empty())
                .count()
                .to_string(),
        ]);
    }
    let noisy: Vec<&baseline::CaseQuiet> = cases.iter().filter(|c| !c.noisy.is_empty()).collect();
    let mut text = format!(
        "\nHow quiet the recording was (limits: other processes at most {} CPUs, no steal, rounds within {} %):\n{}",
        baseline::QUIET_OTHER_CPUS,
        baseline::QUIET_SPREAD_PERCENT,
        t.render(sysgauge_report::TableFormat::Text)
    );
    if noisy.is_empty() {
        text.push_str("every case within the limits\n");
    } else {
        text.push_str(&format!(
            "{} of {} cases above the limits:\n",
            noisy.len(),
            cases.len()
        ));
        for c in noisy {
            text.push_str(&format!("  {}: {}\n", c.case, c.noisy.join("; ")));
        }
    }
    text
}

fn profile_list() -> String {
    BASELINE_PROFILES
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A stored run fit to be a reference: complete, release build, one of the
/// baseline's profiles, with a result (unless `force`).
fn check_reference_run(row: i64, record: &RunRecord, force: bool) -> Result<()> {
    if !force {
        if !BASELINE_PROFILES.contains(&record.profile) {
            bail!("run {row} used the {} profile; a baseline holds runs of the {} profiles (`sysgauge run --profile standard`), or pass --force", record.profile, profile_list());
        }
        if record.build.profile != "release" {
            bail!("run {row} was measured by a build of profile '{}', not a release build; record the baseline with a release build (`cargo run --release -- run --profile standard`), or pass --force", record.build.profile);
        }
        if record.status != RunStatus::Complete {
            bail!(
                "run {row} is {}, not complete; record a complete run, or pass --force",
                record.status.as_str()
            );
        }
    }
    if !record
        .results
        .iter()
        .any(|r| matches!(r.status, Status::Ok))
    {
        bail!("run {row} has no successful result to use as a reference");
    }
    Ok(())
}
