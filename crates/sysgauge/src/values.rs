//! Typed command-line values: each kind of argument has one grammar, parsed
//! by clap through `FromStr`, so every command accepts the same spelling of
//! a size, a count, a thread list or a time and says the same thing when it
//! is wrong. Range checks that depend on the command (free memory, a block
//! size's multiple) stay with the command; what holds everywhere is here.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;
use sysgauge_core::size::{parse_count, parse_size, Bytes};
use sysgauge_family::util::Count;

/// `value` of `option` lies in `low..=high` (`unit` after the high end,
/// `" seconds"` or `""`); else the one error every command gives for an
/// option out of its range. NaN is outside every range.
pub fn within<T: PartialOrd + Copy + fmt::Display>(
    option: &str,
    value: T,
    low: T,
    high: T,
    unit: &str,
) -> anyhow::Result<()> {
    if (low..=high).contains(&value) {
        return Ok(());
    }
    anyhow::bail!("{option} must be between {low} and {high}{unit}, not {value}")
}

/// A byte size in nice numbers: `512`, `64KiB`, `1.5G` (`1M` = 10^6,
/// `1Mi` = `1MiB` = 2^20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NiceSize(pub u64);

impl FromStr for NiceSize {
    type Err = String;

    fn from_str(s: &str) -> Result<NiceSize, String> {
        parse_size(s).map(NiceSize).map_err(|e| e.to_string())
    }
}

impl fmt::Display for NiceSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Bytes(self.0).fmt(f)
    }
}

/// A whole count in nice numbers: `512`, `1Ki`, `2K` (no fractions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NiceCount(pub u64);

impl FromStr for NiceCount {
    type Err = String;

    fn from_str(s: &str) -> Result<NiceCount, String> {
        parse_count(s).map(NiceCount).map_err(|e| e.to_string())
    }
}

/// A thread list as given (`--threads 1,all`), in order and without
/// repeats; `None` when the option was not given (the family's default
/// applies). `all` stays `all`, so the case is the one every machine runs.
pub fn thread_list(list: &[Count]) -> Option<Vec<Count>> {
    if list.is_empty() {
        return None;
    }
    let mut v: Vec<Count> = Vec::new();
    for &t in list {
        if !v.contains(&t) {
            v.push(t);
        }
    }
    Some(v)
}

/// A time: `3`, `0.5`, `3s`, `500ms`; not negative, at most a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub Duration);

impl FromStr for Seconds {
    type Err = String;

    fn from_str(s: &str) -> Result<Seconds, String> {
        let t = s.trim();
        let (num, scale) = if let Some(ms) = t.strip_suffix("ms") {
            (ms, 1e-3)
        } else if let Some(sec) = t.strip_suffix('s') {
            (sec, 1.0)
        } else {
            (t, 1.0)
        };
        let v: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("'{t}' is not a number of seconds (e.g. 3, 0.5, 500ms)"))?;
        let secs = v * scale;
        if secs > 86_400.0 {
            return Err(format!("'{t}' is more than a day"));
        }
        Ok(Seconds(Duration::from_secs_f64(secs)))
    }
}

/// `KEY=VALUE` (a run tag, an ssh option): the key non-empty and trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

impl FromStr for KeyValue {
    type Err = String;

    fn from_str(s: &str) -> Result<KeyValue, String> {
        let Some((k, v)) = s.split_once('=') else {
            return Err(format!("'{s}' is not KEY=VALUE"));
        };
        let key = k.trim();
        if key.is_empty() {
            return Err(format!("'{s}' has an empty key"));
        }
        Ok(KeyValue {
            key: key.to_string(),
            value: v.trim().to_string(),
        })
    }
}

impl fmt::Display for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// `--group-by`: what puts hosts together in a fleet comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// The inventory groups `fleet run` recorded (a host in several counts
    /// in each).
    Group,
    /// The CPU model the host reported.
    Cpu,
    /// The architecture (`x86_64`, `aarch64`, ...).
    Arch,
    /// A run tag's value (`--tag rack=r1`, an inventory variable).
    Tag(String),
}

impl FromStr for GroupBy {
    type Err = String;

    fn from_str(s: &str) -> Result<GroupBy, String> {
        match s.trim() {
            "group" => Ok(GroupBy::Group),
            "cpu" => Ok(GroupBy::Cpu),
            "arch" => Ok(GroupBy::Arch),
            t => match t.strip_prefix("tag:").map(str::trim) {
                Some(k) if !k.is_empty() => Ok(GroupBy::Tag(k.to_string())),
                _ => Err(format!(
                    "'{s}' is not a grouping (group, cpu, arch or tag:NAME)"
                )),
            },
        }
    }
}

impl fmt::Display for GroupBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupBy::Group => f.write_str("group"),
            GroupBy::Cpu => f.write_str("cpu"),
            GroupBy::Arch => f.write_str("arch"),
            GroupBy::Tag(k) => write!(f, "tag:{k}"),
        }
    }
}

/// An image format for `--chart FILE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartFormat {
    Svg,
    Png,
}

/// `--chart FILE.svg|FILE.png`: the format comes from the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartFile {
    pub path: PathBuf,
    pub format: ChartFormat,
}

impl FromStr for ChartFile {
    type Err = String;

    fn from_str(s: &str) -> Result<ChartFile, String> {
        let path = PathBuf::from(s);
        let format = match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("svg") => ChartFormat::Svg,
            Some("png") => ChartFormat::Png,
            _ => return Err(format!("{s}: the file name must end in .svg or .png")),
        };
        Ok(ChartFile { path, format })
    }
}

/// A family of the registry, by name (`hash`, `mem`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyName(pub &'static str);

impl FromStr for FamilyName {
    type Err = String;

    fn from_str(s: &str) -> Result<FamilyName, String> {
        let s = s.trim();
        sysgauge_registry::family_info(s)
            .map(|f| FamilyName(f.name))
            .ok_or_else(|| {
                let names: Vec<&str> = sysgauge_registry::families()
                    .iter()
                    .map(|f| f.name)
                    .collect();
                format!("unknown family '{s}' (families: {})", names.join(", "))
            })
    }
}

/// A kernel CPU list (`0-3,8`), as in /sys/devices/system/cpu/online.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

impl FromStr for CpuList {
    type Err = String;

    fn from_str(s: &str) -> Result<CpuList, String> {
        sysgauge_host::parse_cpu_list(s)
            .filter(|c| !c.is_empty())
            .map(CpuList)
            .ok_or_else(|| format!("'{}' is not a CPU list such as 0-3,8", s.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_out_of_its_range_is_named_with_the_range() {
        assert!(within("--forks", 1u32, 1, 256, "").is_ok());
        assert!(within("--forks", 256u32, 1, 256, "").is_ok());
        let shown = |r: anyhow::Result<()>| r.unwrap_err().to_string();
        assert_eq!(
            shown(within("--forks", 0u32, 1, 256, "")),
            "--forks must be between 1 and 256, not 0"
        );
        assert_eq!(
            shown(within("--flood-for", 601.5, 0.5, 600.0, " seconds")),
            "--flood-for must be between 0.5 and 600 seconds, not 601.5"
        );
        assert_eq!(
            shown(within("--flood-for", f64::NAN, 0.5, 600.0, " seconds")),
            "--flood-for must be between 0.5 and 600 seconds, not NaN"
        );
    }

    #[test]
    fn sizes_and_counts() {
        assert_eq!("64KiB".parse::<NiceSize>(), Ok(NiceSize(65536)));
        assert_eq!("1.5K".parse::<NiceSize>(), Ok(NiceSize(1500)));
        assert!("12Q".parse::<NiceSize>().unwrap_err().contains("suffix"));
        assert_eq!("1Ki".parse::<NiceCount>(), Ok(NiceCount(1024)));
        assert!("1.5".parse::<NiceCount>().is_err());
        assert!("-4".parse::<NiceCount>().is_err());
    }

    #[test]
    fn thread_lists() {
        assert_eq!("4".parse::<Count>(), Ok(Count::N(4)));
        assert_eq!("ALL".parse::<Count>(), Ok(Count::AllCpus));
        assert!("0".parse::<Count>().unwrap_err().contains("out of range"));
        assert!("100000"
            .parse::<Count>()
            .unwrap_err()
            .contains("out of range"));
        assert!("two"
            .parse::<Count>()
            .unwrap_err()
            .contains("not a whole number"));
        assert!("1.5".parse::<Count>().is_err());
        assert_eq!(thread_list(&[]), None);
        assert_eq!(Count::AllCpus.resolve(6), 6);
        // `all` stays `all`: on a 2-CPU machine `2,all` are two cases.
        assert_eq!(
            thread_list(&[Count::N(1), Count::N(1), Count::AllCpus, Count::N(2)]),
            Some(vec![Count::N(1), Count::AllCpus, Count::N(2)])
        );
    }

    #[test]
    fn seconds() {
        assert_eq!("3".parse::<Seconds>(), Ok(Seconds(Duration::from_secs(3))));
        assert_eq!(
            "0.5s".parse::<Seconds>(),
            Ok(Seconds(Duration::from_millis(500)))
        );
        assert_eq!(
            "250ms".parse::<Seconds>(),
            Ok(Seconds(Duration::from_millis(250)))
        );
        for bad in ["-1", "abc", "1e9", "NaN", ""] {
            assert!(bad.parse::<Seconds>().is_err(), "{bad}");
        }
    }

    #[test]
    fn chart_files() {
        let f = |s: &str| s.parse::<ChartFile>().map(|c| c.format);
        assert_eq!(f("a.svg"), Ok(ChartFormat::Svg));
        assert_eq!(f("x/B.PNG"), Ok(ChartFormat::Png));
        assert!(f("a.jpg").is_err());
        assert!(f("a").is_err());
    }

    #[test]
    fn families_and_cpu_lists() {
        assert_eq!("hash".parse::<FamilyName>(), Ok(FamilyName("hash")));
        assert!("nope"
            .parse::<FamilyName>()
            .unwrap_err()
            .contains("unknown family 'nope'"));
        assert_eq!("0-2,5".parse::<CpuList>(), Ok(CpuList(vec![0, 1, 2, 5])));
        assert!("banana".parse::<CpuList>().is_err());
        assert!("".parse::<CpuList>().is_err());
    }

    #[test]
    fn key_values() {
        let kv: KeyValue = " a = 1 ".parse().unwrap();
        assert_eq!((kv.key.as_str(), kv.value.as_str()), ("a", "1"));
        assert_eq!("c=".parse::<KeyValue>().unwrap().value, "");
        assert!("novalue".parse::<KeyValue>().is_err());
        assert!("=x".parse::<KeyValue>().is_err());
    }
}
