//! Reading Bonnie++ output (1.03 to 2.00) for `sysgauge import`: the text
//! table write-ups paste, and the CSV line Bonnie++ ends with (the one
//! `bon_csv2txt` reads).
//!
//! Bonnie++'s methods are not this family's (buffered I/O through the page
//! cache, per-character `putc`/`getc`, a file-system tree of its own), so
//! its cases keep Bonnie++'s names — `bonnie.seq-output-char`,
//! `-block`, `-rewrite`, `bonnie.seq-input-char`, `-block`,
//! `bonnie.random-seeks`, and the file tests `bonnie.seq-create`,
//! `-stat`, `-delete`, `bonnie.random-create`, `-stat`, `-delete` — and
//! compare with other Bonnie++ imports, machine against machine.
//!
//! Each case has its rate (`throughput` in MB/s from Bonnie++'s K/sec,
//! `seeks` or `files` per second), `cpu` (its %CP) and `latency` (2.00)
//! when given. A `+++++` cell (too fast to time) or an empty one (test
//! skipped) gives no number; a case with no rate in any row is left out
//! and named in the warnings. Several rows of one host (`-x N`) are several
//! samples. When the text holds CSV lines, they are read and the table is
//! not (Bonnie++ prints both for the same run).
//!
//! Layouts (Bonnie++'s own printf formats): a table row is a 19-column
//! description (name and size, or name and file count) then six
//! ` %5s %3s` pairs; a latency row is `Latency` then six ` %9s` cells.
//! Cells wider than their column shift the rest, so a row whose twelve
//! cells are all present is read by whitespace, and only a row with blank
//! cells by column. CSV: 1.03 writes `name,size,` then the twelve I/O
//! cells, the file count and the twelve file cells; 1.9x and 2.00 write
//! `1.98,VERSION,name,concurrency,seed,size,chunk,seeks,seek_procs,` the
//! I/O cells, `files,max,min,dirs,file_chunk,` the file cells and twelve
//! latencies.

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use sysgauge_core::record::{Metric, Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{line_error as err, metric, LineError};

pub type BonnieError = LineError;

/// The workload version of every Bonnie++ case: 2 since the file size is
/// a detail instead of a param (version 1 ids carried `size`, so cases of
/// machines that chose different sizes never met).
pub const WORKLOAD_VERSION: u32 = 2;

/// The I/O tests, in Bonnie++'s column order.
const IO_TESTS: [&str; 6] = [
    "bonnie.seq-output-char",
    "bonnie.seq-output-block",
    "bonnie.seq-output-rewrite",
    "bonnie.seq-input-char",
    "bonnie.seq-input-block",
    "bonnie.random-seeks",
];

/// The file tests, in Bonnie++'s column order.
const FILE_TESTS: [&str; 6] = [
    "bonnie.seq-create",
    "bonnie.seq-stat",
    "bonnie.seq-delete",
    "bonnie.random-create",
    "bonnie.random-stat",
    "bonnie.random-delete",
];

/// What one Bonnie++ output says about one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct BonnieMachine {
    /// The name Bonnie++ printed (`-m`, else the host name).
    pub host: String,
    pub results: Vec<ResultRecord>,
}

/// A parse: the machines, and the cases left out with why.
#[derive(Debug, Clone, PartialEq)]
pub struct BonnieReport {
    pub version: Option<String>,
    pub machines: Vec<BonnieMachine>,
    pub warnings: Vec<String>,
}

/// One test's numbers in one row.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Cell {
    rate: Option<f64>,
    cpu: Option<f64>,
    latency_us: Option<f64>,
    /// The rate cell was `+++++`: run, but too fast to time.
    too_fast: bool,
}

/// One group of six tests (I/O or files) of one Bonnie++ run.
#[derive(Debug, Clone, PartialEq)]
struct Group {
    host: String,
    io: bool,
    /// The file size of the I/O tests (bytes): Bonnie++'s own choice, so a
    /// detail rather than a param.
    size: Option<u64>,
    params: Params,
    cells: [Cell; 6],
}

/// Parse Bonnie++ output; results are stamped `at`.
pub fn parse_bonnie(text: &str, at: DateTime<Utc>) -> Result<BonnieReport, BonnieError> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .collect();
    let csv: Vec<(usize, &str)> = lines
        .iter()
        .copied()
        .filter(|(_, l)| l.matches(',').count() >= 20)
        .collect();
    let mut version = None;
    let groups = if csv.is_empty() {
        from_table(&lines, &mut version)?
    } else {
        let mut g = Vec::new();
        for (n, l) in csv {
            g.extend(from_csv(l, n, &mut version)?);
        }
        g
    };
    if groups.is_empty() {
        return Err(err(
            lines.len().max(1),
            "no Bonnie++ result (a table row under a '/sec %CP' header, or a CSV line)",
        ));
    }
    Ok(collect(groups, version, at))
}

/// A cell value: `+++++`/`+++` (too fast) and blanks are `None`.
fn number(s: &str, n: usize) -> Result<Option<f64>, BonnieError> {
    let s = s.trim();
    if s.is_empty() || s.chars().all(|c| c == '+') {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        Ok(v) if v < 0.0 => Err(err(n, format!("'{s}' is negative"))),
        _ => Err(err(n, format!("'{s}' is not a number"))),
    }
}

/// A throughput cell in K/sec: plain (1.03, CSV) or with the `k`, `m`, `g`
/// suffix 2.00's table adds (K/sec, M/sec, G/sec, binary).
fn kilobytes(s: &str, n: usize) -> Result<Option<f64>, BonnieError> {
    let s = s.trim();
    let (body, factor) = match s.chars().last() {
        Some('k') => (&s[..s.len() - 1], 1.0),
        Some('m') => (&s[..s.len() - 1], 1024.0),
        Some('g') => (&s[..s.len() - 1], 1024.0 * 1024.0),
        _ => (s, 1.0),
    };
    Ok(number(body, n)?.map(|v| v * factor))
}

/// A latency cell (`13489us`, `133ms`, `2s`) in microseconds.
fn latency(s: &str, n: usize) -> Result<Option<f64>, BonnieError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let (body, factor) = if let Some(b) = s.strip_suffix("us") {
        (b, 1.0)
    } else if let Some(b) = s.strip_suffix("ms") {
        (b, 1e3)
    } else if let Some(b) = s.strip_suffix('s') {
        (b, 1e6)
    } else {
        return Err(err(n, format!("latency '{s}' has no unit (us, ms or s)")));
    };
    Ok(number(body, n)?.map(|v| v * factor))
}

/// `256M`, `1G`, `2048` (MiB) → bytes; a `:chunk` part is split off.
fn size_bytes(s: &str, n: usize) -> Result<(u64, Option<u64>), BonnieError> {
    let (size, chunk) = match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let bytes = |t: &str, default_unit: u64| -> Result<u64, BonnieError> {
        let t = t.trim();
        let (body, unit) = match t.chars().last() {
            Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
            Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
            Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
            Some('t' | 'T') => (&t[..t.len() - 1], 1 << 40),
            _ => (t, default_unit),
        };
        body.parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(unit))
            .filter(|&v| v > 0)
            .ok_or_else(|| err(n, format!("'{t}' is not a size")))
    };
    let size = bytes(size, 1 << 20)?;
    let chunk = match chunk {
        Some(c) if !c.trim().is_empty() => Some(bytes(c, 1)?),
        _ => None,
    };
    Ok((size, chunk))
}

/// `16` or `16:100000:16/64` (files in 1024s, largest and smallest file,
/// directories) → params.
fn file_params(spec: &str, n: usize) -> Result<Params, BonnieError> {
    let mut parts = spec.split([':', '/']);
    let files: u64 = parts
        .next()
        .and_then(|c| c.trim().parse::<u64>().ok())
        .and_then(|c| c.checked_mul(1024))
        .ok_or_else(|| err(n, format!("'{spec}' is not a Bonnie++ file count")))?;
    let mut p = Params::new().with("files", files);
    for (name, v) in ["max_size", "min_size", "dirs"].into_iter().zip(parts) {
        if !v.trim().is_empty() {
            let v: u64 = v
                .trim()
                .parse()
                .map_err(|_| err(n, format!("'{spec}' is not a Bonnie++ file count")))?;
            p.insert(name, v);
        }
    }
    Ok(p)
}

/// The six cells of a group from twelve rate/cpu strings; `kilo` reads the
/// first five rates as K/sec.
fn cells(values: &[&str], kilo: bool, n: usize) -> Result<[Cell; 6], BonnieError> {
    let mut out = [Cell::default(); 6];
    for (k, cell) in out.iter_mut().enumerate() {
        let rate = values.get(2 * k).copied().unwrap_or("");
        cell.too_fast = rate.trim().starts_with('+');
        cell.rate = if kilo && k < 5 {
            kilobytes(rate, n)?
        } else {
            number(rate, n)?
        };
        cell.cpu = number(values.get(2 * k + 1).copied().unwrap_or(""), n)?;
    }
    Ok(out)
}

fn set_latencies(cells: &mut [Cell; 6], values: &[&str], n: usize) -> Result<(), BonnieError> {
    for (cell, v) in cells.iter_mut().zip(values) {
        cell.latency_us = latency(v, n)?;
    }
    Ok(())
}

fn from_csv(line: &str, n: usize, version: &mut Option<String>) -> Result<Vec<Group>, BonnieError> {
    let f: Vec<&str> = line.trim().split(',').collect();
    let new_format = f[0].starts_with("1.9") || f[0].starts_with("2.");
    let (host, size, chunk, io, files, file_cells, latencies, concurrency) = if new_format {
        // 38 fields without latencies (1.9x), 50 with; between, a line
        // cut inside its latencies, which must not import as none.
        if f.len() < 38 || (38 < f.len() && f.len() < 50) {
            return Err(err(
                n,
                format!(
                    "a Bonnie++ {} CSV line has {} fields, expected 38 or 50 (cut short?)",
                    f[0],
                    f.len()
                ),
            ));
        }
        version.get_or_insert_with(|| f[1].to_string());
        let spec = [f[21], f[22], f[23]].join(":") + "/" + f[24];
        (
            f[2],
            f[5],
            Some(f[6]),
            &f[9..21],
            spec,
            &f[26..38],
            f.get(38..50),
            f[3],
        )
    } else {
        if f.len() < 27 {
            return Err(err(
                n,
                format!(
                    "a Bonnie++ 1.03 CSV line has {} fields, expected 27",
                    f.len()
                ),
            ));
        }
        (
            f[0],
            f[1],
            None,
            &f[2..14],
            f[14].to_string(),
            &f[15..27],
            None,
            "1",
        )
    };
    let (size, size_chunk) = size_bytes(size, n)?;
    let mut io_params = Params::new();
    let chunk = match chunk.filter(|c| !c.trim().is_empty()) {
        Some(c) => Some(size_bytes(&format!("1:{c}"), n)?.1.unwrap_or(0)),
        None => size_chunk,
    };
    if let Some(c) = chunk {
        io_params.insert("chunk_size", c);
    }
    let concurrency: u64 = concurrency.trim().parse().unwrap_or(1);
    if concurrency > 1 {
        io_params.insert("concurrency", concurrency);
    }
    let mut io_cells = cells(io, true, n)?;
    let mut out = Vec::new();
    let host = host.trim().to_string();
    let files = files.trim_end_matches(['/', ':']).to_string();
    let mut file_cells = cells(file_cells, false, n)?;
    if let Some(l) = latencies {
        set_latencies(&mut io_cells, &l[..6], n)?;
        set_latencies(&mut file_cells, &l[6..], n)?;
    }
    out.push(Group {
        host: host.clone(),
        io: true,
        size: Some(size),
        params: io_params,
        cells: io_cells,
    });
    if !files.trim().is_empty() && files != ":::" {
        let mut p = file_params(&files, n)?;
        if concurrency > 1 {
            p.insert("concurrency", concurrency);
        }
        out.push(Group {
            host,
            io: false,
            size: None,
            params: p,
            cells: file_cells,
        });
    }
    Ok(out)
}

/// The twelve cells after a row's 19-column description: by whitespace when
/// all are there (wide cells shift columns), else by column.
fn row_cells(line: &str) -> (String, Vec<String>) {
    let desc: String = line.chars().take(19).collect();
    let rest: String = line.chars().skip(19).collect();
    let tokens: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    if tokens.len() == 12 {
        return (desc, tokens);
    }
    let chars: Vec<char> = rest.chars().collect();
    let slot = |a: usize, b: usize| -> String {
        chars
            .get(a.min(chars.len())..b.min(chars.len()))
            .map(|s| s.iter().collect::<String>().trim().to_string())
            .unwrap_or_default()
    };
    let mut out = Vec::with_capacity(12);
    for k in 0..6 {
        out.push(slot(10 * k, 10 * k + 6));
        out.push(slot(10 * k + 6, 10 * k + 10));
    }
    (desc, out)
}

/// The six cells of a `Latency` row.
fn latency_cells(line: &str) -> Vec<String> {
    let rest: String = line.chars().skip(18).collect();
    let tokens: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    if tokens.len() == 6 {
        return tokens;
    }
    let chars: Vec<char> = rest.chars().collect();
    (0..6)
        .map(|k| {
            chars
                .get((10 * k).min(chars.len())..(10 * k + 10).min(chars.len()))
                .map(|s| s.iter().collect::<String>().trim().to_string())
                .unwrap_or_default()
        })
        .collect()
}

fn from_table(
    lines: &[(usize, &str)],
    version: &mut Option<String>,
) -> Result<Vec<Group>, BonnieError> {
    let mut groups: Vec<Group> = Vec::new();
    // Which table the rows belong to: Some(true) I/O, Some(false) files.
    let mut table: Option<bool> = None;
    let mut file_host: Option<String> = None;
    for &(n, line) in lines {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("Version") {
            version.get_or_insert_with(|| v.split_whitespace().next().unwrap_or("").to_string());
            table = None;
            continue;
        }
        if t.contains("%CP") {
            table = Some(!t.starts_with("files"));
            continue;
        }
        if t.starts_with('-') || t.contains("-Create--") || t.contains("-Per Chr-") {
            // A group title line; 2.00 puts the host before the file tests'.
            if t.contains("-Create--") {
                file_host = t
                    .split_whitespace()
                    .next()
                    .filter(|h| !h.starts_with('-'))
                    .map(str::to_string);
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if t.starts_with("Latency") {
            let Some(g) = groups.last_mut() else {
                continue;
            };
            let cells = latency_cells(line);
            let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
            set_latencies(&mut g.cells, &refs, n)?;
            continue;
        }
        let Some(io) = table else {
            continue;
        };
        let (desc, values) = row_cells(line);
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let words: Vec<&str> = desc.split_whitespace().collect();
        let Some((last, name)) = words.split_last() else {
            return Err(err(n, "a Bonnie++ row without its size or file count"));
        };
        let name = name.join(" ");
        if io {
            let (size, chunk) = size_bytes(last, n)?;
            let mut params = Params::new();
            if let Some(c) = chunk {
                params.insert("chunk_size", c);
            }
            groups.push(Group {
                host: name,
                io: true,
                size: Some(size),
                params,
                cells: cells(&refs, true, n)?,
            });
        } else {
            let host = if name.is_empty() {
                file_host
                    .clone()
                    .or_else(|| groups.iter().rev().find(|g| g.io).map(|g| g.host.clone()))
                    .unwrap_or_default()
            } else {
                name
            };
            groups.push(Group {
                host,
                io: false,
                size: None,
                params: file_params(last, n)?,
                cells: cells(&refs, false, n)?,
            });
        }
    }
    Ok(groups)
}

/// Rows into result records, one per host, test and params; several rows
/// of one case are its samples.
fn collect(groups: Vec<Group>, version: Option<String>, at: DateTime<Utc>) -> BonnieReport {
    type Key = (String, &'static str, String);
    let mut cases: BTreeMap<Key, (Params, Vec<u64>, Vec<Cell>)> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for g in groups {
        let tests = if g.io { IO_TESTS } else { FILE_TESTS };
        for (k, cell) in g.cells.iter().enumerate() {
            let key = (g.host.clone(), tests[k], g.params.canonical());
            let entry = cases.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                (g.params.clone(), Vec::new(), Vec::new())
            });
            if let Some(s) = g.size.filter(|s| !entry.1.contains(s)) {
                entry.1.push(s);
            }
            entry.2.push(*cell);
        }
    }
    let mut machines: Vec<BonnieMachine> = Vec::new();
    let mut warnings = Vec::new();
    for key in order {
        let Some((params, sizes, cells)) = cases.remove(&key) else {
            continue;
        };
        let (host, id, _) = key;
        let rates: Vec<f64> = cells.iter().filter_map(|c| c.rate).collect();
        if rates.is_empty() {
            if cells.iter().any(|c| c.too_fast) {
                warnings.push(format!(
                    "{host}: {id} was too fast for Bonnie++ to time (+++++); left out"
                ));
            }
            continue;
        }
        let (name, unit, rates) = match id {
            "bonnie.random-seeks" => ("seeks", Unit::OpsPerSec, rates),
            _ if id.starts_with("bonnie.seq-o") || id.starts_with("bonnie.seq-i") => (
                "throughput",
                Unit::MBps,
                rates.iter().map(|k| k * 1024.0 / 1e6).collect(),
            ),
            _ => ("files", Unit::OpsPerSec, rates),
        };
        let mut metrics: Vec<Metric> = Vec::new();
        metrics.extend(metric(name, unit, Better::Higher, rates).ok());
        let cpu: Vec<f64> = cells.iter().filter_map(|c| c.cpu).collect();
        metrics.extend(metric("cpu", Unit::Percent, Better::Lower, cpu).ok());
        let lat: Vec<f64> = cells.iter().filter_map(|c| c.latency_us).collect();
        metrics.extend(metric("latency", Unit::Microseconds, Better::Lower, lat).ok());
        let mut details = Params::new().with("source", "bonnie++");
        // Bonnie++ picks the file size (twice the RAM by default), so each
        // machine's differs; it is recorded and shown, and cases of
        // different sizes compare.
        if let [size] = sizes[..] {
            details.insert("file_size", size);
        } else if !sizes.is_empty() {
            let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
            details.insert("file_size", list.join(","));
        }
        if let Some(v) = &version {
            details.insert("bonnie_version", v.as_str());
        }
        let record = ResultRecord {
            details,
            started_at: at,
            workload_version: WORKLOAD_VERSION,
            ..ResultRecord::new(id, params, Status::Ok, metrics)
        };
        match machines.iter_mut().find(|m| m.host == host) {
            Some(m) => m.results.push(record),
            None => machines.push(BonnieMachine {
                host,
                results: vec![record],
            }),
        }
    }
    BonnieReport {
        version,
        machines,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_family::util::metric_value as value;

    fn case<'a>(r: &'a BonnieReport, host: &str, id: &str) -> &'a ResultRecord {
        r.machines
            .iter()
            .find(|m| m.host == host)
            .and_then(|m| m.results.iter().find(|x| x.bench_id == id))
            .unwrap_or_else(|| panic!("no {id} for {host} in {r:?}"))
    }

    #[test]
    fn table_of_2_00_with_suffixes_and_latencies() {
        let text: String = fixture!("bonnie", "2.00a-1G-n4.txt")
            .lines()
            .filter(|l| !l.contains(','))
            .map(|l| format!("{l}\n"))
            .collect();
        let r = parse_bonnie(&text, Utc::now()).unwrap();
        assert_eq!(r.version.as_deref(), Some("2.00a"));
        let putc = case(&r, "testhost2", "bonnie.seq-output-char");
        assert!((value(putc, "throughput") - 982.0 * 1024.0 / 1e6).abs() < 1e-9);
        assert_eq!(value(putc, "cpu"), 98.0);
        assert_eq!(value(putc, "latency"), 13489.0);
        assert_eq!(putc.details.get_u64("file_size"), Some(1 << 30));
        assert_eq!(putc.params.get_u64("size"), None);
        assert_eq!(putc.workload_version, WORKLOAD_VERSION);
        // The rate first (the headline), then %CP and latency.
        let names: Vec<&str> = putc.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["throughput", "cpu", "latency"]);
        let block = case(&r, "testhost2", "bonnie.seq-output-block");
        assert!((value(block, "throughput") - 781.0 * 1024.0 * 1024.0 / 1e6).abs() < 1e-6);
        let rewrite = case(&r, "testhost2", "bonnie.seq-output-rewrite");
        assert!((value(rewrite, "throughput") - 1.1 * 1024.0 * 1024.0 * 1024.0 / 1e6).abs() < 1e-3);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("bonnie.seq-input-block")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn csv_line_wins_over_the_table_it_follows() {
        let whole = parse_bonnie(fixture!("bonnie", "2.00a-1G-n4.txt"), Utc::now()).unwrap();
        let putc = case(&whole, "testhost2", "bonnie.seq-output-char");
        // From the CSV: 982 K/sec, and the same latency as the table.
        assert_eq!(putc.metrics[0].samples.len(), 1);
        assert!((value(putc, "throughput") - 982.0 * 1024.0 / 1e6).abs() < 1e-9);
        assert_eq!(value(putc, "latency"), 13489.0);
        assert_eq!(putc.details.get_u64("file_size"), Some(1 << 30));
    }

    #[test]
    fn all_too_fast_cells_are_warnings_not_zeros() {
        let r = parse_bonnie(fixture!("bonnie", "2.00a-256M-n2.txt"), Utc::now()).unwrap();
        let m = &r.machines[0];
        assert_eq!(m.host, "testhost");
        let ids: Vec<&str> = m.results.iter().map(|x| x.bench_id.as_str()).collect();
        assert_eq!(ids, ["bonnie.seq-output-char", "bonnie.seq-input-char"]);
        assert_eq!(r.warnings.len(), 10, "{:?}", r.warnings);
    }

    /// 1.03's layout (its printf formats): plain K/sec, no latency rows,
    /// the files row without a host, a blank per-char pair (`-f`), and two
    /// rows of one host (`-x 2`) as two samples.
    #[test]
    fn layout_of_1_03() {
        let text = "\
Version  1.03       ------Sequential Output------ --Sequential Input- --Random-
                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
oldbox           2G           40000  11 20000   4           50000   4 150.5   0
oldbox           2G           42000  12 21000   5           52000   5 160.5   0
                    ------Sequential Create------ --------Random Create--------
                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                 16  3000  12 +++++ +++ +++++ +++  3100  11 +++++ +++  9000  28
";
        let r = parse_bonnie(text, Utc::now()).unwrap();
        assert_eq!(r.version.as_deref(), Some("1.03"));
        let block = case(&r, "oldbox", "bonnie.seq-output-block");
        assert_eq!(block.metrics[0].samples.len(), 2);
        assert!((block.metrics[0].samples[1] - 42000.0 * 1024.0 / 1e6).abs() < 1e-9);
        let seeks = case(&r, "oldbox", "bonnie.random-seeks");
        assert_eq!(value(seeks, "seeks"), 155.5);
        let create = case(&r, "oldbox", "bonnie.seq-create");
        assert_eq!(create.params.get_u64("files"), Some(16 * 1024));
        assert_eq!(value(create, "files"), 3000.0);
        // Skipped per-char tests are not cases and not warnings.
        assert!(r.machines[0]
            .results
            .iter()
            .all(|x| !x.bench_id.ends_with("-char")));
        assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
    }

    #[test]
    fn csv_of_1_03() {
        let line = "oldbox,2G,500,90,40000,11,20000,4,600,95,50000,4,150.5,0,16,3000,12,+++++,+++,+++++,+++,3100,11,+++++,+++,9000,28\n";
        let r = parse_bonnie(line, Utc::now()).unwrap();
        let putc = case(&r, "oldbox", "bonnie.seq-output-char");
        assert!((value(putc, "throughput") - 500.0 * 1024.0 / 1e6).abs() < 1e-9);
        assert_eq!(
            case(&r, "oldbox", "bonnie.random-delete")
                .params
                .get_u64("files"),
            Some(16 * 1024)
        );
    }

    #[test]
    fn bad_input_names_the_line() {
        for (text, want) in [
            ("hello\n", "no Bonnie++ result"),
            (
                "1.98,2.00a,h,1,1,1G,,8192,5,1,1,1,1,1,1,1,1,1,1,1,1,1\n",
                "fields",
            ),
            (
                "oldbox,2G,fast,90,40000,11,20000,4,600,95,50000,4,150.5,0,16,3000,12,+++++,+++,+++++,+++,3100,11,+++++,+++,9000,28\n",
                "'fast'",
            ),
            // Found by fuzzing: a file count whose ×1024 overflows.
            (
                "                    -Create--\n              files  /sec %CP\n 20000000000000000000  100  10\n",
                "file count",
            ),
            (
                "oldbox,0G,500,90,40000,11,20000,4,600,95,50000,4,150.5,0,16,3000,12,+++++,+++,+++++,+++,3100,11,+++++,+++,9000,28\n",
                "size",
            ),
        ] {
            let e = parse_bonnie(text, Utc::now()).unwrap_err();
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
    }

    /// The acceptance test's cut: a 2.00a CSV line cut 60 characters
    /// before its end (41 fields, inside the latencies) imported without
    /// any latency and without a word; a negative cell was "not a number".
    #[test]
    fn a_csv_line_cut_in_its_latencies_is_refused() {
        let text = fixture!("bonnie", "2.00a-256M-n2.txt").trim_end();
        let line = text.lines().count();
        let e = parse_bonnie(&text[..text.len() - 60], Utc::now()).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(
            e.message
                .contains("has 41 fields, expected 38 or 50 (cut short?)"),
            "{e}"
        );
        // Without the latencies at all (38 fields) it is 1.9x's line.
        let csv = text.lines().last().unwrap_or_default();
        let short: Vec<&str> = csv.split(',').take(38).collect();
        assert!(parse_bonnie(&short.join(","), Utc::now()).is_ok());
        let neg = csv.replacen(",944,", ",-944,", 1);
        let e = parse_bonnie(&neg, Utc::now()).unwrap_err();
        assert_eq!(e.message, "'-944' is negative");
    }
}
