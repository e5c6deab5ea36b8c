//! RC4, written for this project: the RustCrypto `rc4` crate falls behind
//! `openssl speed -evp rc4` (OpenSSL uses x86-64 assembly; docs/performance.md
//! has the numbers). The
//! algorithm is a few lines; what makes it fast here is keeping the state as
//! 32-bit words (no partial-register byte loads and stores) and XORing eight
//! key-stream bytes into the data as one 64-bit word. Two forms: `Rc4`, in
//! Rust, and `Rc4Asm`, the same state stepped by x86-64 assembly (see the
//! notes above its `step!` macro), which on Zen 3 outruns both `Rc4` and
//! OpenSSL; the crypto family's trial keeps whichever is faster on the CPU
//! at hand. The `rc4` crate stays as the independent implementation the
//! round trip and the tests compare with.

/// RC4 state: the permutation and the two indexes.
pub struct Rc4 {
    s: [u32; 256],
    x: usize,
    y: usize,
}

impl Rc4 {
    /// Key scheduling; keys of 1 to 256 bytes.
    pub fn new(key: &[u8]) -> Option<Rc4> {
        if key.is_empty() || key.len() > 256 {
            return None;
        }
        let mut s = [0u32; 256];
        for (k, v) in s.iter_mut().enumerate() {
            *v = k as u32;
        }
        let mut j = 0usize;
        for i in 0..256 {
            j = (j + s[i] as usize + key[i % key.len()] as usize) & 255;
            s.swap(i, j);
        }
        Some(Rc4 { s, x: 0, y: 0 })
    }

    #[inline(always)]
    fn next(&mut self) -> u32 {
        self.x = (self.x + 1) & 255;
        let sx = self.s[self.x];
        self.y = (self.y + sx as usize) & 255;
        let sy = self.s[self.y];
        self.s[self.x] = sy;
        self.s[self.y] = sx;
        self.s[((sx + sy) & 255) as usize]
    }

    /// XOR the key stream into `buf`, continuing from the last call.
    pub fn apply(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            let mut ks = 0u64;
            for k in 0..8 {
                ks |= u64::from(self.next()) << (8 * k);
            }
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&(u64::from_le_bytes(a) ^ ks).to_le_bytes());
        }
        for b in chunks.into_remainder() {
            *b ^= self.next() as u8;
        }
    }
}

/// The same RC4 with its byte loop in x86-64 assembly (the notes above the
/// `step!` macro say why). On other targets `apply` is the portable
/// kernel's, and [`asm_available`] says `false`.
pub struct Rc4Asm(Rc4);

/// Whether [`Rc4Asm`] runs its assembly on this target.
pub const fn asm_available() -> bool {
    cfg!(target_arch = "x86_64")
}

impl Rc4Asm {
    /// Key scheduling; keys of 1 to 256 bytes.
    pub fn new(key: &[u8]) -> Option<Rc4Asm> {
        Rc4::new(key).map(Rc4Asm)
    }

    /// XOR the key stream into `buf`, continuing from the last call.
    pub fn apply(&mut self, buf: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        {
            // Blocks start where x + 1 is a multiple of their length, so that
            // a block's x indexes are one base plus constant displacements
            // that never wrap inside it: single bytes up to a multiple of 8,
            // 8-byte blocks up to a multiple of 32, then 32-byte blocks, and
            // the rest the same way down.
            let r = &mut self.0;
            let mut rest = buf;
            let head = ((8 - (r.x + 1) % 8) % 8).min(rest.len());
            rest = r.singles(rest, head);
            let to32 = ((32 - (r.x + 1) % 32) % 32).min(rest.len() / 8 * 8);
            rest = r.blocks(rest, to32, blocks8);
            rest = r.blocks(rest, rest.len() / 32 * 32, blocks32);
            rest = r.blocks(rest, rest.len() / 8 * 8, blocks8);
            let n = rest.len();
            r.singles(rest, n);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.0.apply(buf);
    }
}

/// `blocks8` or `blocks32`: the state, x + 1 and y in, whole blocks of
/// data, x + 1 after the last block and y out.
#[cfg(target_arch = "x86_64")]
type BlockKernel = fn(&mut [u32; 256], u64, u64, &mut [u8]) -> (u64, u64);

#[cfg(target_arch = "x86_64")]
impl Rc4 {
    /// XORs the first `n` bytes of `buf` one at a time; returns the rest.
    fn singles<'a>(&mut self, buf: &'a mut [u8], n: usize) -> &'a mut [u8] {
        let (first, rest) = buf.split_at_mut(n);
        for b in first {
            *b ^= self.next() as u8;
        }
        rest
    }

    /// XORs the first `n` bytes of `buf` (a whole number of `kernel`'s
    /// blocks, starting where x + 1 is a multiple of the block length) with
    /// `kernel`; returns the rest.
    fn blocks<'a>(&mut self, buf: &'a mut [u8], n: usize, kernel: BlockKernel) -> &'a mut [u8] {
        let (first, rest) = buf.split_at_mut(n);
        if n > 0 {
            let (xb, y) = kernel(
                &mut self.s,
                ((self.x + 1) & 255) as u64,
                self.y as u64,
                first,
            );
            self.x = ((xb + 255) & 255) as usize;
            self.y = y as usize;
        }
        rest
    }
}

// Why assembly. Per byte, RC4 is y = (y + S[x]) mod 256, a swap of S[x] and
// S[y], and the output S[(S[x] + S[y]) mod 256]. From `Rc4`, LLVM emits a
// `movzx` after each add to mask the index, a `lea` and a `movzx` to step
// and mask x, and a shift and an OR to place each key-stream byte: 13
// instructions a byte, and on Zen 3 (1 KiB-state kernel measured alone,
// 8 KiB buffers) 745 MB/s against OpenSSL's 850. Here:
// - y and the output index are summed in byte registers (`add r11b, sil`):
//   the sum wraps at 256 and the upper bits stay zero, so the full
//   register is the index, with no mask. LLVM does not emit byte-register
//   arithmetic for `u8` sums that index an array (it widens and masks).
// - x is a base at a multiple of the block length plus a constant
//   displacement per byte, so it costs nothing inside a block.
// - each key-stream byte is loaded straight into the low byte of one
//   register, which rotates by eight: after eight bytes they stand in
//   order for one 64-bit XOR into the data.
// That is 8 instructions a byte (955 MB/s with 8-byte blocks, 1040 with
// 32-byte ones, against OpenSSL's 850 in the same measurement).
//
// The registers are named rather than left to the allocator: with the same
// instructions, some assignments (y in dl, or S[x] and S[y] in al and cl)
// ran at 820-870 MB/s on Zen 3 and this one at 955, for reasons not pinned
// down (instruction lengths and their packing change with the registers);
// naming them also keeps the speed independent of where the function is
// inlined. rdi stays the base (r13 and rbp as a base need a displacement
// byte).
//
// Loading S[x + 1] before the step's stores (so the next byte's load need
// not wait for the store to S[y]), with a `cmov` for the case y == x + 1,
// was measured slower on Zen 3: 730 MB/s against 935 without, since the
// compare and `cmov` lengthen the chain by two cycles a byte, more than
// the wait they remove.

/// One byte of the block: `$x` is the displacement of S[x] from S[xb]
/// (4 times the step), `$ks` the instruction that takes the key-stream byte
/// into r14 (`movzx r14d` for the first, starting the register afresh;
/// `mov r14b` after). Registers: rdi the state, r10 xb, r11 y, rsi S[x],
/// r15 S[y] and then the key-stream index.
#[cfg(target_arch = "x86_64")]
macro_rules! step {
    ($x:literal, $ks:literal) => {
        concat!(
            "mov esi, dword ptr [rdi + 4*r10 + ",
            $x,
            "]\n",
            "add r11b, sil\n",
            "mov r15d, dword ptr [rdi + 4*r11]\n",
            "mov dword ptr [rdi + 4*r11], esi\n",
            "mov dword ptr [rdi + 4*r10 + ",
            $x,
            "], r15d\n",
            "add r15b, sil\n",
            $ks,
            ", byte ptr [rdi + 4*r15]\n",
            "ror r14, 8",
        )
    };
}

/// One 8-byte key-stream word: eight `step`s at the displacements given
/// (the first starts r14 afresh), XORed into the data at `[r12 + $off]`.
#[cfg(target_arch = "x86_64")]
macro_rules! word {
    ($off:literal; $d0:literal $(, $d:literal)*) => {
        concat!(
            step!($d0, "movzx r14d"), "\n",
            $(step!($d, "mov r14b"), "\n",)*
            "xor qword ptr [r12 + ", $off, "], r14",
        )
    };
}

/// A loop over whole blocks of `$len` bytes (its words given with `word`):
/// `xb` is x + 1 (a multiple of `$len`), `y` the current y; returns the
/// `xb` after the last block and the final y.
#[cfg(target_arch = "x86_64")]
macro_rules! blocks_fn {
    ($(#[$doc:meta])* $name:ident, $len:literal, $($word:expr),+) => {
        $(#[$doc])*
        fn $name(s: &mut [u32; 256], xb: u64, y: u64, blocks: &mut [u8]) -> (u64, u64) {
            debug_assert!(xb.is_multiple_of($len) && xb < 256 && y < 256);
            debug_assert!(blocks.len().is_multiple_of($len));
            let (mut xb, mut y) = (xb, y);
            if blocks.is_empty() {
                return (xb, y);
            }
            let range = blocks.as_mut_ptr_range();
            // SAFETY: every state address is rdi (the state) plus four
            // times an index below 256: r10 (xb) is a multiple of the block
            // length below 256 plus displacements below 4 times the block
            // length (indexes xb..xb + len - 1 <= 255); r11 (y) and r15
            // (the key-stream index) change only in their low bytes, and
            // their upper bits are zero (y and xb start below 256, the
            // state holds words below 256, loaded with zero extension). r12
            // steps by the block length from the start of `blocks` to its
            // end (r13), a whole number of blocks away, and the XORs stay
            // inside the block. No stack.
            unsafe {
                core::arch::asm!(
                    ".p2align 5",
                    "2:",
                    $($word,)+
                    concat!("add r12, ", $len),
                    concat!("add r10b, ", $len),
                    "cmp r12, r13",
                    "jne 2b",
                    in("rdi") s.as_mut_ptr(),
                    inout("r10") xb,
                    inout("r11") y,
                    inout("r12") range.start => _,
                    in("r13") range.end,
                    out("rsi") _,
                    out("r15") _,
                    out("r14") _,
                    options(nostack),
                );
            }
            (xb, y)
        }
    };
}

#[cfg(target_arch = "x86_64")]
blocks_fn!(
    /// Whole 8-byte blocks.
    blocks8,
    8,
    word!("0"; "0", "4", "8", "12", "16", "20", "24", "28")
);

#[cfg(target_arch = "x86_64")]
blocks_fn!(
    /// Whole 32-byte blocks (four words per loop): on Zen 3 the longer loop
    /// ran 8 % faster (less loop overhead between the chains of
    /// consecutive bytes).
    blocks32,
    32,
    word!("0"; "0", "4", "8", "12", "16", "20", "24", "28"),
    word!("8"; "32", "36", "40", "44", "48", "52", "56", "60"),
    word!("16"; "64", "68", "72", "76", "80", "84", "88", "92"),
    word!("24"; "96", "100", "104", "108", "112", "116", "120", "124")
);

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{KeyInit, StreamCipher};
    use proptest::prelude::*;

    #[test]
    fn rfc6229_first_bytes() {
        // RFC 6229, key 0x0102030405 (40 bits): key stream at offset 0.
        let mut r = Rc4::new(&[1, 2, 3, 4, 5]).unwrap_or_else(|| panic!("key"));
        let mut ks = [0u8; 16];
        r.apply(&mut ks);
        assert_eq!(crate::bytes::hex(&ks), "b2396305f03dc027ccc3524a0a1118a8");
        assert!(Rc4::new(&[]).is_none());
        let mut r = Rc4Asm::new(&[1, 2, 3, 4, 5]).unwrap_or_else(|| panic!("key"));
        let mut ks = [0u8; 16];
        r.apply(&mut ks);
        assert_eq!(crate::bytes::hex(&ks), "b2396305f03dc027ccc3524a0a1118a8");
        assert!(Rc4Asm::new(&[]).is_none());
    }

    #[test]
    fn rfc6229_offset_4096() {
        // RFC 6229, key 0x0102030405: key stream at offset 4096, reached
        // through calls of odd lengths (every x alignment of the blocks).
        let mut r = Rc4Asm::new(&[1, 2, 3, 4, 5]).unwrap_or_else(|| panic!("key"));
        let mut skip = vec![0u8; 4096];
        for part in skip.chunks_mut(13) {
            r.apply(part);
        }
        let mut ks = [0u8; 16];
        r.apply(&mut ks);
        assert_eq!(crate::bytes::hex(&ks), "ff25b58995996707e51fbdf08b34d875");
    }

    proptest! {
        #[test]
        fn same_as_the_rc4_crate(
            key in proptest::collection::vec(any::<u8>(), 1..64),
            data in proptest::collection::vec(any::<u8>(), 0..3000),
            cut in 0usize..3000,
        ) {
            let mut ours = data.clone();
            let mut r = Rc4::new(&key).unwrap_or_else(|| panic!("key"));
            let (a, b) = ours.split_at_mut(cut.min(data.len()));
            r.apply(a);
            r.apply(b);
            let mut asm = data.clone();
            let mut r = Rc4Asm::new(&key).unwrap_or_else(|| panic!("key"));
            let (a, b) = asm.split_at_mut(cut.min(data.len()));
            r.apply(a);
            r.apply(b);
            let mut theirs = data.clone();
            let mut c = rc4::Rc4::new_from_slice(&key).unwrap();
            c.apply_keystream(&mut theirs);
            prop_assert_eq!(&asm, &theirs);
            prop_assert_eq!(ours, theirs);
        }
    }
}
