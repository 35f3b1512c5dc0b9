//! Tests of reading the compilers' records, on what gcc 12, clang 14 and
//! Go 1.26 wrote (copied from `readelf` and `go version -m`).

use super::*;

// `readelf -W -p .GCC.command.line` of gcc 12 binaries: a plain build, and
// an LTO link given -frecord-gcc-switches, one object compiled without LTO.
const GCC_DUMP: &str = "
String dump of section '.GCC.command.line':
  [     0]  GNU GIMPLE 12.2.0 -mtune=generic -march=x86-64 -O3 -O3 -fno-openmp -fno-openacc -fPIC -fcf-protection=none -fltrans
  [    74]  GNU C17 12.2.0 -mtune=generic -march=x86-64 -O2 -fasynchronous-unwind-tables

";

const CLANG_DUMP: &str = "
String dump of section '.GCC.command.line':
  [     0]  /usr/lib/llvm-14/bin/clang -O3 -flto=thin -frecord-command-line -c a.c -o ca.o
  [    4f]  /usr/lib/llvm-14/bin/clang -O3 -frecord-command-line -c m.c -o cm.o
";

// `readelf --debug-dump=info --dwarf-depth=1` of a gcc -g LTO build.
const PRODUCERS: &str = "
 <0><c>: Abbrev Number: 3 (DW_TAG_compile_unit)
    <d>   DW_AT_producer    : (indirect string, offset: 0): GNU GIMPLE 12.2.0 -mtune=generic -march=x86-64 -g -g -O2 -O2 -fltrans
    <11>   DW_AT_language    : 12\t(ANSI C99)
 <0><5a>: Abbrev Number: 1 (DW_TAG_compile_unit)
    <5b>   DW_AT_producer    : (indirect string, offset: 0x7a): GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2 -flto -fasynchronous-unwind-tables
    <9b>   DW_AT_producer    : GNU C17 12.2.0 -march=znver3 -O3
    <d>   DW_AT_producer    : (indexed string: 0): Debian clang version 14.0.6
";

#[test]
fn string_dumps_give_one_line_per_recorded_string() {
    let lines = parse_string_dump(GCC_DUMP);
    assert_eq!(lines.len(), 2);
    assert!(lines[1].starts_with("GNU C17 12.2.0 -mtune"), "{lines:?}");
    let units: Vec<Unit> = lines.iter().map(|l| Unit::parse(l)).collect();
    assert!(units[0].lto_link && !units[1].lto_link);
    assert_eq!(units[1].compiler, Some(Compiler::Gcc));
    let clang = parse_string_dump(CLANG_DUMP);
    assert_eq!(Unit::parse(&clang[0]).compiler, Some(Compiler::Clang));
    assert!(
        parse_string_dump("readelf: Warning: Section '.GCC.command.line' was not dumped")
            .is_empty()
    );
}

#[test]
fn producers_are_read_inline_and_from_the_string_table() {
    let producers = parse_producers(PRODUCERS);
    assert_eq!(producers.len(), 4, "{producers:?}");
    assert!(producers[1].ends_with("-flto -fasynchronous-unwind-tables"));
    assert_eq!(producers[2], "GNU C17 12.2.0 -march=znver3 -O3");
    assert_eq!(producers[3], "Debian clang version 14.0.6");
    assert_eq!(Unit::parse(&producers[3]).compiler, None);
}

#[test]
fn gcc_lto_shows_as_flto_in_objects_and_fltrans_at_the_link() {
    let lto = Switch {
        at_lto_link: true,
        ..Switch::option("-flto=auto", &["-flto", "-fltrans"])
    };
    let units: Vec<Unit> = parse_producers(PRODUCERS)
        .iter()
        .map(|p| Unit::parse(p))
        .collect();
    let found: Vec<Option<bool>> = units.iter().map(|u| lto.found_in(u)).collect();
    assert_eq!(found, [Some(true), Some(true), Some(false), Some(false)]);
    // Other options are not recorded by an LTO link's unit.
    let noplt = Switch::from_flag("-fno-plt").unwrap();
    assert_eq!(noplt.found_in(&units[0]), None);
    assert_eq!(noplt.found_in(&units[1]), Some(false));
}

#[test]
fn the_last_level_counts_and_options_match_with_their_values() {
    let o3 = Switch::from_flag("-O3").unwrap();
    let unit = |line: &str| Unit::parse(line);
    assert_eq!(o3.found_in(&unit("GNU C17 12.2.0 -O3 -O2")), Some(false));
    assert_eq!(o3.found_in(&unit("GNU C17 12.2.0 -O2 -O3")), Some(true));
    assert_eq!(
        o3.found_in(&unit("GNU GIMPLE 12.2.0 -O3 -O3 -fltrans")),
        Some(true)
    );
    let use_profile = Switch::from_flag("-fprofile-use=/w/p/merged-1.profdata").unwrap();
    let clang = unit("/usr/bin/clang -fprofile-use=/other/merged.profdata -c a.c");
    assert_eq!(use_profile.found_in(&clang), Some(true));
    let generate = Switch::from_flag("-fprofile-generate").unwrap();
    assert_eq!(generate.found_in(&clang), Some(false));
    assert_eq!(
        generate.found_in(&unit("GNU C17 -fprofile-generate-x")),
        Some(false)
    );
    // Nothing records warnings, definitions or linker options.
    for flag in [
        "-Wno-missing-profile",
        "-DNDEBUG",
        "-Wl,--emit-relocs",
        "-I/x",
    ] {
        assert_eq!(Switch::from_flag(flag), None, "{flag}");
    }
}

#[test]
fn gcc_native_is_known_only_as_not_the_default() {
    let native = crate::toolchain::march_switch("native", Compiler::Gcc);
    let unit = |line: &str| Unit::parse(line);
    assert_eq!(
        native.found_in(&unit("GNU C17 -march=znver3 -mmmx")),
        Some(true)
    );
    assert_eq!(
        native.found_in(&unit("GNU C17 -mtune=generic -march=x86-64 -O2")),
        Some(false)
    );
    let v3 = crate::toolchain::march_switch("x86-64-v3", Compiler::Clang);
    assert_eq!(
        v3.found_in(&unit("clang -march=x86-64-v3 -c a.c")),
        Some(true)
    );
}

#[test]
fn go_build_info_is_one_unit_of_settings() {
    let text = "g: go1.26.8\n\tpath\tgohot\n\tbuild\t-buildmode=exe\n\tbuild\t-pgo=/w/p/default.pgo\n\tbuild\tCGO_ENABLED=1\n";
    let unit = parse_go_build_info(text).unwrap();
    assert_eq!(
        unit.line,
        "-buildmode=exe -pgo=/w/p/default.pgo CGO_ENABLED=1"
    );
    let pgo = Switch::from_flag("-pgo=/w/p/default.pgo").unwrap();
    assert_eq!(pgo.found_in(&unit), Some(true));
    assert!(parse_go_build_info("not a go binary").is_none());
}

#[test]
fn tally_counts_units_and_the_runtime() {
    let record = BinaryRecord {
        comment: vec!["GCC: (Debian 12.2.0-14) 12.2.0".to_owned()],
        units: parse_string_dump(GCC_DUMP)
            .iter()
            .map(|l| Unit::parse(l))
            .collect(),
        units_from: "command lines",
        symbols: vec!["main".to_owned(), "__gcov_dump".to_owned()],
    };
    let expected = [Expected {
        from: "o3".to_owned(),
        switch: Switch::from_flag("-O3").unwrap(),
    }];
    let runtime = [Instrumentation {
        from: "pgo".to_owned(),
        prefixes: &["__gcov_"],
    }];
    let seen = tally(Compiler::Gcc, &expected, &runtime, &[record]);
    assert_eq!((seen.switches[0].with, seen.switches[0].without), (1, 1));
    assert_eq!(seen.unit_compilers.get("gcc"), Some(&2));
    assert_eq!(seen.instrumentation[0].found, Some(1));
    assert_eq!(seen.comment_names(), (true, false));
}

/// Found by `check --rev` on a cargo target: the revision's variant is
/// `pgo@1a2b3c`, and cargo's log quotes an argument whose path holds `@`,
/// which read as it was left no `-Cprofile-generate=` token.
#[test]
fn a_cargo_log_reads_quoted_arguments_and_split_codegen_options() {
    let log = "     Running `/r/rustc --crate-name app --edition=2021 src/main.rs --crate-type bin -C opt-level=3 -C embed-bitcode=no --out-dir '/w/pgo@1a2b3c/cargo/release/deps' --target x86_64-unknown-linux-gnu '-Cprofile-generate=/w/pgo@1a2b3c/profile/raw' -C 'link-arg=-Wl,--emit-relocs'`\n";
    let units = parse_cargo_log(log);
    assert_eq!(units.len(), 1);
    let line = &units[0].line;
    assert!(
        line.contains(
            " -Copt-level=3 -Cembed-bitcode=no --out-dir /w/pgo@1a2b3c/cargo/release/deps "
        ),
        "{line}"
    );
    for flag in [
        "-Cprofile-generate=/w/pgo@1a2b3c/profile/raw",
        "-Clink-arg=-Wl,--emit-relocs",
        "-Copt-level=3",
    ] {
        let switch = Switch::from_flag(flag).unwrap();
        assert_eq!(switch.found_in(&units[0]), Some(true), "{flag}: {line}");
    }
}
