//! Compare ways of copying one large array into another, to choose (and
//! keep checking) what `mem.memcpy` ships: the C library's `memcpy`,
//! `rep movsb` (x86 ERMS/FSRM), hand-written SSE2 and AVX2 loops with
//! ordinary stores, an SSE2 loop with non-temporal stores, and the two
//! other copy methods of the family (the volatile element loop and 256 KiB
//! blocks). docs/performance.md reports its output.
//!
//! ```sh
//! cargo run --release -p sysgauge-bench --example copy_methods -- 256MiB [rounds] [--no-huge-pages]
//! ```
//!
//! Each round runs every method ten times back to back (methods
//! interleaved round by round); a round's figure is its median copy, and
//! the table shows the median, minimum and maximum over the rounds in MB/s
//! of bytes copied (mbw's convention). Every method's result is verified.

use std::hint::black_box;
use std::time::Instant;
use sysgauge_bench::memory::buffer::MappedBuf;
use sysgauge_bench::memory::copy::{copy_blocks, copy_loop, copy_memcpy, verify_copy};
use sysgauge_family::util::fill_pattern;

type CopyFn = fn(&mut [u8], &[u8]);

fn libc_memcpy(d: &mut [u8], s: &[u8]) {
    copy_memcpy(d, s);
}

fn volatile_loop(d: &mut [u8], s: &[u8]) {
    match (
        bytemuck::try_cast_slice_mut::<u8, u64>(d),
        bytemuck::try_cast_slice::<u8, u64>(s),
    ) {
        (Ok(d), Ok(s)) => copy_loop(d, s),
        _ => d.copy_from_slice(s),
    }
}

fn blocks_256k(d: &mut [u8], s: &[u8]) {
    copy_blocks(d, s, 256 << 10);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `rep movsb`: the microcoded string copy (fast with ERMS/FSRM).
    pub fn rep_movsb(d: &mut [u8], s: &[u8]) {
        let n = d.len().min(s.len());
        // SAFETY: copies exactly `n` bytes from `s` to `d`, both valid for
        // `n` bytes and not overlapping (distinct borrows); the direction
        // flag is clear per the ABI; rcx, rsi, rdi are declared clobbered.
        unsafe {
            std::arch::asm!(
                "rep movsb",
                inout("rcx") n => _,
                inout("rsi") s.as_ptr() => _,
                inout("rdi") d.as_mut_ptr() => _,
                options(nostack, preserves_flags)
            );
        }
    }

    /// The loop every SIMD copy here shares: whole steps of four registers
    /// of type `$reg` (`$width` bytes each), read with the unaligned load
    /// `$load` and written with `$store`. Evaluates to the bytes copied;
    /// the caller copies the tail. A macro rather than a function taking
    /// the intrinsics, so each loop calls its store instruction directly.
    ///
    /// The expansion's accesses are in bounds (i + 4 * width <= n <= both
    /// lengths); the caller's `unsafe` states that the instruction set is
    /// there and that the destination suits `$store`.
    macro_rules! copy_steps {
        ($d:expr, $s:expr, $reg:ty, $width:expr, $load:ident, $store:ident) => {{
            const STEP: usize = 4 * $width;
            let n = $d.len().min($s.len()) / STEP * STEP;
            let (dp, sp) = ($d.as_mut_ptr(), $s.as_ptr());
            let mut i = 0;
            while i < n {
                let a = $load(sp.add(i) as *const $reg);
                let b = $load(sp.add(i + $width) as *const $reg);
                let c = $load(sp.add(i + 2 * $width) as *const $reg);
                let e = $load(sp.add(i + 3 * $width) as *const $reg);
                $store(dp.add(i) as *mut $reg, a);
                $store(dp.add(i + $width) as *mut $reg, b);
                $store(dp.add(i + 2 * $width) as *mut $reg, c);
                $store(dp.add(i + 3 * $width) as *mut $reg, e);
                i += STEP;
            }
            n
        }};
    }

    /// 64 bytes per step with 16-byte ordinary loads and stores.
    pub fn sse2(d: &mut [u8], s: &[u8]) {
        // SAFETY: accesses in bounds (see `copy_steps`); unaligned loads and
        // stores; SSE2 is part of x86-64.
        let n = unsafe { copy_steps!(d, s, __m128i, 16, _mm_loadu_si128, _mm_storeu_si128) };
        d[n..].copy_from_slice(&s[n..]);
    }

    /// 64 bytes per step with non-temporal (streaming) stores, which write
    /// around the caches and skip the read-for-ownership of the target.
    pub fn sse2_nt(d: &mut [u8], s: &[u8]) {
        if !(d.as_ptr() as usize).is_multiple_of(16) {
            return sse2(d, s);
        }
        // SAFETY: as in `sse2`; the destination is 16-byte aligned (checked
        // above) and steps are multiples of 16 bytes, as streaming stores
        // require.
        let n = unsafe { copy_steps!(d, s, __m128i, 16, _mm_loadu_si128, _mm_stream_si128) };
        // SAFETY: sfence has no preconditions; it orders the streaming
        // stores before anything that follows.
        unsafe { _mm_sfence() };
        d[n..].copy_from_slice(&s[n..]);
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_inner(d: &mut [u8], s: &[u8]) {
        // SAFETY: accesses in bounds (see `copy_steps`); unaligned accesses;
        // AVX2 is enabled for this function and checked before it is called.
        let n = unsafe { copy_steps!(d, s, __m256i, 32, _mm256_loadu_si256, _mm256_storeu_si256) };
        d[n..].copy_from_slice(&s[n..]);
    }

    /// 128 bytes per step with 32-byte ordinary loads and stores.
    pub fn avx2(d: &mut [u8], s: &[u8]) {
        if is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present (checked just above).
            unsafe { avx2_inner(d, s) }
        } else {
            sse2(d, s)
        }
    }
}

fn methods() -> Vec<(&'static str, CopyFn)> {
    let mut v: Vec<(&'static str, CopyFn)> = vec![("libc memcpy (mem.memcpy)", libc_memcpy)];
    #[cfg(target_arch = "x86_64")]
    {
        v.push(("rep movsb", x86::rep_movsb));
        v.push(("SSE2 loop, ordinary stores", x86::sse2));
        if std::arch::is_x86_feature_detected!("avx2") {
            v.push(("AVX2 loop, ordinary stores", x86::avx2));
        }
        v.push(("SSE2 loop, non-temporal stores", x86::sse2_nt));
    }
    v.push(("volatile 8-byte loop (mem.loop-copy)", volatile_loop));
    v.push(("memcpy in 256 KiB blocks (mem.block-copy)", blocks_256k));
    v
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let huge = !args.iter().any(|a| a == "--no-huge-pages");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let size = match pos.first().map(|s| sysgauge_core::size::parse_size(s)) {
        None => 256 << 20,
        Some(Ok(v)) if v >= 4096 && v % 64 == 0 => v as usize,
        Some(Ok(v)) => {
            eprintln!("copy_methods: size {v} must be at least 4096 and a multiple of 64");
            std::process::exit(2);
        }
        Some(Err(e)) => {
            eprintln!("copy_methods: {e}");
            std::process::exit(2);
        }
    };
    let rounds: usize = match pos.get(1).map(|s| s.parse::<usize>()) {
        None => 5,
        Some(Ok(r)) if r > 0 => r,
        _ => {
            eprintln!("copy_methods: rounds must be a positive integer");
            std::process::exit(2);
        }
    };
    let map = |what: &str| {
        MappedBuf::new(size, huge).unwrap_or_else(|e| {
            eprintln!("copy_methods: cannot map {size} bytes for the {what}: {e}");
            std::process::exit(2);
        })
    };
    let (mut src, mut dst) = (map("source"), map("destination"));
    fill_pattern(src.bytes_mut(), 1);
    dst.bytes_mut().fill(0);
    let methods = methods();
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); methods.len()];
    for _ in 0..rounds {
        for (m, (name, f)) in methods.iter().enumerate() {
            dst.bytes_mut().fill(0xA5);
            f(dst.bytes_mut(), src.bytes());
            if let Err(e) = verify_copy(dst.bytes(), src.bytes()) {
                eprintln!("copy_methods: {name} is broken at byte {}", e.offset);
                std::process::exit(1);
            }
            let mut times = Vec::with_capacity(10);
            for _ in 0..10 {
                let t = Instant::now();
                f(black_box(dst.bytes_mut()), black_box(src.bytes()));
                times.push(t.elapsed().as_secs_f64());
            }
            results[m].push(size as f64 / median(&mut times) / 1e6);
        }
    }
    println!(
        "size {} per array, huge pages {}, {} rounds; huge-page share {:.0} %",
        sysgauge_core::size::Bytes(size as u64),
        if huge { "requested" } else { "forbidden" },
        rounds,
        src.huge_page_share().unwrap_or(0.0) * 100.0
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "method", "MB/s", "min", "max"
    );
    for ((name, _), r) in methods.iter().zip(results.iter_mut()) {
        let min = r.iter().copied().fold(f64::INFINITY, f64::min);
        let max = r.iter().copied().fold(0.0, f64::max);
        println!("{name:<44} {:>10.0} {min:>10.0} {max:>10.0}", median(r));
    }
}
