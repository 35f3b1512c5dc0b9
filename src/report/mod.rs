//! Reports of a bench run: `results.json`, `report.md` and a terminal
//! summary, all rendered from the same [`Results`].

mod agreement;
pub mod compare;
mod csv;
mod format;
mod headline;
mod html;
mod json;
mod load_charts;
mod markdown;
pub mod results;
mod terminal;

use std::path::Path;

use anyhow::Result;

pub use csv::Csv;
pub use html::Html;
pub use json::{schema, Json};
pub use markdown::Markdown;
pub use results::{analyze, Results};
pub use terminal::Terminal;

use crate::workdir::{HTML_FILE, REPORT_FILE, RESULTS_FILE};

/// A pure renderer of results into bytes; the caller decides where they go.
pub trait Exporter {
    fn render(&self, results: &Results) -> Result<Vec<u8>>;
}

/// Analyse `run_dir` from its `meta.json` and `raw.jsonl`, write
/// `results.json` and `report.md` beside them, print the terminal summary.
pub fn report(run_dir: &Path) -> Result<Results> {
    let results = load_results(run_dir)?;
    fs_err::write(run_dir.join(RESULTS_FILE), Json.render(&results)?)?;
    fs_err::write(run_dir.join(REPORT_FILE), Markdown.render(&results)?)?;
    fs_err::write(run_dir.join(HTML_FILE), Html.render(&results)?)?;
    let summary = Terminal.render(&results)?;
    print!("{}", String::from_utf8_lossy(&summary));
    println!("results: {}", run_dir.join(RESULTS_FILE).display());
    println!("report:  {}", run_dir.join(REPORT_FILE).display());
    println!("html:    {}", run_dir.join(HTML_FILE).display());
    Ok(results)
}

/// Extra copies of a report that a user asked for, like hyperfine's
/// `--export-*` options.
#[derive(Debug, Clone, Default)]
pub struct Exports {
    pub csv: Option<std::path::PathBuf>,
    pub json: Option<std::path::PathBuf>,
    pub markdown: Option<std::path::PathBuf>,
}

impl Exports {
    /// Write each requested format to its file.
    pub fn write(&self, results: &Results) -> Result<()> {
        let targets: [(&Option<std::path::PathBuf>, &dyn Exporter); 3] = [
            (&self.csv, &Csv),
            (&self.json, &Json),
            (&self.markdown, &Markdown),
        ];
        for (path, exporter) in targets {
            if let Some(path) = path {
                fs_err::write(path, exporter.render(results)?)?;
            }
        }
        Ok(())
    }
}

/// Redraw results from a run directory's raw files alone (read and
/// checked by [`crate::runs`]); what the check left out is a warning.
pub fn load_results(run_dir: &Path) -> Result<Results> {
    let recorded = crate::runs::read(run_dir)?;
    let mut results = analyze(&recorded.meta, &recorded.runs);
    results.loads = results::load_curves(&recorded.meta, &recorded.runs);
    // A profile that cannot be read costs the report its section, not
    // the report itself.
    match crate::explain::explain(&recorded) {
        Ok(explained) => results.explained = explained,
        Err(error) => results.warnings.push(results::WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("no section \"Where the instructions went\": {error:#}"),
        }),
    }
    results.warnings.extend(
        recorded
            .notes
            .into_iter()
            .map(|message| results::WarningEntry {
                workload: None,
                metric: None,
                variant: None,
                message,
            }),
    );
    Ok(results)
}
