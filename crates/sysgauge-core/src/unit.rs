//! Units of measurement and the direction in which a metric is better.
//!
//! Units are stored as short strings (`MB/s`, `ns`, `op/s`) so that results
//! imported from foreign tables keep whatever unit they came with; the known
//! ones get variants so renderers can convert and label them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A unit. Serialised as its symbol.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Unit {
    /// Decimal megabytes (10^6 bytes) per second: the headline throughput unit.
    MBps,
    /// Binary mebibytes (2^20 bytes) per second, only where labelled.
    MiBps,
    /// Decimal gigabytes (10^9 bytes) per second.
    GBps,
    /// Thousands of bytes per second (the `openssl speed` table unit).
    KBps,
    /// Megabits (10^6 bits) per second.
    Mbitps,
    /// Operations per second (sign/s, verify/s, spawns/s, files/s ...).
    OpsPerSec,
    /// Iterations per second (CPU kernels).
    ItersPerSec,
    /// Packets per second.
    PacketsPerSec,
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    MHz,
    Percent,
    /// A dimensionless ratio.
    Ratio,
    /// A dimensionless index (1000 = reference machine).
    Index,
    Count,
    Bytes,
    /// Anything else, kept verbatim (imported tables).
    Other(String),
}

impl Unit {
    pub fn symbol(&self) -> &str {
        match self {
            Unit::MBps => "MB/s",
            Unit::MiBps => "MiB/s",
            Unit::GBps => "GB/s",
            Unit::KBps => "kB/s",
            Unit::Mbitps => "Mbit/s",
            Unit::OpsPerSec => "op/s",
            Unit::ItersPerSec => "iter/s",
            Unit::PacketsPerSec => "pkt/s",
            Unit::Nanoseconds => "ns",
            Unit::Microseconds => "us",
            Unit::Milliseconds => "ms",
            Unit::Seconds => "s",
            Unit::MHz => "MHz",
            Unit::Percent => "%",
            Unit::Ratio => "x",
            Unit::Index => "index",
            Unit::Count => "count",
            Unit::Bytes => "B",
            Unit::Other(s) => s,
        }
    }

    /// The direction a metric in this unit is usually better in; used when an
    /// imported table does not say.
    pub fn natural_better(&self) -> Better {
        match self {
            Unit::Nanoseconds | Unit::Microseconds | Unit::Milliseconds | Unit::Seconds => {
                Better::Lower
            }
            _ => Better::Higher,
        }
    }
}

impl From<String> for Unit {
    fn from(s: String) -> Unit {
        match s.as_str() {
            "MB/s" => Unit::MBps,
            "MiB/s" => Unit::MiBps,
            "GB/s" => Unit::GBps,
            "kB/s" => Unit::KBps,
            "Mbit/s" => Unit::Mbitps,
            "op/s" => Unit::OpsPerSec,
            "iter/s" => Unit::ItersPerSec,
            "pkt/s" => Unit::PacketsPerSec,
            "ns" => Unit::Nanoseconds,
            "us" | "µs" => Unit::Microseconds,
            "ms" => Unit::Milliseconds,
            "s" => Unit::Seconds,
            "MHz" => Unit::MHz,
            "%" => Unit::Percent,
            "x" => Unit::Ratio,
            "index" => Unit::Index,
            "count" => Unit::Count,
            "B" => Unit::Bytes,
            _ => Unit::Other(s),
        }
    }
}

impl From<&str> for Unit {
    fn from(s: &str) -> Unit {
        Unit::from(s.to_string())
    }
}

impl From<Unit> for String {
    fn from(u: Unit) -> String {
        u.symbol().to_string()
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Which direction is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }

    /// Parse `higher`/`lower` (case-insensitive).
    pub fn parse(s: &str) -> Option<Better> {
        match s.trim().to_ascii_lowercase().as_str() {
            "higher" | "high" => Some(Better::Higher),
            "lower" | "low" => Some(Better::Lower),
            _ => None,
        }
    }
}

impl fmt::Display for Better {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_round_trip() {
        for u in [
            Unit::MBps,
            Unit::MiBps,
            Unit::GBps,
            Unit::KBps,
            Unit::Mbitps,
            Unit::OpsPerSec,
            Unit::ItersPerSec,
            Unit::PacketsPerSec,
            Unit::Nanoseconds,
            Unit::Microseconds,
            Unit::Milliseconds,
            Unit::Seconds,
            Unit::MHz,
            Unit::Percent,
            Unit::Ratio,
            Unit::Index,
            Unit::Count,
            Unit::Bytes,
            Unit::Other("widgets/s".into()),
        ] {
            assert_eq!(Unit::from(u.symbol().to_string()), u);
        }
    }

    #[test]
    fn better_parse() {
        assert_eq!(Better::parse("Higher"), Some(Better::Higher));
        assert_eq!(Better::parse("lower"), Some(Better::Lower));
        assert_eq!(Better::parse("up"), None);
        assert_eq!(Unit::Nanoseconds.natural_better(), Better::Lower);
        assert_eq!(Unit::MBps.natural_better(), Better::Higher);
    }
}
