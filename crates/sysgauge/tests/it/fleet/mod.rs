//! `sysgauge fleet run` end to end against a small LAN of real hosts: six
//! network namespaces on a bridge, each with its own Debian `sshd` (own
//! host key, own /etc/machine-id and host name through private mount and
//! UTS namespaces), keys, known_hosts and ssh_config made for the test, and
//! the real binary driving the real `ssh` from the bridge's namespace.
//!
//! The hosts: alpha and bravo (both named `twin`, different machine-ids),
//! charlie: healthy, but its `zstd` does not work (so it gets the binary
//! uncompressed, the others compressed); delta: its sshd is killed before the run, then started
//! again for `--retry-failed`; echo: refuses the key; foxtrot: its `uname`
//! says riscv64 (a bind mount over /usr/bin/uname in its mount namespace),
//! for which there is no binary.
//!
//! Needs root (ip netns, mounts), iproute2, openssh-client and -server,
//! util-linux's unshare: without them the test says SKIPPED and passes,
//! unless SYSGAUGE_REQUIRE_ALL=1 (CI), where it fails. Every process it
//! starts lives in one of its namespaces and is killed when `Hub` drops,
//! on every exit path; every wait is bounded.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod ansible;
mod killed;
mod net;
mod postgres;
mod run;
mod site;
mod wave;

use crate::common::{stderr_of, stdout_of, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use sysgauge_testkit::netns::Hub;
use sysgauge_testkit::{is_root, on_path, output_of_success, require, ChildGuard};

const SSHD: &str = "/usr/sbin/sshd";
const NAMES: [&str; 6] = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
const HOSTNAMES: [&str; 6] = ["twin", "twin", "charlie", "delta", "echo", "foxtrot"];

/// What a lab host measures, after the fleet's own options: the tiny
/// profile's MD5 case, quick and still a stored run.
const TINY_MD5: [&str; 5] = ["--", "--profile", "tiny", "--only", "hash.md5"];

/// The fleet's own `options`, then [`TINY_MD5`] for the hosts.
fn measuring_tiny_md5<'a>(options: &[&'a str]) -> Vec<&'a str> {
    options.iter().copied().chain(TINY_MD5).collect()
}

fn available() -> bool {
    require(
        "fleet test needs root, ip, unshare, ssh, ssh-keygen and sshd",
        is_root()
            && on_path("ip")
            && on_path("unshare")
            && on_path("ssh")
            && on_path("ssh-keygen")
            && Path::new(SSHD).is_file(),
        "run as root; apt-get install -y iproute2 util-linux openssh-client openssh-server",
    )
}

fn keygen(path: &Path) -> String {
    output_of_success(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "fleet-test", "-f"])
            .arg(path),
    );
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    public
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One test host: its directory (config, keys, machine-id) and its sshd.
struct TestHost {
    dir: PathBuf,
    ns: String,
    address: String,
    hostname: String,
    /// Programs replaced in its mount namespace: (fake, real path).
    fakes: Vec<(PathBuf, &'static str)>,
    sshd: Option<ChildGuard>,
}

impl TestHost {
    fn start(&mut self) {
        let d = self.dir.display();
        // sshd started as root needs its privilege separation directory,
        // which only its packaged service creates.
        // Each host also gets a plain root shell profile: every ssh
        // session's bash reads ~/.bashrc (Debian's sshd rule), and the
        // build machine's own runs `pyenv init`, which would add its cost
        // (about 0.2 s a session) to every fleet step the lab times.
        let mut script = format!(
            "mkdir -p -m 0755 /run/sshd && hostname {h} && mount --bind {d}/machine-id /etc/machine-id \
             && {{ ! test -e /root/.bashrc || mount --bind {d}/bashrc /root/.bashrc; }}",
            h = self.hostname
        );
        for (fake, real) in &self.fakes {
            script.push_str(&format!(" && mount --bind {} {real}", fake.display()));
        }
        script.push_str(&format!(" && exec {SSHD} -D -e -f {d}/sshd_config"));
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns])
            .args(["unshare", "--uts", "--mount", "--propagation", "private"])
            .args(["sh", "-c", &script]);
        self.sshd = Some(ChildGuard::spawn_ready(
            &mut cmd,
            "Server listening on",
            Duration::from_secs(20),
        ));
    }

    fn stop(&mut self) {
        self.sshd = None;
        // Its connections' processes too: the host is gone.
        Hub::kill_all_in(&self.ns);
    }
}

struct Lab {
    // Dropped last: kills everything in the namespaces.
    hub: Hub,
    dir: tempfile::TempDir,
    hosts: Vec<TestHost>,
}

/// Host `i`'s inventory name: the six named hosts, then `h06`, `h07` …
fn name_of(i: usize) -> String {
    NAMES
        .get(i)
        .map(|n| n.to_string())
        .unwrap_or_else(|| format!("h{i:02}"))
}

impl Lab {
    fn new() -> Lab {
        Lab::with_hosts(NAMES.len())
    }

    /// [`Lab::new`] with sshd started on its first `n` hosts.
    fn running(n: usize) -> Lab {
        let mut lab = Lab::new();
        lab.start_first(n);
        lab
    }

    /// Starts sshd on the first `n` hosts.
    fn start_first(&mut self, n: usize) {
        for h in self.hosts.iter_mut().take(n) {
            h.start();
        }
    }

    /// The six hosts above and, beyond them, `n - 6` more healthy ones
    /// (group `scale` of the inventory).
    fn with_hosts(n: usize) -> Lab {
        let hub = Hub::new("fl", 213, n);
        let dir = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .unwrap();
        let client_key = dir.path().join("id_ed25519");
        let client_public = keygen(&client_key);
        let other_public = keygen(&dir.path().join("other_ed25519"));
        let fake = |name: &str, script: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, script).unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            p
        };
        let fake_uname = fake("fake-uname", "#!/bin/sh\necho riscv64\n");
        let broken_zstd = fake(
            "broken-zstd",
            "#!/bin/sh\necho 'zstd: broken' >&2; exit 1\n",
        );
        // The hosts' temporary directory: each lab its own (tests run in
        // parallel and the hosts share the file system).
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let mut known_hosts = String::new();
        let mut hosts = Vec::new();
        for i in 0..n {
            let name = name_of(i);
            let hd = dir.path().join(&name);
            std::fs::create_dir(&hd).unwrap();
            let host_public = keygen(&hd.join("host_key"));
            let address = hub.address(i);
            known_hosts.push_str(&format!("{address} {host_public}\n"));
            // echo trusts another key than the client's.
            let authorized = if name == "echo" {
                &other_public
            } else {
                &client_public
            };
            std::fs::write(hd.join("authorized_keys"), format!("{authorized}\n")).unwrap();
            std::fs::write(hd.join("machine-id"), format!("{:032x}\n", 0xf1ee7000 + i)).unwrap();
            std::fs::write(hd.join("bashrc"), "# a lab host's plain shell profile\n").unwrap();
            let d = hd.display();
            std::fs::write(
                hd.join("sshd_config"),
                format!(
                    "Port 22\nListenAddress {address}\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                     AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
                     PubkeyAuthentication yes\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nUseDNS no\n\
                     PrintMotd no\nMaxStartups 50\nLogLevel VERBOSE\nSetEnv TMPDIR={tmp}\n",
                    tmp = dir.path().join("tmp").display()
                ),
            )
            .unwrap();
            hosts.push(TestHost {
                dir: hd,
                ns: hub.hosts[i].clone(),
                address,
                hostname: HOSTNAMES
                    .get(i)
                    .map(|h| h.to_string())
                    .unwrap_or_else(|| name.clone()),
                fakes: match name.as_str() {
                    "foxtrot" => vec![(fake_uname.clone(), "/usr/bin/uname")],
                    "charlie" => vec![(broken_zstd.clone(), "/usr/bin/zstd")],
                    _ => Vec::new(),
                },
                sshd: None,
            });
        }
        std::fs::write(dir.path().join("known_hosts"), known_hosts).unwrap();
        std::fs::write(
            dir.path().join("ssh_config"),
            format!(
                "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
                 UserKnownHostsFile {}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n",
                client_key.display(),
                dir.path().display()
            ),
        )
        .unwrap();
        Lab { hub, dir, hosts }.with_inventory()
    }

    /// Writes the INI inventory of the six named hosts (and the `scale`
    /// ones); a smaller lab gets none.
    fn with_inventory(self) -> Lab {
        let (hosts, n) = (&self.hosts, self.hosts.len());
        if n < NAMES.len() {
            return self;
        }
        // An Ansible INI inventory: groups, children, group vars, host vars.
        let mut inv = String::from("[lab]\n");
        for (i, name) in NAMES.iter().enumerate().take(3) {
            inv.push_str(&format!(
                "{name} ansible_host={} room=r{i}\n",
                hosts[i].address
            ));
        }
        inv.push_str(&format!(
            "[flaky]\ndelta ansible_host={}\n[broken]\necho ansible_host={}\nfoxtrot ansible_host={}\n\
             [lab:vars]\nsite=lab\n[all:children]\nlab\nflaky\nbroken\n",
            hosts[3].address, hosts[4].address, hosts[5].address
        ));
        if n > NAMES.len() {
            inv.push_str("[scale]\n");
            for (i, h) in hosts.iter().enumerate().skip(NAMES.len()) {
                inv.push_str(&format!("{} ansible_host={}\n", name_of(i), h.address));
            }
        }
        std::fs::write(self.dir.path().join("inventory.ini"), inv).unwrap();
        self
    }

    /// `sysgauge fleet run` (and `args`) inside the hub namespace.
    fn fleet(&self, sb: &Sandbox, args: &[&str]) -> std::process::Output {
        let t0 = Instant::now();
        let out = self.fleet_cmd(sb, args).output().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(600));
        out
    }

    /// The command of [`Lab::fleet`], not started.
    fn fleet_cmd(&self, sb: &Sandbox, args: &[&str]) -> Command {
        self.fleet_cmd_on(sb.db().as_os_str(), args)
    }

    /// [`Lab::fleet_cmd`] storing into `db` (a path or a URL).
    fn fleet_cmd_on(&self, db: &std::ffi::OsStr, args: &[&str]) -> Command {
        self.fleet_action(db, "run", args)
    }

    /// `sysgauge fleet ACTION` (and `args`) inside the hub namespace,
    /// storing into `db`.
    fn fleet_action(&self, db: &std::ffi::OsStr, action: &str, args: &[&str]) -> Command {
        // SYSGAUGE_FLEET_BINARY: measure with another build (the release
        // binary, for docs/performance.md).
        let bin = std::env::var_os("SYSGAUGE_FLEET_BINARY")
            .map(PathBuf::from)
            .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("sysgauge"));
        let mut cmd = Command::new("ip");
        // Its own data directory: the retry state of a fleet into
        // PostgreSQL lives there, never in the user's.
        cmd.env("XDG_DATA_HOME", self.xdg());
        cmd.args(["netns", "exec", &self.hub.hub])
            .arg(bin)
            .args(["fleet", action, "--db"])
            .arg(db)
            .arg("--ssh-config")
            .arg(self.dir.path().join("ssh_config"))
            .args(["--connect-timeout", "5"]);
        if !args.contains(&"--timeout") {
            cmd.args(["--timeout", "300"]);
        }
        cmd.args(args);
        cmd
    }

    /// The fleet's XDG_DATA_HOME.
    fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    fn inventory(&self) -> String {
        self.dir.path().join("inventory.ini").display().to_string()
    }

    /// Temporary directories the fleet put on this lab's hosts (their
    /// TMPDIR, which they share).
    fn remote_dirs(&self) -> Vec<String> {
        remote_dirs_in(&self.tmp())
    }

    fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }
}

fn remote_dirs_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with("sysgauge-fleet."))
                .collect()
        })
        .unwrap_or_default()
}

/// Sends `signal` to the process group `child` leads (started with
/// `process_group(0)`): what a terminal does on Ctrl-C, to sysgauge and
/// every child of its.
fn signal_group(child: &ChildGuard, signal: i32) {
    let pid = i32::try_from(child.pid()).unwrap();
    // SAFETY: kill(2) with a process group id; the group's leader is our
    // unreaped child, so the id cannot have been reused.
    unsafe { libc::kill(-pid, signal) };
}

fn table_row<'a>(table: &'a str, alias: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(alias))
        .unwrap_or_else(|| panic!("no row for {alias}:\n{table}"))
}

/// The real binary with `args` on the sandbox's database.
fn sysgauge(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.cmd()
        .args(args)
        .arg("--db")
        .arg(sb.db())
        .output()
        .unwrap()
}

fn runs(sb: &Sandbox) -> Vec<serde_json::Value> {
    let out = sysgauge(sb, &["results", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    serde_json::from_str(&stdout_of(&out)).unwrap()
}
