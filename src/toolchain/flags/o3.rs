//! `o3`: `-O3` instead of the project's level, in every build: the level
//! shapes the code a profile is matched against (gcc refuses a -O2 profile
//! in a -O3 build with "number of counters … does not match"; clang drops
//! it per function), so instrumented builds get it too. For a cargo
//! target, `opt-level = 3` in the release profile, whatever the project's
//! Cargo.toml sets.

use crate::toolchain::optimize::{c_and_cpp_only, Optimize};
use crate::toolchain::{Compiler, Flags};

pub struct O3;

impl Optimize for O3 {
    fn word(&self) -> &'static str {
        "o3"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["O3"]
    }

    fn describe(&self) -> &'static str {
        "`-O3` instead of the project's level"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Rustc => Ok(()),
            _ => c_and_cpp_only(self.word(), compiler),
        }
    }

    fn every_stage_flags(&self, compiler: Compiler, flags: &mut Flags) {
        if compiler == Compiler::Rustc {
            flags
                .cargo
                .push("CARGO_PROFILE_RELEASE_OPT_LEVEL=3".to_owned());
        } else {
            flags.cflags.push("-O3".to_owned());
        }
    }
}
