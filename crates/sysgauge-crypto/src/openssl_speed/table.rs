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
//! With `-multi N` the table follows a `Forked child K` line per child and
//! the children's `-mr` records echoed as `Got: RECORD from K` (on standard
//! output; with `2>&1` the children's `+DT`/`+R` progress records too), and
//! its digest and cipher rows come without the `type … bytes` header (3.0
//! decides to print it only after forking, so the parent never does): their
//! block sizes are the children's `+H`, and the number of children is the
//! report's `processes`. Such rows without those lines (the table alone, cut
//! from the output) are refused: neither their block sizes nor how many
//! processes their sums are of can be known.
//!
//! Columns are read by their header's names, so a version that adds
//! columns still reads. A line is a row when it names an algorithm
//! (`rsa 2048 bits`, a digest or cipher sysgauge knows) or, under the
//! digests' header, when most of its cells read as numbers; such a row with
//! a cell that is not a rate (`slow`, `-5.0k`, `1e999k`) or with too few
//! cells is an error naming the line and cell, never a row left out. A
//! rate of 0 is a case openssl did not run (`SpeedReport::not_run`). A
//! line inside a table that is not one of its rows (a newer openssl's
//! algorithm kind, prose pasted between the tables) is listed in
//! `SpeedReport::unsupported`, never guessed at.

use super::{bench_id_for, err, is_progress_record, rate, Children};
use super::{KeyExchangeRow, OpensslSpeedError, SignVerifyRow, SpeedReport};
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
    let mut children = Children::default();
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last_line = n;
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() || is_progress(line) || children.read(line, n)? {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if let Some(v) = version_of(line) {
            report.version.get_or_insert(v);
            continue;
        }
        if let Some(header) = header_of(&tokens, n)? {
            section = header;
            continue;
        }
        if matches!(section, Section::Preamble) {
            if !read_fact(line, &mut report) {
                if let Some(row) = headerless_row(&tokens, children.sizes.as_deref(), n)? {
                    section = Section::Symmetric(row.block_sizes.clone());
                    report.push_symmetric(row, n);
                }
            }
            continue;
        }
        let understood = match &section {
            Section::Preamble => true,
            Section::Symmetric(sizes) => match symmetric_row(&tokens, sizes, n)? {
                Some(row) => {
                    report.push_symmetric(row, n);
                    true
                }
                None => false,
            },
            Section::Sign(columns) => match sign_row(&tokens, columns, n)? {
                Some(row) => {
                    report.push_sign_verify(row, n);
                    true
                }
                None => false,
            },
            Section::Exchange(columns) => match exchange_row(&tokens, columns, n)? {
                Some(row) => {
                    report.push_key_exchange(row, n);
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
    if children.count() > 0 {
        report.processes = children.count();
    }
    if report.symmetric.is_empty()
        && report.sign_verify.is_empty()
        && report.key_exchange.is_empty()
    {
        let what = if children.count() > 0 {
            "the children's results (`Got:` lines) are there but the summed results, openssl's table, are missing (truncated?)"
        } else {
            "no openssl speed table found (a 'type 16 bytes …' header with rows under it, or a 'sign/s verify/s' or 'op/s' table)"
        };
        return Err(err(last_line.max(1), what));
    }
    Ok(report)
}

/// stderr lines interleaved with the table when `2>&1` was captured:
/// `Doing md5 for 3s on 16 size blocks: …`, `4580434 md5's in 2.99s`,
/// `1393 2048 bits private RSA's in 1.00s`, and `-multi`'s children's
/// `+DT:…`/`+R:…` records.
fn is_progress(line: &str) -> bool {
    line.starts_with("Doing ")
        || line.contains("'s in ")
        || line.contains(" ops in ")
        || is_progress_record(line)
}

/// Keeps the build facts of the preamble (`built on:`, `options:`,
/// `compiler:`); true when `line` is one.
fn read_fact(line: &str, report: &mut SpeedReport) -> bool {
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
            return true;
        }
    }
    false
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

/// A digest's or cipher's row before any header: `-multi`'s table, read
/// at the children's block sizes. Without them (the table cut from the
/// output that gave them) a row that names an algorithm is refused.
fn headerless_row(
    tokens: &[&str],
    sizes: Option<&[u64]>,
    line: usize,
) -> Result<Option<SymmetricRow>, OpensslSpeedError> {
    if let Some(sizes) = sizes {
        return symmetric_row(tokens, sizes, line);
    }
    let (name, cells) = split_name(tokens);
    if !cells.is_empty() && cells.iter().all(|c| value_like(c)) && known(&name) {
        return Err(err(
            line,
            format!(
                "'{name}' is a row without its table's block sizes: `openssl speed -multi N` prints its table without the 'type 16 bytes …' header, after `Forked child K` and `Got: +H:… from K` lines that give the sizes and N, and these are missing; import the whole output (or that of `openssl speed -mr -multi N`)"
            ),
        ));
    }
    Ok(None)
}

/// `aes-128 cbc 90345.06k 140108.84k …`: the name, then one rate per size.
/// The line is a row when the name is an algorithm sysgauge knows or most
/// cells read as numbers; a row's cells must all be rates.
fn symmetric_row(
    tokens: &[&str],
    sizes: &[u64],
    line: usize,
) -> Result<Option<SymmetricRow>, OpensslSpeedError> {
    let split = tokens
        .len()
        .checked_sub(sizes.len())
        .filter(|&l| l > 0)
        .map(|l| tokens.split_at(l))
        .filter(|(name, _)| !name.iter().any(|t| value_like(t)));
    let Some((name, cells)) = split else {
        // Not one cell per block size: a row cut short (or run together
        // with the next), or not a row at all.
        let (name, cells) = split_name(tokens);
        let row = known(&name) || (cells.len() >= 2 && cells.iter().all(|c| value_like(c)));
        if !cells.is_empty() && row {
            return Err(err(
                line,
                format!(
                    "'{name}' has {} cells where the table's header lists {} block sizes (truncated?)",
                    cells.len(),
                    sizes.len()
                ),
            ));
        }
        return Ok(None);
    };
    let name = name.join(" ");
    let numeric = cells.iter().filter(|c| value_like(c)).count();
    if !known(&name) && numeric * 2 <= cells.len() {
        return Ok(None);
    }
    let bytes_per_second = sizes
        .iter()
        .zip(cells)
        .map(|(size, cell)| {
            // 1000s of bytes with a `k`, bytes without (under 10,000).
            let (number, scale) = match cell.strip_suffix('k') {
                Some(thousands) => (thousands, 1000.0),
                None => (*cell, 1.0),
            };
            rate(number)
                .map(|v| v * scale)
                .map_err(|why| err(line, format!("'{name}' at {size} bytes: '{cell}' {why}")))
        })
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(Some(SymmetricRow {
        algorithm: name,
        block_sizes: sizes.to_vec(),
        bytes_per_second,
    }))
}

/// The name (the tokens before the first that reads as a number) and the
/// cells after it.
fn split_name<'a>(tokens: &'a [&'a str]) -> (String, &'a [&'a str]) {
    let at = tokens
        .iter()
        .position(|t| value_like(t))
        .unwrap_or(tokens.len());
    (tokens[..at].join(" "), &tokens[at..])
}

/// A digest or cipher sysgauge has an id for (`sha256`, `aes-128 cbc`,
/// `hmac(md5)`), so a line that begins with it is a row.
fn known(name: &str) -> bool {
    !name.is_empty() && !bench_id_for(name).starts_with("openssl.")
}

/// A cell that reads as a number, right or wrong (`1876.92k`, `0.00`,
/// `-5.0k`, `1e999k`): what tells a row from other text.
fn value_like(t: &str) -> bool {
    t.strip_suffix('k').unwrap_or(t).parse::<f64>().is_ok()
}

/// A public-key row's algorithm, bits and cells.
type Named<'a> = (String, u32, &'a [&'a str]);

/// The algorithm's openssl name, its bits, and the row's cells after them:
/// `rsa 2048 bits …` → `rsa2048`; `256 bits ecdsa (nistp256) …` →
/// `ecdsap256`; `253 bits EdDSA (Ed25519) …` → `ed25519`; `256 bits SM2
/// (CurveSM2)` → `sm2`; `256 bits ecdh (nistp256)` → `ecdhp256`; `253 bits
/// ecdh (X25519)` → `ecdhx25519`; `2048 bits ffdh` → `ffdh2048`.
fn named<'a>(tokens: &'a [&'a str]) -> Option<Named<'a>> {
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

/// The rate under `column` (`sign/s`) in `algorithm`'s row, whose cells
/// follow the header's names.
fn cell(
    algorithm: &str,
    cells: &[&str],
    columns: &[String],
    column: &str,
    line: usize,
) -> Result<Option<f64>, OpensslSpeedError> {
    let under = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .and_then(|i| cells.get(i))
    };
    let Some(v) = under(column) else {
        return Ok(None);
    };
    let per_second =
        rate(v).map_err(|why| err(line, format!("'{algorithm}' {column}: '{v}' {why}")))?;
    if per_second > 0.0 {
        return Ok(Some(per_second));
    }
    // openssl prints the rate with one decimal, so an operation slower
    // than 20 s (RSA-15360 on a small board) shows 0.0; the seconds per
    // operation beside it (`sign`, `%8.6fs`) still tell it. Where openssl
    // did not run the case they are `infs` (-multi's 1/0) or 0.
    let seconds = column
        .strip_suffix("/s")
        .and_then(under)
        .and_then(|t| t.strip_suffix('s'))
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t > 0.0);
    Ok(Some(seconds.map_or(0.0, |t| 1.0 / t)))
}

/// A public-key row's name, bits and cells, if it is one; an error if it
/// has not one cell under each of the header's columns.
fn named_row<'a>(
    tokens: &'a [&'a str],
    columns: &[String],
    line: usize,
) -> Result<Option<Named<'a>>, OpensslSpeedError> {
    let Some((name, bits, cells)) = named(tokens) else {
        return Ok(None);
    };
    if cells.len() != columns.len() {
        return Err(err(
            line,
            format!(
                "'{name}' has {} cells where the table's header has {} columns (truncated?)",
                cells.len(),
                columns.len()
            ),
        ));
    }
    Ok(Some((name, bits, cells)))
}

fn sign_row(
    tokens: &[&str],
    columns: &[String],
    line: usize,
) -> Result<Option<SignVerifyRow>, OpensslSpeedError> {
    let Some((algorithm, bits, cells)) = named_row(tokens, columns, line)? else {
        return Ok(None);
    };
    Ok(Some(SignVerifyRow {
        sign_per_second: cell(&algorithm, cells, columns, "sign/s", line)?,
        verify_per_second: cell(&algorithm, cells, columns, "verify/s", line)?,
        algorithm,
        bits: Some(bits),
    }))
}

fn exchange_row(
    tokens: &[&str],
    columns: &[String],
    line: usize,
) -> Result<Option<KeyExchangeRow>, OpensslSpeedError> {
    let Some((algorithm, bits, cells)) = named_row(tokens, columns, line)? else {
        return Ok(None);
    };
    let Some(ops_per_second) = cell(&algorithm, cells, columns, "op/s", line)? else {
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
    use super::super::{assert_close, bench_id_for, parse, refusal, signers, to_results};
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
        let huge = parse_table("type 16 bytes\nmd5 1e999k\n").unwrap_err();
        assert_eq!(huge.line, 2);
        assert!(huge.message.contains("'1e999k' is not a rate"), "{huge}");
    }

    /// The real table with `cell` of line `line` replaced by `by`.
    fn with_cell(line: usize, cell: &str, by: &str) -> String {
        let text = fixture!("3.0-human-table-digests-ciphers-pkey.txt");
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert!(lines[line - 1].contains(cell), "{cell} not on line {line}");
        lines[line - 1] = lines[line - 1].replacen(cell, by, 1);
        lines.join("\n")
    }

    #[track_caller]
    fn refused(text: &str) -> OpensslSpeedError {
        refusal(parse_table, text)
    }

    /// A row of a known algorithm with a cell that is not a rate stops the
    /// import (its numbers would be lost), naming the line and the cell.
    #[test]
    fn a_bad_cell_in_a_row_is_an_error_naming_it() {
        for (bad, why) in [
            ("slow", "is not a number"),
            ("-5.0k", "is not a rate (negative)"),
            ("1e999k", "is not a rate (not finite)"),
            ("NaN", "is not a rate (not finite)"),
        ] {
            let e = refused(&with_cell(11, "275387.90k", bad));
            assert_eq!(e.line, 11, "{e}");
            assert_eq!(e.message, format!("'sha256' at 64 bytes: '{bad}' {why}"));
            // A cipher's spaced name, and a signature's rate.
            let e = refused(&with_cell(14, "23650.94k", bad));
            assert_eq!(e.message, format!("'des-ede3' at 64 bytes: '{bad}' {why}"));
            // (Those cells are numbers of operations, without a `k`.)
            let bad = bad.trim_end_matches('k');
            let e = refused(&with_cell(20, "48366.0", bad));
            assert_eq!(
                (e.line, e.message),
                (20, format!("'rsa2048' verify/s: '{bad}' {why}"))
            );
            let e = refused(&with_cell(27, "17095.6", bad));
            assert_eq!(
                (e.line, e.message),
                (27, format!("'ecdhp256' op/s: '{bad}' {why}"))
            );
        }
        // The table's shape without a known name: most cells numbers.
        let unknown = with_cell(13, "98571.24k", "slow").replacen("hmac(md5)", "frobnicate", 1);
        let e = refused(&unknown);
        assert_eq!(e.line, 13);
        assert_eq!(
            e.message,
            "'frobnicate' at 64 bytes: 'slow' is not a number"
        );
        // A row cut short, or with a cell of two words.
        let e = refused(&with_cell(9, "1527679.50k  1557778.35k", ""));
        assert_eq!(e.line, 9);
        assert!(e.message.contains("'sha1' has 4 cells"), "{e}");
        let e = refused(&with_cell(9, "266918.02k", "very slow"));
        assert!(e.message.contains("'sha1' has 7 cells"), "{e}");
        let e = refused(&with_cell(20, "  1431.4  48366.0", ""));
        assert!(e.message.contains("'rsa2048' has 2 cells"), "{e}");
        // A one-size table.
        let e = refused("type 8192 bytes\nsha256 slow\n");
        assert_eq!(e.message, "'sha256' at 8192 bytes: 'slow' is not a number");
        // Prose is no row: left out with a warning, as before.
        let prose = with_cell(12, "", "The next one ran on 2 cores:\n");
        let r = parse_table(&prose).unwrap();
        assert_eq!(r.unsupported.len(), 1, "{:?}", r.unsupported);
        assert_eq!(r.symmetric.len(), 10);
    }

    /// OpenSSL 3.0 prints a row of `0.00` for an algorithm it could not
    /// run (MD4 and Blowfish are in the legacy provider, not loaded here),
    /// and exits 0: those are named, not results, and not errors.
    #[test]
    fn zeros_are_cases_openssl_did_not_run() {
        let r = parse_table(fixture!("3.0-human-table-md4-bf-not-run.txt")).unwrap();
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        let all: Vec<String> = [16, 64, 256, 1024, 8192, 16384]
            .iter()
            .map(|s| format!("{s} bytes"))
            .collect();
        let not_run: Vec<(usize, &str, &[String])> = r
            .not_run
            .iter()
            .map(|z| (z.line, z.algorithm.as_str(), z.cells.as_slice()))
            .collect();
        assert_eq!(
            not_run,
            [(8, "md4", all.as_slice()), (10, "blowfish", all.as_slice())]
        );
        let ids: Vec<String> = to_results(&r, &|_| None)
            .into_iter()
            .map(|x| x.bench_id)
            .collect();
        assert_eq!(ids, vec!["hash.sha256".to_string(); 6]);
        // One zero cell of a row that ran is named alone.
        let r = parse_table(&with_cell(11, "275387.90k", "0.00")).unwrap();
        assert_eq!(r.not_run.len(), 1);
        assert_eq!(r.not_run[0].cells, ["64 bytes"]);
        let r = parse_table(&with_cell(
            30,
            "0.0001s   0.0001s  18500.0   7706.4",
            "0.0001s      infs  18500.0      0.0",
        ))
        .unwrap();
        assert_eq!(r.not_run[0].algorithm, "ed25519");
        assert_eq!(r.not_run[0].cells, ["verify/s"]);
    }

    /// A rate under 0.05/s prints as 0.0, but the seconds per operation
    /// beside it are the measurement; `infs` there (a sum of 0 over
    /// -multi's children) is a case not run.
    #[test]
    fn a_rate_too_slow_to_print_is_read_from_its_time() {
        let header = "                  sign    verify    sign/s verify/s\n";
        let slow = format!("{header}rsa 15360 bits 25.000000s 0.200000s      0.0      5.0\n");
        let r = parse_table(&slow).unwrap();
        assert!(r.not_run.is_empty(), "{:?}", r.not_run);
        assert_close(r.sign_verify[0].sign_per_second, 0.04);
        assert_eq!(r.sign_verify[0].verify_per_second, Some(5.0));
        let none = format!("{header}rsa 15360 bits infs infs      0.0      0.0\n");
        let r = parse_table(&none).unwrap();
        assert_eq!(r.not_run[0].cells, ["sign/s", "verify/s"]);
        assert!(to_results(&r, &|_| None).is_empty());
    }

    /// `openssl speed -multi 2` without `-mr`: the children's records and
    /// a table whose digest rows have no header; the same cases as the
    /// `-mr -multi 2` output of the same command.
    #[test]
    fn the_multi_table_reads_as_its_mr_twin() {
        let table = parse(fixture!("3.0-multi2-human-table-sha256-rsa2048-8k.txt")).unwrap();
        let mr = parse(fixture!("3.0-multi2-sha256-rsa2048.txt")).unwrap();
        assert!(table.unsupported.is_empty(), "{:?}", table.unsupported);
        assert_eq!(table.processes, 2);
        assert_eq!(table.version.as_deref(), Some("3.0.19"));
        assert_close(table.symmetric[0].bytes_per_second[0], 461_487_500.0);
        assert_eq!(table.sign_verify[0].sign_per_second, Some(1229.0));
        let cases = |r: &SpeedReport| -> Vec<(String, String)> {
            to_results(r, &|_| None)
                .into_iter()
                .map(|x| (x.bench_id, format!("{:?}", x.params)))
                .collect()
        };
        assert_eq!(cases(&table), cases(&mr));
        let first = &to_results(&table, &|_| None)[0];
        assert_eq!(first.params.get_u64("block_size"), Some(8192));
        assert_eq!(first.params.get_u64("threads"), Some(2));
    }

    /// The same with standard error captured too: the children's progress
    /// records are skipped; all six block sizes and a signature table.
    #[test]
    fn the_multi_table_with_stderr() {
        let r = parse(fixture!("3.0-multi2-human-table-with-stderr.txt")).unwrap();
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        assert_eq!(r.processes, 2);
        let names: Vec<&str> = r.symmetric.iter().map(|s| s.algorithm.as_str()).collect();
        assert_eq!(names, ["sha256", "aes-128-cbc"]);
        assert_eq!(r.symmetric[1].block_sizes, [16, 64, 256, 1024, 8192, 16384]);
        assert_close(r.symmetric[1].bytes_per_second[5], 648_924_990.0);
        assert_eq!(signers(&r), [("ecdsap256", Some(256))]);
        let res = to_results(&r, &|_| None);
        assert_eq!(res.len(), 13);
        assert!(res.iter().all(|x| x.params.get_u64("threads") == Some(2)));
        assert_eq!(res[0].details.get_u64("processes"), Some(2));
    }

    /// The multi table cut from the lines that give its block sizes and
    /// its number of processes cannot be read honestly: refused.
    #[test]
    fn the_multi_table_alone_is_refused() {
        let text = fixture!("3.0-multi2-human-table-with-stderr.txt");
        let cut: String = text
            .lines()
            .filter(|l| !(l.starts_with('+') || l.starts_with("Forked") || l.starts_with("Got")))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = refused(&cut);
        assert_eq!(e.line, 6);
        assert!(e.message.contains("'sha256' is a row without"), "{e}");
        assert!(e.message.contains("-multi"), "{e}");
        // The children's lines without the parent's table: truncated.
        let e = parse("Forked child 0\nForked child 1\nGot: +H:16 from 0\n").unwrap_err();
        assert!(e.message.contains("summed results"), "{e}");
    }
}
