//! String sort: heapsort of about 8 KiB of variable-length strings that are
//! physically moved inside their buffer.
//!
//! The buffer holds the strings back to back, each as a length byte and 4 to
//! 80 letters, and an offset table says where string k starts. The sort
//! compares strings through the table, and every exchange of table entries
//! i < j exchanges the two strings in the buffer as well: because their
//! lengths differ, everything between them moves. So the buffer is always
//! the concatenation of the strings in table order, and the kernel is
//! dominated by overlapping memory moves of a few KiB each, the way the
//! classic suite's string sort was (it counts towards the memory index).

use std::cmp::Ordering;
use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "heapsort of ~8 KiB of 4-80 byte strings, exchanged in place by moving memory";

/// Upper bound of the buffer; strings are generated until the next would not fit.
pub const BUFFER_BYTES: usize = 8192;
const MIN_LEN: usize = 4;
const MAX_LEN: usize = 80;
const SEED: u64 = 0x7374_7273_6f72_7432;

pub struct StringSort {
    pristine: Vec<u8>,
    pristine_offsets: Vec<u32>,
    buf: Vec<u8>,
    offsets: Vec<u32>,
    /// Sum of per-string hashes and the count: order-independent identity of
    /// the input's multiset of strings.
    input_fingerprint: (u64, usize),
    iterations: u64,
}

impl StringSort {
    pub fn new() -> Self {
        Self::with_capacity(BUFFER_BYTES)
    }

    /// A smaller instance for tests.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let mut pristine = Vec::with_capacity(bytes);
        let mut offsets = Vec::new();
        loop {
            let len = MIN_LEN + rng.below(MAX_LEN - MIN_LEN + 1);
            if pristine.len() + 1 + len > bytes {
                break;
            }
            offsets.push(pristine.len() as u32);
            pristine.push(len as u8);
            // A small alphabet gives common prefixes, so compares go past
            // the first byte now and then.
            pristine.extend((0..len).map(|_| b'a' + rng.below(8) as u8));
        }
        let mut s = StringSort {
            buf: pristine.clone(),
            offsets: offsets.clone(),
            pristine,
            pristine_offsets: offsets,
            input_fingerprint: (0, 0),
            iterations: 0,
        };
        s.input_fingerprint = fingerprint(&s.pristine, &s.pristine_offsets);
        s
    }

    pub fn count(&self) -> usize {
        self.offsets.len()
    }

    /// The strings in their current order.
    pub fn strings(&self) -> Vec<&[u8]> {
        self.offsets
            .iter()
            .map(|&o| string_at(&self.buf, o))
            .collect()
    }
}

fn string_at(buf: &[u8], offset: u32) -> &[u8] {
    let o = offset as usize;
    let len = buf[o] as usize;
    &buf[o + 1..o + 1 + len]
}

fn fingerprint(buf: &[u8], offsets: &[u32]) -> (u64, usize) {
    let sum = offsets.iter().fold(0u64, |acc, &o| {
        let h = string_at(buf, o)
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
        acc.wrapping_add(h)
    });
    (sum, offsets.len())
}

fn compare(buf: &[u8], offsets: &[u32], i: usize, j: usize) -> Ordering {
    string_at(buf, offsets[i]).cmp(string_at(buf, offsets[j]))
}

/// Exchange strings i < j in the buffer and fix the offset table.
fn exchange(buf: &mut [u8], offsets: &mut [u32], i: usize, j: usize) {
    debug_assert!(i < j);
    let a = offsets[i] as usize;
    let b = offsets[j] as usize;
    let len_a = buf[a] as usize + 1;
    let len_b = buf[b] as usize + 1;
    let mut tmp_a = [0u8; MAX_LEN + 1];
    let mut tmp_b = [0u8; MAX_LEN + 1];
    tmp_a[..len_a].copy_from_slice(&buf[a..a + len_a]);
    tmp_b[..len_b].copy_from_slice(&buf[b..b + len_b]);
    // The bytes between the two strings move by the difference in length.
    let middle = a + len_a..b;
    let new_middle_start = a + len_b;
    buf.copy_within(middle, new_middle_start);
    buf[a..a + len_b].copy_from_slice(&tmp_b[..len_b]);
    let new_b = b + len_b - len_a;
    buf[new_b..new_b + len_a].copy_from_slice(&tmp_a[..len_a]);
    let shift = len_b as i64 - len_a as i64;
    for o in &mut offsets[i + 1..j] {
        *o = (i64::from(*o) + shift) as u32;
    }
    offsets[j] = new_b as u32;
}

fn swap(buf: &mut [u8], offsets: &mut [u32], i: usize, j: usize) {
    match i.cmp(&j) {
        Ordering::Less => exchange(buf, offsets, i, j),
        Ordering::Greater => exchange(buf, offsets, j, i),
        Ordering::Equal => {}
    }
}

fn sift_down(buf: &mut [u8], offsets: &mut [u32], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && compare(buf, offsets, child, child + 1) == Ordering::Less {
            child += 1;
        }
        if compare(buf, offsets, root, child) != Ordering::Less {
            return;
        }
        swap(buf, offsets, root, child);
        root = child;
    }
}

fn heapsort(buf: &mut [u8], offsets: &mut [u32]) {
    let n = offsets.len();
    for root in (0..n / 2).rev() {
        sift_down(buf, offsets, root, n);
    }
    for end in (1..n).rev() {
        swap(buf, offsets, 0, end);
        sift_down(buf, offsets, 0, end);
    }
}

impl super::Kernel for StringSort {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.buf.copy_from_slice(black_box(&self.pristine));
            self.offsets.copy_from_slice(&self.pristine_offsets);
            heapsort(black_box(&mut self.buf), &mut self.offsets);
            black_box((&self.buf, &self.offsets));
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("string sort has not run".into());
        }
        // The buffer must be exactly the strings in table order.
        let mut expected = 0usize;
        for (k, &o) in self.offsets.iter().enumerate() {
            if o as usize != expected {
                return Err(format!(
                    "string sort: string {k} is not where the table says"
                ));
            }
            expected += self.buf[expected] as usize + 1;
        }
        if expected != self.buf.len() {
            return Err("string sort: the buffer has bytes after the last string".into());
        }
        for k in 1..self.offsets.len() {
            if compare(&self.buf, &self.offsets, k - 1, k) == Ordering::Greater {
                return Err(format!(
                    "string sort: strings {} and {k} out of order",
                    k - 1
                ));
            }
        }
        if fingerprint(&self.buf, &self.offsets) != self.input_fingerprint {
            return Err("string sort: the sorted strings are not the input strings".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::pinned::assert_pinned;
    use super::super::Kernel;
    use super::*;

    #[test]
    fn matches_std_sort() {
        for cap in [0usize, 10, 200, 1000, BUFFER_BYTES] {
            let mut k = StringSort::with_capacity(cap);
            let mut expected: Vec<Vec<u8>> = k.strings().iter().map(|s| s.to_vec()).collect();
            expected.sort();
            k.run(2);
            k.verify().unwrap_or_else(|e| panic!("cap {cap}: {e}"));
            let got: Vec<Vec<u8>> = k.strings().iter().map(|s| s.to_vec()).collect();
            assert_eq!(got, expected, "cap {cap}");
        }
    }

    #[test]
    fn full_size_shape() {
        let k = StringSort::new();
        assert!(k.count() > 150 && k.count() < 300, "{}", k.count());
        assert!(k.pristine.len() > BUFFER_BYTES - MAX_LEN - 1 && k.pristine.len() <= BUFFER_BYTES);
        let lens: Vec<usize> = k.strings().iter().map(|s| s.len()).collect();
        assert!(lens.iter().all(|&l| (MIN_LEN..=MAX_LEN).contains(&l)));
        assert_pinned(
            super::super::fnv1a64(k.pristine.iter().map(|&b| u64::from(b))),
            PINNED_INPUT,
        );
    }

    const PINNED_INPUT: u64 = 1_568_083_915_612_278_743;

    #[test]
    fn exchange_moves_everything_between() {
        let mut k = StringSort::with_capacity(300);
        let before: Vec<Vec<u8>> = k.strings().iter().map(|s| s.to_vec()).collect();
        let n = before.len();
        assert!(n >= 4);
        exchange(&mut k.buf, &mut k.offsets, 0, n - 1);
        let after: Vec<Vec<u8>> = k.strings().iter().map(|s| s.to_vec()).collect();
        assert_eq!(after[0], before[n - 1]);
        assert_eq!(after[n - 1], before[0]);
        assert_eq!(&after[1..n - 1], &before[1..n - 1]);
    }

    #[test]
    fn detects_disorder_and_corruption() {
        let mut k = StringSort::with_capacity(1000);
        k.run(1);
        let n = k.count();
        exchange(&mut k.buf, &mut k.offsets, 1, n - 2);
        assert!(k.verify().is_err());
        let mut k = StringSort::with_capacity(1000);
        k.run(1);
        let last = k.buf.len() - 1;
        k.buf[last] = b'z';
        assert!(k.verify().is_err());
    }
}
