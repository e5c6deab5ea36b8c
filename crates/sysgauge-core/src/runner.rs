//! The runner: plans the cases of the selected benchmarks, gives each family
//! its time slice, runs every case through a `RunCtx`, turns outcomes into
//! `ResultRecord`s (adding the `noisy` finding), and streams events to the
//! sinks (console progress, the results database, JSON).
//!
//! Each finished case is handed to the sinks before the next one starts, so
//! the database holds everything finished even if the run is interrupted.

use crate::bench::{BenchError, Benchmark, Plan, Requirement};
use crate::cancel::CancelToken;
use crate::clock::Clock;
use crate::ctx::{CtxSettings, RunCtx};
use crate::monitor::{CaseMonitor, DISTURBED};
use crate::record::{
    family_of, Finding, ParamValue, Params, ResultRecord, RunRecord, RunStatus, Severity, Status,
    ALL_CPUS,
};
use chrono::Utc;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

/// Errors from a sink (e.g. the database refused a write). They stop the run.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Receives the run's events in order.
pub trait Sink {
    fn run_started(&mut self, _run: &RunRecord) -> Result<(), SinkError> {
        Ok(())
    }
    /// A case is about to start; `index` counts from 0 over the whole run.
    fn case_started(&mut self, _index: usize, _total: usize, _bench_id: &str, _params: &Params) {}
    /// A case finished, merged from all its rounds: what is stored.
    fn case_finished(
        &mut self,
        _index: usize,
        _total: usize,
        _result: &ResultRecord,
    ) -> Result<(), SinkError> {
        Ok(())
    }
    /// Round `round` of `rounds` of a case finished, before its last round
    /// (only with `--rounds` above 1); the record is that round's alone and
    /// is not stored.
    fn round_finished(
        &mut self,
        _index: usize,
        _total: usize,
        _round: u32,
        _rounds: u32,
        _result: &ResultRecord,
    ) {
    }
    /// Findings about the whole run that only this sink can make (from
    /// what it saw case by case), asked once after the last case and
    /// added to the record before `run_finished`, so they are stored.
    fn closing_findings(&mut self) -> Vec<Finding> {
        Vec::new()
    }
    fn run_finished(&mut self, _run: &RunRecord) -> Result<(), SinkError> {
        Ok(())
    }
}

/// Several sinks fed in order.
#[derive(Default)]
pub struct Sinks<'a>(pub Vec<&'a mut dyn Sink>);

impl Sink for Sinks<'_> {
    fn run_started(&mut self, run: &RunRecord) -> Result<(), SinkError> {
        self.0.iter_mut().try_for_each(|s| s.run_started(run))
    }
    fn case_started(&mut self, index: usize, total: usize, bench_id: &str, params: &Params) {
        for s in self.0.iter_mut() {
            s.case_started(index, total, bench_id, params);
        }
    }
    fn case_finished(
        &mut self,
        index: usize,
        total: usize,
        result: &ResultRecord,
    ) -> Result<(), SinkError> {
        self.0
            .iter_mut()
            .try_for_each(|s| s.case_finished(index, total, result))
    }
    fn round_finished(
        &mut self,
        index: usize,
        total: usize,
        round: u32,
        rounds: u32,
        result: &ResultRecord,
    ) {
        for s in self.0.iter_mut() {
            s.round_finished(index, total, round, rounds, result);
        }
    }
    fn closing_findings(&mut self) -> Vec<Finding> {
        self.0
            .iter_mut()
            .flat_map(|s| s.closing_findings())
            .collect()
    }
    fn run_finished(&mut self, run: &RunRecord) -> Result<(), SinkError> {
        self.0.iter_mut().try_for_each(|s| s.run_finished(run))
    }
}

/// How a run is carried out.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    pub settings: CtxSettings,
    /// Coefficient of variation above which a case is marked noisy.
    pub noise_threshold: f64,
    /// Time slice of each family; a family not listed gets `default_budget`.
    pub family_budgets: BTreeMap<String, Duration>,
    pub default_budget: Duration,
    /// How many times every case runs (`--rounds`), interleaved; 1 is a
    /// plain run.
    pub rounds: u32,
}

/// Finding code for a case whose repetitions disagree too much.
pub const NOISY: &str = "noisy";

pub struct Runner<'a> {
    benches: Vec<&'a dyn Benchmark>,
    config: RunnerConfig,
    clock: Arc<dyn Clock>,
    cancel: CancelToken,
    monitor: Option<Arc<dyn CaseMonitor>>,
}

/// One planned case.
struct Case<'a> {
    bench: &'a dyn Benchmark,
    params: Params,
}

impl<'a> Runner<'a> {
    pub fn new(
        benches: Vec<&'a dyn Benchmark>,
        config: RunnerConfig,
        clock: Arc<dyn Clock>,
        cancel: CancelToken,
    ) -> Runner<'a> {
        Runner {
            benches,
            config,
            clock,
            cancel,
            monitor: None,
        }
    }

    /// Watch every case with `monitor` (what the rest of the machine did).
    pub fn with_monitor(mut self, monitor: Arc<dyn CaseMonitor>) -> Runner<'a> {
        self.monitor = Some(monitor);
        self
    }

    /// Number of cases the run will attempt (each once, whatever the rounds).
    pub fn planned_cases(&self) -> usize {
        self.plan().iter().map(|(_, c)| c.len()).sum()
    }

    fn plan(&self) -> Vec<(String, Vec<Case<'a>>)> {
        let plan = Plan {
            profile: self.config.settings.profile,
            threads: self.config.settings.threads,
        };
        let mut families: Vec<(String, Vec<Case<'a>>)> = Vec::new();
        for &bench in &self.benches {
            let family = family_of(bench.id()).to_string();
            let cases = bench
                .cases(&plan)
                .into_iter()
                .map(|params| Case { bench, params });
            // Consecutive benchmarks of a family share a session and a time
            // slice; a family that appears again later (the clock check at
            // the end of `sysgauge run`) gets a session and slice of its own.
            match families.last_mut().filter(|(f, _)| *f == family) {
                Some((_, v)) => v.extend(cases),
                None => families.push((family, cases.collect())),
            }
        }
        families.retain(|(_, c)| !c.is_empty());
        families
    }

    /// Run everything, feeding `sink`. Returns the finished record (status
    /// complete or interrupted). A sink error stops the run and is returned.
    ///
    /// With `rounds` above 1 the whole plan runs that many times, round 1 of
    /// every case before round 2 of any (each round a family session of its
    /// own), and each case is handed to the sinks once, merged from its
    /// rounds (`rounds::merge`), as its last round finishes. Earlier rounds
    /// go to `round_finished` only. When the run is interrupted, a case
    /// with at least one finished round is merged from the rounds it has.
    pub fn run(&self, mut record: RunRecord, sink: &mut dyn Sink) -> Result<RunRecord, SinkError> {
        record.status = RunStatus::Running;
        sink.run_started(&record)?;
        let families = self.plan();
        let cases: usize = families.iter().map(|(_, c)| c.len()).sum();
        let rounds = self.config.rounds.max(1);
        let total = cases * rounds as usize;
        let mut index = 0;
        let mut interrupted = false;
        let mut requirement_cache: BTreeMap<String, Result<(), (String, Option<String>)>> =
            BTreeMap::new();
        // Per planned case: its finished rounds, and the benchmark's state.
        let mut pending: Vec<(Vec<ResultRecord>, Option<String>)> =
            (0..cases).map(|_| (Vec::new(), None)).collect();
        let mut emitted = vec![false; cases];
        'rounds: for round in 1..=rounds {
            let mut case_no = 0;
            for (family, family_cases) in &families {
                let slice = self
                    .config
                    .family_budgets
                    .get(family)
                    .copied()
                    .unwrap_or(self.config.default_budget);
                let case_budget =
                    slice / u32::try_from(family_cases.len()).unwrap_or(u32::MAX).max(1);
                let mut ctx = RunCtx::new(
                    self.config.settings.clone(),
                    self.clock.clone(),
                    self.cancel.clone(),
                );
                for case in family_cases {
                    if self.cancel.is_cancelled() {
                        interrupted = true;
                        break 'rounds;
                    }
                    sink.case_started(index, total, case.bench.id(), &case.params);
                    let req = requirement_cache
                        .entry(case.bench.id().to_string())
                        .or_insert_with(|| check_requirements(&case.bench.requirements()))
                        .clone();
                    let Some(result) = self.run_case(&mut ctx, family, case, case_budget, req)
                    else {
                        interrupted = true;
                        break 'rounds;
                    };
                    let slot = &mut pending[case_no];
                    slot.1 = case.bench.describe().state;
                    if round < rounds {
                        sink.round_finished(index, total, round, rounds, &result);
                        slot.0.push(result);
                    } else {
                        slot.0.push(result);
                        let merged =
                            crate::rounds::merge(std::mem::take(&mut slot.0), slot.1.as_deref());
                        if let Some(mut merged) = merged {
                            judge_noise_over_rounds(&mut merged, self.config.noise_threshold);
                            case.bench.settle(&mut merged, &record.results);
                            sink.case_finished(index, total, &merged)?;
                            record.results.push(merged);
                        }
                        emitted[case_no] = true;
                    }
                    index += 1;
                    case_no += 1;
                }
                ctx.end_session();
            }
        }
        // Interrupted between rounds: what a case has is still a measurement.
        let planned = families.iter().flat_map(|(_, c)| c);
        for (i, ((done, state), case)) in pending.into_iter().zip(planned).enumerate() {
            if emitted[i] || done.is_empty() {
                continue;
            }
            if let Some(mut merged) = crate::rounds::merge(done, state.as_deref()) {
                judge_noise_over_rounds(&mut merged, self.config.noise_threshold);
                case.bench.settle(&mut merged, &record.results);
                sink.case_finished(index.min(total.saturating_sub(1)), total, &merged)?;
                record.results.push(merged);
            }
        }
        record.status = if interrupted || self.cancel.is_cancelled() {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        record.finished_at = Some(Utc::now());
        record.findings.extend(sink.closing_findings());
        sink.run_finished(&record)?;
        Ok(record)
    }

    /// Run one case of `family` in `ctx`; `None` when it was cancelled.
    fn run_case(
        &self,
        ctx: &mut RunCtx,
        family: &str,
        case: &Case<'a>,
        case_budget: Duration,
        req: Result<(), (String, Option<String>)>,
    ) -> Option<ResultRecord> {
        let id = case.bench.id().to_string();
        let started_at = Utc::now();
        let t0 = self.clock.now();
        ctx.begin_case(case_budget);
        // A case computed from other cases' results (an index) measures
        // nothing: the machine's activity over its few milliseconds of
        // arithmetic says nothing about it, so it gets no telemetry and no
        // disturbed mark.
        let watch = self
            .monitor
            .as_ref()
            .filter(|_| case.bench.derived_from().is_empty())
            .map(|m| m.watch(family));
        let outcome = match req {
            Err((reason, hint)) => Err(BenchError::Skip { reason, hint }),
            Ok(()) => run_guarded(case.bench, ctx, &case.params),
        };
        let seen = watch.map(|w| w.finish(&case_label(&id, &case.params)));
        let output = ctx.take_case_output();
        let mut findings = output.findings;
        let mut params = case.params.clone();
        params.extend(&output.params);
        let (status, metrics) = match outcome {
            Ok(metrics) if metrics.is_empty() => (
                Status::Failed {
                    error: "the benchmark returned no measurement".into(),
                },
                Vec::new(),
            ),
            Ok(metrics) => (Status::Ok, metrics),
            Err(BenchError::Cancelled) => return None,
            Err(BenchError::Skip { reason, hint }) => {
                (Status::Skipped { reason, hint }, Vec::new())
            }
            Err(e) => (
                Status::Failed {
                    error: e.to_string(),
                },
                Vec::new(),
            ),
        };
        // Only the headline metric decides: secondary metrics (a
        // CPU-time split the kernel samples per tick, component
        // times) are context, and their spread stays in their own
        // summaries instead of flooding the findings.
        if let Some(m) = metrics.first() {
            if m.summary.n >= 3 && m.summary.cov > self.config.noise_threshold {
                findings.push(noisy_finding(
                    &case_label(&id, &params),
                    &m.name,
                    m.summary.cov,
                    None,
                    self.config.noise_threshold,
                ));
            }
        }
        let mut details = output.details;
        if let (Some(seen), Status::Ok) = (seen, &status) {
            details.extend(&seen.details);
            findings.extend(seen.findings);
            if !seen.disturbed.is_empty() {
                // Beside the benchmark's own reason (a spawn that waited),
                // not over it.
                let why = match details.get_str(DISTURBED) {
                    Some(own) => format!("{own}; {}", seen.disturbed.join("; ")),
                    None => seen.disturbed.join("; "),
                };
                details.insert(DISTURBED, why);
            }
        }
        for (key, value) in &case.params.0 {
            if matches!(value, ParamValue::Text(t) if t == ALL_CPUS) {
                details.insert(key, ctx.threads());
            }
        }
        let desc = case.bench.describe();
        Some(ResultRecord {
            bench_id: id,
            family: family.to_string(),
            workload_version: desc.workload_version,
            params,
            details,
            status,
            started_at,
            duration_seconds: self.clock.now().saturating_sub(t0).as_secs_f64(),
            metrics,
            findings,
        })
    }
}

fn check_requirements(reqs: &[Requirement]) -> Result<(), (String, Option<String>)> {
    for r in reqs {
        match r.check() {
            Ok(()) => {}
            Err(BenchError::Skip { reason, hint }) => return Err((reason, hint)),
            Err(e) => return Err((e.to_string(), None)),
        }
    }
    Ok(())
}

/// Run one case, turning a panic inside a benchmark into a failed case so one
/// broken benchmark cannot take the whole run (and its database) down.
fn run_guarded(
    bench: &dyn Benchmark,
    ctx: &mut RunCtx,
    params: &Params,
) -> Result<Vec<crate::record::Metric>, BenchError> {
    match catch_unwind(AssertUnwindSafe(|| bench.run(ctx, params))) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(BenchError::failed(format!("benchmark panicked: {msg}")))
        }
    }
}

/// A case measured in rounds is noisy when its within-round spread (the
/// median of its rounds' own spreads, the figure the tables show) is above
/// the threshold: not because one round was, which the merged record's
/// findings would otherwise say.
fn judge_noise_over_rounds(r: &mut ResultRecord, threshold: f64) {
    let Some((_, within)) = crate::rounds::spreads(r) else {
        return;
    };
    r.findings.retain(|f| f.code != NOISY);
    let repetitions = r.details.get_u64(crate::rounds::ROUND_REPETITIONS);
    let rounds = r.details.get_u64(crate::rounds::ROUNDS);
    if within > threshold && repetitions.is_some_and(|n| n >= 3) {
        if let Some(m) = r.primary() {
            let f = noisy_finding(
                &case_label(&r.bench_id, &r.params),
                &m.name,
                within,
                rounds,
                threshold,
            );
            r.findings.push(f);
        }
    }
}

/// `id (params)`, or the id alone: how findings name a case.
fn case_label(id: &str, params: &Params) -> String {
    if params.is_empty() {
        id.to_string()
    } else {
        format!("{id} ({params})")
    }
}

/// `metric` of `case` varies by `cov` between repetitions; `rounds`: the
/// spread is the median of that many rounds' own spreads.
fn noisy_finding(
    case: &str,
    metric: &str,
    cov: f64,
    rounds: Option<u64>,
    threshold: f64,
) -> Finding {
    let over = rounds.map_or(String::new(), |n| format!(" (median of {n} rounds)"));
    Finding::new(
        NOISY,
        Severity::Warning,
        format!(
            "{case}: {metric} varies by {:.1} % between repetitions{over} (threshold {:.0} %)",
            cov * 100.0,
            threshold * 100.0
        ),
    )
    .with_remedy(
        "stop other work on the machine (check `sysgauge procs`), make sure the CPU governor is \
         'performance', and rerun with a longer profile or more --repetitions",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Description;
    use crate::clock::{FakeClock, MonotonicClock};
    use crate::record::{Metric, Profile};
    use crate::unit::{Better, Unit};
    use std::sync::atomic::{AtomicUsize, Ordering};

    type RunFn<'a> =
        dyn Fn(&mut RunCtx, &Params) -> Result<Vec<Metric>, BenchError> + Send + Sync + 'a;

    /// The benchmark of a test: an id, a description, its cases (one
    /// empty case unless given others), what it requires or is derived
    /// from, and what `run` does, as a closure; `calls` counts the runs.
    struct Scripted<'a> {
        id: &'static str,
        description: Description,
        requirements: Vec<Requirement>,
        derived_from: Vec<String>,
        cases: Vec<Params>,
        run: Box<RunFn<'a>>,
        calls: AtomicUsize,
    }

    impl<'a> Scripted<'a> {
        fn new(
            id: &'static str,
            description: Description,
            run: impl Fn(&mut RunCtx, &Params) -> Result<Vec<Metric>, BenchError> + Send + Sync + 'a,
        ) -> Scripted<'a> {
            Scripted {
                id,
                description,
                requirements: Vec::new(),
                derived_from: Vec::new(),
                cases: vec![Params::new()],
                run: Box::new(run),
                calls: AtomicUsize::new(0),
            }
        }
    }

    impl Benchmark for Scripted<'_> {
        fn id(&self) -> &str {
            self.id
        }
        fn describe(&self) -> Description {
            self.description.clone()
        }
        fn requirements(&self) -> Vec<Requirement> {
            self.requirements.clone()
        }
        fn derived_from(&self) -> Vec<String> {
            self.derived_from.clone()
        }
        fn cases(&self, _plan: &Plan) -> Vec<Params> {
            self.cases.clone()
        }
        fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            (self.run)(ctx, params)
        }
    }

    /// A metric of `samples` where higher is better.
    fn higher(name: &str, unit: Unit, samples: Vec<f64>) -> Result<Metric, BenchError> {
        Metric::new(name, unit, Better::Higher, samples)
            .ok_or_else(|| BenchError::failed("no samples"))
    }

    /// Two cases (size 1 and 2) that measure `samples` and note a param;
    /// `t.fail` fails its second case and `t.panic` panics.
    fn fixed(id: &'static str, samples: Vec<f64>) -> Scripted<'static> {
        let description = Description::new("fixed samples", Unit::MBps, Better::Higher).version(3);
        Scripted {
            cases: vec![
                Params::new().with("size", 1u64),
                Params::new().with("size", 2u64),
            ],
            ..Scripted::new(id, description, move |ctx, params| {
                ctx.note_param("seen", true);
                if params.get_u64("size") == Some(2) && id == "t.fail" {
                    return Err(BenchError::failed("broken"));
                }
                if id == "t.panic" {
                    panic!("kaboom");
                }
                Ok(vec![higher("throughput", Unit::MBps, samples.clone())?])
            })
        }
    }

    fn record() -> RunRecord {
        RunRecord {
            profile: Profile::Tiny,
            ..RunRecord::new("test", "run", "0")
        }
    }

    fn config() -> RunnerConfig {
        RunnerConfig {
            settings: CtxSettings {
                threads: 1,
                ..CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir())
            },
            noise_threshold: 0.05,
            family_budgets: BTreeMap::new(),
            default_budget: Duration::from_millis(10),
            rounds: 1,
        }
    }

    #[derive(Default)]
    struct Recorder {
        events: Vec<String>,
    }
    impl Sink for Recorder {
        fn run_started(&mut self, _run: &RunRecord) -> Result<(), SinkError> {
            self.events.push("start".into());
            Ok(())
        }
        fn case_started(&mut self, i: usize, total: usize, id: &str, _p: &Params) {
            self.events.push(format!("case {i}/{total} {id}"));
        }
        fn round_finished(
            &mut self,
            _i: usize,
            _t: usize,
            round: u32,
            rounds: u32,
            r: &ResultRecord,
        ) {
            self.events
                .push(format!("round {round}/{rounds} {}", r.bench_id));
        }
        fn case_finished(
            &mut self,
            _i: usize,
            _t: usize,
            r: &ResultRecord,
        ) -> Result<(), SinkError> {
            self.events
                .push(format!("done {} {}", r.bench_id, r.status.label()));
            Ok(())
        }
        fn closing_findings(&mut self) -> Vec<Finding> {
            let done = self.events.iter().filter(|e| e.starts_with("done")).count();
            self.events.push("closing".into());
            vec![Finding::new(
                "t-seen",
                Severity::Info,
                format!("{done} cases seen"),
            )]
        }
        fn run_finished(&mut self, run: &RunRecord) -> Result<(), SinkError> {
            if run.findings.iter().any(|f| f.code == "t-seen") {
                self.events.push("finished with t-seen".into());
            }
            self.events.push(format!("end {}", run.status.as_str()));
            Ok(())
        }
    }

    #[test]
    fn statuses_noise_and_events() {
        let steady = fixed("t.steady", vec![100.0, 101.0, 99.0]);
        let noisy = fixed("t.noisy", vec![100.0, 150.0, 60.0]);
        let failing = fixed("t.fail", vec![1.0]);
        let panicking = fixed("t.panic", vec![1.0]);
        let missing = Scripted {
            requirements: vec![Requirement::program("sysgauge-absent-tool", "absent-pkg")],
            ..Scripted::new(
                "u.missing",
                Description::new("needs a missing program", Unit::MBps, Better::Higher),
                |_, _| panic!("must not run"),
            )
        };
        let benches: Vec<&dyn Benchmark> = vec![&steady, &noisy, &failing, &panicking, &missing];
        let clock = Arc::new(FakeClock::new(Duration::from_micros(1)));
        let runner = Runner::new(benches, config(), clock, CancelToken::new());
        assert_eq!(runner.planned_cases(), 9);
        let mut rec = Recorder::default();
        let done = runner.run(record(), &mut rec).unwrap();
        assert_eq!(done.status, RunStatus::Complete);
        assert_eq!(done.results.len(), 9);
        let r0 = &done.results[0];
        assert_eq!(r0.family, "t");
        assert_eq!(r0.workload_version, 3);
        assert_eq!(r0.params.get_bool("seen"), Some(true));
        assert!(r0.findings.is_empty());
        assert!(done.results[2].findings.iter().any(|f| f.code == NOISY));
        assert_eq!(done.results[4].status.label(), "ok");
        assert_eq!(
            done.results[5].status,
            Status::Failed {
                error: "broken".into()
            }
        );
        assert!(
            matches!(&done.results[6].status, Status::Failed { error } if error.contains("kaboom"))
        );
        match &done.results[8].status {
            Status::Skipped { reason, hint } => {
                assert!(reason.contains("sysgauge-absent-tool"));
                assert!(hint.as_deref().unwrap_or("").contains("absent-pkg"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rec.events.first().map(String::as_str), Some("start"));
        assert_eq!(rec.events.last().map(String::as_str), Some("end complete"));
        assert_eq!(
            rec.events.iter().filter(|e| e.starts_with("done")).count(),
            9
        );
        // A sink's closing findings are in the record it is finished with.
        let tail: Vec<&str> = rec
            .events
            .iter()
            .rev()
            .take(3)
            .map(String::as_str)
            .collect();
        assert_eq!(tail, ["end complete", "finished with t-seen", "closing"]);
        let seen = done.findings.iter().find(|f| f.code == "t-seen");
        assert_eq!(seen.map(|f| f.message.as_str()), Some("9 cases seen"));
    }

    #[test]
    fn only_the_headline_metric_makes_a_case_noisy() {
        let b = Scripted::new(
            "s.two",
            Description::new(
                "steady headline, noisy secondary metric",
                Unit::MBps,
                Better::Higher,
            ),
            |_, _| {
                Ok(vec![
                    higher("throughput", Unit::MBps, vec![100.0, 100.5, 99.5])?,
                    higher("sys_share", Unit::MBps, vec![1.0, 9.0, 0.1])?,
                ])
            },
        );
        let runner = Runner::new(
            vec![&b],
            config(),
            Arc::new(MonotonicClock::new()),
            CancelToken::new(),
        );
        let done = runner.run(record(), &mut Recorder::default()).unwrap();
        assert_eq!(done.results[0].metrics.len(), 2);
        assert!(done.results[0].findings.is_empty());
    }

    #[test]
    fn cancellation_marks_interrupted_and_keeps_finished() {
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let b = Scripted {
            cases: (0..4u64).map(|i| Params::new().with("i", i)).collect(),
            ..Scripted::new(
                "c.cancel",
                Description::new("cancels", Unit::MBps, Better::Higher),
                move |ctx, params| {
                    if params.get_u64("i") == Some(1) {
                        token.cancel();
                    }
                    let s = ctx.measure_rate(|n| Ok(n as f64))?;
                    Ok(vec![higher("rate", Unit::OpsPerSec, s)?])
                },
            )
        };
        let runner = Runner::new(vec![&b], config(), Arc::new(MonotonicClock::new()), cancel);
        let mut rec = Recorder::default();
        let done = runner.run(record(), &mut rec).unwrap();
        assert_eq!(done.status, RunStatus::Interrupted);
        assert_eq!(done.results.len(), 1);
        assert_eq!(
            rec.events.last().map(String::as_str),
            Some("end interrupted")
        );
    }

    struct FailingSink;
    impl Sink for FailingSink {
        fn case_finished(
            &mut self,
            _i: usize,
            _t: usize,
            _r: &ResultRecord,
        ) -> Result<(), SinkError> {
            Err("disk full".into())
        }
    }

    #[test]
    fn sink_error_stops_run() {
        let b = fixed("t.steady", vec![1.0]);
        let runner = Runner::new(
            vec![&b],
            config(),
            Arc::new(MonotonicClock::new()),
            CancelToken::new(),
        );
        let r = runner.run(record(), &mut FailingSink);
        assert!(r.is_err());
        assert_eq!(b.calls.load(Ordering::SeqCst), 1, "the run went on");
    }

    /// A case whose value (`levels`) and spread between repetitions
    /// (`spreads`, a share of the value) change from call (round) to call.
    fn jumping(id: &'static str, levels: &[f64], spreads: &[f64]) -> Scripted<'static> {
        let (levels, spreads) = (levels.to_vec(), spreads.to_vec());
        let calls = AtomicUsize::new(0);
        let description = Description::new("jumps between rounds", Unit::OpsPerSec, Better::Higher)
            .depends_on("a journal left behind by the previous round");
        Scripted::new(id, description, move |_, _| {
            let i = calls.fetch_add(1, Ordering::SeqCst);
            let level = levels[i % levels.len()];
            let spread = spreads[i % spreads.len()];
            let samples = vec![level * (1.0 - spread), level, level * (1.0 + spread)];
            Ok(vec![higher("rate", Unit::OpsPerSec, samples)?])
        })
    }

    /// A runner of `benches` in three rounds.
    fn in_three_rounds<'a>(benches: Vec<&'a dyn Benchmark>) -> Runner<'a> {
        Runner::new(
            benches,
            RunnerConfig {
                rounds: 3,
                ..config()
            },
            Arc::new(MonotonicClock::new()),
            CancelToken::new(),
        )
    }

    #[test]
    fn rounds_are_interleaved_merged_and_judged() {
        let jumps = jumping("j.create", &[2000.0, 76_000.0, 40_000.0], &[0.002]);
        let steady = jumping("k.steady", &[1000.0, 1003.0, 998.0], &[0.002]);
        let runner = in_three_rounds(vec![&jumps, &steady]);
        let mut rec = Recorder::default();
        let done = runner.run(record(), &mut rec).unwrap();
        // Round 1 of every case, then round 2 …; each case stored once.
        assert_eq!(
            rec.events,
            vec![
                "start",
                "case 0/6 j.create",
                "round 1/3 j.create",
                "case 1/6 k.steady",
                "round 1/3 k.steady",
                "case 2/6 j.create",
                "round 2/3 j.create",
                "case 3/6 k.steady",
                "round 2/3 k.steady",
                "case 4/6 j.create",
                "done j.create ok",
                "case 5/6 k.steady",
                "done k.steady ok",
                "closing",
                "finished with t-seen",
                "end complete",
            ]
        );
        assert_eq!(done.results.len(), 2);
        let (j, k) = (&done.results[0], &done.results[1]);
        // The value is the median of the rounds; each round stays in the details.
        assert_eq!(j.primary().unwrap().value(), 40_000.0);
        assert_eq!(
            j.details.get_str(crate::rounds::ROUND_VALUES),
            Some("2000 76000 40000")
        );
        let (between, within) = crate::rounds::spreads(j).unwrap();
        assert!(between > 0.5 && within < 0.01, "{between} {within}");
        let f = j
            .findings
            .iter()
            .find(|f| f.code == crate::rounds::UNREPEATABLE)
            .expect("the jumping case is flagged");
        assert!(f.message.contains("a journal left behind"), "{}", f.message);
        assert!(j.untrusted().is_some_and(|w| w.contains("does not repeat")));
        // The steady case: a small between-round spread, no finding.
        let (between, _) = crate::rounds::spreads(k).unwrap();
        assert!(between < 0.01, "{between}");
        assert!(k.findings.is_empty(), "{:?}", k.findings);
        assert!(k.untrusted().is_none());
        assert_eq!(k.primary().unwrap().samples, vec![1000.0, 1003.0, 998.0]);
    }

    /// With rounds, `noisy` says what the tables show, the median of the
    /// rounds' own spreads, not that one round was above the threshold.
    #[test]
    fn with_rounds_noise_is_judged_on_the_median_rounds_spread() {
        let one_noisy_round = jumping("s.one", &[1000.0], &[0.016, 0.06, 0.03]);
        let noisy = jumping("s.two", &[1000.0], &[0.07, 0.02, 0.08]);
        let runner = in_three_rounds(vec![&one_noisy_round, &noisy]);
        let done = runner.run(record(), &mut Recorder::default()).unwrap();
        let noise = |r: &ResultRecord| -> Vec<String> {
            r.findings
                .iter()
                .filter(|f| f.code == NOISY)
                .map(|f| f.message.clone())
                .collect()
        };
        assert!(
            noise(&done.results[0]).is_empty(),
            "{:?}",
            done.results[0].findings
        );
        assert_eq!(
            noise(&done.results[1]),
            ["s.two: rate varies by 7.0 % between repetitions (median of 3 rounds) (threshold 5 %)"]
        );
    }

    /// A monitor that finds every case it watches disturbed.
    struct AlwaysBusy;
    struct BusyWatch;
    impl CaseMonitor for AlwaysBusy {
        fn watch(&self, _family: &str) -> Box<dyn crate::monitor::CaseWatch> {
            Box::new(BusyWatch)
        }
    }
    impl crate::monitor::CaseWatch for BusyWatch {
        fn finish(self: Box<Self>, _case: &str) -> crate::monitor::Observed {
            crate::monitor::Observed {
                details: Params::new().with("other_cpus", "6.83"),
                findings: vec![Finding::new("t-busy", Severity::Info, "busy")],
                disturbed: vec!["other processes used 6.83 CPUs".into()],
            }
        }
    }

    #[test]
    fn a_computed_case_gets_no_telemetry() {
        let measured = fixed("t.steady", vec![1.0]);
        // A case computed from another's results.
        let derived = Scripted {
            derived_from: vec!["t.steady".into()],
            ..Scripted::new(
                "t.index",
                Description::new("computed from t.steady", Unit::Index, Better::Higher),
                |_, _| Ok(vec![higher("index", Unit::Index, vec![1000.0])?]),
            )
        };
        let runner = Runner::new(
            vec![&measured, &derived],
            config(),
            Arc::new(MonotonicClock::new()),
            CancelToken::new(),
        )
        .with_monitor(Arc::new(AlwaysBusy));
        let done = runner.run(record(), &mut Recorder::default()).unwrap();
        let (m, d) = (&done.results[0], &done.results[2]);
        assert_eq!(d.bench_id, "t.index");
        assert!(m.disturbed().is_some() && m.details.get_str("other_cpus").is_some());
        assert!(m.findings.iter().any(|f| f.code == "t-busy"));
        assert_eq!(d.disturbed(), None);
        assert_eq!(d.details.get_str("other_cpus"), None);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
    }

    #[test]
    fn a_family_seen_again_later_is_a_separate_session() {
        let a1 = fixed("a.first", vec![1.0]);
        let b = fixed("b.middle", vec![1.0]);
        let a2 = fixed("a.again", vec![1.0]);
        let runner = Runner::new(
            vec![&a1, &b, &a2],
            config(),
            Arc::new(MonotonicClock::new()),
            CancelToken::new(),
        );
        let plan = runner.plan();
        let families: Vec<&str> = plan.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(families, vec!["a", "b", "a"]);
        let mut rec = Recorder::default();
        let done = runner.run(record(), &mut rec).unwrap();
        let ids: Vec<&str> = done.results.iter().map(|r| r.bench_id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["a.first", "a.first", "b.middle", "b.middle", "a.again", "a.again"]
        );
    }
}
