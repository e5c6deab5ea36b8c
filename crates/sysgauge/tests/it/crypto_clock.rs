//! `sysgauge crypto` and `sysgauge clock` driven end to end, and the clock
//! checks at the start and end of `sysgauge run`.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{self, read_record, stderr_of, stdout_of, Outcome, Sandbox};
use sysgauge_core::Status;
use sysgauge_crypto::crypto::pubkey::SignAlg;
use sysgauge_crypto::hash::Algorithm;

/// `sysgauge crypto` with the tiny profile, one repetition, at these block
/// sizes.
fn crypto_once(sb: &Sandbox, block_sizes: &str) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.args(["crypto", "--profile", "tiny", "--repetitions", "1"])
        .args(["--block-sizes", block_sizes]);
    c
}

/// [`crypto_once`] with `options`, stored in the sandbox's database and
/// written with `--json FILE`; it must succeed. Its output and the record.
fn crypto_stored(
    sb: &Sandbox,
    block_sizes: &str,
    options: &[&str],
) -> (std::process::Output, sysgauge_core::RunRecord) {
    let json = sb.path().join("crypto.json");
    let out = crypto_once(sb, block_sizes)
        .args(options)
        .arg("--db")
        .arg(sb.db())
        .arg("--json")
        .arg(&json)
        .succeeds();
    (out, read_record(&json))
}

#[test]
fn crypto_table_and_records() {
    let sb = Sandbox::new();
    let (out, run) = crypto_stored(&sb, "16,8KiB", &[]);
    let table = stdout_of(&out);
    assert!(
        table.contains("The 'numbers' are in 1000s of bytes per second processed."),
        "{table}"
    );
    assert!(
        table.contains("8192 bytes") && table.contains("aes-128-gcm"),
        "{table}"
    );
    assert!(
        table.contains("sign/s") && table.contains("op/s"),
        "{table}"
    );
    assert_eq!(run.command, "crypto");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    for id in [
        "hash.md4",
        "hash.md5",
        "hash.rmd160",
        "hash.sha512",
        "hash.whirlpool",
        "crypto.aes-128-cbc",
        "crypto.des-cbc",
        "crypto.idea-cbc",
        "crypto.rc2-cbc",
        "crypto.camellia-192-cbc",
        "crypto.camellia-256-cbc",
        "crypto.rc4",
        "crypto.hmac-sha256",
        "crypto.rsa-2048",
        "crypto.ecdsa-p521",
        "crypto.x25519",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let gcm: Vec<_> = run
        .results
        .iter()
        .filter(|r| r.bench_id == "crypto.aes-128-gcm")
        .collect();
    assert_eq!(gcm.len(), 2);
    assert!(gcm
        .iter()
        .all(|r| r.status == Status::Ok && r.metrics[0].unit.symbol() == "MB/s"));
    let rsa = run.results.iter().find(|r| r.bench_id == "crypto.rsa-2048");
    let names: Vec<&str> = rsa
        .map(|r| r.metrics.iter().map(|m| m.name.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, vec!["sign", "verify"]);
    // aws-lc refuses RSA-1024 signing keys; the `rsa` crate measures it.
    let rsa1024 = run
        .results
        .iter()
        .find(|r| r.bench_id == "crypto.rsa-1024")
        .unwrap();
    assert_eq!(rsa1024.status, Status::Ok, "{rsa1024:?}");
    let names: Vec<&str> = rsa1024.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, vec!["sign", "verify"]);
    assert!(
        table.contains("rsa 1024 bits") && table.contains("whirlpool"),
        "{table}"
    );
}

/// The rows of the old `openssl speed` tables added from RustCrypto crates:
/// each is printed, measured, in openssl's order.
#[test]
fn crypto_old_table_rows_are_measured() {
    let sb = Sandbox::new();
    let rows = [
        ("crypto.hmac-md5", "hmac-md5"),
        ("crypto.aes-128-ige", "aes-128-ige"),
        ("crypto.aes-192-ige", "aes-192-ige"),
        ("crypto.aes-256-ige", "aes-256-ige"),
        ("crypto.ghash", "ghash"),
        ("crypto.dsa-1024", "dsa"),
        ("crypto.dsa-2048", "dsa"),
        ("crypto.ecdsa-p192", "ecdsa"),
        ("crypto.ecdsa-p224", "ecdsa"),
        ("crypto.ecdh-p192", "ecdh"),
        ("crypto.ecdh-p224", "ecdh"),
        ("crypto.ecdh-p384", "ecdh"),
        ("crypto.ecdh-p521", "ecdh"),
    ];
    let only: Vec<&str> = rows.iter().map(|(id, _)| *id).collect();
    let out = crypto_once(&sb, "16")
        .args(["--only", &only.join(","), "--no-store"])
        .succeeds();
    let table = stdout_of(&out);
    let mut last = 0;
    for (id, name) in rows {
        // `dsa 1024 bits`, `ecdsa 224 bits (nistp224)`: the bits follow.
        let bits = id
            .rsplit('-')
            .next()
            .unwrap_or_default()
            .trim_start_matches('p');
        let public_key = matches!(name, "dsa" | "ecdsa" | "ecdh");
        let (at, line) = table
            .lines()
            .enumerate()
            .find(|(_, l)| {
                let mut w = l.split_whitespace();
                w.next() == Some(name) && (!public_key || w.next() == Some(bits))
            })
            .unwrap_or_else(|| panic!("no {name} row for {id} in\n{table}"));
        // The name's words: `ghash`, `dsa 1024 bits`, `ecdh 224 bits (nistp224)`.
        let words = match name {
            "dsa" => 3,
            "ecdsa" | "ecdh" => 4,
            _ => 1,
        };
        let cells: Vec<&str> = line.split_whitespace().skip(words).collect();
        // Throughput cells end in `k`; public-key rows are seconds per
        // operation (`0.000123s`) and rates.
        let measured = |c: &&str| {
            let number = c
                .strip_suffix('k')
                .or_else(|| c.strip_suffix('s'))
                .unwrap_or(c);
            number.parse::<f64>().is_ok_and(|v| v > 0.0)
        };
        // Every row is measured in full: P-192 too signs (aws-lc on a
        // hand-built group; `p192` alone would only verify).
        assert!(
            !cells.is_empty() && !cells.contains(&"-") && cells.iter().all(measured),
            "{id} is not measured: {line}"
        );
        assert!(at > last, "{name} out of openssl's order in\n{table}");
        last = at;
    }
    assert!(
        !table.contains("FAILED") && !table.contains("skipped"),
        "{table}"
    );
}

#[test]
fn crypto_bad_input_is_a_usage_error() {
    let sb = Sandbox::new();
    for args in [
        vec!["crypto", "--block-sizes", "100"],
        vec!["crypto", "--block-sizes", "lots"],
        vec!["crypto", "--threads", "0"],
        vec!["clock", "--cpus", "banana"],
    ] {
        let out = sb.cmd().args(&args).arg("--no-store").usage_error(args[1]);
        let err = stderr_of(&out);
        // Checked by sysgauge or by the command line's value parser: either
        // way one line that names the option.
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with("sysgauge: error: ") && first.contains(args[1]),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Whether the system `openssl` (the reference) is here; under
/// SYSGAUGE_REQUIRE_ALL its absence fails the test.
fn have_openssl() -> bool {
    sysgauge_testkit::require(
        "openssl is not installed",
        sysgauge_crypto::crypto::reference::openssl_program().is_some(),
        "apt-get install openssl",
    )
}

/// `crypto --vs-openssl` at 16 bytes with `options`, not stored; it must
/// succeed.
fn versus_openssl(options: &[&str]) -> std::process::Output {
    crypto_once(&Sandbox::new(), "16")
        .args(["--vs-openssl", "--no-store"])
        .args(options)
        .succeeds()
}

#[test]
fn crypto_versus_openssl() {
    if !have_openssl() {
        return;
    }
    // A small case: a digest, a cipher and a signature at one size.
    let out = versus_openssl(&["--only", "md5,aes-128-cbc,rsa-2048"]);
    let text = stdout_of(&out);
    assert!(text.contains("ratio = sysgauge / openssl"), "{text}");
    let aes = text
        .lines()
        .find(|l| l.starts_with("aes-128-cbc") && l.contains("16 bytes"))
        .unwrap_or_else(|| panic!("no aes-128-cbc row in\n{text}"));
    let cells: Vec<&str> = aes.split_whitespace().collect();
    let ratio: f64 = cells.last().and_then(|c| c.parse().ok()).unwrap_or(0.0);
    assert!(ratio > 0.0, "no ratio in {aes}");
    assert!(text.contains("rsa 2048 bits"), "{text}");
}

/// With `--rounds`, OpenSSL runs right after every round of every case,
/// and each row shows every round's ratio beside their median.
#[test]
fn crypto_versus_openssl_in_rounds() {
    if !have_openssl() {
        return;
    }
    let out = versus_openssl(&["--rounds", "2", "--only", "md5,rsa-2048"]);
    let text = stdout_of(&out);
    assert!(
        text.contains("run right after each of the 2 rounds of each case"),
        "{text}"
    );
    assert!(text.contains("ratio of each round"), "{text}");
    // Two OpenSSL runs for each case, one after each of its rounds.
    let err = stderr_of(&out);
    for alg in ["md5", "rsa2048"] {
        let runs = err
            .lines()
            .filter(|l| l.starts_with("openssl speed") && l.contains(alg))
            .count();
        assert_eq!(runs, 2, "{alg}:\n{err}");
    }
    let (_, table) = text.split_once("ratio of each round").unwrap();
    for row in ["md5 ", "rsa 2048 bits  sign", "rsa 2048 bits  verify"] {
        let line = table
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row} row in\n{text}"));
        // The ratio, then the two rounds' ratios, all numbers.
        let cells: Vec<f64> = line
            .split_whitespace()
            .rev()
            .take(3)
            .map(|c| c.parse().unwrap_or_else(|_| panic!("{line}")))
            .collect();
        assert!(cells.iter().all(|&x| x > 0.0), "{line}");
        // The median of two is their mean.
        let mean = (cells[0] + cells[1]) / 2.0;
        assert!((cells[2] - mean).abs() <= 0.011, "{line}");
    }
}

/// A candidate slower than OpenSSL, forced: the run says so in a stored
/// finding naming the row, and the table names each row's implementation
/// (with the trial's rates where a trial chose it). In this debug build
/// sysgauge's own MD5 kernel is unoptimised, so it is far below OpenSSL.
#[test]
fn a_slower_forced_candidate_is_disclosed() {
    if !have_openssl() {
        return;
    }
    let sb = Sandbox::new();
    let (out, record) = crypto_stored(
        &sb,
        "8KiB",
        &[
            "--vs-openssl",
            "--only",
            "md5,sha256",
            "--implementation",
            "md5=sysgauge",
        ],
    );
    let text = stdout_of(&out);
    assert!(
        text.contains("md5 8192 bytes: sysgauge; forced with --implementation"),
        "{text}"
    );
    assert!(text.contains("sha256 8192 bytes: "), "{text}");
    let below = |findings: &[sysgauge_core::Finding]| {
        findings
            .iter()
            .find(|f| f.code == sysgauge_crypto::crypto::report::BELOW_OPENSSL)
            .map(|f| f.message.clone())
    };
    let message = below(&record.findings).unwrap_or_else(|| panic!("no finding:\n{text}"));
    assert!(message.contains("md5 8192 bytes"), "{message}");
    assert!(message.contains("(sysgauge"), "{message}");
    assert!(text.contains("below-openssl"), "{text}");
    // Stored with the run.
    assert_eq!(below(&sb.stored_run(1).findings), Some(message));
}

#[test]
fn clock_command_and_run_phases() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "clock",
            "--profile",
            "tiny",
            "--repetitions",
            "3",
            "--no-store",
            "--cpus",
            "0",
        ])
        .succeeds();
    let text = stdout_of(&out);
    assert!(
        text.contains("measured MHz") && text.contains("single"),
        "{text}"
    );

    let run = sb.tiny_run_record("clock,hash.md5");
    let phases: Vec<(&str, Option<&str>)> = run
        .results
        .iter()
        .map(|r| (r.bench_id.as_str(), r.params.get_str("phase")))
        .collect();
    let first = phases.first().copied();
    let last = phases.last().copied();
    assert_eq!(
        first,
        Some(("clock.effective", Some("start"))),
        "{phases:?}"
    );
    assert_eq!(last, Some(("clock.effective", Some("end"))), "{phases:?}");
    assert!(phases.iter().any(|p| p.0 == "hash.md5"));
    let end = run.results.last().unwrap_or_else(|| panic!("results"));
    assert_eq!(end.params.get_str("cpus"), Some("all"));
    assert!(
        end.details.get_str("start_per_cpu_mhz").is_some(),
        "{:?}",
        end.details
    );
    assert!(end.metrics[0].value() > 100.0);
}

/// `--implementation`: a forced candidate runs and the details say so; a
/// name no algorithm has, or one an algorithm lacks, is a usage error that
/// lists the names, before anything runs; `list --implementations` shows
/// them. Without it, the choice and the trial are in the details, not the
/// params.
#[test]
fn implementation_is_chosen_forced_and_listed() {
    let sb = Sandbox::new();
    let forced = crypto_once(&sb, "1KiB")
        .args(["--only", "sha512,blake2b-512", "--no-store", "--json", "-"])
        .args(["--implementation", "sha512=rustcrypto"])
        .succeeds();
    let run = common::strict_record(&forced.stdout);
    let sha = run
        .results
        .iter()
        .find(|r| r.bench_id == "hash.sha512")
        .unwrap();
    assert_eq!(sha.details.get_str("implementation"), Some("rustcrypto"));
    assert_eq!(
        sha.details.get_str("implementation_choice"),
        Some("forced with --implementation")
    );
    assert!(sha.params.get_str("implementation").is_none());
    let b2 = run
        .results
        .iter()
        .find(|r| r.bench_id == "hash.blake2b-512")
        .unwrap();
    let trial = b2.details.get_str("implementation_trial").unwrap_or("");
    assert!(
        trial.contains("blake2b-simd") && trial.contains("rustcrypto"),
        "{trial}"
    );
    assert_eq!(
        b2.params,
        sysgauge_core::Params::new()
            .with("block_size", 1024u64)
            .with("threads", 1u64)
    );

    crypto_once(&sb, "16")
        .args(["--only", "md5", "--no-store", "--implementation", "nope"])
        .usage_error("'nope' is not an implementation sysgauge has; the names are aws-lc,");
    crypto_once(&sb, "16")
        .args([
            "--only",
            "md5",
            "--no-store",
            "--implementation",
            "md5=aws-lc",
        ])
        .usage_error(
            "hash.md5: implementation 'aws-lc' is not one of its own; it has sysgauge, rustcrypto",
        );
    sb.tiny_run()
        .args([
            "--only",
            "hash.md4",
            "--no-store",
            "--implementation",
            "aws-lc",
        ])
        .usage_error("no selected algorithm has 'aws-lc'");

    let listed = sb.cmd().args(["list", "--implementations"]).succeeds();
    let text = stdout_of(&listed);
    assert!(
        text.lines()
            .any(|l| l.starts_with("hash.sha512") && l.contains("aws-lc")),
        "{text}"
    );
}

/// `--implementations` shows the trial's work after the table, from the
/// stored details: for a chosen implementation every candidate's rate (the
/// same figures the record holds), for a forced one that it was forced and
/// no trial ran. `run` takes the flag too.
#[test]
fn implementations_show_every_candidates_trial_rate() {
    let sb = Sandbox::new();
    let out = crypto_once(&sb, "1KiB")
        .args(["--only", "sha512,md5", "--no-store", "--implementations"])
        .args(["--implementation", "md5=rustcrypto", "--json", "-"])
        .succeeds();
    let run = common::strict_record(&out.stdout);
    let text = stderr_of(&out);
    let sha = run
        .results
        .iter()
        .find(|r| r.bench_id == Algorithm::Sha512.id())
        .unwrap();
    let chosen = sha.details.get_str("implementation").unwrap();
    let trial = sha.details.get_str("implementation_trial").unwrap();
    // Every CPU runs at least RustCrypto's and aws-lc's SHA-512.
    assert!(
        trial.contains("rustcrypto ") && trial.contains("aws-lc ") && trial.ends_with(" MB/s"),
        "{trial}"
    );
    let line = format!("sha512 1024 bytes: {chosen}; trial on this CPU: {trial}");
    assert!(text.contains(&line), "no '{line}' in\n{text}");
    assert!(
        text.contains("md5 1024 bytes: rustcrypto; forced with --implementation (no trial)"),
        "{text}"
    );
    // Without the flag the lines are not printed.
    let plain = crypto_once(&sb, "1KiB")
        .args(["--only", "md5", "--no-store"])
        .succeeds();
    assert!(!stdout_of(&plain).contains("trial on this CPU"));

    let out = sb
        .tiny_run()
        .args([
            "--only",
            Algorithm::Md5.id(),
            "--no-store",
            "--implementations",
        ])
        .succeeds();
    let text = stdout_of(&out);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("md5 "))
        .unwrap_or_else(|| panic!("no md5 line in\n{text}"));
    assert!(
        line.contains("trial on this CPU: ")
            && line.contains("sysgauge ")
            && line.contains("rustcrypto "),
        "{line}"
    );
}

/// Every hash and crypto case records how its implementation compares
/// with the best reference known for this CPU's microarchitecture (the
/// embedded table, `known_ratios.csv`), and a case known to trail it is
/// code-bound, with a finding; a forced implementation records neither.
/// What is expected is looked up in the same table the binary embeds, so
/// the test holds on every CPU; on the AMD Zen 3 the table was measured on
/// it asserts the rows themselves (RSA-2048 signing, aws-lc's only code,
/// trails OpenSSL there).
#[test]
fn each_case_records_how_its_code_compares_with_the_reference_here() {
    use sysgauge_crypto::known_ratios::{details, lookup, table};
    let sb = Sandbox::new();
    let out = crypto_once(&sb, "8KiB,1KiB")
        .args([
            "--only",
            "sha256,sha512,rsa-2048",
            "--no-store",
            "--json",
            "-",
        ])
        .args(["--implementation", "sha512=rustcrypto"])
        .succeeds();
    let run = common::strict_record(&out.stdout);
    let uarch = sysgauge_core::microarch::this_cpu();
    assert_eq!(run.host.cpu.microarchitecture.as_deref(), uarch);
    let mut code_bound = Vec::new();
    for r in &run.results {
        let implementation = r.details.get_str("implementation").unwrap();
        let forced = r.bench_id == Algorithm::Sha512.id();
        let expected = uarch.filter(|_| !forced).and_then(|u| {
            let block = r.params.get_u64("block_size");
            details(
                &lookup(table(), u, &r.bench_id, block, implementation),
                u,
                implementation,
            )
        });
        let what = format!("{} {}", r.bench_id, r.params);
        assert_eq!(
            r.details.get_str("vs_reference"),
            expected.as_ref().map(|e| e.0.as_str()),
            "{what}"
        );
        assert_eq!(
            r.code_bound(),
            expected.as_ref().and_then(|e| e.1.as_deref()),
            "{what}"
        );
        if let Some(why) = r.code_bound() {
            code_bound.push((r.bench_id.clone(), why.to_string()));
        }
    }
    let text = stderr_of(&out);
    for (id, why) in &code_bound {
        let line = format!("{id}: {why}");
        assert!(text.contains(&line), "no '{line}' in\n{text}");
    }
    if uarch == Some("AMD Zen 3") {
        let at = |id: &str, block: Option<u64>| {
            run.results
                .iter()
                .find(|r| r.bench_id == id && r.params.get_u64("block_size") == block)
                .unwrap()
        };
        assert!(at(Algorithm::Sha256.id(), Some(8192))
            .details
            .get_str("vs_reference")
            .unwrap()
            .starts_with("1.02x OpenSSL 3.0.22 on AMD Zen 3 with "));
        assert!(at(SignAlg::Rsa2048.id(), None)
            .details
            .get_str("vs_reference")
            .unwrap()
            .starts_with("sign 1.00x, verify 1.07x OpenSSL 3.0.22 on AMD Zen 3"));
        // No row stands for blocks below 8 KiB.
        assert!(at(Algorithm::Sha256.id(), Some(1024))
            .details
            .get_str("vs_reference")
            .is_none());
    }

    // A table of the user's (SYSGAUGE_KNOWN_RATIOS) in which this CPU's
    // SHA-256 trails: the case is code-bound, with the finding.
    let Some(uarch) = uarch else { return };
    let table = sb.path().join("ratios.csv");
    std::fs::write(
        &table,
        format!("# measured here\n{uarch},hash.sha256,8192,throughput,,0.80,OpenSSL 9.9\n"),
    )
    .unwrap();
    let out = crypto_once(&sb, "8KiB")
        .env("SYSGAUGE_KNOWN_RATIOS", &table)
        .args(["--only", "sha256", "--no-store", "--json", "-"])
        .succeeds();
    let run = common::strict_record(&out.stdout);
    let why = format!(
        "is known to run slower than OpenSSL 9.9 on {uarch}: 0.80x, about 20 % below; \
         this figure understates the machine"
    );
    assert!(
        run.results[0].code_bound().unwrap().ends_with(&why),
        "{:?}",
        run.results[0].details
    );
    assert!(stderr_of(&out).contains("code-bound: hash.sha256: sysgauge's code"));
    // A table that cannot be read stops the command before measuring.
    std::fs::write(
        &table,
        format!("{uarch},hash.sha256,8192,throughput,,fast,x\n"),
    )
    .unwrap();
    crypto_once(&sb, "8KiB")
        .env("SYSGAUGE_KNOWN_RATIOS", &table)
        .args(["--only", "sha256", "--no-store"])
        .usage_error("SYSGAUGE_KNOWN_RATIOS=");
}

/// `clock --rated`: judged against the given clock as if published
/// (`clock-below-nominal` far above this machine's clock, nothing far
/// below), recorded in the host facts as given; a bad value is a usage
/// error.
#[test]
fn clock_judged_against_a_given_rated_clock() {
    let sb = Sandbox::new();
    let judged = |rated: &str| {
        let out = sb
            .cmd()
            .args(["clock", "--profile", "tiny", "--repetitions", "3"])
            .args(["--no-store", "--cpus", "0", "--json", "-", "--rated", rated])
            .succeeds();
        common::strict_record(&out.stdout)
    };
    let high = judged("9.5GHz");
    assert_eq!(high.host.cpu.user_rated_mhz, Some(9500.0));
    let r = &high.results[0];
    let codes: Vec<&str> = r.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(codes.contains(&"clock-below-nominal"), "{codes:?}");
    assert!(!codes.contains(&"clock-unjudged"), "{codes:?}");
    assert_eq!(r.details.get_int("nominal_mhz"), Some(9500));
    assert_eq!(
        r.details.get_str("nominal_source"),
        Some("given by the user (--rated)")
    );
    let low = judged("100MHz");
    assert_eq!(low.host.cpu.user_rated_mhz, Some(100.0));
    let codes: Vec<&str> = low.results[0]
        .findings
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    assert!(
        !codes.contains(&"clock-below-nominal") && !codes.contains(&"clock-unjudged"),
        "{codes:?}"
    );
    for bad in ["fast", "4.5", "0GHz"] {
        let out = sb
            .cmd()
            .args(["clock", "--no-store", "--rated", bad])
            .usage_error("--rated");
        let err = stderr_of(&out);
        assert!(err.contains("--rated") && err.contains(bad), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
