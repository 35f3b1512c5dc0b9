//! Services: servers started for a run with the variant's binaries and a
//! free port each, checked for readiness, and stopped after the run
//! (signal, grace period, then SIGKILL) in reverse order, with what the
//! kernel accounted for each (CPU, peak RSS, context switches).

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::experiment::{Bindings, Ready, RunAs, Service};
use crate::load::{self, LoadSpec, Model};
use crate::measure::{command_for, prefixed_command};
use crate::process::{
    capture_command, describe_status, quote_output, reap, signal_group, wait_exit,
};
use crate::workdir::tail;

/// The directory beside a run's `logs/` holding each service's own
/// working directory.
pub const SERVICES_DIR: &str = "services";

/// A started service.
#[derive(Debug)]
struct Running {
    name: String,
    pid: libc::pid_t,
    log: PathBuf,
    stop_signal: (i32, String),
    stop_timeout: Duration,
    started: Instant,
    /// Set once reaped, so `Drop` leaves it alone.
    reaped: bool,
    /// Whether `pid` is a tool that stays between afterburner and the
    /// service (`perf stat`, `perf record`): the stop signal then goes to
    /// its descendants, the service, and the tool ends after them,
    /// writing what it counted.
    wrapped: bool,
}

/// The services of one run; dropping them kills whatever still runs.
#[derive(Debug, Default)]
pub struct Services {
    running: Vec<Running>,
    /// Service name → port, for `{port.NAME}`.
    pub ports: BTreeMap<String, u16>,
}

/// What the kernel accounted for one service over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceUsage {
    pub name: String,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// How it ended: "exit code 0", "signal 15 (SIGTERM)", …
    pub exit: String,
    pub log: PathBuf,
}

/// Marks a state directory whose `setup` finished.
const SET_UP: &str = ".afterburner-setup-done";

/// How long a service's `setup` may take (an initdb, a data load).
const SETUP_TIMEOUT: Duration = Duration::from_mins(30);

/// Create the service's state directory, and run its `setup` there when
/// it has not run yet for this variant (a state directory lives as long
/// as the bench or the training round that made it).
fn prepare_state(
    service: &Service,
    own: &Bindings,
    env: &BTreeMap<String, String>,
    logs: &Path,
    stem: &str,
) -> Result<()> {
    let Some(state) = &own.state else {
        return Ok(());
    };
    fs_err::create_dir_all(state)?;
    if let Some(user) = &service.user {
        give_to(user, state)?;
    }
    let Some(setup) = &service.setup else {
        return Ok(());
    };
    if state.join(SET_UP).exists() {
        return Ok(());
    }
    let line = setup.expand(own)?;
    crate::step::run(&crate::step::Step {
        what: format!("the setup of service `{}`", service.name),
        line: &line,
        env: &env
            .iter()
            .chain(&service.env)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        cwd: state,
        log: logs.join(format!("{stem}-{}.setup.log", service.name)),
        timeout: SETUP_TIMEOUT,
        user: service.user.as_ref().map(RunAs::ids).transpose()?,
    })?;
    fs_err::write(state.join(SET_UP), &line)?;
    Ok(())
}

/// Make `dir` (a training round's profile directory) writable by the
/// services that run as a user of their own, so an instrumented server
/// still writes its profile there.
pub fn give_to_users(services: &[Service], dir: &Path) -> Result<()> {
    for user in services.iter().filter_map(|s| s.user.as_ref()) {
        give_to(user, dir)?;
    }
    Ok(())
}

/// Make `dir` the service user's, after checking they can reach it.
fn give_to(user: &RunAs, dir: &Path) -> Result<()> {
    let (uid, gid) = user.ids()?;
    if let Some(closed) = crate::process::unreachable_by(dir, uid, gid) {
        bail!(
            "the service's user `{}` cannot enter {}, so it cannot reach its directory {}\nhint: `chmod o+x {}`, or give afterburner a work directory every user can enter (--workdir /var/tmp/…)",
            user.name,
            closed.display(),
            dir.display(),
            closed.display()
        );
    }
    crate::process::chown_tree(dir, uid, gid)
        .with_context(|| format!("giving {} to user `{}`", dir.display(), user.name))
}

/// A free TCP port on the loopback interface, as the kernel hands them out.
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")
        .context("finding a free port")?
        .local_addr()?
        .port())
}

/// Ports for every service of a run.
pub fn ports(services: &[Service]) -> Result<BTreeMap<String, u16>> {
    services
        .iter()
        .map(|s| Ok((s.name.clone(), free_port()?)))
        .collect()
}

/// Start every service in order and wait for each to be ready. `bindings`
/// must carry `ports`; logs go to `logs/<stem>-<service>.log`, and a
/// service without a `cwd` of its own runs in `services/<stem>-<service>/`
/// beside `logs/` (a fresh directory per run: no state carried over, and
/// nothing written into the experiment's directory). With
/// a prefix from `under` (an instruction counter's, a whole-life
/// `perf record`), a service runs under it (and gets 20 times its
/// readiness timeout, since callgrind is slow).
pub fn start<'p>(
    services: &[Service],
    bindings: &Bindings,
    env: &BTreeMap<String, String>,
    logs: &Path,
    stem: &str,
    under: &dyn Fn(&Service) -> Option<&'p [String]>,
    cpus: Option<&crate::pinning::CpuSet>,
) -> Result<Services> {
    let mut started = Services {
        running: Vec::new(),
        ports: bindings.ports.clone(),
    };
    for service in services {
        let port = *bindings
            .ports
            .get(&service.name)
            .context("invariant: a port for every service")?;
        let mut own = bindings.clone();
        own.port = Some(port);
        own.state = bindings.states.get(&service.name).cloned();
        prepare_state(service, &own, env, logs, stem)?;
        let line = service.start.expand(&own)?;
        let log = logs.join(format!("{stem}-{}.log", service.name));
        let cwd = if let Some(cwd) = &service.cwd {
            cwd.clone()
        } else {
            let home = logs
                .with_file_name(SERVICES_DIR)
                .join(format!("{stem}-{}", service.name));
            fs_err::create_dir_all(&home)?;
            if let Some(user) = &service.user {
                give_to(user, &home)?;
            }
            home
        };
        let file = fs_err::File::create(&log)?.into_parts().0;
        let counter = under(service);
        let mut command = prefixed_command(counter.unwrap_or_default(), &line);
        command
            .envs(env)
            .envs(&service.env)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        if let Some(user) = &service.user {
            let (uid, gid) = user.ids()?;
            std::os::unix::process::CommandExt::uid(&mut command, uid);
            std::os::unix::process::CommandExt::gid(&mut command, gid);
        }
        crate::process::die_with_afterburner(&mut command);
        if let Some(cpus) = service.cpus.as_ref().or(cpus) {
            crate::pinning::pin_command(&mut command, cpus);
        }
        let child = command
            .spawn()
            .with_context(|| format!("starting service `{}`: {line}", service.name))?;
        crate::process::watch(child.id());
        let pid = libc::pid_t::try_from(child.id()).context("invariant: pids fit pid_t")?;
        started.running.push(Running {
            name: service.name.clone(),
            pid,
            log: log.clone(),
            stop_signal: service.stop_signal.clone(),
            stop_timeout: service.stop_timeout,
            started: Instant::now(),
            reaped: false,
            wrapped: counter.is_some_and(stays_between),
        });
        let patience = if counter.is_some() { 20 } else { 1 };
        wait_ready(
            service,
            &own,
            port,
            patience,
            started.running.last_mut().context("just pushed")?,
        )
        .with_context(|| format!("service `{}` (started with: {line})", service.name))?;
    }
    Ok(started)
}

fn wait_ready(
    service: &Service,
    bindings: &Bindings,
    port: u16,
    patience: u32,
    running: &mut Running,
) -> Result<()> {
    let deadline = Instant::now() + service.ready_timeout * patience;
    let command = match &service.ready {
        Ready::Command(t) => Some(t.expand(bindings)?),
        _ => None,
    };
    loop {
        crate::interrupt::check()?;
        if let Some(status) = exited(running)? {
            bail!(
                "exited before it was ready, with {status}\n{}\nlog: {}",
                quote_output(&tail(&running.log, 20)),
                running.log.display()
            );
        }
        let ready = match &service.ready {
            Ready::Tcp => TcpStream::connect_timeout(
                &std::net::SocketAddr::new(host(bindings), port),
                Duration::from_millis(200),
            )
            .is_ok(),
            Ready::Log(regex) => {
                // Read in pieces: a chatty service's log may be large.
                let mut seen = false;
                let _ = crate::measure::scan_pieces(&running.log, |text| {
                    seen = regex.is_match(text);
                    seen
                });
                seen
            }
            Ready::Command(_) => {
                let line = command.as_deref().unwrap_or_default();
                capture_command(&mut command_for(line), Duration::from_secs(10))
                    .is_ok_and(|c| c.success())
            }
            Ready::Ping { driver, request } => ping(*driver, request, host(bindings), port),
        };
        if ready {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "not ready after {:?} (ready check: {})\n{}\nlog: {}\nhint: raise ready_timeout, or check the readiness test and the start command's port",
                service.ready_timeout,
                ready_name(&service.ready),
                quote_output(&tail(&running.log, 20)),
                running.log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Whether a prefix's process stays the parent of the service rather than
/// exec it: perf (`perf stat -- …`, or `sh -c 'exec perf record … -- "$@"'`)
/// forks the service and writes its file only when the service has ended
/// and it was not itself signalled (`perf stat` dies of a SIGTERM, losing
/// the count). Valgrind and prlimit exec, and become the service.
fn stays_between(prefix: &[String]) -> bool {
    prefix
        .iter()
        .take(3)
        .any(|w| w == "perf" || w.starts_with("exec perf "))
}

fn ready_name(ready: &Ready) -> String {
    match ready {
        Ready::Tcp => "tcp".to_owned(),
        Ready::Log(r) => format!("log:{}", r.as_str()),
        Ready::Command(t) => format!("command:{}", t.text),
        Ready::Ping { driver, .. } => driver.name().to_owned(),
    }
}

/// The address the services bind (`{host}`): the bindings' own, else loopback.
fn host(bindings: &Bindings) -> std::net::IpAddr {
    bindings
        .host
        .as_deref()
        .and_then(|h| h.parse().ok())
        .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1]))
}

/// Whether one request of `driver` gets an answer.
fn ping(driver: load::Driver, request: &str, host: std::net::IpAddr, port: u16) -> bool {
    let Ok(request) = load::template(driver, request, &BTreeMap::new(), Path::new(".")) else {
        return false;
    };
    let spec = LoadSpec {
        driver,
        address: Some(std::net::SocketAddr::new(host, port).to_string()),
        requests: load::RequestMix::one(request),
        model: Model::iterations(1),
        warmup: Duration::ZERO,
        timeout: Duration::from_millis(500),
        depth: 1,
        threads: 1,
        interval: Duration::from_secs(1),
        seed: 0,
        cwd: None,
    };
    load::run(&spec).is_ok_and(|o| o.summary.requests == 1)
}

/// The exit status if the service has already exited (it is then reaped).
fn exited(running: &mut Running) -> Result<Option<String>> {
    if running.reaped {
        return Ok(Some("an exit seen earlier".to_owned()));
    }
    if wait_exit(running.pid, Duration::ZERO)? {
        return Ok(None);
    }
    let timed = reap(running.pid, running.started.elapsed())?;
    running.reaped = true;
    signal_group(running.pid, libc::SIGKILL);
    Ok(Some(describe_status(timed.status)))
}

impl Services {
    /// Stop every service, last started first. A service that had exited
    /// by itself fails the run: the error has its status and log tail.
    /// The process group of each service (its pid: each leads its own).
    pub fn groups(&self) -> Vec<libc::pid_t> {
        self.running.iter().map(|r| r.pid).collect()
    }

    /// Each service's name, its processes (the one afterburner started
    /// and every descendant, found in /proc: a forking server's workers)
    /// and its binary (what the first process that is no shell runs).
    pub fn processes(&self) -> Vec<(String, Vec<libc::pid_t>, PathBuf)> {
        self.running
            .iter()
            .map(|r| {
                let mut pids = vec![r.pid];
                pids.extend(crate::process::descendants(r.pid));
                let exe = |pid: &libc::pid_t| fs_err::read_link(format!("/proc/{pid}/exe")).ok();
                let shell = |p: &PathBuf| {
                    p.file_name()
                        .is_some_and(|n| ["sh", "dash", "bash"].iter().any(|s| n == *s))
                };
                let binary = pids
                    .iter()
                    .filter_map(exe)
                    .find(|p| !shell(p))
                    .unwrap_or_else(|| PathBuf::from(&r.name));
                (r.name.clone(), pids, binary)
            })
            .collect()
    }

    /// Each service's counters now (its CPU time and context switches, over
    /// every process and thread it has), for the edges of a measured
    /// window; `None` for a service that is gone.
    pub fn counters(&self) -> Vec<(String, Option<crate::process::TreeCounters>)> {
        self.running
            .iter()
            .map(|r| (r.name.clone(), crate::process::TreeCounters::read(r.pid)))
            .collect()
    }

    pub fn stop(mut self) -> Result<Vec<ServiceUsage>> {
        let mut usages = Vec::new();
        let mut died = Vec::new();
        while let Some(mut running) = self.running.pop() {
            if let Some(status) = exited(&mut running)? {
                died.push(format!(
                    "service `{}` exited during the run with {status}\n{}\nlog: {}",
                    running.name,
                    quote_output(&tail(&running.log, 20)),
                    running.log.display()
                ));
                continue;
            }
            if running.wrapped {
                for pid in crate::process::descendants(running.pid) {
                    crate::process::signal(pid, running.stop_signal.0);
                }
            } else {
                signal_group(running.pid, running.stop_signal.0);
            }
            let killed = wait_exit(running.pid, running.stop_timeout)?;
            if killed {
                signal_group(running.pid, libc::SIGKILL);
            }
            let timed = reap(running.pid, running.started.elapsed())?;
            running.reaped = true;
            // Whatever it left in its group goes too.
            signal_group(running.pid, libc::SIGKILL);
            let u = timed.usage;
            usages.push(ServiceUsage {
                name: running.name.clone(),
                user_s: u.user.as_secs_f64(),
                sys_s: u.sys.as_secs_f64(),
                max_rss_kib: u.max_rss_kib,
                voluntary_switches: u.voluntary_switches,
                involuntary_switches: u.involuntary_switches,
                exit: if killed {
                    format!(
                        "killed: still running {:?} after SIG{}",
                        running.stop_timeout, running.stop_signal.1
                    )
                } else {
                    describe_status(timed.status)
                },
                log: running.log.clone(),
            });
        }
        if !died.is_empty() {
            bail!("{}", died.join("\n"));
        }
        usages.reverse();
        Ok(usages)
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        for running in self.running.iter().rev().filter(|r| !r.reaped) {
            signal_group(running.pid, libc::SIGKILL);
            let _ = reap(running.pid, Duration::ZERO);
        }
    }
}
