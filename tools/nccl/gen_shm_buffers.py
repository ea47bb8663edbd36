"""Generate catalogs/nccl_shm_buffers.json: what NCCL's SHM transport puts in /dev/shm per connection, per release.

For every release tag (tools/nccl/nccl_git.py) it reads, without building anything:
- src/transport/shm.cc: whether the receive side's segment holds every protocol's buffer
  (`shmSize += comm->buffSizes[p]` over NCCL_NUM_PROTOCOLS, from 2.7) or one buffer of NCCL_BUFFSIZE (before);
- the defaults of the three protocol buffers (DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE), the
  macros they are built from, and MAXCHANNELS, evaluated from their #define lines;
- src/graph/connect.cc: whether the ring channels the topology search found are doubled (`nChannels*2`), which
  makes two channels the least a communicator of one node runs with (unless NCCL_MAX_NCHANNELS lowers it).

Consecutive releases with the same values make one row. Re-run for a new release:
    NCCL_MIRROR=/work/.mirror/NVIDIA+nccl/repo python tools/nccl/gen_shm_buffers.py > src/imgcheck/data/compat_matrix/catalogs/nccl_shm_buffers.json
"""

from __future__ import annotations

import re

from nccl_git import files_text, print_catalog, release_tags

# sizeof() of the element types the buffer macros multiply by (src/include/device.h / devcomm.h): a union
# ncclLLFifoLine is four uint32 (16 bytes), an LL128 element a uint64_t
SIZEOF = {"union ncclLLFifoLine": 16, "uint64_t": 8}
WANTED = ("DEFAULT_LL_BUFFSIZE", "DEFAULT_LL128_BUFFSIZE", "DEFAULT_BUFFSIZE", "MAXCHANNELS")
_DEFINE = re.compile(r"^\s*#define\s+(\w+)\s+(.+?)\s*(?:/\*.*)?$", re.M)
_SUM_FORM = re.compile(
    r"for \(int p\s*=\s*0;\s*p\s*<\s*NCCL_NUM_PROTOCOLS;\s*p\+\+\) shmSize \+= (?:\w+->)?comm->buffSizes\[p\]"
)
_DOUBLED = re.compile(r"nChannels\s*=\s*comm->nChannels\s*=\s*std::min\(MAXCHANNELS,\s*nChannels\s*\*\s*2\)")


def _defines(files: dict[str, str]) -> dict[str, str]:
    """Every object-like #define under src/include and in src/init.cc (DEFAULT_BUFFSIZE is defined there; first
    definition wins, headers first)."""
    out: dict[str, str] = {}
    for path in sorted(files, key=lambda p: (not p.startswith("src/include/"), p)):
        if not (path.startswith("src/include/") or path == "src/init.cc"):
            continue
        for name, body in _DEFINE.findall(files[path].replace("\\\n", " ")):  # continued #define lines
            out.setdefault(name, body.strip())
    return out


def _evaluate(name: str, defs: dict[str, str], depth: int = 0) -> int | None:
    body = defs.get(name)
    if body is None or depth > 8:
        return None
    expr = body
    for typ, size in SIZEOF.items():
        expr = expr.replace(f"sizeof({typ})", str(size))
    expr = re.sub(r"(\d+)LL\b", r"\1", expr)
    for ident in set(re.findall(r"[A-Za-z_]\w*", expr)):
        value = _evaluate(ident, defs, depth + 1)
        if value is None:
            return None
        expr = re.sub(rf"\b{ident}\b", str(value), expr)
    if not re.fullmatch(r"[\d\s()*+<-]+", expr):
        return None
    return int(eval(expr))  # digits and * + - << ( ) only, checked above


def read_tag(tag: str) -> dict[str, object]:
    files = files_text(tag)
    defs = _defines(files)
    shm = files.get("src/transport/shm.cc", "")
    connect = files.get("src/graph/connect.cc", "")
    values = {name: _evaluate(name, defs) for name in WANTED}
    summed = bool(_SUM_FORM.search(shm))
    buffers = None
    if summed and None not in (values["DEFAULT_LL_BUFFSIZE"], values["DEFAULT_LL128_BUFFSIZE"]):
        buffers = sum(int(values[n] or 0) for n in WANTED[:3])
    return {
        "ll_bytes": values["DEFAULT_LL_BUFFSIZE"],
        "ll128_bytes": values["DEFAULT_LL128_BUFFSIZE"],
        "simple_bytes": values["DEFAULT_BUFFSIZE"],
        "recv_segment_buffers_bytes": buffers,
        "max_channels": values["MAXCHANNELS"],
        "min_channels": 2 if _DOUBLED.search(connect) else None,
    }


def main() -> int:
    rows: list[dict[str, object]] = []
    tags = release_tags()
    for tag, version in tags:
        got = read_tag(tag)
        if rows and all(rows[-1][k] == v for k, v in got.items()):
            rows[-1]["last"] = version
            rows[-1]["last_tag"] = tag
            continue
        rows.append({"first": version, "last": version, "first_tag": tag, "last_tag": tag, **got})
    out = []
    for r in rows:
        first_tag, last_tag = r.pop("first_tag"), r.pop("last_tag")
        row: dict[str, object] = {"id": f"{r['first']}..{r['last']}", **r}
        row["source"] = (
            f"NVIDIA/nccl@{first_tag}..{last_tag}:src/transport/shm.cc (shmRecvSetup: the receive segment), "
            "src/include/*.h (DEFAULT_*BUFFSIZE, MAXCHANNELS), src/graph/connect.cc (ncclTopoPostset: ring channels "
            "doubled)"
        )
        row["confidence"] = "verified"
        if r["recv_segment_buffers_bytes"] is None:
            row["note"] = (
                "the receive segment is offsetof(ncclRecvMem, buff) plus one buffer of NCCL_BUFFSIZE here, with the "
                "LL lines inside ncclRecvMem; not derived (null)"
            )
        out.append(row)
    doc = {
        "table": "nccl_shm_buffers",
        "description": (
            "What NCCL's SHM transport allocates in /dev/shm for one connection, per release (generated by "
            "tools/nccl/gen_shm_buffers.py from every tag). The receiving rank of each SHM connection creates one "
            "segment /dev/shm/nccl-* holding a small ncclRecvMem header and every protocol's buffer "
            "(LL + LL128 + Simple at their defaults, NCCL_BUFFSIZE replacing Simple's); every rank receives on every "
            "channel of the ring, and a communicator of one node runs at least min_channels channels."
        ),
        "coverage": {"tags": len(tags), "rows": len(out)},
        "rows": out,
    }
    return print_catalog(doc)


if __name__ == "__main__":
    raise SystemExit(main())
