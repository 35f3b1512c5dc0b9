//! Training, shared by the sources that train (trained here, attached to
//! services, or on another revision): each training workload
//! runs on the round's instrumented (or sampled) build, its files kept per
//! workload, then merged (with the workloads' weights); and the key that
//! says what made the profile.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::round_dirs;
use crate::context::Context;
use crate::experiment::{Variant, Workload};
use crate::progress;
use crate::toolchain::round::Round;
use crate::toolchain::{self, Stage};

/// How a training source names round `round`'s profile: `attached` where
/// it records the services by attaching to them (`attach`, and the round
/// samples), else `trained`.
pub(super) fn name(attach: bool, round: &dyn Round) -> &'static str {
    if attach && round.samples() {
        "attached"
    } else {
        "trained"
    }
}

/// With `train_stop = "dump"`: the shim (built into the work directory)
/// and a fresh directory for the services' dumps, which their users may
/// write.
fn dumping(
    cx: &Context,
    variant: &Variant,
    dirs: &toolchain::StageDirs,
    logs: &Path,
) -> Result<Option<crate::capture::train::Dumping>> {
    if variant.train_stop != crate::experiment::TrainStop::Dump {
        return Ok(None);
    }
    let dir = logs.join("dumps");
    if dir.exists() {
        fs_err::remove_dir_all(&dir)?;
    }
    fs_err::create_dir_all(&dir)?;
    crate::service::give_to_users(&cx.experiment.target.services, &dir)?;
    Ok(Some(crate::capture::train::Dumping {
        shim: crate::capture::shim::build(&cx.workdir.root.join("shim"))?,
        dir,
        profile_dir: dirs.profile.clone(),
        raw_dir: toolchain::raw_dir(dirs),
    }))
}

/// A hash of what made a profile: the instrumented build, each training
/// command with its parameters and environment, and how it was sampled
/// (`sample_event`, `call_chains`, `bolt_profile`: the same build sampled
/// on another event records another profile); `more` is what a source adds (a stale
/// profile's revision), nothing for the others, so their keys stay what
/// they were before it.
pub(super) fn training_key(
    cx: &Context,
    variant: &Variant,
    instrumented_key: &str,
    more: &str,
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(instrumented_key.as_bytes());
    for workload in cx.experiment.workloads.iter().filter(|w| w.role.trains()) {
        let what = match (&workload.train_run, &workload.run) {
            (Some(t), _) | (None, Some(t)) => t.text.clone(),
            (None, None) => serde_json::to_string(&workload.load).unwrap_or_default(),
        };
        hasher.update(format!("\n{}\t{what}", workload.name).as_bytes());
        // Weight 1 adds nothing, so profiles trained before weights existed
        // stay current.
        if workload.weight != 1 {
            hasher.update(format!("\tweight={}", workload.weight).as_bytes());
        }
    }
    let services = serde_json::to_string(&cx.experiment.target.services).unwrap_or_default();
    hasher.update(
        format!(
            "\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{services}",
            cx.experiment.params,
            variant.params,
            variant.env,
            variant.sample_event,
            variant.bolt_profile
        )
        .as_bytes(),
    );
    // Only where asked, so keys made before `call_chains` stay current.
    if let Some(unwind) = variant.call_chains {
        hasher.update(format!("\ncall_chains={unwind:?}").as_bytes());
    }
    hasher.update(more.as_bytes());
    crate::digest::hex(&hasher.finalize())
}

/// Run every training workload on round `round`'s build, then merge; with
/// `attach`, services of a sampled round are recorded by attaching to them
/// over each workload's window. Returns the
/// binaries training ran.
pub(super) fn train_round(
    cx: &Context,
    variant: &Variant,
    round: usize,
    attach: bool,
) -> Result<Vec<PathBuf>> {
    let trainers: Vec<&Workload> = cx
        .experiment
        .workloads
        .iter()
        .filter(|w| w.role.trains())
        .collect();
    let stage = Stage::Instrumented(round);
    let mut bindings = cx.bindings(variant, stage)?;
    let pgo = variant.rounds()[round];
    let dirs = round_dirs(cx, variant, round);
    if dirs.profile.exists() {
        // Counters accumulate across runs; start from nothing.
        fs_err::remove_dir_all(&dirs.profile)?;
    }
    fs_err::create_dir_all(toolchain::raw_dir(&dirs))?;
    // A service that runs as a user of its own writes its profile too.
    crate::service::give_to_users(&cx.experiment.target.services, &dirs.profile)?;
    let logs = cx.workdir.variant_logs(&variant.name);
    fs_err::create_dir_all(&logs)?;
    // A fresh state for the services of each training round.
    let state_root = logs.with_file_name(crate::served::STATE_DIR);
    if state_root.exists() {
        fs_err::remove_dir_all(&state_root)?;
    }
    bindings.state_root = Some(state_root);
    let dumping = dumping(cx, variant, &dirs, &logs)?;
    let what = if variant.rounds().len() > 1 {
        format!("{} ({})", variant.name, pgo.name())
    } else {
        variant.name.clone()
    };
    for workload in trainers {
        bindings.profile = Some(toolchain::go::profile_path(&dirs, &workload.name));
        let step = progress::step(format!("training {what} on {}", workload.name));
        let mut env = variant.env.clone();
        env.extend(pgo.training_env(&dirs));
        let asked = crate::toolchain::sampling::Asked {
            event: variant.sample_event.as_deref(),
            call_chains: variant.call_chains,
        };
        let prefix = pgo.training_prefix(&dirs, asked)?;
        // Services (none for most targets) around the command or the load.
        let attacher = if attach {
            toolchain::sampling::attacher(&dirs)
        } else {
            None
        };
        let training = crate::served::Training {
            env: &env,
            prefix: &prefix,
            attach: attacher.as_ref(),
            logs: &logs,
            dumping: dumping.as_ref(),
        };
        let seconds = crate::served::train_served(&cx.experiment, &bindings, workload, &training)
            .with_context(|| {
            format!(
                "training variant `{}` on workload `{}`",
                variant.name, workload.name
            )
        })?;
        pgo.collect(&dirs, &workload.name)?;
        toolchain::weights::record(&dirs, &workload.name, workload.weight)?;
        step.finish(format_args!("{seconds:.1} s"));
    }
    let binaries: Vec<PathBuf> = bindings.binaries.values().cloned().collect();
    let files = pgo.merge(&dirs, &binaries)?.len();
    let noun = if files == 1 { "file" } else { "files" };
    let weighted = toolchain::weights::describe(&dirs)
        .map(|w| format!(", merged with weights {w} (others 1)"))
        .unwrap_or_default();
    progress::info(format_args!(
        "profile of {what}: {files} {noun} in {}, each training workload's under raw/{weighted}",
        dirs.profile.display()
    ));
    Ok(binaries)
}
