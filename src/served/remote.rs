//! A load on a node of its own (`[cluster] load = "separate"`): a bench
//! block's job holds two nodes; the block runs on the first (its services
//! bind that node's address, `{host}`) and each run's load is a Slurm job
//! step (`srun --overlap -w OTHER afterburner load-step …`) on the second,
//! which reads the same experiment file from the shared work directory,
//! sends its requests over the cluster's network, and writes its outcome
//! beside the run's logs. The load side sends only to loopback or to the
//! range of benchmark networks, 198.18.0.0/15 (RFC 2544), where the test
//! cluster's nodes live; anything else is refused.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::load::{self, Outcome};
use crate::process::{capture_command, quote_output};
use crate::runs::LoadPath;

/// Which part of a load a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Warmup, then the measured load (the load as written).
    All,
    /// The warmup alone (before a counted window opens).
    Warmup,
    /// The measured load without its warmup (inside a counted window).
    Measured,
}

/// How the block's runs reach their load node.
#[derive(Debug, Clone)]
pub struct RemoteLoad {
    pub path: LoadPath,
    /// The afterburner binary the step runs (this one: on shared storage).
    program: PathBuf,
    /// The experiment file, absolute, and whether `--quick`.
    file: PathBuf,
    quick: bool,
}

/// One load step to run on the load node.
pub struct Step<'a> {
    pub workload: &'a str,
    pub address: &'a str,
    pub seed: u64,
    pub part: Part,
    /// `logs/<stem>` of the run: the step writes `<stem>.remote.json` and
    /// srun's output goes to `<stem>.remote.log`.
    pub stem: PathBuf,
    /// How long the step may take, srun's start included.
    pub timeout: Duration,
}

impl RemoteLoad {
    /// The load node of this job: the other node of its allocation
    /// (`SLURM_JOB_NODELIST`), both nodes' addresses on the cluster
    /// network. An error when the job has no second node.
    pub fn discover(file: &Path, quick: bool) -> Result<Self> {
        let here = crate::env::hostname().context("this node has no host name")?;
        let list = std::env::var("SLURM_JOB_NODELIST").context(
            "load = \"separate\" needs the block's Slurm job (SLURM_JOB_NODELIST is not set)",
        )?;
        let names = scontrol(&["show", "hostnames", &list])?;
        let Some(other) = names
            .lines()
            .map(str::trim)
            .find(|n| !n.is_empty() && *n != here)
        else {
            bail!(
                "load = \"separate\": the block's job on {here} holds no second node for the load (nodes: {list})\nhint: the partition needs two free nodes per block"
            );
        };
        let load_address = node_address(other)?;
        let service_address = route_to(load_address).with_context(|| {
            format!("finding the address of {here} on the way to {other} ({load_address})")
        })?;
        check_target(&SocketAddr::new(service_address, 0).to_string())?;
        Ok(Self {
            path: LoadPath {
                service_node: here,
                service_address: service_address.to_string(),
                load_node: other.to_owned(),
                load_address: load_address.to_string(),
            },
            program: std::env::current_exe()
                .context("cannot tell where this afterburner binary is")?,
            file: file.to_owned(),
            quick,
        })
    }

    /// Run `step` on the load node and read its outcome back.
    pub fn run(&self, step: &Step) -> Result<Outcome> {
        check_target(step.address)?;
        let out = PathBuf::from(format!("{}.remote.json", step.stem.display()));
        let log = PathBuf::from(format!("{}.remote.log", step.stem.display()));
        let _ = fs_err::remove_file(&out);
        let mut command = Command::new("srun");
        command
            .args(["--overlap", "--nodes=1", "--ntasks=1", "--quiet"])
            .arg(format!("--nodelist={}", self.path.load_node))
            .arg("--job-name=afterburner-load")
            .arg(format!("--output={}", log.display()))
            .arg(&self.program)
            .arg("load-step")
            .arg(&self.file)
            .args(["--workload", step.workload, "--address", step.address])
            .arg(format!("--seed={}", step.seed))
            .arg(format!(
                "--part={}",
                match step.part {
                    Part::All => "all",
                    Part::Warmup => "warmup",
                    Part::Measured => "measured",
                }
            ))
            .arg("--out")
            .arg(&out);
        if self.quick {
            command.arg("--quick");
        }
        let captured = capture_command(&mut command, step.timeout).with_context(|| {
            format!(
                "the load step on {} (srun; its log: {})",
                self.path.load_node,
                log.display()
            )
        })?;
        if !captured.success() {
            bail!(
                "the load on {} against {} failed ({}):\n{}\nlog: {}",
                self.path.load_node,
                step.address,
                crate::process::describe_status(captured.status),
                quote_output(
                    format!(
                        "{}\n{}",
                        captured.stderr.trim(),
                        crate::workdir::tail(&log, 20)
                    )
                    .trim()
                ),
                log.display()
            );
        }
        let text = fs_err::read_to_string(&out)
            .with_context(|| format!("the load step on {} left no outcome", self.path.load_node))?;
        serde_json::from_str(&text).with_context(|| format!("reading {}", out.display()))
    }
}

fn scontrol(args: &[&str]) -> Result<String> {
    let captured = capture_command(Command::new("scontrol").args(args), Duration::from_secs(30))?;
    if !captured.success() {
        bail!(
            "`scontrol {}` failed:\n{}",
            args.join(" "),
            quote_output(captured.stderr.trim())
        );
    }
    Ok(captured.stdout)
}

/// Node `name`'s address as Slurm knows it (`NodeAddr`), else its name resolved.
fn node_address(name: &str) -> Result<IpAddr> {
    let shown = scontrol(&["show", "node", name, "-o"])?;
    let addr = shown
        .split_whitespace()
        .find_map(|w| w.strip_prefix("NodeAddr="))
        .unwrap_or(name);
    if let Ok(ip) = addr.parse() {
        return Ok(ip);
    }
    std::net::ToSocketAddrs::to_socket_addrs(&(addr, 0))
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip())
        .with_context(|| format!("node {name}'s address `{addr}` does not resolve"))
}

/// This node's address on the route to `peer`: a UDP socket connected
/// to it (no packet is sent) is bound to the source address the kernel
/// would use.
fn route_to(peer: IpAddr) -> Result<IpAddr> {
    let any = match peer {
        IpAddr::V4(_) => IpAddr::from([0, 0, 0, 0]),
        IpAddr::V6(_) => IpAddr::from([0u16; 8]),
    };
    let socket = UdpSocket::bind(SocketAddr::new(any, 0))?;
    socket.connect(SocketAddr::new(peer, 9))?;
    Ok(socket.local_addr()?.ip())
}

/// Whether `ip` is one a load may send to: loopback, or the benchmark
/// networks' range 198.18.0.0/15 that the test cluster's nodes live in.
pub fn allowed(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || in_benchmark_range(v4),
        IpAddr::V6(v6) => v6.is_loopback(),
    }
}

fn in_benchmark_range(ip: Ipv4Addr) -> bool {
    let [a, b, _, _] = ip.octets();
    a == 198 && (b & 0xFE) == 18
}

/// Refuse a load target outside loopback and 198.18.0.0/15.
pub fn check_target(address: &str) -> Result<()> {
    let parsed: SocketAddr = address.parse().with_context(|| {
        format!("a separate load's address must be IP:PORT, not `{address}`\nhint: leave the load's address at its default, `{{host}}:{{port}}`")
    })?;
    if !allowed(parsed.ip()) {
        bail!(
            "refusing to send load to {address}: a load on another node sends only to the cluster's benchmark network 198.18.0.0/15 or to loopback\nhint: the services must bind `{{host}}`, the service node's address on that network"
        );
    }
    Ok(())
}

/// `afterburner load-step`: what a load node runs for one run.
#[derive(Debug, clap::Args)]
pub struct StepArgs {
    /// The experiment file (on storage both nodes see).
    pub file: PathBuf,
    /// The workload whose load to run.
    #[arg(long)]
    pub workload: String,
    /// The services' address, IP:PORT.
    #[arg(long)]
    pub address: String,
    #[arg(long)]
    pub seed: u64,
    #[arg(long, value_enum, default_value = "all")]
    pub part: Part,
    /// Where to write the outcome (JSON).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub quick: bool,
}

/// Run one load step here and write its outcome.
pub fn step(args: &StepArgs) -> Result<()> {
    check_target(&args.address)?;
    let e = crate::experiment::load(&args.file, args.quick)?;
    let workload = e
        .workloads
        .iter()
        .find(|w| w.name == args.workload)
        .with_context(|| {
            format!(
                "{} has no workload `{}`",
                args.file.display(),
                args.workload
            )
        })?;
    let load = workload.load.as_ref().with_context(|| {
        format!(
            "workload `{}` of {} has no load",
            args.workload,
            args.file.display()
        )
    })?;
    let mut spec = load.spec(args.address.clone(), args.seed, &e.dir);
    match args.part {
        Part::All => {}
        Part::Warmup => spec = spec.warmup_only(),
        Part::Measured => spec.warmup = Duration::ZERO,
    }
    let outcome = load::run(&spec)?;
    fs_err::write(&args.out, serde_json::to_vec(&outcome)?)?;
    // For the run's log: where the load ran and what it got.
    eprintln!(
        "load on {} → {}: {} requests answered, {:.0} req/s",
        crate::env::hostname().unwrap_or_default(),
        args.address,
        outcome.summary.requests,
        outcome.summary.achieved_rps
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_goes_only_to_loopback_or_the_benchmark_range() {
        for good in [
            "127.0.0.1:6379",
            "198.18.0.11:80",
            "198.19.255.254:1",
            "[::1]:80",
        ] {
            check_target(good).unwrap();
        }
        for bad in [
            "198.17.255.255:80",
            "198.20.0.1:80",
            "10.0.0.1:80",
            "8.8.8.8:53",
            "[2001:db8::1]:80",
        ] {
            let error = check_target(bad).unwrap_err().to_string();
            assert!(error.contains("refusing to send load"), "{bad}: {error}");
        }
        let error = check_target("example.com:80").unwrap_err().to_string();
        assert!(error.contains("must be IP:PORT"), "{error}");
    }

    #[test]
    fn the_route_to_loopback_starts_at_loopback() {
        let ip = route_to(IpAddr::from([127, 0, 0, 1])).unwrap();
        assert!(ip.is_loopback(), "{ip}");
    }
}
