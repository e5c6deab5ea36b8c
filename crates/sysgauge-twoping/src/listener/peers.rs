//! The listener's per-peer sessions, bounded in number and in memory, with
//! O(1) work per datagram however full the table is.
//!
//! State is keyed by the peer's (address, port), and within a peer by
//! message ID, as the protocol requires. Each session's tables are bounded
//! (see `SessionLimits`), and the number of sessions is bounded by two
//! least-recently-used lists (a segmented LRU):
//!
//! - **probation**: every new peer starts here. When it is full, a new peer
//!   evicts its least recently active member: O(1), so a spoofed-source
//!   flood (each datagram a "new peer") costs a constant amount of work per
//!   datagram instead of a scan of the table.
//! - **trusted**: a peer moves here once it has answered one of our 2nd
//!   legs with a 3rd leg. That proves it receives at its address, which a
//!   spoofed source does not, so a flood of spoofed sources churns only the
//!   probation list and never evicts a real client. When full, the least
//!   recently active trusted peer is dropped (O(1) too); a live client
//!   re-earns its place with its next exchange.
//!
//! The lists are `hashlink::LinkedHashMap`s (a hash map threaded with a
//! doubly-linked list in insertion order, with O(1) move-to-back and
//! pop-front): a maintained crate already in the workspace's dependency
//! tree (through rusqlite); an index-linked list of our own would be the
//! same structure with more bookkeeping of our own to get wrong.
//!
//! Idle sessions and expired IDs are swept by the periodic maintenance
//! (O(peers) once a second, bounded by the table size), never per datagram.
//! A session created within a state TTL of any eviction starts "forgetful":
//! it may have lost what an earlier incarnation saw, so it will not answer
//! "never received" for IDs it does not know (see the session module).
//!
//! The total number of ID entries is tracked incrementally so the listener
//! can publish it as a gauge without walking every session per packet.

use crate::codec::MessageId;
use crate::session::{Session, SessionLimits};
use hashlink::LinkedHashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub(crate) struct PeerTable {
    probation: LinkedHashMap<SocketAddr, Session>,
    trusted: LinkedHashMap<SocketAddr, Session>,
    probation_cap: usize,
    trusted_cap: usize,
    limits: SessionLimits,
    idle_ttl: Duration,
    last_eviction: Option<Instant>,
    entries: usize,
    pub(crate) evictions: u64,
}

impl PeerTable {
    /// At most `cap` sessions (at least 2): half of them (rounded down, at
    /// least 1) may be trusted peers, the rest are for new ones.
    pub(crate) fn new(cap: usize, limits: SessionLimits, idle_ttl: Duration) -> PeerTable {
        let cap = cap.max(2);
        let trusted_cap = (cap / 2).max(1);
        PeerTable {
            probation: LinkedHashMap::new(),
            trusted: LinkedHashMap::new(),
            probation_cap: cap - trusted_cap,
            trusted_cap,
            limits,
            idle_ttl,
            last_eviction: None,
            entries: 0,
            evictions: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.probation.len() + self.trusted.len()
    }

    /// ID entries held by all sessions.
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    /// Whether `peer` has proved that it receives at its address (it
    /// answered one of our 2nd legs). O(1).
    pub(crate) fn is_trusted(&self, peer: &SocketAddr) -> bool {
        self.trusted.contains_key(peer)
    }

    fn forget(&mut self, s: &Session, now: Instant) {
        self.entries = self.entries.saturating_sub(s.entries());
        self.evictions += 1;
        self.last_eviction = Some(now);
    }

    /// Runs `f` on the session of `peer`, creating it (and evicting the
    /// least recently active one of its list if that list is full) as
    /// needed, and keeps the entry count current. O(1).
    pub(crate) fn with_session<R>(
        &mut self,
        peer: SocketAddr,
        now: Instant,
        f: impl FnOnce(&mut Session) -> R,
    ) -> R {
        // Most recently active at the back of its list.
        let in_trusted = self.trusted.to_back(&peer).is_some();
        if !in_trusted && self.probation.to_back(&peer).is_none() {
            if self.probation.len() >= self.probation_cap {
                if let Some((_, s)) = self.probation.pop_front() {
                    self.forget(&s, now);
                }
            }
            // Any eviction may have dropped an earlier session of this very
            // peer; the session withholds "never received" for a TTL after it.
            let session = Session::new(self.limits, now, self.last_eviction);
            self.probation.insert(peer, session);
        }
        let list = if in_trusted {
            &mut self.trusted
        } else {
            &mut self.probation
        };
        let Some(session) = list.get_mut(&peer) else {
            // Not reached: the session was found or inserted above. A fresh
            // throw-away session keeps this total without a panic.
            let mut s = Session::new(self.limits, now, self.last_eviction);
            return f(&mut s);
        };
        let before = session.entries();
        let r = f(session);
        let after = session.entries();
        let proved = session.counts.received > 0;
        self.entries = (self.entries + after).saturating_sub(before);
        if !in_trusted && proved {
            self.promote(peer, now);
        }
        r
    }

    /// Sets the send time of our request `id` to `peer`, if both are still
    /// known (see [`Session::restamp`]); never creates a session. O(1).
    pub(crate) fn restamp(&mut self, peer: &SocketAddr, id: &MessageId, sent_at: Instant) {
        let session = match self.trusted.get_mut(peer) {
            Some(s) => Some(s),
            None => self.probation.get_mut(peer),
        };
        if let Some(s) = session {
            s.restamp(id, sent_at);
        }
    }

    /// Moves `peer` from probation to the trusted list, dropping the least
    /// recently active trusted peer if that list is full. O(1).
    fn promote(&mut self, peer: SocketAddr, now: Instant) {
        let Some(s) = self.probation.remove(&peer) else {
            return;
        };
        if self.trusted.len() >= self.trusted_cap {
            if let Some((_, old)) = self.trusted.pop_front() {
                self.forget(&old, now);
            }
        }
        self.trusted.insert(peer, s);
    }

    /// Visits every session.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&SocketAddr, &Session)) {
        for (addr, s) in self.trusted.iter().chain(self.probation.iter()) {
            f(addr, s);
        }
    }

    /// Expires old entries in every session and drops idle sessions;
    /// O(peers), run from periodic maintenance only.
    pub(crate) fn sweep(&mut self, now: Instant) {
        let idle = self.idle_ttl;
        let mut entries = 0;
        for list in [&mut self.trusted, &mut self.probation] {
            list.retain(|_, s| {
                s.expire(now);
                let keep = now.saturating_duration_since(s.last_activity) <= idle;
                if keep {
                    entries += s.entries();
                }
                keep
            });
        }
        self.entries = entries;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn table(cap: usize) -> PeerTable {
        let limits = SessionLimits {
            max_sent: 4,
            max_seen: 4,
            max_courtesy: 4,
            max_list_ids: 4,
            inquire_wait: Duration::from_secs(10),
            state_ttl: Duration::from_secs(600),
        };
        PeerTable::new(cap, limits, Duration::from_secs(600))
    }

    fn addr(i: u32) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x6440_0000 + i)), 40_000)
    }

    #[test]
    fn a_spoofed_flood_churns_probation_only() {
        let now = Instant::now();
        let mut t = table(8);
        let client: SocketAddr = "192.0.2.1:5000".parse().expect("addr");
        // The client answers a 2nd leg: it is trusted from then on.
        t.with_session(client, now, |s| s.counts.received = 1);
        assert!(t.is_trusted(&client));
        for i in 0..100_000 {
            t.with_session(addr(i), now, |_| ());
            assert!(t.len() <= 8);
        }
        assert!(t.is_trusted(&client), "the flood evicted the real client");
        // Probation holds 4: all but the last four spoofed peers went.
        assert_eq!(t.evictions, 100_000 - 4);
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn the_least_recently_active_goes_first() {
        let now = Instant::now();
        let mut t = table(8);
        for i in 0..4 {
            t.with_session(addr(i), now, |_| ());
        }
        // Peer 0 is active again: peer 1 is now the least recent.
        t.with_session(addr(0), now, |_| ());
        t.with_session(addr(99), now, |_| ());
        let mut seen = Vec::new();
        t.for_each(|a, _| seen.push(*a));
        assert!(seen.contains(&addr(0)));
        assert!(!seen.contains(&addr(1)));
        assert_eq!(t.evictions, 1);
    }

    #[test]
    fn trusted_list_is_bounded_too() {
        let now = Instant::now();
        let mut t = table(8);
        for i in 0..10 {
            t.with_session(addr(i), now, |s| s.counts.received = 1);
        }
        assert_eq!(t.len(), 4);
        assert!(t.is_trusted(&addr(9)));
        assert!(!t.is_trusted(&addr(0)));
    }

    #[test]
    fn idle_peers_are_swept() {
        let now = Instant::now();
        let mut t = table(8);
        t.with_session(addr(1), now, |_| ());
        t.with_session(addr(2), now, |s| s.counts.received = 1);
        t.sweep(now + Duration::from_secs(601));
        assert_eq!(t.len(), 0);
        assert_eq!(t.entries(), 0);
    }
}
