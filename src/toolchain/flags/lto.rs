//! `lto`: link-time optimization, `-flto=auto` with gcc, `-flto=thin` with
//! clang, fat LTO in one codegen unit for a cargo target (what cargo-pgo's
//! and rustc's own release builds use); in the builds of the finished code
//! only (it would slow an instrumented compiler round for nothing).

use crate::toolchain::optimize::{c_and_cpp_only, Optimize};
use crate::toolchain::recorded::Switch;
use crate::toolchain::{Compiler, Flags};

pub struct Lto;

impl Optimize for Lto {
    fn word(&self) -> &'static str {
        "lto"
    }

    fn describe(&self) -> &'static str {
        "link-time optimization (-flto=auto with gcc, -flto=thin with clang, fat LTO with codegen-units = 1 for cargo)"
    }

    fn supports(&self, compiler: Compiler) -> Result<(), String> {
        match compiler {
            Compiler::Rustc => Ok(()),
            _ => c_and_cpp_only(self.word(), compiler),
        }
    }

    fn finished_code_flags(&self, compiler: Compiler, flags: &mut Flags) {
        match compiler {
            Compiler::Gcc | Compiler::Go => flags.both(&["-flto=auto"]),
            Compiler::Clang => flags.both(&["-flto=thin"]),
            Compiler::Rustc => flags.cargo.extend([
                "CARGO_PROFILE_RELEASE_LTO=fat".to_owned(),
                "CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1".to_owned(),
            ]),
        }
    }

    fn recorded(&self, compiler: Compiler, added: &Flags) -> Vec<Switch> {
        match compiler {
            // gcc records -flto=auto as `-flto` in each object, and its
            // LTO link's own units as `-fltrans`.
            Compiler::Gcc => vec![Switch {
                at_lto_link: true,
                ..Switch::option("-flto=auto", &["-flto", "-fltrans"])
            }],
            Compiler::Clang | Compiler::Go | Compiler::Rustc => Switch::from_flags(added),
        }
    }
}
