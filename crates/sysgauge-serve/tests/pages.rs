//! The pages and the read API over a real SQLite file: what they show,
//! that text from uploads is shown as text, and that a comparison is the
//! one `sysgauge compare` makes of the same selection.

#![allow(clippy::unwrap_used)] // a test panics on the first broken step

mod common;

use common::*;
use sysgauge_compare::naming::label_machines;
use sysgauge_compare::{compare_with_intervals, MAX_MACHINES_WITH_INTERVALS};
use sysgauge_core::record::ALIAS_TAG;
use sysgauge_store::machines::resolve_machines;
use sysgauge_store::Store;

const SCRIPT: &str = "<script>alert(1)</script>";
const IMG: &str = "<img src=x onerror=alert(2)>";
const QUOTE: &str = "\"><b>x</b>";

#[test]
fn text_from_uploads_is_shown_as_text() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    let mut evil = a_run(&format!("evil{SCRIPT}"), 1);
    evil.label = Some(IMG.to_string());
    evil.tags.insert("owner".into(), QUOTE.into());
    evil.tags.insert("groups".into(), format!("lab,{SCRIPT}"));
    evil.host.cpu.model = Some(format!("CPU {IMG}"));
    let plain = a_run("plain", 2);
    assert_eq!(upload(&server, &token, &evil).status, 201);
    assert_eq!(upload(&server, &token, &plain).status, 201);
    // A second run of the machine: its index history is charted.
    let mut evil2 = a_run(&format!("evil{SCRIPT}"), 9);
    evil2.label = evil.label.clone();
    evil2.started_at -= chrono::Duration::days(3);
    assert_eq!(upload(&server, &token, &evil2).status, 201);
    let home = get(&server.url("/"), None);
    assert!(home.body.contains("<svg"), "the history chart is drawn");

    let cases = format!(
        "/cases?bench=hash.sha256&cpu={}",
        "CPU%20%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E"
    );
    let compare = format!(
        "/compare?m={}&m=plain",
        "%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E"
    );
    for path in [
        "/".to_string(),
        format!("/runs/{}", evil.run_id),
        compare,
        cases,
        format!("/?group={}", "%3Cscript%3Ealert(1)%3C%2Fscript%3E"),
    ] {
        let a = get(&server.url(&path), None);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        assert!(a.content_type.as_deref().unwrap().starts_with("text/html"));
        for raw in [SCRIPT, IMG, "<b>x</b>"] {
            assert!(!a.body.contains(raw), "{path} has raw {raw}");
        }
        assert!(
            a.body.contains("&lt;script&gt;") || a.body.contains("&lt;img"),
            "{path} shows the text escaped"
        );
    }
    // The machines page knows the machine by its label, filtered by group.
    let grouped = get(&server.url("/?group=lab"), None);
    assert!(grouped.body.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(!grouped.body.contains(">plain<"), "filtered out");
}

#[test]
fn the_compare_page_and_api_are_compare_s_numbers() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    let mut a1 = a_run("alpha", 1);
    a1.started_at -= chrono::Duration::hours(2);
    a1.results[1].metrics[0].samples = vec![200.0, 210.0, 190.0];
    let a2 = a_run("alpha", 2);
    let b = a_run("beta", 3);
    let mut c = a_run("gamma", 4);
    c.tags.insert(ALIAS_TAG.into(), "g1".into());
    for r in [&a1, &a2, &b, &c] {
        assert_eq!(upload(&server, &token, r).status, 201);
    }
    let api = get(
        &server.url("/api/compare?m=alpha&m=beta&m=g1&ref=beta"),
        None,
    );
    assert_eq!(api.status, 200, "{}", api.body);
    let served = api.json();
    assert_eq!(served["schema"], 1);

    // What `sysgauge compare alpha beta g1 --reference beta` builds.
    let store = Store::open_read_only(&server.db).unwrap();
    let mut named = Vec::new();
    for k in ["alpha", "beta", "g1"] {
        named.extend(resolve_machines(&store, k).unwrap().unwrap());
    }
    let machines = label_machines(named);
    assert_eq!(machines[0].sources.len(), 2, "alpha is both its runs");
    let expected = compare_with_intervals(
        &machines,
        1,
        &[],
        machines.len() <= MAX_MACHINES_WITH_INTERVALS,
    )
    .unwrap();
    assert_eq!(
        served["comparison"],
        serde_json::to_value(&expected).unwrap()
    );
    assert_eq!(served["comparison"]["reference"], "beta");

    // The page is the report of the same comparison: its ratios appear.
    let page = get(&server.url("/compare?m=alpha&m=beta&m=g1&ref=beta"), None);
    assert_eq!(page.status, 200, "{}", page.body);
    for row in &expected.rows {
        for cell in row.cells.iter().flatten() {
            if let Some(r) = cell.ratio {
                let shown = sysgauge_report::compare::format_ratio(r);
                assert!(page.body.contains(&shown), "ratio {shown} on the page");
            }
        }
    }
    // Unknown machines and too few are clear errors.
    let unknown = get(&server.url("/api/compare?m=alpha&m=nope"), None);
    assert_eq!(unknown.status, 404);
    assert!(unknown.error().contains("'nope'"));
    let one = get(&server.url("/api/compare?m=alpha"), None);
    assert_eq!(one.status, 400);
}

#[test]
fn machines_runs_and_cases_views() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    let mut runs = Vec::new();
    for (i, (host, v)) in [("n1", 100.0), ("n2", 101.0), ("n3", 99.0), ("slow", 40.0)]
        .into_iter()
        .enumerate()
    {
        let mut r = a_run(host, i as u32);
        r.host.cpu.model = Some("Same CPU".into());
        r.results[0].metrics[0].samples = vec![v, v, v];
        assert_eq!(upload(&server, &token, &r).status, 201);
        runs.push(r);
    }
    let mut again = a_run("n1", 10);
    again.host.cpu.model = Some("Same CPU".into());
    again.results[0].metrics[0].samples = vec![70.0, 70.0, 70.0];
    again.started_at -= chrono::Duration::days(1);
    assert_eq!(upload(&server, &token, &again).status, 201);
    let m = get(&server.url("/api/machines?cpu=same"), None).json();
    assert_eq!(m["schema"], 1);
    let list = m["machines"].as_array().unwrap();
    assert_eq!(list.len(), 4);
    let n1 = list.iter().find(|x| x["name"] == "n1").unwrap();
    assert_eq!(n1["runs"], 2);
    assert_eq!(n1["history"].as_array().unwrap().len(), 2);
    assert!(n1["index"].as_f64().unwrap() > 0.0, "{n1}");
    assert_eq!(n1["latest_run_id"], runs[0].run_id.as_str());
    let none = get(&server.url("/api/machines?arch=riscv"), None).json();
    assert_eq!(none["machines"].as_array().unwrap().len(), 0);

    let v = get(
        &server.url("/api/cases?bench=hash.sha256&cpu=Same%20CPU"),
        None,
    );
    assert_eq!(v.status, 200, "{}", v.body);
    let g = &v.json()["groups"][0];
    // A machine counts once, with its newest result: n1's older run (99 in
    // a value of its own) is counted in `runs`, not in the median.
    assert_eq!(g["count"], 4);
    assert_eq!(g["median"], 99.5);
    let n1 = g["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["machine"] == "n1")
        .unwrap();
    assert_eq!(n1["run_id"], runs[0].run_id.as_str());
    assert_eq!(n1["runs"], 2);
    assert_eq!(n1["value"], 100.0);
    let outliers: Vec<&str> = g["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["outlier"] == true)
        .map(|x| x["machine"].as_str().unwrap())
        .collect();
    assert_eq!(outliers, ["slow"]);
    let page = get(&server.url("/cases?bench=hash.sha256&cpu=Same%20CPU"), None);
    assert!(page.body.contains("slow (outlier)"));

    let run = get(&server.url(&format!("/runs/{}", runs[0].run_id)), None);
    assert_eq!(run.status, 200);
    assert!(run.body.contains("hash.sha256"), "{}", run.body);
    // A fact the run does not have (no case worked on a file of a size
    // the case does not say) is no row.
    assert!(!run.body.contains("file size"), "{}", run.body);
    assert_eq!(get(&server.url("/runs/nope"), None).status, 404);
    assert_eq!(get(&server.url("/runs/%3Cx%3E"), None).status, 404);
    let missing = get(&server.url("/api/cases?bench=x"), None);
    assert_eq!(missing.status, 400);
    assert!(missing.error().contains("cpu"));
}

/// People read microseconds as µs on a page; the API keeps the stored
/// unit's ASCII name (`us`), as records and exports do.
#[test]
fn a_page_spells_microseconds_as_people_read_them() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    let mut r = a_run("n1", 0);
    r.host.cpu.model = Some("Same CPU".into());
    r.results[0].metrics[0].unit = sysgauge_core::Unit::Microseconds;
    r.results[0].metrics[0].better = sysgauge_core::Better::Lower;
    let sent = upload(&server, &token, &r);
    assert_eq!(sent.status, 201, "{}", sent.body);
    let path = "cases?bench=hash.sha256&cpu=Same%20CPU";
    let page = get(&server.url(&format!("/{path}")), None);
    assert!(page.body.contains("(µs, lower is better)"), "{}", page.body);
    assert!(!page.body.contains("(us, "), "{}", page.body);
    let api = get(&server.url(&format!("/api/{path}")), None).json();
    assert_eq!(api["groups"][0]["unit"], "us");
}

/// Every `name="m"` checkbox value of the machines page.
fn ticked_values(page: &str) -> Vec<String> {
    page.split("name=\"m\" value=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_string)
        .collect()
}

/// Runs stored before uploads were refused values below 1e-100 (1e-210
/// against 1e99: a ratio that overflows to infinity) still give a page:
/// its charts' axes are bounded (such a page once made the server
/// allocate until it was killed). The same run uploaded now is refused.
#[test]
fn values_stored_at_the_extremes_give_a_page() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    let with_samples = |host: &str, n: u32, v: f64| {
        let mut r = a_run(host, n);
        for m in r.results.iter_mut().flat_map(|r| r.metrics.iter_mut()) {
            m.samples = vec![v, v * 1.01, v * 1.02];
            m.summary = sysgauge_core::Summary::from_samples(&m.samples).unwrap();
        }
        r
    };
    let lo = with_samples("lo", 1, 1e-210);
    let refused = upload(&server, &token, &lo);
    assert_eq!(refused.status, 400);
    assert!(
        refused
            .error()
            .contains("1e-210 is below what sysgauge accepts"),
        "{}",
        refused.body
    );
    {
        let mut store = Store::open(&server.db).unwrap();
        store.insert_run(&lo, "upload").unwrap();
        store
            .insert_run(&with_samples("hi", 2, 1e99), "upload")
            .unwrap();
    }
    for path in [
        "/compare?m=lo&m=hi",
        "/compare?m=hi&m=lo",
        "/api/compare?m=lo&m=hi",
    ] {
        let a = get(&server.url(path), None);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        assert!(a.body.len() < 2_000_000, "{path}: {} bytes", a.body.len());
    }
    // hi/lo overflows (no ratio: nothing to chart); lo/hi is 1e-309, drawn
    // at the end of its axis.
    let page = get(&server.url("/compare?m=hi&m=lo"), None);
    assert!(
        page.body.matches("<svg").count() >= 2,
        "summary and ratio charts"
    );
    assert_eq!(get(&server.url("/health"), None).status, 200, "still up");
}

/// Machines that share a host name are ticked by a name `/compare` takes
/// (the start of their machine-id), and the comparison shows them by the
/// names the machines page shows.
#[test]
fn machines_of_one_host_name_are_ticked_and_compared() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    for (n, id) in [(1, "3d1219c7aaaa0000"), (2, "1111aaaa00000000")] {
        let mut r = a_run("vm", n);
        r.host.identity.machine_id = Some(id.into());
        assert_eq!(upload(&server, &token, &r).status, 201);
    }
    let mut kitchen = a_run("raspberrypi", 3);
    kitchen.tags.insert(ALIAS_TAG.into(), "kitchen".into());
    assert_eq!(upload(&server, &token, &kitchen).status, 201);
    let home = get(&server.url("/"), None);
    let mut ticked = ticked_values(&home.body);
    ticked.sort();
    assert_eq!(ticked, ["1111aaaa", "3d1219c7", "kitchen"], "{}", home.body);
    for name in ["vm (3d1219c7)", "vm (1111aaaa)", "kitchen"] {
        assert!(home.body.contains(name), "the page shows {name}");
    }
    // The alias the user gave, with the host it is: machines can share a
    // host name, and an alias alone does not say which host it is.
    assert!(
        home.body
            .contains("kitchen<br><span class=\"note\">host raspberrypi</span>"),
        "{}",
        home.body
    );
    assert!(!home.body.contains("host vm"), "the name says it already");
    let run = get(&server.url(&format!("/runs/{}", kitchen.run_id)), None);
    assert!(
        run.body
            .contains("<h1>run on kitchen (host raspberrypi)</h1>"),
        "{}",
        run.body
    );
    let machines = get(&server.url("/api/machines"), None).json();
    let selectors: Vec<&str> = machines["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["selector"].as_str().unwrap())
        .collect();
    assert_eq!(selectors.len(), 3);
    // What the form sends when two machines are ticked.
    let page = get(
        &server.url("/compare?m=3d1219c7&m=1111aaaa&m=kitchen"),
        None,
    );
    assert_eq!(page.status, 200, "{}", page.body);
    for name in ["vm (3d1219c7)", "vm (1111aaaa)", "kitchen"] {
        assert!(page.body.contains(name), "the comparison shows {name}");
    }
}

/// A comparison's links ask for all of it again, `family=` included; the
/// comma form `compare --family` takes works here too.
#[test]
fn comparison_links_keep_every_selection() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    for (host, n) in [("a", 1), ("b", 2)] {
        let mut r = a_run(host, n);
        r.results[1].bench_id = "zeta.md5".into();
        r.results[1].family = "zeta".into();
        assert_eq!(upload(&server, &token, &r).status, 201);
    }
    let page = get(&server.url("/compare?m=a&m=b&ref=b&family=hash"), None);
    assert_eq!(page.status, 200, "{}", page.body);
    let link = "/compare?m=a&amp;m=b&amp;ref=b&amp;family=hash";
    assert!(
        page.body.contains(&format!("href=\"{link}\"")),
        "{}",
        page.body
    );
    assert!(page.body.contains(&format!("href=\"/api{link}\"")));
    assert!(page
        .body
        .contains("link: /compare?m=a&amp;m=b&amp;ref=b&amp;family=hash"));
    assert!(!page.body.contains("zeta.md5"), "only the family asked for");
    let both = get(&server.url("/api/compare?m=a&m=b&family=hash,zeta"), None);
    assert_eq!(both.status, 200, "{}", both.body);
    let doc = both.json();
    let families: Vec<&str> = doc["comparison"]["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["family"].as_str().unwrap())
        .collect();
    assert_eq!(families, ["hash", "zeta"]);
    let page = get(&server.url("/compare?m=a&m=b&family=hash,%20zeta"), None);
    assert!(
        page.body.contains("family=hash&amp;family=zeta"),
        "{}",
        page.body
    );
}

/// A method an API route does not answer gets an error body like every
/// other (a page route's is a page: `errors_of_pages_are_pages…`).
#[test]
fn a_wrong_method_is_a_json_error() {
    let (_dir, server) = Server::fresh();
    let a = get(&server.url("/api/runs"), None);
    assert_eq!(a.status, 405);
    assert!(a.error().contains("GET"), "{}", a.body);
    let a = post(&server.url("/api/machines"), None, "text/plain", "x");
    assert_eq!(a.status, 405);
    assert!(a.error().contains("POST"), "{}", a.body);
}

/// An error of a page is a page (HTML, the status of the error, the
/// message escaped); the same error on the API stays JSON.
#[test]
fn errors_of_pages_are_pages_and_of_the_api_json() {
    let (dir, server) = Server::fresh();
    let token = server.token("t");
    assert_eq!(upload(&server, &token, &a_run("alpha", 1)).status, 201);
    let script = "%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    for (path, status, says) in [
        (
            "/runs/00000000-0000-4000-8000-000000000009".to_string(),
            404,
            "no run",
        ),
        (format!("/compare?m={script}&m=alpha"), 404, "is not a host"),
        ("/compare?m=alpha".to_string(), 400, "at least two machines"),
        ("/cases?bench=x".to_string(), 400, "name the CPU model"),
        ("/?page=zero".to_string(), 400, "not a page number"),
        ("/?page=9".to_string(), 404, "no page 9"),
        ("/nowhere".to_string(), 404, "no such page"),
        ("/runs/%FF%FE".to_string(), 404, "no such page"),
    ] {
        let a = get(&server.url(&path), None);
        assert_eq!(a.status, status, "{path}: {}", a.body);
        let kind = a.content_type.clone().unwrap_or_default();
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        assert!(a.body.starts_with("<!DOCTYPE html>"), "{path}: {}", a.body);
        assert!(a.body.contains(says), "{path}: {}", a.body);
        assert!(!a.body.contains("<script>"), "{path}: {}", a.body);
    }
    let escaped = get(&server.url(&format!("/compare?m={script}&m=alpha")), None);
    assert!(escaped.body.contains("&lt;script&gt;"), "{}", escaped.body);
    let a = post(&server.url("/"), None, "text/plain", "x");
    assert_eq!(a.status, 405);
    assert!(a.body.contains("does not answer POST"), "{}", a.body);
    // The API's errors are still JSON.
    for (path, status) in [
        (format!("/api/compare?m={script}&m=alpha"), 404),
        ("/api/machines?page=0".to_string(), 400),
        ("/api/nowhere".to_string(), 404),
        ("/api/runs/%FF%FE".to_string(), 404),
    ] {
        let a = get(&server.url(&path), None);
        assert_eq!(a.status, status, "{path}: {}", a.body);
        assert!(!a.error().is_empty());
    }
    // A site that needs a token to read asks a browser for it on a page,
    // and says why on the page it shows meanwhile.
    let closed = Server::start(&dir.path().join("c.db"), |c| {
        c.read_token = Some("a-read-token-long-enough".into())
    });
    let denied = get(&closed.url("/"), None);
    assert_eq!(denied.status, 401);
    assert!(denied.content_type.unwrap().starts_with("text/html"));
    assert!(
        denied.body.contains("needs a token to read"),
        "{}",
        denied.body
    );
    assert!(denied
        .www_authenticate
        .iter()
        .any(|w| w.starts_with("Basic")));
}

/// On a site that needs a token to read, every view refuses a request
/// without one, as its route answers errors: a page, or JSON on the API.
#[test]
fn every_view_needs_the_read_token() {
    let dir = tempfile::tempdir().unwrap();
    let closed = Server::start(&dir.path().join("c.db"), |c| {
        c.read_token = Some("a-read-token-long-enough".into())
    });
    for (path, page) in [
        ("/", true),
        ("/runs/x", true),
        ("/compare", true),
        ("/cases", true),
        ("/api/machines", false),
        ("/api/runs/x", false),
        ("/api/compare", false),
        ("/api/cases", false),
    ] {
        let a = get(&closed.url(path), None);
        assert_eq!(a.status, 401, "{path}: {}", a.body);
        let html = a.content_type.as_deref().unwrap_or("");
        assert_eq!(html.starts_with("text/html"), page, "{path}: {html}");
        let basic = a.www_authenticate.iter().any(|w| w.starts_with("Basic"));
        assert!(basic, "{path}: {:?}", a.www_authenticate);
    }
}

/// An address longer than the site answers is refused with a body that
/// says so (a page on a page route, JSON on the API).
#[test]
fn a_long_address_is_refused_with_a_reason() {
    let (_dir, server) = Server::fresh();
    let long = "m=x".repeat(7_000);
    let page = get(&server.url(&format!("/compare?{long}")), None);
    assert_eq!(page.status, 414);
    assert!(page.content_type.unwrap().starts_with("text/html"));
    assert!(page.body.contains("16384 at most"), "{}", page.body);
    let api = get(&server.url(&format!("/api/compare?{long}")), None);
    assert_eq!(api.status, 414);
    assert!(api.error().contains("16384 at most"), "{}", api.body);
    // Just below the limit, the route answers.
    let fits = "m=x&".repeat(4_000);
    let a = get(&server.url(&format!("/api/compare?{fits}")), None);
    assert_eq!(a.status, 400, "{}", a.body);
}

/// The machines page indexes a machine as `compare` takes it (every case's
/// newest result among all its runs), beside its newest run's index, and
/// shows the machines a page at a time.
#[test]
fn the_machines_page_indexes_whole_machines_a_page_at_a_time() {
    let (_dir, server) = Server::fresh();
    let token = server.token("t");
    // The newest run measured md5 alone: its own index covers md5 only.
    let mut old = a_run("whole", 1);
    old.started_at -= chrono::Duration::days(1);
    let mut newest = a_run("whole", 2);
    newest.results.retain(|r| r.bench_id == "hash.md5");
    for r in [&old, &newest] {
        assert_eq!(upload(&server, &token, r).status, 201);
    }
    let m = get(&server.url("/api/machines"), None).json();
    let whole = &m["machines"][0];
    assert_eq!(whole["runs"], 2, "{whole}");
    let (machine, latest) = (
        whole["machine_index"].as_f64().unwrap(),
        whole["index"].as_f64().unwrap(),
    );
    // Both cases, with the same numbers as the old run (md5 measured the
    // same in both): the old run's index, not the newest run's.
    let old_index = whole["history"][0]["index"].as_f64().unwrap();
    assert_eq!(machine, old_index, "{whole}");
    assert_ne!(machine, latest, "{whole}");
    let home = get(&server.url("/"), None);
    assert!(home
        .body
        .contains(&sysgauge_report::format::format_value(machine)));
    assert!(
        home.body.contains("latest run&#39;s index") || home.body.contains("latest run's index")
    );

    // 101 more machines: two pages, the filters kept by the links.
    {
        let mut store = Store::open(&server.db).unwrap();
        for n in 0..101 {
            let mut r = a_run(&format!("host{n:03}"), 100 + n);
            r.tags.insert("groups".into(), "lab".into());
            store.insert_run(&r, "upload").unwrap();
        }
    }
    let first = get(&server.url("/?group=lab"), None);
    assert_eq!(first.status, 200);
    assert_eq!(ticked_values(&first.body).len(), 100);
    assert!(first.body.contains("of 101, page 1 of 2"), "{}", first.body);
    assert!(first.body.contains("href=\"/?group=lab&amp;page=2\""));
    let second = get(&server.url("/?group=lab&page=2"), None);
    assert_eq!(ticked_values(&second.body).len(), 1);
    assert!(second.body.contains("href=\"/?group=lab&amp;page=1\""));
    // The API answers every machine unless asked for a page.
    let all = get(&server.url("/api/machines"), None).json();
    assert_eq!(all["machines"].as_array().unwrap().len(), 102);
    assert_eq!(all["total"], 102);
    let paged = get(&server.url("/api/machines?page=2"), None).json();
    assert_eq!(paged["machines"].as_array().unwrap().len(), 2);
    assert_eq!(
        (paged["page"].clone(), paged["pages"].clone()),
        (2.into(), 2.into())
    );
}
