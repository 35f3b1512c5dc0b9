//! A bench run analysed: the results model ([`results`], the types of
//! `results.json`), each variant judged against the baseline ([`judge`],
//! [`analyze`]), the report as a family of tests ([`family`]), where work
//! and time disagree ([`agreement`]), failed requests, load instances,
//! cluster nodes, shares of a reference's gain, the headline's rows, two
//! runs side by side ([`across`]), and a calibration's A/A trials
//! ([`calibration`]). Everything here is computed from the run
//! records (`runs/`) alone; nothing here draws or prints: the report's
//! exporters render what it found.
//!
//! The files stand in layers, each importing only those below it:
//!
//! ```text
//! read (redraw from a run directory) · calibration (A/A trials judged by analyze)
//! nodes (blocks analysed alone) · share · instances
//! analyze · headline · across
//! race (a race replayed, its standings and cost)
//! family · agreement · failures
//! judge
//! results (the model: every type of results.json)
//! ```

pub mod across;
pub mod agreement;
pub mod analyze;
pub mod calibration;
pub mod failures;
pub mod family;
pub mod headline;
pub mod instances;
pub mod judge;
pub mod nodes;
pub mod race;
pub mod read;
pub mod results;
pub mod share;

pub use results::Results;
