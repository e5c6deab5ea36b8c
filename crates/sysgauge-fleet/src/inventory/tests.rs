//! Inventory parsing: every format, variable precedence, `--limit`, errors
//! with file:line, and arbitrary text never panicking.

use super::*;
use proptest::prelude::*;

fn ok(text: &str) -> Inventory {
    parse("inv", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn error(text: &str) -> String {
    match parse("inv", text) {
        Ok(i) => panic!("accepted: {i:?}\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn host<'a>(inv: &'a Inventory, name: &str) -> &'a Host {
    inv.hosts
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("no host {name} in {inv:?}"))
}

#[test]
fn plain_list() {
    let inv = ok("# lab machines\n\
                  pi@192.168.1.20 name=kitchen room=kitchen\n\
                  \n\
                  nas.lan:2222   # the file server\n\
                  root@[fe80::1%eth0]:22 name=v6\n\
                  fe80::2 name=v6-bare\n");
    assert_eq!(inv.hosts.len(), 4);
    let k = host(&inv, "kitchen");
    assert_eq!(
        (k.user.as_deref(), k.address.as_str(), k.port),
        (Some("pi"), "192.168.1.20", None)
    );
    assert_eq!(k.vars.get("room").map(String::as_str), Some("kitchen"));
    assert_eq!(k.target(), "pi@192.168.1.20");
    let nas = host(&inv, "nas.lan");
    assert_eq!(nas.port, Some(2222));
    assert_eq!(nas.target(), "nas.lan:2222");
    let v6 = host(&inv, "v6");
    assert_eq!((v6.address.as_str(), v6.port), ("fe80::1%eth0", Some(22)));
    assert_eq!(v6.target(), "root@[fe80::1%eth0]:22");
    assert_eq!(host(&inv, "v6-bare").address, "fe80::2");
}

/// The plain list once kept `ansible_user`, `ansible_port` and the key
/// file as tags (a private key's path in the results database) and
/// reached the host as ssh_config said.
#[test]
fn plain_list_connection_variables_apply_and_are_no_tags() {
    let inv = ok("10.0.0.1 name=a ansible_user=pi ansible_port=2222 \
                  ansible_ssh_private_key_file=/k/id room=x ansible_become=yes\n\
                  b ansible_host=10.0.0.2 ansible_ssh_user=ops ansible_private_key_file=/k/b\n");
    let a = host(&inv, "a");
    assert_eq!(
        (
            a.user.as_deref(),
            a.address.as_str(),
            a.port,
            a.identity_file.as_deref()
        ),
        (Some("pi"), "10.0.0.1", Some(2222), Some("/k/id"))
    );
    let b = host(&inv, "b");
    assert_eq!(
        (
            b.user.as_deref(),
            b.address.as_str(),
            b.identity_file.as_deref()
        ),
        (Some("ops"), "10.0.0.2", Some("/k/b"))
    );
    assert_eq!(a.vars.keys().collect::<Vec<_>>(), ["room"]);
    assert!(b.vars.is_empty(), "{:?}", b.vars);
}

/// In no format does an `ansible_*` variable become a tag.
#[test]
fn no_connection_variable_is_a_tag_in_any_format() {
    let key = "ansible_ssh_private_key_file=/secret/id";
    for text in [
        format!("h {key} ansible_user=u t=1\n"),
        format!("[g]\nh {key} ansible_user=u t=1\n[g:vars]\n{key}\nansible_password=pw\n"),
        "all:\n  vars: {ansible_ssh_private_key_file: /secret/id, ansible_password: pw}\n  hosts:\n    h: {ansible_user: u, t: 1}\n".to_string(),
    ] {
        let inv = ok(&text);
        let h = host(&inv, "h");
        assert_eq!(h.identity_file.as_deref(), Some("/secret/id"), "{text}");
        assert_eq!(h.user.as_deref(), Some("u"), "{text}");
        assert_eq!(h.vars.keys().collect::<Vec<_>>(), ["t"], "{text}");
    }
}

#[test]
fn plain_list_errors_name_the_line() {
    for (text, want) in [
        ("a\nb:99999\n", "inv:2: '99999' is not a port number"),
        ("a\nb:0\n", "inv:2: '0' is not a port number"),
        (
            "a name=x\nb name=x\n",
            "inv:2: the name 'x' is already used on line 1",
        ),
        ("a\na\n", "inv:2: the name 'a' is already used on line 1"),
        ("a junk\n", "inv:1: 'junk' is not key=value"),
        ("name=x\n", "inv:1: a line starts with the host"),
        ("-oProxyCommand=x\n", "inv:1: a line starts with the host"),
        ("-oProxy\n", "starts with '-'"),
        ("a k=v k=w\n", "inv:1: k is given twice"),
        ("a b@c@d\n", "inv:1: 'b@c@d' is not key=value"),
        ("@h\n", "inv:1: '' is not a user name"),
        ("[::1\n", "inv:1: '[::1': '[' without ']'"),
        ("a wei rd=1\n", "inv:1: 'wei' is not key=value"),
        ("a k!=1\n", "is not a variable name"),
        ("u@a ansible_user=v\n", "inv:1: the user is given twice"),
        (
            "root@10.0.0.1:22:33\n",
            "inv:1: 'root@10.0.0.1:22:33' is neither host:port nor an IPv6 address",
        ),
        ("a:22 ansible_port=23\n", "inv:1: the port is given twice"),
        ("a ansible_port=x\n", "inv:1: 'x' is not a port number"),
        ("a ansible_user=-x\n", "inv:1: '-x' is not a user name"),
        ("# nothing\n\n", "inv: no hosts in the inventory"),
    ] {
        let e = error(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

const INI: &str = "\
ungrouped-host ansible_host=10.0.0.9

[web]
web[01:02] ansible_user=deploy
db1:2200 role=primary

[db]
db1 ansible_host=10.0.0.5 role=replica-set

[prod:children]
web
db

[prod:vars]
site=lab
ansible_port=2201
; a comment
[web:vars]
site=\"web lab\"
tier=front
";

#[test]
fn ini_groups_children_and_vars() {
    let inv = ok(INI);
    let names: Vec<&str> = inv.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["ungrouped-host", "web01", "web02", "db1"]);
    assert_eq!(inv.groups, ["ungrouped", "web", "db", "prod"]);
    let u = host(&inv, "ungrouped-host");
    assert_eq!(u.address, "10.0.0.9");
    assert!(u.groups.is_empty(), "{u:?}");
    let w = host(&inv, "web01");
    assert_eq!(w.user.as_deref(), Some("deploy"));
    // prod's port, web's site (child group beats parent).
    assert_eq!(w.port, Some(2201));
    assert_eq!(w.vars.get("site").map(String::as_str), Some("web lab"));
    assert_eq!(w.vars.get("tier").map(String::as_str), Some("front"));
    assert_eq!(w.groups, ["prod", "web"]);
    // In two groups: the host's own port beats group vars; its own
    // variables from both lines, the later line last.
    let db = host(&inv, "db1");
    assert_eq!(db.address, "10.0.0.5");
    assert_eq!(db.port, Some(2200));
    assert_eq!(db.vars.get("role").map(String::as_str), Some("replica-set"));
    assert_eq!(db.groups, ["db", "prod", "web"]);
    // Ansible's own connection variables are no tags.
    assert!(!w.vars.contains_key("ansible_user"));

    let limited: Vec<String> = inv
        .limit("db")
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|h| h.name)
        .collect();
    assert_eq!(limited, ["db1"]);
    assert_eq!(inv.limit("prod").map(|h| h.len()), Ok(3));
    assert_eq!(inv.limit("web02,ungrouped-host").map(|h| h.len()), Ok(2));
    assert_eq!(inv.limit("all").map(|h| h.len()), Ok(4));
    let e = inv
        .limit("nope")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains(
            "--limit nope: no group or host named 'nope' (groups: ungrouped, web, db, prod)"
        ),
        "{e}"
    );
}

#[test]
fn ini_errors_name_the_line() {
    for (text, want) in [
        (
            "[db]\nx\n[web\nh\n",
            "inv:3: '[web' is not a [section] header",
        ),
        ("[web:stuff]\nh\n", "inv:1: [web:stuff]: a section is"),
        ("[web]\nh port\n", "inv:2: 'port' is not key=value"),
        (
            "[web]\nh ansible_port=x\n",
            "inv:2: 'x' is not a port number",
        ),
        ("[web]\nh a=\"x\n", "inv:2: unclosed \""),
        (
            "[web:vars]\nnovalue\n[web]\nh\n",
            "inv:2: 'novalue' is not key=value",
        ),
        (
            "[a:children]\nb c\n",
            "inv:2: [a:children] lists one group name a line",
        ),
        (
            "[a:children]\na\n",
            "inv:2: group a cannot be its own child",
        ),
        ("[w w]\nh\n", "inv:1: 'w w' is not a group name"),
        (
            "[web]\nh\n[all:children]\nweb\nwbe\n",
            "inv:5: [all:children] names group 'wbe', which no [wbe] section defines",
        ),
        ("[web]\nh[5:1]\n", "inv:2: 'h[5:1]': the range must go up"),
        (
            "[web]\nh ansible_host=-x\n",
            "inv:2: host address '-x' starts with '-'",
        ),
        (
            "[web]\nk=v\n",
            "inv:2: 'k=v': a host line starts with the host name",
        ),
        ("[web]\n", "inv: no hosts in the inventory"),
    ] {
        let e = error(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

const YAML: &str = "\
# lab
all:
  vars:
    site: lab
  hosts:
    pi4:
      ansible_host: 192.168.1.20
      ansible_user: pi
      ram_gb: 4
  children:
    servers:
      vars:
        site: rack
        ansible_port: 2222
      hosts:
        nas:
        db:
          ansible_port: 22
      children:
        backup:
          hosts:
            tape: {ansible_host: 10.1.1.1, managed: true}
";

#[test]
fn yaml_groups_children_and_vars() {
    let inv = ok(YAML);
    let names: Vec<&str> = inv.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["pi4", "nas", "db", "tape"]);
    let pi = host(&inv, "pi4");
    assert_eq!(pi.target(), "pi@192.168.1.20");
    assert_eq!(pi.vars.get("ram_gb").map(String::as_str), Some("4"));
    assert_eq!(pi.vars.get("site").map(String::as_str), Some("lab"));
    let nas = host(&inv, "nas");
    assert_eq!((nas.address.as_str(), nas.port), ("nas", Some(2222)));
    assert_eq!(nas.vars.get("site").map(String::as_str), Some("rack"));
    assert_eq!(host(&inv, "db").port, Some(22));
    let tape = host(&inv, "tape");
    assert_eq!(tape.groups, ["backup", "servers"]);
    assert_eq!(tape.port, Some(2222));
    assert_eq!(tape.vars.get("managed").map(String::as_str), Some("true"));
    assert_eq!(inv.limit("servers").map(|h| h.len()), Ok(3));
    assert_eq!(inv.limit("backup").map(|h| h.len()), Ok(1));
}

#[test]
fn yaml_errors_name_the_line_or_the_key() {
    for (text, want) in [
        ("all:\n  hosts:\n    a: [\n", "inv:"),
        (
            "all:\n  hosts: [a, b]\n",
            "inv: all.hosts: expected a mapping",
        ),
        ("all:\n  hostz:\n    a:\n", "inv: all.hostz: unknown key"),
        (
            "all:\n  hosts:\n    a:\n      ansible_port: 70000\n",
            "inv: all.hosts.a.ansible_port: '70000' is not a port number",
        ),
        (
            "all:\n  hosts:\n    a:\n      tags: [x]\n",
            "inv: all.hosts.a.tags: a variable must be a single value",
        ),
        (
            "all:\n  hosts:\n    a: 5\n",
            "inv: all.hosts.a: a host maps to its variables",
        ),
        (
            "---\n- a\n- b\n",
            "inv: (top): expected a mapping of groups",
        ),
        ("all: [a, b]\n", "inv: all: a group is a mapping"),
        (
            "all:\n  children:\n    all:\n",
            "group all cannot be its own child",
        ),
        ("all:\n", "inv: no hosts in the inventory"),
    ] {
        let e = error(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
    // A syntax error carries its line.
    let e = error("all:\n  hosts:\n    a: {x: 1\n    b:\n");
    assert!(e.starts_with("inv:"), "{e}");
    assert!(e.contains("not valid YAML"), "{e}");
}

#[test]
fn yaml_cycles_and_deep_nesting_end() {
    // b is a child of a and a of b: parsed once each, no endless recursion.
    let inv = ok("all:\n  children:\n    a:\n      hosts: {h1: }\n      children:\n        b:\n          hosts: {h2: }\n          children:\n            a:\n");
    assert_eq!(inv.hosts.len(), 2);
    let mut deep = String::from("all:\n");
    let mut indent = String::from("  ");
    for i in 0..40 {
        deep.push_str(&format!("{indent}children:\n{indent}  g{i}:\n"));
        indent.push_str("    ");
    }
    deep.push_str(&format!("{indent}hosts: {{h: }}\n"));
    assert!(error(&deep).contains("nested deeper than"));
}

#[test]
fn formats_are_told_apart_by_content() {
    assert_eq!(sniff("# hosts\nall:\n  hosts:\n"), Format::Yaml);
    assert_eq!(sniff("---\nall: {}\n"), Format::Yaml);
    assert_eq!(sniff("h1\n[web]\nh2\n"), Format::Ini);
    assert_eq!(sniff("all: {hosts: {a: }}\n"), Format::Yaml);
    assert_eq!(sniff("pi@h1:22 name=x\nh2\n"), Format::Plain);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary text never panics, whatever format it is taken for.
    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,300}") {
        let _ = parse("f", &text);
        let _ = parse_plain("f", &text);
        let _ = parse_ini("f", &text);
        let _ = parse_yaml("f", &text);
    }

    /// Text made of inventory-like pieces reaches deeper into the parsers.
    #[test]
    fn inventory_like_text_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("[web]\n"), Just("[web:children]\n"), Just("[web:vars]\n"),
                Just("[db]\n"), Just("all:\n"), Just("  hosts:\n"), Just("    h1:\n"),
                Just("  children:\n"), Just("    web:\n"), Just("      vars: {a: 1}\n"),
                Just("h[01:03] ansible_port=22\n"), Just("u@h:2222 name=x k=v\n"),
                Just("db\n"), Just("a=b\n"), Just("[::1]:22\n"), Just("h\"q\n"),
                Just("ansible_host=\n"), Just("# c\n"), Just("x[a:c][1:2]\n"),
                Just("- a\n"), Just("web\n"), Just("\t\n"),
            ],
            0..24,
        )
    ) {
        let text: String = parts.concat();
        if let Ok(inv) = parse("f", &text) {
            // What parses is usable: every host has a name and an address
            // ssh can be given, and names are unique.
            for h in &inv.hosts {
                prop_assert!(!h.name.is_empty());
                prop_assert!(check_address(&h.address).is_ok());
            }
            let mut names: Vec<&str> = inv.hosts.iter().map(|h| h.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            prop_assert_eq!(names.len(), inv.hosts.len());
            for g in &inv.groups {
                let _ = inv.limit(g);
            }
        }
    }
}

/// `--inventory /dev/zero` once grew until the kernel killed it, and a
/// FIFO blocked for ever: only a regular file is read.
#[test]
fn an_inventory_that_is_no_regular_file_is_refused() {
    let shown = |p: &Path| match load(p) {
        Ok(i) => panic!("accepted: {i:?}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        shown(Path::new("/dev/zero")),
        "--inventory /dev/zero: not a regular file (a character device)"
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("hosts");
    sysgauge_testkit::mkfifo(&fifo);
    assert_eq!(
        shown(&fifo),
        format!(
            "--inventory {}: not a regular file (a FIFO (named pipe))",
            fifo.display()
        )
    );
    let good = dir.path().join("hosts.txt");
    std::fs::write(&good, "web1\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(load(&good).map(|i| i.hosts.len()), Ok(1));
}

#[test]
fn rated_mhz_is_checked_in_every_format() {
    let inv = ok("box1 rated_mhz=4500\nbox2\n");
    assert_eq!(host(&inv, "box1").rated_mhz(), Some(4500.0));
    assert_eq!(host(&inv, "box2").rated_mhz(), None);
    let ini = ok("[pis]\npi1\n[pis:vars]\nrated_mhz=1800\n");
    assert_eq!(host(&ini, "pi1").rated_mhz(), Some(1800.0));
    let yaml = ok("all:\n  hosts:\n    vm1:\n      rated_mhz: 2600\n");
    assert_eq!(host(&yaml, "vm1").rated_mhz(), Some(2600.0));
    for bad in [
        "box1 rated_mhz=4.5GHz\n",
        "[pis]\npi1 rated_mhz=0\n",
        "all:\n  hosts:\n    vm1:\n      rated_mhz: fast\n",
    ] {
        let e = error(bad);
        assert!(e.contains("rated_mhz") && e.contains("in MHz"), "{e}");
    }
}
