//! Shared test helpers: a listener running in a thread (stopped and joined
//! on drop), child processes killed on drop, and the rule for tests that
//! need system tools: without them a test skips with a note, unless
//! `SYSGAUGE_REQUIRE_ALL=1` (as CI sets), where it fails.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use sysgauge_twoping::listener::{Listener, ListenerConfig, ListenerCounters, ListenerEvent};

/// True if every program in `tools` is on PATH (and we are root when
/// `need_root`). Otherwise prints a note and returns false, or panics when
/// SYSGAUGE_REQUIRE_ALL=1.
pub fn have_requirements(test: &str, tools: &[&str], need_root: bool) -> bool {
    let mut missing: Vec<String> = tools
        .iter()
        .filter(|t| !on_path(t))
        .map(|t| format!("program `{t}`"))
        .collect();
    // SAFETY: geteuid has no preconditions and cannot fail.
    if need_root && unsafe { libc::geteuid() } != 0 {
        missing.push("root".to_string());
    }
    sysgauge_testkit::require(
        &format!("{test}: needs {}", missing.join(", ")),
        missing.is_empty(),
        "install it, e.g. apt-get install -y 2ping nftables iproute2",
    )
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// A listener serving in a background thread.
pub struct RunningListener {
    pub addrs: Vec<SocketAddr>,
    pub counters: Arc<ListenerCounters>,
    pub events: Arc<Mutex<Vec<ListenerEvent>>>,
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<Listener>>,
}

impl RunningListener {
    pub fn start(config: ListenerConfig) -> RunningListener {
        let mut listener = Listener::bind(config).expect("bind listener");
        let addrs = listener.local_addrs();
        let counters = listener.counters();
        let events = Arc::new(Mutex::new(Vec::new()));
        let cancel = Arc::new(AtomicBool::new(false));
        let (c, e) = (Arc::clone(&cancel), Arc::clone(&events));
        let handle = std::thread::spawn(move || {
            let mut on_event = |ev: &ListenerEvent| {
                // Drops are counted by the listener; keep the log small.
                if !matches!(ev, ListenerEvent::Dropped { .. }) {
                    if let Ok(mut v) = e.lock() {
                        v.push(ev.clone());
                    }
                }
            };
            listener.serve(&*c, &mut on_event).expect("serve");
            listener
        });
        RunningListener {
            addrs,
            counters,
            events,
            cancel,
            handle: Some(handle),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Stops the listener and hands it back.
    pub fn stop(mut self) -> Listener {
        self.cancel.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .expect("running")
            .join()
            .expect("listener thread")
    }

    pub fn events(&self) -> Vec<ListenerEvent> {
        self.events.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Drop for RunningListener {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A child process, killed and reaped on drop, with its stdout lines
/// collected by a reader thread.
pub struct ChildGuard {
    child: Child,
    lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl ChildGuard {
    pub fn spawn(cmd: &mut Command) -> ChildGuard {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx2.send(format!("stderr: {line}")).is_err() {
                    break;
                }
            }
        });
        ChildGuard {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits up to `timeout` for a line containing `needle`.
    pub fn wait_for_line(&mut self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(needle);
                    self.seen.push(line);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }

    /// Waits up to `timeout` for the process to exit; collects all output.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the reader threads finish the pipes.
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(line);
                }
                return Some(status);
            }
            if Instant::now() >= end {
                return None;
            }
            while let Ok(line) = self.lines.try_recv() {
                self.seen.push(line);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn output(&self) -> String {
        self.seen.join("\n")
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A UDP port that was free a moment ago (for programs that need a number).
pub fn free_udp_port(ip: &str) -> u16 {
    let s = std::net::UdpSocket::bind((ip, 0)).expect("bind ephemeral");
    s.local_addr().expect("local addr").port()
}

/// The statistics block the reference `2ping` client prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReferenceSummary {
    pub transmitted: u64,
    pub received: u64,
    pub loss_percent: u64,
    pub outbound: u64,
    pub inbound: u64,
    pub undetermined: u64,
}

fn number_before(line: &str, word: &str) -> Option<u64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with(word))?;
    words
        .get(at.checked_sub(1)?)?
        .trim_end_matches('%')
        .parse()
        .ok()
}

/// Parses the reference client's summary lines:
/// `N pings transmitted, N received, N% ping loss, time …` and
/// `N outbound ping losses (x%), N inbound (y%), N undetermined (z%)`.
pub fn parse_reference_summary(text: &str) -> Option<ReferenceSummary> {
    let mut s = ReferenceSummary::default();
    let mut seen = (false, false);
    for line in text.lines() {
        if line.contains(" transmitted, ") && line.contains("ping loss") {
            s.transmitted = number_before(line, "ping")?;
            s.received = number_before(line, "received")?;
            s.loss_percent = line
                .split(", ")
                .find(|p| p.ends_with("ping loss"))?
                .split('%')
                .next()?
                .trim()
                .parse()
                .ok()?;
            seen.0 = true;
        }
        if line.contains("outbound ping loss") {
            s.outbound = number_before(line, "outbound")?;
            s.inbound = number_before(line, "inbound")?;
            s.undetermined = number_before(line, "undetermined")?;
            seen.1 = true;
        }
    }
    (seen.0 && seen.1).then_some(s)
}

/// Lines in which a reference listener reports a 3rd leg with the client's
/// enclosed RTT: `… ping_seq=N time=X ms peertime=Y ms`.
pub fn reference_peertime_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("ping_seq=") && l.contains("peertime="))
        .count()
}
