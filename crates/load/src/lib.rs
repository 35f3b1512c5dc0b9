//! Load on a server: a driver speaks its protocol, a model paces the
//! requests, the engine sends them and a recorder keeps every latency in an
//! `HdrHistogram`. The folders stand in layers, each importing only those
//! below it:
//!
//! ```text
//! command (afterburner load) · run (a load run: plan, engine, driver, merge)
//! spec (LoadSpec) · limits (every number's range)
//! models (the models! list, a file each: how a load is paced)
//! drivers (the drivers! list, each driver's file or folder)
//! engine (event loop, blocking threads, gate, recorder; the Protocol and Call a driver implements)
//! request (templates, variables, SQL, mixes)
//! ```
//!
//! To add a driver: a file in `drivers/` and a line in its `drivers!` list
//! (see [`drivers`]). To add a load model: a file in `models/` and a line
//! in its `models!` list (see [`models`]); the experiment file's `model =
//! "…"`, `afterburner load --model` and their hints then know it.

pub mod command;
pub mod drivers;
mod engine;
pub mod limits;
pub mod models;
mod refusal;
pub mod request;
mod run;
mod spec;

use std::collections::BTreeMap;

use anyhow::{Context as _, Result};

pub use drivers::{parse_url, Driver};
pub use engine::gate::{Edge, Watch};
pub use engine::recorder::{
    feedsim_csv, series_csv, Latency, MixCount, Outcome, Percentile, SeriesRow, Summary,
};
pub use models::Model;
pub use request::mix::{parse_weights, MixError, RequestMix};
pub use request::{RequestTemplate, Source};
pub use run::{merged_summary, run, run_recorded, run_watched, search_sla, Recorded};
pub use spec::LoadSpec;

/// The prefix of the figures counting a load's failed requests by kind
/// (`errors.connection`, `errors.protocol`, `errors.server`,
/// `errors.fatal`): recorded, shown in the report, not judged.
pub const ERRORS_OF: &str = "errors.";

/// The request template of `driver` from text and `NAME=SOURCE` variables.
pub fn template(
    driver: Driver,
    text: &str,
    vars: &BTreeMap<String, String>,
    dir: &std::path::Path,
) -> Result<RequestTemplate> {
    request_template(driver, text, &sources(vars, dir)?)
}

/// The variables' sources from `NAME=SOURCE` pairs; relative CSV paths
/// resolve against `dir`.
pub fn sources(
    vars: &BTreeMap<String, String>,
    dir: &std::path::Path,
) -> Result<BTreeMap<String, Source>> {
    vars.iter()
        .map(|(name, spec)| {
            Source::parse(spec, dir)
                .with_context(|| format!("variable `{name}`"))
                .map(|s| (name.clone(), s))
        })
        .collect()
}

/// A request template as `driver` reads requests: SQL for postgres and mysql,
/// shell-quoted words for the others.
pub fn request_template(
    driver: Driver,
    text: &str,
    vars: &BTreeMap<String, Source>,
) -> Result<RequestTemplate> {
    if driver.sql() {
        RequestTemplate::sql(text, vars)
    } else {
        RequestTemplate::new(text, vars)
    }
}
