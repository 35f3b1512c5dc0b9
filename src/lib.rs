//! afterburner: feedback-directed optimization for C, C++ and Go programs,
//! proved with interleaved, repeated benchmarks and honest statistics.

pub mod env;
pub mod process;
pub mod rng;
pub mod stats;
