//! What every measuring subcommand shares: open the database first (so a bad
//! `--db` fails before anything is measured), collect the host facts, run the
//! benchmarks through the runner with the console, database and JSON sinks,
//! and decide the exit code.

use crate::config::{DbChoice, MeasureConfig};
use crate::exit::Exit;
use crate::output;
use crate::progress::ConsoleProgress;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use sysgauge_bench::families;
use sysgauge_core::record::{BuildInfo, Finding, RunRecord, RunStatus, Status, SCHEMA_VERSION};
use sysgauge_core::runner::{Runner, RunnerConfig, Sink, Sinks};
use sysgauge_core::{Benchmark, CancelToken, CtxSettings, MonotonicClock};
use sysgauge_store::{Store, StoreSink};

/// A finished measurement: the record and the exit code it deserves.
pub struct Outcome {
    pub record: RunRecord,
    pub exit: Exit,
    /// Row id in the results database, when stored.
    pub stored_as: Option<i64>,
}

/// Open the configured database (or none with `--no-store`).
pub fn open_store(cfg: &MeasureConfig) -> Result<Option<Store>> {
    match &cfg.db {
        DbChoice::None => Ok(None),
        DbChoice::File(p) => Ok(Some(Store::open(p)?)),
    }
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
        "bmi2",
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

/// A new, empty run record for `command`.
pub fn new_record(command: &str, cfg: &MeasureConfig) -> RunRecord {
    let host = sysgauge_host::collect_live(Some(&cfg.scratch_base));
    let build = build_info();
    let findings = sysgauge_bench::methodology::run_findings(&host, &build);
    RunRecord {
        schema_version: SCHEMA_VERSION,
        run_id: uuid::Uuid::new_v4().to_string(),
        started_at: chrono::Utc::now(),
        finished_at: None,
        status: RunStatus::Running,
        command: command.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        build,
        host,
        profile: cfg.profile,
        label: cfg.label.clone(),
        tags: cfg.tags.clone(),
        findings,
        results: Vec::new(),
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
    let mut store = open_store(cfg)?;
    let mut record = new_record(command, cfg);
    record.findings.extend(extra_findings);
    let family_budgets: BTreeMap<String, std::time::Duration> = families()
        .iter()
        .map(|f| (f.name.to_string(), f.budget(cfg.profile)))
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
    };
    let refs: Vec<&dyn Benchmark> = benches.iter().map(|b| b.as_ref()).collect();
    let runner = Runner::new(
        refs,
        runner_cfg,
        Arc::new(MonotonicClock::new()),
        cancel.clone(),
    );
    let mut console = ConsoleProgress::new(cfg.quiet_progress);
    let (record, stored_as) = match store.as_mut() {
        Some(store) => {
            let mut db = StoreSink::new(store);
            let done = {
                let mut sinks = Sinks(vec![&mut console as &mut dyn Sink, &mut db]);
                runner.run(record, &mut sinks)
            };
            let row = db.run_row();
            (
                done.map_err(|e| anyhow::anyhow!(e))
                    .context("the run stopped")?,
                row,
            )
        }
        None => (
            runner
                .run(record, &mut console)
                .map_err(|e| anyhow::anyhow!(e))
                .context("the run stopped")?,
            None,
        ),
    };
    if let Some(path) = &cfg.json {
        let text = sysgauge_report::export_run(&record, sysgauge_report::ExportFormat::Json);
        output::to_file_or_stdout(path, &text)
            .with_context(|| format!("writing the JSON record to {}", path.display()))?;
    }
    let exit = if record.status == RunStatus::Interrupted {
        Exit::Interrupted
    } else if record
        .results
        .iter()
        .any(|r| matches!(r.status, Status::Failed { .. }))
    {
        Exit::BenchFailed
    } else {
        Exit::Ok
    };
    Ok(Outcome {
        record,
        exit,
        stored_as,
    })
}

/// The index lines against the embedded baseline that end a run summary
/// (one line saying why when there is no index).
pub fn baseline_index_text(record: &RunRecord) -> String {
    match sysgauge_bench::baseline::embedded() {
        Ok(b) => match sysgauge_bench::baseline::index(record) {
            Ok(ix) => sysgauge_report::index_text(&ix, b.version, &b.machine),
            Err(e) => format!("No index: {e}\n"),
        },
        Err(e) => format!("No index: {e}\n"),
    }
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
