//! Many hosts at once: a bounded pool of `forks` worker threads takes hosts
//! in inventory order, runs [`crate::remote::run_host`] on each, and sends every
//! stage change and outcome to the caller's channel as it happens, so the
//! caller draws progress and ingests records while other hosts still run.
//! One host's failure is only its own outcome; it never stops the others.
//! After Ctrl-C no new host is started; running ones stop and clean up.

use crate::inventory::Host;
use crate::remote::{run_host, Outcome, Plan, Stage};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use sysgauge_core::CancelToken;

/// What the pool reports; `usize` is the host's index in the list given.
#[derive(Debug)]
pub enum Event {
    Stage(usize, Stage),
    Done(usize, Outcome),
    /// Not started because the run was interrupted first.
    NotStarted(usize),
}

/// Runs every host of `hosts`, `forks` at a time, sending events to `tx`.
/// Returns when every host has a `Done` or `NotStarted` event.
pub fn run(hosts: &[Host], forks: usize, plan: &Plan, cancel: &CancelToken, tx: Sender<Event>) {
    let next = AtomicUsize::new(0);
    let workers = forks.clamp(1, hosts.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(host) = hosts.get(i) else { break };
                if cancel.is_cancelled() {
                    let _ = tx.send(Event::NotStarted(i));
                    continue;
                }
                let stage = |st: Stage| {
                    let _ = tx.send(Event::Stage(i, st));
                };
                let outcome = run_host(host, i, plan, cancel, &stage);
                let _ = tx.send(Event::Done(i, outcome));
            });
        }
    });
}
