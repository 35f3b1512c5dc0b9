//! The machine and software a run happened on: CPU, caches, memory, kernel,
//! distribution, THP, governor, tool versions, perf counters, LBR and GPUs.
//! Nothing here fails: what cannot be read is recorded as unknown.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::process::capture as run_tool;

const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

/// The machine and software a run happened on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// When this was captured, RFC 3339 UTC.
    pub captured_at: String,
    pub hostname: Option<String>,
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// Distinct (physical id, core id) pairs; `None` when cpuinfo lacks them.
    pub physical_cores: Option<usize>,
    /// Whether the CPU reports running under a hypervisor.
    pub virtualized: bool,
    /// Caches of cpu0, e.g. "L1d 32K", "L2 1024K".
    pub caches: Vec<String>,
    /// Total memory, in bytes.
    pub memory_bytes: Option<u64>,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// `PRETTY_NAME` from /etc/os-release.
    pub distro: Option<String>,
    /// Transparent hugepage mode: always, madvise or never.
    pub transparent_hugepages: Option<String>,
    /// cpu0's frequency governor, where cpufreq exists.
    pub cpu_governor: Option<String>,
    /// `/proc/sys/kernel/perf_event_paranoid`.
    pub perf_event_paranoid: Option<i64>,
    /// Whether `perf stat -e instructions` counts here (hardware counters usable).
    pub perf_counters: bool,
    /// Whether the CPU offers branch stacks (LBR) to perf.
    pub lbr: bool,
    /// First line of `--version` of each tool; `None` when absent.
    pub tools: Vec<ToolVersion>,
    /// NVIDIA GPUs from nvidia-smi; empty when there is none or no driver.
    pub gpus: Vec<Gpu>,
}

/// A tool and its version line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolVersion {
    pub name: String,
    pub version: Option<String>,
}

/// One GPU as nvidia-smi reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gpu {
    pub name: String,
    pub driver: String,
    /// Total memory, in MiB.
    pub memory_mib: Option<u64>,
    pub compute_capability: Option<String>,
}

/// Capture the environment now.
pub fn capture() -> Environment {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let cpu = parse_cpuinfo(&cpuinfo);
    let perf_counters = perf_counts_instructions();
    Environment {
        captured_at: format_utc(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
        ),
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model: cpu.model,
        logical_cpus: std::thread::available_parallelism().map_or(cpu.logical, usize::from),
        physical_cores: cpu.physical_cores,
        virtualized: cpu.hypervisor,
        caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
        memory_bytes: read("/proc/meminfo").and_then(|m| parse_meminfo(&m)),
        kernel: read("/proc/sys/kernel/osrelease"),
        distro: read("/etc/os-release").and_then(|t| parse_os_release(&t)),
        transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|t| parse_bracketed(&t)),
        cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        perf_event_paranoid: read("/proc/sys/kernel/perf_event_paranoid")
            .and_then(|t| t.parse().ok()),
        perf_counters,
        lbr: perf_counters && has_lbr(),
        tools: ["gcc", "g++", "clang", "ld", "make", "valgrind", "perf"]
            .iter()
            .map(|t| ToolVersion {
                name: (*t).to_owned(),
                version: tool_version(t),
            })
            .collect(),
        gpus: gpus(),
    }
}

fn read(path: &str) -> Option<String> {
    let text = fs_err::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// What /proc/cpuinfo says about the CPU.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CpuInfo {
    pub model: Option<String>,
    pub logical: usize,
    pub physical_cores: Option<usize>,
    pub hypervisor: bool,
}

pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut cores = std::collections::BTreeSet::new();
    let mut physical = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => info.logical += 1,
            "model name" if info.model.is_none() => info.model = Some(value.to_owned()),
            "physical id" => physical = Some(value.to_owned()),
            "core id" => {
                cores.insert((physical.clone().unwrap_or_default(), value.to_owned()));
            }
            "flags" => info.hypervisor |= value.split_whitespace().any(|f| f == "hypervisor"),
            _ => {}
        }
    }
    info.physical_cores = (!cores.is_empty()).then_some(cores.len());
    info
}

/// `MemTotal` in bytes.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn parse_os_release(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("PRETTY_NAME="))?;
    Some(line["PRETTY_NAME=".len()..].trim_matches('"').to_owned())
}

/// The selected word in sysfs's "always [madvise] never" style.
pub fn parse_bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_owned())
}

fn caches(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = fs_err::read_dir(dir) else {
        return out;
    };
    let mut indexes: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("level").exists())
        .collect();
    indexes.sort();
    for index in indexes {
        let get = |name: &str| {
            fs_err::read_to_string(index.join(name))
                .map(|s| s.trim().to_owned())
                .unwrap_or_default()
        };
        let kind = match get("type").as_str() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        };
        out.push(format!("L{}{kind} {}", get("level"), get("size")));
    }
    out
}

fn tool_version(tool: &str) -> Option<String> {
    let out = run_tool(tool, &["--version"], TOOL_TIMEOUT).ok()?;
    if !out.success() {
        return None;
    }
    let text = if out.stdout.trim().is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    text.lines().next().map(|l| l.trim().to_owned())
}

/// Whether `perf stat` can count instructions of a trivial command.
fn perf_counts_instructions() -> bool {
    run_tool(
        "perf",
        &["stat", "-x", ",", "-e", "instructions:u", "--", "true"],
        TOOL_TIMEOUT,
    )
    .is_ok_and(|out| out.success() && parse_perf_stat(&out.stderr).is_some())
}

/// The instruction count in `perf stat -x,` output, if one was counted.
pub fn parse_perf_stat(text: &str) -> Option<u64> {
    crate::measure::instructions::parse_perf_csv(text)
}

/// Branch stacks: the PMU advertises them in sysfs (`caps/branches` on Intel
/// LBR, non-zero), or perf can record with `-b`.
fn has_lbr() -> bool {
    let caps = read("/sys/bus/event_source/devices/cpu/caps/branches");
    if caps.is_some_and(|c| c != "0") {
        return true;
    }
    run_tool(
        "perf",
        &["record", "-b", "-o", "/dev/null", "-q", "--", "true"],
        TOOL_TIMEOUT,
    )
    .is_ok_and(|o| o.success())
}

fn gpus() -> Vec<Gpu> {
    let query = "--query-gpu=name,driver_version,memory.total,compute_cap";
    match run_tool(
        "nvidia-smi",
        &[query, "--format=csv,noheader,nounits"],
        TOOL_TIMEOUT,
    ) {
        Ok(out) if out.success() => parse_nvidia_smi(&out.stdout),
        _ => Vec::new(),
    }
}

/// Parse `nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap
/// --format=csv,noheader,nounits` (memory may also carry " MiB").
pub fn parse_nvidia_smi(text: &str) -> Vec<Gpu> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let name = (*fields.first()?).to_owned();
            Some(Gpu {
                name,
                driver: fields.get(1).map(|s| (*s).to_owned()).unwrap_or_default(),
                memory_mib: fields
                    .get(2)
                    .and_then(|m| m.trim_end_matches("MiB").trim().parse().ok()),
                compute_capability: fields
                    .get(3)
                    .map(|s| (*s).to_owned())
                    .filter(|s| !s.is_empty() && s != "[N/A]"),
            })
        })
        .collect()
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(unix_secs: u64) -> String {
    let days = i64::try_from(unix_secs / 86_400).unwrap_or(0);
    let rem = unix_secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl Environment {
    /// Aligned `key: value` lines, for `afterburner env` and reports.
    pub fn render_text(&self) -> String {
        let unknown = || "unknown".to_owned();
        let mut rows: Vec<(&str, String)> = vec![
            ("captured", self.captured_at.clone()),
            ("host", self.hostname.clone().unwrap_or_else(unknown)),
            ("cpu", self.cpu_model.clone().unwrap_or_else(unknown)),
            (
                "cores",
                format!(
                    "{} logical, {} physical{}",
                    self.logical_cpus,
                    self.physical_cores.map_or_else(unknown, |c| c.to_string()),
                    if self.virtualized {
                        " (virtualized)"
                    } else {
                        ""
                    }
                ),
            ),
            (
                "caches",
                if self.caches.is_empty() {
                    unknown()
                } else {
                    self.caches.join(", ")
                },
            ),
            (
                "memory",
                self.memory_bytes.map_or_else(unknown, |b| {
                    format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30))
                }),
            ),
            ("kernel", self.kernel.clone().unwrap_or_else(unknown)),
            ("distro", self.distro.clone().unwrap_or_else(unknown)),
            (
                "thp",
                self.transparent_hugepages.clone().unwrap_or_else(unknown),
            ),
            (
                "governor",
                self.cpu_governor
                    .clone()
                    .unwrap_or_else(|| "none (no cpufreq)".to_owned()),
            ),
            (
                "perf counters",
                yes_no(self.perf_counters, "callgrind counts instructions instead"),
            ),
            ("lbr", yes_no(self.lbr, "no branch stacks")),
        ];
        for tool in &self.tools {
            rows.push((
                tool.name.as_str(),
                tool.version
                    .clone()
                    .unwrap_or_else(|| "not found".to_owned()),
            ));
        }
        if self.gpus.is_empty() {
            rows.push(("gpus", "none".to_owned()));
        }
        for gpu in &self.gpus {
            let memory = gpu.memory_mib.map_or_else(unknown, |m| format!("{m} MiB"));
            let cc = gpu.compute_capability.clone().unwrap_or_else(unknown);
            rows.push((
                "gpu",
                format!(
                    "{}, driver {}, {memory}, compute {cc}",
                    gpu.name, gpu.driver
                ),
            ));
        }
        let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (key, value) in rows {
            let _ = writeln!(out, "{key:>width$}: {value}");
        }
        out
    }
}

fn yes_no(flag: bool, otherwise: &str) -> String {
    if flag {
        "yes".to_owned()
    } else {
        format!("no ({otherwise})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_SOCKETS: &str = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse2 hypervisor\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 2\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 1\ncore id\t\t: 0\n\nprocessor\t: 3\nphysical id\t: 1\ncore id\t\t: 1\n";

    #[test]
    fn cpuinfo_counts_threads_cores_and_hypervisor() {
        let info = parse_cpuinfo(TWO_SOCKETS);
        assert_eq!(
            info.model.as_deref(),
            Some("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz")
        );
        assert_eq!(info.logical, 4);
        assert_eq!(info.physical_cores, Some(3));
        assert!(info.hypervisor);
    }

    #[test]
    fn meminfo_thp_and_os_release() {
        assert_eq!(
            parse_meminfo("MemTotal:       24579104 kB\nMemFree: 1 kB\n"),
            Some(24_579_104 * 1024)
        );
        assert_eq!(
            parse_bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_os_release("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }

    #[test]
    fn nvidia_smi_two_gpus() {
        let text =
            "NVIDIA H100 80GB HBM3, 550.54.15, 81559, 9.0\nNVIDIA A10, 550.54.15, 23028 MiB, 8.6\n";
        let gpus = parse_nvidia_smi(text);
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(gpus[0].memory_mib, Some(81_559));
        assert_eq!(gpus[1].memory_mib, Some(23_028));
        assert_eq!(gpus[1].compute_capability.as_deref(), Some("8.6"));
    }

    #[test]
    fn perf_stat_with_and_without_counters() {
        assert_eq!(
            parse_perf_stat("253,,instructions:u,399061,100.00,,\n"),
            Some(253)
        );
        assert_eq!(
            parse_perf_stat("<not supported>,,instructions:u,0,100.00,,\n"),
            None
        );
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        // date -u -d @1795350896 +%FT%TZ
        assert_eq!(format_utc(1_795_350_896), "2026-11-22T12:34:56Z");
    }

    #[test]
    fn capture_here_has_a_cpu() {
        let env = capture();
        assert!(env.logical_cpus >= 1);
        assert!(env.cpu_model.as_deref().is_some_and(|m| !m.is_empty()));
        let text = env.render_text();
        assert!(text.contains("cpu:"), "{text}");
        assert!(text.contains("perf counters:"), "{text}");
    }
}
