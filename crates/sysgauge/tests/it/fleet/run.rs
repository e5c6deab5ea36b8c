//! `fleet run` on the namespace LAN: faults and `--retry-failed`, a host lost
//! mid-run and Ctrl-C, `--timeout`, the key exchange offered, usage errors.

use super::{
    available, measuring_tiny_md5, runs, signal_group, sysgauge, table_row, Lab, HOSTNAMES, NAMES,
};
use crate::common::{await_line, stderr_of, stdout_of, Sandbox};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};
use sysgauge_testkit::netns::Hub;
use sysgauge_testkit::ChildGuard;

#[test]
fn fleet_of_namespaces_with_faults_then_retry() {
    if !available() {
        return;
    }
    let mut lab = Lab::running(NAMES.len());
    // delta goes down before the run.
    lab.hosts[3].stop();
    let sb = Sandbox::new();
    let before = lab.remote_dirs();
    assert!(before.is_empty());
    // alpha's rated clock comes from the inventory (`--rated` on the host).
    let inv = std::fs::read_to_string(lab.inventory()).unwrap();
    let inv = inv.replacen(
        "alpha ansible_host=",
        "alpha rated_mhz=4500 ansible_host=",
        1,
    );
    assert!(inv.contains("rated_mhz=4500"), "{inv}");
    std::fs::write(lab.inventory(), inv).unwrap();

    let out = lab.fleet(&sb, &measuring_tiny_md5(&["--inventory", &lab.inventory()]));
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert_eq!(out.status.code(), Some(1), "{log}\n{table}");
    for alias in ["alpha", "bravo", "charlie"] {
        let row = table_row(&table, alias);
        assert!(row.contains(" ok ") && row.contains("x86_64"), "{row}");
        assert!(
            log.contains(&format!("fleet: {alias}: running")),
            "no live line for {alias}:\n{log}"
        );
        // charlie's zstd does not work: it gets the binary as it is.
        let compressed = log.lines().any(|l| {
            l.starts_with(&format!("fleet: {alias}: running")) && l.contains("MB of zstd")
        });
        assert_eq!(compressed, alias != "charlie", "{alias}:\n{log}");
    }
    assert!(
        table_row(&table, "delta").contains("connection refused"),
        "{table}"
    );
    assert!(
        table_row(&table, "echo").contains("key refused (Permission denied)"),
        "{table}"
    );
    let fox = table_row(&table, "foxtrot");
    assert!(
        fox.contains("riscv64")
            && fox.contains("no binary for riscv64; pass --binary riscv64=PATH"),
        "{fox}"
    );
    assert!(log.contains("3 of 6 host(s) ran, 3 failed"), "{log}");
    assert_eq!(
        lab.remote_dirs(),
        before,
        "temporary directories left on hosts"
    );

    // Stored: one run per healthy host, with its alias, vars and identity.
    let stored = runs(&sb);
    assert_eq!(stored.len(), 3, "{stored:?}");
    let list = stdout_of(&sysgauge(&sb, &["results", "list"]));
    for alias in ["alpha", "bravo", "charlie"] {
        assert!(list.contains(alias), "{list}");
    }
    let show = |key: &str| -> serde_json::Value {
        let out = sysgauge(&sb, &["results", "export", key]);
        assert!(out.status.success(), "{}", stderr_of(&out));
        serde_json::from_str(&stdout_of(&out)).unwrap()
    };
    let mut ids = Vec::new();
    for (i, alias) in ["alpha", "bravo", "charlie"].iter().enumerate() {
        let id = table_row(&table, alias)
            .split_whitespace()
            .nth(4)
            .unwrap()
            .to_string();
        let run = show(&id);
        assert_eq!(run["label"], *alias, "{run}");
        assert_eq!(run["tags"]["alias"], *alias);
        assert_eq!(run["tags"]["site"], "lab");
        assert_eq!(run["tags"]["room"], format!("r{i}"));
        assert_eq!(run["tags"]["groups"], "lab", "the inventory groups");
        assert_eq!(run["host"]["hostname"], HOSTNAMES[i]);
        let rated = (*alias == "alpha").then_some(4500.0);
        assert_eq!(
            run["host"]["cpu"]["user_rated_mhz"].as_f64(),
            rated,
            "{alias}"
        );
        assert_eq!(
            run["host"]["identity"]["machine_id"],
            format!("{:032x}", 0xf1ee7000 + i)
        );
        ids.push(id);
    }

    // Ingest is idempotent by run id: the same record again adds nothing.
    let again = sb.path().join("alpha.json");
    std::fs::write(&again, show(&ids[0]).to_string()).unwrap();
    let imp = sysgauge(&sb, &["import", &again.display().to_string()]);
    assert!(imp.status.success(), "{}", stderr_of(&imp));
    assert!(
        stderr_of(&imp).contains("already imported"),
        "{}",
        stderr_of(&imp)
    );
    assert_eq!(runs(&sb).len(), 3);

    // compare over them: the two `twin`s are told apart by alias.
    let mut compare = vec!["compare"];
    compare.extend(ids.iter().map(String::as_str));
    let cmp = sysgauge(&sb, &compare);
    let text = stdout_of(&cmp);
    assert!(cmp.status.success(), "{}", stderr_of(&cmp));
    for label in ["alpha", "bravo", "charlie", "hash.md5"] {
        assert!(text.contains(label), "missing {label}:\n{text}");
    }
    // …and in their inventory groups: all three in `lab`.
    let grouped = sysgauge(&sb, &["compare", "--group-by", "group"]);
    let text = stdout_of(&grouped);
    assert!(grouped.status.success(), "{}", stderr_of(&grouped));
    assert!(text.starts_with("3 hosts in 1 group by group."), "{text}");
    let lab_row = text
        .lines()
        .find(|l| l.starts_with("lab "))
        .unwrap_or_else(|| panic!("{text}"));
    for m in ["alpha", "bravo", "charlie"] {
        assert!(lab_row.contains(m), "{lab_row}");
    }

    // delta comes back; only the failed hosts of the flaky group are retried.
    lab.hosts[3].start();
    let out = lab.fleet(
        &sb,
        &[
            "--retry-failed",
            "--inventory",
            &lab.inventory(),
            "--limit",
            "flaky",
        ],
    );
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert_eq!(out.status.code(), Some(0), "{log}\n{table}");
    assert!(table_row(&table, "delta").contains(" ok "), "{table}");
    assert_eq!(table.lines().count(), 3, "only delta ran:\n{table}");
    // Its command line was the first run's (kept in the state file).
    let stored = runs(&sb);
    assert_eq!(stored.len(), 4, "{stored:?}");
    let delta = show(
        table_row(&table, "delta")
            .split_whitespace()
            .nth(4)
            .unwrap(),
    );
    assert_eq!(delta["profile"], "tiny");
    assert_eq!(delta["results"].as_array().map(Vec::len), Some(1));

    // What still failed: echo and foxtrot. Plain retry runs just those,
    // fails them again and stores nothing new.
    let out = lab.fleet(&sb, &["--retry-failed"]);
    let table = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(
        table.contains("echo") && table.contains("foxtrot"),
        "{table}"
    );
    assert_eq!(runs(&sb).len(), 4);
    assert_eq!(
        lab.remote_dirs(),
        before,
        "temporary directories left on hosts"
    );
}

/// A host lost mid-run is reported failed with what ssh saw, while the
/// others go on; Ctrl-C on a terminal (SIGINT to the whole foreground
/// process group, ssh included) then stops the others, which are reported
/// interrupted, their remote sysgauge stopped and directories removed;
/// `--retry-failed` completes them all.
#[test]
fn host_lost_mid_run_then_ctrl_c_then_retry() {
    if !available() {
        return;
    }
    let mut lab = Lab::running(4);
    let sb = Sandbox::new();
    let before = lab.remote_dirs();
    assert!(before.is_empty());
    let inventory = lab.inventory();
    let delta_ns = lab.hosts[3].ns.clone();
    let mut cmd = lab.fleet_cmd(
        &sb,
        &[
            "--inventory",
            &inventory,
            "--limit",
            "lab,flaky",
            "--",
            "--profile",
            "quick",
            "--only",
            "hash.md5",
        ],
    );
    // Its own process group, as a shell gives a foreground job.
    cmd.process_group(0);
    let mut run = ChildGuard::spawn(&mut cmd);
    await_line(&mut run, "fleet: delta: running", Duration::from_secs(180));
    // delta's machine goes away: its sshd and everything it started (the
    // remote sysgauge among them) die at once.
    Hub::kill_all_in(&delta_ns);
    await_line(&mut run, "fleet: delta: failed", Duration::from_secs(60));
    // Ctrl-C on the terminal.
    signal_group(&run, libc::SIGINT);
    let status = run.wait_exit(Duration::from_secs(40));
    let log = run.output();
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{log}");
    // What ssh saw, not the host's last progress line.
    let delta = log
        .lines()
        .find(|l| l.contains("fleet: delta: failed:"))
        .unwrap_or_else(|| panic!("{log}"));
    // (`closed by the host` or `broken pipe`, as the copy or the run was
    // cut.)
    assert!(
        delta.contains("failed: connection lost (") && !delta.contains("hash.md5"),
        "{delta}\n{log}"
    );
    assert!(
        log.contains("could not remove") && log.contains("sysgauge-fleet."),
        "the directory left on the lost host is not named:\n{log}"
    );
    let mut interrupted = 0;
    for alias in ["alpha", "bravo", "charlie"] {
        let stopped = log.contains(&format!(
            "fleet: {alias}: interrupted: stopped and cleaned up"
        ));
        interrupted += usize::from(stopped);
        assert!(
            stopped || log.contains(&format!("fleet: {alias}: done")),
            "{alias}:\n{log}"
        );
        // The closing table (stdout) says it once.
        let row = log
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(alias))
            .unwrap_or_else(|| panic!("no row for {alias}:\n{log}"));
        assert!(
            row.contains(" ok ")
                || (row.contains(" interrupted ")
                    && row.contains("stopped and cleaned up")
                    && !row.contains("interrupted  interrupted")),
            "{row}"
        );
    }
    assert!(interrupted > 0, "Ctrl-C came too late:\n{log}");
    assert!(
        log.contains(&format!(
            "of 4 host(s) ran, 1 failed, {interrupted} interrupted;"
        )) && log.contains("--retry-failed` runs the failed and interrupted ones again"),
        "{log}"
    );
    // Only the lost host's directory is left (it could not be reached to
    // remove it); remove it as its reboot would.
    let left: Vec<String> = lab
        .remote_dirs()
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}\n{log}");
    std::fs::remove_dir_all(lab.tmp().join(&left[0])).unwrap();
    let running = sysgauge_testkit::processes_mentioning(&lab.tmp().display().to_string());
    assert!(
        running.is_empty(),
        "remote sysgauge left running: {running:?}\n{log}"
    );

    lab.hosts[3].start();
    let out = lab.fleet(&sb, &measuring_tiny_md5(&["--retry-failed"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(runs(&sb).len(), 4);
    assert_eq!(lab.remote_dirs(), before);
}

/// A plain host list's connection variables reach ssh as in the other
/// formats, and none becomes a tag: echo trusts only the key the list
/// names (not the one the ssh_config gives), and the key's path never
/// reaches the database.
#[test]
fn a_plain_lists_connection_variables_apply_and_are_no_tags() {
    if !available() {
        return;
    }
    let mut lab = Lab::with_hosts(5);
    lab.hosts[4].start();
    let sb = Sandbox::new();
    let key = lab.dir.path().join("other_ed25519");
    let list = lab.dir.path().join("hosts.txt");
    std::fs::write(
        &list,
        format!(
            "{} name=echo ansible_user=root ansible_port=22 ansible_ssh_private_key_file={} room=x\n",
            lab.hosts[4].address,
            key.display()
        ),
    )
    .unwrap();
    let out = lab.fleet(
        &sb,
        &measuring_tiny_md5(&["--inventory", &list.display().to_string()]),
    );
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert_eq!(out.status.code(), Some(0), "{log}\n{table}");
    assert!(table_row(&table, "echo").starts_with("root@"), "{table}");
    let id = table_row(&table, "echo")
        .split_whitespace()
        .nth(4)
        .unwrap()
        .to_string();
    let export = sysgauge(&sb, &["results", "export", &id]);
    let run: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let tags: Vec<&String> = run["tags"].as_object().unwrap().keys().collect();
    assert_eq!(tags, ["alias", "room"], "{}", run["tags"]);
    let db = std::fs::read(sb.db()).unwrap();
    let needle = key.display().to_string();
    assert!(
        !db.windows(needle.len()).any(|w| w == needle.as_bytes()),
        "the key's path is in the database"
    );
}

/// A host's finished run that the database refuses is kept in a file the
/// reason and the closing line name, and `sysgauge import` stores it; the
/// closing line says what was stored.
#[test]
fn a_run_the_database_refuses_is_kept_for_import() {
    if !available() {
        return;
    }
    let lab = Lab::running(3);
    let sb = Sandbox::new();
    let (alpha, charlie) = (lab.hosts[0].address.clone(), lab.hosts[2].address.clone());
    // The database, with its tables.
    let out = lab.fleet(&sb, &measuring_tiny_md5(&[alpha.as_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // It refuses charlie's runs from now on.
    let db = rusqlite::Connection::open(sb.db()).unwrap();
    db.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.host_name = 'charlie' \
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )
    .unwrap();
    let out = lab.fleet(
        &sb,
        &measuring_tiny_md5(&[alpha.as_str(), charlie.as_str()]),
    );
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert_eq!(out.status.code(), Some(1), "{log}\n{table}");
    let row = table_row(&table, &charlie);
    assert!(
        row.contains(" not stored ") && row.contains("refused by the test"),
        "{row}"
    );
    let kept = row
        .split("kept in ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .unwrap_or_else(|| panic!("{row}"))
        .to_string();
    assert!(std::path::Path::new(&kept).is_file(), "{kept}");
    assert!(
        row.contains(&format!("`sysgauge import {kept}` stores it")),
        "{row}"
    );
    assert!(
        log.contains("fleet: 1 of 2 host(s) ran, 1 measured but not stored; stored in "),
        "{log}"
    );
    assert!(log.contains("sysgauge import "), "{log}");
    assert_eq!(runs(&sb).len(), 2);
    // Not on the retry list: its measurement is kept.
    let retry = lab.fleet(&sb, &["--retry-failed"]);
    assert_eq!(retry.status.code(), Some(0), "{}", stderr_of(&retry));
    assert!(
        stderr_of(&retry).contains("nothing to retry"),
        "{}",
        stderr_of(&retry)
    );
    // Once the database takes it again, import completes the fleet.
    db.execute_batch("DROP TRIGGER refuse;").unwrap();
    drop(db);
    let imp = sysgauge(&sb, &["import", &kept]);
    assert!(imp.status.success(), "{}", stderr_of(&imp));
    let stored = runs(&sb);
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert!(
        stored.iter().any(|r| r["label"] == charlie.as_str()),
        "{stored:?}"
    );
}

/// A host past `--timeout` is stopped, cleaned up and reported; hosts can
/// be named on the command line.
#[test]
fn timeout_stops_and_cleans_up() {
    if !available() {
        return;
    }
    let lab = Lab::running(1);
    let sb = Sandbox::new();
    let t0 = Instant::now();
    let address = lab.hosts[0].address.clone();
    let out = lab.fleet(
        &sb,
        &[
            &address,
            "--timeout",
            "4",
            "--",
            "--profile",
            "standard",
            "--only",
            "hash.md5",
        ],
    );
    let (table, log) = (stdout_of(&out), stderr_of(&out));
    assert_eq!(out.status.code(), Some(1), "{log}\n{table}");
    assert!(table_row(&table, &address).contains("timed out"), "{table}");
    // Stopped at the timeout, not when the remote run would have ended.
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
    let running = sysgauge_testkit::processes_mentioning(&lab.tmp().display().to_string());
    assert!(
        running.is_empty(),
        "remote sysgauge left running: {running:?}\n{log}"
    );
    assert!(runs(&sb).is_empty());
}

/// The master connection offers curve25519-sha256 ahead of OpenSSH 9's
/// costly sntrup761 hybrid when nothing configures `KexAlgorithms`, and
/// leaves a configured list alone (`ssh` is wrapped to log its command
/// lines; the host is real).
#[test]
fn the_quick_key_exchange_unless_one_is_configured() {
    if !available() {
        return;
    }
    let lab = Lab::running(1);
    let sb = Sandbox::new();
    let wrap = tempfile::tempdir().unwrap();
    let log = wrap.path().join("ssh.log");
    let ssh = Command::new("sh")
        .args(["-c", "command -v ssh"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&ssh.stdout).trim().to_string();
    let wrapper = wrap.path().join("ssh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        wrap.path().display(),
        std::env::var("PATH").unwrap()
    );
    let address = lab.hosts[0].address.clone();
    let master = |extra: &[&str]| {
        let _ = std::fs::remove_file(&log);
        let mut args = extra.to_vec();
        args.push(&address);
        let args = measuring_tiny_md5(&args);
        let out = lab
            .fleet_cmd(&sb, &args)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
        let lines = std::fs::read_to_string(&log).unwrap();
        lines
            .lines()
            .find(|l| l.contains(" -M "))
            .unwrap_or_else(|| panic!("no master connection in:\n{lines}"))
            .to_string()
    };
    let quick = master(&[]);
    assert!(
        quick.contains("KexAlgorithms=curve25519-sha256,sntrup761"),
        "{quick}"
    );
    let configured = "KexAlgorithms=sntrup761x25519-sha512@openssh.com,curve25519-sha256";
    let kept = master(&["--ssh-option", configured]);
    assert!(kept.contains(configured), "{kept}");
    assert!(!kept.contains("KexAlgorithms=curve25519-sha256"), "{kept}");
    assert_eq!(runs(&sb).len(), 2);
    assert!(lab.remote_dirs().is_empty(), "{:?}", lab.remote_dirs());
}

#[test]
fn usage_errors_exit_2_before_connecting() {
    let sb = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ini");
    std::fs::write(&bad, "[web]\nh1 ansible_port=99999\n").unwrap();
    let empty_retry = dir.path().join("none.db");
    let me = assert_cmd::cargo::cargo_bin("sysgauge")
        .display()
        .to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--inventory".into(), bad.display().to_string()],
            format!("{}:2: '99999' is not a port number", bad.display()),
        ),
        (
            vec![
                "--inventory".into(),
                bad.display().to_string(),
                "--limit".into(),
                "db".into(),
            ],
            format!("{}:2:", bad.display()),
        ),
        (
            vec!["h1".into(), "--forks".into(), "0".into()],
            "--forks must be between 1 and 256".into(),
        ),
        (
            vec!["h1".into(), "--".into(), "compare".into()],
            "'compare' after `--` is not a measuring subcommand".into(),
        ),
        (
            vec!["h1".into(), "--".into(), "--json".into(), "x".into()],
            "must not set --json".into(),
        ),
        (
            vec!["-oProxyCommand=x".into()],
            "unexpected argument".into(),
        ),
        (vec!["--".into(), "run".into()], "name the hosts".into()),
        // The host's command line is parsed here, before any host is
        // contacted.
        (
            vec![
                "h1".into(),
                "--".into(),
                "--profile".into(),
                "nosuch".into(),
            ],
            "the host's command line `sysgauge run --profile nosuch`: invalid value 'nosuch' for '--profile <PROFILE>' [possible values: tiny, quick, standard, full]"
                .into(),
        ),
        (
            vec![
                "h1".into(),
                "--".into(),
                "--only".into(),
                "nosuchfamily".into(),
            ],
            "the host's command line `sysgauge run --only nosuchfamily`: --only: unknown family or benchmark 'nosuchfamily'".into(),
        ),
        // A family's own subcommand: its selection is checked against the
        // family's benchmarks, which the message lists.
        (
            vec![
                "h1".into(),
                "--".into(),
                "cpu".into(),
                "--skip".into(),
                "nosuchkernel".into(),
            ],
            "the host's command line `sysgauge cpu --skip nosuchkernel`: --skip: unknown family or benchmark 'nosuchkernel' (known here: cpu, or ".into(),
        ),
        (
            vec!["root@10.0.0.1:22:33".into()],
            "'root@10.0.0.1:22:33' is neither host:port nor an IPv6 address".into(),
        ),
        (
            vec![
                "h1".into(),
                "--binary".into(),
                "aarch64=/nonexistent".into(),
            ],
            "--binary aarch64=/nonexistent: No such file or directory".into(),
        ),
        // Special files are refused before anything reads them: /dev/zero
        // would fill memory, a FIFO block for ever.
        (
            vec!["--inventory".into(), "/dev/zero".into()],
            "--inventory /dev/zero: not a regular file (a character device)".into(),
        ),
        (
            vec!["h1".into(), "--binary".into(), "aarch64=/dev/zero".into()],
            "--binary aarch64=/dev/zero: not a regular file (a character device)".into(),
        ),
        (
            vec!["h1".into(), "--ssh-config".into(), "/dev/zero".into()],
            "--ssh-config /dev/zero: not a regular file (a character device)".into(),
        ),
        (
            vec!["h1".into(), "--limit".into(), "web".into()],
            "--limit web: no group or host named 'web'".into(),
        ),
        // A binary is checked against the name it is given under.
        (
            vec!["h1".into(), "--binary".into(), format!("aarch64={me}")],
            format!(
                "--binary aarch64={me}: it is an {} executable, not aarch64",
                std::env::consts::ARCH
            ),
        ),
        (
            vec![
                "h1".into(),
                "--binary".into(),
                format!("riscv64={}", bad.display()),
            ],
            format!("--binary riscv64={}: not an ELF executable", bad.display()),
        ),
    ];
    for (args, want) in cases {
        let out = sb
            .cmd()
            .args(["fleet", "run", "--db"])
            .arg(sb.db())
            .args(&args)
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: want {want:?}, got {err}");
    }
    let out = sb
        .cmd()
        .args(["fleet", "run", "--retry-failed", "--db"])
        .arg(&empty_retry)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("no fleet run has been recorded"),
        "{}",
        stderr_of(&out)
    );
}
