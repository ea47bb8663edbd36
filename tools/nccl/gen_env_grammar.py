"""Generate compat_matrix/catalogs/nccl_env_grammar.json: the grammar each NCCL release reads NCCL_ALGO and
NCCL_PROTO with, from parseList in every release tag (src/graph/tuning.cc).

Re-run after fetching a newer snapshot of github:NVIDIA/nccl (docs/knowledge-coverage.md says how):
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_env_grammar.py

What is read, per tag:
  - parseList's signature: with a prefix-name array (`prefixElems`) the release reads 'func:list;func:list'
    entries (per-collective selection); without it the whole value is one comma list;
  - what it does with a name it does not know: `WARN("Unrecognized element token ...")` plus ncclInvalidUsage, or
    nothing (the word is skipped: it enables or excludes nothing);
  - whether an unknown collective prefix and a prefix-less entry after the first fail (their WARN lines);
  - the collective names the prefixes are compared with (the ncclFuncStr initialiser, any case: strcasecmp);
  - what the tuning step does when the value leaves no algorithm (protocol) enabled: re-enable Ring and Tree when
    the communicator has no CollNet support ("If user has hard set NCCL_ALGO=COLLNET, ignore it"), and make Ring
    available for every protocol of a collective that has nothing left ("at least set ring algo available");
    with neither, the first collective fails with "no algorithm/protocol available" (src/enqueue.cc).
Consecutive releases that read the same grammar are one row; its source names the first tag's file and lines.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nccl_git  # noqa: E402

TUNING = "src/graph/tuning.cc"
PARSE = re.compile(r"^(?:static\s+)?ncclResult_t\s+parseList\(([^)]*)\)", re.M)
FUNC_STR = re.compile(r"ncclFuncStr\[NCCL_NUM_FUNCTIONS\]\s*=\s*\{([^}]*)\}")
INVALID = "ncclInvalidUsage"
FALLBACKS = (
    ("If user has hard set NCCL_ALGO=COLLNET", "Ring and Tree re-enabled without CollNet"),
    ("at least set ring algo available", "Ring made available"),
)


def _lines(text: str, start: int) -> tuple[int, int]:
    """First and last line (1-based) of the function whose signature starts at `start`."""
    depth, i = 0, text.index("{", start)
    while True:
        depth += text[i] == "{"
        depth -= text[i] == "}"
        if depth == 0:
            break
        i += 1
    return text.count("\n", 0, start) + 1, text.count("\n", 0, i) + 1


def _functions(tag: str) -> tuple[list[str], str] | None:
    """The ncclFuncStr names at this tag and where they are initialised."""
    out = nccl_git.git("grep", "-n", "-E", r"ncclFuncStr\[NCCL_NUM_FUNCTIONS\]\s*=", tag, "--", "src")
    for line in out.splitlines():
        _, path, lineno, rest = line.split(":", 3)
        m = FUNC_STR.search(rest)
        if m:
            return re.findall(r'"([^"]+)"', m.group(1)), f"NVIDIA/nccl@{tag}:{path}:{lineno}"
    return None


def read_tag(tag: str) -> dict | None:
    try:
        text = nccl_git.show(tag, TUNING)
    except Exception:  # noqa: BLE001 - the file does not exist at this tag
        return None
    m = PARSE.search(text)
    if m is None:
        return None
    first, last = _lines(text, m.start())
    body = "\n".join(text.splitlines()[first - 1 : last])
    per_collective = int("prefixElems" in m.group(1))
    fails = INVALID in body
    got = {
        "per_collective": per_collective,
        "unknown_element": INVALID if fails and "Unrecognized element token" in body else "ignored",
        "unknown_prefix": INVALID if "Unrecognized prefix token" in body else None,
        "prefix_after_first": int("All entries except the first must have a prefix" in body),
        "functions": None,
        "all_off_ring_tree": int(FALLBACKS[0][0] in text),
        "all_off_ring": int(FALLBACKS[1][0] in text),
    }
    where = [f"NVIDIA/nccl@{tag}:{TUNING}:{first}-{last} (parseList)"]
    for marker, what in FALLBACKS:
        if marker in text:
            where.append(f"NVIDIA/nccl@{tag}:{TUNING}:{text.count(chr(10), 0, text.index(marker)) + 1} ({what})")
    if per_collective:
        funcs = _functions(tag)
        if funcs is not None:
            got["functions"], site = funcs
            where.append(f"{site} (ncclFuncStr)")
    return {**got, "_where": where}


def main() -> int:
    rows, tags = nccl_git.release_runs(read_tag, "parseList not found (NCCL_ALGO / NCCL_PROTO not read with it)")
    for i, row in enumerate(rows):
        row["id"] = f"{row['first']}..{row['last']}"
        row["settings"] = ["NCCL_ALGO", "NCCL_PROTO"]
        row["note"] = (
            "per_collective 1: ';' separates entries, 'func:list' limits an entry to one collective (names any "
            "case), '^' starts an excluding list; 0: the value is one comma list, so a 'func:list' or ';' form is "
            "a word NCCL does not know"
        )
        rows[i] = {k: row[k] for k in ("id", *[k for k in row if k != "id"])}
    doc = {
        "table": "nccl_env_grammar",
        "description": "The grammar each NCCL release reads NCCL_ALGO and NCCL_PROTO with (parseList in "
        "src/graph/tuning.cc), generated by tools/nccl/gen_env_grammar.py from every release tag of "
        "github:NVIDIA/nccl.",
        "coverage": {"releases_read": len(tags), "rows": len(rows)},
        "rows": rows,
    }
    return nccl_git.print_catalog(doc)


if __name__ == "__main__":
    sys.exit(main())
