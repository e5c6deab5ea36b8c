//! Architectures by the names `uname -m` prints, and which binary a host
//! can run.
//!
//! 32-bit ARM comes in two kinds: ARMv7 code (sysgauge's armv7 builds) does
//! not run on an ARMv6 CPU (the first Raspberry Pi and the Pi Zero), while
//! ARMv6 code runs on both. A binary's kind is read from its ELF header and,
//! for ARM, its build attributes (`Tag_CPU_arch`), so a `--binary` given
//! under the wrong name is refused before any host is contacted instead of
//! dying of SIGILL on one.

use object::elf;
use object::read::elf::{ElfFile32, ElfFile64, FileHeader, SectionHeader};
use object::{Endianness, FileKind};

/// `uname -m` names that mean the same architecture, by one canonical
/// name: Rust's (`std::env::consts::ARCH`), with 32-bit ARM split into
/// `armv6` and `armv7`. `armv8l` is a 64-bit ARM CPU running 32-bit code:
/// ARMv7 code runs there.
const ARCH_NAMES: &[(&str, &[&str])] = &[
    ("x86_64", &["x86_64", "amd64"]),
    ("x86", &["i386", "i486", "i586", "i686", "x86"]),
    ("aarch64", &["aarch64", "arm64", "armv8b", "aarch64_be"]),
    ("armv7", &["armv7l", "armv7", "armv7hl", "armv8l"]),
    ("armv6", &["armv6l", "armv6"]),
    ("riscv64", &["riscv64"]),
    ("powerpc64", &["ppc64", "ppc64le"]),
    ("s390x", &["s390x"]),
    ("loongarch64", &["loongarch64"]),
];

/// Canonical name of a `uname -m` answer (or of a `--binary` name);
/// unknown names stay as they are.
pub fn canonical_arch(uname: &str) -> String {
    let u = uname.trim();
    ARCH_NAMES
        .iter()
        .find(|(canonical, names)| names.contains(&u) || u == *canonical)
        .map(|(canonical, _)| canonical.to_string())
        .unwrap_or_else(|| u.to_string())
}

/// The architectures whose code a host of canonical `arch` runs, best
/// first: an ARMv7 host also runs ARMv6 code.
pub fn runnable_on(arch: &str) -> Vec<&str> {
    match arch {
        "armv7" => vec!["armv7", "armv6"],
        a => vec![a],
    }
}

/// What an executable says it is built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    /// Not an ELF file (or one too damaged to read).
    NotElf,
    /// An ELF machine (`e_machine`) sysgauge has no name for.
    Other(u16),
    /// A canonical architecture; `arm` for 32-bit ARM whose kind the file
    /// does not say (no build attributes).
    Arch(&'static str),
}

impl Built {
    /// Reads the ELF header (and ARM build attributes) of `data`.
    pub fn of(data: &[u8]) -> Built {
        match FileKind::parse(data) {
            Ok(FileKind::Elf32) => ElfFile32::<Endianness>::parse(data)
                .map(|f| machine(f.elf_header().e_machine(f.endian()), false, || arm_kind(&f)))
                .unwrap_or(Built::NotElf),
            Ok(FileKind::Elf64) => ElfFile64::<Endianness>::parse(data)
                .map(|f| machine(f.elf_header().e_machine(f.endian()), true, || None))
                .unwrap_or(Built::NotElf),
            _ => Built::NotElf,
        }
    }

    /// For messages: "an ARMv7 executable", "not an ELF executable" …
    fn describe(&self) -> String {
        match self {
            Built::NotElf => "not an ELF executable".into(),
            Built::Other(m) => format!("an ELF executable for machine {m}"),
            Built::Arch("armv7") => "ARMv7 code".into(),
            Built::Arch("armv6") => "ARMv6 code".into(),
            Built::Arch("arm") => "32-bit ARM code".into(),
            Built::Arch(a) => format!("an {a} executable"),
        }
    }
}

fn machine(m: u16, is_64: bool, arm: impl FnOnce() -> Option<&'static str>) -> Built {
    let arch = match (m, is_64) {
        (elf::EM_X86_64, true) => "x86_64",
        (elf::EM_386, false) => "x86",
        (elf::EM_AARCH64, true) => "aarch64",
        (elf::EM_ARM, false) => arm().unwrap_or("arm"),
        (elf::EM_RISCV, true) => "riscv64",
        (elf::EM_PPC64, true) => "powerpc64",
        (elf::EM_S390, true) => "s390x",
        (elf::EM_LOONGARCH, true) => "loongarch64",
        _ => return Built::Other(m),
    };
    Built::Arch(arch)
}

/// `Tag_CPU_arch` of the file's "aeabi" build attributes: ARMv7 and later
/// (10, 13 and up) or ARMv6 and earlier, whose code an ARMv6 CPU runs.
fn arm_kind(file: &ElfFile32<Endianness>) -> Option<&'static str> {
    const TAG_FILE: u8 = 1;
    const TAG_CPU_ARCH: u64 = 6;
    let endian = file.endian();
    let section = file
        .elf_section_table()
        .iter()
        .find(|s| s.sh_type(endian) == elf::SHT_ARM_ATTRIBUTES)?;
    let attributes = section.attributes(endian, file.data()).ok()?;
    let mut subsections = attributes.subsections().ok()?;
    while let Ok(Some(sub)) = subsections.next() {
        if sub.vendor() != b"aeabi" {
            continue;
        }
        let mut subsubsections = sub.subsubsections();
        while let Ok(Some(subsub)) = subsubsections.next() {
            if subsub.tag() != TAG_FILE {
                continue;
            }
            let mut reader = subsub.attributes();
            while let Ok(Some(tag)) = reader.read_tag() {
                // The value's type follows from the tag (ARM's "Addenda
                // to the ABI", build attributes): strings for 4, 5, 67 and
                // odd tags from 33 on, a number and a string for 32,
                // numbers otherwise.
                let read = match tag {
                    TAG_CPU_ARCH => {
                        let v = reader.read_integer().ok()?;
                        return Some(if v == 10 || v >= 13 { "armv7" } else { "armv6" });
                    }
                    4 | 5 | 67 => reader.read_string().map(|_| ()),
                    32 => reader
                        .read_integer()
                        .and_then(|_| reader.read_string())
                        .map(|_| ()),
                    t if t > 32 && t % 2 == 1 => reader.read_string().map(|_| ()),
                    _ => reader.read_integer().map(|_| ()),
                };
                read.ok()?;
            }
        }
    }
    None
}

/// The canonical architecture to serve a binary as, given the name it was
/// passed under (`--binary NAME=PATH`) and what the file says; an error
/// says why the two do not fit.
pub fn resolve(name: &str, built: &Built) -> Result<String, String> {
    let named = canonical_arch(name);
    let arm = |a: &str| matches!(a, "arm" | "armv6" | "armv7");
    match built {
        Built::NotElf => Err(built.describe()),
        // A machine without a name here: the name given is all there is.
        Built::Other(_) if !ARCH_NAMES.iter().any(|(a, _)| *a == named) => Ok(named),
        Built::Other(_) => Err(format!("it is {}, not {named}", built.describe())),
        Built::Arch(a) if arm(a) && arm(&named) => match (*a, named.as_str()) {
            ("arm", "arm") => Err(
                "the file does not say whether it is ARMv6 or ARMv7 code; pass it as armv6l=PATH \
                 or armv7l=PATH (ARMv7 code does not run on a Raspberry Pi 1 or Zero)"
                    .into(),
            ),
            ("arm", n) => Ok(n.to_string()),
            ("armv7", "armv6") => Err(
                "it is ARMv7 code, which an ARMv6 CPU (Raspberry Pi 1, Zero) cannot run; pass it \
                 as armv7l=PATH"
                    .into(),
            ),
            // ARMv6 code named armv7 serves ARMv7 hosts too (runnable_on).
            (a, _) => Ok(a.to_string()),
        },
        Built::Arch(a) if *a == named => Ok(named),
        Built::Arch(_) => Err(format!("it is {}, not {named}", built.describe())),
    }
}

/// The canonical architecture of the running binary, from what its file
/// says; 32-bit ARM that does not say its kind counts as ARMv7, so it is
/// never sent to an ARMv6 host.
pub fn of_running(built: &Built) -> String {
    match built {
        Built::Arch("arm") => "armv7".into(),
        Built::Arch(a) => a.to_string(),
        Built::NotElf | Built::Other(_) => match std::env::consts::ARCH {
            "arm" => "armv7".into(),
            a => a.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::Object;
    use object::{Architecture, BinaryFormat, SectionKind};

    /// A small ELF object for `arch`, with an ARM attributes section
    /// holding `attributes` (the "aeabi" File subsubsection's body) when
    /// given.
    fn elf(arch: Architecture, attributes: Option<&[u8]>) -> Vec<u8> {
        let endian = object::Endianness::Little;
        let mut obj = Object::new(BinaryFormat::Elf, arch, endian);
        let text = obj.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
        obj.append_section_data(text, &[0u8; 4], 4);
        if let Some(body) = attributes {
            // Format version 'A', then one subsection: length, "aeabi\0",
            // then the File subsubsection: tag 1, length, body.
            let sub_len = 4 + 6 + 1 + 4 + body.len();
            let mut data = vec![b'A'];
            data.extend_from_slice(&(sub_len as u32).to_le_bytes());
            data.extend_from_slice(b"aeabi\0");
            data.push(1);
            data.extend_from_slice(&((1 + 4 + body.len()) as u32).to_le_bytes());
            data.extend_from_slice(body);
            let s = obj.add_section(
                Vec::new(),
                b".ARM.attributes".to_vec(),
                SectionKind::Elf(elf::SHT_ARM_ATTRIBUTES),
            );
            obj.append_section_data(s, &data, 1);
        }
        obj.write().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Tag_CPU_name "7-A" (a string first, as real files have it), then
    /// Tag_CPU_arch.
    fn cpu(name: &[u8], arch: u8) -> Vec<u8> {
        let mut v = vec![5];
        v.extend_from_slice(name);
        v.push(0);
        v.extend_from_slice(&[6, arch, 8, 1]);
        v
    }

    #[test]
    fn names_and_what_runs_where() {
        assert_eq!(canonical_arch("x86_64\n"), "x86_64");
        assert_eq!(canonical_arch("armv7l"), "armv7");
        assert_eq!(canonical_arch("armv8l"), "armv7");
        assert_eq!(canonical_arch("armv6l"), "armv6");
        assert_eq!(canonical_arch("arm64"), "aarch64");
        assert_eq!(canonical_arch("riscv64"), "riscv64");
        assert_eq!(canonical_arch("mips"), "mips");
        assert_eq!(canonical_arch("arm"), "arm");
        assert_eq!(runnable_on("armv7"), ["armv7", "armv6"]);
        assert_eq!(runnable_on("armv6"), ["armv6"]);
        assert_eq!(runnable_on("x86_64"), ["x86_64"]);
    }

    #[test]
    fn what_a_file_says_it_is() {
        assert_eq!(
            Built::of(&elf(Architecture::X86_64, None)),
            Built::Arch("x86_64")
        );
        assert_eq!(
            Built::of(&elf(Architecture::Aarch64, None)),
            Built::Arch("aarch64")
        );
        assert_eq!(
            Built::of(&elf(Architecture::I386, None)),
            Built::Arch("x86")
        );
        assert_eq!(
            Built::of(&elf(Architecture::Arm, Some(&cpu(b"7-A", 10)))),
            Built::Arch("armv7")
        );
        // arm1176jzf-s, the Pi 1 and Zero: v6KZ.
        assert_eq!(
            Built::of(&elf(Architecture::Arm, Some(&cpu(b"6KZ", 7)))),
            Built::Arch("armv6")
        );
        assert_eq!(
            Built::of(&elf(Architecture::Arm, Some(&cpu(b"8-A", 14)))),
            Built::Arch("armv7")
        );
        assert_eq!(Built::of(&elf(Architecture::Arm, None)), Built::Arch("arm"));
        assert_eq!(Built::of(b"#!/bin/sh\necho hi\n"), Built::NotElf);
        assert_eq!(Built::of(&[0x7f, b'E', b'L', b'F', 1]), Built::NotElf);
        assert_eq!(Built::of(b""), Built::NotElf);
    }

    #[test]
    fn the_file_decides_and_a_wrong_name_is_refused() {
        let v7 = Built::Arch("armv7");
        let v6 = Built::Arch("armv6");
        let arm = Built::Arch("arm");
        assert_eq!(resolve("armv7l", &v7).as_deref(), Ok("armv7"));
        assert_eq!(resolve("arm", &v7).as_deref(), Ok("armv7"));
        assert_eq!(resolve("armv6l", &v6).as_deref(), Ok("armv6"));
        // ARMv6 code named armv7 is served as what it is (it runs on both).
        assert_eq!(resolve("armv7l", &v6).as_deref(), Ok("armv6"));
        let e = resolve("armv6l", &v7).unwrap_err();
        assert!(e.contains("ARMv7 code") && e.contains("armv7l=PATH"), "{e}");
        // Without attributes the name decides, and plain "arm" is refused.
        assert_eq!(resolve("armv6l", &arm).as_deref(), Ok("armv6"));
        assert!(resolve("arm", &arm).unwrap_err().contains("armv6l=PATH"));
        assert_eq!(
            resolve("amd64", &Built::Arch("x86_64")).as_deref(),
            Ok("x86_64")
        );
        let e = resolve("aarch64", &Built::Arch("x86_64")).unwrap_err();
        assert_eq!(e, "it is an x86_64 executable, not aarch64");
        assert!(resolve("aarch64", &v7).unwrap_err().contains("ARMv7 code"));
        assert_eq!(
            resolve("aarch64", &Built::NotElf).unwrap_err(),
            "not an ELF executable"
        );
        // A machine sysgauge has no name for: the given name is trusted,
        // unless it is one sysgauge knows.
        assert_eq!(resolve("mips", &Built::Other(8)).as_deref(), Ok("mips"));
        assert!(resolve("x86_64", &Built::Other(8)).is_err());
    }

    #[test]
    fn the_running_binary_is_what_its_file_says() {
        assert_eq!(of_running(&Built::Arch("armv6")), "armv6");
        assert_eq!(of_running(&Built::Arch("arm")), "armv7");
        assert_eq!(of_running(&Built::Arch("x86_64")), "x86_64");
        let me = std::fs::read(std::env::current_exe().unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let mine = of_running(&Built::of(&me));
        match std::env::consts::ARCH {
            "arm" => assert!(mine == "armv6" || mine == "armv7", "{mine}"),
            a => assert_eq!(mine, a),
        }
    }
}
