//! Small helpers shared by the families: building metrics from samples,
//! turning byte rates into decimal MB/s, and the optimisation barriers the
//! hand-tuned kernels use.

use sysgauge_core::{BenchError, Better, Metric, Unit};

/// A metric from samples, or a failed case if the samples are unusable
/// (empty or not finite: the measurement itself went wrong).
pub fn metric(
    name: &str,
    unit: Unit,
    better: Better,
    samples: Vec<f64>,
) -> Result<Metric, BenchError> {
    Metric::new(name, unit, better, samples)
        .ok_or_else(|| BenchError::failed(format!("no usable samples for {name}")))
}

/// Bytes per second → decimal megabytes per second.
pub fn mb_per_s(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1e6
}

/// Lowercase hex of a byte string.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A deterministic, incompressible-looking fill for benchmark buffers
/// (xorshift64*): the same bytes on every machine, and no all-zero pages
/// that the kernel or a compressor could treat specially.
pub fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_pattern() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        let mut a = vec![0u8; 37];
        let mut b = vec![0u8; 37];
        fill_pattern(&mut a, 7);
        fill_pattern(&mut b, 7);
        assert_eq!(a, b);
        assert!(a.iter().any(|&x| x != 0));
        fill_pattern(&mut b, 8);
        assert_ne!(a, b);
    }

    #[test]
    fn metric_errors() {
        assert!(metric("x", Unit::MBps, Better::Higher, vec![]).is_err());
        assert_eq!(mb_per_s(2_500_000.0), 2.5);
    }
}

/// The identity, hidden from the optimiser: the value passes through an
/// empty `asm!` statement that claims to read and write its register, so the
/// compiler must treat the result as unknown. No instruction is emitted. The
/// kernels use it to keep an order of operations LLVM would otherwise
/// rearrange (constants moved onto a dependency chain, an XOR tree flattened
/// into one serial chain, a loop of small copies fused into one `memcpy`);
/// each call site says which. On architectures without a barrier listed,
/// `$fallback` is used instead.
macro_rules! opaque_fn {
    ($(#[$doc:meta])* $name:ident, $t:ty, [$($arch:literal => $template:literal),+], $fallback:path) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(x: $t) -> $t {
            #[cfg(any($(target_arch = $arch),+))]
            {
                let mut x = x;
                $(
                    #[cfg(target_arch = $arch)]
                    // SAFETY: the template is a comment: no instruction runs,
                    // no memory, stack or flags are touched, and the register
                    // keeps its value.
                    unsafe {
                        core::arch::asm!($template, inout(reg) x, options(pure, nomem, nostack, preserves_flags));
                    }
                )+
                x
            }
            #[cfg(not(any($(target_arch = $arch),+)))]
            {
                $fallback(x)
            }
        }
    };
}

opaque_fn!(
    /// The `opaque_fn` barrier for a `u32`.
    opaque_u32, u32, ["x86_64" => "/* {0:e} */", "aarch64" => "/* {0:w} */"], std::convert::identity
);
opaque_fn!(
    /// The `opaque_fn` barrier for a `u64`.
    opaque_u64, u64, ["x86_64" => "/* {0} */", "aarch64" => "/* {0} */"], std::convert::identity
);
opaque_fn!(
    /// The `opaque_fn` barrier for a `usize`; elsewhere `black_box` (a memory round
    /// trip, still a barrier to the loop fusion).
    opaque_usize, usize, [
        "x86_64" => "/* {0} */", "x86" => "/* {0} */", "aarch64" => "/* {0} */",
        "arm" => "/* {0} */", "riscv64" => "/* {0} */", "riscv32" => "/* {0} */",
        "loongarch64" => "/* {0} */"
    ], std::hint::black_box
);
