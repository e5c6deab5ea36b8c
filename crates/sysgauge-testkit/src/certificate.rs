//! A TLS certificate made by `openssl` for a test's HTTPS site.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A self-signed certificate (not a CA's) for `san` (`subjectAltName`, e.g.
/// `IP:127.0.0.1,DNS:localhost`), made by openssl in `dir`: (cert, key), or
/// None when openssl is missing and the test is skipped ([`crate::require`]).
pub fn self_signed_certificate(dir: &Path, san: &str) -> Option<(PathBuf, PathBuf)> {
    if !crate::require(
        "openssl (a certificate for the HTTPS test)",
        crate::on_path("openssl"),
        "apt-get install openssl",
    ) {
        return None;
    }
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    crate::output_of_success(
        Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=sysgauge test site",
                "-addext",
                "basicConstraints=critical,CA:FALSE",
                "-addext",
            ])
            .arg(format!("subjectAltName={san}"))
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert),
    );
    Some((cert, key))
}
