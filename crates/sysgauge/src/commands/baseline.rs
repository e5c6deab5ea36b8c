//! `sysgauge baseline show|make`: the reference baseline compiled into the
//! binary (what it is, which of its cases are stale), and making a new
//! baseline file from stored runs of the quick and standard profiles. The procedure
//! for re-recording is in docs/baseline.md.

use crate::cli::{BaselineAction, BaselineArgs};
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::machines::resolve_stored;
use crate::output;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use sysgauge_bench::baseline::{self, Baseline, BASELINE_FORMAT, BASELINE_PROFILES};
use sysgauge_core::record::{RunRecord, RunStatus, Status};

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
        } => {
            if let Some(p) = &out {
                check_output_path(p, "--output")?;
            }
            if machine.trim().is_empty() {
                bail!("--machine must describe the reference machine (CPU, cores, memory, VM or bare metal)");
            }
            let Some(store) = crate::db::open_for_reading(db.db.as_deref())? else {
                bail!("no runs stored yet, so no run to make a baseline from (see `sysgauge results list`)");
            };
            let mut records = Vec::new();
            for run in &runs {
                let row = resolve_stored(&store, run)?
                    .with_context(|| format!("'{run}' is neither a stored run nor a host with runs (see `sysgauge results list`)"))?;
                let record = store.load_run(row)?;
                check_reference_run(row, &record, force)?;
                if records
                    .iter()
                    .any(|r: &RunRecord| r.profile == record.profile)
                {
                    bail!(
                        "two of the runs used the {} profile; give one run per profile",
                        record.profile
                    );
                }
                records.push(record);
            }
            records.sort_by_key(|r| BASELINE_PROFILES.iter().position(|p| *p == r.profile));
            if !force {
                for p in BASELINE_PROFILES {
                    if !records.iter().any(|r| r.profile == p) {
                        bail!("no run of the {p} profile: the baseline holds one run per profile ({}), so every run gets a full index; record it with `sysgauge run --profile {p}`, or pass --force", profile_list());
                    }
                }
            }
            let version = match version {
                Some(0) => bail!("--version must be at least 1"),
                Some(v) => v,
                None => baseline::embedded().map(|b| b.version + 1).unwrap_or(1),
            };
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
    output::stdout(&text)?;
    Ok(Exit::Ok)
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
            bail!("run {row} was measured by a {} build; record the baseline with a release build (`cargo run --release -- run --profile standard`), or pass --force", record.build.profile);
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
