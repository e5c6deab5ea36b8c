//! `sysgauge results list|show|export|history|delete`: the stored runs
//! (`history` lives in its own file).

use crate::cli::{ExportFormatArg, ResultsAction, ResultsArgs};
use crate::config::check_output_path;
use crate::exit::Exit;
use crate::output;
use anyhow::{Context, Result};
use serde::Serialize;
use sysgauge_core::record::ALIAS_TAG;
use sysgauge_report::{
    export_run, findings_text, prometheus_text, summary_table, telemetry_table, ExportFormat,
    PromRun, Table, TableFormat,
};
use sysgauge_store::Store;

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
    // Only `delete` writes; the others must never create a database.
    let mut store = match args.action {
        ResultsAction::Delete { .. } => crate::db::open_arg_for_writing(args.db.db.as_deref())?,
        _ => match crate::db::open_for_reading(args.db.db.as_deref())? {
            Some(s) => s,
            None => return no_database(&args.action),
        },
    };
    match args.action {
        ResultsAction::List { json } => list(&store, json),
        ResultsAction::Show { id } => {
            let row = store.resolve_run(&id)?;
            let run = store.load_run(row)?;
            let mut text = format!(
                "Run {row} ({}) · {} · host {} · {} · profile {} · {}{}\n\n",
                run.run_id,
                run.command,
                sysgauge_core::text::for_terminal(run.host_name()),
                run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                run.profile,
                run.status.as_str(),
                run.label
                    .as_ref()
                    .map(|l| format!(" · {l}"))
                    .unwrap_or_default()
            );
            text.push_str(&summary_table(&run, TableFormat::Text));
            // Each family's own tables, for the families the run holds.
            for family in sysgauge_bench::FAMILIES {
                let tables = family.report(&run, TableFormat::Text);
                if !tables.is_empty() {
                    text.push('\n');
                    text.push_str(&tables);
                }
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
                Some(key) => vec![crate::machines::resolve_stored(&store, key)?
                    .ok_or_else(|| sysgauge_store::StoreError::NotFound(key.clone()))?],
                None if format == ExportFormatArg::Prometheus => {
                    store.latest_run_per_machine(ALIAS_TAG)?
                }
                None => anyhow::bail!(
                    "name the run to export (a run number, run-id prefix or host); only --format prometheus exports every machine at once"
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
                        .map(|r| sysgauge_bench::baseline::index(r).ok())
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
    }
}

/// The default database does not exist yet: an empty list, or a clear
/// error for a run that cannot be there.
fn no_database(action: &ResultsAction) -> Result<Exit> {
    let path = crate::config::default_db_path()?;
    match action {
        ResultsAction::List { json: true } => {
            output::stdout("[]\n")?;
            Ok(Exit::Ok)
        }
        ResultsAction::List { json: false } => {
            eprintln!(
                "no runs stored yet (no database at {}); `sysgauge run` makes one",
                path.display()
            );
            Ok(Exit::Ok)
        }
        ResultsAction::Show { id } | ResultsAction::Export { id: Some(id), .. } => anyhow::bail!(
            "no run '{id}': no runs stored yet (no database at {})",
            path.display()
        ),
        ResultsAction::Export { id: None, .. } => anyhow::bail!(
            "nothing to export: no runs stored yet (no database at {})",
            path.display()
        ),
        ResultsAction::History { host, .. } => anyhow::bail!(
            "no history of '{host}': no runs stored yet (no database at {})",
            path.display()
        ),
        ResultsAction::Delete { .. } => Ok(Exit::Ok),
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
            r.profile,
            r.status.as_str().to_string(),
            r.results.to_string(),
            r.failed.to_string(),
            shown(&r.label.unwrap_or_default()),
            r.run_uuid.chars().take(8).collect(),
        ]);
    }
    output::stdout(&t.render(TableFormat::Text))?;
    Ok(Exit::Ok)
}
