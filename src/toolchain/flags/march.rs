//! `march`: code for this CPU (`-march=native -mtune=native`, rustc's
//! `-Ctarget-cpu=native`) or for the variant's `march` level
//! (`x86-64-v3`). The level is the variant's, so
//! its flags are added where the variant is at hand
//! (`build::compose_flags`, from [`crate::toolchain::march_flags`]).

use crate::toolchain::optimize::{c_and_cpp_only, Optimize};
use crate::toolchain::Compiler;

pub struct March;

impl Optimize for March {
    fn word(&self) -> &'static str {
        "march"
    }

    fn describe(&self) -> &'static str {
        "`-march=native -mtune=native`, or the variant's `march` level"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Rustc => Ok(()),
            _ => c_and_cpp_only(self.word(), compiler),
        }
    }
}
