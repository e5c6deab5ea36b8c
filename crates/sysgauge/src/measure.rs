//! What every measuring subcommand shares: open the database first (so a bad
//! `--db` fails before anything is measured), collect the host facts, run the
//! benchmarks through the runner with the console, database and JSON sinks,
//! and decide the exit code.
//!
//! A database that fails mid-run (disk full, a broken file) does not throw
//! the measurements away: the database sink stops writing, the run goes on,
//! the record is marked failed, `--json` is still written, and the command
//! then ends with an error naming the database.

use crate::cli::SelectArgs;
use crate::config::{DbChoice, MeasureConfig};
use crate::exit::Exit;
use crate::exit::ERROR_PREFIX;
use crate::output;
use crate::progress::ConsoleProgress;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use sysgauge_core::record::{BuildInfo, Finding, RunRecord, RunStatus, Status};
use sysgauge_core::runner::{Runner, RunnerConfig, Sink, Sinks};
use sysgauge_core::{Benchmark, CancelToken, CtxSettings, MonotonicClock};
use sysgauge_family::family::Family;
use sysgauge_host::quiet::{self, WaitReport};
use sysgauge_registry::families;
use sysgauge_report::{summary_table, TableFormat};
use sysgauge_store::{Store, StoreSink};

/// A finished measurement: the record and the exit code it deserves.
pub struct Outcome {
    pub record: RunRecord,
    pub exit: Exit,
    /// Row id in the results database, when stored.
    pub stored_as: Option<i64>,
    /// Where `--upload` put the run.
    pub uploaded: Option<crate::upload::Uploaded>,
}

/// Open the configured database (or none with `--no-store`).
pub fn open_store(cfg: &MeasureConfig) -> Result<Option<Store>> {
    match &cfg.db {
        DbChoice::None => Ok(None),
        DbChoice::File(p) => Ok(Some(crate::db::open_for_writing(
            p,
            Some(&cfg.scratch_base),
        )?)),
    }
}

/// The benchmarks a family's own subcommand runs: `all` narrowed by the
/// shared `--only`/`--skip` grammar; nothing left is an error.
pub fn select(all: Vec<Box<dyn Benchmark>>, sel: &SelectArgs) -> Result<Vec<Box<dyn Benchmark>>> {
    select_from(all, &sel.only, &sel.skip, |_| true)
}

/// `select` with explicit lists, and what runs when `--only` is not given.
pub fn select_from(
    all: Vec<Box<dyn Benchmark>>,
    only: &[sysgauge_core::Selector],
    skip: &[sysgauge_core::Selector],
    by_default: impl Fn(&dyn Benchmark) -> bool,
) -> Result<Vec<Box<dyn Benchmark>>> {
    let chosen = sysgauge_core::select::select(all, only, skip, by_default)?;
    if chosen.is_empty() {
        anyhow::bail!("--only/--skip leave nothing to run");
    }
    Ok(chosen)
}

/// How this binary was built.
pub fn build_info() -> BuildInfo {
    let mut features = Vec::new();
    macro_rules! feature {
        ($($f:literal),*) => {
            $( if cfg!(target_feature = $f) { features.push($f.to_string()); } )*
        };
    }
    feature!(
        "sse2",
        "sse4.1",
        "sse4.2",
        "avx",
        "avx2",
        "avx512f",
        "aes",
        "sha",
        "pclmulqdq",
        "bmi1",
        "bmi2",
        "lzcnt",
        "popcnt",
        "fma",
        "neon",
        "crc",
        "sha2",
        "sha3",
        "lse"
    );
    BuildInfo {
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_string(),
        target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        target_features: features,
    }
}

/// `sysgauge --version`: the version, the target and build profile, and
/// the CPU features compiled in.
pub fn long_version() -> String {
    let b = build_info();
    format!(
        "{}\ntarget: {}{} ({} build{})\nCPU features compiled in: {}\n\
         (the kernels also pick faster code at run time from this CPU's own features; `sysgauge host` lists them)",
        env!("CARGO_PKG_VERSION"),
        b.target,
        // The C library: the musl builds are the static ones to copy.
        if cfg!(target_env = "musl") {
            "-musl"
        } else if cfg!(target_env = "gnu") {
            "-gnu"
        } else {
            ""
        },
        b.profile,
        if cfg!(target_env = "musl") {
            ", statically linked"
        } else {
            ""
        },
        if b.target_features.is_empty() {
            "none beyond the target's baseline".to_string()
        } else {
            b.target_features.join(" ")
        }
    )
}

/// How the machine was as the run began: the wait for a quiet machine
/// (none with `--no-wait`), and other processes' share of the CPUs then.
pub struct QuietStart {
    pub wait: Option<WaitReport>,
    pub others_percent: Option<f64>,
}

/// Wait for a quiet machine as `cfg` says (saying so on stderr), or, with
/// `--no-wait`, only look at what the CPUs do for a tenth of a second.
pub fn quiet_start(cfg: &MeasureConfig, cancel: &CancelToken) -> QuietStart {
    let root = sysgauge_host::SysRoot::live();
    let Some(rule) = &cfg.wait else {
        return QuietStart {
            wait: None,
            others_percent: quiet::others_now(&root, std::time::Duration::from_millis(100)),
        };
    };
    eprintln!(
        "sysgauge: waiting up to {:.0} s for a quiet machine (other processes below {} % of the CPUs for {:.0} s; --no-wait skips this)",
        rule.bound.as_secs_f64(),
        rule.limit_percent,
        rule.quiet_for.as_secs_f64()
    );
    let mut said = std::time::Instant::now();
    let report = quiet::wait_for_quiet(&root, rule, &|| cancel.is_cancelled(), &mut |r| {
        if said.elapsed() >= std::time::Duration::from_secs(5) {
            eprintln!("sysgauge: {}", r.summary());
            said = std::time::Instant::now();
        }
    });
    eprintln!("sysgauge: {}", report.summary());
    QuietStart {
        others_percent: report.others_percent,
        wait: Some(report),
    }
}

/// A new, empty run record for `command`, with how quiet the machine was
/// as it began (its tags and findings).
pub fn new_record(command: &str, cfg: &MeasureConfig, start: &QuietStart) -> RunRecord {
    let mut host = sysgauge_host::collect_live(Some(&cfg.scratch_base));
    host.cpu.user_rated_mhz = cfg.rated_mhz;
    let build = build_info();
    let mut findings =
        sysgauge_family::methodology::run_findings(&host, &build, start.others_percent);
    let mut tags = cfg.tags.clone();
    if let Some(w) = &start.wait {
        findings.extend(w.finding());
        for (k, v) in w.tags() {
            tags.entry(k.to_string()).or_insert(v);
        }
    }
    RunRecord {
        build,
        host,
        profile: cfg.profile,
        label: cfg.label.clone(),
        tags,
        findings,
        ..RunRecord::new(
            &uuid::Uuid::new_v4().to_string(),
            command,
            env!("CARGO_PKG_VERSION"),
        )
    }
}

/// Run `benches` as one run of `command`, store it, write `--json`.
pub fn execute(
    command: &str,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
    cancel: &CancelToken,
    extra_findings: Vec<Finding>,
) -> Result<Outcome> {
    execute_with(command, cfg, benches, cancel, extra_findings, None)
}

/// `execute` for the cases of one family, the run named after it: how
/// a family's own subcommand runs when it has more to do than
/// `family_command` (a chart, an export, a session to close).
pub fn execute_family(
    family: &dyn Family,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
    cancel: &CancelToken,
    extra_findings: Vec<Finding>,
) -> Result<Outcome> {
    execute(family.info().name, cfg, benches, cancel, extra_findings)
}

/// `execute` with one more sink fed after the console and the database
/// (e.g. `crypto --vs-openssl` running the reference right after each case).
pub fn execute_with(
    command: &str,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
    cancel: &CancelToken,
    extra_findings: Vec<Finding>,
    extra_sink: Option<&mut dyn Sink>,
) -> Result<Outcome> {
    let tokens = Tokens {
        signal: cancel,
        runner: cancel,
    };
    execute_tokens(command, cfg, benches, tokens, extra_findings, extra_sink)
}

/// `execute` for a command that a signal ends normally once it measures
/// (`ping`, as ping(8): the benchmarks hold `signal` and stop sending). A
/// signal before the measuring (during the wait for a quiet machine)
/// interrupts the run as in every other command; after that the runner
/// never sees it, so every case reads what was measured and the run
/// completes.
pub fn execute_until_signal(
    command: &str,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
    signal: &CancelToken,
    extra_findings: Vec<Finding>,
) -> Result<Outcome> {
    let runner = CancelToken::new();
    let tokens = Tokens {
        signal,
        runner: &runner,
    };
    execute_tokens(command, cfg, benches, tokens, extra_findings, None)
}

/// What a signal cancels: `signal` (the handler's token) ends the wait for
/// a quiet machine; `runner` is the runner's, cancelled too when the signal
/// came before the first case. Most commands pass the same token twice.
struct Tokens<'a> {
    signal: &'a CancelToken,
    runner: &'a CancelToken,
}

fn execute_tokens(
    command: &str,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
    tokens: Tokens<'_>,
    extra_findings: Vec<Finding>,
    extra_sink: Option<&mut dyn Sink>,
) -> Result<Outcome> {
    let cancel = tokens.runner;
    // A signal that interrupts the run ends a wait on a frozen database
    // server too (a ping ended by Ctrl-C is still stored).
    sysgauge_store::watch_cancel(cancel);
    let mut store = open_store(cfg)?;
    let family_budgets: BTreeMap<String, std::time::Duration> = families()
        .iter()
        .map(|f| {
            let budget = cfg
                .family_budgets
                .get(f.name)
                .copied()
                .unwrap_or_else(|| f.budget(cfg.profile));
            (f.name.to_string(), budget)
        })
        .collect();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let runner_cfg = RunnerConfig {
        settings: CtxSettings {
            profile: cfg.profile,
            repetitions: cfg.repetitions,
            warmup: cfg.warmup,
            scratch_base: cfg.scratch_base.clone(),
            threads,
        },
        noise_threshold: cfg.noise_threshold,
        family_budgets,
        default_budget: std::time::Duration::from_secs(5),
        rounds: cfg.rounds,
    };
    let refs: Vec<&dyn Benchmark> = benches.iter().map(|b| b.as_ref()).collect();
    let mut runner = Runner::new(
        refs,
        runner_cfg,
        Arc::new(MonotonicClock::new()),
        cancel.clone(),
    );
    if cfg.telemetry {
        let cpu_bound = sysgauge_registry::families()
            .into_iter()
            .filter(|f| f.cpu_bound)
            .map(|f| f.name);
        runner = runner.with_monitor(Arc::new(
            sysgauge_host::telemetry::Telemetry::live()
                .with_cpu_bound_families(cpu_bound)
                .with_peer_processes(&cfg.peer_processes),
        ));
    }
    if runner.planned_cases() == 0 {
        anyhow::bail!(
            "nothing to run: the chosen benchmarks plan no case with the {} profile \
             (some run only through their own subcommand, e.g. `sysgauge startup`, \
             `sysgauge ping`, `sysgauge ssh`)",
            cfg.profile
        );
    }
    // Last before the first case, so a bad option or an empty selection
    // fails at once rather than after the wait.
    let start = quiet_start(cfg, tokens.signal);
    if tokens.signal.is_cancelled() {
        // Interrupted before the first case: the run stops here, as
        // interrupted, whatever the signal means once measuring.
        cancel.cancel();
    }
    let mut record = new_record(command, cfg, &start);
    record.findings.extend(extra_findings);
    let mut console = ConsoleProgress::new(cfg.quiet_progress);
    let mut store_error: Option<String> = None;
    let (record, stored_as) = match store.as_mut() {
        Some(store) => {
            let mut db = GuardedStoreSink {
                inner: StoreSink::new(store),
                error: None,
            };
            let done = {
                let mut sinks = Sinks(vec![&mut console as &mut dyn Sink, &mut db]);
                if let Some(extra) = extra_sink {
                    sinks.0.push(extra);
                }
                runner.run(record, &mut sinks)
            };
            let row = db.inner.run_row();
            store_error = db.error.take();
            (
                done.map_err(|e| anyhow::anyhow!(e))
                    .context("the run stopped")?,
                row,
            )
        }
        None => {
            let mut sinks = Sinks(vec![&mut console as &mut dyn Sink]);
            if let Some(extra) = extra_sink {
                sinks.0.push(extra);
            }
            (
                runner
                    .run(record, &mut sinks)
                    .map_err(|e| anyhow::anyhow!(e))
                    .context("the run stopped")?,
                None,
            )
        }
    };
    // The record keeps the status of the measuring: a database that
    // failed lost no measurement, and importing this record completes the
    // stored run (with `completed_from`), which then counts like any other.
    if let Some(path) = &cfg.json {
        let text = sysgauge_report::export_run(&record, sysgauge_report::ExportFormat::Json);
        output::to_file_or_stdout(path, &text)
            .with_context(|| format!("writing the JSON record to {}", path.display()))?;
    }
    let (uploaded, upload_failed) = match &cfg.upload {
        Some(server) => upload_run(server, &record, stored_as, &cfg.db),
        None => (None, false),
    };
    if let Some(e) = store_error {
        anyhow::bail!("{}", unstored_message(&cfg.db, cfg.json.as_deref(), &e));
    }
    let exit = if record.status == RunStatus::Interrupted {
        Exit::Interrupted
    } else if record
        .results
        .iter()
        .any(|r| matches!(r.status, Status::Failed { .. }))
    {
        Exit::BenchFailed
    } else if upload_failed {
        Exit::Fatal
    } else {
        Exit::Ok
    };
    Ok(Outcome {
        record,
        exit,
        stored_as,
        uploaded,
    })
}

/// `--upload`: send the finished record, saying on stderr how it went and
/// how to send it again; an interrupted run stays home (a partial run on a
/// shared site would be compared as the machine). Returns where it went
/// and whether the upload failed.
fn upload_run(
    server: &crate::upload::Uploader,
    record: &RunRecord,
    stored_as: Option<i64>,
    db: &DbChoice,
) -> (Option<crate::upload::Uploaded>, bool) {
    let again = match (stored_as, db) {
        (Some(row), DbChoice::File(db)) => server.send_again(&row.to_string(), Some(db)),
        _ => format!(
            "{} with the --json record as FILE",
            server.send_again("FILE", None)
        ),
    };
    if record.status == RunStatus::Interrupted {
        eprintln!("sysgauge: the run was interrupted and was not uploaded; {again} sends it");
        return (None, false);
    }
    match server.upload(record) {
        Ok(done) => {
            eprintln!("sysgauge: {}", done.describe());
            (Some(done), false)
        }
        Err(e) => {
            eprintln!("{ERROR_PREFIX}the upload failed: {e:#}; {again} sends it again");
            (None, true)
        }
    }
}

/// What a run the database failed during ends with: the database (shown
/// without its password), the error, and where the measurements went.
fn unstored_message(db: &DbChoice, json: Option<&std::path::Path>, error: &str) -> String {
    let db = match db {
        DbChoice::File(p) => sysgauge_store::display_name(p),
        DbChoice::None => String::new(),
    };
    let kept = match json {
        Some(p) if p.as_os_str() != "-" => format!(
            "; the measurements were written to {} (`sysgauge import {}` completes the stored run)",
            p.display(),
            p.display()
        ),
        Some(_) => "; the measurements were written to standard output".to_string(),
        None => "; pass --json FILE next time to keep the measurements anyway".to_string(),
    };
    format!("the run could not be stored in the results database {db}: {error}{kept}")
}

/// A family's own subcommand, where nothing about it is specific: run
/// `benches` (already chosen from the family) as one run named after the
/// family, then print its tables and the closing output.
pub fn family_command(
    family: &dyn Family,
    cfg: &MeasureConfig,
    benches: &[Box<dyn Benchmark>],
) -> Result<Exit> {
    let cancel = crate::signals::install()?;
    let outcome = execute_family(family, cfg, benches, &cancel, Vec::new())?;
    finish(cfg, &outcome, family_text(family, &outcome.record))
}

/// What a family's subcommand shows for a run: the summary table when the
/// family wants it, then the family's own tables.
pub fn family_text(family: &dyn Family, run: &RunRecord) -> String {
    let tables = family.report(run, TableFormat::Text);
    if !family.summary_first() {
        return tables;
    }
    let mut text = summary_table(run, TableFormat::Text);
    if !tables.is_empty() {
        text.push('\n');
        text.push_str(&tables);
    }
    text
}

/// The database sink, made non-fatal: its first error is kept and later
/// writes are skipped, so the run (and `--json`) goes on; at the end the row
/// is marked failed if it exists.
struct GuardedStoreSink<'a> {
    inner: StoreSink<'a>,
    error: Option<String>,
}

impl GuardedStoreSink<'_> {
    fn keep(&mut self, r: Result<(), sysgauge_core::runner::SinkError>) {
        if let Err(e) = r {
            eprintln!("{ERROR_PREFIX}results database: {e}; the run goes on without it");
            self.error = Some(e.to_string());
        }
    }
}

impl Sink for GuardedStoreSink<'_> {
    fn run_started(&mut self, run: &RunRecord) -> Result<(), sysgauge_core::runner::SinkError> {
        let r = self.inner.run_started(run);
        self.keep(r);
        Ok(())
    }

    fn case_finished(
        &mut self,
        index: usize,
        total: usize,
        result: &sysgauge_core::record::ResultRecord,
    ) -> Result<(), sysgauge_core::runner::SinkError> {
        if self.error.is_none() {
            let r = self.inner.case_finished(index, total, result);
            self.keep(r);
        }
        Ok(())
    }

    fn run_finished(&mut self, run: &RunRecord) -> Result<(), sysgauge_core::runner::SinkError> {
        if self.error.is_none() {
            let r = self.inner.run_finished(run);
            self.keep(r);
        } else if self.inner.run_row().is_some() {
            // Best effort: the row says failed rather than `running`.
            let mut failed = run.clone();
            failed.status = RunStatus::Failed;
            let _ = self.inner.run_finished(&failed);
        }
        Ok(())
    }
}

/// The index lines against the embedded baseline that end a run summary
/// (one line saying why when there is no index).
pub fn baseline_index_text(record: &RunRecord) -> String {
    match sysgauge_registry::baseline::embedded() {
        Ok(b) => match sysgauge_registry::baseline::index(record) {
            Ok(ix) => sysgauge_report::index_text(&ix, b.version, &b.machine),
            Err(e) => format!("No index: {e}\n"),
        },
        Err(e) => format!("No index: {e}\n"),
    }
}

/// The "Findings:" section that follows a command's tables (empty when
/// there are none).
pub fn findings_section(record: &RunRecord) -> String {
    let findings = sysgauge_report::findings_text(record);
    if findings.is_empty() {
        String::new()
    } else {
        format!("\nFindings:\n{findings}")
    }
}

/// The lines that end every measuring command: where the run was stored
/// and, when `exit` says so, that it was interrupted.
pub fn closing_lines(outcome: &Outcome, exit: Exit) -> String {
    let mut text = String::new();
    if let Some(row) = outcome.stored_as {
        text.push_str(&format!(
            "\nStored as run {row} ({}); `sysgauge results show {row}` shows it again.\n",
            outcome.record.run_id
        ));
    }
    if let Some(u) = &outcome.uploaded {
        text.push_str(&format!("Uploaded: {}\n", u.url()));
    }
    if exit == Exit::Interrupted {
        text.push_str("The run was interrupted; the results above were kept.\n");
    }
    text
}

/// End a measuring command: `body` (its tables), the findings and the
/// closing lines, printed for people; returns the outcome's exit code.
pub fn finish(cfg: &MeasureConfig, outcome: &Outcome, body: String) -> Result<Exit> {
    finish_to(cfg, outcome, body, false)
}

/// `finish`, with the human text sent to stderr when `stdout_is_data` (a
/// command writing its own export to stdout).
pub fn finish_to(
    cfg: &MeasureConfig,
    outcome: &Outcome,
    mut body: String,
    stdout_is_data: bool,
) -> Result<Exit> {
    body.push_str(&findings_section(&outcome.record));
    body.push_str(&closing_lines(outcome, outcome.exit));
    if stdout_is_data {
        eprint!("{body}");
    } else {
        print_human(cfg, &body)?;
    }
    Ok(outcome.exit)
}

/// Print human-readable text: to stdout normally, to stderr when stdout
/// carries the JSON record (`--json -`).
pub fn print_human(cfg: &MeasureConfig, text: &str) -> Result<()> {
    if cfg.json.as_deref().is_some_and(|p| p.as_os_str() == "-") {
        eprint!(
            "{}",
            crate::style::paint(text, crate::style::Stream::Stderr)
        );
        Ok(())
    } else {
        output::stdout(&crate::style::paint(text, crate::style::Stream::Stdout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// The message a run ends with when its database failed, for every
    /// place the measurements can have gone: the database is named, its
    /// password never.
    #[test]
    fn unstored_message_hides_the_password() {
        let url = "postgres://sg:sgpass@db.example/results?password=sgpass";
        let db = DbChoice::File(PathBuf::from(url));
        let store_error = sysgauge_store::StoreError::Postgres {
            path: PathBuf::from(url),
            context: "storing a result".into(),
            reason: "connection closed".into(),
        }
        .to_string();
        for json in [None, Some(Path::new("-")), Some(Path::new("run.json"))] {
            let m = unstored_message(&db, json, &store_error);
            assert!(!m.contains("sgpass"), "{m}");
            assert!(
                m.starts_with(
                    "the run could not be stored in the results database postgres://sg@db.example/results: \
                     results database postgres://sg@db.example/results: storing a result: connection closed; "
                ),
                "{m}"
            );
        }
        let file = DbChoice::File(PathBuf::from("/tmp/x.db"));
        let m = unstored_message(&file, Some(Path::new("run.json")), "disk full");
        assert_eq!(
            m,
            "the run could not be stored in the results database /tmp/x.db: disk full; \
             the measurements were written to run.json (`sysgauge import run.json` completes the stored run)"
        );
    }
}
