//! The clock-measuring kernel: a long chain of dependent single-cycle
//! integer additions, timed with the monotonic clock. Each addition needs
//! the previous result, so a core retires exactly one per clock cycle, and
//! additions per second is the core's effective frequency.
//!
//! Written in inline assembly so the compiler cannot fold, vectorise or
//! reassociate the chain:
//! - x86-64: `add r64, r64` (one cycle of latency on every x86-64 core).
//!   Not `add r64, imm`: Intel's Golden Cove and later cores fold chains of
//!   immediate additions at register renaming and retire several per
//!   cycle (docs/performance.md), which would report a clock several times
//!   too high. The register operand holds 1 at run time.
//! - aarch64: `add x, x, x` (one cycle on every ARMv8 core, in-order
//!   Cortex-A53 included).
//! - 32-bit ARM: `add r, r, r` (one cycle on the ARM11 of the first
//!   Raspberry Pi, on Cortex-A7 and on ARMv8 cores running 32-bit code).
//!
//! Each loop iteration runs 100 chained additions; the loop counter's own
//! decrement and branch run in parallel on other ports, so they add no
//! cycles. Other architectures get a portable Rust loop whose speed
//! depends on the compiler, so its result is marked approximate.
//!
//! `imul_chain` (x86-64 only) is an independent cross-check: a chain of
//! 3-cycle multiplications, used by the tests to confirm the add chain
//! really retires one per cycle on the machine at hand.

/// Additions per loop iteration.
pub const ADDS_PER_ITER: u64 = 100;

/// How the clock is measured on this build, for the record's details.
pub fn method() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "x86-64 chain of dependent register adds (1 cycle each)"
    } else if cfg!(target_arch = "aarch64") {
        "aarch64 chain of dependent register adds (1 cycle each)"
    } else if cfg!(target_arch = "arm") {
        "32-bit ARM chain of dependent register adds (1 cycle each)"
    } else {
        "portable Rust loop (approximate: the compiler decides the cycles per step)"
    }
}

/// True when the kernel is the exact assembly chain.
pub fn exact() -> bool {
    cfg!(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "arm"
    ))
}

/// The architecture's pieces of the chains: the chained add and the
/// loop's count-down and branch.
#[cfg(target_arch = "x86_64")]
macro_rules! arch_asm {
    (add) => {
        "add {x}, {y}"
    };
    (loop_tail) => {
        "dec {n}\njnz 2b"
    };
}

#[cfg(target_arch = "aarch64")]
macro_rules! arch_asm {
    (add) => {
        "add {x}, {x}, {y}"
    };
    (loop_tail) => {
        "subs {n}, {n}, #1\nb.ne 2b"
    };
}

#[cfg(target_arch = "arm")]
macro_rules! arch_asm {
    (add) => {
        "add {x}, {x}, {y}"
    };
    (loop_tail) => {
        "subs {n}, {n}, #1\nbne 2b"
    };
}

/// `$iters` (at least 1) loop iterations of 100 copies of `$insn`, each
/// taking `$x` from the one before, with the operand `$y`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm"))]
macro_rules! chain_loop {
    ($insn:expr, $x:ident, $y:ident, $iters:expr) => {
        // SAFETY: the assembly touches only the three named registers (no
        // memory, no stack) and leaves the flags clobbered, which `asm!`
        // assumes by default; the counter starts at `$iters >= 1`, so the
        // loop ends.
        unsafe {
            std::arch::asm!(
                "2:",
                ".rept 100",
                $insn,
                ".endr",
                arch_asm!(loop_tail),
                x = inout(reg) $x,
                y = in(reg) $y,
                n = inout(reg) $iters => _,
                options(nomem, nostack),
            );
        }
    };
}

/// Run `iters` iterations of the chain; returns the chain's value (which
/// is `iters * ADDS_PER_ITER`, so callers can check that the work was done).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let one: u64 = std::hint::black_box(1);
    if iters > 0 {
        chain_loop!(arch_asm!(add), x, one, iters);
    }
    x
}

/// 32-bit registers: the chain runs in chunks whose sums fit in one.
#[cfg(target_arch = "arm")]
pub fn add_chain(iters: u64) -> u64 {
    const CHUNK: u64 = 1 << 24;
    let one: u32 = std::hint::black_box(1);
    let mut total = 0u64;
    let mut left = iters;
    while left > 0 {
        let n = left.min(CHUNK);
        let mut x: u32 = 0;
        let count = n as u32;
        chain_loop!(arch_asm!(add), x, one, count);
        total += u64::from(x);
        left -= n;
    }
    total
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")))]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let one: u64 = std::hint::black_box(1);
    for _ in 0..iters {
        for _ in 0..ADDS_PER_ITER {
            x = std::hint::black_box(x.wrapping_add(one));
        }
    }
    x
}

/// Multiplications per `imul_chain` iteration, and cycles per multiplication.
pub const MULS_PER_ITER: u64 = 100;
pub const MUL_LATENCY: u64 = 3;

/// A chain of dependent 64-bit multiplications (3 cycles each on x86-64
/// cores since the Core 2 and on every Zen), the tests' cross-check.
#[cfg(target_arch = "x86_64")]
pub fn imul_chain(iters: u64) -> u64 {
    let mut x: u64 = 3;
    let m: u64 = std::hint::black_box(1);
    if iters > 0 {
        chain_loop!("imul {x}, {y}", x, m, iters);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_does_its_work() {
        assert_eq!(add_chain(0), 0);
        assert_eq!(add_chain(7), 700);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(imul_chain(5), 3);
    }
}
