//! Shared test helpers: a listener running in a thread (stopped and joined
//! on drop), the reference client's summary parsed, and the rule for tests
//! that need system tools: without them a test skips with a note, unless
//! `SYSGAUGE_REQUIRE_ALL=1` (as CI sets), where it fails. Child processes
//! killed on drop are `sysgauge_testkit::ChildGuard`, shared with the
//! binary's tests.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use sysgauge_testkit::{is_root, on_path};
use sysgauge_twoping::client::{Client, ClientConfig, ClientEvent, ClientReport, Target};
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
    if need_root && !is_root() {
        missing.push("root".to_string());
    }
    sysgauge_testkit::require(
        &format!("{test}: needs {}", missing.join(", ")),
        missing.is_empty(),
        "install it, e.g. apt-get install -y 2ping nftables iproute2",
    )
}

/// A listener's configuration: the defaults, on `ip` with a free port.
pub fn listener_on(ip: &str) -> ListenerConfig {
    ListenerConfig {
        addresses: vec![SocketAddr::new(ip.parse().expect("ip"), 0)],
        ..ListenerConfig::default()
    }
}

/// Runs a client with `config` to the end against `targets`; its report
/// and every event it reported.
pub fn run_client(config: ClientConfig, targets: Vec<Target>) -> (ClientReport, Vec<ClientEvent>) {
    let mut client = Client::new(config, targets).expect("client");
    let mut events = Vec::new();
    let report = client
        .run(&AtomicBool::new(false), &mut |e| events.push(e.clone()))
        .expect("run");
    (report, events)
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
