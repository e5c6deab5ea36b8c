//! Ansible's YAML inventory:
//!
//! ```yaml
//! all:
//!   vars: {site: lab}
//!   hosts:
//!     pi4: {ansible_host: 192.168.1.20, ansible_user: pi}
//!   children:
//!     servers:
//!       hosts:
//!         nas: {ansible_port: 2222}
//! ```
//!
//! Every top-level key is a group (normally just `all`); a group has
//! `hosts` (a mapping of host name to its variables, or to nothing),
//! `vars` and `children` (a mapping of group name to group). Scalars of any
//! kind (numbers, booleans) become their text. A syntax error names its
//! line; a structure error names the key path (`all.children.web.hosts`),
//! since the parsed tree keeps no line numbers.

use super::{check_group, check_var, Builder, Inventory, InventoryError};
use serde_yaml_ng::{Mapping, Value};

/// At most this many nested `children` levels (a guard against hostile
/// files; real inventories have a handful).
const MAX_DEPTH: usize = 32;

/// Parses an Ansible YAML inventory; `file` names it in errors.
pub fn parse_yaml(file: &str, text: &str) -> Result<Inventory, InventoryError> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|e| match e.location() {
        Some(loc) => InventoryError::AtLine {
            file: file.to_string(),
            line: loc.line(),
            what: format!("not valid YAML: {e}"),
        },
        None => InventoryError::InFile {
            file: file.to_string(),
            what: format!("not valid YAML: {e}"),
        },
    })?;
    let err = |path: &str, what: String| InventoryError::InFile {
        file: file.to_string(),
        what: format!("{path}: {what}"),
    };
    let top = match &value {
        Value::Mapping(m) => m,
        Value::Null => return Err(err("(top)", "the file is empty".into())),
        _ => {
            return Err(err(
                "(top)",
                "expected a mapping of groups (all: {hosts: …, children: …})".into(),
            ))
        }
    };
    let mut b = Builder::default();
    for (k, v) in top {
        let name = key_text(k).ok_or_else(|| err("(top)", "a group name must be text".into()))?;
        check_group(&name).map_err(|e| err(&name, e))?;
        b.group(&name);
        read_group(&mut b, &name, &name, v, 0, &err)?;
    }
    b.finish(&|host, what| err(&format!("host {host}"), what))
}

fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        other => key_text(other),
    }
}

/// `vars` (or a host's own variables) as key/value pairs, checked.
fn vars_of(
    m: &Mapping,
    path: &str,
    err: &dyn Fn(&str, String) -> InventoryError,
) -> Result<Vec<(String, String)>, InventoryError> {
    let mut out = Vec::new();
    for (k, v) in m {
        let key = key_text(k).ok_or_else(|| err(path, "a variable name must be text".into()))?;
        let value = scalar_text(v).ok_or_else(|| {
            err(
                &format!("{path}.{key}"),
                "a variable must be a single value (lists and mappings are not supported)".into(),
            )
        })?;
        check_var(&key, &value).map_err(|e| err(&format!("{path}.{key}"), e))?;
        out.push((key, value));
    }
    Ok(out)
}

fn read_group(
    b: &mut Builder,
    name: &str,
    path: &str,
    v: &Value,
    depth: usize,
    err: &dyn Fn(&str, String) -> InventoryError,
) -> Result<(), InventoryError> {
    if depth > MAX_DEPTH {
        return Err(err(path, format!("groups nested deeper than {MAX_DEPTH}")));
    }
    let m = match v {
        Value::Null => return Ok(()),
        Value::Mapping(m) => m,
        _ => {
            return Err(err(
                path,
                "a group is a mapping with hosts, vars and children".into(),
            ))
        }
    };
    for (k, v) in m {
        let key = key_text(k).unwrap_or_default();
        let here = format!("{path}.{key}");
        match (key.as_str(), v) {
            (_, Value::Null) => {}
            ("hosts", Value::Mapping(hosts)) => {
                for (h, hv) in hosts {
                    let host =
                        key_text(h).ok_or_else(|| err(&here, "a host name must be text".into()))?;
                    let at = format!("{here}.{host}");
                    let vars = match hv {
                        Value::Null => Vec::new(),
                        Value::Mapping(hm) => vars_of(hm, &at, err)?,
                        _ => {
                            return Err(err(
                                &at,
                                "a host maps to its variables (or to nothing)".into(),
                            ))
                        }
                    };
                    b.host(&host, name, vars);
                }
            }
            ("vars", Value::Mapping(vars)) => {
                for (k, v) in vars_of(vars, &here, err)? {
                    b.group_var(name, &k, &v);
                }
            }
            ("children", Value::Mapping(children)) => {
                for (c, cv) in children {
                    let child = key_text(c)
                        .ok_or_else(|| err(&here, "a group name must be text".into()))?;
                    let at = format!("{here}.{child}");
                    check_group(&child).map_err(|e| err(&at, e))?;
                    if child == name {
                        return Err(err(&at, format!("group {name} cannot be its own child")));
                    }
                    let seen = b.has_group(&child);
                    b.child(name, &child);
                    // A group defined elsewhere may be named again as a
                    // child without a body; a body is read every time.
                    if !seen || !cv.is_null() {
                        read_group(b, &child, &at, cv, depth + 1, err)?;
                    }
                }
            }
            ("hosts" | "vars" | "children", _) => {
                return Err(err(&here, "expected a mapping".into()));
            }
            _ => {
                return Err(err(
                    &here,
                    "unknown key (a group has hosts, vars and children)".into(),
                ))
            }
        }
    }
    Ok(())
}
