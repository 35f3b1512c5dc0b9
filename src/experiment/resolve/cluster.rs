//! `[cluster]`: the scheduler, its partition and limits, and how many
//! bench blocks (job array tasks) run the interleaved plan.

use std::path::Path;

use super::super::raw::RawCluster;
use super::Cx;
use crate::experiment::{
    Bench, Cluster, ClusterEngine, ExperimentError, LoadPlacement, Target, Workload,
};
use crate::load::drivers::network_names;

/// The most blocks one run may have.
const MAX_NODES: u32 = 1000;

impl Cx<'_> {
    pub(super) fn cluster(
        &self,
        raw: &RawCluster,
        bench: &Bench,
        dir: &Path,
        (target, workloads): (&Target, &[Workload]),
    ) -> Result<Cluster, ExperimentError> {
        let engine = match raw.engine.get_ref().as_str() {
            "slurm" => ClusterEngine::Slurm,
            other => {
                return Err(self.invalid(
                    raw.engine.span(),
                    format!("unknown cluster engine `{other}`"),
                    "use engine = \"slurm\" (the one scheduler afterburner submits to)",
                ))
            }
        };
        if bench.sequential.is_some() {
            return Err(self.invalid(
                raw.engine.span(),
                "a cluster run needs a fixed number of rounds: with repetitions = \"auto\" each block would stop at its own look",
                "set [bench] repetitions to a count (each block runs them all), or run the sequential plan on one machine without [cluster]",
            ));
        }
        let nodes = match &raw.nodes {
            None => 2,
            Some(n) if (1..=MAX_NODES).contains(n.get_ref()) => *n.get_ref(),
            Some(n) => {
                return Err(self.invalid(
                    n.span(),
                    format!("nodes = {} is out of range", n.get_ref()),
                    format!("give the number of bench blocks, 1 to {MAX_NODES} (each runs the whole plan on a node)"),
                ))
            }
        };
        if let Some(time) = &raw.time {
            if !slurm_time(time.get_ref()) {
                return Err(self.invalid(
                    time.span(),
                    format!("time = \"{}\" is not a Slurm time limit", time.get_ref()),
                    "write it as sbatch --time does: minutes (\"30\"), \"HH:MM:SS\" or \"D-HH:MM:SS\"",
                ));
            }
        }
        let load = match &raw.load {
            None => LoadPlacement::Same,
            Some(l) => self.load_placement(l, target, workloads)?,
        };
        Ok(Cluster {
            engine,
            partition: raw.partition.clone(),
            nodes,
            time: raw.time.as_ref().map(|t| t.get_ref().clone()),
            account: raw.account.clone(),
            sbatch: raw.sbatch.clone(),
            afterburner: raw.afterburner.as_ref().map(|p| dir.join(p)),
            exclusive: raw.exclusive.unwrap_or(true),
            shared: raw.shared.unwrap_or(false),
            load,
        })
    }

    /// `load = "same" | "separate"`; a separate load needs services to
    /// drive and afterburner's own load (a driver and an address) in every
    /// benchmark workload, since that is what runs on the other node.
    fn load_placement(
        &self,
        raw: &toml::Spanned<String>,
        target: &Target,
        workloads: &[Workload],
    ) -> Result<LoadPlacement, ExperimentError> {
        match raw.get_ref().as_str() {
            "same" => return Ok(LoadPlacement::Same),
            "separate" => {}
            other => {
                return Err(self.invalid(
                    raw.span(),
                    format!("load = \"{other}\" is not a load placement"),
                    "write load = \"same\" (the load beside the services, the default) or load = \"separate\" (the load on a node of its own)",
                ))
            }
        }
        if target.services.is_empty() {
            return Err(self.invalid(
                raw.span(),
                "load = \"separate\" puts the load on another node than the services, but [target] has no services",
                "add the services the load drives ([[target.service]]), or remove load",
            ));
        }
        for w in workloads.iter().filter(|w| w.role.benches()) {
            let Some(load) = &w.load else {
                return Err(self.invalid(
                    raw.span(),
                    format!("load = \"separate\" runs afterburner's own load on another node, but workload `{}` runs a command (`run`)", w.name),
                    "give the workload a `load` (driver, address, request), or keep load = \"same\"",
                ));
            };
            let local = !load.driver.over_network();
            if local || load.model.sla.is_some() {
                let what = if local {
                    format!("{} driver", load.driver.name())
                } else {
                    "SLA search".to_owned()
                };
                return Err(self.invalid(
                    raw.span(),
                    format!("workload `{}`: a separate load sends requests over the network at a fixed model; its {what} cannot run on another node", w.name),
                    format!("use a network driver ({}) with a closed, rate or iterations model, or keep load = \"same\"", network_names()),
                ));
            }
        }
        Ok(LoadPlacement::Separate)
    }
}

/// Whether `text` is one of sbatch's time forms: `M`, `M:S`, `H:M:S`,
/// `D-H`, `D-H:M`, `D-H:M:S`.
fn slurm_time(text: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (Some(d), rest),
        None => (None, text),
    };
    if days.is_some_and(|d| !number(d)) {
        return false;
    }
    let parts: Vec<&str> = clock.split(':').collect();
    parts.len() <= 3 && parts.iter().all(|p| number(p))
}

#[cfg(test)]
mod tests {
    use super::slurm_time;

    #[test]
    fn slurm_time_forms() {
        for good in ["30", "30:00", "1:00:00", "2-0", "2-12:00", "1-00:00:00"] {
            assert!(slurm_time(good), "{good}");
        }
        for bad in ["", "1h", "1:2:3:4", "-1", "a-1", "1:", "1 day"] {
            assert!(!slurm_time(bad), "{bad}");
        }
    }
}
