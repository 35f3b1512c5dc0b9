//! The sections that report.md, report.html and the terminal summary share,
//! each drawing one part of the [`crate::analysis::Results`] in the formats
//! that show it: the headline first, then shares, stale profiles, nodes,
//! failures, query sets, utilization, server-side time, matrix axes and the
//! load charts.

pub mod axes;
pub mod failures;
pub mod headline;
pub mod load_charts;
pub mod nodes;
pub mod race;
pub mod race_chart;
pub mod server;
pub mod sets;
pub mod share;
pub mod stale;
pub mod utilization;
