//! `afterburner check`: a CI gate. A bench run is judged against a stored
//! baseline run (`--against`, or the last earlier run of the same target
//! on the same machine class in `history.db`) with the comparison
//! `afterburner compare` makes, and each `--keep-gain VARIANT:PCT%` rule
//! against the run's own headline verdicts. The gate has three outcomes:
//! it fails (exit 1) when a rule fails, is inconclusive (exit 3, or 0 with
//! `--inconclusive pass`) when the data cannot decide a case either way,
//! and passes (exit 0) when every case was decided within its rule. An
//! undecided case is never folded into a pass. JUnit XML and a Markdown
//! summary say what each rule found, with the figures and the rule.

mod baseline;
mod gain;
pub mod junit;
pub mod markdown;
pub(crate) mod paired;
pub(crate) mod regression;
pub mod revision;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Context as _, Result};

pub use baseline::MachineClass;

use crate::analysis::read::read_run;
use crate::analysis::Results;

/// A percentage given on the command line, `2%`: 2.0 (percent, not a fraction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percent(pub f64);

impl FromStr for Percent {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let number = text.trim().strip_suffix('%').ok_or_else(|| {
            format!("`{text}` is not a percentage: write it with its % sign, e.g. 2%")
        })?;
        match number.trim().parse::<f64>() {
            Ok(p) if p.is_finite() && (0.0..100.0).contains(&p) => Ok(Percent(p)),
            _ => Err(format!(
                "`{text}` is not a percentage from 0% to below 100%, e.g. 2%"
            )),
        }
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 2% rather than 2.0000000000000004%.
        write!(f, "{}%", (self.0 * 1e6).round() / 1e6)
    }
}

/// `--threshold`: the regression that fails a case, as given, or by
/// default by the metric's precision ([`crate::stats::gate::default_threshold_pct`]:
/// 2% for an exact count, 5% for time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold(pub Option<Percent>);

impl Threshold {
    /// The threshold a metric of this precision is judged by.
    pub fn of(self, precision: crate::stats::Precision) -> Percent {
        self.0
            .unwrap_or(Percent(crate::stats::gate::default_threshold_pct(
                precision,
            )))
    }

    /// In words, for a rule.
    pub fn describe(self) -> String {
        match self.0 {
            Some(p) => p.to_string(),
            None => format!(
                "{} for an exact count, {} for time and other noisy metrics (the defaults; `--threshold` sets one for all)",
                self.of(crate::stats::Precision::Exact),
                self.of(crate::stats::Precision::Noisy)
            ),
        }
    }
}

/// `--keep-gain VARIANT:PCT%`: the variant must keep at least this gain
/// over the baseline on every workload's primary metric.
#[derive(Debug, Clone, PartialEq)]
pub struct KeepGain {
    pub variant: String,
    /// The least gain kept, in percent.
    pub floor: Percent,
}

impl FromStr for KeepGain {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (variant, floor) = text
            .rsplit_once(':')
            .filter(|(v, _)| !v.is_empty())
            .ok_or_else(|| format!("`{text}` is not VARIANT:PERCENT, e.g. pgo:5%"))?;
        Ok(KeepGain {
            variant: variant.to_owned(),
            floor: floor.parse()?,
        })
    }
}

pub use crate::stats::gate::Status;

/// One workload × variant × primary metric under one rule.
#[derive(Debug, Clone)]
pub struct Case {
    pub workload: String,
    pub variant: String,
    /// The primary metric's name.
    pub metric: String,
    pub status: Status,
    /// The figures, one cell per column of its [`Suite`].
    pub cells: Vec<String>,
    /// One sentence with the figures: why it passed, failed or was skipped.
    pub message: String,
    /// The verdict rule of the statistics behind it (results.json's `rule`).
    pub statistics: String,
}

/// The cases of one rule.
#[derive(Debug, Clone)]
pub struct Suite {
    /// E.g. "regression against run 20260101-120000" or "keep gain: pgo ≥ 5%".
    pub name: String,
    /// The rule that decides pass and fail, one paragraph, in every output.
    pub rule: String,
    /// The headers of [`Case::cells`].
    pub columns: Vec<&'static str>,
    pub cases: Vec<Case>,
}

/// Everything a check found.
#[derive(Debug, Clone)]
pub struct Findings {
    /// The checked run's id and target.
    pub run_id: String,
    pub target: String,
    pub suites: Vec<Suite>,
    /// Things to know that are not a failure (the baseline chosen, what
    /// could not be compared).
    pub notes: Vec<String>,
    /// What an inconclusive case makes of the gate.
    pub inconclusive: Inconclusive,
}

/// `--inconclusive fail|pass`: whether a gate that cannot decide stops
/// the pipeline (the default) or lets it go on; either way it is shown
/// as inconclusive, never as a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Inconclusive {
    #[default]
    Fail,
    Pass,
}

/// The gate's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Pass,
    Fail,
    Inconclusive,
}

impl Gate {
    /// The exit status: 0 pass, 1 fail, 3 inconclusive (0 with
    /// `--inconclusive pass`); 2 is an error's.
    pub fn exit_status(self, inconclusive: Inconclusive) -> u8 {
        match (self, inconclusive) {
            (Gate::Pass, _) | (Gate::Inconclusive, Inconclusive::Pass) => 0,
            (Gate::Fail, _) => 1,
            (Gate::Inconclusive, Inconclusive::Fail) => 3,
        }
    }
}

impl Findings {
    /// Cases with this status, over every suite.
    pub fn count(&self, status: Status) -> usize {
        self.suites
            .iter()
            .flat_map(|s| &s.cases)
            .filter(|c| c.status == status)
            .count()
    }

    /// The gate: failed when a case failed, else inconclusive when a case
    /// could not be decided, else passed.
    pub fn gate(&self) -> Gate {
        if self.count(Status::Failed) > 0 {
            Gate::Fail
        } else if self.count(Status::Inconclusive) > 0 {
            Gate::Inconclusive
        } else {
            Gate::Pass
        }
    }

    /// Whether the gate passes: every case decided, none failed.
    pub fn passed(&self) -> bool {
        self.gate() == Gate::Pass
    }
}

/// A case's status from its comparison ([`crate::stats::gate::status_of`]).
pub(crate) fn status_of(
    o: &crate::stats::Comparison,
    lower_is_better: bool,
    threshold: Percent,
) -> Status {
    crate::stats::gate::status_of(o, lower_is_better, threshold.0)
}

/// The sentence that says why a regression case has its `status`, with
/// the deciding estimate and the worst regression its interval allows.
pub(crate) fn why(
    o: &crate::stats::Comparison,
    status: Status,
    threshold: Percent,
    lower_is_better: bool,
) -> String {
    use crate::stats::gate::{deciding, worse_pct, worst_pct};
    use crate::stats::Verdict;
    let estimate = worse_pct(deciding(o).0, lower_is_better);
    let worst = worst_pct(o, lower_is_better);
    let verdict = match o.verdict {
        Verdict::Slower => format!("slower by {estimate:.1}%"),
        Verdict::Faster => format!("faster by {:.1}%", -estimate),
        Verdict::Same | Verdict::Undecided => o.verdict_text(),
    };
    let at_worst = if worst > 0.0 {
        format!("at worst {worst:.1}% worse")
    } else {
        format!("at worst {:.1}% better", -worst)
    };
    match status {
        Status::Failed => format!("{verdict}, more than the {threshold} threshold"),
        Status::Passed => format!(
            "{verdict}; its interval rules out a regression of more than {threshold} ({at_worst})"
        ),
        Status::Inconclusive | Status::Skipped => format!(
            "{verdict}, but its interval reaches a regression of {worst:.1}%, beyond the {threshold} threshold: not shown to be within it"
        ),
    }
}

/// What to check and against what, as the command line says it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The work directory (its `runs/` and `history.db`).
    pub workdir: PathBuf,
    /// The run to check (a run directory or results.json); default: the
    /// work directory's latest run.
    pub run: Option<PathBuf>,
    /// The baseline run; default: from history.
    pub against: Option<PathBuf>,
    pub threshold: Threshold,
    pub keep_gain: Vec<KeepGain>,
    pub inconclusive: Inconclusive,
    /// `check --rev --budget`: rounds go on, looked at sequentially, until
    /// every pair is decided or this time is spent.
    pub budget: Option<std::time::Duration>,
}

/// `check --rev REV`: the experiment run once with every variant built
/// twice, from `rev` and from the working tree, interleaved; each pair
/// judged within rounds, and the `--keep-gain` rules on the same run.
pub fn check_revision(
    cx: &mut crate::context::Context,
    rev: &str,
    options: &Options,
) -> Result<Findings> {
    let (source, short) = revision::source_at(&cx.experiment.target.source, rev, &cx.workdir.root)?;
    let pairs = revision::grow(&mut cx.experiment, &source, &short);
    if let Some(budget) = options.budget {
        revision::sequential(
            &mut cx.experiment.bench,
            budget,
            &pairs,
            options.threshold.0.map(|p| p.0),
        );
    }
    let repetitions = cx
        .experiment
        .bench
        .sequential
        .as_ref()
        .map_or(cx.experiment.bench.repetitions, |s| s.min);
    if (repetitions as usize) < paired::FEWEST_ROUNDS {
        bail!(
            "{} sets repetitions = {repetitions}: a paired gate can decide nothing from fewer than {} rounds\nhint: set `repetitions = 6` (or more) under [bench]; 3 to 5 rounds are judged by a paired t-test, 6 or more by the signed-rank test",
            cx.experiment.file.display(),
            paired::FEWEST_ROUNDS
        );
    }
    crate::progress::info(format_args!(
        "check: building and running {} beside {} built from revision {short}, interleaved",
        pairs
            .iter()
            .map(|(a, _)| a.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        pairs
            .iter()
            .map(|(_, b)| b.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let results = crate::pipeline::run(cx)?;
    let notes = vec![format!(
        "revision {rev} is {short}: each variant built from it ran in the same rounds as the one built from the working tree (run {})",
        results.run_id
    )];
    let mut suites = vec![paired::suite(&results, &pairs, &short, options.threshold)?];
    for keep in &options.keep_gain {
        suites.push(gain::suite(&results, keep)?);
    }
    Ok(Findings {
        run_id: results.run_id.clone(),
        target: results.target.clone(),
        suites,
        notes,
        inconclusive: options.inconclusive,
    })
}

/// Stored runs whose spread judges a noisy metric across runs.
const LOOKBACK: usize = 20;

/// Judge the run `options` names by its rules.
pub fn check(options: &Options) -> Result<Findings> {
    let workdir = crate::workdir::Workdir::new(options.workdir.clone());
    let run = match &options.run {
        Some(path) => path.clone(),
        None => workdir.latest_run().with_context(|| {
            format!(
                "no bench run in {}\nhint: run `afterburner run` (or `bench`) first, or name the run to check with --run",
                workdir.runs().display()
            )
        })?,
    };
    let current = read_run(&run)?;
    let mut notes = Vec::new();
    let against = if let Some(path) = &options.against {
        Some((read_run(path)?, path.clone()))
    } else {
        let found = baseline::from_history(&options.workdir, &current, &mut notes)?;
        if found.is_none() && options.keep_gain.is_empty() {
            bail!(
                    "no earlier run of `{}` on this machine class ({}) in {}: nothing to check against\nhint: pass --against BASELINE (a results.json or run directory, e.g. the main branch's, kept as a CI artifact), or bench the baseline revision in this work directory first",
                    current.target,
                    MachineClass::of(&current),
                    options.workdir.join(crate::store::HISTORY_FILE).display()
                );
        }
        found
    };
    judge(
        &current,
        against.as_ref().map(|(r, p)| (r, p.as_path())),
        options,
        notes,
    )
}

/// The suites of `current` against `against` (the baseline run and where
/// it was read from) and its keep-gain rules.
fn judge(
    current: &Results,
    against: Option<(&Results, &Path)>,
    options: &Options,
    mut notes: Vec<String>,
) -> Result<Findings> {
    let mut suites = Vec::new();
    match against {
        Some((baseline, path)) => {
            let (ours, theirs) = (MachineClass::of(current), MachineClass::of(baseline));
            if ours != theirs {
                notes.push(format!(
                    "the baseline run ran on another machine class ({theirs}) than this one ({ours}): time differs by machine, and instruction counts too where a library picks code by CPU (glibc's string functions)"
                ));
            }
            notes.push(format!(
                "baseline: run {} ({}{})",
                baseline.run_id,
                path.display(),
                baseline
                    .revision
                    .as_deref()
                    .map_or(String::new(), |r| format!(", revision {r}"))
            ));
            // The spread between runs is the baseline's machine's: runs
            // of the current run's class say nothing of how far the
            // baseline's own figure may have drifted.
            let history: Vec<Results> =
                baseline::earlier(&options.workdir, current, &theirs, LOOKBACK, &mut notes)?
                    .into_iter()
                    .map(|(r, _)| r)
                    .collect();
            suites.push(regression::suite(
                current,
                baseline,
                &history,
                options.threshold,
                &mut notes,
            )?);
        }
        None => notes.push("no baseline run: only the --keep-gain rules were checked".to_owned()),
    }
    for rule in &options.keep_gain {
        suites.push(gain::suite(current, rule)?);
    }
    Ok(Findings {
        run_id: current.run_id.clone(),
        target: current.target.clone(),
        suites,
        notes,
        inconclusive: options.inconclusive,
    })
}

/// Where a check's reports go: `--junit FILE`, and `--markdown FILE` or,
/// without it, the file `$GITHUB_STEP_SUMMARY` names (appended to, as
/// GitHub Actions expects of each step).
pub fn write_reports(
    outcome: &Findings,
    junit: Option<&Path>,
    markdown: Option<&Path>,
) -> Result<()> {
    if let Some(path) = junit {
        fs_err::write(path, junit::render(outcome)?)?;
    }
    let text = markdown::render(outcome);
    match markdown {
        Some(path) => fs_err::write(path, text)?,
        None => {
            if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty())
            {
                use std::io::Write as _;
                let mut file = fs_err::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(PathBuf::from(summary))?;
                file.write_all(text.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// The workloads of a run that have a headline metric, in results order.
fn workloads(results: &Results) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for m in &results.measurements {
        if out.iter().any(|(w, _)| *w == m.workload) {
            continue;
        }
        if let Some(metric) = results.primary_metric(&m.workload) {
            out.push((&m.workload, metric));
        }
    }
    out
}

#[cfg(test)]
mod calibration_tests;
#[cfg(test)]
mod tests;
