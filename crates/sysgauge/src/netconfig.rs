//! Validated configuration of the network commands (`ping`, `listen`,
//! `net`): sizes, times, addresses, host names and the HMAC key are checked
//! and resolved here, before any socket is used, so that bad input fails
//! with one line naming the option (exit 2) and never as a failed
//! measurement.

use crate::cli::TwopingArgs;
use crate::commands::{listen::ListenArgs, net::NetArgs, ping::PingArgs};
use crate::values::{NiceCount, NiceSize};
use anyhow::{bail, Context, Result};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use sysgauge_net::net::http::{split_url, ConnectTarget, HttpTarget};
use sysgauge_net::net::icmp::{self, IcmpTarget};
use sysgauge_net::net::{udp, NetOptions, Peer, ServiceConfig, ServiceKey, DEFAULT_SERVICE_PORT};
use sysgauge_twoping::auth::{Auth, Digest};
use sysgauge_twoping::client::{ClientConfig, Target};
use sysgauge_twoping::listener::{ListenerConfig, ListenerLimits, RateLimit};
use sysgauge_twoping::net::{resolve, resolve_all, AddressFamily};
use sysgauge_twoping::PeerOptions;

/// Largest UDP payload; also the bound of the 2ping packet sizes.
const MAX_DATAGRAM: usize = 65_507;
/// The 2ping header: nothing smaller is a packet.
const MIN_2PING_PACKET: usize = 12;
/// The client needs room for a ping with an investigation list.
const MIN_CLIENT_MAX_PACKET: usize = 64;
/// Longest time option accepted (a year): beyond that it is a typo.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// The options both `ping` and `listen` take.
#[derive(Debug, Clone)]
pub struct TwopingCommon {
    pub family: AddressFamily,
    pub port: u16,
    /// What both send and ask of their peers (the reference's defaults
    /// where no option says otherwise).
    pub peer: PeerOptions,
    pub quiet: bool,
}

/// The shortest `--interval` of 2ping.
const MIN_INTERVAL: Duration = Duration::from_micros(1);

/// A time option in seconds: finite, not negative (zero only if allowed).
pub fn seconds(v: f64, option: &str, allow_zero: bool) -> Result<Duration> {
    if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) || v > MAX_SECONDS {
        let least = if allow_zero { "0" } else { "more than 0" };
        bail!("{option} {v} is not a valid time: give seconds, {least} and at most a year");
    }
    Ok(Duration::from_secs_f64(v))
}

fn packet_size(NiceSize(n): NiceSize, option: &str) -> Result<usize> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if !(MIN_2PING_PACKET..=MAX_DATAGRAM).contains(&n) {
        bail!("{option} {n} must be within {MIN_2PING_PACKET}..={MAX_DATAGRAM} bytes");
    }
    Ok(n)
}

pub fn twoping_common(a: &TwopingArgs) -> Result<TwopingCommon> {
    let family = match (a.ipv4, a.ipv6) {
        (true, _) => AddressFamily::V4,
        (_, true) => AddressFamily::V6,
        _ => AddressFamily::Any,
    };
    let min_packet_size = packet_size(a.min_packet_size, "--min-packet-size")?;
    let max_packet_size = packet_size(a.max_packet_size, "--max-packet-size")?;
    if min_packet_size > max_packet_size {
        bail!("--min-packet-size {min_packet_size} is above --max-packet-size {max_packet_size}");
    }
    let digest: Digest = a.auth_digest;
    let auth = match &a.auth {
        Some(k) if k.is_empty() => bail!("--auth KEY is empty; give the key the peer uses"),
        Some(k) => Some(Auth::new(digest, k.as_bytes())),
        None => None,
    };
    let notice = match &a.notice {
        None => None,
        Some(n) if n.is_empty() => {
            bail!("--notice TEXT is empty; give a text or leave the option out")
        }
        Some(n) if n.len() > sysgauge_twoping::MAX_PEER_TEXT => bail!(
            "--notice is {} bytes long; at most {} fit in a packet",
            n.len(),
            sysgauge_twoping::MAX_PEER_TEXT
        ),
        Some(n) if n.chars().any(char::is_control) => {
            bail!("--notice must not contain control characters (newlines, escapes)")
        }
        Some(n) => Some(n.clone()),
    };
    Ok(TwopingCommon {
        family,
        port: a.port,
        peer: PeerOptions {
            min_packet_size,
            max_packet_size,
            inquire_wait: seconds(a.inquire_wait, "--inquire-wait", false)?,
            auth,
            notice,
            ..PeerOptions::default()
        },
        quiet: a.quiet,
    })
}

/// Resolves a host to ping: a literal as it is; a name to its IPv6
/// address when it has one (unless -4), else IPv4.
pub fn resolve_host(host: &str, port: u16, family: AddressFamily) -> Result<SocketAddr> {
    if host.trim().is_empty() {
        bail!("an empty host name was given");
    }
    match family {
        AddressFamily::Any => match resolve(host, port, AddressFamily::V6) {
            Ok(a) => Ok(a),
            Err(_) => resolve(host, port, AddressFamily::V4).map_err(anyhow::Error::from),
        },
        f => resolve(host, port, f).map_err(anyhow::Error::from),
    }
}

/// `sysgauge ping`, validated.
#[derive(Debug)]
pub struct PingConfig {
    pub client: ClientConfig,
    pub targets: Vec<Target>,
    pub quiet: bool,
}

pub fn ping_config(a: &PingArgs) -> Result<PingConfig> {
    let common = twoping_common(&a.twoping)?;
    if common.peer.max_packet_size < MIN_CLIENT_MAX_PACKET {
        bail!(
            "--max-packet-size {} is too small for pinging: at least {MIN_CLIENT_MAX_PACKET} bytes",
            common.peer.max_packet_size
        );
    }
    if common.port == 0 {
        bail!("--port 0 names no listener: give the port the 2ping listener is on (default 15998)");
    }
    if a.count == Some(0) {
        bail!("--count must be at least 1");
    }
    if a.preload == 0 || a.preload > sysgauge_twoping::client::MAX_PRELOAD {
        bail!(
            "--preload {} must be within 1..={}",
            a.preload,
            sysgauge_twoping::client::MAX_PRELOAD
        );
    }
    let interval = seconds(a.interval, "--interval", false)?;
    // Below a microsecond the timer cannot tell intervals apart (and below
    // a nanosecond the interval is zero): flood mode is the way to go faster.
    if interval < MIN_INTERVAL {
        bail!(
            "--interval {} is below the smallest interval allowed, {} s (1 µs); give at least that, or -f for flood mode",
            a.interval,
            MIN_INTERVAL.as_secs_f64()
        );
    }
    let deadline = a
        .deadline
        .map(|d| seconds(d, "--deadline", false))
        .transpose()?;
    let linger = seconds(a.linger, "--linger", true)?;
    if linger > Duration::from_secs(600) {
        bail!("--linger {} is more than 600 seconds", a.linger);
    }
    let source = a
        .source
        .as_deref()
        .map(|s| {
            let bare = s.split('%').next().unwrap_or(s).trim_matches(['[', ']']);
            bare.parse::<IpAddr>()
                .map_err(|_| anyhow::anyhow!("-I {s:?} is not an IP address of this machine"))
        })
        .transpose()?;
    let mut hosts: Vec<&str> = Vec::new();
    let mut targets = Vec::new();
    for h in &a.hosts {
        if hosts.contains(&h.as_str()) {
            bail!("host {h} is given twice");
        }
        hosts.push(h);
        let addr = resolve_host(h, common.port, common.family)?;
        if let Some(src) = source {
            if src.is_ipv4() != addr.is_ipv4() {
                bail!(
                    "-I {src} and host {h} ({}) are of different address families{}",
                    addr.ip(),
                    if matches!(common.family, AddressFamily::Any) {
                        "; add -4 or -6"
                    } else {
                        ""
                    }
                );
            }
        }
        targets.push(Target::new(h.as_str(), addr));
    }
    let client = ClientConfig {
        count: a.count,
        interval,
        flood: a.flood,
        preload: a.preload,
        adaptive: a.adaptive,
        deadline,
        source,
        peer: common.peer,
        linger,
        ..ClientConfig::default()
    };
    Ok(PingConfig {
        client,
        targets,
        quiet: common.quiet,
    })
}

/// `sysgauge listen`, validated.
#[derive(Debug)]
pub struct ListenConfig {
    pub listener: ListenerConfig,
    pub quiet: bool,
    pub serve: Option<ServiceConfig>,
    pub deadline: Option<Duration>,
}

pub fn listen_config(a: &ListenArgs) -> Result<ListenConfig> {
    let common = twoping_common(&a.twoping)?;
    let mut addresses = Vec::new();
    for s in &a.addresses {
        for addr in resolve_all(s, common.port, common.family)
            .with_context(|| format!("-I {s}: not an address to listen on"))?
        {
            if !addresses.contains(&addr) {
                addresses.push(addr);
            }
        }
    }
    if addresses.is_empty() {
        // Without -I: every address, of the families allowed.
        match common.family {
            AddressFamily::Any => {}
            AddressFamily::V4 => addresses.push(SocketAddr::from(([0, 0, 0, 0], common.port))),
            AddressFamily::V6 => addresses.push(SocketAddr::from(([0u16; 8], common.port))),
        }
    }
    let rate_limit = match a.rate_limit {
        0 => None,
        pps => Some(RateLimit {
            packets_per_second: f64::from(pps),
            burst: f64::from(pps),
            exempt_loopback: true,
        }),
    };
    let listener = ListenerConfig {
        addresses,
        port: common.port,
        peer: common.peer,
        limits: ListenerLimits {
            rate_limit,
            ..ListenerLimits::default()
        },
        ..ListenerConfig::default()
    };
    let serve = if a.serve {
        let mut addresses = Vec::new();
        let binds = if a.serve_bind.is_empty() {
            vec!["127.0.0.1".to_string()]
        } else {
            a.serve_bind.clone()
        };
        for b in &binds {
            let addr = resolve(b, a.serve_port, AddressFamily::Any)
                .with_context(|| format!("--serve-bind {b}: not an address to serve on"))?;
            if !addresses.contains(&addr) {
                addresses.push(addr);
            }
        }
        let key = service_key(a.serve_key.as_deref(), "--serve-key")?;
        if key.is_none() {
            if let Some(addr) = addresses.iter().find(|a| !a.ip().is_loopback()) {
                bail!(
                    "--serve-bind {}: the net service on an address other than loopback needs a shared key, or anybody could use it as a traffic reflector; set SYSGAUGE_NET_KEY (or --serve-key KEY) here and give the same key to `sysgauge net --peer`",
                    addr.ip()
                );
            }
        }
        if a.serve_max_per_source == 0 {
            bail!("--serve-max-per-source must be at least 1");
        }
        if a.serve_port == common.port {
            bail!(
                "--serve-port {} is the 2ping port; give the net service its own (default {DEFAULT_SERVICE_PORT})",
                a.serve_port
            );
        }
        let defaults = ServiceConfig::default();
        let udp_rate = match a.serve_udp_rate {
            0 => None,
            pps => Some(RateLimit {
                packets_per_second: f64::from(pps),
                burst: f64::from(pps),
                exempt_loopback: true,
            }),
        };
        Some(ServiceConfig {
            addresses,
            key,
            udp_rate,
            max_per_source: a.serve_max_per_source,
            ..defaults
        })
    } else {
        None
    };
    Ok(ListenConfig {
        listener,
        quiet: common.quiet,
        serve,
        deadline: a
            .deadline
            .map(|d| seconds(d, "--deadline", false))
            .transpose()?,
    })
}

/// The net service key from an option (or its environment variable); an
/// empty one is refused, so that a variable set to "" does not quietly mean
/// "no key".
fn service_key(text: Option<&str>, option: &str) -> Result<Option<ServiceKey>> {
    match text {
        None => Ok(None),
        Some(t) => ServiceKey::new(t.as_bytes()).map(Some).ok_or_else(|| {
            anyhow::anyhow!(
                "{option} (or SYSGAUGE_NET_KEY) is empty; give the shared key, or unset it"
            )
        }),
    }
}

/// Splits `HOST`, `HOST:PORT`, `[V6]:PORT` or a bare IPv6 literal.
pub fn split_host_port(s: &str) -> Result<(String, Option<u16>)> {
    let s = s.trim();
    let bad_port = |p: &str| anyhow::anyhow!("--peer {s}: {p:?} is not a port number");
    if let Some(rest) = s.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            bail!("--peer {s}: missing ']' after the IPv6 address");
        };
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| bad_port(p))?,
            ),
        };
        return Ok((host.to_string(), port));
    }
    match s.matches(':').count() {
        0 => Ok((s.to_string(), None)),
        1 => {
            let (h, p) = s.split_once(':').unwrap_or((s, ""));
            Ok((h.to_string(), Some(p.parse().map_err(|_| bad_port(p))?)))
        }
        // Several colons: an IPv6 literal without a port.
        _ => Ok((s.to_string(), None)),
    }
}

/// `sysgauge net`, validated: the family's options.
pub fn net_options(a: &NetArgs) -> Result<NetOptions> {
    let peer = match &a.peer {
        None => None,
        Some(p) => {
            let (host, port) = split_host_port(p)?;
            if host.is_empty() {
                bail!("--peer {p}: no host");
            }
            let port = port.unwrap_or(DEFAULT_SERVICE_PORT);
            if port == 0 {
                bail!("--peer {p}: port 0 is not a port");
            }
            let addr =
                resolve(&host, port, AddressFamily::Any).with_context(|| format!("--peer {p}"))?;
            Some(Peer {
                name: p.clone(),
                addr,
            })
        }
    };
    if let Some(s) = a.streams {
        if !(1..=1024).contains(&s) {
            bail!("--streams {s} must be within 1..=1024");
        }
    }
    let udp_size = a
        .udp_size
        .map(|NiceSize(n)| {
            udp::check_size(usize::try_from(n).unwrap_or(usize::MAX))
                .map_err(|e| anyhow::anyhow!("--udp-size: {e}"))
        })
        .transpose()?;
    Ok(NetOptions {
        peer,
        streams: a.streams,
        udp_size,
        ping: None,
        key: service_key(a.peer_key.as_deref(), "--peer-key")?,
        icmp: icmp_targets(&a.icmp)?,
        icmp_size: a
            .icmp_size
            .map(|NiceSize(n)| {
                icmp::check_payload(usize::try_from(n).unwrap_or(usize::MAX))
                    .map_err(|e| anyhow::anyhow!("--icmp-size: {e}"))
            })
            .transpose()?,
        senders: senders(&a.senders, !a.icmp.is_empty())?,
        flood_window: flood_window(a.flood_at.as_deref(), a.flood_for)?,
        connect: connect_targets(&a.connect)?,
        http: http_targets(&a.http)?,
    })
}

/// The longest `--flood-at` may lie ahead: a typo must not leave a run
/// waiting for days.
const MAX_START_DELAY: chrono::Duration = chrono::Duration::hours(24);

/// `--flood-at`: RFC 3339 or seconds since the epoch, at most a day ahead.
fn parse_moment(text: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    let t = text.trim();
    let at = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => {
            chrono::DateTime::from_timestamp_millis((secs * 1e3) as i64)
        }
        Ok(_) => None,
        Err(_) => chrono::DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|d| d.with_timezone(&chrono::Utc)),
    };
    let Some(at) = at else {
        bail!("--flood-at '{text}': give an RFC 3339 time (2026-11-27T08:00:00Z) or seconds since the Unix epoch");
    };
    if at - chrono::Utc::now() > MAX_START_DELAY {
        bail!("--flood-at '{text}' is more than 24 hours ahead");
    }
    Ok(at)
}

/// `--flood-at TIME --flood-for SECONDS`: the fixed flood window.
fn flood_window(at: Option<&str>, seconds: Option<f64>) -> Result<Option<icmp::FloodWindow>> {
    let (Some(at), Some(seconds)) = (at, seconds) else {
        return Ok(None);
    };
    if !(seconds.is_finite() && (0.5..=600.0).contains(&seconds)) {
        bail!("--flood-for {seconds} must be between 0.5 and 600 seconds");
    }
    let start = parse_moment(at)?;
    let end = start + chrono::Duration::milliseconds((seconds * 1e3) as i64);
    if end <= chrono::Utc::now() {
        bail!(
            "--flood-at '{at}': the window ended at {}, before now; give a time ahead",
            end.format("%Y-%m-%dT%H:%M:%SZ")
        );
    }
    let start = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(u64::try_from(start.timestamp_millis()).unwrap_or(0));
    Ok(Some(icmp::FloodWindow::new(
        start,
        std::time::Duration::from_secs_f64(seconds),
    )))
}

/// `--icmp HOST…`: each resolved once, here, so a typo fails before any
/// measurement.
fn icmp_targets(hosts: &[String]) -> Result<Vec<IcmpTarget>> {
    let mut out: Vec<IcmpTarget> = Vec::new();
    for h in hosts {
        if out.iter().any(|t| &t.name == h) {
            bail!("--icmp {h} is given twice");
        }
        if h.trim().is_empty() {
            bail!("--icmp: an empty host name was given");
        }
        let addr = resolve(h, 0, AddressFamily::Any)
            .with_context(|| format!("--icmp {h}: not a host to ping"))?;
        out.push(IcmpTarget {
            name: h.clone(),
            addr,
        });
    }
    Ok(out)
}

/// `--senders 1,2,4`: each within 1..=256, rising, only with `--icmp`.
fn senders(list: &[NiceCount], with_icmp: bool) -> Result<Option<Vec<usize>>> {
    if list.is_empty() {
        return Ok(None);
    }
    if !with_icmp {
        bail!("--senders sets the ICMP flood's senders: give --icmp HOST too");
    }
    let mut out: Vec<usize> = Vec::new();
    for &NiceCount(n) in list {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if !(1..=256).contains(&n) {
            bail!("--senders {n} must be within 1..=256");
        }
        if out.last().is_some_and(|&l| l >= n) {
            bail!("--senders must rise from one count to the next (the flood adds senders until the rate stops rising)");
        }
        out.push(n);
    }
    Ok(Some(out))
}

/// `--connect HOST:PORT…`: the port is required (there is no default port
/// of "any service").
fn connect_targets(list: &[String]) -> Result<Vec<ConnectTarget>> {
    let mut out: Vec<ConnectTarget> = Vec::new();
    for c in list {
        if out.iter().any(|t| &t.name == c) {
            bail!("--connect {c} is given twice");
        }
        let (host, port) = split_host_port(c)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("--peer", "--connect")))?;
        let Some(port) = port.filter(|&p| p != 0) else {
            bail!("--connect {c}: give HOST:PORT (or [V6]:PORT), the port of a service that listens there");
        };
        if host.is_empty() {
            bail!("--connect {c}: no host");
        }
        let addr =
            resolve(&host, port, AddressFamily::Any).with_context(|| format!("--connect {c}"))?;
        out.push(ConnectTarget {
            name: c.clone(),
            addr,
        });
    }
    Ok(out)
}

/// `--http URL…`: plain http only, resolved here.
fn http_targets(list: &[String]) -> Result<Vec<HttpTarget>> {
    let mut out: Vec<HttpTarget> = Vec::new();
    for u in list {
        if out.iter().any(|t| &t.url == u) {
            bail!("--http {u} is given twice");
        }
        let (host, port, path) = split_url(u).map_err(|e| anyhow::anyhow!("--http {e}"))?;
        let addr =
            resolve(&host, port, AddressFamily::Any).with_context(|| format!("--http {u}"))?;
        let authority = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        out.push(HttpTarget {
            url: u.clone(),
            host: if port == 80 {
                authority
            } else {
                format!("{authority}:{port}")
            },
            path,
            addr,
        });
    }
    Ok(out)
}

/// The ping command's `--json` must name stdout or a `.json` file, so a
/// host name given right after `--json` is never taken for a file name.
pub fn check_ping_json(json: Option<&std::path::Path>) -> Result<()> {
    if let Some(p) = json {
        let ok = p.as_os_str() == "-" || p.extension().is_some_and(|e| e == "json");
        if !ok {
            bail!(
                "--json {} : for ping, --json takes - (the run record on stdout) or a FILE ending in .json, so that a host is never taken for a file name",
                p.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flood_windows() {
        let now = chrono::Utc::now();
        let epoch = format!("{}.5", now.timestamp());
        let w = flood_window(Some(&epoch), Some(5.0))
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("no window"));
        assert_eq!(w.length, std::time::Duration::from_secs(5));
        let rfc = now.to_rfc3339();
        assert!(flood_window(Some(&rfc), Some(1.0)).is_ok_and(|w| w.is_some()));
        assert!(flood_window(None, Some(1.0)).is_ok_and(|w| w.is_none()));
        for (at, secs) in [
            ("tomorrow", 1.0),
            ("-5", 1.0),
            (epoch.as_str(), 0.1),
            (epoch.as_str(), f64::NAN),
            ("4102444800", 1.0), // 2100: more than a day ahead
        ] {
            assert!(flood_window(Some(at), Some(secs)).is_err(), "{at} {secs}");
        }
    }

    #[test]
    fn host_port_forms() {
        let ok = |s: &str| split_host_port(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(ok("box"), ("box".into(), None));
        assert_eq!(ok("box:9"), ("box".into(), Some(9)));
        assert_eq!(ok("[::1]:9"), ("::1".into(), Some(9)));
        assert_eq!(ok("[::1]"), ("::1".into(), None));
        assert_eq!(ok("fe80::1%eth0"), ("fe80::1%eth0".into(), None));
        assert!(split_host_port("box:x").is_err());
        assert!(split_host_port("[::1").is_err());
        assert!(split_host_port("[::1]x").is_err());
    }

    #[test]
    fn times_and_sizes() {
        assert!(seconds(0.0, "-i", false).is_err());
        assert!(seconds(0.0, "--linger", true).is_ok());
        assert!(seconds(-1.0, "-i", true).is_err());
        assert!(seconds(f64::NAN, "-i", true).is_err());
        assert!(seconds(1e12, "-i", true).is_err());
        assert_eq!(packet_size(NiceSize(1024), "--x").unwrap_or(0), 1024);
        assert!(packet_size(NiceSize(11), "--x").is_err());
        assert!(packet_size(NiceSize(65508), "--x").is_err());
    }

    #[test]
    fn resolves_preferring_v6() {
        let a = resolve_host("::1", 1, AddressFamily::Any).unwrap();
        assert!(a.is_ipv6());
        let a = resolve_host("127.0.0.1", 1, AddressFamily::Any).unwrap();
        assert!(a.is_ipv4());
        assert!(resolve_host("127.0.0.1", 1, AddressFamily::V6).is_err());
        assert!(resolve_host("", 1, AddressFamily::Any).is_err());
    }

    #[test]
    fn ping_json_rule() {
        use std::path::Path;
        assert!(check_ping_json(None).is_ok());
        assert!(check_ping_json(Some(Path::new("-"))).is_ok());
        assert!(check_ping_json(Some(Path::new("out/run.json"))).is_ok());
        assert!(check_ping_json(Some(Path::new("127.0.0.1"))).is_err());
        assert!(check_ping_json(Some(Path::new("example.org"))).is_err());
    }
}
