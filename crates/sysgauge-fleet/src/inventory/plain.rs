//! The plain host list: one host a line, `[user@]host[:port] [name=ALIAS]
//! [key=value…]`; `#` starts a comment, blank lines are skipped. An IPv6
//! address with a port is written in brackets (`[fe80::1]:2222`); without
//! a port the brackets may be left out. The same grammar reads hosts named
//! on the command line. Variables are read as in the other formats
//! (`Host::set_var`): `ansible_user`, `ansible_port`, `ansible_host` and
//! `ansible_ssh_private_key_file` say how to reach the host and are never
//! tags; a user or port given both ways is refused, not silently chosen.

use super::{check_address, check_user, parse_port, Host, Inventory, InventoryError};

/// `[user@]host[:port]` → (user, host, port).
pub fn parse_address(s: &str) -> Result<(Option<String>, String, Option<u16>), String> {
    let (user, rest) = match s.rsplit_once('@') {
        Some((u, r)) => {
            check_user(u)?;
            (Some(u.to_string()), r)
        }
        None => (None, s),
    };
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let Some((addr, after)) = inner.split_once(']') else {
            return Err(format!("'{s}': '[' without ']'"));
        };
        let port = match after {
            "" => None,
            p => match p.strip_prefix(':') {
                Some(p) => Some(parse_port(p)?),
                None => return Err(format!("'{s}': unexpected '{after}' after ']'")),
            },
        };
        (addr.to_string(), port)
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        (h.to_string(), Some(parse_port(p)?))
    } else {
        // No colon, or a bare IPv6 address (several colons, no port); any
        // other text with colons is a mistake (`host:22:33`), not a name.
        let ip = rest.split('%').next().unwrap_or_default();
        if rest.contains(':') && ip.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!(
                "'{s}' is neither host:port nor an IPv6 address (an IPv6 address with a port goes in brackets: [fe80::1]:22)"
            ));
        }
        (rest.to_string(), None)
    };
    check_address(&host)?;
    Ok((user, host, port))
}

/// Parses a plain host list; `file` names it in errors.
pub fn parse_plain(file: &str, text: &str) -> Result<Inventory, InventoryError> {
    let mut hosts: Vec<(usize, Host)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let at = InventoryError::at(file, line_no);
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first.contains('=') {
            return Err(at(format!(
                "a line starts with the host, not '{first}' ([user@]host[:port] [name=ALIAS] [key=value…])"
            )));
        }
        let (user, address, port) = parse_address(first).map_err(&at)?;
        let mut host = Host::new(&address);
        let (in_address_user, in_address_port) = (user.is_some(), port.is_some());
        host.user = user;
        host.port = port;
        let mut seen: Vec<&str> = Vec::new();
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                return Err(at(format!("'{w}' is not key=value")));
            };
            match k {
                "name" | "alias" => {
                    if v.is_empty() || v.chars().any(|c| c.is_control() || c == ',') {
                        return Err(at(format!("'{v}' is not a host alias")));
                    }
                    host.name = v.to_string();
                }
                _ => {
                    if seen.contains(&k) {
                        return Err(at(format!("{k} is given twice")));
                    }
                    seen.push(k);
                    let twice = match k {
                        "ansible_user" | "ansible_ssh_user" => in_address_user.then_some("user"),
                        "ansible_port" | "ansible_ssh_port" => in_address_port.then_some("port"),
                        _ => None,
                    };
                    if let Some(what) = twice {
                        return Err(at(format!(
                            "the {what} is given twice ('{first}' and {k}); give it once"
                        )));
                    }
                    host.set_var(k, v).map_err(&at)?;
                }
            }
        }
        if let Some((first_line, _)) = hosts.iter().find(|(_, h)| h.name == host.name) {
            return Err(at(format!(
                "the name '{}' is already used on line {first_line}; give each host its own name=ALIAS",
                host.name
            )));
        }
        hosts.push((line_no, host));
    }
    Ok(Inventory {
        hosts: hosts.into_iter().map(|(_, h)| h).collect(),
        groups: Vec::new(),
    })
}
