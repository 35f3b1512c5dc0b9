//! `lto`: link-time optimization, `-flto=auto` with gcc, `-flto=thin` with
//! clang, in the builds of the finished code only (it would slow an
//! instrumented compiler round for nothing). For a cargo target, fat LTO in
//! one codegen unit (what rustc's own release builds use), in every stage:
//! rustc's codegen units are the modules LLVM names a profile's internal
//! functions by, so a profile trained on 16 units matches little of a
//! build in one (measured on ripgrep: `codegen-units = 1` alone kept 0.996
//! of the baseline's instructions where the build as trained kept 0.855).

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

    fn every_stage_flags(&self, compiler: Compiler, flags: &mut Flags) {
        if compiler == Compiler::Rustc {
            flags.cargo.extend([
                "CARGO_PROFILE_RELEASE_LTO=fat".to_owned(),
                "CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1".to_owned(),
            ]);
        }
    }

    fn finished_code_flags(&self, compiler: Compiler, flags: &mut Flags) {
        match compiler {
            Compiler::Gcc | Compiler::Go => flags.both(&["-flto=auto"]),
            Compiler::Clang => flags.both(&["-flto=thin"]),
            Compiler::Rustc => {}
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
            // cargo gives the package's own crate `-C lto=fat` and each
            // dependency `-C linker-plugin-lto` (bitcode for that link).
            Compiler::Rustc => Switch::from_flags(added)
                .into_iter()
                .map(|s| {
                    if s.said.starts_with("-Clto=") {
                        Switch::option(&s.said, &["-Clto", "-Clinker-plugin-lto"])
                    } else {
                        s
                    }
                })
                .collect(),
            Compiler::Clang | Compiler::Go => Switch::from_flags(added),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::recorded::{parse_cargo_log, Switch};

    #[test]
    fn a_cargo_targets_crates_show_fat_lto_as_cargo_passes_it() {
        let mut added = Flags::default();
        Lto.every_stage_flags(Compiler::Rustc, &mut added);
        let switches = Lto.recorded(Compiler::Rustc, &added);
        let said: Vec<&str> = switches.iter().map(|s| s.said.as_str()).collect();
        assert_eq!(said, ["-Clto=fat", "-Ccodegen-units=1"]);
        let log = "     Running `/r/rustc --crate-name libc --crate-type lib -C opt-level=3 -C linker-plugin-lto -C codegen-units=1 --target x86_64-unknown-linux-gnu`\n     Running `/r/rustc --crate-name rg --crate-type bin -C opt-level=3 -C lto=fat -C codegen-units=1 --target x86_64-unknown-linux-gnu`\n     Running `/r/rustc --crate-name memchr --crate-type lib -C opt-level=3 --target x86_64-unknown-linux-gnu`\n";
        let units = parse_cargo_log(log);
        let lto: &Switch = &switches[0];
        let shown: Vec<Option<bool>> = units.iter().map(|u| lto.found_in(u)).collect();
        assert_eq!(shown, [Some(true), Some(true), Some(false)]);
    }
}
