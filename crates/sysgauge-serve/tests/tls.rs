//! HTTPS: the site behind rustls answers a TLS client (openssl's) with a
//! self-signed certificate made for the test.

#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn the_site_answers_over_https() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = sysgauge_testkit::self_signed_certificate(dir.path(), "DNS:localhost")
    else {
        return;
    };
    // A file that is not a certificate is a clear error.
    let err = sysgauge_serve::tls::acceptor(&key, &key).err().unwrap();
    assert!(err.to_string().contains("--tls-cert"), "{err:#}");
    let acceptor = sysgauge_serve::tls::acceptor(&cert, &key).unwrap();

    let db = dir.path().join("s.db");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let site = sysgauge_serve::Site::open(sysgauge_serve::Config::new(db)).unwrap();
    let served = rt.spawn(site.serve_tls(listener, acceptor, async {
        let _ = stopped.await;
    }));

    let mut client = Command::new("openssl")
        .args(["s_client", "-quiet", "-connect", &addr.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    client
        .stdin
        .take()
        .unwrap()
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let out = client.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"status\":\"ok\""), "{text}");
    stop.send(()).unwrap();
    rt.block_on(served).unwrap().unwrap();
}
