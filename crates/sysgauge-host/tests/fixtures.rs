//! Collects each captured or written machine under `tests/fixtures/` through
//! the same `collect` the live machine uses, and checks the facts a person
//! reading those files would state. See `tests/fixtures/README.md` for where
//! each tree comes from.
#![allow(clippy::unwrap_used)] // a test panics on the first broken step

use std::path::{Path, PathBuf};
use sysgauge_core::host::{CacheInfo, HostInfo};
use sysgauge_host::{collect, diskstats_at, facts_table, SysRoot};

fn fixture(name: &str) -> SysRoot {
    SysRoot::under(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

fn cache(host: &HostInfo, level: u8, kind: &str) -> CacheInfo {
    let found = host
        .cpu
        .caches
        .iter()
        .find(|c| c.level == level && c.kind == kind);
    match found {
        Some(c) => c.clone(),
        None => panic!("no L{level} {kind} cache in {:?}", host.cpu.caches),
    }
}

fn row<'a>(rows: &'a [(String, String)], label: &str) -> &'a str {
    match rows.iter().find(|(l, _)| l == label) {
        Some((_, v)) => v,
        None => panic!("no row {label:?} in {rows:#?}"),
    }
}

/// The names of the block devices `collect` listed, in its order.
fn block_device_names(host: &HostInfo) -> Vec<&str> {
    host.storage
        .block_devices
        .iter()
        .map(|d| d.name.as_str())
        .collect()
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

#[test]
fn firecracker_vm_captured_here() {
    let root = fixture("firecracker-vm");
    let host = collect(&root, Some(Path::new("/work/scratch/run-1")));
    let cpu = &host.cpu;
    assert_eq!(host.hostname.as_deref(), Some("vm"));
    assert_eq!(cpu.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
    assert_eq!(cpu.vendor.as_deref(), Some("GenuineIntel"));
    // The model this guest is told (167) is none sysgauge names: nothing
    // is guessed.
    assert_eq!((cpu.family, cpu.model_number), (Some(6), Some(167)));
    assert_eq!(cpu.microarchitecture, None);
    assert_eq!(cpu.architecture.as_deref(), Some("x86_64"));
    assert_eq!(cpu.kernel_bits, Some(64));
    // Userland bits describe the running build, not a captured tree.
    assert_eq!(cpu.userland_bits, None);
    assert_eq!(
        (cpu.sockets, cpu.cores, cpu.threads),
        (Some(1), Some(2), Some(2))
    );
    assert_eq!(cpu.bogomips, Some(5200.0));
    assert_eq!(cpu.nominal_mhz, None, "the model string has no @ clock");
    assert_eq!(cpu.reported_mhz, Some(2600.0));
    assert_eq!(cpu.cpufreq_max_mhz, None, "no cpufreq in this VM");
    assert_eq!(cpu.governor, None);
    assert_eq!(
        cpu.virtualization.as_deref(),
        Some("vm"),
        "hypervisor flag, no DMI"
    );
    for f in [
        "aes",
        "pclmulqdq",
        "sha_ni",
        "avx2",
        "avx512f",
        "vaes",
        "vpclmulqdq",
    ] {
        assert!(
            cpu.features.iter().any(|x| x == f),
            "missing {f} in {:?}",
            cpu.features
        );
    }
    let l1d = cache(&host, 1, "data");
    assert_eq!(
        (l1d.size_bytes, l1d.instances, l1d.shared_by),
        (48 * KIB, Some(2), Some(1))
    );
    assert_eq!(cache(&host, 1, "instruction").size_bytes, 64 * KIB);
    assert_eq!(cache(&host, 2, "unified").size_bytes, 2048 * KIB);
    let l3 = cache(&host, 3, "unified");
    assert_eq!(
        (l3.size_bytes, l3.instances, l3.shared_by),
        (491_520 * KIB, Some(1), Some(2))
    );

    let mem = &host.memory;
    assert_eq!(mem.total_bytes, Some(24_684_084 * KIB));
    assert_eq!(mem.available_bytes, Some(23_884_096 * KIB));
    assert_eq!(mem.swap_total_bytes, Some(0));
    assert!(mem.swaps.is_empty());
    assert!(mem.zram.is_empty(), "zram0 has disksize 0: unconfigured");
    assert_eq!(mem.transparent_hugepages.as_deref(), Some("madvise"));

    assert_eq!(host.os.kernel_release.as_deref(), Some("6.18.44-fc-v669"));
    assert_eq!(
        host.os.kernel_version.as_deref(),
        Some("#1 SMP PREEMPT_DYNAMIC @0")
    );
    assert_eq!(
        host.os.distribution.as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    assert_eq!(host.os.distribution_id.as_deref(), Some("debian"));
    assert_eq!(host.os.distribution_version.as_deref(), Some("12"));
    assert_eq!(host.os.container, None);

    // securityfs is not mounted, so the LSM list is unknown; but AppArmor has
    // no /sys/module entry and selinuxfs is not a known file system.
    assert!(host.security.lsms.is_empty());
    assert_eq!(host.security.apparmor.as_deref(), Some("disabled"));
    assert_eq!(host.security.selinux.as_deref(), Some("disabled"));
    assert!(!host.security.mac_lsm_active());

    let scratch = host.storage.scratch.as_ref().expect("scratch fs");
    assert_eq!(scratch.path, "/work/scratch/run-1");
    assert_eq!(scratch.mount_point.as_deref(), Some("/"));
    assert_eq!(scratch.fs_type.as_deref(), Some("ext4"));
    assert_eq!(scratch.source.as_deref(), Some("/dev/vda"));
    assert_eq!(scratch.block_device.as_deref(), Some("vda"));
    assert_eq!(scratch.mount_options.as_deref(), Some("rw,relatime"));
    assert_eq!(
        scratch.fs_options.as_deref(),
        Some("rw,discard,resv_strict,resuid=65534,resgid=65534")
    );
    assert!(!scratch.ram_backed);
    assert_eq!(scratch.free_bytes, None, "statvfs is for live roots only");
    let tmp = host.storage.tmp.as_ref().expect("tmp fs");
    assert_eq!(tmp.block_device.as_deref(), Some("vda"));
    assert!(!tmp.ram_backed);

    let names = block_device_names(&host);
    assert_eq!(names, ["vda"], "loop0 and zram0 have size 0");
    let vda = &host.storage.block_devices[0];
    assert_eq!(vda.size_bytes, Some(536_870_912 * 512));
    assert_eq!(vda.rotational, Some(true));
    assert_eq!(
        (vda.logical_block_size, vda.physical_block_size),
        (Some(512), Some(4096))
    );
    assert_eq!(vda.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(vda.removable, Some(false));
    assert_eq!(vda.model, None);

    assert_eq!(host.load.load1, Some(0.66));
    assert_eq!(host.load.uptime_seconds, Some(932.66));
    assert_eq!(
        host.load.boot_time.map(|t| t.timestamp()),
        Some(1_795_320_712)
    );

    let stats = diskstats_at(&root);
    let vda_stats = stats.iter().find(|s| s.name == "vda").expect("vda stats");
    assert_eq!(vda_stats.sectors_written, 2_634_800);
    assert_eq!(vda_stats.flushes_completed, Some(656));

    let rows = facts_table(&host);
    assert_eq!(row(&rows, "Nominal clock"), "unknown");
    assert_eq!(row(&rows, "Swap devices"), "none");
    assert_eq!(row(&rows, "LSMs"), "unknown");
    assert!(row(&rows, "Disk vda").contains("blocks 512/4096"));
}

#[test]
fn two_socket_xeon_server() {
    let root = fixture("server-2s-xeon");
    let host = collect(&root, Some(Path::new("/data/sysgauge/./run-7")));
    let cpu = &host.cpu;
    assert_eq!(host.hostname.as_deref(), Some("db-01"));
    assert_eq!(
        cpu.model.as_deref(),
        Some("Intel(R) Xeon(R) Gold 6126 CPU @ 2.60GHz")
    );
    assert_eq!(
        cpu.architecture.as_deref(),
        Some("x86_64"),
        "inferred: no fdiv_bug lines"
    );
    assert_eq!(cpu.kernel_bits, Some(64));
    assert_eq!(cpu.sockets, Some(2));
    assert_eq!(cpu.cores, Some(24));
    assert_eq!(cpu.threads, Some(48));
    assert_eq!(cpu.nominal_mhz, Some(2600.0));
    // The CPUID numbers name the generation the model string does not.
    assert_eq!((cpu.family, cpu.model_number), (Some(6), Some(85)));
    assert_eq!(
        cpu.microarchitecture.as_deref(),
        Some("Intel Skylake-SP / Cascade Lake")
    );
    assert_eq!(cpu.base_mhz, Some(2600.0));
    assert_eq!(cpu.reported_mhz, Some(1200.011));
    assert_eq!(cpu.cpufreq_min_mhz, Some(1000.0));
    assert_eq!(cpu.cpufreq_max_mhz, Some(3700.0));
    assert_eq!(cpu.cpufreq_cur_mhz, Some(1200.011));
    assert_eq!(cpu.governor.as_deref(), Some("powersave"));
    assert_eq!(cpu.scaling_driver.as_deref(), Some("intel_pstate"));
    assert_eq!(cpu.virtualization.as_deref(), Some("none"));
    assert_eq!(cpu.bogomips, Some(5200.0));
    assert!(cpu.features.iter().any(|f| f == "avx512f"));
    assert!(cpu.features.iter().any(|f| f == "aes"));
    assert!(
        !cpu.features.iter().any(|f| f == "sha_ni"),
        "Skylake-SP has no SHA extensions"
    );

    let l1d = cache(&host, 1, "data");
    assert_eq!(
        (l1d.size_bytes, l1d.instances, l1d.shared_by),
        (32 * KIB, Some(24), Some(2))
    );
    let l2 = cache(&host, 2, "unified");
    assert_eq!((l2.size_bytes, l2.instances), (MIB, Some(24)));
    let l3 = cache(&host, 3, "unified");
    assert_eq!(
        (l3.size_bytes, l3.instances, l3.shared_by),
        (19_712 * KIB, Some(2), Some(24))
    );
    assert_eq!(host.cpu.caches.len(), 4);

    let mem = &host.memory;
    assert_eq!(mem.total_bytes, Some(196_552_732 * KIB));
    assert_eq!(mem.swaps.len(), 1);
    let swap = &mem.swaps[0];
    assert_eq!(
        (swap.path.as_str(), swap.kind.as_str()),
        ("/dev/nvme0n1p3", "partition")
    );
    assert_eq!(
        (swap.size_bytes, swap.used_bytes, swap.priority),
        (8_388_604 * KIB, 4096 * KIB, -2)
    );
    assert!(mem.zram.is_empty());

    assert_eq!(
        host.os.distribution.as_deref(),
        Some("Ubuntu 22.04.4 LTS"),
        "from usr/lib/os-release"
    );
    assert_eq!(host.os.distribution_version.as_deref(), Some("22.04"));
    assert_eq!(
        host.os.kernel_release.as_deref(),
        Some("5.15.0-105-generic")
    );

    let sec = &host.security;
    assert_eq!(
        sec.lsms,
        ["lockdown", "capability", "landlock", "yama", "apparmor"]
    );
    assert_eq!(sec.apparmor.as_deref(), Some("enabled"));
    assert_eq!(sec.selinux.as_deref(), Some("disabled"));
    assert!(sec.mac_lsm_active());

    let scratch = host.storage.scratch.as_ref().expect("scratch fs");
    assert_eq!(scratch.mount_point.as_deref(), Some("/data"));
    assert_eq!(scratch.fs_type.as_deref(), Some("xfs"));
    assert_eq!(scratch.source.as_deref(), Some("/dev/sda1"));
    assert_eq!(
        scratch.block_device.as_deref(),
        Some("sda"),
        "partition sda1 -> disk sda"
    );
    assert!(!scratch.ram_backed);
    let tmp = host.storage.tmp.as_ref().expect("tmp fs");
    assert_eq!(tmp.fs_type.as_deref(), Some("tmpfs"));
    assert!(tmp.ram_backed);
    assert_eq!(tmp.block_device, None);

    // A mount point with an escaped space, and the root on an NVMe partition.
    let backups =
        sysgauge_host::fs_info_at(&root, Path::new("/srv/old backups/2024")).expect("backups fs");
    assert_eq!(backups.mount_point.as_deref(), Some("/srv/old backups"));
    assert_eq!(backups.block_device.as_deref(), Some("sda"));
    let home = sysgauge_host::fs_info_at(&root, Path::new("/home/admin")).expect("root fs");
    assert_eq!(home.block_device.as_deref(), Some("nvme0n1"));

    let names = block_device_names(&host);
    assert_eq!(
        names,
        ["nvme0n1", "sda"],
        "empty card reader and loop0 are skipped"
    );
    let nvme = &host.storage.block_devices[0];
    assert_eq!(nvme.model.as_deref(), Some("SAMSUNG MZQLB960HAJR-00007"));
    assert_eq!(nvme.rotational, Some(false));
    assert_eq!(nvme.scheduler.as_deref(), Some("none"));
    assert_eq!(nvme.size_bytes, Some(1_875_385_008 * 512));
    let sda = &host.storage.block_devices[1];
    assert_eq!(sda.model.as_deref(), Some("ST4000NM0035-1V4"));
    assert_eq!(sda.rotational, Some(true));
    assert_eq!(
        (sda.logical_block_size, sda.physical_block_size),
        (Some(512), Some(4096))
    );
    assert_eq!(sda.scheduler.as_deref(), Some("mq-deadline"));

    assert_eq!(
        host.load.boot_time.map(|t| t.timestamp()),
        Some(1_714_000_000)
    );

    let rows = facts_table(&host);
    assert_eq!(row(&rows, "Nominal clock"), "2600 MHz");
    assert_eq!(row(&rows, "Sockets"), "2");
    assert_eq!(row(&rows, "Cache L3"), "19.2 MiB x 2 (shared by 24 CPUs)");
    assert_eq!(row(&rows, "MAC LSM active"), "yes");
    assert!(row(&rows, "/tmp fs").contains("RAM-backed"));
    assert!(row(&rows, "Swap /dev/nvme0n1p3").starts_with("partition, 8.0 GiB"));
}

#[test]
fn raspberry_pi_3_on_a_32_bit_kernel() {
    let root = fixture("raspberry-pi3-armv7l");
    let host = collect(&root, Some(Path::new("/home/pi/sysgauge")));
    let cpu = &host.cpu;
    assert_eq!(host.hostname.as_deref(), Some("raspberrypi"));
    assert_eq!(cpu.model.as_deref(), Some("Raspberry Pi 3 Model B Rev 1.2"));
    assert_eq!((cpu.family, cpu.microarchitecture.as_deref()), (None, None));
    assert_eq!(cpu.vendor.as_deref(), Some("ARM"));
    assert_eq!(cpu.architecture.as_deref(), Some("armv7l"));
    assert_eq!(cpu.kernel_bits, Some(32));
    assert_eq!(
        (cpu.sockets, cpu.cores, cpu.threads),
        (Some(1), Some(4), Some(4))
    );
    assert_eq!(cpu.bogomips, Some(38.4));
    assert_eq!(cpu.nominal_mhz, None);
    assert_eq!(cpu.reported_mhz, None);
    assert_eq!(cpu.base_mhz, None);
    assert_eq!(cpu.cpufreq_min_mhz, Some(600.0));
    assert_eq!(cpu.cpufreq_max_mhz, Some(1200.0));
    assert_eq!(cpu.cpufreq_cur_mhz, Some(600.0));
    assert_eq!(cpu.governor.as_deref(), Some("ondemand"));
    assert_eq!(cpu.scaling_driver.as_deref(), Some("cpufreq-dt"));
    assert_eq!(
        cpu.virtualization.as_deref(),
        Some("none"),
        "a real board model"
    );
    assert_eq!(cpu.features, ["neon", "vfpv4", "crc32"]);
    assert!(cpu.caches.is_empty(), "no cache description on this kernel");

    let mem = &host.memory;
    assert_eq!(mem.total_bytes, Some(945_164 * KIB));
    assert_eq!(mem.swaps.len(), 2);
    assert_eq!(
        (mem.swaps[0].path.as_str(), mem.swaps[0].priority),
        ("/dev/zram0", 100)
    );
    assert_eq!(
        (mem.swaps[1].path.as_str(), mem.swaps[1].kind.as_str()),
        ("/var/swap", "file")
    );
    assert_eq!(mem.zram.len(), 1, "zram1 is unconfigured");
    assert_eq!(mem.zram[0].name, "zram0");
    assert_eq!(mem.zram[0].algorithm.as_deref(), Some("lz4"));
    assert_eq!(mem.zram[0].disksize_bytes, Some(512 * MIB));
    assert_eq!(mem.transparent_hugepages, None);

    assert_eq!(
        host.os.distribution.as_deref(),
        Some("Raspbian GNU/Linux 11 (bullseye)")
    );
    assert_eq!(host.os.kernel_release.as_deref(), Some("6.1.21-v7+"));
    assert_eq!(host.security.lsms, ["capability"]);
    assert_eq!(host.security.apparmor.as_deref(), Some("disabled"));
    assert!(!host.security.mac_lsm_active());

    let scratch = host.storage.scratch.as_ref().expect("scratch fs");
    assert_eq!(scratch.source.as_deref(), Some("/dev/root"));
    assert_eq!(
        scratch.block_device.as_deref(),
        Some("mmcblk0"),
        "via 179:2 -> mmcblk0p2"
    );
    let tmp = host.storage.tmp.as_ref().expect("tmp fs");
    assert_eq!(tmp.mount_point.as_deref(), Some("/"));
    assert!(!tmp.ram_backed);

    let names = block_device_names(&host);
    assert_eq!(names, ["mmcblk0", "zram0"]);
    let sd = &host.storage.block_devices[0];
    assert_eq!(sd.model.as_deref(), Some("SC16G"));
    assert_eq!(sd.rotational, Some(false));
    assert_eq!(sd.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(host.storage.block_devices[1].scheduler, None);

    let rows = facts_table(&host);
    assert_eq!(row(&rows, "Nominal clock"), "unknown");
    assert_eq!(row(&rows, "Caches"), "unknown");
    assert_eq!(row(&rows, "zram zram0"), "512 MiB, algorithm lz4");
    assert_eq!(row(&rows, "Architecture"), "armv7l");
    assert_eq!(row(&rows, "BogoMIPS"), "38.40");
}

#[test]
fn an_empty_tree_is_all_unknown() {
    let dir = tempfile::tempdir().expect("temp dir");
    let host = collect(&SysRoot::under(dir.path()), Some(Path::new("/x")));
    assert_eq!(host.cpu.model, None);
    assert_eq!(host.cpu.threads, None);
    assert_eq!(host.cpu.virtualization, None);
    assert_eq!(host.memory.total_bytes, None);
    assert_eq!(host.storage.scratch, None);
    assert!(host.storage.block_devices.is_empty());
    assert_eq!(host.security.apparmor, None);
    assert_eq!(host.security.selinux, None);
    let rows = facts_table(&host);
    assert_eq!(row(&rows, "CPU model"), "unknown");
}

/// LUKS on one NVMe partition: dm-0's only slave is nvme0n1p3, whose disk is
/// nvme0n1; a file system on dm-0 is backed by nvme0n1.
#[test]
fn device_mapper_on_one_partition_resolves_to_the_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = dir.path();
    let write = |rel: &str, text: &str| {
        let path = base.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "proc/self/mountinfo",
        "29 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/root rw\n",
    );
    write(
        "sys/dev/block/253:0/uevent",
        "MAJOR=253\nMINOR=0\nDEVNAME=dm-0\nDEVTYPE=disk\n",
    );
    write("sys/block/dm-0/size", "100\n");
    write("sys/block/dm-0/slaves/nvme0n1p3/partition", "3\n");
    write("sys/block/nvme0n1/size", "2000\n");
    write("sys/block/nvme0n1/nvme0n1p3/partition", "3\n");
    let fs = sysgauge_host::fs_info_at(&SysRoot::under(base), Path::new("/var/tmp")).expect("fs");
    assert_eq!(fs.block_device.as_deref(), Some("nvme0n1"));
    assert_eq!(fs.source.as_deref(), Some("/dev/mapper/root"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever the files say, collecting never panics.
    #[test]
    fn collecting_garbage_never_panics(
        cpuinfo in "\\PC{0,200}",
        mountinfo in "([0-9: /a-z\\\\-]{0,40}\n){0,4}",
        numbers in "[0-9a-z,\\- \\[\\]\n]{0,24}",
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path();
        let files = [
            ("proc/cpuinfo", cpuinfo.as_str()),
            ("proc/self/mountinfo", mountinfo.as_str()),
            ("proc/meminfo", numbers.as_str()),
            ("proc/swaps", numbers.as_str()),
            ("proc/stat", numbers.as_str()),
            ("proc/loadavg", numbers.as_str()),
            ("proc/uptime", numbers.as_str()),
            ("sys/devices/system/cpu/online", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/topology/core_cpus_list", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/cache/index0/size", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/cache/index0/level", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/cache/index0/type", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/cache/index0/shared_cpu_list", numbers.as_str()),
            ("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", numbers.as_str()),
            ("sys/block/sda/size", numbers.as_str()),
            ("sys/block/sda/queue/scheduler", numbers.as_str()),
            ("sys/block/zram0/comp_algorithm", numbers.as_str()),
            ("sys/dev/block/8:1/uevent", numbers.as_str()),
        ];
        for (rel, text) in files {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let host = collect(&SysRoot::under(base), Some(Path::new("/a/b")));
        let _ = facts_table(&host);
    }
}
