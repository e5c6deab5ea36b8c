//! The `ssh` family: which SSH cipher, MAC and key exchange are fastest
//! here, measured with the real OpenSSH client against a real server (a
//! private `sshd` on 127.0.0.1 by default, or a given host).
//!
//! Two benchmarks, one case per algorithm combination:
//! - `ssh.transfer`: throughput of `size` bytes of zeros pushed through
//!   `ssh` into `cat > /dev/null` on the far side (params `cipher`, `mac`,
//!   `kex`, `size`, `mode`), in MB/s, timed from the first byte written to
//!   ssh's exit, after the remote shell has signalled that `cat` is about to
//!   read (see `client`): the handshake is not inside. Metric: `throughput`
//!   (MB/s); detail `setup_ms` (median ms from starting ssh to the remote
//!   command running). With `sysgauge ssh --sink PATH` the far side writes
//!   into that file instead (`sink`: param `sink=file`, details
//!   `sink_path` and `sink_bytes_written`).
//! - `ssh.handshake`: `ssh HOST true` from start to exit: connect, key
//!   exchange, authentication, remote command (params `kex`, `cipher`,
//!   `mac`, `mode`). Metrics: `handshake` (ms), `auth` (ms until ssh reports
//!   "Authenticated", which leaves the remote shell's start-up out).
//!
//! Every case first makes one untimed verifying connection with `ssh -v`:
//! the negotiated cipher, MAC and kex must be the requested ones, and for a
//! transfer the far side counts the bytes (`wc -c`) and must have received
//! them all (1 MB). That connection is the first warm-up run; further
//! `--warmup` runs are full-size transfers.
//!
//! Which combinations: `sysgauge ssh` discovers what the server accepts
//! before the run (`session::Session::discover`) and hands the planned
//! matrix and the open session in through `SshOptions`; inside `sysgauge
//! run --only ssh` (the family is not in the default run: it takes minutes)
//! a small fixed slice runs and the session is a fixture of the family,
//! opened on first use and closed (server stopped, keys removed) when the
//! family ends.

pub mod algorithms;
pub mod client;
pub mod planning;
pub mod report;
pub mod server;
pub mod session;
pub mod sink;

use algorithms::{is_aead, Combo, Kind, MatrixPlan, IMPLICIT_MAC};
use client::{Input, LogLevel, Outcome, Request, Restrict, SshError, REMOTE_COUNT, REMOTE_DISCARD};
use session::{ClientSettings, OpenError, Session, Target};
use sink::Sink;
use std::sync::Arc;
use sysgauge_core::record::{Finding, Severity};
use sysgauge_core::{
    BenchError, Benchmark, Better, CancelToken, Clock, Description, Metric, Params, Phase, Plan,
    Profile, Requirement, Rule, RunCtx, Unit,
};
use sysgauge_family::util::{metric, throughput_mbps};

pub const TRANSFER_ID: &str = "ssh.transfer";
pub const HANDSHAKE_ID: &str = "ssh.handshake";

/// Details of a factorial matrix's transfer: the fixed cipher (the one the
/// MAC sweep used) and the fixed MAC (the one every cipher was measured
/// with), so the report ranks each class in its own sweep.
pub const FIXED_CIPHER_DETAIL: &str = "fixed_cipher";
pub const FIXED_MAC_DETAIL: &str = "fixed_mac";

/// Finding: the remote shell's start-up is a large part of the handshake.
pub const SLOW_SHELL: &str = "ssh-slow-remote-shell";
/// Remote command time (handshake − auth) above which `SLOW_SHELL` is raised.
const SLOW_SHELL_MS: f64 = 100.0;

/// The verifying transfer's size when there is no warm-up to reuse: odd,
/// so a count that is off by a buffer shows.
const VERIFY_BYTES: u64 = 1_048_589;

/// The zero buffer fed to ssh, written repeatedly.
const ZERO_BUFFER: usize = 1 << 20;

/// What the command line chose; defaults follow the profile.
#[derive(Debug, Clone, Default)]
pub struct SshOptions {
    pub target: Target,
    pub client: ClientSettings,
    /// Bytes per transfer; `None`: the profile's (`default_size`).
    pub size: Option<u64>,
    /// The combinations to measure (from discovery); `None`: the small
    /// slice of `sysgauge run`.
    pub plan: Option<MatrixPlan>,
    /// A session opened (and probed) before the run by `sysgauge ssh`.
    pub session: Option<Arc<Session>>,
    /// `--sink`: transfers are written into this file on the far side
    /// (checked there before the run) instead of `/dev/null`.
    pub sink: Option<Sink>,
}

impl SshOptions {
    /// The combinations to measure: the planned ones, or the profile's slice.
    fn matrix(&self, profile: Profile) -> MatrixPlan {
        self.plan.clone().unwrap_or_else(|| slice(profile))
    }
}

/// Bytes per transfer for a profile. A fresh ssh connection needs its
/// first tens of MB to reach full speed (docs/performance.md), which every
/// real copy pays too; the default keeps that start-up a small share of a
/// transfer at fast-cipher speeds while the factorial matrix still fits in
/// minutes. The tail (end of data, exit status, exit) is negligible next to
/// that.
pub fn default_size(profile: Profile) -> u64 {
    match profile {
        Profile::Tiny => 1_000_000,
        Profile::Quick => 500_000_000,
        Profile::Standard => 1_000_000_000,
        Profile::Full => 4_000_000_000,
    }
}

/// The slice `sysgauge run --only ssh` measures: the two AEAD ciphers
/// OpenSSH prefers and the fixed MAC combination, one key exchange.
fn slice(profile: Profile) -> MatrixPlan {
    let kex = "curve25519-sha256";
    let fixed = Combo::new("aes128-ctr", "umac-128-etm@openssh.com", kex);
    match profile {
        Profile::Tiny => MatrixPlan {
            transfers: vec![Combo::new(
                "chacha20-poly1305@openssh.com",
                IMPLICIT_MAC,
                kex,
            )],
            handshakes: vec![fixed],
            fixed: None,
        },
        _ => MatrixPlan {
            transfers: vec![
                Combo::new("aes128-gcm@openssh.com", IMPLICIT_MAC, kex),
                Combo::new("chacha20-poly1305@openssh.com", IMPLICIT_MAC, kex),
                fixed.clone(),
            ],
            handshakes: vec![fixed],
            fixed: None,
        },
    }
}

fn combo_params(c: &Combo) -> Params {
    Params::new()
        .with("cipher", c.cipher.as_str())
        .with("mac", c.mac.as_str())
        .with("kex", c.kex.as_str())
}

fn combo_of(params: &Params) -> Result<Combo, BenchError> {
    let get = |k: &str| {
        params
            .get_str(k)
            .map(str::to_string)
            .ok_or_else(|| BenchError::failed(format!("missing param '{k}'")))
    };
    Ok(Combo {
        cipher: get("cipher")?,
        mac: get("mac")?,
        kex: get("kex")?,
    })
}

/// The ssh options that restrict a connection to one combination.
pub fn restrict_of(c: &Combo) -> Restrict {
    Restrict {
        cipher: Some(c.cipher.clone()),
        mac: (c.mac != IMPLICIT_MAC).then(|| c.mac.clone()),
        kex: Some(c.kex.clone()),
    }
}

/// The session shared by the family's cases when `sysgauge run` drives it.
struct SessionSlot(Result<Arc<Session>, OpenError>);

fn open_error(e: &OpenError) -> BenchError {
    match e {
        OpenError::Skip { reason, hint } => BenchError::skip(reason.clone(), hint.clone()),
        OpenError::Failed(m) => BenchError::failed(m.clone()),
        OpenError::Cancelled => BenchError::Cancelled,
    }
}

fn session_for(options: &Arc<SshOptions>, ctx: &mut RunCtx) -> Result<Arc<Session>, BenchError> {
    if let Some(s) = &options.session {
        return Ok(s.clone());
    }
    let o = options.clone();
    let slot: &mut SessionSlot = ctx.fixture("ssh.session", |c| {
        let base = c.scratch_dir()?;
        let cancel = c.cancel_token().clone();
        // A failure is kept, so an unreachable host costs one timeout, not
        // one per case.
        Ok(SessionSlot(
            Session::open(
                &o.target,
                &o.client,
                &server::ServerOptions::default(),
                &base,
                &cancel,
            )
            .map(Arc::new),
        ))
    })?;
    slot.0.as_ref().map(Arc::clone).map_err(open_error)
}

/// A connection's failure as the case's outcome: a rejected algorithm is a
/// fact about the server (skipped), anything else a failure.
fn case_error(session: &Session, e: SshError) -> BenchError {
    match e {
        SshError::Cancelled => BenchError::Cancelled,
        SshError::NoMatch { kind, offer, .. } => BenchError::skip(
            format!("the server does not accept this {}", kind.label()),
            format!("the server offers: {offer}"),
        ),
        SshError::UnknownAlgorithm { kind, name } => unsupported(kind, &name),
        e => BenchError::failed(session.with_server_log(e).to_string()),
    }
}

/// The skip of a case whose algorithm this ssh client does not know.
fn unsupported(kind: Kind, name: &str) -> BenchError {
    BenchError::skip(
        format!(
            "this ssh client does not support the {} '{name}'",
            kind.label()
        ),
        "ssh -Q cipher|mac|kex lists what it supports",
    )
}

fn check_client(session: &Session, c: &Combo) -> Result<(), BenchError> {
    let mut wanted = vec![(Kind::Cipher, &c.cipher), (Kind::Kex, &c.kex)];
    if c.mac != IMPLICIT_MAC {
        wanted.push((Kind::Mac, &c.mac));
    }
    for (kind, name) in wanted {
        if !session.client.supports(kind, name) {
            return Err(unsupported(kind, name));
        }
    }
    if is_aead(&c.cipher) != (c.mac == IMPLICIT_MAC) {
        return Err(BenchError::failed(format!(
            "inconsistent combination {c}: AEAD ciphers take no MAC, others need one"
        )));
    }
    Ok(())
}

/// The verifying connection's checks: what was negotiated is what was asked.
fn check_negotiated(ctx: &mut RunCtx, c: &Combo, stderr: &str) -> Result<(), BenchError> {
    let n = client::parse_negotiated(stderr);
    let pairs = [
        ("cipher", &n.cipher, &c.cipher),
        ("MAC", &n.mac, &c.mac),
        ("key exchange", &n.kex, &c.kex),
    ];
    for (what, got, want) in pairs {
        match got {
            Some(g) if g == want => {}
            Some(g) => {
                return Err(BenchError::failed(format!(
                    "asked for the {what} {want} but the connection used {g}"
                )))
            }
            None => {
                return Err(BenchError::failed(format!(
                    "ssh -v did not say which {what} was negotiated; cannot verify the case"
                )))
            }
        }
    }
    if let Some(h) = n.host_key {
        ctx.note_detail("host_key", h);
    }
    if let Some(v) = n.server_version {
        ctx.note_detail("server_version", v);
    }
    Ok(())
}

fn note_session(ctx: &mut RunCtx, session: &Session) {
    ctx.note_detail("server", session.label());
    ctx.note_detail("client_version", session.client.version.as_str());
}

/// The connections of one case: its session (checked against the
/// combination and noted in the record), the combination's restriction, and
/// the run's clock and cancellation.
struct CaseConnections {
    session: Arc<Session>,
    restrict: Restrict,
    cancel: CancelToken,
    clock: Arc<dyn Clock>,
}

impl CaseConnections {
    fn open(
        options: &Arc<SshOptions>,
        ctx: &mut RunCtx,
        combo: &Combo,
    ) -> Result<CaseConnections, BenchError> {
        let session = session_for(options, ctx)?;
        check_client(&session, combo)?;
        note_session(ctx, &session);
        Ok(CaseConnections {
            restrict: restrict_of(combo),
            cancel: ctx.cancel_token().clone(),
            clock: ctx.clock().clone(),
            session,
        })
    }

    /// One connection running `remote_command`, fed `input` (a `Zeros`
    /// input is sent from `zeros`), within the session's time limits.
    fn run(
        &self,
        log_level: LogLevel,
        remote_command: &str,
        input: Input,
        zeros: &[u8],
    ) -> Result<Outcome, BenchError> {
        let settings = &self.session.settings;
        let request = Request {
            restrict: &self.restrict,
            log_level,
            remote_command,
            input,
            connect_deadline: settings.connect_deadline(),
            stall_timeout: settings.stall_timeout(),
        };
        let now = || self.clock.now();
        self.session
            .command()
            .run(&request, zeros, &now, &self.cancel)
            .map_err(|e| case_error(&self.session, e))
    }
}

/// Removes the sink file on the far side when the case ends, however it
/// ends (its own connection, not cut short by a Ctrl-C that stopped the
/// case).
struct SinkRemoval<'a> {
    connections: &'a CaseConnections,
    sink: &'a Sink,
}

impl Drop for SinkRemoval<'_> {
    fn drop(&mut self) {
        let c = self.connections;
        let removed = c.session.run_command(
            &c.restrict,
            &self.sink.remove_command(),
            &CancelToken::new(),
        );
        if let Err(e) = removed {
            // Not eprintln!: a closed stderr must not panic in a drop.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "sysgauge: could not remove the sink file {} on the far side: {e}",
                self.sink.path()
            );
        }
    }
}

fn requirements_for(target: &Target) -> Vec<Requirement> {
    let mut v = vec![Requirement::program("ssh", "openssh-client")];
    if *target == Target::Local {
        v.push(Requirement::program("ssh-keygen", "openssh-client"));
        v.push(Requirement::program(server::SSHD, "openssh-server"));
    }
    v
}

/// What an ssh case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SshMeasure {
    /// `ssh.transfer`: throughput of a transfer per cipher/MAC/kex.
    Transfer,
    /// `ssh.handshake`: the time of `ssh HOST true` per kex.
    Handshake,
}

/// The two ssh benchmarks: the same session and requirements, their own
/// combinations and measurement.
pub struct SshBenchmark {
    measure: SshMeasure,
    options: Arc<SshOptions>,
}

impl Benchmark for SshBenchmark {
    fn id(&self) -> &str {
        match self.measure {
            SshMeasure::Transfer => TRANSFER_ID,
            SshMeasure::Handshake => HANDSHAKE_ID,
        }
    }

    fn describe(&self) -> Description {
        match self.measure {
            SshMeasure::Transfer => Description::new("throughput of zeros pushed through ssh into `cat > /dev/null` (or the --sink file) on the far side, per cipher/MAC/kex (handshake excluded)", Unit::MBps, Better::Higher),
            SshMeasure::Handshake => Description::new("time of `ssh HOST true`: connect, key exchange, authentication, remote command; per kex (and cipher/MAC)", Unit::Milliseconds, Better::Lower),
        }
    }

    fn requirements(&self) -> Vec<Requirement> {
        requirements_for(&self.options.target)
    }

    fn cases(&self, plan: &Plan) -> Vec<Params> {
        match self.measure {
            SshMeasure::Transfer => transfer_cases(&self.options, plan),
            SshMeasure::Handshake => handshake_cases(&self.options, plan),
        }
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let combo = combo_of(params)?;
        match self.measure {
            SshMeasure::Transfer => transfer(&self.options, ctx, params, &combo),
            SshMeasure::Handshake => handshake(&self.options, ctx, &combo),
        }
    }
}

/// `ssh.transfer`'s cases: the planned transfer combinations at one size.
fn transfer_cases(options: &SshOptions, plan: &Plan) -> Vec<Params> {
    let size = options.size.unwrap_or_else(|| default_size(plan.profile));
    let matrix = options.matrix(plan.profile);
    matrix
        .transfers
        .iter()
        .map(|c| {
            let p = combo_params(c)
                .with("size", size)
                .with("mode", options.target.mode());
            // Only a sink adds the param: default cases keep the params
            // they were stored with.
            match options.sink {
                Some(_) => p.with(sink::SINK_PARAM, sink::SINK_FILE),
                None => p,
            }
        })
        .collect()
}

/// One transfer case: a small verifying transfer (counted on the far
/// side), then the timed ones.
fn transfer(
    options: &Arc<SshOptions>,
    ctx: &mut RunCtx,
    params: &Params,
    combo: &Combo,
) -> Result<Vec<Metric>, BenchError> {
    let size = params
        .get_u64("size")
        .filter(|&s| s > 0)
        .ok_or_else(|| BenchError::failed("missing param 'size'"))?;
    let connections = CaseConnections::open(options, ctx, combo)?;
    // Allocated and touched before anything is timed.
    let mut zeros = vec![1u8; ZERO_BUFFER];
    zeros.iter_mut().for_each(|b| *b = 0);
    let zeros = std::hint::black_box(zeros);
    let run = |log_level, remote_command, bytes| {
        connections.run(log_level, remote_command, Input::Zeros(bytes), &zeros)
    };
    // The verifying transfer is small and counts as the first warm-up:
    // every transfer is a fresh connection, so what a warm-up warms is
    // the programs' pages, not the connection.
    let verify_bytes = size.min(VERIFY_BYTES);
    let v = run(LogLevel::Debug1, REMOTE_COUNT, verify_bytes)?;
    check_negotiated(ctx, combo, &v.stderr)?;
    let counted = v.after_marker();
    if counted.parse::<u64>().ok() != Some(verify_bytes) {
        return Err(BenchError::failed(format!(
            "sent {verify_bytes} bytes but the far side counted '{counted}'"
        )));
    }
    ctx.note_detail("verified_bytes", verify_bytes);
    if let Some(f) = options.plan.as_ref().and_then(|p| p.fixed.as_ref()) {
        ctx.note_detail(FIXED_CIPHER_DETAIL, f.cipher.as_str());
        ctx.note_detail(FIXED_MAC_DETAIL, f.mac.as_str());
    }
    let sink = options
        .sink
        .as_ref()
        .filter(|_| params.get_str(sink::SINK_PARAM) == Some(sink::SINK_FILE));
    let (remote_command, _removal) = match sink {
        Some(s) => {
            ctx.note_detail(sink::SINK_PATH_DETAIL, s.path());
            let removal = SinkRemoval {
                connections: &connections,
                sink: s,
            };
            (s.transfer_command(), Some(removal))
        }
        None => (REMOTE_DISCARD.to_string(), None),
    };
    let mut mbps = Vec::new();
    let mut setup = Vec::new();
    let mut written = None;
    fixed_runs(ctx, |phase| {
        let o = run(LogLevel::Info, &remote_command, size)?;
        if let Some(s) = sink {
            // The far side printed the file's size after writing it.
            match Sink::written(&o) {
                Some(n) if n == size => written = Some(n),
                _ => {
                    return Err(BenchError::failed(format!(
                        "sent {size} bytes but the sink file {} holds '{}'",
                        s.path(),
                        o.after_marker()
                    )))
                }
            }
        }
        if phase == Phase::Warmup {
            return Ok(0.0);
        }
        let (Some(start), Some(ready)) = (o.data_start, o.ready) else {
            return Err(BenchError::failed("the transfer has no start time"));
        };
        let secs = o.ended.saturating_sub(start).as_secs_f64();
        if secs <= 0.0 {
            return Err(BenchError::failed(
                "a transfer took no measurable time; the clock is too coarse",
            ));
        }
        mbps.push(size as f64 / secs / 1e6);
        setup.push(ready.saturating_sub(o.spawned).as_secs_f64() * 1e3);
        Ok(size as f64 / secs / 1e6)
    })?;
    // The set-up time is a detail, not a metric: it is the handshake
    // plus the remote shell, which `ssh.handshake` measures properly.
    if let Some(s) = sysgauge_stats::Summary::from_samples(&setup) {
        ctx.note_detail("setup_ms", s.median.round() as i64);
    }
    if let Some(n) = written {
        ctx.note_detail(sink::SINK_BYTES_DETAIL, n);
    }
    throughput_mbps(mbps)
}

/// The warm-ups left after the verifying connection (which is the first)
/// and the `--repetitions` timed ones, through the core sampler.
fn fixed_runs<F>(ctx: &RunCtx, op: F) -> Result<(), BenchError>
where
    F: FnMut(Phase) -> Result<f64, BenchError>,
{
    let rule = Rule::Fixed {
        runs: u64::from(ctx.repetitions()),
    };
    let warmup = u64::from(ctx.warmup().saturating_sub(1));
    ctx.sampler().run(warmup, &rule, op).map(|_| ())
}

/// `ssh.handshake`'s cases: the planned handshake combinations.
fn handshake_cases(options: &SshOptions, plan: &Plan) -> Vec<Params> {
    let matrix = options.matrix(plan.profile);
    matrix
        .handshakes
        .iter()
        .map(|c| combo_params(c).with("mode", options.target.mode()))
        .collect()
}

/// One handshake case: a verifying connection, then the timed ones.
fn handshake(
    options: &Arc<SshOptions>,
    ctx: &mut RunCtx,
    combo: &Combo,
) -> Result<Vec<Metric>, BenchError> {
    let connections = CaseConnections::open(options, ctx, combo)?;
    let run = |log_level| connections.run(log_level, "true", Input::Null, &[]);
    let v = run(LogLevel::Debug1)?;
    check_negotiated(ctx, combo, &v.stderr)?;
    let mut total = Vec::new();
    let mut auth = Vec::new();
    fixed_runs(ctx, |phase| {
        let o = run(LogLevel::Verbose)?;
        if phase == Phase::Warmup {
            return Ok(0.0);
        }
        let ms = o.ended.saturating_sub(o.spawned).as_secs_f64() * 1e3;
        total.push(ms);
        if let Some(a) = o.authenticated {
            auth.push(a.saturating_sub(o.spawned).as_secs_f64() * 1e3);
        }
        Ok(ms)
    })?;
    let mut metrics = vec![metric(
        "handshake",
        Unit::Milliseconds,
        Better::Lower,
        total.clone(),
    )?];
    // "Authenticated to" is a VERBOSE line since OpenSSH 7.x; without it
    // (older clients) only the total is reported.
    if auth.len() == total.len() {
        let shell: Vec<f64> = total.iter().zip(&auth).map(|(t, a)| t - a).collect();
        let shell_ms = sysgauge_stats::Summary::from_samples(&shell)
            .map(|s| s.median)
            .unwrap_or(0.0);
        ctx.note_detail("remote_command_ms", shell_ms.round() as i64);
        if shell_ms > SLOW_SHELL_MS {
            ctx.finding(
                Finding::new(
                    SLOW_SHELL,
                    Severity::Info,
                    format!(
                        "running `true` on the far side takes over {SLOW_SHELL_MS:.0} ms after authentication: the login shell's start-up files (e.g. ~/.bashrc, which bash reads for ssh commands) run for every ssh command; the `handshake` times include them, the `auth` times do not"
                    ),
                )
                .with_remedy("compare key exchanges by the `auth` metric, or trim the remote shell's start-up files"),
            );
        }
        metrics.push(metric("auth", Unit::Milliseconds, Better::Lower, auth)?);
    }
    Ok(metrics)
}

// Real ssh connections through a private sshd: minutes for the
// factorial matrix, so not in the default run. The slice only
// describes `sysgauge run --only ssh`; the cases run a fixed number
// of transfers of a fixed size whatever the budget.
sysgauge_family::register_family! {
    name: "ssh", options: SshOptions, in_default_run: false,
    cpu_bound: false, summary_first: false,
    budget_seconds: [2.0, 30.0, 120.0, 600.0], report: Some(|run, format| report::ssh_report(run, format, false)),
    summary: "OpenSSH cipher, MAC and key exchange speed: transfer throughput and handshake time (private sshd on loopback, or --host)",
}

/// The ssh benchmarks.
pub fn benchmarks(options: &Arc<SshOptions>) -> Vec<Box<dyn Benchmark>> {
    vec![
        Box::new(SshBenchmark {
            measure: SshMeasure::Transfer,
            options: options.clone(),
        }),
        Box::new(SshBenchmark {
            measure: SshMeasure::Handshake,
            options: options.clone(),
        }),
    ]
}

/// Rough seconds one planned run takes: each case makes its (small)
/// verifying connection, the extra warm-ups and the timed runs; a
/// connection costs `connect` seconds, a transfer `size / rate` more.
pub fn estimate_seconds(
    plan: &MatrixPlan,
    size: u64,
    warmup: u32,
    repetitions: u32,
    connect: f64,
    bytes_per_second: f64,
) -> f64 {
    let full = f64::from(warmup.saturating_sub(1) + repetitions);
    let connections = full + 1.0;
    let transfer = size as f64 / bytes_per_second.max(1.0);
    let t = plan.transfers.len() as f64 * (connections * connect + full * transfer);
    let h = plan.handshakes.len() as f64 * connections * connect;
    t + h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_and_params() {
        let opts = Arc::new(SshOptions::default());
        let b = benchmarks(&opts);
        let plan = Plan {
            profile: Profile::Tiny,
            threads: 1,
        };
        let t = b[0].cases(&plan);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].get_str("mac"), Some(IMPLICIT_MAC));
        assert_eq!(t[0].get_u64("size"), Some(1_000_000));
        assert_eq!(t[0].get_str("mode"), Some("local"));
        // The default workload's params are those stored before --sink.
        assert!(t[0].get("sink").is_none());
        let to_file = Arc::new(SshOptions {
            sink: Some(Sink::new(std::path::Path::new("/srv/sink")).unwrap()),
            ..SshOptions::default()
        });
        let t2 = benchmarks(&to_file)[0].cases(&plan);
        assert_eq!(t2[0].get_str("sink"), Some("file"));
        assert_eq!(benchmarks(&to_file)[1].cases(&plan)[0].get("sink"), None);
        let h = b[1].cases(&plan);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].get_str("kex"), Some("curve25519-sha256"));
        assert!(h[0].get("size").is_none());
        let quick = b[0].cases(&Plan {
            profile: Profile::Quick,
            threads: 1,
        });
        assert_eq!(quick.len(), 3);
        let r = requirements_for(&Target::Local);
        assert_eq!(r.len(), 3);
        assert_eq!(
            requirements_for(&Target::Remote {
                user: None,
                host: "h".into(),
                port: None
            })
            .len(),
            1
        );
    }

    #[test]
    fn estimates() {
        let plan = MatrixPlan {
            transfers: vec![Combo::new("a", "m", "k"); 2],
            handshakes: vec![Combo::new("a", "m", "k"); 3],
            fixed: None,
        };
        // 4 connections per case (the small verifying one, 3 timed), of
        // which 3 carry 1 s of data: transfers 2 × (4 × 0.5 + 3 × 1 s),
        // handshakes 3 × 4 × 0.5 s.
        let s = estimate_seconds(&plan, 100_000_000, 1, 3, 0.5, 100e6);
        assert!((s - (10.0 + 6.0)).abs() < 1e-9, "{s}");
    }
}
