//! The Ansible role (contrib/ansible) against two of the lab's hosts.

use super::{available, runs, sysgauge, Lab};
use crate::common::{stderr_of, stdout_of, Sandbox};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use sysgauge_testkit::{on_path, require};

/// The Ansible role (contrib/ansible) with Debian's ansible-core against
/// two of the lab's hosts: each host's record comes home and is imported
/// with its alias and groups, the hosts keep nothing, and running the
/// playbook twice stores each run once per run.
#[test]
fn ansible_role_measures_fetches_and_imports() {
    if !available()
        || !require(
            "the Ansible role test needs ansible-playbook",
            on_path("ansible-playbook"),
            "apt-get install ansible-core",
        )
    {
        return;
    }
    let lab = Lab::running(2);
    let sb = Sandbox::new();
    let d = lab.dir.path();
    let inventory = d.join("ansible.ini");
    std::fs::write(
        &inventory,
        format!(
            "[rack1]\nalpha ansible_host={}\n[rack2]\nbravo ansible_host={}\n\
             [all:vars]\nansible_user=root\nansible_python_interpreter=/usr/bin/python3\n\
             ansible_ssh_common_args='-F {}/ssh_config'\n",
            lab.hosts[0].address,
            lab.hosts[1].address,
            d.display()
        ),
    )
    .unwrap();
    let playbook = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/ansible/sysgauge.yml");
    let results = d.join("records");
    let play = || {
        let t0 = Instant::now();
        let out = Command::new("ip")
            .args(["netns", "exec", &lab.hub.hub, "ansible-playbook", "-i"])
            .arg(&inventory)
            .arg(&playbook)
            .arg("-e")
            .arg(format!(
                "sysgauge_binary={} sysgauge_db={} sysgauge_results_dir={}",
                assert_cmd::cargo::cargo_bin("sysgauge").display(),
                sb.db().display(),
                results.display()
            ))
            .args([
                "-e",
                "sysgauge_args='run --profile tiny --only hash.md5 --no-wait'",
            ])
            .env("ANSIBLE_LOCAL_TEMP", d.join("ansible-local"))
            .env("ANSIBLE_REMOTE_TMP", d.join("tmp/ansible-remote"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
            .output()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(300));
        assert!(
            out.status.success(),
            "{}\n{}",
            stdout_of(&out),
            stderr_of(&out)
        );
    };
    play();
    let stored = runs(&sb);
    assert_eq!(stored.len(), 2, "{stored:?}");
    for (alias, group) in [("alpha", "rack1"), ("bravo", "rack2")] {
        assert!(results.join(format!("{alias}.json")).is_file());
        let out = sysgauge(&sb, &["results", "export", alias, "--format", "json"]);
        assert!(out.status.success(), "{}", stderr_of(&out));
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["tags"]["alias"], alias, "{run}");
        assert_eq!(run["tags"]["groups"], group, "{run}");
        assert_eq!(run["host"]["hostname"], "twin");
    }
    let left: Vec<String> = std::fs::read_dir(lab.tmp())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("sysgauge"))
        .collect();
    assert!(left.is_empty(), "left on the hosts: {left:?}");
    // Two machines named `twin` in two groups.
    let grouped = sysgauge(&sb, &["compare", "--group-by", "group"]);
    assert!(grouped.status.success(), "{}", stderr_of(&grouped));
    assert!(
        stdout_of(&grouped).starts_with("2 hosts in 2 groups by group."),
        "{}",
        stdout_of(&grouped)
    );
    // Again: two new runs; the records of the first play are not stored twice.
    play();
    assert_eq!(runs(&sb).len(), 4);
}
