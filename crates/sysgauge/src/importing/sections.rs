//! Telling what a file holds: one document of one format, or — as the
//! write-ups publish them — several tools' outputs one after another
//! (nbench, then Bonnie++, then `openssl speed`), with prose and shell
//! prompts between.
//!
//! A file whose first meaningful line one importer recognises, and in
//! which no other tool's output begins, is that importer's whole. Else the
//! file is cut into sections: a section begins at a line a tool's output
//! begins with (its banner, a progress line, a table header) and holds the
//! following lines that tool claims, until another tool's output begins.
//! Each section is read by its tool with the other lines blanked, so line
//! numbers stay the file's. Every other non-blank line is named in a
//! warning; a file with no section is an error. Nothing is left out
//! silently.

use super::{Importer, IMPORTERS};
use anyhow::{bail, Result};

/// The parts of `text` to read, each with its importer.
pub fn split(text: &str, name: &str) -> Result<Vec<(&'static dyn Importer, String)>> {
    if text.trim().is_empty() {
        bail!("{name}: the file is empty");
    }
    if let Some(i) = super::sniffed(text) {
        let others_begin = || {
            text.lines().any(|l| {
                let l = l.trim();
                IMPORTERS
                    .iter()
                    .any(|o| o.name() != i.name() && o.starts(l) && !i.claims(l))
            })
        };
        if !i.pasted() || !others_begin() {
            return Ok(vec![(i, text.to_string())]);
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    // (importer, line indexes) per section, in file order.
    let mut sections: Vec<(&'static dyn Importer, Vec<usize>)> = Vec::new();
    let mut unread: Vec<usize> = Vec::new();
    for (k, raw) in lines.iter().enumerate() {
        let line = raw.trim().trim_start_matches('\u{feff}');
        if line.is_empty() {
            continue;
        }
        let current = sections.last().map(|(i, _)| *i);
        let continues = current.is_some_and(|c| c.starts(line));
        let starter = IMPORTERS
            .iter()
            .copied()
            .filter(|i| i.pasted())
            .find(|i| i.starts(line));
        match (starter, current) {
            (Some(s), c) if !continues && c.is_none_or(|c| c.name() != s.name()) => {
                sections.push((s, vec![k]));
            }
            (_, Some(c)) if c.claims(line) => {
                if let Some(s) = sections.last_mut() {
                    s.1.push(k);
                }
            }
            _ => unread.push(k),
        }
    }
    if sections.is_empty() {
        bail!(
            "{name}:1: cannot tell the format (expected a sysgauge JSON run record, a CSV with a host,benchmark,metric,value,unit header, `openssl speed`, mbw, Bonnie++, nbench, hyperfine --export-json, fio JSON or sysbench output); pass --format"
        );
    }
    if !unread.is_empty() {
        let tools: Vec<&str> = sections.iter().map(|(i, _)| i.name()).collect();
        let mut tools_seen: Vec<&str> = Vec::new();
        for t in tools {
            if !tools_seen.contains(&t) {
                tools_seen.push(t);
            }
        }
        let first_text = lines[unread[0]].trim();
        eprintln!(
            "sysgauge: warning: {name}: {} not read (not part of the {} output found): '{}'{}",
            line_ranges(&unread),
            tools_seen.join(", "),
            sysgauge_core::text::for_terminal(&clip(first_text)),
            if unread.len() > 1 { ", …" } else { "" }
        );
    }
    Ok(sections
        .into_iter()
        .map(|(i, keep)| {
            let mut piece = String::with_capacity(text.len());
            let mut keep = keep.into_iter().peekable();
            for (k, l) in lines.iter().enumerate() {
                if keep.peek() == Some(&k) {
                    keep.next();
                    piece.push_str(l);
                }
                piece.push('\n');
            }
            (i, piece)
        })
        .collect())
}

/// `line 3` or `lines 1-2, 9, 40-41` (1-based) for 0-based indexes in order.
pub fn line_ranges(lines: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let start = lines[k];
        let mut end = start;
        while k + 1 < lines.len() && lines[k + 1] == end + 1 {
            k += 1;
            end = lines[k];
        }
        parts.push(if start == end {
            format!("{}", start + 1)
        } else {
            format!("{}-{}", start + 1, end + 1)
        });
        k += 1;
    }
    let word = if lines.len() == 1 { "line" } else { "lines" };
    format!("{word} {}", parts.join(", "))
}

fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        s.chars().take(57).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

/// A table cell of a number, maybe with a unit suffix (`1234.56k`,
/// `0.000744s`, `13489us`, `+++++`).
pub fn numberish(t: &str) -> bool {
    let body = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    !body.is_empty()
        && t.len() - body.len() <= 2
        && (body.parse::<f64>().is_ok() || body.chars().all(|c| c == '+'))
}
