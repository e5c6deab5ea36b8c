//! The importer table: detection of every format, and texts of several
//! tools read section by section.

use super::*;

/// The importer that reads `text` as a whole document, by name.
fn sniff(text: &str) -> Option<&'static str> {
    sniffed(text).map(|i| i.name())
}

#[test]
fn sniffing() {
    assert_eq!(
        sniff(include_str!(
            "../../../sysgauge-compare/tests/fixtures/csv/three-hosts.csv"
        )),
        Some("csv")
    );
    assert_eq!(sniff("  {\"schema_version\": 1}"), Some("json"));
    assert_eq!(sniff("[]"), Some("json"));
    assert_eq!(sniff("+H:16\n+F:3:md5:1.0\n"), Some("openssl"));
    assert_eq!(sniff("OpenSSL 3.0.19 27 Jan 2026\n+H:16"), Some("openssl"));
    assert_eq!(sniff("Forked child 0\n"), Some("openssl"));
    assert_eq!(sniff("hello world\n"), None);
    assert_eq!(sniff(""), None);
}

#[test]
fn sniffing_the_human_openssl_table() {
    for opening in [
        "To get the most accurate results, try to run this\n",
        "Doing md5 for 3s on 16 size blocks: 100 md5's in 3.00s\n",
        "OpenSSL 1.0.1f 6 Jan 2014\nbuilt on: today\n",
        "version: 3.0.2\n",
        "CPUINFO: OPENSSL_ia32cap=0x0:0x0\n",
        "The 'numbers' are in 1000s of bytes per second processed.\n",
        "type             16 bytes     64 bytes\nmd5 1.00k 2.00k\n",
        "                  sign    verify    sign/s verify/s\n",
        "                              op      op/s\n",
    ] {
        assert_eq!(sniff(opening), Some("openssl"), "{opening}");
    }
}

#[test]
fn sniffing_mbw() {
    assert_eq!(
        sniff("Long uses 8 bytes. Allocating 2*1 elements = 16 bytes of memory.\n"),
        Some("mbw")
    );
    assert_eq!(
        sniff("AVG\tMethod: MEMCPY\tElapsed: 0.1\tMiB: 8.0\tCopy: 80.0 MiB/s\n"),
        Some("mbw")
    );
    assert_eq!(
        sniff("0\tMethod: DUMB\tElapsed: 0.1\tMiB: 8.0\tCopy: 80.0 MiB/s\n"),
        Some("mbw")
    );
}

#[test]
fn sniffing_bonnie() {
    assert_eq!(
        sniff("Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-\n"),
        Some("bonnie")
    );
    assert_eq!(
        sniff("1.98,2.00a,h,1,1,1G,,8192,5,982,98,800147,67,1143272,69,1656,99,+++++,+++,+++++,+++,4,,,,,2923,97\n"),
        Some("bonnie")
    );
    assert_eq!(
        sniff(include_str!(
            "../../../sysgauge-compare/tests/fixtures/csv/three-hosts.csv"
        )),
        Some("csv")
    );
}

#[test]
fn sniffing_nbench() {
    for opening in [
        "BYTEmark* Native Mode Benchmark ver. 2 (10/95)\n",
        "TEST                : Iterations/sec.  : Old Index   : New Index\n",
        "NUMERIC SORT        :          1000.5  :      25.66  :       8.43\n",
    ] {
        assert_eq!(sniff(opening), Some("nbench"), "{opening}");
    }
}

/// The captured outputs of hyperfine, fio and sysbench (the bench crate's
/// fixtures) are told apart from each other and from sysgauge's JSON.
#[test]
fn sniffing_hyperfine_fio_sysbench() {
    macro_rules! tool {
        ($path:literal) => {
            include_str!(concat!("../../../sysgauge-bench/tests/fixtures/", $path))
        };
    }
    for text in [
        tool!("hyperfine/1.15-two-commands.json"),
        tool!("hyperfine/1.15-scan.json"),
        r#"{"results":[{"command":"x","mean":0.5}]}"#,
    ] {
        assert_eq!(sniff(text), Some("hyperfine"), "{text}");
    }
    for text in [
        tool!("fio/3.33-seq-write-read-randread.json"),
        tool!("fio/3.33-two-clients.json"),
        tool!("fio/3.33-jsonplus-randrw-libaio.json"),
        tool!("fio/3.33-note-before-json.txt"),
    ] {
        assert_eq!(sniff(text), Some("fio"), "{}", &text[..60]);
    }
    for text in [
        tool!("sysbench/1.0.20-cpu.txt"),
        tool!("sysbench/1.0.20-memory-1M-2G-write.txt"),
        tool!("sysbench/1.0.20-memory-rnd-read-t2-with-command.txt"),
        "Running the test with following options:\nNumber of threads: 1\n",
    ] {
        assert_eq!(sniff(text), Some("sysbench"), "{}", &text[..40]);
    }
    // sysgauge's own record stays JSON, even holding the other names.
    assert_eq!(
        sniff(
            r#"{"schema_version": 1, "results": [], "command": "run", "tags": {"fio version": "x"}}"#
        ),
        Some("json")
    );
    assert_eq!(sniff("note: something else\n"), None);
}

macro_rules! pasted {
    ($name:literal) => {
        include_str!(concat!(
            "../../../sysgauge-bench/tests/fixtures/pasted/",
            $name
        ))
    };
}

/// A write-up's block: a prompt, nbench, prose, Bonnie++ with its progress
/// lines, a prompt, `openssl speed`.
fn pasted_block() -> String {
    format!(
        "pi@raspberrypi ~ $ ./nbench\n{}\nNext the disk, on the SD card:\n\n{}\npi@raspberrypi ~ $ openssl speed md5 sha1 sha256 aes-128-cbc rsa1024 rsa2048\n{}",
        pasted!("rpib.nbench.txt"),
        pasted!("rpib.bonnie.txt"),
        pasted!("rpib.openssl.txt")
    )
}

#[test]
fn every_format_has_one_unique_name() {
    let mut names: Vec<&str> = IMPORTERS.iter().map(|i| i.name()).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n);
    assert!(!names.contains(&"auto"));
    for i in IMPORTERS {
        assert!(importer(i.name()).is_some());
    }
}

#[test]
fn a_pasted_block_is_cut_into_each_tools_section() {
    let text = pasted_block();
    let pieces = sections::split(&text, "all.txt").unwrap().pieces;
    let names: Vec<&str> = pieces.iter().map(|(i, _)| i.name()).collect();
    assert_eq!(names, ["nbench", "bonnie", "openssl"]);
    // Line numbers stay the file's: each piece has every line.
    for (_, piece) in &pieces {
        assert_eq!(piece.lines().count(), text.lines().count());
    }
    // Each tool reads its own section.
    let ctx = ImportContext {
        source_name: "all.txt",
        at: chrono::Utc::now(),
        tool_version: "0",
        workload_version: &workload_version,
    };
    let counts: Vec<usize> = pieces
        .iter()
        .map(|(i, p)| i.parse(p, &ctx).unwrap().machines[0].results.len())
        .collect();
    assert_eq!(counts, [15, 11, 22]);
}

#[test]
fn a_single_tools_output_is_read_whole() {
    for text in [
        pasted!("rpib.nbench.txt"),
        pasted!("intel.bonnie.txt"),
        pasted!("rpib.openssl.txt"),
    ] {
        let split = sections::split(text, "one.txt").unwrap();
        assert!(split.unread.is_none(), "{:?}", split.unread);
        let pieces = split.pieces;
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].1, text);
    }
}

#[test]
fn bonnie_with_its_progress_lines_is_recognised() {
    assert_eq!(sniff(pasted!("rpib.bonnie.txt")), Some("bonnie"));
    assert_eq!(sniff(pasted!("intel.bonnie.txt")), Some("bonnie"));
}

#[test]
fn prose_alone_is_not_a_section() {
    let e = sections::split("Here are my results.\nThey were good.\n", "p.txt")
        .err()
        .unwrap();
    assert!(e.to_string().contains("cannot tell the format"), "{e}");
    let e = sections::split("  \n\n", "p.txt").err().unwrap();
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn line_ranges_read_as_people_write_them() {
    assert_eq!(sections::line_ranges(&[0]), "line 1");
    assert_eq!(
        sections::line_ranges(&[0, 1, 5, 9, 10, 11]),
        "lines 1-2, 6, 10-12"
    );
}

/// The openssl importer once stored 1e308 B/s (an overflow in the
/// summaries) and 1e-320 B/s (0 MB/s), which JSON import then refused on
/// export → import: every importer's values now meet JSON import's rules,
/// and the error names the file, the case and the value.
#[test]
fn tool_values_json_import_refuses_are_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let read = |file: &str, text: &str| {
        let p = dir.path().join(file);
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        match load_file(&p, &FileOptions::default()) {
            Ok(runs) => panic!("accepted: {runs:?}"),
            Err(e) => (p.display().to_string(), e.to_string()),
        }
    };
    for (file, text, case, says) in [
        (
            "huge.txt",
            "+H:16:64\n+F:3:md5:1e308:2000000\n",
            "(block_size=16",
            "metric 'throughput' sample 1: 1e302 is beyond what sysgauge accepts",
        ),
        (
            "tiny.txt",
            "+H:16:64\n+F:3:md5:2000000:1e-320\n",
            "(block_size=64",
            "metric 'throughput' sample 1: 0 where higher is better",
        ),
    ] {
        let (name, e) = read(file, text);
        assert!(
            e.starts_with(&format!("{name}: ")) && e.contains(case) && e.contains(says),
            "{e}"
        );
    }
    // The same output with sane values is read.
    let p = dir.path().join("sane.txt");
    std::fs::write(&p, "+H:16:64\n+F:3:md5:2000000:3000000\n").unwrap_or_else(|e| panic!("{e}"));
    let runs = load_file(&p, &FileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs[0].results.len(), 2);
}

/// `import` of a directory or /dev/zero said "no such file"; the file is
/// now named as what it is, and never read (/dev/zero never ends, a FIFO
/// without a writer blocks for ever). The pipes the shell hands over
/// (`<(cmd)`, `/dev/stdin`) are read: `outputs_come_in_through_pipes`.
#[test]
fn files_that_are_not_regular_are_named_as_what_they_are() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("speed.txt");
    sysgauge_testkit::mkfifo(&fifo);
    let error = |p: &Path| match load_file(p, &FileOptions::default()) {
        Ok(runs) => panic!("accepted: {runs:?}"),
        Err(e) => e.to_string(),
    };
    assert!(!is_handed_pipe(&fifo));
    let e = error(&fifo);
    assert!(e.contains("not a regular file (a FIFO"), "{e}");
    assert_eq!(
        error(Path::new("/dev/zero")),
        "/dev/zero: not a regular file (a character device)"
    );
    assert_eq!(
        error(dir.path()),
        format!("{}: not a regular file (a directory)", dir.path().display())
    );
    // A gzip file is named as one, with what to do.
    let gz = dir.path().join("speed.txt.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]).unwrap_or_else(|e| panic!("{e}"));
    let e = error(&gz);
    assert!(e.contains("a gzip file; decompress it first"), "{e}");
}

#[test]
fn sniffing_yabs() {
    let fixture = |name: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../sysgauge-bench/tests/fixtures/yabs")
                .join(name),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    for name in [
        "shaped-full.json",
        "shaped-pasted-arm.txt",
        "shaped-geekbench-only.json",
        "shaped-no-disk.json",
    ] {
        assert_eq!(sniff(&fixture(name)), Some("yabs"), "{name}");
    }
    // Neither sysgauge's JSON nor fio's is YABS's.
    assert_eq!(
        sniff("{\"schema_version\":1,\"os\":{},\"cpu\":{},\"mem\":{},\"runtime\":1}"),
        Some("json")
    );
    assert_eq!(
        sniff(include_str!(
            "../../../sysgauge-bench/tests/fixtures/fio/3.33-yabs-randrw-4k-qd64x2.json"
        )),
        Some("fio")
    );
    // YABS's report without its JSON (run without -j) is not read.
    let report = fixture("shaped-pasted-arm.txt");
    let without: String = report
        .lines()
        .filter(|l| !l.starts_with('{'))
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(sniff(&without), Some("yabs"));
}

/// What the openssl importer leaves out it names, each for what it is: a
/// row of 0 is a case openssl did not run (3.0 without the legacy
/// provider, for MD4 and Blowfish), a line that is no row is text it does
/// not read; neither blames the openssl version.
#[test]
fn openssl_warnings_name_what_was_left_out() {
    let text = format!(
        "{}Thanks for reading!\n",
        include_str!(
            "../../../sysgauge-crypto/tests/fixtures/openssl/3.0-human-table-md4-bf-not-run.txt"
        )
    );
    let ctx = ImportContext {
        source_name: "speed.txt",
        at: chrono::Utc::now(),
        tool_version: "test",
        workload_version: &|_| None,
    };
    let parsed = openssl::IMPORTER
        .parse(&text, &ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    let w = &parsed.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].starts_with("speed.txt:8: 'md4' is 0 at 16 bytes, 64 bytes,")
            && w[0].contains("openssl did not run it"),
        "{w:?}"
    );
    assert!(w[1].starts_with("speed.txt:10: 'blowfish' is 0"), "{w:?}");
    assert!(
        w[2].starts_with("speed.txt:11: not a row or record")
            && w[2].ends_with("left out: Thanks for reading!"),
        "{w:?}"
    );
    assert!(w.iter().all(|x| !x.contains("newer openssl?")), "{w:?}");
    assert_eq!(parsed.machines[0].results.len(), 6);
}

/// Every captured output of a text tool is one section of all its lines,
/// read as it is: the tools' `starts`/`claims` know every line their
/// output is made of, so cutting a pasted block names no line of theirs.
#[test]
fn every_captured_text_output_is_one_whole_section() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut bad = Vec::new();
    let mut seen = 0;
    for dir in [
        "sysgauge-bench/tests/fixtures/sysbench",
        "sysgauge-bench/tests/fixtures/mbw",
        "sysgauge-bench/tests/fixtures/bonnie",
        "sysgauge-bench/tests/fixtures/nbench",
        "sysgauge-bench/tests/fixtures/pasted",
        "sysgauge-crypto/tests/fixtures/openssl",
    ] {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.extension().is_some_and(|x| x == "md") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            let name = path.display().to_string();
            match sections::split(&text, &name) {
                Ok(s) if s.pieces.len() == 1 && s.unread.is_none() => seen += 1,
                Ok(s) => bad.push(format!(
                    "{name}: {:?} {:?}",
                    s.pieces.iter().map(|p| p.0.name()).collect::<Vec<_>>(),
                    s.unread
                )),
                Err(e) => bad.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(seen > 30, "{seen}");
}
