//! Reading files into run records: sysgauge JSON, CSV, and other tools'
//! outputs (`openssl speed`, mbw, Bonnie++, nbench, hyperfine, fio,
//! sysbench, YABS). Used by `import`, `compare`, `report`, `chart` and
//! `baseline make`.
//!
//! Every format is one [`Importer`] in [`IMPORTERS`]: its name (the
//! `--format` value), how to recognise it, and its parser, stated in its
//! file as one [`ImporterDef`]. `--format`'s values and the detection both
//! come from that table, so adding an importer is its file and one line
//! there.
//!
//! Files are parsed completely before anything is stored or compared, and
//! every problem is reported as `FILE:LINE: what`, so an import is
//! all-or-nothing and a bad file never half-enters the database.

mod bonnie;
mod csv;
mod fio;
mod hyperfine;
mod json;
mod mbw;
mod nbench;
mod openssl;
mod sections;
mod sysbench;
#[cfg(test)]
mod tests;
mod yabs;

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;
use sysgauge_bench::foreign_json::JsonDocError;
use sysgauge_compare::import::{
    check_result, import_label, parse_json, synthetic_run, ImportContext,
};
use sysgauge_core::host::HostInfo;
use sysgauge_core::record::{ResultRecord, RunRecord};
use sysgauge_family::family::Options;
use sysgauge_registry::benchmarks;

/// One format sysgauge can import: what `--format`, detection, the
/// sections of a pasted block and the loading of files see of it. Each
/// importer's file states it as one [`ImporterDef`], which implements this.
pub trait Importer: Sync {
    /// The `--format` value, also the run's `format` tag.
    fn name(&self) -> &'static str;
    /// One line for `--format`'s help.
    fn about(&self) -> &'static str;
    /// Whether a document whose first meaningful line is `first` is this
    /// format (`text` is the whole document, for formats a first line does
    /// not tell apart: JSON of several tools). A pasted tool's output is
    /// known by the line it starts with.
    fn sniff(&self, first: &str, text: &str) -> bool;
    /// The records say their own machines (sysgauge JSON, CSV): `--host`
    /// does not apply.
    fn names_its_hosts(&self) -> bool;
    /// A tool's text output, which write-ups paste one after another with
    /// others' (then `starts` and `claims` find its section).
    fn pasted(&self) -> bool;
    /// For a tool's text output that write-ups paste one after another
    /// with others: whether `line` begins this tool's output (a banner, a
    /// progress line, a table header). `false` for whole-document formats.
    fn starts(&self, line: &str) -> bool;
    /// Whether `line` looks like part of this tool's output; lines of a
    /// section that do not are named as not read.
    fn claims(&self, line: &str) -> bool;
    /// Read `text` (the whole file, lines of other sections blanked, so
    /// line numbers are the file's).
    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed>;
}

/// An importer as data: each importer's file defines one as its
/// `IMPORTER` (the one line it takes in [`IMPORTERS`]), so the file holds
/// its name, its line of help, and only the functions that differ: how it
/// is told and how it is read.
pub struct ImporterDef {
    /// The `--format` value, also the run's `format` tag.
    pub name: &'static str,
    /// One line for `--format`'s help.
    pub about: &'static str,
    /// How a document or a section of this format is told.
    pub told: Told,
    /// Read `text` (the whole file, lines of other sections blanked, so
    /// line numbers are the file's).
    pub parse: fn(&str, &ImportContext<'_>) -> Result<Parsed>,
}

/// How an importer's input is told from other formats.
pub enum Told {
    /// A whole document, which `sniff(first, text)` accepts by its first
    /// meaningful line `first` or, for formats a first line does not tell
    /// apart (JSON of several tools), its whole `text`.
    Document { sniff: fn(&str, &str) -> bool },
    /// A whole document of run records that say their own machines
    /// (sysgauge JSON, CSV): `--host` does not apply.
    Records { sniff: fn(&str, &str) -> bool },
    /// Another tool's JSON document: [`json_kind`] tells whose from the
    /// names in it, and it is this importer's when that is its name.
    Json,
    /// A tool's text output, which write-ups paste one after another with
    /// others'. `starts(line)`: whether `line` begins it (a banner, a
    /// progress line, a table header); `claims(line)`: whether a line that
    /// does not is part of it all the same (lines of its section that
    /// neither accepts are named as not read). A document is its output
    /// when its first meaningful line `starts` it, or, when given, when
    /// `opens` accepts that line (a tool whose first line may be one its
    /// sections are not cut at).
    Pasted {
        starts: fn(&str) -> bool,
        claims: fn(&str) -> bool,
        opens: Option<fn(&str) -> bool>,
    },
}

impl Told {
    /// A pasted tool's output whose first line is one it `starts` with.
    pub const fn pasted(starts: fn(&str) -> bool, claims: fn(&str) -> bool) -> Told {
        Told::Pasted {
            starts,
            claims,
            opens: None,
        }
    }
}

impl Importer for ImporterDef {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn sniff(&self, first: &str, text: &str) -> bool {
        match self.told {
            Told::Document { sniff } | Told::Records { sniff } => sniff(first, text),
            Told::Json => json_kind(first, text) == Some(self.name),
            Told::Pasted { starts, opens, .. } => opens.unwrap_or(starts)(first),
        }
    }

    fn names_its_hosts(&self) -> bool {
        matches!(self.told, Told::Records { .. })
    }

    fn pasted(&self) -> bool {
        matches!(self.told, Told::Pasted { .. })
    }

    fn starts(&self, line: &str) -> bool {
        match self.told {
            Told::Pasted { starts, .. } => starts(line),
            Told::Document { .. } | Told::Records { .. } | Told::Json => false,
        }
    }

    fn claims(&self, line: &str) -> bool {
        match self.told {
            Told::Pasted { starts, claims, .. } => starts(line) || claims(line),
            Told::Document { .. } | Told::Records { .. } | Told::Json => false,
        }
    }

    fn parse(&self, text: &str, ctx: &ImportContext<'_>) -> Result<Parsed> {
        (self.parse)(text, ctx)
    }
}

/// Every importer, in detection order: the first whose `sniff` accepts a
/// document's first line reads it.
pub static IMPORTERS: &[&dyn Importer] = &[
    &yabs::IMPORTER,
    &json::IMPORTER,
    &fio::IMPORTER,
    &hyperfine::IMPORTER,
    &mbw::IMPORTER,
    &nbench::IMPORTER,
    &sysbench::IMPORTER,
    &bonnie::IMPORTER,
    &openssl::IMPORTER,
    &csv::IMPORTER,
];

/// The importer named `name` (a `--format` value).
pub fn importer(name: &str) -> Option<&'static dyn Importer> {
    IMPORTERS.iter().copied().find(|i| i.name() == name)
}

/// `--format`'s values: `auto`, then every importer's name.
pub fn format_values() -> clap::builder::PossibleValuesParser {
    let auto =
        clap::builder::PossibleValue::new("auto").help("Tell the format from the file's content");
    clap::builder::PossibleValuesParser::new(
        std::iter::once(auto).chain(
            IMPORTERS
                .iter()
                .map(|i| clap::builder::PossibleValue::new(i.name()).help(i.about())),
        ),
    )
}

/// What an importer read.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Whole run records (sysgauge JSON, CSV).
    pub runs: Vec<RunRecord>,
    /// A tool's results, one entry per machine it names (or one).
    pub machines: Vec<ToolMachine>,
    /// Said on stderr: what was left out, and why.
    pub warnings: Vec<String>,
}

impl Parsed {
    /// A tool's machines, with the tool's warnings as said on stderr.
    pub fn tool(name: &str, machines: Vec<ToolMachine>, warnings: &[String]) -> Parsed {
        Parsed {
            machines,
            warnings: file_warnings(name, warnings),
            ..Parsed::default()
        }
    }
}

/// A tool parser's error, which starts with its line number, as
/// `FILE:line …`.
pub fn line_error(name: &str, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{name}:{e}")
}

/// A tool's warnings as said on stderr: each prefixed with the file's name.
pub fn file_warnings(name: &str, warnings: &[String]) -> Vec<String> {
    warnings.iter().map(|w| format!("{name}: {w}")).collect()
}

/// One machine's results from a tool's output.
#[derive(Debug, Default)]
pub struct ToolMachine {
    /// The name the output gives the machine (Bonnie++, fio's client
    /// mode); else `--host` or the file's name stands for it.
    pub host: Option<String>,
    pub results: Vec<ResultRecord>,
    /// Host facts the tool printed (CPU, caches, kernel); the rest unknown.
    pub facts: HostInfo,
    /// Tags for the run (`openssl_version`, …).
    pub tags: BTreeMap<String, String>,
    /// Which part of its file it was read from (its place among the
    /// file's sections), so that the warnings of that part are said only
    /// when an output of it is imported (set by `read_file`).
    pub piece: usize,
}

impl ToolMachine {
    pub fn new(results: Vec<ResultRecord>) -> Self {
        ToolMachine {
            results,
            ..ToolMachine::default()
        }
    }

    pub fn tag(mut self, key: &str, value: Option<&String>) -> Self {
        if let Some(v) = value {
            self.tags.insert(key.to_string(), v.clone());
        }
        self
    }
}

/// How to read files.
#[derive(Clone, Default)]
pub struct FileOptions {
    /// Force a format instead of telling it from the content.
    pub format: Option<&'static dyn Importer>,
    /// Host name for tool outputs (default: the file's stem).
    pub host: Option<String>,
}

impl std::fmt::Debug for FileOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileOptions")
            .field("format", &self.format.map(|i| i.name()))
            .field("host", &self.host)
            .finish()
    }
}

/// Each benchmark id's workload version in this sysgauge, built once:
/// imported numbers are taken to be of today's workload.
pub fn workload_versions() -> &'static BTreeMap<String, u32> {
    static VERSIONS: OnceLock<BTreeMap<String, u32>> = OnceLock::new();
    VERSIONS.get_or_init(|| {
        benchmarks(&Options::default())
            .iter()
            .map(|b| (b.id().to_string(), b.describe().workload_version))
            .collect()
    })
}

fn workload_version(id: &str) -> Option<u32> {
    workload_versions().get(id).copied()
}

/// One file read, before its tool outputs become runs.
pub struct LoadedFile {
    /// The file as the user named it.
    pub name: String,
    /// The file name without extension (the host of nameless outputs).
    pub stem: Option<String>,
    pub text: String,
    pub at: chrono::DateTime<chrono::Utc>,
    /// The importers that read it, in file order.
    pub formats: Vec<&'static str>,
    pub runs: Vec<RunRecord>,
    pub machines: Vec<ToolMachine>,
    /// What the importers said of it, to be said on stderr.
    pub warnings: Vec<FileWarning>,
}

/// A warning about a file read. `import` says it only when something of
/// what it is about is imported: an output skipped as already stored (or
/// named before) had its warnings said when it was first imported.
pub struct FileWarning {
    /// The part of the file (`ToolMachine::piece`) whose outputs it is
    /// about; `None`: the file as a whole (lines no importer read, or a
    /// part that gave no output to skip).
    pub piece: Option<usize>,
    pub text: String,
}

impl LoadedFile {
    /// Say its warnings on stderr: all of them, or with `kept_only` those
    /// of the parts that still have an output or run to store (a file
    /// whose every output is skipped says none).
    fn say_warnings(&self, kept_only: bool) {
        let any_kept = !self.runs.is_empty() || !self.machines.is_empty();
        for w in &self.warnings {
            let said = !kept_only
                || match w.piece {
                    None => any_kept,
                    Some(k) => self.machines.iter().any(|m| m.piece == k),
                };
            if said {
                eprintln!("sysgauge: warning: {}", w.text);
            }
        }
    }
}

/// Read one file into run records (one per host for CSV). Warnings go to
/// stderr.
pub fn load_file(path: &Path, opts: &FileOptions) -> Result<Vec<RunRecord>> {
    let file = read_file(path, opts)?;
    file.say_warnings(false);
    Ok(into_runs(vec![file], opts.host.as_deref())
        .into_iter()
        .map(|(r, _)| r)
        .collect())
}

/// Read every file, then make runs: with `--host`, the tool outputs of all
/// files are one machine's and are stored as one run (a case read twice
/// starts another run); without it, each file's outputs are grouped by the
/// machine they name. Returns each run with the files it came from.
pub fn load_files(paths: &[&Path], opts: &FileOptions) -> Result<Vec<(RunRecord, String)>> {
    if paths.iter().filter(|p| p.as_os_str() == STDIN).count() > 1 {
        bail!("'{STDIN}' (standard input) is named more than once; it can be read only once");
    }
    let mut files = Vec::new();
    for path in paths {
        let file = read_file(path, opts)?;
        file.say_warnings(false);
        files.push(file);
    }
    if opts.host.is_some() {
        return Ok(into_runs(files, opts.host.as_deref()));
    }
    Ok(files
        .into_iter()
        .flat_map(|f| into_runs(vec![f], None))
        .collect())
}

/// A tool's output that `import` left out because its machine already has
/// it: stored, or in a file named before it in the same import.
#[derive(Debug, Clone)]
pub struct PresentOutput {
    /// The file it was read from, as the user named it.
    pub file: String,
    /// The machine it is of (`--host`, the name the output gives, or the
    /// file's stem).
    pub host: String,
    /// Where the same results are.
    pub held: Held,
}

/// Where an output left out is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// In this stored run (its row id).
    Run(String),
    /// In this file, named before it in the same import (a file and a
    /// pasted block holding it, a copy with a BOM or CRLF line endings).
    Earlier(String),
}

/// What makes two imported results the same data: the case (id, params,
/// workload version) and every metric's name, unit and samples, exactly.
/// Details are left out: they say how a number was read, not what it is.
/// A 128-bit digest, not the text: an output of millions of samples is
/// held by every output named before it and by each stored run read, and
/// digests are only compared within one process (stored runs are read
/// and digested again each time).
pub fn result_fingerprint(r: &ResultRecord) -> u128 {
    use std::hash::Hasher;
    // Two SipHash digests of the same stream, told apart by a first byte.
    let mut h = [0u8, 1].map(|k| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write_u8(k);
        h
    });
    let mut feed = |bytes: &[u8]| {
        for x in &mut h {
            x.write(bytes);
            x.write_u8(0xff);
        }
    };
    feed(r.bench_id.as_bytes());
    feed(r.params.canonical().as_bytes());
    feed(&r.workload_version.to_le_bytes());
    for m in &r.metrics {
        feed(m.name.as_bytes());
        feed(m.unit.symbol().as_bytes());
        feed(&(m.samples.len() as u64).to_le_bytes());
        for v in &m.samples {
            feed(&v.to_bits().to_le_bytes());
        }
    }
    (u128::from(h[0].finish()) << 64) | u128::from(h[1].finish())
}

/// Which stored run of a host (`host`, `results`) holds all those results.
pub type StoredRun<'a> = dyn FnMut(&str, &[ResultRecord]) -> Result<Option<String>> + 'a;

/// Runs to store, each with the files it came from.
pub type ImportedRuns = Vec<(RunRecord, String)>;

/// For `import`: what [`load_files`] reads, except that a tool's output
/// that its machine already has stored (`stored(host, results)` names the
/// run holding every one of those results) is left out and returned
/// instead. So a directory of outputs imported again, in any order or one
/// file of it alone, stores nothing twice, also for runs imported before
/// run ids were independent of the order of the files. Two files whose
/// outputs give the same machine without `--host` (`m1/speed.txt` and
/// `m2/speed.txt`, two Bonnie++ outputs both of `raspberrypi`) are said
/// in a warning: they are stored as one machine, the newer numbers hiding
/// the older.
pub fn load_files_to_import(
    paths: &[&Path],
    opts: &FileOptions,
    stored: &mut StoredRun<'_>,
) -> Result<(ImportedRuns, Vec<PresentOutput>)> {
    if paths.iter().filter(|p| p.as_os_str() == STDIN).count() > 1 {
        bail!("'{STDIN}' (standard input) is named more than once; it can be read only once");
    }
    let mut files = Vec::new();
    for path in paths {
        files.push(read_file(path, opts)?);
    }
    let host = opts.host.as_deref();
    let mut present = Vec::new();
    // An output a file named before holds (same machine, every result the
    // same) is that one again, not another run.
    let mut seen: Vec<(String, HashSet<u128>, String)> = Vec::new();
    for f in &mut files {
        let mut kept = Vec::new();
        for m in std::mem::take(&mut f.machines) {
            let name = output_host(host, &m, f);
            let prints: HashSet<u128> = m.results.iter().map(result_fingerprint).collect();
            let earlier = seen
                .iter()
                .find(|(h, held, _)| *h == name && !prints.is_empty() && prints.is_subset(held));
            match earlier {
                Some((_, _, file)) => present.push(PresentOutput {
                    file: f.name.clone(),
                    host: name,
                    held: Held::Earlier(file.clone()),
                }),
                None => {
                    seen.push((name, prints, f.name.clone()));
                    kept.push(m);
                }
            }
        }
        f.machines = kept;
    }
    let shared = if host.is_none() {
        shared_hosts(&files)
    } else {
        Vec::new()
    };
    for f in &mut files {
        let mut kept = Vec::new();
        for m in std::mem::take(&mut f.machines) {
            let name = output_host(host, &m, f);
            match stored(&name, &m.results)? {
                Some(run) => present.push(PresentOutput {
                    file: f.name.clone(),
                    host: name,
                    held: Held::Run(run),
                }),
                None => kept.push(m),
            }
        }
        f.machines = kept;
    }
    // Warnings of what is skipped were said when it was first imported.
    for f in &files {
        f.say_warnings(true);
    }
    for w in shared {
        eprintln!("sysgauge: warning: {w}");
    }
    let runs = if host.is_some() {
        into_runs(files, host)
    } else {
        files
            .into_iter()
            .flat_map(|f| into_runs(vec![f], None))
            .collect()
    };
    Ok((runs, present))
}

/// Warnings where outputs of different files give the same machine:
/// without `--host`, that is the file's stem or the name the tool printed,
/// and two machines' files of one name would silently become one machine.
fn shared_hosts(files: &[LoadedFile]) -> Vec<String> {
    let mut first: Vec<(String, &str)> = Vec::new();
    let mut warned: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for f in files {
        for m in &f.machines {
            let name = output_host(None, m, f);
            match first.iter().find(|(h, _)| *h == name) {
                Some((_, file)) if *file != f.name && !warned.contains(&name) => {
                    warnings.push(format!(
                        "{file} and {} both give host '{}'; they are stored as one machine (per case the newer number hides the older); if they are two machines, import each with its own --host",
                        f.name,
                        sysgauge_core::text::for_terminal(&name)
                    ));
                    warned.push(name);
                }
                Some(_) => {}
                None => first.push((name, &f.name)),
            }
        }
    }
    warnings
}

/// The importer name an output of `f` was read by (its run's format).
fn output_format(f: &LoadedFile, m: &ToolMachine) -> &'static str {
    let format = m.tags.get("format").map(String::as_str).unwrap_or_default();
    f.formats
        .iter()
        .copied()
        .find(|x| *x == format)
        .unwrap_or("import")
}

/// The machine a tool's output is of: `--host` when given, else the name
/// the output gives (Bonnie++, fio's client mode), else its file's stem.
fn output_host(host: Option<&str>, m: &ToolMachine, f: &LoadedFile) -> String {
    host.map(str::to_string)
        .or_else(|| m.host.clone())
        .or_else(|| f.stem.clone())
        .unwrap_or_else(|| output_format(f, m).to_string())
}

/// The largest file read for import, compare or report: it is held in
/// memory whole, and parsed into records several times its size.
pub const MAX_IMPORT_BYTES: u64 = 1 << 30;

/// The file name that stands for standard input: a block pasted into the
/// terminal or a heredoc (`sysgauge import --host pi - <<'EOF'`).
pub const STDIN: &str = "-";

/// A stream (standard input, a pipe), read up to the bound a file has;
/// `what` names it in errors.
fn read_stream(stream: impl std::io::Read, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    stream
        .take(MAX_IMPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {what}"))?;
    if bytes.len() as u64 > MAX_IMPORT_BYTES {
        bail!(
            "{what}: more than the {} such a file may be",
            sysgauge_core::size::Bytes(MAX_IMPORT_BYTES)
        );
    }
    Ok(bytes)
}

/// A pipe handed over by the shell: `import <(ssh pi cat out.txt)`
/// (`/dev/fd/63`), `/dev/stdin` of `cmd | sysgauge import /dev/stdin`.
/// Read as standard input is, to its end, within the same bound. A FIFO
/// made by `mkfifo` is refused as what it is, as a directory or
/// `/dev/zero` is: with no writer it would block for ever, and a result
/// file that is one is a mistake far more often than a plan.
pub fn is_handed_pipe(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let p = path.to_string_lossy();
    let handed = p == "/dev/stdin"
        || p.starts_with("/dev/fd/")
        || (p.starts_with("/proc/") && p.contains("/fd/"));
    handed && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn read_file(path: &Path, opts: &FileOptions) -> Result<LoadedFile> {
    let stdin = path.as_os_str() == STDIN;
    let pipe = !stdin && is_handed_pipe(path);
    let (name, bytes) = if stdin {
        let bytes = read_stream(std::io::stdin().lock(), "standard input")?;
        ("stdin".to_string(), bytes)
    } else if pipe {
        // `<(cmd)` is /dev/fd/63 to us: a number that names nothing.
        let name = "pipe".to_string();
        let file = std::fs::File::open(path).with_context(|| format!("{name}: cannot open"))?;
        let bytes = read_stream(file, &name)?;
        (name, bytes)
    } else {
        let bytes = sysgauge_core::file::read_regular_file(path, "", MAX_IMPORT_BYTES)?;
        (path.display().to_string(), bytes)
    };
    if bytes.starts_with(&[0x1f, 0x8b]) {
        bail!("{name}: a gzip file; decompress it first (`gunzip FILE`, or `zcat FILE | sysgauge import -`)");
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "{name}: the file is not UTF-8 text (expected sysgauge JSON, CSV, or {} output)",
            tool_list()
        )
    })?;
    let modified = (!stdin && !pipe)
        .then(|| std::fs::metadata(path).and_then(|m| m.modified()).ok())
        .flatten();
    let at = modified
        .map(chrono::DateTime::<chrono::Utc>::from)
        .unwrap_or_else(chrono::Utc::now);
    let ctx = ImportContext {
        source_name: &name,
        at,
        tool_version: env!("CARGO_PKG_VERSION"),
        workload_version: &workload_version,
    };
    let mut file = LoadedFile {
        stem: if stdin {
            Some(name.clone())
        } else if pipe {
            Some("pipe".to_string())
        } else {
            path.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .filter(|s| !s.is_empty())
        },
        name: name.clone(),
        text: String::new(),
        at,
        formats: Vec::new(),
        runs: Vec::new(),
        machines: Vec::new(),
        warnings: Vec::new(),
    };
    // A BOM (Notepad's UTF-8) is no part of the first line: JSON and
    // `openssl -mr` records read from the character after it.
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let pieces = match opts.format {
        Some(i) => vec![(i, std::borrow::Cow::Borrowed(body))],
        None => {
            let split = sections::split(body, &name)?;
            if let Some(w) = split.unread {
                file.warnings.push(FileWarning {
                    piece: None,
                    text: w,
                });
            }
            split.pieces
        }
    };
    for (k, (importer, piece)) in pieces.into_iter().enumerate() {
        if opts.host.is_some() && importer.names_its_hosts() {
            bail!(
                "{name}: --host names the machine of a tool's output; this file is {} and names its own hosts",
                importer.name()
            );
        }
        let parsed = importer.parse(&piece, &ctx)?;
        drop(piece);
        check_values(&name, &parsed)?;
        if opts.host.is_some() {
            let named: Vec<&str> = parsed
                .machines
                .iter()
                .filter_map(|m| m.host.as_deref())
                .collect();
            if named.len() > 1 {
                let what = if importer.name() == "fio" {
                    "client hosts"
                } else {
                    "machines"
                };
                bail!(
                    "{name}: the file holds {} {what} ({}); --host names one machine, so leave it out",
                    named.len(),
                    named.join(", ")
                );
            }
        }
        file.formats.push(importer.name());
        // Whole records are never skipped as an output is: their part's
        // warnings are the file's.
        let outputs =
            parsed.runs.is_empty() && parsed.machines.iter().any(|m| !m.results.is_empty());
        file.warnings
            .extend(parsed.warnings.into_iter().map(|text| FileWarning {
                piece: outputs.then_some(k),
                text,
            }));
        file.runs.extend(parsed.runs);
        for mut m in parsed.machines {
            if m.results.is_empty() {
                continue;
            }
            for r in &mut m.results {
                r.workload_version = workload_version(&r.bench_id).unwrap_or(r.workload_version);
            }
            m.tags
                .insert("format".to_string(), importer.name().to_string());
            m.piece = k;
            file.machines.push(m);
        }
    }
    // The pieces borrowed the text; now it is the file's (not a copy: a
    // large file is held once).
    file.text = text;
    if file.runs.is_empty() && file.machines.is_empty() {
        // Its warnings say why (every value 0, too fast to time).
        file.say_warnings(false);
        bail!("{name}: no positive result in the file");
    }
    Ok(file)
}

/// Every result an importer read, held to the rules of sysgauge JSON
/// import ([`check_result`]): what one importer stores, `export` writes and
/// `import` must read back, so no importer may store what JSON import
/// refuses (a rate of 1e308 that overflows the summaries, a value so small
/// that it becomes 0 MB/s). Checked here, where every importer's output
/// passes, so that a new importer cannot forget it.
fn check_values(name: &str, parsed: &Parsed) -> Result<()> {
    let results = parsed
        .runs
        .iter()
        .flat_map(|run| &run.results)
        .chain(parsed.machines.iter().flat_map(|m| &m.results));
    for r in results {
        // The case's name is only made for a result that fails (checked
        // again with it): an import of 600,000 results named each one.
        if check_result(r, "").is_ok() {
            continue;
        }
        let case = if r.params.is_empty() {
            r.bench_id.clone()
        } else {
            format!("{} ({})", r.bench_id, r.params.canonical())
        };
        check_result(r, &case).map_err(|m| anyhow::anyhow!("{name}: {m}"))?;
    }
    Ok(())
}

/// "openssl speed, mbw, …": the tools the table can read.
fn tool_list() -> String {
    IMPORTERS
        .iter()
        .filter(|i| !i.names_its_hosts())
        .map(|i| i.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One run in the making: a machine's outputs from one or more files.
struct Pending {
    host: String,
    formats: Vec<&'static str>,
    files: Vec<String>,
    /// Its files' texts (indexes into `into_runs`'s texts, which are held
    /// once: a large file is not copied per run).
    identity: Vec<usize>,
    /// Each file's place among those named, with its name and the formats
    /// read from it: what is shown keeps the order the user gave, while
    /// the id is the contents'.
    named: Vec<(usize, String, &'static str)>,
    /// The oldest and the newest of its files' times: when the run began
    /// and ended, as far as the files tell.
    first: chrono::DateTime<chrono::Utc>,
    last: chrono::DateTime<chrono::Utc>,
    results: Vec<ResultRecord>,
    facts: HostInfo,
    tags: BTreeMap<String, String>,
}

/// Runs from loaded files: whole records as they are; tool outputs grouped
/// by machine (`host` for all when given, else the name each output gives
/// or its file's stem), one run per machine unless a case would appear
/// twice in it.
///
/// The files are taken in the order of their contents, not as named: the
/// same outputs named in another order make the same runs, with the same
/// content-derived ids (a run of one file keeps the id it always had).
fn into_runs(files: Vec<LoadedFile>, host: Option<&str>) -> Vec<(RunRecord, String)> {
    let mut files: Vec<(usize, LoadedFile)> = files.into_iter().enumerate().collect();
    files.sort_by(|a, b| a.1.text.cmp(&b.1.text));
    let texts: Vec<String> = files
        .iter_mut()
        .map(|(_, f)| std::mem::take(&mut f.text))
        .collect();
    let mut out = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    for (text, (place, mut f)) in files.into_iter().enumerate() {
        out.extend(
            std::mem::take(&mut f.runs)
                .into_iter()
                .map(|r| (r, f.name.clone())),
        );
        for m in std::mem::take(&mut f.machines) {
            let format = output_format(&f, &m);
            let name = output_host(host, &m, &f);
            let fits = |p: &Pending| {
                p.host == name
                    && !m.results.iter().any(|r| {
                        p.results
                            .iter()
                            .any(|q| q.bench_id == r.bench_id && q.params == r.params)
                    })
            };
            let k = match pending.iter().position(fits) {
                Some(k) => k,
                None => {
                    pending.push(Pending {
                        host: name.clone(),
                        formats: Vec::new(),
                        files: Vec::new(),
                        identity: Vec::new(),
                        named: Vec::new(),
                        first: f.at,
                        last: f.at,
                        results: Vec::new(),
                        facts: HostInfo::default(),
                        tags: BTreeMap::new(),
                    });
                    pending.len() - 1
                }
            };
            let p = &mut pending[k];
            if !p.formats.contains(&format) {
                p.formats.push(format);
            }
            if !p.files.contains(&f.name) {
                p.files.push(f.name.clone());
                p.identity.push(text);
            }
            p.named.push((place, f.name.clone(), format));
            p.first = p.first.min(f.at);
            p.last = p.last.max(f.at);
            p.results.extend(m.results);
            merge_facts(&mut p.facts, m.facts);
            for (key, v) in m.tags {
                if key != "format" {
                    p.tags.entry(key).or_insert(v);
                }
            }
        }
    }
    for p in pending {
        let (files, _) = shown(&p);
        out.push((finish(p, &texts), files));
    }
    out
}

/// A run's files and formats as shown: in the order they were named.
fn shown(p: &Pending) -> (String, String) {
    let mut named = p.named.clone();
    named.sort_by_key(|(place, _, _)| *place);
    let mut files: Vec<&str> = Vec::new();
    let mut formats: Vec<&str> = Vec::new();
    for (_, file, format) in &named {
        if !files.contains(&file.as_str()) {
            files.push(file);
        }
        if !formats.contains(format) {
            formats.push(format);
        }
    }
    (files.join(", "), formats.join(","))
}

fn finish(p: Pending, texts: &[String]) -> RunRecord {
    let (file_names, shown_format) = shown(&p);
    let ctx = ImportContext {
        source_name: &file_names,
        at: p.first,
        tool_version: env!("CARGO_PKG_VERSION"),
        workload_version: &workload_version,
    };
    let mut host = p.facts;
    host.hostname = Some(p.host);
    let format = p.formats.join(",");
    // One file: the text is the identity, as it always was (the same file
    // imported again is the same run); several: all their texts, and the
    // formats, in the order of the texts (`into_runs`), not of the names.
    let identity = match p.identity[..] {
        [one] => std::borrow::Cow::Borrowed(texts[one].as_str()),
        _ => std::borrow::Cow::Owned(
            p.identity
                .iter()
                .map(|&k| texts[k].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    };
    let mut run = synthetic_run(&ctx, &format, host, p.results, &identity);
    run.finished_at = Some(p.last);
    if p.files.len() > 1 {
        run.tags
            .insert("imported_from".to_string(), file_names.clone());
        run.tags.insert("format".to_string(), shown_format.clone());
        run.label = Some(import_label(&file_names, &run.run_id, &shown_format));
    }
    for (k, v) in p.tags {
        run.tags.entry(k).or_insert(v);
    }
    run
}

/// Facts `from` knows that `into` does not.
fn merge_facts(into: &mut HostInfo, from: HostInfo) {
    fn fill<T>(a: &mut Option<T>, b: Option<T>) {
        if a.is_none() {
            *a = b;
        }
    }
    fill(&mut into.cpu.model, from.cpu.model);
    fill(&mut into.cpu.architecture, from.cpu.architecture);
    fill(&mut into.cpu.cores, from.cpu.cores);
    fill(&mut into.memory.total_bytes, from.memory.total_bytes);
    fill(&mut into.os.kernel_release, from.os.kernel_release);
    fill(&mut into.os.kernel_version, from.os.kernel_version);
    fill(&mut into.os.distribution, from.os.distribution);
    if into.cpu.caches.is_empty() {
        into.cpu.caches = from.cpu.caches;
    }
}

/// Run records in sysgauge's JSON (what `--json` writes) received as text
/// rather than read from a file (a fleet host's stdout); `name` names the
/// source in errors. Checked exactly as `import` checks a file.
pub fn parse_record_text(name: &str, text: &str) -> Result<Vec<RunRecord>> {
    let ctx = ImportContext {
        source_name: name,
        at: chrono::Utc::now(),
        tool_version: env!("CARGO_PKG_VERSION"),
        workload_version: &workload_version,
    };
    Ok(parse_json(text, &ctx)?)
}

/// A JSON document's error as `FILE:line N column M: …` (syntax) or
/// `FILE: FIELD: …`.
fn json_error(name: &str, e: JsonDocError) -> anyhow::Error {
    match e {
        JsonDocError::Syntax { .. } => line_error(name, e),
        JsonDocError::Field { .. } => anyhow::anyhow!("{name}: {e}"),
    }
}

/// Which tool's JSON a document is, given its first meaningful line and
/// its text: sysgauge's own unless the names in it are clearly fio's or
/// hyperfine's (then the sysgauge parser would only say what it lacks).
/// `None` when the first line opens no JSON (fio's may follow what fio
/// prints before it on standard output: `note:` lines, and in client mode
/// its servers' `<host> job: (g=0): rw=…` and `<host> Starting 1 process`
/// lines, which are no CSV header although they have commas).
fn json_kind(first: &str, text: &str) -> Option<&'static str> {
    let json = first.starts_with('{') || first.starts_with('[');
    let fio_preamble =
        first.starts_with("note:") || (first.starts_with('<') && first.contains("> "));
    if !json && !fio_preamble {
        return None;
    }
    let kind = if text.contains("\"schema_version\"") {
        "json"
    } else if text.contains("\"fio version\"")
        || text.contains("\"client_stats\"")
        || (text.contains("\"jobs\"") && text.contains("\"jobname\""))
    {
        "fio"
    } else if text.contains("\"results\"")
        && (text.contains("\"times\"") || text.contains("\"mean\""))
        && text.contains("\"command\"")
    {
        "hyperfine"
    } else {
        "json"
    };
    (json || kind == "fio").then_some(kind)
}

/// The importer whose `sniff` accepts the first meaningful line of `text`.
pub(crate) fn sniffed(text: &str) -> Option<&'static dyn Importer> {
    let first = first_line(text)?;
    IMPORTERS.iter().copied().find(|i| i.sniff(first, text))
}

/// The first line that is not blank or a `#` comment, trimmed.
fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_start_matches('\u{feff}'))
}

impl std::fmt::Debug for dyn Importer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
