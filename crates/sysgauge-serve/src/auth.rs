//! Tokens and the per-token rate limit.
//!
//! A token is 32 random bytes (hex, after a `sgt_` prefix that makes one
//! recognisable in a leaked file). The database keeps only its SHA-256:
//! a slow password hash (argon2, bcrypt) exists to stop guessing of
//! low-entropy secrets that people choose, and 256 random bits cannot be
//! guessed however fast the hash is, so a plain hash loses nothing and
//! keeps every upload's check cheap.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The prefix of every token `new_token` makes.
pub const TOKEN_PREFIX: &str = "sgt_";

/// A new random token (shown once to whoever made it).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    let mut s = String::from(TOKEN_PREFIX);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// What the database stores of `token`: its SHA-256, hex.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The bearer token of an `Authorization` header value, if it is one.
pub(crate) fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    let token = rest.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The password of an HTTP Basic `Authorization` header value (what a
/// browser sends after asking its user), if it is one.
pub(crate) fn basic_password(value: &str) -> Option<String> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64_decode(rest.trim())?;
    let text = String::from_utf8(decoded).ok()?;
    text.split_once(':').map(|(_, p)| p.to_string())
}

/// Standard base64 (with or without padding); `None` when it is not.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A token bucket per token name: `per_minute` uploads a minute, as a
/// burst of as many.
pub(crate) struct RateLimit {
    per_minute: u32,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimit {
    pub fn new(per_minute: u32) -> RateLimit {
        RateLimit {
            per_minute: per_minute.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Take one upload for `name`; `Err(wait)` when its bucket is empty.
    pub fn take(&self, name: &str) -> Result<(), Duration> {
        let cap = f64::from(self.per_minute);
        let per_second = cap / 60.0;
        let now = Instant::now();
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        let (level, at) = buckets.entry(name.to_string()).or_insert((cap, now));
        *level = (*level + now.duration_since(*at).as_secs_f64() * per_second).min(cap);
        *at = now;
        if *level >= 1.0 {
            *level -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *level) / per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashed() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 64);
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn authorization_headers() {
        assert_eq!(bearer("Bearer sgt_x"), Some("sgt_x"));
        assert_eq!(bearer("bearer  sgt_x "), Some("sgt_x"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        // "user:pass" and "any:sgt_1".
        assert_eq!(
            basic_password("Basic dXNlcjpwYXNz").as_deref(),
            Some("pass")
        );
        assert_eq!(
            basic_password("Basic YW55OnNndF8x").as_deref(),
            Some("sgt_1")
        );
        assert_eq!(basic_password("Basic !!"), None);
    }

    #[test]
    fn the_bucket_empties_and_says_how_long_to_wait() {
        let r = RateLimit::new(3);
        for _ in 0..3 {
            assert!(r.take("a").is_ok());
        }
        let wait = r.take("a").unwrap_err();
        assert!(wait > Duration::from_secs(15) && wait <= Duration::from_secs(20));
        assert!(r.take("b").is_ok(), "buckets are per token");
    }
}
