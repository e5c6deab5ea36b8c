//! Reading the output of mbw, the memory bandwidth tool this family's copy
//! tests follow, for `sysgauge import`: the write-ups paste its result
//! lines, often only the `AVG` ones.
//!
//! mbw 1.2 prints, per test and run, a tab-separated line
//! `N  Method: MEMCPY  Elapsed: 0.00211  MiB: 16.00000  Copy: 7597.341 MiB/s`
//! and after a test's runs the same with `AVG` for N (the array size over
//! the mean time, not the mean of the rates). Without `-q`, a preamble says
//! the element size and `Using 262144 bytes as blocks for memcpy block copy
//! test.`
//!
//! What the cases mean: every line keeps mbw's own name (`mbw.memcpy`,
//! `mbw.dumb`, `mbw.mcblock`) and compares only with other mbw imports,
//! because the label does not say the method. Debian's mbw 1.2.2 runs the
//! element loop `b[i] = a[i]` under the label `MEMCPY` and the C library's
//! `memcpy` under `DUMB` (its worker's test numbers and labels are swapped;
//! docs/performance.md shows the disassembly's branches), while mbw 2.0
//! labels them as they are, and the output names no version. Which line is
//! sysgauge's `mem.memcpy` is therefore the reader's call, not the
//! importer's (docs/comparing.md). `MCBLOCK` copies the same source block
//! each time, which no sysgauge case does.
//!
//! The value is mbw's own result, whichever lines a write-up kept: the
//! `AVG` line when there is one, else what mbw would have printed there
//! (the size over the mean time, which from the per-run rates is their
//! harmonic mean). The per-run lines give the spread: the samples are their
//! rates scaled so that their median is that value (a median of the raw
//! rates, which mbw never reports, imported a full output 66 % above its
//! own `AVG` line and the same run's `AVG` lines alone); the rates as mbw
//! printed them stay in the details (`run_rates_mib_s`). With only `AVG`
//! lines the average is the one sample.
//!
//! `MCBLOCK`'s block size is a param: the preamble's `Using N bytes as
//! blocks`, else mbw's default, 262144 bytes (`-b`), which is what an
//! output without the preamble (`-q`, the `AVG` lines alone) ran unless
//! `-b` was given; the details say which (`block_size_from`). So an output
//! and its `AVG` lines are one case, as its MEMCPY and DUMB lines are.
//!
//! A cut-off output is refused, not imported as less: a test with fewer
//! per-run lines than the preamble's `Doing N runs per test` (or than the
//! other tests have) and no `AVG` line, or without the `AVG` line the
//! other tests have, ends where the output was cut.

use chrono::{DateTime, Utc};
use sysgauge_core::record::{Params, ResultRecord, Status};
use sysgauge_core::{Better, Unit};
use sysgauge_family::util::{line_error as err, metric, LineError};

pub type MbwError = LineError;

/// One mbw result line.
struct Line<'a> {
    average: bool,
    method: &'a str,
    mib: f64,
    rate_mib_s: f64,
}

/// `0  Method: MEMCPY  Elapsed: …  MiB: 16.00000  Copy: 7597.341 MiB/s`,
/// or `None` for a line that is not a result line.
fn result_line(text: &str, n: usize) -> Result<Option<Line<'_>>, MbwError> {
    let t: Vec<&str> = text.split_whitespace().collect();
    let ["Method:", method] = t.get(1..3).unwrap_or_default() else {
        return Ok(None);
    };
    let [run, _, _, "Elapsed:", _, "MiB:", mib, "Copy:", rate, "MiB/s"] = t.as_slice() else {
        return Err(err(
            n,
            "a result line must read 'N Method: NAME Elapsed: S MiB: M Copy: R MiB/s'",
        ));
    };
    let average = *run == "AVG";
    if !average && run.parse::<u32>().is_err() {
        return Err(err(n, format!("'{run}' is neither a run number nor AVG")));
    }
    let positive = |v: &str, what: &str| -> Result<f64, MbwError> {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| err(n, format!("{what} '{v}' is not a positive number")))
    };
    Ok(Some(Line {
        average,
        method,
        mib: positive(mib, "the array size")?,
        rate_mib_s: positive(rate, "the copy rate")?,
    }))
}

/// The lines of `text`, trimmed, with their 1-based numbers; a result line
/// broken across lines (as a blog post wraps it: `… MiB: 100.00000` then
/// `Copy: 1039.968 MiB/s`) joined back into one, numbered by its first.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let raw: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < raw.len() {
        let mut line = raw[k].to_string();
        let start = k;
        let is_result = line.split_whitespace().nth(1) == Some("Method:");
        // At most the two breaks a result line has room for.
        while is_result && !line.ends_with("MiB/s") && k + 1 < raw.len() && k - start < 2 {
            let next = raw[k + 1];
            let continues = ["Elapsed:", "MiB:", "Copy:", "MiB/s"]
                .iter()
                .any(|w| next.starts_with(w))
                || next
                    .split_whitespace()
                    .next()
                    .is_some_and(|t| t.parse::<f64>().is_ok());
            if !continues {
                break;
            }
            k += 1;
            line.push(' ');
            line.push_str(next);
        }
        out.push((start + 1, line));
        k += 1;
    }
    out
}

/// One test at one array size, in file order.
struct Case {
    method: String,
    mib: f64,
    runs: Vec<f64>,
    average: Option<f64>,
    /// Its last line, where a cut is reported.
    last: usize,
}

/// mbw's `-b` default: the block `MCBLOCK` copies when the output does not
/// say another.
pub const DEFAULT_BLOCK_SIZE: u64 = 262_144;

/// Detail: where `block_size` came from (`output` or `default`).
pub const BLOCK_SIZE_FROM: &str = "block_size_from";

/// mbw output as result records stamped `at`: one per test and array size.
pub fn parse_mbw(text: &str, at: DateTime<Utc>) -> Result<Vec<ResultRecord>, MbwError> {
    let mut block_size: Option<u64> = None;
    let mut runs_per_test: Option<usize> = None;
    let mut cases: Vec<Case> = Vec::new();
    let mut last = 0;
    for (n, joined) in logical_lines(text) {
        last = n;
        let line = joined.as_str();
        if let Some(rest) = line.strip_prefix("Using ") {
            if let Some(bytes) = rest.strip_suffix(" bytes as blocks for memcpy block copy test.") {
                block_size = Some(
                    bytes
                        .trim()
                        .parse()
                        .map_err(|_| err(n, format!("'{bytes}' is not a block size in bytes")))?,
                );
            }
            continue;
        }
        // `Getting down to business... Doing 3 runs per test.`
        if let Some(k) = line
            .split_once("Doing ")
            .and_then(|(_, rest)| rest.strip_suffix(" runs per test."))
        {
            runs_per_test = k.trim().parse().ok();
            continue;
        }
        let Some(l) = result_line(line, n)? else {
            continue;
        };
        let same = |c: &Case| c.method == l.method && c.mib == l.mib;
        let case = match cases.iter().position(same) {
            Some(k) => &mut cases[k],
            None => {
                cases.push(Case {
                    method: l.method.to_string(),
                    mib: l.mib,
                    runs: Vec::new(),
                    average: None,
                    last: n,
                });
                cases.last_mut().ok_or_else(|| err(n, "no case"))?
            }
        };
        case.last = n;
        if l.average {
            case.average = Some(l.rate_mib_s);
        } else {
            case.runs.push(l.rate_mib_s);
        }
    }
    if cases.is_empty() {
        return Err(err(
            last.max(1),
            "no mbw result line ('AVG  Method: MEMCPY  Elapsed: …  MiB: …  Copy: … MiB/s')",
        ));
    }
    complete(&cases, runs_per_test)?;
    cases
        .into_iter()
        .map(|c| record(c, block_size, at, last))
        .collect()
}

/// Refuses an output cut inside a test: one without its `AVG` line while
/// the others have theirs, or with fewer runs than mbw said it would do
/// (or than the other tests did) and no `AVG` line. The value of such a
/// test would be of fewer runs than mbw's own, and the tests after it are
/// gone.
fn complete(cases: &[Case], runs_per_test: Option<usize>) -> Result<(), MbwError> {
    let averaged = cases.iter().any(|c| c.average.is_some());
    let expected = runs_per_test.or_else(|| cases.iter().map(|c| c.runs.len()).max());
    for c in cases.iter().filter(|c| c.average.is_none()) {
        let runs = c.runs.len();
        let short = expected.filter(|&e| runs < e);
        if !averaged && short.is_none() {
            continue;
        }
        let had = match short {
            Some(e) => format!("{runs} of its {e} runs"),
            None => format!("its {runs} runs"),
        };
        let avg = if averaged {
            "no AVG line where the other tests have one"
        } else {
            "no AVG line"
        };
        return Err(err(
            c.last,
            format!(
                "the {} test at {} MiB has {had} and {avg}: the output is cut short (import it whole)",
                c.method, c.mib
            ),
        ));
    }
    Ok(())
}

fn record(
    c: Case,
    block_size: Option<u64>,
    at: DateTime<Utc>,
    last: usize,
) -> Result<ResultRecord, MbwError> {
    let bytes = c.mib * 1_048_576.0;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(err(
            last,
            format!("{} MiB is not a whole number of bytes", c.mib),
        ));
    }
    let size = bytes as u64;
    let method = c.method.to_ascii_lowercase();
    let id = format!("mbw.{}", sanitise(&method));
    let mut params = Params::new();
    params.insert("size", size);
    let mut details = Params::new().with("source", "mbw");
    if method == "mcblock" {
        params.insert("block_size", block_size.unwrap_or(DEFAULT_BLOCK_SIZE));
        let from = if block_size.is_some() {
            "output"
        } else {
            "default"
        };
        details.insert(BLOCK_SIZE_FROM, from);
    }
    if !c.runs.is_empty() {
        details.insert(
            RUN_RATES,
            c.runs
                .iter()
                .map(|r| format!("{r}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    let samples = samples(&c.runs, c.average);
    // MiB/s to the MB/s mem's copy cases report.
    let mbps: Vec<f64> = samples.iter().map(|r| r * 1.048_576).collect();
    let m = metric("copy", Unit::MBps, Better::Higher, mbps)
        .map_err(|e| err(last, format!("{}: {e}", c.method)))?;
    Ok(ResultRecord {
        details,
        started_at: at,
        ..ResultRecord::new(&id, params, Status::Ok, vec![m])
    })
}

/// Detail: the per-run rates as mbw printed them, in MiB/s.
pub const RUN_RATES: &str = "run_rates_mib_s";

/// mbw's own result from its per-run rates, as its `AVG` line computes it:
/// the array size over the mean elapsed time, i.e. the harmonic mean of the
/// rates.
fn mbw_average(runs: &[f64]) -> f64 {
    runs.len() as f64 / runs.iter().map(|r| 1.0 / r).sum::<f64>()
}

/// The samples of a case (MiB/s): the per-run rates scaled so that their
/// median is mbw's result (`average`, else computed from them), or that
/// result alone without per-run lines.
fn samples(runs: &[f64], average: Option<f64>) -> Vec<f64> {
    if runs.is_empty() {
        return average.into_iter().collect();
    }
    let value = average.unwrap_or_else(|| mbw_average(runs));
    let median = sysgauge_stats::median(runs);
    runs.iter().map(|r| r * value / median).collect()
}

/// A method name as an id part: lower-case letters, digits and `-`.
fn sanitise(method: &str) -> String {
    let s: String = method
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if s.is_empty() {
        "unknown".to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines as a blog post's narrow column wraps them.
    #[test]
    fn wrapped_result_lines_are_joined() {
        let text = "\
Long uses 8 bytes. Allocating 2*13107200 elements = 209715200 bytes of memory.
Getting down to business... Doing 10 runs per test.
0       Method: MEMCPY  Elapsed: 0.33105        MiB: 100.00000
Copy: 302.070 MiB/s
AVG     Method: MEMCPY  Elapsed: 0.33200        MiB:
100.00000       Copy: 301.205 MiB/s
AVG     Method: DUMB    Elapsed: 0.41000
MiB: 100.00000  Copy: 243.902
MiB/s
";
        let r = parse_mbw(text, Utc::now()).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].bench_id, "mbw.memcpy");
        // The value is the AVG line; the one run line is its spread.
        assert!((r[0].metrics[0].value() - 301.205 * 1.048_576).abs() < 1e-9);
        assert_eq!(r[0].details.get_str(RUN_RATES), Some("302.07"));
        assert_eq!(r[1].bench_id, "mbw.dumb");
        assert!((r[1].metrics[0].value() - 243.902 * 1.048_576).abs() < 1e-9);
        // A break elsewhere is still an error that names the line.
        let e = parse_mbw(
            "AVG Method: MEMCPY Elapsed: 0.3\nsomething else\n",
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(e.line, 1);
    }

    fn ids(records: &[ResultRecord]) -> Vec<&str> {
        records.iter().map(|r| r.bench_id.as_str()).collect()
    }

    #[test]
    fn full_output_gives_every_run_as_a_sample() {
        let r = parse_mbw(fixture!("mbw", "1.2.2-n3-16MiB.txt"), Utc::now()).unwrap();
        assert_eq!(ids(&r), ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"]);
        let memcpy = &r[0];
        assert_eq!(memcpy.params, Params::new().with("size", 16u64 << 20));
        let m = &memcpy.metrics[0];
        assert_eq!(m.samples.len(), 3);
        // The value is mbw's AVG line; the runs keep their proportions.
        assert!((m.value() - 2406.860 * 1.048_576).abs() < 1e-6, "{m:?}");
        assert!((m.samples[2] / m.samples[0] - 7597.341 / 1466.141).abs() < 1e-9);
        assert_eq!(
            memcpy.details.get_str(RUN_RATES),
            Some("1466.141 2310.803 7597.341")
        );
        assert_eq!(r[2].params.get_u64("block_size"), Some(262_144));
        assert_eq!(r[2].details.get_str(BLOCK_SIZE_FROM), Some("output"));
        assert_eq!(memcpy.details.get_str("source"), Some("mbw"));
    }

    /// The acceptance test's case: one mbw output imports as the same value
    /// whether all its lines, only its `AVG` lines or only its per-run
    /// lines were kept.
    #[test]
    fn the_value_is_mbws_whichever_lines_were_kept() {
        let full = fixture!("mbw", "1.2.2-n3-16MiB.txt");
        let only = |avg: bool| -> String {
            full.lines()
                .filter(|l| !l.contains("Method:") || l.starts_with("AVG") == avg)
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let values = |text: &str| -> Vec<f64> {
            parse_mbw(text, Utc::now())
                .unwrap()
                .iter()
                .map(|r| r.metrics[0].value())
                .collect()
        };
        let (all, avg, runs) = (values(full), values(&only(true)), values(&only(false)));
        assert_eq!(all, avg);
        for (a, r) in all.iter().zip(&runs) {
            // mbw printed its rates to 3 decimals: the same to 1e-5.
            assert!((a / r - 1.0).abs() < 1e-5, "{all:?} {runs:?}");
        }
        // The report's run: DUMB 11958 and 2700 MiB/s, AVG 4405.893.
        let h = mbw_average(&[11958.0, 2700.0]);
        assert!((h - 4405.3).abs() < 1.0, "{h}");
        let s = samples(&[11958.0, 2700.0], Some(4405.893));
        assert!(
            (sysgauge_stats::median(&s) - 4405.893).abs() < 1e-9,
            "{s:?}"
        );
    }

    #[test]
    fn average_lines_alone_are_one_sample() {
        let text: String = fixture!("mbw", "1.2.2-n3-16MiB.txt")
            .lines()
            .filter(|l| l.starts_with("AVG"))
            .map(|l| format!("{l}\n"))
            .collect();
        let r = parse_mbw(&text, Utc::now()).unwrap();
        assert_eq!(ids(&r), ["mbw.memcpy", "mbw.dumb", "mbw.mcblock"]);
        assert_eq!(r[0].metrics[0].samples, [2406.860 * 1.048_576]);
        // Without the preamble, the block is mbw's default, and said so.
        assert_eq!(r[2].params.get_u64("block_size"), Some(DEFAULT_BLOCK_SIZE));
        assert_eq!(r[2].details.get_str(BLOCK_SIZE_FROM), Some("default"));
    }

    #[test]
    fn quiet_output_without_averages() {
        let r = parse_mbw(fixture!("mbw", "1.2.2-q-a-n2-8MiB.txt"), Utc::now()).unwrap();
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|x| x.metrics[0].samples.len() == 2));
        assert_eq!(r[0].params.get_u64("size"), Some(8 << 20));
    }

    #[test]
    fn bad_lines_are_named() {
        let short = parse_mbw("AVG\tMethod: MEMCPY\tElapsed: 0.1\n", Utc::now()).unwrap_err();
        assert_eq!(short.line, 1);
        let zero = parse_mbw(
            "x\n0\tMethod: MEMCPY\tElapsed: 0.1\tMiB: 8.0\tCopy: 0.000 MiB/s\n",
            Utc::now(),
        )
        .unwrap_err();
        assert_eq!(zero.line, 2);
        assert!(zero.message.contains("copy rate"), "{zero}");
        let none = parse_mbw("hello\n", Utc::now()).unwrap_err();
        assert!(none.message.contains("no mbw result line"), "{none}");
        let odd = parse_mbw(
            "0\tMethod: MEMCPY\tElapsed: 0.1\tMiB: 0.1\tCopy: 5.0 MiB/s\n",
            Utc::now(),
        )
        .unwrap_err();
        assert!(odd.message.contains("whole number of bytes"), "{odd}");
    }

    /// The acceptance test's cut: `head -n 9` of `mbw -n 3 16` stops in
    /// the DUMB test after 2 of its 3 runs, before MCBLOCK; it imported
    /// as DUMB of 2 runs and no MCBLOCK. It is refused at the cut, as is
    /// a quiet output without averages cut inside a test.
    #[test]
    fn an_output_cut_inside_a_test_is_refused() {
        let full = fixture!("mbw", "1.2.2-n3-16MiB.txt");
        let head =
            |n: usize| -> String { full.lines().take(n).map(|l| format!("{l}\n")).collect() };
        let e = parse_mbw(&head(9), Utc::now()).unwrap_err();
        assert_eq!(e.line, 9, "{e}");
        assert!(
            e.message
                .contains("the DUMB test at 16 MiB has 2 of its 3 runs and no AVG line"),
            "{e}"
        );
        // Cut right after a test's last run: its AVG line is missing.
        let e = parse_mbw(&head(10), Utc::now()).unwrap_err();
        assert!(
            e.message
                .contains("no AVG line where the other tests have one"),
            "{e}"
        );
        // Whole tests are whole: the output up to DUMB's AVG line reads.
        assert_eq!(parse_mbw(&head(11), Utc::now()).unwrap().len(), 2);
        let quiet = fixture!("mbw", "1.2.2-q-a-n2-8MiB.txt");
        let cut: String = quiet.lines().take(5).map(|l| format!("{l}\n")).collect();
        let e = parse_mbw(&cut, Utc::now()).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("has 1 of its 2 runs"), "{e}");
    }

    /// `mbw -q` prints no preamble, so its MCBLOCK is mbw's default block,
    /// the case the full output of the same run is.
    #[test]
    fn quiet_and_full_output_are_one_mcblock_case() {
        let full = parse_mbw(fixture!("mbw", "1.2.2-n3-16MiB.txt"), Utc::now()).unwrap();
        let quiet = parse_mbw(fixture!("mbw", "1.2.2-q-a-n2-8MiB.txt"), Utc::now()).unwrap();
        let block = |r: &[ResultRecord]| r[2].params.get_u64("block_size");
        assert_eq!(block(&full), block(&quiet));
    }
}
