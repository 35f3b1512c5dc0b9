//! What a sequential plan (`repetitions = "auto"`) records in `meta.json`:
//! the plan, and why its rounds ended.

use serde::{Deserialize, Serialize};

use crate::stats::sequential::Plan;

/// A sequential plan as a run records it in `meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SequentialMeta {
    /// When to look and at what level.
    pub plan: Plan,
    /// The time the rounds may take, in seconds (warmup included).
    pub budget_s: f64,
}

/// Why a sequential bench stopped, recorded in `meta.json` at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SequentialStop {
    /// Counted rounds run (warmup excluded).
    pub rounds: u32,
    pub reason: StopReason,
    /// Primary comparisons decided at the stop, and in all.
    pub decided: usize,
    pub comparisons: usize,
}

/// Why the rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// Every primary comparison was decided at a look.
    Decided,
    /// The budget could not fit another round.
    Budget,
    /// The plan's most rounds were run.
    Max,
}
