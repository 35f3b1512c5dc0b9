//! afterburner: feedback-directed optimization for C, C++ and Go programs,
//! proved with interleaved, repeated benchmarks and honest statistics.
//!
//! The modules stand in layers; each imports only from its own layer or the
//! ones below, and no modules import each other in a circle, inside folders
//! too (`tests/it/architecture.rs` reads this drawing and keeps it so;
//! ARCHITECTURE.md says what each module owns). `load`, `stats` and the
//! leaves are crates of their own (crates/), re-exported below by these
//! names: the compiler keeps them from importing upward.
//!
//! ```text
//! CLI        cli
//! phases     cluster (Slurm jobs, above bench and pipeline) · check (the CI gate)
//!            pipeline · profiles (a profile's life: trained, attached, brought or stale,
//!            checked against its binaries)
//!            bench · doctor · store (history) · ship (export)
//!            conformance (tests only: known distributions through the judging code)
//! records    report (exporters: they only draw the results)
//!            analysis (results.json's model, verdicts, the family, shares, nodes)
//!            context (experiment + workdir)
//!            explain (where the instructions went: callgrind files per function)
//!            runs (meta.json, raw.jsonl, callgrind files, the files beside each
//!            run's logs: the only writer and reader) · build
//!            served (a run with services and load around it: the bench's and training's)
//! engines    measure · service · step · source · workdir
//!            capture (`afterburner profile`: a running process's profile)
//! model      experiment (the validated experiment file)
//! vocabulary load (drivers, load models) · toolchain (compilers, techniques, profile formats)
//!            metric (what a run is judged on: the metrics, a run's record)
//! probes     env (the machine) · stats (verdicts)
//! leaves     handle · units · digest · rng · pinning · process · guardian · interrupt · system
//!            cpustat
//!            lockfile · progress · stdout · test_skips (tests only)
//! ```

pub mod analysis;
pub mod bench;
pub mod build;
pub mod capture;
pub mod check;
pub mod cli;
pub mod cluster;
#[cfg(test)]
pub(crate) mod conformance;
pub mod context;
pub mod doctor;
pub mod env;
pub mod experiment;
pub mod explain;
pub mod measure;
pub mod metric;
pub mod pipeline;
pub mod profiles;
pub mod report;
pub mod runs;
pub mod served;
pub mod service;
pub mod ship;
pub mod source;
pub mod step;
pub mod store;
pub mod toolchain;
pub mod workdir;

// The crates below the rest (crates/): the compiler keeps them from
// importing upward. Each is re-exported by its module's old name.
#[cfg(test)]
pub(crate) use afterburner_leaves::test_skips;
pub use afterburner_leaves::{
    cpustat, digest, guardian, handle, interrupt, lockfile, named_handle, pinning, process,
    progress, rng, stdout, system, units,
};
pub use afterburner_load as load;
pub use afterburner_stats as stats;
