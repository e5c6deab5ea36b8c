//! Renderings of a hash-program sweep (`sweep.*` results): one row per
//! point (program, copies, effective iterations) with the bytes processed,
//! the median wall, user and system seconds of one repetition, MB/s by
//! each, and the estimated hash-only rate (`estimate_hash_only`); the same
//! rows as CSV for spreadsheets; and a few lines that put the 1-copy and
//! many-copy points of each program side by side.

use sysgauge_core::record::{ResultRecord, RunRecord};
use sysgauge_core::rounds::shown_spread;
use sysgauge_core::Unit;
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Table, TableFormat};

/// One measured point of a sweep, taken from its result record.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub host: String,
    /// `sha256sum`, `dd`, ... or a custom command line.
    pub program: String,
    pub data: String,
    /// `null` or `file`: where each run's stdout went.
    pub output: String,
    pub copies: u64,
    /// Effective iterations N (the program ran N/copies times).
    pub iterations: u64,
    /// Runs per repetition.
    pub runs: u64,
    /// Bytes processed per repetition.
    pub bytes: u64,
    /// Median seconds per repetition; `None` for imported points that give
    /// only the rate.
    pub wall: Option<f64>,
    pub user: f64,
    pub sys: f64,
    /// MB/s (10^6 bytes/s) by wall, user and system time (medians).
    pub mbps_wall: f64,
    pub mbps_user: Option<f64>,
    pub mbps_sys: Option<f64>,
    /// MB/s of the hashing alone, an estimate (`estimate_hash_only`).
    pub hash_only_estimate: Option<f64>,
    /// Why a point has no estimate, shown in its row.
    pub hash_only_absent: Option<&'static str>,
    /// Coefficient of variation of the wall-time rate.
    pub cov: f64,
    pub repetitions: usize,
}

fn metric(r: &ResultRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value())
}

impl SweepPoint {
    /// The point of a successful `sweep.*` result; `None` for anything else.
    /// Only the rate, copies and iterations are required: a machine imported
    /// from CSV may give no more (and its metrics in any order), and still
    /// belongs in the figure.
    pub fn from_result(host: &str, r: &ResultRecord) -> Option<SweepPoint> {
        if r.family != "sweep" || !r.is_ok() {
            return None;
        }
        let head = r
            .metrics
            .iter()
            .find(|m| m.name == "throughput")
            .or_else(|| r.primary().filter(|m| m.name != "wall_time"))?;
        // Imported rates may come in another byte rate; the figure is in MB/s.
        let to_mbps = match head.unit {
            Unit::MBps => 1.0,
            Unit::GBps => 1e3,
            Unit::KBps => 1e-3,
            Unit::MiBps => 1.048_576,
            _ => return None,
        };
        let copies = r.params.get_u64("copies")?;
        let iterations = r.params.get_u64("iterations")?;
        let program = match r.params.get_str("command") {
            Some(c) => c.to_string(),
            None => r.bench_id.strip_prefix("sweep.")?.to_string(),
        };
        let runs = r
            .details
            .get_u64("runs")
            .unwrap_or(iterations / copies.max(1));
        let bytes = r.details.get_u64("bytes").unwrap_or(0);
        Some(SweepPoint {
            host: host.to_string(),
            program,
            data: r.params.get_str("data").unwrap_or("").to_string(),
            output: r.params.get_str("output").unwrap_or("null").to_string(),
            copies,
            iterations,
            runs,
            bytes,
            wall: metric(r, "wall_time"),
            user: metric(r, "user_time").unwrap_or(0.0),
            sys: metric(r, "sys_time").unwrap_or(0.0),
            mbps_wall: head.value() * to_mbps,
            mbps_user: metric(r, "throughput_user"),
            mbps_sys: metric(r, "throughput_sys"),
            // Computed over the program's points (`estimate_hash_only`); a
            // stored `hash_only_estimate` metric is of an older, noisier
            // method and is not read.
            hash_only_estimate: None,
            hash_only_absent: None,
            cov: shown_spread(r, head),
            repetitions: head.samples.len(),
        })
    }
}

/// Every sweep point of a run, in the run's order, with its hash-only
/// estimate.
pub fn sweep_points(run: &RunRecord) -> Vec<SweepPoint> {
    let mut points: Vec<SweepPoint> = run
        .results
        .iter()
        .filter_map(|r| SweepPoint::from_result(run.host_name(), r))
        .collect();
    estimate_hash_only(&mut points);
    points
}

/// The hashing alone, in MB/s, for every point of a digest program.
///
/// A repetition's user CPU time is the hashing (reading the file is system
/// time) plus each run's start-up in user mode (the loader, relocations):
/// `user = runs × s + bytes / rate`. The two unknowns are fitted by least
/// squares over all of a program's points (same data and output), which
/// differ in how many runs carry the same bytes; each point's estimate is
/// then `bytes / (user − runs × s)`, so the points disagree only by their
/// own noise. (Subtracting dd's wall time, the method before, amplified
/// the noise of two wall times and charged dd's 512-byte reads to the
/// hashing: estimates swung 3× between points.) User and system time are
/// split by the kernel at its clock tick, which is unbiased over the many
/// ticks of a repetition.
pub fn estimate_hash_only(points: &mut [SweepPoint]) {
    /// The points fitted together: host, program, data, output.
    type Group = (String, String, String, String);
    let key = |p: &SweepPoint| -> Group {
        (
            p.host.clone(),
            p.program.clone(),
            p.data.clone(),
            p.output.clone(),
        )
    };
    let usable = |p: &SweepPoint| p.user > 0.0 && p.bytes > 0 && p.runs > 0;
    let mut fits: Vec<(Group, Result<f64, &'static str>)> = Vec::new();
    for p in points.iter() {
        let k = key(p);
        if fits.iter().any(|(g, _)| *g == k) {
            continue;
        }
        let group: Vec<&SweepPoint> = points.iter().filter(|q| key(q) == k && usable(q)).collect();
        fits.push((k, start_up_user_time(&group)));
    }
    for p in points.iter_mut() {
        let reason = if p.program == "dd" {
            Some("dd does not hash")
        } else if p.user <= 0.0 || p.bytes == 0 {
            Some("no user time")
        } else {
            None
        };
        if let Some(r) = reason {
            p.hash_only_absent = Some(r);
            continue;
        }
        let k = key(p);
        let start_up = fits
            .iter()
            .find(|(g, _)| *g == k)
            .map(|(_, f)| *f)
            .unwrap_or(Err("one copies level"));
        match start_up {
            Ok(s) => {
                let hashing = p.user - p.runs as f64 * s;
                if hashing > 0.0 {
                    p.hash_only_estimate = Some(p.bytes as f64 / hashing / 1e6);
                } else {
                    p.hash_only_absent = Some("start-up only");
                }
            }
            Err(why) => p.hash_only_absent = Some(why),
        }
    }
}

/// The user CPU seconds one start of the program costs, fitted over
/// `points` (least squares of `user = runs × s + bytes × c`, no
/// intercept); 0 when the fit finds none. An error when the points cannot
/// tell start-up from hashing: they all have the same runs per byte.
fn start_up_user_time(points: &[&SweepPoint]) -> Result<f64, &'static str> {
    let (mut rr, mut rb, mut bb, mut ry, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in points {
        // Bytes in GB keep the two columns of one magnitude.
        let (r, b, y) = (p.runs as f64, p.bytes as f64 / 1e9, p.user);
        rr += r * r;
        rb += r * b;
        bb += b * b;
        ry += r * y;
        by += b * y;
    }
    let det = rr * bb - rb * rb;
    // Cauchy-Schwarz: det is 0 exactly when runs and bytes are
    // proportional over the points.
    if points.len() < 2 || det.is_nan() || det <= 1e-9 * rr * bb {
        return Err("one copies level");
    }
    let s = (ry * bb - by * rb) / det;
    Ok(if s.is_finite() { s.max(0.0) } else { 0.0 })
}

fn opt(v: Option<f64>) -> String {
    v.map(format_value).unwrap_or_else(|| "-".into())
}

/// The hash-only cell: the estimate, or why there is none.
fn hash_only_cell(p: &SweepPoint) -> String {
    match (p.hash_only_estimate, p.hash_only_absent) {
        (Some(v), _) => format_value(v),
        (None, Some(why)) => format!("- ({why})"),
        (None, None) => "-".into(),
    }
}

/// The points as a table for people (text or Markdown).
pub fn sweep_table(points: &[SweepPoint], format: TableFormat) -> String {
    let mut t = Table::columns("program, >copies, >iterations, >runs, >MB, >wall s, >user s, >sys s, >MB/s wall, >MB/s user, >MB/s sys, >hash-only MB/s (est.), >spread");
    for p in points {
        t.push(vec![
            p.program.clone(),
            p.copies.to_string(),
            p.iterations.to_string(),
            p.runs.to_string(),
            format_value(p.bytes as f64 / 1e6),
            opt(p.wall),
            format_value(p.user),
            format_value(p.sys),
            format_value(p.mbps_wall),
            opt(p.mbps_user),
            opt(p.mbps_sys),
            hash_only_cell(p),
            format!("±{:.1}%", p.cov * 100.0),
        ]);
    }
    t.render(format)
}

/// The points as CSV, one row per point, full precision, for spreadsheets
/// and plotting. Empty cells where a rate has no meaning (no CPU time of
/// that kind was used, or no dd baseline was measured).
pub fn sweep_csv(points: &[SweepPoint]) -> String {
    let mut t = Table::columns("host, program, data, output, >copies, >iterations, >runs, >bytes, >wall_s, >user_s, >sys_s, >mb_s_wall, >mb_s_user, >mb_s_sys, >hash_only_mb_s_estimate, >repetitions, >cov_percent");
    let f = |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
    for p in points {
        t.push(vec![
            p.host.clone(),
            p.program.clone(),
            p.data.clone(),
            p.output.clone(),
            p.copies.to_string(),
            p.iterations.to_string(),
            p.runs.to_string(),
            p.bytes.to_string(),
            f(p.wall, 6),
            f(Some(p.user), 6),
            f(Some(p.sys), 6),
            f(Some(p.mbps_wall), 3),
            f(p.mbps_user, 3),
            f(p.mbps_sys, 3),
            f(p.hash_only_estimate, 3),
            p.repetitions.to_string(),
            f(Some(p.cov * 100.0), 2),
        ]);
    }
    t.render(TableFormat::Csv)
}

/// For each program and N measured at 1 copy and at more: one line with
/// both rates and the share of the 1-copy time that goes to the extra
/// process starts. Empty when the sweep has no such pair.
pub fn sweep_contrast(points: &[SweepPoint]) -> String {
    let mut out = String::new();
    for one in points.iter().filter(|p| p.copies == 1) {
        let many = points
            .iter()
            .filter(|p| {
                p.program == one.program
                    && p.iterations == one.iterations
                    && p.data == one.data
                    && p.output == one.output
                    && p.copies > 1
            })
            .max_by_key(|p| p.copies);
        if let Some(many) = many {
            // The same bytes at both: the times' ratio is the rates'.
            let startup_share = match (one.wall, many.wall) {
                (Some(w1), Some(wk)) if w1 > 0.0 => ((w1 - wk) / w1 * 100.0).max(0.0),
                (None, _) | (_, None) if many.mbps_wall > 0.0 => {
                    ((1.0 - one.mbps_wall / many.mbps_wall) * 100.0).max(0.0)
                }
                _ => 0.0,
            };
            let runs = |n: u64| {
                if n == 1 {
                    "1 run".to_string()
                } else {
                    format!("{n} runs")
                }
            };
            out.push_str(&format!(
                "{}: N={} at 1 copy {} MB/s ({}), at {} copies {} MB/s ({}): {:.0} % of the 1-copy time is the extra process starts\n",
                one.program,
                one.iterations,
                format_value(one.mbps_wall),
                runs(one.runs),
                many.copies,
                format_value(many.mbps_wall),
                runs(many.runs),
                startup_share
            ));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sysgauge_core::record::{Metric, Params, Status};
    use sysgauge_core::{Better, Unit};

    /// A successful sweep result of `id` at K = `copies`, N = `n` over
    /// `n` MB, one repetition per wall time in `walls`, with `extra`
    /// metrics (MB/s). The chart's tests build theirs with it too.
    pub(crate) fn result(
        id: &str,
        copies: u64,
        n: u64,
        walls: &[f64],
        extra: &[(&str, f64)],
    ) -> ResultRecord {
        let bytes = n * 1_000_000;
        let mut metrics = vec![Metric::new(
            "throughput",
            Unit::MBps,
            Better::Higher,
            walls.iter().map(|w| bytes as f64 / w / 1e6).collect(),
        )
        .unwrap_or_else(|| panic!("metric"))];
        metrics.push(
            Metric::new("wall_time", Unit::Seconds, Better::Lower, walls.to_vec())
                .unwrap_or_else(|| panic!("metric")),
        );
        for (name, v) in extra {
            metrics.push(
                Metric::new(name, Unit::MBps, Better::Higher, vec![*v])
                    .unwrap_or_else(|| panic!("metric")),
            );
        }
        ResultRecord {
            family: "sweep".into(),
            details: Params::new().with("runs", n / copies).with("bytes", bytes),
            duration_seconds: 1.0,
            ..ResultRecord::new(
                id,
                Params::new()
                    .with("copies", copies)
                    .with("iterations", n)
                    .with("data", "words"),
                Status::Ok,
                metrics,
            )
        }
    }

    fn points() -> Vec<SweepPoint> {
        let rs = [
            result("sweep.dd", 1, 64, &[0.1, 0.1, 0.1], &[]),
            result(
                "sweep.sha256sum",
                1,
                64,
                &[0.4, 0.5, 0.4],
                // 1 ms of user time per start, hashing at 200 MB/s; the
                // stored estimate of the older method is not read.
                &[("user_time", 0.384), ("hash_only_estimate", 213.3)],
            ),
            result(
                "sweep.sha256sum",
                64,
                64,
                &[0.2, 0.2, 0.2],
                &[("throughput_user", 330.0), ("user_time", 0.321)],
            ),
        ];
        let mut p: Vec<SweepPoint> = rs
            .iter()
            .filter_map(|r| SweepPoint::from_result("box", r))
            .collect();
        estimate_hash_only(&mut p);
        p
    }

    /// The estimate over points at three copies levels and two N, their
    /// user times off the model by up to 3 %: every point gets one, and
    /// they agree about as well as the points themselves (the wall-time
    /// difference with dd swung 3x on real points).
    #[test]
    fn the_hash_only_estimate_is_steady_across_points() {
        let (start_up, rate) = (0.0008, 250e6);
        let noise = [1.03, 0.98, 1.0, 0.97, 1.02, 1.01];
        let mut rs = Vec::new();
        for (i, (copies, n)) in [(1, 64), (8, 64), (64, 64), (1, 128), (8, 128), (64, 128)]
            .into_iter()
            .enumerate()
        {
            let runs = (n / copies) as f64;
            let user = (runs * start_up + (n * 1_000_000) as f64 / rate) * noise[i];
            rs.push(result(
                "sweep.md5sum",
                copies,
                n,
                &[1.0],
                &[("user_time", user)],
            ));
        }
        rs.push(result("sweep.dd", 1, 64, &[0.1], &[("user_time", 0.01)]));
        rs.push(result("sweep.b2sum", 4, 64, &[0.3], &[("user_time", 0.2)]));
        rs.push(result("sweep.sha1sum", 4, 64, &[0.3], &[]));
        let mut p: Vec<SweepPoint> = rs
            .iter()
            .filter_map(|r| SweepPoint::from_result("box", r))
            .collect();
        estimate_hash_only(&mut p);
        let est: Vec<f64> = p[..6]
            .iter()
            .map(|q| q.hash_only_estimate.unwrap_or_else(|| panic!("{q:?}")))
            .collect();
        let (lo, hi) = est
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        // The inputs spread 6 % (0.97 to 1.03); a 1-copy point's start-ups
        // and the fitted start-up cost add a little.
        assert!(hi / lo < 1.10, "{est:?}");
        assert!(
            est.iter().all(|e| (e / 250.0 - 1.0).abs() < 0.08),
            "{est:?}"
        );
        // No estimate, with the reason in the row: dd, a program at one
        // copies level, a point without user time.
        assert_eq!(p[6].hash_only_absent, Some("dd does not hash"));
        assert_eq!(p[7].hash_only_absent, Some("one copies level"));
        assert_eq!(p[8].hash_only_absent, Some("no user time"));
        let t = sweep_table(&p, TableFormat::Text);
        for why in [
            "- (dd does not hash)",
            "- (one copies level)",
            "- (no user time)",
        ] {
            assert!(t.contains(why), "{t}");
        }
    }

    #[test]
    fn points_from_results() {
        let p = points();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].program, "sha256sum");
        assert_eq!(p[1].runs, 64);
        assert_eq!(p[1].bytes, 64_000_000);
        assert_eq!(p[1].wall, Some(0.4));
        assert_eq!(p[1].mbps_wall, 160.0);
        let est = p[1].hash_only_estimate.unwrap_or_default();
        assert!((est - 200.0).abs() < 1e-6, "{est}");
        assert_eq!(
            p[1].hash_only_estimate,
            p[2].hash_only_estimate.map(|_| est)
        );
        assert_eq!(p[2].mbps_user, Some(330.0));
        assert_eq!(p[2].output, "null");
        let mut skipped = result("sweep.b2sum", 1, 1, &[1.0], &[]);
        skipped.status = Status::Skipped {
            reason: "no b2sum".into(),
            hint: None,
        };
        assert!(SweepPoint::from_result("box", &skipped).is_none());
        let mut other = result("hash.sha256", 1, 1, &[1.0], &[]);
        other.family = "hash".into();
        assert!(SweepPoint::from_result("box", &other).is_none());
    }

    #[test]
    fn csv_one_row_per_point() {
        let csv = sweep_csv(&points());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("host,program,data,output,copies,iterations,runs,bytes,wall_s,user_s,sys_s,mb_s_wall,mb_s_user,mb_s_sys,"));
        assert_eq!(
            lines[2],
            "box,sha256sum,words,null,1,64,64,64000000,0.400000,0.384000,0.000000,160.000,,,200.000,3,12.37"
        );
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        assert_eq!(r.records().count(), 3);
    }

    #[test]
    fn table_and_contrast() {
        let t = sweep_table(&points(), TableFormat::Text);
        assert!(t.contains("hash-only MB/s (est.)"), "{t}");
        assert!(t.lines().nth(3).is_some_and(|l| l.contains("200.0")), "{t}");
        let c = sweep_contrast(&points());
        assert_eq!(
            c,
            "sha256sum: N=64 at 1 copy 160.0 MB/s (64 runs), at 64 copies 320.0 MB/s (1 run): 50 % of the 1-copy time is the extra process starts\n"
        );
    }

    /// A point imported from CSV: the rate alone (in kB/s here), its
    /// metrics in the file's order, no details.
    #[test]
    fn an_imported_rate_alone_is_a_point() {
        let m = |name: &str, unit: Unit, v: f64| {
            Metric::new(name, unit, Better::Higher, vec![v]).unwrap_or_else(|| panic!("metric"))
        };
        let mut r = ResultRecord::new(
            "sweep.sha256sum",
            Params::new().with("copies", 4u64).with("iterations", 16u64),
            Status::Ok,
            vec![
                m("wall_time", Unit::Seconds, 2.0),
                m("throughput", Unit::KBps, 250_000.0),
            ],
        );
        r.family = "sweep".into();
        let p = SweepPoint::from_result("csvbox", &r).unwrap_or_else(|| panic!("no point"));
        assert_eq!((p.mbps_wall, p.wall), (250.0, Some(2.0)));
        assert_eq!((p.copies, p.iterations, p.runs, p.bytes), (4, 16, 4, 0));
        r.metrics.remove(0);
        let p = SweepPoint::from_result("csvbox", &r).unwrap_or_else(|| panic!("no point"));
        assert_eq!((p.mbps_wall, p.wall), (250.0, None));
        assert!(sweep_table(&[p], TableFormat::Text).contains("250.0"));
        // A time alone is no rate.
        r.metrics = vec![m("wall_time", Unit::Seconds, 2.0)];
        assert_eq!(SweepPoint::from_result("csvbox", &r), None);
    }
}
