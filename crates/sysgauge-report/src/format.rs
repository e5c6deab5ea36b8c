//! Number formatting for tables: enough significant digits to compare, no
//! more (a 5-repetition median has no business showing 9 digits).

use sysgauge_core::Unit;

/// Format a value with about four significant digits: `1679828`, `1234.6`,
/// `12.35`, `0.01234`.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a >= 10_000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        // Four significant digits for small values.
        let digits = (-a.log10()).floor() as usize + 4;
        format!("{v:.digits$}")
    }
}

/// `n` and `noun`, plural unless `n` is 1 (`1 case`, `3 cases`).
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Value followed by its unit as people read it (`unit_label`).
pub fn format_with_unit(v: f64, unit: &Unit) -> String {
    format!("{} {}", format_value(v), unit_label(unit.symbol()))
}

/// A unit as text for people shows it (tables, progress lines, charts,
/// headings): microseconds are `µs`, as every table spells them. The
/// symbol itself stays ASCII (`us`): it is what records, the database,
/// CSV and JSON exports store, a schema that does not change.
pub fn unit_label(symbol: &str) -> &str {
    if Unit::from(symbol) == Unit::Microseconds {
        "µs"
    } else {
        symbol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(format_value(1_679_827.52), "1679828");
        assert_eq!(format_value(1234.56), "1234.6");
        assert_eq!(format_value(12.345), "12.35");
        assert_eq!(format_value(0.012345), "0.01235");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(f64::NAN), "-");
        assert_eq!(format_value(-250.0), "-250.0");
        assert_eq!(format_with_unit(2.5, &Unit::MBps), "2.50 MB/s");
        assert_eq!(format_with_unit(2.5, &Unit::Microseconds), "2.50 µs");
        assert_eq!(unit_label("us"), "µs");
        assert_eq!(unit_label("µs"), "µs");
        assert_eq!(unit_label("ns"), "ns");
        assert_eq!(unit_label("widgets/s"), "widgets/s");
    }
}
