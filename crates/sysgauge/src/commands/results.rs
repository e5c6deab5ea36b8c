//! `sysgauge results list|show|export|history|delete|sync`: the stored runs
//! (`history` lives in its own file).

use crate::cli::DbArg;
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::output;
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;
use sysgauge_core::record::{RunStatus, ALIAS_TAG};
use sysgauge_report::{
    export_run, findings_text, prometheus_text, summary_table, telemetry_table, ExportFormat,
    PromRun, Table, TableFormat,
};
use sysgauge_store::{display_name, Inserted, Store, StoreError};

#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub db: DbArg,

    #[command(subcommand)]
    pub action: ResultsAction,
}

#[derive(Debug, Subcommand)]
pub enum ResultsAction {
    /// List stored runs, newest first.
    List {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one run: host, summary table, findings.
    Show {
        /// Run number (from `results list`), a prefix of its run id, a
        /// run's label, `NAME@RUN`, or a host name (its latest complete run).
        id: String,
    },
    /// Export one run; with `--format prometheus`, every machine's latest
    /// run when none is named (a whole fleet in one textfile).
    Export {
        /// Run number (from `results list`), a prefix of its run id, a
        /// run's label, `NAME@RUN`, or a host name (its latest complete run).
        id: Option<String>,
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Json)]
        format: ExportFormatArg,
        /// Write to FILE instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// One machine's runs over time: each run's index against the embedded
    /// baseline (overall and per family) and the change from the run before.
    History {
        /// Host name, fleet alias or the start of a machine-id (a renamed
        /// machine keeps its history; two machines sharing a name are told
        /// apart).
        #[arg(value_name = "HOST")]
        host: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete one run and all its results.
    Delete {
        /// Run number (from `results list`) or a prefix of its run id.
        id: String,
    },
    /// Copy every run the target lacks (by run id) from one database to
    /// another: SQLite file or PostgreSQL URL, either way.
    Sync {
        /// The database to copy from (default: --db, else the default database).
        #[arg(long, value_name = "PATH|URL")]
        from: Option<PathBuf>,
        /// The database to copy to (created if needed).
        #[arg(long, value_name = "PATH|URL")]
        to: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    Json,
    Csv,
    Md,
    /// The Prometheus text format, for node_exporter's textfile collector
    /// (base units; id, params, host as labels).
    Prometheus,
}

#[derive(Serialize)]
struct ListEntry {
    id: i64,
    run_id: String,
    started_at: String,
    status: String,
    command: String,
    host: String,
    profile: String,
    label: Option<String>,
    source: String,
    results: i64,
    failed: i64,
}

pub fn run(args: ResultsArgs) -> Result<Exit> {
    let db = args.db.db.as_deref();
    if let ResultsAction::Sync { from, to } = &args.action {
        let from = crate::db::reading_path(from.as_deref().or(db))?;
        return sync(&from, to);
    }
    // Only `delete` writes; the others must never create a database.
    let mut store = match args.action {
        ResultsAction::Delete { .. } => crate::db::open_arg_for_writing(db)?,
        _ => match crate::db::open_for_reading(db)? {
            Some(s) => s,
            None => return no_database(&args.action, &crate::db::nothing_stored(db)?),
        },
    };
    match args.action {
        ResultsAction::List { json } => list(&store, json),
        ResultsAction::Show { id } => {
            let row = one_run(&store, &id)?;
            let run = store.load_run(row)?;
            // A run whose database failed it and whose record completed it
            // says so beside its status.
            let completed = run
                .tags
                .get(sysgauge_store::COMPLETED_FROM)
                .map(|by| {
                    format!(
                        " (completed from its record by {})",
                        sysgauge_core::text::for_terminal(by)
                    )
                })
                .unwrap_or_default();
            let mut text = format!(
                "Run {row} ({}) · {} · host {} · {} · profile {} · {}{completed}{}\n\n",
                run.run_id,
                run.command,
                sysgauge_core::text::for_terminal(run.host_name()),
                run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                run.profile_shown(),
                run.status.as_str(),
                run.label
                    .as_ref()
                    .map(|l| format!(" · {l}"))
                    .unwrap_or_default()
            );
            text.push_str(&summary_table(&run, TableFormat::Text));
            // Each family's own tables, for the families the run holds.
            for family in sysgauge_registry::registered() {
                let tables = family.report(&run, TableFormat::Text);
                if !tables.is_empty() {
                    text.push('\n');
                    text.push_str(&tables);
                }
            }
            // A ping run's statistics as `sysgauge ping` printed them: the
            // outbound/inbound loss split is what 2ping is for.
            let pings = sysgauge_net::net::report::ping_statistics(&run);
            if !pings.is_empty() {
                text.push_str(&pings);
            }
            let telemetry = telemetry_table(&run, TableFormat::Text);
            if !telemetry.is_empty() {
                text.push_str("\nWhat the machine did during each case:\n");
                text.push_str(&telemetry);
            }
            let f = findings_text(&run);
            if !f.is_empty() {
                text.push_str("\nFindings:\n");
                text.push_str(&f);
            }
            output::stdout(&crate::style::paint(&text, crate::style::Stream::Stdout))?;
            Ok(Exit::Ok)
        }
        ResultsAction::Export {
            id,
            format,
            output: out,
        } => {
            if let Some(p) = &out {
                check_output_path(p, "--output")?;
            }
            let rows = match &id {
                Some(key) => vec![one_run(&store, key)?],
                None if format == ExportFormatArg::Prometheus => {
                    store.latest_run_per_machine(ALIAS_TAG)?
                }
                None => anyhow::bail!(
                    "name the run to export (a run number, run-id prefix, label, NAME@RUN or host); only --format prometheus exports every machine at once"
                ),
            };
            let runs = rows
                .iter()
                .map(|&row| store.load_run(row))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let text = match format {
                ExportFormatArg::Prometheus => {
                    let indexes: Vec<_> = runs
                        .iter()
                        .map(|r| sysgauge_registry::baseline::index(r).ok())
                        .collect();
                    let prom: Vec<PromRun<'_>> = runs
                        .iter()
                        .zip(&indexes)
                        .map(|(run, index)| PromRun {
                            run,
                            index: index.as_ref(),
                        })
                        .collect();
                    prometheus_text(&prom)
                }
                f => export_run(
                    &runs[0],
                    match f {
                        ExportFormatArg::Csv => ExportFormat::Csv,
                        ExportFormatArg::Md => ExportFormat::Markdown,
                        _ => ExportFormat::Json,
                    },
                ),
            };
            let what = match &id {
                Some(_) => format!("run {}", rows[0]),
                None => format!("{} machines", rows.len()),
            };
            match out {
                Some(p) => output::to_file_or_stdout(&p, &text)
                    .with_context(|| format!("exporting {what}"))?,
                None => output::stdout(&text)?,
            }
            Ok(Exit::Ok)
        }
        ResultsAction::History { host, json } => super::history::run(&store, &host, json),
        ResultsAction::Delete { id } => {
            let row = store.resolve_run(&id)?;
            let run = store.load_run(row)?;
            store.delete_run(row)?;
            eprintln!(
                "deleted run {row} ({}, {} on {}, {} results)",
                run.run_id,
                run.command,
                sysgauge_core::text::for_terminal(run.host_name()),
                run.results.len()
            );
            Ok(Exit::Ok)
        }
        ResultsAction::Sync { .. } => unreachable!("handled above"),
    }
}

/// The one stored run `key` names, as `results show` and `export` take it.
fn one_run(store: &Store, key: &str) -> Result<i64> {
    Ok(crate::machines::resolve_stored(store, key)?
        .ok_or_else(|| StoreError::NotFound(key.to_string()))?)
}

/// `results sync`: every run of `from` that `to` lacks (by run id), each
/// in its own transaction with its original source; runs still being
/// measured are left for a later sync (they would be copied half done).
fn sync(from: &Path, to: &Path) -> Result<Exit> {
    let (from_name, to_name) = (display_name(from), display_name(to));
    if from == to {
        anyhow::bail!("--from and --to are the same database ({from_name}); name two databases");
    }
    let source = match Store::open_read_only(from) {
        Ok(s) => Some(s),
        Err(StoreError::Missing { .. } | StoreError::Empty { .. }) => None,
        Err(e) => return Err(e).context("opening the database to copy from (--from)"),
    };
    let mut target =
        crate::db::open_for_writing(to, None).context("opening the database to copy to (--to)")?;
    let (mut copied, mut present, mut running) = (0usize, 0usize, 0usize);
    if let Some(source) = &source {
        let have: HashSet<String> = target
            .list_runs()?
            .into_iter()
            .map(|r| r.run_uuid)
            .collect();
        // Oldest first, so the copies are numbered in the same order.
        for r in source.list_runs()?.into_iter().rev() {
            if have.contains(&r.run_uuid) {
                present += 1;
            } else if r.status == RunStatus::Running {
                running += 1;
            } else {
                let run = source.load_run(r.id)?;
                match target.insert_run(&run, &r.source)? {
                    Inserted::New(_) | Inserted::Completed { .. } => copied += 1,
                    Inserted::AlreadyPresent(_) => present += 1,
                }
            }
        }
    }
    let mut line =
        format!("copied {copied} run(s) from {from_name} to {to_name}; {present} already there");
    if running > 0 {
        line.push_str(&format!(
            "; {running} still running, not copied (sync again when they end)"
        ));
    }
    if source.is_none() {
        line.push_str(&format!(" ({})", crate::db::absent(from)));
    }
    eprintln!("{line}");
    Ok(Exit::Ok)
}

/// The database does not exist yet (`why`, from `db::nothing_stored`): an
/// empty list, or a clear error for a run that cannot be there.
fn no_database(action: &ResultsAction, why: &str) -> Result<Exit> {
    match action {
        ResultsAction::List { json: true } => {
            output::stdout("[]\n")?;
            Ok(Exit::Ok)
        }
        ResultsAction::List { json: false } => {
            eprintln!("no runs stored yet ({why}); `sysgauge run` makes one");
            Ok(Exit::Ok)
        }
        ResultsAction::Show { id } | ResultsAction::Export { id: Some(id), .. } => {
            anyhow::bail!("no run '{id}': no runs stored yet ({why})")
        }
        ResultsAction::Export { id: None, .. } => {
            anyhow::bail!("nothing to export: no runs stored yet ({why})")
        }
        ResultsAction::History { host, .. } => {
            anyhow::bail!("no history of '{host}': no runs stored yet ({why})")
        }
        ResultsAction::Delete { .. } | ResultsAction::Sync { .. } => Ok(Exit::Ok),
    }
}

fn list(store: &Store, json: bool) -> Result<Exit> {
    let runs = store.list_runs()?;
    if json {
        let entries: Vec<ListEntry> = runs
            .into_iter()
            .map(|r| ListEntry {
                id: r.id,
                run_id: r.run_uuid,
                started_at: r.started_at.to_rfc3339(),
                status: r.status.as_str().to_string(),
                command: r.command,
                host: r.host,
                profile: r.profile,
                label: r.label,
                source: r.source,
                results: r.results,
                failed: r.failed,
            })
            .collect();
        output::stdout(&(serde_json::to_string_pretty(&entries)? + "\n"))?;
        return Ok(Exit::Ok);
    }
    if runs.is_empty() {
        eprintln!(
            "no runs stored yet in {}; `sysgauge run` makes one",
            store.path().display()
        );
        return Ok(Exit::Ok);
    }
    let mut t = Table::columns(
        ">id, started (UTC), host, command, profile, status, >results, >failed, label, run id",
    );
    // Host names and labels may come from other machines (import): no
    // control character of theirs reaches the terminal.
    let shown = |s: &str| sysgauge_core::text::for_terminal(s).into_owned();
    for r in runs {
        t.push(vec![
            r.id.to_string(),
            r.started_at.format("%Y-%m-%d %H:%M:%S").to_string(),
            shown(&r.host),
            shown(&r.command),
            listed_profile(&r.command, r.status, &r.profile, r.label.as_deref()),
            r.status.as_str().to_string(),
            r.results.to_string(),
            r.failed.to_string(),
            // A label may be a paragraph (or an imported file's worth):
            // the list shows its start; `results show` the whole.
            shown(&sysgauge_core::text::clipped(
                &r.label.unwrap_or_default(),
                60,
            )),
            r.run_uuid.chars().take(8).collect(),
        ]);
    }
    output::stdout(&t.render(TableFormat::Text))?;
    Ok(Exit::Ok)
}

/// The profile column: `imported (nbench, openssl)` for a run `import`
/// made from other tools' outputs (its label names the tools last), as
/// `RunRecord::profile_shown` says it.
fn listed_profile(
    command: &str,
    status: sysgauge_core::record::RunStatus,
    profile: &str,
    label: Option<&str>,
) -> String {
    if command != "import" || status != sysgauge_core::record::RunStatus::Imported {
        return profile.to_string();
    }
    let tools = label
        .filter(|l| l.starts_with("imported from "))
        .and_then(|l| l.strip_suffix(')'))
        .and_then(|l| l.rsplit_once(" ("))
        .map(|(_, t)| t.split(',').collect::<Vec<_>>().join(", "));
    match tools {
        Some(t) => format!("imported ({t})"),
        None => profile.to_string(),
    }
}
