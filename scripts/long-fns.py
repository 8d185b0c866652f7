#!/usr/bin/env python3
"""Lists the Rust functions over a line limit (default 80) in crates/*/src and src/.

A function counts from its `fn` line to its closing brace. One that reads better whole says why
in a comment starting `// long:` inside it (or on the lines just above its `fn`); it is then
listed as kept, with that reason, and does not fail the run.

    scripts/long-fns.py [--limit N] [--all] [paths...]

Exits 1 when a function over the limit gives no reason, so it can gate a run. `--all` also lists
the kept ones. Files under tests/ and benches/ are not looked at: this is about the code.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
REASON = re.compile(r"//\s*long:\s*(.*)")


def blank(src):
    """The source with comments and string or char literal contents turned to spaces, newlines
    kept, so braces and `fn` found in it are code."""
    out = []
    i, n = 0, len(src)

    def keep(s):
        out.append("".join(c if c == "\n" else " " for c in s))

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            keep(src[i:j])
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            keep(src[i:j])
            i = j
        elif re.match(r"b?r#*\"", src[i:i + 300]) and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r"b?r(#*)\"", src[i:])
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            keep(src[i:j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            keep(src[i:j + 1])
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 2)
                keep(src[i:j + 1])
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'":
                keep(src[i:i + 3])
                i += 3
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, last line) of each function with a body in the file."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    code = blank(src)
    line_at = [0] * (len(code) + 1)
    line = 1
    for k, ch in enumerate(code):
        line_at[k] = line
        if ch == "\n":
            line += 1
    line_at[len(code)] = line
    found = []
    for m in FN.finditer(code):
        depth, j = 0, m.end()
        while j < len(code):
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in ";{":
                break
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        braces, k = 0, j
        while k < len(code):
            if code[k] == "{":
                braces += 1
            elif code[k] == "}":
                braces -= 1
                if braces == 0:
                    break
            k += 1
        found.append((m.group(1), line_at[m.start()], line_at[k]))
    return src.split("\n"), found


def reason(lines, first, last):
    for text in lines[max(0, first - 4):last]:
        m = REASON.search(text)
        if m:
            return m.group(1).strip()
    return None


def rust_files(paths):
    for base in paths:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".rs"):
                    yield os.path.join(dirpath, name)


def main(argv):
    limit, show_all, paths = 80, False, []
    args = iter(argv)
    for a in args:
        if a == "--limit":
            limit = int(next(args))
        elif a == "--all":
            show_all = True
        else:
            paths.append(a)
    if not paths:
        crates = os.path.join(ROOT, "crates")
        paths = [os.path.join(crates, c, "src") for c in sorted(os.listdir(crates))]
        paths.append(os.path.join(ROOT, "src"))
    rows = []
    for path in rust_files(paths):
        lines, fns = functions(path)
        for name, first, last in fns:
            count = last - first + 1
            if count > limit:
                rows.append((count, os.path.relpath(path, ROOT), first, name, reason(lines, first, last)))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    bare = [r for r in rows if r[4] is None]
    for count, path, first, name, why in rows:
        if why is None:
            print(f"{count:4}  {path}:{first}  {name}")
        elif show_all:
            print(f"{count:4}  {path}:{first}  {name}  (kept: {why})")
    kept = len(rows) - len(bare)
    print(f"{len(bare)} over {limit} lines without a reason, {kept} kept with one", file=sys.stderr)
    return 1 if bare else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
