"""Generate compat_matrix/catalogs/container_toolkit_changes.json from the NVIDIA Container Toolkit's CHANGELOG.

    python tools/upstreams/gen_container_toolkit.py /work/.mirror/NVIDIA+nvidia-container-toolkit/repo

CHANGELOG.md lists every release (v1.0.5 on), release candidates included, with the libnvidia-container changes of
each release from v1.8 on (a "### Changes in libnvidia-container" section or a
"[libnvidia-container]" prefix) and the toolkit container's (the GPU Operator's toolkit pod). Every entry is read and
counted; an entry becomes a row when it is a fix, or a change to what is injected, in one of the CLASSES below: the
families of defect that make a GPU job fail or miss something inside its container (library injection, ldconfig,
symlinks, GSP firmware, device nodes, cgroups, CDI spec generation, IMEX channels, MIG, CUDA forward compat, the
driver root of a driver container, Tegra CSV, WSL2). A row's `fixed_in` is the first final release containing the
entry in each release line: the main line's CHANGELOG omits the patch releases of the release branches (v1.17.1 to
v1.17.8 are only in CHANGELOG.md at their own tags), so every final tag's CHANGELOG is read, and an entry whose text
is a commit subject is placed with `git tag --contains` on every commit of that subject (cherry-picks keep it), as
tools/upstreams/gen_k8s_components.py does. `affected_from` is the release the entry (or INTRODUCED below, with its
source) says introduced the defect, else null (the CHANGELOG names only the fix). `applies` is the node or launch condition the rule decides on.
Entries of other kinds (packaging, build, tests, logging, runtime configuration commands) are counted and left out.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

CATALOGS = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs"
REPO = "NVIDIA/nvidia-container-toolkit"
FINAL = re.compile(r"v\d+\.\d+\.\d+")
_HEADING = re.compile(r"^##\s+(?P<tag>v\d+\.\d+\.\d+(?:-rc\.\d+)?)\s*$")
_SECTION = re.compile(r"^#{2,3}\s+Changes in (?P<what>.+?)\s*$")
_ENTRY = re.compile(r"^\s*[-*]\s+(?:[0-9a-f]{8}\s+)?(?P<text>.+?)\s*$")
_FIX = re.compile(r"\b(?:fix(?:es|ed)?|bug(?:fix)?|regression|segfault|segmentation fault)\b", re.I)
_INTRODUCED = re.compile(r"\(from (?P<v>\d+\.\d+\.\d+)\)|introduced in v?(?P<v2>\d+\.\d+\.\d+)", re.I)
_NOT_JOB = re.compile(
    r"\b(?:test|e2e|typo|lint|makefile|versions\.mk|go 1\.\d+|golang|packag|rpm|scriptlet|postun|repo(?:s|sitory)? "
    r"listed|copyright|readme|changelog|log(?:ging)? |verbosity|dependabot|docker\.mk|systemd packaging|"
    r"fsnotify|config option|nvidia-ctk config|runtime configure|containerd (?:drop-in|runtime config)|"
    r"existing imports|feature flags|yum)",
    re.I,
)

# (key, regex over the entry, applies, area, what fails). `applies` names the condition the rule decides on:
# "injection" any GPU container the legacy hook or a CDI spec sets up; "mode:cdi" CDI / just-in-time CDI mode;
# "mode:csv" Tegra CSV mode; "mig" MIG enabled on the node; "cgroup2" a cgroup v2 host; "imex" an IMEX channel
# request; "wsl" a WSL2 host; "driver_root" a driver not at / (GPU Operator driver container); "nested" a container
# in a container; "debian" a Debian-family host or image.
CLASSES: list[tuple[str, str, str, str, str]] = [
    (
        "imex",
        r"imex",
        "imex",
        "IMEX channels",
        "the IMEX channel device the job asks for (NVIDIA_IMEX_CHANNELS) is not injected or not checked",
    ),
    ("mig", r"\bmig\b", "mig", "MIG", "MIG devices are not injected or their CDI specs are not generated"),
    (
        "cgroup",
        r"cgroup",
        "cgroup2",
        "cgroups",
        "the device cgroup is not set up, so the container is denied its GPU device nodes",
    ),
    ("wsl", r"wsl", "wsl", "WSL2", "the WSL2 driver store files are not injected"),
    ("csv", r"\bcsv\b|tegra|thor|orin|igpu|jetpack", "mode:csv", "Tegra CSV", "Tegra / iGPU files are not injected"),
    (
        "gsp_firmware",
        r"gsp firmware",
        "injection",
        "GSP firmware",
        "the GSP firmware files are not mounted, so the driver in the container cannot start the GPU",
    ),
    (
        "driver_root",
        r"driver[ .]?root|non-standard driver root|driver container",
        "driver_root",
        "driver root",
        "driver libraries are looked up at the wrong root (a driver container's /run/nvidia/driver)",
    ),
    (
        "cdi",
        r"\bcdi\b|jit-cdi|just-in-time",
        "mode:cdi",
        "CDI spec generation",
        "the CDI spec, or the just-in-time spec, is wrong or missing, so the runtime injects nothing or fails",
    ),
    (
        "ldconfig",
        r"ldconfig|ldcache|update-ldcache|ld\.so\.cache",
        "injection",
        "ldconfig",
        "the container's linker cache is not updated, so libcuda.so.1 / libnvidia-ml.so.1 are not found",
    ),
    (
        "symlinks",
        r"symlink|/dev/char",
        "injection",
        "symlinks",
        "symlinks to the injected libraries or device nodes are missing or wrong",
    ),
    (
        "cuda_compat",
        r"cuda compat|cudacompat|compat (?:check|libs|container)|forward compat",
        "injection",
        "CUDA forward compat",
        "the image's CUDA forward-compat libcuda is used (or not) against the host driver wrongly",
    ),
    (
        "device_nodes",
        r"device nodes?|device selection|visible_devices|swarm|devices? (?:were|was) detected|device permission",
        "injection",
        "device nodes",
        "the wrong GPU device nodes (or none) are given to the container",
    ),
    (
        "library_injection",
        r"\blib[\w.-]*\.so|librar(?:y|ies)|libcuda|nvidia-smi|mounts?\b",
        "injection",
        "library injection",
        "a driver library or tool the job needs is not mounted into the container",
    ),
    ("nested", r"nested container", "nested", "nested containers", "GPU setup fails in a container in a container"),
    ("rpc", r"\brpc\b", "injection", "driver RPC", "libnvidia-container crashes while it queries the driver"),
]


# Where a fix's entry does not say when the defect came in but a maintainer did: entry text -> (release, source). These
# rows also get their own condition, "legacy-imex": an image with CUDA_VERSION and no NVIDIA_REQUIRE_CUDA ("legacy")
# that sets no NVIDIA_IMEX_CHANNELS, which the hook then defaults to "all" (rule NODE-CTK-LEGACY-IMEX)
LEGACY_IMEX = "legacy-imex"
INTRODUCED = {
    "fixed a bug where legacy images would set imex channels as `all`": (
        "1.17.0",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/797 (maintainer: since 1.17.0 a legacy image "
        "without NVIDIA_IMEX_CHANNELS gets 'all', which libnvidia-container rejects)",
    ),
    "fix nvidia_imex_channels handling on legacy images": (
        "1.17.0",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/797",
    ),
}


def _line(version: str) -> tuple[int, ...]:
    return version_key(version)[:2]


def _subjects(mirror: Mirror) -> dict[str, list[str]]:
    """Commit subject (lower case, no trailing dot) -> the commits on any branch with it."""
    out: dict[str, list[str]] = {}
    for row in mirror.git("log", "--all", "--no-merges", "--format=%H%x09%s").splitlines():
        commit, _, subject = row.partition("\t")
        out.setdefault(_norm(subject), []).append(commit)
    return out


def _norm(text: str) -> str:
    return text.strip().rstrip(".").lower()


def _first_per_line(mirror: Mirror, commits: list[str], finals: set[str]) -> list[str]:
    tags: set[str] = set()
    for commit in commits:
        tags |= {t for t in mirror.git("tag", "--contains", commit).split() if t in finals}
    firsts: dict[tuple[int, ...], str] = {}
    for tag in sorted(tags, key=version_key):
        firsts.setdefault(_line(tag), tag)
    return [t.lstrip("v") for t in sorted(firsts.values(), key=version_key)]


def _classify(text: str) -> tuple[str, str, str, str] | None:
    for key, pattern, applies, area, effect in CLASSES:
        if re.search(pattern, text, re.I):
            return key, applies, area, effect
    return None


def _final_for(tag: str, finals: list[str]) -> str | None:
    """The first final release containing an entry of `tag` (an rc ships in the release it precedes)."""
    base = tag.split("-", 1)[0]
    if "-" not in tag:
        return tag
    later = [f for f in finals if version_key(f) >= version_key(base)]
    return min(later, key=version_key) if later else None


def parse(changelog: str) -> list[dict[str, str]]:
    """Every entry: its release heading, component and text."""
    entries: list[dict[str, str]] = []
    release, component = None, "toolkit"
    for line in changelog.splitlines():
        heading = _HEADING.match(line)
        if heading:
            release, component = heading["tag"], "toolkit"
            continue
        section = _SECTION.match(line)
        if section:
            what = section["what"].lower()
            component = "libnvidia-container" if "libnvidia-container" in what else "toolkit-container"
            continue
        entry = _ENTRY.match(line)
        if entry and release:
            text = entry["text"]
            comp = component
            prefix = re.match(r"\[(?P<p>[^\]]+)\]\s*(?P<rest>.*)", text)
            if prefix and "libnvid" in prefix["p"].lower():
                comp, text = "libnvidia-container", prefix["rest"]
            elif prefix and "toolkit container" in prefix["p"].lower():
                comp, text = "toolkit-container", prefix["rest"]
            entries.append({"release": release, "component": comp, "text": text})
    return entries


def rows_of(entries: list[dict[str, str]], finals: list[str], mirror: Mirror) -> list[dict[str, object]]:
    subjects = _subjects(mirror)
    final_set = set(finals)
    rows: list[dict[str, object]] = []
    seen: set[str] = set()
    for e in entries:
        text = e["text"]
        if not _FIX.search(text) and not re.search(
            r"^Add \S+ (?:library )?to (?:the )?list of|^Add \S+ library to CDI spec|^Mount \S+ file", text, re.I
        ):
            continue  # a feature, not a defect or an injection-list change
        if _NOT_JOB.search(text) or e["component"] == "toolkit-container" and not _FIX.search(text):
            continue
        cls = _classify(text)
        if cls is None:
            continue
        key, applies, area, effect = cls
        commits = subjects.get(_norm(text)) or subjects.get(_norm(re.sub(r"^\[[^\]]+\]\s*", "", text))) or []
        fixed = _first_per_line(mirror, commits, final_set) if commits else []
        placed = "git tag --contains" if fixed else "CHANGELOG section"
        if not fixed:
            section = _final_for(e["release"], finals)
            fixed = [section.lstrip("v")] if section else []
        ident = f"{key}:{fixed[0] if fixed else '-'}:{re.sub(r'[^a-z0-9]+', '-', text.lower())[:60].strip('-')}"
        if ident in seen:
            continue
        seen.add(ident)
        intro = _INTRODUCED.search(text)
        override = INTRODUCED.get(_norm(text))
        if override:
            applies = LEGACY_IMEX
        since = (intro["v"] or intro["v2"]) if intro else (override[0] if override else None)
        sources = [f"{REPO}@v{fixed[0]}:CHANGELOG.md ({e['release']})" if fixed else f"{REPO}:CHANGELOG.md"]
        if override:
            sources.append(override[1])
        row: dict[str, object] = {
            "key": ident,
            "component": e["component"],
            "kind": "fix" if _FIX.search(text) else "injects",
            "class": key,
            "area": area,
            "applies": applies,
            "entry": text,
            "effect": effect,
            "affected_from": since,
            "fixed_in": fixed,
            "placed_by": placed,
            "listed_under": e["release"],
            "source": sources if len(sources) > 1 else sources[0],
            "confidence": "verified",
        }
        if since is None:
            row["note"] = "the CHANGELOG names the release that fixed it, not the one that introduced it"
        rows.append(row)
    return rows


def main(path: str) -> None:
    mirror = Mirror(path)
    finals = sorted(mirror.tags(FINAL.pattern), key=version_key)
    newest = finals[-1]
    entries: list[dict[str, str]] = []
    known: set[tuple[str, str]] = set()
    for tag in finals:  # the release branches' patch releases are only in CHANGELOG.md at their own tags
        for e in parse(mirror.show(tag, "CHANGELOG.md") or ""):
            if (e["release"], e["text"]) not in known:
                known.add((e["release"], e["text"]))
                entries.append(e)
    entries.sort(key=lambda e: version_key(e["release"]), reverse=True)
    rows = rows_of(entries, finals, mirror)
    fixes = sum(1 for e in entries if _FIX.search(e["text"]))
    doc = {
        "table": "container_toolkit_changes",
        "description": "NVIDIA Container Toolkit and libnvidia-container fixes (and injection-list changes) that decide "
        "whether a GPU job's container gets its driver files, device nodes and links, each with the first release "
        "that has it. Generated by tools/upstreams/gen_container_toolkit.py from CHANGELOG.md at the newest tag; do "
        "not edit.",
        "coverage": {
            "releases": len({e["release"] for e in entries}),
            "changelog_entries": len(entries),
            "newest": newest,
            "fix_entries": fixes,
            "encoded": len(rows),
            "left_out": "packaging, build, tests, logging, runtime-configuration commands (nvidia-ctk runtime/config), "
            "and features; libnvidia-container's releases before v1.8 (its own repository's debian/changelog, not "
            "read: the snapshot is too large to fetch)",
        },
        "rows": rows,
    }
    (CATALOGS / "container_toolkit_changes.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(entries)} entries ({fixes} fixes) in {doc['coverage']['releases']} releases; {len(rows)} rows")


if __name__ == "__main__":
    main(sys.argv[1])
