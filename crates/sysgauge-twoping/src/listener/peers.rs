//! The listener's per-peer sessions, bounded in number and in memory.
//!
//! State is keyed by the peer's (address, port), and within a peer by
//! message ID, as the protocol requires. Each session's tables are bounded
//! (see `SessionLimits`), and the number of sessions is bounded: when full,
//! idle sessions are swept, and if none is idle the least recently active
//! one is evicted (an O(peers) scan, only when a new peer arrives at a full
//! table). A session created within a state TTL of any eviction starts
//! "forgetful": it may have lost what an earlier incarnation saw, so it will
//! not answer "never received" for IDs it does not know (see the session
//! module).
//!
//! The total number of ID entries is tracked incrementally so the listener
//! can publish it as a gauge without walking every session per packet.

use crate::session::{Session, SessionLimits};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub(crate) struct PeerTable {
    sessions: HashMap<SocketAddr, Session>,
    cap: usize,
    limits: SessionLimits,
    idle_ttl: Duration,
    last_eviction: Option<Instant>,
    entries: usize,
    pub(crate) evictions: u64,
}

impl PeerTable {
    pub(crate) fn new(cap: usize, limits: SessionLimits, idle_ttl: Duration) -> PeerTable {
        PeerTable {
            sessions: HashMap::new(),
            cap: cap.max(1),
            limits,
            idle_ttl,
            last_eviction: None,
            entries: 0,
            evictions: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.sessions.len()
    }

    /// ID entries held by all sessions.
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    /// Runs `f` on the session of `peer`, creating it (and evicting another
    /// if the table is full) as needed, and keeps the entry count current.
    pub(crate) fn with_session<R>(
        &mut self,
        peer: SocketAddr,
        now: Instant,
        f: impl FnOnce(&mut Session) -> R,
    ) -> R {
        if !self.sessions.contains_key(&peer) && self.sessions.len() >= self.cap {
            self.make_room(now);
        }
        // Any eviction may have dropped an earlier session of this very
        // peer; the session withholds "never received" for a TTL after it.
        let forgot_at = self.last_eviction;
        let limits = self.limits;
        let session = self
            .sessions
            .entry(peer)
            .or_insert_with(|| Session::new(limits, now, forgot_at));
        let before = session.entries();
        let r = f(session);
        let after = session.entries();
        self.entries = (self.entries + after).saturating_sub(before);
        r
    }

    fn make_room(&mut self, now: Instant) {
        self.sweep(now);
        if self.sessions.len() < self.cap {
            return;
        }
        let oldest = self
            .sessions
            .iter()
            .min_by_key(|(_, s)| s.last_activity)
            .map(|(addr, _)| *addr);
        if let Some(addr) = oldest {
            if let Some(s) = self.sessions.remove(&addr) {
                self.entries = self.entries.saturating_sub(s.entries());
            }
            self.evictions += 1;
            self.last_eviction = Some(now);
        }
    }

    /// Visits every session.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&SocketAddr, &Session)) {
        for (addr, s) in &self.sessions {
            f(addr, s);
        }
    }

    /// Expires old entries in every session and drops idle sessions; O(peers),
    /// run from periodic maintenance and when the table is full.
    pub(crate) fn sweep(&mut self, now: Instant) {
        let idle = self.idle_ttl;
        let mut entries = 0;
        self.sessions.retain(|_, s| {
            s.expire(now);
            let keep = now.saturating_duration_since(s.last_activity) <= idle;
            if keep {
                entries += s.entries();
            }
            keep
        });
        self.entries = entries;
    }
}
