//! The network matrix on the hosts (`sysgauge fleet net`): every ordered
//! pair of hosts measured with the ordinary `ping` and `net` commands of
//! the sysgauge placed on each host.
//!
//! The run, in phases:
//! 1. every host in parallel: connect, place the binary ([`remote::place`]),
//!    and write the run's key (made for this run by the caller, handed over
//!    through ssh's stdin into a 0600 file, never on a command line);
//! 2. every host starts `sysgauge listen --serve` for the run (the 2ping
//!    listener and the net service, both keyed, the service's per-source
//!    UDP limit off since only keyed peers are served), and the matrix
//!    waits until each says it listens;
//! 3. every host pings all the others at once, at a low rate, for the
//!    whole run (2ping: round trip, and loss split into outbound and
//!    inbound), while
//! 4. the throughput and packet-rate tests run as the tournament of
//!    [`schedule::tournament`]: in each round a set of disjoint ordered
//!    pairs, the sender running `sysgauge net --peer` against the
//!    receiver's service, so no host is in two such tests at once;
//! 5. clean-up on every host whatever happened: the listeners are stopped
//!    and the private directories removed ([`Placed::clean_up`]).
//!
//! A host that cannot be placed is reported and left out; the pairs it is
//! in are not measured. A pair test that fails is recorded against its
//! sender and the rounds go on. Ctrl-C (or the deadline) stops starting
//! new work. The hosts' pings, which run for the whole matrix and so are
//! always cut off, are asked to stop (SIGINT, all hosts at once) and their
//! records, which say `interrupted`, awaited for [`PING_GRACE`]; what
//! else runs is stopped by the clean-up, its record lost.

use crate::inventory::Host;
use crate::remote::{self, Failure, Placed, Plan};
use crate::schedule::{self, Pair};
use crate::ssh::{last_line, SshError};
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use sysgauge_core::CancelToken;

/// The name of the key file in each host's private directory.
const KEY_FILE: &str = "run.key";

/// The environment variables the key is handed to the placed sysgauge in:
/// the 2ping key (`ping`, `listen`) and the net service's (`net`,
/// `listen --serve`).
const KEY_ENV: &[(&str, &str)] = &[
    ("SYSGAUGE_2PING_KEY", KEY_FILE),
    ("SYSGAUGE_NET_KEY", KEY_FILE),
];

/// How far ahead a fleet flood's common window starts (`net --flood-at`):
/// time for every host's ssh session to start its sysgauge and set up.
const FLOOD_LEAD: Duration = Duration::from_secs(3);

/// How long the clean-up lets what runs on a host (listener, pings, a
/// pair test, a flood) stop after SIGINT before SIGKILL. None of it keeps
/// anything outside the private directory, which goes anyway, and a
/// stopped matrix should end promptly: a flood step took 5 s to notice
/// its SIGINT.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// How long a host's pings have, once asked to stop, to end and send
/// their record home: the ping stops sending within 0.1 s of SIGINT and
/// prints its record at once; the rest is an ssh round trip to ask, and
/// one to bring the record home, on a busy host. Every host's pings are
/// asked at the same moment, so this is also the whole matrix's wait, and
/// the clean-up's [`STOP_GRACE`] follows: a stopped matrix still ends
/// within a few seconds.
pub const PING_GRACE: Duration = Duration::from_millis(1500);

/// How long the listeners outlive the matrix's deadline by themselves
/// (their `-w`; the clean-up stops them before): the pings stopped at the
/// deadline are answered until they stop, so that their last probes are
/// not counted as lost.
const LISTEN_BEYOND: Duration = Duration::from_secs(3);

/// How long a listener may take to say it listens.
const LISTEN_READY: Duration = Duration::from_secs(30);

/// What the matrix runs, and how.
#[derive(Debug, Clone)]
pub struct MatrixPlan {
    /// Binaries, ssh settings, control directory and the per-host timeout
    /// (here: the most the whole matrix may take); `args` is not used.
    pub plan: Plan,
    /// The run's shared key (the listeners accept nothing else).
    pub key: String,
    /// `ping` options after the command name, before the peers (count,
    /// interval, …); the matrix adds `--json - --no-store -q --no-wait`.
    pub ping_args: Vec<String>,
    /// `net` options of a pair test, after `--peer ADDRESS` (the
    /// profile); empty: no throughput rounds.
    pub pair_args: Vec<String>,
}

/// One host of the matrix: the inventory host and the address the other
/// hosts measure it at.
#[derive(Debug, Clone)]
pub struct MatrixHost {
    pub host: Host,
    pub net_address: String,
}

/// What the matrix tells its caller while it runs; `usize` is the host's
/// index.
#[derive(Debug)]
pub enum Event {
    /// A host's new state, for its progress line.
    Stage(usize, String),
    /// A host could not take part (placing or its listener failed).
    HostFailed(usize, Failure),
    /// A run record a host printed (its pings, or one pair test as sender).
    Record(usize, String),
    /// A pair test, or a host's pings (`to` = `None`), failed.
    PairFailed {
        from: usize,
        to: Option<usize>,
        reason: String,
    },
}

/// `address` as `net --peer` and `ping` take it: an IPv6 address in
/// brackets only where a port follows, so bare here.
fn peer_arg(address: &str) -> String {
    address.to_string()
}

/// The service's bind addresses for a host measured at `address`: that
/// address when it is an IP address, else every address of both families.
fn serve_binds(address: &str) -> Vec<String> {
    match address.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![ip.to_string()],
        Err(_) => vec!["0.0.0.0".into(), "::".into()],
    }
}

/// Runs the matrix over `hosts`, sending events to `tx`. Returns when
/// every host is cleaned up.
pub fn run(hosts: &[MatrixHost], mp: &MatrixPlan, cancel: &CancelToken, tx: mpsc::Sender<Event>) {
    let deadline = Instant::now() + mp.plan.timeout;
    // 1. Place.
    let placed = place_all(hosts, mp, deadline, cancel, &tx);

    // 2. Listeners.
    let mut listeners: Vec<Option<Child>> = Vec::with_capacity(hosts.len());
    for (i, p) in placed.iter().enumerate() {
        let Some(p) = p else {
            listeners.push(None);
            continue;
        };
        let _ = tx.send(Event::Stage(i, "starting its listener".into()));
        let remaining = deadline.saturating_duration_since(Instant::now());
        let mut args: Vec<String> = vec![
            "listen".into(),
            "-q".into(),
            "--serve".into(),
            "--serve-udp-rate".into(),
            "0".into(),
            "-w".into(),
            format!("{}", (remaining + LISTEN_BEYOND).as_secs()),
        ];
        for b in serve_binds(&hosts[i].net_address) {
            args.push("--serve-bind".into());
            args.push(b);
        }
        listeners.push(match p.spawn(&args, KEY_ENV) {
            Ok(child) => Some(child),
            Err(e) => {
                let _ = tx.send(Event::HostFailed(
                    i,
                    Failure::new(format!("cannot start its listener: {e}")),
                ));
                None
            }
        });
    }
    let ready: Vec<bool> = listeners
        .iter_mut()
        .enumerate()
        .map(|(i, l)| match l {
            None => false,
            Some(child) => match wait_listening(child, serve_binds(&hosts[i].net_address).len()) {
                Ok(()) => true,
                Err(reason) => {
                    let _ = tx.send(Event::HostFailed(
                        i,
                        Failure::new(format!("its listener did not start: {reason}")),
                    ));
                    false
                }
            },
        })
        .collect();
    let live: Vec<usize> = (0..hosts.len())
        .filter(|&i| ready[i] && placed[i].is_some())
        .collect();

    // 3 and 4. Pings alongside the rounds.
    if live.len() >= 2 && !cancel.is_cancelled() {
        std::thread::scope(|s| {
            for &i in &live {
                let (tx, placed) = (tx.clone(), &placed);
                let Some(p) = placed[i].as_ref() else {
                    continue;
                };
                let mut args: Vec<String> = vec!["ping".into()];
                args.extend(mp.ping_args.iter().cloned());
                args.extend(["-q", "--no-wait", "--json", "-", "--no-store"].map(String::from));
                args.extend(
                    live.iter()
                        .filter(|&&j| j != i)
                        .map(|&j| peer_arg(&hosts[j].net_address)),
                );
                s.spawn(move || {
                    let _ = tx.send(Event::Stage(i, "pinging every other host".into()));
                    let run = p.run_stopping(&args, KEY_ENV, deadline, cancel, PING_GRACE);
                    report_record(&tx, i, None, ping_record_of(run));
                });
            }
            if !mp.pair_args.is_empty() {
                rounds(hosts, &live, &placed, mp, deadline, cancel, &tx);
            }
        });
    }

    // 5. Clean up everywhere.
    clean_all(placed, listeners, &tx);
}

/// One step of a fleet flood: `hosts` hosts (the first ones of the list)
/// flooded the target at once; the records they printed, by host index.
pub type FloodStep = (usize, Vec<(usize, String)>);

/// The flood from several hosts at once (`fleet net --icmp`): every host
/// placed, then for each count of `steps` (1, 2, 4 … hosts) the first
/// that many hosts run `sysgauge net --icmp TARGET` followed by
/// `mp.pair_args` at the same moment, each record reported as
/// [`Event::Record`]; after each step `go_on` sees every step so far and
/// says whether to add hosts (the caller knows when the reply rate stopped
/// rising). No listener is started: the target runs no sysgauge.
pub fn flood(
    hosts: &[MatrixHost],
    mp: &MatrixPlan,
    target: &str,
    steps: &[usize],
    go_on: &dyn Fn(&[FloodStep]) -> bool,
    cancel: &CancelToken,
    tx: mpsc::Sender<Event>,
) {
    let deadline = Instant::now() + mp.plan.timeout;
    let placed = place_all(hosts, mp, deadline, cancel, &tx);
    let live: Vec<usize> = (0..hosts.len()).filter(|&i| placed[i].is_some()).collect();
    let mut done: Vec<FloodStep> = Vec::new();
    for &k in steps {
        if k > live.len() || cancel.is_cancelled() {
            break;
        }
        let flooding = &live[..k];
        // Every flooding host waits for the same moment, a little after the
        // slowest ssh session can have started its sysgauge.
        let start = std::time::SystemTime::now() + FLOOD_LEAD;
        let start_at = start
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| format!("{:.3}", d.as_secs_f64()))
            .unwrap_or_default();
        let (rtx, rrx) = mpsc::channel();
        std::thread::scope(|s| {
            for &i in flooding {
                let Some(p) = placed[i].as_ref() else {
                    continue;
                };
                let (tx, rtx) = (tx.clone(), rtx.clone());
                let mut args: Vec<String> = vec!["net".into(), "--icmp".into(), target.into()];
                args.extend(mp.pair_args.iter().cloned());
                args.extend(["--flood-at".into(), start_at.clone()]);
                args.extend(["--no-wait", "--json", "-", "--no-store"].map(String::from));
                s.spawn(move || {
                    let _ = tx.send(Event::Stage(
                        i,
                        format!("flooding {target} with {k} host(s) at once"),
                    ));
                    let run = record_of(p.run(&args, &[], deadline, cancel));
                    if let Some(json) = report_record(&tx, i, None, run) {
                        let _ = rtx.send((i, json));
                    }
                });
            }
        });
        drop(rtx);
        // A step cut off is no step: its hosts' records did not come home,
        // and it would show as a rate of 0.
        if cancel.is_cancelled() {
            break;
        }
        done.push((k, rrx.into_iter().collect()));
        if !go_on(&done) {
            break;
        }
    }
    clean_all(placed, Vec::new(), &tx);
}

/// Host `from`'s record of a command it ran (towards host `to`, or every
/// other host or the target for `None`), reported as [`Event::Record`] and
/// returned, or its failure reported as an [`Event::PairFailed`].
fn report_record(
    tx: &mpsc::Sender<Event>,
    from: usize,
    to: Option<usize>,
    run: Result<String, String>,
) -> Option<String> {
    match run {
        Ok(json) => {
            let _ = tx.send(Event::Record(from, json.clone()));
            Some(json)
        }
        Err(reason) => {
            let _ = tx.send(Event::PairFailed { from, to, reason });
            None
        }
    }
}

/// Phase 1 on every host at once: connect, place the binary, write the
/// key. `None` for a host that failed (reported as [`Event::HostFailed`]).
fn place_all(
    hosts: &[MatrixHost],
    mp: &MatrixPlan,
    deadline: Instant,
    cancel: &CancelToken,
    tx: &mpsc::Sender<Event>,
) -> Vec<Option<Placed>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let tx = tx.clone();
                s.spawn(move || {
                    let _ = tx.send(Event::Stage(i, "connecting".into()));
                    let placed = remote::place(&h.host, i, &mp.plan, cancel)
                        .map_err(|(f, _)| f)
                        .and_then(|p| {
                            let _ = tx.send(Event::Stage(
                                i,
                                format!("sysgauge for {} placed and checked", p.arch),
                            ));
                            match p.put_secret(KEY_FILE, mp.key.as_bytes(), deadline) {
                                Ok(()) => Ok(p),
                                Err(f) => {
                                    let _ = p.clean_up(STOP_GRACE);
                                    Err(f)
                                }
                            }
                        });
                    match placed {
                        Ok(p) => Some(p),
                        Err(f) => {
                            let _ = tx.send(Event::HostFailed(i, f));
                            None
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    })
}

/// Phase 5 on every host at once: stop what runs from the private
/// directory, remove it, and end the local ssh of each listener.
fn clean_all(placed: Vec<Option<Placed>>, listeners: Vec<Option<Child>>, tx: &mpsc::Sender<Event>) {
    let mut listeners = listeners;
    listeners.resize_with(placed.len(), || None);
    std::thread::scope(|s| {
        for (i, (p, l)) in placed.into_iter().zip(listeners).enumerate() {
            let tx = tx.clone();
            s.spawn(move || {
                // The listener's local ssh first (killing it leaves the
                // listener running on the host, which the clean-up stops):
                // on a host that is this machine too, the clean-up would
                // find that ssh by the directory in its command line, stop
                // it, and wait for it to be gone while it stayed a zombie
                // of ours.
                if let Some(mut child) = l {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                if let Some(p) = p {
                    let _ = tx.send(Event::Stage(i, "cleaning up".into()));
                    if let Err(e) = p.clean_up(STOP_GRACE) {
                        let _ = tx.send(Event::PairFailed {
                            from: i,
                            to: None,
                            reason: format!("clean-up: {e}"),
                        });
                    }
                }
            });
        }
    });
}

/// The tournament over the `live` hosts, round after round.
fn rounds(
    hosts: &[MatrixHost],
    live: &[usize],
    placed: &[Option<Placed>],
    mp: &MatrixPlan,
    deadline: Instant,
    cancel: &CancelToken,
    tx: &mpsc::Sender<Event>,
) {
    let schedule = schedule::tournament(live.len());
    let total = schedule.len();
    for (r, round) in schedule.into_iter().enumerate() {
        // Past the deadline, a round would only announce itself and fail.
        if cancel.is_cancelled() || Instant::now() >= deadline {
            return;
        }
        std::thread::scope(|s| {
            for Pair { from, to } in round {
                let (from, to) = (live[from], live[to]);
                let Some(p) = placed[from].as_ref() else {
                    continue;
                };
                let tx = tx.clone();
                let mut args: Vec<String> = vec![
                    "net".into(),
                    "--peer".into(),
                    peer_arg(&hosts[to].net_address),
                ];
                args.extend(mp.pair_args.iter().cloned());
                args.extend(["--no-wait", "--json", "-", "--no-store"].map(String::from));
                s.spawn(move || {
                    let _ = tx.send(Event::Stage(
                        from,
                        format!(
                            "round {}/{total}: sending to {}",
                            r + 1,
                            hosts[to].host.name
                        ),
                    ));
                    let run = record_of(p.run(&args, KEY_ENV, deadline, cancel));
                    report_record(&tx, from, Some(to), run);
                });
            }
        });
    }
}

/// The record of a host's pings ([`Placed::run_stopping`]), or why there
/// is none: cut off and no record within [`PING_GRACE`] of asking them to
/// stop is a record lost, said so.
fn ping_record_of(out: Result<crate::ssh::Output, SshError>) -> Result<String, String> {
    match out {
        Err(SshError::Cancelled | SshError::Timeout) => Err(format!(
            "its pings' record was lost: none came home within {} s of asking them to stop",
            PING_GRACE.as_secs_f64()
        )),
        out => record_of(out),
    }
}

/// The run record a command printed, or why there is none (exit 1 with a
/// record is a run in which some case failed: the record says which; 130
/// one stopped by SIGINT, which the record says `interrupted`).
fn record_of(out: Result<crate::ssh::Output, SshError>) -> Result<String, String> {
    let out = out.map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match out.code() {
        Some(0 | 1 | 130) if text.starts_with('{') => Ok(text),
        code => Err(format!(
            "sysgauge failed on the host (exit {}): {}",
            code.map(|c| c.to_string())
                .unwrap_or_else(|| "by signal".into()),
            last_line(&out.stderr)
        )),
    }
}

/// Waits until the listener on the other end of `child` has printed its
/// service's `binds` "listening" lines (or has ended, or a timeout).
fn wait_listening(child: &mut Child, binds: usize) -> Result<(), String> {
    let Some(stdout) = child.stdout.take() else {
        return Err("no output".into());
    };
    let stderr = child.stderr.take();
    let (tx, rx) = mpsc::channel();
    // The reader goes on draining the listener's output for the whole run
    // (so it never blocks on a full pipe) and ends with it.
    std::thread::spawn(move || {
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("sysgauge net service on ") {
                seen += 1;
                if seen == binds {
                    let _ = tx.send(Ok(()));
                }
            }
        }
        let _ = tx.send(Err(()));
    });
    let errors = stderr.map(|e| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ =
                std::io::Read::read_to_string(&mut std::io::Read::take(e, 64 * 1024), &mut text);
            text
        })
    });
    match rx.recv_timeout(LISTEN_READY) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(())) => {
            let _ = child.wait();
            let text = errors.and_then(|h| h.join().ok()).unwrap_or_default();
            Err(match last_line(&text) {
                "" => "it ended at once".to_string(),
                l => l.to_string(),
            })
        }
        Err(_) => Err(format!("no word from it in {} s", LISTEN_READY.as_secs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_binds_follow_the_address() {
        assert_eq!(serve_binds("10.0.0.2"), ["10.0.0.2"]);
        assert_eq!(serve_binds("fd00::2"), ["fd00::2"]);
        assert_eq!(serve_binds("nas.lan"), ["0.0.0.0", "::"]);
    }

    #[test]
    fn records_and_failures_of_a_command() {
        use std::os::unix::process::ExitStatusExt;
        let out = |code: i32, stdout: &str, stderr: &str| {
            Ok(crate::ssh::Output {
                status: std::process::ExitStatus::from_raw(code << 8),
                stdout: stdout.as_bytes().to_vec(),
                stderr: stderr.into(),
            })
        };
        assert_eq!(
            record_of(out(0, " {\"a\":1}\n", "")),
            Ok("{\"a\":1}".into())
        );
        assert_eq!(record_of(out(1, "{}", "")), Ok("{}".into()));
        assert_eq!(
            record_of(out(2, "", "sysgauge: error: bad\n")),
            Err("sysgauge failed on the host (exit 2): sysgauge: error: bad".into())
        );
        assert_eq!(record_of(Err(SshError::Timeout)), Err("timed out".into()));
        // Stopped by SIGINT, its record printed: kept (it says
        // `interrupted`); without a record a failure like any other.
        assert_eq!(record_of(out(130, "{}\n", "")), Ok("{}".into()));
        assert!(record_of(out(130, "", "")).is_err());
        // Pings cut off whose record did not come home in the grace: lost,
        // and said so.
        for e in [SshError::Cancelled, SshError::Timeout] {
            let lost = ping_record_of(Err(e)).unwrap_err();
            assert!(lost.starts_with("its pings' record was lost"), "{lost}");
        }
        assert_eq!(ping_record_of(out(130, "{}", "")), Ok("{}".into()));
    }
}
