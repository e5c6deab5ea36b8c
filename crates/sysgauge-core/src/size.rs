//! "Nice numbers": counts and sizes with decimal or binary suffixes.
//!
//! `1K` = 1000, `1M` = 10^6 … `1Y` = 10^24 (an optional trailing `B` is
//! allowed: `1MB`); `1Ki` = `1KiB` = `1Kib` = 1024 … `1YiB` = 2^80. Suffixes
//! are case-insensitive. A fraction is accepted only when the caller allows
//! it and the result is a whole number (`1.5K` = 1500, `0.5Ki` = 512).
//!
//! Written by hand because the crates that parse sizes either treat `K` as
//! 1024, accept unknown suffixes, or silently truncate fractions; the
//! behaviour here is part of sysgauge's contract with its users.

use std::fmt;
use thiserror::Error;

/// Why a nice number was refused. The message names the input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SizeError {
    #[error("empty number")]
    Empty,
    #[error("'{0}': negative numbers are not allowed")]
    Negative(String),
    #[error("'{input}': unknown suffix '{suffix}' (use K, M, G, T, P, E, Z, Y for powers of 1000 or Ki, Mi, Gi, … / KiB, MiB, … for powers of 1024)")]
    UnknownSuffix { input: String, suffix: String },
    #[error("'{0}': not a number")]
    NotANumber(String),
    #[error("'{0}': fractions are not allowed here")]
    FractionNotAllowed(String),
    #[error("'{0}': the value is not a whole number")]
    NotWhole(String),
    #[error("'{input}': too large (the limit is {limit})")]
    Overflow { input: String, limit: u128 },
    #[error("'{input}' is too small: it must be at least {min}")]
    TooSmall { input: String, min: u128 },
}

/// How fractions are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fraction {
    Allowed,
    Forbidden,
}

fn multiplier(suffix: &str) -> Option<u128> {
    let s = suffix.to_ascii_lowercase();
    let mut chars = s.chars();
    let base = match chars.next() {
        None => return Some(1),
        Some(c) => c,
    };
    let rest = chars.as_str();
    let power = match base {
        'b' if rest.is_empty() => return Some(1),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        'e' => 6,
        'z' => 7,
        'y' => 8,
        _ => return None,
    };
    match rest {
        "" | "b" => Some(1000u128.pow(power)),
        "i" | "ib" => Some(1024u128.pow(power)),
        _ => None,
    }
}

/// Parse a nice number into a u128 (10^24 and 2^80 fit).
pub fn parse_u128(input: &str, fraction: Fraction) -> Result<u128, SizeError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(SizeError::Empty);
    }
    if s.starts_with('-') {
        return Err(SizeError::Negative(s.to_string()));
    }
    let s_num = s.strip_prefix('+').unwrap_or(s);
    let split = s_num
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s_num.len());
    let (num, suffix) = s_num.split_at(split);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let mult = multiplier(suffix.trim()).ok_or_else(|| SizeError::UnknownSuffix {
        input: s.to_string(),
        suffix: suffix.to_string(),
    })?;
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.chars().all(|c| c.is_ascii_digit())
        || !frac_part.chars().all(|c| c.is_ascii_digit())
        || (num.contains('.') && frac_part.is_empty() && int_part.is_empty())
    {
        return Err(SizeError::NotANumber(s.to_string()));
    }
    let frac_part = frac_part.trim_end_matches('0');
    if !frac_part.is_empty() && fraction == Fraction::Forbidden {
        return Err(SizeError::FractionNotAllowed(s.to_string()));
    }
    let overflow = || SizeError::Overflow {
        input: s.to_string(),
        limit: u128::MAX,
    };
    // value = (int_part . frac_part) × mult, computed exactly as
    // (int_part × 10^f + frac_part) × mult / 10^f.
    let digits = format!("{int_part}{frac_part}");
    let mut mantissa: u128 = 0;
    for c in digits.chars() {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(c as u8 - b'0')))
            .ok_or_else(overflow)?;
    }
    let scale = 10u128
        .checked_pow(frac_part.len() as u32)
        .ok_or_else(overflow)?;
    let product = mantissa.checked_mul(mult).ok_or_else(overflow)?;
    if product % scale != 0 {
        return Err(SizeError::NotWhole(s.to_string()));
    }
    Ok(product / scale)
}

/// Parse a nice number into a u64; values above u64::MAX are an overflow error.
pub fn parse_u64(input: &str, fraction: Fraction) -> Result<u64, SizeError> {
    let v = parse_u128(input, fraction)?;
    u64::try_from(v).map_err(|_| SizeError::Overflow {
        input: input.trim().to_string(),
        limit: u128::from(u64::MAX),
    })
}

/// Parse a byte size (fractions allowed when the result is whole bytes).
pub fn parse_size(input: &str) -> Result<u64, SizeError> {
    parse_u64(input, Fraction::Allowed)
}

/// Parse a count (no fractions).
pub fn parse_count(input: &str) -> Result<u64, SizeError> {
    parse_u64(input, Fraction::Forbidden)
}

/// Parse a comma-separated list of sizes, e.g. `4K,64Ki,1MiB`.
pub fn parse_size_list(input: &str) -> Result<Vec<u64>, SizeError> {
    input.split(',').map(parse_size).collect()
}

/// A byte count that prints in binary units with one decimal where needed
/// (`4 KiB`, `1.5 MiB`, `512 B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 || v.fract() == 0.0 {
            write!(f, "{} {}", v as u64, UNITS[i])
        } else {
            write!(f, "{:.1} {}", v, UNITS[i])
        }
    }
}

/// Compact label for a size as used in parameters and table headers:
/// exact binary multiples get a binary suffix (`8KiB`), exact decimal ones a
/// decimal suffix (`16K`... only when not binary), everything else bytes.
pub fn size_label(n: u64) -> String {
    const BIN: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (s, m) in BIN {
        if n >= m && n.is_multiple_of(m) {
            return format!("{}{}", n / m, s);
        }
    }
    format!("{n}B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> Result<u128, SizeError> {
        parse_u128(s, Fraction::Allowed)
    }

    #[test]
    fn decimal_and_binary() {
        assert_eq!(p("1K"), Ok(1000));
        assert_eq!(p("1k"), Ok(1000));
        assert_eq!(p("1KB"), Ok(1000));
        assert_eq!(p("1M"), Ok(1_000_000));
        assert_eq!(p("1Mi"), Ok(1_048_576));
        assert_eq!(p("1MiB"), Ok(1_048_576));
        assert_eq!(p("1Mib"), Ok(1_048_576));
        assert_eq!(p("1mib"), Ok(1_048_576));
        assert_eq!(p("1Ki"), Ok(1024));
        assert_eq!(p("1G"), Ok(1_000_000_000));
        assert_eq!(p("1Y"), Ok(10u128.pow(24)));
        assert_eq!(p("1YiB"), Ok(1u128 << 80));
        assert_eq!(p("1Z"), Ok(10u128.pow(21)));
        assert_eq!(p("1E"), Ok(10u128.pow(18)));
        assert_eq!(p("42"), Ok(42));
        assert_eq!(p("42B"), Ok(42));
        assert_eq!(p(" 7 "), Ok(7));
        assert_eq!(p("1_000"), Ok(1000));
        assert_eq!(p("0"), Ok(0));
    }

    #[test]
    fn fractions() {
        assert_eq!(p("1.5K"), Ok(1500));
        assert_eq!(p("0.5Ki"), Ok(512));
        assert_eq!(p("2.0"), Ok(2));
        assert_eq!(p(".5K"), Ok(500));
        assert_eq!(p("1.5"), Err(SizeError::NotWhole("1.5".into())));
        assert_eq!(
            parse_u128("1.5K", Fraction::Forbidden),
            Err(SizeError::FractionNotAllowed("1.5K".into()))
        );
        assert_eq!(parse_u128("2.000K", Fraction::Forbidden), Ok(2000));
    }

    #[test]
    fn errors() {
        assert_eq!(p(""), Err(SizeError::Empty));
        assert_eq!(p("   "), Err(SizeError::Empty));
        assert_eq!(p("-1K"), Err(SizeError::Negative("-1K".into())));
        assert!(matches!(p("1Q"), Err(SizeError::UnknownSuffix { .. })));
        assert!(matches!(p("1KiBB"), Err(SizeError::UnknownSuffix { .. })));
        assert!(matches!(p("1Kx"), Err(SizeError::UnknownSuffix { .. })));
        assert!(matches!(p("1BB"), Err(SizeError::UnknownSuffix { .. })));
        assert!(matches!(p("K"), Err(SizeError::NotANumber(_))));
        assert!(matches!(p("."), Err(SizeError::NotANumber(_))));
        assert!(matches!(p("1.2.3"), Err(SizeError::NotANumber(_))));
        assert!(p("1000000YiB").is_ok());
        assert!(matches!(
            p("1000000000000000Y"),
            Err(SizeError::Overflow { .. })
        ));
        assert!(matches!(
            parse_u64("1Y", Fraction::Allowed),
            Err(SizeError::Overflow { .. })
        ));
        assert!(parse_u64("16EiB", Fraction::Allowed).is_err());
        assert_eq!(parse_u64("15EiB", Fraction::Allowed), Ok(15 << 60));
    }

    #[test]
    fn two_letter_suffixes_are_not_silently_one() {
        // The trap this parser exists to avoid: 'Ki' must be 1024, not 1.
        for (s, v) in [("3Ki", 3 * 1024u128), ("3Mi", 3 << 20), ("3Gi", 3 << 30)] {
            assert_eq!(p(s), Ok(v));
        }
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(8192), "8KiB");
        assert_eq!(size_label(1 << 20), "1MiB");
        assert_eq!(size_label(16), "16B");
        assert_eq!(size_label(1000), "1000B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1 << 30).to_string(), "1 GiB");
    }

    #[test]
    fn lists() {
        assert_eq!(
            parse_size_list("4K,64Ki,1MiB"),
            Ok(vec![4000, 65536, 1 << 20])
        );
        assert!(parse_size_list("4K,,1M").is_err());
    }

    proptest! {
        #[test]
        fn round_trip_decimal(v in 0u64..1_000_000, k in 0u32..5) {
            let suffix = ["", "K", "M", "G", "T"][k as usize];
            let expect = u128::from(v) * 1000u128.pow(k);
            prop_assert_eq!(p(&format!("{v}{suffix}")), Ok(expect));
            prop_assert_eq!(p(&format!("{v}{}", suffix.to_lowercase())), Ok(expect));
        }

        #[test]
        fn round_trip_binary(v in 0u64..1_000_000, k in 1u32..5, form in 0usize..3) {
            let base = ["K", "M", "G", "T"][(k - 1) as usize];
            let tail = ["i", "iB", "ib"][form];
            prop_assert_eq!(p(&format!("{v}{base}{tail}")), Ok(u128::from(v) * 1024u128.pow(k)));
        }

        #[test]
        fn every_suffix_through_yotta_any_case(
            v in 0u64..1_000_000,
            k in 1u32..9,
            form in 0usize..4,
            case_mask in any::<u8>(),
        ) {
            // K M G T P E Z Y: decimal powers of 1000, binary powers of
            // 1024 with i / iB / ib, in any mix of upper and lower case.
            let base = ["K", "M", "G", "T", "P", "E", "Z", "Y"][(k - 1) as usize];
            let tail = ["", "i", "iB", "ib"][form];
            let suffix: String = format!("{base}{tail}")
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if case_mask & (1 << i) != 0 {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect();
            let unit = if form == 0 { 1000u128 } else { 1024u128 };
            let expect = u128::from(v) * unit.pow(k);
            prop_assert_eq!(p(&format!("{v}{suffix}")), Ok(expect));
            // Through u64: exact when it fits, a checked overflow when not.
            let as_u64 = parse_u64(&format!("{v}{suffix}"), Fraction::Forbidden);
            match u64::try_from(expect) {
                Ok(e) => prop_assert_eq!(as_u64, Ok(e)),
                Err(_) => {
                    let is_overflow = matches!(as_u64, Err(SizeError::Overflow { .. }));
                    prop_assert!(is_overflow);
                }
            }
        }

        #[test]
        fn binary_two_letter_suffix_is_never_one(v in 1u64..1_000_000, k in 1u32..9) {
            let base = ["K", "M", "G", "T", "P", "E", "Z", "Y"][(k - 1) as usize];
            let got = p(&format!("{v}{base}i")).unwrap_or(0);
            prop_assert_eq!(got, u128::from(v) * 1024u128.pow(k));
            prop_assert!(got != u128::from(v));
        }

        #[test]
        fn never_panics(s in "\\PC{0,20}") {
            let _ = parse_u128(&s, Fraction::Allowed);
            let _ = parse_u64(&s, Fraction::Forbidden);
        }

        #[test]
        fn plain_integers(v in any::<u64>()) {
            prop_assert_eq!(parse_u64(&v.to_string(), Fraction::Forbidden), Ok(v));
        }
    }
}
