"""Generate compat_matrix/catalogs/mpi_crash_fixes.json: every commit of UCX and Open MPI that fixes a crash, hang or
memory corruption, with the first release that has it and the C functions it changes, and every Open MPI 4.0-5.0
release-note entry that fixes one (UCX's NEWS entries are in upstream_release_notes.json already).

Re-run after fetching newer snapshots of github:openucx/ucx and github:open-mpi/ompi:
    python tools/upstreams/gen_mpi_crash_fixes.py    # mirrors from UCX_MIRROR / OMPI_MIRROR

Why commits and not only the release notes: UCX's NEWS says "Fixes in Cuda memory hooks" and Open MPI's says "Fixed a
crash in ..." with no function; a crash log names functions (its backtrace frames). A commit's diff names the functions
it changes (the hunk headers git prints, and changed definitions), so a backtrace frame can be compared with the fixes
that touched that very function. Every release tag (no release candidates) is walked in version order: a commit is
listed under the first release tag whose history has it and the previous tag's has not (prev..tag, the previous tag
being the next lower version). A fix cherry-picked to a release branch appears again under that branch's release (a
different commit with the same subject); triage treats a release as fixed when any row with that subject is in its
series at or below it. Only commit subjects are read for the symptom (a body's "crash" is often a test's wording).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/mpi_crash_fixes.json"
SYMPTOMS = {
    "crash": r"seg(?:mentation )?fault|\bsegv\b|sigsegv|crash|double[- ]free|use[- ]after[- ]free|null (?:pointer|deref)"
    r"|dangling|out of scope|invalid (?:read|free|pointer)|sigbus|\bbus error",
    "corruption": r"(?:heap|memory|stack) corruption|corrupt",
    "hang": r"\bhangs?\b|\bhung\b|deadlock|livelock|stuck",
}
UPSTREAMS = (
    # name, repo, mirror env, release tag pattern, lowest release walked
    ("ucx", "openucx/ucx", "UCX_MIRROR", r"v1\.\d+\.\d+", "1.4.0"),
    ("open-mpi", "open-mpi/ompi", "OMPI_MIRROR", r"v[45]\.\d+\.\d+", "4.0.0"),
)
SOURCES = ("*.c", "*.h", "*.cc", "*.inl")
_HUNK = re.compile(r"^@@ [^@]* @@ ?(?P<ctx>.*)$")
_DEF = re.compile(r"^[+-](?![+-])(?:[A-Za-z_][\w \t*]*?[\s*])?(?P<name>[A-Za-z_]\w*)\s*\([^;]*$")
_CALLISH = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\(")
_SUBJECT_FN = re.compile(r"\b(?P<name>[a-z][a-z0-9]*_[a-z0-9_]+)\(\)")
_NOT_FUNCTIONS = {
    *("if", "for", "while", "switch", "return", "sizeof", "defined", "struct", "union", "enum", "typedef"),
    *("void", "int", "char", "static", "const", "unsigned", "long", "inline", "extern", "__attribute__"),
}
# a subject that says it fixes something ("add debug macro to check deadlock state" names a hang but fixes none)
FIX_WORDS = re.compile(
    r"\bfix|\bprevent|\bavoid|\bworkaround|\bwork around|\bresolve|\bcorrect|\bdon'?t\b|\bdo not\b", re.I
)
_SEP = "\x1e"


def _symptom(subject: str) -> str | None:
    low = subject.lower()
    for name, rx in SYMPTOMS.items():
        if re.search(rx, low):
            return name
    return None


def _functions(diff: str) -> tuple[list[str], list[str]]:
    """The functions a commit's C diff changes (hunk headers and changed definitions) and the files."""
    names: list[str] = []
    files: list[str] = []
    for line in diff.split("\n"):
        if line.startswith("+++ b/"):
            files.append(line[6:])
            continue
        m = _HUNK.match(line)
        if m:
            ctx = _CALLISH.findall(m.group("ctx"))
            if ctx and ctx[0] not in _NOT_FUNCTIONS:
                names.append(ctx[0])
            continue
        d = _DEF.match(line)
        if d and not line[1:2].isspace() and d.group("name") not in _NOT_FUNCTIONS:
            names.append(d.group("name"))
    return sorted(set(names)), sorted(set(files))


def walk(name: str, repo: str, m: Mirror, pattern: str, lowest: str) -> list[dict]:
    tags = sorted(m.tags(pattern), key=version_key)
    rows: list[dict] = []
    for i, tag in enumerate(tags):
        release = tag.lstrip("v")
        if i == 0 or version_key(release) < version_key(lowest):
            continue
        log = m.git("log", "--no-merges", f"--format=%H{_SEP}%s", f"{tags[i - 1]}..{tag}")
        for line in log.split("\n"):  # not splitlines(): it splits at the \x1e separator too
            sha, _, subject = line.partition(_SEP)
            if not subject:
                continue
            symptom = _symptom(subject)
            if symptom is None or not FIX_WORDS.search(subject):
                continue
            diff = m.git("show", "-U0", "--format=", sha, "--", *SOURCES)
            functions, files = _functions(diff)
            named = _SUBJECT_FN.findall(subject)  # "Fix ... caused by ucp_set_event_handler()"
            rows.append(
                {
                    "entry": f"{name}@{sha[:12]}",
                    "upstream": name,
                    "release": release,
                    "subject": subject.strip(),
                    "symptom": symptom,
                    "functions": sorted(set(functions) | set(named)),
                    "files": files,
                    "source": f"{repo}@{sha} (first in {tag})",
                    "confidence": "verified",
                }
            )
    return rows


# Open MPI's release notes: NEWS of the v4.1.x branch (4.0.x and 4.1.x sections) and the v5.0.x changelog
OMPI_NOTES = (
    ("v4.1.8", "NEWS", re.compile(r"^(?P<v>\d+\.\d+\.\d+) -- ")),
    ("v5.0.10", "docs/release-notes/changelog/v5.0.x.rst", re.compile(r"^Open MPI Version v(?P<v>\d+\.\d+\.\d+)")),
)
_BULLET = re.compile(r"^\s*- (?P<text>.*)$")
# "pml/ucx", "PML/UCX", "coll/han": an MCA component, whose functions are named mca_<framework>_<component>_*
_MCA = re.compile(r"\b(?P<fw>[A-Za-z]{2,8})/(?P<comp>[A-Za-z0-9_]{2,16})\b")
_IDENT = re.compile(r"\b(?P<name>(?:MPI|PMPI|MPIX|opal|ompi|mca|orte|pmix|prte)_\w+)")
_MCA_FRAMEWORKS = {
    *("pml", "btl", "mtl", "osc", "coll", "spml", "common", "accelerator", "rcache", "mpool", "smsc", "io"),
    *("fcoll", "fbtl", "fs", "sharedfp", "part", "topo", "vprotocol", "bml", "allocator", "memory", "patcher"),
}


def _bullets(text: str, heading: re.Pattern[str]) -> list[tuple[str, str]]:
    """(release, entry text) for every bullet of every release section."""
    out: list[tuple[str, str]] = []
    release: str | None = None
    cur: list[str] = []

    def flush() -> None:
        if release and cur:
            out.append((release, " ".join(" ".join(cur).split())))
        cur.clear()

    for line in text.split("\n"):
        h = heading.match(line)
        if h:
            flush()
            release = h.group("v")
            continue
        b = _BULLET.match(line)
        if b:
            flush()
            cur.append(b.group("text"))
        elif cur and line.strip() and line[:1].isspace():
            cur.append(line.strip())
        elif not line.strip():
            flush()
    flush()
    return out


def _named(text: str) -> list[str]:
    """Function names an entry gives (MPI_Comm_split, opal_progress) and MCA components as name prefixes
    ('mca_pml_ucx_*' for pml/ucx)."""
    names = {m.group("name") for m in _IDENT.finditer(text)}
    for m in _MCA.finditer(text):
        fw, comp = m.group("fw").lower(), m.group("comp").lower()
        if fw in _MCA_FRAMEWORKS:
            names.add(f"mca_{fw}_{comp}_*" if fw != "common" else f"opal_common_{comp}_*")
    return sorted(names)


def ompi_notes(m: Mirror) -> list[dict]:
    rows: list[dict] = []
    for tag, path, heading in OMPI_NOTES:
        text = m.show(tag, path) or ""
        counts: dict[str, int] = {}
        for release, entry in _bullets(text, heading):
            if version_key(release) < version_key("4.0.0"):
                continue
            counts[release] = counts.get(release, 0) + 1
            symptom = _symptom(entry)
            if symptom is None or not FIX_WORDS.search(entry):
                continue
            rows.append(
                {
                    "entry": f"open-mpi-notes-{release}#{counts[release]}",
                    "upstream": "open-mpi",
                    "release": release,
                    "subject": entry,
                    "symptom": symptom,
                    "functions": _named(entry),
                    "files": [],
                    "source": f"open-mpi/ompi@{tag}:{path} (release {release})",
                    "confidence": "verified",
                }
            )
    return rows


def main() -> None:
    rows: list[dict] = []
    for name, repo, env, pattern, lowest in UPSTREAMS:
        default = f"/work/.mirror/{repo.replace('/', '+')}/repo"
        rows.extend(walk(name, repo, Mirror(os.environ.get(env, default)), pattern, lowest))
    rows.extend(ompi_notes(Mirror(os.environ.get("OMPI_MIRROR", "/work/.mirror/open-mpi+ompi/repo"))))
    doc = {
        "table": "mpi_crash_fixes",
        "description": (
            "Every UCX (v1.4.0 on) and Open MPI (v4.0.0 on) commit whose subject names a crash, hang or memory "
            "corruption, with the first release tag that has it (prev..tag in version order) and the C functions its "
            "diff changes, and every Open MPI 4.0-5.0 release-note entry (NEWS, v5.0.x changelog) that fixes one, with "
            "the functions and MCA components it names ('mca_pml_ucx_*': a name prefix); a backtrace frame naming "
            "one of them is compared with these. Generated by "
            "tools/upstreams/gen_mpi_crash_fixes.py"
        ),
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
