//! Fuzz target: other tools' outputs as `sysgauge import` reads them — the
//! `openssl speed` table and `-mr` records, mbw, Bonnie++ (table and CSV),
//! nbench, hyperfine's and fio's JSON and sysbench's text. Each parser must
//! refuse bad text with an error, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_bench::cpu::nbench::parse_nbench;
use sysgauge_bench::disk::bonnie::parse_bonnie;
use sysgauge_bench::disk::fio::parse_fio;
use sysgauge_bench::memory::mbw::parse_mbw;
use sysgauge_crypto::openssl_speed;
use sysgauge_bench::startup::hyperfine::parse_hyperfine;
use sysgauge_bench::sysbench::parse_sysbench;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let at = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
    if let Ok(report) = openssl_speed::parse(text) {
        let _ = openssl_speed::to_results_with(&report, at, &|_| Some(1));
    }
    let _ = parse_mbw(text, at);
    let _ = parse_bonnie(text, at);
    let _ = parse_nbench(text, at);
    let _ = parse_hyperfine(text, at);
    let _ = parse_fio(text, at);
    let _ = parse_sysbench(text, at);
});
