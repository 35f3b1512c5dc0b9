//! A sampled profile of a running process: `perf record -p` over the
//! process and every descendant it has (a forking server's workers; perf
//! follows only children forked after it attached), for a duration, then
//! SIGINT to the perf we started and a check that the recording holds
//! samples.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use crate::process::quote_output;
use crate::toolchain::sampling::{count_samples, Sampling, Unwind};

/// How long perf may take to write its file after SIGINT.
const FINISH_TIMEOUT: Duration = Duration::from_mins(2);

/// What to record.
#[derive(Debug)]
pub struct Request {
    pub pid: libc::pid_t,
    pub duration: Duration,
    /// The perf event (`cpu-clock` needs no PMU).
    pub event: String,
    /// Whether samples carry call stacks (`-g`).
    pub call_graph: bool,
    pub out: PathBuf,
}

/// What a recording holds and what perf used to make it.
#[derive(Debug)]
pub struct Recorded {
    pub samples: usize,
    /// perf record's own CPU time, where it could be read.
    pub perf_cpu: Option<Duration>,
}

/// Record; the samples in the recording and perf's CPU time.
pub fn record(request: &Request) -> Result<Recorded> {
    let pid = request.pid;
    if !Path::new(&format!("/proc/{pid}")).exists() {
        bail!("no process {pid} to profile\nhint: give the pid of the running service");
    }
    let program = super::dump::program(pid);
    if !crate::toolchain::tools::is_installed("perf") {
        bail!("afterburner profile samples with perf, which is not installed\nhint: apt-get install -y linux-perf");
    }
    // The event as given, without the machine probes training runs: they
    // take seconds, and perf's own error says what it cannot record.
    let chosen = Sampling {
        event: request.event.clone(),
        branch_stack: false,
        call_graph: request.call_graph.then_some(Unwind::FramePointers),
    };
    let mut pids = vec![pid];
    pids.extend(crate::process::descendants(pid));
    let list: Vec<String> = pids.iter().map(ToString::to_string).collect();
    if let Some(parent) = request.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs_err::create_dir_all(parent)?;
    }
    let log = log_path(&request.out);
    let file = fs_err::File::create(&log)?.into_parts().0;
    let mut command = Command::new("perf");
    command.args(["record", "-q", "-e", &chosen.event]);
    command.args(chosen.flags());
    command
        .arg("-p")
        .arg(list.join(","))
        .arg("-o")
        .arg(&request.out);
    command
        .stdin(std::process::Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    crate::process::die_with_afterburner(&mut command);
    let mut child = command
        .spawn()
        .context("starting perf record (apt-get install -y linux-perf)")?;
    crate::process::watch(child.id());
    let perf = libc::pid_t::try_from(child.id()).context("invariant: pids fit pid_t")?;
    let waited = wait_while_recording(&mut child, request.duration);
    // Signalled only while it runs: an exited perf was reaped, its pid free.
    let late = waited.is_ok() && {
        crate::process::signal(perf, libc::SIGINT);
        crate::process::wait_exit(perf, FINISH_TIMEOUT)?
    };
    if late {
        crate::process::signal(perf, libc::SIGKILL);
    }
    // Exited, not yet reaped: its CPU time is still in /proc.
    let perf_cpu = crate::toolchain::recording_cost::cpu_time(perf);
    crate::guardian::forget(perf);
    let status = child.wait()?;
    if let Err(early) = waited {
        bail!(
            "perf record of process {pid} ({program}) ended early: {early}\n{}\nlog: {}",
            quote_output(&crate::process::tail(&log, 20)),
            log.display()
        );
    }
    if late {
        bail!(
            "perf record of process {pid} did not finish within {FINISH_TIMEOUT:?} of SIGINT and was killed\nlog: {}",
            log.display()
        );
    }
    let samples = count_samples(&request.out)?;
    if samples == 0 {
        bail!(
            "the recording of process {pid} ({program}) over {:?} holds no samples (perf exited with {}): the process used no CPU while it was recorded\n{}\nrecording: {}\nhint: profile while the service is under load, or for longer",
            request.duration,
            crate::process::describe_status(status),
            quote_output(&crate::process::tail(&log, 20)),
            request.out.display()
        );
    }
    let _ = fs_err::remove_file(&log);
    Ok(Recorded { samples, perf_cpu })
}

/// perf's own output, beside the recording.
fn log_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".log");
    out.with_file_name(name)
}

/// Sleep through `duration` unless perf exits first (it could not attach,
/// or the process ended) or the user presses Ctrl-C.
fn wait_while_recording(child: &mut std::process::Child, duration: Duration) -> Result<()> {
    let end = Instant::now() + duration;
    while Instant::now() < end {
        if let Some(status) = child.try_wait()? {
            bail!(
                "perf exited with {}",
                crate::process::describe_status(status)
            );
        }
        crate::interrupt::check()?;
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
    Ok(())
}
