//! SSH algorithm names: what this OpenSSH client supports (`ssh -Q`), which
//! ciphers are AEAD (they authenticate themselves, so the MAC is not
//! negotiated and the matrix must not multiply them by MACs), the fixed
//! choices of the factorial matrix, and the plan of combinations to measure.
//!
//! Names are OpenSSH's own, verbatim (`aes128-gcm@openssh.com`); they are
//! compared exactly, as ssh does.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};

/// The MAC column of an AEAD cipher's combination: OpenSSH's own word for it
/// in `ssh -v` (`MAC: <implicit>`).
pub const IMPLICIT_MAC: &str = "implicit";

/// The three negotiated algorithm classes the matrix varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Cipher,
    Mac,
    Kex,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Cipher, Kind::Mac, Kind::Kex];

    /// The `ssh -Q` query word.
    pub fn query(self) -> &'static str {
        match self {
            Kind::Cipher => "cipher",
            Kind::Mac => "mac",
            Kind::Kex => "kex",
        }
    }

    /// For messages: "cipher", "MAC", "key exchange".
    pub fn label(self) -> &'static str {
        match self {
            Kind::Cipher => "cipher",
            Kind::Mac => "MAC",
            Kind::Kex => "key exchange",
        }
    }

    /// The command-line option that filters this class.
    pub fn option(self) -> &'static str {
        match self {
            Kind::Cipher => "--cipher",
            Kind::Mac => "--mac",
            Kind::Kex => "--kex",
        }
    }

    /// The ssh_config keyword for this class.
    pub fn config_keyword(self) -> &'static str {
        match self {
            Kind::Cipher => "Ciphers",
            Kind::Mac => "MACs",
            Kind::Kex => "KexAlgorithms",
        }
    }
}

/// The "secure" subset as "Secure Secure Shell" (stribika, 2015-01-04,
/// stribika.github.io/2015/01/04/secure-secure-shell.html) defines it for
/// sshd_config and ssh_config: key exchange by Curve25519 or by DH group
/// exchange with SHA-256; only AEAD or CTR ciphers with 128-bit blocks;
/// only encrypt-then-MAC MACs with SHA-2, RIPEMD-160 or a 128-bit UMAC tag.
/// Names as the source lists them, in its order (its preference).
pub fn secure_set(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Kex => &[
            "curve25519-sha256@libssh.org",
            "diffie-hellman-group-exchange-sha256",
        ],
        Kind::Cipher => &[
            "chacha20-poly1305@openssh.com",
            "aes256-gcm@openssh.com",
            "aes128-gcm@openssh.com",
            "aes256-ctr",
            "aes192-ctr",
            "aes128-ctr",
        ],
        Kind::Mac => &[
            "hmac-sha2-512-etm@openssh.com",
            "hmac-sha2-256-etm@openssh.com",
            "hmac-ripemd160-etm@openssh.com",
            "umac-128-etm@openssh.com",
        ],
    }
}

/// The secure set's names of `kind` this client has, in the set's order.
/// `curve25519-sha256` (RFC 8731's name for the same method) stands in for
/// the set's `curve25519-sha256@libssh.org` when the client has it, so the
/// method is measured once; hmac-ripemd160-etm is gone from OpenSSH since
/// 7.6 and is measured only where the client still offers it.
pub fn secure_names(kind: Kind, client: &ClientAlgorithms) -> Vec<String> {
    let mut out = Vec::new();
    for &n in secure_set(kind) {
        let name =
            if n == "curve25519-sha256@libssh.org" && client.supports(kind, "curve25519-sha256") {
                "curve25519-sha256"
            } else {
                n
            };
        if client.supports(kind, name) && !out.iter().any(|x: &String| x == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Whether `name` is in the secure set (either spelling of Curve25519).
pub fn in_secure_set(kind: Kind, name: &str) -> bool {
    let name = if name == "curve25519-sha256" {
        "curve25519-sha256@libssh.org"
    } else {
        name
    };
    secure_set(kind).contains(&name)
}

/// AEAD ciphers carry their own authentication: OpenSSH negotiates no MAC
/// for them (GCM and ChaCha20-Poly1305).
pub fn is_aead(cipher: &str) -> bool {
    cipher.contains("-gcm") || cipher.contains("poly1305")
}

/// The lines of an `ssh -Q` answer (one name per line).
pub fn parse_query(text: &str) -> Vec<String> {
    // A set for the repeats: scanning `v` for each line was quadratic.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut v: Vec<String> = Vec::new();
    for line in text.lines() {
        let name = line.trim();
        if !name.is_empty() && !name.contains(char::is_whitespace) && seen.insert(name) {
            v.push(name.to_string());
        }
    }
    v
}

/// What this ssh client supports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAlgorithms {
    /// `ssh -V`, e.g. "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026".
    pub version: String,
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    /// Host key signature algorithms (for the private server's config).
    pub host_key_algorithms: Vec<String>,
    /// Public key signature algorithms (for the private server's config).
    pub pubkey_algorithms: Vec<String>,
}

fn query(ssh: &Path, what: &str) -> Result<Vec<String>, String> {
    let out = Command::new(ssh)
        .arg("-Q")
        .arg(what)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} -Q {what}: {e}", ssh.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} -Q {what} failed: {}",
            ssh.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(parse_query(&String::from_utf8_lossy(&out.stdout)))
}

impl ClientAlgorithms {
    /// Ask the ssh client (`ssh -Q cipher|mac|kex|…`, `ssh -V`).
    pub fn query(ssh: &Path) -> Result<ClientAlgorithms, String> {
        let version = Command::new(ssh)
            .arg("-V")
            .stdin(Stdio::null())
            .output()
            .map(|o| {
                let text = if o.stderr.is_empty() {
                    o.stdout
                } else {
                    o.stderr
                };
                String::from_utf8_lossy(&text).trim().to_string()
            })
            .unwrap_or_default();
        let ciphers = query(ssh, "cipher")?;
        let macs = query(ssh, "mac")?;
        let kex = query(ssh, "kex")?;
        // `HostKeyAlgorithms` / `PubkeyAcceptedAlgorithms` queries exist since
        // OpenSSH 8.5; older clients answer `key-sig` (7.x: `key`).
        let sig = query(ssh, "key-sig").or_else(|_| query(ssh, "key"))?;
        let host_key_algorithms = query(ssh, "HostKeyAlgorithms").unwrap_or_else(|_| sig.clone());
        let pubkey_algorithms = query(ssh, "PubkeyAcceptedAlgorithms").unwrap_or(sig);
        if ciphers.is_empty() || macs.is_empty() || kex.is_empty() {
            return Err(format!(
                "{} -Q lists no ciphers, MACs or key exchanges",
                ssh.display()
            ));
        }
        Ok(ClientAlgorithms {
            version,
            ciphers,
            macs,
            kex,
            host_key_algorithms,
            pubkey_algorithms,
        })
    }

    pub fn list(&self, kind: Kind) -> &[String] {
        match kind {
            Kind::Cipher => &self.ciphers,
            Kind::Mac => &self.macs,
            Kind::Kex => &self.kex,
        }
    }

    pub fn supports(&self, kind: Kind, name: &str) -> bool {
        self.list(kind).iter().any(|x| x == name)
    }

    /// `Ok` when every name is known to this client, else a message naming
    /// the first unknown one and listing the known ones.
    pub fn check_names(&self, kind: Kind, names: &[String], option: &str) -> Result<(), String> {
        for n in names {
            if !self.supports(kind, n) {
                return Err(format!(
                    "{option}: unknown {} '{n}': this ssh client ({}) supports {}",
                    kind.label(),
                    if self.version.is_empty() {
                        "ssh"
                    } else {
                        &self.version
                    },
                    self.list(kind).join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The fixed choices of the factorial matrix: ciphers are measured with
/// `mac` and `kex`, MACs with `cipher` and `kex`, key exchanges with
/// `cipher` and `mac`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    /// A cipher that uses a MAC (not AEAD).
    pub cipher: String,
    pub mac: String,
    pub kex: String,
}

/// Preferred fixed choices, first supported wins: fast everywhere and
/// beyond reproach, so the fixed part neither drags the others down nor
/// needs an excuse.
const FIXED_CIPHERS: [&str; 3] = ["aes128-ctr", "aes256-ctr", "aes192-ctr"];
const FIXED_MACS: [&str; 4] = [
    "umac-128-etm@openssh.com",
    "hmac-sha2-256-etm@openssh.com",
    "umac-128@openssh.com",
    "hmac-sha2-256",
];
const FIXED_KEX: [&str; 4] = [
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "diffie-hellman-group14-sha256",
];

fn pick(prefs: &[&str], available: &[String], accept: impl Fn(&str) -> bool) -> Option<String> {
    prefs
        .iter()
        .find(|p| available.iter().any(|a| a == *p))
        .map(|p| p.to_string())
        .or_else(|| available.iter().find(|a| accept(a)).cloned())
}

impl Fixed {
    /// The default fixed choices among `ciphers`, `macs`, `kex` (already
    /// known to work); `None` names the class with nothing usable.
    pub fn choose(ciphers: &[String], macs: &[String], kex: &[String]) -> Result<Fixed, Kind> {
        let cipher = pick(&FIXED_CIPHERS, ciphers, |c| !is_aead(c)).ok_or(Kind::Cipher)?;
        let mac = pick(&FIXED_MACS, macs, |_| true).ok_or(Kind::Mac)?;
        let kex = pick(&FIXED_KEX, kex, |_| true).ok_or(Kind::Kex)?;
        Ok(Fixed { cipher, mac, kex })
    }
}

/// How many combinations to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Matrix {
    /// Ciphers with a fixed MAC and kex, MACs with a fixed cipher and kex,
    /// key exchanges by handshake time: minutes.
    #[default]
    Factorial,
    /// Every working cipher × MAC × kex combination (AEAD ciphers once per
    /// kex): hours.
    Full,
}

impl Matrix {
    pub fn as_str(self) -> &'static str {
        match self {
            Matrix::Factorial => "factorial",
            Matrix::Full => "full",
        }
    }
}

/// One cipher/MAC/kex combination; `mac` is [`IMPLICIT_MAC`] for AEAD ciphers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Combo {
    pub cipher: String,
    pub mac: String,
    pub kex: String,
}

impl Combo {
    /// The combination for `cipher`, with `mac` unless the cipher is AEAD.
    pub fn new(cipher: &str, mac: &str, kex: &str) -> Combo {
        Combo {
            cipher: cipher.to_string(),
            mac: if is_aead(cipher) {
                IMPLICIT_MAC.to_string()
            } else {
                mac.to_string()
            },
            kex: kex.to_string(),
        }
    }
}

impl std::fmt::Display for Combo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} / {} / {}", self.cipher, self.mac, self.kex)
    }
}

/// What to measure: transfer combinations and handshake combinations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatrixPlan {
    pub transfers: Vec<Combo>,
    pub handshakes: Vec<Combo>,
    /// The factorial matrix's fixed choices (noted on each transfer, so the
    /// report ranks ciphers with the fixed MAC and MACs with the fixed
    /// cipher); `None` for the full matrix and `run --only ssh`'s slice.
    pub fixed: Option<Fixed>,
}

impl MatrixPlan {
    /// Plan the matrix over the working `ciphers`, `macs` and `kex`.
    pub fn new(
        matrix: Matrix,
        ciphers: &[String],
        macs: &[String],
        kex: &[String],
        fixed: &Fixed,
    ) -> MatrixPlan {
        let mut p = MatrixPlan::default();
        match matrix {
            Matrix::Factorial => {
                p.fixed = Some(fixed.clone());
                for c in ciphers {
                    p.transfers.push(Combo::new(c, &fixed.mac, &fixed.kex));
                }
                for m in macs {
                    p.transfers.push(Combo::new(&fixed.cipher, m, &fixed.kex));
                }
                for k in kex {
                    p.handshakes.push(Combo::new(&fixed.cipher, &fixed.mac, k));
                }
            }
            Matrix::Full => {
                for k in kex {
                    for c in ciphers {
                        if is_aead(c) {
                            p.transfers.push(Combo::new(c, IMPLICIT_MAC, k));
                        } else {
                            for m in macs {
                                p.transfers.push(Combo::new(c, m, k));
                            }
                        }
                    }
                }
                p.handshakes = p.transfers.clone();
            }
        }
        dedup(&mut p.transfers);
        dedup(&mut p.handshakes);
        p
    }

    pub fn is_empty(&self) -> bool {
        self.transfers.is_empty() && self.handshakes.is_empty()
    }
}

fn dedup(v: &mut Vec<Combo>) {
    let mut seen = std::collections::BTreeSet::new();
    v.retain(|c| seen.insert(c.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    const CIPHERS_9_2: &str = include_str!("../../tests/fixtures/ssh/query-cipher-9.2.txt");
    const MACS_9_2: &str = include_str!("../../tests/fixtures/ssh/query-mac-9.2.txt");
    const KEX_9_2: &str = include_str!("../../tests/fixtures/ssh/query-kex-9.2.txt");

    #[test]
    fn query_output_of_openssh_9_2() {
        let c = parse_query(CIPHERS_9_2);
        assert_eq!(c.len(), 10);
        assert_eq!(c[0], "3des-cbc");
        let aead: Vec<&String> = c.iter().filter(|x| is_aead(x)).collect();
        assert_eq!(
            aead,
            [
                "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com",
                "chacha20-poly1305@openssh.com"
            ]
        );
        assert_eq!(parse_query(MACS_9_2).len(), 16);
        assert_eq!(parse_query(KEX_9_2).len(), 14);
        assert_eq!(parse_query("a\n\n a \nb c\nb\n"), ["a", "b"]);
    }

    #[test]
    fn query_keeps_first_occurrences_in_order() {
        let names: Vec<String> = (0..2000).map(|i| format!("n{}", i % 1500)).collect();
        let parsed = parse_query(&names.join("\n"));
        assert_eq!(parsed.len(), 1500);
        assert_eq!(parsed[..3], ["n0", "n1", "n2"]);
        assert_eq!(parsed[1499], "n1499");
    }

    #[test]
    fn fixed_choices_and_plans() {
        let ciphers = parse_query(CIPHERS_9_2);
        let macs = parse_query(MACS_9_2);
        let kex = parse_query(KEX_9_2);
        let f = Fixed::choose(&ciphers, &macs, &kex).unwrap_or_else(|k| panic!("{k:?}"));
        assert_eq!(f.cipher, "aes128-ctr");
        assert_eq!(f.mac, "umac-128-etm@openssh.com");
        assert_eq!(f.kex, "curve25519-sha256");
        // Only AEAD ciphers: no fixed cipher for the MAC sweep.
        assert_eq!(
            Fixed::choose(&s(&["aes128-gcm@openssh.com"]), &macs, &kex),
            Err(Kind::Cipher)
        );
        // Unusual lists fall back to the first usable name.
        let g = Fixed::choose(
            &s(&["aes128-gcm@openssh.com", "aes128-cbc"]),
            &s(&["hmac-sha1"]),
            &s(&["x"]),
        )
        .unwrap_or_else(|k| panic!("{k:?}"));
        assert_eq!(
            (g.cipher.as_str(), g.mac.as_str(), g.kex.as_str()),
            ("aes128-cbc", "hmac-sha1", "x")
        );

        let fact = MatrixPlan::new(Matrix::Factorial, &ciphers, &macs, &kex, &f);
        // 10 ciphers + 16 MACs, the fixed combination counted once.
        assert_eq!(fact.transfers.len(), 10 + 16 - 1);
        assert_eq!(fact.handshakes.len(), 14);
        let gcm = fact
            .transfers
            .iter()
            .find(|c| c.cipher == "aes128-gcm@openssh.com")
            .unwrap_or_else(|| panic!("no gcm"));
        assert_eq!(gcm.mac, IMPLICIT_MAC);
        assert!(fact.handshakes.iter().all(|c| c.cipher == "aes128-ctr"));

        let full = MatrixPlan::new(Matrix::Full, &ciphers, &macs, &kex, &f);
        // AEAD ciphers are not multiplied by MACs: (3 + 7 × 16) × 14.
        assert_eq!(full.transfers.len(), (3 + 7 * 16) * 14);
        assert_eq!(full.handshakes, full.transfers);
    }

    #[test]
    fn unknown_names_are_named() {
        let a = ClientAlgorithms {
            version: "OpenSSH_9.2p1".into(),
            ciphers: s(&["aes128-ctr", "aes256-ctr"]),
            macs: s(&["hmac-sha2-256"]),
            kex: s(&["curve25519-sha256"]),
            ..Default::default()
        };
        assert!(a
            .check_names(Kind::Cipher, &s(&["aes128-ctr"]), "--cipher")
            .is_ok());
        let e = a
            .check_names(Kind::Cipher, &s(&["aes128-ctr", "foo"]), "--cipher")
            .err()
            .unwrap_or_default();
        assert!(e.contains("unknown cipher 'foo'"), "{e}");
        assert!(e.contains("aes128-ctr, aes256-ctr"), "{e}");
        assert!(e.contains("OpenSSH_9.2p1"), "{e}");
    }

    #[test]
    fn the_secure_set_is_the_sources_within_what_the_client_has() {
        // OpenSSH 9.2: both spellings of Curve25519, no RIPEMD-160 MAC.
        let a = ClientAlgorithms {
            ciphers: s(&[
                "3des-cbc",
                "aes128-ctr",
                "aes256-ctr",
                "aes128-gcm@openssh.com",
                "chacha20-poly1305@openssh.com",
            ]),
            macs: s(&[
                "hmac-sha1",
                "umac-64-etm@openssh.com",
                "umac-128-etm@openssh.com",
                "hmac-sha2-256-etm@openssh.com",
                "hmac-sha2-256",
            ]),
            kex: s(&[
                "curve25519-sha256",
                "curve25519-sha256@libssh.org",
                "ecdh-sha2-nistp256",
                "diffie-hellman-group-exchange-sha256",
                "diffie-hellman-group14-sha256",
            ]),
            ..Default::default()
        };
        assert_eq!(
            secure_names(Kind::Cipher, &a),
            s(&[
                "chacha20-poly1305@openssh.com",
                "aes128-gcm@openssh.com",
                "aes256-ctr",
                "aes128-ctr"
            ])
        );
        assert_eq!(
            secure_names(Kind::Mac, &a),
            s(&["hmac-sha2-256-etm@openssh.com", "umac-128-etm@openssh.com"])
        );
        // One Curve25519, under the client's RFC 8731 name.
        assert_eq!(
            secure_names(Kind::Kex, &a),
            s(&["curve25519-sha256", "diffie-hellman-group-exchange-sha256"])
        );
        // An old client that still has RIPEMD-160 and only the old name.
        let old = ClientAlgorithms {
            macs: s(&["hmac-ripemd160-etm@openssh.com", "hmac-ripemd160"]),
            kex: s(&["curve25519-sha256@libssh.org"]),
            ..Default::default()
        };
        assert_eq!(
            secure_names(Kind::Mac, &old),
            s(&["hmac-ripemd160-etm@openssh.com"])
        );
        assert_eq!(
            secure_names(Kind::Kex, &old),
            s(&["curve25519-sha256@libssh.org"])
        );
        assert!(in_secure_set(Kind::Kex, "curve25519-sha256"));
        assert!(!in_secure_set(Kind::Kex, "ecdh-sha2-nistp256"));
        assert!(!in_secure_set(Kind::Mac, "umac-64-etm@openssh.com"));
        assert!(!in_secure_set(Kind::Mac, "hmac-sha2-256"), "EtM only");
    }
}
