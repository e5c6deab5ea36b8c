//! Ansible's INI inventory: hosts before any section are ungrouped;
//! `[group]` lists hosts (`name [key=value…]`, `name` may be `host:port`
//! or a range such as `web[01:03]`), `[group:children]` lists child groups,
//! `[group:vars]` sets `key=value` for every host of the group. Values may be
//! quoted ('…' or "…"); `#` and `;` start comments.

use super::{check_group, check_var, parse_port, Builder, Inventory, InventoryError};

enum Section {
    Hosts(String),
    Children(String),
    Vars(String),
}

/// Splits a line into words the way a shell would for plain quoting: white
/// space separates, '…' and "…" group, a word starting with `#` outside
/// quotes ends the line.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None if c == '#' && !in_word => break,
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed {q}"));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// Expands one `[a:b]` range in a host pattern (numbers, keeping the
/// start's zero padding, or single letters); a name without one is itself.
fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let Some(open) = pattern.find('[') else {
        return Ok(vec![pattern.to_string()]);
    };
    let Some(close) = pattern[open..].find(']').map(|c| open + c) else {
        return Err(format!("'{pattern}': '[' without ']'"));
    };
    let (head, range, tail) = (
        &pattern[..open],
        &pattern[open + 1..close],
        &pattern[close + 1..],
    );
    let parts: Vec<&str> = range.split(':').collect();
    let [from, to] = parts[..] else {
        return Err(format!(
            "'{pattern}': a range is [start:end] (steps are not supported)"
        ));
    };
    let mut names = Vec::new();
    if let (Ok(a), Ok(b)) = (from.parse::<u32>(), to.parse::<u32>()) {
        if a > b || b - a >= 10_000 {
            return Err(format!(
                "'{pattern}': the range must go up, by at most 10000 hosts"
            ));
        }
        let width = if from.starts_with('0') { from.len() } else { 0 };
        for n in a..=b {
            names.push(format!("{head}{n:0width$}{tail}"));
        }
    } else {
        let (mut a, mut b) = (from.chars(), to.chars());
        match (a.next(), a.next(), b.next(), b.next()) {
            (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && x <= y => {
                for c in x..=y {
                    names.push(format!("{head}{c}{tail}"));
                }
            }
            _ => {
                return Err(format!(
                    "'{pattern}': [{range}] is not a range of numbers or letters"
                ))
            }
        }
    }
    // A second range in the tail expands too.
    let mut all = Vec::new();
    for n in names {
        if tail.contains('[') {
            let prefix_len = n.len() - tail.len();
            for t in expand(tail)? {
                all.push(format!("{}{t}", &n[..prefix_len]));
            }
        } else {
            all.push(n);
        }
        if all.len() > 10_000 {
            return Err(format!("'{pattern}' names more than 10000 hosts"));
        }
    }
    Ok(all)
}

/// Parses an Ansible INI inventory; `file` names it in errors.
pub fn parse_ini(file: &str, text: &str) -> Result<Inventory, InventoryError> {
    let mut b = Builder::default();
    let mut section = Section::Hosts("ungrouped".to_string());
    let mut host_lines: Vec<(String, usize)> = Vec::new();
    // Groups given a section, and the child groups named (with where):
    // a child no section defines is a typo, said at its line.
    let mut defined: Vec<String> = Vec::new();
    let mut named_children: Vec<(String, String, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let at = InventoryError::at(file, line_no);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            let Some(inner) = inner.split_once(']').and_then(|(name, rest)| {
                let rest = rest.trim();
                (rest.is_empty() || rest.starts_with('#') || rest.starts_with(';')).then_some(name)
            }) else {
                return Err(at(format!("'{line}' is not a [section] header")));
            };
            let (name, kind) = match inner.split_once(':') {
                Some((n, k)) => (n.trim(), Some(k.trim())),
                None => (inner.trim(), None),
            };
            check_group(name).map_err(&at)?;
            section = match kind {
                None => Section::Hosts(name.to_string()),
                Some("children") => Section::Children(name.to_string()),
                Some("vars") => Section::Vars(name.to_string()),
                Some(k) => {
                    return Err(at(format!(
                        "[{name}:{k}]: a section is [group], [group:children] or [group:vars]"
                    )))
                }
            };
            b.group(name);
            defined.push(name.to_string());
            continue;
        }
        match &section {
            Section::Hosts(group) => {
                let w = words(line).map_err(&at)?;
                let Some((pattern, rest)) = w.split_first() else {
                    continue;
                };
                if pattern.contains('=') {
                    return Err(at(format!(
                        "'{pattern}': a host line starts with the host name (variables of a group go in [{group}:vars])"
                    )));
                }
                let mut vars = Vec::new();
                for kv in rest {
                    let Some((k, v)) = kv.split_once('=') else {
                        return Err(at(format!("'{kv}' is not key=value")));
                    };
                    check_var(k, v).map_err(&at)?;
                    vars.push((k.to_string(), v.to_string()));
                }
                // `host:port` (one colon, outside a range).
                let (pattern, port) = match pattern.rsplit_once(':') {
                    Some((h, p)) if !p.contains(']') && !h.contains(':') => {
                        (h.to_string(), Some(parse_port(p).map_err(&at)?))
                    }
                    _ => (pattern.clone(), None),
                };
                for name in expand(&pattern).map_err(&at)? {
                    let mut v = vars.clone();
                    if let Some(p) = port {
                        v.insert(0, ("ansible_port".to_string(), p.to_string()));
                    }
                    if !host_lines.iter().any(|(n, _)| *n == name) {
                        host_lines.push((name.clone(), line_no));
                    }
                    b.host(&name, group, v);
                }
            }
            Section::Children(parent) => {
                let w = words(line).map_err(&at)?;
                let [child] = &w[..] else {
                    return Err(at(format!(
                        "[{parent}:children] lists one group name a line, not '{line}'"
                    )));
                };
                check_group(child).map_err(&at)?;
                if child == parent {
                    return Err(at(format!("group {parent} cannot be its own child")));
                }
                b.child(parent, child);
                named_children.push((parent.clone(), child.clone(), line_no));
            }
            Section::Vars(group) => {
                let Some((k, v)) = line.split_once('=') else {
                    return Err(at(format!("'{line}' is not key=value")));
                };
                let (k, v) = (k.trim(), v.trim());
                let v = words(v).map_err(&at)?.join(" ");
                check_var(k, &v).map_err(&at)?;
                b.group_var(group, k, &v);
            }
        }
    }
    if let Some((parent, child, line)) = named_children
        .iter()
        .find(|(_, c, _)| !defined.iter().any(|d| d == c))
    {
        return Err(InventoryError::AtLine {
            file: file.to_string(),
            line: *line,
            what: format!(
                "[{parent}:children] names group '{child}', which no [{child}] section defines"
            ),
        });
    }
    let lines = host_lines;
    b.finish(&|host, what| match lines.iter().find(|(n, _)| n == host) {
        Some((_, line)) => InventoryError::AtLine {
            file: file.to_string(),
            line: *line,
            what: format!("host {host}: {what}"),
        },
        None => InventoryError::InFile {
            file: file.to_string(),
            what: format!("host {host}: {what}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand() {
        assert_eq!(
            expand("web[01:03].lan").unwrap_or_default(),
            ["web01.lan", "web02.lan", "web03.lan"]
        );
        assert_eq!(
            expand("db-[a:c]").unwrap_or_default(),
            ["db-a", "db-b", "db-c"]
        );
        assert_eq!(
            expand("r[1:2]n[1:2]").unwrap_or_default(),
            ["r1n1", "r1n2", "r2n1", "r2n2"]
        );
        assert!(expand("x[3:1]").is_err());
        assert!(expand("x[1:2:3]").is_err());
        assert!(expand("x[1:").is_err());
    }

    #[test]
    fn words_quote_and_comment() {
        assert_eq!(
            words(r#"h a="x y" b='z' # c=d"#).unwrap_or_default(),
            ["h", "a=x y", "b=z"]
        );
        assert!(words("h a=\"x").is_err());
    }
}
