//! Build script: compute the hexadecimal digits of pi that are Blowfish's
//! initial state (`pi_words.rs`, see src/blowfish.rs).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("OUT_DIR is not set; cargo sets it for build scripts");
    };
    let pi = out_dir.join("pi_words.rs");
    if let Err(e) = std::fs::write(&pi, pi_words_source()) {
        panic!("cannot write {}: {e}", pi.display());
    }
}

/// Blowfish's P-array and S-boxes, in order, are the first 1042 32-bit
/// words of the fractional part of pi in hexadecimal (Schneier, "Description
/// of a New Variable-Length Key, 64-Bit Block Cipher", 1993). They are
/// computed here from Machin's formula, pi = 16 atan(1/5) - 4 atan(1/239),
/// in fixed point with 32-bit limbs (limb 0 holds the integer part), rather
/// than typed in; the tests check the result through the known answers.
const PI_WORDS: usize = 18 + 4 * 256;
const GUARD: usize = 4;

fn pi_words_source() -> String {
    let n = 1 + PI_WORDS + GUARD;
    let a = arctan_inv(5, n);
    let b = arctan_inv(239, n);
    let mut pi = mul_small(&a, 16);
    sub_assign(&mut pi, &mul_small(&b, 4));
    assert_eq!(pi[0], 3, "pi's integer part");
    let mut s = String::from("[\n");
    for w in &pi[1..=PI_WORDS] {
        s.push_str(&format!("    0x{w:08x},\n"));
    }
    s.push_str("]\n");
    s
}

/// atan(1/x) = sum over k of (-1)^k / ((2k+1) x^(2k+1)).
fn arctan_inv(x: u32, n: usize) -> Vec<u32> {
    let mut term = vec![0u32; n];
    term[0] = 1;
    div_small(&mut term, x);
    let mut sum = term.clone();
    let x2 = x * x;
    let mut k: u32 = 1;
    loop {
        div_small(&mut term, x2);
        if term.iter().all(|&w| w == 0) {
            return sum;
        }
        let mut t = term.clone();
        div_small(&mut t, 2 * k + 1);
        if k % 2 == 1 {
            sub_assign(&mut sum, &t);
        } else {
            add_assign(&mut sum, &t);
        }
        k += 1;
    }
}

fn div_small(v: &mut [u32], d: u32) {
    let mut rem = 0u64;
    let start = v.iter().position(|&w| w != 0).unwrap_or(v.len());
    for w in &mut v[start..] {
        let cur = (rem << 32) | u64::from(*w);
        *w = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
}

fn mul_small(v: &[u32], m: u32) -> Vec<u32> {
    let mut out = vec![0u32; v.len()];
    let mut carry = 0u64;
    for (o, &w) in out.iter_mut().zip(v).rev() {
        let cur = u64::from(w) * u64::from(m) + carry;
        *o = cur as u32;
        carry = cur >> 32;
    }
    out
}

fn add_assign(a: &mut [u32], b: &[u32]) {
    let mut carry = 0u64;
    for (x, &y) in a.iter_mut().zip(b).rev() {
        let cur = u64::from(*x) + u64::from(y) + carry;
        *x = cur as u32;
        carry = cur >> 32;
    }
}

fn sub_assign(a: &mut [u32], b: &[u32]) {
    let mut borrow = 0i64;
    for (x, &y) in a.iter_mut().zip(b).rev() {
        let cur = i64::from(*x) - i64::from(y) - borrow;
        *x = cur.rem_euclid(1 << 32) as u32;
        borrow = i64::from(cur < 0);
    }
}
