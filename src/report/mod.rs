//! Reports of a bench run: `results.json`, `report.md`, `report.html` and a
//! terminal summary, all rendered from the same [`Results`] (analysed in
//! [`crate::analysis`]); the exporters only draw. The parts that
//! report.md, report.html and the terminal share are [`sections`].
//!
//! To add an export format: write `report/<format>.rs` with a unit struct
//! implementing [`Exporter`] (a pure `render` of [`Results`] into bytes, its
//! name and a line saying what it writes), and add `<format>::<Struct>` to
//! the `exporters!` list below. `--export <name>=FILE` and
//! `--export-<name> FILE` then write it on `run`, `bench` and `report`, and
//! `--help` lists it; nothing else names it.

pub mod calibration;
pub mod compare;
mod exporter;
pub mod format;
pub mod sections;

/// Declares each export format's module and lists them: the one list.
/// (rustfmt does not reach modules a macro declares; `.ci/run` checks
/// these files by name.)
macro_rules! exporters {
    ($($module:ident :: $exporter:ident),* $(,)?) => {
        $(mod $module;)*

        /// Every format `--export NAME=FILE` writes, by [`Exporter::name`].
        pub const EXPORTERS: &[&dyn Exporter] = &[$(&$module::$exporter),*];
    };
}

exporters! {
    csv::Csv,
    json::Json,
    markdown::Markdown,
    html::Html,
    terminal::Terminal,
    benchpress::Benchpress,
    shares::Shares,
}

use std::path::Path;

use anyhow::Result;

pub use csv::Csv;
pub use exporter::Exporter;
pub use html::Html;
pub use json::{schema, Json};
pub use markdown::Markdown;
pub use terminal::Terminal;

use crate::analysis::read::load_results;
use crate::analysis::Results;
use crate::workdir::{HTML_FILE, REPORT_FILE, RESULTS_FILE};

/// The exporter named `name`; the error lists the names.
pub fn exporter(name: &str) -> Result<&'static dyn Exporter, String> {
    EXPORTERS
        .iter()
        .find(|e| e.name() == name)
        .copied()
        .ok_or_else(|| {
            format!(
                "unknown export format `{name}`; the formats: {}",
                EXPORTERS
                    .iter()
                    .map(|e| e.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// Analyse `run_dir` from its `meta.json` and `raw.jsonl`, write
/// `results.json` and `report.md` beside them, print the terminal summary.
pub fn report(run_dir: &Path) -> Result<Results> {
    let results = load_results(run_dir)?;
    fs_err::write(run_dir.join(RESULTS_FILE), Json.render(&results)?)?;
    fs_err::write(run_dir.join(REPORT_FILE), Markdown.render(&results)?)?;
    fs_err::write(run_dir.join(HTML_FILE), Html.render(&results)?)?;
    let summary = Terminal.render(&results)?;
    crate::stdout::print(format_args!("{}", String::from_utf8_lossy(&summary)))?;
    crate::stdout::line(format_args!(
        "results: {}",
        run_dir.join(RESULTS_FILE).display()
    ))?;
    crate::stdout::line(format_args!(
        "report:  {}",
        run_dir.join(REPORT_FILE).display()
    ))?;
    crate::stdout::line(format_args!(
        "html:    {}",
        run_dir.join(HTML_FILE).display()
    ))?;
    Ok(results)
}

/// Extra copies of a report that a user asked for, like hyperfine's
/// `--export-*` options: each format and the file it goes to.
#[derive(Clone, Default)]
pub struct Exports(pub Vec<(&'static dyn Exporter, std::path::PathBuf)>);

impl Exports {
    /// Write each requested format to its file.
    pub fn write(&self, results: &Results) -> Result<()> {
        for (exporter, path) in &self.0 {
            fs_err::write(path, exporter.render(results)?)?;
        }
        Ok(())
    }
}
