"""The Env an NVIDIA image family sets, read from the catalogs when the image's own Env is not read (issue 32).

An image built FROM nvidia/cuda or an NGC framework image inherits that image's Env (NVIDIA_VISIBLE_DEVICES=all,
NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_CUDA, LD_LIBRARY_PATH ...) unless a later ENV sets a variable again. When
the facts do not hold the image's Env but its reference names such an image ("nvcr.io/nvidia/pytorch:23.10-py3",
"... FROM nvidia/cuda:12.2.0-devel-ubuntu22.04"), the family's Env is evidence of what the image sets: a third state
between read and unknown, always named as inferred, with the catalog row's source and confidence.

- nvidia/cuda (catalog nvidia_image_env, every tag from NVIDIA's Dockerfiles): a tag's Env is its own ENV lines over
  the Env of the tag it is built FROM. A tag that matches one row gives that row's values; a partial tag
  ("12.2.0-devel", none at all) gives only the values every matching tag agrees on.
- NGC frameworks (catalog ngc_image_env): a release with a row gives what the row records; a variable the row does
  not record (or a release without a row) gets the value every recorded release of that image agrees on, if at least
  two record it and none differs (confidence inferred).
A variable whose amd64 and arm64 values differ takes the platform's value (the amd64 one, said so, when the platform is
not known). For an image built FROM the family (a reference that is more than the family's own name), the search paths
(PATH, LD_LIBRARY_PATH, LIBRARY_PATH) are not inferred: derived images extend them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..matrix import Matrix
    from ..model.image import ImageFacts

CUDA_TABLE = "nvidia_image_env"
NGC_TABLE = "ngc_image_env"
CUDA_IMAGE = "nvidia/cuda"
# a reference that names nvidia/cuda (Docker Hub or nvcr.io) or an NGC image, with its tag if given, also in enroot's
# form (Pyxis --container-image=nvcr.io#nvidia/pytorch:24.01-py3); the lookarounds keep "example.com/nvidia/cuda" and
# "nvcr.io/nvidia/cuda-dl-base" out
_REF = re.compile(
    r"(?<![\w./-])(?:(?:docker\.io|registry-1\.docker\.io|nvcr\.io)[/#])?(?P<image>nvidia/cuda|(?<=nvcr\.io[/#])nvidia/[\w.-]+)"
    r"(?![\w-])(?::(?P<tag>[\w.-]+))?"
)
# what an image built FROM the family typically sets again around the inherited value (ENV PATH=/opt/x:${PATH}): from
# the base alone the derived image's value is not known
EXTENDED = ("PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH")
_REF_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


@dataclass(frozen=True)
class InferredVar:
    """A variable the image's family sets, inferred for an image whose own Env is not read."""

    name: str
    value: str
    family: str  # "nvidia/cuda:12.2.0-devel-ubuntu22.04", "nvcr.io/nvidia/pytorch (every recorded release)"
    source: str  # the catalog row(s) it comes from
    confidence: str  # the row's ("reported") or "inferred" (agreed by several rows, not read for this tag)

    @property
    def words(self) -> str:
        return (
            f"inferred from the image's reference: {self.family} sets {self.name}={self.value} "
            f"(catalog {self.source}; confidence {self.confidence}); the image's own Env is not read, "
            "and a later ENV of a derived image may set it again"
        )


def references(reference: str) -> list[tuple[str, str | None, bool]]:
    """(image, tag, whether the reference is that image itself rather than one built FROM it) of each NVIDIA image
    the reference text names: nvidia/cuda, nvcr.io/nvidia/<name>."""
    out = []
    text = (reference or "").strip()
    for m in _REF.finditer(text):
        image = m.group("image")
        itself = m.start() == 0 and m.end() == len(text) or text[m.end() :].startswith("@sha256:")
        out.append((CUDA_IMAGE if image == CUDA_IMAGE else f"nvcr.io/{image}", m.group("tag"), itself))
    return out


def _arch(platform: str | None) -> str | None:
    text = (platform or "").lower()
    if "arm64" in text or "aarch64" in text:
        return "arm64"
    if "amd64" in text or "x86_64" in text:
        return "amd64"
    return None


def _own(row: dict[str, Any], arch: str | None) -> dict[str, str | None]:
    """A row's own values for `arch`. With the arch unknown, a variable both builds set to different values keeps the
    amd64 one (ARCH_SPLIT words say so; for NVIDIA_REQUIRE_CUDA it is the more permissive: the same cuda>= clause
    plus driver-branch alternatives), and one only one build sets is None (whether it is set is not known)."""
    env: dict[str, str | None] = dict(row["env"])
    differs = row.get("env_arm64") or {}
    for name, arm in differs.items():
        amd = env.get(name)
        if arch == "arm64":
            env[name] = arm
        elif arch is None:
            env[name] = amd if amd is not None and arm is not None else None
    return env


def _split(row: dict[str, Any], arch: str | None) -> set[str]:
    """The variables _own gave the amd64 value of for an unknown arch."""
    if arch is not None:
        return set()
    return {n for n, arm in (row.get("env_arm64") or {}).items() if arm is not None and row["env"].get(n) is not None}


ARCH_SPLIT = "the amd64 value: the image's platform is not known and the arm64 build sets another"


def _compose(rows: dict[str, dict[str, Any]], tag: str, arch: str | None) -> dict[str, tuple[str | None, str, bool]]:
    """name -> (value, the tag whose Dockerfile sets it, whether it is the amd64 value of an unknown arch), the tag's
    own ENV over its FROM chain's. A value that still names a variable of the distro image (`${PATH}`) is None: the
    catalog does not hold the distro's Env."""
    chain = []
    seen: set[str] = set()
    current: str | None = tag
    while current is not None and current in rows and current not in seen:
        seen.add(current)
        chain.append(rows[current])
        current = rows[current].get("from")
    env: dict[str, tuple[str | None, str, bool]] = {}
    for row in reversed(chain):
        split = _split(row, arch)
        for name, value in _own(row, arch).items():
            if value is not None:
                value = _REF_VAR.sub(lambda m: (env.get(m.group(1) or m.group(2)) or (None,))[0] or m.group(0), value)
            env[name] = (None if value is None or "$" in value else value, str(row["tag"]), name in split)
    return env


def _agreed(envs: Iterable[dict[str, str | None]], minimum: int) -> dict[str, str]:
    """The values every env that states a name agrees on, stated by at least `minimum` of them (None: disagree)."""
    values: dict[str, set[str | None]] = {}
    counts: dict[str, int] = {}
    for env in envs:
        for name, value in env.items():
            values.setdefault(name, set()).add(value)
            counts[name] = counts.get(name, 0) + 1
    out = {}
    for name, found in values.items():
        value = next(iter(found))
        if len(found) == 1 and value is not None and counts[name] >= minimum:
            out[name] = value
    return out


def _cuda_rows(matrix: Matrix) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = matrix.derived(
        CUDA_TABLE, lambda m: {str(r["tag"]): r for r in m.rows(CUDA_TABLE)}
    )
    return rows


def _composed(matrix: Matrix, arch: str | None) -> dict[str, dict[str, tuple[str | None, str, bool]]]:
    """Every tag's Env for `arch`, composed once per matrix (a partial tag compares them all)."""
    rows = _cuda_rows(matrix)
    composed: dict[str, dict[str, tuple[str | None, str, bool]]] = matrix.derived(
        f"{CUDA_TABLE}:{arch}", lambda m: {t: _compose(rows, t, arch) for t in rows}
    )
    return composed


_ANSWERS = 512  # references remembered per matrix: the rules ask the same image's family once per evaluation


def _cuda(matrix: Matrix, tag: str | None, arch: str | None) -> dict[str, InferredVar]:
    answers: dict[tuple[str | None, str | None], dict[str, InferredVar]] = matrix.derived(
        f"{CUDA_TABLE}:answers", lambda m: {}
    )
    key = (tag, arch)
    if key not in answers:
        found = _cuda_family(matrix, tag, arch)
        if len(answers) >= _ANSWERS:
            answers.clear()
        answers[key] = found
    return answers[key]


def _cuda_family(matrix: Matrix, tag: str | None, arch: str | None) -> dict[str, InferredVar]:
    rows = _cuda_rows(matrix)
    composed = _composed(matrix, arch)
    if tag in rows:
        return {
            n: InferredVar(
                n,
                v,
                f"{CUDA_IMAGE}:{tag}" + (f" ({ARCH_SPLIT})" if split else ""),
                f"{CUDA_TABLE} {at}: {rows[at]['source']}",
                "inferred" if split else rows[at]["confidence"],
            )
            for n, (v, at, split) in composed[tag].items()
            if v is not None
        }
    words = [w for w in (tag or "").split("-") if w and w != "latest"]
    matching = [t for t in rows if all(any(p == w or p.startswith(w + ".") for p in t.split("-")) for w in words)]
    if not matching:
        return {}
    agreed = _agreed(({n: v for n, (v, _, _) in composed[t].items()} for t in matching), len(matching))
    family = f"{CUDA_IMAGE}:{tag}" if tag else CUDA_IMAGE
    source = f"{CUDA_TABLE}: the {len(matching)} tags matching {tag or 'any tag'} agree"
    return {n: InferredVar(n, v, f"every {family} tag", source, "inferred") for n, v in agreed.items()}


def _ngc(matrix: Matrix, image: str, tag: str | None, arch: str | None) -> dict[str, InferredVar]:
    rows = [r for r in matrix.rows(NGC_TABLE) if r["image"] == image]
    if not rows:
        return {}
    tags = ", ".join(str(r["tag"]) for r in rows)
    agreed = _agreed((_own(r, arch) for r in rows), 2)
    out = {
        n: InferredVar(n, v, f"{image} (every recorded release: {tags})", f"{NGC_TABLE} {image}", "inferred")
        for n, v in agreed.items()
    }
    for row in rows:
        if row["tag"] == tag:
            source = f"{NGC_TABLE} {image}:{tag}: {row['source']}"
            for n, v in _own(row, arch).items():
                if v is not None:
                    out[n] = InferredVar(n, v, f"{image}:{tag}", source, str(row["confidence"]))
    return out


def family_env(matrix: Matrix, image: ImageFacts) -> dict[str, InferredVar]:
    """The variables the image's NVIDIA family sets, when its own Env is not read (empty when it is read, or when
    the reference names no family the catalogs hold). Several families named: only the values they agree on."""
    if not image.unknown_reason("env"):
        return {}
    arch = _arch(image.platform)
    found = []
    for name, tag, itself in references(image.reference):
        env = _cuda(matrix, tag, arch) if name == CUDA_IMAGE else _ngc(matrix, name, tag, arch)
        if not itself:  # an image built FROM it: the search paths are what derived images extend, not keep
            env = {n: v for n, v in env.items() if n not in EXTENDED}
        if env:
            found.append(env)
    if not found:
        return {}
    first = found[0]
    return {n: v for n, v in first.items() if all(n in e and e[n].value == v.value for e in found[1:])}
