//! sysgauge-twoping (being built).

pub mod auth;
pub mod checksum;
pub mod codec;
