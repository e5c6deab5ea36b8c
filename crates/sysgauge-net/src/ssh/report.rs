//! Renderings of the `ssh` family from its records: the fastest
//! cipher/MAC/kex combinations, the averages per cipher, per MAC and per key
//! exchange (as the by-hand analyses of `ssh` over /dev/zero did), the
//! combinations that could not be measured, and a recommended
//! `Ciphers`/`MACs`/`KexAlgorithms` block for ssh_config, fastest first;
//! with `only_secure`, restricted to algorithms not considered weak, and
//! what that choice costs.
//!
//! Averages compare like with like: a cipher's average uses only the MAC
//! and kex contexts every cipher of its kind was measured with (in the
//! factorial matrix that is the one fixed MAC and kex; in the full matrix,
//! every MAC and kex, as the by-hand averages did), and likewise for MACs
//! and key exchanges. So the factorial matrix's MAC sweep (all with one
//! cipher) does not drag that cipher's average down with slow MACs. The
//! factorial matrix's transfers name its fixed cipher and MAC (details
//! `fixed_cipher`, `fixed_mac`): ciphers are ranked over the transfers
//! with the fixed MAC only, MACs over those with the fixed cipher, which
//! keeps the sweeps apart even when only one cipher uses a MAC (whose
//! transfers would otherwise all be "every context its kind shares").
//!
//! What counts as weak (`weakness`): CBC-mode ciphers, 3DES, RC4
//! (arcfour), Blowfish, CAST and other 64-bit-block ciphers; MACs over SHA-1
//! or MD5 (HMAC-RIPEMD-160 has no known weakness, and the "secure" set of
//! `--secure-set` recommends it); key exchanges with SHA-1 (diffie-hellman-group1,
//! group14 and group-exchange with sha1) or 1024-bit groups. `umac-64`
//! (64-bit tag) is kept: a forged packet must be guessed on the first try,
//! since a single MAC failure ends the connection, and OpenSSH's own default
//! list still puts `umac-64-etm@openssh.com` first. ChaCha20-Poly1305 and
//! the `-etm` MACs are kept: the Terrapin prefix-truncation attack
//! (CVE-2023-48795) against them is closed by "strict key exchange", which
//! both ends negotiate since OpenSSH 9.6 (and distributions' backports).

use super::algorithms::{Kind, IMPLICIT_MAC};
use super::{FIXED_CIPHER_DETAIL, FIXED_MAC_DETAIL, HANDSHAKE_ID, TRANSFER_ID};
use std::collections::{BTreeMap, BTreeSet};
use sysgauge_core::record::{ResultRecord, RunRecord, Status};
use sysgauge_core::rounds::shown_spread;
use sysgauge_report::format::format_value;
use sysgauge_report::table::{Align, Table, TableFormat};

/// Why an algorithm is considered weak, or `None`.
pub fn weakness(class: Kind, name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    match class {
        Kind::Cipher => {
            if n.starts_with("3des") || n.starts_with("des") {
                Some("3DES/DES: 64-bit block, slow")
            } else if n.starts_with("arcfour") {
                Some("RC4: broken stream cipher")
            } else if n.starts_with("blowfish") || n.starts_with("cast128") || n.starts_with("idea")
            {
                Some("64-bit block cipher")
            } else if n.contains("-cbc") || n.contains("cbc@") {
                Some("CBC mode: plaintext-recovery attacks")
            } else if n == "none" {
                Some("no encryption")
            } else {
                None
            }
        }
        Kind::Mac => {
            if n.starts_with("hmac-sha1") {
                Some("SHA-1")
            } else if n.starts_with("hmac-md5") {
                Some("MD5")
            } else {
                None
            }
        }
        Kind::Kex => {
            if n.contains("group1-") || n.starts_with("rsa1024") {
                Some("1024-bit group and SHA-1")
            } else if n.ends_with("-sha1") || n.contains("-sha1-") {
                Some("SHA-1")
            } else {
                None
            }
        }
    }
}

fn is_weak(class: Kind, name: &str) -> bool {
    weakness(class, name).is_some()
}

/// One measured transfer.
#[derive(Debug, Clone)]
struct Transfer<'a> {
    cipher: &'a str,
    mac: &'a str,
    kex: &'a str,
    mbps: f64,
    cov: f64,
    /// The factorial matrix's fixed cipher and MAC (`None`: full matrix,
    /// slice, or stored before they were noted).
    fixed_cipher: Option<&'a str>,
    fixed_mac: Option<&'a str>,
}

/// One measured handshake.
#[derive(Debug, Clone)]
struct Handshake<'a> {
    cipher: &'a str,
    mac: &'a str,
    kex: &'a str,
    ms: f64,
    auth_ms: Option<f64>,
}

fn metric_value(r: &ResultRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value())
}

fn transfers(run: &RunRecord) -> Vec<Transfer<'_>> {
    run.results
        .iter()
        .filter(|r| r.bench_id == TRANSFER_ID && r.is_ok())
        .filter_map(|r| {
            let m = r.metrics.iter().find(|m| m.name == "throughput")?;
            Some(Transfer {
                cipher: r.params.get_str("cipher")?,
                mac: r.params.get_str("mac")?,
                kex: r.params.get_str("kex")?,
                mbps: m.value(),
                cov: shown_spread(r, m),
                fixed_cipher: r.details.get_str(FIXED_CIPHER_DETAIL),
                fixed_mac: r.details.get_str(FIXED_MAC_DETAIL),
            })
        })
        .collect()
}

fn handshakes(run: &RunRecord) -> Vec<Handshake<'_>> {
    run.results
        .iter()
        .filter(|r| r.bench_id == HANDSHAKE_ID && r.is_ok())
        .filter_map(|r| {
            Some(Handshake {
                cipher: r.params.get_str("cipher")?,
                mac: r.params.get_str("mac")?,
                kex: r.params.get_str("kex")?,
                ms: metric_value(r, "handshake")?,
                auth_ms: metric_value(r, "auth"),
            })
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Average of `value` per `key`, over the contexts every key was measured
/// in (all contexts if they share none). Keys in first-seen order.
fn balanced<T>(
    rows: &[T],
    key: impl Fn(&T) -> String,
    context: impl Fn(&T) -> String,
    value: impl Fn(&T) -> f64,
) -> Vec<(String, f64, usize)> {
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        let k = key(r);
        if !order.contains(&k) {
            order.push(k);
        }
    }
    let common = common_contexts(rows, &key, &context);
    order
        .into_iter()
        .map(|k| {
            let use_all = common.is_empty();
            let vals: Vec<f64> = rows
                .iter()
                .filter(|r| key(r) == k && (use_all || common.contains(&context(r))))
                .map(&value)
                .collect();
            let n = vals.len();
            (k, mean(&vals), n)
        })
        .collect()
}

/// The contexts every key of `rows` was measured in.
fn common_contexts<T, C: Ord + Clone>(
    rows: &[T],
    key: impl Fn(&T) -> String,
    context: impl Fn(&T) -> C,
) -> BTreeSet<C> {
    let mut contexts: BTreeMap<String, BTreeSet<C>> = BTreeMap::new();
    for r in rows {
        contexts.entry(key(r)).or_default().insert(context(r));
    }
    let mut common: Option<BTreeSet<C>> = None;
    for set in contexts.values() {
        common = Some(match common {
            None => set.clone(),
            Some(c) => c.intersection(set).cloned().collect(),
        });
    }
    common.unwrap_or_default()
}

/// The one context every key was measured in, when there is exactly one:
/// the context a table of single measurements ranks its keys in. Read from
/// the results, never from their order (a cipher sweep may come first and
/// pair another cipher with the fixed MAC).
fn single_context<'a>(
    rows: &[&Transfer<'a>],
    key: impl Fn(&Transfer<'a>) -> &'a str,
    context: impl Fn(&Transfer<'a>) -> (&'a str, &'a str),
) -> Option<(&'a str, &'a str)> {
    let common = common_contexts(rows, |r| key(r).to_string(), |r| context(r));
    let mut it = common.into_iter();
    match (it.next(), it.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// The transfers that rank ciphers: in the factorial matrix, the AEAD
/// ciphers' and those with the fixed MAC (not the MAC sweep's).
fn cipher_sweep<'a>(rows: &[Transfer<'a>]) -> Vec<Transfer<'a>> {
    rows.iter()
        .filter(|r| r.mac == IMPLICIT_MAC || r.fixed_mac.is_none_or(|m| r.mac == m))
        .cloned()
        .collect()
}

/// The transfers that rank MACs: in the factorial matrix, those with the
/// fixed cipher (not the cipher sweep's).
fn mac_sweep<'a>(rows: &[Transfer<'a>]) -> Vec<Transfer<'a>> {
    rows.iter()
        .filter(|r| r.mac != IMPLICIT_MAC && r.fixed_cipher.is_none_or(|c| r.cipher == c))
        .cloned()
        .collect()
}

/// Per-cipher averages: AEAD ciphers over their kex contexts, the others
/// over the MAC/kex contexts they all share.
fn per_cipher(rows: &[Transfer<'_>]) -> Vec<(String, f64, usize)> {
    let (aead, other): (Vec<Transfer>, Vec<Transfer>) = cipher_sweep(rows)
        .into_iter()
        .partition(|r| r.mac == IMPLICIT_MAC);
    let mut v = balanced(
        &aead,
        |r| r.cipher.to_string(),
        |r| r.kex.to_string(),
        |r| r.mbps,
    );
    v.extend(balanced(
        &other,
        |r| r.cipher.to_string(),
        |r| format!("{} {}", r.mac, r.kex),
        |r| r.mbps,
    ));
    sort_desc(&mut v);
    v
}

fn per_mac(rows: &[Transfer<'_>]) -> Vec<(String, f64, usize)> {
    let other = mac_sweep(rows);
    let mut v = balanced(
        &other,
        |r| r.mac.to_string(),
        |r| format!("{} {}", r.cipher, r.kex),
        |r| r.mbps,
    );
    sort_desc(&mut v);
    v
}

/// Per-kex averages: (name, handshake ms, auth ms, n).
type KexRow = (String, f64, Option<f64>, usize);

/// Per kex: (name, handshake ms, auth ms, n), fastest first by auth when
/// every kex has it (it leaves the remote shell's start-up out), else by
/// the whole handshake.
fn per_kex(rows: &[Handshake<'_>]) -> (Vec<KexRow>, bool) {
    let ctx = |r: &Handshake| format!("{} {}", r.cipher, r.mac);
    let total = balanced(rows, |r| r.kex.to_string(), ctx, |r| r.ms);
    let by_auth = !rows.is_empty() && rows.iter().all(|r| r.auth_ms.is_some());
    let auth = balanced(
        rows,
        |r| r.kex.to_string(),
        ctx,
        |r| r.auth_ms.unwrap_or(f64::NAN),
    );
    let mut v: Vec<KexRow> = total
        .into_iter()
        .map(|(k, ms, n)| {
            let a = auth
                .iter()
                .find(|(x, _, _)| *x == k)
                .map(|(_, a, _)| *a)
                .filter(|a| a.is_finite());
            (k, ms, a, n)
        })
        .collect();
    let key =
        |e: &(String, f64, Option<f64>, usize)| if by_auth { e.2.unwrap_or(e.1) } else { e.1 };
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    (v, by_auth)
}

fn sort_desc(v: &mut [(String, f64, usize)]) {
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
}

fn weak_cell(class: Kind, name: &str) -> String {
    weakness(class, name)
        .map(|w| format!("weak: {w}"))
        .unwrap_or_default()
}

fn combo_weak(t: &Transfer<'_>) -> Vec<&'static str> {
    let mut v = Vec::new();
    if let Some(w) = weakness(Kind::Cipher, t.cipher) {
        v.push(w);
    }
    if t.mac != IMPLICIT_MAC {
        if let Some(w) = weakness(Kind::Mac, t.mac) {
            v.push(w);
        }
    }
    if let Some(w) = weakness(Kind::Kex, t.kex) {
        v.push(w);
    }
    v
}

fn combo_secure(t: &Transfer<'_>) -> bool {
    combo_weak(t).is_empty()
}

/// Under a table of averages: when every row averaged one combination
/// (the factorial matrix varies one class at a time), the "average" is a
/// single measurement in one context, and the reader must know which.
fn single_context_note(
    rows: &[(String, f64, usize)],
    what: &str,
    others: &str,
    context: Option<String>,
) -> String {
    if rows.len() < 2 || rows.iter().any(|(_, _, n)| *n > 1) {
        return String::new();
    }
    format!(
        "Each {what}'s figure comes from a single {others} context ({}), as the factorial \
         matrix varies one class at a time: it ranks the {what}s in that context only. \
         `--matrix full` averages each over every {others} combination.\n",
        context.unwrap_or_else(|| "the fixed one".into())
    )
}

/// The whole ssh report. `only_secure` restricts the recommendation to
/// algorithms not considered weak and adds what that costs.
/// One class of algorithm (`what`: cipher or MAC) ranked by its mean MB/s
/// over `others` (the other classes), with [`single_context_note`] under
/// the table.
fn ranking(
    rows: &[(String, f64, usize)],
    kind: Kind,
    what: &str,
    others: &str,
    context: Option<String>,
    format: TableFormat,
) -> String {
    let mut t = Table::columns(&format!(">#, {what}, >MB/s, >n, note"));
    for (i, (name, v, n)) in rows.iter().enumerate() {
        t.push(vec![
            (i + 1).to_string(),
            name.clone(),
            format_value(*v),
            n.to_string(),
            weak_cell(kind, name),
        ]);
    }
    let mut out = t.render(format);
    out.push_str(&single_context_note(rows, what, others, context));
    out
}

pub fn ssh_report(run: &RunRecord, format: TableFormat, only_secure: bool) -> String {
    let mut out = String::new();
    let tr = transfers(run);
    let hs = handshakes(run);
    let first = run.results.iter().find(|r| r.family == "ssh");
    let server = first
        .and_then(|r| r.details.get_str("server"))
        .unwrap_or("the server");
    let mode = first
        .and_then(|r| r.params.get_str("mode"))
        .unwrap_or("local");
    let first_transfer = run.results.iter().find(|r| r.bench_id == TRANSFER_ID);
    let size = first_transfer.and_then(|r| r.params.get_u64("size"));
    let into = first_transfer
        .and_then(|r| r.details.get_str(super::sink::SINK_PATH_DETAIL))
        .map(|p| format!(" written into {p}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "SSH to {server} ({mode}): {} transfer combination(s){}{into}, {} handshake(s)\n",
        tr.len(),
        size.map(|s| format!(" of {s} bytes each"))
            .unwrap_or_default(),
        hs.len()
    ));

    if !tr.is_empty() {
        let mut top = tr.clone();
        top.sort_by(|a, b| b.mbps.total_cmp(&a.mbps));
        let shown = top.len().min(10);
        out.push_str(&format!(
            "\nFastest combinations (top {shown} of {}, MB/s)\n",
            top.len()
        ));
        let hs_of = |t: &Transfer| {
            hs.iter()
                .find(|h| h.cipher == t.cipher && h.mac == t.mac && h.kex == t.kex)
                .map(|h| format_value(h.ms))
                .unwrap_or_default()
        };
        let mut t = Table::columns(">#, cipher, MAC, kex, >MB/s, >spread, >handshake ms, note");
        for (i, r) in top.iter().take(shown).enumerate() {
            t.push(vec![
                (i + 1).to_string(),
                r.cipher.to_string(),
                r.mac.to_string(),
                r.kex.to_string(),
                format_value(r.mbps),
                format!("±{:.1}%", r.cov * 100.0),
                hs_of(r),
                combo_weak(r)
                    .first()
                    .map(|w| format!("weak: {w}"))
                    .unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render(format));

        let ciphers_ranked = cipher_sweep(&tr);
        let non_aead: Vec<&Transfer> = ciphers_ranked
            .iter()
            .filter(|t| t.mac != IMPLICIT_MAC)
            .collect();
        out.push_str("\nBy cipher (mean MB/s over the MAC and kex every cipher of its kind was measured with; n = combinations averaged)\n");
        out.push_str(&ranking(
            &per_cipher(&tr),
            Kind::Cipher,
            "cipher",
            "MAC/kex",
            single_context(&non_aead, |t| t.cipher, |t| (t.mac, t.kex))
                .or_else(|| tr.first().map(|t| (t.mac, t.kex)))
                .map(|(mac, kex)| format!("MAC {mac}, kex {kex}")),
            format,
        ));

        let macs = per_mac(&tr);
        if !macs.is_empty() {
            out.push_str("\nBy MAC (mean MB/s over the cipher and kex every MAC was measured with; AEAD ciphers use none)\n");
            out.push_str(&ranking(
                &macs,
                Kind::Mac,
                "MAC",
                "cipher/kex",
                single_context(
                    &mac_sweep(&tr).iter().collect::<Vec<_>>(),
                    |t| t.mac,
                    |t| (t.cipher, t.kex),
                )
                .map(|(cipher, kex)| format!("cipher {cipher}, kex {kex}")),
                format,
            ));
        }
    }

    let (kex, by_auth) = per_kex(&hs);
    let kex_tr: Vec<(String, f64, usize)> = {
        let kinds: BTreeSet<&str> = tr.iter().map(|t| t.kex).collect();
        if kinds.len() > 1 {
            balanced(
                &tr,
                |r| r.kex.to_string(),
                |r| format!("{} {}", r.cipher, r.mac),
                |r| r.mbps,
            )
        } else {
            Vec::new()
        }
    };
    if !kex.is_empty() {
        out.push_str(&format!(
            "\nBy key exchange (ms; fastest first by {})\n",
            if by_auth {
                "time to authentication, which leaves the remote shell out"
            } else {
                "the whole handshake"
            }
        ));
        let mut heads = vec![
            ("kex", Align::Left),
            ("handshake ms", Align::Right),
            ("auth ms", Align::Right),
        ];
        if !kex_tr.is_empty() {
            heads.push(("transfer MB/s", Align::Right));
        }
        heads.push(("n", Align::Right));
        heads.push(("note", Align::Left));
        let mut t = Table::new(&heads);
        for (k, ms, auth, n) in &kex {
            let mut row = vec![
                k.clone(),
                format_value(*ms),
                auth.map(format_value).unwrap_or_else(|| "-".into()),
            ];
            if !kex_tr.is_empty() {
                row.push(
                    kex_tr
                        .iter()
                        .find(|(x, _, _)| x == k)
                        .map(|(_, v, _)| format_value(*v))
                        .unwrap_or_else(|| "-".into()),
                );
            }
            row.push(n.to_string());
            row.push(weak_cell(Kind::Kex, k));
            t.push(row);
        }
        out.push_str(&t.render(format));
    }

    let not_ok: Vec<&ResultRecord> = run
        .results
        .iter()
        .filter(|r| r.family == "ssh" && !r.is_ok())
        .collect();
    if !not_ok.is_empty() {
        out.push_str("\nNot measured\n");
        let mut t = Table::columns("benchmark, cipher, MAC, kex, why");
        for r in not_ok {
            let why = match &r.status {
                Status::Skipped { reason, hint } => match hint {
                    Some(h) => format!("skipped: {reason} ({h})"),
                    None => format!("skipped: {reason}"),
                },
                Status::Failed { error } => format!("FAILED: {error}"),
                Status::Ok => String::new(),
            };
            let p = |k: &str| r.params.get_str(k).unwrap_or("-").to_string();
            t.push(vec![
                r.bench_id.clone(),
                p("cipher"),
                p("mac"),
                p("kex"),
                why,
            ]);
        }
        out.push_str(&t.render(format));
    }

    out.push_str(&recommendation(&tr, &hs, only_secure, run));
    out
}

/// The ssh_config block, and with `only_secure` the price of leaving the
/// weak algorithms out.
fn recommendation(
    tr: &[Transfer<'_>],
    hs: &[Handshake<'_>],
    only_secure: bool,
    run: &RunRecord,
) -> String {
    let ciphers = per_cipher(tr);
    let macs = per_mac(tr);
    let (kex, by_auth) = per_kex(hs);
    if ciphers.is_empty() && kex.is_empty() {
        return "\nNo combination was measured, so there is no recommendation.\n".into();
    }
    let keep = |class: Kind, name: &str| !only_secure || !is_weak(class, name);
    let c_list: Vec<&str> = ciphers
        .iter()
        .map(|x| x.0.as_str())
        .filter(|n| keep(Kind::Cipher, n))
        .collect();
    let m_list: Vec<&str> = macs
        .iter()
        .map(|x| x.0.as_str())
        .filter(|n| keep(Kind::Mac, n))
        .collect();
    let k_list: Vec<&str> = kex
        .iter()
        .map(|x| x.0.as_str())
        .filter(|n| keep(Kind::Kex, n))
        .collect();
    let mut out = String::new();
    out.push_str(&format!(
        "\nRecommended for ssh_config (~/.ssh/config or /etc/ssh/ssh_config), fastest first{}:\n\n",
        if only_secure {
            ", algorithms considered weak left out"
        } else {
            ""
        }
    ));
    out.push_str(&format!(
        "    # Measured by sysgauge on {} ({}), run {}\n    Host *\n",
        run.host_name(),
        run.started_at.format("%Y-%m-%d"),
        run.run_id.split('-').next().unwrap_or(&run.run_id)
    ));
    for (kw, list) in [
        ("Ciphers", &c_list),
        ("MACs", &m_list),
        ("KexAlgorithms", &k_list),
    ] {
        if !list.is_empty() {
            out.push_str(&format!("        {kw} {}\n", list.join(",")));
        }
    }
    if !only_secure {
        let mut weak: Vec<String> = Vec::new();
        for (class, list) in [
            (Kind::Cipher, &c_list),
            (Kind::Mac, &m_list),
            (Kind::Kex, &k_list),
        ] {
            for n in list.iter() {
                if let Some(w) = weakness(class, n) {
                    weak.push(format!("{n} ({w})"));
                }
            }
        }
        if !weak.is_empty() {
            out.push_str(&format!(
                "\nThe lists include algorithms considered weak: {}. Use --only-secure to leave them out.\n",
                weak.join(", ")
            ));
        }
        out.push_str(
            "ssh uses the first algorithm in each list that the server also offers; MACs apply only to ciphers that are not AEAD (GCM, ChaCha20-Poly1305).\n",
        );
        return out;
    }
    out.push_str("\nWhat leaving the weak algorithms out costs:\n");
    let cost = |class: Kind, rows: &[(String, f64, usize)], what: &str| -> Option<String> {
        let best = rows.first()?;
        let secure = rows.iter().find(|r| !is_weak(class, &r.0))?;
        if secure.0 == best.0 {
            return Some(format!(
                "  {what}: the fastest, {} ({} MB/s), is not weak: nothing\n",
                best.0,
                format_value(best.1)
            ));
        }
        Some(format!(
            "  {what}: {} at {} MB/s instead of {} at {} MB/s ({:+.1} %)\n",
            secure.0,
            format_value(secure.1),
            best.0,
            format_value(best.1),
            (secure.1 / best.1 - 1.0) * 100.0
        ))
    };
    let mut lines = String::new();
    if let Some(l) = cost(Kind::Cipher, &ciphers, "cipher") {
        lines.push_str(&l);
    }
    if let Some(l) = cost(Kind::Mac, &macs, "MAC") {
        lines.push_str(&l);
    }
    if let (Some(best), Some(secure)) =
        (kex.first(), kex.iter().find(|k| !is_weak(Kind::Kex, &k.0)))
    {
        let v =
            |k: &(String, f64, Option<f64>, usize)| if by_auth { k.2.unwrap_or(k.1) } else { k.1 };
        if best.0 == secure.0 {
            lines.push_str(&format!(
                "  key exchange: the fastest, {}, is not weak: nothing\n",
                best.0
            ));
        } else {
            lines.push_str(&format!(
                "  key exchange: {} at {} ms instead of {} at {} ms ({:+.1} %)\n",
                secure.0,
                format_value(v(secure)),
                best.0,
                format_value(v(best)),
                (v(secure) / v(best) - 1.0) * 100.0
            ));
        }
    }
    let mut all = tr.to_vec();
    all.sort_by(|a, b| b.mbps.total_cmp(&a.mbps));
    if let (Some(best), Some(secure)) = (all.first(), all.iter().find(|t| combo_secure(t))) {
        lines.push_str(&format!(
            "  best combination: {} / {} / {} at {} MB/s; best without weak algorithms: {} / {} / {} at {} MB/s ({:+.1} %)\n",
            best.cipher,
            best.mac,
            best.kex,
            format_value(best.mbps),
            secure.cipher,
            secure.mac,
            secure.kex,
            format_value(secure.mbps),
            (secure.mbps / best.mbps - 1.0) * 100.0
        ));
    }
    if lines.is_empty() {
        lines.push_str("  nothing measured is free of weak algorithms\n");
    }
    out.push_str(&lines);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysgauge_core::record::{Metric, Params, RunStatus};
    use sysgauge_core::unit::{Better, Unit};

    fn rec(id: &str, c: &str, m: &str, k: &str, metrics: Vec<(&str, f64)>) -> ResultRecord {
        let mut params = Params::new()
            .with("cipher", c)
            .with("mac", m)
            .with("kex", k)
            .with("mode", "local");
        if id == TRANSFER_ID {
            params.insert("size", 100_000_000u64);
        }
        ResultRecord {
            family: "ssh".into(),
            details: Params::new().with("server", "root@127.0.0.1 port 4000"),
            duration_seconds: 1.0,
            ..ResultRecord::new(
                id,
                params,
                Status::Ok,
                metrics
                    .into_iter()
                    .filter_map(|(n, v)| {
                        let unit = if n == "throughput" {
                            Unit::MBps
                        } else {
                            Unit::Milliseconds
                        };
                        Metric::new(n, unit, Better::Higher, vec![v * 0.99, v, v * 1.01])
                    })
                    .collect(),
            )
        }
    }

    fn run(results: Vec<ResultRecord>) -> RunRecord {
        RunRecord {
            status: RunStatus::Complete,
            results,
            ..RunRecord::new("abcd1234-0000", "ssh", "0")
        }
    }

    const KEX: &str = "curve25519-sha256";
    const FM: &str = "umac-128-etm@openssh.com";

    /// A factorial run: ciphers with the fixed MAC, MACs with aes128-ctr.
    fn factorial() -> RunRecord {
        let t = |c, m, v| rec(TRANSFER_ID, c, m, KEX, vec![("throughput", v)]);
        let h = |k, ms, auth| {
            rec(
                HANDSHAKE_ID,
                "aes128-ctr",
                FM,
                k,
                vec![("handshake", ms), ("auth", auth)],
            )
        };
        run(vec![
            t("aes128-gcm@openssh.com", IMPLICIT_MAC, 500.0),
            t("chacha20-poly1305@openssh.com", IMPLICIT_MAC, 300.0),
            t("aes128-ctr", FM, 400.0),
            t("aes128-cbc", FM, 450.0),
            t("3des-cbc", FM, 10.0),
            // MAC sweep with aes128-ctr: slow MACs must not lower aes128-ctr's
            // cipher average.
            t("aes128-ctr", "hmac-md5", 420.0),
            t("aes128-ctr", "hmac-sha2-512", 200.0),
            h(KEX, 120.0, 20.0),
            h("diffie-hellman-group14-sha1", 150.0, 15.0),
            h("diffie-hellman-group18-sha512", 300.0, 200.0),
        ])
    }

    #[test]
    fn weak_classes() {
        assert!(weakness(Kind::Cipher, "aes128-cbc").is_some());
        assert!(weakness(Kind::Cipher, "3des-cbc").is_some());
        assert!(weakness(Kind::Cipher, "rijndael-cbc@lysator.liu.se").is_some());
        assert!(weakness(Kind::Cipher, "arcfour256").is_some());
        assert!(weakness(Kind::Cipher, "aes128-ctr").is_none());
        assert!(weakness(Kind::Cipher, "chacha20-poly1305@openssh.com").is_none());
        assert!(weakness(Kind::Mac, "hmac-sha1-96-etm@openssh.com").is_some());
        assert!(weakness(Kind::Mac, "hmac-md5").is_some());
        assert!(weakness(Kind::Mac, "umac-64-etm@openssh.com").is_none());
        assert!(weakness(Kind::Mac, "hmac-sha2-256").is_none());
        assert!(weakness(Kind::Kex, "diffie-hellman-group1-sha1").is_some());
        assert!(weakness(Kind::Kex, "diffie-hellman-group14-sha1").is_some());
        assert!(weakness(Kind::Kex, "diffie-hellman-group-exchange-sha1").is_some());
        assert!(weakness(Kind::Kex, "diffie-hellman-group14-sha256").is_none());
        assert!(weakness(Kind::Kex, "sntrup761x25519-sha512@openssh.com").is_none());
    }

    #[test]
    fn averages_compare_like_with_like() {
        let r = factorial();
        let tr = transfers(&r);
        let c = per_cipher(&tr);
        let get =
            |v: &[(String, f64, usize)], k: &str| v.iter().find(|x| x.0 == k).map(|x| (x.1, x.2));
        // aes128-ctr's average uses only the fixed MAC (the context all
        // non-AEAD ciphers share).
        assert_eq!(get(&c, "aes128-ctr"), Some((400.0, 1)));
        assert_eq!(c[0].0, "aes128-gcm@openssh.com");
        let m = per_mac(&tr);
        assert_eq!(m[0].0, "hmac-md5");
        assert_eq!(get(&m, FM), Some((400.0, 1)));
        let (k, by_auth) = per_kex(&handshakes(&r));
        assert!(by_auth);
        assert_eq!(k[0].0, "diffie-hellman-group14-sha1");
        assert_eq!(k[2].0, "diffie-hellman-group18-sha512");
    }

    /// A factorial run with one cipher that uses a MAC (`--cipher
    /// aes128-ctr,chacha20… --mac X`): its transfers with the fixed MAC
    /// and from the MAC sweep share no context with another cipher of its
    /// kind, so only the noted fixed choices keep the sweeps apart. Before,
    /// aes128-ctr was ranked on the mean of both (n = 2), and a single MAC
    /// on the mean over every cipher.
    #[test]
    fn a_lone_mac_cipher_is_ranked_with_the_fixed_mac_only() {
        let t = |c, m, v| {
            let mut r = rec(TRANSFER_ID, c, m, KEX, vec![("throughput", v)]);
            r.details.insert(FIXED_CIPHER_DETAIL, "aes128-ctr");
            r.details.insert(FIXED_MAC_DETAIL, FM);
            r
        };
        let r = run(vec![
            t("aes128-ctr", FM, 400.0),
            t("aes128-ctr", "hmac-sha2-256", 200.0),
            t("chacha20-poly1305@openssh.com", IMPLICIT_MAC, 300.0),
        ]);
        let tr = transfers(&r);
        let c = per_cipher(&tr);
        assert_eq!(c[0], ("aes128-ctr".to_string(), 400.0, 1), "{c:?}");
        assert_eq!(c.len(), 2);
        let text = ssh_report(&r, TableFormat::Text, false);
        assert!(
            text.contains(&format!(
                "Each cipher's figure comes from a single MAC/kex context (MAC {FM}, kex {KEX})"
            )),
            "{text}"
        );
        // One MAC, measured with two ciphers: ranked with the fixed cipher.
        let r = run(vec![t("aes128-ctr", FM, 400.0), t("aes128-cbc", FM, 100.0)]);
        let m = per_mac(&transfers(&r));
        assert_eq!(m, [(FM.to_string(), 400.0, 1)]);
    }

    #[test]
    fn full_matrix_averages_over_everything() {
        let mut rs = Vec::new();
        for (c, base) in [("aes128-ctr", 400.0), ("aes256-ctr", 300.0)] {
            for (m, f) in [("hmac-sha2-256", 1.0), ("umac-64@openssh.com", 1.5)] {
                for k in ["k1", "k2"] {
                    rs.push(rec(TRANSFER_ID, c, m, k, vec![("throughput", base * f)]));
                }
            }
        }
        for k in ["k1", "k2"] {
            rs.push(rec(
                HANDSHAKE_ID,
                "aes128-ctr",
                "hmac-sha2-256",
                k,
                vec![("handshake", 100.0)],
            ));
        }
        let r = run(rs);
        let tr = transfers(&r);
        let c = per_cipher(&tr);
        assert_eq!(c[0], ("aes128-ctr".to_string(), 500.0, 4));
        // Several kex in the transfers: the kex table shows their mean too,
        // and without `auth` the kex are ranked by the whole handshake.
        let text = ssh_report(&r, TableFormat::Text, false);
        assert!(text.contains("transfer MB/s"), "{text}");
        assert!(
            text.contains("fastest first by the whole handshake"),
            "{text}"
        );
        // Averages over several contexts: ranked, and no single-context note.
        assert!(!text.contains("from a single"), "{text}");
        assert!(text.contains("1  aes128-ctr"), "{text}");
    }

    #[test]
    fn report_and_recommendation() {
        let r = factorial();
        let text = ssh_report(&r, TableFormat::Text, false);
        // The factorial matrix's "averages" are one combination each: said
        // under both tables, with the context named.
        assert!(
            text.contains(&format!(
                "Each cipher's figure comes from a single MAC/kex context (MAC {FM}, kex {KEX})"
            )),
            "{text}"
        );
        assert!(
            text.contains(
                "Each MAC's figure comes from a single cipher/kex context (cipher aes128-ctr"
            ),
            "{text}"
        );
        assert!(text.contains("Fastest combinations (top 7 of 7"), "{text}");
        assert!(text.contains("By cipher"), "{text}");
        assert!(text.contains("By MAC"), "{text}");
        assert!(text.contains("By key exchange"), "{text}");
        assert!(text.contains(
            "Ciphers aes128-gcm@openssh.com,aes128-cbc,aes128-ctr,chacha20-poly1305@openssh.com,3des-cbc"
        ), "{text}");
        assert!(
            text.contains("MACs hmac-md5,umac-128-etm@openssh.com,hmac-sha2-512"),
            "{text}"
        );
        assert!(text.contains("KexAlgorithms diffie-hellman-group14-sha1,curve25519-sha256,diffie-hellman-group18-sha512"), "{text}");
        assert!(text.contains("considered weak: aes128-cbc"), "{text}");

        let secure = ssh_report(&r, TableFormat::Text, true);
        assert!(
            secure.contains(
                "Ciphers aes128-gcm@openssh.com,aes128-ctr,chacha20-poly1305@openssh.com\n"
            ),
            "{secure}"
        );
        assert!(
            secure.contains("MACs umac-128-etm@openssh.com,hmac-sha2-512\n"),
            "{secure}"
        );
        assert!(
            secure.contains("KexAlgorithms curve25519-sha256,diffie-hellman-group18-sha512\n"),
            "{secure}"
        );
        assert!(
            secure.contains("cipher: the fastest, aes128-gcm@openssh.com"),
            "{secure}"
        );
        assert!(secure.contains("MAC: umac-128-etm@openssh.com at 400.0 MB/s instead of hmac-md5 at 420.0 MB/s (-4.8 %)"), "{secure}");
        assert!(secure.contains("key exchange: curve25519-sha256 at 20.00 ms instead of diffie-hellman-group14-sha1 at 15.00 ms (+33.3 %)"), "{secure}");
        assert!(!secure.contains("Use --only-secure"), "{secure}");
    }

    #[test]
    fn nothing_measured_and_failures() {
        let mut r = factorial();
        for x in r.results.iter_mut() {
            x.status = Status::Skipped {
                reason: "the server does not accept this cipher".into(),
                hint: Some("the server offers: aes256-ctr".into()),
            };
        }
        let text = ssh_report(&r, TableFormat::Text, true);
        assert!(text.contains("Not measured"), "{text}");
        assert!(text.contains("the server offers: aes256-ctr"), "{text}");
        assert!(text.contains("no recommendation"), "{text}");
    }

    /// The cipher sweep first, as a run measures it: the first non-AEAD
    /// transfer is 3des-cbc with the fixed MAC, while every MAC was timed
    /// with aes128-ctr. The notes name the context the results share.
    #[test]
    fn single_context_notes_name_the_shared_context() {
        let t = |c, m, v| rec(TRANSFER_ID, c, m, KEX, vec![("throughput", v)]);
        let r = run(vec![
            t("chacha20-poly1305@openssh.com", IMPLICIT_MAC, 300.0),
            t("3des-cbc", FM, 10.0),
            t("aes128-ctr", FM, 400.0),
            t("aes128-ctr", "hmac-md5", 420.0),
            t("aes128-ctr", "hmac-sha2-512", 200.0),
        ]);
        let text = ssh_report(&r, TableFormat::Text, false);
        assert!(
            text.contains(&format!(
                "Each MAC's figure comes from a single cipher/kex context (cipher aes128-ctr, kex {KEX})"
            )),
            "{text}"
        );
        assert!(!text.contains("cipher 3des-cbc"), "{text}");
        assert!(
            text.contains(&format!(
                "Each cipher's figure comes from a single MAC/kex context (MAC {FM}, kex {KEX})"
            )),
            "{text}"
        );
        // The MAC sweep first: the first non-AEAD transfer pairs aes128-ctr
        // with hmac-md5, yet the ciphers shared the fixed MAC.
        let mut results = r.results.clone();
        results.rotate_left(3);
        let text = ssh_report(&run(results), TableFormat::Text, false);
        assert!(
            text.contains(&format!("single MAC/kex context (MAC {FM}, kex {KEX})")),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "single cipher/kex context (cipher aes128-ctr, kex {KEX})"
            )),
            "{text}"
        );
    }
}
