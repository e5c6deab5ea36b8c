//! Planning the ssh matrix from what the server accepts: the user's
//! choices (filters and fixed algorithms) checked against this client, the
//! names to probe, the fixed combination and the lists to measure, and one
//! untimed transfer that calibrates the time estimate. `sysgauge ssh` runs
//! this before the run; the family's benchmarks then measure the plan.

use super::algorithms::{
    is_aead, ClientAlgorithms, Combo, Fixed, Kind, Matrix, MatrixPlan, IMPLICIT_MAC,
};
use super::client::{Input, LogLevel, Request, Restrict, SshError, REMOTE_DISCARD};
use super::session::{Discovery, Session};
use std::time::Instant;
use sysgauge_core::CancelToken;

/// What the user chose: per class (cipher, MAC, kex) the names to measure
/// (empty: all this client has) and the fixed algorithm (`None`: the
/// default candidates), and the matrix shape.
#[derive(Debug, Clone)]
pub struct Choices {
    pub filters: [(Kind, Vec<String>); 3],
    pub fixed: [Option<String>; 3],
    pub matrix: Matrix,
}

pub fn fixed_option(kind: Kind) -> &'static str {
    match kind {
        Kind::Cipher => "--fixed-cipher",
        Kind::Mac => "--fixed-mac",
        Kind::Kex => "--fixed-kex",
    }
}

/// Names must be known to this client; the fixed cipher must use a MAC.
pub fn check_names(p: &Choices, client: &ClientAlgorithms) -> Result<(), String> {
    for (kind, names) in &p.filters {
        client.check_names(*kind, names, kind.option())?;
    }
    for (kind, name) in Kind::ALL.iter().zip(&p.fixed) {
        if let Some(n) = name {
            client.check_names(*kind, std::slice::from_ref(n), fixed_option(*kind))?;
        }
    }
    if let Some(c) = &p.fixed[0] {
        if is_aead(c) {
            return Err(format!("--fixed-cipher {c} authenticates itself (AEAD) and uses no MAC, so MACs cannot be compared with it; choose one that uses a MAC, e.g. aes128-ctr"));
        }
    }
    Ok(())
}

/// The default fixed candidates of a class that this client supports.
pub fn fixed_candidates(kind: Kind, client: &ClientAlgorithms) -> Vec<String> {
    let prefs: &[&str] = match kind {
        Kind::Cipher => &["aes128-ctr", "aes256-ctr", "aes192-ctr"],
        Kind::Mac => &[
            "umac-128-etm@openssh.com",
            "hmac-sha2-256-etm@openssh.com",
            "umac-128@openssh.com",
            "hmac-sha2-256",
        ],
        Kind::Kex => &[
            "curve25519-sha256",
            "curve25519-sha256@libssh.org",
            "ecdh-sha2-nistp256",
            "diffie-hellman-group14-sha256",
        ],
    };
    prefs
        .iter()
        .filter(|n| client.supports(kind, n))
        .map(|n| n.to_string())
        .collect()
}

/// What each class probes: the filter (or everything the client has), plus
/// the fixed choice or its default candidates. With a filter and no fixed
/// choice, the fixed algorithm is one of the filter's names (`plan`), so
/// nothing else is probed.
pub fn probe_names(p: &Choices, client: &ClientAlgorithms) -> Vec<(Kind, Vec<String>)> {
    p.filters
        .iter()
        .zip(&p.fixed)
        .map(|((kind, filter), fixed)| {
            let mut names: Vec<String> = if filter.is_empty() {
                client.list(*kind).to_vec()
            } else {
                filter.clone()
            };
            let extra = match fixed {
                Some(f) => vec![f.clone()],
                None if filter.is_empty() => fixed_candidates(*kind, client),
                None => Vec::new(),
            };
            for e in extra {
                if !names.contains(&e) {
                    names.push(e);
                }
            }
            (*kind, names)
        })
        .collect()
}

pub fn plural(kind: Kind) -> &'static str {
    match kind {
        Kind::Cipher => "ciphers",
        Kind::Mac => "MACs",
        Kind::Kex => "key exchanges",
    }
}

/// Choose the fixed algorithms and the lists to measure from discovery.
pub fn plan(
    p: &Choices,
    client: &ClientAlgorithms,
    d: &Discovery,
    label: &str,
) -> Result<(MatrixPlan, Fixed, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut measured: Vec<Vec<String>> = Vec::new();
    for (kind, filter) in &p.filters {
        let accepted = d.accepted(*kind);
        let wanted: Vec<String> = if filter.is_empty() {
            client.list(*kind).to_vec()
        } else {
            filter.clone()
        };
        let list: Vec<String> = wanted
            .iter()
            .filter(|n| accepted.contains(n))
            .cloned()
            .collect();
        if list.is_empty() {
            let offer = d
                .server_offer(*kind)
                .map(|o| format!("; it offers: {o}"))
                .unwrap_or_default();
            let which = if filter.is_empty() {
                "this ssh client offers".to_string()
            } else {
                format!("given with {} ({})", kind.option(), filter.join(", "))
            };
            return Err(format!(
                "the server at {label} accepts none of the {} {which}{offer}",
                plural(*kind)
            ));
        }
        measured.push(list);
    }
    let (ciphers, macs, kex) = (&measured[0], &measured[1], &measured[2]);
    let accepted_ciphers = d.accepted(Kind::Cipher);
    let accepted_macs = d.accepted(Kind::Mac);
    let accepted_kex = d.accepted(Kind::Kex);
    // User-chosen fixed algorithms must be accepted.
    for ((kind, fixed), accepted) in
        Kind::ALL
            .iter()
            .zip(&p.fixed)
            .zip([&accepted_ciphers, &accepted_macs, &accepted_kex])
    {
        if let Some(f) = fixed {
            if !accepted.contains(f) {
                return Err(format!(
                    "the server at {label} does not accept {} {f}; choose another (accepted: {})",
                    fixed_option(*kind),
                    accepted.join(", ")
                ));
            }
        }
    }
    // A fixed algorithm not given is the first default candidate the
    // server accepts, else the first acceptable name; with a filter
    // (`--mac X`) it comes from the filter's names, as the filter limits
    // what is measured.
    let pick_first = |kind: Kind, ok: &dyn Fn(&str) -> bool| -> Option<String> {
        let i = p.filters.iter().position(|(k, _)| *k == kind).unwrap_or(0);
        let pool: Vec<String> = if p.filters[i].1.is_empty() {
            d.accepted(kind)
        } else {
            measured[i].clone()
        };
        fixed_candidates(kind, client)
            .into_iter()
            .find(|x| pool.contains(x))
            .or_else(|| pool.iter().find(|a| ok(a)).cloned())
    };
    let mut macs = macs.clone();
    let cipher = match &p.fixed[0] {
        Some(c) => c.clone(),
        None => match pick_first(Kind::Cipher, &|c| !is_aead(c)) {
            Some(c) if !is_aead(&c) => c,
            _ => {
                let why = if p
                    .filters
                    .iter()
                    .all(|(k, f)| *k != Kind::Cipher || f.is_empty())
                {
                    "the server accepts no cipher that uses a MAC"
                } else {
                    "no cipher given with --cipher uses a MAC (add one such as aes128-ctr, or give --fixed-cipher)"
                };
                notes.push(format!("{why}: MACs are not measured"));
                macs.clear();
                ciphers
                    .first()
                    .cloned()
                    .ok_or("the server accepts no cipher")?
            }
        },
    };
    let mac = match &p.fixed[1] {
        Some(m) => m.clone(),
        None => pick_first(Kind::Mac, &|_| true).unwrap_or_else(|| IMPLICIT_MAC.to_string()),
    };
    let kx = match &p.fixed[2] {
        Some(k) => k.clone(),
        None => pick_first(Kind::Kex, &|_| true).ok_or("the server accepts no key exchange")?,
    };
    let fixed = Fixed {
        cipher,
        mac,
        kex: kx,
    };
    let plan = MatrixPlan::new(p.matrix, ciphers, &macs, kex, &fixed);
    Ok((plan, fixed, notes))
}

/// One untimed transfer with the fixed combination, for the time estimate.
pub fn calibrate(
    session: &Session,
    fixed: &Fixed,
    size: u64,
    cancel: &CancelToken,
) -> Result<f64, SshError> {
    let bytes = size.min(20_000_000);
    let combo = Combo::new(&fixed.cipher, &fixed.mac, &fixed.kex);
    let restrict = Restrict {
        cipher: Some(combo.cipher.clone()),
        mac: (combo.mac != IMPLICIT_MAC).then(|| combo.mac.clone()),
        kex: Some(combo.kex.clone()),
    };
    let zeros = vec![0u8; 1 << 20];
    let start = Instant::now();
    let o = session.command().run(
        &Request {
            restrict: &restrict,
            log_level: LogLevel::Info,
            remote_command: REMOTE_DISCARD,
            input: Input::Zeros(bytes),
            connect_deadline: session.settings.connect_deadline(),
            stall_timeout: session.settings.stall_timeout(),
        },
        &zeros,
        &|| start.elapsed(),
        cancel,
    )?;
    let secs = o
        .ended
        .saturating_sub(o.data_start.unwrap_or(o.spawned))
        .as_secs_f64()
        .max(1e-6);
    Ok(bytes as f64 / secs)
}
