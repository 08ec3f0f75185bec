#!/usr/bin/env python3
"""Import circles between the crate's modules, at the level of `src/x/y/z`, and arrows
that run back up a folder.

docs/ARCHITECTURE.md: arrows point down only. Every `crate::…` path and relative
`super::…` path (`super::{a, b}` groups included) in a non-test source file is an arrow
from its module to the module it names (its longest existing prefix, cut at DEPTH
parts); a strongly connected group of two or more modules is a circle. An arrow from a
module to one of its own ancestors (`media::video::inspect -> media`, from
`crate::media::MediaError` or `super::X` naming what a parent defines or re-exports)
runs back up: a folder's `mod.rs` serves the code outside the folder, and the code
inside imports from the file that defines what it uses (`scripts/fix-back-arrows.py`
rewrites such paths). Test modules (`tests.rs`, `*_tests.rs`, inline `mod tests`) may
reach sideways and are not counted. Exits 1 when a circle or an arrow back up exists.

    scripts/import-circles.py [DEPTH]   (default 3)
"""
import collections
import os
import re
import sys

ROOT = "src"
DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def module_of(path):
    parts = os.path.relpath(path, ROOT)[:-3].split("/")
    is_dir_module = parts[-1] == "mod"
    if is_dir_module:
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        parts = []
    return parts, is_dir_module


def is_test(path):
    name = os.path.basename(path)
    return name == "tests.rs" or name.endswith("_tests.rs") or "/tests/" in path


def node(parts):
    return "::".join(parts[:DEPTH]) or "crate"


sources = []
for d, _, files in os.walk(ROOT):
    sources += [os.path.join(d, f) for f in files if f.endswith(".rs")]
modules = {tuple(module_of(p)[0]) for p in sources}


def resolve(parts):
    for k in range(min(len(parts), DEPTH), 0, -1):
        if tuple(parts[:k]) in modules:
            return list(parts[:k])
    return []


graph = collections.defaultdict(set)
for path in sources:
    if is_test(path):
        continue
    module, _ = module_of(path)
    text = re.sub(r"//[^\n]*", "", open(path).read())
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests \{", text)[0]
    here = node(module)
    refs = [m.group(1).strip(":").split("::") for m in re.finditer(r"crate((?:::[A-Za-z_0-9]+)+)", text)]
    for m in re.finditer(r"crate((?:::[a-z_0-9]+)*)::\{([^}]*)\}", text):
        base = m.group(1).strip(":").split("::")
        refs += [base + [p.split("::")[0]] for p in re.split(r"[,\s]+", m.group(2)) if p]
    for m in re.finditer(r"(?<![A-Za-z_:])((?:super::)+)\{([^}]*)\}", text):
        base = module[: len(module) - m.group(1).count("super::")]
        refs += [base + p.split("::")[:1] for p in re.split(r"[,\s]+", m.group(2)) if p]
    for m in re.finditer(r"(?<![A-Za-z_:])((?:super::)+)([A-Za-z_0-9]+(?:::[A-Za-z_0-9]+)*)", text):
        ups = m.group(1).count("super::")
        refs.append(module[: len(module) - ups] + m.group(2).split("::"))
    for ref in refs:
        there = node(resolve([p for p in ref if p]))
        if there not in (here, "crate"):
            graph[here].add(there)

index, low, stack, on_stack, circles = {}, {}, [], set(), []
sys.setrecursionlimit(10000)


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph.get(v, ()):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        group = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            group.append(w)
            if w == v:
                break
        if len(group) > 1:
            circles.append(sorted(group))


for v in list(graph):
    if v not in index:
        visit(v)
for group in circles:
    print("circle:", " ".join(group))
    for a in group:
        print("   ", a, "->", ", ".join(sorted(b for b in graph[a] if b in group)))
ups = sorted((a, b) for a in graph for b in graph[a] if a.startswith(b + "::"))
for a, b in ups:
    print("back up:", a, "->", b)
print(f"{len(circles)} import circles among {len(graph)} modules (depth {DEPTH})")
print(f"{len(ups)} arrows back up a folder (depth {DEPTH})")
if ups:
    print("scripts/fix-back-arrows.py rewrites the paths it can; it lists the rest")
sys.exit(1 if circles or ups else 0)
