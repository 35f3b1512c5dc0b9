//! `[cluster]`: a run on a Slurm cluster.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[cluster]`: where and how the jobs of a cluster run are submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The scheduler; Slurm is the one there is.
    pub engine: ClusterEngine,
    pub partition: Option<String>,
    /// Bench blocks: the tasks of the job array, a node each.
    pub nodes: u32,
    /// Slurm's time limit per job, as Slurm writes it.
    pub time: Option<String>,
    pub account: Option<String>,
    /// Extra sbatch options, passed as they are.
    pub sbatch: Vec<String>,
    /// The afterburner binary the jobs run (default: this one).
    pub afterburner: Option<PathBuf>,
    /// Whether each job takes its nodes whole.
    pub exclusive: bool,
    /// Skip the check that the work directory is on shared storage.
    pub shared: bool,
    /// Where each block's load runs: beside its services, or on a node of
    /// its own (`load = "separate"`).
    pub load: LoadPlacement,
}

/// Where a cluster block's load generator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadPlacement {
    /// On the block's node, beside the services (the default).
    #[default]
    Same,
    /// On a second node of the block's allocation: the services bind the
    /// service node's address (`{host}`), and each run's load is a job step
    /// (`srun`) on the other node, sending over the cluster's network.
    Separate,
}

impl Cluster {
    /// `--slurm` without a `[cluster]` section: two blocks on the default
    /// partition, each job on whole nodes.
    pub fn slurm_defaults() -> Self {
        Self {
            engine: ClusterEngine::Slurm,
            partition: None,
            nodes: 2,
            time: None,
            account: None,
            sbatch: Vec::new(),
            afterburner: None,
            exclusive: true,
            shared: false,
            load: LoadPlacement::Same,
        }
    }
}

/// A cluster scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterEngine {
    Slurm,
}
