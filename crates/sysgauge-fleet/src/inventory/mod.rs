//! Inventories: which hosts a fleet run reaches, how to reach each, and what
//! to tag its results with.
//!
//! Three formats, told apart by content (a file need not have the right
//! extension):
//! - a plain host list (`plain.rs`): `[user@]host[:port] [name=ALIAS]
//!   [key=value…]` per line;
//! - an Ansible INI inventory (`ini.rs`): `[group]`, `[group:children]`,
//!   `[group:vars]` sections;
//! - an Ansible YAML inventory (`yaml.rs`): `all: {hosts, vars, children}`.
//!
//! All three end as the same flat list of [`Host`]s with their groups and
//! merged variables. Every problem is an [`InventoryError`] naming the file,
//! the line where one is known (YAML structure errors name the key path
//! instead), and what is wrong; the parsers never panic (property tests feed
//! them arbitrary text).

mod ini;
mod plain;
mod yaml;

pub use ini::parse_ini;
pub use plain::{parse_address, parse_plain};
pub use yaml::parse_yaml;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// One host to measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// The inventory name (Ansible's inventory hostname, the plain list's
    /// `name=`): the host's alias, unique within the inventory.
    pub name: String,
    /// What ssh connects to (`ansible_host`, or the name itself).
    pub address: String,
    /// The login user (`ansible_user`), else ssh_config decides.
    pub user: Option<String>,
    /// The port (`ansible_port`), else ssh_config decides.
    pub port: Option<u16>,
    /// A private key file (`ansible_ssh_private_key_file`).
    pub identity_file: Option<String>,
    /// Every other variable (group variables merged, the host's own last);
    /// these become run tags.
    pub vars: BTreeMap<String, String>,
    /// The groups the host is in (directly or through children), sorted;
    /// `all` is implied and not listed.
    pub groups: Vec<String>,
}

impl Host {
    /// A host reached at `address` under its own name.
    pub fn new(address: &str) -> Host {
        Host {
            name: address.to_string(),
            address: address.to_string(),
            user: None,
            port: None,
            identity_file: None,
            vars: BTreeMap::new(),
            groups: Vec::new(),
        }
    }

    /// `user@address:port` as far as known, for tables and messages.
    pub fn target(&self) -> String {
        let mut s = String::new();
        if let Some(u) = &self.user {
            s.push_str(u);
            s.push('@');
        }
        if self.port.is_some() && self.address.contains(':') {
            s.push_str(&format!("[{}]", self.address));
        } else {
            s.push_str(&self.address);
        }
        if let Some(p) = self.port {
            s.push_str(&format!(":{p}"));
        }
        s
    }

    /// Applies one variable as Ansible reads it: connection variables set
    /// the address, user, port or key; anything else is kept as a tag.
    pub(crate) fn set_var(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "ansible_host" | "ansible_ssh_host" => {
                check_address(value)?;
                self.address = value.to_string();
            }
            "ansible_user" | "ansible_ssh_user" => {
                check_user(value)?;
                self.user = Some(value.to_string());
            }
            "ansible_port" | "ansible_ssh_port" => {
                self.port = Some(parse_port(value)?);
            }
            "ansible_ssh_private_key_file" | "ansible_private_key_file" => {
                self.identity_file = Some(value.to_string());
            }
            // Other connection settings of Ansible's (become, python,
            // connection type) mean nothing here, and are no tags.
            k if k.starts_with("ansible_") => {}
            _ => {
                check_tag(key, value)?;
                self.vars.insert(key.to_string(), value.to_string());
            }
        }
        Ok(())
    }
}

/// Checks one variable as [`Host`] would apply it (for errors at the line
/// that defines it).
pub(crate) fn check_var(key: &str, value: &str) -> Result<(), String> {
    Host::new("check").set_var(key, value)
}

/// A whole inventory: its hosts in file order, and its groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    pub hosts: Vec<Host>,
    /// Every group name the file defines (for `--limit` and its errors).
    pub groups: Vec<String>,
}

/// What is wrong with an inventory or a host list.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InventoryError {
    #[error("{file}:{line}: {what}")]
    AtLine {
        file: String,
        line: usize,
        what: String,
    },
    #[error("{file}: {what}")]
    InFile { file: String, what: String },
    #[error("--limit {pattern}: {what}")]
    Limit { pattern: String, what: String },
    /// Not a regular file, too large, or unreadable (the message names
    /// the file and what it is).
    #[error("{0}")]
    File(String),
}

impl InventoryError {
    /// The maker of errors at line `line` of `file`.
    pub(crate) fn at(file: &str, line: usize) -> impl Fn(String) -> InventoryError + '_ {
        move |what| InventoryError::AtLine {
            file: file.to_string(),
            line,
            what,
        }
    }
}

/// The formats an inventory can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Ini,
    Yaml,
}

/// Tells the format from the text: YAML when the first meaningful line is
/// a mapping key or document marker (`all:`, `---`), INI when any line is a
/// `[section]`, else the plain list.
pub fn sniff(text: &str) -> Format {
    let meaningful = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'));
    let mut ini = false;
    for (i, line) in meaningful.enumerate() {
        if i == 0 && (line == "---" || yaml_key(line)) {
            return Format::Yaml;
        }
        if line.starts_with('[') && line.ends_with(']') {
            ini = true;
        }
    }
    if ini {
        Format::Ini
    } else {
        Format::Plain
    }
}

/// `name:` alone or followed by a space: a YAML mapping key (a plain
/// list's `host:22` has no space after its colon).
fn yaml_key(line: &str) -> bool {
    match line.split_once(':') {
        Some((key, rest)) => {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                && (rest.is_empty() || rest.starts_with(' '))
        }
        None => false,
    }
}

/// The largest inventory read: a line a host, so millions of hosts; what
/// is larger is not an inventory (and would be held in memory whole).
pub const MAX_INVENTORY_BYTES: u64 = 64 << 20;

/// Reads and parses the inventory at `path` (any of the three formats), a
/// regular file of at most [`MAX_INVENTORY_BYTES`].
pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
    let file = path.display().to_string();
    let bytes = sysgauge_core::file::read_regular_file(path, "--inventory", MAX_INVENTORY_BYTES)
        .map_err(|e| InventoryError::File(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| InventoryError::InFile {
        file: file.clone(),
        what: "not UTF-8 text".into(),
    })?;
    parse(&file, &text)
}

/// Parses inventory text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Inventory, InventoryError> {
    let inv = match sniff(text) {
        Format::Plain => parse_plain(file, text)?,
        Format::Ini => parse_ini(file, text)?,
        Format::Yaml => parse_yaml(file, text)?,
    };
    if inv.hosts.is_empty() {
        return Err(InventoryError::InFile {
            file: file.to_string(),
            what: "no hosts in the inventory".into(),
        });
    }
    Ok(inv)
}

impl Inventory {
    /// The hosts `pattern` selects: names of groups or hosts separated by
    /// `,` or `:` (their union), `all` or `*` for every host. An unknown
    /// name is an error that lists the groups.
    pub fn limit(&self, pattern: &str) -> Result<Vec<Host>, InventoryError> {
        let err = |what: String| InventoryError::Limit {
            pattern: pattern.to_string(),
            what,
        };
        let names: Vec<&str> = pattern
            .split([',', ':'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if names.is_empty() {
            return Err(err("empty; name a group or a host".into()));
        }
        for n in &names {
            let known = *n == "all"
                || *n == "*"
                || self.groups.iter().any(|g| g == n)
                || self.hosts.iter().any(|h| h.name == *n);
            if !known {
                let groups = if self.groups.is_empty() {
                    "the inventory has no groups".to_string()
                } else {
                    format!("groups: {}", self.groups.join(", "))
                };
                return Err(err(format!("no group or host named '{n}' ({groups})")));
            }
        }
        Ok(self
            .hosts
            .iter()
            .filter(|h| {
                names.iter().any(|n| {
                    *n == "all" || *n == "*" || h.name == *n || h.groups.iter().any(|g| g == n)
                })
            })
            .cloned()
            .collect())
    }
}

/// A port number 1..=65535.
pub(crate) fn parse_port(s: &str) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!("'{s}' is not a port number (1-65535)")),
    }
}

/// An address ssh can be given safely: not empty, no white space or control
/// characters, and not starting with `-` (ssh would read it as an option).
pub(crate) fn check_address(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("empty host address".into());
    }
    if s.starts_with('-') {
        return Err(format!("host address '{s}' starts with '-'"));
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("host address '{s}' contains white space"));
    }
    if s.contains('@') || s.contains('/') {
        return Err(format!("host address '{s}' contains '@' or '/'"));
    }
    Ok(())
}

pub(crate) fn check_user(s: &str) -> Result<(), String> {
    if s.is_empty()
        || s.starts_with('-')
        || s.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '@' || c == ':')
    {
        return Err(format!("'{s}' is not a user name"));
    }
    Ok(())
}

/// The variable that gives a host's rated CPU clock in MHz: passed to
/// the host's `clock` or `run` as `--rated`.
pub const RATED_MHZ: &str = "rated_mhz";

/// A `rated_mhz` value: a number of MHz within what `--rated` accepts.
pub fn parse_rated_mhz(value: &str) -> Result<f64, String> {
    use sysgauge_core::host::{RATED_MAX_MHZ, RATED_MIN_MHZ};
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (RATED_MIN_MHZ..=RATED_MAX_MHZ).contains(&v) => Ok(v),
        _ => Err(format!(
            "{RATED_MHZ} '{value}' is not a rated clock in MHz (a number from {RATED_MIN_MHZ:.0} to {RATED_MAX_MHZ:.0}, e.g. 4500)"
        )),
    }
}

impl Host {
    /// The host's rated clock in MHz (`rated_mhz`), when given.
    pub fn rated_mhz(&self) -> Option<f64> {
        self.vars
            .get(RATED_MHZ)
            .and_then(|v| parse_rated_mhz(v).ok())
    }
}

/// A variable that becomes a run tag: a key of letters, digits, `_`, `-`
/// and `.`; a value without control characters.
pub(crate) fn check_tag(key: &str, value: &str) -> Result<(), String> {
    if key == RATED_MHZ {
        parse_rated_mhz(value)?;
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "'{key}' is not a variable name (letters, digits, _, - and . only)"
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(format!("the value of {key} contains a control character"));
    }
    Ok(())
}

/// A group name as Ansible allows it (letters, digits, `_`, `-`).
pub(crate) fn check_group(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        return Err(format!(
            "'{name}' is not a group name (letters, digits, _ and - only)"
        ));
    }
    Ok(())
}

/// Variables in the order they were given.
type Vars = Vec<(String, String)>;

/// Groups and their relations, shared by the INI and YAML readers: collects
/// hosts (with their own variables), group variables and children, then
/// resolves every host's groups and merged variables (Ansible's order: `all`,
/// then parents before children, then the host's own variables).
#[derive(Debug, Default)]
pub(crate) struct Builder {
    /// Host name → (own variables in order, direct groups), in first-seen order.
    hosts: Vec<(String, Vars, Vec<String>)>,
    /// Group → its variables in order.
    group_vars: BTreeMap<String, Vars>,
    /// Group → its parents.
    parents: BTreeMap<String, Vec<String>>,
    /// Groups in first-seen order.
    groups: Vec<String>,
}

impl Builder {
    pub(crate) fn group(&mut self, name: &str) {
        if name != "all" && !self.groups.iter().any(|g| g == name) {
            self.groups.push(name.to_string());
        }
    }

    pub(crate) fn has_group(&self, name: &str) -> bool {
        name == "all" || self.groups.iter().any(|g| g == name)
    }

    pub(crate) fn host(&mut self, name: &str, group: &str, vars: Vars) {
        self.group(group);
        match self.hosts.iter_mut().find(|(n, _, _)| n == name) {
            Some((_, v, g)) => {
                v.extend(vars);
                if !g.iter().any(|x| x == group) {
                    g.push(group.to_string());
                }
            }
            None => self
                .hosts
                .push((name.to_string(), vars, vec![group.to_string()])),
        }
    }

    pub(crate) fn group_var(&mut self, group: &str, key: &str, value: &str) {
        self.group(group);
        self.group_vars
            .entry(group.to_string())
            .or_default()
            .push((key.to_string(), value.to_string()));
    }

    pub(crate) fn child(&mut self, parent: &str, child: &str) {
        self.group(parent);
        self.group(child);
        let p = self.parents.entry(child.to_string()).or_default();
        if !p.iter().any(|x| x == parent) {
            p.push(parent.to_string());
        }
    }

    /// Every ancestor of `group` (itself included), parents before
    /// children, each once; a cycle is cut where it closes.
    fn lineage(&self, group: &str, out: &mut Vec<String>, stack: &mut Vec<String>) {
        if out.iter().any(|g| g == group) || stack.iter().any(|g| g == group) {
            return;
        }
        stack.push(group.to_string());
        for p in self.parents.get(group).into_iter().flatten() {
            self.lineage(p, out, stack);
        }
        stack.pop();
        out.push(group.to_string());
    }

    /// The finished inventory; `err` turns a bad variable of a host into an
    /// error (naming where the host was defined, as the caller knows it).
    pub(crate) fn finish(
        self,
        err: &dyn Fn(&str, String) -> InventoryError,
    ) -> Result<Inventory, InventoryError> {
        let mut hosts = Vec::new();
        for (name, own, direct) in &self.hosts {
            let mut lineage = vec!["all".to_string()];
            for g in direct {
                self.lineage(g, &mut lineage, &mut Vec::new());
            }
            let mut host = Host::new(name);
            for g in &lineage {
                for (k, v) in self.group_vars.get(g).into_iter().flatten() {
                    host.set_var(k, v)
                        .map_err(|e| err(name, format!("group {g}: {e}")))?;
                }
            }
            for (k, v) in own {
                host.set_var(k, v).map_err(|e| err(name, e))?;
            }
            check_address(&host.address).map_err(|e| err(name, e))?;
            lineage.retain(|g| g != "all" && g != "ungrouped");
            lineage.sort();
            host.groups = lineage;
            hosts.push(host);
        }
        Ok(Inventory {
            hosts,
            groups: self.groups,
        })
    }
}

#[cfg(test)]
mod tests;
