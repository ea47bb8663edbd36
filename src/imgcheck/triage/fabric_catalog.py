"""The fabric layers' own message catalogs (data/triage/fabric_messages.json, generated from every minor release of
libfabric, aws-ofi-nccl and UCX by tools/upstreams/gen_fabric_messages.py): recognise a line any of them prints, name
its component, source site and the condition behind it (the call that failed, the errno the line carries), so the
first failure is put on the right layer.

The condition class decides which signature (signatures.json, FABRIC-*) the line is counted as: memory and host
limits are never read as a fabric fault, a device the process cannot open is not "no EFA device", a peer that is
gone is a consequence of that peer's own failure. Errno values are read generically (glibc's errno table, fi_errno.h's
FI_E* codes, the EFA provider's efa_errno.h), never per thread."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..versions.ecosystems import numeric_tuple

KEEP = 30  # distinct messages kept per triage run; the rest are counted
# shortest texts searched for anywhere in a line: shorter ones ("Success", "I/O error") would match ordinary words
_MIN_CODE_TEXT = 20  # an EFA provider code's text
_MIN_STRERROR_TEXT = 12  # a strerror text
_MIN_GATE = 8  # the fixed text of a prefix-less (fprintf / help banner) format
_BUCKET = 4
_SPEC = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*[diouxXeEfgGcspm%]")  # %m: glibc's strerror(errno)

# where each component's message starts in a log line, and the site the line itself names
_LIBFABRIC = re.compile(
    r"libfabric:[^<]*?:(?P<prov>[\w;]*):(?P<subsys>\w+):(?:[\w:]*?)(?P<fn>\w+)\(\):(?P<line>\d+)<(?P<level>\w+)> "
    r"(?P<msg>.*)"
)
_OFI = re.compile(r"(?:(?P<fn>\w+):(?P<line>\d+) NCCL (?P<level>WARN|INFO) )?NET/OFI (?P<msg>.*)")
_UCX = re.compile(r"(?:(?P<file>[\w.-]+\.c):(?P<line>\d+)\s+)?UCX\s+(?P<level>ERROR|WARN)\s+(?P<msg>.*)")
_UCX_FATAL = re.compile(r"(?P<file>[\w.-]+\.c):(?P<line>\d+)\s+(?P<level>Fatal): (?P<msg>.*)")  # ucs_fatal
_CONFIGURE = re.compile(r"(?P<msg>(?:configure: |checking for ).*)")

# the level a log line shows -> the catalog's level
_LEVELS = {"warn": "warn", "error": "warn", "info": "info", "WARN": "warn", "ERROR": "error", "INFO": "info"}
_LEVELS["Fatal"] = "fatal"

# signature each condition class is counted as (absent: the line is named in the notes only)
CLASS_SIGNATURE = {
    "host-memory": "FABRIC-HOST-MEMORY",
    "device-access": "FABRIC-DEVICE-OPEN",
    "peer-unreachable": "FABRIC-PEER-UNREACHABLE",
    "peer-gone": "FABRIC-PEER-GONE",
    "fork": "FABRIC-FORK",
    "build": "FABRIC-BUILD-NO-TRANSPORT",
    "provider-abort": "FABRIC-PROVIDER-ABORT",
    "no-transport": "FABRIC-NO-TRANSPORT",
}

# errno names -> condition class, read generically from the value a line prints (system errno or FI_E* code)
_ERRNO_CLASS = {
    "ENOMEM": "host-memory",
    "FI_ENOMR": "host-memory",
    "ETIMEDOUT": "peer-unreachable",
    "ECONNREFUSED": "peer-unreachable",
    "EHOSTUNREACH": "peer-unreachable",
    "ENETUNREACH": "peer-unreachable",
    "FI_EFIREWALLADDR": "peer-unreachable",
    "ECONNRESET": "peer-gone",
    "EPIPE": "peer-gone",
    # UCX's status codes (ucs_status_string)
    "UCS_ERR_NO_MEMORY": "host-memory",
    "UCS_ERR_UNREACHABLE": "peer-unreachable",
    "UCS_ERR_ENDPOINT_TIMEOUT": "peer-unreachable",
    "UCS_ERR_REJECTED": "peer-unreachable",
    "UCS_ERR_CONNECTION_RESET": "peer-gone",
}
_DEVICE_ERRNOS = {"ENOENT", "EACCES", "EPERM", "ENODEV", "ENXIO", "UCS_ERR_NO_DEVICE"}
# EFA provider error names (efa_errno.h) -> condition class: the provider's own words decide
_EFA_CLASS = (
    (re.compile(r"UNRESP|UNREACH|HANDSHAKE|AV_INSERT"), "peer-unreachable"),
    (re.compile(r"BAD_DEST_QPN|REMOTE_ERROR_ABORT|UNKNOWN_PEER"), "peer-gone"),
    (re.compile(r"^OOM$|INTERNAL_RX_BUF_POST"), "host-memory"),
)
_PEER_GONE_TEXT = re.compile(
    r"(?i)(?:invalid|bad) (?:receiver |destination )?queue pair (?:\(QPN?\) )?number|QP does not exist"
)

_NUMBERS = (
    re.compile(r"(?i)\b(?:errno|err|ret|rc|error|status)\b\s*[:=]?\s*(-?\d+)\b"),
    re.compile(r"[A-Za-z][A-Za-z ,'-]{3,}\s*\(\s*(-?\d+)\s*\)"),  # strerror text followed by (code)
    re.compile(r"\bfi_\w+(?:\(\))?:? (-\d+)\b"),  # "fi_getinfo: -61 (No data available)"
)
_PROV_ERRNO = re.compile(r"(?i)\b(?:prov_errno|EFA internal error|Error)\s*[:=]?\s*(?:[^()\d-]*\()?\s*(\d{4})\b")


@dataclass(frozen=True)
class Message:
    component: str
    level: str
    format: str
    first: str
    last: str
    sites: tuple[tuple[str, str, str, str | None], ...]  # (first, last, path:line, function)
    call: str | None
    klass: str
    aborts: bool  # the code right after the site aborts the process
    pattern: re.Pattern[str]
    gate: str
    fixed: int


@dataclass(frozen=True)
class Errno:
    value: int
    name: str
    text: str
    table: str  # "system", "fi", "efa" or "ucs"


@dataclass(frozen=True)
class Recognised:
    message: Message | None  # None: a component line whose format the catalog lacks (or an EFA errno text alone)
    component: str
    site: str | None
    releases: tuple[str, str] | None
    klass: str
    errnos: tuple[Errno, ...]
    by_site: bool = False

    @property
    def informational(self) -> bool:
        """An INFO-level line: providers probe and report failures they recover from; named, never counted."""
        m = self.message
        if m is not None and m.level == "banner":
            return not m.aborts  # a help banner the job survives (another transport is used, a warning) is context
        return m is not None and m.level in ("info", "notice") and self.klass != "build"

    @property
    def signature(self) -> str | None:
        return CLASS_SIGNATURE.get(self.klass)

    def condition(self) -> str:
        return condition_words(self)

    def words(self) -> str:
        m = self.message
        if m is None and self.site:
            head = f"a {self.component} code (the table at {self.site})"
        elif m is None:
            rel = load().components.get(self.component, {}).get("releases") or ["?"]
            head = (
                f"a {self.component} line that no format of {self.component} {rel[0]}..{rel[-1]} holds (a newer "
                "release, a vendor build or an edited line)"
            )
        else:
            span = f"{self.releases[0]}..{self.releases[1]}" if self.releases else "?"
            fn = _function_at(m, self.site)
            if m.level == "banner":  # a help-file topic: the file[topic] is its name
                where = f"{self.site}" + (f", topic {fn}" if fn else "")
            else:
                where = f"{self.site}" + (f" in {fn}()" if fn else "")
            head = f'{self.component} {m.level.upper()} "{m.format.splitlines()[0].strip()}" is printed at {where} ({self.component} {span})'
            if m.call:
                head += f", after {m.call}() failed"
        return f"{head}; condition: {self.condition()}"


@dataclass(frozen=True)
class Catalog:
    components: dict[str, dict[str, Any]]
    buckets: dict[tuple[str, str], tuple[Message, ...]]  # (component, first characters of the fixed prefix)
    open_start: dict[str, tuple[Message, ...]]
    bare: tuple[Message, ...]  # printed with fprintf(stderr): no prefix, found by their fixed text
    bare_gate: re.Pattern[str] | None
    system: dict[int, tuple[str, str]]
    fi: dict[int, tuple[str, str]]
    efa: dict[int, tuple[str, tuple[str, ...], str]]  # code -> (name, texts, site)
    efa_texts: re.Pattern[str] | None
    efa_by_text: dict[str, int]
    strerror_texts: re.Pattern[str] | None  # every long strerror text, one search per line
    strerror_by_text: dict[str, int]
    ucs: dict[int, tuple[str, str]]  # UCX status code -> (name, ucs_status_string text)
    ucs_texts: re.Pattern[str] | None
    ucs_by_text: dict[str, int]


def _function_at(m: Message, site: str | None) -> str | None:
    for _a, _b, s, fn in reversed(m.sites):
        if s == site:
            return fn
    return None


@cache
def load() -> Catalog:
    raw = json.loads(resources.files("imgcheck.data.triage").joinpath("fabric_messages.json").read_text())
    buckets: dict[tuple[str, str], list[Message]] = {}
    open_start: dict[str, list[Message]] = {}
    bare: list[Message] = []
    for comp, data in raw["components"].items():
        for row in data["messages"]:
            first_line = row["format"].split("\n")[0]
            pieces = [p.strip() for p in _SPEC.split(first_line)]
            msg = Message(
                comp,
                row["level"],
                row["format"],
                row["first"],
                row["last"],
                tuple((a, b, c, d) for a, b, c, d in row["sites"]),
                row["call"],
                row["class"],
                bool(row.get("aborts")),
                re.compile(row["regex"]),
                # a format whose spaces the regex lets vary (configure's aligned summary) is gated by its longest word
                max(" ".join(pieces).split(), key=len) if "\\s+" in row["regex"] else max(pieces, key=len),
                len("".join(pieces)),
            )
            if msg.level in ("stderr", "banner"):  # fprintf(stderr) and help-file banners carry no prefix
                bare.append(msg)
                continue
            prefix = first_line.split("%", 1)[0]
            if len(prefix) >= _BUCKET:
                buckets.setdefault((comp, prefix[:_BUCKET]), []).append(msg)
            else:
                open_start.setdefault(comp, []).append(msg)
    errno = raw["errno"]
    efa = {int(k): (v["name"], tuple(v["texts"]), v["site"]) for k, v in errno["efa"]["codes"].items()}
    efa_by_text = {t: code for code, (_n, texts, _s) in efa.items() for t in texts if len(t) >= _MIN_CODE_TEXT}
    from .scan import trie_pattern  # a prefix tree: one pass over the line whatever the number of literals

    system = {int(k): (v[0], v[1]) for k, v in errno["system"]["codes"].items()}
    by_words = {words: n for n, (_name, words) in system.items() if len(words) >= _MIN_STRERROR_TEXT}
    ucs = {int(k): (v[0], v[1]) for k, v in errno.get("ucs", {}).get("codes", {}).items()}
    ucs_words = {w: n for n, (name, w) in ucs.items() if len(w) >= _MIN_STRERROR_TEXT and name.startswith("UCS_ERR")}

    gates = sorted({m.gate for m in bare if len(m.gate) >= _MIN_GATE}, key=len, reverse=True)
    return Catalog(
        raw["components"],
        {k: tuple(v) for k, v in buckets.items()},
        {k: tuple(v) for k, v in open_start.items()},
        tuple(bare),
        re.compile(trie_pattern(gates)) if gates else None,
        system,
        {int(k): (v[0], v[1]) for k, v in errno["fi"]["codes"].items()},
        efa,
        re.compile(trie_pattern(sorted(efa_by_text))) if efa_by_text else None,
        efa_by_text,
        re.compile(trie_pattern(sorted(by_words))) if by_words else None,
        by_words,
        ucs,
        re.compile(trie_pattern(sorted(ucs_words))) if ucs_words else None,
        ucs_words,
    )


def errnos_in(text: str, cat: Catalog) -> tuple[Errno, ...]:
    """The error codes a line prints: system errno / FI_E* values after err/errno/ret/RC or in "(N)" after a strerror
    text, the strerror texts themselves, and EFA provider codes (prov_errno, "Error 4126:" or their texts)."""
    out: list[Errno] = []
    seen: set[tuple[str, int]] = set()

    def add(value: int, table: str) -> None:
        if (table, value) in seen:
            return
        if table == "efa" and value in cat.efa:
            name, texts, _site = cat.efa[value]
            seen.add((table, value))
            out.append(Errno(value, name, texts[-1], "efa"))
        elif table == "system" and value in cat.fi:
            seen.add(("system", value))
            out.append(Errno(value, *cat.fi[value], "fi"))
        elif table == "system" and value in cat.system and value != 0:
            seen.add(("system", value))
            out.append(Errno(value, *cat.system[value], "system"))

    if "UCX" in text and cat.ucs_texts is not None:  # UCX prints its own status texts (ucs_status_string)
        for m in cat.ucs_texts.finditer(text):
            code = cat.ucs_by_text[m.group(0)]
            if ("ucs", code) not in seen:
                seen.add(("ucs", code))
                out.append(Errno(code, *cat.ucs[code], "ucs"))
    for m in _PROV_ERRNO.finditer(text):
        add(int(m.group(1)), "efa")
    if cat.efa_texts is not None:
        for m in cat.efa_texts.finditer(text):
            add(cat.efa_by_text[m.group(0)], "efa")
    for rx in _NUMBERS:
        for m in rx.finditer(text):
            add(abs(int(m.group(1))), "system")  # a value no table holds is skipped by add()
    if cat.strerror_texts is not None:
        for m in cat.strerror_texts.finditer(text):
            add(cat.strerror_by_text[m.group(0)], "system")
    return tuple(out)


def refine(klass: str, errnos: tuple[Errno, ...], message: Message | None, text: str) -> str:
    """The condition class once the line's own error codes are read: memory and host limits first (they are never
    the fabric), then a device the process cannot open, then the peer."""
    names = [e.name for e in errnos]
    if any(_ERRNO_CLASS.get(n) == "host-memory" for n in names) or any(
        e.table == "efa" and re.search(r"^OOM$|INTERNAL_RX_BUF_POST", e.name) for e in errnos
    ):
        return "host-memory"
    if klass in ("fork", "build"):
        return klass
    if names and all(n in ("EAGAIN", "EWOULDBLOCK", "EINPROGRESS", "UCS_INPROGRESS") for n in names):
        return "other"  # "try again": the provider retries; alone it is no condition
    device_words = message is not None and re.search(r"(?i)device|open", message.format + " " + (message.call or ""))
    if any(n in _DEVICE_ERRNOS for n in names) and (klass == "device-access" or device_words):
        return "device-access"
    for e in errnos:
        if e.table == "efa":
            for rx, cls in _EFA_CLASS:
                if rx.search(e.name):
                    return cls
    if _PEER_GONE_TEXT.search(text):
        return "peer-gone"
    for n in names:
        if n in _ERRNO_CLASS:
            return _ERRNO_CLASS[n]
    return klass


_CONDITIONS = {
    "host-memory": "host memory or the process's locked-memory limit (RLIMIT_MEMLOCK, `ulimit -l` inside the "
    "container) ran out while the provider allocated or pinned queues and buffers: a host limit, not the fabric",
    "device-access": "the process sees an RDMA device it cannot open (the device's /dev/infiniband/uverbsN node not "
    "passed into the container, no permission on it, or its driver not bound): the device is there, the container "
    "cannot use it",
    "no-provider": "no provider matched the request: no usable device for it (driver, device nodes) or the "
    "provider named by FI_PROVIDER is not in this libfabric",
    "peer-unreachable": "the peer was never reached (address-vector insert, address handle or handshake failed): "
    "traffic between the nodes is blocked (EFA: a security group without the self-referencing rule) or the peer "
    "process is not up",
    "peer-gone": "the peer's queue pair or connection no longer exists: the peer process exited first (its own "
    "error, an OOM kill, a crash); this line is a consequence",
    "fork": "the process forked (DataLoader workers, subprocess) while the provider had registered memory; the "
    "provider's fork support (FI_EFA_FORK_SAFE / RDMAV_FORK_SAFE, or the kernel's copy-on-fork) decides whether "
    "that is safe",
    "build": "the library was built without this transport: its development headers/libraries (libibverbs, "
    "rdma-core, EFA) were not installed when it was configured",
    "provider-abort": "the provider aborts the process right after printing this (its own error path: a state it "
    "cannot recover from); the err / prov_errno values say which",
    "no-transport": "no transport component of the library reaches the peer (only shared memory / self were left): "
    "the library in the image lacks the component for the node's fabric, or settings excluded it",
    "registration": "memory registration failed (read the errno: the registration signatures name the cause)",
    "other": "read the call and errno at the site",
}


def condition_words(found: Recognised) -> str:
    codes = ", ".join(
        f"{e.name} ({e.value}, {e.text})" if e.table != "efa" else f"EFA {e.name} ({e.value}, {e.text})"
        for e in found.errnos[:3]
    )
    return (f"{codes}: " if codes else "") + _CONDITIONS.get(found.klass, _CONDITIONS["other"])


def _match(cands: tuple[Message, ...], msg: str) -> list[Message]:
    return [c for c in cands if c.gate in msg and c.pattern.search(msg)]


def _pick(hits: list[Message], fn: str | None, lineno: str | None) -> tuple[Message, str, tuple[str, str], bool]:
    def runs(c: Message) -> list[tuple[str, str, str, str | None]]:
        if fn is None:
            return []
        return [r for r in c.sites if r[3] == fn and (lineno is None or r[2].endswith(f":{lineno}"))] or [
            r for r in c.sites if r[3] == fn
        ]

    best = max(hits, key=lambda c: (bool(runs(c)), c.fixed))
    rs = runs(best)
    exact = [r for r in rs if lineno is not None and r[2].endswith(f":{lineno}")]
    if exact:
        return best, exact[-1][2], (exact[0][0], exact[-1][1]), True
    return best, best.sites[-1][2], (best.first, best.last), False


def recognise(text: str) -> Recognised | None:
    """The catalog entry for one log line, or None (not a line of libfabric, aws-ofi-nccl or UCX)."""
    if not any(k in text for k in ("libfabric", "NET/OFI", "UCX", "Fatal:", "configure:", "checking for ")):
        cat = load()
        quick = (cat.bare_gate is not None and cat.bare_gate.search(text)) or (
            cat.efa_texts is not None and cat.efa_texts.search(text)
        )
        if not quick:
            return None
    cat = load()
    comp, msg, fn, lineno, level = None, None, None, None, None
    for name, rx in (
        ("libfabric", _LIBFABRIC),
        ("aws-ofi-nccl", _OFI),
        ("ucx", _UCX),
        ("ucx", _UCX_FATAL),
        ("ucx", _CONFIGURE),
    ):
        m = rx.search(text)
        if m:
            comp, msg = name, m.group("msg")
            gd = m.groupdict()
            fn, lineno, level = gd.get("fn"), gd.get("line"), gd.get("level")
            break
    hits: list[Message] = []
    if comp is not None and msg is not None:
        hits = _match(cat.buckets.get((comp, msg[:_BUCKET]), ()) + cat.open_start.get(comp, ()), msg)
        if level:
            want = _LEVELS.get(level, level)
            hits = [h for h in hits if h.level == want or want == "error"] or hits
    if not hits and cat.bare_gate is not None and cat.bare_gate.search(text):
        hits = _match(cat.bare, text)
        if hits:
            comp = hits[0].component
    if not hits and level is not None and _LEVELS.get(level) == "info":
        return None  # an INFO line no format explains: progress, not worth reading its numbers
    errs = errnos_in(text, cat)
    if hits:
        best, site, rel, by_site = _pick(hits, fn, lineno)
        klass = refine(best.klass, errs, best, text)
        head_only = "\n" in best.format.strip() and not _SPEC.search(best.format.split("\n")[0])
        if klass == "other" and best.aborts and not head_only and best.level != "banner":
            # a banner's first line says nothing of the condition: its later lines (the errno, the provider code)
            # are read by the signatures that name them
            klass = "provider-abort"
        if klass == "build" and not _transport_absent(best, text):
            klass = "other"
        return Recognised(best, best.component, site, rel, klass, errs, by_site)
    efa = [e for e in errs if e.table == "efa"]
    if efa and comp is None:  # an EFA provider error code or its text, quoted by whatever printed it
        _name, _texts, site = cat.efa[efa[0].value]
        return Recognised(None, "libfabric (EFA provider)", site, None, refine("other", errs, None, text), errs)
    if comp == "ucx" and msg is not None and msg.startswith(("configure: ", "checking for ")):
        return None  # configure output the catalog does not hold is some other package's build
    if comp is not None:
        klass = refine("other", errs, None, text)
        return Recognised(None, comp, None, None, klass, errs)
    return None


def _transport_absent(m: Message, text: str) -> bool:
    """A configure line says a transport is missing: a check answered "no", a warning or error, or a modules summary
    with nothing between the brackets."""
    if m.level == "check":
        return bool(re.search(r"\.\.\. no\s*$", text))
    if m.level == "notice":
        inside = re.search(r"<([^>]*)>", text)
        return bool(inside and not inside.group(1).strip() and re.search(r"\bIB modules", text))
    return m.level in ("warn", "error")


def observe(seen: dict[str, list[Any]], text: str) -> Recognised | None:
    """Count one log line into `seen` (format -> [Recognised, count], bounded by KEEP); return what it is."""
    found = recognise(text)
    if found is None:
        return None
    if found.klass == "other" and found.message is not None and found.message.level in ("notice", "check"):
        return found  # configure's checks and summary lines: not worth a note unless a transport is missing
    key = (found.message.format if found.message else f"<{found.component}>") + "|" + found.klass
    entry = seen.get(key)
    if entry is not None:
        entry[1] += 1
    elif len(seen) < KEEP:
        seen[key] = [found, 1]
    return found


def _series(version: str) -> tuple[int, ...]:
    return numeric_tuple(version)[:2]


def other_copy(found: Recognised, version: str | None) -> str | None:
    """When the line's own function():line places it in release series other than the image's copy of that
    component, say so (the job may load another copy); None when it fits, or nothing decides it."""
    if not (found.by_site and found.releases and version and _series(version)):
        return None
    low, high = (_series(v) for v in found.releases)
    if low <= _series(version) <= high:
        return None
    return (
        f"that line's site matches {found.component} {found.releases[0]}..{found.releases[1]} (the newest patch of "
        f"each series was read), not the image's {found.component} {version}: the job may load another copy (a host "
        "installation mounted in, such as the EFA installer's /opt/amazon/efa, or LD_LIBRARY_PATH), or a patch "
        "release whose lines moved"
    )


def notes(seen: dict[str, list[Any]], versions: dict[str, str | None] | None = None) -> tuple[str, ...]:
    """Report notes: each recognised fabric message with its component, site, releases and condition; the ones with a
    memory, device or peer condition first. With the image's versions (component -> version), a line whose own site
    belongs to other releases than the image's copy is said to."""
    order = {"host-memory": 0, "device-access": 1, "fork": 2, "peer-unreachable": 3, "build": 4, "peer-gone": 5}
    rows = sorted(seen.values(), key=lambda e: order.get(e[0].klass, 9))
    out = []
    for found, count in rows:
        out.append(f"{found.words()}; seen {count}x")
        other = other_copy(found, (versions or {}).get(found.component))
        if other:
            out.append(other)
    return tuple(out)
