//! The reference baseline's file: its shape (`Baseline`), how it is read
//! and checked (`parse`) and the copy compiled into the binary (`embedded`).
//! It needs nothing of the families, so the cpu family's index can read the
//! reference machine's numbers from it; what compares runs with it against
//! today's benchmarks is `sysgauge_registry::baseline`, beside the list of
//! families.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;
use sysgauge_core::record::{Params, Profile, ResultRecord, RunRecord, Status, SCHEMA_VERSION};
use thiserror::Error;

/// Version of the baseline file's shape (not of its numbers).
pub const BASELINE_FORMAT: u32 = 2;

/// The profiles a baseline has a reference run of.
pub const BASELINE_PROFILES: [Profile; 2] = [Profile::Quick, Profile::Standard];

/// The baseline file, as compiled in.
pub const EMBEDDED_JSON: &str = include_str!("../baseline/reference.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Shape of this file: `BASELINE_FORMAT`.
    pub format: u32,
    /// The baseline's own version, bumped at every re-recording.
    pub version: u32,
    /// The reference machine, for people ("KVM guest, 2 vCPU Intel Xeon …").
    pub machine: String,
    /// The sysgauge version and commands that recorded the runs.
    pub recorded_with: String,
    /// The reference runs, one per profile (quick and standard).
    pub runs: Vec<RunRecord>,
}

impl Baseline {
    /// The reference run of `profile`, if the baseline has one.
    pub fn run_for(&self, profile: Profile) -> Option<&RunRecord> {
        self.runs.iter().find(|r| r.profile == profile)
    }

    /// What a run of `profile` is indexed against: the reference run of
    /// that profile (else the first), with the cases of the other runs it
    /// lacks added, so a case measured in either profile has a reference.
    pub fn reference(&self, profile: Profile) -> RunRecord {
        let mut base = self
            .run_for(profile)
            .or(self.runs.first())
            .cloned()
            .unwrap_or_else(|| RunRecord::new("empty", "run", "none"));
        let mut seen: BTreeSet<(String, Params)> = base
            .results
            .iter()
            .map(|r| (r.bench_id.clone(), r.params.clone()))
            .collect();
        for other in self.runs.iter().filter(|r| r.run_id != base.run_id) {
            for r in &other.results {
                if seen.insert((r.bench_id.clone(), r.params.clone())) {
                    base.results.push(r.clone());
                }
            }
        }
        base
    }

    /// Every result of every reference run.
    pub fn results(&self) -> impl Iterator<Item = &ResultRecord> {
        self.runs.iter().flat_map(|r| r.results.iter())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BaselineError {
    #[error("the embedded baseline is not valid: {0}")]
    Invalid(String),
    #[error("the baseline file has format {found}; this sysgauge reads format {supported}")]
    Format { found: u32, supported: u32 },
    #[error(
        "the baseline's run record has schema version {found}; this sysgauge reads {supported}"
    )]
    Schema { found: u32, supported: u32 },
}

/// Parse and check a baseline file's text.
pub fn parse(text: &str) -> Result<Baseline, BaselineError> {
    let b: Baseline = serde_json::from_str(text).map_err(|e| {
        BaselineError::Invalid(format!("line {}, column {}: {e}", e.line(), e.column()))
    })?;
    if b.format != BASELINE_FORMAT {
        return Err(BaselineError::Format {
            found: b.format,
            supported: BASELINE_FORMAT,
        });
    }
    if b.runs.is_empty() {
        return Err(BaselineError::Invalid("the baseline has no run".into()));
    }
    for (i, run) in b.runs.iter().enumerate() {
        if run.schema_version != SCHEMA_VERSION {
            return Err(BaselineError::Schema {
                found: run.schema_version,
                supported: SCHEMA_VERSION,
            });
        }
        if b.runs[..i].iter().any(|r| r.profile == run.profile) {
            return Err(BaselineError::Invalid(format!(
                "two reference runs of the {} profile",
                run.profile
            )));
        }
        if !run.results.iter().any(|r| matches!(r.status, Status::Ok)) {
            return Err(BaselineError::Invalid(format!(
                "the {} run has no successful result",
                run.profile
            )));
        }
    }
    if b.machine.trim().is_empty() {
        return Err(BaselineError::Invalid(
            "the machine description is empty".into(),
        ));
    }
    Ok(b)
}

/// The baseline compiled into this binary, parsed once.
pub fn embedded() -> Result<&'static Baseline, BaselineError> {
    static PARSED: OnceLock<Result<Baseline, BaselineError>> = OnceLock::new();
    PARSED
        .get_or_init(|| parse(EMBEDDED_JSON))
        .as_ref()
        .map_err(Clone::clone)
}
