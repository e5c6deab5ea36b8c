//! Fuzz target: the /proc and /sys parsers of sysgauge-host. The files are
//! the kernel's, but a container, an odd kernel or a captured tree
//! (`--sysroot`) can hold anything; none may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sysgauge_host as h;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = h::parse_diskstats(text);
    let _ = h::parse_mountinfo(text);
    let _ = h::decode_octal_escapes(text);
    let _ = h::parse_meminfo(text);
    let _ = h::parse_swaps(text);
    let _ = h::parse_selected(text);
    let _ = h::procs::parse_stat(text);
    let _ = h::parse_os_release(text);
    let _ = h::parse_cpuinfo(text);
    let _ = h::parse_cpu_list(text);
    let _ = h::parse_cache_size(text);
    let _ = h::parse_loadavg(text);
    let _ = h::parse_uptime(text);
    let _ = h::parse_stat_btime(text);
    let _ = h::nominal_mhz_from_model(text);
});
