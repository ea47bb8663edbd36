"""Generate compat_matrix/catalogs/ucx_params.json: every UCX_* variable each UCX release (1.2 on) reads.

Re-run after fetching a newer snapshot of github:openucx/ucx (docs/knowledge-coverage.md says how):
    UCX_MIRROR=/work/.mirror/openucx+ucx/repo python tools/upstreams/gen_ucx_params.py

How UCX names a variable (src/ucs/config/parser.c ucs_config_apply_config_vars, read at each tag):
  UCX_ + <prefix> + <field name>, where a field belongs to a `ucs_config_field_t table[]`. A root table has the
  prefix it is registered with (UCS_CONFIG_DECLARE_TABLE/REGISTER_TABLE(table, "name", PREFIX, type): NULL = "";
  a transport's UCT_TL_DEFINE(_ENTRY)(..., "RC_VERBS_", table, ...); a component's `.prefix = X, .table = T`).
  A field of type UCS_CONFIG_TYPE_TABLE(sub) named "RC_" nests `sub`: its fields are read with the sub-table's
  own prefix ("RC_") *and* with every enclosing prefix ("RC_VERBS_") - so UCX_RC_TIMEOUT and
  UCX_RC_VERBS_TIMEOUT are both valid names of one field. Fields expanded from a macro that writes
  `{_prefix "NAME", ...}` (UCT_IFACE_MPOOL_CONFIG_FIELDS) are expanded with the prefix passed.
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

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/ucx_params.json"
REPO = "openucx/ucx"
TAG = r"v1\.\d+\.\d+"  # releases only (no -rc, no -pre)
TABLE = re.compile(r"ucs_config_field_t\s+(\w+)\s*\[\s*\]\s*=\s*\{")
# a registration macro: the argument before the table is its prefix (UCS_CONFIG_DECLARE_TABLE, UCT_TL_DEFINE,
# UCT_TL_COMPONENT_DEFINE and UCT_MD_COMPONENT_DEFINE in older releases)
ROOT_CALL = re.compile(r"\b(?:UCT_\w*DEFINE\w*|UCS_CONFIG_\w*TABLE\w*)\s*\(")
FILLED_DIRECTLY = ("ucp_config_table", "ucs_global_opts_table")
PP_LINE = re.compile(r"^[ \t]*#.*$", re.M)
DOT_PREFIX = re.compile(r"\.prefix\s*=\s*([^,]+?)\s*,\s*\.table\s*=\s*&?(\w+)")
STR_DEFINE = re.compile(r'#\s*define\s+(\w+)\s+"([A-Z0-9_]*)"')
MACRO_DEF = re.compile(r"#\s*define\s+(\w+)\s*\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)")


def _tables(src: str) -> dict[str, list[str]]:
    out = {}
    for m in TABLE.finditer(src):
        start = m.end() - 1
        # every #if branch is kept (a build may take either); a directive inside one field marks its default
        body = PP_LINE.sub("@PP@", src[start + 1 : balanced(src, start) - 1])
        out[m.group(1)] = split_args(body)
    return out


def _prefix(expr: str, defines: dict[str, str]) -> str | None:
    expr = expr.strip()
    if expr in ("NULL", "0", '""'):
        return ""
    s = c_string(expr)
    if s is not None:
        return s
    return defines.get(expr)


def scan(m: Mirror, tag: str) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    paths = sorted(
        set(m.files_with(tag, "ucs_config_field_t", ["src"]))
        | set(m.files_with(tag, "_PREFIX", ["src"]))
        | set(m.files_with(tag, "UCS_CONFIG_TYPE_", ["src"]))
    )
    files = m.show_many(tag, [p for p in paths if p.endswith((".c", ".h", ".cc", ".inl"))])
    files = {p: strip_comments(s) for p, s in files.items()}
    # every string macro in src/ (a field named by a macro, UCS_GLOBAL_OPTS_WARN_UNUSED_CONFIG, lives in a header)
    defines: dict[str, str] = dict(
        STR_DEFINE.findall(m.git("grep", "-h", "-E", r'^\s*#\s*define\s+\w+\s+"[A-Z0-9_]*"', tag, "--", "src"))
    )
    macros: dict[str, list[str]] = {}
    tables: dict[str, tuple[str, list[str]]] = {}
    roots: list[tuple[str, str, str]] = []  # (table, prefix, site)
    for path, src in files.items():
        defines.update(dict(STR_DEFINE.findall(src)))
        for mm in MACRO_DEF.finditer(src):
            names = re.findall(r'\{\s*(_prefix)?\s*"([A-Z0-9_]+)"\s*,', mm.group(3))
            if names and "UCS_CONFIG_TYPE_" in mm.group(3):
                macros[mm.group(1)] = names
        for name, fields in _tables(src).items():
            tables[name] = (path, fields)
    unresolved_roots = 0
    for path, src in files.items():
        for mm in ROOT_CALL.finditer(src):
            if src[: mm.start()].rstrip().endswith("define"):
                continue
            args = split_args(src[mm.end() : balanced(src, mm.end() - 1, "(", ")") - 1])
            if mm.group(0).startswith("UCS_CONFIG_") and len(args) >= 3 and args[0] in tables:
                # UCS_CONFIG_DECLARE_TABLE/REGISTER_TABLE(table, "name", prefix, type): the table comes first
                p = _prefix(args[2], defines)
                if p is None:
                    unresolved_roots += 1
                else:
                    roots.append((args[0], p, path))
                continue
            name = mm.group(0).rstrip("( ")
            if name in ("UCT_MM_TL_DEFINE", "UCT_MM_COMPONENT_DEFINE") and len(args) >= 5:
                # the memory-mapper md table is named by token pasting: uct_##_name##_md_config_table
                md_table, p = f"uct_{args[0].strip()}_md_config_table", _prefix(args[4], defines)
                if md_table in tables and p is not None:
                    roots.append((md_table, p, path))
            for i in range(len(args) - 1):
                table = args[i + 1].lstrip("&").strip()
                if table not in tables:
                    continue
                p = _prefix(args[i], defines)
                if p is None:
                    unresolved_roots += 1
                else:
                    roots.append((table, p, path))
                break
        for mm in DOT_PREFIX.finditer(src):
            p = _prefix(mm.group(1), defines)
            if p is None:
                unresolved_roots += 1
                continue
            roots.append((mm.group(2), p, path))
    params: dict[str, dict[str, Any]] = {}
    reached: set[str] = set()
    stats = {"fields": 0, "unparsed": 0, "unreached_tables": 0, "unresolved_roots": unresolved_roots}

    def walk(table: str, prefixes: tuple[str, ...], depth: int) -> None:
        if table not in tables or depth > 8:
            return
        reached.add(table)
        path, fields = tables[table]
        for entry in fields:
            entry = entry.replace("@PP@", "", 1).strip() if entry.strip().startswith("@PP@") else entry.strip()
            while entry.startswith("@PP@"):
                entry = entry[4:].strip()
            if not entry.startswith("{"):
                mac = re.match(r"(\w+)\s*\((.*)\)\s*$", entry, re.S)
                if mac and mac.group(1) in macros:
                    first = split_args(mac.group(2))[0] if mac.group(2).strip() else ""
                    for has_prefix, leaf in macros[mac.group(1)]:
                        add(((c_string(first) or "") if has_prefix else "") + leaf, None, "", False, path, prefixes)
                elif entry:
                    stats["unparsed"] += 1
                continue
            args = [a.replace("@PP@", "").strip() if i != 1 else a for i, a in enumerate(split_args(entry[1:-1]))]
            if not args or args[0] in ("NULL", "0"):
                continue
            name = c_string(args[0])
            if name is None:
                name = defines.get(args[0].strip())
            if name is None:
                stats["unparsed"] += 1
                continue
            kind = args[-1] if len(args) >= 5 else ""
            sub = re.match(r"UCS_CONFIG_TYPE_TABLE\s*\(\s*(\w+)\s*\)", kind)
            if sub:
                walk(sub.group(1), prefixes + (name,), depth + 1)
                continue
            # a default chosen by #if (HANDLE_ERRORS) is not one literal: left null
            default = c_string(args[1]) if len(args) > 1 and "@PP@" not in args[1] else None
            deprecated = "DEPRECATED" in kind or (len(args) > 3 and "DEPRECATED" in args[3])
            add(name, default, kind, deprecated, path, prefixes)

    def add(name: str, default: str | None, kind: str, deprecated: bool, path: str, prefixes: tuple[str, ...]) -> None:
        stats["fields"] += 1
        t = re.match(r"UCS_CONFIG_TYPE_(\w+)", kind)
        for alias in name.split(";"):
            for p in dict.fromkeys(prefixes):
                env = "UCX_" + p + alias
                if not re.fullmatch(r"UCX_[A-Z0-9_]+", env):
                    continue
                row = params.setdefault(env, {"default": default, "type": t.group(1).lower() if t else None})
                row.setdefault("sites", set()).add(path)
                row["deprecated"] = row.get("deprecated", True) and deprecated
                row.setdefault("field", alias)
                row.setdefault("prefixes", set()).add(p)

    # before the tables were registered (1.2-1.3) UCP and UCS filled them with an explicit call
    # (ucs_config_parser_fill_opts(config, ucp_config_table, "UCX_", NULL, ...)): prefix ""
    for table in FILLED_DIRECTLY:
        if table in tables and table not in {r[0] for r in roots}:
            roots.append((table, "", tables[table][0]))
    for table, prefix, _site in roots:
        walk(table, (prefix,), 0)
    # variables read with a raw getenv("UCX_...") outside the tables (UCX_CONFIG_DIR: where ucx.conf is looked for)
    try:
        raw = m.git("grep", "-n", "-o", "-E", r'getenv\("UCX_[A-Z0-9_]+"', tag, "--", "src")
    except Exception:  # git grep exits 1 when nothing matches
        raw = ""
    for line in raw.splitlines():
        _tag, path, _ln, hit = line.split(":", 3)
        env = hit[len('getenv("') : -1]
        params.setdefault(env, {"default": None, "type": "getenv", "field": env, "deprecated": False})
        params[env].setdefault("sites", set()).add(path)
        params[env].setdefault("prefixes", set())
    stats["unreached_tables"] = len(set(tables) - reached)
    # where the tables the walk did not reach live: a name from another directory cannot have been missed there
    stats["incomplete_dirs"] = sorted({_dir(tables[t][0]) for t in set(tables) - reached})  # type: ignore[assignment]
    return params, stats


def _dir(path: str) -> str:
    """The component directory of a source file (src/uct/ib/rc/verbs/x.c -> src/uct/ib)."""
    return "/".join(path.split("/")[:3])


def _uncertain(tags: list[str], first: int, removed: int, stats: dict[str, Any], site: str) -> list[str]:
    """The bounds a generator miss could explain: `first` when an earlier release has a table in the name's
    component directory the walk did not reach, `removed_in` when the release that drops the name has one."""
    here = _dir(site)

    def incomplete(t: str) -> bool:
        return here in stats[t].get("incomplete_dirs", []) or bool(stats[t]["unresolved_roots"])

    out = []
    if any(incomplete(t) for t in tags[:first]):
        out.append("first")
    if removed < len(tags) and incomplete(tags[removed]):
        out.append("removed_in")
    return out


def main() -> None:
    m = Mirror(os.environ.get("UCX_MIRROR", "/work/.mirror/openucx+ucx/repo"))
    tags = sorted(m.tags(TAG), key=version_key)
    per: dict[str, dict[str, dict[str, Any]]] = {}
    stats = {}
    for tag in tags:
        per[tag], stats[tag] = scan(m, tag)
        print(tag, len(per[tag]), stats[tag], file=sys.stderr)
    versions = [t[1:] for t in tags]
    rows = []
    names = sorted({n for p in per.values() for n in p})
    for name in names:
        present = [t for t in tags if name in per[t]]
        first, last = present[0], present[-1]
        nxt = tags.index(last) + 1
        gaps = [t[1:] for t in tags[tags.index(first) : tags.index(last) + 1] if name not in per[t]]
        r = per[last][name]
        # every release whose default differs from the one before (UCX_PROTO_ENABLE n -> y in 1.16.0): protocol
        # and transport defaults that changed, read from the tables themselves
        history, prev = [], object()
        for t in present:
            d = per[t][name]["default"]
            if d != prev:
                history.append(f"{t[1:]}: {d if d is not None else '(not a literal)'}")
                prev = d
        # the release from which UCX skips the field (offset UCS_CONFIG_DEPRECATED_FIELD_OFFSET, 1.8 on): the first
        # of the trailing run of releases that mark it deprecated
        deprecated_in = None
        for t in reversed(present):
            if not per[t][name]["deprecated"]:
                break
            deprecated_in = t[1:]
        rows.append(
            {
                "name": name,
                "field": r["field"],
                "type": r["type"],
                "default": r["default"],
                "first": first[1:],
                "last": last[1:],
                "removed_in": tags[nxt][1:] if nxt < len(tags) else None,
                "absent_in": gaps,
                "uncertain": _uncertain(tags, tags.index(first), nxt, stats, sorted(r["sites"])[0]) or None,
                "default_history": history if len(history) > 1 else None,
                "status": "deprecated" if r["deprecated"] else None,
                "deprecated_in": deprecated_in,
                "site": sorted(r["sites"])[0],
                "source": f"{REPO}@{last}:{sorted(r['sites'])[0]}",
                "confidence": "verified",
                "note": "; ".join(
                    filter(
                        None,
                        [
                            null_note(r["default"], tags[nxt][1:] if nxt < len(tags) else None, r["type"]),
                            None if deprecated_in else "deprecated_in null: a live field at the newest release read",
                        ],
                    )
                ),
            }
        )
    doc = {
        "table": "ucx_params",
        "description": "Every UCX_* environment variable each UCX release reads, from its ucs_config_field_t tables "
        "with nested prefixes resolved (generated by tools/upstreams/gen_ucx_params.py from the openucx/ucx tags; "
        "first/last = oldest/newest release tag that reads it, removed_in = the release after last, absent_in = "
        "releases in between that do not)",
        "releases": versions,
        "coverage": {t[1:]: {"names": len(per[t]), **stats[t]} for t in tags},
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(len(rows), "names", file=sys.stderr)


if __name__ == "__main__":
    main()
