//! Training under `perf record`, shared by the sampled optimizers (AutoFDO,
//! BOLT from perf, Go PGO from perf): which event to sample, whether with
//! branch stacks (LBR) or call stacks (`-g`), whether this machine's perf can
//! record it at all, and the command prefix that records each training
//! process into its own file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::{raw_dir, StageDirs};
use crate::process::{capture_command, quote_output};

/// The extension of the recordings training leaves.
pub const RAW_EXTENSION: &str = "perfdata";
/// Written beside the raw recordings: how they were sampled.
const SAMPLING_FILE: &str = "sampling.txt";

/// How training runs are sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampling {
    /// The perf event.
    pub event: String,
    /// Whether each sample carries a branch stack (LBR).
    pub branch_stack: bool,
    /// Whether each sample carries its call stack, and unwound how.
    pub call_graph: Option<Unwind>,
}

/// How perf records a sample's call stack (a variant's `call_chains`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Unwind {
    /// `-g`: the kernel walks the frame pointers (cheap; right only in
    /// code that keeps them: Go's, or C built with
    /// `-fno-omit-frame-pointer`).
    #[serde(rename = "fp")]
    FramePointers,
    /// `--call-graph dwarf`: each sample copies the top of the user stack
    /// and `perf script` unwinds it with the binary's CFI, frame pointers
    /// or not (Debian's -O2 keeps none).
    #[serde(rename = "dwarf")]
    Dwarf,
}

impl Unwind {
    /// The `perf record` flag. A DWARF sample copies 2 KiB of stack: a few
    /// frames of a C server above the sampled one (the call through a
    /// pointer a target is read from is seldom more than four frames up).
    fn flag(self) -> &'static str {
        match self {
            Self::FramePointers => "-g",
            Self::Dwarf => "--call-graph=dwarf,2048",
        }
    }

    /// The word [`Sampling::note`] writes.
    fn word(self) -> &'static str {
        match self {
            Self::FramePointers => "fp",
            Self::Dwarf => "dwarf",
        }
    }
}

/// Who samples, for the messages: the optimizer's name and what works
/// instead on a machine without a PMU.
pub struct Sampler {
    pub what: &'static str,
    pub instead: &'static str,
    /// The event sampled when the variant names none, on any machine (a
    /// timer, which needs no PMU); `None`: hardware cycles, refused without
    /// a PMU.
    pub default_event: Option<&'static str>,
    /// When samples carry call stacks.
    pub call_graph: CallGraph,
}

/// When a sampler records call stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    Never,
    /// Always, and never branch stacks (Go's PGO reads stacks only).
    Always(Unwind),
    /// Where there are no branch stacks to record (AutoFDO on timer
    /// samples: the only place the targets of calls through pointers are
    /// seen).
    WithoutBranchStacks(Unwind),
}

/// What this machine's perf can do (hardware counters, LBR), probed once.
fn machine() -> (bool, bool) {
    static PROBED: OnceLock<(bool, bool)> = OnceLock::new();
    *PROBED.get_or_init(|| {
        (
            crate::env::perf_counts_instructions(),
            crate::env::has_branch_stacks(),
        )
    })
}

/// What a variant asks of its training's samples: its own event
/// (`sample_event`), and call chains where there are no branch stacks
/// (AutoFDO's `call_chains`) beside the sampler's own choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked<'a> {
    pub event: Option<&'a str>,
    pub call_chains: Option<Unwind>,
}

/// How to sample: the variant's own event if it names one, else hardware
/// cycles with branch stacks where the CPU has LBR; call chains as the
/// variant asks, else as the sampler does. The error says why the machine
/// cannot, and what works instead.
pub fn sampling(asked: Asked, sampler: &Sampler) -> Result<Sampling, String> {
    let sampler = &as_asked(sampler, asked);
    let event = asked.event;
    if !super::tools::is_installed("perf") {
        return Err(format!(
            "{} records training runs with perf, which is not installed\nhint: install it with `apt-get install -y linux-perf` (afterburner does when it runs as root)",
            sampler.what
        ));
    }
    let (counters, lbr) = machine();
    let chosen = choose(event, counters, lbr, sampler)?;
    can_record(&chosen)?;
    Ok(chosen)
}

/// `sampler` with the call chains `asked` for, where there are no branch
/// stacks (with them, a call's targets are in the branches).
fn as_asked(sampler: &Sampler, asked: Asked) -> Sampler {
    Sampler {
        call_graph: asked
            .call_chains
            .map_or(sampler.call_graph, CallGraph::WithoutBranchStacks),
        ..*sampler
    }
}

/// Whether user-space cycles with branch stacks can be recorded here: the
/// CPU has LBR and perf may use it. Probed once.
pub fn lbr_sampling_works() -> bool {
    static PROBED: OnceLock<bool> = OnceLock::new();
    *PROBED.get_or_init(|| {
        if !super::tools::is_installed("perf") {
            return false;
        }
        let (counters, lbr) = machine();
        counters
            && lbr
            && can_record(&Sampling {
                event: "cycles:u".to_owned(),
                branch_stack: true,
                call_graph: None,
            })
            .is_ok()
    })
}

/// Whether perf may record `sampling` here at all (a container's seccomp
/// or `perf_event_paranoid` may forbid it even where the CPU could).
fn can_record(sampling: &Sampling) -> Result<(), String> {
    let mut command = Command::new("perf");
    command.args(["record", "-q", "-e", &sampling.event]);
    command.args(sampling.flags());
    command.args(["-o", "/dev/null", "--", "true"]);
    match capture_command(&mut command, Duration::from_secs(30)) {
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(format!(
            "perf cannot record `{}` here:\n{}\nhint: check /proc/sys/kernel/perf_event_paranoid (and a container's seccomp profile), or use optimize = [\"pgo\"], which needs no perf",
            sampling.event,
            quote_output(out.stderr.trim())
        )),
        Err(e) => Err(format!(
            "perf did not run ({e})\nhint: install it with `apt-get install -y linux-perf`"
        )),
    }
}

fn choose(
    event: Option<&str>,
    counters: bool,
    lbr: bool,
    sampler: &Sampler,
) -> Result<Sampling, String> {
    if let Some(event) = event.or(sampler.default_event) {
        let software = ["cpu-clock", "task-clock"]
            .iter()
            .any(|s| event.starts_with(s));
        return Ok(stacks(event, lbr && !software, sampler.call_graph));
    }
    if !counters {
        return Err(format!(
            "{} samples the CPU's hardware events, and perf finds no hardware counters on this machine (no PMU, as in most VMs), let alone LBR branch stacks\nhint: {}; to try the sampled path anyway on timer samples (a weaker profile, no branch data) set sample_event = \"cpu-clock\" on the variant",
            sampler.what, sampler.instead
        ));
    }
    Ok(stacks("cycles:u", lbr, sampler.call_graph))
}

/// Sampling `event` with branch stacks where `lbr` can and the sampler
/// wants them, with call stacks as `call_graph` says.
fn stacks(event: &str, lbr: bool, call_graph: CallGraph) -> Sampling {
    let (branch_stack, call_graph) = match call_graph {
        CallGraph::Never => (lbr, None),
        // Call stacks are all such a sampler reads: no branch stacks.
        CallGraph::Always(unwind) => (false, Some(unwind)),
        CallGraph::WithoutBranchStacks(unwind) => (lbr, (!lbr).then_some(unwind)),
    };
    Sampling {
        event: event.to_owned(),
        branch_stack,
        call_graph,
    }
}

impl Sampling {
    /// The `perf record` flags beside `-e`: `-b`, `-g` or
    /// `--call-graph=dwarf,…`.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = Vec::new();
        if self.branch_stack {
            flags.push("-b");
        }
        if let Some(unwind) = self.call_graph {
            flags.push(unwind.flag());
        }
        flags
    }

    /// How `start` notes it beside the recordings (read by [`noted`]).
    fn note(&self) -> String {
        format!(
            "{} branch_stack={} call_graph={}\n",
            self.event,
            self.branch_stack,
            self.call_graph.map_or("false", Unwind::word)
        )
    }
}

/// The sampling a round's note says (see [`Sampling::note`]).
fn noted(text: &str) -> Option<Sampling> {
    let mut words = text.split_whitespace();
    let event = words.next()?.to_owned();
    let flags: Vec<&str> = words.collect();
    Some(Sampling {
        event,
        branch_stack: flags.contains(&"branch_stack=true"),
        // `true`: a note from before DWARF stacks, when `-g` was the one way.
        call_graph: if flags.contains(&"call_graph=dwarf") {
            Some(Unwind::Dwarf)
        } else if flags.contains(&"call_graph=fp") || flags.contains(&"call_graph=true") {
            Some(Unwind::FramePointers)
        } else {
            None
        },
    })
}

/// The perf event this round's recordings sampled, as `start` noted it.
pub fn recorded_event(dirs: &StageDirs) -> Option<String> {
    let text = fs_err::read_to_string(raw_dir(dirs).join(SAMPLING_FILE)).ok()?;
    noted(&text).map(|s| s.event)
}

/// Choose the sampling for a training round, note it beside the raw
/// recordings and return the prefix training runs are started under.
pub fn start(dirs: &StageDirs, asked: Asked, sampler: &Sampler) -> Result<Vec<String>> {
    let sampling = sampling(asked, sampler).map_err(anyhow::Error::msg)?;
    let raw = raw_dir(dirs);
    fs_err::create_dir_all(&raw)?;
    fs_err::write(raw.join(SAMPLING_FILE), sampling.note())?;
    Ok(record_prefix(&sampling, &raw))
}

/// Whether the round's `recordings` are converted with their branch stacks
/// (LBR): each recording's own header says (`perf evlist -v`), so a
/// recording made elsewhere, with no note from [`start`], is read as what
/// it is. All must hold them: a converter reads every recording of a round
/// one way, and the profiles of both ways are not merged. Only where perf
/// cannot read a header does the note `start` left decide.
pub fn recorded_branch_stacks(dirs: &StageDirs, recordings: &[PathBuf]) -> bool {
    let read: Option<Vec<bool>> = recordings.iter().map(|r| holds_branch_stacks(r)).collect();
    let Some(read) = read else {
        return fs_err::read_to_string(raw_dir(dirs).join(SAMPLING_FILE))
            .is_ok_and(|s| s.contains("branch_stack=true"));
    };
    let with = read.iter().filter(|b| **b).count();
    if with > 0 && with < read.len() {
        crate::progress::info(format_args!(
            "{with} of {} recordings in {} hold branch stacks (LBR); all are converted without them, as the others must be",
            read.len(),
            raw_dir(dirs).display()
        ));
    }
    !read.is_empty() && with == read.len()
}

/// Whether `recording` holds branch stacks: an event whose `sample_type`
/// names `BRANCH_STACK` (`perf record -b`); `None` when perf cannot read
/// its header.
pub fn holds_branch_stacks(recording: &Path) -> Option<bool> {
    names_sample_bit(&evlist(recording)?, "BRANCH_STACK")
}

/// Whether `recording`'s samples copy the user stack (`STACK_USER`:
/// `--call-graph dwarf`), so that `perf script` unwinds its call chains
/// with the binary's CFI rather than reading the frame pointers' walk;
/// `None` when perf cannot read its header.
pub fn holds_user_stacks(recording: &Path) -> Option<bool> {
    names_sample_bit(&evlist(recording)?, "STACK_USER")
}

/// `perf evlist -v` of `recording`, `None` when perf cannot read it.
fn evlist(recording: &Path) -> Option<String> {
    let mut command = Command::new("perf");
    command.args(["evlist", "-v", "-i"]).arg(recording);
    let out = capture_command(&mut command, Duration::from_mins(1)).ok()?;
    out.success().then_some(out.stdout)
}

/// Whether `perf evlist -v`'s output (one event a line, `sample_type:
/// IP|TID|…,` among its fields) names a sampled event with `bit`; `None`
/// when it names no `sample_type` at all.
fn names_sample_bit(evlist: &str, bit: &str) -> Option<bool> {
    let mut types = evlist.lines().filter_map(|line| {
        let (_, rest) = line.split_once("sample_type")?;
        let rest = rest.trim_start_matches([' ', ':', '=']);
        Some(rest.split([',', ' ']).next().unwrap_or_default())
    });
    let first = types.next()?;
    Some(
        std::iter::once(first)
            .chain(types)
            .any(|t| t.split('|').any(|b| b == bit)),
    )
}

/// Recordings attached to running services over a workload's window
/// (`perf record -p`), sampled as this round's training is.
#[derive(Debug, Clone)]
pub struct Attach {
    sampling: Sampling,
    raw: PathBuf,
}

/// How long perf may take to write its file after SIGINT (it reads the
/// recording again for build ids).
const FINISH_TIMEOUT: Duration = Duration::from_mins(2);
/// How long perf may take to attach (it reads every process's maps).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);
/// Fewer samples than this in a window's recording is an error: a profile
/// from a handful of samples would steer the build at random.
const MIN_SAMPLES: usize = 10;

/// The attachment for this round, when [`start`] chose a sampling for it
/// (a sampled optimization); `None` otherwise.
pub fn attacher(dirs: &StageDirs) -> Option<Attach> {
    let raw = raw_dir(dirs);
    let sampling = noted(&fs_err::read_to_string(raw.join(SAMPLING_FILE)).ok()?)?;
    Some(Attach { sampling, raw })
}

/// A `perf record -p` running over one service.
#[derive(Debug)]
pub struct Recording {
    pid: libc::pid_t,
    child: std::process::Child,
    out: PathBuf,
    log: PathBuf,
    /// The service's binary, for the messages.
    binary: PathBuf,
    /// When perf's events went on.
    started: std::time::Instant,
}

impl Attach {
    /// Start recording every process of a service: `pids` (its processes,
    /// each with all its threads) into `raw/<name>.perfdata`, perf's own
    /// output into `log`. Returns once perf has attached.
    pub fn attach(
        &self,
        name: &str,
        pids: &[libc::pid_t],
        binary: PathBuf,
        log: &Path,
    ) -> Result<Recording> {
        let out = self.raw.join(format!("{name}.{RAW_EXTENSION}"));
        let list: Vec<String> = pids.iter().map(ToString::to_string).collect();
        let mut command = Command::new("perf");
        command.args(["record", "-q", "-e", &self.sampling.event]);
        command.args(self.sampling.flags());
        // Disabled until told over a FIFO, which perf reads only once it
        // has read every process's maps: a process forked before then
        // would inherit the events unseen (its samples unresolved).
        let control = self.raw.join(format!("{name}.control"));
        let ack = self.raw.join(format!("{name}.ack"));
        for fifo in [&control, &ack] {
            make_fifo(fifo)?;
        }
        command.arg("-p").arg(list.join(",")).arg("-o").arg(&out);
        command.args(["-D", "-1", "--control"]).arg(format!(
            "fifo:{},{}",
            control.display(),
            ack.display()
        ));
        let file = fs_err::File::create(log)?.into_parts().0;
        command
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file);
        // A group of its own, so the guardian may kill it should
        // afterburner die, and a Ctrl-C stops afterburner first.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        crate::process::die_with_afterburner(&mut command);
        let child = command
            .spawn()
            .with_context(|| format!("starting perf record -p for service `{name}`"))?;
        crate::process::watch(child.id());
        let mut recording = Recording {
            pid: libc::pid_t::try_from(child.id()).context("invariant: pids fit pid_t")?,
            child,
            out,
            log: log.to_path_buf(),
            binary,
            started: std::time::Instant::now(),
        };
        recording.wait_attached()?;
        recording.started = std::time::Instant::now();
        Ok(recording)
    }
}

impl Recording {
    /// Tell perf to start (`enable` on its control FIFO) and wait for its
    /// `ack`, which it sends once its events are on in every process.
    fn wait_attached(&mut self) -> Result<()> {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        use std::io::{Read as _, Write as _};
        let fifo = |path: &Path| {
            // Read and write: opening never waits for the other end.
            fs_err::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
        };
        let control = self.out.with_extension("control");
        let ack_path = self.out.with_extension("ack");
        // Held open until perf answers: a FIFO's data is dropped when its
        // last opener closes it, and perf may not have opened it yet.
        let mut enable = fifo(&control)?;
        enable.write_all(b"enable\n")?;
        let mut ack = fifo(&ack_path)?;
        let deadline = std::time::Instant::now() + ATTACH_TIMEOUT;
        let mut heard = Vec::new();
        let mut buf = [0u8; 64];
        while !String::from_utf8_lossy(&heard).contains("ack") {
            if let Ok(n) = ack.read(&mut buf) {
                heard.extend_from_slice(&buf[..n]);
                continue;
            }
            if let Some(status) = self.child.try_wait()? {
                crate::guardian::forget(self.pid);
                bail!(
                    "perf record could not attach to {} ({})\n{}\nlog: {}",
                    self.binary.display(),
                    crate::process::describe_status(status),
                    quote_output(&crate::process::tail(&self.log, 20)),
                    self.log.display()
                );
            }
            if std::time::Instant::now() >= deadline {
                bail!(
                    "perf record did not attach to {} within {ATTACH_TIMEOUT:?}\nlog: {}",
                    self.binary.display(),
                    self.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(enable);
        let _ = fs_err::remove_file(&control);
        let _ = fs_err::remove_file(&ack_path);
        Ok(())
    }

    /// End the recording at the window's end: SIGINT to perf (by its pid),
    /// a wait for it to write its file, then a check that it holds samples;
    /// what it cost is written beside it ([`recording_cost`]).
    ///
    /// [`recording_cost`]: super::recording_cost
    pub fn finish(mut self, workload: &str) -> Result<PathBuf> {
        let seconds = self.started.elapsed().as_secs_f64();
        crate::process::signal(self.pid, libc::SIGINT);
        let late = crate::process::wait_exit(self.pid, FINISH_TIMEOUT)?;
        if late {
            crate::process::signal(self.pid, libc::SIGKILL);
        }
        // Exited, not yet reaped: its CPU time is still in /proc.
        let perf_cpu = super::recording_cost::cpu_time(self.pid);
        crate::guardian::forget(self.pid);
        let status = self.child.wait()?;
        if late {
            bail!(
                "perf record of {} did not finish within {FINISH_TIMEOUT:?} of SIGINT and was killed\nlog: {}",
                self.binary.display(),
                self.log.display()
            );
        }
        let samples = count_samples(&self.out)?;
        if samples < MIN_SAMPLES {
            bail!(
                "the recording of {} over workload `{workload}`'s window holds {samples} samples (perf exited with {}): too few for a profile\n{}\nrecording: {}\nhint: make the workload drive this service for longer (perf samples about 4000 times a second of its CPU time), or set record = \"life\" on the service to record it from start to stop",
                self.binary.display(),
                crate::process::describe_status(status),
                quote_output(&crate::process::tail(&self.log, 20)),
                self.out.display()
            );
        }
        let cost = super::recording_cost::RecordingCost {
            workload: workload.to_owned(),
            service: self
                .out
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            seconds,
            samples: samples as u64,
            perf_cpu_seconds: perf_cpu.map(|d| d.as_secs_f64()),
        };
        super::recording_cost::write(&self.out, &cost)?;
        crate::progress::info(format_args!(
            "recorded {} over `{workload}`: {}",
            cost.service,
            cost.describe()
        ));
        Ok(self.out.clone())
    }
}

impl Drop for Recording {
    /// A recording left unfinished (the training failed) is killed.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            crate::process::signal(self.pid, libc::SIGKILL);
            crate::guardian::forget(self.pid);
            let _ = self.child.wait();
        }
    }
}

/// A named pipe at `path` (replacing what a failed run left there).
fn make_fifo(path: &Path) -> Result<()> {
    let _ = fs_err::remove_file(path);
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .context("invariant: paths hold no NUL")?;
    // SAFETY: mkfifo reads the NUL-terminated string it is given.
    if unsafe { libc::mkfifo(name.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("creating the FIFO {}", path.display()));
    }
    Ok(())
}

/// The samples in a recording (`perf script`, one line each).
pub fn count_samples(recording: &Path) -> Result<usize> {
    let mut command = Command::new("perf");
    // -G: one line a sample, also where it carries its call chain.
    command
        .args(["script", "-G", "-F", "ip", "-i"])
        .arg(recording);
    let out = capture_command(&mut command, FINISH_TIMEOUT)
        .context("counting the samples with perf script")?;
    Ok(if out.success() {
        out.stdout.lines().filter(|l| !l.trim().is_empty()).count()
    } else {
        0
    })
}

/// The `perf` words that record one process tree into `raw/<pid>.perfdata`.
fn record_prefix(sampling: &Sampling, raw: &Path) -> Vec<String> {
    let flags: String = sampling.flags().iter().flat_map(|f| [" ", f]).collect();
    vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!(
            "exec perf record -q -e {}{flags} -o \"$0/$$.{RAW_EXTENSION}\" -- \"$@\"",
            sampling.event
        ),
        raw.to_string_lossy().into_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTOFDO: Sampler = Sampler {
        what: "AutoFDO",
        instead: "use optimize = [\"pgo\"]",
        default_event: None,
        call_graph: CallGraph::WithoutBranchStacks(Unwind::Dwarf),
    };

    #[test]
    fn no_pmu_is_refused_with_what_works_instead() {
        let err = choose(None, false, false, &AUTOFDO).unwrap_err();
        assert!(err.starts_with("AutoFDO samples"), "{err}");
        assert!(err.contains("no hardware counters"), "{err}");
        assert!(err.contains("optimize = [\"pgo\"]"), "{err}");
        assert!(err.contains("sample_event = \"cpu-clock\""), "{err}");
    }

    #[test]
    fn lbr_is_used_where_the_cpu_has_it_and_never_on_timer_samples() {
        assert_eq!(
            choose(None, true, true, &AUTOFDO),
            Ok(Sampling {
                event: "cycles:u".into(),
                branch_stack: true,
                call_graph: None,
            })
        );
        assert!(!choose(None, true, false, &AUTOFDO).unwrap().branch_stack);
        assert!(
            !choose(Some("cpu-clock:u"), true, true, &AUTOFDO)
                .unwrap()
                .branch_stack
        );
        assert!(choose(Some("cpu-clock"), false, false, &AUTOFDO).is_ok());
    }

    #[test]
    fn autofdo_records_call_stacks_where_it_records_no_branch_stacks() {
        let timer = choose(Some("cpu-clock"), true, true, &AUTOFDO).unwrap();
        assert!(timer.call_graph == Some(Unwind::Dwarf) && !timer.branch_stack);
        assert_eq!(timer.flags(), ["--call-graph=dwarf,2048"]);
        assert_eq!(
            noted(&timer.note()).map(|s| s.call_graph),
            Some(Some(Unwind::Dwarf))
        );
        let lbr = choose(None, true, true, &AUTOFDO).unwrap();
        assert!(lbr.call_graph.is_none() && lbr.branch_stack);
        assert!(choose(None, true, false, &AUTOFDO)
            .unwrap()
            .call_graph
            .is_some());
    }

    /// `perf evlist -v` (perf 6.1) on google/autofdo's `testdata/test.lbr`
    /// (`perf record -b`), on its `propeller_sample_1.perfdata1` (`-e
    /// cycles -b`), on a `cpu-clock` recording of this machine, and on one
    /// whose sampled event is not the first (an ETM trace injected as
    /// samples: autofdo's `perf-kernel.data`).
    fn branch_stack_bit(evlist: &str) -> Option<bool> {
        names_sample_bit(evlist, "BRANCH_STACK")
    }

    /// `perf evlist -v` (perf 6.1) of `perf record -e cpu-clock -F 20000
    /// --call-graph dwarf,1024` and of `-g`, on this machine.
    #[test]
    fn dwarf_stacks_are_read_from_the_recordings_own_header() {
        let dwarf = "cpu-clock: type: 1, size: 128, { sample_period, sample_freq }: 20000, sample_type: IP|TID|TIME|ADDR|CALLCHAIN|PERIOD|REGS_USER|STACK_USER|DATA_SRC, read_format: ID|LOST, disabled: 1, inherit: 1, mmap: 1, comm: 1, freq: 1, enable_on_exec: 1, task: 1, mmap_data: 1, sample_id_all: 1, exclude_guest: 1, exclude_callchain_user: 1, mmap2: 1, comm_exec: 1, ksymbol: 1, bpf_event: 1, sample_regs_user: 0xff0fff, sample_stack_user: 1024\n";
        let fp = "cpu-clock: type: 1, size: 128, { sample_period, sample_freq }: 20000, sample_type: IP|TID|TIME|CALLCHAIN|PERIOD, read_format: ID|LOST, disabled: 1, inherit: 1, mmap: 1, comm: 1, freq: 1, enable_on_exec: 1, task: 1, sample_id_all: 1, exclude_guest: 1, mmap2: 1, comm_exec: 1, ksymbol: 1, bpf_event: 1\n";
        assert_eq!(names_sample_bit(dwarf, "STACK_USER"), Some(true));
        assert_eq!(names_sample_bit(fp, "STACK_USER"), Some(false));
        assert_eq!(names_sample_bit(dwarf, "BRANCH_STACK"), Some(false));
    }

    #[test]
    fn branch_stacks_are_read_from_the_recordings_own_header() {
        let lbr = "br_inst_exec:taken: type: 4, size: 96, config: 0x534088, { sample_period, sample_freq }: 500000, sample_type: IP|TID|TIME|BRANCH_STACK, read_format: TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID, disabled: 1, branch_sample_type: ANY\n";
        let cycles = "cycles:u: size: 112, { sample_period, sample_freq }: 4000, sample_type: IP|TID|TIME|PERIOD|BRANCH_STACK, disabled: 1, inherit: 1, exclude_kernel: 1, branch_sample_type: ANY\n";
        let timer = "cpu-clock: type: 1, size: 128, { sample_period, sample_freq }: 4000, sample_type: IP|TID|TIME|PERIOD, read_format: ID|LOST, disabled: 1\n";
        let second = "cs_etm/autofdo/k: type: 8, sample_type: IP|TID|TIME|CPU|IDENTIFIER, read_format: ID\ninstructions:k: size: 112, config: 0x1, sample_type: IP|TID|TIME|CPU|PERIOD|BRANCH_STACK|IDENTIFIER, read_format: ID\n";
        assert_eq!(branch_stack_bit(lbr), Some(true));
        assert_eq!(branch_stack_bit(cycles), Some(true));
        assert_eq!(branch_stack_bit(timer), Some(false));
        assert_eq!(branch_stack_bit(second), Some(true));
        // perf's header dump writes `sample_type = …`.
        assert_eq!(
            branch_stack_bit(
                "# event : name = x, sample_type = IP|TID|BRANCH_STACK, read_format = ID"
            ),
            Some(true)
        );
        // The field's name is not a bit: `branch_sample_type` alone is no stack.
        assert_eq!(
            branch_stack_bit("x: branch_sample_type: ANY\n"),
            Some(false)
        );
        assert_eq!(branch_stack_bit("incompatible file format\n"), None);
    }

    #[test]
    fn each_recorded_process_writes_its_own_file() {
        let sampling = Sampling {
            event: "cycles:u".into(),
            branch_stack: true,
            call_graph: None,
        };
        let prefix = record_prefix(&sampling, Path::new("/p/raw"));
        assert_eq!(prefix[0], "sh");
        assert!(prefix[2].contains("perf record -q -e cycles:u -b -o \"$0/$$.perfdata\""));
        assert_eq!(prefix[3], "/p/raw");
    }

    /// A variant's `call_chains` turns chains on for a sampler that records
    /// none (AutoFDO's default), only where there are no branch stacks.
    #[test]
    fn call_chains_asked_are_recorded_where_there_is_no_lbr() {
        let never = Sampler {
            call_graph: CallGraph::Never,
            ..AUTOFDO
        };
        let plain = as_asked(&never, Asked::default());
        assert!(choose(Some("cpu-clock"), false, false, &plain)
            .unwrap()
            .call_graph
            .is_none());
        let asked = Asked {
            event: Some("cpu-clock"),
            call_chains: Some(Unwind::FramePointers),
        };
        let chains = as_asked(&never, asked);
        let timer = choose(asked.event, false, false, &chains).unwrap();
        assert_eq!(timer.call_graph, Some(Unwind::FramePointers));
        assert_eq!(timer.flags(), ["-g"]);
        let lbr = choose(None, true, true, &chains).unwrap();
        assert!(lbr.branch_stack && lbr.call_graph.is_none());
    }

    #[test]
    fn a_call_graph_sampler_takes_its_timer_without_a_pmu_and_records_stacks() {
        let go = Sampler {
            what: "Go PGO",
            instead: "",
            default_event: Some("cpu-clock"),
            call_graph: CallGraph::Always(Unwind::FramePointers),
        };
        let chosen = choose(None, false, false, &go).unwrap();
        assert_eq!(chosen.event, "cpu-clock");
        assert!(chosen.call_graph == Some(Unwind::FramePointers) && !chosen.branch_stack);
        assert_eq!(chosen.flags(), ["-g"]);
        // Even where the CPU has LBR: call stacks only.
        assert!(
            !choose(Some("cycles:u"), true, true, &go)
                .unwrap()
                .branch_stack
        );
        let prefix = record_prefix(&chosen, Path::new("/p/raw"));
        assert!(
            prefix[2].contains("perf record -q -e cpu-clock -g -o"),
            "{prefix:?}"
        );
        assert_eq!(noted(&chosen.note()), Some(chosen));
        // A note an older afterburner wrote still reads.
        assert_eq!(
            noted("cycles:u branch_stack=true\n").map(|s| (s.branch_stack, s.call_graph)),
            Some((true, None))
        );
        assert_eq!(
            noted("cpu-clock branch_stack=false call_graph=true\n").map(|s| s.call_graph),
            Some(Some(Unwind::FramePointers))
        );
    }
}
