//! `net.http-download` and `net.tcp-connect-rtt`: the network to hosts that
//! run no sysgauge, over TCP. Download throughput from an `http://` URL
//! into nothing, with one and N parallel streams (as the write-up ran
//! several wgets at once), and the time a TCP connection takes to set up
//! to any open port (SYN to SYN-ACK: one round trip and the far end's
//! accept path).
//!
//! The HTTP client is ours, a minimal HTTP/1.1 GET: no TLS, no redirects,
//! no compression (`Accept-Encoding: identity`, so the bytes counted are
//! the bytes that crossed the network), `Content-Length` or chunked
//! bodies. A small crate would do the same (ureq without its TLS
//! features), but we need nothing of it beyond these hundred lines, and
//! owning them lets the timed loop read every body into one reused buffer
//! with no allocation and check that each download delivered exactly the
//! bytes announced.

use super::tcp::throughput_metrics;
use super::{count_param, lock_worker, named, NetOptions, RoundTrips};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use sysgauge_core::{BenchError, Better, Metric, Params, Plan, RunCtx, Unit};
use sysgauge_family::util::measure_rate_on_threads;

/// Longest wait for a connection to be set up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Longest wait for any single read or write.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response header accepted.
const MAX_HEADER: usize = 64 << 10;
/// Read buffer of each stream.
const READ_BUFFER: usize = 256 << 10;
/// Most connections per repetition of the connect case (each leaves a
/// TIME_WAIT entry on this side).
const MAX_CONNECTS: usize = 200;

/// A URL to download from, checked and resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// As given (the `url` param).
    pub url: String,
    /// The Host header: the authority as given.
    pub host: String,
    /// The path and query.
    pub path: String,
    /// Where to connect.
    pub addr: SocketAddr,
}

/// `http://host[:port]/path` split into (host, port, path). Anything but
/// plain http is refused with a reason.
pub fn split_url(url: &str) -> Result<(String, u16, String), String> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{url:?} contains spaces or control characters; percent-encode them"
        ));
    }
    let Some(rest) = url.strip_prefix("http://").or_else(|| {
        url.get(..7)
            .filter(|p| p.eq_ignore_ascii_case("http://"))
            .map(|_| &url[7..])
    }) else {
        if url.to_ascii_lowercase().starts_with("https://") {
            return Err(format!(
                "{url}: only plain http:// is supported (the download measures the network, not TLS); serve the file over http"
            ));
        }
        return Err(format!("{url} is not an http:// URL"));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    if authority.contains('@') {
        return Err(format!(
            "{url}: user names and passwords in URLs are not supported"
        ));
    }
    let bad_port = |p: &str| format!("{url}: {p:?} is not a port number");
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("{url}: missing ']' after the IPv6 address"))?;
        let port = match after {
            "" => 80,
            p => p
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| bad_port(p))?,
        };
        (h.to_string(), port)
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().map_err(|_| bad_port(p))?),
            None => (authority.to_string(), 80),
        }
    };
    if host.is_empty() {
        return Err(format!("{url}: no host"));
    }
    if port == 0 {
        return Err(format!("{url}: port 0 is not a port"));
    }
    Ok((host, port, path))
}

fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(s)
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// The status and framing of a response header, or why it is not one we
/// can use.
fn parse_header(head: &[u8], url: &str) -> Result<Framing, String> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap_or("");
    let mut parts = status.splitn(3, ' ');
    let (version, code) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !version.starts_with("HTTP/1.") {
        return Err(format!(
            "{url}: the server did not answer HTTP/1.x ({status:?})"
        ));
    }
    let mut framing = Framing::UntilClose;
    let mut location = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") && framing == Framing::UntilClose {
            framing = Framing::Length(
                value
                    .parse()
                    .map_err(|_| format!("{url}: bad Content-Length {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if value.to_ascii_lowercase().ends_with("chunked") {
                framing = Framing::Chunked;
            }
        } else if name.eq_ignore_ascii_case("location") {
            location = Some(value.to_string());
        }
    }
    match code {
        "200" => Ok(framing),
        c if c.starts_with('3') => Err(format!(
            "{url}: the server redirects ({status}) to {}; give that URL",
            location.unwrap_or_else(|| "an unnamed place".into())
        )),
        _ => Err(format!("{url}: the server answered {status:?}, not 200 OK")),
    }
}

/// Reads a chunked body from `stream`, starting with the bytes already in
/// `buf[..have]`; returns the payload bytes (chunk data only).
fn read_chunked(
    stream: &mut TcpStream,
    buf: &mut [u8],
    mut have: usize,
    url: &str,
) -> Result<u64, String> {
    let mut pos = 0usize;
    let mut total = 0u64;
    let bad = |m: &str| format!("{url}: broken chunked body: {m}");
    // Refills buf from the stream when pos reaches have.
    let mut fill = |buf: &mut [u8], pos: &mut usize, have: &mut usize| -> Result<(), String> {
        if *pos < *have {
            return Ok(());
        }
        let n = read_retry(stream, buf).map_err(|e| format!("{url}: reading the body: {e}"))?;
        if n == 0 {
            return Err(bad("the connection closed inside it"));
        }
        *pos = 0;
        *have = n;
        Ok(())
    };
    loop {
        // The size line: hex digits, optional extensions, CRLF.
        let mut size: u64 = 0;
        let mut digits = 0;
        let mut in_ext = false;
        loop {
            fill(buf, &mut pos, &mut have)?;
            let b = buf[pos];
            pos += 1;
            match b {
                b'\n' => break,
                b'\r' => {}
                b';' => in_ext = true,
                _ if in_ext => {}
                _ => {
                    let d = (b as char)
                        .to_digit(16)
                        .ok_or_else(|| bad("a chunk size is not hex"))?;
                    size = size
                        .checked_mul(16)
                        .and_then(|s| s.checked_add(u64::from(d)))
                        .ok_or_else(|| bad("a chunk size overflows"))?;
                    digits += 1;
                }
            }
        }
        if digits == 0 {
            return Err(bad("an empty chunk size"));
        }
        if size == 0 {
            // Trailers, up to the empty line; Connection: close ends it anyway.
            return Ok(total);
        }
        let mut left = size;
        while left > 0 {
            fill(buf, &mut pos, &mut have)?;
            let take = (have - pos).min(usize::try_from(left).unwrap_or(usize::MAX));
            pos += take;
            left -= take as u64;
            total += take as u64;
        }
        // The CRLF after the data.
        for _ in 0..2 {
            fill(buf, &mut pos, &mut have)?;
            pos += 1;
        }
    }
}

fn read_retry(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// One GET of `t`, its body read into `buf` and discarded; returns the
/// body's size, checked against what the header announced.
pub fn download(t: &HttpTarget, buf: &mut [u8]) -> Result<u64, String> {
    let url = t.url.as_str();
    let mut s =
        connect(t.addr).map_err(|e| format!("cannot connect to {url} ({}): {e}", t.addr))?;
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: sysgauge/{}\r\nAccept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
        t.path,
        t.host,
        env!("CARGO_PKG_VERSION")
    );
    s.write_all(request.as_bytes())
        .map_err(|e| format!("{url}: sending the request: {e}"))?;
    // The header, and whatever of the body came with it.
    let mut have = 0usize;
    let head_room = buf.len().min(MAX_HEADER);
    let end = loop {
        if have == head_room {
            return Err(format!(
                "{url}: the response header is larger than {MAX_HEADER} bytes"
            ));
        }
        let n = read_retry(&mut s, &mut buf[have..head_room])
            .map_err(|e| format!("{url}: reading the response: {e}"))?;
        if n == 0 {
            return Err(format!(
                "{url}: the server closed the connection without a response"
            ));
        }
        let from = have.saturating_sub(3);
        have += n;
        if let Some(i) = buf[from..have].windows(4).position(|w| w == b"\r\n\r\n") {
            break from + i + 4;
        }
    };
    let framing = parse_header(&buf[..end], url)?;
    buf.copy_within(end..have, 0);
    let already = have - end;
    let body = match framing {
        Framing::Chunked => read_chunked(&mut s, buf, already, url)?,
        Framing::Length(len) => {
            let mut got = already as u64;
            while got < len {
                let n =
                    read_retry(&mut s, buf).map_err(|e| format!("{url}: reading the body: {e}"))?;
                if n == 0 {
                    return Err(format!(
                        "{url}: the server closed the connection after {got} of {len} bytes"
                    ));
                }
                got += n as u64;
            }
            if got != len {
                return Err(format!(
                    "{url}: the server sent {got} bytes, {len} announced"
                ));
            }
            got
        }
        Framing::UntilClose => {
            let mut got = already as u64;
            loop {
                let n =
                    read_retry(&mut s, buf).map_err(|e| format!("{url}: reading the body: {e}"))?;
                if n == 0 {
                    break got;
                }
                got += n as u64;
            }
        }
    };
    Ok(body)
}

fn url_of<'a>(options: &'a NetOptions, params: &Params) -> Result<&'a HttpTarget, BenchError> {
    named(params, "url", &options.http, |t| &t.url, "URLs")
}

/// Stream counts of the download: 1 and `--streams N`, else the TCP
/// throughput's ladder for the profile (the same on every machine).
fn stream_counts(options: &NetOptions, plan: &Plan) -> Vec<usize> {
    match options.streams {
        Some(n) if n > 1 => vec![1, n],
        Some(_) => vec![1],
        None => super::tcp::stream_counts(plan.profile, None),
    }
}

options_benchmark! {
    /// `net.http-download`: one case with one stream, one with N.
    HttpDownloadBenchmark = "net.http-download",
    "HTTP download from any http:// URL into nothing, 1 and N parallel streams, each body's length checked",
    Unit::MBps,
    Better::Higher
}

impl HttpDownloadBenchmark {
    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.options.foreign_cases(|| {
            let counts = stream_counts(&self.options, plan);
            let mut out = Vec::new();
            for t in &self.options.http {
                for &s in &counts {
                    out.push(Params::new().with("url", t.url.as_str()).with("streams", s));
                }
            }
            out
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let t = url_of(&self.options, params)?;
        let streams = count_param(params, "streams", 1024)?;
        ctx.note_detail("address", t.addr.to_string());
        let buffers: Vec<std::sync::Mutex<Vec<u8>>> = (0..streams)
            .map(|_| std::sync::Mutex::new(vec![0u8; READ_BUFFER]))
            .collect();
        // Every download of the case must bring the same number of bytes.
        let size = std::sync::Mutex::new(None::<u64>);
        let samples = measure_rate_on_threads(ctx, streams, |i, n| {
            let mut buf = lock_worker(&buffers, i, "buffer", "stream")?;
            let mut bytes = 0u64;
            for _ in 0..n {
                let got = download(t, &mut buf).map_err(BenchError::failed)?;
                let mut first = size
                    .lock()
                    .map_err(|_| BenchError::failed("a stream panicked"))?;
                match *first {
                    None => *first = Some(got),
                    Some(s) if s != got => {
                        return Err(BenchError::failed(format!(
                            "{}: one download brought {s} bytes, another {got}: the file changed during the test",
                            t.url
                        )))
                    }
                    Some(_) => {}
                }
                bytes += got;
            }
            Ok(bytes as f64 / 1e6)
        })?;
        if let Ok(Some(s)) = size.lock().map(|s| *s) {
            ctx.note_detail("bytes_per_download", s);
            if s == 0 {
                return Err(BenchError::failed(format!("{}: the body is empty", t.url)));
            }
        }
        throughput_metrics(samples)
    }
}

/// A TCP port to time connections to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTarget {
    /// As given (the `target` param).
    pub name: String,
    pub addr: SocketAddr,
}

options_benchmark! {
    /// `net.tcp-connect-rtt`: connection set-up time to any open port.
    TcpConnectRttBenchmark = "net.tcp-connect-rtt",
    "TCP connection set-up time to any open port (SYN to SYN-ACK), one connection at a time (median and 99th percentile)",
    Unit::Microseconds,
    Better::Lower
}

impl TcpConnectRttBenchmark {
    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        self.options.foreign_cases(|| {
            self.options
                .connect
                .iter()
                .map(|t| Params::new().with("target", t.name.as_str()))
                .collect()
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let t = named(
            params,
            "target",
            &self.options.connect,
            |t| &t.name,
            "connect targets",
        )?
        .clone();
        ctx.note_detail("address", t.addr.to_string());
        let cancel = ctx.cancel_token().clone();
        RoundTrips::measure(
            ctx,
            Vec::with_capacity(MAX_CONNECTS),
            MAX_CONNECTS,
            "TCP connection",
            |_| {
                cancel.check()?;
                let t0 = Instant::now();
                let s = TcpStream::connect_timeout(&t.addr, CONNECT_TIMEOUT).map_err(|e| {
                    let hint = match e.kind() {
                        io::ErrorKind::ConnectionRefused => "nothing listens on that port",
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                            "no answer: a firewall may drop the connection attempts"
                        }
                        _ => "check the address and port",
                    };
                    BenchError::failed(format!(
                        "cannot connect to {} ({}): {e}; {hint}",
                        t.name, t.addr
                    ))
                })?;
                let rtt = t0.elapsed().as_secs_f64() * 1e6;
                drop(s);
                Ok(Some(rtt))
            },
        )?
        .metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use sysgauge_core::{CtxSettings, Profile};

    /// How the test server frames its body.
    #[derive(Clone, Copy)]
    enum Serve {
        Length,
        Chunked,
        Close,
        Short,
    }

    /// A one-file HTTP server on 127.0.0.1, a thread per connection,
    /// stopped on drop; counts the requests it answered.
    struct Server {
        addr: SocketAddr,
        stop: Arc<AtomicBool>,
        requests: Arc<AtomicU64>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Server {
        fn start(body_len: usize, how: Serve) -> Server {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.set_nonblocking(true).unwrap();
            let addr = l.local_addr().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let requests = Arc::new(AtomicU64::new(0));
            let (st, rq) = (stop.clone(), requests.clone());
            let body: Arc<Vec<u8>> = Arc::new((0..body_len).map(|i| (i % 251) as u8).collect());
            let thread = std::thread::spawn(move || {
                while !st.load(Ordering::SeqCst) {
                    let Ok((mut c, _)) = l.accept() else {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    };
                    let (body, rq) = (body.clone(), rq.clone());
                    std::thread::spawn(move || {
                        let _ = c.set_nonblocking(false);
                        let mut req = Vec::new();
                        let mut b = [0u8; 1024];
                        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                            match c.read(&mut b) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => req.extend_from_slice(&b[..n]),
                            }
                        }
                        rq.fetch_add(1, Ordering::SeqCst);
                        let _ = match how {
                            Serve::Length => c
                                .write_all(
                                    format!(
                                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                                        body.len()
                                    )
                                    .as_bytes(),
                                )
                                .and_then(|_| c.write_all(&body)),
                            Serve::Short => c
                                .write_all(
                                    format!(
                                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                                        body.len() + 10
                                    )
                                    .as_bytes(),
                                )
                                .and_then(|_| c.write_all(&body)),
                            Serve::Close => c
                                .write_all(b"HTTP/1.0 200 OK\r\n\r\n")
                                .and_then(|_| c.write_all(&body)),
                            Serve::Chunked => {
                                let mut out =
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                        .to_vec();
                                for part in body.chunks(7777) {
                                    out.extend_from_slice(
                                        format!("{:x};ext=1\r\n", part.len()).as_bytes(),
                                    );
                                    out.extend_from_slice(part);
                                    out.extend_from_slice(b"\r\n");
                                }
                                out.extend_from_slice(b"0\r\nX-Trailer: t\r\n\r\n");
                                c.write_all(&out)
                            }
                        };
                    });
                }
            });
            Server {
                addr,
                stop,
                requests,
                thread: Some(thread),
            }
        }

        fn target(&self, path: &str) -> HttpTarget {
            HttpTarget {
                url: format!("http://{}{path}", self.addr),
                host: self.addr.to_string(),
                path: path.into(),
                addr: self.addr,
            }
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    #[test]
    fn downloads_count_exactly_the_body_whatever_the_framing() {
        let mut buf = vec![0u8; READ_BUFFER];
        for (how, len) in [
            (Serve::Length, 1_000_000),
            (Serve::Chunked, 300_001),
            (Serve::Close, 123_457),
            (Serve::Length, 1),
        ] {
            let s = Server::start(len, how);
            assert_eq!(download(&s.target("/f"), &mut buf), Ok(len as u64));
        }
        let s = Server::start(1000, Serve::Short);
        let e = download(&s.target("/f"), &mut buf).unwrap_err();
        assert!(e.contains("after 1000 of 1010 bytes"), "{e}");
    }

    #[test]
    fn download_and_connect_cases_run_against_a_local_server() {
        let s = Server::start(2_000_000, Serve::Length);
        let options = Arc::new(NetOptions {
            http: vec![s.target("/big")],
            connect: vec![ConnectTarget {
                name: s.addr.to_string(),
                addr: s.addr,
            }],
            streams: Some(3),
            ..NetOptions::default()
        });
        let plan = Plan {
            profile: Profile::Tiny,
            threads: 2,
        };
        let mut ctx =
            RunCtx::for_tests(CtxSettings::for_tests(Profile::Tiny, std::env::temp_dir()));
        let http = HttpDownloadBenchmark::new(options.clone());
        let cases = http.cases(&plan);
        assert_eq!(cases.len(), 2);
        for p in &cases {
            ctx.begin_case(Duration::from_millis(100));
            let m = http.run(&mut ctx, p).unwrap();
            let out = ctx.take_case_output();
            assert_eq!(m[0].unit, Unit::MBps);
            assert!(m[0].value() > 0.0);
            assert!((m[1].value() / m[0].value() - 8.0).abs() < 1e-9);
            assert_eq!(out.details.get_u64("bytes_per_download"), Some(2_000_000));
        }
        assert!(s.requests.load(Ordering::SeqCst) >= 4);
        let connect = TcpConnectRttBenchmark::new(options.clone());
        let cases = connect.cases(&plan);
        assert_eq!(cases.len(), 1);
        ctx.begin_case(Duration::from_millis(100));
        let m = connect.run(&mut ctx, &cases[0]).unwrap();
        let _ = ctx.take_case_output();
        assert_eq!(m[0].unit, Unit::Microseconds);
        assert!(m[0].value() > 0.0 && m[1].value() >= m[0].value() * 0.999);
        // The service cases plan nothing when only foreign hosts are named.
        assert!(options.service_cases(|| vec![Params::new()]).is_empty());
        // A closed port is a clear failure.
        let closed = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let options = Arc::new(NetOptions {
            connect: vec![ConnectTarget {
                name: closed.to_string(),
                addr: closed,
            }],
            ..NetOptions::default()
        });
        let connect = TcpConnectRttBenchmark::new(options);
        ctx.begin_case(Duration::from_millis(100));
        let e = connect
            .run(&mut ctx, &connect.cases(&plan)[0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing listens on that port"), "{e}");
    }

    #[test]
    fn urls() {
        let ok = |u: &str| split_url(u).unwrap_or_else(|e| panic!("{u}: {e}"));
        assert_eq!(ok("http://h/f"), ("h".into(), 80, "/f".into()));
        assert_eq!(ok("http://h:8080"), ("h".into(), 8080, "/".into()));
        assert_eq!(ok("HTTP://h?x=1"), ("h".into(), 80, "/?x=1".into()));
        assert_eq!(
            ok("http://[::1]:81/a#frag"),
            ("::1".into(), 81, "/a".into())
        );
        for bad in [
            "https://h/f",
            "ftp://h/f",
            "h/f",
            "http://",
            "http://h:0/",
            "http://h:99999/",
            "http://h:x/",
            "http://u:p@h/",
            "http://[::1/",
            "http://h/a b",
        ] {
            assert!(split_url(bad).is_err(), "{bad}");
        }
        assert!(split_url("https://h/")
            .unwrap_err()
            .contains("only plain http://"));
    }

    #[test]
    fn response_headers() {
        let f = |h: &str| parse_header(h.as_bytes(), "u");
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n"),
            Ok(Framing::Chunked)
        );
        assert_eq!(f("HTTP/1.0 200 OK\r\n\r\n"), Ok(Framing::UntilClose));
        assert!(f("HTTP/1.1 404 Not Found\r\n\r\n")
            .unwrap_err()
            .contains("404"));
        assert!(f("HTTP/1.1 301 Moved\r\nLocation: http://x/\r\n\r\n")
            .unwrap_err()
            .contains("http://x/"));
        assert!(f("SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(f("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
    }
}
