//! The file formats profiles come in, one module each, read and written
//! by afterburner itself where a distribution's tool is broken or missing
//! (learnt from the tools' own sources, tested against the tools that read
//! them). They know nothing of techniques or rounds: a technique's folder
//! uses them.
//!
//! - [`brought`]: the formats of a profile brought from elsewhere, one file
//!   each in `brought/` and one list (`formats!`);
//! - [`gcov_afdo`]: gcc's AutoFDO profile written from an LLVM text sample
//!   profile (which it parses and writes too), [`gcov_afdo_read`] reading
//!   it back;
//! - [`fdata`]: BOLT's profile;
//! - [`pprof`]: pprof's `profile.proto`, written for Go's PGO;
//! - [`perf_script`]: `perf script`'s output, read the same way on every
//!   perf;
//! - [`untrusted_tar`]: tar archives from elsewhere, unpacked safely.

pub mod brought;
pub mod fdata;
pub mod gcov_afdo;
pub mod gcov_afdo_read;
pub mod perf_script;
pub mod pprof;
pub mod untrusted_tar;
