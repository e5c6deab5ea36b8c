//! `sysgauge ssh` end to end through the real binary, against real sshd
//! servers on 127.0.0.1 only: a measured run that is stored, reported and
//! leaves no sshd process or key file behind; Ctrl-C; `sysgauge run`'s
//! handling of the opt-in family; and bad input: unknown algorithm names,
//! unreachable servers (a closed port, and a listener whose accept queue is
//! full so connection attempts go unanswered: the loopback stand-in for an
//! unroutable address), a host key mismatch, and a server that accepts
//! nothing the client offers. Every run is bounded (ssh's ConnectTimeout,
//! sysgauge's own deadlines, and the harness's timeout).
//!
//! Needs openssh-client and openssh-server: without them the tests print a
//! note and pass, unless SYSGAUGE_REQUIRE_ALL=1 (CI), where they fail.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use crate::common::{read_record, stderr_of, stdout_of, Outcome, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysgauge_core::{CancelToken, ResultRecord, RunRecord, Status};
use sysgauge_net::ssh::algorithms::ClientAlgorithms;
use sysgauge_net::ssh::server::{LocalServer, ServerOptions, SSHD};
use sysgauge_testkit::{private_tempdir, processes_mentioning, require_openssh, Interrupt};

fn have_openssh() -> bool {
    require_openssh(Path::new(SSHD))
}

/// A sandbox for a test of the local ssh measurement, or None when
/// OpenSSH is missing (see [`have_openssh`]).
fn ssh_sandbox() -> Option<Sandbox> {
    have_openssh().then(Sandbox::new)
}

/// One cipher, one MAC and one key exchange: a single transfer case.
const ONE_COMBINATION: [&str; 6] = [
    "--cipher",
    "aes128-ctr",
    "--mac",
    "umac-128-etm@openssh.com",
    "--kex",
    "curve25519-sha256",
];

fn assert_clean(scratch: &Path) {
    let left: Vec<PathBuf> = std::fs::read_dir(scratch)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
    let procs = processes_mentioning(&scratch.display().to_string());
    assert!(procs.is_empty(), "processes left behind: {procs:?}");
}

/// `sysgauge ssh` on the sandbox database and scratch directory.
fn ssh_cmd(sb: &Sandbox) -> assert_cmd::Command {
    let mut c = sb.cmd();
    c.args(["ssh", "--profile", "tiny", "--db"])
        .arg(sb.db())
        .arg("--scratch-dir")
        .arg(sb.scratch());
    c
}

/// Runs `cmd` (an [`ssh_cmd`] with its options) with `--json FILE`; it
/// must succeed. The record it wrote, its stdout and its stderr.
fn measured(sb: &Sandbox, cmd: &mut assert_cmd::Command) -> (RunRecord, String, String) {
    let json = sb.path().join("ssh.json");
    let out = cmd.arg("--json").arg(&json).output().unwrap();
    let (stdout, stderr) = (stdout_of(&out), stderr_of(&out));
    assert!(out.status.success(), "{stderr}\n{stdout}");
    (read_record(&json), stdout, stderr)
}

/// The results of benchmark `id` in `run`.
fn results_of<'a>(run: &'a RunRecord, id: &str) -> Vec<&'a ResultRecord> {
    run.results.iter().filter(|r| r.bench_id == id).collect()
}

/// `--secure-set` measures exactly the set's algorithms this client has,
/// and nothing outside it.
#[test]
fn secure_set_measures_only_the_sources_algorithms() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let (run, stdout, _) = measured(
        &sb,
        ssh_cmd(&sb).args(["--runs", "2", "--size", "1M", "--secure-set"]),
    );
    use sysgauge_net::ssh::algorithms::{in_secure_set, Kind};
    let mut ciphers = std::collections::BTreeSet::new();
    for r in run.results.iter().filter(|r| r.family == "ssh") {
        assert_eq!(r.status, Status::Ok, "{} {}", r.bench_id, r.params);
        let p = |k| r.params.get_str(k).unwrap_or_default().to_string();
        assert!(in_secure_set(Kind::Cipher, &p("cipher")), "{}", r.params);
        assert!(in_secure_set(Kind::Kex, &p("kex")), "{}", r.params);
        let mac = p("mac");
        assert!(
            mac == "implicit" || in_secure_set(Kind::Mac, &mac),
            "{}",
            r.params
        );
        ciphers.insert(p("cipher"));
    }
    // Debian 12's OpenSSH has all six ciphers of the set.
    assert_eq!(ciphers.len(), 6, "{ciphers:?}");
    // No table note calls anything weak ("is not weak: nothing" aside).
    assert_eq!(
        stdout.matches("weak: ").count(),
        stdout.matches("not weak: ").count(),
        "{stdout}"
    );
    ssh_cmd(&sb)
        .args(["--secure-set", "--cipher", "aes128-ctr"])
        .exits_with(2);
}

#[test]
fn local_run_is_stored_reported_and_cleaned_up() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let (run, stdout, stderr) = measured(
        &sb,
        ssh_cmd(&sb)
            .args(["--runs", "3", "--size", "2M", "--only-secure"])
            .args([
                "--cipher",
                "aes128-ctr,chacha20-poly1305@openssh.com,aes128-cbc",
            ])
            .args(["--mac", "hmac-sha2-256,hmac-sha1"])
            .args(["--kex", "curve25519-sha256,diffie-hellman-group14-sha1"]),
    );
    assert!(stderr.contains("probing which of"), "{stderr}");
    assert!(stderr.contains("factorial matrix:"), "{stderr}");
    assert_eq!(run.command, "ssh");
    let transfers = results_of(&run, "ssh.transfer");
    let handshakes = results_of(&run, "ssh.handshake");
    // 3 ciphers with the fixed MAC (hmac-sha2-256: the fixed MAC comes
    // from --mac), 2 MACs with the fixed cipher aes128-ctr, one of which
    // repeats aes128-ctr's cipher case: 4 transfers; 2 key exchanges.
    assert_eq!(transfers.len(), 4, "{stdout}");
    assert_eq!(handshakes.len(), 2);
    for r in transfers.iter().chain(handshakes.iter()) {
        assert_eq!(r.status, Status::Ok, "{} {}", r.bench_id, r.params);
        assert_eq!(r.params.get_str("mode"), Some("local"));
        assert_eq!(r.metrics[0].samples.len(), 3);
    }
    let chacha = transfers
        .iter()
        .find(|r| r.params.get_str("cipher") == Some("chacha20-poly1305@openssh.com"))
        .unwrap_or_else(|| panic!("no chacha20 case"));
    assert_eq!(chacha.params.get_str("mac"), Some("implicit"));
    assert_eq!(chacha.params.get_u64("size"), Some(2_000_000));
    assert_eq!(chacha.details.get_u64("verified_bytes"), Some(1_048_589));
    assert_eq!(chacha.metrics[0].name, "throughput");
    // The report: tables, the recommendation without the weak ones, its cost.
    for needle in [
        "Fastest combinations",
        "By cipher",
        "By MAC",
        "By key exchange",
        "Host *",
        "What leaving the weak algorithms out costs",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?}:\n{stdout}");
    }
    let ciphers_line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Ciphers "))
        .unwrap_or_else(|| panic!("no Ciphers line:\n{stdout}"));
    assert!(!ciphers_line.contains("cbc"), "{ciphers_line}");
    assert!(ciphers_line.contains("aes128-ctr") && ciphers_line.contains("chacha20"));
    let kex_line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("KexAlgorithms "))
        .unwrap_or_else(|| panic!("no KexAlgorithms line:\n{stdout}"));
    assert!(!kex_line.contains("sha1"), "{kex_line}");
    assert_clean(&sb.scratch());

    // Stored like any run, and comparable by id and params.
    let list = sb.listed_runs();
    assert_eq!(list[0]["command"], "ssh", "{list}");
    // `results show` renders the ssh report again from the stored records.
    let shown = stdout_of(&sb.on_db("results").args(["show", "1"]).succeeds());
    assert!(
        shown.contains("Fastest combinations") && shown.contains("Ciphers "),
        "{shown}"
    );
}

/// `--cipher`, `--mac` and `--kex` limit what is measured: the fixed MAC
/// comes from `--mac`, so a MAC left out is neither measured nor
/// recommended, and the one cipher that uses a MAC is ranked on its
/// transfer with the fixed MAC alone (n = 1), not on the mean with the MAC
/// sweep. Before, umac-128-etm (the default fixed MAC) was measured and
/// recommended, and aes128-ctr ranked on two transfers.
#[test]
fn the_fixed_mac_comes_from_mac_and_the_sweeps_stay_apart() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let mac = "hmac-sha2-256-etm@openssh.com";
    let (run, stdout, stderr) = measured(
        &sb,
        ssh_cmd(&sb)
            .args(["--runs", "1", "--size", "1M", "--no-store"])
            .args(["--cipher", "aes128-ctr,chacha20-poly1305@openssh.com"])
            .args(["--mac", mac, "--kex", "curve25519-sha256"]),
    );
    assert!(
        stderr.contains(&format!("fixed choices: cipher aes128-ctr, MAC {mac}")),
        "{stderr}"
    );
    let transfers = results_of(&run, "ssh.transfer");
    let mut macs: Vec<&str> = transfers
        .iter()
        .map(|r| r.params.get_str("mac").unwrap_or_default())
        .collect();
    macs.sort();
    assert_eq!(macs, [mac, "implicit"], "{stdout}");
    for r in &transfers {
        assert_eq!(r.status, Status::Ok, "{}", r.params);
    }
    let macs_line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("MACs "))
        .unwrap_or_else(|| panic!("no MACs line:\n{stdout}"));
    assert_eq!(macs_line.trim(), format!("MACs {mac}"), "{stdout}");
    assert!(!stdout.contains("umac-128"), "{stdout}");
    // Each cipher's figure is one combination.
    assert!(
        stdout.contains("Each cipher's figure comes from a single MAC/kex context"),
        "{stdout}"
    );
    assert_clean(&sb.scratch());
}

#[test]
fn full_matrix_measures_every_working_combination() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let (run, stdout, stderr) = measured(
        &sb,
        ssh_cmd(&sb)
            .args(["--matrix", "full", "--runs", "1", "--no-store"])
            .args(["--cipher", "aes128-ctr,aes128-gcm@openssh.com"])
            .args(["--mac", "hmac-sha2-256,umac-64-etm@openssh.com"])
            .args(["--kex", "curve25519-sha256,ecdh-sha2-nistp256"]),
    );
    // 2 kex × (1 AEAD cipher + 1 cipher × 2 MACs) = 6 combinations, each
    // with a transfer and a handshake; the estimate comes first.
    assert!(
        stderr.contains("full matrix: 6 transfer and 6 handshake cases"),
        "{stderr}"
    );
    let mut combos: Vec<String> = run
        .results
        .iter()
        .filter(|r| r.bench_id == "ssh.transfer" && r.is_ok())
        .map(|r| {
            format!(
                "{}/{}/{}",
                r.params.get_str("cipher").unwrap_or_default(),
                r.params.get_str("mac").unwrap_or_default(),
                r.params.get_str("kex").unwrap_or_default()
            )
        })
        .collect();
    combos.sort();
    assert_eq!(
        combos,
        [
            "aes128-ctr/hmac-sha2-256/curve25519-sha256",
            "aes128-ctr/hmac-sha2-256/ecdh-sha2-nistp256",
            "aes128-ctr/umac-64-etm@openssh.com/curve25519-sha256",
            "aes128-ctr/umac-64-etm@openssh.com/ecdh-sha2-nistp256",
            "aes128-gcm@openssh.com/implicit/curve25519-sha256",
            "aes128-gcm@openssh.com/implicit/ecdh-sha2-nistp256",
        ]
    );
    assert_eq!(
        run.results
            .iter()
            .filter(|r| r.bench_id == "ssh.handshake" && r.is_ok())
            .count(),
        6
    );
    // Several kex among the transfers: the kex table shows their throughput.
    assert!(stdout.contains("transfer MB/s"), "{stdout}");
    assert_clean(&sb.scratch());
}

#[test]
fn run_skips_ssh_unless_named_and_list_shows_it() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let list = sb.cmd().arg("list").output().unwrap();
    let text = stdout_of(&list);
    assert!(
        text.contains("ssh.transfer") && text.contains("ssh.handshake"),
        "{text}"
    );
    assert!(text.contains("unless named with --only"), "{text}");

    let run = sb.tiny_run_record("ssh");
    let ids: Vec<&str> = run.results.iter().map(|r| r.bench_id.as_str()).collect();
    assert_eq!(ids, ["ssh.transfer", "ssh.handshake"]);
    assert!(run.results.iter().all(|r| r.is_ok()), "{:?}", run.results);
    assert_clean(&sb.scratch());
}

/// `--sink PATH`: each transfer is written into the file on the far side
/// (the far side's `wc -c` of the file after every transfer is the size),
/// the cases carry `sink=file` and the path, and the file is gone after.
#[test]
fn sink_writes_each_transfer_into_a_file_and_removes_it() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let dir = sb.subdir("sink dir");
    let sink = dir.join("it's a sink.bin");
    let (run, stdout, stderr) = measured(
        &sb,
        ssh_cmd(&sb)
            .args(["--runs", "2", "--size", "300k"])
            .args(ONE_COMBINATION)
            .arg("--sink")
            .arg(&sink),
    );
    assert!(stderr.contains("writing each transfer into"), "{stderr}");
    assert!(
        stdout.contains(&format!("bytes each written into {}", sink.display())),
        "{stdout}"
    );
    let transfers = results_of(&run, "ssh.transfer");
    assert_eq!(transfers.len(), 1, "{stdout}");
    let r = transfers[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.status);
    assert_eq!(r.params.get_str("sink"), Some("file"));
    assert_eq!(r.params.get_u64("size"), Some(300_000));
    assert_eq!(r.details.get_str("sink_path"), sink.to_str());
    assert_eq!(r.details.get_u64("sink_bytes_written"), Some(300_000));
    assert_eq!(r.metrics[0].samples.len(), 2);
    // Handshakes write nothing: no sink param.
    let h = run.results.iter().find(|r| r.bench_id == "ssh.handshake");
    assert!(h.is_some_and(|h| h.params.get("sink").is_none()));
    assert!(!sink.exists(), "the sink file was left behind");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    assert_clean(&sb.scratch());
}

/// A `--sink` that cannot take the transfers is refused before anything
/// is measured, exit 2, with the path and the problem named.
#[test]
fn bad_sink_paths_exit_2() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let dir = sb.path().to_path_buf();
    let mut cases: Vec<(PathBuf, String)> = vec![
        (PathBuf::from("sink.bin"), "not an absolute path".into()),
        (dir.clone(), "is a directory".into()),
        (
            PathBuf::from("/dev/null"),
            "already exists on the far side".into(),
        ),
        (
            dir.join("no such dir/sink.bin"),
            "its directory does not exist".into(),
        ),
    ];
    // One transfer bigger than the free space (when the scratch file
    // system has less than 1 TB free, the largest --size).
    let df = std::process::Command::new("df")
        .args(["-Pk"])
        .arg(&dir)
        .output()
        .unwrap();
    let free_kib: Option<u64> = String::from_utf8_lossy(&df.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3).map(str::to_string))
        .and_then(|f| f.parse().ok());
    let big = free_kib.is_some_and(|k| k.saturating_mul(1024) < 1_000_000_000_000);
    for (path, want) in &cases {
        let t0 = Instant::now();
        let out = ssh_cmd(&sb)
            .args(ONE_COMBINATION)
            .arg("--sink")
            .arg(path)
            .usage_error(want);
        let err = stderr_of(&out);
        assert!(err.contains(&format!("--sink {}", path.display())), "{err}");
        assert!(!err.contains("factorial matrix:"), "measured: {err}");
        assert!(t0.elapsed() < Duration::from_secs(30), "{path:?} was slow");
    }
    if big {
        cases.clear();
        let out = ssh_cmd(&sb)
            .args(["--size", "1T"])
            .args(ONE_COMBINATION)
            .arg("--sink")
            .arg(dir.join("big.bin"))
            .usage_error("less than one transfer (1000000000000 bytes)");
        assert!(!dir.join("big.bin").exists(), "{}", stderr_of(&out));
    }
    assert_clean(&sb.scratch());
}

#[test]
fn bad_names_and_options_exit_2() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--cipher", "foo"], "--cipher: unknown cipher 'foo'"),
        (vec!["--mac", "hmac-sha2-256,nope"], "unknown MAC 'nope'"),
        (
            vec!["--kex", "curve25519-sha256,"],
            "--kex has an empty entry",
        ),
        (
            vec!["--fixed-kex", "bogus-kex"],
            "--fixed-kex: unknown key exchange 'bogus-kex'",
        ),
        (
            vec!["--fixed-cipher", "aes128-gcm@openssh.com"],
            "uses no MAC",
        ),
        (vec!["--size", "0"], "--size must be at least 1 byte"),
        (vec!["--size", "12Q"], "unknown suffix"),
        (vec!["--runs", "0"], "--runs must be at least 1"),
        (
            vec!["--connect-timeout", "0"],
            "--connect-timeout must be between",
        ),
        (vec!["--host=-oProxyCommand=x"], "malformed"),
        (vec!["--host", "pi:99999"], "not a port number"),
        (
            vec!["--ssh-config", "/etc/hostname"],
            "applies to --host only",
        ),
        (vec!["--host", "pi", "--ssh-option=-v"], "is not KEY=VALUE"),
    ];
    for (args, want) in cases {
        let t0 = Instant::now();
        ssh_cmd(&sb).args(&args).usage_error(want);
        assert!(t0.elapsed() < Duration::from_secs(20), "{args:?} was slow");
    }
    assert_clean(&sb.scratch());
}

/// `sysgauge ssh --host 127.0.0.1:PORT --connect-timeout SECONDS` for a
/// port that does not take the connection: it must fail with exit 2 and
/// `want` in its message. How long it took.
fn unreachable(sb: &Sandbox, port: u16, seconds: &str, want: &str) -> Duration {
    let t0 = Instant::now();
    ssh_cmd(sb)
        .args(["--host", &format!("127.0.0.1:{port}")])
        .args(["--connect-timeout", seconds])
        .usage_error(want);
    t0.elapsed()
}

#[test]
fn closed_port_fails_fast_with_exit_2() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    // A port that was free a moment ago and has nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let took = unreachable(&sb, port, "3", "connection refused");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn unanswered_connection_times_out_with_exit_2() {
    if !have_openssh() {
        return;
    }
    use socket2::{Domain, Socket, Type};
    let sb = Sandbox::new();
    // A listener that never accepts, with a backlog of 0: once one
    // connection fills its queue, the kernel drops further SYNs, so a new
    // connection attempt gets no answer at all, like an unroutable address,
    // without any packet leaving the loopback interface.
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    let addr: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    l.bind(&addr.into()).unwrap();
    l.listen(0).unwrap();
    let port = l
        .local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .map(|a| a.port())
        .unwrap_or_else(|| panic!("no port"));
    let target: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let fillers: Vec<Socket> = (0..3)
        .map(|_| {
            let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
            s.set_nonblocking(true).unwrap();
            let _ = s.connect(&target.into());
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let took = unreachable(&sb, port, "2", "no answer within the connect timeout");
    drop(fillers);
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(30),
        "{took:?}"
    );
}

/// A private server started by the test itself, reached as a "remote" host
/// through an ssh config with its key and a known_hosts file of our choice.
struct TestServer {
    dir: tempfile::TempDir,
    server: LocalServer,
}

impl TestServer {
    fn start(options: ServerOptions) -> TestServer {
        let dir = private_tempdir();
        let ssh = sysgauge_core::bench::find_program("ssh").unwrap_or_else(|| panic!("ssh"));
        let client = ClientAlgorithms::query(&ssh).unwrap();
        let server =
            LocalServer::start(dir.path(), &client, &options, &CancelToken::new()).unwrap();
        TestServer { dir, server }
    }

    fn config(&self, known_hosts: &Path) -> PathBuf {
        let p = self.dir.path().join("client_config");
        std::fs::write(
            &p,
            format!(
                "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n",
                self.server.client_key().display(),
                known_hosts.display()
            ),
        )
        .unwrap();
        p
    }

    fn host(&self) -> String {
        format!("{}@127.0.0.1:{}", self.server.user(), self.server.port())
    }
}

#[test]
fn host_key_mismatch_is_refused_with_exit_2() {
    if !have_openssh() {
        return;
    }
    let a = TestServer::start(ServerOptions::default());
    let b = TestServer::start(ServerOptions::default());
    // known_hosts says A's address has B's keys.
    let kh = a.dir.path().join("wrong_known_hosts");
    let lines: String = b
        .server
        .host_keys()
        .iter()
        .map(|k| format!("[127.0.0.1]:{} {k}\n", a.server.port()))
        .collect();
    std::fs::write(&kh, lines).unwrap();
    let sb = Sandbox::new();
    let out = ssh_cmd(&sb)
        .args([
            "--host",
            &a.host(),
            "--connect-timeout",
            "5",
            "--ssh-config",
        ])
        .arg(a.config(&kh))
        .usage_error("does not match the one in known_hosts");
    let err = stderr_of(&out);
    assert!(err.contains("wrong_known_hosts"), "{err}");
    // Refused before anything was measured: no database was even opened.
    assert!(!sb.db().exists());
    assert_clean(&sb.scratch());

    // The right known_hosts works (the same server, measured as remote).
    let (run, _, _) = measured(
        &sb,
        ssh_cmd(&sb)
            .args(["--host", &a.host(), "--connect-timeout", "5", "--runs", "1"])
            .args([
                "--cipher",
                "aes128-ctr",
                "--mac",
                "hmac-sha2-256",
                "--kex",
                "curve25519-sha256",
            ])
            .arg("--ssh-config")
            .arg(a.config(a.server.known_hosts())),
    );
    assert!(run
        .results
        .iter()
        .all(|r| r.is_ok() && r.params.get_str("mode") == Some("remote")));
}

#[test]
fn server_that_accepts_nothing_offered_is_an_error() {
    if !have_openssh() {
        return;
    }
    let s = TestServer::start(ServerOptions {
        ciphers: Some(vec!["aes256-ctr".into()]),
        ..Default::default()
    });
    let sb = Sandbox::new();
    let t0 = Instant::now();
    let out = ssh_cmd(&sb)
        .args(["--host", &s.host(), "--connect-timeout", "5"])
        .args(["--cipher", "aes128-ctr,chacha20-poly1305@openssh.com"])
        .arg("--ssh-config")
        .arg(s.config(s.server.known_hosts()))
        .usage_error("accepts none of the ciphers given with --cipher (aes128-ctr, chacha20-poly1305@openssh.com)");
    let err = stderr_of(&out);
    assert!(err.contains("it offers: aes256-ctr"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(120));
    assert_clean(&sb.scratch());
}

#[test]
fn ctrl_c_stops_the_server_and_removes_its_keys() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let scratch = sb.scratch();
    let mut running = Vec::new();
    let run = Interrupt::after("[1/")
        .waiting_up_to(Duration::from_secs(180))
        .run(
            sb.std_cmd()
                .args(["ssh", "--profile", "tiny", "--runs", "5", "--size", "20M"])
                .args(["--kex", "curve25519-sha256", "--mac", "hmac-sha2-256"])
                .arg("--db")
                .arg(sb.db())
                .arg("--scratch-dir")
                .arg(&scratch),
            // While it runs, the private sshd and its keys exist.
            |_, _| running = processes_mentioning(&scratch.display().to_string()),
        );
    run.assert_started_then_exited(130);
    assert!(
        !running.is_empty(),
        "no private sshd seen while running:\n{}",
        run.log
    );
    assert_clean(&scratch);
}

/// A signal while the server's algorithms are probed (before anything is
/// measured) still stores the run, `interrupted` with no result, as a
/// signal between cases does; exit 143 for SIGTERM; nothing left behind.
#[test]
fn sigterm_while_probing_stores_an_interrupted_run() {
    let Some(sb) = ssh_sandbox() else {
        return;
    };
    let scratch = sb.scratch();
    let db = sb.db();
    // Every algorithm the client has is probed: many connections, seconds.
    let run = Interrupt::after("ssh: probing which of")
        .with_signal(libc::SIGTERM)
        .waiting_up_to(Duration::from_secs(120))
        .run(
            sb.std_cmd()
                .args(["ssh", "--profile", "tiny", "--db"])
                .arg(&db)
                .arg("--scratch-dir")
                .arg(&scratch),
            |_, _| {},
        );
    run.assert_started_then_exited(143);
    assert!(
        !run.log.contains("the server accepts"),
        "the probing finished before the signal; the test proves nothing:\n{}",
        run.log
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (status, n) = crate::common::run_status_and_results(&conn);
    assert_eq!((status.as_str(), n), ("interrupted", 0), "{}", run.log);
    assert_clean(&scratch);
}
