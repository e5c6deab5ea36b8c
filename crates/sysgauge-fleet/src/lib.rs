//! sysgauge-fleet: measure many machines agentlessly over the system's
//! OpenSSH client. No CLI code lives here:
//! - `inventory`: host lists and Ansible inventories (INI and YAML) into
//!   one flat list of hosts with their groups and variables;
//! - `ssh`: one multiplexed OpenSSH connection per host (batch mode, a
//!   private ControlPath), commands with deadlines and cancellation;
//! - `remote`: what happens on each host (architecture, binary placement
//!   with a checksum, the run, clean-up);
//! - `fanout`: a bounded pool running hosts in parallel, reporting events;
//! - `leftover`: what a killed fleet run left (its ssh masters and control
//!   directory), removed by the next;
//! - `state`: which hosts failed last time, for `--retry-failed`;
//! - `matrix`: the network matrix on the hosts (listeners, pings, the
//!   throughput rounds, clean-up);
//! - `schedule`: the network matrix's round-robin tournament (every
//!   ordered pair once, no host in two throughput tests in one round).

#![forbid(unsafe_code)]

pub mod arch;
pub mod fanout;
pub mod inventory;
pub mod leftover;
pub mod matrix;
pub mod remote;
pub mod schedule;
pub mod ssh;
pub mod state;
