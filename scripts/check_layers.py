#!/usr/bin/env python3
"""The layering rule of docs/design.md, checked on every #include.

Each top-level folder may include headers of the folders it is allowed to
depend on (LAYERS below: arrows point down the data flow), and its own. No
folder includes another folder's detail/ headers. cli/ includes no worker/
header: it parses arguments and prints, and reaches GPU work through bench/
and harness/. Tests mirror the source tree and drive the program from
outside: tests/<folder>/ may include any folder's public headers, and
<folder>'s own detail/ headers, never another folder's.

Exit 0 when clean, 1 with one line per violation. `--root DIR` checks another
tree. `--self-test` first plants an upward include and a cross-folder detail/
include in a copy of core/ and tile/ and fails unless both are caught, so a
broken checker cannot pass CI silently.
"""
import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

# folder -> the folders its sources may include (besides itself)
LAYERS = {
    "core": [],
    "confine": ["core"],
    "tile": ["core"],
    "worker": ["core", "confine"],
    "harness": ["core", "confine"],  # the worker only as a process (and child_roles.cpp, below)
    "agent": ["core", "tile"],
    "search": ["core", "tile", "agent", "harness"],
    "env": ["core", "tile", "agent", "harness"],
    "serve": ["core", "tile", "harness", "env"],
    "bench": ["core", "tile", "worker", "harness", "agent", "search"],
    "python": ["core", "tile", "harness", "agent", "env", "serve"],
    "cli": ["core", "confine", "tile", "harness", "agent", "search", "env", "serve", "bench"],
}
# Files allowed one named exception, each with its reason.
EXCEPTIONS = {
    # The hidden subcommands by which the harness's child processes enter the
    # binary: the harness starts the worker, so it names its entry point.
    ("harness/child_roles.cpp", "worker"): "the worker's entry point",
}
SOURCE_EXT = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def folder_of(rel: Path) -> str:
    return rel.parts[0]


def check_file(root: Path, path: Path) -> list:
    rel = path.relative_to(root)
    in_tests = rel.parts[0] == "tests"
    if in_tests:
        if len(rel.parts) < 3 or rel.parts[1] not in LAYERS:
            return []  # tests/testing.*, tests/fuzz, tests/faults...: whole-program tests
        owner = rel.parts[1]
    else:
        owner = folder_of(rel)
        if owner not in LAYERS:
            return []
    errors = []
    text = path.read_text(errors="replace")
    for lineno, m in ((text.count("\n", 0, m.start()) + 1, m) for m in INCLUDE.finditer(text)):
        inc = m.group(1)
        parts = inc.split("/")
        if len(parts) < 2 or parts[0] not in LAYERS:
            continue  # a system header, a test helper or a file beside the includer
        target = parts[0]
        where = f"{rel}:{lineno}: includes {inc}"
        if target != owner and "detail" in parts[1:-1]:
            errors.append(f"{where}: another folder's detail/ header")
            continue
        if target == owner:
            continue
        if in_tests:
            continue
        if target not in LAYERS[owner] and (str(rel), target) not in EXCEPTIONS:
            errors.append(f"{where}: {owner}/ may include only {', '.join(LAYERS[owner]) or 'itself'}")
    return errors


def check_tree(root: Path) -> list:
    errors = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix in SOURCE_EXT and path.is_file() and not any(p.startswith((".", "build")) for p in rel.parts):
            errors += check_file(root, path)
    return errors


def self_test(root: Path) -> bool:
    """Plants two violations in a copy of core/ and tile/; both must be caught."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        for folder in ("core", "tile"):
            shutil.copytree(root / folder, copy / folder)
        with open(copy / "core" / "task.hpp", "a") as f:
            f.write('\n#include "tile/config.hpp"\n')  # upward: core may include nothing
        (copy / "core" / "planted.cpp").write_text('#include "tile/detail/emit.hpp"\n')  # another folder's detail/
        found = check_tree(copy)
    caught = sum("core/task.hpp" in e for e in found) == 1 and sum("core/planted.cpp" in e for e in found) == 1
    print(f"check_layers self-test: {'caught both planted includes' if caught else 'MISSED: ' + repr(found)}",
          file=sys.stderr)
    return caught and len(found) == 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--self-test", action="store_true", help="first check that planted violations are caught")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    if args.self_test and not self_test(root):
        return 1
    errors = check_tree(root)
    for e in errors:
        print(e)
    print(f"check_layers: {len(errors)} violation(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
