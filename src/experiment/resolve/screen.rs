//! `[race] screen` and `screen_margin`: the work screen before a race's
//! first look, and the check that the bench counts the work it reads.

use toml::Spanned;

use super::super::raw::RawRace;
use super::super::{Bench, Race, Workload};
use super::Cx;
use crate::experiment::ExperimentError;
use crate::load::Model;
use crate::metric::Builtin;
use crate::stats::race::Screen;

/// The screen's margin when `screen_margin` is not written.
const DEFAULT_MARGIN: f64 = 0.3;

impl Cx<'_> {
    /// `screen = "instructions"` (or `"off"`, the default) and its margin,
    /// 0.1 to 3.
    pub(super) fn race_screen(&self, raw: &RawRace) -> Result<Option<Screen>, ExperimentError> {
        let margin = raw.screen_margin.as_ref();
        let on = match raw.screen.as_ref().map(|s| (s.get_ref().as_str(), s.span())) {
            None | Some(("off", _)) => false,
            Some((word, _)) if Builtin::INSTRUCTIONS.is(word) => true,
            Some((other, span)) => {
                return Err(self.invalid(
                    span,
                    format!("screen = \"{other}\" is not a screen"),
                    "write screen = \"instructions\" (callgrind's or perf's count as a first screen), or leave it out",
                ))
            }
        };
        if let (false, Some(m)) = (on, margin) {
            return Err(self.invalid(
                m.span(),
                "screen_margin applies to screen = \"instructions\" only",
                "add screen = \"instructions\" under [race], or remove screen_margin",
            ));
        }
        if !on {
            return Ok(None);
        }
        let value = margin.map_or(DEFAULT_MARGIN, |m| *m.get_ref());
        if !(0.1..=3.0).contains(&value) {
            let span = margin.map(Spanned::span).unwrap_or_default();
            return Err(self.invalid(
                span,
                format!("screen_margin = {value} is not a margin from 0.1 to 3"),
                "write screen_margin = 0.3: more than 1.3 × the fewest instructions is screened out",
            ));
        }
        Ok(Some(Screen { margin: value }))
    }

    /// A screen reads the instructions of the first counted round: refused
    /// where the bench counts none.
    pub(super) fn check_screen(
        &self,
        raw: Option<&RawRace>,
        race: &Race,
        bench: &Bench,
        workloads: &[Workload],
    ) -> Result<(), ExperimentError> {
        let Some(span) = raw.and_then(|r| r.screen.as_ref()).map(Spanned::span) else {
            return Ok(());
        };
        if race.screen.is_none() {
            return Ok(());
        }
        if !bench.metrics.contains(&Builtin::INSTRUCTIONS) {
            return Err(self.invalid(
                span,
                "screen = \"instructions\" reads the instruction counts, and [bench] metrics has no \"instructions\"",
                "add \"instructions\" to metrics under [bench] (metrics = [\"wall\", \"instructions\"]), or remove screen",
            ));
        }
        if !workloads
            .iter()
            .any(|w| w.role.benches() && may_count(w.load.as_ref().map(|l| &l.model)))
        {
            return Err(self.invalid(
                span,
                "screen = \"instructions\" reads the instruction counts, and no bench workload can be counted: a load of a set duration or rate does no set amount of work",
                "give a bench workload a set amount of work (a `run` command, or a load of `requests = N` or iterations), or remove screen",
            ));
        }
        Ok(())
    }
}

/// Whether a workload's instructions can be counted by some counter: a
/// command, a set number of requests or iterations (any counter), or a
/// closed load's window (callgrind's); the bench checks its counter again.
fn may_count(model: Option<&Model>) -> bool {
    model.is_none_or(|m| !m.open_loop())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load_str;

    /// A file of two variants and one command workload, with `bench` and
    /// `race` as its `[bench]` and `[race]` lines (with `RUN`, `race` from
    /// line 20).
    fn file(bench: &str, race: &str, workload: &str) -> String {
        format!(
            "[target]\nname = \"t\"\nsource = {{ path = \"src\" }}\nbuild = \"make\"\nbinaries = {{ app = \"app\" }}\n\n[[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\n\n{workload}\n[bench]\n{bench}\n[race]\n{race}\n"
        )
    }

    const RUN: &str = "[[workload]]\nname = \"w\"\nrun = \"{bin.app}\"\n";

    fn load(text: &str) -> Result<crate::experiment::Experiment, String> {
        load_str(Path::new("/exp/afterburner.toml"), text, false).map_err(|e| e.to_string())
    }

    #[test]
    fn a_screen_loads_with_its_margin_or_the_default() {
        let metrics = "metrics = [\"wall\", \"instructions\"]";
        let e = load(&file(metrics, "screen = \"instructions\"", RUN)).unwrap();
        assert_eq!(e.race.screen.map(|s| s.margin), Some(0.3));
        let e = load(&file(
            metrics,
            "screen = \"instructions\"\nscreen_margin = 1.5",
            RUN,
        ))
        .unwrap();
        assert_eq!(e.race.screen.map(|s| s.margin), Some(1.5));
        let e = load(&file(metrics, "screen = \"off\"", RUN)).unwrap();
        assert_eq!(e.race.screen, None);
    }

    /// Each refusal names the file, the line of `screen` (or the margin)
    /// and what to add.
    #[test]
    fn a_screen_the_bench_cannot_feed_is_refused_at_its_line() {
        let err = load(&file(
            "metrics = [\"wall\"]",
            "screen = \"instructions\"",
            RUN,
        ))
        .unwrap_err();
        assert!(
            err.contains("afterburner.toml:20")
                && err.contains("no \"instructions\"")
                && err.contains("hint: add \"instructions\" to metrics under [bench]"),
            "{err}"
        );
        let rate = "[[workload]]\nname = \"w\"\nrole = \"bench\"\nload = { driver = \"http\", address = \"127.0.0.1:1\", request = \"GET /\", model = \"rate\", rate = 10, duration = \"1s\" }\n";
        let err = load(&file(
            "metrics = [\"wall\", \"instructions\"]",
            "screen = \"instructions\"",
            rate,
        ))
        .unwrap_err();
        assert!(
            err.contains("no bench workload can be counted")
                && err.contains("hint: give a bench workload a set amount of work"),
            "{err}"
        );
        let err = load(&file(
            "metrics = [\"wall\", \"instructions\"]",
            "screen = \"instructions\"\nscreen_margin = 5",
            RUN,
        ))
        .unwrap_err();
        assert!(
            err.contains("afterburner.toml:21") && err.contains("from 0.1 to 3"),
            "{err}"
        );
        let err = load(&file("", "screen_margin = 0.5", RUN)).unwrap_err();
        assert!(
            err.contains("applies to screen = \"instructions\" only"),
            "{err}"
        );
        let err = load(&file("", "screen = \"time\"", RUN)).unwrap_err();
        assert!(err.contains("is not a screen"), "{err}");
    }
}
