//! Per-source token buckets, so one sender cannot make the listener do
//! unbounded work or send unbounded replies.
//!
//! - A source is an IPv4 address or an IPv6 /64 prefix: a single host
//!   usually owns a whole /64, so keying by full IPv6 address would let it
//!   rotate addresses past the limit (and fill the table).
//! - Every datagram costs one token, checked before decoding, so garbage is
//!   throttled as cheaply as possible. The default (5000/s, burst 5000) is a
//!   safety net for an exposed listener, above what a flood ping over a LAN
//!   from one host needs for a short test (two datagrams per ping); raise or
//!   disable it for long flood benchmarks between machines. Replies are
//!   bounded by the no-amplification rule whatever the rate.
//! - The bucket table is bounded. A bucket that has refilled completely is
//!   indistinguishable from a new one, so it can be dropped without changing
//!   any decision; when the table is full those are swept (at most every
//!   100 ms, to bound the work), and if it is still full, unknown sources
//!   share one overflow bucket: under a spoofed many-source flood new
//!   sources are throttled together instead of growing memory.
//! - Loopback sources may be exempted: local processes can flood the host
//!   anyway, and exempting them lets flood benchmarks on loopback measure
//!   the protocol rather than the limiter.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Token bucket parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Sustained datagrams per second per source.
    pub packets_per_second: f64,
    /// Bucket size: datagrams a source may send in a burst.
    pub burst: f64,
    /// Do not limit loopback sources (127.0.0.0/8, ::1).
    pub exempt_loopback: bool,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            packets_per_second: 5000.0,
            burst: 5000.0,
            exempt_loopback: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SourceKey {
    V4(u32),
    V6Prefix(u64),
}

fn key(ip: IpAddr) -> SourceKey {
    match ip.to_canonical() {
        IpAddr::V4(v4) => SourceKey::V4(u32::from(v4)),
        IpAddr::V6(v6) => SourceKey::V6Prefix((u128::from(v6) >> 64) as u64),
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(limit: &RateLimit, now: Instant) -> Bucket {
        Bucket {
            tokens: limit.burst,
            at: now,
        }
    }

    fn refill(&mut self, limit: &RateLimit, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + dt * limit.packets_per_second).min(limit.burst);
        self.at = now;
    }

    fn take(&mut self, limit: &RateLimit, now: Instant) -> bool {
        self.refill(limit, now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Token buckets per source; also used by sysgauge's net service.
pub struct RateLimiter {
    limit: RateLimit,
    buckets: HashMap<SourceKey, Bucket>,
    cap: usize,
    overflow: Bucket,
    newcomers: Bucket,
    last_sweep: Option<Instant>,
}

const SWEEP_EVERY: Duration = Duration::from_millis(100);

impl RateLimiter {
    /// At most `cap` sources with their own bucket.
    pub fn new(limit: RateLimit, cap: usize, now: Instant) -> RateLimiter {
        RateLimiter {
            limit,
            buckets: HashMap::new(),
            cap: cap.max(1),
            overflow: Bucket::full(&limit, now),
            newcomers: Bucket::full(&limit, now),
            last_sweep: None,
        }
    }

    /// Takes a token for a datagram from `ip`; false means drop it.
    /// `trusted` says the source has proved it receives at its address.
    pub fn allow(&mut self, ip: IpAddr, trusted: bool, now: Instant) -> bool {
        if self.limit.exempt_loopback && ip.to_canonical().is_loopback() {
            return true;
        }
        let k = key(ip);
        let limit = self.limit;
        if let Some(b) = self.buckets.get_mut(&k) {
            return b.take(&limit, now);
        }
        if !trusted && !self.newcomers.take(&limit, now) {
            return false;
        }
        if self.buckets.len() >= self.cap {
            self.sweep(now);
        }
        if self.buckets.len() >= self.cap && !trusted {
            return self.overflow.take(&limit, now);
        }
        let mut b = Bucket::full(&limit, now);
        let ok = b.take(&limit, now);
        self.buckets.insert(k, b);
        ok
    }

    fn sweep(&mut self, now: Instant) {
        if self
            .last_sweep
            .is_some_and(|t| now.saturating_duration_since(t) < SWEEP_EVERY)
        {
            return;
        }
        self.last_sweep = Some(now);
        let limit = self.limit;
        self.buckets.retain(|_, b| {
            b.refill(&limit, now);
            b.tokens < limit.burst
        });
    }

    /// Drops buckets that have refilled (periodic maintenance).
    pub fn maintain(&mut self, now: Instant) {
        self.last_sweep = None;
        self.sweep(now);
    }

    #[cfg(test)]
    pub(crate) fn sources(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit() -> RateLimit {
        RateLimit {
            packets_per_second: 10.0,
            burst: 5.0,
            exempt_loopback: false,
        }
    }

    #[test]
    fn burst_then_rate() {
        let t0 = Instant::now();
        let mut rl = RateLimiter::new(limit(), 16, t0);
        let ip: IpAddr = "192.0.2.1".parse().expect("ip");
        let allowed = (0..20).filter(|_| rl.allow(ip, false, t0)).count();
        assert_eq!(allowed, 5);
        // 10 per second: after 0.5 s five more.
        let t1 = t0 + Duration::from_millis(500);
        let allowed = (0..20).filter(|_| rl.allow(ip, false, t1)).count();
        assert_eq!(allowed, 5);
    }

    #[test]
    fn ipv6_sources_are_keyed_by_prefix() {
        let t0 = Instant::now();
        let mut rl = RateLimiter::new(limit(), 16, t0);
        let mut allowed = 0;
        for i in 0..20u16 {
            let ip: IpAddr = format!("2001:db8::{i:x}").parse().expect("ip");
            allowed += usize::from(rl.allow(ip, false, t0));
        }
        assert_eq!(allowed, 5);
        assert_eq!(rl.sources(), 1);
    }

    #[test]
    fn table_is_bounded_and_overflow_is_shared() {
        let t0 = Instant::now();
        let mut rl = RateLimiter::new(limit(), 8, t0);
        let mut allowed = 0;
        for i in 0..1000u32 {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            allowed += usize::from(rl.allow(ip, false, t0));
            assert!(rl.sources() <= 8);
        }
        // The newcomer bucket's burst: a new source per token.
        assert_eq!(allowed, 5);
        // A trusted source still gets its own full bucket, overflow or not.
        let client = IpAddr::from(std::net::Ipv4Addr::new(192, 0, 2, 77));
        assert!((0..5).all(|_| rl.allow(client, true, t0)));
        assert!(!rl.allow(client, true, t0));
        assert_eq!(rl.sources(), 6);
    }

    #[test]
    fn new_sources_share_one_rate() {
        let t0 = Instant::now();
        let mut rl = RateLimiter::new(limit(), 8, t0);
        let ip = |i: u32| IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + i));
        let mut allowed = 0;
        // Ten seconds of a 1000-source-per-second flood, in 10 ms steps: new
        // sources get in at the newcomer rate (10/s) plus its burst.
        for step in 0..1000u32 {
            let t = t0 + Duration::from_millis(u64::from(step) * 10);
            for j in 0..10 {
                allowed += usize::from(rl.allow(ip(step * 10 + j), false, t));
            }
            assert!(rl.sources() <= 8);
        }
        assert!((100..=5 + 100 + 1).contains(&allowed), "{allowed}");
    }

    #[test]
    fn loopback_exemption() {
        let t0 = Instant::now();
        let mut rl = RateLimiter::new(
            RateLimit {
                exempt_loopback: true,
                ..limit()
            },
            8,
            t0,
        );
        let ip: IpAddr = "127.0.0.1".parse().expect("ip");
        assert!((0..100).all(|_| rl.allow(ip, false, t0)));
    }
}
