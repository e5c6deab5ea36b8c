//! Cases: what may be compared across machines, and the direction-adjusted
//! ratio between two values.
//!
//! A case is one metric of one benchmark case: the benchmark id, its
//! parameters, its workload version and the metric's name. Two machines'
//! numbers are compared only when all four are equal, so a changed workload
//! or a different block size never passes for the same test. Units of the
//! same dimension (kB/s and MB/s, ns and ms) are converted; anything else
//! that differs makes the pair not comparable.

use crate::machine::Machine;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sysgauge_core::record::{family_of, Params, RunRecord, Status};
use sysgauge_core::{Better, Unit};

/// What identifies a comparable number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseKey {
    pub bench_id: String,
    pub params: Params,
    pub workload_version: u32,
    pub metric: String,
}

impl CaseKey {
    pub fn family(&self) -> &str {
        family_of(&self.bench_id)
    }

    /// `bench_id params metric` for people (params omitted when empty).
    pub fn label(&self) -> String {
        let mut s = self.bench_id.clone();
        if !self.params.is_empty() {
            s.push(' ');
            s.push_str(&self.params.to_string());
        }
        s.push(' ');
        s.push_str(&self.metric);
        s
    }

    /// A stable text for seeding the bootstrap of this case.
    pub fn seed_text(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.bench_id,
            self.params.canonical(),
            self.workload_version,
            self.metric
        )
    }
}

/// One machine's number for a case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseData {
    pub family: String,
    pub unit: Unit,
    pub better: Better,
    /// Raw samples (one per repetition).
    pub samples: Vec<f64>,
    /// The headline value (median of the samples).
    pub value: f64,
    /// Why the result is not a measure of the machine, if it is not.
    pub untrusted: Option<String>,
    /// What disturbed the machine while the case ran, if anything did.
    pub disturbed: Option<String>,
    /// Why the number measures sysgauge's code more than the machine (its
    /// implementation is known to be slower than the best reference on
    /// this CPU), if it does.
    pub code_bound: Option<String>,
    /// For a case measured in rounds (`--rounds`): each round's value over
    /// the median of the rounds. The samples are then the rounds' values;
    /// these factors carry the between-run spread over to a run of the
    /// same case measured once (see `index`).
    pub round_factors: Vec<f64>,
    /// The result's headline (first) metric, unless it is an index made
    /// of other cases: only these count in means and indexes, so a %CP or
    /// a latency beside a throughput is shown but never averaged into a
    /// speed ratio, and an index computed inside a run (`cpu.index-*`,
    /// nbench's) does not count its cases twice.
    pub headline: bool,
    /// The run the result came from (`RunSource::reference`), when the
    /// machine is several runs.
    pub run: Option<String>,
}

/// The cases of a run in the run's order: every metric of every result
/// that finished ok. A later duplicate of a key (the same case run twice in
/// one run) replaces the earlier one.
#[derive(Debug, Clone, Default)]
pub struct CaseSet {
    /// In the run's order; each key held once.
    data: IndexMap<CaseKey, CaseData>,
}

impl CaseSet {
    pub fn from_run(run: &RunRecord) -> CaseSet {
        CaseSet::from_results(run, |_| None)
    }

    /// The cases of a machine, each with the run it came from.
    pub fn from_machine(m: &Machine) -> CaseSet {
        let named = m.sources.len() > 1;
        CaseSet::from_results(&m.run, |i| {
            named
                .then(|| m.source_of(i).map(|s| s.reference.clone()))
                .flatten()
        })
    }

    fn from_results(run: &RunRecord, source: impl Fn(usize) -> Option<String>) -> CaseSet {
        let mut set = CaseSet::default();
        for (i, r) in run.results.iter().enumerate() {
            if !matches!(r.status, Status::Ok) {
                continue;
            }
            for (mi, m) in r.metrics.iter().enumerate() {
                let key = CaseKey {
                    bench_id: r.bench_id.clone(),
                    params: r.params.clone(),
                    workload_version: r.workload_version,
                    metric: m.name.clone(),
                };
                let data = CaseData {
                    family: if r.family.is_empty() {
                        family_of(&r.bench_id).to_string()
                    } else {
                        r.family.clone()
                    },
                    unit: m.unit.clone(),
                    better: m.better,
                    samples: m.samples.clone(),
                    value: m.value(),
                    untrusted: r.untrusted().map(str::to_string),
                    disturbed: r.disturbed().map(str::to_string),
                    code_bound: r.code_bound().map(str::to_string),
                    round_factors: match r.details.get_u64(sysgauge_core::rounds::ROUNDS) {
                        Some(n) if n > 1 && m.value() > 0.0 => {
                            m.samples.iter().map(|v| v / m.value()).collect()
                        }
                        _ => Vec::new(),
                    },
                    headline: mi == 0 && m.unit != Unit::Index,
                    run: source(i),
                };
                // A duplicate keeps its place and takes the later data.
                set.data.insert(key, data);
            }
        }
        set
    }

    /// Only the cases of these families (all when `families` is empty).
    pub fn retain_families(&mut self, families: &[String]) {
        if families.is_empty() {
            return;
        }
        let keep = |d: &CaseData| families.contains(&d.family);
        self.data.retain(|_, d| keep(d));
    }

    /// The keys in the run's order.
    pub fn keys(&self) -> impl Iterator<Item = &CaseKey> + '_ {
        self.data.keys()
    }

    pub fn get(&self, key: &CaseKey) -> Option<&CaseData> {
        self.data.get(key)
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Families in order of first appearance.
    pub fn families(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for d in self.data.values() {
            if !out.contains(&d.family) {
                out.push(d.family.clone());
            }
        }
        out
    }
}

/// The ratio of `value` to `reference`, oriented so that above 1 always
/// means faster: value/reference when higher is better, reference/value when
/// lower is better. `None` unless both are finite and positive (a ratio to
/// or of zero has no meaning).
pub fn adjusted_ratio(value: f64, reference: f64, better: Better) -> Option<f64> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !ok(value) || !ok(reference) {
        return None;
    }
    Some(match better {
        Better::Higher => value / reference,
        Better::Lower => reference / value,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dimension {
    BytesPerSecond,
    Time,
}

/// The dimension of a unit and its size in the dimension's base unit
/// (bytes/s or seconds).
fn scale(unit: &Unit) -> Option<(Dimension, f64)> {
    use Dimension::*;
    Some(match unit {
        Unit::MBps => (BytesPerSecond, 1e6),
        Unit::KBps => (BytesPerSecond, 1e3),
        Unit::GBps => (BytesPerSecond, 1e9),
        Unit::MiBps => (BytesPerSecond, 1_048_576.0),
        Unit::Mbitps => (BytesPerSecond, 125_000.0),
        Unit::Nanoseconds => (Time, 1e-9),
        Unit::Microseconds => (Time, 1e-6),
        Unit::Milliseconds => (Time, 1e-3),
        Unit::Seconds => (Time, 1.0),
        _ => return None,
    })
}

/// The factor that turns a value in `from` into `to`: 1 for equal units,
/// the conversion for units of one dimension, `None` otherwise.
pub fn conversion_factor(from: &Unit, to: &Unit) -> Option<f64> {
    if from.symbol() == to.symbol() {
        return Some(1.0);
    }
    match (scale(from), scale(to)) {
        (Some((da, fa)), Some((db, fb))) if da == db => Some(fa / fb),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_point_the_same_way() {
        assert_eq!(adjusted_ratio(50.0, 80.0, Better::Higher), Some(0.625));
        assert_eq!(adjusted_ratio(200.0, 80.0, Better::Higher), Some(2.5));
        // Half the latency is twice as fast.
        assert_eq!(adjusted_ratio(5.0, 10.0, Better::Lower), Some(2.0));
        assert_eq!(adjusted_ratio(0.0, 10.0, Better::Higher), None);
        assert_eq!(adjusted_ratio(10.0, -1.0, Better::Higher), None);
        assert_eq!(adjusted_ratio(f64::NAN, 1.0, Better::Lower), None);
    }

    #[test]
    fn unit_conversion() {
        assert_eq!(conversion_factor(&Unit::KBps, &Unit::MBps), Some(1e-3));
        assert_eq!(conversion_factor(&Unit::MBps, &Unit::MBps), Some(1.0));
        assert_eq!(
            conversion_factor(&Unit::Milliseconds, &Unit::Nanoseconds),
            Some(1e6)
        );
        assert_eq!(conversion_factor(&Unit::MBps, &Unit::Seconds), None);
        assert_eq!(
            conversion_factor(&Unit::OpsPerSec, &Unit::ItersPerSec),
            None
        );
        let w = Unit::Other("widgets/s".into());
        assert_eq!(conversion_factor(&w, &w.clone()), Some(1.0));
    }

    #[test]
    fn key_label() {
        let k = CaseKey {
            bench_id: "beta.sha256".into(),
            params: Params::new().with("block_size", 8192u64),
            workload_version: 1,
            metric: "throughput".into(),
        };
        assert_eq!(k.label(), "beta.sha256 block_size=8192 throughput");
        assert_eq!(k.family(), "beta");
        assert_eq!(k.seed_text(), "beta.sha256|block_size=8192|1|throughput");
    }
}
