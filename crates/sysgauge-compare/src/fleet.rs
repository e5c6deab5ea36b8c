//! Many hosts at once: the hosts of a `Comparison` in groups (an inventory
//! group, a tag's value, a CPU model), each case's median per group, and the
//! hosts that stand out from their own group.
//!
//! Why medians and MAD: a fleet comparison looks for the one machine that
//! is off (a failing disk, a CPU held below its clock, a noisy neighbour),
//! and one such machine must not move the figure it is judged against. The
//! group median and the median absolute deviation ignore up to half of the
//! group being odd; a mean and a standard deviation would be pulled towards
//! the very host to find.
//!
//! The outlier rule is the modified z-score of Iglewicz and Hoaglin,
//! `0.6745 × (x − median) / MAD`, flagged beyond 3.5, and only when the host
//! is also at least `MIN_DEVIATION` away from the group's median: in a group
//! of identical machines the MAD is the noise of a few per cent, and a
//! difference that small is not worth a line. A group needs three hosts
//! with the case for either rule to mean anything.

use crate::comparison::{CaseRow, Comparison};
use serde::{Deserialize, Serialize};
use sysgauge_core::record::Params;
use sysgauge_core::Better;
use sysgauge_stats::{mad, median};

/// Version of the `compare --group-by … --format json` document.
pub const FLEET_SCHEMA_VERSION: u32 = 1;

/// Beyond this modified z-score a host is an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// …and only if it is at least this far (a fraction) from its group's median.
pub const MIN_DEVIATION: f64 = 0.05;

/// Hosts a group needs for its spread and outliers to mean anything.
pub const MIN_HOSTS_FOR_OUTLIERS: usize = 3;

/// The name of the group of hosts that have no value for the grouping.
pub const NO_GROUP: &str = "(none)";

/// One group and its hosts (machine labels, in comparison order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    pub name: String,
    pub hosts: Vec<String>,
}

/// One group's figure for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupCell {
    /// Hosts of the group that have the case.
    pub hosts: usize,
    /// The median of those hosts' values, in the row's unit.
    pub median: f64,
    /// The median absolute deviation of those values (unscaled); null
    /// below `MIN_HOSTS_FOR_OUTLIERS` hosts.
    pub mad: Option<f64>,
    /// The lowest and highest host value.
    pub min: f64,
    pub max: f64,
}

/// One case across the groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRow {
    pub family: String,
    pub bench_id: String,
    pub params: Params,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// One per group, in group order; null where no host of the group has
    /// the case.
    pub cells: Vec<Option<GroupCell>>,
}

/// A host that stands out from its group on one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outlier {
    pub host: String,
    pub group: String,
    pub bench_id: String,
    pub params: Params,
    pub metric: String,
    pub unit: String,
    pub value: f64,
    pub group_median: f64,
    /// `value / group_median − 1`.
    pub deviation: f64,
    /// The modified z-score; null when the group's MAD is zero (most of
    /// the group identical), where any difference is beyond the threshold.
    pub z: Option<f64>,
    /// True when the host is worse than its group (slower, or higher
    /// latency), false when better.
    pub worse: bool,
}

/// The whole grouped view (also its JSON document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetGroups {
    pub schema_version: u32,
    /// What the hosts are grouped by (`cpu`, `group`, `tag:rack`).
    pub group_by: String,
    pub groups: Vec<HostGroup>,
    pub rows: Vec<GroupRow>,
    /// Worst first (largest modified z-score).
    pub outliers: Vec<Outlier>,
}

impl FleetGroups {
    /// Outliers per host, most first: the hosts to look at.
    pub fn outliers_by_host(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for o in &self.outliers {
            match counts.iter_mut().find(|(h, _)| *h == o.host) {
                Some((_, n)) => *n += 1,
                None => counts.push((o.host.clone(), 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        counts
    }
}

/// Groups the comparison's machines: `membership[i]` names the groups of
/// machine `i` (a host in several inventory groups counts in each; one in
/// none goes to `NO_GROUP`). Groups are listed by name.
pub fn group_hosts(c: &Comparison, membership: &[Vec<String>], group_by: &str) -> FleetGroups {
    let mut names: Vec<String> = membership
        .iter()
        .flat_map(|g| {
            if g.is_empty() {
                vec![NO_GROUP.to_string()]
            } else {
                g.clone()
            }
        })
        .collect();
    names.sort();
    names.dedup();
    let members: Vec<Vec<usize>> = names
        .iter()
        .map(|name| {
            (0..c.machines.len())
                .filter(|&i| {
                    let g = membership.get(i).map(Vec::as_slice).unwrap_or(&[]);
                    if g.is_empty() {
                        name == NO_GROUP
                    } else {
                        g.contains(name)
                    }
                })
                .collect()
        })
        .collect();
    let groups: Vec<HostGroup> = names
        .iter()
        .zip(&members)
        .map(|(name, m)| HostGroup {
            name: name.clone(),
            hosts: m.iter().map(|&i| c.machines[i].label.clone()).collect(),
        })
        .collect();
    let mut rows = Vec::with_capacity(c.rows.len());
    let mut outliers = Vec::new();
    for r in &c.rows {
        let mut cells = Vec::with_capacity(groups.len());
        for (g, m) in groups.iter().zip(&members) {
            let values: Vec<(usize, f64)> = m
                .iter()
                .filter_map(|&i| r.cells.get(i)?.as_ref().map(|cell| (i, cell.value)))
                .filter(|(_, v)| v.is_finite())
                .collect();
            let cell = group_cell(&values);
            if let Some(cell) = &cell {
                outliers.extend(outliers_of(c, r, &g.name, &values, cell));
            }
            cells.push(cell);
        }
        rows.push(GroupRow {
            family: r.family.clone(),
            bench_id: r.bench_id.clone(),
            params: r.params.clone(),
            metric: r.metric.clone(),
            unit: r.unit.clone(),
            better: r.better,
            cells,
        });
    }
    let strength = |o: &Outlier| o.z.map_or(f64::INFINITY, f64::abs);
    outliers.sort_by(|a, b| strength(b).total_cmp(&strength(a)));
    FleetGroups {
        schema_version: FLEET_SCHEMA_VERSION,
        group_by: group_by.to_string(),
        groups,
        rows,
        outliers,
    }
}

fn group_cell(values: &[(usize, f64)]) -> Option<GroupCell> {
    if values.is_empty() {
        return None;
    }
    let v: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
    Some(GroupCell {
        hosts: v.len(),
        median: median(&v),
        mad: (v.len() >= MIN_HOSTS_FOR_OUTLIERS).then(|| mad(&v)),
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

fn outliers_of(
    c: &Comparison,
    r: &CaseRow,
    group: &str,
    values: &[(usize, f64)],
    cell: &GroupCell,
) -> Vec<Outlier> {
    let Some(mad) = cell.mad else {
        return Vec::new();
    };
    if cell.median == 0.0 {
        return Vec::new();
    }
    values
        .iter()
        .filter_map(|&(i, v)| {
            let deviation = v / cell.median - 1.0;
            // A MAD of zero (most of the group identical) makes any host
            // that differs by MIN_DEVIATION an outlier.
            let z = (mad > 0.0).then(|| 0.6745 * (v - cell.median) / mad);
            if z.is_some_and(|z| z.abs() <= OUTLIER_Z) || deviation.abs() < MIN_DEVIATION {
                return None;
            }
            let worse = match r.better {
                Better::Higher => v < cell.median,
                Better::Lower => v > cell.median,
            };
            Some(Outlier {
                host: c.machines[i].label.clone(),
                group: group.to_string(),
                bench_id: r.bench_id.clone(),
                params: r.params.clone(),
                metric: r.metric.clone(),
                unit: r.unit.clone(),
                value: v,
                group_median: cell.median,
                deviation,
                z,
                worse,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparison::{compare, Machine};
    use crate::testutil::{run_with, throughput};

    fn fleet(values: &[(&str, f64)]) -> Comparison {
        let machines: Vec<Machine> = values
            .iter()
            .map(|(h, v)| {
                Machine::new(
                    h.to_string(),
                    run_with(h, None, vec![throughput("t.case", &[*v, *v, *v])]),
                )
            })
            .collect();
        compare(&machines, 0, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn medians_per_group_and_the_odd_host_out() {
        // Five web hosts near 1000 MB/s, one of them at 700; three db hosts
        // near 2000.
        let c = fleet(&[
            ("w1", 1000.0),
            ("w2", 1010.0),
            ("w3", 990.0),
            ("w4", 700.0),
            ("w5", 1005.0),
            ("d1", 2000.0),
            ("d2", 2020.0),
            ("d3", 1990.0),
        ]);
        let membership: Vec<Vec<String>> = ["web"; 5]
            .iter()
            .chain(["db"; 3].iter())
            .map(|g| vec![g.to_string()])
            .collect();
        let g = group_hosts(&c, &membership, "group");
        assert_eq!(
            g.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
            ["db", "web"]
        );
        assert_eq!(g.groups[1].hosts, ["w1", "w2", "w3", "w4", "w5"]);
        assert_eq!(g.rows.len(), 1);
        let db = g.rows[0].cells[0].as_ref().unwrap();
        let web = g.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((db.hosts, db.median), (3, 2000.0));
        assert_eq!(
            (web.hosts, web.median, web.min, web.max),
            (5, 1000.0, 700.0, 1010.0)
        );
        assert_eq!(web.mad, Some(10.0));
        assert_eq!(g.outliers.len(), 1, "{:?}", g.outliers);
        let o = &g.outliers[0];
        assert_eq!((o.host.as_str(), o.group.as_str()), ("w4", "web"));
        assert!(o.worse);
        assert!((o.deviation + 0.3).abs() < 1e-12);
        let z = o.z.unwrap_or_else(|| panic!("a z-score"));
        assert!((z + 0.6745 * 30.0).abs() < 1e-9, "{z}");
        assert_eq!(g.outliers_by_host(), [("w4".to_string(), 1)]);
    }

    #[test]
    fn small_differences_and_small_groups_are_not_outliers() {
        // A tight group (MAD 1) with one host 3 % off: a large z-score but
        // under MIN_DEVIATION. And a group of two hosts, far apart.
        let c = fleet(&[
            ("a", 100.0),
            ("b", 101.0),
            ("c", 99.0),
            ("d", 103.0),
            ("e", 100.0),
            ("x", 10.0),
            ("y", 1000.0),
        ]);
        let membership: Vec<Vec<String>> = ["g", "g", "g", "g", "g", "pair", "pair"]
            .iter()
            .map(|g| vec![g.to_string()])
            .collect();
        let g = group_hosts(&c, &membership, "group");
        assert!(g.outliers.is_empty(), "{:?}", g.outliers);
        let pair = g.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((pair.hosts, pair.mad), (2, None));
    }

    #[test]
    fn hosts_in_several_groups_or_none() {
        let c = fleet(&[("a", 1.0), ("b", 2.0), ("c", 3.0)]);
        let membership = vec![
            vec!["x".to_string(), "y".to_string()],
            vec!["y".to_string()],
            vec![],
        ];
        let g = group_hosts(&c, &membership, "group");
        let names: Vec<(&str, usize)> = g
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.hosts.len()))
            .collect();
        assert_eq!(names, [(NO_GROUP, 1), ("x", 1), ("y", 2)]);
        let medians: Vec<f64> = g.rows[0]
            .cells
            .iter()
            .map(|c| c.as_ref().unwrap().median)
            .collect();
        assert_eq!(medians, [3.0, 1.0, 1.5]);
    }

    #[test]
    fn lower_is_better_outliers_are_worse_when_higher() {
        use crate::testutil::result;
        use sysgauge_core::Unit;
        let machines: Vec<Machine> = [("a", 10.0), ("b", 10.0), ("c", 10.0), ("d", 30.0)]
            .iter()
            .map(|(h, v)| {
                Machine::new(
                    h.to_string(),
                    run_with(
                        h,
                        None,
                        vec![result(
                            "t.lat",
                            0,
                            1,
                            "latency",
                            Unit::Nanoseconds,
                            Better::Lower,
                            &[*v, *v],
                        )],
                    ),
                )
            })
            .collect();
        let c = compare(&machines, 0, &[]).unwrap_or_else(|e| panic!("{e}"));
        let g = group_hosts(&c, &vec![vec![]; 4], "cpu");
        assert_eq!(g.groups[0].name, NO_GROUP);
        assert_eq!(g.outliers.len(), 1);
        assert!(g.outliers[0].worse && g.outliers[0].z.is_none());
        // The JSON document round-trips, the MAD-of-zero outlier included.
        let text = serde_json::to_string(&g).unwrap_or_else(|e| panic!("{e}"));
        let back: FleetGroups = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, g);
    }
}
