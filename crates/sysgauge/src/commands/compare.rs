//! `sysgauge compare [RUN|HOST|FILE]… [--reference RUN|HOST]`: machines side
//! by side against a reference; with `--group-by`, hosts in groups (medians
//! per group, the hosts that stand out). `build` turns the shared machine arguments
//! into a `Comparison`; `report` and `chart` use it too, and `load` gives
//! the labelled machines alone (in the same order, so the same colours) for
//! the figures drawn from the machines' own results.

use crate::cli::{GroupArgs, MachineArgs};
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::machines::{
    file_label, load_machines, membership, names_a_file, not_found, same_file, FileOptions,
};
use crate::output;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use sysgauge_compare::{
    compare_with_intervals, group_hosts, leave_out_disturbed, Comparison, FleetGroups, Machine,
    MAX_MACHINES_WITH_INTERVALS,
};
use sysgauge_core::RunRecord;
use sysgauge_report::{render_comparison_with, render_groups, CompareFormat, RenderOptions};
use sysgauge_store::machines::{with_reference, SelectError};
use sysgauge_store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormatArg {
    /// Aligned text tables.
    Table,
    /// Markdown.
    Md,
    /// One row per machine and case, then the means.
    Csv,
    /// The comparison document (versioned, see docs/output-schema.md).
    Json,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub machines: MachineArgs,

    #[arg(long, value_enum, default_value_t = CompareFormatArg::Table)]
    pub format: CompareFormatArg,

    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub groups: GroupArgs,

    /// List every case some machines lack (by default one line per family
    /// sums them up; JSON always lists them).
    #[arg(long, short)]
    pub verbose: bool,
}

/// Open the results database if it exists (comparing must not create one).
fn open_existing(db: Option<&std::path::Path>) -> Result<Option<Store>> {
    crate::db::open_for_reading(db)
}

/// The comparison the machine arguments ask for.
pub fn build(args: &MachineArgs) -> Result<Comparison> {
    build_with_runs(args, false).map(|(c, _)| c)
}

/// The machines the arguments name, labelled, in comparison order, and the
/// reference's position among them.
pub fn load(args: &MachineArgs) -> Result<(Vec<Machine>, usize)> {
    // Files need no database (`compare machines.csv --reference hostx`):
    // it is opened only when a name is not a file, or the reference is
    // none of the files' machines.
    let files_only = !args.machines.is_empty() && args.machines.iter().all(|k| names_a_file(k));
    let mut store = if files_only {
        None
    } else {
        open_existing(args.db.db.as_deref())?
    };
    let files = FileOptions {
        format: None,
        host: args.host.clone(),
    };
    if let Some(h) = &args.host {
        if h.trim().is_empty() {
            bail!("--host is empty");
        }
    }
    for f in &args.family {
        if f.trim().is_empty() {
            bail!("--family has an empty entry");
        }
    }
    // A file given as the reference is the machines read from it: among
    // the compared files when it is one of them, else read too and put
    // first. It goes by its label (`m2/speed.txt` where `m1/speed.txt` is
    // compared too), which its runs are named by.
    let mut keys = args.machines.clone();
    let mut reference_key = args.reference.clone();
    let mut reference_file = None;
    if let Some(r) = args.reference.as_deref().filter(|r| names_a_file(r)) {
        let key = match keys.iter().find(|k| same_file(k, r)) {
            Some(k) => k.clone(),
            None if keys.is_empty() => {
                reference_file = Some(r.to_string());
                r.to_string()
            }
            None => {
                keys.insert(0, r.to_string());
                r.to_string()
            }
        };
        reference_key = Some(file_label(&key, &keys));
    }
    let mut named = Vec::new();
    if let Some(r) = &reference_file {
        named = load_machines(
            store.as_ref(),
            args.db.db.as_deref(),
            std::slice::from_ref(r),
            &files,
        )?;
    }
    named.extend(load_machines(
        store.as_ref(),
        args.db.db.as_deref(),
        &keys,
        &files,
    )?);
    // The reference rule is the store's, shared with the results site.
    let reference_key = reference_key.as_deref();
    let chosen = if files_only {
        match with_reference(None, named.clone(), reference_key) {
            Err(SelectError::UnknownReference { .. }) => {
                store = open_existing(args.db.db.as_deref())?;
                with_reference(store.as_ref(), named, reference_key)
            }
            other => other,
        }
    } else {
        with_reference(store.as_ref(), named, reference_key)
    };
    let (mut machines, reference) = match chosen {
        Ok(v) => v,
        Err(SelectError::UnknownReference { key, compared }) => bail!(
            "{}; the compared machines are: {}",
            not_found(store.as_ref(), args.db.db.as_deref(), &key, "reference "),
            compared.join(", ")
        ),
        Err(e) => return Err(e.into()),
    };
    if args.exclude_disturbed {
        for m in &mut machines {
            leave_out_disturbed(&mut m.run);
        }
    }
    Ok((machines, reference))
}

/// The hosts of `c` (whose runs are `runs`, in its machine order) in the
/// groups `--group-by` asks for, if it does.
pub fn grouped(c: &Comparison, runs: &[RunRecord], args: &GroupArgs) -> Option<FleetGroups> {
    let by = args.group_by.as_ref()?;
    let membership: Vec<Vec<String>> = runs.iter().map(|r| membership(r, by)).collect();
    Some(group_hosts(c, &membership, &by.to_string()))
}

/// The comparison and the compared runs, in the comparison's machine order.
/// `grouped`: for `--group-by`, which shows medians per group and needs
/// none of the per-machine bootstrap intervals.
pub fn build_with_runs(
    args: &MachineArgs,
    grouped: bool,
) -> Result<(Comparison, Vec<sysgauge_core::RunRecord>)> {
    let (machines, reference) = load(args)?;
    if machines.len() < 2 {
        bail!(
            "a comparison needs at least two machines, found {}{}; name runs, hosts or files (or import results with `sysgauge import`)",
            machines.len(),
            machines
                .first()
                .map(|m| format!(" ({})", m.label))
                .unwrap_or_default()
        );
    }
    let intervals = !grouped && machines.len() <= MAX_MACHINES_WITH_INTERVALS;
    if !grouped && !intervals {
        eprintln!(
            "sysgauge: note: {} machines: the 95 % intervals are left out above {MAX_MACHINES_WITH_INTERVALS} (each costs a bootstrap); name fewer machines for them, or see --group-by",
            machines.len()
        );
    }
    let c = compare_with_intervals(&machines, reference, &args.family, intervals)?;
    let most = sysgauge_stats::MAX_RESAMPLED;
    if intervals
        && c.rows
            .iter()
            .any(|r| r.cells.iter().flatten().any(|cell| cell.samples > most))
    {
        eprintln!(
            "sysgauge: note: a case with more than {most} samples has its interval resampled from {most} of them (evenly spaced in order), so it is wider than all of them would give"
        );
    }
    if c.rows.is_empty() {
        eprintln!(
            "sysgauge: warning: no case is present on two of the machines; nothing to compare"
        );
    }
    Ok((c, machines.into_iter().map(|m| m.run).collect()))
}

pub fn run(args: CompareArgs) -> Result<Exit> {
    if let Some(p) = &args.output {
        check_output_path(p, "--output")?;
    }
    let (c, runs) = build_with_runs(&args.machines, args.groups.group_by.is_some())?;
    let format = match args.format {
        CompareFormatArg::Table => CompareFormat::Table,
        CompareFormatArg::Md => CompareFormat::Markdown,
        CompareFormatArg::Csv => CompareFormat::Csv,
        CompareFormatArg::Json => CompareFormat::Json,
    };
    let text = match grouped(&c, &runs, &args.groups) {
        Some(g) => render_groups(&g, format),
        None => render_comparison_with(
            &c,
            format,
            RenderOptions {
                verbose: args.verbose,
            },
        ),
    };
    match &args.output {
        Some(p) => output::to_file_or_stdout(p, &text)
            .with_context(|| format!("writing the comparison to {}", p.display()))?,
        None => output::stdout(&text)?,
    }
    Ok(Exit::Ok)
}
