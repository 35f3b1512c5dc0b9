//! afterburner: feedback-directed optimization for C, C++ and Go programs,
//! proved with interleaved, repeated benchmarks and honest statistics.

pub mod bench;
pub mod build;
pub mod cli;
pub mod doctor;
pub mod env;
pub mod experiment;
pub mod guardian;
pub mod interrupt;
pub mod load;
pub mod lockfile;
pub mod measure;
pub mod pinning;
pub mod pipeline;
pub mod process;
pub mod progress;
pub mod report;
pub mod rng;
pub mod runs;
pub mod service;
pub mod source;
pub mod stats;
pub mod store;
pub mod toolchain;
pub mod workdir;
