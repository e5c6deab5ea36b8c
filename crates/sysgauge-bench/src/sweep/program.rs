//! The programs a sweep times: the coreutils digest programs, `dd` as the
//! no-crypto baseline, and any command the user gives. How each is invoked
//! on the input file, and how what it printed is checked once (a digest
//! program must print the digest sysgauge computes itself; `dd` must report
//! every byte copied), so a broken or substituted program cannot produce a
//! plausible-looking number.

use std::ffi::OsString;
use std::path::Path;
use sysgauge_core::{BenchError, CancelToken};
use sysgauge_family::util::hex;

use super::corpus::Corpus;
use super::exec::Invocation;

/// Largest `--dd-bs`: dd allocates one buffer of this size, and a larger
/// block no longer changes how a file is read.
pub const DD_BLOCK_MAX: u64 = 1 << 30;

/// The case parameter holding dd's block size in bytes when one was given
/// (`--dd-bs`); absent, dd runs with its own default (no `bs=`: 512 bytes
/// for GNU dd), as the write-up ran it.
pub const DD_BS_PARAM: &str = "bs";

/// `sweep.dd`'s workload version. 2: no `bs=` by default (dd's own 512-byte
/// blocks); version 1 always passed `bs=32K`, which is now `--dd-bs 32K`
/// (param `bs=32768`).
pub const DD_WORKLOAD_VERSION: u32 = 2;

/// The placeholder a custom command line may use for the input file.
pub const INPUT_PLACEHOLDER: &str = "{input}";

/// Check a `--dd-bs` value (bytes): 1 byte to [`DD_BLOCK_MAX`].
pub fn check_dd_block(bytes: u64) -> Result<u64, String> {
    if bytes == 0 {
        return Err("--dd-bs must be at least 1 byte".to_string());
    }
    if bytes > DD_BLOCK_MAX {
        return Err(format!(
            "--dd-bs {bytes} is larger than {DD_BLOCK_MAX} bytes (1 GiB): dd would allocate a buffer that large; use a smaller block size"
        ));
    }
    Ok(bytes)
}

/// A program the sweep knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Known {
    /// `dd if=FILE of=/dev/null [bs=N]`: reading and process start-up only.
    Dd,
    B2sum,
    Sha1sum,
    Sha256sum,
    Sha512sum,
    Md5sum,
}

impl Known {
    /// Display order: the baseline first (hash cases use its numbers).
    pub const ALL: [Known; 6] = [
        Known::Dd,
        Known::B2sum,
        Known::Sha1sum,
        Known::Sha256sum,
        Known::Sha512sum,
        Known::Md5sum,
    ];

    /// The program's name on PATH.
    pub fn name(self) -> &'static str {
        match self {
            Known::Dd => "dd",
            Known::B2sum => "b2sum",
            Known::Sha1sum => "sha1sum",
            Known::Sha256sum => "sha256sum",
            Known::Sha512sum => "sha512sum",
            Known::Md5sum => "md5sum",
        }
    }

    /// Benchmark id.
    pub fn id(self) -> &'static str {
        match self {
            Known::Dd => "sweep.dd",
            Known::B2sum => "sweep.b2sum",
            Known::Sha1sum => "sweep.sha1sum",
            Known::Sha256sum => "sweep.sha256sum",
            Known::Sha512sum => "sweep.sha512sum",
            Known::Md5sum => "sweep.md5sum",
        }
    }

    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        "coreutils"
    }

    pub fn from_name(name: &str) -> Option<Known> {
        Known::ALL.into_iter().find(|k| k.name() == name)
    }

    /// True for the digest programs (everything but `dd`).
    pub fn is_digest(self) -> bool {
        self != Known::Dd
    }

    /// Arguments for one run over `input`; `dd_bs` is dd's block size in
    /// bytes (`None`: no `bs=`, dd's own default). Other programs ignore it.
    pub fn args(self, input: &Path, dd_bs: Option<u64>) -> Vec<OsString> {
        match self {
            Known::Dd => {
                let mut iff = OsString::from("if=");
                iff.push(input);
                let mut v = vec![iff, OsString::from("of=/dev/null")];
                if let Some(bs) = dd_bs {
                    v.push(OsString::from(format!("bs={bs}")));
                }
                v
            }
            _ => vec![input.as_os_str().to_os_string()],
        }
    }

    /// The digest this program prints for `copies` copies of `corpus`
    /// (lowercase hex), computed in-process; `None` for `dd`.
    pub fn expected_digest(
        self,
        corpus: &Corpus,
        copies: u64,
        cancel: &CancelToken,
    ) -> Result<Option<String>, BenchError> {
        use sha2::Digest;
        // Feeds `copies` copies of the corpus to `update`.
        let feed = |update: &mut dyn FnMut(&[u8])| -> Result<(), BenchError> {
            for _ in 0..copies {
                corpus.for_each_chunk(cancel, &mut |b| {
                    update(b);
                    Ok(())
                })?;
            }
            Ok(())
        };
        fn digest<D: sha2::Digest>(
            mut d: D,
            feed: impl Fn(&mut dyn FnMut(&[u8])) -> Result<(), BenchError>,
        ) -> Result<String, BenchError> {
            feed(&mut |b| d.update(b))?;
            Ok(hex(&d.finalize()))
        }
        Ok(Some(match self {
            Known::Dd => return Ok(None),
            Known::Md5sum => {
                let mut m = sysgauge_kernels::md5::Md5::new();
                feed(&mut |b| m.update(b))?;
                hex(&m.finalize())
            }
            Known::Sha1sum => digest(sha1::Sha1::new(), feed)?,
            Known::Sha256sum => digest(sha2::Sha256::new(), feed)?,
            Known::Sha512sum => digest(sha2::Sha512::new(), feed)?,
            Known::B2sum => {
                // b2sum's default is BLAKE2b with a 64-byte digest.
                let mut state = blake2b_simd::Params::new().hash_length(64).to_state();
                feed(&mut |b| {
                    state.update(b);
                })?;
                hex(state.finalize().as_bytes())
            }
        }))
    }
}

/// A program in a sweep: one sysgauge knows, or a user's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    Known(Known),
    /// A command given as `'CMD ARGS'`: split like a shell would split it
    /// (quotes, backslashes) but run without one. A template: every
    /// `{input}` in an argument becomes the input file's path; without
    /// one, the path is appended as the last argument.
    Custom {
        line: String,
        argv: Vec<String>,
    },
}

impl Program {
    /// A short name for messages and tables.
    pub fn name(&self) -> &str {
        match self {
            Program::Known(k) => k.name(),
            Program::Custom { argv, .. } => argv.first().map(String::as_str).unwrap_or("custom"),
        }
    }

    /// The invocation over `input`, with the program found on PATH;
    /// `dd_bs` as for [`Known::args`].
    pub fn invocation(&self, input: &Path, dd_bs: Option<u64>) -> Result<Invocation, BenchError> {
        let (name, mut args) = match self {
            Program::Known(k) => (k.name(), k.args(input, dd_bs)),
            Program::Custom { argv, .. } => {
                let Some((first, rest)) = argv.split_first() else {
                    return Err(BenchError::failed("empty custom command"));
                };
                (first.as_str(), custom_args(rest, input))
            }
        };
        let program = sysgauge_core::bench::find_program(name).ok_or_else(|| match self {
            Program::Known(k) => BenchError::skip(
                format!("'{name}' is not installed"),
                format!(
                    "install it (Debian/Ubuntu: apt-get install {})",
                    k.package()
                ),
            ),
            Program::Custom { .. } => BenchError::skip(
                format!("'{name}' is not an executable on PATH"),
                "check the command's spelling and PATH, or give the program's full path",
            ),
        })?;
        args.shrink_to_fit();
        Ok(Invocation { program, args })
    }
}

/// Parse the values of `--program`. A value with whitespace or quotes is
/// one custom command line; any other value is a comma-separated list of
/// names, each a known program or a one-word custom command.
pub fn parse_programs(values: &[String]) -> Result<Vec<Program>, String> {
    let mut out: Vec<Program> = Vec::new();
    let push = |p: Program, out: &mut Vec<Program>| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for v in values {
        let v = v.trim();
        if v.is_empty() {
            return Err("--program has an empty value".to_string());
        }
        if v.chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '"')
        {
            push(custom(v)?, &mut out);
            continue;
        }
        for name in v.split(',') {
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("--program '{v}' has an empty entry"));
            }
            match Known::from_name(name) {
                Some(k) => push(Program::Known(k), &mut out),
                None => push(custom(name)?, &mut out),
            }
        }
    }
    Ok(out)
}

/// A custom command's arguments over `input`: `{input}` replaced
/// wherever it occurs (`if={input}` too), else the path appended.
pub fn custom_args(rest: &[String], input: &Path) -> Vec<OsString> {
    if !rest.iter().any(|a| a.contains(INPUT_PLACEHOLDER)) {
        let mut a: Vec<OsString> = rest.iter().map(OsString::from).collect();
        a.push(input.as_os_str().to_os_string());
        return a;
    }
    rest.iter()
        .map(|a| {
            let mut out = OsString::new();
            for (i, piece) in a.split(INPUT_PLACEHOLDER).enumerate() {
                if i > 0 {
                    out.push(input);
                }
                out.push(piece);
            }
            out
        })
        .collect()
}

/// A custom command line, split shell-style.
pub fn custom(line: &str) -> Result<Program, String> {
    let argv = shlex::split(line)
        .ok_or_else(|| format!("--program '{line}': unbalanced quotes or a trailing backslash"))?;
    if argv.is_empty() {
        return Err(format!("--program '{line}' is empty"));
    }
    if argv[0].contains('=') {
        return Err(format!(
            "--program '{line}': environment assignments are not supported (no shell runs the command)"
        ));
    }
    if argv[0].contains(INPUT_PLACEHOLDER) {
        return Err(format!(
            "--program '{line}': {INPUT_PLACEHOLDER} stands for the input file and may only appear in the arguments"
        ));
    }
    // Canonical spelling, so the same command always makes the same
    // `command` parameter (and compares with itself across runs).
    let line = argv
        .iter()
        .map(|a| {
            shlex::try_quote(a)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| a.clone())
        })
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Program::Custom { line, argv })
}

/// Check what a digest program printed: the first word of its output is
/// the digest (GNU tools prefix a backslash when the name needed escaping).
pub fn check_digest_output(name: &str, stdout: &str, expected: &str) -> Result<(), BenchError> {
    let printed = stdout
        .split_whitespace()
        .next()
        .map(|w| w.trim_start_matches('\\'))
        .unwrap_or("");
    if printed.eq_ignore_ascii_case(expected) {
        Ok(())
    } else {
        Err(BenchError::failed(format!(
            "{name} printed the digest '{printed}', but the input's digest is {expected}: the program does not compute what it claims"
        )))
    }
}

/// Check `dd`'s closing statistics: the line `N bytes ... copied` must
/// name the whole file. A `dd` that prints no such line (not GNU) passes
/// on its exit status alone.
pub fn check_dd_output(stderr: &str, expected_bytes: u64) -> Result<(), BenchError> {
    for line in stderr.lines() {
        let mut words = line.split_whitespace();
        if let (Some(n), Some("bytes")) = (words.next(), words.next()) {
            if let Ok(n) = n.parse::<u64>() {
                if n == expected_bytes {
                    return Ok(());
                }
                return Err(BenchError::failed(format!(
                    "dd copied {n} bytes of the {expected_bytes}-byte input file"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::corpus::DataSpec;

    #[test]
    fn names_and_ids() {
        for k in Known::ALL {
            assert_eq!(Known::from_name(k.name()), Some(k));
            assert_eq!(k.id(), format!("sweep.{}", k.name()));
            assert_eq!(k.package(), "coreutils");
        }
        assert!(!Known::Dd.is_digest());
        assert!(Known::Md5sum.is_digest());
        // dd's own block size unless one is given (then in bytes).
        let dd = Known::Dd.args(Path::new("/s/in"), None);
        assert_eq!(dd, vec!["if=/s/in", "of=/dev/null"]);
        let dd = Known::Dd.args(Path::new("/s/in"), Some(32768));
        assert_eq!(dd, vec!["if=/s/in", "of=/dev/null", "bs=32768"]);
        assert_eq!(
            Known::Sha1sum.args(Path::new("/s/in"), Some(512)),
            vec!["/s/in"]
        );
    }

    #[test]
    fn dd_block_sizes() {
        assert_eq!(check_dd_block(512), Ok(512));
        assert_eq!(check_dd_block(DD_BLOCK_MAX), Ok(DD_BLOCK_MAX));
        let zero = check_dd_block(0).unwrap_err();
        assert!(zero.contains("at least 1"), "{zero}");
        let big = check_dd_block(DD_BLOCK_MAX + 1).unwrap_err();
        assert!(big.contains("--dd-bs") && big.contains("smaller"), "{big}");
    }

    #[test]
    fn program_lists() {
        let p = parse_programs(&["sha256sum,dd".into(), "b2sum".into(), "dd".into()]).unwrap();
        assert_eq!(
            p,
            vec![
                Program::Known(Known::Sha256sum),
                Program::Known(Known::Dd),
                Program::Known(Known::B2sum)
            ]
        );
        let c = parse_programs(&["openssl dgst -sha256".into(), "cksum".into()]).unwrap();
        assert_eq!(c.len(), 2);
        match &c[0] {
            Program::Custom { line, argv } => {
                assert_eq!(line, "openssl dgst -sha256");
                assert_eq!(argv, &["openssl", "dgst", "-sha256"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c[1].name(), "cksum");
        let q = parse_programs(&["sh -c 'exec cat \"$0\"'".into()]).unwrap();
        match &q[0] {
            Program::Custom { argv, .. } => assert_eq!(argv, &["sh", "-c", "exec cat \"$0\""]),
            other => panic!("{other:?}"),
        }
        for bad in [
            "",
            "sha256sum,,dd",
            "sh -c 'oops",
            "X=1 sha256sum",
            "{input} --x",
        ] {
            assert!(parse_programs(&[bad.into()]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn invocations() {
        let inv = Program::Known(Known::Sha256sum)
            .invocation(Path::new("/tmp/in"), Some(512))
            .unwrap();
        assert!(inv.program.ends_with("sha256sum"));
        assert_eq!(inv.args, vec!["/tmp/in"]);
        let custom = parse_programs(&["cat -u".into()]).unwrap();
        let inv = custom[0].invocation(Path::new("/tmp/in"), None).unwrap();
        assert_eq!(inv.args, vec!["-u", "/tmp/in"]);
        // A template: the path where {input} stands, and nowhere else.
        let t = parse_programs(&["dd 'if={input}' of=/dev/null bs=4K".into()]).unwrap();
        let inv = t[0].invocation(Path::new("/tmp/in"), Some(1)).unwrap();
        assert!(inv.program.ends_with("dd"));
        assert_eq!(inv.args, vec!["if=/tmp/in", "of=/dev/null", "bs=4K"]);
        let t = parse_programs(&["cat {input} {input}.x".into()]).unwrap();
        let inv = t[0].invocation(Path::new("/tmp/a b"), None).unwrap();
        assert_eq!(inv.args, vec!["/tmp/a b", "/tmp/a b.x"]);
        // The canonical spelling keeps the placeholder (the case's identity).
        match &t[0] {
            Program::Custom { line, .. } => assert_eq!(line, "cat '{input}' '{input}.x'"),
            other => panic!("{other:?}"),
        }
        let missing = parse_programs(&["sysgauge-no-such-tool --x".into()]).unwrap();
        match missing[0].invocation(Path::new("/tmp/in"), None) {
            Err(BenchError::Skip { reason, .. }) => {
                assert!(reason.contains("sysgauge-no-such-tool"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn expected_digests_match_known_answers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("abc");
        std::fs::write(&p, b"abc").unwrap();
        let corpus = Corpus::load(&DataSpec::File(p), &[]).unwrap();
        let c = CancelToken::new();
        let d = |k: Known, n: u64| k.expected_digest(&corpus, n, &c).ok().flatten();
        // "abc" known answers (FIPS 180, RFC 1321, RFC 7693).
        assert_eq!(
            d(Known::Md5sum, 1).as_deref(),
            Some("900150983cd24fb0d6963f7d28e17f72")
        );
        assert_eq!(
            d(Known::Sha1sum, 1).as_deref(),
            Some("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(
            d(Known::Sha256sum, 1).as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert!(d(Known::Sha512sum, 1)
            .unwrap_or_default()
            .starts_with("ddaf35a193617aba"));
        assert!(d(Known::B2sum, 1)
            .unwrap_or_default()
            .starts_with("ba80a53f981c4d0d"));
        // Two copies hash "abcabc".
        assert_eq!(
            d(Known::Md5sum, 2).as_deref(),
            Some("440ac85892ca43ad26d44c7ad9d47d3e")
        );
        assert_eq!(d(Known::Dd, 1), None);
    }

    #[test]
    fn output_checks() {
        let exp = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert!(check_digest_output("sha256sum", &format!("{exp}  /tmp/in\n"), exp).is_ok());
        assert!(check_digest_output("sha256sum", &format!("\\{exp}  /tmp/a\\nb\n"), exp).is_ok());
        let e = check_digest_output("sha256sum", "deadbeef  x\n", exp)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("deadbeef"), "{e}");
        assert!(check_digest_output("sha256sum", "", exp).is_err());
        let gnu = "2+0 records in\n2+0 records out\n65536 bytes (66 kB, 64 KiB) copied, 0.0001 s, 600 MB/s\n";
        assert!(check_dd_output(gnu, 65536).is_ok());
        assert!(check_dd_output(gnu, 65537).is_err());
        assert!(check_dd_output("", 1).is_ok());
    }
}
