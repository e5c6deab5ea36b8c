//! Telling what a file holds: one document of one format, or — as the
//! write-ups publish them — several tools' outputs one after another
//! (nbench, then Bonnie++, then `openssl speed`), with prose and shell
//! prompts between.
//!
//! A file whose first meaningful line one importer of a whole document
//! recognises (JSON, CSV) is that importer's whole. A tool's text output
//! is cut into sections: a section begins at a line a tool's output begins
//! with (its banner, a progress line, a table header) and holds the
//! following lines that tool claims, until another tool's output begins;
//! a file whose first meaningful line a tool's output opens with is that
//! tool's section from there. Each section is read by its tool with the
//! other lines blanked, so line numbers stay the file's; a file that is
//! one section of every line is read as it is. Every other non-blank line
//! is named in one warning; a file with no section is an error. Nothing is
//! left out silently: not the mbw lines after a sysbench output, nor a
//! JSON file or prose pasted after a table, whichever tool comes first.

use super::{Importer, IMPORTERS};
use anyhow::{bail, Result};
use std::borrow::Cow;

/// What a file holds: the parts of it to read, each with its importer,
/// and the warning that names the lines none of them reads. A part that
/// is the whole file borrows it (a large JSON file is not copied).
pub struct Split<'a> {
    pub pieces: Vec<(&'static dyn Importer, Cow<'a, str>)>,
    pub unread: Option<String>,
}

/// The parts of `text` to read, each with its importer.
pub fn split<'a>(text: &'a str, name: &str) -> Result<Split<'a>> {
    if text.trim().is_empty() {
        bail!("{name}: the file is empty");
    }
    let sniffed = super::sniffed(text);
    if let Some(i) = sniffed.filter(|i| !i.pasted()) {
        return Ok(Split {
            pieces: vec![(i, Cow::Borrowed(text))],
            unread: None,
        });
    }
    let lines: Vec<&str> = text.lines().collect();
    // (importer, line indexes) per section, in file order. A tool that
    // opens the file owns its first meaningful line, which may be one its
    // sections are not cut at (openssl's `CPUINFO:`).
    let mut sections: Vec<(&'static dyn Importer, Vec<usize>)> = Vec::new();
    let first = sniffed.and_then(|_| lines.iter().position(|l| meaningful(l)));
    let mut unread: Vec<usize> = Vec::new();
    for (k, raw) in lines.iter().enumerate() {
        let line = raw.trim().trim_start_matches('\u{feff}');
        if line.is_empty() {
            continue;
        }
        if let (Some(i), Some(f)) = (sniffed, first) {
            if k < f {
                unread.push(k);
                continue;
            }
            if k == f {
                sections.push((i, vec![k]));
                continue;
            }
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
    if sections.len() == 1 && unread.is_empty() {
        // One tool's output, every line of it: read as it is.
        return Ok(Split {
            pieces: vec![(sections[0].0, Cow::Borrowed(text))],
            unread: None,
        });
    }
    let unread = (!unread.is_empty()).then(|| {
        let mut tools: Vec<&str> = Vec::new();
        for (i, _) in &sections {
            if !tools.contains(&i.name()) {
                tools.push(i.name());
            }
        }
        let first_text = lines[unread[0]].trim();
        format!(
            "{name}: {} not read (not part of the {} output found): '{}'{}",
            line_ranges(&unread),
            tools.join(", "),
            sysgauge_core::text::for_terminal(&clip(first_text)),
            if unread.len() > 1 { ", …" } else { "" }
        )
    });
    let pieces = sections
        .into_iter()
        .map(|(i, keep)| {
            let mut piece = String::with_capacity(text.len());
            let mut keep = keep.into_iter().peekable();
            for (k, l) in lines.iter().enumerate() {
                if keep.peek() == Some(&k) {
                    keep.next();
                    // A pasted file's own BOM is not part of its first line.
                    piece.push_str(l.trim_start_matches('\u{feff}'));
                }
                piece.push('\n');
            }
            (i, Cow::Owned(piece))
        })
        .collect();
    Ok(Split { pieces, unread })
}

/// Not blank and not a `#` comment: a line that says something.
fn meaningful(line: &str) -> bool {
    let l = line.trim().trim_start_matches('\u{feff}');
    !l.is_empty() && !l.starts_with('#')
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
