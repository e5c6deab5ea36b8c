//! sysgauge-core: the contract shared by every part of sysgauge.
//!
//! - `record`: the records a run produces (`RunRecord`, `ResultRecord`,
//!   `Metric`, `Finding`, `Status`, `Params`) and `SCHEMA_VERSION`;
//! - `host`: the shape of the machine facts stored with every run;
//! - `bench`: the `Benchmark` trait and its requirements and errors;
//! - `ctx`: `RunCtx`, its ways into the sampler, scratch space and fixtures;
//! - `runner`: plans and runs cases (in `--rounds`) and feeds `Sink`s;
//! - `rounds`: one record from a case's rounds, and whether it repeats;
//! - `sampler`: the one measuring loop (warm-up, stopping rules, cancel);
//! - `select`: the one `--only`/`--skip` grammar;
//! - `size`: nice-number parsing (`1M` = 10^6, `1MiB` = 2^20);
//! - `clock`, `cancel`, `scratch`: the monotonic clock, Ctrl-C, clean-up;
//! - `file`: reading a file argument: a regular file of bounded size.

#![forbid(unsafe_code)]

pub mod bench;
pub mod cancel;
pub mod clock;
pub mod ctx;
pub mod file;
pub mod host;
pub mod microarch;
pub mod monitor;
pub mod record;
pub mod rounds;
pub mod runner;
pub mod sampler;
pub mod scratch;
pub mod select;
pub mod size;
pub mod text;
pub mod unit;

pub use bench::{BenchError, Benchmark, Description, IoContext, Plan, Requirement};
pub use cancel::CancelToken;
pub use clock::{Clock, FakeClock, MonotonicClock};
pub use ctx::{CaseOutput, CtxSettings, RunCtx};
pub use host::HostInfo;
pub use monitor::{CaseMonitor, CaseWatch, Observed, DISTURBED};
pub use record::{
    family_of, is_valid_bench_id, BuildInfo, Finding, Metric, ParamValue, Params, Profile,
    ResultRecord, RunRecord, RunStatus, Severity, Status, ALL_CPUS, SCHEMA_VERSION, UNTRUSTED,
};
pub use runner::{Runner, RunnerConfig, Sink, SinkError, Sinks};
pub use sampler::{Calibration, Phase, Rule, Sampled, Sampler, Stop};
pub use select::{SelectError, Selector};
pub use sysgauge_stats::Summary;
pub use unit::{Better, Unit};
