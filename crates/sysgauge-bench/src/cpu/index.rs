//! The integer, floating-point and memory indexes: for each group of
//! kernels, 1000 × the geometric mean of the kernels' single-thread rates
//! divided by the reference machine's (1000 = as fast as the reference).
//!
//! Grouping follows the classic suite: integer = numeric sort, FP emulation,
//! IDEA, Huffman; floating point = Fourier, neural net, LU decomposition;
//! memory = string sort, bitfield, assignment. A geometric mean gives every
//! kernel the same weight whatever its absolute rate, and the ratio of two
//! machines' indexes equals the geometric mean of their per-kernel ratios,
//! so indexes compare across machines as the kernels do.
//!
//! An index is computed only from a complete group measured single-threaded
//! in the same run (a partial group is not the same index, so it is skipped
//! with the reason), and only against reference numbers recorded with the
//! same workload version. The reference's name is a parameter of the index
//! case, so indexes against different references are never compared.

use super::kernels::{Group, KernelId, WORKLOAD_VERSION};
use super::{CpuOptions, SingleThreadRates, SINGLE_RATES};
use std::sync::Arc;
use sysgauge_core::record::{RunRecord, Status};
use sysgauge_core::{
    BenchError, Benchmark, Better, Description, Metric, Params, Plan, RunCtx, Unit,
};
use sysgauge_family::baseline_file::Baseline;
use sysgauge_family::util::{metric, Count};

/// Index value of the reference machine.
pub const SCALE: f64 = 1000.0;

/// The reference machine's numbers: the workspace's embedded baseline
/// (sysgauge_registry::baseline, docs/baseline.md), whose standard-profile run includes
/// every kernel on one thread. One reference for the whole program, so the
/// cpu indexes and the run's family indexes rest on the same machine.
#[derive(Debug, Clone, Copy)]
pub struct Reference(pub &'static Baseline);

impl Reference {
    /// Name used as the `reference` parameter of index cases.
    pub fn label(&self) -> String {
        format!("baseline-v{}", self.0.version)
    }

    /// The reference machine, for people.
    pub fn machine(&self) -> &'static str {
        self.0.machine.as_str()
    }

    /// The reference machine's median single-thread rate of `kernel`, if
    /// recorded with today's workload version.
    pub fn rate(&self, kernel: KernelId) -> Option<f64> {
        self.0.runs.iter().find_map(|run| rate_in(run, kernel))
    }
}

fn rate_in(run: &RunRecord, kernel: KernelId) -> Option<f64> {
    let single = Params::new().with("threads", 1u64);
    run.results
        .iter()
        .filter(|r| matches!(r.status, Status::Ok))
        .filter(|r| r.bench_id == kernel.id() && r.params == single)
        .filter(|r| r.workload_version == WORKLOAD_VERSION)
        .flat_map(|r| r.metrics.iter())
        .find(|m| m.name == "rate")
        .map(|m| m.value())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The compiled-in reference.
pub fn embedded_reference() -> Result<Reference, String> {
    sysgauge_family::baseline_file::embedded()
        .map(Reference)
        .map_err(|e| e.to_string())
}

/// `SCALE` × the geometric mean of rate / reference over the pairs.
pub fn index_value(pairs: &[(f64, f64)]) -> Option<f64> {
    let ratios: Vec<f64> = pairs.iter().map(|(r, reference)| r / reference).collect();
    sysgauge_stats::geomean(&ratios).map(|g| g * SCALE)
}

/// One group's index as a benchmark.
pub struct IndexBenchmark {
    group: Group,
    id: String,
    options: Arc<CpuOptions>,
}

impl IndexBenchmark {
    pub fn new(group: Group, options: Arc<CpuOptions>) -> Self {
        IndexBenchmark {
            group,
            id: format!("cpu.index-{}", group.name()),
            options,
        }
    }

    pub fn kernels(&self) -> Vec<KernelId> {
        KernelId::ALL
            .into_iter()
            .filter(|k| k.group() == self.group)
            .collect()
    }
}

impl Benchmark for IndexBenchmark {
    fn id(&self) -> &str {
        &self.id
    }

    fn describe(&self) -> Description {
        let names: Vec<&str> = self.kernels().iter().map(|k| k.short_name()).collect();
        Description::new(
            format!(
                "{} index: 1000 x geometric mean of single-thread rate / reference ({})",
                self.group.title(),
                names.join(", ")
            ),
            Unit::Index,
            Better::Higher,
        )
        .version(WORKLOAD_VERSION)
    }

    fn derived_from(&self) -> Vec<String> {
        self.kernels().iter().map(|k| k.id().to_string()).collect()
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        if self.options.thread_counts(plan).contains(&Count::N(1)) {
            vec![Params::new().with("threads", 1u64)]
        } else {
            Vec::new()
        }
    }

    fn run(&self, ctx: &mut RunCtx, _params: &Params) -> Result<Vec<Metric>, BenchError> {
        let reference = embedded_reference().map_err(BenchError::failed)?;
        ctx.note_param("reference", reference.label());
        ctx.note_detail("reference_machine", reference.machine());
        let rates = ctx.fixture(SINGLE_RATES, |_| Ok(SingleThreadRates::default()))?;
        let mut pairs = Vec::new();
        let mut missing = Vec::new();
        let mut ratios = Vec::new();
        for k in self.kernels() {
            match rates.0.get(&k) {
                Some(samples) if !samples.is_empty() => {
                    let median = sysgauge_stats::median(samples);
                    let Some(r) = reference.rate(k) else {
                        return Err(BenchError::skip(
                            format!(
                                "the reference ({}) has no single-thread rate of {} for workload version {WORKLOAD_VERSION}",
                                reference.label(),
                                k.id()
                            ),
                            "re-record the embedded baseline (docs/baseline.md)",
                        ));
                    };
                    ratios.push(format!("{}={:.3}", k.short_name(), median / r));
                    pairs.push((median, r));
                }
                _ => missing.push(k.id()),
            }
        }
        if !missing.is_empty() {
            return Err(BenchError::skip(
                format!(
                    "the {} index needs {} measured single-threaded in the same run",
                    self.group.title(),
                    missing.join(", ")
                ),
                "run every kernel of the group with threads=1 (plain `sysgauge cpu` does)",
            ));
        }
        ctx.note_detail("ratios", ratios.join(" "));
        let value = index_value(&pairs)
            .ok_or_else(|| BenchError::failed("a kernel rate or reference is not positive"))?;
        Ok(vec![metric(
            "index",
            Unit::Index,
            Better::Higher,
            vec![value],
        )?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use sysgauge_core::Profile;

    #[test]
    fn hand_checkable_index() {
        // Ratios 0.5 and 2 → geometric mean 1 → index 1000; 2 and 8 → 4000.
        let v = index_value(&[(50.0, 100.0), (200.0, 100.0)]).unwrap_or(f64::NAN);
        assert!((v - 1000.0).abs() < 1e-9, "{v}");
        let v = index_value(&[(2.0, 1.0), (8.0, 1.0)]).unwrap_or(f64::NAN);
        assert!((v - 4000.0).abs() < 1e-9, "{v}");
        assert!(index_value(&[]).is_none());
        assert!(index_value(&[(0.0, 1.0)]).is_none());
    }

    #[test]
    fn embedded_reference_covers_every_kernel() {
        let r = embedded_reference().unwrap();
        assert!(!r.machine().trim().is_empty());
        assert!(r.label().starts_with("baseline-v"), "{}", r.label());
        for k in KernelId::ALL {
            assert!(
                r.rate(k).is_some(),
                "the baseline lacks {} at workload version {WORKLOAD_VERSION}: re-record it",
                k.id()
            );
        }
    }

    #[test]
    fn rates_only_from_single_thread_current_workload() {
        let r = embedded_reference().unwrap();
        let mut run = r.0.reference(sysgauge_core::Profile::Standard);
        for res in &mut run.results {
            if res.bench_id == KernelId::ALL[0].id() {
                res.workload_version = WORKLOAD_VERSION + 1;
            }
        }
        assert!(rate_in(&run, KernelId::ALL[0]).is_none());
        assert!(rate_in(&run, KernelId::ALL[1]).is_some());
        run.results.retain(|res| {
            res.bench_id != KernelId::ALL[1].id() || res.params.get_u64("threads") != Some(1)
        });
        assert!(rate_in(&run, KernelId::ALL[1]).is_none());
    }

    #[test]
    fn skipped_without_kernel_results_computed_with_them() {
        let opts = Arc::new(CpuOptions::default());
        let b = IndexBenchmark::new(Group::FloatingPoint, opts);
        assert_eq!(b.id(), "cpu.index-float");
        let mut c = sysgauge_family::util::tiny_ctx(1);
        c.begin_case(Duration::from_millis(10));
        match b.run(&mut c, &Params::new().with("threads", 1u64)) {
            Err(BenchError::Skip { reason, .. }) => {
                assert!(reason.contains("cpu.fourier") && reason.contains("cpu.neural-net"))
            }
            other => panic!("{other:?}"),
        }
        // Feed the reference's own rates: the index must be exactly 1000.
        let reference = embedded_reference().unwrap();
        let rates = c
            .fixture(SINGLE_RATES, |_| Ok(SingleThreadRates::default()))
            .unwrap();
        for k in b.kernels() {
            let r = reference.rate(k).unwrap_or(f64::NAN);
            rates.0.insert(k, vec![r, r * 1.01, r * 0.99]);
        }
        c.begin_case(Duration::from_millis(10));
        let m = b.run(&mut c, &Params::new().with("threads", 1u64)).unwrap();
        assert!((m[0].value() - 1000.0).abs() < 1e-6, "{}", m[0].value());
        assert_eq!(m[0].unit, Unit::Index);
        let out = c.take_case_output();
        assert_eq!(
            out.params.get_str("reference"),
            Some(reference.label().as_str())
        );
        assert!(out
            .details
            .get_str("ratios")
            .unwrap_or("")
            .contains("fourier=1.000"));
    }

    #[test]
    fn no_case_without_single_thread() {
        let b = IndexBenchmark::new(
            Group::Memory,
            Arc::new(CpuOptions {
                threads: Some(vec![Count::N(2)]),
                ladder: false,
            }),
        );
        let plan = Plan {
            profile: Profile::Quick,
            threads: 2,
        };
        assert!(b.cases(&plan).is_empty());
    }
}
