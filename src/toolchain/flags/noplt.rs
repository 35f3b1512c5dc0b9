//! `noplt`: `-fno-plt`. A call to a function in another shared object
//! loads its address from the GOT and calls it there, instead of jumping
//! to a PLT stub that does the same (one jump fewer per call; lazy binding
//! is given up, as `-z now` does). Arch Linux and Fedora build their
//! packages with it. It changes the code of every call, so every build gets
//! it, instrumented ones too.

use crate::toolchain::optimize::{c_and_cpp_only, Optimize};
use crate::toolchain::{Compiler, Flags};

pub struct NoPlt;

impl Optimize for NoPlt {
    fn word(&self) -> &'static str {
        "noplt"
    }

    fn describe(&self) -> &'static str {
        "`-fno-plt`: calls into shared objects load the address from the GOT instead of jumping through a PLT stub"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        c_and_cpp_only(self.word(), compiler)
    }

    fn every_stage_flags(&self, _compiler: Compiler, flags: &mut Flags) {
        // At link time too: an LTO link compiles again.
        flags.both(&["-fno-plt"]);
    }
}

#[cfg(test)]
mod tests {
    use crate::toolchain::{
        optimization_flags, Compiler, Optimization, RoundChoices, Stage, VariantDirs,
    };

    #[test]
    fn every_stage_of_a_c_build_gets_it_and_go_is_refused() {
        let noplt = Optimization::from_name("noplt").unwrap();
        let stack = [Optimization::PGO, noplt, Optimization::BOLT];
        let dirs = VariantDirs {
            build: "/w/build".into(),
            profiles: "/w/profile".into(),
        };
        for compiler in [Compiler::Gcc, Compiler::Clang] {
            for stage in [Stage::FIRST, Stage::Instrumented(1), Stage::Final] {
                let f =
                    optimization_flags(compiler, &stack, RoundChoices::INSTRUMENTED, stage, &dirs);
                assert!(f.cflags.contains(&"-fno-plt".to_owned()), "{f:?}");
            }
        }
        assert!(noplt.supports(Compiler::Go).is_err());
        assert!(!noplt.needs_profile());
    }
}
