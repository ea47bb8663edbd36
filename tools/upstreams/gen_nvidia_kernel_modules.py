"""Generate compat_matrix/catalogs/nvidia_kernel_modules.json: what the NVIDIA GPU kernel modules do for peer memory
and DMA-BUF in every release of github:NVIDIA/open-gpu-kernel-modules (the open modules; the proprietary modules of
the same release share the kernel interface layer, kernel-open/ is that layer's source).

    # the `fetch` tool gives the bare mirror; then
    python tools/upstreams/gen_nvidia_kernel_modules.py /work/.mirror/NVIDIA+open-gpu-kernel-modules/repo

Per release tag it reads, with git plumbing only (nothing is built):
- kernel-open/nvidia-peermem/nvidia-peermem.c: every module_param (name, type, default resolved through the enum
  or #define it names, MODULE_PARM_DESC), every peer_err() message, and what module init does when the build found
  no peer-memory symbols (NV_MLNX_IB_PEER_MEM_SYMBOLS_PRESENT undefined);
- kernel-open/conftest.sh `ib_peer_memory_symbols`: where the build looks for ib_register_peer_memory_client
  (the kernel's Module.symvers, MLNX_OFED's /usr/src/ofa_kernel, the DKMS mlnx-ofed-kernel tree);
- kernel-open/nvidia/nv-dmabuf.c: every NV_DBG_ERRORS message (why an export/attach/map is refused) and the
  conftest macros and kernel options that compile DMA-BUF export in or out;
- README.md: the oldest Linux kernel the release supports.
Each row is a range of releases (first_release .. last_release) over which the fact holds unchanged, cited as
NVIDIA/open-gpu-kernel-modules@<tag>:<path>:<line> at the first release of the range.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, c_string, strip_comments, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nvidia_kernel_modules.json"
REPO = "NVIDIA/open-gpu-kernel-modules"
PEERMEM = "kernel-open/nvidia-peermem/nvidia-peermem.c"
DMABUF = "kernel-open/nvidia/nv-dmabuf.c"
CONFTEST = "kernel-open/conftest.sh"
README = "README.md"

PARAM = re.compile(r"module_param\(\s*(\w+)\s*,\s*(\w+)\s*,")
DESC = re.compile(r'MODULE_PARM_DESC\(\s*(\w+)\s*,\s*((?:"(?:\\.|[^"\\])*"\s*)+)\)')
INIT_VAR = re.compile(r"static\s+\w+\s+(\w+)\s*=\s*([^;]+);")
ENUM_OR_DEFINE = re.compile(r"(?:#define\s+(\w+)\s+\(?(-?\d+)\)?|\b(\w+)\s*=\s*(-?\d+)\s*[,}\n])")
PEER_ERR = re.compile(r"peer_err\(\s*((?:\"(?:\\.|[^\"\\])*\"\s*)+)")
NV_PRINTF = re.compile(r"nv_printf\(\s*NV_DBG_ERRORS\s*,\s*((?:\"(?:\\.|[^\"\\])*\"\s*)+)")
# code markers of nvidia-peermem behaviours, with what each means (read from the source at the release it appears)
PEERMEM_FEATURES = (
    (
        "nc_client",
        "reg_handle_nc",
        "registers a second peer-memory client, nv_mem_nc, whose GPU pages are taken without a free callback",
    ),
    (
        "persistent_pages",
        "nvidia_p2p_get_pages_persistent",
        "the nc client pins GPU pages with nvidia_p2p_get_pages_persistent (persistent mapping, no invalidation "
        "callback) where the driver's nv-p2p.h offers it",
    ),
    (
        "context_magic_check",
        "NV_MEM_CONTEXT_MAGIC",
        "checks each peer-memory context against a magic value and refuses an invalid one "
        "('detected invalid context, skipping further processing') instead of dereferencing it",
    ),
)
KERNEL_FLOOR = re.compile(r"currently Linux kernel (\d+\.\d+) or newer")
MACRO_IF = re.compile(r"^#\s*(?:if|ifdef|elif)\b(.*)$", re.M)
MACRO_NAME = re.compile(r"\b(NV_\w+|CONFIG_\w+)\b")


def line_of(text: str, needle: str) -> int | None:
    i = text.find(needle)
    return None if i < 0 else text.count("\n", 0, i) + 1


def _accepted(code: str, name: str, consts: dict[str, str]) -> list[str] | None:
    """The values module init accepts for a parameter: the `case` labels of the switch on it in the parameter's
    check function (any other value makes init fail); None when the source has no such switch (any value taken)."""
    m = re.search(r"switch\s*\(\s*" + re.escape(name) + r"\s*\)\s*\{", code)
    if not m:
        return None
    body = code[m.end() : m.end() + 2000]
    body = body[: body.find("default")] if "default" in body else body
    return sorted({consts.get(c, c) for c in re.findall(r"case\s+(\w+)\s*:", body)})


def peermem_facts(src: str) -> dict[str, tuple[str, int | None]]:
    """fact key -> (value, line in the file) for one release's nvidia-peermem.c."""
    out: dict[str, tuple[str, int | None]] = {}
    code = strip_comments(src)
    consts = {(m.group(1) or m.group(3)): m.group(2) or m.group(4) for m in ENUM_OR_DEFINE.finditer(code)}
    inits = {m.group(1): m.group(2).strip() for m in INIT_VAR.finditer(code)}
    descs = {m.group(1): c_string(m.group(2)) for m in DESC.finditer(code)}
    for m in PARAM.finditer(code):
        name, typ = m.group(1), m.group(2)
        raw = inits.get(name)
        default = consts.get(raw, raw) if raw else None
        accepted = _accepted(code, name, consts)
        value = json.dumps(
            {"type": typ, "default": default, "accepted": accepted, "description": descs.get(name)}, sort_keys=True
        )
        out[f"param:{name}"] = (value, line_of(src, f"module_param({name}"))
    for m in PEER_ERR.finditer(code):
        text = c_string(m.group(1))
        if text:
            out[f"message:peermem:{text.strip()}"] = ("", line_of(src, m.group(1).split('"')[1]))
    lic = re.search(r'MODULE_LICENSE\(\s*"([^"]+)"\s*\)', code)
    if lic:
        out["module:peermem_license"] = (lic.group(1), line_of(src, "MODULE_LICENSE("))
    fmt = re.search(r"#define\s+peer_err\(FMT, ARGS\.\.\.\)\s+printk\(KERN_ERR\s+(.*?)\s+FMT", code)
    if fmt:
        out["module:peermem_err_prefix"] = (
            re.sub(r'"\s*"', "", fmt.group(1)).strip('"'),
            line_of(src, "#define peer_err"),
        )
    for feature, marker, why in PEERMEM_FEATURES:
        if marker in code:
            out[f"feature:{feature}"] = (why, line_of(src, marker))
    # every distinct source of the file: where it changed between releases (a fix or a feature lands there)
    out["module:peermem_source"] = (hashlib.sha1(src.encode()).hexdigest()[:12], None)
    init = re.search(r"nv_mem_client_init\(void\)\s*\{", code)
    if init:
        body = code[init.end() :]
        stub = re.search(r"#else\s*\n\s*return\s+(-\w+)\s*;\s*\n\s*#endif", body[:4000])
        if "NV_MLNX_IB_PEER_MEM_SYMBOLS_PRESENT" in body[:200]:
            out["build:peermem_init_without_peer_symbols"] = (
                stub.group(1) if stub else "0",
                line_of(src, "nv_mem_client_init(void)"),
            )
    return out


def conftest_facts(src: str) -> dict[str, tuple[str, int | None]]:
    m = re.search(r"\n\s*ib_peer_memory_symbols\)\s*\n(.*?)\n\s*;;", src, re.S)
    if not m:
        return {}
    block = m.group(1)
    where = []
    for path in re.findall(r"check_for_ib_peer_memory_symbols\s+\"([^\"]+)\"", block):
        where.append(path)
    # VAR=/path, or VAR=$(test -d A && ls -d B/*/build ...): the path the shell would give (the last one named)
    for name, cmd, plain in re.findall(r"(\w+)=(?:\$\((.*?)\)|(\S+))", block, re.S):
        paths = [p for p in re.findall(r"/[\w/.*+-]+", cmd) if not p.startswith("/dev/")] if cmd else [plain]
        if paths:
            where = [w.replace("$" + name, paths[-1]) for w in where]
    return {"build:peer_symbols_searched": (" | ".join(where), line_of(src, "ib_peer_memory_symbols)"))}


def dmabuf_facts(src: str) -> dict[str, tuple[str, int | None]]:
    out: dict[str, tuple[str, int | None]] = {}
    code = strip_comments(src)
    for m in NV_PRINTF.finditer(code):
        text = c_string(m.group(1))
        if text and "dma-buf" in text.lower() or text and "dmabuf" in text.lower():
            first = m.group(1).split('"')[1]
            out[f"message:dmabuf:{text.strip()}"] = ("", line_of(src, first))
    macros = sorted({n for cond in MACRO_IF.findall(code) for n in MACRO_NAME.findall(cond)})
    for name in macros:
        out[f"build:dmabuf_macro:{name}"] = ("", line_of(src, name))
    return out


def readme_facts(src: str) -> dict[str, tuple[str, int | None]]:
    m = KERNEL_FLOOR.search(src)
    return {"kernel_floor": (m.group(1), line_of(src, m.group(0)))} if m else {}


def ranges_of(per_tag: list[tuple[str, dict[str, tuple[str, str, int | None]]]]) -> list[dict[str, Any]]:
    """Collapse per-release facts into rows: a key and value unchanged over consecutive releases is one row."""
    rows: list[dict[str, Any]] = []
    open_rows: dict[str, dict[str, Any]] = {}
    tags = [t for t, _ in per_tag]
    for tag, facts in per_tag:
        for key in list(open_rows):
            row = open_rows[key]
            if key not in facts or facts[key][0] != row["value"]:
                rows.append(open_rows.pop(key))
        for key, (value, path, line) in facts.items():
            row = open_rows.get(key)
            if row is None:
                open_rows[key] = {
                    "key": key,
                    "value": value,
                    "first_release": tag,
                    "last_release": tag,
                    "source": f"{REPO}@{tag}:{path}" + (f":{line}" if line else ""),
                }
            else:
                row["last_release"] = tag
    rows.extend(open_rows.values())
    newest = tags[-1]
    for r in rows:
        r["removed_in"] = None if r["last_release"] == newest else tags[tags.index(r["last_release"]) + 1]
    return rows


KIND_NOTES = {
    "param": "a module parameter of nvidia-peermem (modprobe nvidia-peermem NAME=VALUE); value: type, default, "
    "description as the source states them",
    "message": "a KERN_ERR line the module prints (dmesg); the condition is the code path that prints it",
    "build": "a build-time condition: what the module does or compiles depending on what the build host had",
    "kernel_floor": "the oldest Linux kernel the release supports (README)",
}


def finish(row: dict[str, Any]) -> dict[str, Any]:
    key = row["key"]
    kind = key.split(":", 1)[0]
    subject = key.split(":", 1)[1] if ":" in key else key
    value = row.pop("value")
    out: dict[str, Any] = {
        "key": f"{key}@{row['first_release']}",
        "kind": kind,
        "subject": subject,
        "value": value or None,
        "first_release": row["first_release"],
        "last_release": row["last_release"],
        "removed_in": row["removed_in"],
        "source": row["source"],
        "confidence": "verified",
    }
    nulls = []
    if not value:
        nulls.append("value null: the row is the presence of the message / macro itself")
    if row["removed_in"] is None:
        nulls.append("removed_in null: still so in the newest release read")
    out["note"] = "; ".join(nulls) or None
    return out


def generate(mirror: Mirror) -> dict[str, Any]:
    tags = sorted(mirror.tags(r"\d+\.\d+(?:\.\d+)?"), key=version_key)
    per_tag: list[tuple[str, dict[str, tuple[str, str, int | None]]]] = []
    for tag in tags:
        files = mirror.show_many(tag, [PEERMEM, DMABUF, CONFTEST, README])
        facts: dict[str, tuple[str, str, int | None]] = {}
        readers: Iterable[tuple[str, Any]] = (
            (PEERMEM, peermem_facts),
            (CONFTEST, conftest_facts),
            (DMABUF, dmabuf_facts),
            (README, readme_facts),
        )
        for path, reader in readers:
            if path in files:
                for k, (v, line) in reader(files[path]).items():
                    facts[k] = (v, path, line)
        facts["file:nvidia-peermem"] = ("present" if PEERMEM in files else "absent", PEERMEM, None)
        facts["file:nv-dmabuf"] = ("present" if DMABUF in files else "absent", DMABUF, None)
        per_tag.append((tag, facts))
    rows = [finish(r) for r in ranges_of(per_tag)]
    rows.sort(key=lambda r: (r["kind"], r["subject"], version_key(r["first_release"])))
    coverage = {
        "releases": len(tags),
        "first": tags[0],
        "last": tags[-1],
        "peermem_params": len({r["subject"] for r in rows if r["kind"] == "param"}),
        "peermem_messages": len({r["subject"] for r in rows if r["subject"].startswith("peermem:")}),
        "dmabuf_messages": len({r["subject"] for r in rows if r["subject"].startswith("dmabuf:")}),
        "dmabuf_build_macros": len({r["subject"] for r in rows if r["subject"].startswith("dmabuf_macro:")}),
        "rows": len(rows),
    }
    return {
        "table": "nvidia_kernel_modules",
        "description": (
            "Peer memory (nvidia-peermem) and DMA-BUF export in every release of the NVIDIA GPU kernel modules, "
            "generated by tools/upstreams/gen_nvidia_kernel_modules.py from github:" + REPO + " release tags: "
            "module parameters with defaults, the messages printed, what the build does without peer-memory "
            "symbols, the conftest macros DMA-BUF export depends on, the oldest supported kernel. "
            "Edit the generator, not this file."
        ),
        "coverage": coverage,
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    data = generate(Mirror(argv[1]))
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(data["coverage"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
