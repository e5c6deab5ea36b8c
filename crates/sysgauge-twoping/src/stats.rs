//! Ping statistics as the reference program reports them.
//!
//! - RTT: min, average, EWMA with alpha = 1/8 (seeded with the first sample,
//!   as the reference does), max, and mdev = the population standard
//!   deviation. Welford's update keeps mdev exact over millions of flood
//!   samples where sum-of-squares loses precision.
//! - Losses: a lost ping is outbound if the peer said it never received the
//!   request, inbound if the peer said it had received and answered it, and
//!   undetermined otherwise (`transmitted - received - outbound - inbound`,
//!   the reference's formula).

use std::time::Duration;

/// Running RTT statistics.
#[derive(Debug, Clone, Default)]
pub struct RttStats {
    count: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    ewma: f64,
}

/// RTT statistics at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttSummary {
    /// Samples.
    pub count: u64,
    /// Smallest RTT.
    pub min: Duration,
    /// Arithmetic mean.
    pub avg: Duration,
    /// Exponentially weighted moving average, alpha = 1/8.
    pub ewma: Duration,
    /// Largest RTT.
    pub max: Duration,
    /// Population standard deviation.
    pub mdev: Duration,
}

impl RttStats {
    /// Adds one sample.
    pub fn record(&mut self, rtt: Duration) {
        let x = rtt.as_secs_f64();
        self.count += 1;
        if self.count == 1 {
            self.min = x;
            self.max = x;
            self.ewma = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
            self.ewma += (x - self.ewma) / 8.0;
        }
        // Count fits f64 exactly far beyond any real run.
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The current EWMA, if any sample was recorded (adaptive mode uses it).
    pub fn ewma(&self) -> Option<Duration> {
        (self.count > 0).then(|| secs(self.ewma))
    }

    /// Summary, or `None` before the first sample.
    pub fn summary(&self) -> Option<RttSummary> {
        if self.count == 0 {
            return None;
        }
        let variance = (self.m2 / self.count as f64).max(0.0);
        Some(RttSummary {
            count: self.count,
            min: secs(self.min),
            avg: secs(self.mean),
            ewma: secs(self.ewma),
            max: secs(self.max),
            mdev: secs(variance.sqrt()),
        })
    }
}

fn secs(x: f64) -> Duration {
    Duration::try_from_secs_f64(x).unwrap_or_default()
}

/// Ping counts of one direction of pinging (our requests to one peer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LossCounts {
    /// Reply-requesting pings sent.
    pub transmitted: u64,
    /// Replies received to them.
    pub received: u64,
    /// Lost on the way to the peer (peer never received the request).
    pub lost_outbound: u64,
    /// Lost on the way back (peer received and answered).
    pub lost_inbound: u64,
}

impl LossCounts {
    /// Pings not answered.
    pub fn lost(&self) -> u64 {
        self.transmitted.saturating_sub(self.received)
    }

    /// Lost pings whose direction is unknown.
    pub fn undetermined(&self) -> u64 {
        self.lost()
            .saturating_sub(self.lost_outbound + self.lost_inbound)
    }

    /// `n` as a percentage of transmitted (0 when nothing was sent).
    pub fn percent(&self, n: u64) -> f64 {
        if self.transmitted == 0 {
            0.0
        } else {
            n as f64 * 100.0 / self.transmitted as f64
        }
    }

    /// Loss percentage.
    pub fn loss_percent(&self) -> f64 {
        self.percent(self.lost())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Duration {
        Duration::from_secs_f64(x / 1000.0)
    }

    fn close(a: Duration, b_ms: f64) -> bool {
        (a.as_secs_f64() * 1000.0 - b_ms).abs() < 1e-6
    }

    #[test]
    fn matches_reference_formulas() {
        let mut s = RttStats::default();
        for x in [1.0, 2.0, 3.0, 10.0] {
            s.record(ms(x));
        }
        let sum = s.summary().expect("samples");
        assert!(close(sum.min, 1.0));
        assert!(close(sum.max, 10.0));
        assert!(close(sum.avg, 4.0));
        // Reference: ewma*8 seeded with 8*x1, then += x - ewma8/8.
        let mut e8 = 8.0;
        for x in [2.0, 3.0, 10.0] {
            e8 += x - e8 / 8.0;
        }
        assert!(close(sum.ewma, e8 / 8.0));
        // Population std dev of 1,2,3,10: sqrt(mean(x^2) - mean^2).
        let pop = ((1.0 + 4.0 + 9.0 + 100.0) / 4.0 - 16.0_f64).sqrt();
        assert!(close(sum.mdev, pop));
    }

    #[test]
    fn undetermined_is_the_rest() {
        let c = LossCounts {
            transmitted: 10,
            received: 6,
            lost_outbound: 1,
            lost_inbound: 2,
        };
        assert_eq!(c.lost(), 4);
        assert_eq!(c.undetermined(), 1);
        assert!((c.loss_percent() - 40.0).abs() < 1e-9);
        assert_eq!(LossCounts::default().loss_percent(), 0.0);
    }
}
