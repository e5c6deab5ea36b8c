//! Numeric sort: heapsort of an array of 8111 pseudo-random signed 32-bit
//! integers.
//!
//! Heapsort is the classic choice because its work does not depend on how
//! lucky the input is and it sorts in place: a stream of compares, swaps and
//! data-dependent branches over a 32 KiB array that fits in the first-level
//! cache of most CPUs. Each iteration copies the pristine unsorted array into
//! the work array and sorts it.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str = "heapsort of 8111 random 32-bit integers";

/// Elements per array.
pub const LEN: usize = 8111;
const SEED: u64 = 0x6e75_6d73_6f72_7431;

pub struct NumericSort {
    pristine: Vec<i32>,
    work: Vec<i32>,
    iterations: u64,
}

impl NumericSort {
    pub fn new() -> Self {
        Self::with_len(LEN)
    }

    /// A smaller instance for tests.
    pub fn with_len(len: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let pristine: Vec<i32> = (0..len)
            .map(|_| (rng.next_u64() >> 32) as u32 as i32)
            .collect();
        NumericSort {
            work: pristine.clone(),
            pristine,
            iterations: 0,
        }
    }

    pub fn sorted(&self) -> &[i32] {
        &self.work
    }
}

/// Restore the heap property below `root` in `a[..end]` (max-heap).
fn sift_down(a: &mut [i32], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && a[child] < a[child + 1] {
            child += 1;
        }
        if a[root] >= a[child] {
            return;
        }
        a.swap(root, child);
        root = child;
    }
}

/// In-place heapsort, ascending.
pub fn heapsort(a: &mut [i32]) {
    let n = a.len();
    for root in (0..n / 2).rev() {
        sift_down(a, root, n);
    }
    for end in (1..n).rev() {
        a.swap(0, end);
        sift_down(a, 0, end);
    }
}

impl super::Kernel for NumericSort {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.work.copy_from_slice(black_box(&self.pristine));
            heapsort(black_box(&mut self.work));
            black_box(&self.work);
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("numeric sort has not run".into());
        }
        if let Some(i) = self.work.windows(2).position(|w| w[0] > w[1]) {
            return Err(format!(
                "numeric sort: elements {i} and {} out of order",
                i + 1
            ));
        }
        // Same multiset: a sorted copy of the input must be equal. Checked
        // with sums and xors so verification needs no allocation.
        let sum = |v: &[i32]| v.iter().fold(0i64, |s, &x| s.wrapping_add(i64::from(x)));
        let xor = |v: &[i32]| {
            v.iter()
                .fold(0i32, |s, &x| s ^ x.rotate_left((x & 31) as u32))
        };
        if sum(&self.work) != sum(&self.pristine) || xor(&self.work) != xor(&self.pristine) {
            return Err("numeric sort: the sorted array is not a permutation of the input".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pinned::{assert_pinned, run_verified};
    use super::super::Kernel;
    use super::*;

    #[test]
    fn matches_std_sort() {
        for len in [0usize, 1, 2, 3, 17, 100, 1001] {
            let mut k = NumericSort::with_len(len);
            let mut expected = k.pristine.clone();
            expected.sort_unstable();
            k.run(2);
            assert_eq!(k.sorted(), &expected[..], "len {len}");
        }
    }

    #[test]
    fn full_size_known_answer() {
        let k = run_verified(NumericSort::new());
        let s = k.sorted();
        assert_eq!(s.len(), LEN);
        let h = super::super::fnv1a64(s.iter().map(|&x| x as u32 as u64));
        assert_pinned(h, PINNED_CHECKSUM);
    }

    const PINNED_CHECKSUM: u64 = 12_653_732_083_383_347_147;

    #[test]
    fn detects_disorder() {
        let mut k = NumericSort::with_len(50);
        k.run(1);
        k.work.swap(3, 40);
        assert!(k.verify().is_err());
        let mut k = NumericSort::with_len(50);
        k.run(1);
        k.work[10] = k.work[11];
        assert!(k.verify().is_err());
    }
}
