//! `openssl speed` output: its table (any version) or its `-mr` records,
//! with the build its preamble names.

use super::sections::numberish;
use super::{line_error, ImporterDef, Parsed, Told, ToolMachine};
use anyhow::Result;
use sysgauge_compare::import::ImportContext;
use sysgauge_crypto::openssl_speed;

fn parse(text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
    let name = ctx.source_name;
    let report = openssl_speed::parse(text).map_err(|e| line_error(name, e))?;
    let not_run = report.not_run.iter().map(|z| {
            format!(
                "{name}:{}: '{}' is 0 at {}: openssl did not run it (an algorithm its providers lack, e.g. a legacy one without `-provider legacy`), left out",
                z.line,
                z.algorithm,
                z.cells.join(", ")
            )
        });
    let unread = report.unsupported.iter().map(|u| {
            format!(
                "{name}:{}: not a row or record of a kind sysgauge reads (a newer openssl's, or text pasted into the output), left out: {}",
                u.line, u.text
            )
        });
    let warnings = not_run.chain(unread).collect();
    let results = openssl_speed::to_results_with(&report, ctx.at, ctx.workload_version);
    let m = ToolMachine::new(results)
        .tag("openssl_version", report.version.as_ref())
        .tag("openssl_built_on", report.built_on.as_ref())
        .tag("openssl_options", report.options.as_ref())
        .tag("openssl_compiler", report.compiler.as_ref());
    Ok(Parsed {
        machines: vec![m],
        warnings,
        ..Parsed::default()
    })
}

/// How `openssl speed` output can begin: a `-mr` record or `-multi`
/// child; the version lines; the human table's preamble, progress lines
/// (stderr captured too) and headers, for a table pasted from its middle.
const OPENINGS: &[&str] = &[
    "+",
    "Forked child",
    "OpenSSL ",
    "version:",
    "To get the most accurate results",
    "You have chosen to measure elapsed time",
    "Doing ",
    "CPUINFO:",
    "The 'numbers' are in 1000s of bytes",
    "type ",
];

/// A document's first line that is `openssl speed`'s: any of the ways its
/// output can begin, more than a section of a pasted block starts with.
fn opens(first: &str) -> bool {
    OPENINGS.iter().any(|p| first.starts_with(p))
        || first.contains("sign/s")
        || first.ends_with("op/s")
}

fn starts(line: &str) -> bool {
    let mut chars = line.chars();
    let record = chars.next() == Some('+') && chars.next().is_some_and(|c| c.is_ascii_uppercase());
    record
        || (line.starts_with("Doing ") && line.contains(" for "))
        || line.starts_with("Forked child")
        || line
            .strip_prefix("OpenSSL ")
            .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        || line.starts_with("version:")
        || line.starts_with("To get the most accurate results")
        || line.starts_with("You have chosen to measure elapsed time")
        || line.starts_with("The 'numbers' are in 1000s of bytes")
        || (line.starts_with("type ") && line.contains("bytes"))
        || line.contains("sign/s")
        || line.ends_with("op/s")
}

fn claims(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let row = tokens.len() >= 2
        && tokens.last().is_some_and(|t| numberish(t))
        && (tokens.iter().filter(|t| numberish(t)).count() >= 2
            || tokens.last().is_some_and(|t| rate_cell(t)));
    [
        "built on",
        "options:",
        "compiler:",
        "platform:",
        "CPUINFO:",
        "Got: +",
        // OpenSSL 0.9.8's preamble.
        "available timing options:",
        "timing function used:",
    ]
    .iter()
    .any(|p| line.starts_with(p))
        || line.contains("'s in ")
        || line.contains(" ops in ")
        || error_line(line)
        || row
}

/// openssl's own error message, printed (on standard error, so pasted with
/// `2>&1`) for an algorithm its providers lack:
/// `40E79B01FB7F0000:error:0308010C:digital envelope routines:…` (3.x), or
/// `140…:error:…` with a decimal thread id (1.x).
fn error_line(line: &str) -> bool {
    let mut fields = line.splitn(4, ':');
    let hex = |t: Option<&str>| {
        t.is_some_and(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit()))
    };
    hex(fields.next()) && fields.next() == Some("error") && hex(fields.next())
}

/// A rate as openssl prints it, with two decimals (`698551.90k`,
/// `1234.56`): the one cell of a row of a table of one block size
/// (`-bytes 8192`, `-multi`'s sums), which a row of two numbers need not be.
fn rate_cell(t: &str) -> bool {
    let body = t.strip_suffix('k').unwrap_or(t);
    body.split_once('.').is_some_and(|(whole, frac)| {
        !whole.is_empty()
            && whole.chars().all(|c| c.is_ascii_digit())
            && frac.len() == 2
            && frac.chars().all(|c| c.is_ascii_digit())
    })
}

pub static IMPORTER: ImporterDef = ImporterDef {
    name: "openssl",
    about: "The output of `openssl speed`: its table (any version) or its -mr records",
    told: Told::Pasted {
        starts,
        claims,
        opens: Some(opens),
    },
    parse,
};
