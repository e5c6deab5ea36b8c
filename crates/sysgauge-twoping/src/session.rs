//! The protocol state one peer keeps about another, shared by the client and
//! the listener.
//!
//! 2ping is symmetric: a "listener" is just a peer that waits for the first
//! packet, and either side may request replies and investigations. So both
//! halves of this crate run the same engine:
//!
//! - `sent`: our reply-requesting packets awaiting a reply. A reply removes
//!   the entry and yields an RTT; an investigation result removes it and
//!   attributes the loss; entries unanswered past the inquire wait are listed
//!   in `please investigate` on our next reply-requesting packet.
//! - `seen`: the peer's reply-requesting packets we received (and answered),
//!   so we can answer the peer's investigations. A courtesy expiration from
//!   the peer removes entries. If we had to forget an entry early, for lack
//!   of room (`forgot_at`), an unknown ID might be one we forgot, so for one
//!   state TTL we stop answering "never received" rather than risk a wrong
//!   verdict: the peer then records the loss as undetermined, which is
//!   honest. After a TTL, anything forgotten then is older than any request
//!   a peer still investigates (both sides drop state after the TTL, as the
//!   reference does), and full answers resume. Entries leaving by age alone
//!   do not count as forgetting, for the same reason.
//! - `courtesy`: IDs of our requests that were answered; we tell the peer it
//!   may forget them, in whatever packet we send next.
//!
//! Replies are built here but sized by the caller: [`fit_within`] trims
//! optional parts so a reply is never larger than the request that caused it
//! (no amplification), and [`Session::commit_sent`] records a packet only
//! once it was actually sent, so trimmed-away parts are not counted.

use crate::auth::Auth;
use crate::codec::{
    EncodeOptions, ExtendedSegment, MessageId, Packet, DEFAULT_MAX_PACKET_SIZE,
    DEFAULT_MIN_PACKET_SIZE, MAX_DATAGRAM,
};
use crate::idtable::IdTable;
use crate::stats::{LossCounts, RttStats};
use std::time::{Duration, Instant};

/// Where a lost ping was lost, from the point of view of whoever sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossDirection {
    /// The request never reached the peer.
    Outbound,
    /// The peer received and answered it, but the answer never came back.
    Inbound,
}

/// Why a reply-requesting packet was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SentKind {
    /// A ping that counts in the statistics (the client's pings, the
    /// listener's second legs).
    Ping,
    /// An end-of-run packet that only carries investigations; never counted.
    Probe,
}

#[derive(Debug, Clone, Copy)]
struct SentEntry {
    seq: u64,
    sent_at: Instant,
    kind: SentKind,
}

/// Bounds and timings of one session.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionLimits {
    /// Most requests awaiting a reply.
    pub max_sent: usize,
    /// Most peer requests remembered for investigations.
    pub max_seen: usize,
    /// Most pending courtesy expirations.
    pub max_courtesy: usize,
    /// Most IDs put in one `please investigate` or courtesy list.
    pub max_list_ids: usize,
    /// Wait before asking about an unanswered request.
    pub inquire_wait: Duration,
    /// Age after which any entry is forgotten.
    pub state_ttl: Duration,
}

/// What happened to our requests because of one incoming packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SessionEvent {
    /// A reply to one of our pings (probes produce no event).
    Reply {
        seq: u64,
        rtt: Duration,
        peer_host_latency: Option<Duration>,
        peer_rtt: Option<Duration>,
    },
    /// An investigation resolved one of our pings as lost.
    Loss { seq: u64, direction: LossDirection },
}

pub(crate) struct Session {
    limits: SessionLimits,
    next_seq: u64,
    sent: IdTable<SentEntry>,
    seen: IdTable<Instant>,
    forgot_at: Option<Instant>,
    courtesy: IdTable<Instant>,
    /// Counts of our pings (not probes).
    pub counts: LossCounts,
    /// RTTs of our pings.
    pub rtt: RttStats,
    /// RTTs the peer enclosed in its third legs.
    pub peer_rtt: RttStats,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub last_activity: Instant,
    /// Report RTTs minus the peer's stated host latency.
    pub subtract_peer_latency: bool,
    /// The peer's program version and notice, as last sent.
    pub peer_texts: PeerTexts,
}

/// Longest peer version or notice text kept, in bytes (longer text is cut
/// at a character boundary), so a peer cannot make our state grow; also the
/// longest notice we send.
pub const MAX_PEER_TEXT: usize = 256;

/// Which text a peer sent about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerTextKind {
    /// Its program version (extended segment 0x3250564e).
    Version,
    /// Its notice text (extended segment 0xa837b44e, `--notice`).
    Notice,
}

/// What a peer said about itself in its extended segments, as last seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerTexts {
    /// Program version text.
    pub version: Option<String>,
    /// Notice text.
    pub notice: Option<String>,
}

fn capped(text: &str) -> &str {
    if text.len() <= MAX_PEER_TEXT {
        return text;
    }
    let mut end = MAX_PEER_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl PeerTexts {
    /// Takes the version and notice of `packet`, if it has them; calls
    /// `changed` for each that is new or different. Allocates only on a
    /// change.
    pub(crate) fn update(&mut self, packet: &Packet, mut changed: impl FnMut(PeerTextKind, &str)) {
        let Some(segments) = &packet.opcodes.extended else {
            return;
        };
        for seg in segments {
            let (slot, kind, text) = match seg {
                ExtendedSegment::ProgramVersion(t) => {
                    (&mut self.version, PeerTextKind::Version, capped(t))
                }
                ExtendedSegment::Notice(t) => (&mut self.notice, PeerTextKind::Notice, capped(t)),
                _ => continue,
            };
            if slot.as_deref() != Some(text) {
                *slot = Some(text.to_string());
                changed(kind, text);
            }
        }
    }
}

pub(crate) fn micros_u32(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

impl Session {
    /// `forgot_at` is when earlier state about this peer may have been
    /// dropped (a listener that evicted this peer's session); "never
    /// received" answers are withheld for a state TTL after it.
    pub(crate) fn new(limits: SessionLimits, now: Instant, forgot_at: Option<Instant>) -> Session {
        Session {
            limits,
            next_seq: 1,
            sent: IdTable::new(limits.max_sent),
            seen: IdTable::new(limits.max_seen),
            forgot_at,
            courtesy: IdTable::new(limits.max_courtesy),
            counts: LossCounts::default(),
            rtt: RttStats::default(),
            peer_rtt: RttStats::default(),
            packets_sent: 0,
            packets_received: 0,
            last_activity: now,
            subtract_peer_latency: false,
            peer_texts: PeerTexts::default(),
        }
    }

    /// When the oldest unanswered ping was sent.
    pub(crate) fn oldest_outstanding_ping(&self) -> Option<Instant> {
        self.sent
            .iter_oldest()
            .find(|(_, e)| e.kind == SentKind::Ping)
            .map(|(_, e)| e.sent_at)
    }

    /// Entries held, for the listener's state accounting.
    pub(crate) fn entries(&self) -> usize {
        self.sent.len() + self.seen.len() + self.courtesy.len()
    }

    /// Upper bound of the memory one session's tables can take.
    pub(crate) fn max_bytes(limits: &SessionLimits) -> usize {
        std::mem::size_of::<Session>()
            + 2 * MAX_PEER_TEXT
            + IdTable::<SentEntry>::max_bytes(limits.max_sent)
            + IdTable::<Instant>::max_bytes(limits.max_seen)
            + IdTable::<Instant>::max_bytes(limits.max_courtesy)
    }

    /// Fills `packet` with a new reply-requesting packet: pings list every
    /// request unanswered for at least `investigate_after` and carry pending
    /// courtesy expirations.
    pub(crate) fn prepare_request(
        &self,
        now: Instant,
        investigate_after: Duration,
        packet: &mut Packet,
    ) {
        *packet = Packet::new(crate::codec::random_message_id());
        packet.opcodes.reply_requested = true;
        self.add_investigations(now, investigate_after, packet);
        self.add_courtesy(packet);
    }

    fn add_investigations(&self, now: Instant, after: Duration, packet: &mut Packet) {
        let ids: Vec<MessageId> = self
            .sent
            .iter_oldest()
            .take_while(|(_, e)| now.saturating_duration_since(e.sent_at) >= after)
            .filter(|(_, e)| e.kind == SentKind::Ping)
            .map(|(id, _)| *id)
            .take(self.limits.max_list_ids)
            .collect();
        if !ids.is_empty() {
            packet.opcodes.please_investigate = Some(ids);
        }
    }

    fn add_courtesy(&self, packet: &mut Packet) {
        if self.courtesy.is_empty() {
            return;
        }
        let ids: Vec<MessageId> = self
            .courtesy
            .iter_oldest()
            .map(|(id, _)| *id)
            .take(self.limits.max_list_ids)
            .collect();
        packet.opcodes.courtesy_expiration = Some(ids);
    }

    /// Processes one decoded packet from the peer, received at
    /// `received_at`. Events about our requests go to `events`. Returns true
    /// and fills `reply` if the peer asked for a reply; the caller then
    /// sizes, sends and commits it.
    pub(crate) fn handle(
        &mut self,
        packet: &Packet,
        received_at: Instant,
        three_way: bool,
        events: &mut Vec<SessionEvent>,
        reply: &mut Packet,
    ) -> bool {
        self.packets_received += 1;
        self.last_activity = received_at;
        let o = &packet.opcodes;
        let peer_rtt = o
            .rtt_enclosed_us
            .map(|us| Duration::from_micros(u64::from(us)));
        if let Some(rtt) = peer_rtt {
            self.peer_rtt.record(rtt);
        }

        let mut our_rtt = None;
        if let Some(answered) = o.in_reply_to {
            if let Some(entry) = self.sent.remove(&answered) {
                let mut rtt = received_at.saturating_duration_since(entry.sent_at);
                let peer_host_latency = o
                    .host_latency_us
                    .map(|us| Duration::from_micros(u64::from(us)));
                if self.subtract_peer_latency {
                    // A peer's latency claim could exceed our RTT; saturate
                    // at zero as the reference does.
                    rtt = rtt.saturating_sub(peer_host_latency.unwrap_or_default());
                }
                our_rtt = Some(rtt);
                if entry.kind == SentKind::Ping {
                    self.counts.received += 1;
                    self.rtt.record(rtt);
                    events.push(SessionEvent::Reply {
                        seq: entry.seq,
                        rtt,
                        peer_host_latency,
                        peer_rtt,
                    });
                }
            }
            // The peer may forget the request it just answered, as the
            // reference does for every "in reply to" it receives.
            self.courtesy.insert(answered, received_at);
        }

        for (list, direction) in [
            (&o.investigation_seen, LossDirection::Inbound),
            (&o.investigation_never_received, LossDirection::Outbound),
        ] {
            for id in list.iter().flatten() {
                let Some(entry) = self.sent.remove(id) else {
                    continue;
                };
                if entry.kind != SentKind::Ping {
                    continue;
                }
                match direction {
                    LossDirection::Inbound => self.counts.lost_inbound += 1,
                    LossDirection::Outbound => self.counts.lost_outbound += 1,
                }
                events.push(SessionEvent::Loss {
                    seq: entry.seq,
                    direction,
                });
            }
        }

        for id in o.courtesy_expiration.iter().flatten() {
            self.seen.remove(id);
        }

        if !o.reply_requested {
            return false;
        }
        if self.seen.insert(packet.message_id, received_at).is_some() {
            self.forgot_at = Some(received_at);
        }
        let uncertain = self
            .forgot_at
            .is_some_and(|t| received_at.saturating_duration_since(t) < self.limits.state_ttl);
        *reply = Packet::new(crate::codec::random_message_id());
        let r = &mut reply.opcodes;
        r.in_reply_to = Some(packet.message_id);
        r.rtt_enclosed_us = our_rtt.map(micros_u32);
        if let Some(asked) = &o.please_investigate {
            let mut seen = Vec::new();
            let mut never = Vec::new();
            for id in asked.iter().take(self.limits.max_list_ids) {
                if self.seen.contains(id) {
                    seen.push(*id);
                } else if !uncertain {
                    never.push(*id);
                }
            }
            r.investigation_seen = (!seen.is_empty()).then_some(seen);
            r.investigation_never_received = (!never.is_empty()).then_some(never);
        }
        // A first leg gets a reply that itself asks for a reply (3-way ping);
        // a second leg (it answers something of ours) is only answered.
        r.reply_requested = o.in_reply_to.is_none() && three_way;
        if r.reply_requested {
            // Investigation requests may only ride on reply-requesting
            // packets, since the peer answers them in its reply.
            self.add_investigations(received_at, self.limits.inquire_wait, reply);
        }
        self.add_courtesy(reply);
        true
    }

    /// Records that `packet` was sent at `sent_at`: courtesy IDs it carried
    /// are done, and if it requested a reply it now awaits one. Returns the
    /// ping's sequence number for pings.
    pub(crate) fn commit_sent(
        &mut self,
        packet: &Packet,
        sent_at: Instant,
        kind: SentKind,
    ) -> Option<u64> {
        self.packets_sent += 1;
        self.last_activity = sent_at;
        for id in packet.opcodes.courtesy_expiration.iter().flatten() {
            self.courtesy.remove(id);
        }
        if !packet.opcodes.reply_requested {
            return None;
        }
        let seq = match kind {
            SentKind::Ping => {
                let seq = self.next_seq;
                self.next_seq += 1;
                self.counts.transmitted += 1;
                seq
            }
            SentKind::Probe => 0,
        };
        // A ping evicted for lack of room simply stays unanswered and ends
        // up undetermined, which is what it is.
        self.sent
            .insert(packet.message_id, SentEntry { seq, sent_at, kind });
        (kind == SentKind::Ping).then_some(seq)
    }

    /// Moves the send time of our request `id`, recorded by
    /// [`Session::commit_sent`] when it was queued, to when it was actually
    /// handed to the kernel with the rest of its batch.
    pub(crate) fn restamp(&mut self, id: &MessageId, sent_at: Instant) {
        if let Some(e) = self.sent.get_mut(id) {
            e.sent_at = sent_at;
        }
    }

    /// Forgets entries older than the state TTL.
    pub(crate) fn expire(&mut self, now: Instant) {
        let ttl = self.limits.state_ttl;
        let old = |t: &Instant| now.saturating_duration_since(*t) > ttl;
        while self.sent.pop_oldest_if(|e| old(&e.sent_at)).is_some() {}
        while self.seen.pop_oldest_if(old).is_some() {}
        while self.courtesy.pop_oldest_if(old).is_some() {}
    }
}

/// Shrinks `packet` until it encodes (signed with `auth`) in at most `limit`
/// bytes, dropping optional parts in this order: extended segments,
/// courtesy expirations, our own investigation requests, investigation
/// answers (truncated to whole IDs first), host latency, enclosed RTT, and
/// the 3-way reply request. Returns false if even then it does not fit; the
/// caller must then not send it.
pub(crate) fn fit_within(packet: &mut Packet, auth: Option<&Auth>, limit: usize) -> bool {
    fn excess(p: &Packet, auth: Option<&Auth>, limit: usize) -> usize {
        p.encoded_len(auth).saturating_sub(limit)
    }
    fn trim(list: &mut Option<Vec<MessageId>>, excess: usize) {
        if let Some(ids) = list {
            let drop = excess.div_ceil(6);
            if drop >= ids.len() {
                *list = None;
            } else {
                ids.truncate(ids.len() - drop);
            }
        }
    }
    if excess(packet, auth, limit) == 0 {
        return true;
    }
    packet.opcodes.extended = None;
    type Getter = fn(&mut crate::codec::Opcodes) -> &mut Option<Vec<MessageId>>;
    let lists: [Getter; 4] = [
        |o| &mut o.courtesy_expiration,
        |o| &mut o.please_investigate,
        |o| &mut o.investigation_never_received,
        |o| &mut o.investigation_seen,
    ];
    for get in lists {
        let e = excess(packet, auth, limit);
        if e == 0 {
            return true;
        }
        trim(get(&mut packet.opcodes), e);
    }
    for drop in [
        |o: &mut crate::codec::Opcodes| o.host_latency_us = None,
        |o: &mut crate::codec::Opcodes| o.rtt_enclosed_us = None,
        |o: &mut crate::codec::Opcodes| o.reply_requested = false,
    ] {
        if excess(packet, auth, limit) == 0 {
            return true;
        }
        drop(&mut packet.opcodes);
    }
    excess(packet, auth, limit) == 0
}

/// The program version segment we send, built once.
pub(crate) fn version_segment() -> ExtendedSegment {
    ExtendedSegment::ProgramVersion(format!("sysgauge-twoping {}", env!("CARGO_PKG_VERSION")))
}

/// What a client and a listener alike send and ask of their peers: how
/// large their packets are, signing, the 3rd leg, their own version and
/// notice, and how long an unanswered packet waits before it is asked
/// about. `Default` gives the reference program's defaults.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// Pad packets to at least this size (default 128). A reply is padded
    /// to it only when its request is larger than `max_packet_size` (else
    /// to the request's size).
    pub min_packet_size: usize,
    /// Largest packet (default 512).
    pub max_packet_size: usize,
    /// Wait before asking about an unanswered packet (default 10 s).
    pub inquire_wait: Duration,
    /// Sign packets and require signed ones.
    pub auth: Option<Auth>,
    /// Ask for the 3rd leg when answering a peer's ping (default true).
    pub three_way: bool,
    /// Send our program version (default true).
    pub send_version: bool,
    /// Notice text sent in every packet (`--notice`; at most
    /// [`MAX_PEER_TEXT`] bytes are sent). With the version, the first thing
    /// a reply drops when it would be too large.
    pub notice: Option<String>,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions {
            min_packet_size: DEFAULT_MIN_PACKET_SIZE,
            max_packet_size: DEFAULT_MAX_PACKET_SIZE,
            inquire_wait: Duration::from_secs(10),
            auth: None,
            three_way: true,
            send_version: true,
            notice: None,
        }
    }
}

impl PeerOptions {
    /// The packet sizes make sense, `max_packet_size` being at least
    /// `lowest` (what the side needs to say anything useful).
    pub(crate) fn check_sizes(&self, lowest: usize) -> Result<(), String> {
        let (min, max) = (self.min_packet_size, self.max_packet_size);
        if min > max {
            return Err(format!(
                "min packet size {min} is above max packet size {max}"
            ));
        }
        if max < lowest || max > MAX_DATAGRAM {
            return Err(format!(
                "max packet size {max} must be within {lowest}..={MAX_DATAGRAM}"
            ));
        }
        Ok(())
    }

    /// The extended segments every packet of ours carries: the program
    /// version (unless turned off) and the notice (if any), as the
    /// reference puts them in its base packet. `None` when there are none.
    pub(crate) fn own_segments(&self) -> Option<Vec<ExtendedSegment>> {
        let mut v = Vec::new();
        if self.send_version {
            v.push(version_segment());
        }
        if let Some(n) = &self.notice {
            v.push(ExtendedSegment::Notice(capped(n).to_string()));
        }
        (!v.is_empty()).then_some(v)
    }
}

/// Size rules for a reply to a request of `request_len` bytes, given the
/// configured packet size range: returns (largest allowed reply, pad target).
///
/// A reply is padded to the request's size when that size is within
/// [min, max] (the reference's size matching), and is never larger than the
/// request (no amplification) nor than `max`.
pub(crate) fn reply_size(request_len: usize, min: usize, max: usize) -> (usize, usize) {
    let limit = request_len.min(max);
    let pad = if request_len > max {
        min.min(limit)
    } else {
        request_len
    };
    (limit, pad)
}

/// Readies `reply`, the answer to a request of `request_len` bytes that
/// arrived at `received_at`: our `extended` segments and a host latency,
/// then [`fit_within`] the [`reply_size`] limit, the host latency stamped
/// last (only the encoding and MAC remain after it). Returns how to encode
/// the reply, or `None` when it cannot fit and must not be sent.
pub(crate) fn ready_reply<'a>(
    reply: &mut Packet,
    extended: Option<&[ExtendedSegment]>,
    request_len: usize,
    min: usize,
    max: usize,
    auth: Option<&'a Auth>,
    received_at: Instant,
) -> Option<EncodeOptions<'a>> {
    if let Some(v) = extended {
        reply.opcodes.extended = Some(v.to_vec());
    }
    reply.opcodes.host_latency_us = Some(0);
    let (limit, pad) = reply_size(request_len, min, max);
    if !fit_within(reply, auth, limit) {
        return None;
    }
    if reply.opcodes.host_latency_us.is_some() {
        reply.opcodes.host_latency_us = Some(micros_u32(received_at.elapsed()));
    }
    Some(EncodeOptions {
        min_size: pad,
        max_size: limit,
        pad_to: Some(pad),
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;

    fn limits() -> SessionLimits {
        SessionLimits {
            max_sent: 64,
            max_seen: 64,
            max_courtesy: 16,
            max_list_ids: 32,
            inquire_wait: Duration::from_millis(100),
            state_ttl: Duration::from_secs(600),
        }
    }

    /// A client's and a server's session, both begun at the returned time.
    fn client_and_server() -> (Instant, Session, Session) {
        let t0 = Instant::now();
        (
            t0,
            Session::new(limits(), t0, None),
            Session::new(limits(), t0, None),
        )
    }

    /// The ping `client` would send at `now`.
    fn ping_at(client: &Session, now: Instant) -> Packet {
        let mut ping = Packet::default();
        client.prepare_request(now, limits().inquire_wait, &mut ping);
        ping
    }

    /// Runs a full 3-way exchange between two sessions in memory.
    #[test]
    fn three_way_exchange_gives_both_sides_an_rtt() {
        let (t0, mut client, mut server) = client_and_server();
        let mut events = Vec::new();
        let ping = ping_at(&client, t0);
        assert_eq!(client.commit_sent(&ping, t0, SentKind::Ping), Some(1));

        let mut leg2 = Packet::default();
        let t1 = t0 + Duration::from_millis(1);
        assert!(server.handle(&ping, t1, true, &mut events, &mut leg2));
        assert!(leg2.opcodes.reply_requested);
        assert_eq!(leg2.opcodes.in_reply_to, Some(ping.message_id));
        server.commit_sent(&leg2, t1, SentKind::Ping);

        let mut leg3 = Packet::default();
        let t2 = t0 + Duration::from_millis(2);
        assert!(client.handle(&leg2, t2, true, &mut events, &mut leg3));
        assert!(!leg3.opcodes.reply_requested);
        assert_eq!(leg3.opcodes.rtt_enclosed_us, Some(2000));
        assert!(matches!(
            events.as_slice(),
            [SessionEvent::Reply { seq: 1, .. }]
        ));
        client.commit_sent(&leg3, t2, SentKind::Ping);
        events.clear();

        let t3 = t0 + Duration::from_millis(3);
        let mut none = Packet::default();
        assert!(!server.handle(&leg3, t3, true, &mut events, &mut none));
        match events.as_slice() {
            [SessionEvent::Reply { rtt, peer_rtt, .. }] => {
                assert_eq!(*rtt, Duration::from_millis(2));
                assert_eq!(*peer_rtt, Some(Duration::from_millis(2)));
            }
            other => panic!("unexpected events {other:?}"),
        }
        assert_eq!(client.counts.received, 1);
        assert_eq!(server.counts.received, 1);
        // The leg-3 courtesy list let the server forget the client's ping.
        assert_eq!(
            leg3.opcodes.courtesy_expiration,
            Some(vec![ping.message_id])
        );
        assert!(!server.seen.contains(&ping.message_id));
    }

    #[test]
    fn investigations_attribute_direction() {
        let (t0, mut client, mut server) = client_and_server();
        let mut events = Vec::new();
        let mut scratch = Packet::default();

        // Ping 1 is lost outbound (server never sees it).
        let p1 = ping_at(&client, t0);
        client.commit_sent(&p1, t0, SentKind::Ping);
        // Ping 2 reaches the server, but its reply is lost inbound.
        let p2 = ping_at(&client, t0);
        client.commit_sent(&p2, t0, SentKind::Ping);
        assert!(server.handle(&p2, t0, true, &mut events, &mut scratch));
        server.commit_sent(&scratch, t0, SentKind::Ping);

        // Later, ping 3 carries the investigation.
        let later = t0 + Duration::from_millis(500);
        let p3 = ping_at(&client, later);
        assert_eq!(
            p3.opcodes.please_investigate,
            Some(vec![p1.message_id, p2.message_id])
        );
        client.commit_sent(&p3, later, SentKind::Ping);
        let mut reply = Packet::default();
        assert!(server.handle(&p3, later, true, &mut events, &mut reply));
        assert_eq!(reply.opcodes.investigation_seen, Some(vec![p2.message_id]));
        assert_eq!(
            reply.opcodes.investigation_never_received,
            Some(vec![p1.message_id])
        );
        events.clear();
        client.handle(&reply, later, true, &mut events, &mut scratch);
        assert_eq!(client.counts.lost_outbound, 1);
        assert_eq!(client.counts.lost_inbound, 1);
        assert_eq!(client.counts.received, 1);
        assert!(events.contains(&SessionEvent::Loss {
            seq: 1,
            direction: LossDirection::Outbound
        }));
        assert!(events.contains(&SessionEvent::Loss {
            seq: 2,
            direction: LossDirection::Inbound
        }));
    }

    #[test]
    fn forgetful_peer_does_not_claim_never_received() {
        let t0 = Instant::now();
        let mut server = Session::new(limits(), t0, Some(t0));
        let mut ask = Packet::new([1; 6]);
        ask.opcodes.reply_requested = true;
        ask.opcodes.please_investigate = Some(vec![[7; 6]]);
        let mut reply = Packet::default();
        assert!(server.handle(&ask, t0, true, &mut Vec::new(), &mut reply));
        assert_eq!(reply.opcodes.investigation_never_received, None);
        assert_eq!(reply.opcodes.investigation_seen, None);
    }

    #[test]
    fn capacity_eviction_withholds_never_received_for_one_ttl() {
        let t0 = Instant::now();
        let small = SessionLimits {
            max_seen: 2,
            state_ttl: Duration::from_secs(60),
            ..limits()
        };
        let mut server = Session::new(small, t0, None);
        let ask_about = |server: &mut Session, at: Instant| {
            let mut p = Packet::new(crate::codec::random_message_id());
            p.opcodes.reply_requested = true;
            p.opcodes.please_investigate = Some(vec![[7; 6]]);
            let mut reply = Packet::default();
            server.handle(&p, at, true, &mut Vec::new(), &mut reply);
            reply.opcodes.investigation_never_received
        };
        // Two pings fit; the third evicts the first.
        assert_eq!(ask_about(&mut server, t0), Some(vec![[7; 6]]));
        assert_eq!(ask_about(&mut server, t0), Some(vec![[7; 6]]));
        assert_eq!(ask_about(&mut server, t0), None);
        // A TTL later, anything forgotten then is out of any investigation.
        let later = t0 + Duration::from_secs(61);
        server.expire(later);
        assert_eq!(ask_about(&mut server, later), Some(vec![[7; 6]]));
    }

    #[test]
    fn fit_trims_optional_parts_but_keeps_in_reply_to() {
        let mut p = Packet::new([1; 6]);
        p.opcodes.reply_requested = true;
        p.opcodes.in_reply_to = Some([2; 6]);
        p.opcodes.host_latency_us = Some(5);
        p.opcodes.courtesy_expiration = Some(vec![[3; 6]; 10]);
        p.opcodes.investigation_seen = Some(vec![[4; 6]; 10]);
        p.opcodes.extended = Some(vec![version_segment()]);
        assert!(fit_within(&mut p, None, 60));
        assert!(p.encoded_len(None) <= 60);
        assert_eq!(p.opcodes.in_reply_to, Some([2; 6]));
        assert!(p.opcodes.extended.is_none());
        assert!(p.opcodes.courtesy_expiration.is_none());
        // 12 + 2 + 8 + 6 = 28 bytes of essentials and latency remain; the
        // seen list was trimmed to fit the rest.
        let seen = p.opcodes.investigation_seen.as_ref().map_or(0, Vec::len);
        assert_eq!(seen, (60 - 28 - 4) / 6);
        // Header and "in reply to" alone take 20 bytes.
        assert!(!fit_within(&mut p, None, 19));
        let bytes = codec::encode(&p, 0, 60, None);
        assert!(codec::decode(&bytes).is_ok());
    }

    #[test]
    fn reply_size_never_exceeds_request() {
        let (min, max) = (DEFAULT_MIN_PACKET_SIZE, DEFAULT_MAX_PACKET_SIZE);
        assert_eq!(reply_size(128, min, max), (128, 128));
        assert_eq!(reply_size(300, min, max), (300, 300));
        assert_eq!(reply_size(40, min, max), (40, 40));
        assert_eq!(reply_size(1000, min, max), (512, 128));
        for len in 0..2000 {
            let (limit, pad) = reply_size(len, min, max);
            assert!(limit <= len && pad <= limit);
        }
    }
}
