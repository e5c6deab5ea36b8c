//! UDP cases: small-packet rate with 1, 2, 4 … senders until the rate stops
//! rising, and round-trip latency.
//!
//! Packet rate is what people measure by hand with ping floods: every
//! sender floods the reflector with small datagrams and counts what comes
//! back. Each sender keeps a window of 64 datagrams in flight (sent in
//! batches with `sendmmsg`, received with `recvmmsg`), so the kernel's
//! buffers never overflow by design and every packet counted made the whole
//! trip. The rate counts both directions: two packets per datagram that
//! came back. Datagrams not back within 50 ms are counted lost; ones that
//! come back after that are "late" and not counted.
//!
//! The sender ladder is planned up front (1, 2, 4 … per profile); once a
//! step brings less than 5 % more than the one before, the rate is taken
//! as saturated at the earlier count, said in a finding, and the remaining
//! steps are skipped with that reason.
//!
//! Latency sends one datagram at a time and waits for it (no window), so
//! each sample is one true round trip; a repetition reports its median and
//! 99th percentile.

use super::endpoint::{self, Endpoint};
use super::proto::{self, MAX_UDP_SIZE, UDP_HEADER_LEN};
use super::sys::{would_block, Batch, BATCH};
use super::{
    check_within, count_param, lock_worker, size_param, target_param, NetOptions, RoundTrips,
};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use sysgauge_core::{
    BenchError, Better, CancelToken, Finding, Metric, Params, Plan, Profile, RunCtx, Severity, Unit,
};
use sysgauge_family::util::{by_profile, measure_rate_on_threads, metric};

/// Default datagram size (bytes of UDP payload).
pub const DEFAULT_UDP_SIZE: usize = 64;
/// Datagrams each sender keeps in flight.
const WINDOW: u64 = 2 * BATCH as u64;
/// A datagram not back after this long is counted lost.
const LOSS_TIMEOUT: Duration = Duration::from_millis(50);
/// This many loss timeouts in a row (1 s) with nothing back fail the case.
const MAX_SILENT_TIMEOUTS: u32 = 20;
/// A step must raise the rate by this factor to count as still rising.
pub(super) const RISING: f64 = 1.05;
/// Most round trips kept per latency repetition.
const MAX_RTTS: usize = 200_000;

/// Validates a datagram size.
pub fn check_size(size: usize) -> Result<usize, String> {
    check_within("UDP datagram size", size, UDP_HEADER_LEN..=MAX_UDP_SIZE)
}

/// Sender counts tried for a profile: 1, 2, 4 … up to the profile's bound,
/// the same on every machine.
pub fn sender_ladder(profile: Profile) -> Vec<usize> {
    let top = by_profile(profile, [1, 4, 8, 16]);
    std::iter::successors(Some(1usize), |&s| Some(s * 2))
        .take_while(|&s| s <= top)
        .collect()
}

fn size_of(params: &Params, options: &NetOptions) -> Result<usize, BenchError> {
    size_param(
        params,
        options.udp_size.unwrap_or(DEFAULT_UDP_SIZE),
        check_size,
    )
}

options_benchmark! {
    UdpPpsBenchmark = "net.udp-pps",
    "UDP small-packet rate, both directions counted, 1, 2, 4 … senders until it saturates",
    Unit::PacketsPerSec,
    Better::Higher
}

/// How a sender ladder's findings name what it measures.
#[derive(Debug, Clone, Copy)]
pub(super) struct LadderText {
    /// Finding code prefix: `{prefix}-saturated`, `{prefix}-rising`.
    pub prefix: &'static str,
    /// "the UDP packet rate", in messages.
    pub what: &'static str,
    /// "the packet rate", in the reason a later step is skipped.
    pub rate: &'static str,
    /// Remedy of the saturation finding.
    pub remedy: &'static str,
}

const UDP_LADDER: LadderText = LadderText {
    prefix: "udp-pps",
    what: "UDP packet rate",
    rate: "packet rate",
    remedy: "the rate of the earlier case is the peak; on loopback both ends share the same CPUs",
};

/// Where the ladder of one size stands (shared with the ICMP flood).
#[derive(Debug, Default)]
pub(super) struct Ladder {
    last: Option<(usize, f64)>,
    pub(super) saturated_at: Option<(usize, f64)>,
}

impl Ladder {
    /// Skips a step of the ladder kept under `key` (one per size and
    /// target, for the session) once an earlier step found it saturated.
    pub(super) fn skip_if_saturated(
        ctx: &mut RunCtx,
        key: &str,
        text: &LadderText,
    ) -> Result<(), BenchError> {
        let ladder: &mut Ladder = ctx.fixture(key, |_| Ok(Ladder::default()))?;
        if let Some((s, r)) = ladder.saturated_at {
            return Err(BenchError::skip(
                format!(
                    "the {} already stopped rising at {s} senders ({r:.0} pkt/s)",
                    text.rate
                ),
                format!(
                    "see the {}-saturated finding of the earlier case",
                    text.prefix
                ),
            ));
        }
        Ok(())
    }

    /// Records the rate of `senders` in the ladder kept under `key`, notes
    /// where it saturated and says what [`Ladder::record_as`] found.
    pub(super) fn conclude(
        ctx: &mut RunCtx,
        key: &str,
        text: &LadderText,
        senders: usize,
        rate: f64,
        last_step: bool,
    ) -> Result<(), BenchError> {
        let ladder: &mut Ladder = ctx.fixture(key, |_| Ok(Ladder::default()))?;
        let finding = ladder.record_as(text, senders, rate, last_step);
        if let Some((at, _)) = ladder.saturated_at {
            ctx.note_detail("saturated_at", at);
        }
        if let Some(f) = finding {
            ctx.finding(f);
        }
        Ok(())
    }

    /// Records the rate of `senders`; says (once) where the rate stopped
    /// rising, or that it still rose at the last step.
    #[cfg(test)]
    fn record(&mut self, senders: usize, rate: f64, last_step: bool) -> Option<Finding> {
        self.record_as(&UDP_LADDER, senders, rate, last_step)
    }

    /// [`Ladder::record`] with the findings worded by `text`.
    pub(super) fn record_as(
        &mut self,
        text: &LadderText,
        senders: usize,
        rate: f64,
        last_step: bool,
    ) -> Option<Finding> {
        let what = text.what;
        let prev = self.last.replace((senders, rate));
        if let Some((ps, pr)) = prev {
            if rate < pr * RISING {
                self.saturated_at = Some((ps, pr));
                return Some(
                    Finding::new(
                        &format!("{}-saturated", text.prefix),
                        Severity::Info,
                        format!(
                            "the {what} saturated at {ps} senders: {ps} gave {pr:.0} pkt/s, {senders} gave {rate:.0} pkt/s (less than 5 % more)"
                        ),
                    )
                    .with_remedy(text.remedy),
                );
            }
        }
        (last_step && senders > 1).then(|| {
            Finding::new(
                &format!("{}-rising", text.prefix),
                Severity::Info,
                format!("the {what} still rose at {senders} senders; it saturates above that"),
            )
            .with_remedy("--profile standard tries more senders")
        })
    }
}

/// One sender's socket and buffers (locked once per repetition).
struct Sender {
    socket: UdpSocket,
    key: Option<proto::ServiceKey>,
    out: Batch,
    inb: Batch,
    next_seq: u64,
}

#[derive(Default)]
struct FloodTotals {
    lost: AtomicU64,
    late: AtomicU64,
}

/// Floods until `n` datagrams came back; returns packets moved (2 per
/// datagram back).
fn flood(
    s: &mut Sender,
    size: usize,
    n: u64,
    totals: &FloodTotals,
    cancel: &CancelToken,
) -> Result<f64, BenchError> {
    let mut got = 0u64;
    let mut inflight = 0u64;
    let mut floor = s.next_seq;
    let mut silent = 0u32;
    while got < n {
        let want = WINDOW
            .min(n - got)
            .saturating_sub(inflight)
            .min(BATCH as u64) as usize;
        if want > 0 {
            for i in 0..want {
                proto::put_udp_header(s.out.slot_mut(i), s.next_seq, s.key.as_ref());
                s.out.lens[i] = size;
                s.next_seq += 1;
            }
            let sent = s
                .out
                .send(&s.socket, want, false)
                .map_err(|e| BenchError::failed(format!("sending UDP: {e}")))?;
            inflight += sent as u64;
        }
        match s.inb.recv(&s.socket, false) {
            Ok(m) => {
                silent = 0;
                for i in 0..m {
                    match proto::udp_seq(s.inb.received(i)) {
                        Some(q) if q >= floor => {
                            got += 1;
                            inflight = inflight.saturating_sub(1);
                        }
                        Some(_) => {
                            totals.late.fetch_add(1, Ordering::Relaxed);
                        }
                        None => {
                            return Err(BenchError::failed(
                                "the reflector sent back a datagram that is not ours",
                            ))
                        }
                    }
                }
            }
            Err(e) if would_block(&e) => {
                cancel.check()?;
                totals.lost.fetch_add(inflight, Ordering::Relaxed);
                inflight = 0;
                floor = s.next_seq;
                silent += 1;
                if silent >= MAX_SILENT_TIMEOUTS {
                    return Err(BenchError::failed(
                        "no UDP datagram came back for 1 s: the reflector stopped answering",
                    ));
                }
            }
            Err(e) => return Err(BenchError::failed(format!("receiving UDP: {e}"))),
        }
    }
    Ok(2.0 * got as f64)
}

impl UdpPpsBenchmark {
    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.options.service_cases(|| {
            let size = self.options.udp_size.unwrap_or(DEFAULT_UDP_SIZE);
            sender_ladder(plan.profile)
                .into_iter()
                .map(|s| {
                    Params::new()
                        .with("target", target_param(&self.options))
                        .with("senders", s)
                        .with("size", size)
                })
                .collect()
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let size = size_of(params, &self.options)?;
        let senders = count_param(params, "senders", 256)?;
        let ladder_key = format!("net.udp-pps-ladder-{size}");
        Ladder::skip_if_saturated(ctx, &ladder_key, &UDP_LADDER)?;
        let (udp, key) = {
            let ep = Endpoint::get(ctx, &self.options)?;
            ep.check_udp()?;
            (ep.udp, ep.key.clone())
        };
        let mut socks = Vec::with_capacity(senders);
        for _ in 0..senders {
            let socket = endpoint::udp_socket(udp, LOSS_TIMEOUT).map_err(|e| {
                BenchError::failed(format!("cannot open a UDP socket to {udp}: {e}"))
            })?;
            socks.push(Mutex::new(Sender {
                socket,
                key: key.clone(),
                out: Batch::new(size),
                inb: Batch::new(size.max(UDP_HEADER_LEN) + 64),
                next_seq: 0,
            }));
        }
        let totals = FloodTotals::default();
        let cancel = ctx.cancel_token().clone();
        let samples = measure_rate_on_threads(ctx, senders, |t, n| {
            let mut s = lock_worker(&socks, t, "socket", "sender")?;
            flood(&mut s, size, n, &totals, &cancel)
        })?;
        ctx.note_detail("window", WINDOW);
        ctx.note_detail("lost", totals.lost.load(Ordering::Relaxed));
        ctx.note_detail("late", totals.late.load(Ordering::Relaxed));
        let m = metric("rate", Unit::PacketsPerSec, Better::Higher, samples)?;
        let last_step = sender_ladder(ctx.profile()).last().copied() == Some(senders);
        Ladder::conclude(ctx, &ladder_key, &UDP_LADDER, senders, m.value(), last_step)?;
        Ok(vec![m])
    }
}

options_benchmark! {
    UdpRttBenchmark = "net.udp-rtt",
    "UDP round-trip latency, one datagram at a time (median and 99th percentile)",
    Unit::Microseconds,
    Better::Lower
}

impl UdpRttBenchmark {
    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        self.options.service_cases(|| {
            vec![Params::new()
                .with("target", target_param(&self.options))
                .with("size", self.options.udp_size.unwrap_or(DEFAULT_UDP_SIZE))]
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let size = size_of(params, &self.options)?;
        let (udp, key) = {
            let ep = Endpoint::get(ctx, &self.options)?;
            ep.check_udp()?;
            (ep.udp, ep.key.clone())
        };
        let socket = endpoint::udp_socket(udp, Duration::from_secs(1))
            .map_err(|e| BenchError::failed(format!("cannot open a UDP socket to {udp}: {e}")))?;
        let mut out = vec![0u8; size];
        let mut inb = vec![0u8; size + 64];
        let mut seq = 0u64;
        let mut lost = 0u64;
        let cancel = ctx.cancel_token().clone();
        let rtts = RoundTrips::measure(
            ctx,
            Vec::with_capacity(MAX_RTTS),
            MAX_RTTS,
            "UDP round trip",
            |taken| {
                if taken.is_multiple_of(256) {
                    cancel.check()?;
                }
                seq += 1;
                proto::put_udp_header(&mut out, seq, key.as_ref());
                let t0 = Instant::now();
                socket
                    .send(&out)
                    .map_err(|e| BenchError::failed(format!("sending UDP to {udp}: {e}")))?;
                loop {
                    match socket.recv(&mut inb) {
                        Ok(n) if proto::udp_seq(&inb[..n]) == Some(seq) => {
                            return Ok(Some(t0.elapsed().as_secs_f64() * 1e6));
                        }
                        // An older datagram, late: keep waiting for ours.
                        Ok(_) => {}
                        Err(e) if would_block(&e) => {
                            lost += 1;
                            if lost > 10 {
                                return Err(BenchError::failed(format!(
                                    "more than 10 UDP datagrams to {udp} never came back"
                                )));
                            }
                            return Ok(None);
                        }
                        Err(e) => {
                            return Err(BenchError::failed(format!(
                                "receiving UDP from {udp}: {e}"
                            )))
                        }
                    }
                }
            },
        )?;
        ctx.note_detail("lost", lost);
        rtts.metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_and_sizes() {
        assert_eq!(sender_ladder(Profile::Tiny), vec![1]);
        assert_eq!(sender_ladder(Profile::Quick), vec![1, 2, 4]);
        assert_eq!(sender_ladder(Profile::Standard), vec![1, 2, 4, 8]);
        assert_eq!(sender_ladder(Profile::Full), vec![1, 2, 4, 8, 16]);
        assert!(check_size(31).is_err());
        assert!(check_size(32).is_ok());
        assert!(check_size(65_507).is_ok());
        assert!(check_size(65_508).is_err());
    }

    #[test]
    fn ladder_says_where_it_saturates() {
        let mut l = Ladder::default();
        assert!(l.record(1, 100.0, false).is_none());
        assert!(l.record(2, 190.0, false).is_none());
        let f = l
            .record(4, 195.0, true)
            .unwrap_or_else(|| panic!("no finding"));
        assert_eq!(f.code, "udp-pps-saturated");
        assert!(
            f.message.contains("saturated at 2 senders"),
            "{}",
            f.message
        );
        assert_eq!(l.saturated_at, Some((2, 190.0)));

        let mut rising = Ladder::default();
        assert!(rising.record(1, 100.0, false).is_none());
        let f = rising
            .record(2, 200.0, true)
            .unwrap_or_else(|| panic!("no finding"));
        assert_eq!(f.code, "udp-pps-rising");
        assert!(rising.saturated_at.is_none());
        // A drop counts as saturation at the earlier step.
        let mut drop = Ladder::default();
        drop.record(1, 100.0, false);
        drop.record(2, 80.0, false);
        assert_eq!(drop.saturated_at, Some((1, 100.0)));
    }
}
