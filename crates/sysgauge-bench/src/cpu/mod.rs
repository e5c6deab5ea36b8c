//! The `cpu` family: ten classic CPU kernels (numeric sort, string sort,
//! bitfield, FP emulation, Fourier, assignment, IDEA, Huffman, neural net,
//! LU decomposition) in iterations per second, on one thread, on all
//! threads and on a thread ladder with scaling efficiency, folded into
//! integer, floating-point and memory indexes against the reference machine.
//!
//! Shape. Each kernel is one benchmark whose cases differ only in `threads`;
//! cases run in ascending thread order, so the single-thread rate is known
//! (kept in a family-session fixture) when the multi-threaded cases compute
//! their scaling efficiency, rate(n) / (n × rate(1)) from the two medians.
//! With `--rounds` the stored rates are medians of the rounds, so the stored
//! efficiency is recomputed from them once the case's rounds are merged
//! (`settle`), and its finding judged on that number: one definition,
//! [`scaling_efficiency`], of the values shown. The three indexes are
//! benchmarks too, registered after the kernels: they measure nothing, they
//! read the single-thread rates of the same run from that fixture and
//! compare them with the embedded reference. As result records they are
//! stored, exported and compared like any other case.
//!
//! Timing is the kernels' own (see `timing`): passes are repeated until the
//! confidence interval of the mean is within 5 % or the case's budget is
//! spent, and the record says which.

pub mod index;
pub mod kernels;
pub mod nbench;
pub mod report;
pub mod timing;

use index::IndexBenchmark;
use kernels::{Group, KernelId};
use std::collections::BTreeMap;
use std::sync::Arc;
use sysgauge_core::record::{ResultRecord, Status};
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Finding, Metric, Params, Plan, Profile, RunCtx,
    Severity, Unit,
};
use sysgauge_family::family::one_per_kind;
use sysgauge_family::util::{metric, Count};
use timing::{measure_passes, PassPlan};

/// Finding code: the confidence target was not reached in the budget.
pub const CONFIDENCE: &str = "cpu-confidence";
/// Finding code: more threads stopped paying off.
pub const SCALING: &str = "cpu-scaling";
/// Scaling efficiency (percent, as shown: whole percent) below which the
/// `cpu-scaling` finding is given.
pub const SCALING_WARN_PERCENT: f64 = 75.0;

/// Scaling efficiency in percent: `rate` on `threads` threads against
/// `threads` × the single-thread rate `single`. The one definition the
/// stored metric, the table and the `cpu-scaling` finding use.
pub fn scaling_efficiency(rate: f64, threads: usize, single: f64) -> f64 {
    100.0 * rate / (threads as f64 * single)
}

/// Detail of a multi-threaded case: the logical CPUs it ran on.
const LOGICAL_CPUS: &str = "logical_cpus";

/// Fixture key of the single-thread rates measured in this family session.
const SINGLE_RATES: &str = "cpu.single-thread-rates";

/// Single-thread rate samples of the kernels measured so far in this session.
#[derive(Debug, Default)]
pub(crate) struct SingleThreadRates(pub BTreeMap<KernelId, Vec<f64>>);

/// Command-line overrides for the cpu family; `None`/`false` follow the profile.
#[derive(Debug, Clone, Default)]
pub struct CpuOptions {
    /// Exact thread counts to run (`all`: one per CPU, named `all`).
    pub threads: Option<Vec<Count>>,
    /// Run the whole ladder 1, 2, 4 … N whatever the profile.
    pub ladder: bool,
}

impl CpuOptions {
    /// The thread counts for a plan, ascending and without repeats, so the
    /// single-thread case runs first. By default one thread and all CPUs
    /// (`all`, whatever their number, so machines compare on it); the
    /// ladder adds the powers of two below the CPU count.
    pub fn thread_counts(&self, plan: &Plan) -> Vec<Count> {
        let mut v = match (&self.threads, self.ladder, plan.profile) {
            (Some(t), _, _) => t.clone(),
            (None, _, Profile::Tiny) if !self.ladder => vec![Count::N(1)],
            (None, true, _) => ladder(plan.threads),
            (None, false, _) => vec![Count::N(1), Count::AllCpus],
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// 1, 2, 4 … below `n`, then all CPUs.
pub fn ladder(n: usize) -> Vec<Count> {
    let mut v: Vec<Count> = std::iter::successors(Some(1usize), |&t| t.checked_mul(2))
        .take_while(|&t| t < n || t == 1)
        .map(Count::N)
        .collect();
    v.push(Count::AllCpus);
    v
}

/// One kernel as a benchmark.
pub struct KernelBenchmark {
    kernel: KernelId,
    options: Arc<CpuOptions>,
}

impl KernelBenchmark {
    pub fn new(kernel: KernelId, options: Arc<CpuOptions>) -> Self {
        KernelBenchmark { kernel, options }
    }
}

impl Benchmark for KernelBenchmark {
    fn id(&self) -> &str {
        self.kernel.id()
    }

    fn describe(&self) -> Description {
        Description::new(
            format!(
                "{} ({} index)",
                self.kernel.summary(),
                self.kernel.group().title()
            ),
            Unit::ItersPerSec,
            Better::Higher,
        )
        .version(kernels::WORKLOAD_VERSION)
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.options
            .thread_counts(plan)
            .into_iter()
            .map(|t| Params::new().with("threads", t))
            .collect()
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let threads = params
            .get_count("threads", ctx.threads())
            .filter(|&t| t >= 1)
            .ok_or_else(|| BenchError::failed("missing or zero 'threads' parameter"))?;
        let kernel = self.kernel;
        let plan = PassPlan::for_case(ctx);
        let clock = ctx.clock().clone();
        let cancel = ctx.cancel_token().clone();
        let timed = |pass: &mut dyn FnMut(u64) -> Result<f64, BenchError>| {
            measure_passes(clock.as_ref(), &cancel, &plan, pass)
        };
        let outcome = if threads == 1 {
            timing::single(kernel, timed)?
        } else {
            timing::team(kernel, threads, timed)?
        };

        ctx.note_detail("group", kernel.group().name());
        ctx.note_detail("passes", outcome.rates.len());
        ctx.note_detail("iterations_per_pass", outcome.iterations_per_pass);
        ctx.note_detail("confidence_reached", outcome.confident());
        ctx.note_detail("stop", outcome.stop.as_str());
        ctx.note_detail(
            "target_ci95_percent",
            format!("{:.1}", plan.target_ci * 100.0),
        );
        if let Some(ci) = outcome.ci95_relative {
            ctx.note_detail("ci95_percent", format!("{:.2}", ci * 100.0));
        }
        if threads > ctx.threads() {
            ctx.note_detail("oversubscribed", true);
        }
        if threads > 1 {
            // For the scaling finding, which `settle` may judge again.
            ctx.note_detail(LOGICAL_CPUS, ctx.threads());
        }
        if let Some(libm) = libm_detail(kernel) {
            ctx.note_detail("libm", libm);
        }
        if !outcome.confident() {
            ctx.finding(confidence_finding(kernel, params, &outcome, &plan));
        }

        let mut metrics = vec![metric(
            "rate",
            Unit::ItersPerSec,
            Better::Higher,
            outcome.rates.clone(),
        )?];
        if threads == 1 {
            let store = ctx.fixture(SINGLE_RATES, |_| Ok(SingleThreadRates::default()))?;
            store.0.insert(kernel, outcome.rates);
        } else if let Some(single) = single_rate(ctx, kernel)? {
            let eff = scaling_efficiency(metrics[0].value(), threads, single);
            if let Some(f) = scaling_judged(kernel, threads, eff, ctx.threads()) {
                ctx.finding(f);
            }
            metrics.push(efficiency_metric(eff)?);
        }
        Ok(metrics)
    }

    /// With rounds, the stored rates are the medians of the rounds, and the
    /// details those of the median round: the efficiency is recomputed from
    /// the stored rates (the single-thread case's is in `earlier`, which the
    /// ascending thread order guarantees), its finding judged on it, and a
    /// confidence finding kept only when the median round's details say the
    /// target was missed (another round's would contradict the table's `*`).
    /// With one round this changes nothing.
    fn settle(&self, result: &mut ResultRecord, earlier: &[ResultRecord]) {
        if !matches!(result.status, Status::Ok) {
            return;
        }
        if result.details.get_bool("confidence_reached") != Some(false) {
            result.findings.retain(|f| f.code != CONFIDENCE);
        }
        let Some(threads) = result.count_param("threads").filter(|&t| t > 1) else {
            return;
        };
        let threads = usize::try_from(threads).unwrap_or(usize::MAX);
        let rate = |r: &ResultRecord| {
            r.metrics
                .iter()
                .find(|m| m.name == "rate")
                .map(Metric::value)
        };
        let single_params = Params::new().with("threads", 1u64);
        let single = earlier
            .iter()
            .filter(|r| r.bench_id == result.bench_id && r.params == single_params)
            .filter(|r| matches!(r.status, Status::Ok))
            .find_map(rate)
            .filter(|v| v.is_finite() && *v > 0.0);
        let (Some(single), Some(rate)) = (single, rate(result)) else {
            return;
        };
        let Ok(m) = efficiency_metric(scaling_efficiency(rate, threads, single)) else {
            return;
        };
        let cpus = result
            .details
            .get_u64(LOGICAL_CPUS)
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        result.findings.retain(|f| f.code != SCALING);
        result
            .findings
            .extend(scaling_judged(self.kernel, threads, m.value(), cpus));
        result.metrics.retain(|m| m.name != "scaling_efficiency");
        result.metrics.push(m);
    }
}

/// The stored efficiency: a ratio of two cases' medians, so one value (its
/// spread is the spread of the rates, which the rate metrics carry).
fn efficiency_metric(eff: f64) -> Result<Metric, BenchError> {
    metric(
        "scaling_efficiency",
        Unit::Percent,
        Better::Higher,
        vec![eff],
    )
}

/// The `cpu-scaling` finding for efficiency `eff`, if it is below the
/// threshold as shown (whole percent, so "75 %" is never called below 75).
fn scaling_judged(kernel: KernelId, threads: usize, eff: f64, cpus: usize) -> Option<Finding> {
    (eff.round() < SCALING_WARN_PERCENT).then(|| scaling_finding(kernel, threads, eff, cpus))
}

/// The median single-thread rate of `kernel` measured earlier in this session.
fn single_rate(ctx: &mut RunCtx, kernel: KernelId) -> Result<Option<f64>, BenchError> {
    let store = ctx.fixture(SINGLE_RATES, |_| Ok(SingleThreadRates::default()))?;
    Ok(store
        .0
        .get(&kernel)
        .map(|s| sysgauge_stats::median(s))
        .filter(|m| m.is_finite() && *m > 0.0))
}

/// Names the case as every other finding does (`threads=all`, not the
/// count it ran with).
fn confidence_finding(
    kernel: KernelId,
    params: &Params,
    outcome: &timing::PassOutcome,
    plan: &PassPlan,
) -> Finding {
    let ci = outcome
        .ci95_relative
        .map_or_else(|| "unknown".to_string(), |c| format!("±{:.1} %", c * 100.0));
    Finding::new(
        CONFIDENCE,
        Severity::Warning,
        format!(
            "{} ({params}): the 95 % confidence interval of the mean is {ci} after {} passes, not within the ±{:.0} % target (stopped: {})",
            kernel.id(),
            outcome.rates.len(),
            plan.target_ci * 100.0,
            outcome.stop.as_str()
        ),
    )
    .with_remedy(
        "stop other work on the machine and run again, or give the kernels more time with --profile standard",
    )
}

fn scaling_finding(kernel: KernelId, threads: usize, eff: f64, cpus: usize) -> Finding {
    Finding::new(
        SCALING,
        Severity::Info,
        format!(
            "{}: {threads} threads reach {eff:.0} % of linear scaling ({:.2}x the single-thread rate) on {cpus} logical CPUs",
            kernel.id(),
            eff / 100.0 * threads as f64
        ),
    )
    .with_remedy(
        "expected when threads share physical cores (SMT), memory bandwidth, or a busy machine; `sysgauge cpu --ladder` shows where adding threads stops helping",
    )
}

/// The maths library behind `pow`, `sin`, `cos` and `exp`, for the kernels
/// whose speed depends on it (its version changes their numbers).
fn libm_detail(kernel: KernelId) -> Option<String> {
    if !matches!(kernel, KernelId::Fourier | KernelId::NeuralNet) {
        return None;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version takes no arguments and returns a
        // pointer to a static NUL-terminated string owned by glibc.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        Some(format!("glibc {}", version.to_string_lossy()))
    }
    #[cfg(all(target_os = "linux", target_env = "musl"))]
    {
        Some("musl".to_string())
    }
    #[cfg(not(all(target_os = "linux", any(target_env = "gnu", target_env = "musl"))))]
    {
        None
    }
}

sysgauge_family::register_family! {
    name: "cpu", options: CpuOptions, in_default_run: true,
    cpu_bound: true, summary_first: true,
    budget_seconds: [0.3, 8.0, 60.0, 180.0], report: Some(report::cpu_table),
    summary: "classic CPU kernels (numeric sort ... LU decomposition) in iterations/s, thread scaling, integer/float/memory indexes",
}

/// Every cpu benchmark, in display order: the ten kernels, then the three
/// indexes (which need the kernels' single-thread results of the same run).
pub fn benchmarks(options: &Arc<CpuOptions>) -> Vec<Box<dyn Benchmark>> {
    let mut v = one_per_kind(&KernelId::ALL, |k| KernelBenchmark::new(k, options.clone()));
    v.extend(one_per_kind(&Group::ALL, |g| {
        IndexBenchmark::new(g, options.clone())
    }));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan(profile: Profile, threads: usize) -> Plan {
        Plan { profile, threads }
    }

    #[test]
    fn ladders() {
        let n = Count::N;
        let all = Count::AllCpus;
        assert_eq!(ladder(1), vec![n(1), all]);
        assert_eq!(ladder(2), vec![n(1), all]);
        assert_eq!(ladder(6), vec![n(1), n(2), n(4), all]);
        assert_eq!(ladder(8), vec![n(1), n(2), n(4), all]);
        assert_eq!(ladder(0), vec![n(1), all]);
    }

    #[test]
    fn thread_counts_follow_profile_and_options() {
        let o = CpuOptions::default();
        let n = Count::N;
        let all = Count::AllCpus;
        assert_eq!(o.thread_counts(&plan(Profile::Tiny, 8)), vec![n(1)]);
        assert_eq!(o.thread_counts(&plan(Profile::Quick, 8)), vec![n(1), all]);
        assert_eq!(o.thread_counts(&plan(Profile::Quick, 1)), vec![n(1), all]);
        assert_eq!(
            o.thread_counts(&plan(Profile::Standard, 6)),
            o.thread_counts(&plan(Profile::Standard, 2)),
            "the default cases do not depend on the CPU count"
        );
        let o = CpuOptions {
            ladder: true,
            ..Default::default()
        };
        assert_eq!(
            o.thread_counts(&plan(Profile::Quick, 4)),
            vec![n(1), n(2), all]
        );
        assert_eq!(o.thread_counts(&plan(Profile::Quick, 6)).len(), 4);
        let o = CpuOptions {
            threads: Some(vec![n(4), n(1), n(4)]),
            ladder: true,
        };
        assert_eq!(o.thread_counts(&plan(Profile::Quick, 2)), vec![n(1), n(4)]);
        // An explicit `all` is the default's `all`, not this machine's count.
        let o = CpuOptions {
            threads: Some(vec![n(1), all]),
            ladder: false,
        };
        assert_eq!(
            o.thread_counts(&plan(Profile::Quick, 2)),
            CpuOptions::default().thread_counts(&plan(Profile::Quick, 2))
        );
    }

    #[test]
    fn single_then_parallel_with_efficiency() {
        let b = KernelBenchmark::new(KernelId::Idea, Arc::new(CpuOptions::default()));
        let mut c = sysgauge_family::util::tiny_ctx(2);
        c.begin_case(Duration::from_millis(30));
        let m = b.run(&mut c, &Params::new().with("threads", 1u64)).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].name, "rate");
        assert_eq!(m[0].unit, Unit::ItersPerSec);
        assert!(m[0].samples.len() >= 3 && m[0].value() > 0.0);
        let out = c.take_case_output();
        assert_eq!(out.details.get_str("group"), Some("integer"));
        assert!(out.details.get_bool("confidence_reached").is_some());
        assert!(out.details.get_u64("passes").unwrap_or(0) >= 3);
        // Confident or not, the record says so, and a finding goes with "not".
        let reached = out.details.get_bool("confidence_reached") == Some(true);
        assert_eq!(reached, !out.findings.iter().any(|f| f.code == CONFIDENCE));

        c.begin_case(Duration::from_millis(30));
        let m = b.run(&mut c, &Params::new().with("threads", 2u64)).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].name, "scaling_efficiency");
        assert_eq!(m[1].unit, Unit::Percent);
        // Only its presence and sign: its size is a timing, and on a loaded
        // machine the single-thread pass can be slowed far more than this.
        assert!(
            m[1].value().is_finite() && m[1].value() > 0.0,
            "{}",
            m[1].value()
        );
    }

    #[test]
    fn parallel_without_single_has_no_efficiency() {
        let b = KernelBenchmark::new(KernelId::LuDecomposition, Arc::new(CpuOptions::default()));
        let mut c = sysgauge_family::util::tiny_ctx(2);
        c.begin_case(Duration::from_millis(20));
        let m = b.run(&mut c, &Params::new().with("threads", 3u64)).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(
            c.take_case_output().details.get_bool("oversubscribed"),
            Some(true)
        );
    }

    #[test]
    fn rejects_bad_params() {
        let b = KernelBenchmark::new(KernelId::Idea, Arc::new(CpuOptions::default()));
        let mut c = sysgauge_family::util::tiny_ctx(1);
        assert!(b.run(&mut c, &Params::new()).is_err());
        assert!(b.run(&mut c, &Params::new().with("threads", 0u64)).is_err());
    }

    #[test]
    fn findings_text() {
        let f = scaling_finding(KernelId::Fourier, 4, 60.0, 4);
        assert!(f.message.contains("2.40x"), "{}", f.message);
        let out = timing::PassOutcome {
            rates: vec![1.0, 2.0, 3.0],
            iterations_per_pass: 1,
            ci95_relative: Some(0.5),
            stop: timing::Stop::Budget,
        };
        let plan = PassPlan {
            min_passes: 3,
            min_time: Duration::ZERO,
            max_passes: 3,
            warmup_passes: 1,
            target_ci: 0.05,
            pass_target: Duration::from_millis(1),
            budget: Duration::from_millis(3),
        };
        let all = Params::new().with("threads", "all");
        let f = confidence_finding(KernelId::Idea, &all, &out, &plan);
        assert!(f.message.contains("±50.0 %") && f.message.contains("±5 %"));
        assert!(
            f.message.starts_with("cpu.idea (threads=all):"),
            "{}",
            f.message
        );
        assert_eq!(f.severity, Severity::Warning);
    }

    /// The messages of `r`'s findings with `code`.
    fn messages<'a>(r: &'a ResultRecord, code: &str) -> Vec<&'a str> {
        r.findings
            .iter()
            .filter(|f| f.code == code)
            .map(|f| f.message.as_str())
            .collect()
    }

    /// One round of `cpu.huffman` as the runner stores it: `rate` (one
    /// sample), and for all threads the efficiency against that round's
    /// own single-thread rate, with the findings that round gave.
    fn huffman_round(all: bool, rate: f64, single: f64, confident: bool) -> ResultRecord {
        let params = if all {
            Params::new().with("threads", "all")
        } else {
            Params::new().with("threads", 1u64)
        };
        let mut details = Params::new().with("confidence_reached", confident);
        let mut metrics = vec![
            Metric::new("rate", Unit::ItersPerSec, Better::Higher, vec![rate])
                .unwrap_or_else(|| panic!("rate")),
        ];
        let mut findings = Vec::new();
        if all {
            details.insert("threads", 2u64);
            details.insert(LOGICAL_CPUS, 2u64);
            let eff = scaling_efficiency(rate, 2, single);
            metrics.push(efficiency_metric(eff).unwrap_or_else(|_| panic!("eff")));
            findings.extend(scaling_judged(KernelId::Huffman, 2, eff, 2));
        }
        if !confident {
            findings.push(Finding::new(
                CONFIDENCE,
                Severity::Warning,
                format!("cpu.huffman ({params}): ±10.1 % after 11 passes (round of {rate})"),
            ));
        }
        ResultRecord {
            family: "cpu".into(),
            details,
            findings,
            ..ResultRecord::new("cpu.huffman", params, Status::Ok, metrics)
        }
    }

    /// The acceptance test's run 27: three rounds whose per-round
    /// efficiencies (52.5, 31.2, 51.8 %) have a median (52 %) that is not
    /// the efficiency of the stored rates, and a finding from round 2 alone.
    #[test]
    fn with_rounds_efficiency_and_findings_are_those_of_the_stored_values() {
        let b = KernelBenchmark::new(KernelId::Huffman, Arc::new(CpuOptions::default()));
        let singles = [18618.0, 19650.3, 10104.2];
        let alls = [19555.5, 12243.0, 10469.8];
        // The median round of the single-thread case (round 1) reached
        // the confidence target; round 2 did not.
        let one = sysgauge_core::rounds::merge(
            singles
                .iter()
                .enumerate()
                .map(|(i, &r)| huffman_round(false, r, r, i != 1))
                .collect(),
            None,
        )
        .unwrap();
        let mut one_settled = one.clone();
        b.settle(&mut one_settled, &[]);
        assert_eq!(one_settled.metrics[0].value(), 18618.0);
        assert!(
            !one_settled.findings.iter().any(|f| f.code == CONFIDENCE),
            "the table shows no * for it: {:?}",
            one_settled.findings
        );
        // The median round of the all-threads case (round 2) did not.
        let mut all = sysgauge_core::rounds::merge(
            alls.iter()
                .zip(singles)
                .enumerate()
                .map(|(i, (&r, s))| huffman_round(true, r, s, i != 1))
                .collect(),
            None,
        )
        .unwrap();
        b.settle(&mut all, std::slice::from_ref(&one_settled));
        let rate = all.metrics[0].value();
        assert_eq!(rate, 12243.0);
        let eff: Vec<f64> = all
            .metrics
            .iter()
            .filter(|m| m.name == "scaling_efficiency")
            .map(Metric::value)
            .collect();
        let want = 100.0 * 12243.0 / (2.0 * 18618.0);
        assert_eq!(eff.len(), 1);
        assert!((eff[0] - want).abs() < 1e-9, "{eff:?} against {want}");
        assert_eq!(
            messages(&all, SCALING),
            ["cpu.huffman: 2 threads reach 33 % of linear scaling (0.66x the single-thread rate) on 2 logical CPUs"]
        );
        assert_eq!(
            messages(&all, CONFIDENCE),
            ["cpu.huffman (threads=all): ±10.1 % after 11 passes (round of 12243) (round 2 of 3)"]
        );
        // The table shows the same number.
        let run = sysgauge_core::record::RunRecord {
            results: vec![one_settled, all],
            ..sysgauge_core::record::RunRecord::new("r", "cpu", "0")
        };
        let table = report::cpu_table(&run, sysgauge_report::table::TableFormat::Text);
        let row = table
            .lines()
            .find(|l| l.starts_with("huffman"))
            .unwrap_or("");
        assert!(row.ends_with("33 %"), "{table}");
    }

    #[test]
    fn an_efficiency_shown_as_75_is_not_called_below_75() {
        assert!(scaling_judged(KernelId::Idea, 2, 74.6, 2).is_none());
        assert!(scaling_judged(KernelId::Idea, 2, 74.4, 2).is_some());
    }

    #[test]
    fn libm_is_named_for_libm_kernels_only() {
        assert!(libm_detail(KernelId::Idea).is_none());
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            let l = libm_detail(KernelId::Fourier).unwrap_or_default();
            assert!(l.starts_with("glibc 2."), "{l}");
        }
    }
}
