"""Generate src/imgcheck/data/triage/fabric_messages.json: the messages the fabric layers below NCCL print, read
from their source release by release (not from threads), the way tools/nccl/gen_messages.py does for NCCL.

    python tools/upstreams/gen_fabric_messages.py --mirrors /work/.mirror

--mirrors holds bare git snapshots named owner+repo/repo (the `fetch` tool's layout: github:ofiwg/libfabric,
github:aws/aws-ofi-nccl, github:openucx/ucx). For a new release, fetch the newer snapshot and re-run: the tags walked
are the newest patch release of every minor series (TAG_SERIES below), so a new minor is picked up by itself.

What is read, per component:
- libfabric: FI_WARN / FI_WARN_ONCE / FI_WARN_SPARSE / FI_INFO and the providers' wrappers (EFA_WARN, EFA_INFO,
  EFA_WARN_ERRNO, VRB_WARN, VRB_WARN_ERRNO, VERBS_WARN, ...) and fprintf(stderr, ...) in core (src/, include/) and
  prov/efa, prov/rxr, prov/verbs, prov/shm, prov/util; the fi_errno.h FI_E* codes with fi_strerror's text; the EFA
  provider's errno table (prov/efa/src/efa_errno.h). libfabric prints a log line as
  "libfabric:<pid>:<time>:<prefix>:<prov>:<subsys>:<function>():<line><level> <message>" (src/log.c), so the
  function and line of each site are kept: a log line's own function():line names its site.
- aws-ofi-nccl: NCCL_OFI_WARN / NCCL_OFI_INFO (printed through NCCL's logger as "<function>:<line> NCCL WARN NET/OFI
  <message>").
- Open MPI, PRRTE, PMIx: every help-*.txt topic (the banners opal_show_help prints; Open MPI 5 keeps the runtime's in
  PRRTE and PMIx): the topic's first line is what a log shows, the rest of its text decides the condition class and
  whether the banner ends the job.
- UCX: ucs_error / ucs_warn / ucs_fatal in src/ (printed "<file>:<line> UCX  ERROR <message>", ucs_fatal as
  "<file>:<line> Fatal: <message>" before it aborts), ucs_status_string's texts (status.c), and the configure script's
  AC_MSG_WARN / AC_MSG_ERROR / AC_MSG_NOTICE texts and AC_CHECK_LIB checks of configure.ac, config/m4 and every
  src/**/configure.m4 (a build log of an image shows them).

For each site the code around it is read for the condition behind it: the library call whose failure leads to the
message (the nearest call assigned or tested in the few lines above), and, from the message's own words and that
call, a condition class (host memory, a device the process cannot open, a peer that is unreachable or gone, fork,
a transport left out of the build). At triage time the errno the line prints refines it (imgcheck.triage.
fabric_catalog). Linux errno names and texts are glibc's (os.strerror on the generator's host, the text the
libraries print via strerror); fi_strerror's own codes come from the source.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from git_read import Mirror, balanced, split_args, version_key  # noqa: E402
from printf_formats import SPEC, format_of, pieces  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/fabric_messages.json"
# %m is glibc's strerror(errno) (UCX and libfabric use it): printed like a %s
MIN_FIXED = 10  # a format with less fixed text would match almost any line: left out (counted)

COMPONENTS = {
    "libfabric": {
        "mirror": "ofiwg+libfabric",
        "repo": "ofiwg/libfabric",
        "tags": r"v(\d+)\.(\d+)\.(\d+)",
        "since": (1, 9),
        "paths": ("src", "include", "prov/efa", "prov/rxr", "prov/verbs", "prov/shm", "prov/util"),
        # the logging macros and what each adds around the format: (levels, suffix appended for *_ERRNO forms)
        "calls": {
            "FI_WARN": "warn",
            "FI_WARN_ONCE": "warn",
            "FI_WARN_SPARSE": "warn",
            "FI_INFO": "info",
            "EFA_WARN": "warn",
            "EFA_WARN_ONCE": "warn",
            "EFA_INFO": "info",
            "VRB_WARN": "warn",
            "VRB_INFO": "info",
            "VERBS_WARN": "warn",
            "VERBS_INFO": "info",
            "RXR_WARN": "warn",
            "SMR_WARN": "warn",
            "EFA_WARN_ERRNO": "warn",
            "EFA_INFO_ERRNO": "info",
            "EFA_WARN_FI_ERRNO": "warn",
            "VRB_WARN_ERRNO": "warn",
            "VRB_WARN_ERR": "warn",
            "VERBS_INFO_ERRNO": "info",
            "fprintf": "stderr",
        },
        # *_ERRNO(subsys, "fn", err) print "fn: <strerror>(<errno>)" (EFA: prov/efa/src/efa_prov.h; verbs: verbs_ofi.h)
        "errno_suffix": {
            "EFA_WARN_ERRNO": ": %s(%d)",
            "EFA_INFO_ERRNO": ": %s(%d)",
            "EFA_WARN_FI_ERRNO": ": %s(%d)",
            "VRB_WARN_ERRNO": ": %s (%d)",
            "VRB_WARN_ERR": ": %s (%d)",
            "VERBS_INFO_ERRNO": ": %s(%d)",
        },
    },
    "aws-ofi-nccl": {
        "mirror": "aws+aws-ofi-nccl",
        "repo": "aws/aws-ofi-nccl",
        "tags": r"v(\d+)\.(\d+)\.(\d+)(?:-?aws)?",
        "since": (1, 0),
        "paths": ("src", "include"),
        "calls": {"NCCL_OFI_WARN": "warn", "NCCL_OFI_INFO": "info"},
        "errno_suffix": {},
    },
    "ucx": {
        "mirror": "openucx+ucx",
        "repo": "openucx/ucx",
        "tags": r"v(\d+)\.(\d+)\.(\d+)",
        "since": (1, 6),
        "paths": ("src",),
        "calls": {"ucs_error": "error", "ucs_warn": "warn", "ucs_fatal": "fatal"},
        "errno_suffix": {},
    },
}

# calls whose failure the message reports: the nearest of these assigned or tested above the site
CALL = re.compile(
    r"\b((?:ibv|efadv|mlx5dv|rdma|fi|ofi|efa|rxr|vrb|smr|ucs|uct|ucp|cu|cuda|nccl_ofi|gdr|hwloc|pthread)_\w+|"
    r"open|mmap|munmap|madvise|shm_open|ftruncate|posix_memalign|malloc|calloc|realloc|ioctl|socket|bind|connect|"
    r"listen|accept|getaddrinfo|dlopen|dlsym|fork|madvise|setrlimit|getrlimit|read|write|sendmsg|recvmsg|"
    r"process_vm_readv|process_vm_writev|cuMemGetHandleForAddressRange|cuPointerGetAttribute)\s*\("
)
LOG_CALLS = re.compile(
    r"_(?:WARN|INFO|DBG|TRACE|ERROR)\w*$|^ucs_(?:error|warn|diag|debug|trace\w*|log\w*|status_string)$|strerror|"
    r"^fi_tostr|^ofi_(?:log|dbg)|^(?:read|write)$"  # helpers that format the message, not the call that failed
)


ALLOC_CALLS = ("malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "mmap")
PEER_CALLS = re.compile(
    r"^(?:fi_av_insert\w*|ofi_av_insert\w*|ibv_create_ah|efa_ah_alloc|rdma_resolve_(?:addr|route))$"
)


def classify(fmt: str, call: str | None) -> str:
    """The condition class of a message from its own words, and from the call that failed where the words name no
    condition (the errno a line prints refines it at triage time). Classes: host-memory, device-access, no-provider,
    peer-unreachable, peer-gone, fork, build, registration, other."""
    text = fmt.lower()
    c = (call or "").lower()
    if re.search(r"squelch|on windows", text):  # errors the provider swallows on purpose; another platform
        return "other"
    if re.search(r"\bfork\b|fork_safe|fork_init|ibv_fork|rdmav_fork|fi_efa_fork", text):
        return "fork"
    if re.search(r"out of memory|cannot allocate|memlock|rlimit_memlock|locked memory|no memory|enomem", text):
        return "host-memory"
    if re.search(
        r"\b(?:alloc|allocate|allocating) (?:memory|failed|failure|error)|memory alloc\w* fail|\b(?:alloc\w*|calloc) error",
        text,
    ):
        return "host-memory"
    if c in ALLOC_CALLS and re.search(r"alloc|memory", text) and re.search(r"fail|error|cannot|unable|could not", text):
        return "host-memory"
    if re.search(
        r"ibv_open_device|failed (?:to )?open device|open_device|ibv_get_device_list|/dev/infiniband|uverbs", text
    ):
        return "device-access"
    if c in ("ibv_open_device", "ibv_get_device_list") or (
        c == "open" and re.search(r"device|/dev/infiniband|uverbs|sysfs", text)
    ):
        return "device-access"
    if re.search(
        r"fi_getinfo|output empty list|no provider|couldn't find any optimal provider|no data available", text
    ):
        return "no-provider"
    if re.search(
        r"insert\w*.{0,40}(?:address vector|\bav\b)|(?:\bav\b|address vector) insert|ibv_create_ah|create ah|"
        r"address handle|handshake|unreachable|unresponsive|security group|timed out|connection refused|firewall|"
        r"resolve_route|resolve_addr",
        text,
    ) or PEER_CALLS.match(c):
        return "peer-unreachable"
    if re.search(
        r"reset by (?:remote )?peer|peer (?:process )?(?:exited|closed|aborted)|remote (?:peer|side) abort|"
        r"bad dest|queue pair \(qp\) number|qp does not exist|unknown peer",
        text,
    ):
        return "peer-gone"
    if re.search(r"reg(?:ister)?(?:_| )?mr|memory registration|register memory|dmabuf|dma-buf", text) or re.match(
        r"^(?:ibv_reg\w*|fi_mr_reg\w*|ofi_mr_reg\w*|efa_mr_reg\w*)$", c
    ):
        return "registration"
    return "other"


# ---- C format strings ---------------------------------------------------------------------------------------


def regex_of(fmt: str, flexible_space: bool = False) -> tuple[str, int]:
    """A regex for the first line of what printf(fmt) prints (searched, not anchored: logs add prefixes), and how many
    fixed characters it holds."""
    fmt = fmt.strip("\n").split("\n")[0]
    out, fixed = [], 0
    for lit, conversion in pieces(fmt):
        if conversion is not None:
            out.append(re.escape(lit) + conversion)
            fixed += len(lit.strip())
            continue
        lit = lit.rstrip()
        end = lit.rstrip(".!")
        # a final full stop is often cut when a line is quoted (an issue title, a "|"-joined summary)
        out.append(re.escape(end) + ("(?:" + re.escape(lit[len(end) :]) + ")?" if end != lit else ""))
        fixed += len(lit.strip())
    rx = "".join(out)
    if flexible_space:  # configure aligns its summary with runs of spaces
        rx = rx.replace("\\ ", "\\s+")
    return rx, fixed


def function_at(lines: list[str], idx: int) -> str | None:
    """The C function whose body holds line idx: the nearest line above that starts a definition at column 0."""
    for j in range(idx, -1, -1):
        ln = lines[j]
        if not ln or ln[0] in " \t#}/*{":
            continue
        m = re.match(r"(?:[\w\s\*]+?[\s\*])?(\w+)\s*\(", ln)
        if m and not ln.rstrip().endswith(";") and m.group(1) not in ("if", "for", "while", "switch", "return"):
            sym = re.search(r"DEFAULT_SYMVER_PRE\((\w+)\)", ln)
            return sym.group(1) + "_" if sym else m.group(1)  # libfabric's versioned symbols: __func__ is name_
    return None


def call_before(src: str, at: int) -> str | None:
    """The library call whose failure the message at `at` reports: the last non-logging call in the few lines
    above the site (its `ret = call(...)` or `if (call(...))`)."""
    window = src[max(0, at - 700) : at]
    # stop at the previous statement block's end so an unrelated earlier call is not named
    calls = [m.group(1) for m in CALL.finditer(window) if not LOG_CALLS.search(m.group(1))]
    return calls[-1] if calls else None


def scan_c(text: str, path: str, calls: dict[str, str], suffixes: dict[str, str]) -> list[dict]:
    names = "|".join(sorted(calls, key=len, reverse=True))
    rx = re.compile(rf"\b({names})\s*\(")
    lines = text.split("\n")
    out = []
    for m in rx.finditer(text):
        name = m.group(1)
        line_start = text.rfind("\n", 0, m.start()) + 1
        head = text[line_start : m.start()]
        if head.lstrip().startswith(("#define", "//", "*", "/*")):
            continue
        end = balanced(text, m.end() - 1, "(", ")")
        args = split_args(text[m.end() : end - 1])
        if name == "fprintf":
            if len(args) < 2 or args[0].strip() != "stderr":
                continue
            fmt = format_of(args[1])
        elif name in suffixes:
            if len(args) < 2:
                continue
            fn = format_of(args[1])
            fmt = None if fn is None else fn + suffixes[name]
        elif name == "NCCL_OFI_INFO":
            fmt = format_of(args[1]) if len(args) > 1 else None
        elif name.startswith(("NCCL_OFI", "ucs_")):
            fmt = format_of(args[0]) if args else None
        elif name.startswith("FI_"):
            fmt = format_of(args[2]) if len(args) > 2 else None
        else:  # EFA_WARN(subsys, fmt, ...) and the other provider wrappers
            fmt = format_of(args[1]) if len(args) > 1 else None
        lineno = text.count("\n", 0, m.start()) + 1
        # the code right after the site ends the process: the provider gives up (abort(), assert, exit)
        after = text[end : end + 400].split("}", 1)[0]
        aborts = bool(re.search(r"\babort\s*\(\s*\)|\bexit\s*\(\s*[1-9-]", after))
        out.append(
            {
                "aborts": aborts,
                "level": calls[name],
                "format": fmt,
                "site": f"{path}:{lineno}",
                "function": function_at(lines, lineno - 1),
                "call": call_before(text, m.start()),
            }
        )
    return out


# ---- configure (UCX) ------------------------------------------------------------------------------------------
AC = re.compile(r"\b(AC_MSG_WARN|AC_MSG_ERROR|AC_MSG_NOTICE|AC_CHECK_LIB)\(\s*\[?")


def scan_configure(text: str, path: str) -> list[dict]:
    out = []
    for m in AC.finditer(text):
        end = balanced(text, m.end() - (2 if text[m.end() - 1] == "[" else 1), "(", ")")
        body = text[m.end() - (1 if text[m.end() - 1] == "[" else 0) : end - 1]
        lineno = text.count("\n", 0, m.start()) + 1
        kind = m.group(1)
        if kind == "AC_CHECK_LIB":
            parts = [p.strip().strip("[]") for p in split_args(body)]
            if len(parts) < 2 or not re.fullmatch(r"[\w.+-]+", parts[0]) or not re.fullmatch(r"\w+", parts[1]):
                continue
            fmt = f"checking for {parts[1]} in -l{parts[0]}... %s"
            level = "check"
        else:
            first = body.split("],", 1)[0] if kind != "AC_MSG_NOTICE" else body
            first = first.strip().lstrip("[").rstrip("]").strip()
            # shell expansions ($var, $(cmd), ${var}) print whatever they hold: a %s
            fmt = re.sub(r"\$\((?:[^()]|\([^()]*\))*\)|\$\{\w+\}|\$\w+", "%s", first)
            fmt = re.sub(r"\s+", " ", fmt)
            prefix = {"AC_MSG_WARN": "configure: WARNING: ", "AC_MSG_ERROR": "configure: error: "}.get(
                kind, "configure: "
            )
            fmt = prefix + fmt
            level = {"AC_MSG_WARN": "warn", "AC_MSG_ERROR": "error"}.get(kind, "notice")
        out.append(
            {"level": level, "format": fmt, "site": f"{path}:{lineno}", "function": None, "call": None, "kind": kind}
        )
    return out


def build_class(fmt: str, call: str | None, level: str, component: str) -> str:
    if level == "check":
        lib = re.search(r"-l(\w+)", fmt)
        # libibverbs absent when UCX was configured: no IB transport at all (rdmacm, mlx5, efa, CUDA and gdrcopy are
        # optional: a "no" there is an ordinary build for another fabric, not a failure)
        return "build" if lib and lib.group(1) == "ibverbs" else "other"
    if fmt.startswith("configure: "):
        if level == "error" and re.search(r"(?i)verbs|rdmacm|mlx5|efa|infiniband|\bib\b|rdma", fmt):
            return "build"  # the build stopped: a transport was requested and its library is missing
        if level == "warn" and re.search(r"(?i)(?:verbs|rdmacm|mlx5|efa|infiniband|rdma).*not found", fmt):
            return "build"
        if level == "notice" and re.search(r"\bIB modules", fmt):
            return "build"
        return "other"
    return classify(fmt, call)


def series_tags(mirror: Mirror, pattern: str, since: tuple[int, int]) -> list[str]:
    """The newest patch release of each minor series since `since` (release candidates excluded by the pattern)."""
    best: dict[tuple[int, int], tuple[tuple[int, ...], str]] = {}
    for t in mirror.tags(pattern):
        v = version_key(t)
        if tuple(v[:2]) < since:
            continue
        key = (v[0], v[1])
        if key not in best or v > best[key][0] or (v == best[key][0] and not t.endswith("aws")):
            best[key] = (v, t)
    return [best[k][1] for k in sorted(best)]


def release_name(tag: str) -> str:
    return re.sub(r"-?aws$", "", tag.lstrip("v"))


def walk(mirrors: str, name: str, spec: dict) -> tuple[list[str], dict]:
    mirror = Mirror(os.path.join(mirrors, spec["mirror"], "repo"))
    tags = series_tags(mirror, spec["tags"], spec["since"])
    per: list[tuple[str, dict]] = []
    for tag in tags:
        print(f"{name} {tag}", file=sys.stderr)
        found: dict[tuple[str, str], dict] = {}
        paths = set()
        for call in spec["calls"]:
            paths.update(
                p for p in mirror.files_with(tag, call + "(", spec["paths"]) if p.endswith((".c", ".h", ".cpp", ".cc"))
            )
        paths = {p for p in paths if "/test" not in p and not p.startswith(("test", "fabtests"))}
        texts = mirror.show_many(tag, sorted(paths))
        rows = []
        for path, text in texts.items():
            rows += scan_c(text, path, spec["calls"], spec["errno_suffix"])
        if name == "ucx":
            conf = [
                p
                for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n")
                if p == "configure.ac" or (p.endswith(".m4") and (p.startswith("config/m4/") or p.startswith("src/")))
            ]
            for path, text in mirror.show_many(tag, conf).items():
                rows += scan_configure(text, path)
        for r in rows:
            # a trailing newline is how the call ends the line, not part of the message
            key = (r["level"], (r["format"] or "").strip("\n") or "<dynamic>")
            found.setdefault(key, r)
        per.append((release_name(tag), found))
    versions = [v for v, _ in per]
    messages, left = [], {"dynamic": 0, "too little fixed text": 0, "info not about a failure": 0}
    keys = sorted({k for _, f in per for k in f})
    failure_info = re.compile(
        r"(?i)fail|error|unable|cannot|can't|could not|couldn't|not supported|unsupported|disabl|invalid|timeout|"
        r"timed out|abort|mismatch|not found|refus|denied|insufficient|exceed|no \w+ (?:found|available)|empty"
    )
    for level, fmt in keys:
        present = [(v, f[(level, fmt)]) for v, f in per if (level, fmt) in f]
        if fmt == "<dynamic>":
            left["dynamic"] += 1
            continue
        if level in ("info", "notice") and not (failure_info.search(fmt) or re.search(r"modules:", fmt)):
            left["info not about a failure"] += 1
            continue
        regex, fixed = regex_of(fmt, flexible_space=level in ("notice", "check") or fmt.startswith("configure: "))
        if fixed < MIN_FIXED or len(re.findall(r"[A-Za-z]", SPEC.sub("", fmt))) < 6:  # e.g. the logger's own prefix
            left["too little fixed text"] += 1
            continue
        sites: list[list] = []
        for v, r in present:
            if sites and sites[-1][2] == r["site"] and versions.index(sites[-1][1]) + 1 == versions.index(v):
                sites[-1][1] = v
            else:
                sites.append([v, v, r["site"], r["function"]])
        newest = present[-1][1]
        messages.append(
            {
                "component": name,
                "level": level,
                "format": fmt.strip("\n"),
                "regex": regex,
                "first": present[0][0],
                "last": present[-1][0],
                "sites": sites,
                "call": newest["call"],
                "class": build_class(fmt, newest["call"], level, name),
                "aborts": any(r.get("aborts") for _v, r in present),
            }
        )
    total = len(keys)
    return versions, {
        "repo": spec["repo"],
        "releases": versions,
        "paths": list(spec["paths"]) + (["configure.ac", "config/m4", "src/**/configure.m4"] if name == "ucx" else []),
        "formats": total,
        "encoded": len(messages),
        "left_out": left,
        "messages": messages,
    }


# ---- Open MPI / PRRTE / PMIx help topics (opal_show_help / prte_show_help / pmix_show_help banners) -------------
HELP_COMPONENTS = {
    "open-mpi": {"mirror": "open-mpi+ompi", "repo": "open-mpi/ompi", "since": (1, 10)},
    "prrte": {"mirror": "openpmix+prrte", "repo": "openpmix/prrte", "since": (2, 0)},
    "pmix": {"mirror": "openpmix+openpmix", "repo": "openpmix/openpmix", "since": (3, 0)},
}
FATAL = re.compile(r"(?i)\babort|this is an error|will now (?:abort|exit|terminate)|cannot continue|must terminate")


def help_topics(text: str):
    """(topic, line, headline, body) of a help-*.txt file: the headline is the topic's first text line, what a log
    shows first of the banner."""
    topic, lines, start = None, [], 0
    for n, line in enumerate(text.splitlines() + ["[__end__]"], 1):
        m = re.match(r"^\[([^\]]+)\]\s*$", line)
        if m:
            if topic is not None:
                body = [x for x in lines if x.strip() and not x.startswith("#")]
                if body:
                    yield topic, start, body[0].strip(), "\n".join(body)
            topic, lines, start = m.group(1), [], n
        elif not line.startswith("#"):
            lines.append(line)


def help_class(body: str) -> str:
    """A banner's condition class from its whole text (the headline rarely says it)."""
    t = body.lower()
    if re.search(
        r"unable to reach each other|at least one mpi process is unreachable|"
        r"no .{0,40}(?:component|transport|btl|pml|mtl).{0,40}(?:available|found|selected|able to be opened)|"
        r"no components were (?:able to be opened|found)|could not find any .{0,20}(?:usable|relevant)",
        t,
    ):
        return "no-transport"
    # the registered/locked memory limits (a banner listing "ran out of memory" among guesses is not one)
    if re.search(r"locked memory|registered memory|memlock|register.{0,20}physical memory|cannot allocate memory", t):
        return "host-memory"
    if re.search(r"fork\(\) (?:support|system call)|ibv_fork_init|fork support", t):
        return "fork"
    if re.search(r"failed to open .{0,40}device|unable to open .{0,40}device|permission denied", t):
        return "device-access"
    if re.search(r"failed to tcp connect|unable to connect|connection refused|no route to host|unreachable", t):
        return "peer-unreachable"
    return "other"


def walk_help(mirrors: str, name: str, spec: dict) -> dict:
    mirror = Mirror(os.path.join(mirrors, spec["mirror"], "repo"))
    tags = series_tags(mirror, r"v(\d+)\.(\d+)\.(\d+)", spec["since"])
    per = []
    for tag in tags:
        print(f"{name} {tag}", file=sys.stderr)
        files = [
            p
            for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n")
            if re.search(r"(?:^|/)help-[\w.-]+\.txt$", p) and "/test" not in p
        ]
        found = {}
        for path, text in mirror.show_many(tag, files).items():
            for topic, line, head, body in help_topics(text):
                found.setdefault((os.path.basename(path), topic), (f"{path}:{line}", head, body))
        per.append((release_name(tag), found))
    versions = [v for v, _ in per]
    keys = sorted({k for _, f in per for k in f})
    messages, left = [], {"headline too short or only a conversion": 0}
    for key in keys:
        present = [(v, f[key]) for v, f in per if key in f]
        site, head, body = present[-1][1]
        regex, fixed = regex_of(head)
        if fixed < 24:
            left["headline too short or only a conversion"] += 1
            continue
        sites: list[list] = []
        for v, (st, _h, _b) in present:
            if sites and sites[-1][2] == st and versions.index(sites[-1][1]) + 1 == versions.index(v):
                sites[-1][1] = v
            else:
                sites.append([v, v, st, f"{key[0]}[{key[1]}]"])
        messages.append(
            {
                "component": name,
                "level": "banner",
                "format": head,
                "regex": regex,
                "first": present[0][0],
                "last": present[-1][0],
                "sites": sites,
                "call": None,
                "class": help_class(body),
                "aborts": bool(FATAL.search(body)),
            }
        )
    # topics of different files can open with the same line: one entry, every site, the gravest reading
    merged: dict[str, dict] = {}
    for m in messages:
        have = merged.get(m["format"])
        if have is None:
            merged[m["format"]] = m
            continue
        have["sites"] += m["sites"]
        have["aborts"] = have["aborts"] or m["aborts"]
        if have["class"] == "other":
            have["class"] = m["class"]
        have["first"] = min(have["first"], m["first"], key=versions.index)
        have["last"] = max(have["last"], m["last"], key=versions.index)
    left["same headline as another topic (one entry, all sites)"] = len(messages) - len(merged)
    messages = list(merged.values())
    return {
        "repo": spec["repo"],
        "releases": versions,
        "paths": ["**/help-*.txt"],
        "formats": len(keys),
        "encoded": len(messages),
        "left_out": left,
        "messages": messages,
    }


def fi_errno_table(mirrors: str) -> dict:
    """fi_strerror's own codes (FI_ERRNO_OFFSET and up) from include/rdma/fi_errno.h and src/fabric.c of the newest
    release; the lower codes are the system errno values (FI_ENOMEM is ENOMEM)."""
    m = Mirror(os.path.join(mirrors, "ofiwg+libfabric", "repo"))
    tag = series_tags(m, COMPONENTS["libfabric"]["tags"], (1, 9))[-1]
    head = m.show(tag, "include/rdma/fi_errno.h") or ""
    fabric = m.show(tag, "src/fabric.c") or ""
    codes = {}
    for name, value in re.findall(r"\b(FI_E[A-Z0-9]+)\s*=\s*(\d+|FI_ERRNO_OFFSET)", head):
        codes[name] = 256 if value == "FI_ERRNO_OFFSET" else int(value)
    texts = dict(re.findall(r"\[(FI_E[A-Z0-9]+) - FI_ERRNO_OFFSET\]\s*=\s*\"([^\"]+)\"", fabric))
    aliases = re.findall(r"#define\s+(FI_E[A-Z0-9]+)\s+(E[A-Z0-9]+)\b", head)
    return {
        "source": f"ofiwg/libfabric@{tag}:include/rdma/fi_errno.h, src/fabric.c (fi_strerror)",
        "codes": {str(v): [k, texts.get(k)] for k, v in sorted(codes.items(), key=lambda kv: kv[1])},
        "system_aliases": sorted({a for a, _ in aliases}),
    }


def efa_errno_table(mirrors: str) -> dict:
    """The EFA provider's own error codes (prov/efa/src/efa_errno.h), every wording of every release walked."""
    m = Mirror(os.path.join(mirrors, "ofiwg+libfabric", "repo"))
    rows: dict[int, dict] = {}
    for tag in series_tags(m, COMPONENTS["libfabric"]["tags"], (1, 9)):
        text = m.show(tag, "prov/efa/src/efa_errno.h")
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            mm = re.match(r"\s*_\(\s*(\d+),\s*(\w+),\s*(.*?)\)\s*\\?\s*$", line)
            if not mm:
                continue
            code = int(mm.group(1))
            row = rows.setdefault(code, {"name": mm.group(2), "texts": [], "first": release_name(tag)})
            if mm.group(3) not in row["texts"]:
                row["texts"].append(mm.group(3))
            row["last"] = release_name(tag)
            row["site"] = f"prov/efa/src/efa_errno.h:{lineno}"
    return {"source": "ofiwg/libfabric prov/efa/src/efa_errno.h, every minor series since 1.9", "codes": rows}


def ucs_status_table(mirrors: str) -> dict:
    """UCX's status codes (src/ucs/type/status.h) with the text ucs_status_string() prints (status.c), newest release."""
    m = Mirror(os.path.join(mirrors, "openucx+ucx", "repo"))
    tag = series_tags(m, COMPONENTS["ucx"]["tags"], COMPONENTS["ucx"]["since"])[-1]
    values = dict(
        re.findall(r"\b(UCS_(?:ERR_\w+|OK|INPROGRESS))\s*=\s*(-?\d+)", m.show(tag, "src/ucs/type/status.h") or "")
    )
    texts = dict(re.findall(r"case (UCS_\w+):\s*return \"([^\"]+)\"", m.show(tag, "src/ucs/type/status.c") or ""))
    return {
        "source": f"openucx/ucx@{tag}:src/ucs/type/status.h, src/ucs/type/status.c (ucs_status_string)",
        "codes": {values[k]: [k, texts[k]] for k in texts if k in values},
    }


def system_errno() -> dict:
    return {
        "source": "glibc strerror (os.strerror on the generator's host): the text libfabric, UCX and aws-ofi-nccl print",
        "codes": {str(n): [name, os.strerror(n)] for n, name in sorted(errno.errorcode.items()) if n < 200},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    comps = {}
    for name, spec in COMPONENTS.items():
        _, comps[name] = walk(a.mirrors, name, spec)
    for name, spec in HELP_COMPONENTS.items():
        comps[name] = walk_help(a.mirrors, name, spec)
    data = {
        "source": "generated by tools/upstreams/gen_fabric_messages.py from ofiwg/libfabric, aws/aws-ofi-nccl and "
        "openucx/ucx release tags (the newest patch of every minor series)",
        "confidence": "verified",
        "components": comps,
        "errno": {
            "system": system_errno(),
            "fi": fi_errno_table(a.mirrors),
            "efa": efa_errno_table(a.mirrors),
            "ucs": ucs_status_table(a.mirrors),
        },
    }
    Path(a.out).write_text(json.dumps(data, indent=0, separators=(",", ":"), sort_keys=False) + "\n")
    for name, c in comps.items():
        print(
            f"{name}: {len(c['releases'])} releases, {c['formats']} formats, {c['encoded']} encoded, "
            f"left out {c['left_out']}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
