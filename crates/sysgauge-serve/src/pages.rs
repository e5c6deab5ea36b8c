//! The HTML pages and the views behind them; the API serves the same views
//! as JSON. Pages are `maud` templates (every inserted value escaped by
//! construction) around the report crate's HTML tables and report, which
//! escape their own cells; no page needs JavaScript. A page's error is a
//! page too (`PageError`): a browser shows it, where JSON would be text.

use crate::api::{ApiError, Reader};
use crate::AppState;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde::Serialize;
use std::sync::Arc;
use sysgauge_compare::naming::{label_machines, NamedMachine, Origin};
use sysgauge_compare::{compare_with_intervals, Comparison, Machine, MAX_MACHINES_WITH_INTERVALS};
use sysgauge_core::record::{ResultRecord, RunRecord, Status, ALIAS_TAG};
use sysgauge_store::machines::{
    machine_selector, stored_machines, with_reference, Resolver, SelectError,
};
use sysgauge_store::Store;

/// The most machines one comparison may name (each is loaded whole).
const MAX_COMPARED: usize = 64;

/// `key=value` pairs of a query string, decoded; repeated keys kept.
pub(crate) fn query_pairs(q: Option<&str>) -> Vec<(String, String)> {
    q.unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// `application/x-www-form-urlencoded` text; bad escapes are kept as typed.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `s` for a query string.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An error of a page: what the API would answer (status, message,
/// headers such as the `WWW-Authenticate` that makes a browser ask for
/// the read token) as an HTML page, which escapes the message as every
/// page escapes what it shows.
pub(crate) struct PageError(pub ApiError);

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> PageError {
        PageError(e)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let ApiError {
            status,
            message,
            headers,
            ..
        } = self.0;
        let title = format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("error")
        );
        let body = html! {
            p { (message) }
            p { "The " a href="/" { "machines page" } " lists what this site holds." }
        };
        let resp = (status, Html(page(&title, body).into_string())).into_response();
        ApiError::headers_onto(headers, resp)
    }
}

/// A path parameter axum could not take (bad percent-encoding): no such
/// page, said as the route says errors.
pub(crate) fn path_error(e: axum::extract::rejection::PathRejection) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such page: {}", e.body_text()),
    )
}

fn bad_request(m: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, m)
}

fn select_error(e: SelectError) -> ApiError {
    match e {
        SelectError::Store(s) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the results database did not answer: {s}"),
        ),
        SelectError::Named(m) => bad_request(m),
        SelectError::UnknownReference { key, .. } => ApiError::new(
            StatusCode::NOT_FOUND,
            format!("the reference '{key}' is not stored here"),
        ),
    }
}

/// Run `f` on a store connection; its `ApiError` passes through.
async fn with_store<T: Send + 'static>(
    state: &Arc<AppState>,
    f: impl FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let cell: Arc<std::sync::Mutex<Option<ApiError>>> = Arc::default();
    let failed = Arc::clone(&cell);
    let out = state
        .pool
        .run(move |s| match f(s) {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                if let Ok(mut slot) = failed.lock() {
                    *slot = Some(e);
                }
                Ok(None)
            }
        })
        .await
        .map_err(ApiError::database)?;
    match out {
        Some(v) => Ok(v),
        None => Err(cell
            .lock()
            .ok()
            .and_then(|mut e| e.take())
            .unwrap_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "failed"))),
    }
}

fn store_err(e: sysgauge_store::StoreError) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the results database did not answer: {e}"),
    )
}

/// A stored run by its run id.
pub(crate) async fn load_run(state: &Arc<AppState>, run_id: &str) -> Result<RunRecord, ApiError> {
    let key = run_id.trim().to_string();
    let valid = !key.is_empty()
        && key.len() <= 128
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !valid {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "no such run"));
    }
    let wanted = key.clone();
    let found = with_store(state, move |s| match s.resolve_run(&key) {
        Ok(row) => s.load_run(row).map(Some).map_err(store_err),
        Err(sysgauge_store::StoreError::NotFound(_))
        | Err(sysgauge_store::StoreError::Ambiguous { .. }) => Ok(None),
        Err(e) => Err(store_err(e)),
    })
    .await?;
    found.filter(|r| r.run_id == wanted).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no run '{run_id}' is stored"),
        )
    })
}

/// One machine of the machines view.
#[derive(Debug, Serialize)]
pub(crate) struct MachineView {
    /// What the machine goes by (as in a comparison).
    pub name: String,
    /// What names it to `/compare` (`m=`), it alone: its fleet alias, host
    /// name or the start of its id; else its newest run's number.
    pub selector: String,
    pub host: String,
    pub alias: Option<String>,
    pub machine_id: Option<String>,
    pub cpu_model: Option<String>,
    pub architecture: Option<String>,
    pub cores: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub os: Option<String>,
    pub groups: Vec<String>,
    pub tags: std::collections::BTreeMap<String, String>,
    pub runs: usize,
    pub latest_run_id: String,
    pub latest_started_at: chrono::DateTime<chrono::Utc>,
    /// The baseline index of the machine as `compare` takes it: each
    /// case's newest finished result among all its runs (1000 = the
    /// reference machine).
    pub machine_index: Option<f64>,
    /// The baseline index of its newest run alone.
    pub index: Option<f64>,
    /// Every run's index, oldest first.
    pub history: Vec<IndexPoint>,
}

#[derive(Debug, Serialize)]
pub(crate) struct IndexPoint {
    pub run_id: String,
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub index: Option<f64>,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct MachineFilter {
    pub cpu: Option<String>,
    pub arch: Option<String>,
    pub group: Option<String>,
    /// `KEY=VALUE`.
    pub tag: Option<String>,
}

impl MachineFilter {
    fn of(q: Option<&str>) -> MachineFilter {
        let mut f = MachineFilter::default();
        for (k, v) in query_pairs(q) {
            let v = Some(v.trim().to_string()).filter(|v| !v.is_empty());
            match k.as_str() {
                "cpu" => f.cpu = v,
                "arch" => f.arch = v,
                "group" => f.group = v,
                "tag" => f.tag = v,
                _ => {}
            }
        }
        f
    }

    fn keeps(&self, run: &RunRecord) -> bool {
        let cpu = run.host.cpu.model.as_deref().unwrap_or_default();
        self.cpu
            .as_ref()
            .is_none_or(|c| cpu.to_lowercase().contains(&c.to_lowercase()))
            && self
                .arch
                .as_ref()
                .is_none_or(|a| run.host.cpu.architecture.as_deref() == Some(a.as_str()))
            && self.group.as_ref().is_none_or(|g| run.groups().contains(g))
            && self.tag.as_ref().is_none_or(|t| match t.split_once('=') {
                Some((k, v)) => run.tags.get(k.trim()).map(String::as_str) == Some(v.trim()),
                None => run.tags.contains_key(t.as_str()),
            })
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct MachinesView {
    pub filter: MachineFilter,
    /// Machines the filter keeps, on every page.
    pub total: usize,
    /// This page (from 1), of `pages`, of `per_page` machines each.
    pub page: usize,
    pub pages: usize,
    pub per_page: usize,
    pub machines: Vec<MachineView>,
}

/// The baseline index of a run already computed, by run id.
fn cached_index(state: &AppState, run_id: &str) -> Option<Option<f64>> {
    state
        .index_cache
        .lock()
        .ok()
        .and_then(|c| c.get(run_id).copied())
}

/// The baseline index of `run` (a whole run, with its results), remembered
/// by run id.
fn run_index(state: &AppState, run: &RunRecord) -> Option<f64> {
    if let Some(v) = cached_index(state, &run.run_id) {
        return v;
    }
    let v = sysgauge_registry::baseline::index(run)
        .ok()
        .and_then(|i| i.overall.index);
    if let Ok(mut c) = state.index_cache.lock() {
        c.insert(run.run_id.clone(), v);
    }
    v
}

/// How many runs one pass of `remember_indexes` loads whole at a time.
const INDEX_BATCH: usize = 64;

/// Compute and remember the index of every run among `runs` (row and run
/// id) not remembered yet, loading those runs whole a batch at a time.
fn remember_indexes(state: &AppState, s: &Store, runs: &[(i64, &str)]) -> Result<(), ApiError> {
    let missing: Vec<i64> = runs
        .iter()
        .filter(|(_, id)| cached_index(state, id).is_none())
        .map(|(row, _)| *row)
        .collect();
    for batch in missing.chunks(INDEX_BATCH) {
        for run in s.load_runs(batch).map_err(store_err)? {
            run_index(state, &run);
        }
    }
    Ok(())
}

/// The key a machine's index is remembered by: its runs' rows. A stored
/// complete run never changes, so the same runs give the same index; a new
/// run of the machine (or one deleted) makes a new key.
fn machine_key(rows: &[i64]) -> String {
    let mut rows = rows.to_vec();
    rows.sort_unstable();
    rows.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The baseline index of the machine made of the stored runs `rows`, as `compare` takes a machine: each case's newest
/// finished result among all its runs (a newest run of a few cases alone
/// would index only those). Remembered by its runs; the runs' own indexes
/// are remembered on the way.
fn machine_index(state: &AppState, s: &Store, rows: &[i64]) -> Result<Option<f64>, ApiError> {
    let key = machine_key(rows);
    let known = state
        .machine_index_cache
        .lock()
        .ok()
        .and_then(|c| c.get(&key).copied());
    if let Some(v) = known {
        return Ok(v);
    }
    let runs = s.load_runs(rows).map_err(store_err)?;
    for r in &runs {
        run_index(state, r);
    }
    let machine = Machine::from_runs(
        String::new(),
        runs.into_iter().map(|r| (r, String::new())).collect(),
    );
    let v = sysgauge_registry::baseline::index(&machine.run)
        .ok()
        .and_then(|i| i.overall.index);
    if let Ok(mut c) = state.machine_index_cache.lock() {
        c.insert(key, v);
    }
    Ok(v)
}

/// Fill the index caches with every stored machine (its runs' indexes and
/// its own), a machine per store call (so pages asked for meanwhile are
/// answered between them): the first visit to the machines page then
/// finds them computed.
pub(crate) async fn warm_index_cache(state: Arc<AppState>) {
    let rows = match with_store(&state, |s| s.machine_rows(ALIAS_TAG).map_err(store_err)).await {
        Ok(rows) => rows,
        Err(_) => return,
    };
    for (_, _, list) in stored_machines(&rows) {
        let cache = Arc::clone(&state);
        let done = with_store(&state, move |s| {
            let rows: Vec<i64> = list.iter().map(|r| r.id).collect();
            machine_index(&cache, s, &rows).map(|_| ())
        })
        .await;
        if done.is_err() {
            return;
        }
    }
}

/// Machines a page of the machines view shows: the page stays quick to
/// compute and to read over any number of machines.
pub(crate) const MACHINES_PER_PAGE: usize = 100;

/// `?page=N` (from 1): `None` when not asked.
fn page_asked(query: Option<&str>) -> Result<Option<usize>, ApiError> {
    let Some((_, v)) = query_pairs(query)
        .into_iter()
        .rev()
        .find(|(k, _)| k == "page")
    else {
        return Ok(None);
    };
    match v.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(bad_request(format!(
            "page '{v}' is not a page number (1, 2, …)"
        ))),
    }
}

/// Every stored machine (as `compare` makes them: a machine is all its
/// complete runs), filtered, a page of them when `paged` or `?page=` asks
/// (the API answers every machine unless asked for a page, as it always
/// did). The runs are loaded without their results (the page shows facts
/// and indexes, and the indexes are remembered), so the page costs one
/// listing, not every stored number; the indexes not remembered yet are
/// computed for the machines of the page only.
pub(crate) async fn machines_view(
    state: &Arc<AppState>,
    query: Option<&str>,
    paged: bool,
) -> Result<MachinesView, ApiError> {
    let filter = MachineFilter::of(query);
    let asked = page_asked(query)?;
    let cache = Arc::clone(state);
    with_store(state, move |s| {
        let rows = s.machine_rows(ALIAS_TAG).map_err(store_err)?;
        let machines = stored_machines(&rows);
        // Every run's facts in one call (one query on PostgreSQL), then
        // dealt back to their machines.
        let all: Vec<i64> = machines
            .iter()
            .flat_map(|(_, _, list)| list.iter().map(|r| r.id))
            .collect();
        let mut heads = s.load_run_heads(&all).map_err(store_err)?.into_iter();
        let mut named = Vec::new();
        let mut selectors = Vec::new();
        for (i, (_, _, list)) in machines.iter().enumerate() {
            let ids: Vec<i64> = list.iter().map(|r| r.id).collect();
            let runs: Vec<RunRecord> = heads.by_ref().take(ids.len()).collect();
            if runs.first().is_some_and(|newest| filter.keeps(newest)) {
                selectors.push(
                    machine_selector(&machines, i)
                        .unwrap_or_else(|| ids.first().map(i64::to_string).unwrap_or_default()),
                );
                named.push(NamedMachine::stored(runs, ids));
            }
        }
        // Labels are given among every machine kept, so a machine goes by
        // the same name on every page.
        let total = named.len();
        let per_page = match (paged, asked) {
            (false, None) => total.max(1),
            _ => MACHINES_PER_PAGE,
        };
        let pages = total.div_ceil(per_page).max(1);
        let page = asked.unwrap_or(1);
        if page > pages {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("there is no page {page}: {total} machine(s) make {pages} page(s)"),
            ));
        }
        let on_page = (page - 1) * per_page..(page * per_page).min(total);
        let stored_rows = |m: &NamedMachine| -> Vec<(i64, String)> {
            m.runs
                .iter()
                .filter_map(|(r, o)| match o {
                    Origin::Stored(row) => Some((*row, r.run_id.clone())),
                    Origin::File(_) => None,
                })
                .collect()
        };
        let mut histories = Vec::new();
        let mut indexes = Vec::new();
        for m in &named[on_page.clone()] {
            let shown = stored_rows(m);
            let refs: Vec<(i64, &str)> = shown.iter().map(|(r, id)| (*r, id.as_str())).collect();
            remember_indexes(&cache, s, &refs)?;
            let rows: Vec<i64> = shown.iter().map(|(r, _)| *r).collect();
            indexes.push(machine_index(&cache, s, &rows)?);
            let mut h: Vec<IndexPoint> = m
                .runs
                .iter()
                .map(|(r, _)| IndexPoint {
                    run_id: r.run_id.clone(),
                    started_at: r.started_at,
                    index: cached_index(&cache, &r.run_id).flatten(),
                })
                .collect();
            h.sort_by_key(|p| p.started_at);
            histories.push(h);
        }
        let machines = label_machines(named)
            .into_iter()
            .zip(selectors)
            .skip(on_page.start)
            .zip(histories.into_iter().zip(indexes))
            .map(|((m, selector), (history, machine_index))| {
                let newest = m
                    .sources
                    .first()
                    .map(|s| s.run_id.clone())
                    .unwrap_or_else(|| m.run.run_id.clone());
                let run = &m.run;
                let h = &run.host;
                MachineView {
                    name: m.label.clone(),
                    selector,
                    host: run.host_name().to_string(),
                    alias: run.tags.get(ALIAS_TAG).cloned(),
                    machine_id: h.identity.short(),
                    cpu_model: h.cpu.model.clone(),
                    architecture: h.cpu.architecture.clone(),
                    cores: h.cpu.cores,
                    memory_bytes: h.memory.total_bytes,
                    os: h.os.distribution.clone(),
                    groups: run.groups(),
                    tags: run.tags.clone().into_iter().collect(),
                    runs: m.sources.len(),
                    machine_index,
                    index: history
                        .iter()
                        .find(|p| p.run_id == newest)
                        .and_then(|p| p.index),
                    latest_run_id: newest,
                    latest_started_at: run.started_at,
                    history,
                }
            })
            .collect();
        Ok(MachinesView {
            filter,
            total,
            page,
            pages,
            per_page,
            machines,
        })
    })
    .await
}

/// What `?m=A&m=B&ref=A&family=F` asks to compare.
struct CompareQuery {
    machines: Vec<String>,
    reference: Option<String>,
    families: Vec<String>,
}

fn compare_query(q: Option<&str>) -> Result<CompareQuery, ApiError> {
    let mut c = CompareQuery {
        machines: Vec::new(),
        reference: None,
        families: Vec::new(),
    };
    for (k, v) in query_pairs(q) {
        let v = v.trim().to_string();
        if v.is_empty() {
            continue;
        }
        match k.as_str() {
            "m" => c.machines.push(v),
            "ref" => c.reference = Some(v),
            // `family=a,b` as `compare --family a,b` takes it.
            "family" => c.families.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    if c.machines.len() > MAX_COMPARED {
        return Err(bad_request(format!(
            "{} machines named; a comparison here takes {MAX_COMPARED} at most",
            c.machines.len()
        )));
    }
    Ok(c)
}

impl CompareQuery {
    /// The query string that asks for this comparison again: every
    /// selection (machines, reference, families), so a shared link shows
    /// what its page showed.
    fn query_string(&self) -> String {
        self.machines
            .iter()
            .map(|m| format!("m={}", encode(m)))
            .chain(self.reference.iter().map(|r| format!("ref={}", encode(r))))
            .chain(
                self.families
                    .iter()
                    .map(|f| format!("family={}", encode(f))),
            )
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// The comparison `sysgauge compare M… --reference R --family F` makes of
/// the stored machines: the same selection (`resolve_machines`), labels
/// (`label_machines`), reference rule and comparison, so the numbers are
/// the command's.
pub(crate) async fn comparison(
    state: &Arc<AppState>,
    query: Option<&str>,
) -> Result<(Comparison, Vec<RunRecord>), ApiError> {
    let q = compare_query(query)?;
    with_store(state, move |s| {
        let mut named: Vec<NamedMachine> = Vec::new();
        let resolver = Resolver::new(s);
        for key in &q.machines {
            match resolver.resolve_machines(key).map_err(select_error)? {
                Some(found) => named.extend(found),
                None => {
                    return Err(ApiError::new(
                        StatusCode::NOT_FOUND,
                        format!(
                            "'{key}' is not a host, a fleet alias, a label or a run stored here"
                        ),
                    ))
                }
            }
        }
        let (machines, reference) =
            with_reference(Some(&*s), named, q.reference.as_deref()).map_err(select_error)?;
        if machines.len() < 2 {
            return Err(bad_request(format!(
                "a comparison needs at least two machines, found {}: name them as ?m=A&m=B",
                machines.len()
            )));
        }
        let intervals = machines.len() <= MAX_MACHINES_WITH_INTERVALS;
        let c = compare_with_intervals(&machines, reference, &q.families, intervals)
            .map_err(|e| bad_request(e.to_string()))?;
        Ok((c, machines.into_iter().map(|m| m.run).collect()))
    })
    .await
}

/// One machine's result of a case: its newest stored run that has it.
#[derive(Debug, Serialize)]
pub(crate) struct CaseValue {
    pub machine: String,
    /// Its host name (the machine may go by an alias or a label).
    pub host: String,
    pub run_id: String,
    pub value: f64,
    /// How many of the machine's stored runs have this case (the value is
    /// the newest one's).
    pub runs: usize,
    pub outlier: bool,
}

/// One case (by params) on the machines of one CPU model, each machine
/// counted once (its newest result): the distribution of its headline
/// metric.
#[derive(Debug, Serialize)]
pub(crate) struct CaseGroup {
    pub params: String,
    pub metric: String,
    pub unit: String,
    pub better: String,
    pub count: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub p25: f64,
    pub p75: f64,
    pub values: Vec<CaseValue>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CaseView {
    pub bench: String,
    pub cpu: String,
    pub groups: Vec<CaseGroup>,
    /// The outlier rule: further than this many scaled MADs from the median.
    pub outlier_z: f64,
}

pub(crate) async fn case_distribution(
    state: &Arc<AppState>,
    query: Option<&str>,
) -> Result<CaseView, ApiError> {
    let pairs = query_pairs(query);
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let bench = get("bench").ok_or_else(|| bad_request("name the case: ?bench=ID&cpu=MODEL"))?;
    let cpu = get("cpu").ok_or_else(|| bad_request("name the CPU model: ?bench=ID&cpu=MODEL"))?;
    with_store(state, move |s| {
        // The machines of the CPU model, by their newest run's facts (heads
        // only); then those machines' runs whole.
        let rows = s.machine_rows(ALIAS_TAG).map_err(store_err)?;
        let machines: Vec<_> = stored_machines(&rows)
            .into_iter()
            .filter(|(_, _, list)| !list.is_empty())
            .collect();
        // Every machine's newest run's facts in one call.
        let newest: Vec<i64> = machines.iter().map(|(_, _, list)| list[0].id).collect();
        let heads = s.load_run_heads(&newest).map_err(store_err)?;
        let mut named = Vec::new();
        for ((_, _, list), head) in machines.into_iter().zip(heads) {
            if head.host.cpu.model.as_deref() != Some(cpu.as_str()) {
                continue;
            }
            let ids: Vec<i64> = list.iter().map(|r| r.id).collect();
            let runs = s.load_runs(&ids).map_err(store_err)?;
            named.push(NamedMachine::stored(runs, ids));
        }
        // How many runs of each machine have the case, per params.
        let is_case = |r: &&ResultRecord| r.bench_id == bench && matches!(r.status, Status::Ok);
        let counts: Vec<Vec<String>> = named
            .iter()
            .map(|m| {
                m.runs
                    .iter()
                    .flat_map(|(run, _)| run.results.iter().filter(is_case))
                    .map(|r| r.params.canonical())
                    .collect()
            })
            .collect();
        // Per params: each machine's value as `compare` takes it (its
        // newest finished result), metric, unit, better.
        type Group = (
            String,
            Vec<(String, String, String, f64, usize)>,
            String,
            String,
            String,
        );
        let mut by_params: Vec<Group> = Vec::new();
        for (machine, cases) in label_machines(named).into_iter().zip(counts) {
            for (i, r) in machine.run.results.iter().enumerate() {
                if !is_case(&r) {
                    continue;
                }
                let Some(m) = r.metrics.first() else { continue };
                let key = r.params.canonical();
                let run_id = machine
                    .result_source
                    .get(i)
                    .and_then(|&k| machine.sources.get(k))
                    .map_or_else(|| machine.run.run_id.clone(), |src| src.run_id.clone());
                let runs = cases.iter().filter(|p| **p == key).count();
                let value = (
                    machine.label.clone(),
                    machine.run.host_name().to_string(),
                    run_id,
                    m.summary.median,
                    runs,
                );
                match by_params.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push(value),
                    None => by_params.push((
                        key,
                        vec![value],
                        m.name.clone(),
                        m.unit.to_string(),
                        format!("{:?}", m.better).to_lowercase(),
                    )),
                }
            }
        }
        let z = sysgauge_compare::fleet::OUTLIER_Z;
        let groups = by_params
            .into_iter()
            .map(|(params, values, metric, unit, better)| {
                let v: Vec<f64> = values.iter().map(|x| x.3).collect();
                let outliers = if v.len() >= sysgauge_compare::fleet::MIN_HOSTS_FOR_OUTLIERS {
                    sysgauge_stats::mad_outliers(&v, z)
                } else {
                    Vec::new()
                };
                CaseGroup {
                    params,
                    metric,
                    unit,
                    better,
                    count: v.len(),
                    median: sysgauge_stats::median(&v),
                    min: v.iter().copied().fold(f64::INFINITY, f64::min),
                    max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    p25: sysgauge_stats::percentile(&v, 25.0),
                    p75: sysgauge_stats::percentile(&v, 75.0),
                    values: values
                        .into_iter()
                        .enumerate()
                        .map(|(i, (machine, host, run_id, value, runs))| CaseValue {
                            machine,
                            host,
                            run_id,
                            value,
                            runs,
                            outlier: outliers.contains(&i),
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(CaseView {
            bench,
            cpu,
            groups,
            outlier_z: z,
        })
    })
    .await
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:80em;color:#222}\
table{border-collapse:collapse;margin:.8em 0}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left}\
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}\
nav a{margin-right:1em}form{margin:.8em 0}input{margin-right:.5em}.outlier{background:#fde2e2}\
.note{color:#666}pre{background:#f7f7f7;padding:.6em;overflow:auto}";

/// A whole page around `body`.
fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "sysgauge: " (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                nav { a href="/" { "Machines" } a href="/compare" { "Compare" } a href="/cases" { "A case by CPU" } }
                h1 { (title) }
                (body)
            }
        }
    }
}

/// The host name to show beside the name a machine goes by (a fleet
/// alias or label the user gave): machines can share a host name, and the
/// name alone does not say which host it is. `None` when the name is the
/// host name, or says it already (`vm (3d1219c7)`).
fn host_beside<'a>(name: &str, host: &'a str) -> Option<&'a str> {
    (name != host && !name.starts_with(&format!("{host} ("))).then_some(host)
}

fn fmt(v: f64) -> String {
    sysgauge_report::format::format_value(v)
}

/// The index history as a small line chart (SVG; no script).
fn history_svg(points: &[IndexPoint]) -> Markup {
    let vals: Vec<(usize, f64)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.index.map(|v| (i, v)))
        .collect();
    if vals.len() < 2 {
        return html! {};
    }
    let (w, h) = (160.0, 36.0);
    let lo = vals.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
    let hi = vals.iter().map(|v| v.1).fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1e-9);
    let n = (points.len().max(2) - 1) as f64;
    let line: Vec<String> = vals
        .iter()
        .map(|(i, v)| {
            format!(
                "{:.1},{:.1}",
                *i as f64 / n * (w - 4.0) + 2.0,
                h - 2.0 - (v - lo) / span * (h - 4.0)
            )
        })
        .collect();
    html! {
        svg width=(w) height=(h) viewBox={"0 0 " (w) " " (h)} role="img" {
            title { "index from " (fmt(lo)) " to " (fmt(hi)) " over " (vals.len()) " runs" }
            polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points=(line.join(" ")) {}
        }
    }
}

/// The machines charted at most in the index history figure (one line and
/// one legend entry each).
const CHARTED: usize = 10;

/// The index history of the first machines (with two indexed runs at
/// least) as the report crate's line figure: time since the first run on
/// x (in days, hours or minutes, as the runs are apart), index on y.
fn history_figure(machines: &[MachineView]) -> Option<String> {
    use sysgauge_report::chart::lines::{LinePanel, Marker, Series, TickFormat, XAxis, XScale};
    let times = || {
        machines
            .iter()
            .flat_map(|m| m.history.iter().map(|p| p.started_at))
    };
    let first = times().min()?;
    let seconds = (times().max()? - first).num_seconds() as f64;
    // Days, unless the runs are hours or minutes apart (days alone then
    // labelled every tick 0).
    let (per, unit, since) = if seconds >= 2.0 * 86_400.0 {
        (86_400.0, "days", first.format("%Y-%m-%d"))
    } else if seconds >= 2.0 * 3_600.0 {
        (3_600.0, "hours", first.format("%Y-%m-%d %H:%M UTC"))
    } else {
        (60.0, "minutes", first.format("%Y-%m-%d %H:%M UTC"))
    };
    let mut legend = Vec::new();
    let mut series = Vec::new();
    for m in machines {
        let points: Vec<(f64, f64)> = m
            .history
            .iter()
            .filter_map(|p| {
                let x = (p.started_at - first).num_seconds() as f64 / per;
                p.index.map(|v| (x, v))
            })
            .collect();
        if points.len() < 2 {
            continue;
        }
        let i = legend.len();
        legend.push((i, m.name.clone()));
        series.push(Series {
            machine: i,
            marker: Marker::Filled,
            tag: None,
            points,
        });
        if legend.len() == CHARTED {
            break;
        }
    }
    if series.is_empty() {
        return None;
    }
    let figure = sysgauge_report::LineFigure {
        title: "Baseline index by run".to_string(),
        legend,
        key: Vec::new(),
        x: XAxis {
            label: format!("{unit} since {since}"),
            scale: XScale::Linear,
            ticks: TickFormat::Plain,
        },
        shared: true,
        panels: vec![LinePanel {
            title: "index (1000 = the reference machine)".to_string(),
            y_label: "index".to_string(),
            log_y: false,
            series,
            marks: Vec::new(),
        }],
    };
    sysgauge_report::figure_svg(&figure, 900).ok()
}

pub(crate) async fn machines(
    State(state): State<Arc<AppState>>,
    _: Reader<PageError>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let view = machines_view(&state, q.as_deref(), true).await?;
    let f = &view.filter;
    // A link to another page keeps the filters.
    let page_link = |n: usize| {
        let mut pairs: Vec<String> = query_pairs(q.as_deref())
            .into_iter()
            .filter(|(k, v)| k != "page" && !v.trim().is_empty())
            .map(|(k, v)| format!("{}={}", encode(&k), encode(&v)))
            .collect();
        pairs.push(format!("page={n}"));
        format!("/?{}", pairs.join("&"))
    };
    let first = (view.page - 1) * view.per_page;
    let pager = html! {
        @if view.pages > 1 {
            p {
                "Machines " (first + 1) "–" (first + view.machines.len()) " of " (view.total) ", page " (view.page) " of " (view.pages) ". "
                @if view.page > 1 { a href=(page_link(view.page - 1)) rel="prev" { "previous page" } " " }
                @if view.page < view.pages { a href=(page_link(view.page + 1)) rel="next" { "next page" } }
            }
        }
    };
    let body = html! {
        form method="get" action="/" {
            label { "CPU " input name="cpu" value=(f.cpu.clone().unwrap_or_default()); }
            label { "architecture " input name="arch" value=(f.arch.clone().unwrap_or_default()); }
            label { "group " input name="group" value=(f.group.clone().unwrap_or_default()); }
            label { "tag K=V " input name="tag" value=(f.tag.clone().unwrap_or_default()); }
            button type="submit" { "Filter" }
        }
        @if let Some(svg) = history_figure(&view.machines) {
            figure { (PreEscaped(svg)) figcaption class="note" { "The first " (CHARTED) " machines with two indexed runs or more." } }
        }
        form method="get" action="/compare" {
            p class="note" { (view.total) " machines. Tick some and compare them (the first is the reference). "
                "A machine is all its runs, as " code { "sysgauge compare" } " takes it: its index is that of each case's newest result among them; "
                "the newest run's own index is beside it." }
            (pager)
            table {
                thead { tr {
                    th { "compare" } th { "machine" } th { "CPU" } th { "arch" } th { "cores" }
                    th { "memory" } th { "OS" } th { "groups" } th { "runs" } th { "latest run" }
                    th { "index" } th { "latest run's index" } th { "index history" }
                } }
                tbody {
                    @for m in &view.machines {
                        tr {
                            td { input type="checkbox" name="m" value=(m.selector) aria-label={"compare " (m.name)}; }
                            td { (m.name)
                                @if let Some(host) = host_beside(&m.name, &m.host) { br; span class="note" { "host " (host) } }
                                @if let Some(id) = &m.machine_id { br; span class="note" { (id) } } }
                            td { (m.cpu_model.clone().unwrap_or_default()) }
                            td { (m.architecture.clone().unwrap_or_default()) }
                            td class="num" { (m.cores.map(|c| c.to_string()).unwrap_or_default()) }
                            td class="num" { (m.memory_bytes.map(|b| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30))).unwrap_or_default()) }
                            td { (m.os.clone().unwrap_or_default()) }
                            td { (m.groups.join(", ")) }
                            td class="num" { (m.runs) }
                            td { a href={"/runs/" (m.latest_run_id)} { (m.latest_started_at.format("%Y-%m-%d %H:%M")) } }
                            td class="num" { (m.machine_index.map(fmt).unwrap_or_else(|| "-".into())) }
                            td class="num" { (m.index.map(fmt).unwrap_or_else(|| "-".into())) }
                            td { (history_svg(&m.history)) }
                        }
                    }
                }
            }
            (pager)
            button type="submit" { "Compare" }
        }
    };
    Ok(Html(page("machines", body).into_string()).into_response())
}

pub(crate) async fn run(
    State(state): State<Arc<AppState>>,
    _: Reader<PageError>,
    run_id: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Result<Response, PageError> {
    let Path(run_id) = run_id.map_err(path_error)?;
    let run = load_run(&state, &run_id).await?;
    use sysgauge_report::summary::{findings_text, summary_table, telemetry_table};
    use sysgauge_report::table::TableFormat;
    let mut facts = sysgauge_compare::host_facts(&run);
    // A fact no case of the run has (the size of a file a case does not
    // say) is no row.
    facts.retain(|(k, v)| !(*k == sysgauge_compare::FILE_SIZE_FACT && v == "unknown"));
    let findings = findings_text(&run);
    let telemetry = telemetry_table(&run, TableFormat::Html);
    let title = match run.tags.get(ALIAS_TAG).filter(|a| **a != run.host_name()) {
        Some(alias) => format!("run on {alias} (host {})", run.host_name()),
        None => format!("run on {}", run.host_name()),
    };
    let body = html! {
        p {
            "Run " code { (run.run_id) } ", " (run.command) ", profile " (run.profile_shown())
            ", started " (run.started_at.format("%Y-%m-%d %H:%M:%S UTC")) ", " (run.status.as_str())
            @if let Some(l) = &run.label { ", label " strong { (l) } }
            ". Permanent link: " a href={"/runs/" (run.run_id)} { "/runs/" (run.run_id) }
            " (JSON: " a href={"/api/runs/" (run.run_id)} { "/api/runs/" (run.run_id) } ")"
        }
        @if !run.tags.is_empty() {
            p { "Tags: " @for (k, v) in &run.tags { code { (k) "=" (v) } " " } }
        }
        h2 { "Host" }
        table { @for (k, v) in &facts { tr { th { (k) } td { (v) } } } }
        h2 { "Results" }
        (PreEscaped(summary_table(&run, TableFormat::Html)))
        @if !telemetry.trim().is_empty() {
            h2 { "Telemetry" }
            (PreEscaped(telemetry))
        }
        @if !findings.trim().is_empty() {
            h2 { "Findings" }
            pre { (findings) }
        }
    };
    Ok(Html(page(&title, body).into_string()).into_response())
}

pub(crate) async fn compare(
    State(state): State<Arc<AppState>>,
    _: Reader<PageError>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let asked = compare_query(q.as_deref())?;
    if asked.machines.is_empty() {
        let body = html! {
            p { "Name the machines (host names, fleet aliases, labels or runs) as "
                code { "/compare?m=A&m=B&ref=A" } ", or tick them on the " a href="/" { "machines page" } "." }
            form method="get" action="/compare" {
                label { "machines (one per box) " input name="m"; input name="m"; input name="m"; }
                label { "reference " input name="ref"; }
                button type="submit" { "Compare" }
            }
        };
        return Ok(Html(page("compare", body).into_string()).into_response());
    }
    let (c, runs) = comparison(&state, q.as_deref()).await?;
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let link = format!("/compare?{}", asked.query_string());
    let generated = format!("sysgauge serve {}; link: {link}", env!("CARGO_PKG_VERSION"));
    let report = sysgauge_report::html::render_html(&c, &refs, &[], None, &generated, 900)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let nav = html! {
        nav { a href="/" { "Machines" } a href=(link) { "This comparison" } a href={"/api" (link)} { "JSON" } }
    };
    let html = report.replacen("<body>\n", &format!("<body>\n{}\n", nav.into_string()), 1);
    Ok(Html(html).into_response())
}

pub(crate) async fn case_view(
    State(state): State<Arc<AppState>>,
    _: Reader<PageError>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let pairs = query_pairs(q.as_deref());
    if !pairs.iter().any(|(k, _)| k == "bench") {
        let body = html! {
            p { "Every stored result of one case on machines of one CPU model: is a machine normal for its CPU?" }
            form method="get" action="/cases" {
                label { "case (benchmark id) " input name="bench"; }
                label { "CPU model (as stored) " input name="cpu"; }
                button type="submit" { "Show" }
            }
        };
        return Ok(Html(page("a case by CPU", body).into_string()).into_response());
    }
    let v = case_distribution(&state, q.as_deref()).await?;
    let title = format!("{} on {}", v.bench, v.cpu);
    let body = html! {
        p class="note" { "Headline metric of each machine's newest stored result (a machine counts once, whatever its runs); outliers lie further than "
            (v.outlier_z) " scaled MADs from the median (3 machines at least)." }
        @if v.groups.is_empty() { p { "No stored result of this case on this CPU model." } }
        @for g in &v.groups {
            h2 { (g.metric) " (" (sysgauge_report::unit_label(&g.unit)) ", " (g.better) " is better)" @if !g.params.is_empty() { ", " code { (g.params) } } }
            table {
                tr { th { "machines" } th { "median" } th { "min" } th { "25 %" } th { "75 %" } th { "max" } }
                tr { td class="num" { (g.count) } td class="num" { (fmt(g.median)) } td class="num" { (fmt(g.min)) }
                     td class="num" { (fmt(g.p25)) } td class="num" { (fmt(g.p75)) } td class="num" { (fmt(g.max)) } }
            }
            table {
                tr { th { "machine" } th { "value" } th { "against the median" } th { "run" } th { "runs with the case" } }
                @for x in &g.values {
                    tr class=[x.outlier.then_some("outlier")] {
                        td { (x.machine) @if x.outlier { " (outlier)" }
                            @if let Some(host) = host_beside(&x.machine, &x.host) { br; span class="note" { "host " (host) } } }
                        td class="num" { (fmt(x.value)) }
                        td class="num" { (format!("{:+.1} %", (x.value / g.median - 1.0) * 100.0)) }
                        td { a href={"/runs/" (x.run_id)} { (x.run_id) } }
                        td class="num" { (x.runs) }
                    }
                }
            }
        }
    };
    Ok(Html(page(&title, body).into_string()).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_decode() {
        assert_eq!(
            query_pairs(Some("m=a+b&m=%3Cx%3E&ref=&bad=%zz&cut=%4")),
            vec![
                ("m".into(), "a b".into()),
                ("m".into(), "<x>".into()),
                ("ref".into(), String::new()),
                ("bad".into(), "%zz".into()),
                ("cut".into(), "%4".into()),
            ]
        );
        assert_eq!(encode("a b&<"), "a%20b%26%3C");
    }
}
