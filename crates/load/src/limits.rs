//! The valid range of every number a user can give a load, checked once at
//! the edge (`afterburner load` and the experiment file), so nothing after
//! it overflows, divides by zero or allocates without bound.
//!
//! | what | range |
//! |---|---|
//! | duration | more than 0, at most 7 days |
//! | warmup, probe | at most 7 days (the probe more than 0) |
//! | timeout | 1 ms to 1 hour |
//! | interval | 1 ms to the duration; at most 1,000,000 intervals per run |
//! | requests | 1 to 10¹² |
//! | clients | 1 to the descriptor limit less 64 (network drivers), 10,000 (postgres, mysql, exec: a thread each) |
//! | rate, start rate | more than 0, at most 10⁸ requests/s |
//! | pipeline, threads | 1 to 1,024 |

use std::time::Duration;

use super::drivers::Driver;
use super::models::Model;

pub const MAX_DURATION: Duration = Duration::from_hours(7 * 24);
pub const MIN_TIMEOUT: Duration = Duration::from_millis(1);
pub const MAX_TIMEOUT: Duration = Duration::from_hours(1);
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// The most time-series rows one run keeps.
pub const MAX_INTERVALS: u128 = 1_000_000;
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;
pub const MAX_RATE: f64 = 1e8;
pub const MAX_PIPELINE: usize = 1024;
pub const MAX_THREADS: usize = 1024;
/// Threads a blocking driver may start, one per client.
pub const MAX_BLOCKING_CLIENTS: usize = 10_000;
/// Descriptors kept free for everything else (logs, the listener, …).
const SPARE_DESCRIPTORS: u64 = 64;

pub use crate::refusal::Refusal;

/// What a load's numbers are, to check.
pub struct Settings {
    pub driver: Driver,
    pub model: Model,
    pub warmup: Duration,
    pub timeout: Duration,
    pub pipeline: usize,
    pub threads: usize,
    pub interval: Duration,
    /// Copies of the load running at once (`instances`).
    pub instances: usize,
}

fn refuse(setting: &'static str, message: String, hint: impl Into<String>) -> Result<(), Refusal> {
    Err(Refusal {
        setting,
        message,
        hint: hint.into(),
    })
}

/// The local ports a connection may take (`net.ipv4.ip_local_port_range`);
/// `None` where the kernel does not say.
fn local_port_range() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut numbers = text.split_whitespace().map(str::parse::<u64>);
    match (numbers.next(), numbers.next()) {
        (Some(Ok(low)), Some(Ok(high))) if low <= high => Some((low, high)),
        _ => None,
    }
}

/// The limits on open descriptors (`RLIMIT_NOFILE`): soft, hard.
fn descriptor_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own; no other precondition.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } != 0 {
        return (1024, 1024);
    }
    (limit.rlim_cur, limit.rlim_max)
}

/// How many descriptors this process may open once it raised its soft
/// limit to the hard one (which only root may raise).
pub fn descriptor_limit() -> u64 {
    descriptor_limits().1
}

/// The soft limit as it was before a load raised it; put back on drop, so
/// services started after the load see the limit they always saw.
#[derive(Debug)]
pub struct RaisedLimit {
    soft: u64,
    hard: u64,
}

impl Drop for RaisedLimit {
    fn drop(&mut self) {
        let limit = libc::rlimit {
            rlim_cur: self.soft,
            rlim_max: self.hard,
        };
        // SAFETY: setrlimit reads the struct we own; lowering the soft
        // limit back cannot fail for want of privilege.
        let _ = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) };
    }
}

/// Raise the soft descriptor limit to the hard one when `clients`
/// connections (and spare descriptors) need more than the soft limit
/// gives, saying so; `None` when nothing was raised. Beyond the hard
/// limit: an error with the `ulimit -Hn` hint (validation refuses that
/// already; this is the guard at the point of use).
pub fn raise_descriptor_limit(clients: usize) -> anyhow::Result<Option<RaisedLimit>> {
    let (soft, hard) = descriptor_limits();
    let needed = u64::try_from(clients)
        .unwrap_or(u64::MAX)
        .saturating_add(SPARE_DESCRIPTORS);
    if needed <= soft {
        return Ok(None);
    }
    if needed > hard {
        anyhow::bail!(
            "{clients} clients need {needed} descriptors, and this process may open at most {hard} (RLIMIT_NOFILE's hard limit)\nhint: `ulimit -Hn {needed}` as root in the shell that starts afterburner, or give at most {} clients",
            hard.saturating_sub(SPARE_DESCRIPTORS).max(1)
        );
    }
    let limit = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct we own; raising the soft limit up
    // to the hard one needs no privilege.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) } != 0 {
        anyhow::bail!(
            "raising the open-file limit from {soft} to {hard} for {clients} clients failed: {}",
            std::io::Error::last_os_error()
        );
    }
    afterburner_leaves::progress::info(format_args!(
        "raised the open-file limit (RLIMIT_NOFILE) from {soft} to its hard limit {hard} for {clients} connections; put back after the load"
    ));
    Ok(Some(RaisedLimit { soft, hard }))
}

fn check_duration(setting: &'static str, d: Duration, zero_ok: bool) -> Result<(), Refusal> {
    if d.is_zero() && !zero_ok {
        return refuse(
            setting,
            format!("{setting} 0s: nothing would be measured"),
            format!("give a {setting} such as 10s"),
        );
    }
    if d > MAX_DURATION {
        return refuse(
            setting,
            format!("{setting} {d:?} is longer than 7 days"),
            format!("give a {setting} of at most 7d (168h)"),
        );
    }
    Ok(())
}

fn check_rate(setting: &'static str, rate: f64) -> Result<(), Refusal> {
    if !(rate > 0.0 && rate <= MAX_RATE) {
        return refuse(
            setting,
            format!("{setting} {rate} requests/s is out of range"),
            "give a rate above 0 and at most 100000000 requests/s",
        );
    }
    Ok(())
}

/// Check every number of a load against its range.
pub fn check(s: &Settings) -> Result<(), Refusal> {
    let m = &s.model;
    let (clients, duration, requests, rate) = (m.clients, m.duration, m.requests, m.rate);
    if let Some(sla) = &m.sla {
        check_search(sla.start_rps, sla.probe)?;
    }
    if let Some(d) = duration {
        check_duration("duration", d, false)?;
    }
    check_duration("warmup", s.warmup, true)?;
    if let Some(n) = requests {
        if n == 0 || n > MAX_REQUESTS {
            return refuse(
                "requests",
                format!("requests {n} is out of range"),
                "give 1 to 1000000000000 requests",
            );
        }
    }
    if let Some(r) = rate {
        check_rate("rate", r)?;
    }
    if !(MIN_TIMEOUT..=MAX_TIMEOUT).contains(&s.timeout) {
        return refuse(
            "timeout",
            format!("timeout {:?} is out of range", s.timeout),
            "give a timeout from 1ms to 1h, e.g. 5s",
        );
    }
    if s.interval < MIN_INTERVAL {
        return refuse(
            "interval",
            format!("interval {:?} is shorter than 1 ms", s.interval),
            "give an interval of 1ms or more, e.g. 1s",
        );
    }
    if let Some(d) = duration {
        if s.interval > d {
            return refuse(
                "interval",
                format!(
                    "interval {:?} is longer than the duration {d:?}",
                    s.interval
                ),
                "give an interval no longer than the duration",
            );
        }
        if d.as_nanos() / s.interval.as_nanos().max(1) > MAX_INTERVALS {
            return refuse(
                "interval",
                format!(
                    "interval {:?} over {d:?} makes more than 1000000 time-series rows",
                    s.interval
                ),
                "give a longer interval",
            );
        }
    } else if s.interval > MAX_DURATION {
        return refuse(
            "interval",
            format!("interval {:?} is longer than 7 days", s.interval),
            "give an interval such as 1s",
        );
    }
    if s.pipeline == 0 || s.pipeline > MAX_PIPELINE {
        return refuse(
            "pipeline",
            format!("pipeline {} is out of range", s.pipeline),
            "give 1 to 1024 requests in flight per connection",
        );
    }
    if s.threads == 0 || s.threads > MAX_THREADS {
        return refuse(
            "threads",
            format!("threads {} is out of range", s.threads),
            "give 1 to 1024 threads",
        );
    }
    check_clients(s.driver, clients, s.instances)
}

/// Clients against what the driver can hold: a thread each for the
/// blocking drivers, a descriptor each for the others.
fn check_clients(driver: Driver, clients: usize, instances: usize) -> Result<(), Refusal> {
    let all = clients.saturating_mul(instances.max(1));
    if clients == 0 {
        return refuse(
            "clients",
            "clients 0: nobody would send a request".to_owned(),
            "give 1 client or more",
        );
    }
    if driver.blocking() {
        if all > MAX_BLOCKING_CLIENTS {
            return refuse("clients", format!("{all} clients, each a thread of its own with the {} driver, is more than 10000", driver.name()), "give at most 10000 clients");
        }
    } else {
        let limit = descriptor_limit();
        let needed = u64::try_from(all)
            .unwrap_or(u64::MAX)
            .saturating_add(SPARE_DESCRIPTORS);
        if needed > limit {
            return refuse("clients", format!("{all} clients need {all} connections, and this process may open at most {limit} descriptors (RLIMIT_NOFILE's hard limit)"), format!("give at most {} clients, or raise the hard limit: `ulimit -Hn {needed}` as root in the shell that starts afterburner (afterburner raises the soft limit to the hard one itself)", limit.saturating_sub(SPARE_DESCRIPTORS).max(1)));
        }
        if let Some((low, high)) = local_port_range() {
            let ports = high.saturating_sub(low) + 1;
            if u64::try_from(all).unwrap_or(u64::MAX) > ports {
                return refuse("clients", format!("{all} clients need {all} connections, and one server address takes at most {ports} from this host: each needs a local port of its own (net.ipv4.ip_local_port_range is {low}–{high})"), format!("give at most {ports} clients, or widen the range: `sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"`"));
            }
        }
    }
    Ok(())
}

/// Check an SLA search's own numbers.
fn check_search(start_rate: f64, probe: Duration) -> Result<(), Refusal> {
    check_rate("start_rate", start_rate)?;
    check_duration("probe", probe, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(model: Model) -> Settings {
        Settings {
            driver: Driver::REDIS,
            model,
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            pipeline: 1,
            threads: 1,
            interval: Duration::from_secs(1),
            instances: 1,
        }
    }

    fn closed(duration: Duration) -> Model {
        Model::closed(10, Some(duration), None)
    }

    #[test]
    fn each_bound_is_refused_just_outside_and_kept_inside() {
        let s = Duration::from_secs;
        assert!(check(&settings(closed(s(10)))).is_ok());
        let refused = |x: Settings| check(&x).unwrap_err().setting;
        assert_eq!(refused(settings(closed(s(0)))), "duration");
        assert_eq!(refused(settings(closed(MAX_DURATION + s(1)))), "duration");
        assert!(check(&settings(closed(MAX_DURATION))).is_ok());
        let mut x = settings(closed(s(10)));
        x.interval = Duration::ZERO;
        assert_eq!(refused(x), "interval");
        let mut x = settings(closed(s(10)));
        x.interval = s(11);
        assert_eq!(refused(x), "interval");
        let mut x = settings(closed(s(1001)));
        x.interval = Duration::from_millis(1);
        assert_eq!(refused(x), "interval", "a million rows and more");
        let mut x = settings(closed(s(10)));
        x.timeout = Duration::ZERO;
        assert_eq!(refused(x), "timeout");
        let mut x = settings(closed(s(10)));
        x.pipeline = 0;
        assert_eq!(refused(x), "pipeline");
        let mut x = settings(closed(s(10)));
        x.threads = 0;
        assert_eq!(refused(x), "threads");
        assert_eq!(
            refused(settings(Model::closed(0, Some(s(1)), None))),
            "clients"
        );
        assert_eq!(
            refused(settings(Model::closed(10, None, Some(0)))),
            "requests"
        );
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e9] {
            assert_eq!(
                refused(settings(Model::at_rate(1, rate, s(1)))),
                "rate",
                "{rate}"
            );
        }
        let many = settings(Model::closed(100_000, Some(s(1)), None));
        let why = check(&many).unwrap_err();
        if descriptor_limit() < 100_064 {
            assert!(why.hint.contains("ulimit -Hn"), "{why}");
        } else if local_port_range().is_some_and(|(low, high)| high - low < 100_000) {
            assert!(why.hint.contains("ip_local_port_range"), "{why}");
        }
    }
}
