//! Reading the human-readable table `openssl speed` prints without `-mr`:
//! what write-ups and forum posts paste, from OpenSSL 0.9.8 to 3.x.
//!
//! The layout, as openssl's `speed.c` prints it:
//! - a preamble of free text: the version (`OpenSSL 0.9.8k 25 Mar 2009`, or
//!   `version: 3.0.2` since 3.0), `built on:`, `options:`, `compiler:`,
//!   timing notes, `CPUINFO:`, and with stderr captured too the `Doing …`
//!   progress lines;
//! - `type 16 bytes 64 bytes …`, then one row per digest or cipher: its
//!   name (which may hold spaces: `aes-128 cbc`, `des ede3`) and one number
//!   per block size — in 1000s of bytes per second with a `k` suffix, or in
//!   bytes per second without it (openssl adds the `k` only above 10,000
//!   bytes per second, so a slow board's row mixes both);
//! - a header ending in `sign/s verify/s` (3.x may put `encr./s decr./s`
//!   after them), then `rsa 2048 bits 0.000718s 0.000021s 1393.4 48229.7`
//!   rows, `dsa` alike, and `256 bits ecdsa (nistp256) …`, `253 bits EdDSA
//!   (Ed25519) …`, `256 bits SM2 (CurveSM2) …` (`bit` before 1.1.1);
//! - a header ending in `op/s`, then `256 bits ecdh (nistp256) 0.0001s
//!   15449.3` and `2048 bits ffdh 0.0016s 628.1` rows.
//!
//! Columns are read by their header's names, so a version that adds
//! columns still reads. A line inside a table that is not one of its rows
//! (a newer openssl's algorithm kind, prose pasted between the tables) is
//! listed in `SpeedReport::unsupported`, never guessed at.

use super::{err, parse_value, KeyExchangeRow, OpensslSpeedError, SignVerifyRow, SpeedReport};
use super::{SymmetricRow, UnsupportedLine};

/// The table being read.
enum Section {
    /// Before the first table header.
    Preamble,
    /// Digests and ciphers at these block sizes.
    Symmetric(Vec<u64>),
    /// Signatures, with the header's column names.
    Sign(Vec<String>),
    /// Key exchanges, with the header's column names.
    Exchange(Vec<String>),
    /// A table of a kind not read here (3.5's KEMs, for one).
    Other,
}

/// Parse the human-readable output of `openssl speed`.
pub fn parse_table(text: &str) -> Result<SpeedReport, OpensslSpeedError> {
    let mut report = SpeedReport::empty();
    let mut section = Section::Preamble;
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last_line = n;
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() || is_progress(line) {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if let Some(v) = version_of(line) {
            report.version.get_or_insert(v);
            continue;
        }
        if matches!(section, Section::Preamble) {
            for (prefix, slot) in [
                ("built on:", &mut report.built_on),
                ("options:", &mut report.options),
                ("compiler:", &mut report.compiler),
            ] {
                if let Some(v) = line.strip_prefix(prefix) {
                    let v = v.trim();
                    if !v.is_empty() {
                        slot.get_or_insert_with(|| v.to_string());
                    }
                }
            }
        }
        if let Some(header) = header_of(&tokens, n)? {
            section = header;
            continue;
        }
        let understood = match &section {
            Section::Preamble => true,
            Section::Symmetric(sizes) => match symmetric_row(&tokens, sizes, n)? {
                Some(row) => {
                    report.symmetric.push(row);
                    true
                }
                None => false,
            },
            Section::Sign(columns) => match sign_row(&tokens, columns, n)? {
                Some(row) => {
                    report.sign_verify.push(row);
                    true
                }
                None => false,
            },
            Section::Exchange(columns) => match exchange_row(&tokens, columns, n)? {
                Some(row) => {
                    report.key_exchange.push(row);
                    true
                }
                None => false,
            },
            Section::Other => false,
        };
        if !understood {
            report.unsupported.push(UnsupportedLine {
                line: n,
                text: super::clip(line),
            });
        }
    }
    if report.symmetric.is_empty()
        && report.sign_verify.is_empty()
        && report.key_exchange.is_empty()
    {
        return Err(err(
            last_line.max(1),
            "no openssl speed table found (a 'type 16 bytes …' header with rows under it, or a 'sign/s verify/s' or 'op/s' table)",
        ));
    }
    Ok(report)
}

/// stderr lines interleaved with the table when `2>&1` was captured:
/// `Doing md5 for 3s on 16 size blocks: …`, `4580434 md5's in 2.99s`,
/// `1393 2048 bits private RSA's in 1.00s`.
fn is_progress(line: &str) -> bool {
    line.starts_with("Doing ") || line.contains("'s in ") || line.contains(" ops in ")
}

/// `OpenSSL 1.1.1g  21 Apr 2020` or `version: 3.0.2` → the version.
fn version_of(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("OpenSSL ")
        .or_else(|| line.strip_prefix("version:"))?;
    let v = rest.split_whitespace().next()?;
    v.starts_with(|c: char| c.is_ascii_digit())
        .then(|| v.to_string())
}

/// A table header, or `None` for any other line.
fn header_of(tokens: &[&str], line: usize) -> Result<Option<Section>, OpensslSpeedError> {
    match tokens {
        ["type", rest @ ..] if rest.len() >= 2 && rest.len() % 2 == 0 => {
            let mut sizes = Vec::with_capacity(rest.len() / 2);
            for pair in rest.chunks(2) {
                if pair[1] != "bytes" {
                    return Ok(None);
                }
                let size = pair[0]
                    .parse::<u64>()
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or_else(|| {
                        err(
                            line,
                            format!("block size '{}' is not a positive integer", pair[0]),
                        )
                    })?;
                sizes.push(size);
            }
            Ok(Some(Section::Symmetric(sizes)))
        }
        _ if tokens.contains(&"sign/s") && tokens.contains(&"verify/s") => {
            Ok(Some(Section::Sign(owned(tokens))))
        }
        _ if tokens.last() == Some(&"op/s") && tokens.first() == Some(&"op") => {
            Ok(Some(Section::Exchange(owned(tokens))))
        }
        // Other tables of per-second rates (keygens/s, encaps/s …).
        _ if !tokens.is_empty()
            && tokens
                .iter()
                .all(|t| !t.contains(|c: char| c.is_ascii_digit()))
            && tokens.iter().any(|t| t.ends_with("/s")) =>
        {
            Ok(Some(Section::Other))
        }
        _ => Ok(None),
    }
}

fn owned(tokens: &[&str]) -> Vec<String> {
    tokens.iter().map(|t| t.to_string()).collect()
}

/// `aes-128 cbc 90345.06k 140108.84k …`: the name, then one rate per size.
fn symmetric_row(
    tokens: &[&str],
    sizes: &[u64],
    line: usize,
) -> Result<Option<SymmetricRow>, OpensslSpeedError> {
    let Some(name_len) = tokens.len().checked_sub(sizes.len()).filter(|&l| l > 0) else {
        return Ok(None);
    };
    let (name, values) = tokens.split_at(name_len);
    if !values.iter().all(|v| looks_numeric(v)) || name.iter().any(|t| looks_numeric(t)) {
        return Ok(None);
    }
    let bytes_per_second = values
        .iter()
        .map(|v| match v.strip_suffix('k') {
            Some(thousands) => parse_value(thousands, line).map(|x| x * 1000.0),
            None => parse_value(v, line),
        })
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(Some(SymmetricRow {
        algorithm: name.join(" "),
        block_sizes: sizes.to_vec(),
        bytes_per_second,
    }))
}

/// A number as openssl prints one in a table cell: `0.00`, `1876.92k`,
/// `0.000149s`.
fn looks_numeric(t: &str) -> bool {
    let t = t.trim_end_matches(['k', 's']);
    !t.is_empty()
        && t.starts_with(|c: char| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The algorithm's openssl name, its bits, and the row's cells after them:
/// `rsa 2048 bits …` → `rsa2048`; `256 bits ecdsa (nistp256) …` →
/// `ecdsap256`; `253 bits EdDSA (Ed25519) …` → `ed25519`; `256 bits SM2
/// (CurveSM2)` → `sm2`; `256 bits ecdh (nistp256)` → `ecdhp256`; `253 bits
/// ecdh (X25519)` → `ecdhx25519`; `2048 bits ffdh` → `ffdh2048`.
fn named<'a>(tokens: &'a [&'a str]) -> Option<(String, u32, &'a [&'a str])> {
    let is_bits = |t: &str| t == "bits" || t == "bit";
    match tokens {
        [kind @ ("rsa" | "dsa"), bits, unit, rest @ ..] if is_bits(unit) => {
            let b: u32 = bits.parse().ok()?;
            Some((format!("{kind}{b}"), b, rest))
        }
        [bits, unit, kind, rest @ ..] if is_bits(unit) => {
            let b: u32 = bits.parse().ok()?;
            let (curve, rest) = match rest {
                [c, rest @ ..] if c.starts_with('(') && c.ends_with(')') => {
                    (Some(c.trim_matches(['(', ')']).to_ascii_lowercase()), rest)
                }
                _ => (None, rest),
            };
            let name = match (kind.to_ascii_lowercase().as_str(), curve) {
                ("ecdsa", Some(c)) => format!("ecdsa{}", curve_short(&c)),
                ("ecdh", Some(c)) => format!("ecdh{}", curve_short(&c)),
                ("eddsa", Some(c)) => c,
                ("sm2", _) => "sm2".to_string(),
                ("ffdh", None) => format!("ffdh{b}"),
                _ => return None,
            };
            Some((name, b, rest))
        }
        _ => None,
    }
}

/// openssl's command-line suffix for a curve's printed name: `nistp256` →
/// `p256`, `secp160r1` → `p160`, `nistk163` → `k163`, `brainpoolp256r1` →
/// `brp256r1`, `x25519` as it is.
fn curve_short(curve: &str) -> String {
    if let Some(rest) = curve.strip_prefix("nist") {
        return rest.to_string();
    }
    if let Some(rest) = curve.strip_prefix("brainpool") {
        return format!("br{rest}");
    }
    if let Some(bits) = curve
        .strip_prefix("secp")
        .and_then(|r| r.strip_suffix("r1"))
    {
        return format!("p{bits}");
    }
    curve.to_string()
}

/// The cell under `column` in a row whose cells follow the header's names.
fn cell(
    cells: &[&str],
    columns: &[String],
    column: &str,
    line: usize,
) -> Result<Option<f64>, OpensslSpeedError> {
    match columns.iter().position(|c| c == column) {
        Some(i) => cells.get(i).map(|v| parse_value(v, line)).transpose(),
        None => Ok(None),
    }
}

/// A public-key row's name, bits and cells, if it is one and has a cell
/// under each of the header's columns.
fn named_row<'a>(
    tokens: &'a [&'a str],
    columns: &[String],
) -> Option<(String, u32, &'a [&'a str])> {
    named(tokens).filter(|(_, _, cells)| cells.len() == columns.len())
}

fn sign_row(
    tokens: &[&str],
    columns: &[String],
    line: usize,
) -> Result<Option<SignVerifyRow>, OpensslSpeedError> {
    let Some((algorithm, bits, cells)) = named_row(tokens, columns) else {
        return Ok(None);
    };
    Ok(Some(SignVerifyRow {
        algorithm,
        bits: Some(bits),
        sign_per_second: cell(cells, columns, "sign/s", line)?,
        verify_per_second: cell(cells, columns, "verify/s", line)?,
    }))
}

fn exchange_row(
    tokens: &[&str],
    columns: &[String],
    line: usize,
) -> Result<Option<KeyExchangeRow>, OpensslSpeedError> {
    let Some((algorithm, bits, cells)) = named_row(tokens, columns) else {
        return Ok(None);
    };
    let Some(ops_per_second) = cell(cells, columns, "op/s", line)? else {
        return Ok(None);
    };
    Ok(Some(KeyExchangeRow {
        algorithm,
        bits: Some(bits),
        ops_per_second,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::{assert_close, bench_id_for, parse, signers, to_results};
    use super::*;

    #[test]
    fn a_whole_3_0_table() {
        let r = parse_table(fixture!("3.0-human-table-digests-ciphers-pkey.txt")).unwrap();
        assert_eq!(r.version.as_deref(), Some("3.0.22"));
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        let names: Vec<&str> = r.symmetric.iter().map(|s| s.algorithm.as_str()).collect();
        assert_eq!(
            names,
            [
                "md5",
                "sha1",
                "rmd160",
                "sha256",
                "sha512",
                "hmac(md5)",
                "des-ede3",
                "aes-128-cbc",
                "aes-256-cbc",
                "camellia-128-cbc"
            ]
        );
        let md5 = &r.symmetric[0];
        assert_eq!(md5.block_sizes, [16, 64, 256, 1024, 8192, 16384]);
        assert_close(md5.bytes_per_second[0], 56_812_730.0);
        assert_close(md5.bytes_per_second[5], 628_121_600.0);
        // A name longer than openssl's 13-character column still reads.
        assert_close(r.symmetric[9].bytes_per_second[0], 131_007_170.0);
        assert_eq!(
            signers(&r),
            [
                ("rsa1024", Some(1024)),
                ("rsa2048", Some(2048)),
                ("dsa2048", Some(2048)),
                ("ecdsap256", Some(256)),
                ("ecdsap384", Some(384)),
                ("ed25519", Some(253))
            ]
        );
        assert_eq!(r.sign_verify[1].sign_per_second, Some(1431.4));
        assert_eq!(r.sign_verify[1].verify_per_second, Some(48366.0));
        let kx: Vec<(&str, f64)> = r
            .key_exchange
            .iter()
            .map(|k| (k.algorithm.as_str(), k.ops_per_second))
            .collect();
        assert_eq!(kx, [("ecdhp256", 17095.6), ("ecdhx25519", 27104.0)]);
    }

    #[test]
    fn progress_lines_from_stderr_are_skipped() {
        let with = parse_table(fixture!("3.0-human-table-with-progress-lines.txt")).unwrap();
        let without = parse_table(fixture!("3.0-human-table-digests-ciphers-pkey.txt")).unwrap();
        assert_eq!(with, without);
    }

    #[test]
    fn parse_tells_the_two_forms_apart() {
        let table = parse(fixture!("3.0-human-table-not-mr.txt")).unwrap();
        assert_eq!(table.symmetric.len(), 2);
        assert_close(table.symmetric[0].bytes_per_second[0], 698_551_900.0);
        let mr = parse(fixture!("3.0-sha256-md5-8k.txt")).unwrap();
        assert_eq!(mr.symmetric.len(), 2);
    }

    #[test]
    fn results_match_sysgauge_ids() {
        let r = parse_table(fixture!("3.0-human-table-digests-ciphers-pkey.txt")).unwrap();
        let ids: std::collections::BTreeSet<String> = to_results(&r, &|_| None)
            .into_iter()
            .map(|x| x.bench_id)
            .collect();
        for id in [
            "hash.md5",
            "hash.sha256",
            "hash.rmd160",
            "crypto.aes-128-cbc",
            "crypto.des-ede3-cbc",
            "crypto.rsa-2048",
            "crypto.ecdsa-p256",
            "crypto.ecdh-p256",
            "crypto.x25519",
            "crypto.ed25519",
        ] {
            assert!(ids.contains(id), "{id} missing from {ids:?}");
        }
    }

    /// Real tables of older versions (built from their sources here): 1.1.1w
    /// with its `Doing …` lines (`2>&1`), 1.1.0i's standard output; both
    /// name the low-level cipher `aes-128 cbc`.
    #[test]
    fn real_tables_of_1_1_1_and_1_1_0() {
        let r = parse_table(fixture!("1.1.1w-human-table-with-progress.txt")).unwrap();
        assert_eq!(r.version.as_deref(), Some("1.1.1w"));
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        let names: Vec<&str> = r.symmetric.iter().map(|s| s.algorithm.as_str()).collect();
        assert_eq!(names, ["md5", "sha1", "aes-128 cbc", "sha256"]);
        assert_close(r.symmetric[0].bytes_per_second[0], 111_499_290.0);
        assert_close(r.symmetric[2].bytes_per_second[5], 256_321_040.0);
        assert_eq!(r.sign_verify[0].algorithm, "rsa2048");
        assert_eq!(r.sign_verify[0].sign_per_second, Some(1344.3));
        assert_eq!(r.sign_verify[0].verify_per_second, Some(45232.2));
        let ids: Vec<String> = to_results(&r, &|_| None)
            .into_iter()
            .map(|x| x.bench_id)
            .collect();
        assert!(ids.contains(&"crypto.aes-128-cbc".to_string()), "{ids:?}");

        let r = parse_table(fixture!("1.1.0i-human-table.txt")).unwrap();
        assert_eq!(r.version.as_deref(), Some("1.1.0i"));
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        assert_eq!(r.symmetric.len(), 3);
        assert_eq!(r.symmetric[1].block_sizes, [16, 64, 256, 1024, 8192, 16384]);
        assert_close(r.symmetric[2].bytes_per_second[4], 1_504_675_670.0);
        assert_eq!(r.sign_verify[0].sign_per_second, Some(1234.8));
    }

    /// Rows in the layouts older openssl versions print (their printf
    /// formats): `bit` for `bits`, spaced cipher names, bytes per second
    /// without the `k` under 10,000, timing preambles.
    #[test]
    fn older_layouts() {
        let text = "\
To get the most accurate results, try to run this
program when this computer is idle.
Doing aes-128 cbc for 3s on 16 size blocks: 1000000 aes-128 cbc's in 3.00s
OpenSSL 0.9.8x 1 Jan 2010
built on: date not available
options:bn(32,32) aes(partial)
compiler: gcc -O2
available timing options: TIMES HZ=100
timing function used: times
The 'numbers' are in 1000s of bytes per second processed.
type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 bytes
aes-128 cbc       5333.33k     5900.00k     6000.00k     6100.00k     6150.00k
des ede3           823.12      9999.99     10234.56k      0.00         0.00 
                  sign    verify    sign/s verify/s
rsa  512 bits   0.0021s   0.0002s    476.2   5000.0
                              sign    verify    sign/s verify/s
 160 bit ecdsa (secp160r1)   0.0002s   0.0008s   5000.0   1250.0
                              op      op/s
 160 bit ecdh (secp160r1)   0.0005s   2000.0
";
        let r = parse_table(text).unwrap();
        assert_eq!(r.version.as_deref(), Some("0.9.8x"));
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        assert_eq!(r.symmetric[0].algorithm, "aes-128 cbc");
        assert_eq!(
            bench_id_for(&r.symmetric[0].algorithm),
            "crypto.aes-128-cbc"
        );
        assert_eq!(
            bench_id_for(&r.symmetric[1].algorithm),
            "crypto.des-ede3-cbc"
        );
        let des = &r.symmetric[1].bytes_per_second;
        assert_close(des[0], 823.12);
        assert_close(des[1], 9999.99);
        assert_close(des[2], 10_234_560.0);
        assert_eq!(des[3], 0.0);
        assert_eq!(r.sign_verify[0].algorithm, "rsa512");
        assert_eq!(r.sign_verify[1].algorithm, "ecdsap160");
        assert_eq!(r.key_exchange[0].algorithm, "ecdhp160");
        assert_eq!(r.key_exchange[0].ops_per_second, 2000.0);
    }

    #[test]
    fn newer_columns_are_read_by_name() {
        let text = "\
version: 3.2.1
                   sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s
rsa   512 bits 0.000035s 0.000002s 0.000002s 0.000040s  28349.0 449866.9 411468.1  25148.0
                               sign    verify    sign/s verify/s
 256 bits SM2 (CurveSM2)   0.0001s   0.0002s   9871.6   4710.2
                              op     op/s
 2048 bits ffdh   0.0016s    628.1
                        keygen    encaps    decaps keygens/s  encaps/s  decaps/s
                ML-KEM-512  0.000011s  0.000010s  0.000013s   90120.3  100204.9   78391.2
";
        let r = parse_table(text).unwrap();
        assert_eq!(r.sign_verify[0].sign_per_second, Some(28349.0));
        assert_eq!(r.sign_verify[0].verify_per_second, Some(449866.9));
        assert_eq!(r.sign_verify[1].algorithm, "sm2");
        assert_eq!(r.key_exchange[0].algorithm, "ffdh2048");
        assert_eq!(r.key_exchange[0].ops_per_second, 628.1);
        // A kind of table not read here is listed, not guessed at.
        assert_eq!(r.unsupported.len(), 1);
        assert_eq!(r.unsupported[0].line, 9);
    }

    #[test]
    fn refusals_name_the_problem() {
        let none = parse_table("hello\nworld\n").unwrap_err();
        assert!(none.message.contains("no openssl speed table"), "{none}");
        let bad_size = parse_table("type 0 bytes\nmd5 1.00k\n").unwrap_err();
        assert!(bad_size.message.contains("block size"), "{bad_size}");
        assert_eq!(bad_size.line, 1);
        let huge = parse_table("type 16 bytes\nmd5 1e999k\n");
        assert!(huge.is_err() || huge.unwrap().unsupported.len() == 1);
    }
}
