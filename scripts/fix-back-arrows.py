#!/usr/bin/env python3
"""Rewrites paths that run back up a folder to the module that defines what they name.

docs/ARCHITECTURE.md: arrows point down only, inside a folder too. A module's own
items are reached through the file that defines them (`crate::media::error::MediaError`),
never through an ancestor's re-export (`crate::media::MediaError`, `super::MediaError`):
a folder's `mod.rs` holds its `mod` lines, its docs and the `pub use` lines that serve
the code outside the folder, and nothing inside the folder imports it.

For every non-test source file (the rules of scripts/import-circles.py), each `use`
statement and each inline `crate::…`/`super::…` path that resolves to an ancestor
module is rewritten:

- a name an ancestor re-exports (or imports) becomes the path of the module that
  defines it, following `use` chains (`crate::media::MediaFormat` →
  `crate::format::MediaFormat`);
- a grouped `use` whose group is an ancestor (`use crate::media::{image::x, video::y}`)
  is split into groups that are not.

What cannot be rewritten, because the item is defined in the ancestor's own file (move
it into a file of its own first), or because a file imports an ancestor module itself
(`use crate::media;` then `media::X`), is listed and the script exits 1. Running it
again changes nothing (it is idempotent); run `cargo fmt --all` after it.

    scripts/fix-back-arrows.py           rewrite in place, list what is left
    scripts/fix-back-arrows.py --check   rewrite nothing; exit 1 if anything would change
"""
import os
import re
import sys

ROOT = "src"
CHECK = "--check" in sys.argv[1:]
TEST_TAIL = re.compile(r"#\[cfg\(test\)\]\s*mod tests \{")
IDENT = r"[A-Za-z_][A-Za-z_0-9]*"
ITEM = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|unsafe|const|extern\s+\"C\")\s+)*"
    r"(?:fn|struct|enum|trait|type|const|static|mod|union)\s+(" + IDENT + ")",
    re.M,
)
MACRO = re.compile(r"^macro_rules!\s+(" + IDENT + ")", re.M)
USE = re.compile(r"^([ \t]*)((?:pub(?:\([^)]*\))?\s+)?)use\s+([^;]*);", re.M)
INLINE = re.compile(r"(?<![A-Za-z_0-9:$])((?:crate|super)(?:::" + IDENT + ")+)")


def module_of(path):
    parts = os.path.relpath(path, ROOT)[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        parts = []
    return tuple(parts)


def is_test(path):
    name = os.path.basename(path)
    return name == "tests.rs" or name.endswith("_tests.rs") or "/tests/" in path


def split_tail(text):
    m = TEST_TAIL.search(text)
    return (text[: m.start()], text[m.start():]) if m else (text, "")


def parse_tree(src):
    """Leaves of a use tree: (segments, alias) with `self` leaves folded into their module."""
    toks = re.findall(r"::|[{},*]|" + IDENT, src)
    pos = 0

    def tree(prefix):
        nonlocal pos
        path = list(prefix)
        while True:
            t = toks[pos]
            if t == "{":
                pos += 1
                leaves = []
                while toks[pos] != "}":
                    leaves += tree(path)
                    if toks[pos] == ",":
                        pos += 1
                pos += 1
                return leaves
            if t == "*":
                pos += 1
                return [(path + ["*"], None)]
            path.append(t)
            pos += 1
            if pos < len(toks) and toks[pos] == "::":
                pos += 1
                continue
            alias = None
            if pos < len(toks) and toks[pos] == "as":
                alias = toks[pos + 1]
                pos += 2
            if path[-1] == "self" and len(path) > 1:
                path.pop()
            return [(path, alias)]

    leaves = tree([])
    return leaves


def group_prefixes(src):
    """The paths before each `{` of a use tree (the groups the import graph sees)."""
    out, stack, path = [], [], []
    for t in re.findall(r"::|[{},]|" + IDENT, src):
        if t == "{":
            out.append(list(path))
            stack.append(list(path))
        elif t == "}":
            path = stack.pop()
        elif t == ",":
            path = list(stack[-1]) if stack else []
        elif t != "::":
            path.append(t)
    return out


sources = sorted(
    os.path.join(d, f) for d, _, files in os.walk(ROOT) for f in files if f.endswith(".rs")
)
modules = {module_of(p): p for p in sources}
names, aliases = {}, {}
for path in sources:
    mod = module_of(path)
    body, _ = split_tail(open(path).read())
    names[mod] = set(ITEM.findall(body)) | set(MACRO.findall(body))
    aliases[mod] = {}
    for m in USE.finditer(body):
        if m.group(1):
            continue  # a use inside a function or block: not the module's name
        for leaf, alias in parse_tree(m.group(3)):
            if leaf[-1] != "*":
                aliases[mod][alias or leaf[-1]] = (leaf, mod)


def absolute(path, mod, seen=0):
    """`path` as written in module `mod`, from the crate root; None outside the crate."""
    first = path[0]
    if seen > 20:
        return None
    if first == "crate":
        return list(path[1:])
    if first == "super":
        n = 0
        while n < len(path) and path[n] == "super":
            n += 1
        return list(mod[: len(mod) - n]) + list(path[n:])
    if first == "self":
        return list(mod) + list(path[1:])
    if mod + (first,) in modules:
        return list(mod) + list(path)
    if first in aliases.get(mod, {}):
        leaf, where = aliases[mod][first]
        if leaf[0] == first and where == mod:
            return None  # `use image::X;`: the external crate of that name
        base = absolute(leaf, where, seen + 1)
        return None if base is None else base + list(path[1:])
    if first in names.get(mod, ()):
        return list(mod) + list(path)
    return None


def module_prefix(path):
    for k in range(len(path), -1, -1):
        if tuple(path[:k]) in modules:
            return k
    return 0


def canonical(path, seen=0):
    """The path of the module that defines what `path` names, following imports."""
    k = module_prefix(path)
    if k == len(path) or seen > 20:
        return path
    mod, name = tuple(path[:k]), path[k]
    if name in aliases.get(mod, {}) and name not in names[mod]:
        leaf, where = aliases[mod][name]
        base = absolute(leaf, where)
        if base is not None:
            return canonical(base + path[k + 1:], seen + 1)
    return path


def is_up(path, mod):
    """Whether `path` lands in an ancestor of `mod` (the import graph's arrow back up)."""
    there = tuple(path[: module_prefix(path)])
    return len(there) < len(mod) and mod[: len(there)] == there and there != ()


def rendered(path):
    return "::".join(["crate"] + list(path))


left = []


def rewrite_use(m, mod, where):
    indent, vis, src = m.group(1), m.group(2), m.group(3)
    if "/*" in src or "//" in src:
        return m.group(0)
    leaves = parse_tree(src)
    bad_group = any(
        (a := absolute(p, mod)) is not None and is_up(a, mod)
        for p in group_prefixes(src)
        if p
    )
    out, changed = [], bad_group
    for leaf, alias in leaves:
        a = absolute(leaf, mod) if leaf[-1] != "*" else None
        if a is not None and is_up(a, mod):
            c = canonical(a)
            if is_up(c, mod):
                left.append(f"{where}: `{'::'.join(leaf)}` is defined in ancestor {'::'.join(c[:module_prefix(c)]) or 'crate'}")
                text = leaf
            else:
                text = ["crate"] + list(c)
                changed = True
        else:
            text = leaf
        out.append((text, alias))
    if not changed:
        return m.group(0)
    groups = {}
    for text, alias in out:
        groups.setdefault(tuple(text[:-1]), []).append(text[-1] + (f" as {alias}" if alias else ""))
    lines = []
    for parent, items in groups.items():
        a = absolute(list(parent), mod) if parent else None
        parent_up = a is not None and is_up(a, mod)
        if len(items) == 1 or parent_up:
            lines += [f"{indent}{vis}use {'::'.join(parent + (item,))};" for item in items]
        else:
            lines.append(f"{indent}{vis}use {'::'.join(parent)}::{{{', '.join(items)}}};")
    return "\n".join(lines)


def rewrite_inline(text, mod, where):
    out, last = [], 0
    for m in INLINE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[line_start: m.start()]:
            continue
        path = m.group(1).split("::")
        a = absolute(path, mod)
        if a is None or not is_up(a, mod):
            continue
        c = canonical(a)
        if is_up(c, mod):
            k = module_prefix(a)
            if k == len(a):
                continue  # the ancestor module itself, as a prefix of a group: the use pass
            left.append(f"{where}: `{m.group(1)}` is defined in ancestor {'::'.join(c[:module_prefix(c)])}")
            continue
        out.append(text[last: m.start()])
        out.append(rendered(c))
        last = m.end()
    out.append(text[last:])
    return "".join(out)


SINGLE = re.compile(r"^([ \t]*)((?:pub(?:\([^)]*\))?\s+)?)use ((?:" + IDENT + "::)+)(" + IDENT + ");$")


def merge_singles(body, mod):
    """Joins adjacent one-name `use` lines of one module into a group (not an ancestor's)."""
    lines, out, i = body.split("\n"), [], 0
    while i < len(lines):
        run = []
        while i < len(lines) and SINGLE.match(lines[i]):
            run.append(SINGLE.match(lines[i]))
            i += 1
        if not run:
            out.append(lines[i])
            i += 1
            continue
        groups = {}
        for m in run:
            groups.setdefault((m.group(1), m.group(2), m.group(3)), []).append(m.group(4))
        for (indent, vis, parent), items in groups.items():
            a = absolute(parent[:-2].split("::"), mod)
            if len(items) == 1 or a is None or is_up(a, mod) or tuple(a) == mod:
                out += [f"{indent}{vis}use {parent}{item};" for item in items]
            else:
                out.append(f"{indent}{vis}use {parent}{{{', '.join(items)}}};")
    return "\n".join(out)


def mask_uses(body):
    """Splits `body` into (use statements, code between them) so inline paths skip uses."""
    parts, last = [], 0
    for m in USE.finditer(body):
        parts.append(("code", body[last: m.start()]))
        parts.append(("use", m))
        last = m.end()
    parts.append(("code", body[last:]))
    return parts


changed_files = []
for path in sources:
    if is_test(path):
        continue
    mod = module_of(path)
    original = open(path).read()
    body, tail = split_tail(original)
    new = []
    for kind, part in mask_uses(body):
        if kind == "use":
            line = body.count("\n", 0, part.start()) + 1
            new.append(rewrite_use(part, mod, f"{path}:{line}"))
        else:
            new.append(rewrite_inline(part, mod, path))
    rewritten = "".join(new)
    result = (merge_singles(rewritten, mod) if rewritten != body else body) + tail
    if result != original:
        changed_files.append(path)
        if not CHECK:
            open(path, "w").write(result)

for path in changed_files:
    print(("would rewrite " if CHECK else "rewrote ") + path)
for line in sorted(set(left)):
    print("left:", line)
print(f"{len(changed_files)} files {'to rewrite' if CHECK else 'rewritten'}, {len(set(left))} paths left")
sys.exit(1 if (CHECK and changed_files) or left else 0)
