//! Reports of a bench run: `results.json`, `report.md` and a terminal
//! summary, all rendered from the same [`Results`].
//!
//! To add an export format: write `report/<format>.rs` with a unit struct
//! implementing [`Exporter`] (a pure `render` of [`Results`] into bytes, its
//! name and a line saying what it writes), and add `<format>::<Struct>` to
//! the `exporters!` list below. `--export <name>=FILE` and
//! `--export-<name> FILE` then write it on `run`, `bench` and `report`, and
//! `--help` lists it; nothing else names it.

mod agreement;
mod axes;
pub mod compare;
mod failures;
mod family;
pub mod format;
mod headline;
pub mod instances;
mod load_charts;
pub mod nodes;
pub mod results;
mod server;
mod sets;
pub mod share;
pub mod stale;
mod utilization;

/// Declares each export format's module and lists them: the one list.
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
}

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
    /// The format's name in `--export NAME=FILE`.
    fn name(&self) -> &'static str;
    /// One line: what it writes.
    fn describe(&self) -> &'static str;
    fn render(&self, results: &Results) -> Result<Vec<u8>>;
}

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

/// Redraw results from a run directory's raw files alone (read and
/// checked by [`crate::runs`]); what the check left out is a warning.
pub fn load_results(run_dir: &Path) -> Result<Results> {
    let recorded = crate::runs::read(run_dir)?;
    let mut results = analyze(&recorded.meta, &recorded.runs);
    results.loads = results::load_curves(&recorded.meta, &recorded.runs);
    results.instances = instances::read(&recorded.meta, &recorded.runs);
    for set in &results.instances {
        for i in set.instances.iter().filter(|i| !i.healthy) {
            results.warnings.push(results::WarningEntry {
                workload: Some(set.workload.clone()),
                metric: None,
                variant: Some(set.variant.clone()),
                message: format!(
                    "instance {} of {} (round {}): {}",
                    i.index,
                    set.instances.len(),
                    set.round + 1,
                    i.note.as_deref().unwrap_or("unhealthy")
                ),
            });
        }
    }
    results.nodes = nodes::read(&recorded.blocks);
    share::attach(&mut results);
    results.warnings.extend(nodes::disagreements(&results));
    // A cluster run's profiles are its blocks': the first explains.
    let explained_run = recorded.with_files();
    // A profile that cannot be read costs the report its section, not
    // the report itself.
    match crate::explain::explain(explained_run) {
        Ok(explained) => results.explained = explained,
        Err(error) => results.warnings.push(results::WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("no section \"Where the instructions went\": {error:#}"),
        }),
    }
    match crate::explain::simulation::read(explained_run) {
        Ok(simulated) => results.simulated = Some(simulated).filter(|s| !s.runs.is_empty()),
        Err(error) => results.warnings.push(results::WarningEntry {
            workload: None,
            metric: None,
            variant: None,
            message: format!("no section \"Simulated caches and branches\": {error:#}"),
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
