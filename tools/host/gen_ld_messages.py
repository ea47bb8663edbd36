"""Generate src/imgcheck/data/triage/ld_messages.json: the messages glibc's dynamic loader (ld.so, dlopen) prints,
enumerated from every glibc release tag from 2.17 (the oldest glibc of a supported enterprise distribution) to the
newest in the mirror, each with the first and last release and its site (file:line at that release), and the triage
signature(s) that name it with the condition that decides which one.

    GLIBC_MIRROR=/work/.mirror/bminor+glibc/repo python tools/host/gen_ld_messages.py

What is read: every string a loader error site passes as its message in elf/dl-*.c, elf/dl-*.h and elf/rtld.c
(`N_("...")` texts, `_dl_exception_create_format` formats, and the pieces `make_string (...)` concatenates). The
loader prints them as `PROGRAM: OCCASION: OBJECT: MESSAGE[: strerror]` (elf/dl-error-skeleton.c), where OCCASION is
one of the texts too ("error while loading shared libraries", "symbol lookup error", "relocation error").

How a message reads for a GPU/RDMA job is decided by the library and symbol version it names, not by the words
alone: MAPPING below gives, per message, the signatures and the argument condition of each (a version name of
rdma-core's ABI -> IBVERBS-SYMBOL-VERSION; glibc's or libstdc++'s own versions -> HOST-LD-SYSTEM-VERSION; ...).
A message no row maps is listed in `left_out` with the reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

REPO = os.environ.get("GLIBC_MIRROR", "/work/.mirror/bminor+glibc/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/ld_messages.json"
TAG = re.compile(r"^glibc-2\.(\d+)$")
FIRST_MINOR = 17
FILES = re.compile(r"^elf/(?:dl-[\w-]+\.[ch]|rtld\.c)$")
N_ = re.compile(r'N_\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)', re.S)
FMT = re.compile(r'_dl_exception_create_format\s*\([^"]*?((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
MAKE = re.compile(r"make_string\s*\(((?:[^()]|\([^()]*\))*)\)", re.S)
PIECE = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
ARG_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[(),]|[^"(),]+', re.S)
# static strings make_string is given by name (glibc < 2.20: `undefined_msg`)
CONSTANTS = {"undefined_msg": "undefined symbol: "}

# argument conditions: which library / symbol version a message names
RDMA_VERSION = r"(?:IBVERBS|MLX[45]|EFA|RDMACM|HNS|BNXT|IRDMA|IBUMAD|IBMAD|IBNETDISC|MANA)[A-Z0-9_.]*"
RDMA_LIB = r"lib(?:ibverbs|mlx[45]|efa|rdmacm|ibumad|mana)[\w.-]*"
SYSTEM_VERSION = r"(?:GLIBC|GLIBCXX|CXXABI|GCC)_[\w.]+"
NCCL_SYMBOL = r"nccl\w+"
CUDA_LIB = r"lib(?:cuda|nvidia-ml)\.so[\d.]*"
RDMA_SYMBOL = r"(?:ibv|mlx5dv|mlx4dv|efadv|rdma|ibv_cmd|verbs)_\w+"

# message (a regex over the format) -> [(signature, regex template for the log line)], and why. The template's
# {V} {L} {S} are the argument conditions above; {fmt} is the format's own regex. Rows are tried in order.
MAPPING: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    (
        r"^version `%s' not found \(required by %s\)$",
        (
            ("IBVERBS-SYMBOL-VERSION", r"version [`'](?P<ver>" + RDMA_VERSION + r")' not found \(required by "),
            ("HOST-LD-SYSTEM-VERSION", r"version [`'](?P<ver>" + SYSTEM_VERSION + r")' not found \(required by "),
            (
                "HOST-LD-VERSION-NOT-FOUND",
                r"version [`'](?P<ver>(?!" + SYSTEM_VERSION + "|" + RDMA_VERSION + r")[^']+)' not found \(required by ",
            ),
        ),
        "dl-version.c match_symbol: a library loaded for the object lacks a symbol version the object was linked with",
    ),
    (
        r"^symbol %s,? version %s not defined in file %s with link time reference",
        (
            (
                "IBVERBS-SYMBOL-VERSION",
                r"symbol \w+,? version (?P<ver>" + RDMA_VERSION + r") not defined in file (?P<lib>\S+) with link time",
            ),
            (
                "IBVERBS-SYMBOL-VERSION",
                r"symbol \w+,? version \S+ not defined in file (?P<lib>" + RDMA_LIB + r") with link time",
            ),
            ("HOST-LD-SYSTEM-VERSION", r"symbol \w+,? version (?P<ver>" + SYSTEM_VERSION + r") not defined in file"),
            ("HOST-LD-VERSION-NOT-FOUND", r"symbol \w+,? version \S+ not defined in file \S+ with link time reference"),
        ),
        "dl-lookup.c (with a comma before glibc 2.27): the library that the object's relocation names lacks the versioned symbol",
    ),
    (
        r"^undefined symbol: %s%s%s$",
        (
            ("LD-UNDEFINED-NCCL-SYMBOL", r"undefined symbol: (?P<sym>" + NCCL_SYMBOL + r")"),
            ("HOST-LD-UNDEFINED-RDMA-SYMBOL", r"undefined symbol: (?P<sym>" + RDMA_SYMBOL + r")"),
            ("HOST-LD-UNDEFINED-SYMBOL", r"symbol lookup error: \S+: undefined symbol: (?P<sym>\S+)"),
        ),
        "dl-lookup.c _dl_lookup_symbol_x: no loaded object defines the symbol (a library older than the caller)",
    ),
    (
        r"^wrong ELF class: ELFCLASS(?:32|64)$",
        (("HOST-LD-WRONG-ELF", r"(?P<lib>\S+): wrong ELF class: ELFCLASS(?:32|64)"),),
        "dl-load.c open_verify: a 32-bit library for a 64-bit process or the reverse",
    ),
    (
        r"^(?:invalid ELF header|file too short|ELF file data encoding not (?:big|little)-endian|"
        r"ELF file OS ABI invalid|only ET_DYN and ET_EXEC can be loaded|ELF file version does not match current one|"
        r"ELF file version ident does not match current one|ELF file ABI version invalid|nonzero padding in e_ident|"
        r"ELF file's phentsize not the expected size)$",
        (("HOST-LD-WRONG-ELF", r"(?P<lib>\S+): {fmt}"),),
        "dl-load.c open_verify: the file is not a loadable ELF object for this machine",
    ),
    (
        r"^cannot allocate memory in static TLS block$",
        (("HOST-LD-STATIC-TLS", r"{fmt}"),),
        "dl-reloc.c _dl_allocate_static_tls: a dlopen()ed library needs initial-exec TLS and the surplus is used up",
    ),
    (
        r"^cannot enable executable stack as shared object requires$",
        (("HOST-LD-EXECSTACK", r"{fmt}"),),
        "dl-load.c _dl_map_object_from_fd: the library's PT_GNU_STACK asks for an executable stack",
    ),
    (
        r"^failed to map segment from shared object$",
        (("HOST-LD-MAP-SEGMENT", r"{fmt}"),),
        "dl-load.c / dl-map-segments.h: mmap of a segment failed (a noexec mount, or the address-space limit)",
    ),
    (
        r"^no version information available \(required by %s\)$",
        (("HOST-LD-NO-VERSION-INFO", r"(?P<lib>\S+): no version information available \(required by"),),
        "dl-version.c (a warning, the program goes on): the loaded library has no symbol versions at all",
    ),
)
LEFT_OUT_WHY = (
    "the loader's own allocation, descriptor and internal-consistency failures (cannot allocate ..., internal "
    "error, DYNAMIC LINKER BUG) and dlopen()/dlmopen() API misuse by the program: they name no library mismatch "
    "between the image and the host; 'cannot open shared object file' keeps LD-LIB-NOT-FOUND, which names the "
    "libraries whose absence has a known cause"
)
OCCASIONS = ("error while loading shared libraries", "symbol lookup error", "relocation error", "version lookup error")


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", REPO, *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


def tags() -> list[str]:
    out = []
    for t in git("tag").split():
        m = TAG.match(t)
        if m and int(m.group(1)) >= FIRST_MINOR:
            out.append((int(m.group(1)), t))
    return [t for _k, t in sorted(out)]


def _join(raw: str) -> str:
    return "".join(PIECE.findall(raw)).encode().decode("unicode_escape")


def _args(raw: str) -> list[str]:
    """make_string's arguments, split at top-level commas (not those inside string literals or parentheses)."""
    out, depth, cur = [], 0, ""
    for tok in ARG_TOKEN.findall(raw):
        if tok == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += tok == "("
        depth -= tok == ")"
        cur += tok
    out.append(cur.strip())
    return [re.sub(r'"\s+"', "", a) for a in out]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def messages(tag: str) -> dict[str, str]:
    """message -> file:line at this tag (the first site that prints it)."""
    found: dict[str, str] = {}
    for path in git("ls-tree", "-r", "--name-only", tag, "--", "elf").split():
        if not FILES.match(path):
            continue
        text = git("show", f"{tag}:{path}")
        for rx in (N_, FMT):
            for m in rx.finditer(text):
                msg = _join(m.group(1)).strip()
                if len(msg) >= 8 and msg not in found:
                    found[msg] = f"{path}:{_line(text, m.start())}"
        for m in MAKE.finditer(text):
            parts = [_join(a) if a.startswith('"') else CONSTANTS.get(a, "%s") for a in _args(m.group(1))]
            if "%s" in parts and any(len(p) > 3 for p in parts if p != "%s"):
                msg = "".join(parts)
                msg = re.sub(r"(?:%s)+$", "", msg) if msg.endswith("reference%s") else msg
                if msg not in found:
                    found[msg] = f"{path}:{_line(text, m.start())}"
    return found


def fmt_regex(fmt: str) -> str:
    out, pos = [], 0
    for m in re.finditer(r"%[sd]", fmt):
        out.append(re.escape(fmt[pos : m.start()]))
        out.append(r"\S+" if m.group(0) == "%s" else r"\d+")
        pos = m.end()
    out.append(re.escape(fmt[pos:]))
    return "".join(out)


def main() -> None:
    all_tags = tags()
    seen: dict[str, dict[str, object]] = {}
    for tag in all_tags:
        rel = tag.removeprefix("glibc-")
        for msg, site in messages(tag).items():
            row = seen.setdefault(msg, {"format": msg, "first": rel, "sites": []})
            row["last"] = rel
            sites = row["sites"]
            assert isinstance(sites, list)
            if sites and sites[-1][2] == site:
                sites[-1][1] = rel
            else:
                sites.append([rel, rel, site])
    rows, left = [], []
    for msg in sorted(seen):
        row = seen[msg]
        if msg in OCCASIONS:
            row["occasion"] = True
            rows.append(row)
            continue
        for rx, sigs, why in MAPPING:
            if re.search(rx, msg):
                row["why"] = why
                row["signatures"] = [{"signature": s, "regex": tpl.replace("{fmt}", fmt_regex(msg))} for s, tpl in sigs]
                rows.append(row)
                break
        else:
            left.append(msg)
    mapped = [r for r in rows if "signatures" in r]
    doc = {
        "source": f"bminor/glibc {all_tags[0]}..{all_tags[-1]} ({len(all_tags)} release tags): the loader's error "
        "messages in elf/dl-*.c, elf/dl-*.h, elf/rtld.c (N_() texts, _dl_exception_create_format formats, make_string "
        "pieces); generated by tools/host/gen_ld_messages.py",
        "confidence": "verified",
        "releases": len(all_tags),
        "found": len(seen),
        "mapped": len(mapped),
        "messages": rows,
        "left_out": {"why": LEFT_OUT_WHY, "formats": left},
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"{len(seen)} messages in {len(all_tags)} tags; {len(mapped)} mapped; {len(left)} left out -> {OUT}")


if __name__ == "__main__":
    main()
