//! The machine and software a run happened on: CPU, caches, memory, kernel,
//! distribution, THP, governor, tool versions, perf counters, LBR and GPUs.
//!
//! Nothing here fails or hangs: every command runs with a short timeout, and
//! whatever cannot be read (a missing file, tool or driver) is recorded as
//! unknown (`None`, `false`, an empty list). The parsers are pure functions of
//! the text they read so they can be tested on samples from other machines.
//!
//! `Environment` is stored as `environment` in `meta.json` and `results.json`
//! (see `docs/results-schema.md`); fields added later carry `#[serde(default)]`
//! so older runs still load.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::process::capture as run_tool;

/// Limit for `--version` calls: they print a line and exit.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// Limit for perf probes and nvidia-smi, which may load a driver first.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Tools whose versions a report records, in the order it shows them.
const TOOLS: [&str; 7] = ["gcc", "g++", "clang", "valgrind", "perf", "make", "ld"];

/// The machine and software a run happened on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environment {
    /// When this was captured: RFC 3339 UTC, to the second (`2026-11-22T12:34:56Z`).
    pub captured_at: String,
    /// Host name (`/proc/sys/kernel/hostname`).
    pub hostname: Option<String>,
    /// CPU model: `model name` from /proc/cpuinfo (or the architecture's equivalent).
    pub cpu_model: Option<String>,
    /// Logical CPUs (hardware threads) online: `processor` entries in /proc/cpuinfo.
    pub logical_cpus: usize,
    /// CPUs this process may run on, after affinity and cgroup quota; lower than
    /// `logical_cpus` in a limited container.
    #[serde(default)]
    pub available_cpus: Option<usize>,
    /// Physical cores: distinct (physical id, core id) pairs; `None` when cpuinfo lacks them.
    pub physical_cores: Option<usize>,
    /// Whether the CPU reports running under a hypervisor (`hypervisor` cpuinfo flag).
    pub virtualized: bool,
    /// The x86-64 micro-architecture level (psABI: 1 to 4) cpu0's flags
    /// reach: what `-march=native` may use. 4 means AVX-512, which
    /// valgrind 3.19 cannot run. `None` off x86-64.
    #[serde(default)]
    pub x86_64_level: Option<u8>,
    /// cpu0's caches as level, type and size, e.g. `["L1d 32K", "L1i 32K", "L2 1024K"]`.
    pub caches: Vec<String>,
    /// Total memory, in bytes (`MemTotal` of /proc/meminfo).
    pub memory_bytes: Option<u64>,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// Kernel build (`uname -v`), e.g. `#1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1`.
    #[serde(default)]
    pub kernel_version: Option<String>,
    /// `PRETTY_NAME` from os-release.
    pub distro: Option<String>,
    /// Transparent hugepage mode: `always`, `madvise` or `never`.
    pub transparent_hugepages: Option<String>,
    /// cpu0's frequency governor (e.g. `performance`); `None` without cpufreq, as in most VMs.
    pub cpu_governor: Option<String>,
    /// Whether the CPU may boost above its base frequency (cpufreq `boost`,
    /// or `intel_pstate`'s `no_turbo` inverted); `None` where neither exists.
    #[serde(default)]
    pub cpu_boost: Option<bool>,
    /// `/proc/sys/kernel/perf_event_paranoid`: -1 (all) … 2 (user space only) … 3+ (none).
    pub perf_event_paranoid: Option<i64>,
    /// Whether `perf stat` counted instructions here (hardware counters usable by this user).
    pub perf_counters: bool,
    /// Whether the CPU offers branch stacks (Intel LBR, AMD BRS or `LbrExtV2`) to perf.
    pub lbr: bool,
    /// Version of each tool in [`TOOLS`] order; `None` when it is missing or fails.
    pub tools: Vec<ToolVersion>,
    /// NVIDIA GPUs from nvidia-smi; empty when there is none, or no driver.
    pub gpus: Vec<Gpu>,
}

/// A tool and its version line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolVersion {
    /// Program name, as looked up on `PATH` (`gcc`, `ld`, …).
    pub name: String,
    /// First line of `NAME --version`, trimmed; `None` when missing or failing.
    pub version: Option<String>,
}

/// One GPU as nvidia-smi reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gpu {
    /// Product name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Driver version, e.g. `550.54.15`.
    pub driver: String,
    /// Total memory, in MiB.
    pub memory_mib: Option<u64>,
    /// CUDA compute capability, e.g. `9.0`; `None` on drivers too old to report it.
    pub compute_capability: Option<String>,
}

/// What /proc/cpuinfo says about the CPU.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    /// `model name` of the first processor (or `Hardware`/`cpu`/`cpu model` elsewhere).
    pub model: Option<String>,
    /// Number of `processor` entries.
    pub logical: usize,
    /// Distinct (physical id, core id) pairs; `None` when no entry has a core id.
    pub physical_cores: Option<usize>,
    /// Whether `flags` lists `hypervisor`.
    pub hypervisor: bool,
    /// The x86-64 level of the first `flags` line; `None` without one.
    pub x86_64_level: Option<u8>,
}

/// Where the CPU's description is read: /proc/cpuinfo, or the file
/// `AFTERBURNER_CPUINFO` names, to see what afterburner (and its tests)
/// decide on another CPU, e.g. one without AVX-512.
fn cpuinfo_path() -> String {
    std::env::var("AFTERBURNER_CPUINFO").unwrap_or_else(|_| "/proc/cpuinfo".to_owned())
}

/// This machine's host name (`/proc/sys/kernel/hostname`: a container's or
/// UTS namespace's own).
pub fn hostname() -> Option<String> {
    read("/proc/sys/kernel/hostname")
}

/// Capture the environment now. Takes well under a second on a normal
/// machine, at most about `PROBE_TIMEOUT` when a tool hangs (probes run in parallel).
pub fn capture() -> Environment {
    let (tools, (perf_counters, lbr), gpus) = probe_tools();
    let cpu = parse_cpuinfo(&read(cpuinfo_path()).unwrap_or_default());
    let available_cpus = thread::available_parallelism().ok().map(usize::from);
    let os_release = read("/etc/os-release").or_else(|| read("/usr/lib/os-release"));
    Environment {
        captured_at: format_utc(now_unix_secs()),
        hostname: hostname(),
        cpu_model: cpu.model,
        logical_cpus: if cpu.logical > 0 {
            cpu.logical
        } else {
            available_cpus.unwrap_or(1)
        },
        available_cpus,
        physical_cores: cpu.physical_cores,
        virtualized: cpu.hypervisor,
        x86_64_level: cpu.x86_64_level,
        caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
        memory_bytes: read("/proc/meminfo").and_then(|m| parse_meminfo(&m)),
        kernel: read("/proc/sys/kernel/osrelease"),
        kernel_version: read("/proc/sys/kernel/version"),
        distro: os_release.and_then(|t| parse_os_release(&t)),
        transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|t| parse_thp(&t)),
        cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        cpu_boost: boost(Path::new("/sys/devices/system/cpu")),
        perf_event_paranoid: read("/proc/sys/kernel/perf_event_paranoid")
            .and_then(|t| t.parse().ok()),
        perf_counters,
        lbr,
        tools,
        gpus,
    }
}

/// Run every external command on its own thread, so the slow ones (nvidia-smi
/// loading its driver, a wedged tool hitting its timeout) overlap.
fn probe_tools() -> (Vec<ToolVersion>, (bool, bool), Vec<Gpu>) {
    thread::scope(|scope| {
        let versions: Vec<_> = TOOLS
            .iter()
            .map(|name| (name, scope.spawn(|| tool_version(name))))
            .collect();
        let counters = scope.spawn(perf_counts_instructions);
        let lbr = scope.spawn(has_branch_stacks);
        let gpus = scope.spawn(query_gpus);
        let tools = versions
            .into_iter()
            .map(|(name, handle)| ToolVersion {
                name: (*name).to_owned(),
                version: handle.join().unwrap_or(None),
            })
            .collect();
        let perf = (
            counters.join().unwrap_or(false),
            lbr.join().unwrap_or(false),
        );
        (tools, perf, gpus.join().unwrap_or_default())
    })
}

fn now_unix_secs() -> u64 {
    // A clock before 1970 is a broken clock; record the epoch rather than fail.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A file's trimmed text; `None` when it is missing, unreadable or blank.
/// Frequency boost from sysfs under `cpu` (`/sys/devices/system/cpu`):
/// `cpufreq/boost` (acpi-cpufreq, amd-pstate: 1 = on) or
/// `intel_pstate/no_turbo` (1 = off).
fn boost(cpu: &Path) -> Option<bool> {
    if let Some(on) = read(cpu.join("cpufreq/boost")) {
        return Some(on == "1");
    }
    read(cpu.join("intel_pstate/no_turbo")).map(|off| off != "1")
}

impl Environment {
    /// The machine class this environment's timings speak for: the CPU
    /// model and the CPUs a bench could use (after affinity and quota), as
    /// `check` compares stored runs. A calibration is cited by reports of
    /// the same class.
    pub fn machine_class(&self) -> String {
        format!(
            "{}, {} CPUs",
            self.cpu_model.as_deref().unwrap_or("unknown CPU"),
            self.available_cpus.unwrap_or(self.logical_cpus)
        )
    }

    /// Why timings here may drift with the CPU's frequency: a governor
    /// other than `performance`, or boost on. `None` when both are fixed,
    /// or when neither can be read (most VMs: nothing to say).
    pub fn frequency_warning(&self) -> Option<String> {
        let mut loose = Vec::new();
        if let Some(g) = self.cpu_governor.as_deref().filter(|g| *g != "performance") {
            loose.push(format!("the frequency governor is `{g}`"));
        }
        if self.cpu_boost == Some(true) {
            loose.push("frequency boost (turbo) is on".to_owned());
        }
        (!loose.is_empty()).then(|| {
            format!(
                "the CPU's frequency was not fixed: {}, so wall times also measure how warm and busy the CPU was; for steadier timings run `cpupower frequency-set -g performance` and turn boost off (`echo 0 > /sys/devices/system/cpu/cpufreq/boost`, or `echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo`)",
                loose.join(" and ")
            )
        })
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    let text = fs_err::read_to_string(path.as_ref()).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Parse /proc/cpuinfo: model, logical CPUs, physical cores, hypervisor flag.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut other_model = None;
    let mut cores = BTreeSet::new();
    let mut socket: Option<&str> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => {
                info.logical += 1;
                socket = None;
            }
            "model name" if info.model.is_none() => info.model = Some(value.to_owned()),
            // arm (`Hardware`), POWER (`cpu`), MIPS (`cpu model`) have no `model name`.
            "Hardware" | "cpu" | "cpu model" if other_model.is_none() => {
                other_model = Some(value.to_owned());
            }
            "physical id" => socket = Some(value),
            // Core ids restart on each socket and repeat for SMT siblings.
            "core id" => {
                cores.insert((socket, value));
            }
            "flags" => {
                info.hypervisor |= value.split_whitespace().any(|f| f == "hypervisor");
                if info.x86_64_level.is_none() {
                    info.x86_64_level = Some(x86_64_level(value));
                }
            }
            _ => {}
        }
    }
    info.model = info.model.or(other_model).filter(|m| !m.is_empty());
    info.physical_cores = (!cores.is_empty()).then_some(cores.len());
    info
}

/// The highest x86-64 micro-architecture level (x86-64 psABI, as in
/// `-march=x86-64-v3`) whose features a cpuinfo `flags` line all lists.
/// Linux names LZCNT `abm` and XSAVE `xsave`; `lm` is 64-bit mode itself.
pub fn x86_64_level(flags: &str) -> u8 {
    const LEVELS: [&[&str]; 3] = [
        &["cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"],
        &[
            "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave",
        ],
        &["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"],
    ];
    let have: BTreeSet<&str> = flags.split_whitespace().collect();
    LEVELS
        .iter()
        .take_while(|level| level.iter().all(|f| have.contains(f)))
        .fold(1, |level, _| level + 1)
}

/// `MemTotal` of /proc/meminfo, in bytes.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `PRETTY_NAME` of os-release, unquoted.
fn parse_os_release(text: &str) -> Option<String> {
    let value = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
    (!value.is_empty()).then(|| value.to_owned())
}

/// The selected mode in sysfs's `always [madvise] never` style.
pub fn parse_thp(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    let word = text[start..start + len].trim();
    (!word.is_empty()).then(|| word.to_owned())
}

/// One cache as `L1d 32K`, from sysfs's `level`, `type` and `size`.
pub fn format_cache(level: &str, kind: &str, size: &str) -> String {
    let suffix = match kind {
        "Data" => "d",
        "Instruction" => "i",
        _ => "",
    };
    format!("L{level}{suffix} {size}")
}

/// cpu0's caches from `DIR/index*/`, in index order (index10 after index9).
fn caches(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut indexes: Vec<(u32, std::path::PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let number = name.to_str()?.strip_prefix("index")?.parse().ok()?;
            Some((number, entry.path()))
        })
        .collect();
    indexes.sort();
    indexes
        .iter()
        .filter_map(|(_, index)| {
            let level = read(index.join("level"))?;
            let kind = read(index.join("type")).unwrap_or_default();
            let size = read(index.join("size")).unwrap_or_else(|| "?".to_owned());
            Some(format_cache(&level, &kind, &size))
        })
        .collect()
}

/// First non-blank line of `TOOL --version` (stderr when stdout is empty).
fn tool_version(tool: &str) -> Option<String> {
    let out = run_tool(tool, &["--version"], VERSION_TIMEOUT).ok()?;
    if !out.success() {
        return None;
    }
    let text = if out.stdout.trim().is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// Whether `perf stat` counts instructions of a trivial command. The event is
/// `instructions:u`, the one `measure::instructions` counts with, so this
/// answers "will that counter work": it works at `perf_event_paranoid` 2 and
/// fails at 3+ (unless root), without perf, and without a PMU (most VMs), where
/// perf exits 0 but prints `<not supported>`.
pub(crate) fn perf_counts_instructions() -> bool {
    run_tool(
        "perf",
        &["stat", "-x", ",", "-e", "instructions:u", "--", "true"],
        PROBE_TIMEOUT,
    )
    .is_ok_and(|out| out.success() && parse_perf_stat(&out.stderr).is_some())
}

/// The instruction count in `perf stat -x,` output; `None` when the event was
/// `<not supported>` or `<not counted>`. The instruction counter reads its
/// runs' counts with it too.
pub fn parse_perf_stat(text: &str) -> Option<u64> {
    text.lines()
        .filter(|l| l.contains("instructions"))
        .find_map(|l| l.split(',').next()?.trim().parse().ok())
}

/// Whether the CPU offers branch stacks (LBR) to perf.
///
/// Rule: first ask the PMU. x86 kernels export the number of branch-stack
/// entries in `caps/branches` (Intel LBR depth, AMD `LbrExtV2` depth; `cpu_core`
/// on hybrid CPUs); non-zero means supported, and it answers even when
/// `perf_event_paranoid` would stop this user from recording. Where the file
/// is absent (older kernels, ARM BRBE, other PMUs) ask perf: record one
/// trivial command with a user-space branch filter (`-j any,u`, the `-b` of
/// `perf record -b` limited to user space so paranoid 2 does not refuse it),
/// writing nothing. A VM without a virtual PMU fails both: no LBR.
pub(crate) fn has_branch_stacks() -> bool {
    let pmus = ["cpu", "cpu_core"];
    let advertised = pmus.iter().any(|pmu| {
        read(format!("/sys/bus/event_source/devices/{pmu}/caps/branches"))
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n > 0)
    });
    advertised
        || run_tool(
            "perf",
            &[
                "record",
                "-q",
                "-j",
                "any,u",
                "-o",
                "/dev/null",
                "--",
                "true",
            ],
            PROBE_TIMEOUT,
        )
        .is_ok_and(|out| out.success())
}

/// GPUs from nvidia-smi; drivers older than 510 lack `compute_cap`, so retry without it.
fn query_gpus() -> Vec<Gpu> {
    let queries = [
        "--query-gpu=name,driver_version,memory.total,compute_cap",
        "--query-gpu=name,driver_version,memory.total",
    ];
    for query in queries {
        match run_tool(
            "nvidia-smi",
            &[query, "--format=csv,noheader"],
            PROBE_TIMEOUT,
        ) {
            Ok(out) if out.success() => return parse_nvidia_smi(&out.stdout),
            // Not installed, or hung: the second query would not fare better.
            Err(_) => return Vec::new(),
            // Present but refused (unknown field, no driver, no device): try on.
            Ok(_) => {}
        }
    }
    Vec::new()
}

/// Parse `nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap
/// --format=csv,noheader`, one GPU a line; memory may carry ` MiB` or not
/// (`nounits`), and `[N/A]` means unknown.
pub fn parse_nvidia_smi(text: &str) -> Vec<Gpu> {
    let known = |s: &&str| !s.is_empty() && !s.starts_with('[');
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let name = fields.first().copied().filter(known)?;
            Some(Gpu {
                name: name.to_owned(),
                driver: fields.get(1).copied().unwrap_or_default().to_owned(),
                memory_mib: fields
                    .get(2)
                    .and_then(|m| m.trim_end_matches("MiB").trim().parse().ok()),
                compute_capability: fields.get(3).copied().filter(known).map(str::to_owned),
            })
        })
        .collect()
}

/// Seconds since the Unix epoch as RFC 3339 UTC, `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(unix_secs: u64) -> String {
    let days = i64::try_from(unix_secs / 86_400).unwrap_or(0);
    let rem = unix_secs % 86_400;
    // Howard Hinnant's civil_from_days:
    // https://howardhinnant.github.io/date_algorithms.html#civil_from_days
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
    /// Aligned `key: value` lines, one per fact, each ending in a newline; for
    /// `afterburner env` and the Markdown report.
    pub fn render_text(&self) -> String {
        let mut rows = self.machine_rows();
        rows.extend(self.software_rows());
        let width = rows.iter().map(|(k, _)| k.len() + 1).max().unwrap_or(0);
        let mut out = String::new();
        for (key, value) in rows {
            let _ = writeln!(out, "{:<width$} {value}", format!("{key}:"));
        }
        out
    }

    fn machine_rows(&self) -> Vec<(String, String)> {
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
        let physical = self
            .physical_cores
            .map_or_else(|| "unknown".to_owned(), |c| c.to_string());
        let mut cpus = format!("{} logical, {physical} physical", self.logical_cpus);
        if let Some(n) = self.available_cpus.filter(|&n| n != self.logical_cpus) {
            let _ = write!(cpus, ", {n} available to this process");
        }
        let caches = if self.caches.is_empty() {
            "unknown".to_owned()
        } else {
            self.caches.join(", ")
        };
        let memory = self.memory_bytes.map_or_else(
            || "unknown".to_owned(),
            |b| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30)),
        );
        let governor = self.cpu_governor.as_deref().unwrap_or("none (no cpufreq)");
        vec![
            ("captured".into(), self.captured_at.clone()),
            ("host".into(), text(&self.hostname)),
            ("cpu".into(), text(&self.cpu_model)),
            ("cpus".into(), cpus),
            ("virtualized".into(), yes_no(self.virtualized).to_owned()),
            (
                "x86-64 level".into(),
                self.x86_64_level
                    .map_or_else(|| "not x86-64".to_owned(), |l| format!("v{l}")),
            ),
            ("caches".into(), caches),
            ("memory".into(), memory),
            ("governor".into(), governor.to_owned()),
            (
                "boost".into(),
                self.cpu_boost
                    .map_or("unknown (no cpufreq boost control)", |b| {
                        if b {
                            "on"
                        } else {
                            "off"
                        }
                    })
                    .to_owned(),
            ),
            ("thp".into(), text(&self.transparent_hugepages)),
        ]
    }

    fn software_rows(&self) -> Vec<(String, String)> {
        let mut kernel = self.kernel.clone().unwrap_or_else(|| "unknown".to_owned());
        if let Some(build) = &self.kernel_version {
            let _ = write!(kernel, " ({build})");
        }
        let paranoid = self
            .perf_event_paranoid
            .map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        let counters = if self.perf_counters {
            "yes"
        } else {
            "no (instructions are counted with callgrind)"
        };
        let mut rows: Vec<(String, String)> = vec![
            ("kernel".into(), kernel),
            (
                "distro".into(),
                self.distro.clone().unwrap_or_else(|| "unknown".to_owned()),
            ),
            ("perf_event_paranoid".into(), paranoid),
            ("perf counters".into(), counters.to_owned()),
            ("lbr".into(), yes_no(self.lbr).to_owned()),
        ];
        rows.extend(self.tools.iter().map(|tool| {
            let version = tool.version.as_deref().unwrap_or("not found");
            (tool.name.clone(), version.to_owned())
        }));
        if self.gpus.is_empty() {
            rows.push(("gpus".into(), "none".to_owned()));
        }
        rows.extend(self.gpus.iter().enumerate().map(|(i, gpu)| {
            let memory = gpu
                .memory_mib
                .map_or_else(|| "unknown memory".to_owned(), |m| format!("{m} MiB"));
            let cc = gpu.compute_capability.as_deref().unwrap_or("unknown");
            let value = format!(
                "{}, {memory}, compute capability {cc}, driver {}",
                gpu.name, gpu.driver
            );
            (format!("gpu {i}"), value)
        }));
        rows
    }
}

fn yes_no(flag: bool) -> &'static str {
    if flag {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
