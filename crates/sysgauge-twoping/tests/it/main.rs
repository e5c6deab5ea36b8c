//! The 2ping library's integration tests, one test crate: a module per
//! topic, linked once into one binary (`cargo test -p sysgauge-twoping
//! --test it`, `... --test it loopback::` for one topic).

mod common;

mod codec_properties;
mod interop;
mod listener_robustness;
mod loopback;
mod netns;
mod reference_packets;
