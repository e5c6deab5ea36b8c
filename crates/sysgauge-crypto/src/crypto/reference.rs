//! Running the system `openssl speed -mr` for the same algorithms and block
//! sizes as a `sysgauge crypto` run, for `--vs-openssl`.
//!
//! One invocation per symmetric algorithm (`-evp` takes one), one for all
//! public-key algorithms. The legacy ciphers (Blowfish, CAST5, RC4, DES,
//! IDEA, RC2) and digests (MD4, RIPEMD-160, Whirlpool) live in
//! OpenSSL 3's legacy provider, so their invocations load it; an OpenSSL
//! without it fails those invocations only, and the others still count.
//! Every child is bounded in time and killed (and reaped) on timeout, on
//! Ctrl-C and on drop. The text is returned for the `openssl speed -mr`
//! parser; nothing here interprets numbers.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use sysgauge_core::bench::find_program;
use sysgauge_core::CancelToken;
use thiserror::Error;

/// One `openssl speed` command line (without the program name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The sysgauge benchmark ids it answers.
    pub bench_ids: Vec<String>,
    pub args: Vec<String>,
    /// How long it should take; the limit is twice this plus a margin.
    pub expected: Duration,
}

/// What to compare: ids (`crypto.aes-128-gcm`, `hash.md5`), block sizes,
/// threads and seconds per measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferencePlan {
    pub bench_ids: Vec<String>,
    pub block_sizes: Vec<u64>,
    pub threads: usize,
    pub seconds: u32,
}

/// The block sizes `openssl speed` runs when not given `-bytes`.
const OPENSSL_SIZES: [u64; 6] = [16, 64, 256, 1024, 8192, 16384];

/// How `openssl speed` measures one sysgauge id.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OpensslArg {
    /// `-evp NAME` or `-hmac NAME` (or a plain name such as `ghash`) per
    /// block size; `legacy` when it needs the legacy provider.
    Symmetric { args: Vec<String>, legacy: bool },
    /// A public-key algorithm's name; they all run in one invocation.
    PublicKey(String),
}

/// The `openssl speed` algorithm argument for a sysgauge id. The IGE rows
/// have none: OpenSSL 3's `speed` no longer measures IGE.
fn openssl_arg(bench_id: &str) -> Option<OpensslArg> {
    let tail = bench_id.split_once('.').map(|(_, t)| t)?;
    let sym = |args: &[&str], legacy: bool| {
        Some(OpensslArg::Symmetric {
            args: args.iter().map(|a| a.to_string()).collect(),
            legacy,
        })
    };
    let evp = |n: &str| sym(&["-evp", n], false);
    let legacy = |n: &str| sym(&["-evp", n], true);
    let plain = |n: &str| Some(OpensslArg::PublicKey(n.to_string()));
    match bench_id {
        "hash.md5" | "hash.sha1" | "hash.sha256" | "hash.sha512" => evp(tail),
        "hash.blake2b-512" => evp("blake2b512"),
        "hash.md4" | "hash.whirlpool" => legacy(tail),
        "hash.rmd160" => legacy("ripemd160"),
        "crypto.hmac-sha256" => sym(&["-hmac", "sha256"], false),
        "crypto.hmac-md5" => sym(&["-hmac", "md5"], false),
        "crypto.ghash" => sym(&["ghash"], false),
        _ if tail.ends_with("-ige") => None,
        "crypto.bf-cbc" | "crypto.cast5-cbc" | "crypto.rc4" | "crypto.des-cbc"
        | "crypto.idea-cbc" | "crypto.rc2-cbc" => legacy(tail),
        _ if bench_id.starts_with("crypto.")
            && (tail.starts_with("aes-")
                || tail.starts_with("chacha20")
                || tail.starts_with("des-")
                || tail.starts_with("camellia-")) =>
        {
            evp(tail)
        }
        _ => {
            let name = if let Some(b) = tail.strip_prefix("rsa-") {
                format!("rsa{b}")
            } else if let Some(b) = tail.strip_prefix("dsa-") {
                format!("dsa{b}")
            } else if let Some(c) = tail.strip_prefix("ecdsa-") {
                format!("ecdsa{c}")
            } else if let Some(c) = tail.strip_prefix("ecdh-") {
                format!("ecdh{c}")
            } else if tail == "x25519" {
                "ecdhx25519".into()
            } else if tail == "ed25519" {
                "ed25519".into()
            } else {
                return None;
            };
            plain(&name)
        }
    }
}

/// The command lines for a plan. Ids openssl has no counterpart for
/// (BLAKE3) are left out.
pub fn invocations(plan: &ReferencePlan) -> Vec<Invocation> {
    let secs = plan.seconds.max(1);
    // `-elapsed`: wall-clock time, as sysgauge measures (openssl's default
    // is the process's CPU time, which a busy machine does not slow down).
    let mut common = vec![
        "speed".to_string(),
        "-mr".into(),
        "-elapsed".into(),
        "-seconds".into(),
        secs.to_string(),
    ];
    if plan.threads > 1 {
        common.push("-multi".into());
        common.push(plan.threads.to_string());
    }
    // One size: `-bytes N`. Otherwise openssl's own list (the comparison
    // keeps the sizes both measured).
    let (size_args, n_sizes) = match plan.block_sizes.as_slice() {
        [one] => (vec!["-bytes".to_string(), one.to_string()], 1),
        _ => (Vec::new(), OPENSSL_SIZES.len()),
    };
    let mut out = Vec::new();
    let mut pk_ids = Vec::new();
    let mut pk_args = Vec::new();
    for id in &plan.bench_ids {
        let (arg, legacy) = match openssl_arg(id) {
            None => continue,
            Some(OpensslArg::PublicKey(name)) => {
                pk_ids.push(id.clone());
                pk_args.push(name);
                continue;
            }
            Some(OpensslArg::Symmetric { args, legacy }) => (args, legacy),
        };
        let mut args = common.clone();
        if legacy {
            args.extend(["-provider", "legacy", "-provider", "default"].map(String::from));
        }
        args.extend(size_args.iter().cloned());
        args.extend(arg);
        out.push(Invocation {
            bench_ids: vec![id.clone()],
            args,
            expected: Duration::from_secs(u64::from(secs) * n_sizes as u64),
        });
    }
    if !pk_ids.is_empty() {
        // Signature algorithms take two measurements (sign, verify).
        let n = pk_args.len() as u64 * 2;
        let mut args = common;
        args.extend(pk_args);
        out.push(Invocation {
            bench_ids: pk_ids,
            args,
            expected: Duration::from_secs(u64::from(secs) * n),
        });
    }
    out
}

#[derive(Debug, Error)]
pub enum ReferenceError {
    #[error("'openssl' is not installed")]
    Missing,
    #[error("interrupted")]
    Cancelled,
    #[error("openssl {args}: {what}")]
    Failed { args: String, what: String },
}

/// The output of one invocation.
#[derive(Debug)]
pub struct ReferenceOutput {
    pub invocation: Invocation,
    /// stdout (the `-mr` records), or why it produced none.
    pub result: Result<String, ReferenceError>,
}

/// A child that is killed and reaped however we leave.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// The `openssl` program, if installed.
pub fn openssl_program() -> Option<PathBuf> {
    find_program("openssl")
}

/// Run every invocation in turn. `progress` is told each one before it
/// starts. Returns `Missing` when openssl is not installed and `Cancelled`
/// on Ctrl-C; a failing invocation is reported in its output and the others
/// still run.
pub fn run_reference(
    plan: &ReferencePlan,
    cancel: &CancelToken,
    mut progress: impl FnMut(&Invocation),
) -> Result<Vec<ReferenceOutput>, ReferenceError> {
    let program = openssl_program().ok_or(ReferenceError::Missing)?;
    let mut outputs = Vec::new();
    for inv in invocations(plan) {
        if cancel.is_cancelled() {
            return Err(ReferenceError::Cancelled);
        }
        progress(&inv);
        let result = run_one(&program, &inv, cancel);
        if matches!(result, Err(ReferenceError::Cancelled)) {
            return Err(ReferenceError::Cancelled);
        }
        outputs.push(ReferenceOutput {
            invocation: inv,
            result,
        });
    }
    Ok(outputs)
}

fn run_one(
    program: &PathBuf,
    inv: &Invocation,
    cancel: &CancelToken,
) -> Result<String, ReferenceError> {
    let args_text = inv.args.join(" ");
    let fail = |what: String| ReferenceError::Failed {
        args: args_text.clone(),
        what,
    };
    let child = Command::new(program)
        .args(&inv.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start: {e}")))?;
    let mut guard = ChildGuard(child);
    // Read both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out_pipe = guard.0.stdout.take();
    let mut err_pipe = guard.0.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let limit = inv.expected * 2 + Duration::from_secs(30);
    let started = Instant::now();
    let status = loop {
        if cancel.is_cancelled() {
            drop(guard);
            let _ = out_reader.join();
            let _ = err_reader.join();
            return Err(ReferenceError::Cancelled);
        }
        match guard.0.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(fail(format!("cannot wait for it: {e}"))),
        }
        if started.elapsed() > limit {
            drop(guard);
            let _ = out_reader.join();
            let _ = err_reader.join();
            return Err(fail(format!("did not finish within {} s", limit.as_secs())));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let first = stderr
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('+'))
            .unwrap_or("no message");
        return Err(fail(format!("exited with {status}: {first}")));
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(ids: &[&str], sizes: &[u64], threads: usize) -> ReferencePlan {
        ReferencePlan {
            bench_ids: ids.iter().map(|s| s.to_string()).collect(),
            block_sizes: sizes.to_vec(),
            threads,
            seconds: 1,
        }
    }

    #[test]
    fn the_old_tables_rows_load_the_legacy_provider() {
        let p = plan(
            &[
                "hash.md4",
                "hash.rmd160",
                "crypto.des-cbc",
                "crypto.camellia-256-cbc",
                "crypto.rsa-1024",
                "crypto.dsa-1024",
            ],
            &[8192],
            1,
        );
        let lines: Vec<String> = invocations(&p).iter().map(|i| i.args.join(" ")).collect();
        let legacy = "speed -mr -elapsed -seconds 1 -provider legacy -provider default -bytes 8192";
        assert_eq!(
            lines,
            vec![
                format!("{legacy} -evp md4"),
                format!("{legacy} -evp ripemd160"),
                format!("{legacy} -evp des-cbc"),
                "speed -mr -elapsed -seconds 1 -bytes 8192 -evp camellia-256-cbc".to_string(),
                "speed -mr -elapsed -seconds 1 rsa1024 dsa1024".to_string(),
            ]
        );
    }

    #[test]
    fn the_old_tables_symmetric_rows() {
        let p = plan(
            &["crypto.hmac-md5", "crypto.aes-128-ige", "crypto.ghash"],
            &[16],
            1,
        );
        let lines: Vec<String> = invocations(&p).iter().map(|i| i.args.join(" ")).collect();
        assert_eq!(
            lines,
            vec![
                "speed -mr -elapsed -seconds 1 -bytes 16 -hmac md5",
                "speed -mr -elapsed -seconds 1 -bytes 16 ghash",
            ]
        );
    }

    #[test]
    fn command_lines() {
        let p = plan(
            &[
                "hash.md5",
                "hash.blake3",
                "crypto.aes-128-gcm",
                "crypto.rc4",
                "crypto.hmac-sha256",
                "crypto.rsa-2048",
                "crypto.ecdsa-p521",
                "crypto.ed25519",
                "crypto.ecdh-p256",
                "crypto.x25519",
            ],
            &[8192],
            1,
        );
        let inv = invocations(&p);
        let lines: Vec<String> = inv.iter().map(|i| i.args.join(" ")).collect();
        assert_eq!(
            lines,
            vec![
                "speed -mr -elapsed -seconds 1 -bytes 8192 -evp md5",
                "speed -mr -elapsed -seconds 1 -bytes 8192 -evp aes-128-gcm",
                "speed -mr -elapsed -seconds 1 -provider legacy -provider default -bytes 8192 -evp rc4",
                "speed -mr -elapsed -seconds 1 -bytes 8192 -hmac sha256",
                "speed -mr -elapsed -seconds 1 rsa2048 ecdsap521 ed25519 ecdhp256 ecdhx25519",
            ]
        );
        assert_eq!(inv[4].bench_ids.len(), 5);
        assert_eq!(inv[4].expected, Duration::from_secs(10));
        let multi = invocations(&plan(&["crypto.des-ede3-cbc"], &[16, 8192], 4));
        assert_eq!(
            multi[0].args.join(" "),
            "speed -mr -elapsed -seconds 1 -multi 4 -evp des-ede3-cbc"
        );
        assert_eq!(multi[0].expected, Duration::from_secs(6));
        let small_curves = invocations(&plan(
            &[
                "crypto.ecdsa-p192",
                "crypto.ecdsa-p224",
                "crypto.ecdh-p192",
                "crypto.ecdh-p224",
            ],
            &[8192],
            1,
        ));
        assert_eq!(
            small_curves[0].args.join(" "),
            "speed -mr -elapsed -seconds 1 ecdsap192 ecdsap224 ecdhp192 ecdhp224"
        );
    }

    /// The ids the importer gives OpenSSL's output of the invocations above
    /// must be the crypto family's own, or `--vs-openssl` pairs nothing.
    #[test]
    fn captured_outputs_map_to_crypto_ids() {
        let texts = [
            include_str!("../../tests/fixtures/openssl/3.0-elapsed-per-evp-cipher-8k.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-elapsed-legacy-provider-8k.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-rsa2048-ecdsap256-x25519-ed25519.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-hmac-sha256-8k.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-evp-chacha20-poly1305-8k.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-elapsed-hmac-md5-ghash-8k.txt"),
            include_str!("../../tests/fixtures/openssl/3.0-elapsed-ecdsa-ecdh-p192-p224.txt"),
        ];
        let mut ids = Vec::new();
        for t in texts {
            let report = crate::openssl_speed::parse_mr(t).unwrap();
            for r in crate::openssl_speed::to_results(&report, &|_| None) {
                ids.push(r.bench_id);
            }
        }
        let ours: Vec<String> = crate::crypto::benchmarks(&std::sync::Arc::new(
            crate::crypto::CryptoOptions::default(),
        ))
        .iter()
        .map(|b| b.id().to_string())
        .collect();
        for want in [
            "crypto.aes-192-cbc",
            "crypto.aes-256-cbc",
            "crypto.aes-128-ctr",
            "crypto.aes-256-gcm",
            "crypto.des-ede3-cbc",
            "crypto.camellia-128-cbc",
            "crypto.bf-cbc",
            "crypto.cast5-cbc",
            "crypto.rc4",
            "crypto.rsa-2048",
            "crypto.ecdsa-p256",
            "crypto.x25519",
            "crypto.ed25519",
            "crypto.hmac-sha256",
            "crypto.chacha20-poly1305",
            "crypto.hmac-md5",
            "crypto.ghash",
            "crypto.ecdsa-p192",
            "crypto.ecdsa-p224",
            "crypto.ecdh-p192",
            "crypto.ecdh-p224",
        ] {
            assert!(ids.iter().any(|i| i == want), "{want} not in {ids:?}");
            assert!(
                ours.iter().any(|o| o == want),
                "{want} is not a crypto benchmark"
            );
        }
    }

    #[test]
    fn runs_the_real_openssl() {
        if !sysgauge_testkit::require(
            "openssl",
            openssl_program().is_some(),
            "apt-get install openssl",
        ) {
            return;
        }
        let p = plan(&["crypto.aes-128-cbc", "crypto.x25519"], &[16], 1);
        let mut seen = 0;
        let out = run_reference(&p, &CancelToken::new(), |_| seen += 1).unwrap();
        assert_eq!(seen, 2);
        let text = out[0].result.as_ref().unwrap();
        assert!(text.contains("+F:"), "{text}");
        let pk = out[1].result.as_ref().unwrap();
        assert!(pk.contains("+F5:"), "{pk}");
    }

    #[test]
    fn a_failing_invocation_is_reported() {
        let Some(program) = openssl_program() else {
            return;
        };
        let inv = Invocation {
            bench_ids: vec![],
            args: vec![
                "speed".into(),
                "-mr".into(),
                "-evp".into(),
                "no-such-cipher".into(),
            ],
            expected: Duration::from_secs(1),
        };
        let r = run_one(&program, &inv, &CancelToken::new());
        assert!(matches!(r, Err(ReferenceError::Failed { .. })), "{r:?}");
        let cancelled = CancelToken::new();
        cancelled.cancel();
        let r = run_one(&program, &inv, &cancelled);
        assert!(matches!(
            r,
            Err(ReferenceError::Cancelled) | Err(ReferenceError::Failed { .. })
        ));
    }
}
