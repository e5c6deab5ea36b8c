//! The command-line binary's integration tests, one test crate: a module
//! per topic, all linked once into one binary (`cargo test -p sysgauge
//! --test it`, `... --test it fleet::` for one topic). Tests of every topic
//! share the test threads, so a test that measures the machine (timing,
//! CPU shares, its own hogs) takes it for itself with `Sandbox::alone()`;
//! see `common`.

mod common;

mod cli;
mod compare;
mod cpu;
mod crypto_clock;
mod disk;
mod errors;
mod fake;
mod fleet;
mod import_tools;
mod interrupt;
mod mem;
mod net;
mod netns_flood;
mod netns_icmp;
mod netns_serve;
mod netns_twoping;
mod postgres;
mod postgres_frozen;
mod process;
mod quiet;
mod reliability;
mod rounds;
mod serve_site;
mod ssh;
mod sweep;
mod telemetry;
mod upload;
