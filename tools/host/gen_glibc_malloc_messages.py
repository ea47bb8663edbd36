"""Generate src/imgcheck/data/triage/glibc_malloc_messages.json: every heap-consistency message glibc's malloc prints
before it aborts the process (malloc_printerr's message, and the `errstr = "..."` messages older releases passed to
it), in each glibc release from 2.17 (CentOS 7, the oldest base image still in use) to the newest tag, with the
first and last release that prints it.

    GLIBC_MIRROR=/work/.mirror/bminor+glibc/repo python tools/host/gen_glibc_malloc_messages.py

glibc 2.26 and later print the message alone ("free(): invalid pointer") and abort; older releases print
"*** Error in `PROG': MESSAGE: 0xADDR ***" (malloc_printerr -> __libc_message). Both contain the message, so each
row's regex is the message itself. Every row names one triage signature, GLIBC-HEAP-CORRUPTION (its causes are
in process_messages.json): malloc found its own bookkeeping overwritten or a pointer it never returned, so something in
the process wrote past a buffer or freed twice; the message says which check failed, not who did it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

REPO = os.environ.get("GLIBC_MIRROR", "/work/.mirror/bminor+glibc/repo")
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/glibc_malloc_messages.json"
TAG = re.compile(r"^glibc-2\.(\d+)$")
FIRST_MINOR = 17
FILES = ("malloc/malloc.c", "malloc/arena.c", "malloc/hooks.c", "malloc/malloc-check.c")
# malloc_printerr ([action,] "lit" "lit" ...  and  errstr = "lit";
CALL = re.compile(r'malloc_printerr\s*\(\s*(?:[A-Za-z_0-9]+\s*,\s*)?((?:"(?:[^"\\]|\\.)*"\s*(?:\\\s*)?)+)', re.S)
ERRSTR = re.compile(r'errstr\s*=\s*((?:"(?:[^"\\]|\\.)*"\s*)+);', re.S)
PIECE = re.compile(r'"((?:[^"\\]|\\.)*)"')
SIGNATURE = "GLIBC-HEAP-CORRUPTION"


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def tags() -> list[str]:
    found = [(int(m.group(1)), t) for t in git("tag").split() if (m := TAG.match(t))]
    return [t for minor, t in sorted(found) if minor >= FIRST_MINOR]


def messages(tag: str) -> dict[str, str]:
    """message -> the file that prints it, in one release."""
    out: dict[str, str] = {}
    listed = set(git("ls-tree", "-r", "--name-only", tag, "malloc").split())
    for path in FILES:
        if path not in listed:
            continue
        text = git("show", f"{tag}:{path}")
        for rx in (CALL, ERRSTR):
            for m in rx.finditer(text):
                msg = "".join(PIECE.findall(m.group(1))).strip()
                if msg and "%" not in msg:
                    out.setdefault(msg, path)
    return out


def main() -> None:
    rows: dict[str, dict[str, str]] = {}
    walked = tags()
    for tag in walked:
        release = tag.removeprefix("glibc-")
        for msg, path in messages(tag).items():
            row = rows.setdefault(
                msg, {"message": msg, "regex": re.escape(msg), "signature": SIGNATURE, "site": path, "first": release}
            )
            row["last"] = release
    doc = {
        "source": f"bminor/glibc {walked[0]}..{walked[-1]}: {', '.join(FILES)} (malloc_printerr and errstr "
        "messages), read by tools/host/gen_glibc_malloc_messages.py",
        "confidence": "verified",
        "releases": len(walked),
        "messages": [rows[k] for k in sorted(rows)],
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(rows)} malloc messages over {len(walked)} glibc releases")


if __name__ == "__main__":
    main()
