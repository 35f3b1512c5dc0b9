//! Run subprocesses with a timeout, always: capture their output, or time them
//! with the kernel's resource accounting (`wait4`) for CPU time and peak RSS.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What can go wrong when running a subprocess.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{program}` did not finish within {timeout:?} and was killed")]
    Timeout { program: String, timeout: Duration },
    #[error("`{program}` was stopped: afterburner was interrupted")]
    Interrupted { program: String },
    #[error("waiting for `{program}` failed: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// Output of a captured command.
#[derive(Debug, Clone)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.status.success()
    }
}

/// Resource usage of one finished child, as the kernel accounted it.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Wall-clock time from just before spawn to the moment the child exited.
    pub wall: Duration,
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in kernel mode.
    pub sys: Duration,
    /// Peak resident set size, in KiB.
    pub max_rss_kib: u64,
    /// Context switches: voluntary (the process waited) and involuntary
    /// (the scheduler preempted it).
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Page faults served without I/O (minor) and with it (major).
    pub minor_faults: u64,
    pub major_faults: u64,
}

/// A finished, timed child.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    pub status: ExitStatus,
    pub usage: Usage,
}

/// A failed command's output between divider lines, trimmed, so it stands
/// apart from afterburner's own words (ripgrep's style).
pub fn quote_output(text: &str) -> String {
    const DIVIDER: &str = "----------------------------------------";
    format!("{DIVIDER}\n{}\n{DIVIDER}", text.trim())
}

/// Describe an exit status the way a user reads it: "exit code 3" or "signal 9 (SIGKILL)".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exit code {code}")
    } else if let Some(signal) = status.signal() {
        let name = match signal {
            libc::SIGKILL => " (SIGKILL)",
            libc::SIGSEGV => " (SIGSEGV)",
            libc::SIGABRT => " (SIGABRT)",
            libc::SIGTERM => " (SIGTERM)",
            libc::SIGINT => " (SIGINT)",
            _ => "",
        };
        format!("signal {signal}{name}")
    } else {
        "unknown status".to_owned()
    }
}

/// Make the child die with afterburner: however afterburner ends (a panic,
/// SIGKILL, the OOM killer), the kernel sends the child SIGKILL
/// (`PR_SET_PDEATHSIG`), and the child runs in a process group of its own
/// that every wait kills on the way out. The signal follows the *thread*
/// that forked, so spawn only from a thread that outlives the child (every
/// caller here waits for its child on the thread that spawned it). It is
/// kept across `exec` but not by the child's own children: those go with
/// the group, killed by every wait or, when afterburner dies, by the
/// guardian (see [`watch`]).
pub fn die_with_afterburner(command: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let signal = libc::c_ulong::try_from(libc::SIGKILL).expect("invariant: SIGKILL is 9");
    // SAFETY: the hook runs between fork and exec and makes only
    // async-signal-safe system calls (prctl, getppid), allocating nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Afterburner died before the prctl: the child was re-parented
            // already and no signal will come.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Run `program args…` to completion with a timeout, capturing stdout and stderr.
pub fn capture(program: &str, args: &[&str], timeout: Duration) -> Result<Captured, ProcessError> {
    let mut command = Command::new(program);
    command.args(args);
    capture_command(&mut command, timeout)
}

/// Run a prepared command to completion with a timeout, capturing stdout and stderr.
pub fn capture_command(command: &mut Command, timeout: Duration) -> Result<Captured, ProcessError> {
    capture_with(command, Watchdog::arm(timeout))
}

/// [`capture_command`] for clean-up that must run after Ctrl-C (cancelling
/// what was submitted): only its timeout stops it.
pub fn capture_cleanup(command: &mut Command, timeout: Duration) -> Result<Captured, ProcessError> {
    capture_with(
        command,
        Watchdog {
            timeout,
            interruptible: false,
        },
    )
}

fn capture_with(command: &mut Command, watchdog: Watchdog) -> Result<Captured, ProcessError> {
    let program = command.get_program().to_string_lossy().into_owned();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    die_with_afterburner(command);
    let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
        program: program.clone(),
        source,
    })?;
    watch(child.id());
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let timed = watchdog.wait(child.id(), &program, Instant::now())?;
    let stdout = stdout.map(join_drain).unwrap_or_default();
    let stderr = stderr.map(join_drain).unwrap_or_default();
    Ok(Captured {
        status: timed.status,
        stdout,
        stderr,
    })
}

fn drain<R: Read + Send + 'static>(mut reader: R) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buffer = Vec::new();
        // A read error only truncates what we show; the exit status still tells the truth.
        let _ = reader.read_to_end(&mut buffer);
        String::from_utf8_lossy(&buffer).into_owned()
    })
}

fn join_drain(handle: thread::JoinHandle<String>) -> String {
    handle.join().unwrap_or_default()
}

/// Where a timed child's output goes.
#[derive(Debug, Clone)]
pub struct TimedIo {
    /// File that receives stdout (created or truncated).
    pub stdout: PathBuf,
    /// File that receives stderr (created or truncated).
    pub stderr: PathBuf,
}

/// Spawn a command with stdout/stderr sent to files, wait with a timeout and
/// return its kernel-accounted resource usage.
pub fn run_timed(
    command: &mut Command,
    io: &TimedIo,
    timeout: Duration,
) -> Result<Timed, ProcessError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let open = |path: &Path| {
        fs_err::File::create(path)
            .map(fs_err::File::into_parts)
            .map(|(file, _)| file)
            .map_err(|source| ProcessError::Spawn {
                program: program.clone(),
                source,
            })
    };
    let stdout = open(&io.stdout)?;
    // One file for both streams keeps their interleaving, as a terminal would.
    let stderr = if io.stderr == io.stdout {
        stdout.try_clone().map_err(|source| ProcessError::Spawn {
            program: program.clone(),
            source,
        })?
    } else {
        open(&io.stderr)?
    };
    command
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    die_with_afterburner(command);
    let watchdog = Watchdog::arm(timeout);
    // Wall time includes the spawn, as hyperfine's does.
    let start = Instant::now();
    let child = command.spawn().map_err(|source| ProcessError::Spawn {
        program: program.clone(),
        source,
    })?;
    watch(child.id());
    watchdog.wait(child.id(), &program, start)
}

/// Waits for a child with a deadline, killing its process group when the
/// deadline passes. It `poll`s a pidfd (Linux ≥ 5.3), so waiting needs no
/// helper thread that would compete with the timed child for a core.
struct Watchdog {
    timeout: Duration,
    /// Whether Ctrl-C stops the child too (all but clean-up).
    interruptible: bool,
}

impl Watchdog {
    fn arm(timeout: Duration) -> Self {
        Self {
            timeout,
            interruptible: true,
        }
    }

    /// Block until `pid` exits or the timeout passes (then kill its group).
    /// Reaps the child with `wait4` to read its resource usage; wall time is
    /// measured from `start` to the moment the exit was seen.
    fn wait(self, pid: u32, program: &str, start: Instant) -> Result<Timed, ProcessError> {
        let pid = libc::pid_t::try_from(pid).expect("invariant: Linux pids fit in pid_t");
        let wait_error = |source| ProcessError::Wait {
            program: program.to_owned(),
            source,
        };
        // Wait in steps of 100 ms at most, to notice Ctrl-C; an exit is
        // seen the moment it happens either way.
        let deadline = Instant::now() + self.timeout;
        let (timed_out, interrupted) = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let step = left.min(Duration::from_millis(100));
            if !wait_exit(pid, step).map_err(wait_error)? {
                break (false, false);
            }
            if self.interruptible && crate::interrupt::requested() {
                break (false, true);
            }
            if left <= step {
                break (true, false);
            }
        };
        let wall = start.elapsed();
        // Kill whatever the child left behind in its group (background jobs),
        // or the child itself on timeout; the unreaped leader still holds the
        // group id, so it cannot have been reused.
        kill_group(pid);
        if timed_out || interrupted {
            wait_no_reap(pid).map_err(wait_error)?;
        }
        let timed = reap(pid, wall).map_err(wait_error)?;
        if interrupted {
            return Err(ProcessError::Interrupted {
                program: program.to_owned(),
            });
        }
        if timed_out {
            return Err(ProcessError::Timeout {
                program: program.to_owned(),
                timeout: self.timeout,
            });
        }
        Ok(timed)
    }
}

/// Wait, without reaping, until `pid` exits (`Ok(false)`) or `timeout`
/// passes (`Ok(true)`).
pub fn wait_exit(pid: libc::pid_t, timeout: Duration) -> std::io::Result<bool> {
    let deadline = Instant::now() + timeout;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let Ok(raw) = libc::c_int::try_from(raw) else {
        return Err(std::io::Error::other(
            "pidfd_open returned an out-of-range fd",
        ));
    };
    if raw < 0 {
        return poll_exit(pid, deadline);
    }
    // SAFETY: pidfd_open just returned this fd and nothing else owns it.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        // Round up so a sub-millisecond remainder still waits.
        let millis =
            libc::c_int::try_from(remaining.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX);
        let mut pollfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&raw mut pollfd, 1, millis) };
        if rc > 0 {
            return Ok(false);
        }
        if rc == 0 && remaining.is_zero() {
            return Ok(true);
        }
        if rc < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

/// Fallback for kernels without pidfds: check every millisecond.
fn poll_exit(pid: libc::pid_t, deadline: Instant) -> std::io::Result<bool> {
    let id = libc::id_t::try_from(pid).expect("invariant: pids are positive");
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a zeroed siginfo_t.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        // SAFETY: waitid filled the union's pid field (0 when nothing exited).
        if rc == 0 && unsafe { info.si_pid() } != 0 {
            return Ok(false);
        }
        if rc < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
        if Instant::now() >= deadline {
            return Ok(true);
        }
        thread::sleep(Duration::from_millis(1));
    }
}

fn kill_group(pid: libc::pid_t) {
    signal_group(pid, libc::SIGKILL);
}

/// Every process descended from `pid` (not `pid` itself), parents before
/// their children, from the `children` files of each thread in
/// `/proc/<pid>/task/` (a forking server's workers, a shell's command).
pub fn descendants(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for child in children(parent) {
            if !found.contains(&child) {
                found.push(child);
                next.push(child);
            }
        }
    }
    found
}

/// The direct children of every thread of `pid`.
fn children(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(tasks) = fs_err::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| fs_err::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect::<Vec<libc::pid_t>>()
        })
        .collect()
}

/// What the kernel has counted so far for a process and every descendant,
/// read from `/proc`: the two edges of a measured window are two of these,
/// and [`TreeCounters::since`] is what the window used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCounters {
    /// User + system clock ticks of every process in the tree, each with
    /// what its reaped children had used (`utime + stime + cutime +
    /// cstime` of `/proc/<pid>/stat`): a worker that exits and is reaped
    /// inside the tree moves into its parent's count, so the sum only
    /// grows. The fallback where run times in nanoseconds cannot be read.
    ticks: u64,
    /// Each thread's (task id's) run time in ns (`/proc/<pid>/task/<tid>/schedstat`)
    /// and context switches, voluntary and involuntary
    /// (`/proc/<pid>/task/<tid>/status`): the kernel shows both per thread
    /// only, and a thread's are gone once it ends.
    threads: BTreeMap<libc::pid_t, (Option<u64>, u64)>,
    /// Each process's run time in ns (its threads'), to take back out when
    /// a reaped process's whole life lands in its parent's count.
    processes: BTreeMap<libc::pid_t, u64>,
    /// Clock ticks of the children the tree's processes reaped
    /// (`cutime + cstime`).
    reaped_ticks: u64,
}

/// What a tree of processes used between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowUsage {
    /// User + system CPU time.
    pub cpu: Duration,
    /// Context switches, voluntary and involuntary.
    pub switches: u64,
}

impl std::ops::Add for WindowUsage {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            cpu: self.cpu + other.cpu,
            switches: self.switches + other.switches,
        }
    }
}

impl TreeCounters {
    /// The counters of `root` and every descendant now; `None` when `root`
    /// is gone (or this is no Linux).
    pub fn read(root: libc::pid_t) -> Option<Self> {
        let mut counters = Self::default();
        counters.add_process(root).then_some(())?;
        for pid in descendants(root) {
            // A process may end between the listing and the reading: its
            // time is then its parent's (once reaped), or lost.
            counters.add_process(pid);
        }
        Some(counters)
    }

    /// Add `pid`'s counters; false when it is gone.
    fn add_process(&mut self, pid: libc::pid_t) -> bool {
        let Some((own, reaped)) = fs_err::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| stat_ticks(&t))
        else {
            return false;
        };
        self.ticks += own + reaped;
        self.reaped_ticks += reaped;
        let Ok(tasks) = fs_err::read_dir(format!("/proc/{pid}/task")) else {
            return true;
        };
        let mut runtime = 0;
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let read = |file| fs_err::read_to_string(task.path().join(file)).ok();
            let ns = read("schedstat").and_then(|t| t.split_whitespace().next()?.parse().ok());
            let switches = read("status")
                .and_then(|t| status_switches(&t))
                .unwrap_or(0);
            runtime += ns.unwrap_or(0);
            self.threads.insert(tid, (ns, switches));
        }
        self.processes.insert(pid, runtime);
        true
    }

    /// What was used from `start` to this reading. CPU: each thread's run
    /// time since `start` (all of a thread born since), and the children
    /// reaped since (to the tick) less what those had run by `start`; to
    /// the tick over the whole tree where run times cannot be read. A
    /// thread that ended in between takes its run time and switches with
    /// it, so both are floors.
    pub fn since(&self, start: &Self) -> WindowUsage {
        let grown = |now: u64, then: Option<u64>| now.saturating_sub(then.unwrap_or(0));
        let switches = self
            .threads
            .iter()
            .map(|(tid, (_, n))| grown(*n, start.threads.get(tid).map(|t| t.1)))
            .sum();
        let precise = self
            .threads
            .values()
            .chain(start.threads.values())
            .all(|t| t.0.is_some());
        let cpu = if precise {
            let ran: u64 = self
                .threads
                .iter()
                .map(|(tid, (ns, _))| {
                    grown(ns.unwrap_or(0), start.threads.get(tid).and_then(|t| t.0))
                })
                .sum();
            let gone: u64 = start
                .processes
                .iter()
                .filter(|(pid, _)| !self.processes.contains_key(pid))
                .map(|(_, ns)| ns)
                .sum();
            let reaped = ticks_to_time(self.reaped_ticks.saturating_sub(start.reaped_ticks));
            let reaped = u64::try_from(reaped.as_nanos()).unwrap_or(u64::MAX);
            Duration::from_nanos(ran + reaped.saturating_sub(gone))
        } else {
            ticks_to_time(self.ticks.saturating_sub(start.ticks))
        };
        WindowUsage { cpu, switches }
    }
}

/// `(utime + stime, cutime + cstime)` of a `/proc/<pid>/stat` line, in
/// clock ticks: its own, and its reaped children's. The command name, in
/// parentheses, may hold spaces and parentheses itself: the fields are
/// counted after the last `)`.
fn stat_ticks(line: &str) -> Option<(u64, u64)> {
    let (_, rest) = line.rsplit_once(')')?;
    // After the name: state is field 3; utime, stime, cutime, cstime are
    // fields 14 to 17 (proc(5)). cutime and cstime are signed there.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> {
        let v: i64 = fields.get(n - 3)?.parse().ok()?;
        Some(u64::try_from(v).unwrap_or(0))
    };
    Some((field(14)? + field(15)?, field(16)? + field(17)?))
}

/// Voluntary + involuntary context switches of a `/proc/…/status`.
fn status_switches(text: &str) -> Option<u64> {
    let count = |key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(count("voluntary_ctxt_switches:")? + count("nonvoluntary_ctxt_switches:")?)
}

fn ticks_to_time(ticks: u64) -> Duration {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0).unwrap_or(100);
    Duration::from_secs(ticks / hz) + Duration::from_nanos((ticks % hz) * 1_000_000_000 / hz)
}

/// Send `signal` to one process.
pub fn signal(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Send `signal` to the process group led by `pid`.
pub fn signal_group(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(-pid, signal);
    }
}

fn wait_no_reap(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let id = libc::id_t::try_from(pid).expect("invariant: pids are positive");
        // SAFETY: valid pointer to a zeroed siginfo_t.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Have the guardian kill the process group of `pid` (a child started with
/// `process_group(0)`) should afterburner die; [`reap`] takes it off.
pub fn watch(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        crate::guardian::watch(pid);
    }
}

/// Reap `pid` with its resource usage; its group leaves the guardian's list
/// first, while the unreaped leader still holds the group id.
pub fn reap(pid: libc::pid_t, wall: Duration) -> std::io::Result<Timed> {
    crate::guardian::forget(pid);
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a c_int and a zeroed rusage.
        let rc = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
        if rc == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(Timed {
        status: ExitStatus::from_raw(status),
        usage: Usage {
            wall,
            user: timeval(usage.ru_utime),
            sys: timeval(usage.ru_stime),
            max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
            voluntary_switches: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
            involuntary_switches: u64::try_from(usage.ru_nivcsw).unwrap_or(0),
            minor_faults: u64::try_from(usage.ru_minflt).unwrap_or(0),
            major_faults: u64::try_from(usage.ru_majflt).unwrap_or(0),
        },
    })
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
}

/// The uid and gid of the user `name`, if this machine has one.
pub fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let c_name = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam_r writes only into `pwd` and `buf`, both ours and
    // large enough as passed; `result` points into them or is null.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            c_name.as_ptr(),
            &raw mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &raw mut result,
        );
        (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
    }
}

/// Make `path` and everything under it owned by `uid`:`gid`.
pub fn chown_tree(path: &std::path::Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))?;
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path)? {
            chown_tree(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// The first directory above `path` that the user `uid`:`gid` cannot
/// enter (no search permission for them), if any.
pub fn unreachable_by(path: &std::path::Path, uid: u32, gid: u32) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    path.ancestors().skip(1).find_map(|dir| {
        let meta = std::fs::metadata(dir).ok()?;
        let mode = meta.mode();
        let can = if meta.uid() == uid {
            mode & 0o100 != 0
        } else if meta.gid() == gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        (!can).then(|| dir.to_path_buf())
    })
}

/// The last `lines` lines of a text file, for error messages (read from
/// its last 64 KiB at most: a log may be gigabytes).
pub fn tail(path: &Path, lines: usize) -> String {
    let text = tail_text(path, 64 << 10);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The last `max` bytes of a file as text (lossy), or "" when unreadable.
pub fn tail_text(path: &Path, max: u64) -> String {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let Ok(mut file) = fs_err::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if file.seek(SeekFrom::Start(len.saturating_sub(max))).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(max).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let out = capture(
            "sh",
            &["-c", "echo hi; echo err >&2; exit 3"],
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(describe_status(out.status), "exit code 3");
    }

    #[test]
    fn kills_on_timeout() {
        let start = Instant::now();
        let err = capture("sleep", &["30"], Duration::from_millis(200)).unwrap_err();
        assert!(matches!(err, ProcessError::Timeout { .. }), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn timed_run_reports_cpu_and_rss() {
        let dir = tempfile::tempdir().unwrap();
        let io = TimedIo {
            stdout: dir.path().join("out"),
            stderr: dir.path().join("err"),
        };
        // A busy loop of ~0.1 s of user time.
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo done",
        ]);
        let timed = run_timed(&mut command, &io, Duration::from_secs(30)).unwrap();
        assert!(timed.status.success());
        assert!(timed.usage.user > Duration::ZERO);
        assert!(timed.usage.wall >= timed.usage.user / 2);
        assert!(timed.usage.max_rss_kib > 100);
        assert_eq!(fs_err::read_to_string(&io.stdout).unwrap(), "done\n");
    }

    #[test]
    fn stat_ticks_count_after_the_name_even_with_parentheses_in_it() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
        // majflt cmajflt utime stime cutime cstime …
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 20 5 20 0 1 0";
        assert_eq!(stat_ticks(line), Some((10, 25)));
        assert_eq!(stat_ticks("42 (short) S 1"), None);
    }

    #[test]
    fn status_switches_add_voluntary_and_involuntary() {
        let text = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(status_switches(text), Some(15));
    }

    /// A worker alive at the opening edge and reaped by its parent before
    /// the closing one: its whole life lands in the parent's count, less
    /// what it had run by the opening edge.
    #[test]
    fn a_worker_reaped_inside_the_window_counts_only_its_time_inside() {
        let hz = ticks_to_time(1);
        let ms = |n: u64| n * 1_000_000;
        let start = TreeCounters {
            ticks: 0,
            threads: BTreeMap::from([(1, (Some(ms(100)), 5)), (2, (Some(ms(300)), 7))]),
            processes: BTreeMap::from([(1, ms(100)), (2, ms(300))]),
            reaped_ticks: 0,
        };
        // The worker (pid 2) had run 300 ms; it ran 4 ticks more and was
        // reaped: its life, 300 ms + 4 ticks, is now its parent's.
        let life = Duration::from_millis(300) + hz * 4;
        let ticks = u64::try_from(life.as_nanos() / hz.as_nanos()).unwrap();
        let end = TreeCounters {
            ticks: 0,
            threads: BTreeMap::from([(1, (Some(ms(150)), 9)), (3, (Some(ms(20)), 2))]),
            processes: BTreeMap::from([(1, ms(150)), (3, ms(20))]),
            reaped_ticks: ticks,
        };
        let used = end.since(&start);
        // 50 ms of the parent, 20 of a new worker, 4 ticks of the reaped one.
        assert_eq!(used.cpu, Duration::from_millis(70) + hz * 4);
        // Switches: 4 of the parent and 2 of the new worker; the reaped
        // worker's went with it.
        assert_eq!(used.switches, 6);
        // Without run times, the ticks of the whole tree.
        let coarse = |t: &TreeCounters, ticks| TreeCounters {
            ticks,
            threads: t.threads.iter().map(|(k, v)| (*k, (None, v.1))).collect(),
            ..t.clone()
        };
        assert_eq!(coarse(&end, 12).since(&coarse(&start, 5)).cpu, hz * 7);
    }

    #[test]
    fn a_window_counts_only_what_a_tree_did_inside_it() {
        // A child that spins ~0.3 s, then sleeps: read before and after
        // its spin, and again over its sleep.
        let mut child = Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        let Some(start) = TreeCounters::read(pid) else {
            let _ = child.kill();
            let _ = child.wait();
            crate::test_skips::skip("no /proc here: no process counters");
            return;
        };
        // Wait for the spin to end: the shell's CPU stops growing.
        let mut last = start.clone();
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = TreeCounters::read(pid).unwrap();
            if now.ticks == last.ticks && now.ticks > start.ticks {
                break;
            }
            last = now;
        }
        let spun = last.since(&start);
        std::thread::sleep(Duration::from_millis(300));
        let idle = TreeCounters::read(pid).unwrap().since(&last);
        let _ = child.kill();
        let _ = child.wait();
        assert!(spun.cpu >= Duration::from_millis(50), "{spun:?}");
        assert!(idle.cpu <= Duration::from_millis(20), "{idle:?}");
    }
}
