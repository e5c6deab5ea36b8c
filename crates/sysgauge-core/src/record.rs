//! The records every run produces: the contract between benchmarks, the
//! store, comparisons and renderers. JSON output is these structs serialised;
//! `SCHEMA_VERSION` changes whenever their shape does (docs/output-schema.md).

use crate::host::HostInfo;
use crate::unit::{Better, Unit};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use sysgauge_stats::Summary;

/// Version of the JSON/record shape. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of one or more benchmarks on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    pub schema_version: u32,
    /// Globally unique id (UUID v4); import uses it to avoid duplicates.
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub status: RunStatus,
    /// The subcommand that made the run (`run`, `crypto`, `disk`, ...).
    pub command: String,
    pub tool_version: String,
    pub build: BuildInfo,
    pub host: HostInfo,
    pub profile: Profile,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Run-level findings (clock dropped during the run, an LSM is active, ...).
    pub findings: Vec<Finding>,
    pub results: Vec<ResultRecord>,
}

impl RunRecord {
    /// A run of `command` that starts now, in the default profile, with no
    /// host facts, label, tags, findings or results yet: the one place the
    /// record's shape is spelled out; callers set what they know on top.
    pub fn new(run_id: &str, command: &str, tool_version: &str) -> RunRecord {
        RunRecord {
            schema_version: SCHEMA_VERSION,
            run_id: run_id.to_string(),
            started_at: Utc::now(),
            finished_at: None,
            status: RunStatus::Running,
            command: command.to_string(),
            tool_version: tool_version.to_string(),
            build: BuildInfo::default(),
            host: HostInfo::default(),
            profile: Profile::default(),
            label: None,
            tags: BTreeMap::new(),
            findings: Vec::new(),
            results: Vec::new(),
        }
    }

    /// The machine's inventory groups (its `groups` tag), in order.
    pub fn groups(&self) -> Vec<String> {
        self.tags
            .get(GROUPS_TAG)
            .map(|g| {
                g.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The host name that stands for this run's machine in comparisons.
    pub fn host_name(&self) -> &str {
        self.host.hostname.as_deref().unwrap_or("unknown-host")
    }

    /// The profile as shown to people: `imported (nbench, openssl)` for a
    /// run made by `import` from other tools' outputs or CSV (its stored
    /// profile is only the field's default); sysgauge runs imported from
    /// JSON keep their own profile.
    pub fn profile_shown(&self) -> String {
        match (self.status, self.tags.get("format")) {
            (RunStatus::Imported, Some(f)) if self.command == "import" => {
                format!("imported ({})", f.split(',').collect::<Vec<_>>().join(", "))
            }
            _ => self.profile.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still being written (or the process died without a trace).
    Running,
    Complete,
    /// Stopped by Ctrl-C; finished results are kept.
    Interrupted,
    /// Stopped by a fatal error.
    Failed,
    /// Brought in by `sysgauge import`.
    Imported,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Imported => "imported",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            "imported" => RunStatus::Imported,
            _ => return None,
        })
    }
}

/// How the measuring binary was built: numbers from a debug build are not
/// comparable with a release build's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildInfo {
    /// `release` or `debug`.
    pub profile: String,
    /// Target triple-ish description (`x86_64-linux`).
    pub target: String,
    /// Target features compiled in (`sse2`, `avx2`, `neon`, ...): the kernels'
    /// speed depends on them.
    pub target_features: Vec<String>,
}

/// How much time the run may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A few milliseconds per case, for tests and smoke checks. Numbers from
    /// it are not meaningful.
    Tiny,
    /// About 80 seconds for the whole suite on a 2-core machine.
    #[default]
    Quick,
    Standard,
    Full,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Tiny => "tiny",
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of one benchmark case (one id with one set of parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRecord {
    /// Stable dotted id, e.g. `hash.sha256`.
    pub bench_id: String,
    /// The part of the id before the first dot.
    pub family: String,
    /// Bumped when the work a benchmark does changes, so old and new numbers
    /// are never compared as like with like.
    pub workload_version: u32,
    /// The parameters that identify the case: only results with equal
    /// params are compared with each other.
    pub params: Params,
    /// Facts found while running that do not identify the case (iterations
    /// per repetition, a fallback taken, the device tested).
    pub details: Params,
    pub status: Status,
    pub started_at: DateTime<Utc>,
    /// Wall time the case took, including calibration and warm-up.
    pub duration_seconds: f64,
    /// The first metric is the headline value.
    pub metrics: Vec<Metric>,
    pub findings: Vec<Finding>,
}

impl ResultRecord {
    /// A case of `bench_id` (its family taken from the id) that starts now,
    /// with workload version 1 and no details or findings; callers set the
    /// rest on top.
    pub fn new(bench_id: &str, params: Params, status: Status, metrics: Vec<Metric>) -> Self {
        ResultRecord {
            bench_id: bench_id.to_string(),
            family: family_of(bench_id).to_string(),
            workload_version: 1,
            params,
            details: Params::new(),
            status,
            started_at: Utc::now(),
            duration_seconds: 0.0,
            metrics,
            findings: Vec::new(),
        }
    }

    pub fn primary(&self) -> Option<&Metric> {
        self.metrics.first()
    }
    pub fn is_ok(&self) -> bool {
        matches!(self.status, Status::Ok)
    }
    /// Why this result cannot be trusted as a measure of the machine (a
    /// write cache absorbed the writes, …): such a case is marked in
    /// comparisons and left out of every index, with this reason shown.
    pub fn untrusted(&self) -> Option<&str> {
        self.details.get_str(UNTRUSTED)
    }
    /// Why this result measures sysgauge's code more than the machine: its
    /// implementation is known to run slower than the best reference tool
    /// on this CPU's microarchitecture (the sentence says by how much).
    /// Comparisons mark such numbers "code-bound".
    pub fn code_bound(&self) -> Option<&str> {
        self.details.get_str(CODE_BOUND)
    }
    /// A count parameter (`threads`, `spawners`) as the case ran it: the
    /// number, or for [`ALL_CPUS`] the count the runner kept in the details.
    pub fn count_param(&self, key: &str) -> Option<u64> {
        match self.params.get(key)? {
            ParamValue::Text(t) if t == ALL_CPUS => self.details.get_u64(key),
            ParamValue::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
}

/// The detail that marks a result as untrustworthy, with the reason.
pub const UNTRUSTED: &str = "untrusted";

/// The detail of a result whose code is known to be slower than the best
/// reference on this CPU (see [`ResultRecord::code_bound`]).
pub const CODE_BOUND: &str = "code_bound";

/// The detail that says how a result's implementation compares with the
/// best reference known for this CPU's microarchitecture, faster or not.
pub const VS_REFERENCE: &str = "vs_reference";

/// The run tag holding a machine's inventory alias (`fleet run`): with the
/// host identity, what tells two machines apart.
pub const ALIAS_TAG: &str = "alias";

/// The run tag holding a machine's inventory groups (`fleet run`),
/// comma-separated (Ansible reserves the variable name `groups`, so no
/// inventory variable takes this tag).
pub const GROUPS_TAG: &str = "groups";

/// The value of a count parameter (`threads`, `spawners`) that means every
/// logical CPU the run may use. A case's identity names the workload ("all
/// the machine's CPUs"), never a count derived from the machine, so two
/// machines with different CPU counts still compare on it; the count itself
/// is kept in the result's details under the same key.
pub const ALL_CPUS: &str = "all";

/// Outcome of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Status {
    Ok,
    Skipped {
        reason: String,
        hint: Option<String>,
    },
    Failed {
        error: String,
    },
}

impl Status {
    pub fn label(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skipped { .. } => "skipped",
            Status::Failed { .. } => "failed",
        }
    }
}

/// One measured quantity with its raw samples (one per repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    pub name: String,
    pub unit: Unit,
    pub better: Better,
    pub samples: Vec<f64>,
    pub summary: Summary,
}

impl Metric {
    /// Build a metric from samples. Returns `None` when there are no samples
    /// or one is not finite (a broken measurement must fail loudly instead).
    pub fn new(name: &str, unit: Unit, better: Better, samples: Vec<f64>) -> Option<Metric> {
        let summary = Summary::from_samples(&samples)?;
        Some(Metric {
            name: name.to_string(),
            unit,
            better,
            samples,
            summary,
        })
    }

    /// The headline value (the median).
    pub fn value(&self) -> f64 {
        self.summary.median
    }
}

/// A methodology warning or observation attached to a result or a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// Stable kebab-case code (`noisy`, `dirty-pages`, `clock-below-nominal`).
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// What the user can do about it.
    pub remedy: Option<String>,
}

impl Finding {
    pub fn new(code: &str, severity: Severity, message: impl Into<String>) -> Finding {
        Finding {
            code: code.to_string(),
            severity,
            message: message.into(),
            remedy: None,
        }
    }
    pub fn with_remedy(mut self, remedy: impl Into<String>) -> Finding {
        self.remedy = Some(remedy.into());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the numbers are fine.
    Info,
    /// The numbers may be off; read the remedy.
    Warning,
    /// The numbers measure something other than intended.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// A parameter value: parameters identify a case, so they are exact values
/// (no floats).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Text(s) => f.write_str(s),
        }
    }
}

impl From<bool> for ParamValue {
    fn from(v: bool) -> Self {
        ParamValue::Bool(v)
    }
}
impl From<i64> for ParamValue {
    fn from(v: i64) -> Self {
        ParamValue::Int(v)
    }
}
impl From<u64> for ParamValue {
    fn from(v: u64) -> Self {
        ParamValue::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<u32> for ParamValue {
    fn from(v: u32) -> Self {
        ParamValue::Int(i64::from(v))
    }
}
impl From<usize> for ParamValue {
    fn from(v: usize) -> Self {
        ParamValue::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Text(v.to_string())
    }
}
impl From<String> for ParamValue {
    fn from(v: String) -> Self {
        ParamValue::Text(v)
    }
}

/// The parameters of a case, ordered by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<String, ParamValue>);

impl Params {
    pub fn new() -> Params {
        Params::default()
    }
    /// Builder-style insert.
    pub fn with(mut self, key: &str, value: impl Into<ParamValue>) -> Params {
        self.0.insert(key.to_string(), value.into());
        self
    }
    pub fn insert(&mut self, key: &str, value: impl Into<ParamValue>) {
        self.0.insert(key.to_string(), value.into());
    }
    pub fn get(&self, key: &str) -> Option<&ParamValue> {
        self.0.get(key)
    }
    pub fn get_int(&self, key: &str) -> Option<i64> {
        match self.0.get(key) {
            Some(ParamValue::Int(i)) => Some(*i),
            _ => None,
        }
    }
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get_int(key).and_then(|i| u64::try_from(i).ok())
    }
    pub fn get_str(&self, key: &str) -> Option<&str> {
        match self.0.get(key) {
            Some(ParamValue::Text(s)) => Some(s),
            _ => None,
        }
    }
    /// A count parameter (`threads`, `spawners`): its number, or `cpus` when
    /// it says [`ALL_CPUS`].
    pub fn get_count(&self, key: &str, cpus: usize) -> Option<usize> {
        match self.0.get(key)? {
            ParamValue::Text(t) if t == ALL_CPUS => Some(cpus),
            ParamValue::Int(i) => usize::try_from(*i).ok(),
            _ => None,
        }
    }
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        match self.0.get(key) {
            Some(ParamValue::Bool(b)) => Some(*b),
            _ => None,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Merge `other` into self (other wins).
    pub fn extend(&mut self, other: &Params) {
        for (k, v) in &other.0 {
            self.0.insert(k.clone(), v.clone());
        }
    }
    /// Canonical text used to match cases across runs: `k=v,k=v` sorted by key.
    pub fn canonical(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&parts.join(" "))
    }
}

/// The family of a benchmark id: the part before the first dot.
pub fn family_of(bench_id: &str) -> &str {
    bench_id.split('.').next().unwrap_or(bench_id)
}

/// A benchmark id is lowercase dotted words: `family.name[.more]`, each part
/// `[a-z0-9][a-z0-9_-]*`.
pub fn is_valid_bench_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
                && chars
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_canonical_and_display() {
        let p = Params::new()
            .with("threads", 1u32)
            .with("block_size", 8192u64)
            .with("mode", "seq");
        assert_eq!(p.canonical(), "block_size=8192,mode=seq,threads=1");
        assert_eq!(p.to_string(), "block_size=8192 mode=seq threads=1");
        assert_eq!(p.get_u64("block_size"), Some(8192));
        assert_eq!(p.get_str("mode"), Some("seq"));
        let json = serde_json::to_string(&p).unwrap_or_default();
        assert_eq!(json, r#"{"block_size":8192,"mode":"seq","threads":1}"#);
        let back: Params = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, p);
    }

    #[test]
    fn bench_ids() {
        assert!(is_valid_bench_id("hash.sha256"));
        assert!(is_valid_bench_id("crypto.aes-128-gcm"));
        assert!(is_valid_bench_id("disk.seq_write"));
        assert!(!is_valid_bench_id("hash"));
        assert!(!is_valid_bench_id("Hash.sha256"));
        assert!(!is_valid_bench_id("hash..x"));
        assert!(!is_valid_bench_id("hash.-x"));
        assert_eq!(family_of("crypto.aes-128-gcm"), "crypto");
    }

    #[test]
    fn status_json_shape() {
        let s = Status::Skipped {
            reason: "no b2sum".into(),
            hint: Some("apt-get install coreutils".into()),
        };
        let j = serde_json::to_value(&s).unwrap_or_default();
        assert_eq!(j["kind"], "skipped");
        assert_eq!(j["reason"], "no b2sum");
        let ok = serde_json::to_value(Status::Ok).unwrap_or_default();
        assert_eq!(ok, serde_json::json!({"kind": "ok"}));
    }

    #[test]
    fn metric_rejects_broken_samples() {
        assert!(Metric::new("x", Unit::MBps, Better::Higher, vec![]).is_none());
        assert!(Metric::new("x", Unit::MBps, Better::Higher, vec![f64::NAN]).is_none());
        let m = Metric::new("x", Unit::MBps, Better::Higher, vec![1.0, 3.0, 2.0]);
        assert_eq!(m.map(|m| m.value()), Some(2.0));
    }
}
