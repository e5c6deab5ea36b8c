//! Validated configuration: raw command-line arguments become a `Config`
//! here, before any work starts, so that bad input fails fast with a message
//! naming the problem and nothing has been measured or written yet.

use crate::cli::{MeasureArgs, ProfileArg};
use crate::values::KeyValue;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use sysgauge_core::Profile;

/// Where results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbChoice {
    File(PathBuf),
    /// `--no-store`.
    None,
}

/// Configuration shared by every measuring subcommand.
#[derive(Debug, Clone)]
pub struct MeasureConfig {
    pub db: DbChoice,
    pub json: Option<PathBuf>,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub repetitions: u32,
    pub warmup: u32,
    /// `--rounds`: how many times every case runs, interleaved.
    pub rounds: u32,
    pub profile: Profile,
    pub scratch_base: PathBuf,
    /// As a fraction (0.05 = 5 %).
    pub noise_threshold: f64,
    /// Time slices that replace the registry's for these families (a deep
    /// subcommand runs its whole family, not `run`'s slice).
    pub family_budgets: BTreeMap<String, std::time::Duration>,
    /// No per-case progress lines (commands with their own live output).
    pub quiet_progress: bool,
    /// Watch every case with the host's telemetry.
    pub telemetry: bool,
    /// The wait for a quiet machine before the first case; `None` with
    /// `--no-wait` (or `--wait-quiet 0`).
    pub wait: Option<sysgauge_host::quiet::QuietRule>,
    /// The CPU's rated clock (MHz) as the user gave it (`--rated`): a host
    /// fact of the run, set by the commands that take it.
    pub rated_mhz: Option<f64>,
    /// `--upload`: the results server the finished run is sent to.
    pub upload: Option<crate::upload::Uploader>,
    /// Processes of this machine that are the far side of the measurement
    /// (`net --peer` to a local listener): the telemetry counts their CPU
    /// time apart, not as other processes disturbing the cases.
    pub peer_processes: Vec<u32>,
}

impl MeasureConfig {
    pub fn from_args(a: &MeasureArgs) -> Result<MeasureConfig> {
        let repetitions = check_repetitions(
            a.repetitions.unwrap_or(DEFAULT_REPETITIONS),
            "--repetitions",
        )?;
        if a.rounds == 0 || a.rounds > 100 {
            bail!(
                "--rounds must be between 1 and 100, not {} (1, the default, runs every case once)",
                a.rounds
            );
        }
        if a.warmup > 100 {
            bail!("--warmup {} is more than 100", a.warmup);
        }
        if let Err(e) = sysgauge_crypto::known_ratios::check() {
            bail!("{e}");
        }
        if !(a.noise_threshold.is_finite() && a.noise_threshold > 0.0 && a.noise_threshold < 100.0)
        {
            bail!(
                "--noise-threshold must be a percentage above 0 and below 100, not {}",
                a.noise_threshold
            );
        }
        let db = if a.no_store {
            DbChoice::None
        } else {
            let p = resolve_db(a.db.db.as_deref())?;
            // Refuse a device, FIFO or directory now, before a command
            // probes a server or starts a peer; the open checks again.
            sysgauge_store::Store::check_path(&p)?;
            DbChoice::File(p)
        };
        if let Some(json) = &a.json {
            check_output_path(json, "--json")?;
        }
        if !(a.quiet_below.is_finite() && a.quiet_below > 0.0 && a.quiet_below <= 100.0) {
            bail!(
                "--quiet-below must be a percentage above 0 and at most 100, not {}",
                a.quiet_below
            );
        }
        let wait = (!a.no_wait && !a.wait_quiet.0.is_zero())
            .then(|| sysgauge_host::quiet::QuietRule::bounded(a.wait_quiet.0, a.quiet_below));
        let scratch_base = match &a.scratch_dir {
            Some(d) => {
                check_writable_dir(d, "--scratch-dir")?;
                d.clone()
            }
            None => std::env::temp_dir(),
        };
        Ok(MeasureConfig {
            db,
            json: a.json.clone(),
            label: a.label.clone(),
            tags: parse_tags(&a.tags)?,
            repetitions,
            warmup: a.warmup,
            rounds: a.rounds,
            profile: match a.profile {
                ProfileArg::Tiny => Profile::Tiny,
                ProfileArg::Quick => Profile::Quick,
                ProfileArg::Standard => Profile::Standard,
                ProfileArg::Full => Profile::Full,
            },
            scratch_base,
            noise_threshold: a.noise_threshold / 100.0,
            family_budgets: BTreeMap::new(),
            quiet_progress: false,
            telemetry: !a.no_telemetry,
            wait,
            rated_mhz: None,
            upload: upload_target(a)?,
            peer_processes: Vec::new(),
        })
    }
}

/// `--upload URL` with its token, checked before anything is measured; the
/// token options without `--upload` are a mistake worth saying.
fn upload_target(a: &MeasureArgs) -> Result<Option<crate::upload::Uploader>> {
    match &a.upload {
        Some(url) => Ok(Some(crate::upload::Uploader::new(
            url,
            &a.upload_auth,
            "--upload",
        )?)),
        None if a.upload_auth.token_file.is_some() || a.upload_auth.ca_cert.is_some() => {
            bail!("--token-file and --ca-cert are for uploading; give --upload URL too")
        }
        None => Ok(None),
    }
}

/// Timed repetitions per case when `--repetitions` is not given.
pub const DEFAULT_REPETITIONS: u64 = 5;

/// A repetition count: at least 1, at most 1000.
pub fn check_repetitions(n: u64, option: &str) -> Result<u32> {
    if n == 0 {
        bail!("{option} must be at least 1 ({DEFAULT_REPETITIONS} is the default; an odd number makes the median a real sample)");
    }
    match u32::try_from(n) {
        Ok(n) if n <= 1000 => Ok(n),
        _ => bail!("{option} {n} is more than 1000; use a longer --profile instead"),
    }
}

/// `--tag K=V` into a map; a key given twice is an error.
pub fn parse_tags(raw: &[KeyValue]) -> Result<BTreeMap<String, String>> {
    let mut tags = BTreeMap::new();
    for t in raw {
        if tags.insert(t.key.clone(), t.value.clone()).is_some() {
            bail!("--tag key '{}' is given twice", t.key);
        }
    }
    Ok(tags)
}

/// The default database path: `$XDG_DATA_HOME/sysgauge/sysgauge.db`, else
/// `~/.local/share/sysgauge/sysgauge.db`.
pub fn default_db_path() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(x) if Path::new(&x).is_absolute() => PathBuf::from(x),
        _ => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".local").join("share"),
            None => bail!("cannot find a data directory: neither XDG_DATA_HOME nor HOME is set; pass --db PATH"),
        },
    };
    Ok(base.join("sysgauge").join("sysgauge.db"))
}

/// The database to use: the one given (`--db` or `SYSGAUGE_DB`: a file, or
/// a PostgreSQL URL, which is never taken for a file), or the default file
/// (whose directory is created if needed).
pub fn resolve_db(arg: Option<&Path>) -> Result<PathBuf> {
    match arg {
        Some(p) if p.as_os_str().is_empty() => {
            bail!("--db is empty; give a file path or a postgres:// URL")
        }
        Some(p) => Ok(p.to_path_buf()),
        None => {
            let p = default_db_path()?;
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).with_context(|| {
                    format!(
                        "cannot create the data directory {}; make it writable or pass --db PATH",
                        dir.display()
                    )
                })?;
            }
            Ok(p)
        }
    }
}

/// An output file's directory must exist (`-` means stdout), and the file
/// must not be a results database (`db::refuse_database_as_output`). Every
/// command checks its output files here, before anything runs.
pub fn check_output_path(p: &Path, option: &str) -> Result<()> {
    if p.as_os_str() == "-" {
        return Ok(());
    }
    crate::db::refuse_database_as_output(p, option)?;
    if p.is_dir() {
        bail!("{option} {} is a directory; give a file name", p.display());
    }
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            bail!(
                "{option} {}: directory {} does not exist",
                p.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// A directory that exists and that we may write into.
pub fn check_writable_dir(d: &Path, option: &str) -> Result<()> {
    if !d.is_dir() {
        bail!("{option} {} is not an existing directory", d.display());
    }
    use rustix::fs::Access;
    if rustix::fs::access(d, Access::WRITE_OK | Access::EXEC_OK).is_err() {
        bail!(
            "{option} {} is not writable; choose another directory",
            d.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        let kv = |s: &str| s.parse::<KeyValue>().unwrap();
        let t = parse_tags(&[kv("a=1"), kv("b = two "), kv("c=")]).unwrap();
        assert_eq!(t.get("a").map(String::as_str), Some("1"));
        assert_eq!(t.get("b").map(String::as_str), Some("two"));
        assert_eq!(t.get("c").map(String::as_str), Some(""));
        assert!(parse_tags(&[kv("a=1"), kv("a=2")]).is_err());
    }
}
