//! sysgauge-twoping (being built).

pub mod auth;
pub mod checksum;
pub mod client;
pub mod codec;
mod idtable;
pub mod listener;
pub mod net;
mod session;
pub mod stats;

pub use session::LossDirection;
