//! Entry point for cargo-fuzz (feature `fuzzing` only): drives a session
//! through the listener's packet path — decode, handle, size the reply,
//! encode, commit — on datagrams taken from the fuzzer's bytes, without
//! sockets. The session is crate-private, so the fuzz crate reaches it
//! through here rather than widening its API for everyone.

use crate::codec::{self, EncodeOptions, Packet};
use crate::session::{self, SentKind, Session, SessionLimits};
use std::time::{Duration, Instant};

/// Feeds `data` to one session. Layout: each datagram is one length byte
/// then that many bytes; a length byte of 0 instead makes the session send
/// a request of its own whose message id is the next 6 bytes, so that the
/// fuzzer can answer it (real ids are random and could never be guessed).
/// Panics only on a bug: every input must be handled.
pub fn session_datagrams(data: &[u8]) {
    let limits = SessionLimits {
        max_sent: 16,
        max_seen: 16,
        max_courtesy: 16,
        max_list_ids: 8,
        inquire_wait: Duration::from_millis(1),
        state_ttl: Duration::from_secs(60),
    };
    let start = Instant::now();
    let mut s = Session::new(limits, start, None);
    let mut events = Vec::new();
    let mut reply = Packet::new([0; 6]);
    let mut out = Vec::new();
    let mut rest = data;
    let mut step = 0u64;
    while let Some((&len, tail)) = rest.split_first() {
        step += 1;
        // Time moves on by 1 ms a datagram, so investigations fire.
        let now = start + Duration::from_millis(step);
        if len == 0 {
            let Some(id) = tail.get(..6) else { return };
            let mut req = Packet::new([0; 6]);
            s.prepare_request(now, limits.inquire_wait, &mut req);
            req.message_id.copy_from_slice(id);
            s.commit_sent(&req, now, SentKind::Ping);
            rest = &tail[6..];
            continue;
        }
        let n = usize::from(len).min(tail.len());
        let (datagram, next) = tail.split_at(n);
        rest = next;
        let Ok(packet) = codec::decode(datagram) else {
            continue;
        };
        events.clear();
        if s.handle(
            &packet,
            now,
            step.is_multiple_of(2),
            &mut events,
            &mut reply,
        ) {
            reply.opcodes.host_latency_us = Some(0);
            let (limit, pad) = session::reply_size(n, 64, 512);
            if session::fit_within(&mut reply, None, limit) {
                let opts = EncodeOptions {
                    min_size: pad,
                    max_size: limit,
                    pad_to: Some(pad),
                    auth: None,
                };
                let done = codec::encode_into(&reply, &opts, &mut out);
                if done.complete {
                    assert!(
                        codec::decode(&out).is_ok(),
                        "a reply we encoded must decode"
                    );
                    s.commit_sent(&reply, now, SentKind::Ping);
                }
            }
        }
        s.expire(now);
        assert!(s.entries() <= 3 * 16, "session tables beyond their limits");
    }
}
