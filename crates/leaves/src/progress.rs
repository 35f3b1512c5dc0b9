//! What afterburner says while it works: a spinner per build or training
//! step and a bar over the bench's runs with an ETA when stderr is a
//! terminal; plain lines otherwise (logs, CI); nothing but warnings and
//! errors with `--quiet`, and every run's details with `--verbose`.

use std::fmt::Display;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

const QUIET: u8 = 0;
const NORMAL: u8 = 1;
const VERBOSE: u8 = 2;

static LEVEL: AtomicU8 = AtomicU8::new(NORMAL);

/// Set from `--quiet` / `--verbose`.
pub fn set_level(quiet: bool, verbose: bool) {
    let level = if quiet {
        QUIET
    } else if verbose {
        VERBOSE
    } else {
        NORMAL
    };
    LEVEL.store(level, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) == QUIET
}

pub fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) == VERBOSE
}

/// Bars only for a person watching.
fn animated() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// An informational line (not with `--quiet`).
pub fn info(text: impl Display) {
    if !quiet() {
        eprintln!("{text}");
    }
}

/// A warning on its own line: shown even with `--quiet`.
pub fn warn(text: impl Display) {
    eprintln!("warning: {text}");
}

/// One step (a build, a training run): a spinner while it runs, then one line.
pub struct Step {
    label: String,
    bar: Option<ProgressBar>,
}

/// Start a step labelled like "building pgo (final)".
pub fn step(label: impl Into<String>) -> Step {
    let label = label.into();
    let bar = animated().then(|| {
        let bar = ProgressBar::new_spinner().with_message(format!("{label} …"));
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    if bar.is_none() && !quiet() {
        eprint!("{label} … ");
    }
    Step { label, bar }
}

impl Step {
    /// End the step with its outcome ("done in 3.1 s", "up to date").
    pub fn finish(self, outcome: impl Display) {
        match &self.bar {
            Some(bar) => {
                bar.finish_and_clear();
                eprintln!("{} … {outcome}", self.label);
            }
            None if !quiet() => eprintln!("{outcome}"),
            None => {}
        }
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The bench's bar: one tick per run, lines printed above it.
pub struct Runs {
    bar: Option<ProgressBar>,
}

pub fn runs(total: u64) -> Runs {
    let bar = animated().then(|| {
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} runs, ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(500));
        bar
    });
    Runs { bar }
}

impl Runs {
    /// A run is starting: say which.
    pub fn start(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_owned());
        }
    }

    /// A run is done (or skipped on resume).
    pub fn tick(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// A line above the bar (or on its own without one); not with `--quiet`.
    pub fn line(&self, text: impl Display) {
        match &self.bar {
            Some(bar) => bar.println(text.to_string()),
            None if !quiet() => eprintln!("{text}"),
            None => {}
        }
    }

    /// A warning: shown even with `--quiet`.
    pub fn warn(&self, text: impl Display) {
        match &self.bar {
            Some(bar) => bar.println(format!("warning: {text}")),
            None => eprintln!("warning: {text}"),
        }
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
