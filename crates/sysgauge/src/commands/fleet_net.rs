//! `sysgauge fleet net`: the network between every ordered pair of hosts,
//! as matrices (rows = from, columns = to) of 2ping round trip and
//! per-direction loss, TCP throughput and UDP packet rate.
//!
//! This file checks the command line, makes the run's key, drives
//! `sysgauge_fleet::matrix` (what happens on the hosts) while it draws a
//! progress line per host, then turns each host's records (its pings and
//! the pair tests it sent in) into one run per host: results named by
//! peer (`sysgauge_net::net::matrix::name_peers`), tagged with the
//! inventory alias, groups and variables and with `fleet_net` = the
//! matrix's id, stored, and printed as matrices. docs/fleet.md tells the
//! whole story.

use super::fleet::{check_reach, control_dir, tag_run, FleetHostsArgs, Progress, Reach};
use crate::cli::{DbArg, ProfileArg};
use clap::{Args, ValueEnum};

use crate::exit::Exit;
use crate::machines::parse_record_text;
use crate::values::within;
use anyhow::{bail, Context, Result};
use sysgauge_core::record::{Profile, RunRecord, RunStatus};
use sysgauge_core::text::for_terminal;
use sysgauge_fleet::inventory::Host;
use sysgauge_fleet::matrix::{self, Event, FloodStep, MatrixHost, MatrixPlan};
use sysgauge_fleet::remote::Plan;
use sysgauge_net::net::matrix::{
    flood_rate, flood_still_rising, mark_fleet_flood, matrices, name_peers, PEER,
};
use sysgauge_net::net::ping::PingBenchmark;
use sysgauge_report::{format_value, render_matrices, MatrixFormat, Table, TableFormat};

#[derive(Debug, Args)]
#[command(
    after_help = "Every ordered pair of hosts: 2ping round trip and loss split into outbound and \
inbound, TCP throughput and UDP packet rate, the throughput tests in rounds of disjoint pairs. \
A host's `net_address` inventory variable names the address the others measure it at \
(default: the address ssh reaches). Exit status: 0 every host and pair measured, 1 some \
failed, 2 usage error, 130 interrupted. See docs/fleet.md.",
    mut_arg("timeout", |a| a.help("The most the whole matrix may take, from connecting to clean-up (e.g. 600, 90s)"))
)]
pub struct FleetNetArgs {
    #[command(flatten)]
    pub target: FleetHostsArgs,

    /// The pair tests' profile (tiny, quick, standard, full): how long each
    /// throughput and packet-rate test runs.
    #[arg(long, value_enum, default_value_t = ProfileArg::Quick)]
    pub profile: ProfileArg,

    /// 2ping probes per ordered pair, sent alongside the throughput rounds.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub pings: u64,

    /// Seconds between two probes to the same peer.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.05)]
    pub ping_interval: f64,

    /// RTT and loss only: no throughput or packet-rate rounds.
    #[arg(long)]
    pub no_throughput: bool,

    /// Instead of the matrix: flood HOST (which needs to run nothing but its
    /// network stack) with ICMP echoes from 1, 2, 4 … of the hosts at once,
    /// until the total reply rate stops rising.
    #[arg(long, value_name = "HOST", conflicts_with_all = ["show", "no_throughput"])]
    pub icmp: Option<String>,

    /// ICMP flood senders on each flooding host (with --icmp).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "icmp")]
    pub senders: usize,

    /// Seconds each step of the flood lasts: every flooding host counts its
    /// replies over the same window (with --icmp).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, requires = "icmp")]
    pub flood_for: f64,

    /// Measure nothing: print a stored matrix again (the latest, or the
    /// one whose id starts with MATRIX), e.g. in another --format.
    #[arg(long, value_name = "MATRIX", num_args = 0..=1, default_missing_value = "latest")]
    pub show: Option<String>,

    /// How to print the matrices.
    #[arg(long, value_enum, default_value_t = MatrixFormatArg::Text)]
    pub format: MatrixFormatArg,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixFormatArg {
    Text,
    Markdown,
    Csv,
    Json,
}

/// The inventory variable naming the address a host is measured at, when
/// it is not the one ssh reaches it by (a data network beside the
/// management one; an IPv6 address).
pub const NET_ADDRESS_VAR: &str = "net_address";

/// The tag that ties the runs of one matrix together.
pub const MATRIX_TAG: &str = "fleet_net";

/// The tag that ties the runs of one fleet flood (`--icmp`) together.
pub const FLOOD_TAG: &str = "fleet_flood";

/// The command name the merged per-host runs are stored under.
const COMMAND: &str = "fleet-net";

pub fn run(a: FleetNetArgs) -> Result<Exit> {
    if let Some(which) = &a.show {
        return show(&a, which);
    }
    let Reach {
        given,
        settings,
        binaries,
    } = check_reach(&a.target)?;
    let Some(hosts) = given else {
        bail!("name the hosts: --inventory FILE or HOST…");
    };
    if hosts.len() < 2 {
        bail!(
            "the matrix needs at least two hosts; the selection has {}",
            hosts.len()
        );
    }
    within("--senders", a.senders, 1, 256, "")?;
    within("--flood-for", a.flood_for, 0.5, 600.0, " seconds")?;
    within("--pings", a.pings, 1, 100_000, "")?;
    within("--ping-interval", a.ping_interval, 0.001, 60.0, " seconds")?;
    let members: Vec<MatrixHost> = hosts
        .iter()
        .map(|h| MatrixHost {
            host: h.clone(),
            net_address: h
                .vars
                .get(NET_ADDRESS_VAR)
                .cloned()
                .unwrap_or_else(|| h.address.clone()),
        })
        .collect();
    for (i, m) in members.iter().enumerate() {
        if m.net_address.is_empty() || m.net_address.contains(char::is_whitespace) {
            bail!(
                "host {}: '{}' is not an address",
                m.host.name,
                m.net_address
            );
        }
        if let Some(other) = members[..i].iter().find(|o| o.net_address == m.net_address) {
            bail!(
                "hosts {} and {} are both measured at {}: give each its own address ({NET_ADDRESS_VAR}=…)",
                other.host.name,
                m.host.name,
                m.net_address
            );
        }
    }
    let db = crate::config::resolve_db(a.db.db.as_deref())?;
    let mut store = crate::db::open_for_writing(&db, None)?;
    let cancel = crate::signals::install()?;
    let control = control_dir()?;
    let profile = clap::ValueEnum::to_possible_value(&a.profile)
        .map(|v| v.get_name().to_string())
        .unwrap_or_else(|| "quick".into());
    // Every run of the matrix is stored under this profile, whatever its
    // first record (a ping's, which knows no profile) says.
    let stored_profile = match a.profile {
        ProfileArg::Tiny => Profile::Tiny,
        ProfileArg::Quick => Profile::Quick,
        ProfileArg::Standard => Profile::Standard,
        ProfileArg::Full => Profile::Full,
    };
    let mp = MatrixPlan {
        plan: Plan {
            binaries,
            args: Vec::new(),
            timeout: a.target.timeout.0,
            ssh: settings,
            control_dir: control.path().to_path_buf(),
        },
        // 244 random bits, made for this run and gone with it.
        key: format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        ),
        ping_args: vec![
            "-c".into(),
            a.pings.to_string(),
            "-i".into(),
            a.ping_interval.to_string(),
            "--linger".into(),
            "3".into(),
        ],
        pair_args: if a.no_throughput {
            Vec::new()
        } else {
            vec!["--profile".into(), profile.to_string()]
        },
    };
    let matrix_id = uuid::Uuid::new_v4().to_string();
    let deadline = std::time::Instant::now() + a.target.timeout.0;
    if let Some(target) = &a.icmp {
        let setup = Setup {
            hosts: &hosts,
            members: &members,
            store: &mut store,
            cancel: &cancel,
            mp,
            id: matrix_id,
            profile: stored_profile,
        };
        let exit = fleet_flood(setup, target, a.senders, a.flood_for, &profile);
        drop(control);
        return exit;
    }
    eprintln!(
        "fleet net: {} hosts, {} ordered pairs; {} 2ping probes per pair{}",
        hosts.len(),
        hosts.len() * (hosts.len() - 1),
        a.pings,
        if a.no_throughput {
            String::new()
        } else {
            format!(
                ", throughput in {} rounds of disjoint pairs ({profile} profile)",
                sysgauge_fleet::schedule::tournament(hosts.len()).len()
            )
        }
    );
    let progress = Progress::new(&hosts);
    let mut records: Vec<Vec<RunRecord>> = vec![Vec::new(); hosts.len()];
    let mut host_failures: Vec<Option<String>> = vec![None; hosts.len()];
    let mut problems: Vec<(String, String)> = Vec::new();
    // The hosts whose pings were asked to stop (Ctrl-C, --timeout) and
    // sent home what they measured.
    let mut pings_stopped = vec![false; hosts.len()];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let (members, mp, cancel) = (&members, &mp, &cancel);
        s.spawn(move || matrix::run(members, mp, cancel, tx));
        for ev in rx {
            match ev {
                Event::Stage(i, text) => progress.set(i, &for_terminal(&text), false),
                Event::HostFailed(i, f) => {
                    progress.set(i, &for_terminal(&format!("failed: {}", f.reason)), true);
                    host_failures[i] = Some(f.reason);
                }
                Event::Record(i, json) => {
                    match parse_record_text(&format!("host {}", hosts[i].name), &json) {
                        Ok(runs) => {
                            pings_stopped[i] |= runs.iter().any(is_stopped_ping);
                            records[i].extend(runs);
                        }
                        Err(e) => problems.push((
                            hosts[i].name.clone(),
                            format!("its record was refused: {e:#}"),
                        )),
                    }
                }
                Event::PairFailed { from, to, reason } => {
                    let what = match to {
                        Some(t) => format!("{} → {}", hosts[from].name, hosts[t].name),
                        None => hosts[from].name.clone(),
                    };
                    problems.push((what, reason));
                }
            }
        }
    });
    progress.clear();
    drop(control);

    let peers: Vec<(String, String)> = members
        .iter()
        .map(|m| (m.net_address.clone(), m.host.name.clone()))
        .collect();
    // A matrix cut off (Ctrl-C, --timeout) leaves the hosts that had not
    // given every record they were to give (their pings, and one pair test
    // towards each other measured host) with a partial run: stored as
    // interrupted, like any run stopped part-way.
    let cut_off = cancel.is_cancelled() || std::time::Instant::now() >= deadline;
    let measured = host_failures.iter().filter(|f| f.is_none()).count();
    let expected = 1 + if a.no_throughput {
        0
    } else {
        measured.saturating_sub(1)
    };
    let mut stored: Vec<RunRecord> = Vec::new();
    // What each host measured: its pings, and the peers of its pair tests.
    let mut pinged = vec![false; hosts.len()];
    let mut tested: Vec<Vec<String>> = vec![Vec::new(); hosts.len()];
    for (i, host) in hosts.iter().enumerate() {
        let partial = cut_off && records[i].len() < expected;
        let Some(mut run) = merge(std::mem::take(&mut records[i]), host, stored_profile) else {
            continue;
        };
        if partial {
            run.status = RunStatus::Interrupted;
        }
        name_peers(&mut run, &peers);
        for r in &run.results {
            let is_ping =
                [PingBenchmark::RTT_ID, PingBenchmark::LOSS_ID].contains(&r.bench_id.as_str());
            pinged[i] |= is_ping;
            match r.params.get_str(PEER) {
                Some(peer) if !is_ping => tested[i].push(peer.to_string()),
                _ => {}
            }
        }
        run.tags.insert(MATRIX_TAG.to_string(), matrix_id.clone());
        store
            .insert_run(&run, "fleet")
            .with_context(|| format!("storing the run of {}", host.name))?;
        stored.push(run);
    }
    print_matrices(&stored, a.format)?;

    let stopped_by = if cancel.is_cancelled() {
        "the interruption"
    } else {
        "--timeout"
    };
    for (host, _) in hosts.iter().zip(&pings_stopped).filter(|(_, s)| **s) {
        problems.push((
            host.name.clone(),
            format!(
                "its pings were stopped by {stopped_by}: what they measured is stored as interrupted"
            ),
        ));
    }
    if cut_off {
        let why = if cancel.is_cancelled() {
            "not measured: the matrix was interrupted"
        } else {
            "not measured: --timeout ended the matrix"
        };
        let took_part = |i: usize| host_failures[i].is_none();
        let mut missing = Vec::new();
        for i in (0..hosts.len()).filter(|&i| took_part(i)) {
            if !pinged[i] {
                missing.push(hosts[i].name.clone());
            }
            for j in (0..hosts.len()).filter(|&j| j != i && took_part(j)) {
                if !a.no_throughput && !tested[i].contains(&hosts[j].name) {
                    missing.push(format!("{} → {}", hosts[i].name, hosts[j].name));
                }
            }
        }
        // The pair that was running has its own line already.
        missing.retain(|m| !problems.iter().any(|(what, _)| what == m));
        problems.extend(missing.into_iter().map(|m| (m, why.to_string())));
    }
    report_problems(&hosts, &host_failures, &problems);
    let partial = stored
        .iter()
        .filter(|r| r.status == RunStatus::Interrupted)
        .count();
    if stored.is_empty() {
        eprintln!(
            "fleet net: 0 of {} hosts measured; nothing stored in {}",
            hosts.len(),
            store.path().display()
        );
    } else {
        eprintln!(
            "fleet net: {} of {} hosts measured{}; matrix {matrix_id} stored in {} (`sysgauge report net.html` draws its heatmaps)",
            stored.len(),
            hosts.len(),
            if partial > 0 {
                format!(", {partial} of them in part (stored as interrupted)")
            } else {
                String::new()
            },
            store.path().display()
        );
    }
    Ok(if cancel.is_cancelled() {
        Exit::Interrupted
    } else if host_failures.iter().all(Option::is_none) && problems.is_empty() {
        Exit::Ok
    } else {
        Exit::BenchFailed
    })
}

/// Whether `run` is a host's pings stopped before their count.
fn is_stopped_ping(run: &RunRecord) -> bool {
    run.status == RunStatus::Interrupted
        && run
            .results
            .iter()
            .any(|r| [PingBenchmark::RTT_ID, PingBenchmark::LOSS_ID].contains(&r.bench_id.as_str()))
}

/// What a matrix or a fleet flood runs with.
struct Setup<'a> {
    hosts: &'a [Host],
    members: &'a [MatrixHost],
    store: &'a mut sysgauge_store::Store,
    cancel: &'a sysgauge_core::CancelToken,
    mp: MatrixPlan,
    /// The id tying the stored runs together.
    id: String,
    /// The profile every stored run has.
    profile: Profile,
}

/// `--icmp TARGET`: 1, 2, 4 … hosts flood TARGET at once until the total
/// echo reply rate stops rising; a table of the steps, one run per host.
fn fleet_flood(
    setup: Setup,
    target: &str,
    senders: usize,
    seconds: f64,
    profile: &str,
) -> Result<Exit> {
    let Setup {
        hosts,
        members,
        store,
        cancel,
        mut mp,
        id,
        profile: stored_profile,
    } = setup;
    mp.pair_args = vec![
        "--profile".into(),
        profile.to_string(),
        "--senders".into(),
        senders.to_string(),
        "--flood-for".into(),
        seconds.to_string(),
    ];
    let mut steps: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k < hosts.len())
        .collect();
    steps.push(hosts.len());
    eprintln!(
        "fleet net: flooding {target} with ICMP echoes from {} host(s) at once, {senders} sender(s) each, {seconds} s a step, until the reply rate stops rising",
        steps
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    // What each step gave: (hosts, [(host index, record)]).
    let parse = |i: usize, json: &str| -> Option<RunRecord> {
        parse_record_text(&format!("host {}", hosts[i].name), json)
            .ok()?
            .into_iter()
            .next()
    };
    let total = |records: &[(usize, String)]| -> f64 {
        records
            .iter()
            .filter_map(|(i, json)| parse(*i, json))
            .filter_map(|r| flood_rate(&r))
            .sum()
    };
    let steps_seen: std::sync::Mutex<Vec<FloodStep>> = std::sync::Mutex::new(Vec::new());
    let go_on = |done: &[FloodStep]| -> bool {
        if let Ok(mut seen) = steps_seen.lock() {
            *seen = done.to_vec();
        }
        match done {
            [.., (_, prev), (_, last)] => flood_still_rising(total(prev), total(last)),
            _ => true,
        }
    };
    let progress = Progress::new(hosts);
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut host_failures: Vec<Option<String>> = vec![None; hosts.len()];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let (mp, go_on) = (&mp, &go_on);
        s.spawn(move || matrix::flood(members, mp, target, &steps, go_on, cancel, tx));
        for ev in rx {
            match ev {
                Event::Stage(i, text) => progress.set(i, &for_terminal(&text), false),
                Event::HostFailed(i, f) => {
                    progress.set(i, &for_terminal(&format!("failed: {}", f.reason)), true);
                    host_failures[i] = Some(f.reason);
                }
                // The steps' records come through `go_on`.
                Event::Record(..) => {}
                Event::PairFailed { from, reason, .. } => {
                    problems.push((hosts[from].name.clone(), reason));
                }
            }
        }
    });
    progress.clear();
    let done = steps_seen.into_inner().unwrap_or_default();
    let mut table = Table::columns("hosts flooding, senders, echo replies/s, per host");
    let mut per_host: Vec<Vec<RunRecord>> = vec![Vec::new(); hosts.len()];
    let mut best: Option<(usize, f64)> = None;
    for (k, records) in &done {
        let mut sum = 0.0;
        let mut parts = Vec::new();
        for (i, json) in records {
            let Some(mut run) = parse(*i, json) else {
                problems.push((hosts[*i].name.clone(), "its record was refused".into()));
                continue;
            };
            mark_fleet_flood(&mut run, *k);
            if let Some(rate) = flood_rate(&run) {
                parts.push(format!("{} {}", hosts[*i].name, format_value(rate)));
                sum += rate;
            }
            per_host[*i].push(run);
        }
        if best.is_none_or(|(_, b)| sum > b) {
            best = Some((*k, sum));
        }
        table.push(vec![
            k.to_string(),
            (k * senders).to_string(),
            format_value(sum),
            for_terminal(&parts.join(", ")).into_owned(),
        ]);
    }
    crate::output::stdout(&table.render(TableFormat::Text))?;
    let stopped = match (done.len(), done.last()) {
        (n, Some((k, _))) if n >= 2 && *k < hosts.len() => "the reply rate stopped rising",
        (_, Some((k, _))) if *k == hosts.len() => "every host flooded",
        _ => "not every step ran",
    };
    if let Some((k, rate)) = best {
        eprintln!(
            "fleet net: {target} answered at most {} echo replies/s, with {k} host(s) flooding ({stopped})",
            format_value(rate)
        );
    }
    let mut stored = 0;
    for (i, runs) in per_host.into_iter().enumerate() {
        let Some(mut run) = merge(runs, &hosts[i], stored_profile) else {
            continue;
        };
        run.tags.insert(FLOOD_TAG.to_string(), id.clone());
        store
            .insert_run(&run, "fleet")
            .with_context(|| format!("storing the run of {}", hosts[i].name))?;
        stored += 1;
    }
    report_problems(hosts, &host_failures, &problems);
    eprintln!(
        "fleet net: {stored} host run(s) of flood {id} stored in {}",
        store.path().display()
    );
    Ok(if cancel.is_cancelled() {
        Exit::Interrupted
    } else if host_failures.iter().any(Option::is_some) || !problems.is_empty() {
        Exit::BenchFailed
    } else {
        Exit::Ok
    })
}

/// The hosts that could not take part and the steps or pairs that failed,
/// on stderr.
fn report_problems(
    hosts: &[Host],
    host_failures: &[Option<String>],
    problems: &[(String, String)],
) {
    let mut failed = Table::columns("host or pair, problem");
    for (host, f) in hosts.iter().zip(host_failures) {
        if let Some(f) = f {
            failed.push(vec![
                for_terminal(&host.name).into_owned(),
                for_terminal(f).into_owned(),
            ]);
        }
    }
    for (what, reason) in problems {
        failed.push(vec![
            for_terminal(what).into_owned(),
            for_terminal(reason).into_owned(),
        ]);
    }
    if !failed.is_empty() {
        eprintln!(
            "\nnot measured, or to note:\n{}",
            failed.render(TableFormat::Text)
        );
    }
}

fn print_matrices(runs: &[RunRecord], format: MatrixFormatArg) -> Result<()> {
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let format = match format {
        MatrixFormatArg::Text => MatrixFormat::Text,
        MatrixFormatArg::Markdown => MatrixFormat::Markdown,
        MatrixFormatArg::Csv => MatrixFormat::Csv,
        MatrixFormatArg::Json => MatrixFormat::Json,
    };
    crate::output::stdout(&render_matrices(&matrices(&refs), format))
}

/// `--show`: the stored runs of one matrix (`latest`, or an id prefix),
/// printed again.
fn show(a: &FleetNetArgs, which: &str) -> Result<Exit> {
    if !a.target.hosts.is_empty() || a.target.inventory.is_some() {
        bail!("--show prints a stored matrix; it takes no hosts or inventory");
    }
    let Some(store) = crate::db::open_for_reading(a.db.db.as_deref())? else {
        bail!("no results database yet: make a matrix with `sysgauge fleet net --inventory FILE`");
    };
    let ids: Vec<i64> = store
        .list_runs()?
        .into_iter()
        .filter(|r| r.command == COMMAND)
        .map(|r| r.id)
        .collect();
    let runs = store.load_runs(&ids)?;
    let tag_of = |r: &RunRecord| r.tags.get(MATRIX_TAG).cloned().unwrap_or_default();
    let chosen = if which == "latest" {
        latest(&runs, &tag_of)
    } else {
        let mut found: Vec<String> = runs
            .iter()
            .map(tag_of)
            .filter(|t| t.starts_with(which))
            .collect();
        found.sort();
        found.dedup();
        match found.as_slice() {
            [one] => one.clone(),
            [] => String::new(),
            many => bail!(
                "--show {which}: {} matrices start so ({}); give more of the id",
                many.len(),
                many.join(", ")
            ),
        }
    };
    if chosen.is_empty() {
        bail!(
            "no stored matrix{} in {} (make one with `sysgauge fleet net --inventory FILE`)",
            if which == "latest" {
                String::new()
            } else {
                format!(" whose id starts with {which}")
            },
            store.path().display()
        );
    }
    let mut mine: Vec<RunRecord> = runs.into_iter().filter(|r| tag_of(r) == chosen).collect();
    mine.sort_by_key(|r| r.tags.get(sysgauge_core::record::ALIAS_TAG).cloned());
    let refs: Vec<&RunRecord> = mine.iter().collect();
    if matrices(&refs).is_empty() {
        bail!(
            "matrix {chosen} has no measured pair ({} host run(s), {}); `sysgauge results list` shows the stored runs",
            mine.len(),
            if is_complete(&mine) { "complete" } else { "interrupted" }
        );
    }
    eprintln!(
        "fleet net: matrix {chosen}, {} hosts{}",
        mine.len(),
        if is_complete(&mine) {
            ""
        } else {
            " (interrupted: measured in part)"
        }
    );
    print_matrices(&mine, a.format)?;
    Ok(Exit::Ok)
}

/// Whether every run of a matrix was measured to its end.
fn is_complete(runs: &[RunRecord]) -> bool {
    runs.iter()
        .all(|r| !matches!(r.status, RunStatus::Interrupted | RunStatus::Running))
}

/// The matrix `--show` prints by default: the newest complete one, saying
/// so when a newer one is stored in part (an interrupted matrix); the
/// newest of all when none is complete.
fn latest(runs: &[RunRecord], tag_of: &dyn Fn(&RunRecord) -> String) -> String {
    let mut by_matrix: Vec<(String, chrono::DateTime<chrono::Utc>, Vec<RunRecord>)> = Vec::new();
    for r in runs {
        let tag = tag_of(r);
        match by_matrix.iter_mut().find(|(t, _, _)| *t == tag) {
            Some((_, newest, v)) => {
                *newest = (*newest).max(r.started_at);
                v.push(r.clone());
            }
            None => by_matrix.push((tag, r.started_at, vec![r.clone()])),
        }
    }
    by_matrix.sort_by_key(|(_, newest, _)| std::cmp::Reverse(*newest));
    let Some((newest, _, _)) = by_matrix.first() else {
        return String::new();
    };
    match by_matrix.iter().find(|(_, _, v)| is_complete(v)) {
        Some((complete, _, _)) if complete != newest => {
            eprintln!(
                "fleet net: the newest matrix, {newest}, was interrupted and is stored in part; showing the newest complete one (`--show {newest}` shows the partial one)"
            );
            complete.clone()
        }
        _ => newest.clone(),
    }
}

/// One run of a host from the records it printed (its pings and the pair
/// tests it sent in): the first record's host facts and build, every
/// record's results and findings, a fresh run id, the matrix's `profile`
/// (a ping record's own is no choice of the user's), tagged as the fleet
/// tags.
fn merge(records: Vec<RunRecord>, host: &Host, profile: Profile) -> Option<RunRecord> {
    let mut it = records.into_iter();
    let mut run = it.next()?;
    run.run_id = uuid::Uuid::new_v4().to_string();
    run.command = COMMAND.to_string();
    run.profile = profile;
    for other in it {
        run.started_at = run.started_at.min(other.started_at);
        run.finished_at = match (run.finished_at, other.finished_at) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        if other.status != RunStatus::Complete {
            run.status = other.status;
        }
        for f in other.findings {
            if !run.findings.iter().any(|x| x.code == f.code) {
                run.findings.push(f);
            }
        }
        run.results.extend(other.results);
    }
    tag_run(&mut run, host);
    Some(run)
}
