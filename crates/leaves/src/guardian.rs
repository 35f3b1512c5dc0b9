//! The guardian: a small `sh` that afterburner starts once and tells, over
//! a pipe, which process groups it has running. When afterburner dies, by
//! SIGKILL too, the pipe closes and the guardian kills every group still
//! listed, grandchildren included, which `PR_SET_PDEATHSIG` (the direct
//! child only) cannot reach: a service's `sh -c 'a | b'`, a workload's
//! background job. A group leaves the list just before its leader is
//! reaped, while the unreaped leader still holds the group id, so the
//! guardian never kills a group id the kernel has handed out again.

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The guardian's script: `+ PGID` lists a group, `- PGID` drops it; at
/// end of input (afterburner gone) every listed group gets SIGKILL.
const SCRIPT: &str = r#"trap '' INT TERM HUP
groups=' '
while read -r op g; do
  case $op in
    +) groups="$groups$g " ;;
    -) case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
"#;

/// The pipe to the guardian.
enum Pipe {
    /// Not started yet: the first group listed starts it.
    Unstarted,
    Open(ChildStdin),
    /// It could not start, or died: process groups are still killed on
    /// every normal exit path, only not after a SIGKILL.
    Gone,
}

static PIPE: Mutex<Pipe> = Mutex::new(Pipe::Unstarted);

/// List the process group `pgid` (a child started with `process_group(0)`).
pub fn watch(pgid: libc::pid_t) {
    tell(&format!("+ {pgid}\n"));
}

/// Drop `pgid` from the list: call before reaping its leader.
pub fn forget(pgid: libc::pid_t) {
    tell(&format!("- {pgid}\n"));
}

fn tell(line: &str) {
    let mut pipe = PIPE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if matches!(*pipe, Pipe::Unstarted) {
        *pipe = start().map_or(Pipe::Gone, Pipe::Open);
    }
    // A guardian that died (killed by hand) cannot be told; nothing else
    // depends on it, so the write's failure is not afterburner's.
    if let Pipe::Open(stdin) = &mut *pipe {
        if stdin.write_all(line.as_bytes()).is_err() {
            *pipe = Pipe::Gone;
        }
    }
}

/// Start the guardian in a process group of its own (a Ctrl-C at the
/// terminal must not reach it), its input the pipe. It is never reaped:
/// it outlives afterburner by design, for a moment.
fn start() -> Option<ChildStdin> {
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT, "afterburner-guardian"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    child.stdin.take()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
        })
    }

    /// A guardian whose input closes kills the groups still listed, and
    /// only those.
    #[test]
    fn the_listed_groups_die_when_the_pipe_closes() {
        let spawn = || {
            Command::new("sleep")
                .arg("60")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut listed, mut dropped) = (spawn(), spawn());
        let mut guardian = Command::new("/bin/sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut pipe = guardian.stdin.take().unwrap();
        for line in [
            format!("+ {}\n", listed.id()),
            format!("+ {}\n", dropped.id()),
            format!("- {}\n", dropped.id()),
        ] {
            pipe.write_all(line.as_bytes()).unwrap();
        }
        drop(pipe);
        guardian.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = listed.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the listed group lived on");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        assert!(alive(dropped.id()), "a dropped group was killed");
        dropped.kill().unwrap();
        dropped.wait().unwrap();
    }
}
