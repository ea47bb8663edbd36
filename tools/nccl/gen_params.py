"""Generate compat_matrix/catalogs/nccl_params.json: every NCCL_* variable each NCCL release (2.4 on) reads.

Re-run after fetching a newer snapshot of github:NVIDIA/nccl (docs/knowledge-coverage.md says how):
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_params.py

The three ways NCCL reads a variable (see upstream-sources.md), all scanned in src/ and the in-tree plugins:
  1. NCCL_PARAM(Name, "SUFFIX", default)      -> NCCL_SUFFIX, a 64-bit integer read with strtoll(str, NULL, 0)
  2. getenv("NCCL_X") / ncclGetEnv("NCCL_X")  -> a string the caller parses
  3. DEFINE_NCCL_PARAM(name, type, NCCL_X, default, flags, parser, desc)  (typed registry, 2.30 on)
plus a literal "NCCL_X" handed to another reader (ncclGetLevel(.., "NCCL_P2P_LEVEL"), getNthreads("NCCL_..")).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import env_doc  # noqa: E402
import nccl_git  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nccl_params.json"
NAME = re.compile(r"^NCCL_[A-Z0-9_]+$")
PARAM = re.compile(r"\bNCCL_PARAM\(")
DEFINE = re.compile(r"\bDEFINE_NCCL_PARAM\(")
LITERAL = re.compile(r'"(NCCL_[A-Z0-9_]+)"')
# callers whose literal "NCCL_X" is not a read of X (printing it, setting it, comparing it)
NOT_READERS = {
    "setenv",
    "unsetenv",
    "INFO",
    "WARN",
    "TRACE",
    "printf",
    "snprintf",
    "sprintf",
    "fprintf",
    "strcmp",
    "strncmp",
    "strcasecmp",
    "define",
    "NCCL_PARAM",
    "DEFINE_NCCL_PARAM",
    "static_assert",
}
INT_HELPERS = {"getNthreads", "getPoolSizeFromEnv", "getRingSizeFromEnv", "ncclGetLevel"}


# Variables NCCL reads only on one link layer (source read by hand; the generator cannot derive it): on an
# InfiniBand port NCCL addresses by LID and picks the GID itself, so these RoCE knobs do nothing there.
_ROCE_SRC = "NVIDIA/nccl@v2.30.7-1:src/transport/net_ib/connect.cc:298-330 (ncclIbGetGidIndex returns for IB before reading them); NVIDIA/nccl@v2.18.3-1:src/transport/net_ib.cc:564-573 (GID only in the Ethernet branch)"
SCOPE = {
    n: ("Ethernet", "read for RoCE (Ethernet link layer) ports only; an InfiniBand port ignores it", _ROCE_SRC)
    for n in ("NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE")
}

# The unit of size parameters (source read by hand): NCCL sizes its per-connection buffers and chunks in bytes
# (src/init.cc computeBuffSizes: envs[] = {LL, LL128, Simple} buffer sizes, DEFAULT_BUFFSIZE (1 << 22) = 4 MiB).
_BYTES_SRC = "NVIDIA/nccl@v2.21.5-1:src/init.cc computeBuffSizes (comm->buffSizes[p] = envs[p] when set, in bytes)"
UNITS = {
    n: ("bytes", _BYTES_SRC)
    for n in (
        "NCCL_BUFFSIZE",
        "NCCL_LL_BUFFSIZE",
        "NCCL_LL128_BUFFSIZE",
        "NCCL_P2P_NET_CHUNKSIZE",
        "NCCL_P2P_NVL_CHUNKSIZE",
        "NCCL_P2P_PCI_CHUNKSIZE",
    )
}

# NCCL_* names that other programs read or set (never NCCL itself): not typos.
_TORCH = "pytorch/pytorch@v2.1.0:torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp (renamed to TORCH_NCCL_* in PR #114077, v2.2.0; the old names still read with a deprecation warning)"
_OTHER = [
    ("NCCL_ASYNC_ERROR_HANDLING", "PyTorch c10d (old name of TORCH_NCCL_ASYNC_ERROR_HANDLING)", _TORCH),
    ("NCCL_BLOCKING_WAIT", "PyTorch c10d (old name of TORCH_NCCL_BLOCKING_WAIT)", _TORCH),
    ("NCCL_DESYNC_DEBUG", "PyTorch c10d (old name of TORCH_NCCL_DESYNC_DEBUG)", _TORCH),
    ("NCCL_ENABLE_TIMING", "PyTorch c10d (old name of TORCH_NCCL_ENABLE_TIMING)", _TORCH),
    (
        "NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
        "PyTorch c10d (old name of TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK)",
        _TORCH,
    ),
    (
        "NCCL_VERSION",
        "set by the nvidia/cuda image Dockerfiles to the NCCL package version (ENV NCCL_VERSION 2.x.y-1); NCCL does not read it",
        "https://gitlab.com/nvidia/container-images/cuda (dist/*/runtime/Dockerfile)",
    ),
    (
        "NCCL_HOME",
        "build variable of nccl-tests (make NCCL_HOME=...) naming where NCCL is installed",
        "https://github.com/NVIDIA/nccl-tests#build",
    ),
    (
        "NCCL_ROOT",
        "build variable read by PyTorch's FindNCCL.cmake ($ENV{...})",
        "pytorch/pytorch@0197817a:cmake/Modules/FindNCCL.cmake",
    ),
    (
        "NCCL_ROOT_DIR",
        "build variable read by PyTorch's FindNCCL.cmake ($ENV{...})",
        "pytorch/pytorch@0197817a:cmake/Modules/FindNCCL.cmake",
    ),
    (
        "NCCL_INCLUDE_DIR",
        "build variable read by PyTorch's FindNCCL.cmake ($ENV{...})",
        "pytorch/pytorch@0197817a:cmake/Modules/FindNCCL.cmake",
    ),
    (
        "NCCL_LIB_DIR",
        "build variable read by PyTorch's FindNCCL.cmake ($ENV{...})",
        "pytorch/pytorch@0197817a:cmake/Modules/FindNCCL.cmake",
    ),
]
OTHER_READERS = [
    {
        "name": n,
        "type": "string",
        "form": "other program",
        "default": None,
        "default_int": None,
        "values": None,
        "values_history": None,
        "values_match": None,
        "unknown_value": None,
        "unit": None,
        "range_min": None,
        "range_max": None,
        "first": None,
        "last": None,
        "removed_in": None,
        "absent_in": None,
        "default_history": None,
        "form_history": None,
        "link_layer": None,
        "reader": who,
        "site": None,
        "source": src,
        "confidence": "reported",
        "note": "not an NCCL parameter: no NCCL release reads it, so first/last/site are null; listed so the Env lint does not call it a typo",
    }
    for n, who, src in _OTHER
]


def _args(text: str, start: int) -> tuple[list[str], int]:
    """Top-level comma-separated arguments of the call whose '(' is at text[start]; and the end offset."""
    depth, i, cur, args, in_str = 0, start, [], [], False
    while i < len(text):
        c = text[i]
        if in_str:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c == "(":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return args, i


def _caller(text: str, pos: int) -> str | None:
    """Name of the function whose argument list holds offset pos (None at top level)."""
    depth = 0
    i = pos - 1
    while i >= 0 and pos - i < 400:
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_][A-Za-z0-9_:]*)\s*$", text[max(0, i - 80) : i])
                return m.group(1).split("::")[-1] if m else None
            depth -= 1
        elif c in ";{}" and depth == 0:
            return None
        i -= 1
    return None


def _in_comment(text: str, pos: int) -> bool:
    line_start = text.rfind("\n", 0, pos) + 1
    return "//" in text[line_start:pos] or text[line_start:pos].lstrip().startswith("*")


def _default_int(expr: str) -> int | None:
    e = expr.strip().strip("()").replace("LL", "").replace("UL", "").replace("U", "").replace("L", "")
    m = re.fullmatch(r"\s*(-?\s*(?:0x[0-9a-fA-F]+|\d+))\s*(?:<<\s*(\d+))?\s*", e)
    if not m:
        return None
    base = int(m.group(1).replace(" ", ""), 0)
    return base << int(m.group(2)) if m.group(2) else base


def _compared_words(text: str, pos: int) -> tuple[list[str], str] | None:
    """The words a string setting is compared with (strcasecmp/strcmp(var, "WORD")) in the 60 lines after it is
    read, and how: NCCL_DEBUG's levels (any case), NCCL_SOCKET_FAMILY's AF_INET/AF_INET6 (exact). None when the
    value is not compared that way."""
    line = text[text.rfind("\n", 0, pos) + 1 : text.find("\n", pos)]
    m = re.search(r"(\w+)\s*=\s*\w+\(\s*\"NCCL_", line)
    if not m:
        return None
    after = "\n".join(text[pos:].split("\n")[:60])
    found = re.findall(r"\b(strcasecmp|strcmp)\(\s*" + re.escape(m.group(1)) + r'\s*,\s*"([^"]+)"', after)
    if not found:
        return None
    mode = "case-sensitive" if all(f == "strcmp" for f, _ in found) else "ignore-case"
    return sorted({w for _, w in found}), mode


# Named values: the words a string setting's reader accepts at each release, read from the arrays it compares with.
_ARRAY = r"\b{name}\[[^\]]*\]\s*=\s*\{{([^}}]*)\}}"
_LEVEL_CALL = re.compile(r'ncclGetLevel\([^,()]+,\s*(?:"NCCL_[A-Z0-9_]+"|NULL)\s*,\s*"(NCCL_[A-Z0-9_]+)"\s*\)')


def _array(files: dict[str, str], name: str) -> list[str] | None:
    for text in files.values():
        m = re.search(_ARRAY.format(name=name), text)
        if m:
            return re.findall(r'"([^"]*)"', m.group(1))
    return None


def named_values(files: dict[str, str]) -> dict[str, dict]:
    """{variable: {values, match, unknown, site}} for the readers that compare a value with a word array:
    ncclGetLevel (path types up to PATH_SYS, or an old-style number; any other word leaves the level unset) and
    NCCL_ALGO / NCCL_PROTO (parseList over ncclAlgoStr / ncclProtoStr; an unknown word is ignored by the old
    parseList and fails init with ncclInvalidUsage where the source warns 'Unrecognized element token')."""
    out: dict[str, dict] = {}
    paths = _array(files, "topoPathTypeStr")
    sys_at = next(
        (int(m.group(1)) for t in files.values() for m in [re.search(r"#define PATH_SYS (\d+)", t)] if m), None
    )
    level_fn = next((t for t in files.values() if "ncclGetLevel(int* level" in t), "")
    if paths and sys_at is not None and level_fn:
        cmp = "ignore-case" if re.search(r"strcasecmp\(\s*str\s*,\s*topoPathTypeStr", level_fn) else "case-sensitive"
        # ncclGetLevel(&level, disableEnv, levelEnv): the words are levelEnv's (disableEnv is an integer)
        level_vars = {m for t in files.values() for m in _LEVEL_CALL.findall(t)}
        for var in level_vars:
            out[var] = {
                "values": paths[: sys_at + 1],
                "match": cmp,
                "unknown": "ignored: the level stays NCCL's own choice (a leading digit is read as an old-style level)",
            }
    tuning = "\n".join(t for p, t in files.items() if p.endswith(("tuning.cc", "enqueue.cc")))
    fails = "Unrecognized element token" in tuning
    for var, array in (("NCCL_ALGO", "ncclAlgoStr"), ("NCCL_PROTO", "ncclProtoStr")):
        words = _array(files, array)
        if words:
            out[var] = {
                "values": words,
                "match": "ignore-case",
                "unknown": "ncclInvalidUsage: WARN Unrecognized element token"
                if fails
                else "ignored: the word enables nothing",
            }
    return out


def scan(tag: str) -> dict[str, dict]:
    found: dict[str, dict] = {}

    def add(name: str, path: str, text: str, pos: int, **info) -> None:
        if not NAME.match(name) or _in_comment(text, pos):
            return
        line = text.count("\n", 0, pos) + 1
        entry = dict(info, site=f"{path}:{line}", core=path.startswith("src/"))
        old = found.get(name)
        # a typed declaration wins over a bare read of the same name; core source over the example plugins
        rank = {"NCCL_PARAM": 3, "DEFINE_NCCL_PARAM": 3, "getenv": 2}.get(info["form"], 1) + (
            10 if entry["core"] else 0
        )
        if old is None or rank > old["_rank"]:
            found[name] = dict(entry, _rank=rank)

    nccl_git_files = nccl_git.files_text(tag)
    for path, text in nccl_git_files.items():
        if path.endswith(("param.h",)) and "define NCCL_PARAM" in text:
            pass  # the macro's own body is not a declaration; its uses are found below
        for m in PARAM.finditer(text):
            if text[max(0, m.start() - 8) : m.start()].endswith("define "):
                continue
            args, _ = _args(text, m.end() - 1)
            if len(args) < 3 or not re.fullmatch(r'"[A-Z0-9_]+"', args[1]):
                continue
            add(
                "NCCL_" + args[1].strip('"'),
                path,
                text,
                m.start(),
                form="NCCL_PARAM",
                type="int64",
                default=",".join(args[2:]).strip(),
            )
        for m in DEFINE.finditer(text):
            if text[max(0, m.start() - 8) : m.start()].endswith("define "):
                continue
            args, _ = _args(text, m.end() - 1)
            if len(args) < 7:
                continue
            values = re.findall(r'makeOption\(\s*"([^"]+)"', args[5])
            add(
                args[2],
                path,
                text,
                m.start(),
                form="DEFINE_NCCL_PARAM",
                type=args[1],
                default=args[3],
                values=values or None,
            )
        for m in LITERAL.finditer(text):
            fn = _caller(text, m.start())
            if fn is None or fn in NOT_READERS:
                continue
            if fn in ("getenv", "ncclGetEnv", "secure_getenv", "getEnvFunc"):
                compared = _compared_words(text, m.start())
                words, mode = compared if compared else (None, None)
                extra = {}
                if words and mode == "case-sensitive" and len(words) >= 2:
                    # an exact if / else-if chain of words (NCCL_SOCKET_FAMILY, NCCL_IB_ADDR_FAMILY): any other
                    # value matches none and leaves NCCL's default
                    extra = {"match": mode, "unknown": "ignored: NCCL keeps its default"}
                add(
                    m.group(1),
                    path,
                    text,
                    m.start(),
                    form="getenv",
                    type="string",
                    default=None,
                    values=words,
                    **extra,
                )
            else:
                typ = "int" if fn in INT_HELPERS else "string"
                add(m.group(1), path, text, m.start(), form=f"helper {fn}()", type=typ, default=None)
    named = named_values(nccl_git_files)
    for name, v in found.items():
        v.pop("_rank")
        words = named.get(name)
        if words:
            v.update(values=words["values"], match=words["match"], unknown=words["unknown"])
        elif v.get("match") and v.get("values"):
            v["values"] = list(v["values"])
    return found


def _history(present: list[tuple[str, str, dict]], fn: Callable[[dict], str | None]) -> list[str] | None:
    """'version: value' at each release where fn(info) changes; None when no release has one."""
    out: list[tuple[str, str | None]] = []
    for _, v, inf in present:
        got = fn(inf)
        if not out or out[-1][1] != got:
            out.append((v, got))
    return (
        [f"{v}: {g if g is not None else '(not compared with a word list)'}" for v, g in out]
        if any(g for _, g in out)
        else None
    )


def with_doc(row: dict) -> dict:
    """The row with what NVIDIA's environment variable page says of it (tools/nccl/env_doc.py): its section
    (system configuration, debugging) or 'undocumented' when the page does not list a name NCCL reads."""
    section, since, note = env_doc.DOCUMENTED.get(row["name"], ("undocumented", None, None))
    row = dict(row, doc=section, doc_since=since, doc_note=note)
    row["source"] = [*row["source"], env_doc.SOURCE]
    return row


def build() -> dict:
    tags = nccl_git.release_tags()
    per: list[tuple[str, str, dict[str, dict]]] = []
    for tag, version in tags:
        print(f"scanning {tag}", file=sys.stderr)
        per.append((tag, version, scan(tag)))
    names = sorted({n for _, _, f in per for n in f})
    rows = []
    for name in names:
        present = [(tag, v, f[name]) for tag, v, f in per if name in f]
        first_tag, first, _ = present[0]
        last_tag, last, info = present[-1]
        versions = [v for _, v, _ in per]
        i0, i1 = versions.index(first), versions.index(last)
        gaps = [v for _, v, f in per[i0 : i1 + 1] if name not in f]
        defaults: list[tuple[str, str | None]] = []
        forms: list[tuple[str, str]] = []
        for _, v, inf in present:
            d = inf.get("default")
            if not defaults or defaults[-1][1] != d:
                defaults.append((v, d))
            if not forms or forms[-1][1] != inf["form"]:
                forms.append((v, inf["form"]))
        removed_in = versions[i1 + 1] if i1 + 1 < len(versions) else None
        values = sorted({w.upper() for _, _, inf in present for w in (inf.get("values") or [])}) or None
        values_history = _history(present, lambda inf: ",".join(inf["values"]) if inf.get("match") else None)
        unknown_history = _history(present, lambda inf: inf.get("unknown"))
        row = {
            "name": name,
            "type": info["type"],
            "form": info["form"],
            "default": info.get("default"),
            "default_int": _default_int(info["default"]) if info.get("default") and info["type"] == "int64" else None,
            "values": values,
            "range_min": None,
            "range_max": None,
            "first": first,
            "last": last,
            "removed_in": removed_in,
            "absent_in": gaps or None,
            "default_history": [f"{v}: {d}" for v, d in defaults] if len(defaults) > 1 else None,
            "form_history": [f"{v}: {f}" for v, f in forms] if len(forms) > 1 else None,
            "values_history": values_history,
            "values_match": info.get("match"),
            "unknown_value": unknown_history,
            "unit": UNITS.get(name, (None,))[0],
            "link_layer": SCOPE.get(name, (None,))[0],
            "reader": "libnccl" if info["core"] else "example plugin in the NCCL tree",
            "site": info["site"],
            "source": [f"NVIDIA/nccl@{last_tag}:{info['site']}"]
            + ([SCOPE[name][2]] if name in SCOPE else [])
            + ([UNITS[name][1]] if name in UNITS else []),
            "confidence": "verified",
        }
        notes = []
        if row["default"] is None:
            notes.append("no default in the declaration: the reader treats unset as its own default")
        elif row["default_int"] is None and info["type"] == "int64":
            notes.append("default is a source expression (a macro or computed), kept as written")
        if info["type"] == "int64":
            notes.append("range: the declaration does not bound the value (NCCL_PARAM takes any strtoll result)")
        if name in SCOPE:
            notes.append(SCOPE[name][1])
        if not info["core"]:
            notes.append("read by an example plugin shipped in the NCCL tree, not by libnccl itself")
        if removed_in is None:
            notes.append(f"removed_in: null, still read by the newest release scanned ({tags[-1][1]})")
        if first_tag == tags[0][0]:
            notes.append(f"first: present at the oldest release scanned ({first}); may be older")
        row["note"] = "; ".join(notes)
        rows.append(with_doc(row))
    rows += [dict(r, doc=None, doc_since=None, doc_note=None) for r in OTHER_READERS]
    return {
        "table": "nccl_params",
        "description": (
            "Every NCCL_* environment variable each NCCL release reads, generated by tools/nccl/gen_params.py from "
            f"the release tags of github:NVIDIA/nccl ({tags[0][1]} .. {tags[-1][1]}, {len(tags)} releases): name, "
            "type (int64 = NCCL_PARAM, read with strtoll(str, NULL, 0)), default as written, first and last release "
            "that reads it, the release that no longer does (removed_in), the site at the last release. "
            "range_min/range_max stay null where the declaration does not bound the value. doc: the section of "
            "NVIDIA's environment variable page that lists the name (system configuration, debugging), or "
            "undocumented for a name NCCL reads that the page does not list (tools/nccl/env_doc.py)."
        ),
        "releases": [v for _, v in tags],
        "rows": rows,
    }


def main() -> None:
    data = build()
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['rows'])} variables over {len(data['releases'])} releases -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
