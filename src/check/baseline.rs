//! Which stored run a check compares with, when `--against` names none:
//! the last earlier run of the same target in `history.db` that ran on the
//! same machine class, since times (and instruction counts counted another
//! way) from another kind of machine say nothing about this change.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::analysis::read::read_run;
use crate::analysis::Results;
use crate::measure::InstructionCounter;
use crate::workdir::RESULTS_FILE;

/// What makes two runs' figures comparable across runs: the CPU model, the
/// CPUs the bench could use, and what counted the instructions. A CI
/// runner's host name changes from job to job; these do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineClass {
    pub cpu_model: Option<String>,
    /// CPUs the bench could run on (after affinity and cgroup quota).
    pub cpus: usize,
    pub instruction_counter: InstructionCounter,
}

impl MachineClass {
    pub fn of(results: &Results) -> Self {
        let env = &results.environment;
        MachineClass {
            cpu_model: env.cpu_model.clone(),
            cpus: env.available_cpus.unwrap_or(env.logical_cpus),
            instruction_counter: results.instruction_counter,
        }
    }
}

impl fmt::Display for MachineClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} CPUs, instructions counted by {}",
            self.cpu_model.as_deref().unwrap_or("unknown CPU"),
            self.cpus,
            match self.instruction_counter {
                InstructionCounter::Perf => "perf",
                InstructionCounter::Callgrind => "callgrind",
            }
        )
    }
}

/// The last run in `workdir`'s history before `current` of the same target
/// on the same machine class, and where it was read from; `None` when
/// there is none (or no history). Stored runs that cannot be read any more
/// are passed over with a note.
pub fn from_history(
    workdir: &Path,
    current: &Results,
    notes: &mut Vec<String>,
) -> Result<Option<(Results, PathBuf)>> {
    let class = MachineClass::of(current);
    Ok(earlier(workdir, current, &class, 1, notes)?
        .into_iter()
        .next())
}

/// Up to `limit` runs in `workdir`'s history before `current` of the same
/// target on machine class `class`, newest first, and where each was read
/// from. Stored runs that cannot be read any more are passed over with a
/// note, and so are (counted in a note) those of another machine class
/// newer than the first found.
pub fn earlier(
    workdir: &Path,
    current: &Results,
    class: &MachineClass,
    limit: usize,
    notes: &mut Vec<String>,
) -> Result<Vec<(Results, PathBuf)>> {
    let mut found = Vec::new();
    if !workdir.join(crate::store::HISTORY_FILE).is_file() {
        return Ok(found);
    }
    let mut passed_over = 0;
    for entry in crate::store::list(workdir)?.into_iter().rev() {
        if found.len() >= limit {
            break;
        }
        if entry.run_id.as_str() >= current.run_id.as_str() || entry.target != current.target {
            continue;
        }
        let file = entry.run_dir.join(RESULTS_FILE);
        let path = if file.is_file() { file } else { entry.run_dir };
        let stored = match read_run(&path) {
            Ok(stored) => stored,
            Err(error) => {
                notes.push(format!(
                    "stored run {} passed over: {error:#}",
                    entry.run_id
                ));
                continue;
            }
        };
        if MachineClass::of(&stored) == *class {
            if passed_over > 0 && found.is_empty() {
                notes.push(format!(
                    "{passed_over} later stored run(s) of `{}` ran on another machine class and were passed over",
                    current.target
                ));
            }
            found.push((stored, path));
        } else {
            passed_over += 1;
        }
    }
    Ok(found)
}
