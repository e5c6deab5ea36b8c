//! The corpus the sweep's input file is made of: the system dictionary
//! (Debian's `wamerican` installs /usr/share/dict/words), a generated word
//! list of exactly 1,000,000 bytes when there is no dictionary, random
//! bytes, or a file the user names. Generated and random corpora come from
//! a fixed seed, so every machine hashes the same bytes. The corpus's size
//! and SHA-256 are recorded with every result, so two results can be seen
//! to have hashed the same text.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use sysgauge_core::{BenchError, CancelToken, IoContext};
use sysgauge_family::util::{fill_pattern, hex};

/// Dictionaries tried in order for `--data words`.
pub const DICTIONARIES: [&str; 2] = ["/usr/share/dict/words", "/usr/share/dict/american-english"];

/// Size of a generated word list or random corpus.
pub const GENERATED_BYTES: usize = 1_000_000;

/// Seeds of the generated corpora. Changing either changes every generated
/// corpus's SHA-256 (which the tests pin).
const WORDS_SEED: u64 = 0x5357_4545_5057_4f52; // "SWEEPWOR"
const RANDOM_SEED: u64 = 0x5357_4545_5052_4e44; // "SWEEPRND"

/// What the user asked the corpus to be.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DataSpec {
    /// The system dictionary, else a generated word list.
    #[default]
    Words,
    /// Seeded pseudo-random bytes (incompressible, not text).
    Random,
    /// A file given with `--corpus`.
    File(PathBuf),
}

impl DataSpec {
    /// The `data` parameter of every result.
    pub fn kind(&self) -> &'static str {
        match self {
            DataSpec::Words => "words",
            DataSpec::Random => "random",
            DataSpec::File(_) => "file",
        }
    }

    /// The corpus size `Corpus::load` will find, without reading it (for
    /// checking free space before anything runs). For `File`, the file must
    /// be a non-empty regular file.
    pub fn expected_len(&self, dictionaries: &[&Path]) -> Result<u64, String> {
        match self {
            DataSpec::Words => Ok(dictionaries
                .iter()
                .find_map(|d| {
                    std::fs::metadata(d)
                        .ok()
                        .filter(|m| m.is_file() && m.len() > 0)
                        .map(|m| m.len())
                })
                .unwrap_or(GENERATED_BYTES as u64)),
            DataSpec::Random => Ok(GENERATED_BYTES as u64),
            DataSpec::File(p) => match std::fs::metadata(p) {
                Err(e) => Err(format!("--corpus {}: {e}", p.display())),
                Ok(m) if !m.is_file() => {
                    Err(format!("--corpus {} is not a regular file", p.display()))
                }
                Ok(m) if m.len() == 0 => Err(format!("--corpus {} is empty", p.display())),
                Ok(m) => Ok(m.len()),
            },
        }
    }
}

/// Where the corpus bytes live.
#[derive(Debug, Clone)]
enum Content {
    Memory(Arc<Vec<u8>>),
    /// A user's file, streamed (it may be larger than is wise to hold).
    File(PathBuf),
}

/// A loaded corpus: its bytes (or file), size, SHA-256 and where it came from.
#[derive(Debug, Clone)]
pub struct Corpus {
    content: Content,
    len: u64,
    sha256: String,
    /// The dictionary or file path, or `generated`.
    source: String,
}

/// Read buffer for streaming a file corpus.
const CHUNK: usize = 1 << 20;

impl Corpus {
    /// Load the corpus `spec` asks for. `dictionaries` are tried in order
    /// for `Words` (a parameter so tests can point it elsewhere).
    pub fn load(spec: &DataSpec, dictionaries: &[&Path]) -> Result<Corpus, BenchError> {
        match spec {
            DataSpec::Words => {
                for d in dictionaries {
                    if let Ok(bytes) = std::fs::read(d) {
                        if !bytes.is_empty() {
                            return Ok(Corpus::from_memory(bytes, d.display().to_string()));
                        }
                    }
                }
                Ok(Corpus::from_memory(generated_words(), "generated".into()))
            }
            DataSpec::Random => {
                let mut bytes = vec![0u8; GENERATED_BYTES];
                fill_pattern(&mut bytes, RANDOM_SEED);
                Ok(Corpus::from_memory(bytes, "generated".into()))
            }
            DataSpec::File(p) => {
                let meta = std::fs::metadata(p)
                    .io_context(|| format!("cannot read the corpus {}", p.display()))?;
                if !meta.is_file() {
                    return Err(BenchError::failed(format!(
                        "the corpus {} is not a regular file",
                        p.display()
                    )));
                }
                if meta.len() == 0 {
                    return Err(BenchError::failed(format!(
                        "the corpus {} is empty",
                        p.display()
                    )));
                }
                let mut c = Corpus {
                    content: Content::File(p.clone()),
                    len: meta.len(),
                    sha256: String::new(),
                    source: p.display().to_string(),
                };
                let mut h = Sha256::new();
                c.for_each_chunk(&CancelToken::new(), &mut |b| {
                    h.update(b);
                    Ok(())
                })?;
                c.sha256 = hex(&h.finalize());
                Ok(c)
            }
        }
    }

    fn from_memory(bytes: Vec<u8>, source: String) -> Corpus {
        let sha256 = hex(&Sha256::digest(&bytes));
        Corpus {
            len: bytes.len() as u64,
            content: Content::Memory(Arc::new(bytes)),
            sha256,
            source,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Lowercase hex SHA-256 of the corpus.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The dictionary or file path, or `generated`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Call `f` with the corpus bytes in order, in chunks. A file corpus
    /// that changed size since it was loaded is an error (the recorded
    /// size and digest would no longer describe it).
    pub fn for_each_chunk(
        &self,
        cancel: &CancelToken,
        f: &mut dyn FnMut(&[u8]) -> Result<(), BenchError>,
    ) -> Result<(), BenchError> {
        match &self.content {
            Content::Memory(b) => f(b),
            Content::File(p) => {
                let mut file = std::fs::File::open(p)
                    .io_context(|| format!("cannot open the corpus {}", p.display()))?;
                let mut buf = vec![0u8; CHUNK];
                let mut total = 0u64;
                loop {
                    cancel.check()?;
                    let n = file
                        .read(&mut buf)
                        .io_context(|| format!("cannot read the corpus {}", p.display()))?;
                    if n == 0 {
                        break;
                    }
                    total += n as u64;
                    f(&buf[..n])?;
                }
                if total != self.len {
                    return Err(BenchError::failed(format!(
                        "the corpus {} changed size while the sweep ran ({} bytes, then {total})",
                        p.display(),
                        self.len
                    )));
                }
                Ok(())
            }
        }
    }
}

/// SplitMix64: tiny, well-distributed, and the same on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A deterministic list of pronounceable words, one per line, exactly
/// `GENERATED_BYTES` long: text like a dictionary (short lines, a small
/// alphabet), so programs that treat text specially see text.
pub fn generated_words() -> Vec<u8> {
    const ONSETS: [&str; 24] = [
        "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
        "br", "ch", "st", "tr", "sh", "pl",
    ];
    const VOWELS: [&str; 8] = ["a", "e", "i", "o", "u", "ea", "ou", "y"];
    const CODAS: [&str; 10] = ["", "", "", "n", "r", "s", "t", "ng", "ck", "ll"];
    let mut rng = SplitMix64(WORDS_SEED);
    let mut out = Vec::with_capacity(GENERATED_BYTES + 32);
    while out.len() < GENERATED_BYTES {
        let syllables = 1 + rng.below(4);
        let start = out.len();
        for _ in 0..syllables {
            out.extend_from_slice(ONSETS[rng.below(ONSETS.len() as u64) as usize].as_bytes());
            out.extend_from_slice(VOWELS[rng.below(VOWELS.len() as u64) as usize].as_bytes());
            out.extend_from_slice(CODAS[rng.below(CODAS.len() as u64) as usize].as_bytes());
        }
        // Dictionaries carry proper nouns and possessives too.
        match rng.below(16) {
            0 => out[start] = out[start].to_ascii_uppercase(),
            1 => out.extend_from_slice(b"'s"),
            _ => {}
        }
        out.push(b'\n');
    }
    out.truncate(GENERATED_BYTES);
    if let Some(last) = out.last_mut() {
        *last = b'\n';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_words_are_deterministic_text() {
        let a = generated_words();
        assert_eq!(a.len(), GENERATED_BYTES);
        assert_eq!(a, generated_words());
        assert_eq!(a.last(), Some(&b'\n'));
        assert!(a
            .iter()
            .all(|&b| b == b'\n' || b == b'\'' || b.is_ascii_alphabetic()));
        let lines = a.iter().filter(|&&b| b == b'\n').count();
        assert!(lines > 50_000 && lines < 200_000, "{lines} lines");
        // Pinned: the same bytes on every machine and every version, so
        // results made from the generated list compare.
        let c = Corpus::load(&DataSpec::Words, &[]).unwrap();
        assert_eq!(c.source(), "generated");
        assert_eq!(c.len(), GENERATED_BYTES as u64);
        assert_eq!(c.sha256(), GENERATED_WORDS_SHA256);
    }

    const GENERATED_WORDS_SHA256: &str =
        "9eac6d889b750726bdff1aac2f2c9efdd07b6c012884aa4a9d98a56fe568844a";

    #[test]
    fn random_corpus_is_seeded() {
        let a = Corpus::load(&DataSpec::Random, &[]).unwrap();
        let b = Corpus::load(&DataSpec::Random, &[]).unwrap();
        assert_eq!(a.len(), GENERATED_BYTES as u64);
        assert_eq!(a.sha256(), b.sha256());
        assert_eq!(DataSpec::Random.kind(), "random");
    }

    #[test]
    fn dictionary_first_then_file() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        let dict = dir.path().join("words");
        std::fs::write(&empty, b"").unwrap();
        std::fs::write(&dict, b"apple\nbanana\n").unwrap();
        let missing = dir.path().join("missing");
        let c = Corpus::load(
            &DataSpec::Words,
            &[missing.as_path(), empty.as_path(), dict.as_path()],
        )
        .unwrap();
        assert_eq!(c.len(), 13);
        assert_eq!(c.source(), dict.display().to_string());
        assert_eq!(
            c.sha256(),
            hex(&Sha256::digest(b"apple\nbanana\n")).as_str()
        );

        let f = Corpus::load(&DataSpec::File(dict.clone()), &[]).unwrap();
        assert_eq!(f.sha256(), c.sha256());
        let mut seen = Vec::new();
        f.for_each_chunk(&CancelToken::new(), &mut |b| {
            seen.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, b"apple\nbanana\n");

        for bad in [empty, missing, dir.path().to_path_buf()] {
            assert!(
                Corpus::load(&DataSpec::File(bad.clone()), &[]).is_err(),
                "{bad:?}"
            );
        }
        // A file that changes under the sweep is caught.
        std::fs::write(&dict, b"apple\n").unwrap();
        assert!(f
            .for_each_chunk(&CancelToken::new(), &mut |_| Ok(()))
            .is_err());
    }
}
