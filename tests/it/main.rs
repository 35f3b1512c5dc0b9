//! Integration tests: the real binary on tiny C fixtures, real gcc, real
//! valgrind. One test binary (ripgrep-style `autotests = false`).
#![allow(clippy::unwrap_used)]

mod abuse;
mod architecture;
mod brought;
mod calibrate;
mod check;
mod clang_afdo;
mod cluster;
mod codegen;
mod docs;
mod errors;
mod explain;
mod export;
mod figures;
mod gcc_afdo;
mod headline;
mod html;
mod lbr;
mod load;
mod outputs;
mod page_faults;
mod perf_around;
mod pgo;
mod plan;
mod profile;
mod race;
mod readme;
mod rebuild;
mod rundir;
mod rust;
mod sequential;
mod services;
mod shapes;
mod share;
mod snapshots;
mod stale;
mod strays;
mod support;
mod verify;
mod walkthrough;
mod weights;
mod windows;
