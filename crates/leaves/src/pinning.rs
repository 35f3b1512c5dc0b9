//! CPU pinning for quieter runs: services on CPUs of their own, the load
//! client or batch workload on the others, so the two do not take turns on
//! one core and the scheduler does not move them about.
//!
//! afterburner pins its own thread to the workload's CPUs before each run
//! (the load's threads and a workload's processes inherit the mask) and
//! each service to its CPUs as it starts (`sched_setaffinity` between fork
//! and exec). The CPUs are those this process may use (its affinity mask,
//! which a container's cpuset limits), not all the machine has.

use std::fmt;
use std::process::Command;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// A set of CPU numbers, written as Linux lists them: `0`, `1-3`, `0,2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct CpuSet(pub Vec<usize>);

impl CpuSet {
    /// Parse `0,2-3`; CPU numbers below 1024 (the kernel's `cpu_set_t`).
    pub fn parse(text: &str) -> Result<Self> {
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (low, high) = part.split_once('-').unwrap_or((part, part));
            let (Ok(low), Ok(high)) = (low.trim().parse::<usize>(), high.trim().parse::<usize>())
            else {
                bail!("`{text}` is not a CPU list (write e.g. \"1\", \"0,2\" or \"2-3\")");
            };
            if low > high || high >= 1024 {
                bail!("`{text}`: CPU range {low}-{high} is empty or beyond CPU 1023");
            }
            cpus.extend(low..=high);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Self(cpus))
    }
}

/// The kernel's form of a CPU list.
fn mask(cpus: &CpuSet) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write within it
    // for CPU numbers below CPU_SETSIZE (1024), which `parse` ensures.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &cpu in &cpus.0 {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&list.join(","))
    }
}

/// Where a bench runs its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pinning {
    /// CPUs of the load client or batch workload (afterburner's own thread).
    pub workload: CpuSet,
    /// CPUs of the services.
    pub services: CpuSet,
}

/// The CPUs this process may run on.
pub fn allowed() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set it is given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return Vec::new();
        }
        (0..1024).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// The default split of `allowed` CPUs: with services and at least two
/// CPUs, the last half (rounded down, at least one) for the services, the
/// rest for the workload; `None` otherwise (nothing to keep apart).
pub fn default_split(allowed: &[usize], has_services: bool) -> Option<Pinning> {
    if !has_services || allowed.len() < 2 {
        return None;
    }
    let services = (allowed.len() / 2).max(1);
    let (workload, served) = allowed.split_at(allowed.len() - services);
    Some(Pinning {
        workload: CpuSet(workload.to_vec()),
        services: CpuSet(served.to_vec()),
    })
}

/// Pin the calling thread (and so what it starts from now on) to `cpus`.
pub fn pin_current_thread(cpus: &CpuSet) -> Result<()> {
    let set = mask(cpus);
    // SAFETY: sched_setaffinity reads the set it is given.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set) }
        != 0
    {
        bail!(
            "cannot pin to CPUs {cpus}: {}\nhint: name CPUs this process may use (`taskset -p $$` lists them), or set pin = false under [bench]",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// Make `command` run on `cpus` (set between fork and exec).
pub fn pin_command(command: &mut Command, cpus: &CpuSet) {
    use std::os::unix::process::CommandExt;
    let set = mask(cpus);
    // SAFETY: the closure only calls sched_setaffinity, which is
    // async-signal-safe, on a set computed before the fork.
    unsafe {
        command.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
                != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_as_linux_writes_them() {
        assert_eq!(CpuSet::parse("1").unwrap().0, [1]);
        assert_eq!(CpuSet::parse("0, 2-3,2").unwrap().0, [0, 2, 3]);
        assert_eq!(CpuSet::parse("4-5").unwrap().to_string(), "4,5");
        for bad in ["", "a", "3-1", "0-2000", "1,"] {
            assert!(CpuSet::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn services_get_the_last_half() {
        assert_eq!(default_split(&[0], true), None);
        assert_eq!(default_split(&[0, 1], false), None);
        let two = default_split(&[0, 1], true).unwrap();
        assert_eq!((two.workload.0, two.services.0), (vec![0], vec![1]));
        let five = default_split(&[0, 1, 2, 3, 4], true).unwrap();
        assert_eq!(
            (five.workload.0, five.services.0),
            (vec![0, 1, 2], vec![3, 4])
        );
    }

    /// Pinning a child to one allowed CPU shows in its own view of its mask.
    #[test]
    fn a_pinned_child_runs_only_there() {
        let cpus = allowed();
        let Some(&last) = cpus.last() else {
            crate::test_skips::skip("no affinity mask readable");
            return;
        };
        let mut command = Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin_command(&mut command, &CpuSet(vec![last]));
        let out = command.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.split(':').nth(1).unwrap().trim(),
            last.to_string(),
            "{text}"
        );
    }
}
