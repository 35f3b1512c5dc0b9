//! `nosi`: `-fno-semantic-interposition`. Without it, gcc must assume that
//! an exported function of position-independent code may be replaced at
//! load time (`LD_PRELOAD`), so it neither inlines nor clones it and calls
//! it through the PLT; with it, calls inside the library bind locally.
//! Fedora builds its Python with it since Fedora 32, measuring 5–27% on
//! pyperformance (<https://fedoraproject.org/wiki/Changes/PythonNoSemanticInterpositionSpeedup>).
//! clang already inlines such functions; with it, clang 11+ also calls
//! them directly instead of through the PLT. It changes
//! which calls are inlined, so every build gets it, instrumented ones too:
//! the profile must describe the code the final build optimizes.

use crate::toolchain::optimize::{c_and_cpp_only, Optimize};
use crate::toolchain::{Compiler, Flags};

pub struct NoSemanticInterposition;

impl Optimize for NoSemanticInterposition {
    fn word(&self) -> &'static str {
        "nosi"
    }

    fn describe(&self) -> &'static str {
        "`-fno-semantic-interposition`: exported functions of PIC code bind locally, so they can be inlined (Fedora's Python: 5-27%)"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        c_and_cpp_only(self.word(), compiler)
    }

    fn every_stage_flags(&self, _compiler: Compiler, flags: &mut Flags) {
        // At link time too: an LTO link compiles again.
        flags.both(&["-fno-semantic-interposition"]);
    }
}

#[cfg(test)]
mod tests {
    use crate::toolchain::optimize::VariantSetup;
    use crate::toolchain::{
        optimization_flags, BoltProfile, Compiler, Optimization, RoundChoices, Stage, VariantDirs,
    };

    #[test]
    fn every_stage_of_a_c_build_gets_it_and_go_is_refused() {
        let nosi = Optimization::from_name("nosi").unwrap();
        let stack = [Optimization::PGO, nosi, Optimization::LTO];
        let dirs = VariantDirs {
            build: "/w/build".into(),
            profiles: "/w/profile".into(),
        };
        for compiler in [Compiler::Gcc, Compiler::Clang] {
            for stage in [Stage::FIRST, Stage::Final] {
                let f =
                    optimization_flags(compiler, &stack, RoundChoices::INSTRUMENTED, stage, &dirs);
                for flags in [&f.cflags, &f.ldflags] {
                    assert!(
                        flags.contains(&"-fno-semantic-interposition".to_owned()),
                        "{flags:?}"
                    );
                }
            }
        }
        assert!(nosi
            .supports(Compiler::Go)
            .unwrap_err()
            .contains("C and C++"));
        let setup = VariantSetup {
            compiler: Compiler::Gcc,
            bolt_profile: BoltProfile::Instrumented,
            go_pgo: crate::toolchain::GoPgoSource::Cpuprofile,
            sampling: crate::toolchain::sampling::Asked::default(),
        };
        assert!(nosi
            .requirements(&crate::env::capture(), Some(&setup))
            .is_empty());
        nosi.check(&setup).unwrap();
        assert!(!nosi.needs_profile());
    }
}
