//! The network matrix's schedule: which ordered pairs of hosts measure
//! throughput in which round, so that no host takes part in two
//! throughput tests at once (each would steal the other's link and CPU)
//! and every ordered pair (a → b and b → a are different tests: links and
//! hosts are not symmetric) is measured exactly once.
//!
//! The round-robin tournament ("circle method"): host 0 stays put, the
//! others rotate one seat per round; seat i plays seat n-1-i. With an odd
//! number of hosts a phantom host is added and whoever meets it sits the
//! round out. That gives every unordered pair once in n-1 rounds (n even)
//! or n rounds (n odd), each round a set of disjoint pairs. The ordered
//! schedule plays that tournament twice, the second time with every pair
//! reversed: a pair's two directions can never share a round (both
//! involve the same two hosts), and 2·(n-1) rounds is the least possible
//! for even n, since every host is in 2·(n-1) ordered pairs and at most
//! one per round. Directions in the first half alternate by round and
//! seat, so a host does not send in every round of a half.
//!
//! Pure: hosts are indexes `0..n`; the `fleet net` command maps them to
//! inventory hosts. No I/O, no clock.

/// One throughput test: `from` sends to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    pub from: usize,
    pub to: usize,
}

/// The rounds of the schedule, in order; within a round the pairs are
/// disjoint (no host appears twice) and run at the same time.
pub type Rounds = Vec<Vec<Pair>>;

/// The unordered round-robin for `n` hosts: each round's pairs as
/// (seat-order) tuples, directions chosen to alternate.
fn round_robin(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    // With an odd count, seat `n` is the phantom: its partner rests.
    let seats = if n.is_multiple_of(2) { n } else { n + 1 };
    let mut ring: Vec<usize> = (0..seats).collect();
    let mut rounds = Vec::with_capacity(seats - 1);
    for r in 0..seats - 1 {
        let mut round = Vec::with_capacity(seats / 2);
        for i in 0..seats / 2 {
            let (a, b) = (ring[i], ring[seats - 1 - i]);
            if a >= n || b >= n {
                continue;
            }
            // Alternate who sends, by round and seat, so that over a half
            // each host sends about as often as it receives.
            if (r + i).is_multiple_of(2) {
                round.push((a, b));
            } else {
                round.push((b, a));
            }
        }
        rounds.push(round);
        // Keep seat 0, rotate the rest by one.
        ring[1..].rotate_right(1);
    }
    rounds
}

/// Every ordered pair of `n` hosts exactly once, in rounds of disjoint
/// pairs: 2·(n-1) rounds for even n, 2·n for odd n; none for n < 2.
pub fn tournament(n: usize) -> Rounds {
    let half = round_robin(n);
    let forward = half.iter().map(|round| {
        round
            .iter()
            .map(|&(from, to)| Pair { from, to })
            .collect::<Vec<_>>()
    });
    let backward = half.iter().map(|round| {
        round
            .iter()
            .map(|&(from, to)| Pair { from: to, to: from })
            .collect::<Vec<_>>()
    });
    forward.chain(backward).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn check(n: usize) {
        let rounds = tournament(n);
        let want_rounds = if n.is_multiple_of(2) {
            2 * (n - 1)
        } else {
            2 * n
        };
        assert_eq!(rounds.len(), want_rounds, "n = {n}");
        let mut seen = BTreeSet::new();
        for (r, round) in rounds.iter().enumerate() {
            let mut busy = BTreeSet::new();
            for p in round {
                assert!(p.from < n && p.to < n && p.from != p.to, "n = {n}: {p:?}");
                assert!(
                    busy.insert(p.from),
                    "n = {n}: host {} twice in round {r}",
                    p.from
                );
                assert!(
                    busy.insert(p.to),
                    "n = {n}: host {} twice in round {r}",
                    p.to
                );
                assert!(seen.insert(*p), "n = {n}: {p:?} measured twice");
            }
            // Every round is as full as the host count allows.
            assert_eq!(round.len(), n / 2, "n = {n}, round {r}");
        }
        assert_eq!(seen.len(), n * (n - 1), "n = {n}: not every ordered pair");
        // Each host sends as often as it receives over the whole schedule.
        for h in 0..n {
            let sends = seen.iter().filter(|p| p.from == h).count();
            assert_eq!(sends, n - 1, "n = {n}, host {h}");
        }
    }

    #[test]
    fn every_ordered_pair_once_in_disjoint_rounds_for_2_to_12_hosts() {
        for n in 2..=12 {
            check(n);
        }
    }

    #[test]
    fn fewer_than_two_hosts_have_nothing_to_measure() {
        assert!(tournament(0).is_empty());
        assert!(tournament(1).is_empty());
        assert_eq!(
            tournament(2),
            vec![vec![Pair { from: 0, to: 1 }], vec![Pair { from: 1, to: 0 }]]
        );
    }
}
