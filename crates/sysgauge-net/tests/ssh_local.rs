//! The ssh family against a real private sshd on 127.0.0.1: the session
//! fixture measures and cleans up after itself (no sshd left, no key file
//! left), discovery finds exactly what a restricted server accepts, and a
//! server that takes nothing offered is reported as such. Needs
//! openssh-server and openssh-client; without them the tests print a note
//! and pass, unless SYSGAUGE_REQUIRE_ALL=1 (CI), where they fail.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use sysgauge_core::{CancelToken, CtxSettings, Plan, Profile, RunCtx};
use sysgauge_net::ssh::algorithms::{ClientAlgorithms, Kind};
use sysgauge_net::ssh::client::SshError;
use sysgauge_net::ssh::server::{LocalServer, ServerOptions, SSHD};
use sysgauge_net::ssh::session::{ClientSettings, Session, Target};
use sysgauge_net::ssh::{benchmarks, SshOptions};
use sysgauge_testkit::{private_tempdir, processes_mentioning, require_openssh};

fn have_openssh() -> bool {
    require_openssh(Path::new(SSHD))
}

fn ctx(base: &Path) -> RunCtx {
    RunCtx::for_tests(CtxSettings {
        threads: 1,
        ..CtxSettings::for_tests(Profile::Tiny, base.to_path_buf())
    })
}

#[test]
fn local_session_measures_and_leaves_nothing_behind() {
    if !have_openssh() {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let mut c = ctx(base.path());
    let opts = Arc::new(SshOptions::default());
    let benches = benchmarks(&opts);
    let plan = Plan {
        profile: Profile::Tiny,
        threads: 1,
    };
    for b in &benches {
        for case in b.cases(&plan) {
            c.begin_case(Duration::from_secs(1));
            let m = b
                .run(&mut c, &case)
                .unwrap_or_else(|e| panic!("{} {case}: {e}", b.id()));
            assert_eq!(m[0].samples.len(), 3, "{}", b.id());
            assert!(m[0].value() > 0.0);
            let out = c.take_case_output();
            assert!(out
                .details
                .get_str("server")
                .is_some_and(|s| s.contains("127.0.0.1")));
            assert_eq!(out.details.get_str("host_key"), Some("ssh-ed25519"));
            if b.id() == "ssh.transfer" {
                assert_eq!(out.details.get_u64("verified_bytes"), Some(1_000_000));
                assert_eq!(m.len(), 1);
                assert!(out.details.get_u64("setup_ms").is_some());
            } else {
                assert_eq!(m[0].name, "handshake");
                assert_eq!(m.get(1).map(|x| x.name.as_str()), Some("auth"));
                assert!(m[1].value() <= m[0].value());
            }
        }
    }
    // While the family runs, its sshd and keys are there.
    let scratch = c.scratch_dir().unwrap();
    let key = std::fs::read_dir(&scratch)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("id_ed25519"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no client key under {}", scratch.display()));
    let needle = scratch.display().to_string();
    assert!(
        !processes_mentioning(&needle).is_empty(),
        "sshd is not running"
    );
    c.end_session();
    assert!(!key.exists(), "the key survived the session");
    assert!(!scratch.exists());
    let left = processes_mentioning(&needle);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// An ssh config that reaches a private server as a "remote" host.
fn remote_config(dir: &Path, server: &LocalServer) -> std::path::PathBuf {
    let p = dir.join("ssh_config");
    let text = format!(
        "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n",
        server.client_key().display(),
        server.known_hosts().display()
    );
    std::fs::write(&p, text).unwrap();
    p
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn discovery_finds_what_a_restricted_server_accepts() {
    if !have_openssh() {
        return;
    }
    let dir = private_tempdir();
    let ssh = sysgauge_core::bench::find_program("ssh").unwrap_or_else(|| panic!("ssh"));
    let client = ClientAlgorithms::query(&ssh).unwrap();
    let cancel = CancelToken::new();
    let server = LocalServer::start(
        dir.path(),
        &client,
        &ServerOptions {
            ciphers: Some(s(&["aes256-ctr", "aes128-gcm@openssh.com"])),
            macs: Some(s(&["hmac-sha2-256"])),
            kex: Some(s(&["curve25519-sha256"])),
        },
        &cancel,
    )
    .unwrap();
    let config = remote_config(dir.path(), &server);
    let settings = ClientSettings {
        config: Some(config),
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let target = Target::Remote {
        user: Some(server.user().to_string()),
        host: "127.0.0.1".into(),
        port: Some(server.port()),
    };
    let session = Session::open(
        &target,
        &settings,
        &ServerOptions::default(),
        dir.path(),
        &cancel,
    )
    .unwrap();
    let names = vec![
        (Kind::Cipher, client.ciphers.clone()),
        (Kind::Mac, client.macs.clone()),
        (Kind::Kex, client.kex.clone()),
    ];
    let d = session.discover(&names, 4, &cancel, &|_, _| {}).unwrap();
    let mut ciphers = d.accepted(Kind::Cipher);
    ciphers.sort();
    assert_eq!(ciphers, ["aes128-gcm@openssh.com", "aes256-ctr"]);
    assert_eq!(d.accepted(Kind::Mac), ["hmac-sha2-256"]);
    assert_eq!(d.accepted(Kind::Kex), ["curve25519-sha256"]);
    assert_eq!(d.rejected(Kind::Cipher).len(), client.ciphers.len() - 2);
    assert!(d
        .server_offer(Kind::Cipher)
        .is_some_and(|o| o.contains("aes256-ctr")));
    assert!(d.probe_seconds > 0.0);

    // A connection restricted to what the server does not take.
    let e = session
        .connect(
            &sysgauge_net::ssh::client::Restrict {
                cipher: Some("aes128-ctr".into()),
                ..Default::default()
            },
            &cancel,
        )
        .err();
    assert!(
        matches!(
            e,
            Some(SshError::NoMatch {
                kind: Kind::Cipher,
                ..
            })
        ),
        "{e:?}"
    );
    drop(session);
    let pid = server.pid().unwrap_or_else(|| panic!("no pid"));
    drop(server);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "sshd {pid} still runs"
    );
}
