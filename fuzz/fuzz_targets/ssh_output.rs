//! Fuzz target: what the ssh family reads from ssh and sshd — `ssh -Q`
//! lists, `ssh -v` negotiation lines, error classification of ssh's
//! stderr, the sshd log tail, and `--ssh user@host:port` targets.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_net::ssh::{algorithms, client, session};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = algorithms::parse_query(text);
    let _ = client::parse_negotiated(text);
    let _ = client::classify(text, "exit status 255", "127.0.0.1");
    let _ = client::tail_lines(text, 4);
    let _ = session::Target::parse_remote(text);
});
