"""Generate src/imgcheck/data/triage/pyxis_enroot_messages.json: every error pyxis (github:NVIDIA/pyxis, the Slurm SPANK
plugin behind `srun --container-image`) prints with slurm_error("pyxis: ...") and every `common::err "..."` of enroot
(github:NVIDIA/enroot, which pyxis runs: printed as "[ERROR] ..." and, under pyxis, echoed as "pyxis:     [ERROR] ...")
at every release tag, each with a cause class, plus the runtime directories enroot creates at start-up (its
`mkdir -p ENROOT_CACHE_PATH ENROOT_DATA_PATH ENROOT_RUNTIME_PATH`, defaults read from enroot.in at each tag: the
runtime path is ${XDG_RUNTIME_DIR}/enroot with XDG_RUNTIME_DIR defaulting to /run, so a user without write access
to /run gets coreutils' "mkdir: cannot create directory '/run/enroot': Permission denied").

    python tools/upstreams/gen_pyxis_enroot_messages.py /work/.mirror

Classes name signatures of data/triage/msgcat_classes.json (ENROOT-NVIDIA-HOOK-FAILED is signatures.json's); formats
without a class are counted in `left_out` by reason (plugin-internal failures of Slurm API calls, pipes and memory,
configuration parsing of plugstack.conf, and informational lines).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_fabric_messages import regex_of  # noqa: E402
from git_read import Mirror, balanced, split_args, version_key, write_generated  # noqa: E402
from printf_formats import format_of  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/pyxis_enroot_messages.json"
USAGE = "usage: gen_pyxis_enroot_messages.py MIRRORS_DIR (the fetch tool's /work/.mirror)"
_MIN_FIXED = 14  # fixed characters a format needs to be told from other programs' lines

PYXIS_CLASSES: tuple[tuple[str, str], ...] = (
    (
        "PYXIS-IMPORT-FAILED",
        r"^pyxis: (?:failed to import docker image|importer %s (?:failed|terminated)|importer did not return)",
    ),
    (
        "PYXIS-CONTAINER-START",
        r"^pyxis: (?:failed to create container filesystem|failed to start container|container start (?:failed|error)|"
        r"container exited too soon|couldn't start container|couldn't execute enroot command)",
    ),
    (
        "PYXIS-NAMED-CONTAINER",
        r"^pyxis: (?:error: a container with name|container was not started successfully by another task|"
        r"a previous task terminated unexpectedly during container setup)",
    ),
    # pyxis's own runtime directory (plugstack.conf runtime_path, /run/pyxis by default)
    ("ENROOT-RUNTIME-PATH", r"^pyxis: (?:slurmd: )?couldn't mkdir %s: %s"),
    (
        "PYXIS-ARGUMENT",
        r"^pyxis: (?:--container-[\w-]+|both --|mount (?:source|target) must|could not add mount entry|"
        r"error: --container-unshare|error: \"%s\")",
    ),
)
PYXIS_LEFT = (
    (
        "configuration of the plugin (plugstack.conf options): the administrator's, the line names it",
        r"invalid value|configuration|unknown configuration",
    ),
    (
        "informational lines and hints (ignoring an option, printing a log, forwarding a signal)",
        r"ignoring|printing|received SIGTERM|if the image has|pytorch:",
    ),
    ("the echo of a log line (pyxis:     %s): the echoed line is matched by its own program's format", r"^pyxis: +%s$"),
)
ENROOT_CLASSES: tuple[tuple[str, str], ...] = (
    ("ENROOT-NVIDIA-HOOK-FAILED", r"nvidia-container-cli|NVIDIA driver capability"),
    (
        "ENROOT-REGISTRY",
        r"^URL %s returned error code|authentication realm|Unsupported authentication method|retrieve digest|"
        r"parse digest information|Invalid image reference|Checksum validation failed",
    ),
    ("ENROOT-NO-SPACE", r"^Not enough space left in"),
    ("ENROOT-HOOK-FAILED", r"^%s exited with return code|Unknown MELLANOX device id"),
)
# enroot's C helpers (bin/*.c) print err(3)/errx(3): "enroot-switchroot: failed to execute: /bin/bash: No such file"
HELPER_CLASSES: tuple[tuple[str, str], ...] = (
    ("ENROOT-EXEC-FAILED", r"^failed to execute: %s$"),
    (
        "ENROOT-USERNS",
        r"^failed to (?:create|join) user namespace|kernel lacks support for ambient capabilities|"
        r"^failed to (?:set|get) capabilities|^failed to drop privileges",
    ),
    ("ENROOT-MOUNT", r"^failed to mount|^invalid fstab entry|^failed to switch root|^failed to resolve path"),
)
HELPER_CALL = re.compile(r'\b(?:err|errx|warn|warnx)\(\s*(?:EXIT_FAILURE\s*,\s*)?"((?:[^"\\]|\\.)*)"')
RUNTIME_VARS = ("ENROOT_RUNTIME_PATH", "ENROOT_CACHE_PATH", "ENROOT_DATA_PATH")


def pyxis_formats(mirror: Mirror) -> tuple[list[str], dict[str, dict]]:
    tags = sorted(mirror.tags(r"v\d+\.\d+\.\d+"), key=version_key)
    seen: dict[str, dict] = {}
    for tag in tags:
        paths = [p for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n") if p.endswith(".c")]
        for path, text in mirror.show_many(tag, paths).items():
            for m in re.finditer(r"\bslurm_error\s*\(", text):
                end = balanced(text, m.end() - 1, "(", ")")
                args = split_args(text[m.end() : end - 1])
                fmt = format_of(args[0]) if args else None
                if fmt and fmt.startswith("pyxis:"):
                    _record(seen, fmt, tag, f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
    return [t.lstrip("v") for t in tags], seen


def _record(seen: dict[str, dict], fmt: str, tag: str, site: str) -> None:
    rel = tag.lstrip("v")
    row = seen.setdefault(fmt, {"format": fmt, "first": rel, "sites": []})
    row["last"] = rel
    if row["sites"] and row["sites"][-1][2] == site:
        row["sites"][-1][1] = rel
    else:
        row["sites"].append([rel, rel, site])


def _shell_format(lit: str) -> str:
    """A bash string's text with each expansion ($x, ${x}, $(...), $?) read as %s."""
    out = re.sub(r"\$\((?:[^()]|\([^()]*\))*\)", "%s", lit)
    out = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_?@#][A-Za-z0-9_]*", "%s", out)
    return re.sub(r"\$\(.*", "%s", out)  # a substitution with quotes inside, cut by the string match


def enroot_formats(mirror: Mirror) -> tuple[list[str], dict[str, dict], dict[str, dict], dict[str, dict[str, str]]]:
    tags = sorted(mirror.tags(r"v\d+\.\d+\.\d+"), key=version_key)
    seen: dict[str, dict] = {}
    helpers: dict[str, dict] = {}
    paths_by_tag: dict[str, dict[str, str]] = {}
    for tag in tags:
        files = [
            p
            for p in mirror.git("ls-tree", "-r", "--name-only", tag).split("\n")
            if p.endswith(".sh") or p in ("enroot.in", "enroot") or (p.startswith("bin/") and p.endswith(".c"))
        ]
        for path, text in mirror.show_many(tag, files).items():
            for m in re.finditer(r'common::err\s+"((?:[^"\\]|\\.|"\$\([^)]*\)")*)"', text):
                _record(seen, _shell_format(m.group(1)), tag, f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
            if path.startswith("bin/") and path.endswith(".c"):
                helper = "enroot-" + Path(path).stem.removeprefix("enroot-")
                for m in HELPER_CALL.finditer(text):
                    fmt = f"{helper}: {m.group(1)}".replace('\\"', '"')  # the C literal's escaped quotes
                    _record(helpers, fmt, tag, f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
            if path == "enroot.in":
                defaults = dict(re.findall(r'config::export\s+(\w+)\s+"([^"]*)"', text))
                paths_by_tag[tag.lstrip("v")] = {v: defaults[v] for v in RUNTIME_VARS if v in defaults}
    return [t.lstrip("v") for t in tags], seen, helpers, paths_by_tag


def _pick(fmt: str, classes: tuple[tuple[str, str], ...]) -> str | None:
    return next((sig for sig, rx in classes if re.search(rx, fmt)), None)


def build(mirrors: str) -> dict:
    rows: list[dict] = []
    left: dict[str, int] = {}
    p_rel, p_seen = pyxis_formats(Mirror(os.path.join(mirrors, "NVIDIA+pyxis", "repo")))
    e_rel, e_seen, e_helpers, runtime = enroot_formats(Mirror(os.path.join(mirrors, "NVIDIA+enroot", "repo")))
    for comp, seen, classes, repo in (
        ("pyxis", p_seen, PYXIS_CLASSES, "NVIDIA/pyxis"),
        ("enroot", e_seen, ENROOT_CLASSES, "NVIDIA/enroot"),
        ("enroot-helper", e_helpers, HELPER_CLASSES, "NVIDIA/enroot"),
    ):
        for fmt, row in sorted(seen.items()):
            sig = _pick(fmt.split(": ", 1)[1] if comp == "enroot-helper" else fmt, classes)
            regex, fixed = regex_of(fmt)
            if sig is None or fixed < _MIN_FIXED:
                why = next((w for w, rx in PYXIS_LEFT if re.search(rx, fmt)), None) if comp == "pyxis" else None
                why = why or (
                    f"{comp}-internal failures (Slurm API calls, pipes, namespaces, memory, locks, file checks of "
                    "its own) and argument checks whose text names the fix"
                )
                left[why] = left.get(why, 0) + 1
                continue
            if comp == "enroot":
                regex = r"\[ERROR\] " + regex  # common::log's prefix: without it the text is too common
            rows.append(
                {
                    "component": comp,
                    "format": fmt,
                    "first": row["first"],
                    "last": row["last"],
                    "site": f"{repo}@v{row['last']}:{row['sites'][-1][2]}",
                    "signatures": [{"signature": sig, "regex": regex}],
                }
            )
    # coreutils' mkdir failing on a directory enroot creates at start-up (enroot.in: mkdir -p of these paths)
    defaults = sorted({d for per in runtime.values() for d in per.values()})
    rows.append(
        {
            "component": "enroot",
            "format": "mkdir: cannot create directory '%s': %s",
            "first": min(runtime, key=version_key),
            "last": max(runtime, key=version_key),
            "site": f"NVIDIA/enroot@v{max(runtime, key=version_key)}:enroot.in",
            "paths": defaults,
            "signatures": [
                {
                    "signature": "ENROOT-RUNTIME-PATH",
                    "regex": r"mkdir: cannot create directory ['‘][^'’]*/enroot(?:/[^'’]*)?['’]: "
                    r"(?:Permission denied|Read-only file system|No space left on device|Disk quota exceeded)",
                }
            ],
        }
    )
    total = len(p_seen) + len(e_seen) + len(e_helpers) + 1
    return {
        "source": 'NVIDIA/pyxis slurm_error("pyxis: ...") and NVIDIA/enroot common::err at every release tag, and '
        "enroot.in's runtime path defaults; generated by tools/upstreams/gen_pyxis_enroot_messages.py",
        "confidence": "verified",
        "pyxis_releases": p_rel,
        "enroot_releases": e_rel,
        "enroot_runtime_paths": runtime,
        "coverage": {"formats": total, "mapped": len(rows), "left_out": sum(left.values())},
        "left_out": dict(sorted(left.items())),
        "messages": rows,
    }


if __name__ == "__main__":
    raise SystemExit(write_generated(sys.argv, USAGE, build, OUT))
