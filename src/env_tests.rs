//! Environment capture tests: parsers on text from other machines, and a capture here.

use super::*;

/// Two sockets, one core each, two threads per core, numbered the way Linux
/// enumerates them (cpu0 and cpu1 are different sockets, cpu2 is cpu0's
/// sibling). Abbreviated from a dual-socket Xeon Gold 6248 under KVM.
const TWO_SOCKETS: &str = "\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
stepping\t: 7
cpu MHz\t\t: 2494.140
cache size\t: 28160 KB
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
apicid\t\t: 0
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht syscall nx avx512f hypervisor lahf_lm
bogomips\t: 4988.28

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
physical id\t: 1
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
apicid\t\t: 64
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht syscall nx avx512f hypervisor lahf_lm

processor\t: 2
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
apicid\t\t: 1
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht syscall nx avx512f hypervisor lahf_lm

processor\t: 3
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
physical id\t: 1
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
apicid\t\t: 65
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht syscall nx avx512f hypervisor lahf_lm
";

#[test]
fn cpuinfo_two_sockets_counts_threads_and_cores() {
    let info = parse_cpuinfo(TWO_SOCKETS);
    assert_eq!(
        info.model.as_deref(),
        Some("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz")
    );
    assert_eq!(info.logical, 4);
    // Core id 0 on each socket: counting core ids alone would say 1.
    assert_eq!(info.physical_cores, Some(2));
    assert!(info.hypervisor);
    // avx512f alone, without SSE4 and AVX2, reaches no level above the first.
    assert_eq!(info.x86_64_level, Some(1));
}

#[test]
fn x86_64_levels_need_every_feature_of_each_level() {
    let v2 = "fpu sse sse2 cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3";
    let v3 = format!("{v2} avx avx2 bmi1 bmi2 f16c fma abm movbe xsave");
    let v4 = format!("{v3} avx512f avx512bw avx512cd avx512dq avx512vl");
    assert_eq!(x86_64_level("fpu sse sse2"), 1);
    assert_eq!(x86_64_level(v2), 2);
    assert_eq!(x86_64_level(&v3), 3);
    assert_eq!(x86_64_level(&v4), 4);
    // A v4 feature set missing one v3 feature (movbe) stays at v2.
    assert_eq!(x86_64_level(&v4.replace(" movbe", "")), 2);
}

#[test]
fn cpuinfo_without_topology_or_model_name() {
    // aarch64 cpuinfo: no `model name`, no physical/core ids, no `flags`.
    let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n\n\
               processor\t: 1\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\n";
    let info = parse_cpuinfo(arm);
    assert_eq!(info.logical, 2);
    assert_eq!(info.physical_cores, None);
    assert_eq!(info.model.as_deref(), Some("BCM2835"));
    assert!(!info.hypervisor);
    assert_eq!(info.x86_64_level, None);
    assert_eq!(parse_cpuinfo(""), CpuInfo::default());
}

#[test]
fn meminfo_total_in_bytes() {
    let text = "MemTotal:       24579104 kB\nMemFree:         1048576 kB\n";
    assert_eq!(parse_meminfo(text), Some(24_579_104 * 1024));
    assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
}

#[test]
fn thp_selected_mode() {
    assert_eq!(
        parse_thp("always [madvise] never\n").as_deref(),
        Some("madvise")
    );
    assert_eq!(
        parse_thp("[always] madvise never").as_deref(),
        Some("always")
    );
    assert_eq!(parse_thp("always madvise never"), None);
}

#[test]
fn os_release_pretty_name() {
    let text = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
    assert_eq!(
        parse_os_release(text).as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    assert_eq!(parse_os_release("NAME=x\n"), None);
}

#[test]
fn cache_names() {
    assert_eq!(format_cache("1", "Data", "32K"), "L1d 32K");
    assert_eq!(format_cache("1", "Instruction", "32K"), "L1i 32K");
    assert_eq!(format_cache("3", "Unified", "32768K"), "L3 32768K");
}

#[test]
fn nvidia_smi_two_gpus() {
    // `--format=csv,noheader` carries units; `nounits` does not; old drivers say [N/A].
    let text = "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 9.0\n\
                NVIDIA A10, 550.54.15, 23028, [N/A]\n\n";
    let gpus = parse_nvidia_smi(text);
    assert_eq!(
        gpus,
        vec![
            Gpu {
                name: "NVIDIA H100 80GB HBM3".into(),
                driver: "550.54.15".into(),
                memory_mib: Some(81_559),
                compute_capability: Some("9.0".into()),
            },
            Gpu {
                name: "NVIDIA A10".into(),
                driver: "550.54.15".into(),
                memory_mib: Some(23_028),
                compute_capability: None,
            },
        ]
    );
    assert!(parse_nvidia_smi("").is_empty());
}

#[test]
fn perf_stat_with_a_count() {
    let text = "# started on Sun Nov 22 12:34:56 2026\n\n253721,,instructions:u,399061,100.00,,\n";
    assert_eq!(parse_perf_stat(text), Some(253_721));
}

#[test]
fn perf_stat_without_counters() {
    // What perf prints, with exit code 0, in a VM without a virtual PMU.
    assert_eq!(
        parse_perf_stat("<not supported>,,instructions:u,0,100.00,,\n"),
        None
    );
    assert_eq!(
        parse_perf_stat("<not counted>,,instructions:u,0,0.00,,\n"),
        None
    );
    assert_eq!(parse_perf_stat(""), None);
}

#[test]
fn utc_formatting() {
    // Expected values from `date -u -d @SECS +%FT%TZ`.
    assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(format_utc(1_795_350_896), "2026-11-22T12:34:56Z");
    assert_eq!(format_utc(4_102_444_799), "2099-12-31T23:59:59Z");
}

#[test]
fn environment_round_trips_through_json() {
    let env = capture();
    let json = serde_json::to_string(&env).unwrap();
    assert_eq!(serde_json::from_str::<Environment>(&json).unwrap(), env);
}

#[test]
fn capture_here_has_a_cpu() {
    let env = capture();
    assert!(env.logical_cpus >= 1);
    assert!(env.cpu_model.as_deref().is_some_and(|m| !m.is_empty()));
    assert_eq!(env.tools.len(), TOOLS.len());
    let text = env.render_text();
    assert!(text.contains("cpu:"), "{text}");
    assert!(text.contains("perf counters:"), "{text}");
    assert!(text.ends_with('\n'), "{text}");
}

/// Boost read from either kind of sysfs, and the warning when the
/// frequency is left to float.
#[test]
fn boost_and_governor_are_read_and_a_floating_frequency_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(boost(dir.path()), None);
    fs_err::create_dir_all(dir.path().join("intel_pstate")).unwrap();
    fs_err::write(dir.path().join("intel_pstate/no_turbo"), "1\n").unwrap();
    assert_eq!(boost(dir.path()), Some(false));
    fs_err::write(dir.path().join("intel_pstate/no_turbo"), "0\n").unwrap();
    assert_eq!(boost(dir.path()), Some(true));
    // cpufreq's own control wins where both exist.
    fs_err::create_dir_all(dir.path().join("cpufreq")).unwrap();
    fs_err::write(dir.path().join("cpufreq/boost"), "0\n").unwrap();
    assert_eq!(boost(dir.path()), Some(false));

    let mut env = capture();
    env.cpu_governor = None;
    env.cpu_boost = None;
    assert_eq!(
        env.frequency_warning(),
        None,
        "nothing readable, nothing said"
    );
    env.cpu_governor = Some("performance".to_owned());
    env.cpu_boost = Some(false);
    assert_eq!(env.frequency_warning(), None);
    env.cpu_governor = Some("powersave".to_owned());
    env.cpu_boost = Some(true);
    let w = env.frequency_warning().unwrap();
    assert!(
        w.contains("`powersave`") && w.contains("boost (turbo) is on") && w.contains("cpupower"),
        "{w}"
    );
}
