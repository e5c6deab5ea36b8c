//! Optimisation barriers: the identity, hidden from the optimiser. Hand-
//! written because no crate offers a zero-cost barrier for one register:
//! `std::hint::black_box` forces a memory round trip, which would itself
//! sit on the dependency chains these barriers protect.

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
        pub fn $name(x: $t) -> $t {
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
