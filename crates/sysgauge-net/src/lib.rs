//! sysgauge-net: the network families, `net` (TCP, UDP, 2ping, ICMP and
//! HTTP, to a sysgauge net service or any host) and `ssh` (which SSH
//! cipher, MAC and key exchange are fastest, with the real OpenSSH client).
//!
//! The families follow the contract of sysgauge-family; the list of
//! families is sysgauge-registry, above this crate.

pub mod net;
pub mod ssh;
