//! The ten classic CPU kernels, written for sysgauge from the published
//! descriptions of the BYTE magazine benchmark suite (no code taken from any
//! implementation of it).
//!
//! Each kernel is a fixed workload: the sizes below never depend on the
//! machine or the profile, so "iterations per second" means the same thing
//! everywhere, and a change to a workload bumps [`WORKLOAD_VERSION`]. Input
//! data comes from SplitMix64 with a fixed seed per kernel, so every machine
//! and every thread works on the same numbers. One iteration always starts
//! from the same pristine input (sorts re-copy their unsorted array, the
//! network restarts from its initial weights), so iteration k does exactly
//! the same work as iteration 1; the reset copy is part of the timed work
//! and is well under 1 % of it.
//!
//! The code is portable Rust: no intrinsics, no `unsafe`, no
//! architecture-specific paths. What the compiler makes of it (SSE2 on
//! x86-64, NEON on aarch64) is recorded with the run's build facts.

pub mod assignment;
pub mod bitfield;
pub mod fourier;
pub mod fp_emulation;
pub mod huffman;
pub mod idea;
pub mod lu;
pub mod neural_net;
pub mod numeric_sort;
pub mod string_sort;

/// Version of the kernels' workloads: bump when any size, seed or algorithm
/// changes, so numbers from before are not compared with numbers after.
pub const WORKLOAD_VERSION: u32 = 2;

/// One instance of a kernel: its own input, working buffers and results.
/// Instances share nothing, so several threads can each run their own.
pub trait Kernel: Send {
    /// Run `iterations` complete iterations, each from the pristine input.
    fn run(&mut self, iterations: u64);
    /// Check the result of the last iteration (sorted order, decoded equals
    /// input, known checksum, residual below tolerance). Call after `run`.
    fn verify(&self) -> Result<(), String>;
}

/// Which index a kernel counts towards, as the classic suite grouped them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Integer,
    FloatingPoint,
    Memory,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::Integer, Group::FloatingPoint, Group::Memory];

    /// Short name used in index ids (`cpu.index-integer`).
    pub fn name(self) -> &'static str {
        match self {
            Group::Integer => "integer",
            Group::FloatingPoint => "float",
            Group::Memory => "memory",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Group::Integer => "integer",
            Group::FloatingPoint => "floating-point",
            Group::Memory => "memory",
        }
    }
}

/// The ten kernels, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelId {
    NumericSort,
    StringSort,
    Bitfield,
    FpEmulation,
    Fourier,
    Assignment,
    Idea,
    Huffman,
    NeuralNet,
    LuDecomposition,
}

impl KernelId {
    pub const ALL: [KernelId; 10] = [
        KernelId::NumericSort,
        KernelId::StringSort,
        KernelId::Bitfield,
        KernelId::FpEmulation,
        KernelId::Fourier,
        KernelId::Assignment,
        KernelId::Idea,
        KernelId::Huffman,
        KernelId::NeuralNet,
        KernelId::LuDecomposition,
    ];

    /// Stable benchmark id.
    pub fn id(self) -> &'static str {
        match self {
            KernelId::NumericSort => "cpu.numeric-sort",
            KernelId::StringSort => "cpu.string-sort",
            KernelId::Bitfield => "cpu.bitfield",
            KernelId::FpEmulation => "cpu.fp-emulation",
            KernelId::Fourier => "cpu.fourier",
            KernelId::Assignment => "cpu.assignment",
            KernelId::Idea => "cpu.idea",
            KernelId::Huffman => "cpu.huffman",
            KernelId::NeuralNet => "cpu.neural-net",
            KernelId::LuDecomposition => "cpu.lu-decomposition",
        }
    }

    /// The id without the family prefix (`numeric-sort`).
    pub fn short_name(self) -> &'static str {
        let id = self.id();
        id.split_once('.').map_or(id, |(_, n)| n)
    }

    /// Find a kernel by its id or short name.
    pub fn parse(s: &str) -> Option<KernelId> {
        let s = s.trim();
        KernelId::ALL
            .into_iter()
            .find(|k| k.id() == s || k.short_name() == s)
    }

    pub fn group(self) -> Group {
        match self {
            KernelId::NumericSort | KernelId::FpEmulation | KernelId::Idea | KernelId::Huffman => {
                Group::Integer
            }
            KernelId::Fourier | KernelId::NeuralNet | KernelId::LuDecomposition => {
                Group::FloatingPoint
            }
            KernelId::StringSort | KernelId::Bitfield | KernelId::Assignment => Group::Memory,
        }
    }

    /// One line: what one iteration does.
    pub fn summary(self) -> &'static str {
        match self {
            KernelId::NumericSort => numeric_sort::SUMMARY,
            KernelId::StringSort => string_sort::SUMMARY,
            KernelId::Bitfield => bitfield::SUMMARY,
            KernelId::FpEmulation => fp_emulation::SUMMARY,
            KernelId::Fourier => fourier::SUMMARY,
            KernelId::Assignment => assignment::SUMMARY,
            KernelId::Idea => idea::SUMMARY,
            KernelId::Huffman => huffman::SUMMARY,
            KernelId::NeuralNet => neural_net::SUMMARY,
            KernelId::LuDecomposition => lu::SUMMARY,
        }
    }

    /// A fresh instance with its input generated (outside any timing).
    pub fn instance(self) -> Box<dyn Kernel> {
        match self {
            KernelId::NumericSort => Box::new(numeric_sort::NumericSort::new()),
            KernelId::StringSort => Box::new(string_sort::StringSort::new()),
            KernelId::Bitfield => Box::new(bitfield::Bitfield::new()),
            KernelId::FpEmulation => Box::new(fp_emulation::FpEmulation::new()),
            KernelId::Fourier => Box::new(fourier::Fourier::new()),
            KernelId::Assignment => Box::new(assignment::Assignment::new()),
            KernelId::Idea => Box::new(idea::Idea::new()),
            KernelId::Huffman => Box::new(huffman::Huffman::new()),
            KernelId::NeuralNet => Box::new(neural_net::NeuralNet::new()),
            KernelId::LuDecomposition => Box::new(lu::LuDecomposition::new()),
        }
    }
}

/// FNV-1a over 64-bit words: the checksum the kernels pin their integer
/// results with (simple, and the same on every platform).
pub(crate) fn fnv1a64(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Every kernel's `Default` is its `new()`: the fixed, seeded input it is
/// built with.
macro_rules! default_is_new {
    ($($kernel:ty),* $(,)?) => {$(
        impl Default for $kernel {
            fn default() -> Self {
                Self::new()
            }
        }
    )*};
}

default_is_new!(
    assignment::Assignment,
    bitfield::Bitfield,
    fourier::Fourier,
    fp_emulation::FpEmulation,
    huffman::Huffman,
    idea::Idea,
    lu::LuDecomposition,
    neural_net::NeuralNet,
    numeric_sort::NumericSort,
    string_sort::StringSort,
);

/// What the kernels' pinned-workload tests share: a full-size instance run
/// once and verified, and the check that its pinned figure still holds.
#[cfg(test)]
pub(crate) mod pinned {
    use super::Kernel;

    /// `k` after one verified iteration.
    pub fn run_verified<K: Kernel>(mut k: K) -> K {
        k.run(1);
        k.verify().unwrap();
        k
    }

    /// A pinned figure of a kernel's workload: its input and its result must
    /// never change silently.
    #[track_caller]
    pub fn assert_pinned<T: PartialEq + std::fmt::Debug>(got: T, pinned: T) {
        assert_eq!(got, pinned, "workload changed: bump WORKLOAD_VERSION");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_names_groups() {
        let mut counts = std::collections::BTreeMap::new();
        for k in KernelId::ALL {
            assert!(k.id().starts_with("cpu."));
            assert_eq!(KernelId::parse(k.id()), Some(k));
            assert_eq!(KernelId::parse(k.short_name()), Some(k));
            assert!(!k.summary().is_empty());
            *counts.entry(k.group()).or_insert(0) += 1;
        }
        assert_eq!(counts.get(&Group::Integer), Some(&4));
        assert_eq!(counts.get(&Group::FloatingPoint), Some(&3));
        assert_eq!(counts.get(&Group::Memory), Some(&3));
        assert_eq!(KernelId::parse("no-such"), None);
    }

    /// Every kernel verifies after one and after several iterations, and two
    /// instances produce the same verified result (determinism).
    #[test]
    fn every_kernel_runs_and_verifies() {
        for k in KernelId::ALL {
            let mut a = k.instance();
            assert!(a.verify().is_err(), "{} verified before running", k.id());
            a.run(1);
            a.verify().unwrap_or_else(|e| panic!("{}: {e}", k.id()));
            a.run(2);
            a.verify().unwrap_or_else(|e| panic!("{}: {e}", k.id()));
        }
    }

    #[test]
    fn fnv_known() {
        assert_eq!(fnv1a64([]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a64([1]), fnv1a64([2]));
    }
}
