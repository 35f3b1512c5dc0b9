//! Counted runs of served workloads: the words that start services under
//! the counter, a load's measured window counted alone (callgrind's
//! instrumentation switched on and off around it), and the counts read back.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::experiment::{Bindings, Load};
use crate::load;
use crate::measure::{RunRecord, RunSlot};
use crate::runs::copy_stem;
use crate::service;

use super::window::ServiceWindow;
use super::{countable, drive, windowable, Served};
use crate::metric::{MetricId, Tally};

/// The instructions the counter wrote into scratch, and per request for a
/// windowed count.
pub(super) fn add_count(record: &mut RunRecord, s: &Served, load: Option<&Load>, windowed: bool) {
    record.instruction_source = Some(s.counter.name().to_owned());
    let keep = crate::runs::profile_dir(s.run_dir, &record.workload, &record.variant, record.round);
    record.instructions = match s.counter.collect(s.scratch, Some(&keep)) {
        Ok(n) => n,
        // A service killed under the counter leaves no count: this run
        // fails (with the first cause, if it had one), the bench goes on.
        Err(error) => {
            record.success = false;
            record.error.get_or_insert_with(|| format!("{error:#}"));
            None
        }
    };
    if let (true, Some(n), Some(requests)) =
        (windowed, record.instructions, Tally::Requests.value(record))
    {
        if requests > 0.0 {
            record.figures.insert(
                MetricId::InstructionsPerRequest.to_string(),
                n as f64 / requests,
            );
        }
        if !countable(load) {
            // A load of a set duration answers as many requests as it
            // can: its total is no measure of the variant, only per request.
            record
                .figures
                .insert(WINDOW_INSTRUCTIONS.to_owned(), n as f64);
            record.instructions = None;
        }
    }
}

/// The instructions counted over a duration load's window (recorded, not
/// compared: the requests answered vary).
pub(super) const WINDOW_INSTRUCTIONS: &str = "window_instructions";

/// The words that start a counted run's services, and whether they count a
/// load's window only (where the counter can be switched: callgrind) rather
/// than start to stop.
pub(super) fn counter_prefix(
    slot: &RunSlot,
    s: &Served,
    out: &Path,
    counting: bool,
) -> (Option<Vec<String>>, bool) {
    let windowed = (counting && windowable(slot.workload.load.as_ref()))
        .then(|| s.counter.windowed_prefix(out))
        .flatten();
    match windowed {
        Some(words) => (Some(words), true),
        None => (counting.then(|| s.counter.prefix(out)), false),
    }
}

/// Drive a load whose window opens after a warmup of its own: the warmup as
/// a load of its own, uncounted; then the measured load (which reads each
/// copy's services' counters at its edges). With `switched` (services under
/// callgrind with instrumentation off), instrumentation goes on in every
/// service process before the measured load and off again after it, so only
/// the window is counted. A load on another node runs this way too.
pub(super) fn drive_window(
    load: &Load,
    copies: (&[Bindings], &[ServiceWindow]),
    switched: Option<&[service::Services]>,
    s: &Served,
    stem: &str,
    record: &mut RunRecord,
) -> Result<()> {
    if !load.warmup.is_zero() {
        if let Err(error) = warm_up(load, copies.0, s, (&record.workload, stem)) {
            // This run fails; the bench goes on.
            record.error = Some(format!("{error:#}"));
            return Ok(());
        }
    }
    let groups: Vec<libc::pid_t> = switched
        .unwrap_or_default()
        .iter()
        .flat_map(service::Services::groups)
        .collect();
    if let Err(error) = switch(switched.is_some(), &groups, true) {
        // A service that died in the warmup, say: this run fails, the
        // bench goes on.
        record.error = Some(format!("{error:#}"));
        return Ok(());
    }
    let measured = Load {
        warmup: Duration::ZERO,
        ..load.clone()
    };
    let result = drive(&measured, copies, s, stem, record);
    // A service that died during the load leaves nothing to switch off:
    // that fails this run (it has its own error already), not the bench.
    if let Err(error) = switch(switched.is_some(), &groups, false) {
        record.success = false;
        record.error.get_or_insert_with(|| format!("{error:#}"));
    }
    result
}

/// Callgrind's instrumentation on or off in `groups`, if they are switched.
fn switch(switched: bool, groups: &[libc::pid_t], on: bool) -> Result<()> {
    if switched {
        crate::measure::window::switch(groups, on)?;
    }
    Ok(())
}

/// The load's warmup alone, on every instance, its outcome dropped.
pub(super) fn warm_up(
    load: &Load,
    bindings: &[Bindings],
    s: &Served,
    (workload, stem): (&str, &str),
) -> Result<()> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = bindings
            .iter()
            .enumerate()
            .map(|(copy, b)| {
                scope.spawn(move || -> Result<()> {
                    let address = load.address.expand(b)?;
                    if let Some(remote) = s.remote {
                        let stem = copy_stem(stem, copy, bindings.len());
                        return remote
                            .run(&super::remote::Step {
                                workload,
                                address: &address,
                                seed: s.seed,
                                part: super::remote::Part::Warmup,
                                stem: s.logs.join(format!("{stem}.warmup")),
                                timeout: super::step_timeout(load),
                            })
                            .map(drop)
                            .context("the load's warmup");
                    }
                    let spec = load.spec(address, s.seed, &s.experiment.dir).warmup_only();
                    load::run(&spec).map(drop).context("the load's warmup")
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a warmup thread panicked")))
        })
    })
}
