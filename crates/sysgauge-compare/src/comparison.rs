//! `Comparison`: several machines' runs side by side against one reference.
//!
//! One row per case present on at least two machines, each machine's value
//! and its direction-adjusted ratio to the reference (above 1 = faster);
//! per family and overall the arithmetic and geometric means of the ratios;
//! the BogoMIPS ratio beside them; bootstrap 95 % intervals where both sides
//! have raw samples (at least two each); the cases that some machines lack;
//! the pairs that could not be compared and why; and the host facts that
//! differ. This struct is also the `compare --format json` document, so its
//! shape is versioned (`COMPARE_SCHEMA_VERSION`, docs/output-schema.md).
//!
//! The overall means are taken over every case, as the spreadsheets this
//! replaces did (so a CSV's numbers can be checked by hand), not over the
//! family means.

use crate::case::{adjusted_ratio, conversion_factor, CaseKey, CaseSet};
use crate::facts::differing_facts;
pub use crate::machine::Machine;
use crate::machine::RunSource;
use crate::parallel::par_map;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use sysgauge_core::record::{Params, RunRecord};
use sysgauge_core::{Better, Unit};
use sysgauge_stats::{arith_mean, geomean, geomean_ci, ratio_ci, ConfidenceInterval};
use thiserror::Error;

/// Version of the `compare --format json` document. 2: a missing case
/// names the machines that have it (`present_on`), no longer also every
/// machine that lacks it (the rest of `machines`).
pub const COMPARE_SCHEMA_VERSION: u32 = 2;

/// The family name of the all-cases summary.
pub const OVERALL: &str = "all";

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CompareError {
    #[error("a comparison needs at least two machines (got {0}); name more runs, hosts or files")]
    TooFew(usize),
    #[error("the reference (number {0}) is not one of the compared machines")]
    BadReference(usize),
    #[error(
        "no results for family '{family}' on the compared machines (families present: {present})"
    )]
    UnknownFamily { family: String, present: String },
}

/// A 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl From<ConfidenceInterval> for Interval {
    fn from(ci: ConfidenceInterval) -> Interval {
        Interval {
            low: ci.low,
            high: ci.high,
        }
    }
}

impl Interval {
    pub fn contains(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineInfo {
    pub label: String,
    pub host: String,
    /// The newest run the machine's results came from.
    pub run_id: String,
    /// Every run its results came from, newest first.
    #[serde(default)]
    pub runs: Vec<RunSource>,
    /// RFC 3339 start time of the run.
    pub started_at: String,
    pub command: String,
    pub status: String,
    pub bogomips: Option<f64>,
}

/// A host fact whose value differs between machines, one value per machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactRow {
    pub fact: String,
    pub values: Vec<String>,
}

/// One machine's number for a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// The median, in the row's unit.
    pub value: f64,
    /// Number of raw samples behind it.
    pub samples: usize,
    /// Direction-adjusted ratio to the reference (above 1 = faster); null
    /// when the reference lacks the case or a value is not positive.
    pub ratio: Option<f64>,
    /// Bootstrap 95 % interval of the ratio (both sides need 2+ samples).
    pub ci: Option<Interval>,
    /// False when the interval contains 1 (no significant difference);
    /// null without an interval.
    pub significant: Option<bool>,
    /// Something disturbed the machine while the case ran (the result's
    /// `disturbed` detail says what).
    #[serde(default)]
    pub disturbed: bool,
    /// The machine's code for the case is known to run slower than the
    /// best reference tool on its CPU: why (the result's `code_bound`
    /// detail). The ratio then partly measures sysgauge's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_bound: Option<String>,
    /// The run the number came from (a `runs[].reference` of its machine),
    /// when the machine's results come from more than one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseRow {
    pub family: String,
    pub bench_id: String,
    pub params: Params,
    pub workload_version: u32,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// The case's headline (first) metric, unless it is an index made of
    /// other cases. Only headline rows count in the means; other metrics (a
    /// %CP, a latency beside a throughput, `cpu.index-*`) are shown with
    /// their ratios but never averaged into a speed ratio.
    #[serde(default = "headline_default")]
    pub headline: bool,
    /// One per machine, in machine order; null where the machine lacks the
    /// case or its number could not be compared.
    pub cells: Vec<Option<Cell>>,
}

fn headline_default() -> bool {
    true
}

impl CaseRow {
    pub fn key(&self) -> CaseKey {
        CaseKey {
            bench_id: self.bench_id.clone(),
            params: self.params.clone(),
            workload_version: self.workload_version,
            metric: self.metric.clone(),
        }
    }
}

/// Means of one machine's ratios over a group of cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeanCell {
    /// Cases with a ratio (headline metrics only).
    pub cases: usize,
    pub arith_mean: Option<f64>,
    pub geomean: Option<f64>,
    /// Bootstrap 95 % interval of the geometric mean, when every case in the
    /// group has 2+ samples on both sides.
    pub geomean_ci: Option<Interval>,
    pub significant: Option<bool>,
}

/// Means per machine over a family (or `all`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSummary {
    pub family: String,
    pub cells: Vec<MeanCell>,
}

/// A case (benchmark id, params, workload version) some machines have and
/// others lack. A machine that has any of the case's metrics has the case:
/// a secondary metric only one tool reports (fio's latencies beside a
/// throughput) does not make a case missing.
///
/// Only the machines that have it are named: every machine of the
/// comparison not among them lacks it ([`MissingCase::missing_on`]). So the
/// comparison holds one name per result it was given; naming the lacking
/// machines too would hold machines × cases names (500 machines that share
/// no case: 300,000 cases × 499 names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MissingCase {
    pub family: String,
    pub bench_id: String,
    pub params: Params,
    pub workload_version: u32,
    /// The case's first metric (as the first machine that has it reports
    /// its metrics).
    pub metric: String,
    /// Labels of the machines that have the case, in machine order.
    pub present_on: Vec<String>,
    /// Why, when known (the case exists there with another workload version).
    pub note: Option<String>,
}

impl MissingCase {
    /// How many of `machines` lack the case.
    pub fn missing_count(&self, machines: &[MachineInfo]) -> usize {
        machines.len().saturating_sub(self.present_on.len())
    }

    /// Labels of the machines that lack the case, in machine order: the
    /// machines not in `present_on`. Costs one pass over the machines.
    pub fn missing_on<'a>(&self, machines: &'a [MachineInfo]) -> Vec<&'a str> {
        let present: std::collections::HashSet<&str> =
            self.present_on.iter().map(String::as_str).collect();
        machines
            .iter()
            .map(|m| m.label.as_str())
            .filter(|l| !present.contains(l))
            .collect()
    }
}

/// A machine's number that was left out of a row, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Excluded {
    pub bench_id: String,
    pub params: Params,
    pub metric: String,
    pub machine: String,
    pub reason: String,
}

impl Excluded {
    /// Case `key`'s number on `machine`, left out for `reason`.
    fn new(key: &CaseKey, machine: &str, reason: String) -> Excluded {
        Excluded {
            bench_id: key.bench_id.clone(),
            params: key.params.clone(),
            metric: key.metric.clone(),
            machine: machine.to_string(),
            reason,
        }
    }
}

/// The whole comparison (also the JSON document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    pub schema_version: u32,
    /// Label of the reference machine.
    pub reference: String,
    pub machines: Vec<MachineInfo>,
    pub differing_facts: Vec<FactRow>,
    pub rows: Vec<CaseRow>,
    /// Per family, in order of appearance.
    pub families: Vec<GroupSummary>,
    /// Over every case.
    pub overall: GroupSummary,
    /// BogoMIPS of each machine divided by the reference's (null when
    /// unknown on either side).
    pub bogomips_ratio: Vec<Option<f64>>,
    pub missing: Vec<MissingCase>,
    pub excluded: Vec<Excluded>,
}

impl Comparison {
    /// How many cases (benchmark id, params, workload version) the rows
    /// compare: a case has a row per metric.
    pub fn compared_cases(&self) -> usize {
        self.rows
            .iter()
            .map(|r| (&r.bench_id, &r.params, r.workload_version))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// Index of the reference machine.
    pub fn reference_index(&self) -> usize {
        self.machines
            .iter()
            .position(|m| m.label == self.reference)
            .unwrap_or(0)
    }

    /// Rows of one family.
    pub fn family_rows<'a>(&'a self, family: &'a str) -> impl Iterator<Item = &'a CaseRow> + 'a {
        self.rows.iter().filter(move |r| r.family == family)
    }
}

/// FNV-1a: a fixed, dependency-free hash to seed each case's bootstrap, so
/// the same stored samples always give the same interval.
pub(crate) fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Samples oriented so that sample-ratio a/b is the adjusted ratio.
pub(crate) fn oriented<'a>(m: &'a [f64], r: &'a [f64], better: Better) -> (&'a [f64], &'a [f64]) {
    match better {
        Better::Higher => (m, r),
        Better::Lower => (r, m),
    }
}

struct Prepared {
    unit: Unit,
    better: Better,
    /// Per machine: converted samples and value.
    values: Vec<Option<(Vec<f64>, f64)>>,
    /// Per machine: whether the case was disturbed there.
    disturbed: Vec<bool>,
    /// Per machine: why its number is code-bound, if it is.
    code_bound: Vec<Option<String>>,
    /// Per machine: the run the number came from.
    runs: Vec<Option<String>>,
    headline: bool,
}

/// Mark every disturbed result of `run` as not a measure of its machine,
/// so comparisons exclude it and indexes leave it out, each with the
/// reason (`--exclude-disturbed`). Returns how many it marked.
pub fn leave_out_disturbed(run: &mut RunRecord) -> usize {
    let mut n = 0;
    for r in &mut run.results {
        if let Some(why) = r.disturbed().map(str::to_string) {
            if r.untrusted().is_none() {
                r.details
                    .insert(sysgauge_core::UNTRUSTED, format!("disturbed: {why}"));
                n += 1;
            }
        }
    }
    n
}

/// Compare `machines` against `machines[reference]`, optionally only the
/// given families.
/// Above this many machines a comparison has no bootstrap intervals: each
/// costs thousands of resamples per case and machine (500 machines × 80
/// cases took 25 s), and a table that wide is read for its values and
/// ratios, not for each cell's interval.
pub const MAX_MACHINES_WITH_INTERVALS: usize = 24;

/// `compare_with_intervals`, with intervals up to
/// `MAX_MACHINES_WITH_INTERVALS` machines.
pub fn compare(
    machines: &[Machine],
    reference: usize,
    families: &[String],
) -> Result<Comparison, CompareError> {
    let intervals = machines.len() <= MAX_MACHINES_WITH_INTERVALS;
    compare_with_intervals(machines, reference, families, intervals)
}

/// The comparison of `machines` against `machines[reference]` over
/// `families` (all when empty); bootstrap intervals only when `intervals`.
pub fn compare_with_intervals(
    machines: &[Machine],
    reference: usize,
    families: &[String],
    intervals: bool,
) -> Result<Comparison, CompareError> {
    if machines.len() < 2 {
        return Err(CompareError::TooFew(machines.len()));
    }
    if reference >= machines.len() {
        return Err(CompareError::BadReference(reference));
    }
    let mut sets: Vec<CaseSet> = machines.iter().map(CaseSet::from_machine).collect();
    if !families.is_empty() {
        let mut present: Vec<String> = Vec::new();
        for s in &sets {
            for f in s.families() {
                if !present.contains(&f) {
                    present.push(f);
                }
            }
        }
        for f in families {
            if !present.contains(f) {
                return Err(CompareError::UnknownFamily {
                    family: f.clone(),
                    present: present.join(", "),
                });
            }
        }
        for s in &mut sets {
            s.retain_families(families);
        }
    }
    let labels: Vec<String> = machines.iter().map(|m| m.label.clone()).collect();

    // Keys in order of first appearance, the reference's first.
    let mut order: Vec<&CaseKey> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let visit: Vec<usize> = std::iter::once(reference)
        .chain((0..machines.len()).filter(|&i| i != reference))
        .collect();
    for &i in &visit {
        for k in sets[i].keys() {
            if seen.insert(k) {
                order.push(k);
            }
        }
    }

    // Which machines have each key, and which workload versions of each
    // case (id, params, metric) every machine has: built once, so a key's
    // machines and an absent machine's other version are lookups, and the
    // work grows with machines × cases, not with their square.
    let mut holders: HashMap<&CaseKey, Vec<usize>> = HashMap::new();
    let mut versions: HashMap<SameCase<'_>, Vec<(usize, u32)>> = HashMap::new();
    // A machine has a case when it has any of its metrics: one that lacks
    // only a secondary metric (fio's latencies beside sysgauge's MB/s, a
    // system time of zero) does not lack the case.
    let mut case_holders: HashMap<Case<'_>, Vec<usize>> = HashMap::new();
    for (i, set) in sets.iter().enumerate() {
        for k in set.keys() {
            holders.entry(k).or_default().push(i);
            let machines_of_case = case_holders.entry(case_of(k)).or_default();
            if machines_of_case.last() != Some(&i) {
                machines_of_case.push(i);
            }
            versions
                .entry((&k.bench_id, &k.params, &k.metric))
                .or_default()
                .push((i, k.workload_version));
        }
    }

    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let mut excluded = Vec::new();
    drop(seen);
    let mut to_build: Vec<(&CaseKey, String, Option<Prepared>, Vec<Excluded>)> = Vec::new();
    let mut reported: std::collections::HashSet<Case<'_>> = Default::default();
    for &key in &order {
        let present: &[usize] = holders.get(key).map(Vec::as_slice).unwrap_or_default();
        let family = present
            .first()
            .and_then(|&i| sets[i].get(key))
            .map(|d| d.family.clone())
            .unwrap_or_else(|| key.family().to_string());
        let case = case_of(key);
        let case_present = case_holders
            .get(&case)
            .map(Vec::as_slice)
            .unwrap_or_default();
        // A case some machines lack, once, by its first metric.
        if case_present.len() < machines.len() && reported.insert(case) {
            // An absent machine's first other version of the case, in the
            // order of its keys. Only the machines holding some version are
            // visited (`present` is in machine order), so a case costs its
            // holders, not every machine.
            let mut other_versions: Vec<String> = Vec::new();
            let mut named = std::collections::HashSet::new();
            let same_case = versions
                .get(&(key.bench_id.as_str(), &key.params, key.metric.as_str()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            for &(i, v) in same_case {
                if v != key.workload_version
                    && case_present.binary_search(&i).is_err()
                    && named.insert(i)
                {
                    other_versions.push(format!("{} has workload version {v}", labels[i]));
                }
            }
            missing.push(MissingCase {
                family: family.clone(),
                bench_id: key.bench_id.clone(),
                params: key.params.clone(),
                workload_version: key.workload_version,
                metric: key.metric.clone(),
                present_on: case_present.iter().map(|&i| labels[i].clone()).collect(),
                note: (!other_versions.is_empty()).then(|| {
                    format!(
                        "not compared: {} (this case is version {})",
                        other_versions.join(", "),
                        key.workload_version
                    )
                }),
            });
        }
        // A row when two machines have the case: a metric only one of them
        // reports (fio's latencies beside the MB/s sysgauge's disk case also
        // measures) is a row with an empty cell, as it is beside a third
        // machine that reports it too; it vanished with two.
        if case_present.len() < 2 {
            continue;
        }
        // What `prepare` excludes comes before what `build_row` does, case
        // by case, as if each case were done whole in turn.
        let mut excluded_here = Vec::new();
        let prepared = prepare(key, present, reference, &sets, &labels, &mut excluded_here);
        to_build.push((key, family, prepared, excluded_here));
    }
    for (row, excluded_here) in par_map(&to_build, |(key, family, prepared, before)| {
        let mut excluded_here = before.clone();
        let row = prepared.as_ref().map(|p| {
            build_row(
                key,
                family,
                reference,
                p,
                &labels,
                &mut excluded_here,
                intervals,
            )
        });
        (row, excluded_here)
    }) {
        excluded.extend(excluded_here);
        rows.extend(row);
    }

    let mut family_names: Vec<String> = Vec::new();
    for r in &rows {
        if !family_names.contains(&r.family) {
            family_names.push(r.family.clone());
        }
    }
    // The overall summary first: it is the largest, so it starts first.
    let groups: Vec<Option<&String>> = std::iter::once(None)
        .chain(family_names.iter().map(Some))
        .collect();
    let mut summaries = par_map(&groups, |group| match group {
        None => summarise(
            OVERALL,
            rows.iter(),
            machines.len(),
            reference,
            &sets,
            intervals,
        ),
        Some(f) => summarise(
            f,
            rows.iter().filter(|r| r.family == **f),
            machines.len(),
            reference,
            &sets,
            intervals,
        ),
    });
    let overall = summaries.remove(0);

    let ref_bogo = machines[reference].run.host.cpu.bogomips;
    let bogomips_ratio = machines
        .iter()
        .map(|m| {
            let b = m.run.host.cpu.bogomips?;
            adjusted_ratio(b, ref_bogo?, Better::Higher)
        })
        .collect();
    let runs: Vec<&RunRecord> = machines.iter().map(|m| &m.run).collect();
    Ok(Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        reference: labels[reference].clone(),
        machines: machines
            .iter()
            .map(|m| MachineInfo {
                label: m.label.clone(),
                host: m.run.host_name().to_string(),
                run_id: m.run.run_id.clone(),
                runs: m.sources.clone(),
                started_at: m.run.started_at.to_rfc3339(),
                command: m.run.command.clone(),
                status: m.run.status.as_str().to_string(),
                bogomips: m.run.host.cpu.bogomips,
            })
            .collect(),
        differing_facts: differing_facts(&runs)
            .into_iter()
            .map(|(fact, values)| FactRow { fact, values })
            .collect(),
        rows,
        families: summaries,
        overall,
        bogomips_ratio,
        missing,
        excluded,
    })
}

/// A case whatever its workload version: id, params, metric.
type SameCase<'a> = (&'a str, &'a Params, &'a str);

/// A case whatever its metrics: id, params, workload version.
type Case<'a> = (&'a str, &'a Params, u32);

fn case_of(k: &CaseKey) -> Case<'_> {
    (&k.bench_id, &k.params, k.workload_version)
}

/// Bring every present machine's number into one unit (the reference's, or
/// the first present machine's); numbers in another dimension or with the
/// other direction are excluded with a reason.
fn prepare(
    key: &CaseKey,
    present: &[usize],
    reference: usize,
    sets: &[CaseSet],
    labels: &[String],
    excluded: &mut Vec<Excluded>,
) -> Option<Prepared> {
    let anchor = if present.contains(&reference) {
        reference
    } else {
        present[0]
    };
    let base = sets[anchor].get(key)?;
    let mut values: Vec<Option<(Vec<f64>, f64)>> = vec![None; sets.len()];
    let mut disturbed = vec![false; sets.len()];
    let mut code_bound: Vec<Option<String>> = vec![None; sets.len()];
    let mut runs = vec![None; sets.len()];
    let mut usable = 0;
    for &i in present {
        let Some(d) = sets[i].get(key) else { continue };
        if let Some(why) = &d.untrusted {
            excluded.push(Excluded::new(
                key,
                &labels[i],
                format!("not a measure of the machine: {why}"),
            ));
            continue;
        }
        if d.better != base.better {
            excluded.push(Excluded::new(
                key,
                &labels[i],
                format!(
                    "'{}' is better {} here but {} on {}",
                    key.metric, d.better, base.better, labels[anchor]
                ),
            ));
            continue;
        }
        let Some(f) = conversion_factor(&d.unit, &base.unit) else {
            excluded.push(Excluded::new(
                key,
                &labels[i],
                format!(
                    "unit {} cannot be converted to {} (used on {})",
                    d.unit, base.unit, labels[anchor]
                ),
            ));
            continue;
        };
        let samples: Vec<f64> = d.samples.iter().map(|s| s * f).collect();
        values[i] = Some((samples, d.value * f));
        disturbed[i] = d.disturbed.is_some();
        code_bound[i] = d.code_bound.clone();
        runs[i] = d.run.clone();
        usable += 1;
    }
    (usable >= 1).then_some(Prepared {
        unit: base.unit.clone(),
        better: base.better,
        values,
        disturbed,
        code_bound,
        runs,
        headline: base.headline,
    })
}

fn usable_samples(s: &[f64]) -> bool {
    s.len() >= 2 && s.iter().all(|v| v.is_finite() && *v > 0.0)
}

fn build_row(
    key: &CaseKey,
    family: &str,
    reference: usize,
    p: &Prepared,
    labels: &[String],
    excluded: &mut Vec<Excluded>,
    intervals: bool,
) -> CaseRow {
    // A number alone in its row (the others lack the metric or were
    // excluded) has no ratio, not even the reference's 1: there is nothing
    // to compare it with.
    let alone = p.values.iter().flatten().count() < 2;
    let reference_value = p.values[reference].clone().filter(|_| !alone);
    let cells = p
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (samples, value) = v.as_ref()?;
            let mut cell = Cell {
                value: *value,
                samples: samples.len(),
                ratio: None,
                ci: None,
                significant: None,
                disturbed: p.disturbed[i],
                code_bound: p.code_bound[i].clone(),
                run: p.runs[i].clone(),
            };
            if let Some((ref_samples, ref_value)) = &reference_value {
                cell.ratio = adjusted_ratio(*value, *ref_value, p.better);
                if cell.ratio.is_none() {
                    let which = if *value > 0.0 {
                        &labels[reference]
                    } else {
                        &labels[i]
                    };
                    excluded.push(Excluded::new(
                        key,
                        &labels[i],
                        format!("the value on {which} is not positive, so there is no ratio"),
                    ));
                } else if i == reference {
                    cell.ratio = Some(1.0);
                } else if intervals && usable_samples(samples) && usable_samples(ref_samples) {
                    let (a, b) = oriented(samples, ref_samples, p.better);
                    let seed = seed_of(&format!("{}|{}", key.seed_text(), labels[i]));
                    if let Some(ci) = ratio_ci(a, b, seed) {
                        let iv = Interval::from(ci);
                        cell.significant = Some(!iv.contains(1.0));
                        cell.ci = Some(iv);
                    }
                }
            }
            Some(cell)
        })
        .collect();
    CaseRow {
        family: family.to_string(),
        bench_id: key.bench_id.clone(),
        params: key.params.clone(),
        workload_version: key.workload_version,
        metric: key.metric.clone(),
        unit: p.unit.symbol().to_string(),
        better: p.better,
        headline: p.headline,
        cells,
    }
}

fn summarise<'a>(
    family: &str,
    rows: impl Iterator<Item = &'a CaseRow>,
    n_machines: usize,
    reference: usize,
    sets: &[CaseSet],
    intervals: bool,
) -> GroupSummary {
    // Only headline metrics: a ratio of %CP or of a secondary latency is
    // not a speed ratio.
    let rows: Vec<&CaseRow> = rows.filter(|r| r.headline).collect();
    let cells = (0..n_machines)
        .map(|m| {
            let with_ratio: Vec<&CaseRow> = rows
                .iter()
                .copied()
                .filter(|r| r.cells[m].as_ref().and_then(|c| c.ratio).is_some())
                .collect();
            let ratios: Vec<f64> = with_ratio
                .iter()
                .filter_map(|r| r.cells[m].as_ref().and_then(|c| c.ratio))
                .collect();
            let mut cell = MeanCell {
                cases: ratios.len(),
                arith_mean: arith_mean(&ratios),
                geomean: geomean(&ratios),
                geomean_ci: None,
                significant: None,
            };
            if intervals && m != reference && !ratios.is_empty() {
                // Raw samples of both sides for every case, converted to the
                // row's unit the same way the cells were.
                let mut pairs_owned: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
                for r in &with_ratio {
                    let key = r.key();
                    let (Some(a), Some(b)) = (sets[m].get(&key), sets[reference].get(&key)) else {
                        break;
                    };
                    let unit = Unit::from(r.unit.clone());
                    let (Some(fa), Some(fb)) = (
                        conversion_factor(&a.unit, &unit),
                        conversion_factor(&b.unit, &unit),
                    ) else {
                        break;
                    };
                    let sa: Vec<f64> = a.samples.iter().map(|s| s * fa).collect();
                    let sb: Vec<f64> = b.samples.iter().map(|s| s * fb).collect();
                    if !usable_samples(&sa) || !usable_samples(&sb) {
                        break;
                    }
                    let (x, y) = oriented(&sa, &sb, r.better);
                    pairs_owned.push((x.to_vec(), y.to_vec()));
                }
                if pairs_owned.len() == with_ratio.len() {
                    let pairs: Vec<(&[f64], &[f64])> = pairs_owned
                        .iter()
                        .map(|(a, b)| (a.as_slice(), b.as_slice()))
                        .collect();
                    let seed = seed_of(&format!("{family}|{m}"));
                    if let Some(ci) = geomean_ci(&pairs, seed) {
                        let iv = Interval::from(ci);
                        cell.significant = Some(!iv.contains(1.0));
                        cell.geomean_ci = Some(iv);
                    }
                }
            }
            cell
        })
        .collect();
    GroupSummary {
        family: family.to_string(),
        cells,
    }
}

#[cfg(test)]
mod tests;
