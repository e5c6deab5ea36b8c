//! The upload tokens of `sysgauge serve`: named, stored only as a hash,
//! revocable. The SQL is shared by both backends, which each run it
//! through two primitives (`token_exec`, `token_rows`) taking text
//! arguments, so the rules live here once.

use crate::rows::{Decoder, Row};
use crate::Result;
use chrono::{DateTime, Utc};

/// One upload token as stored: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// What `Store::add_token` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenAdded {
    Added,
    /// A token of that name exists (revoked or not); nothing was written.
    NameTaken,
}

pub(crate) const INSERT_TOKEN: &str =
    "INSERT INTO upload_tokens (name, token_hash, created_at) VALUES (?1, ?2, ?3)
     ON CONFLICT DO NOTHING";
pub(crate) const LIST_TOKENS: &str =
    "SELECT name, created_at, revoked_at FROM upload_tokens ORDER BY name";
pub(crate) const TOKEN_BY_HASH: &str =
    "SELECT name, created_at, revoked_at FROM upload_tokens WHERE token_hash = ?1";
pub(crate) const REVOKE_TOKEN: &str =
    "UPDATE upload_tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL";
pub(crate) const PING: &str = "SELECT 1";

/// A time as the store writes every time stamp (RFC 3339, UTC).
pub(crate) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339()
}

/// A row of `LIST_TOKENS` or `TOKEN_BY_HASH`.
pub(crate) fn decode(d: &Decoder<'_>, r: &impl Row) -> Result<TokenRow> {
    Ok(TokenRow {
        name: d.text(r, 0)?,
        created_at: d.time_at(r, 1)?,
        revoked_at: d.opt_time_at(r, 2)?,
    })
}
