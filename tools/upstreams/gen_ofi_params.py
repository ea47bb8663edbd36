"""Generate compat_matrix/catalogs/ofi_params.json: the FI_* variables each libfabric release defines and the
OFI_NCCL_* variables each aws-ofi-nccl release reads.

Re-run after fetching newer snapshots of github:ofiwg/libfabric and github:aws/aws-ofi-nccl:
    LIBFABRIC_MIRROR=/work/.mirror/ofiwg+libfabric/repo OFI_NCCL_MIRROR=/work/.mirror/aws+aws-ofi-nccl/repo \
        python tools/upstreams/gen_ofi_params.py

libfabric (src/var.c fi_param_define): fi_param_define(&prov, "name", FI_PARAM_TYPE, "help") makes FI_<PROV>_<NAME>
(upper-cased), where PROV is the provider struct's `.name` ("efa", OFI_UTIL_PREFIX "rxm" -> "ofi_rxm"); a NULL or
&core_prov provider makes FI_<NAME>; a raw getenv("FI_...") is read as written. Test programs (fabtests/, prov/*/test/) are not read.
aws-ofi-nccl (include/nccl_ofi_param.h): OFI_NCCL_PARAM_INT/_UINT/_STR(name, "SUFFIX", default) up to 1.13,
OFI_NCCL_PARAM(type, name, "SUFFIX", default) from 1.14, OFI_NCCL_PARAM_DEPRECATED/_REMOVED(..., msg): OFI_NCCL_<SUFFIX>.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, balanced, c_string, null_note, split_args, strip_comments, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/ofi_params.json"
FI_DEFINE = re.compile(r"\bfi_param_define\s*\(")
PROV_STRUCT = re.compile(r"struct\s+fi_provider\s+(\w+)\s*=\s*\{")
STR_DEFINE = re.compile(r'#\s*define\s+(\w+)\s+((?:"[^"\n]*"\s*)+)\s*$', re.M)
CHAR_ARRAY = re.compile(r'char\s+(\w+)\s*\[[^\]]*\]\s*=\s*"([^"]*)"')
WRAPPER = re.compile(r'\b(\w+_param_define|\w+_define_param|\w+_get_param_\w+)\s*\(\s*"(\w+)"')
OFI_PARAM = re.compile(r"\bOFI_NCCL_PARAM(_INT|_UINT|_STR|_DEPRECATED|_REMOVED)?\s*\(")


def _expr(expr: str, defines: dict[str, str]) -> str | None:
    parts = []
    for tok in re.findall(r'"(?:\\.|[^"\\])*"|\w+', expr):
        if tok.startswith('"'):
            parts.append(tok[1:-1])
        elif tok in defines:
            parts.append(defines[tok])
        else:
            return None
    return "".join(parts) if parts else None


def libfabric(m: Mirror, tag: str) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    paths = [
        p
        for p in m.files_with(tag, "fi_param_define", ["src", "prov", "include"])
        if p.endswith((".c", ".h")) and "/test/" not in p
    ]
    prov_paths = [
        p
        for needle in ("fi_provider", "PROV_NAME")
        for p in m.files_with(tag, needle, ["prov", "src", "include"])
        if p.endswith((".c", ".h"))
    ]
    files = {p: strip_comments(s) for p, s in m.show_many(tag, sorted(set(paths) | set(prov_paths))).items()}
    defines: dict[str, str] = {}
    for src in files.values():
        for name, lit in STR_DEFINE.findall(src):
            defines[name] = "".join(re.findall(r'"([^"]*)"', lit))
        # a provider named by a char array: static char xnet_prov_name[OFI_NAME_MAX] = "tcp";
        defines.update(dict(CHAR_ARRAY.findall(src)))
    provs: dict[str, str] = {"core_prov": ""}
    for src in files.values():
        for mm in PROV_STRUCT.finditer(src):
            body = src[mm.end() - 1 : balanced(src, mm.end() - 1)]
            nm = re.search(r"\.name\s*=\s*([^,\n]+)", body)
            val = _expr(nm.group(1), defines) if nm else None
            if val:
                provs[mm.group(1)] = val
    out: dict[str, dict[str, Any]] = {}
    stats: dict[str, Any] = {"sites": 0, "unresolved": 0, "unresolved_dirs": []}
    for path in paths:
        src = files.get(path, "")
        for mm in FI_DEFINE.finditer(src):
            if re.search(r"define\s+\w*\s*$", src[: mm.start()].splitlines()[-1] if src[: mm.start()] else ""):
                continue
            args = split_args(src[mm.end() : balanced(src, mm.end() - 1, "(", ")") - 1])
            if len(args) < 3 or "..." in args[0]:
                continue
            stats["sites"] += 1
            pv = args[0].strip().lstrip("&").strip()
            name = c_string(args[1])
            prov = "" if pv in ("NULL", "0") else provs.get(pv)
            if prov is None and pv.endswith("_prov") and path.startswith("prov/"):
                prov = None
            if prov is not None and name is None:
                # a provider's own wrapper passes the name through (verbs: vrb_param_define("tx_size", ...))
                wrapped = WRAPPER.findall(src)
                for _w, n in wrapped:
                    out.setdefault(
                        ("FI_" + (prov + "_" if prov else "") + n).upper(),
                        {"type": None, "default": None, "site": path},
                    )
                if wrapped:
                    continue
            if prov is None or name is None:
                stats["unresolved"] += 1
                stats["unresolved_dirs"] = sorted({*stats["unresolved_dirs"], _dir(path)})
                continue
            env = ("FI_" + (prov + "_" if prov else "") + name).upper()
            t = re.match(r"FI_PARAM_(\w+)", args[2].strip())
            out.setdefault(env, {"type": t.group(1).lower() if t else None, "default": None, "site": path})
    # variables read with a raw getenv("FI_...") instead of being registered (FI_EFA_USE_HW_CNTR in efa_env.c)
    try:
        raw = m.git("grep", "-n", "-o", "-E", r'getenv\("FI_[A-Z0-9_]+"', tag, "--", "src", "prov", "include")
    except Exception:  # git grep exits 1 when nothing matches
        raw = ""
    for line in raw.splitlines():
        _tag, path, _ln, hit = line.split(":", 3)
        if "/test/" in path or path.startswith("fabtests/"):
            continue
        stats["sites"] += 1
        out.setdefault(hit[len('getenv("') : -1], {"type": "getenv", "default": None, "site": path})
    return out, stats


def ofi_nccl(m: Mirror, tag: str) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    paths = [
        p for p in m.files_with(tag, "OFI_NCCL_PARAM", ["include", "src"]) if p.endswith((".h", ".c", ".cpp", ".hpp"))
    ]
    files = {p: strip_comments(s) for p, s in m.show_many(tag, paths).items()}
    out: dict[str, dict[str, Any]] = {}
    stats = {"sites": 0, "unresolved": 0}
    for path, src in files.items():
        for mm in OFI_PARAM.finditer(src):
            line = src[src.rfind("\n", 0, mm.start()) + 1 : mm.start()]
            if "define" in line:
                continue
            args = split_args(src[mm.end() : balanced(src, mm.end() - 1, "(", ")") - 1])
            kind = mm.group(1) or ""
            if kind in ("_INT", "_UINT", "_STR"):
                typ, suffix, default, msg = kind[1:].lower(), args[1] if len(args) > 1 else "", args[2:3], None
            else:
                if len(args) < 4:
                    continue
                typ, suffix, default = args[0], args[2], args[3:4]
                msg = c_string(args[4]) if len(args) > 4 else None
            name = c_string(suffix)
            stats["sites"] += 1
            if name is None:
                stats["unresolved"] += 1
                continue
            d = default[0].strip() if default else None
            out["OFI_NCCL_" + name] = {
                "type": typ,
                "default": c_string(d) if d and d.startswith('"') else d,
                "site": path,
                "status": {"_DEPRECATED": "deprecated", "_REMOVED": "removed"}.get(kind),
                "message": msg,
            }
    # OFI_NCCL_* read with a raw getenv (OFI_NCCL_FORCE_PRODUCT_NAME); the NCCL_* names it reads are NCCL's lint's
    try:
        raw = m.git("grep", "-n", "-o", "-E", r'getenv\("OFI_NCCL_[A-Z0-9_]+"', tag, "--", "src", "include")
    except Exception:  # git grep exits 1 when nothing matches
        raw = ""
    for line in raw.splitlines():
        _tag, path, _ln, hit = line.split(":", 3)
        stats["sites"] += 1
        out.setdefault(hit[len('getenv("') : -1], {"type": "getenv", "default": None, "site": path})
    return out, stats


def _dir(path: str) -> str:
    """prov/efa/src/x.c -> prov/efa; src/x.c -> src (the core)."""
    parts = path.split("/")
    return "/".join(parts[:2]) if parts[0] == "prov" else parts[0]


def _missed(stats: dict[str, Any], site: str) -> bool:
    """Whether a release's unresolved sites could hide this name: unresolved in its own directory (or in a
    plugin aws-ofi-nccl release, which has no provider directories)."""
    dirs = stats.get("unresolved_dirs")
    return bool(stats["unresolved"]) if dirs is None else _dir(site) in dirs


def _rows(
    repo: str,
    tags: list[tuple[str, str]],
    per: dict[str, dict[str, dict[str, Any]]],
    upstream: str,
    coverage: dict[str, dict[str, int]],
) -> list:
    order = [v for _, v in tags]
    tag_of = dict((v, t) for t, v in tags)
    rows = []
    for name in sorted({n for p in per.values() for n in p}):
        present = [v for v in order if name in per[v]]
        first, last = present[0], present[-1]
        nxt = order.index(last) + 1
        r = per[last][name]
        rows.append(
            {
                "name": name,
                "upstream": upstream,
                "type": r["type"],
                "default": r["default"],
                "first": first,
                "last": last,
                "removed_in": order[nxt] if nxt < len(order) else None,
                "absent_in": [v for v in order[order.index(first) : nxt] if name not in per[v]],
                # bounds a generator miss could explain: a release with sites whose provider was not resolved
                "uncertain": [
                    b
                    for b, bad in (
                        ("first", any(_missed(coverage[v], r["site"]) for v in order[: order.index(first)])),
                        ("removed_in", nxt < len(order) and _missed(coverage[order[nxt]], r["site"])),
                    )
                    if bad
                ]
                or None,
                "status": r.get("status"),
                "message": r.get("message"),
                "site": r["site"],
                "source": f"{repo}@{tag_of[last]}:{r['site']}",
                "confidence": "verified",
                "note": null_note(upstream, r["default"], order[nxt] if nxt < len(order) else None, r["type"]),
            }
        )
    return rows


def _tags(m: Mirror, rx: str) -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for t in m.tags(r".*"):
        mm = re.fullmatch(rx, t)
        if mm:
            found.setdefault(mm.group(1), t)
    return sorted(((t, v) for v, t in found.items()), key=lambda x: version_key(x[1]))


def main() -> None:
    lf = Mirror(os.environ.get("LIBFABRIC_MIRROR", "/work/.mirror/ofiwg+libfabric/repo"))
    on = Mirror(os.environ.get("OFI_NCCL_MIRROR", "/work/.mirror/aws+aws-ofi-nccl/repo"))
    coverage: dict[str, Any] = {"libfabric": {}, "aws-ofi-nccl": {}}
    rows = []
    for repo, m, rx, fn, up in (
        ("ofiwg/libfabric", lf, r"v(\d+\.\d+\.\d+)", libfabric, "libfabric"),
        ("aws/aws-ofi-nccl", on, r"v(\d+\.\d+(?:\.\d+)?)(?:-?aws)?", ofi_nccl, "aws-ofi-nccl"),
    ):
        tags = _tags(m, rx)
        per = {}
        for tag, v in tags:
            per[v], st = fn(m, tag)
            coverage[up][v] = {"names": len(per[v]), **st}
            print(up, v, len(per[v]), st, file=sys.stderr)
        rows += _rows(repo, tags, per, up, coverage[up])
    doc = {
        "table": "ofi_params",
        "description": "FI_* variables each libfabric release defines (fi_param_define) and OFI_NCCL_* variables each "
        "aws-ofi-nccl release reads (OFI_NCCL_PARAM*), generated by tools/upstreams/gen_ofi_params.py from the tags",
        "coverage": coverage,
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(len(rows), "names", file=sys.stderr)


if __name__ == "__main__":
    main()
