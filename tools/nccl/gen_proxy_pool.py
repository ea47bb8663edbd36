"""Generate catalogs/nccl_proxy_pool.json: the size of the /dev/shm segment NCCL's proxy creates for its ops pool,
per release (issue 32).

Each local rank's proxy maps one segment of sizeof(struct ncclProxyOpsPool) in /dev/shm (src/proxy.cc: ncclShmOpen
of the pool, the 'nccl-proxy-ops' or '/dev/shm/nccl-XXXXXX' segment) when a transport needs proxy progress. The size
is a C struct layout, so for every release tag this reads the struct definitions and #defines it needs from
src/include (struct ncclProxyOpsPool, struct ncclProxyOp, union ncclProxyOpSpecifics, whatever they name), writes
them with a sizeof() print into a scratch C++ file and compiles and runs that with the host's g++ (x86-64 layout,
the one Linux GPU nodes and Grace share for these types). Nothing of NCCL is built or linked; a tag whose
definitions do not compile standalone is recorded null with the reason. Re-run:
    NCCL_MIRROR=/work/.mirror/NVIDIA+nccl/repo python tools/nccl/gen_proxy_pool.py \\
        > src/imgcheck/data/compat_matrix/catalogs/nccl_proxy_pool.json
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from nccl_git import files_text, print_catalog, release_tags, show

ROOTS = ("ncclProxyOpsPool",)
_DEFINE = re.compile(r"^\s*#define\s+(\w+)(\([^)]*\))?\s+(.+?)\s*$", re.M)
_MISSING = re.compile(
    r"(?:'(?:struct |union |enum )?(\w+)' (?:does not name a type|was not declared|has incomplete type|"
    r"has not been declared)|field '\w+' has incomplete type '(?:struct |union |enum )?(\w+)'|"
    r"incomplete type '(?:struct |union |enum )?(\w+)'|'(\w+)' was not declared in this scope|"
    r"use of enum '(\w+)' without previous declaration)"
)
HEAD = "#include <atomic>\n#include <mutex>\n#include <condition_variable>\n#include <stdint.h>\n#include <stddef.h>\n#include <pthread.h>\n#include <sys/types.h>\n#include <cstdio>\n"


def _definition(text: str, name: str) -> str | None:
    """The `struct|union|enum NAME { ... };` or typedef of NAME in a header, braces matched."""
    for m in re.finditer(
        rf"^(?:typedef\s+)?(?:struct|union|enum)\s+(?:alignas\(\d+\)\s+)?{name}\b[^;{{]*\{{", text, re.M
    ):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                end = text.find(";", i)
                return text[m.start() : end + 1]
            i += 1
    for m in re.finditer(r"^typedef\s+(?:struct|union|enum)\s*\w*\s*(?::\s*\w+\s*)?\{", text, re.M):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        tail = re.match(rf"\s*{name}\s*;", text[i + 1 :])
        if tail:
            return text[m.start() : i + 1 + tail.end()]
    m = re.search(rf"^typedef\s+[^;{{]*\b{name}\s*;", text, re.M)
    return m.group(0) if m else None


def _defines(files: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(files):
        if path.startswith("src/include/") and path.endswith(".h"):
            for name, args, body in _DEFINE.findall(files[path].replace("\\\n", " ")):
                out.setdefault(name, f"#define {name}{args} {body}")
    return out


def _compile(source: str) -> tuple[int | None, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp, "pool.cc"), Path(tmp, "pool")
        src.write_text(source)
        cc = subprocess.run(
            ["g++", "-std=c++17", "-w", "-o", str(exe), str(src)],
            capture_output=True,
            text=True,
            env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
        )
        if cc.returncode != 0:
            return None, cc.stderr
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=10)
        return int(run.stdout.split()[0]), ""


def read_tag(tag: str) -> tuple[dict[str, int] | None, str]:
    files = files_text(tag)
    try:  # the public header's types (ncclDataType_t, ncclRedOp_t): .h.in is not among the source files read
        files["src/nccl.h.in"] = show(tag, "src/nccl.h.in")
    except subprocess.CalledProcessError:
        pass
    headers = "\n".join(
        t
        for p, t in sorted(files.items())
        if (p.startswith("src/include/") and p.endswith(".h")) or p == "src/nccl.h.in"
    )
    defines = _defines(files)
    wanted = ["ncclProxyOp", "ncclProxyOpsPool"]
    if "union ncclProxyOpSpecifics" in headers:
        wanted.insert(0, "ncclProxyOpSpecifics")
    err = ""
    declared: list[str] = []
    for _ in range(16):
        bodies = [_definition(headers, n) for n in wanted]
        if any(b is None for b in bodies):
            missing = [n for n, b in zip(wanted, bodies, strict=True) if b is None]
            if "ncclProxyOpsPool" in missing:
                return None, "no struct ncclProxyOpsPool in this release (its proxy has no shared ops pool)"
            return None, f"no definition of {missing}"
        used = set(re.findall(r"\b[A-Z_][A-Z0-9_]{2,}\b", "\n".join(b or "" for b in bodies)))
        macros, seen = [], set()
        while used - seen:
            name = sorted(used - seen)[0]
            seen.add(name)
            if name in defines:
                macros.append(defines[name])
                used |= set(re.findall(r"\b[A-Za-z_]\w*\b", defines[name]))
        source = (
            HEAD
            + "".join(f"struct {n};\n" for n in declared)
            + "\n".join(reversed(macros))
            + "\n"
            + "\n".join(b or "" for b in bodies)
            + '\nint main() { printf("%zu %zu\\n", sizeof(struct ncclProxyOpsPool), sizeof(struct ncclProxyOp)); }\n'
        )
        size, err = _compile(source)
        if size is not None:
            op = int(_compile(source.replace("sizeof(struct ncclProxyOpsPool), ", "sizeof(struct ncclProxyOp), "))[0])
            per_peer = _compile(
                source.replace(
                    'printf("%zu %zu\\n", sizeof(struct ncclProxyOpsPool), sizeof(struct ncclProxyOp))',
                    'printf("%d\\n", (int)(MAX_OPS_PER_PEER))',
                )
            )[0]
            return {"pool_bytes": size, "op_bytes": op, "ops_per_peer": per_peer or 0}, ""
        missing = [next(g for g in m if g) for m in _MISSING.findall(err)]
        new = [n for n in dict.fromkeys(missing) if n not in wanted and n not in declared and n != "std"]
        if not new:
            break
        for n in new:
            if _definition(headers, n):
                wanted.insert(0, n)
            else:
                declared.append(n)  # a C++ class NCCL only points to: a declaration gives the pointer its size
    first = next((line for line in err.splitlines() if "error" in line), err[:200])
    return None, f"does not compile standalone: {first.split('error: ')[-1][:160]}"


def main() -> int:
    rows: list[dict[str, object]] = []
    tags = release_tags()
    for tag, version in tags:
        got, why = read_tag(tag)
        values = got or {"pool_bytes": None, "op_bytes": None, "ops_per_peer": None}
        if rows and all(rows[-1][k] == v for k, v in values.items()) and rows[-1].get("why", "") == why:
            rows[-1]["last"], rows[-1]["last_tag"] = version, tag
            continue
        rows.append({"first": version, "last": version, "first_tag": tag, "last_tag": tag, **values, "why": why})
    out = []
    for r in rows:
        first_tag, last_tag, why = r.pop("first_tag"), r.pop("last_tag"), r.pop("why")
        row: dict[str, object] = {"id": f"{r['first']}..{r['last']}", **r}
        row["source"] = (
            f"NVIDIA/nccl@{first_tag}..{last_tag}:src/include/proxy.h (struct ncclProxyOpsPool, struct ncclProxyOp), "
            "src/proxy.cc (ncclShmOpen(shmPath, sizeof(struct ncclProxyOpsPool), ...), sized by g++ on x86-64)"
        )
        row["confidence"] = "verified"
        if why:
            row["note"] = f"not derived: {why}"
        out.append(row)
    doc = {
        "table": "nccl_proxy_pool",
        "description": (
            "The /dev/shm segment each local rank's NCCL proxy maps for its ops pool, per release (generated by "
            "tools/nccl/gen_proxy_pool.py: sizeof(struct ncclProxyOpsPool) from the definitions at each tag, laid "
            "out by g++ for x86-64). pool_bytes is the segment, op_bytes one ncclProxyOp, ops_per_peer "
            "MAX_OPS_PER_PEER; the pool holds ops_per_peer x NCCL_MAX_LOCAL_RANKS ops plus a small tail."
        ),
        "coverage": {"tags": len(tags), "rows": len(out)},
        "rows": out,
    }
    return print_catalog(doc)


if __name__ == "__main__":
    raise SystemExit(main())
