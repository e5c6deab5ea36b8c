//! The fake family: deterministic cases for the command-line tests, as a
//! test double of a real family (hyperfine's mock executor plays the same
//! part). Present only when `SYSGAUGE_FAKE_FAMILY` is set, so a user never
//! sees it and no stored result of a real run carries its ids; opt-in like
//! ssh, so only `--only fake` (or one of its ids) runs it.
//!
//! Its values come from the environment instead of a clock: every
//! repetition of `fake.rate` is exactly `rate` MB/s and of `fake.latency`
//! exactly `latency` µs, so a test of output, comparisons and exit codes
//! can state the numbers it expects to the last digit. `skip=ID` and
//! `fail=ID` make a case skip or fail, for the exit-code tests.
//!
//! `SYSGAUGE_FAKE_FAMILY=rate=250,latency=40,fail=fake.latency`: a comma
//! list of `key=value`; an empty value keeps the defaults (100 MB/s, 50 µs,
//! every case measured). A malformed list fails every case, naming it.

use std::sync::Arc;
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, RunCtx, Unit,
};

/// The variable that enables the family and sets its values.
pub const VARIABLE: &str = "SYSGAUGE_FAKE_FAMILY";
/// Its throughput case: MB/s, higher is better.
pub const RATE: &str = "fake.rate";
/// Its latency case: µs, lower is better.
pub const LATENCY: &str = "fake.latency";

/// Whether the family is registered in this process.
pub fn enabled() -> bool {
    std::env::var_os(VARIABLE).is_some()
}

/// What `SYSGAUGE_FAKE_FAMILY` asks of the cases.
#[derive(Debug, Clone, PartialEq)]
struct Script {
    rate: f64,
    latency: f64,
    skip: Vec<String>,
    fail: Vec<String>,
}

impl Default for Script {
    fn default() -> Script {
        Script {
            rate: 100.0,
            latency: 50.0,
            skip: Vec::new(),
            fail: Vec::new(),
        }
    }
}

impl Script {
    fn parse(text: &str) -> Result<Script, String> {
        let mut s = Script::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{VARIABLE}: '{item}' is not key=value"))?;
            let number = || match value.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
                _ => Err(format!(
                    "{VARIABLE}: {key}={value} is not a positive number"
                )),
            };
            match key {
                "rate" => s.rate = number()?,
                "latency" => s.latency = number()?,
                "skip" => s.skip.push(value.to_string()),
                "fail" => s.fail.push(value.to_string()),
                _ => {
                    return Err(format!(
                        "{VARIABLE}: unknown key '{key}' (rate, latency, skip, fail)"
                    ))
                }
            }
        }
        Ok(s)
    }

    fn from_env() -> Result<Script, String> {
        let text = std::env::var(VARIABLE).map_err(|_| format!("{VARIABLE} is not text"))?;
        Script::parse(&text)
    }
}

/// The family's options: none (its values come from the environment).
#[derive(Debug, Clone, Default)]
pub struct FakeOptions;

struct FakeBenchmark {
    id: &'static str,
    /// The environment's script, read when the benchmarks are built.
    script: Result<Script, String>,
}

impl Benchmark for FakeBenchmark {
    fn id(&self) -> &str {
        self.id
    }

    fn describe(&self) -> Description {
        if self.id == RATE {
            Description::new(
                "a fixed throughput (test double)",
                Unit::MBps,
                Better::Higher,
            )
        } else {
            Description::new(
                "a fixed latency (test double)",
                Unit::Microseconds,
                Better::Lower,
            )
        }
    }

    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        vec![Params::new()]
    }

    fn run(&self, ctx: &mut RunCtx, _params: &Params) -> Result<Vec<Metric>, BenchError> {
        ctx.check_cancel()?;
        let script = self.script.clone().map_err(BenchError::failed)?;
        if script.skip.iter().any(|id| id == self.id) {
            return Err(BenchError::skip(
                format!("{VARIABLE} skips it"),
                format!("leave skip={} out of {VARIABLE}", self.id),
            ));
        }
        if script.fail.iter().any(|id| id == self.id) {
            return Err(BenchError::failed(format!("{VARIABLE} fails it")));
        }
        let d = self.describe();
        let (name, value) = if self.id == RATE {
            ("throughput", script.rate)
        } else {
            ("latency", script.latency)
        };
        let samples = vec![value; ctx.repetitions().max(1) as usize];
        Ok(vec![sysgauge_family::util::metric(
            name, d.unit, d.better, samples,
        )?])
    }
}

sysgauge_family::register_family! {
    name: "fake", options: FakeOptions, in_default_run: false,
    cpu_bound: false, summary_first: true,
    budget_seconds: [0.1, 0.1, 0.1, 0.1], report: None,
    summary: "deterministic cases for the command-line tests (only with SYSGAUGE_FAKE_FAMILY set)",
}

/// The fake family's benchmarks: a throughput and a latency case.
pub fn benchmarks(_options: &Arc<FakeOptions>) -> Vec<Box<dyn Benchmark>> {
    [RATE, LATENCY]
        .into_iter()
        .map(|id| {
            Box::new(FakeBenchmark {
                id,
                script: Script::from_env(),
            }) as Box<dyn Benchmark>
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_read_or_refused_by_name() {
        assert_eq!(Script::parse("").unwrap_or_default(), Script::default());
        let s = Script::parse("rate=250, latency=40,fail=fake.latency,skip=fake.rate")
            .unwrap_or_default();
        assert_eq!((s.rate, s.latency), (250.0, 40.0));
        assert_eq!(s.fail, [LATENCY]);
        assert_eq!(s.skip, [RATE]);
        for (bad, says) in [
            ("rate", "not key=value"),
            ("rate=0", "rate=0 is not a positive number"),
            ("latency=nan", "not a positive number"),
            ("speed=3", "unknown key 'speed'"),
        ] {
            let e = Script::parse(bad).err().unwrap_or_default();
            assert!(e.contains(says) && e.contains(VARIABLE), "{bad}: {e}");
        }
    }

    #[test]
    fn every_repetition_is_the_scripted_value() {
        let mut ctx = sysgauge_family::util::tiny_ctx(1);
        let script = Script::parse("rate=250,latency=40,fail=fake.latency");
        let case = |id| FakeBenchmark {
            id,
            script: script.clone(),
        };
        let m = case(RATE).run(&mut ctx, &Params::new()).unwrap_or_default();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].samples, vec![250.0; 3]);
        assert_eq!(m[0].value(), 250.0);
        let e = case(LATENCY).run(&mut ctx, &Params::new()).err();
        assert!(
            matches!(e, Some(BenchError::Failed(ref m)) if m.contains("fails it")),
            "{e:?}"
        );
        let broken = FakeBenchmark {
            id: RATE,
            script: Script::parse("rate=x"),
        };
        let e = broken.run(&mut ctx, &Params::new()).err();
        assert!(
            matches!(e, Some(BenchError::Failed(ref m)) if m.contains("rate=x")),
            "{e:?}"
        );
    }
}
