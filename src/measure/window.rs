//! Counting a service's instructions over the measured window only: the
//! service starts under callgrind with instrumentation off
//! (`--instr-atstart=no`), and `callgrind_control -i on|off` switches it at
//! the window's edges, so start-up and warmup are not counted.

use std::time::Duration;

use anyhow::{bail, Result};

/// How long one `callgrind_control` may take (it reaches the process
/// through vgdb, waking it with ptrace when it sleeps in a system call).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

/// The callgrind option that starts a process with instrumentation off.
pub const START_OFF: &str = "--instr-atstart=no";

/// The processes of each process group in `groups` (a service and what it
/// forked, which share its group), from /proc.
pub fn members(groups: &[libc::pid_t]) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return groups.to_vec();
    };
    let mut found: Vec<libc::pid_t> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| process_group(&stat))
                .is_some_and(|(state, g)| state != 'Z' && groups.contains(&g))
        })
        .collect();
    found.sort_unstable();
    found
}

/// The state (field 3: `Z` for a zombie) and process group (field 5) of a
/// `/proc/PID/stat` line; the command name (field 2) is in parentheses and
/// may hold spaces.
fn process_group(stat: &str) -> Option<(char, libc::pid_t)> {
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.nth(1)?.parse().ok()?))
}

/// Switch callgrind's instrumentation on or off in every process of
/// `groups` that runs under callgrind; an error when none of them does.
pub fn switch(groups: &[libc::pid_t], on: bool) -> Result<()> {
    let word = if on { "on" } else { "off" };
    let mut reached = 0;
    let mut last = String::new();
    for pid in members(groups) {
        let pid_text = pid.to_string();
        match crate::process::capture(
            "callgrind_control",
            &["-i", word, &pid_text],
            CONTROL_TIMEOUT,
        ) {
            // callgrind_control exits 0 even for a pid without callgrind;
            // it says "OK." only when the command was delivered.
            Ok(out) if out.success() && out.stdout.contains("OK.") => reached += 1,
            Ok(out) => last = format!("{}{}", out.stdout, out.stderr),
            Err(error) => last = error.to_string(),
        }
    }
    if reached == 0 {
        bail!(
            "callgrind_control -i {word} reached no service process ({})\nhint: it talks to valgrind through vgdb; a system that forbids ptrace (kernel.yama.ptrace_scope = 3) stops it",
            last.trim()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_process_group_past_a_name_with_spaces() {
        let stat = "1234 (my server) S 1 1230 1230 0 -1 4194560 100 0";
        assert_eq!(process_group(stat), Some(('S', 1230)));
        assert_eq!(process_group("garbage"), None);
        // This process is in its own group's member list.
        // SAFETY: getpgrp has no preconditions.
        let group = unsafe { libc::getpgrp() };
        assert!(members(&[group]).contains(&std::process::id().cast_signed()));
    }
}
