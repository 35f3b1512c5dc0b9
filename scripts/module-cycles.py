#!/usr/bin/env python3
# module-cycles.py: import cycles among top-level modules (the team tool, kept here so .ci/run can run it).
"""Import cycles among a Rust crate's modules, from `crate::a::b` paths in src/.

Usage: module-cycles.py [SRC] [--depth N]
A module is a path of up to N components (default 1: top-level modules;
2 also separates e.g. load::postgres from load::request). Test files
(*_tests.rs, tests.rs, tests/ folders) and `#[cfg(test)]` tails are skipped.
Prints each cycle (strongly connected component of more than one module) and
the count last; exits 1 when there is any.
"""
import re, sys, pathlib, collections

args = sys.argv[1:]
depth = 1
if "--depth" in args:
    i = args.index("--depth"); depth = int(args[i + 1]); del args[i:i + 2]
src = pathlib.Path(args[0] if args else "src")

def module_of(path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join(parts[:depth]) or "crate"

graph = collections.defaultdict(set)
for f in src.rglob("*.rs"):
    if f.name == "tests.rs" or f.name.endswith("_tests.rs") or "tests" in f.relative_to(src).parts[:-1]:
        continue
    text = f.read_text(errors="replace")
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    me = module_of(f)
    mine = me.split("::")
    # crate::a::b, and `use crate::{a::x, b}` groups
    for m in re.finditer(r"crate::(\{[^}]*\}|[A-Za-z_][\w:]*)", text):
        body = m.group(1)
        paths = re.findall(r"[A-Za-z_][\w:]*", body.strip("{}")) if body.startswith("{") else [body]
        for p in paths:
            comps = [c for c in p.split("::") if c]
            if not comps or not comps[0][0].islower():
                continue
            # a module path stops at the first item (an upper-case or fn-like name is unknown: keep modules only)
            mod = []
            for c in comps[:depth]:
                if not (src / pathlib.Path(*mod, c)).is_dir() and not (src / pathlib.Path(*mod, c + ".rs")).exists():
                    break
                mod.append(c)
            if not mod:
                continue
            target = "::".join(mod)
            if target != me and not me.startswith(target + "::") and not target.startswith(me + "::"):
                graph[me].add(target)

# Tarjan's strongly connected components
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in graph.get(v, ()):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1:
            sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in list(graph):
    if v not in index:
        strong(v)
for c in sccs:
    edges = [f"{a}->{b}" for a in c for b in sorted(graph[a]) if b in c]
    print("cycle:", " ".join(edges))
print(f"{len(sccs)} import cycle(s) among modules at depth {depth}")
sys.exit(1 if sccs else 0)
