"""Generate compat_matrix/catalogs/nccl_release_notes.json: every entry of every NCCL release's notes (2.3.5 on) as a
row: the release, what kind of entry (fix, known issue, change of behaviour, feature), the symptom class, and the
conditions it names in words imgcheck's facts use (transport, GPU generation, architecture, cuMem, NUMA, plugin,
settings).

NCCL keeps no NEWS file: the notes are the body of each release commit ("2.18.3-1" / "NCCL 2.27.3-1"), the same text
as the GitHub release and docs.nvidia.com rel_2-X-Y pages' fixed-issue lists. Re-run after fetching a newer snapshot:
    NCCL_MIRROR=/path/to/bare/nccl.git python tools/nccl/gen_release_notes.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nccl_git  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nccl_release_notes.json"

KINDS = [
    ("known-issue", re.compile(r"(?i)known issue|known limitation")),
    ("fix", re.compile(r"^(?:Fix|Fixed|Fixes|Work ?around|Avoid|Prevent|Correct)\b", re.I)),
    # a fix worded as a behaviour ("accept() will retry also if ...", "Various fixes to ncclCommAbort", "Make the
    # auto-merge failures non-fatal", "... to avoid crash with Bus Error"): the failure it removes is the entry's point
    (
        "fix",
        re.compile(
            r"(?i)\bwill retry\b|\bretry in case of\b|\bvarious fixes\b|\bto avoid (?:a |potential )?(?:crash|hang|deadlock)"
            r"|\bavoid potential (?:crash|hang|deadlock|CUDA error)|\bnon-fatal\b"
        ),
    ),
    (
        "change",
        re.compile(
            r"(?i)^(?:change|changed|disable|remove|deprecate|rename|set .* default|make|default|revert|increase|decrease|reduce|restore|enable .* by default)\b|\bby default\b|\bno longer\b"
        ),
    ),
    ("feature", re.compile(r"(?i)^(?:add|added|support|enable|implement|introduce|new)\b")),
]
SYMPTOMS = [
    ("data-corruption", re.compile(r"(?i)corrupt|wrong result|incorrect result|incorrect data|silent")),
    ("hang", re.compile(r"(?i)\bhang|deadlock|stuck")),
    ("crash", re.compile(r"(?i)crash|segfault|segmentation|abort|assert")),
    ("error", re.compile(r"(?i)error|fail|invalid|not supported|cannot|could not")),
    ("leak", re.compile(r"(?i)leak")),
    ("performance", re.compile(r"(?i)perf|slow|bandwidth|latency|tuning")),
]
CONDITIONS = [
    ("transport:ib", re.compile(r"\bIB\b|InfiniBand|\bibv_|net_ib|\bverbs\b")),
    ("transport:roce", re.compile(r"RoCE")),
    ("transport:socket", re.compile(r"(?i)\bsocket transport|NCCL_NET=Socket")),
    ("transport:shm", re.compile(r"\bSHM\b|shared memory")),
    ("transport:p2p", re.compile(r"\bP2P\b")),
    ("nvls", re.compile(r"NVLS|NVLink SHARP")),
    ("collnet", re.compile(r"(?i)collnet|\bSHARP\b")),
    ("pxn", re.compile(r"\bPXN\b")),
    ("mnnvl", re.compile(r"MNNVL|(?i:multi-node nvlink)")),
    ("cumem", re.compile(r"(?i)cumem|\bVMM\b")),
    ("numa", re.compile(r"NUMA")),
    ("plugin", re.compile(r"(?i)plugin")),
    ("gdr", re.compile(r"(?i)\bGDR\b|gpu ?direct|dma-?buf|peermem|peer memory")),
    ("cuda-graph", re.compile(r"(?i)cuda graph")),
    ("arch:arm64", re.compile(r"(?i)aarch64|\bARM\b|arm64|Grace")),
    ("gpu:hopper", re.compile(r"H100|H800|H20\b|H200|Hopper|GH200|sm_?90")),
    ("gpu:blackwell", re.compile(r"B200|GB200|B100|Blackwell|sm_?100")),
    ("gpu:ampere", re.compile(r"A100|A800|Ampere|sm_?80")),
    ("multi-process", re.compile(r"(?i)multi-process|multiple processes")),
    ("multi-node", re.compile(r"(?i)multi-node|inter-node|at scale|more than one node")),
]
SETTING = re.compile(r"\bNCCL_[A-Z0-9_]+")


def _release_commit(tag: str, version: str) -> tuple[str, str] | None:
    """(sha, body) of the release commit: the first commit behind the tag whose subject is the version."""
    out = nccl_git.git("log", "-400", "--format=%H%x1f%s%x1f%b%x1e", tag)
    subject = re.compile(rf"^(?:NCCL )?v?{re.escape(version)}-\d+(?: Release)?$")
    for rec in out.split("\x1e"):
        parts = rec.strip("\n").split("\x1f")
        if len(parts) == 3 and subject.match(parts[1].strip()):
            return parts[0][:12], parts[2]
    return None


# words a sentence does not end on: a line ending with one was wrapped, even when the next starts upper case
_WRAP_WORDS = frozenset("a an and at by for from in of on or than the to when where with".split())


def entries(body: str) -> list[str]:
    """The entries of a release note body: one-line items (old style) or paragraphs with ' * ' bullets (2.19 on);
    a bullet keeps its paragraph's heading as context."""
    out: list[str] = []
    heading = ""
    cur: list[str] = []

    def flush() -> None:
        if cur:
            out.append(" ".join(cur).strip())
            cur.clear()

    prev = ""
    for raw in body.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            flush()
            heading = ""
            prev = ""
            continue
        bullet = re.match(r"^\s*[*-]\s+(.*)", line)
        if bullet:
            flush()
            if not heading and out:
                heading = out.pop()  # the paragraph's first line was its heading
            cur.append((heading.rstrip(".: ") + ": " if heading else "") + bullet.group(1))
        elif line.startswith(" ") and cur:
            cur.append(stripped)
        elif cur and not prev.endswith((".", ":")) and not stripped[0].isupper():
            cur.append(stripped)
        elif cur and prev.rsplit(" ", 1)[-1] in _WRAP_WORDS:
            cur.append(stripped)  # a line wrapped after a function word: "... patterns on" / "MNNVL systems at ..."
        else:
            flush()
            cur.append(stripped)
        prev = stripped
    flush()
    return [e for e in out if len(e) > 3]


def classify(text: str) -> dict:
    body = text.split(": ", 1)[1] if ": " in text and text.index(": ") < 80 else text
    # the heading decides ("Fix X: add Y" is a fix), the bullet's own words otherwise
    kind = next((k for k, rx in KINDS if rx.search(text)), None) or next(
        (k for k, rx in KINDS if rx.search(body)), "other"
    )
    symptom = next((s for s, rx in SYMPTOMS if rx.search(text)), None)
    conditions = sorted({c for c, rx in CONDITIONS if rx.search(text)})
    settings = sorted(set(SETTING.findall(text)))
    return {"kind": kind, "symptom": symptom, "conditions": conditions or None, "settings": settings or None}


_SQUASH = re.compile(r"^(?:Squash commit for\s+)?(?:(?:GitHub PR #\d+|Bug Fix|contrib)\s*:\s*)*", re.I)


def _between(prev: str | None, tag: str, notes: str) -> list[tuple[str, str]]:
    """(sha, subject) of the commits between the previous release tag and this one that the release note does not
    already say (community pull requests, fixes committed separately): the git log of the release."""
    if prev is None:
        return []
    out = nccl_git.git("log", "--no-merges", "--format=%h%x1f%s", f"{prev}..{tag}")
    release = re.compile(r"^(?:NCCL )?v?\d+\.\d+\.\d+-\d+(?: Release)?$")
    said = notes.lower()
    found = []
    for line in out.splitlines():
        sha, _, subject = line.partition("\x1f")
        subject = subject.strip()
        if not subject or release.match(subject) or subject.lower().rstrip(".") in said:
            continue
        found.append((sha, subject))
    return list(reversed(found))


def build() -> dict:
    rows = []
    missing = []
    prev = None
    for tag, version in nccl_git.release_tags():
        found = _release_commit(tag, version)
        body, texts = "", []
        if found is None:
            missing.append(version)
        else:
            sha, body = found
            note_src = (
                f"NVIDIA/nccl@{tag} (release commit {sha} message; also github.com/NVIDIA/nccl/releases/tag/{tag})"
            )
            texts = [(t, note_src, "release note") for t in entries(body)]
        texts += [
            (_SQUASH.sub("", subj), f"NVIDIA/nccl@{tag} (commit {c}, in {prev}..{tag})", "commit")
            for c, subj in _between(prev, tag, body)
        ]
        prev = tag
        for i, (text, source, origin) in enumerate(texts, 1):
            info = classify(text)
            row = {"entry": f"{version}#{i}", "release": version, "text": text, "origin": origin, **info}
            row["source"] = source
            row["confidence"] = "verified"
            notes = []
            if info["symptom"] is None:
                notes.append("symptom: the entry names none of hang/crash/corruption/error/leak/performance")
            if info["conditions"] is None:
                notes.append("conditions: the entry names no condition imgcheck's facts describe")
            notes.append("first affected release: the notes name only the release with the change")
            row["note"] = "; ".join(notes)
            rows.append(row)
    return {
        "table": "nccl_release_notes",
        "description": (
            "Every entry of the release notes of every NCCL release since 2.3.5 (the release commit's message, the "
            "text of the GitHub release), generated by tools/nccl/gen_release_notes.py: kind (fix, known-issue, "
            "change, feature, other), symptom class, the conditions it names (transport:*, gpu:*, arch:*, cumem, "
            "numa, plugin, ...) and the NCCL_* settings it mentions. A fix row means releases before `release` have "
            "the defect; where it starts is not stated by the notes."
            + (f" Releases with no release commit found: {', '.join(missing)}." if missing else "")
        ),
        "rows": rows,
    }


def main() -> None:
    data = build()
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    kinds: dict[str, int] = {}
    for r in data["rows"]:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print(f"{len(data['rows'])} entries {kinds} -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
