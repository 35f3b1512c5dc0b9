//! `page_faults`: minor and major page faults — what an allocator or huge
//! pages change. Of the measured command, from the kernel's accounting of
//! the waited child (`ru_minflt + ru_majflt` of `wait4`, its waited-for
//! descendants included); of each service (`SERVICE.page_faults`), over
//! the run's window (`minflt + majflt`, fields 10 and 12 of
//! `/proc/PID/stat`, summed over the service's processes, read at the
//! window's edges as its CPU time is). A process that ends inside the
//! window takes its count with it, so a service's is a floor.

use super::BuiltinMetric;
use crate::process::Usage;

pub struct PageFaults;

impl BuiltinMetric for PageFaults {
    fn name(&self) -> &'static str {
        "page_faults"
    }

    fn unit(&self) -> &'static str {
        "faults"
    }

    /// A total over the run: a run of fixed duration that does more work
    /// touches more pages.
    fn cumulative(&self) -> bool {
        true
    }

    fn of_command(&self, usage: &Usage) -> Option<f64> {
        Some((usage.minor_faults + usage.major_faults) as f64)
    }

    fn of_process(&self, pid: libc::pid_t) -> Option<u64> {
        let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        faults(&stat)
    }

    fn per_service(&self) -> bool {
        true
    }
}

/// `minflt + majflt` of a `/proc/<pid>/stat` line. The command name, in
/// parentheses, may hold spaces and parentheses itself: the fields are
/// counted after the last `)`, where the state is field 3 (proc(5)).
fn faults(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
    Some(field(10)? + field(12)?)
}

#[cfg(test)]
mod tests {
    use super::super::{Builtin, MetricId, ServiceMetric};
    use super::*;

    #[test]
    fn faults_add_minor_and_major_after_the_name() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
        let line = "42 (a) b (c)) S 1 42 42 0 -1 4194560 1200 7 30 9 10 5 0 0 20 0";
        assert_eq!(faults(line), Some(1230));
        assert_eq!(faults("42 (short) S 1"), None);
    }

    /// This process has faulted in its pages: the count is read, and only
    /// grows.
    #[test]
    fn a_live_process_has_counted_faults() {
        let pid = libc::pid_t::try_from(std::process::id()).unwrap();
        let before = PageFaults.of_process(pid).unwrap();
        let touched: Vec<u8> = vec![1; 16 << 20];
        assert!(touched.iter().map(|b| u64::from(*b)).sum::<u64>() > 0);
        let after = PageFaults.of_process(pid).unwrap();
        assert!(before > 0 && after >= before, "{before} {after}");
    }

    /// Lower is better, a noisy total, named and counted per service by the
    /// registry's line.
    #[test]
    fn page_faults_is_a_registered_noisy_total_per_service() {
        let b = Builtin::from_name("page_faults").unwrap();
        let m = b.metric(crate::stats::Precision::Exact);
        assert_eq!(
            (m.unit.as_str(), m.lower_is_better, m.cumulative),
            ("faults", true, true)
        );
        assert_eq!(m.precision, crate::stats::Precision::Noisy);
        assert!(!b.by_default());
        assert_eq!(
            MetricId::parse("redis.page_faults"),
            MetricId::Service("redis".to_owned(), ServiceMetric::Counted(b))
        );
    }
}
