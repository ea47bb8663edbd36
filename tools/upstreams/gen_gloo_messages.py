"""Generate src/imgcheck/data/triage/gloo_messages.json: every error message Gloo's TCP transport and rendezvous
raise (GLOO_ERROR_MSG, GLOO_THROW*, GLOO_ENFORCE* messages, the transport's SystemError / ShortRead / ShortWrite /
Timeout errors), over Gloo's history (Gloo has no release tags: one commit per half year on the first-parent line,
and the newest), each with a regex, the first and last snapshot that raises it, and the condition class that names
its cause; the class is the triage signature (process_messages.json holds the causes).

    GLOO_MIRROR=/work/.mirror/pytorch+gloo/repo python tools/upstreams/gen_gloo_messages.py

A message is a template: its string literals in order, with every other argument (a peer address, strerror(errno),
a key list) a gap. GLOO_ERROR_MSG prefixes "[FILE:LINE] "; GLOO_ENFORCE prints "[enforce fail at FILE:LINE] COND. "
and then the message. Internal consistency checks (an ENFORCE without a message, or one on the library's own state)
are counted in `left_out`, not given a class: they are Gloo bugs, not a setting or a peer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

REPO = os.environ.get("GLOO_MIRROR", "/work/.mirror/pytorch+gloo/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/gloo_messages.json"
PATHS = ("gloo/transport/tcp", "gloo/rendezvous", "gloo/common/linux.cc")
HALF_YEAR = 182 * 24 * 3600
MACRO = re.compile(
    r"\b(GLOO_ERROR_MSG|GLOO_THROW(?:_[A-Z_]+)?|GLOO_ENFORCE(?:_(?:EQ|NE|LT|LE|GT|GE))?|SystemError|TimeoutError)"
    r"(?:\s+[a-z_]\w*)?\s*\("
)
# every message reaches the log behind "[FILE:LINE] " (GLOO_ERROR_MSG; the transport wraps its tcp::Error what() in
# it too) or "[enforce fail at FILE:LINE] COND. " (GLOO_ENFORCE*): the prefix is what makes a short message Gloo's
PREFIX = r"gloo/[\w/]+\.(?:cc|h):\d+\] "
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
# leading arguments that are not the message: ENFORCE's condition, ENFORCE_xx's two operands
SKIP = {"GLOO_ENFORCE": 1}
SKIP.update({f"GLOO_ENFORCE_{op}": 2 for op in ("EQ", "NE", "LT", "LE", "GT", "GE")})
# template regex -> class (first match wins); None = left out (a library-internal check)
CLASSES: tuple[tuple[str, str | None], ...] = (
    (r"^(?:connect|SO_ERROR|timed out connecting|Connecting to Redis)\b", "GLOO-TCP-CONNECT"),
    (r"^Connect timeout|^Timed out connecting|connectFullMesh", "GLOO-TCP-CONNECT"),
    (r"(?i)cannot connect to self", "GLOO-TCP-CONNECT"),
    (r"^SO_ERROR|^getsockopt: %s, remote", "GLOO-TCP-CONNECT"),
    (r"Wait timeout for key", "GLOO-STORE-TIMEOUT"),
    (r"Timed out waiting %sms for (?:recv|send)", "GLOO-TCP-PEER-LOST"),
    (r"collective mismatch", "GLOO-COLLECTIVE-MISMATCH"),
    (r"^(?:Read|Write) timeout", "GLOO-TCP-PEER-LOST"),
    (
        r"^(?:read|write|writev|recv|send)\b|short (?:read|write)|Connection closed by peer|Socket closed"
        r"|unexpectedly closed|Read error|Write error|Remote socket closed|^Pair is closed",
        "GLOO-TCP-PEER-LOST",
    ),
    (
        r"Unable to find (?:address|interface)|Unknown ai_family|Unknown address family|unknown sa_family"
        r"|address family mismatch|getaddrinfo|getifaddrs",
        "GLOO-TCP-ADDRESS",
    ),
    (r"^(?:bind|listen|accept|socket|setsockopt|getsockname|getpeername)\b", "GLOO-TCP-SOCKET"),
)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def snapshots() -> list[tuple[str, str]]:
    """(commit, date) one per half year of first-parent history, oldest first, plus the newest."""
    rows = [line.split() for line in git("log", "--first-parent", "--format=%H %ct %cs", "HEAD").splitlines()]
    picked: list[tuple[str, str]] = []
    last = None
    for sha, ts, day in reversed(rows):
        if last is None or int(ts) - last >= HALF_YEAR:
            picked.append((sha, day))
            last = int(ts)
    if picked[-1][0] != rows[0][0]:
        picked.append((rows[0][0], rows[0][2]))
    return picked


def args_of(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose '(' is at text[start-1]."""
    depth, cur, out, i, quote = 1, [], [], start, False
    while i < len(text) and depth:
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            depth -= 1
            if depth:
                cur.append(c)
        elif c == "," and depth == 1:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return out


def template(macro: str, args: list[str]) -> str | None:
    parts = args[SKIP.get(macro, 0) :]
    if macro == "SystemError" and parts and not LITERAL.match(parts[0]):
        return None  # a declaration (SystemError e) or a forwarded name
    if macro == "SystemError":  # what(): "SYSCALL: strerror, remote=ADDR"
        lit = LITERAL.findall(parts[0]) if parts else []
        return f"{lit[0]}: %s, remote=%s" if lit else None
    out = []
    for a in parts:
        lits = LITERAL.findall(a)
        nested = MACRO.search(a)
        if lits and not nested and re.fullmatch(r'(?:"(?:[^"\\]|\\.)*"\s*)+', a):
            out.append("".join(lits))
        elif lits and a.lstrip().startswith('"') and "+" in a:  # "literal" + e.what()
            out.append(lits[0] + "%s")
        else:
            out.append("%s")
    text = "".join(out).strip()
    return text if LITERAL.sub("", text).replace("%s", "").strip() else None


def to_regex(tpl: str, enforce: bool) -> str:
    body = ".*?".join(re.escape(piece) for piece in tpl.split("%s")).replace(".*?.*?", ".*?")
    return PREFIX + (".*?" if enforce else "") + body


def classify(tpl: str) -> str | None:
    return next((cls for rx, cls in CLASSES if re.search(rx, tpl)), None)


def messages(sha: str) -> dict[str, tuple[str, bool]]:
    files = [
        f
        for f in git("ls-tree", "-r", "--name-only", sha, *PATHS).split()
        if f.endswith((".cc", ".h")) and "/tls/" not in f or f.endswith("tls/pair.cc")
    ]
    out: dict[str, tuple[str, bool]] = {}
    for path in files:
        text = git("show", f"{sha}:{path}")
        text = re.sub(r"//[^\n]*", "", text)
        for m in MACRO.finditer(text):
            if text[max(0, m.start() - 8) : m.start()].strip().endswith(("define", "class", "::")):
                continue
            tpl = template(m.group(1), args_of(text, m.end()))
            if tpl:
                out.setdefault(tpl, (path, m.group(1).startswith("GLOO_ENFORCE")))
    return out


def main() -> None:
    rows: dict[str, dict[str, object]] = {}
    snaps = snapshots()
    for sha, day in snaps:
        for tpl, (path, enforce) in messages(sha).items():
            row = rows.setdefault(tpl, {"template": tpl, "site": path, "enforce": enforce, "first": day})
            row["last"] = day
    kept, left_out = [], []
    for tpl in sorted(rows):
        row = rows[tpl]
        cls = classify(tpl)
        if cls is None:
            left_out.append(tpl)
            continue
        kept.append({**row, "regex": to_regex(tpl, bool(row["enforce"])), "signature": cls})
    doc = {
        "source": f"pytorch/gloo {len(snaps)} snapshots {snaps[0][1]}..{snaps[-1][1]} ({snaps[-1][0][:12]}): "
        + ", ".join(PATHS)
        + " (GLOO_ERROR_MSG / GLOO_THROW* / GLOO_ENFORCE* messages, tcp::SystemError / TimeoutError), read by "
        "tools/upstreams/gen_gloo_messages.py",
        "confidence": "verified",
        "messages": kept,
        "left_out": {
            "why": "library-internal checks with a message that names no peer, setting or system call",
            "templates": left_out,
        },
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(
        f"{len(kept)} Gloo messages in {len({r['signature'] for r in kept})} classes, {len(left_out)} left out, {len(snaps)} snapshots"
    )


if __name__ == "__main__":
    main()
