//! The reference pages agree with the code. `docs/experiment.md`: every key
//! the experiment parser accepts is in its table, every key in a table is
//! accepted, and each example parses (its type is right).
//! `docs/commands.md`: every command and option `--help` lists is there,
//! and every option there exists.
//!
//! The accepted keys come from the parser itself: a key it does not know
//! is refused with the list of those it does (serde's
//! `deny_unknown_fields`), so no list is kept by hand on either side.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use afterburner::experiment::{load_str, ExperimentError};
use clap::CommandFactory;

/// A key no table accepts.
const UNKNOWN: &str = "zz_not_a_key";

/// A reference table of `docs/experiment.md`: its heading, the texts that
/// put [`UNKNOWN`] where its keys go (`KEY`), and the block of the file
/// its examples go into.
struct Table {
    heading: &'static str,
    probes: &'static [&'static str],
    block: Block,
}

/// Where an example goes in the file [`experiment_with`] writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// Examples are table headers, not `key = value`: none is tried.
    None,
    Target,
    Service,
    Variant,
    Matrix,
    Workload,
    Figure,
    Load,
    Bench,
    Quick,
    Cluster,
    Report,
}

const TABLES: &[Table] = &[
    Table {
        heading: "## The file's tables",
        probes: &["KEY = 1\n"],
        block: Block::None,
    },
    Table {
        heading: "## `[target]`",
        probes: &["[target]\nKEY = 1\n"],
        block: Block::Target,
    },
    Table {
        heading: "## `source = { … }`",
        probes: &[
            "[target]\nsource = { KEY = 1 }\n",
            "[[variant]]\nsource = { KEY = 1 }\n",
            "[[variant]]\nprofile_from = { source = { KEY = 1 } }\n",
        ],
        block: Block::Target,
    },
    Table {
        heading: "## `[[target.service]]`",
        probes: &["[[target.service]]\nKEY = 1\n"],
        block: Block::Service,
    },
    Table {
        heading: "## `[[variant]]`",
        probes: &["[[variant]]\nKEY = 1\n"],
        block: Block::Variant,
    },
    Table {
        heading: "## `profile_from = { … }`",
        probes: &["[[variant]]\nprofile_from = { KEY = 1 }\n"],
        block: Block::Variant,
    },
    Table {
        heading: "## `[[matrix]]`",
        probes: &["[[matrix]]\nKEY = 1\n"],
        block: Block::Matrix,
    },
    Table {
        heading: "## `[[workload]]`",
        probes: &["[[workload]]\nKEY = 1\n"],
        block: Block::Workload,
    },
    Table {
        heading: "## `[[workload.figures]]`",
        probes: &["[[workload]]\n[[workload.figures]]\nKEY = 1\n"],
        block: Block::Figure,
    },
    Table {
        heading: "## `[workload.load]`",
        probes: &["[[workload]]\n[workload.load]\nKEY = 1\n"],
        block: Block::Load,
    },
    Table {
        heading: "## `[bench]`",
        probes: &["[bench]\nKEY = 1\n"],
        block: Block::Bench,
    },
    Table {
        heading: "## `[quick]`",
        probes: &["[quick]\nKEY = 1\n"],
        block: Block::Quick,
    },
    Table {
        heading: "## `[cluster]`",
        probes: &["[cluster]\nKEY = 1\n"],
        block: Block::Cluster,
    },
    Table {
        heading: "## `[report]`",
        probes: &["[report]\nKEY = 1\n"],
        block: Block::Report,
    },
];

fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines under `heading`, up to the next heading of its level or above.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = text.lines();
    assert!(
        lines.any(|l| l.trim_end() == heading),
        "docs: no heading `{heading}`"
    );
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|&c| c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// The cells of a table row (`| a | b |`), outer pipes dropped; `None`
/// for any other line, the header's rule included.
fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split(" | ").map(str::trim).collect();
    (!cells[0].starts_with("---")).then_some(cells)
}

/// The text between the first pair of backticks in `cell`.
fn code(cell: &str) -> Option<&str> {
    let rest = &cell[cell.find('`')? + 1..];
    Some(&rest[..rest.find('`')?])
}

/// A documented table's rows: key → example (the key cell's code, the
/// fourth cell's code).
fn documented(text: &str, heading: &str) -> BTreeMap<String, String> {
    let mut rows = BTreeMap::new();
    for line in section(text, heading) {
        let Some(cells) = cells(line) else { continue };
        if cells[0] == "key" {
            assert_eq!(
                cells,
                ["key", "type", "default", "example", "meaning"],
                "docs/experiment.md: the table under `{heading}` has other columns"
            );
            continue;
        }
        let key = code(cells[0])
            .unwrap_or_else(|| panic!("docs/experiment.md `{heading}`: `{line}` names no key"));
        let example = cells.get(3).and_then(|c| code(c)).unwrap_or_default();
        assert!(
            rows.insert(key.to_owned(), example.to_owned()).is_none(),
            "docs/experiment.md `{heading}`: `{key}` twice"
        );
    }
    assert!(
        !rows.is_empty(),
        "docs/experiment.md: no table under `{heading}`"
    );
    rows
}

/// The keys the parser accepts where `probe` puts [`UNKNOWN`], read from
/// its refusal: "unknown field `x`, expected one of `a`, `b`" (or
/// "expected `a` or `b`", or "expected `a`").
fn accepted(probe: &str) -> BTreeSet<String> {
    let text = probe.replace("KEY", UNKNOWN);
    let message = match load_str(Path::new("probe.toml"), &text, false) {
        Err(ExperimentError::Parse { message, .. }) => message,
        other => panic!("{text}: expected the parser to refuse `{UNKNOWN}`, got {other:?}"),
    };
    let list = message
        .split_once(&format!("unknown field `{UNKNOWN}`, expected "))
        .unwrap_or_else(|| panic!("{text}: refused, but not as an unknown key: {message}"))
        .1;
    list.trim_start_matches("one of ")
        .split(", ")
        .flat_map(|k| k.split(" or "))
        .filter_map(|k| k.trim().strip_prefix('`')?.strip_suffix('`'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_experiment_key_is_documented_and_every_documented_key_accepted() {
    let text = doc("experiment.md");
    let mut problems = Vec::new();
    for table in TABLES {
        let documented: BTreeSet<String> = documented(&text, table.heading).into_keys().collect();
        for probe in table.probes {
            let accepted = accepted(probe);
            let where_ = probe.replace("KEY = 1", "…").replace('\n', " ");
            for key in accepted.difference(&documented) {
                problems.push(format!(
                    "`{key}` ({where_}) is accepted but missing from docs/experiment.md under {}",
                    table.heading
                ));
            }
            for key in documented.difference(&accepted) {
                problems.push(format!(
                    "`{key}` is documented under {} but the parser refuses it ({where_})",
                    table.heading
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// A valid experiment with `example` (`key = value`) in `block`, replacing
/// the key there if the minimal file has it.
fn experiment_with(block: Block, example: &str) -> String {
    let base: &[(Block, &str, &[&str])] = &[
        (
            Block::Target,
            "[target]",
            &[
                "name = \"t\"",
                "source = { path = \".\" }",
                "build = \"true\"",
                "binaries = { b = \"b\" }",
            ],
        ),
        (
            Block::Service,
            "[[target.service]]",
            &["name = \"s\"", "start = \"{bin.b}\""],
        ),
        (Block::Variant, "[[variant]]", &["name = \"baseline\""]),
        (Block::Matrix, "[[matrix]]", &["compiler = [\"gcc\"]"]),
        (
            Block::Workload,
            "[[workload]]",
            &["name = \"w\"", "run = \"true\""],
        ),
        (
            Block::Figure,
            "[[workload.figures]]",
            &["name = \"f\"", "regex = \"([0-9]+)\""],
        ),
        (Block::Load, "[workload.load]", &["driver = \"redis\""]),
        (Block::Bench, "[bench]", &[]),
        (Block::Quick, "[quick]", &[]),
        (Block::Cluster, "[cluster]", &["engine = \"slurm\""]),
        (Block::Report, "[report]", &[]),
    ];
    // Always written: the rest only when the example goes there.
    let always = [Block::Target, Block::Variant, Block::Workload];
    let key = |line: &str| line.split('=').next().unwrap_or_default().trim().to_owned();
    let mut out = String::new();
    for (b, header, lines) in base {
        if !always.contains(b) && *b != block {
            continue;
        }
        if *b == Block::Load {
            // A workload has `run` or `load`: this one only the load.
            out = out.replace("run = \"true\"\n", "");
        }
        out.push_str(header);
        out.push('\n');
        for line in lines
            .iter()
            .filter(|l| *b != block || key(l) != key(example))
        {
            out.push_str(line);
            out.push('\n');
        }
        if *b == block {
            out.push_str(example);
            out.push('\n');
        }
    }
    out
}

/// Each documented example is accepted by the parser as written (its
/// value validated or not, since the minimal file around it may not fit:
/// only a parse error, a wrong type or name, fails).
#[test]
fn every_documented_example_parses() {
    let text = doc("experiment.md");
    let mut problems = Vec::new();
    for table in TABLES.iter().filter(|t| t.block != Block::None) {
        for (key, example) in documented(&text, table.heading) {
            if example.is_empty() || example.starts_with('[') {
                continue;
            }
            let file = experiment_with(table.block, &example);
            if let Err(ExperimentError::Parse { message, .. }) =
                load_str(Path::new("example.toml"), &file, false)
            {
                problems.push(format!(
                    "{} `{key}`: the example `{example}` does not parse:\n{message}\n--- the file:\n{file}",
                    table.heading
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n\n"));
}

/// The long options a command's `--help` lists, less those of every
/// command (`--help`, `--quiet`, `--verbose`, `--version`).
fn long_options(command: &clap::Command) -> BTreeSet<String> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set())
        .filter_map(|a| a.get_long())
        .filter(|l| !["help", "version"].contains(l))
        .map(str::to_owned)
        .collect()
}

/// The `--options` named in the first cell of each row under `heading`.
fn documented_options(text: &str, heading: &str) -> BTreeSet<String> {
    let mut options = BTreeSet::new();
    for line in section(text, heading) {
        let Some(cells) = cells(line) else { continue };
        let mut rest = cells[0];
        while let Some(at) = rest.find("--") {
            rest = &rest[at + 2..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() {
                options.insert(name);
            }
        }
    }
    options
}

#[test]
fn every_command_and_option_is_documented_and_every_documented_one_exists() {
    let text = doc("commands.md");
    let cli = afterburner::cli::Cli::command();
    let mut problems = Vec::new();
    let global: BTreeSet<String> = cli
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !["help", "version"].contains(l))
        .map(str::to_owned)
        .collect();
    let mut documented_global = documented_options(&text, "## Options of every command");
    documented_global.retain(|o| !["help", "version"].contains(&o.as_str()));
    if global != documented_global {
        problems.push(format!(
            "options of every command: --help has {global:?}, docs/commands.md {documented_global:?}"
        ));
    }
    let mut commands = BTreeSet::new();
    for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = command.get_name();
        commands.insert(name.to_owned());
        let heading = format!("## `afterburner {name}`");
        if !text.lines().any(|l| l.trim_end() == heading) {
            problems.push(format!(
                "`afterburner {name}` has no heading `{heading}` in docs/commands.md"
            ));
            continue;
        }
        let options = long_options(command);
        let documented = documented_options(&text, &heading);
        for o in options.difference(&documented) {
            problems.push(format!(
                "`afterburner {name} --{o}` is missing from docs/commands.md"
            ));
        }
        for o in documented.difference(&options) {
            problems.push(format!(
                "docs/commands.md documents `afterburner {name} --{o}`, which --help does not have"
            ));
        }
    }
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("## `afterburner ")
            .and_then(|l| l.strip_suffix('`'))
        {
            if !commands.contains(name) {
                problems.push(format!(
                    "docs/commands.md has `afterburner {name}`, which is no command"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The load models' table in docs/services-and-load.md names exactly the
/// models of the load's `models!` list.
#[test]
fn the_load_models_table_names_every_model() {
    let text = doc("services-and-load.md");
    let documented: BTreeSet<String> = section(&text, "### Load models")
        .into_iter()
        .filter_map(cells)
        .filter(|c| c[0] != "model")
        .filter_map(|c| code(c[0]).map(str::to_owned))
        .collect();
    let models: BTreeSet<String> = afterburner::load::models::MODELS
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    assert_eq!(documented, models, "docs/services-and-load.md, Load models");
}

/// scripts/fresh-root.sh builds a variant of every optimization word with
/// each compiler that has it: its `words` are `optimizations!`'s (Go's
/// alone aside) and its `clang_only` those gcc refuses.
#[test]
fn the_fresh_root_check_tries_every_optimization_word() {
    use afterburner::toolchain::{Compiler, ALL};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fresh-root.sh");
    let script = std::fs::read_to_string(&path).unwrap();
    let list = |name: &str| -> BTreeSet<String> {
        let line = script
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{name}=\"")))
            .unwrap_or_else(|| panic!("scripts/fresh-root.sh: no `{name}=\"…\"`"));
        line.trim_end_matches('"')
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let has = |o: &afterburner::toolchain::Optimization, c| o.supports(c).is_ok();
    let c_words: BTreeSet<String> = ALL
        .iter()
        .filter(|o| has(o, Compiler::Gcc) || has(o, Compiler::Clang))
        .map(|o| o.word().to_owned())
        .collect();
    let clang_only: BTreeSet<String> = ALL
        .iter()
        .filter(|o| !has(o, Compiler::Gcc) && has(o, Compiler::Clang))
        .map(|o| o.word().to_owned())
        .collect();
    assert_eq!(list("words"), c_words, "scripts/fresh-root.sh: words");
    assert_eq!(
        list("clang_only"),
        clang_only,
        "scripts/fresh-root.sh: clang_only"
    );
}

/// docs/README.md links every page under docs/ (and every case study).
#[test]
fn the_docs_index_links_every_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let index = doc("README.md");
    let mut pages = Vec::new();
    for dir in [root.clone(), root.join("case-studies")] {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md")
                && path.file_name() != Some("README.md".as_ref())
            {
                pages.push(
                    path.strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    let missing: Vec<&String> = pages
        .iter()
        .filter(|p| !index.contains(&format!("({p})")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/README.md links none of {missing:?}"
    );
}

/// The words `[bench] metrics` accepts, as docs/experiment.md lists them,
/// are the registry's built-in metrics (`metrics!`), each once.
#[test]
fn the_documented_metrics_are_the_registrys() {
    let text = doc("experiment.md");
    let row = text
        .lines()
        .find(|l| l.starts_with("| `metrics` |"))
        .expect("docs/experiment.md: no `metrics` row");
    let meaning = cells(row).unwrap()[4];
    let documented: Vec<&str> = meaning.split('`').skip(1).step_by(2).collect();
    let registry: Vec<&str> = afterburner::metric::BUILTINS
        .iter()
        .map(|b| b.name())
        .collect();
    assert_eq!(documented, registry, "{row}");
}
