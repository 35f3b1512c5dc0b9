//! The house rule: the top-level modules import each other in layers, never
//! in a circle (src/lib.rs draws the layers). The same check as
//! `module-cycles.py`: `crate::a…` paths in src/, test code left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Module (first path component under src/, without `.rs`) → the
/// top-level modules it imports.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some(name.strip_suffix(".rs").unwrap_or(&name).to_owned())
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let path_re = regex::Regex::new(r"crate::(\{[^}]*\}|[a-z_][a-z0-9_]*)").unwrap();
    let word_re = regex::Regex::new(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)").unwrap();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let relative = file.strip_prefix(src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let me = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
        if me == "lib" || me == "main" {
            continue;
        }
        let mut text = std::fs::read_to_string(&file).unwrap();
        if let Some(cut) = text.find("#[cfg(test)]") {
            text.truncate(cut);
        }
        for m in path_re.captures_iter(&text) {
            let body = &m[1];
            let targets: Vec<String> = if body.starts_with('{') {
                word_re
                    .captures_iter(body.trim_matches(|c| c == '{' || c == '}'))
                    .map(|w| w[1].to_owned())
                    .collect()
            } else {
                vec![body.to_owned()]
            };
            for target in targets {
                if target != me && modules.contains(&target) {
                    graph.entry(me.clone()).or_default().insert(target);
                }
            }
        }
    }
    graph
}

/// A circle of imports through `start`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                let mut found = path.clone();
                found.push(start.to_owned());
                return Some(found);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn top_level_modules_import_each_other_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = imports(&src);
    // The check sees imports at all: bench uses the run records.
    assert!(graph["bench"].contains("runs"), "{graph:?}");
    let circles: Vec<String> = graph
        .keys()
        .filter_map(|m| circle(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(
        circles.is_empty(),
        "import cycles among the top-level modules (move the shared type down a layer, see src/lib.rs):\n{}",
        circles.join("\n")
    );
}

/// The check itself finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(circle(&graph, "a").unwrap(), ["a", "b", "c", "a"]);
    graph.get_mut("c").unwrap().clear();
    assert_eq!(circle(&graph, "a"), None);
}
