//! The assignment problem: the cheapest way to give each of 101 workers one
//! of 101 tasks, from a matrix of random 64-bit costs, solved exactly by the
//! Hungarian method (Kuhn–Munkres with row and column potentials, O(n³)).
//!
//! The solver adds one row at a time and grows a tree of tight edges by
//! scanning cost rows and keeping the smallest slack per column; the 80 KiB
//! cost matrix and the scans over it make this a memory-and-branch kernel,
//! as in the classic suite (memory index). The input is never modified, so
//! iterations need no reset.
//!
//! Verification needs no second solver: the potentials the method ends with
//! are a feasible dual solution (u_i + v_j ≤ c_ij everywhere) that is tight on
//! every assigned pair, which proves the assignment optimal by linear
//! programming duality. The tests also compare with brute force on small
//! matrices.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str = "optimal assignment on a 101x101 random cost matrix (Hungarian method)";

/// Rows and columns of the cost matrix.
pub const N: usize = 101;
const MAX_COST: u64 = 1_000_000;
const SEED: u64 = 0x6173_7369_676e_6d74;

pub struct Assignment {
    n: usize,
    /// Row-major n×n costs.
    cost: Vec<i64>,
    // Solver state, 1-based with index 0 as the virtual start column.
    u: Vec<i64>,
    v: Vec<i64>,
    /// `col_row[j]`: the row assigned to column j (0 = none).
    col_row: Vec<usize>,
    way: Vec<usize>,
    min_slack: Vec<i64>,
    used: Vec<bool>,
    iterations: u64,
}

impl Assignment {
    pub fn new() -> Self {
        Self::with_size(N)
    }

    pub fn with_size(n: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let cost = (0..n * n)
            .map(|_| (rng.next_u64() % (MAX_COST + 1)) as i64)
            .collect();
        Self::from_costs(n, cost)
    }

    fn from_costs(n: usize, cost: Vec<i64>) -> Self {
        Assignment {
            n,
            cost,
            u: vec![0; n + 1],
            v: vec![0; n + 1],
            col_row: vec![0; n + 1],
            way: vec![0; n + 1],
            min_slack: vec![0; n + 1],
            used: vec![false; n + 1],
            iterations: 0,
        }
    }

    fn solve(&mut self) {
        let n = self.n;
        let cost = black_box(&self.cost[..]);
        self.u.fill(0);
        self.v.fill(0);
        self.col_row.fill(0);
        self.way.fill(0);
        for row in 1..=n {
            self.col_row[0] = row;
            let mut j0 = 0usize;
            self.min_slack.fill(i64::MAX);
            self.used.fill(false);
            loop {
                self.used[j0] = true;
                let i0 = self.col_row[j0];
                let costs = &cost[(i0 - 1) * n..i0 * n];
                let ui = self.u[i0];
                let mut delta = i64::MAX;
                let mut j1 = 0usize;
                for j in 1..=n {
                    if !self.used[j] {
                        let slack = costs[j - 1] - ui - self.v[j];
                        if slack < self.min_slack[j] {
                            self.min_slack[j] = slack;
                            self.way[j] = j0;
                        }
                        if self.min_slack[j] < delta {
                            delta = self.min_slack[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=n {
                    if self.used[j] {
                        self.u[self.col_row[j]] += delta;
                        self.v[j] -= delta;
                    } else {
                        self.min_slack[j] -= delta;
                    }
                }
                j0 = j1;
                if self.col_row[j0] == 0 {
                    break;
                }
            }
            // Flip the augmenting path back to the start column.
            loop {
                let j1 = self.way[j0];
                self.col_row[j0] = self.col_row[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
    }

    /// For each row (0-based), its column.
    pub fn assignment(&self) -> Vec<usize> {
        let mut row_col = vec![usize::MAX; self.n];
        for j in 1..=self.n {
            if let Some(r) = self.col_row[j].checked_sub(1) {
                if r < self.n {
                    row_col[r] = j - 1;
                }
            }
        }
        row_col
    }

    pub fn total_cost(&self) -> i64 {
        self.assignment()
            .iter()
            .enumerate()
            .map(|(r, &c)| self.cost.get(r * self.n + c).copied().unwrap_or(0))
            .sum()
    }
}

impl super::Kernel for Assignment {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.solve();
            black_box(&self.col_row);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("assignment has not run".into());
        }
        let n = self.n;
        let rc = self.assignment();
        let mut seen = vec![false; n];
        for (r, &c) in rc.iter().enumerate() {
            if c >= n || seen[c] {
                return Err(format!("assignment: row {r} has no column of its own"));
            }
            seen[c] = true;
        }
        for (i, &assigned) in rc.iter().enumerate() {
            for j in 0..n {
                let reduced = self.cost[i * n + j] - self.u[i + 1] - self.v[j + 1];
                if reduced < 0 {
                    return Err(format!("assignment: potentials infeasible at ({i}, {j})"));
                }
                if assigned == j && reduced != 0 {
                    return Err(format!("assignment: pair ({i}, {j}) is not tight"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pinned::assert_pinned;
    use super::super::Kernel;
    use super::*;

    fn brute_force(n: usize, cost: &[i64]) -> i64 {
        fn go(n: usize, cost: &[i64], row: usize, used: &mut Vec<bool>, acc: i64, best: &mut i64) {
            if row == n {
                *best = (*best).min(acc);
                return;
            }
            for c in 0..n {
                if !used[c] {
                    used[c] = true;
                    go(n, cost, row + 1, used, acc + cost[row * n + c], best);
                    used[c] = false;
                }
            }
        }
        let mut best = i64::MAX;
        go(n, cost, 0, &mut vec![false; n], 0, &mut best);
        best
    }

    #[test]
    fn optimal_on_small_matrices() {
        let mut rng = SplitMix64::new(99);
        for n in 1..=7 {
            for _ in 0..20 {
                let cost: Vec<i64> = (0..n * n).map(|_| (rng.next_u64() % 20) as i64).collect();
                let mut a = Assignment::from_costs(n, cost.clone());
                a.run(1);
                a.verify().unwrap_or_else(|e| panic!("n={n}: {e}"));
                assert_eq!(a.total_cost(), brute_force(n, &cost), "n={n} {cost:?}");
            }
        }
    }

    #[test]
    fn known_small_answer() {
        // Rows are workers, columns tasks; the cheapest is the anti-diagonal, 1 + 2 + 3.
        let cost = vec![9, 8, 1, 7, 2, 6, 3, 5, 4];
        let mut a = Assignment::from_costs(3, cost);
        a.run(1);
        assert_eq!(a.assignment(), vec![2, 1, 0]);
        assert_eq!(a.total_cost(), 6);
    }

    #[test]
    fn full_size_verifies_and_is_pinned() {
        let mut a = Assignment::new();
        a.run(2);
        a.verify().unwrap();
        assert_pinned(a.total_cost(), PINNED_COST);
        a.v[5] += 1_000_000;
        assert!(a.verify().is_err());
    }

    const PINNED_COST: i64 = 1_757_969;
}
