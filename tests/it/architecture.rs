//! The house rules, read from the code itself:
//!
//! 1. **Layers.** src/lib.rs's doc comment draws the top-level modules in
//!    layers; a module imports only from its own layer or the ones below.
//!    An import that runs up a layer fails, naming both modules, both
//!    layers and the rule; a top-level module missing from the drawing
//!    fails too.
//! 2. **No circles**, among the top-level modules and inside every folder:
//!    modules up to three path components deep (`toolchain::formats::brought`)
//!    must not import each other in a circle, following `crate::`,
//!    `super::`, `self::` and child-module paths, `use` trees with nested
//!    groups included.
//!
//! Test code (`tests.rs`, `*_tests.rs`, `tests/` folders, each item that
//! `#[cfg(test)]` marks, found by parsing the file with `syn`) is left out:
//! tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The depth at which circles are looked for inside folders.
const DEPTH: usize = 3;

/// Source files by path relative to src/ ("served/count.rs"),
/// test code left out.
type Sources = BTreeMap<PathBuf, String>;

/// `text` with exactly the items marked `#[cfg(test)]` blanked (their
/// lines left empty), found by parsing it as Rust: a module, an impl's
/// function, anything that attribute marks, wherever it stands in the file,
/// and nothing after it.
fn production(text: &str) -> syn::Result<String> {
    let file = syn::parse_file(text)?;
    let mut cut = Vec::new();
    test_items(&file.items, &mut cut);
    let mut lines: Vec<&str> = text.lines().collect();
    for (first, last) in cut {
        for line in &mut lines[first - 1..last] {
            *line = "";
        }
    }
    Ok(lines.join("\n"))
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn marked_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The line ranges (first, last; from 1) of the items in `items` marked
/// `#[cfg(test)]`, looking inside inline modules and impl blocks.
fn test_items(items: &[syn::Item], cut: &mut Vec<(usize, usize)>) {
    use syn::spanned::Spanned as _;
    let lines = |span: proc_macro2::Span| (span.start().line, span.end().line);
    for item in items {
        let attrs = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::ExternCrate(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::ForeignMod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::TraitAlias(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => continue,
        };
        if marked_test(attrs) {
            cut.push(lines(item.span()));
            continue;
        }
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    test_items(inner, cut);
                }
            }
            syn::Item::Impl(block) => {
                for member in &block.items {
                    let attrs = match member {
                        syn::ImplItem::Const(i) => &i.attrs,
                        syn::ImplItem::Fn(i) => &i.attrs,
                        syn::ImplItem::Type(i) => &i.attrs,
                        syn::ImplItem::Macro(i) => &i.attrs,
                        _ => continue,
                    };
                    if marked_test(attrs) {
                        cut.push(lines(member.span()));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every `.rs` file under `dir`, descending into the folders `descend`
/// accepts (by name).
fn rust_files(dir: &Path, descend: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if descend(&entry.file_name().to_string_lossy()) {
                rust_files(&path, descend, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn read_sources(src: &Path) -> Sources {
    let mut files = Vec::new();
    rust_files(src, &|folder| folder != "tests", &mut files);
    files
        .into_iter()
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name != "tests.rs" && !name.ends_with("_tests.rs")
        })
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let production =
                production(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path.strip_prefix(src).unwrap().to_path_buf(), production)
        })
        .collect()
}

/// The whole house as one tree of modules, as `afterburner` re-exports it:
/// src/ and each crate of crates/ in the place of the module it was
/// (crates/stats/src/race.rs is stats/race.rs; crates/leaves/src/process.rs,
/// the leaves, is process.rs), its paths written as src/ would write them
/// (`crate::x` in crates/stats is `crate::stats::x`; `afterburner_leaves::x`
/// is `crate::x`).
fn read_house() -> Sources {
    let mut sources = read_sources(&src());
    for entry in std::fs::read_dir(src().join("../crates"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = if name == "leaves" { "" } else { name.as_str() };
        for (path, text) in read_sources(&entry.path().join("src")) {
            let root = path == Path::new("lib.rs");
            if root && module.is_empty() {
                continue; // the leaves' lib.rs only declares them
            }
            let place = if root {
                Path::new(module).join("mod.rs")
            } else {
                Path::new(module).join(path)
            };
            let own = if module.is_empty() {
                "crate::".to_owned()
            } else {
                format!("crate::{module}::")
            };
            let text = text
                .replace("crate::", &own)
                .replace("afterburner_leaves::", "crate::")
                .replace("afterburner_stats::", "crate::stats::")
                .replace("afterburner_load::", "crate::load::");
            sources.insert(place, text);
        }
    }
    sources
}

/// The layers of src/lib.rs's drawing, top first: each a name and its
/// modules. A line that starts at the margin opens a layer; an indented
/// one continues it; modules are the first word of each `·` part.
fn layers(lib: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut inside = false;
    // Parentheses may run over a line's end.
    let mut depth = 0;
    for line in lib.lines() {
        let Some(text) = line.strip_prefix("//!") else {
            continue;
        };
        let text = text.strip_prefix(' ').unwrap_or(text);
        if text.starts_with("```") {
            if inside {
                break;
            }
            inside = true;
            continue;
        }
        if !inside || text.trim().is_empty() {
            continue;
        }
        let rest = if text.starts_with(' ') || depth > 0 {
            text
        } else {
            let (name, rest) = text.split_once(' ').unwrap_or((text, ""));
            out.push((name.to_owned(), Vec::new()));
            rest
        };
        // "cluster (Slurm jobs, above bench) · check (the CI gate)"
        let mut plain = String::new();
        for c in rest.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        let layer = &mut out.last_mut().expect("a layer name first").1;
        for part in plain.split('·') {
            if let Some(word) = part.split_whitespace().next() {
                layer.push(word.to_owned());
            }
        }
    }
    out
}

/// Whether `components` name a module under src/ (a file or a folder).
fn exists(sources: &Sources, components: &[String]) -> bool {
    if components.is_empty() {
        return true;
    }
    let joined: PathBuf = components.iter().collect();
    sources.contains_key(&joined.with_extension("rs"))
        || sources.keys().any(|k| k.starts_with(&joined))
}

/// The module path of a file: src/a/b.rs is [a, b]; src/a/mod.rs is [a].
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Expand a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_owned()];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// Every path a file names that starts at `crate`, `super`, `self` or
/// one of its child modules.
fn paths(text: &str) -> Vec<String> {
    let use_re = regex::Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);").unwrap();
    let inline_re = regex::Regex::new(
        r"\b((?:crate|super|self)(?:::(?:super|self))*::[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)",
    )
    .unwrap();
    let mut out: Vec<String> = use_re
        .captures_iter(text)
        .flat_map(|c| expand(&c[1].split_whitespace().collect::<String>()))
        .collect();
    out.extend(inline_re.captures_iter(text).map(|c| c[1].to_owned()));
    out
}

/// The module a path in the file at `here` leads to, cut at `depth`
/// components (and at the first that is not a module); `None` for paths
/// outside the crate.
fn target(sources: &Sources, here: &[String], path: &str, depth: usize) -> Option<Vec<String>> {
    let comps: Vec<String> = path
        .split("::")
        .map(|c| c.split_whitespace().next().unwrap_or("").to_owned())
        .filter(|c| !c.is_empty())
        .collect();
    let first = comps.first()?;
    let absolute: Vec<String> = match first.as_str() {
        "crate" => comps[1..].to_vec(),
        "super" | "self" => {
            let mut base = here.to_vec();
            let mut rest = &comps[..];
            while let Some(word) = rest.first() {
                match word.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            base
        }
        _ => {
            let mut child = here.to_vec();
            child.push(first.clone());
            if !exists(sources, &child) {
                return None;
            }
            here.iter().chain(&comps).cloned().collect()
        }
    };
    let mut module = Vec::new();
    for c in absolute.iter().take(depth) {
        let mut next = module.clone();
        next.push(c.clone());
        if !exists(sources, &next) {
            break;
        }
        module = next;
    }
    (!module.is_empty()).then_some(module)
}

/// Module → the modules it imports, both cut at `depth` components;
/// ancestors and descendants of a module are not edges.
fn graph(sources: &Sources, depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in sources {
        let here = module_of(file);
        let me: Vec<String> = here.iter().take(depth).cloned().collect();
        if me.is_empty() || matches!(me[0].as_str(), "lib" | "main") {
            continue;
        }
        for path in paths(text) {
            let Some(to) = target(sources, &here, &path, depth) else {
                continue;
            };
            if to.starts_with(&me) || me.starts_with(&to) {
                continue;
            }
            out.entry(me.join("::")).or_default().insert(to.join("::"));
        }
    }
    out
}

/// The circles of `graph`: its strongly connected components of more than
/// one module (Tarjan), each as its edges.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        found: Vec<Vec<&'g str>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.on.contains(w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found
        .iter()
        .map(|c| {
            let mut edges = Vec::new();
            for a in c {
                for b in &graph[*a] {
                    if c.contains(&b.as_str()) {
                        edges.push(format!("{a} -> {b}"));
                    }
                }
            }
            edges.join(", ")
        })
        .collect()
}

/// Every breach of the house rules in `sources`, in words.
fn breaches(sources: &Sources) -> Vec<String> {
    let lib = sources
        .get(Path::new("lib.rs"))
        .expect("src/lib.rs is read");
    let layers = layers(lib);
    let layer_of = |module: &str| {
        layers
            .iter()
            .position(|(_, ms)| ms.iter().any(|m| m == module))
    };
    let mut out = Vec::new();
    let top = graph(sources, 1);
    let modules: BTreeSet<String> = sources
        .keys()
        .map(|k| module_of(k))
        .filter_map(|m| m.first().cloned())
        .filter(|m| m != "lib" && m != "main")
        .collect();
    for module in &modules {
        if layer_of(module).is_none() {
            out.push(format!(
                "`{module}` is in no layer of src/lib.rs's drawing: add it to the layer whose modules it may import"
            ));
        }
    }
    for (from, tos) in &top {
        for to in tos {
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                continue;
            };
            if b < a {
                out.push(format!(
                    "`{from}` imports `{to}`: `{from}` is in layer `{}`, `{to}` in layer `{}` above it; a module imports only from its own layer or the ones below (src/lib.rs). Move what both need down a layer, or pass it in.",
                    layers[a].0, layers[b].0
                ));
            }
        }
    }
    for circle in circles(&top) {
        out.push(format!("a circle among top-level modules: {circle}"));
    }
    for circle in circles(&graph(sources, DEPTH)) {
        out.push(format!(
            "a circle inside a folder (modules {DEPTH} deep): {circle}; move what they share into a leaf module both import"
        ));
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn modules_import_down_the_layers_and_never_in_a_circle() {
    let sources = read_house();
    // The check sees imports at all: bench uses the run records, and the
    // drawing has its layers.
    assert!(graph(&sources, 1)["bench"].contains("runs"));
    // The crates are read in their modules' places: load (crates/load)
    // uses the leaves' interrupt (crates/leaves) by its crate's name.
    assert!(graph(&sources, 1)["load"].contains("interrupt"));
    assert!(layers(&sources[Path::new("lib.rs")]).len() >= 5);
    let found = breaches(&sources);
    assert!(
        found.is_empty(),
        "the house rules are broken:\n{}",
        found.join("\n")
    );
}

/// An import up a layer fails, naming both modules, their layers and the
/// rule: `stats` (a probe, near the bottom) importing `cluster` (a phase).
#[test]
fn an_import_up_a_layer_is_named() {
    let mut sources = read_house();
    sources.insert(
        PathBuf::from("stats/upward.rs"),
        "use crate::cluster::Options;\n".to_owned(),
    );
    let found = breaches(&sources).join("\n");
    assert!(
        found.contains("`stats` imports `cluster`: `stats` is in layer `probes`, `cluster` in layer `phases` above it; a module imports only from its own layer or the ones below (src/lib.rs)"),
        "{found}"
    );
}

/// A circle inside a folder is found through `super::` and nested `use`
/// groups, and a module left out of the drawing is named.
#[test]
fn a_circle_inside_a_folder_and_a_module_outside_the_drawing_are_named() {
    let mut sources: Sources = BTreeMap::new();
    sources.insert(
        PathBuf::from("lib.rs"),
        "//! ```text\n//! top    a\n//! bottom b\n//! ```\n".to_owned(),
    );
    sources.insert(PathBuf::from("a/mod.rs"), "mod x;\nmod y;\n".to_owned());
    sources.insert(
        PathBuf::from("a/x.rs"),
        "use super::{y::{One, Two}};\n".to_owned(),
    );
    sources.insert(
        PathBuf::from("a/y.rs"),
        "use crate::a::x::Three;\n".to_owned(),
    );
    sources.insert(
        PathBuf::from("b.rs"),
        "use crate::a::x::Three;\n".to_owned(),
    );
    sources.insert(PathBuf::from("c.rs"), String::new());
    let found = breaches(&sources).join("\n");
    assert!(found.contains("a circle inside a folder"), "{found}");
    assert!(
        found.contains("a::x -> a::y") && found.contains("a::y -> a::x"),
        "{found}"
    );
    assert!(
        found.contains("`b` imports `a`: `b` is in layer `bottom`, `a` in layer `top`"),
        "{found}"
    );
    assert!(found.contains("`c` is in no layer"), "{found}");
    sources.insert(PathBuf::from("a/y.rs"), String::new());
    sources.insert(PathBuf::from("b.rs"), String::new());
    sources.insert(PathBuf::from("c.rs"), String::new());
    let lib = "//! ```text\n//! top    a\n//! bottom b · c\n//! ```\n";
    sources.insert(PathBuf::from("lib.rs"), lib.to_owned());
    assert_eq!(breaches(&sources), Vec::<String>::new());
}

/// ARCHITECTURE.md's code map names every top-level module of src/.
#[test]
fn the_code_map_names_every_module() {
    let sources = read_house();
    let map = std::fs::read_to_string(src().join("../ARCHITECTURE.md")).unwrap();
    let missing: Vec<String> = sources
        .keys()
        .filter_map(|k| module_of(k).first().cloned())
        .filter(|m| !matches!(m.as_str(), "lib" | "main" | "env_tests"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|m| !map.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name: {missing:?}"
    );
}

/// Every `.rs` file of src/, tests/ and benches/ is as rustfmt writes it,
/// those that `cargo fmt` cannot reach included (a module declared by a
/// macro: the exporters, drivers and techniques).
#[test]
fn every_rust_file_is_formatted() {
    if !crate::support::tools_or_skip(&["rustfmt"]) {
        return;
    }
    let root = src().join("..");
    let mut files = Vec::new();
    for dir in ["src", "crates", "tests", "benches"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &|_| true, &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let out = std::process::Command::new("rustfmt")
        .args(["--edition", "2021", "--check", "-l"])
        .args(&files)
        .output()
        .unwrap();
    let unformatted = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && unformatted.trim().is_empty(),
        "not as rustfmt writes them (run `rustfmt --edition 2021` on each):\n{unformatted}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Only what `#[cfg(test)]` marks is left out: production code after a
/// test module, or after a test-only function in an impl, is read.
#[test]
fn production_code_after_test_code_is_read() {
    let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\nuse crate::c;\nimpl X {\n    #[cfg(test)]\n    pub fn for_tests() { crate::d::f(); }\n    pub fn real() { crate::e::f(); }\n}\n";
    let kept = production(text).unwrap();
    for (path, read) in [
        ("crate::a", true),
        ("crate::b", false),
        ("crate::c", true),
        ("crate::d", false),
        ("crate::e", true),
    ] {
        assert_eq!(kept.contains(path), read, "{path} in:\n{kept}");
    }
}
