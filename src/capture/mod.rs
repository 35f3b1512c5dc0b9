//! `afterburner profile`: a profile captured from a process that keeps
//! running, as a plain file of a standard kind that a later build can
//! bring (a training round's profile and its sources are `profiles/`): a
//! `perf.data` sampled from any binary ([`sampled`]), an instrumented
//! binary's counters dumped on demand (a `.gcda` tree or a `.profraw`,
//! [`dump`] through the preloaded [`shim`]), or a Go service's
//! `net/http/pprof` CPU profile ([`pprof`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Args;

pub mod afdo;
pub mod dump;
pub mod pprof;
pub mod sampled;
pub mod shim;
pub mod train;

/// `afterburner profile`'s arguments.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The process to profile: sampled, its threads and child processes;
    /// with --dump, its counters.
    #[arg(long, value_name = "PID", required_unless_present_any = ["pprof", "shim"])]
    pub pid: Option<libc::pid_t>,
    /// How long to sample (sampled and --pprof).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub duration: Duration,
    /// The perf event sampled (cpu-clock needs no hardware counters).
    #[arg(long, default_value = "cpu-clock")]
    pub event: String,
    /// Record call stacks too (`perf record -g`).
    #[arg(long)]
    pub call_graph: bool,
    /// Instead of sampling: have the instrumented process (started with the
    /// dump shim preloaded) write its counters, which then start again
    /// from zero; --out is then a directory.
    #[arg(long, requires = "pid")]
    pub dump: bool,
    /// How long --dump waits for the process to finish writing.
    #[arg(long, default_value = "60s", value_parser = duration)]
    pub timeout: Duration,
    /// Instead of a pid: a Go service's net/http/pprof address on loopback
    /// (http://127.0.0.1:PORT, path /debug/pprof/profile unless given).
    #[arg(long, value_name = "URL", conflicts_with_all = ["pid", "dump"])]
    pub pprof: Option<String>,
    #[arg(
        long,
        conflicts_with_all = ["pid", "pprof", "dump"],
        help = "Print the path of the dump shim (built with cc if needed), to start a service with: LD_PRELOAD=PATH AFTERBURNER_DUMP_DIR=DIR"
    )]
    pub shim: bool,
    /// With --out NAME.afdo: the binary whose symbols and line tables the
    /// samples are converted with (default: the process's executable; give
    /// an unstripped copy of the same build when that one is stripped).
    #[arg(long, value_name = "PATH", requires = "pid", conflicts_with = "dump")]
    pub binary: Option<PathBuf>,
    /// Where the profile goes: a file (perf.data, .pprof; NAME.afdo
    /// converts the samples into gcc's AutoFDO profile there, keeping the
    /// recording as NAME.perf.data), or a directory with --dump.
    #[arg(long, value_name = "PATH", required_unless_present = "shim")]
    pub out: Option<PathBuf>,
}

fn duration(text: &str) -> Result<Duration, String> {
    crate::units::parse_duration(text)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`{text}` is not a duration (e.g. 500ms, 30s, 2m)"))
}

/// Run `afterburner profile`; prints what it wrote.
pub fn main(args: &ProfileArgs) -> Result<()> {
    if args.shim {
        crate::stdout::line(format_args!(
            "{}",
            shim::build(&shim::default_dir())?.display()
        ))?;
        return Ok(());
    }
    let out = args.out.clone().context("invariant: clap requires --out")?;
    if let Some(url) = &args.pprof {
        let endpoint = pprof::parse(url)?;
        let bytes = pprof::fetch(&endpoint, args.duration, &out)?;
        crate::stdout::line(format_args!(
            "{}: CPU profile of {:?}, {bytes} bytes",
            out.display(),
            args.duration
        ))?;
        return Ok(());
    }
    let pid = args.pid.context("invariant: clap requires --pid")?;
    if args.dump {
        let dumped = dump::dump(pid, args.timeout)?;
        let copied = dump::copy_to(&dumped, &out)?;
        crate::stdout::line(format_args!(
            "{}: dump {} of process {pid} ({} runtime): {} files",
            out.display(),
            dumped.seq,
            dumped.runtime,
            copied.len()
        ))?;
        for file in copied {
            crate::stdout::line(format_args!("  {}", file.display()))?;
        }
        return Ok(());
    }
    let converting = afdo::wanted(&out);
    let recording = if converting {
        afdo::recording_for(&out)
    } else {
        out.clone()
    };
    let binary = if converting {
        Some(afdo::binary_of(pid, args.binary.as_deref())?)
    } else {
        None
    };
    let recorded = sampled::record(&sampled::Request {
        pid,
        duration: args.duration,
        event: args.event.clone(),
        call_graph: args.call_graph,
        out: recording.clone(),
    })?;
    let cost = crate::toolchain::recording_cost::RecordingCost {
        workload: String::new(),
        service: dump::program(pid),
        seconds: args.duration.as_secs_f64(),
        samples: recorded.samples as u64,
        perf_cpu_seconds: recorded.perf_cpu.map(|d| d.as_secs_f64()),
    };
    crate::stdout::line(format_args!(
        "{}: process {pid}: {}",
        recording.display(),
        cost.describe()
    ))?;
    if let Some(binary) = binary {
        let functions = afdo::convert(&recording, &binary, &out)?;
        crate::stdout::line(format_args!(
            "{}: gcc AutoFDO profile of {}, {functions} functions sampled",
            out.display(),
            binary.display()
        ))?;
    }
    Ok(())
}
