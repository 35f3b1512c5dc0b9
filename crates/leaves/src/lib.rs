//! afterburner's leaves: the modules every layer above may use and that use
//! nothing of afterburner's own (ARCHITECTURE.md, "Leaves"). A crate of its
//! own, so the compiler keeps them leaves; `afterburner` re-exports each by
//! its old name (`afterburner::process`, ...).

pub mod cpustat;
pub mod digest;
pub mod guardian;
pub mod handle;
pub mod interrupt;
pub mod lockfile;
pub mod pinning;
pub mod process;
pub mod progress;
pub mod rng;
pub mod stdout;
pub mod system;
/// The skip ledger of the unit tests (every crate's), not used by the tool.
pub mod test_skips;
pub mod units;
