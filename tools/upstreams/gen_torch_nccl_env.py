"""Regenerate the per-release part of compat_matrix/catalogs/torch_nccl_env.json: which PyTorch releases read each
TORCH_NCCL_* (and TORCH_ENABLE_NCCL_*) variable, from the c10d headers every torch wheel ships.

A torch wheel carries its C++ headers (torch/include/torch/csrc/distributed/c10d/*.hpp), and c10d declares the
variables it reads there: `static std::vector<std::string> TORCH_NCCL_BLOCKING_WAIT = {"TORCH_NCCL_BLOCKING_WAIT",
"NCCL_BLOCKING_WAIT"};` (the first name is read, the others are deprecated aliases still read), and before torch
2.2 `constexpr const char* NCCL_BLOCKING_WAIT = "NCCL_BLOCKING_WAIT";`. The macOS arm64 wheel (60-90 MB, the
smallest that has the headers) is fetched with pip, one release at a time, and deleted after reading.

    python tools/upstreams/gen_torch_nccl_env.py                 # every release `pip index versions torch` lists
    python tools/upstreams/gen_torch_nccl_env.py 2.16.0          # read (again) these releases, keep the others

What each release declares is kept in $TORCH_NCCL_ENV_CACHE (default: torch_nccl_env_cache.json in the temp
directory), so a new release costs one wheel; the table is rebuilt from every release in the cache.

What the headers do not show: a name read only in a .cpp with a string literal (not declared in a header); those
rows stay hand-curated (first null). Rows are matched by name; hand-written fields (documented_in, extra sources)
are kept.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

PYPI = "https://pypi.org/simple"
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/torch_nccl_env.json"
HEADERS = "torch/include/torch/csrc/distributed/c10d/"
# newer releases are built for macOS 14 only
PLATFORMS = ("macosx_11_0_arm64", "macosx_14_0_arm64")
PYTHONS = ("3.11", "3.12", "3.13", "3.10", "3.9", "3.8")
# static std::vector<std::string> NAME = {"A", "B"};   (torch 2.2 on)
VECTOR = re.compile(r"std::vector<std::string>\s+\w+\s*=\s*\{([^}]*)\}")
# constexpr const char* NAME = "A";                     (before torch 2.2)
CHARP = re.compile(r"const\s+char\s*\*\s*\w+\s*=\s*\"([A-Z][A-Z0-9_]+)\"")
LITERAL = re.compile(r"\"([A-Z][A-Z0-9_]+)\"")
BINARY = re.compile(rb"(?<![A-Za-z0-9_])(TORCH_(?:NCCL|ENABLE_NCCL)_[A-Z0-9_]+)\x00")
TORCH_NAME = re.compile(r"^TORCH_(NCCL|ENABLE_NCCL)_[A-Z0-9_]+$")


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0]))


def releases() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "torch", "--index-url", PYPI],
        check=True, capture_output=True, text=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
    ).stdout  # fmt: skip
    line = next(ln for ln in out.splitlines() if ln.startswith("Available versions:"))
    return sorted({v.strip() for v in line.split(":", 1)[1].split(",") if "+" not in v}, key=_key)


def wheel(version: str, tmp: str) -> Path:
    for py in PYTHONS:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
             *[a for p in PLATFORMS for a in ("--platform", p)], "--python-version", py, "-d", tmp, f"torch=={version}"],
            capture_output=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": PYPI},
        )  # fmt: skip
        found = sorted(Path(tmp).glob(f"torch-{version}-*.whl"))
        if done.returncode == 0 and found:
            return found[0]
    raise SystemExit(f"no macOS arm64 wheel of torch {version} for Python {', '.join(PYTHONS)}")


def read_names(path: Path) -> dict[str, list[str]]:
    """{read name: [deprecated aliases]}: declared in c10d's headers (with their aliases), named by a string
    literal in a header, or a whole NUL-terminated string in the wheel's compiled libraries (c10d code built
    for macOS: the store, Gloo, the flight recorder; ProcessGroupNCCL itself is not built there)."""
    names: dict[str, list[str]] = {}
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            if member.startswith(HEADERS) and member.endswith((".hpp", ".h")):
                text = z.read(member).decode("utf-8", "replace")
                for m in VECTOR.finditer(text):
                    lits = LITERAL.findall(m.group(1))
                    if lits and TORCH_NAME.match(lits[0]):
                        names.setdefault(lits[0], [a for a in lits[1:] if a != lits[0]])
                for lit in [*CHARP.findall(text), *LITERAL.findall(text)]:
                    if TORCH_NAME.match(lit):
                        names.setdefault(lit, [])
            elif member.startswith("torch/lib/") and member.endswith((".dylib", ".so")):
                with z.open(member) as fh:
                    data = fh.read()
                for raw in set(BINARY.findall(data)):
                    names.setdefault(raw.decode(), [])
    return names


def rows_of(per_release: dict[str, dict[str, list[str]]], wheels: dict[str, str], doc: dict[str, Any]) -> None:
    """Set first / last / removed_in and the generated facts of every name any release reads; hand rows of names
    no release declares are kept as they are (first null)."""
    order = sorted(per_release, key=_key)
    newest = order[-1]
    rows = {r["name"]: r for r in doc["rows"]}
    for name in sorted({n for names in per_release.values() for n in names}):
        read_in = [v for v in order if name in per_release[v]]
        first, last = read_in[0], read_in[-1]
        gaps = [v for v in order if _key(first) <= _key(v) <= _key(last) and v not in read_in]
        aliases = sorted({a for v in read_in for a in per_release[v][name]})
        row = rows.setdefault(name, {"name": name, "renamed_from": None, "documented_in": None})
        row["renamed_from"] = row.get("renamed_from") or (aliases[0] if aliases else None)
        row["first"] = first
        row["last"] = None if last == newest else last
        row["removed_in"] = None if last == newest else order[order.index(last) + 1]
        # the last release whose declaration still lists each deprecated alias (torch reads it until then)
        alias_last = {a: [v for v in read_in if a in per_release[v][name]][-1] for a in aliases}
        row["generated"] = {
            "read_from": order[0],
            "read_up_to": newest,
            "deprecated_aliases": {
                a: {"last": None, "removed_in": None}
                if last_a == newest
                else {"last": last_a, "removed_in": order[order.index(last_a) + 1]}
                for a, last_a in alias_last.items()
            },
            "gaps": gaps,
        }
        kept = row.get("source") or []
        kept = [s for s in (kept if isinstance(kept, list) else [kept]) if not s.startswith("PyPI torch-")]
        row["source"] = [
            f"PyPI {wheels[first]}:{HEADERS} (first release that declares it)",
            *([f"PyPI {wheels[last]}:{HEADERS} (last release that declares it)"] if row["last"] else []),
            *kept,
        ]
        row["confidence"] = "verified"
        note = f"declared by c10d in every torch wheel {first}..{last}" + (f" except {', '.join(gaps)}" if gaps else "")
        note += f" (releases read: {order[0]}..{newest})"
        if aliases:
            note += f"; deprecated alias{'es' if len(aliases) > 1 else ''} still read: {', '.join(aliases)}"
        if row["removed_in"]:
            note += f"; declared by no release from {row['removed_in']} on"
        row["note"] = note + ". Generated by tools/upstreams/gen_torch_nccl_env.py."
    for row in rows.values():
        row.setdefault("last", None)
        row.setdefault("removed_in", None)
    doc["rows"] = sorted(rows.values(), key=lambda r: r["name"])


def main(argv: list[str]) -> None:
    cache_path = Path(os.environ.get("TORCH_NCCL_ENV_CACHE", Path(tempfile.gettempdir()) / "torch_nccl_env_cache.json"))
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    for v in argv or releases():
        if v not in cache or argv:  # releases named on the command line are read again
            with tempfile.TemporaryDirectory() as tmp:
                w = wheel(v, tmp)
                cache[v] = {"wheel": w.name, "names": read_names(w)}
            cache_path.write_text(json.dumps(cache))
        print(f"torch {v}: {len(cache[v]['names'])} names", file=sys.stderr)
    doc = json.loads(OUT.read_text())
    rows_of({v: c["names"] for v, c in cache.items()}, {v: c["wheel"] for v, c in cache.items()}, doc)
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
