//! The fastest verified implementation on this CPU.
//!
//! Where sysgauge carries more than one implementation of a digest or a
//! cipher (its own kernels, aws-lc, RustCrypto, blake2b_simd, …), which one
//! is fastest depends on the microarchitecture: a kernel tuned on one CPU
//! can lose on the next, and then a figure says more about sysgauge's code
//! than about the machine. So before a case is timed, each candidate this
//! CPU can run passes its known-answer check, then a short trial times the
//! survivors interleaved (round after round, each a few milliseconds, on one
//! thread, on the case's block size, each rate per second of the thread's
//! CPU time) and the fastest by its best round is used: other processes
//! only ever slow a round down, so on a shared machine the best of several
//! short rounds says more about the code than their median, and
//! interleaving (each round starting with another candidate) gives every
//! candidate the same chances.
//! The trial's outcome is cached per process, per algorithm and block size,
//! so `run` and `crypto` do not redo it for every case.
//!
//! The choice goes into the result's *details*, never its params: a
//! benchmark id and its params mean the same workload (the same bytes
//! hashed or encrypted) on every machine, whichever code did the work.
//!
//! `--implementation NAME` (or `ALG=NAME`) forces a candidate: see
//! [`Forced`]. This module knows nothing about digests or ciphers; the hash
//! and crypto families describe their candidates through [`Candidates`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use sysgauge_core::{BenchError, RunCtx, Selector};
use thiserror::Error;

/// One algorithm's implementations, as the trial sees them.
pub trait Candidates {
    /// The benchmark id (`hash.sha512`); the cache key with the block size.
    fn algorithm_id(&self) -> &'static str;
    /// The candidates this CPU can run, in order of preference (the first
    /// is used when the trial is a tie and by code that does not choose).
    fn names(&self) -> Vec<&'static str>;
    /// Every candidate's name, also those this CPU cannot run (for help and
    /// error messages).
    fn all_names(&self) -> Vec<&'static str> {
        self.names()
    }
    /// Known answers for `name`, at `block` bytes where the check depends
    /// on a length (a round trip, agreement with an independent
    /// implementation).
    fn check(&self, name: &'static str, block: usize) -> Result<(), String>;
    /// A worker that processes one `block`-byte buffer per call with `name`,
    /// set up (keyed, buffer allocated and touched) before it is returned.
    fn worker(&self, name: &'static str, block: usize) -> Result<Worker, String>;
    /// What one worker call counts as in the trial's figures: `block`
    /// bytes (MB/s, digests and ciphers) or one operation (op/s, the
    /// public-key cases).
    fn trial_unit(&self) -> TrialUnit {
        TrialUnit::MBps
    }
    /// Why `name` does only part of the case's work (a library that
    /// verifies but cannot sign), or `None` if it does all of it. A partial
    /// candidate is timed only when no complete one passes its check: its
    /// rate would count lighter operations, and the case would lose the
    /// figures it cannot make. It can still be forced.
    fn partial(&self, _name: &'static str) -> Option<String> {
        None
    }
}

/// The unit of the trial's rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialUnit {
    /// Decimal MB per second of CPU time (a call processes `block` bytes).
    MBps,
    /// Calls per second of CPU time (a call is one operation).
    OpsPerSec,
}

impl TrialUnit {
    fn label(self) -> &'static str {
        match self {
            TrialUnit::MBps => "MB/s",
            TrialUnit::OpsPerSec => "op/s",
        }
    }

    /// What one call of a worker on `block` bytes adds to the rate.
    fn per_call(self, block: usize) -> f64 {
        match self {
            TrialUnit::MBps => block as f64 / 1e6,
            TrialUnit::OpsPerSec => 1.0,
        }
    }
}

/// Processes one buffer per call; an error ends the candidate's trial.
pub type Worker = Box<dyn FnMut() -> Result<(), String>>;

/// How the implementation of a case was chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// The only candidate that this CPU runs and that passed its check.
    Only,
    /// Named with `--implementation`.
    Forced,
    /// The fastest in the trial: per candidate, its best round (in the
    /// choice's `unit`).
    Trial(Vec<(&'static str, f64)>),
}

/// The implementation a case runs, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub name: &'static str,
    pub how: How,
    /// Candidates left out because their known-answer check failed, with
    /// the failure (or because the trial could not run them).
    pub excluded: Vec<(&'static str, String)>,
    /// The unit of the trial's rates.
    pub unit: TrialUnit,
}

/// Detail keys (the result's details, not its params).
pub const DETAIL_IMPLEMENTATION: &str = "implementation";
pub const DETAIL_CHOICE: &str = "implementation_choice";
pub const DETAIL_TRIAL: &str = "implementation_trial";
pub const DETAIL_EXCLUDED: &str = "implementation_excluded";

impl Choice {
    /// Record the choice in the case's details, with what is known of the
    /// chosen code against the best reference on this CPU (not for a
    /// forced one: the known ratios describe the fastest code, not any).
    pub fn note(&self, ctx: &mut RunCtx, bench_id: &str, block: Option<u64>) {
        ctx.note_detail(DETAIL_IMPLEMENTATION, self.name);
        if !matches!(self.how, How::Forced) {
            crate::known_ratios::note(ctx, bench_id, block, self.name);
        }
        let how = match &self.how {
            How::Only => "the only candidate that passed its check here".to_string(),
            How::Forced => "forced with --implementation".to_string(),
            How::Trial(t) => format!("fastest of {} in a trial on this CPU", t.len()),
        };
        ctx.note_detail(DETAIL_CHOICE, how);
        if let How::Trial(t) = &self.how {
            let list: Vec<String> = t.iter().map(|(n, mbps)| format!("{n} {mbps:.0}")).collect();
            ctx.note_detail(
                DETAIL_TRIAL,
                format!("{} {}", list.join(", "), self.unit.label()),
            );
        }
        if !self.excluded.is_empty() {
            let list: Vec<String> = self
                .excluded
                .iter()
                .map(|(n, why)| format!("{n}: {why}"))
                .collect();
            ctx.note_detail(DETAIL_EXCLUDED, list.join("; "));
        }
    }
}

/// Why no implementation could be chosen.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ChoiceError {
    #[error("{algorithm}: implementation '{name}' is not one of its own; it has {}", list(.valid))]
    NotACandidate {
        algorithm: String,
        name: String,
        valid: Vec<&'static str>,
    },
    #[error("{algorithm}: implementation '{name}' cannot run on this CPU; here it has {}", list(.valid))]
    NotOnThisCpu {
        algorithm: String,
        name: String,
        valid: Vec<&'static str>,
    },
    #[error("{algorithm}: implementation '{name}' failed its known-answer check: {why}")]
    ForcedFailed {
        algorithm: String,
        name: &'static str,
        why: String,
    },
    #[error("{algorithm}: no implementation passed its known-answer check ({})", list_excluded(.excluded))]
    NoneVerified {
        algorithm: String,
        excluded: Vec<(&'static str, String)>,
    },
}

fn list(v: &[&'static str]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

fn list_excluded(v: &[(&'static str, String)]) -> String {
    v.iter()
        .map(|(n, w)| format!("{n}: {w}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `--implementation` as given: `NAME` (every selected algorithm that has
/// a candidate of that name uses it) or `ALG=NAME` (that algorithm uses it,
/// or the command stops with an error). Rules for one algorithm win over
/// a bare name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forced {
    rules: Vec<(Option<Selector>, String)>,
}

/// A `--implementation` rule that names no known implementation.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("--implementation {given}: {why}")]
pub struct ForcedParseError {
    pub given: String,
    pub why: String,
}

impl Forced {
    /// Parse the rules (each `NAME` or `ALG=NAME`).
    pub fn parse(raw: &[String]) -> Result<Forced, ForcedParseError> {
        let mut rules = Vec::new();
        for r in raw {
            let err = |why: &str| ForcedParseError {
                given: r.clone(),
                why: why.to_string(),
            };
            let (alg, name) = match r.split_once('=') {
                Some((a, n)) => {
                    let sel: Selector = a
                        .trim()
                        .parse()
                        .map_err(|e| err(&format!("'{a}' is not an algorithm name ({e})")))?;
                    (Some(sel), n.trim())
                }
                None => (None, r.trim()),
            };
            if name.is_empty() {
                return Err(err("the implementation name is empty"));
            }
            rules.push((alg, name.to_string()));
        }
        Ok(Forced { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, for validation: (algorithm selector if any, name).
    pub fn rules(&self) -> impl Iterator<Item = (Option<&Selector>, &str)> {
        self.rules.iter().map(|(a, n)| (a.as_ref(), n.as_str()))
    }

    /// The name forced for benchmark `id` with candidates `names`: a rule
    /// naming the algorithm itself (`sha512=NAME`, `hash.sha512=NAME`) is
    /// strict, an error if it has no such candidate on this CPU; a bare
    /// name, or a rule for its family (`hash=NAME`), applies where the
    /// algorithm has that candidate. `None` if nothing applies.
    pub fn for_algorithm(
        &self,
        id: &str,
        names: &[&'static str],
        all: &[&'static str],
    ) -> Result<Option<&'static str>, ChoiceError> {
        let pick = |name: &str| names.iter().copied().find(|n| *n == name);
        let names_it = |a: &Selector| {
            let e = a.as_str();
            e == id || id.split_once('.').is_some_and(|(_, rest)| rest == e)
        };
        for (alg, name) in &self.rules {
            if alg.as_ref().is_some_and(names_it) {
                return match pick(name) {
                    Some(n) => Ok(Some(n)),
                    None if all.contains(&name.as_str()) => Err(ChoiceError::NotOnThisCpu {
                        algorithm: id.to_string(),
                        name: name.clone(),
                        valid: names.to_vec(),
                    }),
                    None => Err(ChoiceError::NotACandidate {
                        algorithm: id.to_string(),
                        name: name.clone(),
                        valid: names.to_vec(),
                    }),
                };
            }
        }
        Ok(self
            .rules
            .iter()
            .filter(|(alg, _)| alg.as_ref().is_none_or(|a| a.matches(id)))
            .find_map(|(_, name)| pick(name)))
    }

    /// Whether a rule names `id` itself (not only its family).
    pub fn names_algorithm(&self, id: &str) -> bool {
        self.rules.iter().any(|(a, _)| {
            a.as_ref().is_some_and(|a| {
                let e = a.as_str();
                e == id || id.split_once('.').is_some_and(|(_, rest)| rest == e)
            })
        })
    }
}

/// Check `--implementation` before anything runs: every name must be an
/// implementation of one of `algorithms` (all that have candidates), a rule
/// naming an algorithm must name one it runs on this CPU, and a bare name
/// (or a family rule) must apply to at least one algorithm `selected`
/// (by id) has. The error says which names there are.
pub fn validate(
    forced: &Forced,
    algorithms: &[Box<dyn Candidates>],
    selected: &dyn Fn(&str) -> bool,
) -> Result<(), String> {
    let mut known: Vec<&'static str> = algorithms.iter().flat_map(|a| a.all_names()).collect();
    known.sort_unstable();
    known.dedup();
    for (alg, name) in forced.rules() {
        if !known.contains(&name) {
            return Err(format!(
                "--implementation: '{name}' is not an implementation sysgauge has; the names are {} (`sysgauge list --implementations` shows them per algorithm)",
                known.join(", ")
            ));
        }
        let strict = |a: &Selector, id: &str| {
            let e = a.as_str();
            e == id || id.split_once('.').is_some_and(|(_, rest)| rest == e)
        };
        if let Some(a) = alg.filter(|a| algorithms.iter().any(|c| strict(a, c.algorithm_id()))) {
            let c = algorithms
                .iter()
                .find(|c| strict(a, c.algorithm_id()))
                .ok_or_else(|| format!("--implementation: no algorithm '{a}'"))?;
            forced
                .for_algorithm(c.algorithm_id(), &c.names(), &c.all_names())
                .map_err(|e| format!("--implementation: {e}"))?;
            continue;
        }
        if let Some(a) = alg {
            if !algorithms.iter().any(|c| a.matches(c.algorithm_id())) {
                return Err(format!(
                    "--implementation {a}={name}: '{a}' names no hash, cipher or public-key algorithm with implementations to choose from"
                ));
            }
        }
        let applies = |c: &dyn Candidates| {
            let id = c.algorithm_id();
            selected(id) && alg.is_none_or(|a| a.matches(id))
        };
        let applying: Vec<&dyn Candidates> = algorithms
            .iter()
            .map(|c| c.as_ref())
            .filter(|c| applies(*c))
            .collect();
        if !applying.iter().any(|c| c.names().contains(&name)) {
            let mut here: Vec<&'static str> = applying.iter().flat_map(|c| c.names()).collect();
            here.sort_unstable();
            here.dedup();
            return Err(format!(
                "--implementation: no selected algorithm has '{name}' on this CPU; they have {}",
                list(&here)
            ));
        }
    }
    Ok(())
}

/// How long the trial runs: `rounds` rounds, each giving every candidate
/// `slice` of work, after a short warm-up of each.
#[derive(Debug, Clone, Copy)]
pub struct TrialPlan {
    pub rounds: usize,
    pub slice: Duration,
}

impl TrialPlan {
    /// Seven rounds of 4 ms: about 30 ms per candidate, short beside a
    /// case; rounds shorter than a scheduler time slice, so that some of
    /// them run undisturbed on a busy machine.
    pub const DEFAULT: TrialPlan = TrialPlan {
        rounds: 7,
        slice: Duration::from_millis(4),
    };
}

/// The implementation a case of the hash or crypto family runs at `block`
/// bytes: [`ChoiceCache::choose`] with the process's cache and the default
/// trial; a choice that cannot be made fails the case.
pub fn choose_for_case(
    alg: &dyn Candidates,
    block: usize,
    forced: &Forced,
) -> Result<Arc<Choice>, BenchError> {
    ChoiceCache::global()
        .choose(alg, block, forced, TrialPlan::DEFAULT)
        .map_err(|e| BenchError::failed(e.to_string()))
}

/// Trial outcomes by (algorithm id, block size). One per process
/// ([`ChoiceCache::global`]); tests make their own.
#[derive(Default)]
pub struct ChoiceCache {
    done: Mutex<HashMap<(&'static str, usize), Arc<Choice>>>,
}

impl ChoiceCache {
    pub fn global() -> &'static ChoiceCache {
        static CACHE: OnceLock<ChoiceCache> = OnceLock::new();
        CACHE.get_or_init(ChoiceCache::default)
    }

    /// The implementation for `alg` at `block` bytes: the forced one (after
    /// its check), else the cached trial's winner, else a new trial.
    pub fn choose(
        &self,
        alg: &dyn Candidates,
        block: usize,
        forced: &Forced,
        plan: TrialPlan,
    ) -> Result<Arc<Choice>, ChoiceError> {
        let names = alg.names();
        let id = alg.algorithm_id();
        if let Some(name) = forced.for_algorithm(id, &names, &alg.all_names())? {
            alg.check(name, block)
                .map_err(|why| ChoiceError::ForcedFailed {
                    algorithm: id.to_string(),
                    name,
                    why,
                })?;
            return Ok(Arc::new(Choice {
                name,
                how: How::Forced,
                excluded: Vec::new(),
                unit: alg.trial_unit(),
            }));
        }
        let key = (id, block);
        if let Some(c) = self.done.lock().ok().and_then(|d| d.get(&key).cloned()) {
            return Ok(c);
        }
        let choice = Arc::new(trial(alg, &names, block, plan)?);
        if let Ok(mut d) = self.done.lock() {
            d.insert(key, choice.clone());
        }
        Ok(choice)
    }
}

/// Check every candidate, then time the survivors and pick the fastest.
fn trial(
    alg: &dyn Candidates,
    names: &[&'static str],
    block: usize,
    plan: TrialPlan,
) -> Result<Choice, ChoiceError> {
    let mut excluded = Vec::new();
    let mut verified = Vec::new();
    for &n in names {
        match alg.check(n, block) {
            Ok(()) => verified.push(n),
            Err(why) => excluded.push((n, why)),
        }
    }
    if verified.iter().any(|&n| alg.partial(n).is_none()) {
        verified.retain(|&n| match alg.partial(n) {
            Some(why) => {
                excluded.push((n, why));
                false
            }
            None => true,
        });
    }
    if verified.len() <= 1 {
        return match verified.first() {
            Some(&name) => Ok(Choice {
                name,
                how: How::Only,
                excluded,
                unit: alg.trial_unit(),
            }),
            None => Err(ChoiceError::NoneVerified {
                algorithm: alg.algorithm_id().to_string(),
                excluded,
            }),
        };
    }
    let mut workers: Vec<(&'static str, Worker, Vec<f64>)> = Vec::new();
    for n in verified {
        match alg.worker(n, block) {
            Ok(w) => workers.push((n, w, Vec::new())),
            Err(why) => excluded.push((n, why)),
        }
    }
    // A warm-up of each (caches, clocks, lazily resolved dispatch), then
    // interleaved rounds, so a change of load hits every candidate alike.
    for round in 0..=plan.rounds {
        let slice = if round == 0 {
            plan.slice / 4
        } else {
            plan.slice
        };
        // Each round starts with another candidate, so none always follows
        // the same one.
        let n = workers.len();
        workers.rotate_left(round % n.max(1));
        for (name, w, rates) in workers.iter_mut() {
            match time_slice(w, alg.trial_unit().per_call(block), slice) {
                Ok(mbps) if round > 0 => rates.push(mbps),
                Ok(_) => {}
                Err(why) => {
                    excluded.push((*name, why));
                    rates.clear();
                    rates.push(f64::NAN);
                }
            }
        }
        workers.rotate_right(round % n.max(1));
        workers.retain(|(_, _, r)| !r.first().is_some_and(|v| v.is_nan()));
    }
    let rates: Vec<(&'static str, f64)> =
        workers.into_iter().map(|(n, _, r)| (n, best(&r))).collect();
    let name = fastest(&rates).ok_or_else(|| ChoiceError::NoneVerified {
        algorithm: alg.algorithm_id().to_string(),
        excluded: excluded.clone(),
    })?;
    Ok(Choice {
        name,
        how: How::Trial(rates),
        excluded,
        unit: alg.trial_unit(),
    })
}

/// The candidate with the highest rate; the first listed on a tie.
pub fn fastest(rates: &[(&'static str, f64)]) -> Option<&'static str> {
    let mut best: Option<(&'static str, f64)> = None;
    for &(n, r) in rates {
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((n, r));
        }
    }
    best.map(|(n, _)| n)
}

/// The best round's rate (0 for none).
fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    // rustix's clock_gettime cannot fail for the static clocks.
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Run `w` for about `slice` of wall time in batches that grow until one
/// batch takes a sixteenth of it; the rate (`per_call` units per call: MB
/// or operations) per second of this thread's CPU time. CPU time, because the trial compares code, not
/// the machine: time the thread spent descheduled (another process on a
/// shared CPU, often in step with the rounds) would otherwise count against
/// whichever candidate it fell on.
fn time_slice(w: &mut Worker, per_call: f64, slice: Duration) -> Result<f64, String> {
    let start = Instant::now();
    let cpu_start = thread_cpu();
    let mut batch = 1u64;
    let mut done = 0u64;
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            w()?;
        }
        done += batch;
        if start.elapsed() >= slice {
            let cpu = thread_cpu().saturating_sub(cpu_start);
            // A clock that did not move (never on Linux): fall back to wall time.
            let secs = if cpu.is_zero() {
                start.elapsed().as_secs_f64()
            } else {
                cpu.as_secs_f64()
            };
            return Ok(done as f64 * per_call / secs);
        }
        if t.elapsed() < slice / 16 {
            batch *= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// An algorithm with made-up candidates: "good" and "slow" are right,
    /// "wrong" fails its check (a deliberately wrong implementation), and
    /// "gone" exists but not on this CPU.
    struct Fake {
        id: &'static str,
        wrong_is_checked: Cell<bool>,
    }

    fn fake(id: &'static str) -> Fake {
        Fake {
            id,
            wrong_is_checked: Cell::new(false),
        }
    }

    /// A digest that is right (sum of bytes) or deliberately wrong.
    fn toy_digest(data: &[u8], wrong: bool) -> u64 {
        let s = data.iter().map(|&b| u64::from(b)).sum::<u64>();
        if wrong {
            s + 1
        } else {
            s
        }
    }

    impl Candidates for Fake {
        fn algorithm_id(&self) -> &'static str {
            self.id
        }
        fn names(&self) -> Vec<&'static str> {
            vec!["slow", "wrong", "good"]
        }
        fn all_names(&self) -> Vec<&'static str> {
            vec!["slow", "wrong", "good", "gone"]
        }
        fn check(&self, name: &'static str, _block: usize) -> Result<(), String> {
            if name == "wrong" {
                self.wrong_is_checked.set(true);
            }
            let got = toy_digest(b"abc", name == "wrong");
            if got == 294 {
                Ok(())
            } else {
                Err(format!("gave {got} for \"abc\" instead of 294"))
            }
        }
        fn worker(&self, name: &'static str, block: usize) -> Result<Worker, String> {
            assert_ne!(name, "wrong", "a failing candidate is never timed");
            let buf = vec![1u8; block];
            Ok(Box::new(move || {
                std::hint::black_box(toy_digest(std::hint::black_box(&buf), false));
                Ok(())
            }))
        }
    }

    const QUICK: TrialPlan = TrialPlan {
        rounds: 2,
        slice: Duration::from_micros(300),
    };

    #[test]
    fn a_candidate_failing_its_known_answers_is_excluded_and_said_so() {
        let cache = ChoiceCache::default();
        let alg = fake("test.excluded");
        let c = cache.choose(&alg, 64, &Forced::default(), QUICK).unwrap();
        assert!(alg.wrong_is_checked.get());
        assert_ne!(c.name, "wrong");
        assert_eq!(c.excluded.len(), 1);
        assert_eq!(c.excluded[0].0, "wrong");
        assert!(c.excluded[0].1.contains("instead of 294"), "{c:?}");
        let How::Trial(rates) = &c.how else {
            panic!("two candidates passed: a trial, not {:?}", c.how)
        };
        let timed: Vec<&str> = rates.iter().map(|r| r.0).collect();
        assert_eq!(timed, ["slow", "good"]);
        assert!(rates.iter().all(|r| r.1 > 0.0));
        // Cached: the same choice, without a new trial.
        let again = cache.choose(&alg, 64, &Forced::default(), QUICK).unwrap();
        assert!(Arc::ptr_eq(&c, &again));
        // Another block size is another trial.
        let other = cache.choose(&alg, 128, &Forced::default(), QUICK).unwrap();
        assert!(!Arc::ptr_eq(&c, &other));
    }

    /// "half" does part of the work (a library that verifies and cannot
    /// sign); "full" does all of it, and fails its check when `full_fails`.
    struct Partial {
        id: &'static str,
        full_fails: bool,
    }

    impl Candidates for Partial {
        fn algorithm_id(&self) -> &'static str {
            self.id
        }
        fn names(&self) -> Vec<&'static str> {
            vec!["half", "full"]
        }
        fn check(&self, name: &'static str, _block: usize) -> Result<(), String> {
            if name == "full" && self.full_fails {
                Err("wrong answer".into())
            } else {
                Ok(())
            }
        }
        fn worker(&self, _name: &'static str, _block: usize) -> Result<Worker, String> {
            Ok(Box::new(|| Ok(())))
        }
        fn partial(&self, name: &'static str) -> Option<String> {
            (name == "half").then(|| "verifies only".to_string())
        }
    }

    #[test]
    fn a_partial_candidate_runs_only_when_no_complete_one_passes() {
        let cache = ChoiceCache::default();
        let alg = Partial {
            id: "test.partial",
            full_fails: false,
        };
        let c = cache.choose(&alg, 0, &Forced::default(), QUICK).unwrap();
        assert_eq!((c.name, &c.how), ("full", &How::Only));
        assert_eq!(c.excluded, [("half", "verifies only".to_string())]);
        let alg = Partial {
            id: "test.partial-only",
            full_fails: true,
        };
        let c = cache.choose(&alg, 0, &Forced::default(), QUICK).unwrap();
        assert_eq!(c.name, "half");
        assert_eq!(c.excluded, [("full", "wrong answer".to_string())]);
        // Forcing it still works.
        let alg = Partial {
            id: "test.partial-forced",
            full_fails: false,
        };
        let c = cache.choose(&alg, 0, &forced(&["half"]), QUICK).unwrap();
        assert_eq!((c.name, &c.how), ("half", &How::Forced));
    }

    #[test]
    fn the_fastest_wins_and_a_tie_keeps_the_first() {
        assert_eq!(fastest(&[("a", 1.0), ("b", 3.0), ("c", 2.0)]), Some("b"));
        assert_eq!(fastest(&[("a", 2.0), ("b", 2.0)]), Some("a"));
        assert_eq!(fastest(&[]), None);
        assert_eq!(best(&[5.0, 1.0, 3.0]), 5.0);
        assert_eq!(best(&[]), 0.0);
    }

    fn forced(rules: &[&str]) -> Forced {
        Forced::parse(&rules.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn forcing_uses_the_named_candidate_without_a_trial() {
        let cache = ChoiceCache::default();
        let alg = fake("test.forced");
        let c = cache.choose(&alg, 64, &forced(&["slow"]), QUICK).unwrap();
        assert_eq!((c.name, &c.how), ("slow", &How::Forced));
        // A rule for this algorithm wins over a bare name.
        let c = cache
            .choose(&alg, 64, &forced(&["slow", "forced=good"]), QUICK)
            .unwrap();
        assert_eq!(c.name, "good");
        // A bare name the algorithm does not have leaves it to the trial.
        let c = cache.choose(&alg, 64, &forced(&["aws-lc"]), QUICK).unwrap();
        assert!(matches!(c.how, How::Trial(_)));
        // Forcing the wrong one is an error naming the failure, never a number.
        let e = cache
            .choose(&alg, 64, &forced(&["wrong"]), QUICK)
            .unwrap_err();
        assert!(matches!(e, ChoiceError::ForcedFailed { .. }));
        assert!(e.to_string().contains("known-answer"), "{e}");
    }

    #[test]
    fn unknown_or_absent_names_for_an_algorithm_are_clear_errors() {
        let cache = ChoiceCache::default();
        let alg = fake("test.unknown");
        let e = cache
            .choose(&alg, 64, &forced(&["unknown=nope"]), QUICK)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "test.unknown: implementation 'nope' is not one of its own; it has slow, wrong, good"
        );
        let e = cache
            .choose(&alg, 64, &forced(&["test.unknown=gone"]), QUICK)
            .unwrap_err();
        assert!(matches!(e, ChoiceError::NotOnThisCpu { .. }), "{e}");
        assert!(e.to_string().contains("cannot run on this CPU"), "{e}");
        assert!(Forced::parse(&["sha512=".to_string()]).is_err());
        assert!(Forced::parse(&["=x".to_string()]).is_err());
    }

    #[test]
    fn details_carry_the_choice_not_the_params() {
        use sysgauge_core::{CtxSettings, Profile};
        let mut ctx =
            RunCtx::for_tests(CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir()));
        ctx.begin_case(Duration::from_millis(1));
        let c = Choice {
            name: "good",
            how: How::Trial(vec![("good", 1234.4), ("slow", 99.0)]),
            excluded: vec![("wrong", "gave 295".to_string())],
            unit: TrialUnit::MBps,
        };
        c.note(&mut ctx, "hash.md5", Some(8192));
        let out = ctx.take_case_output();
        assert_eq!(out.details.get_str(DETAIL_IMPLEMENTATION), Some("good"));
        assert_eq!(
            out.details.get_str(DETAIL_TRIAL),
            Some("good 1234, slow 99 MB/s")
        );
        // A public-key case's trial counts operations.
        ctx.begin_case(Duration::from_millis(1));
        Choice {
            unit: TrialUnit::OpsPerSec,
            ..c.clone()
        }
        .note(&mut ctx, "hash.md5", Some(8192));
        let out = ctx.take_case_output();
        assert_eq!(
            out.details.get_str(DETAIL_TRIAL),
            Some("good 1234, slow 99 op/s")
        );
        assert_eq!(
            out.details.get_str(DETAIL_EXCLUDED),
            Some("wrong: gave 295")
        );
        assert!(out.details.get_str(DETAIL_CHOICE).is_some());
        assert!(out.params.get_str(DETAIL_IMPLEMENTATION).is_none());
    }

    #[test]
    fn validation_before_anything_runs() {
        let algs: Vec<Box<dyn Candidates>> =
            vec![Box::new(fake("test.a")), Box::new(fake("test.b"))];
        let all = |_: &str| true;
        let only_b = |id: &str| id == "test.b";
        assert!(validate(&forced(&["good", "a=slow"]), &algs, &all).is_ok());
        assert!(validate(&forced(&["test=good"]), &algs, &only_b).is_ok());
        let e = validate(&forced(&["nope"]), &algs, &all).unwrap_err();
        assert!(e.contains("'nope' is not an implementation"), "{e}");
        assert!(e.contains("gone, good, slow, wrong"), "{e}");
        let e = validate(&forced(&["a=gone"]), &algs, &all).unwrap_err();
        assert!(e.contains("cannot run on this CPU"), "{e}");
        let e = validate(&forced(&["gone"]), &algs, &all).unwrap_err();
        assert!(e.contains("no selected algorithm has 'gone'"), "{e}");
        let e = validate(&forced(&["cpu=good"]), &algs, &all).unwrap_err();
        assert!(
            e.contains("names no hash, cipher or public-key algorithm"),
            "{e}"
        );
    }

    #[test]
    fn no_verified_candidate_is_an_error() {
        struct AllWrong;
        impl Candidates for AllWrong {
            fn algorithm_id(&self) -> &'static str {
                "test.allwrong"
            }
            fn names(&self) -> Vec<&'static str> {
                vec!["a"]
            }
            fn check(&self, _: &'static str, _: usize) -> Result<(), String> {
                Err("wrong digest".into())
            }
            fn worker(&self, _: &'static str, _: usize) -> Result<Worker, String> {
                Err("never".into())
            }
        }
        let e = ChoiceCache::default()
            .choose(&AllWrong, 16, &Forced::default(), QUICK)
            .unwrap_err();
        assert!(e.to_string().contains("a: wrong digest"), "{e}");
    }
}
