"""What the user runs: a framework and, optionally, its version ("pytorch", "pytorch==2.5", "pytorch>=2.4").

Framework versions are Python package versions (NGC's torch "2.4.0a0+07cecf4168" is a PEP 440 pre-release
with a local part), so they are compared by PEP 440 (packaging). A bare "==2.5" means the 2.5 series
(2.5.0a0, 2.5.0, 2.5.1), which is what people mean when they say "PyTorch 2.5".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError

_SPEC = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_.-]*)\s*(.*)$")
# Names people type for the frameworks the catalog knows, mapped to the catalog's word.
_ALIASES = {
    "torch": "pytorch",
    "pytorch": "pytorch",
    "tf": "tensorflow",
    "tensorflow": "tensorflow",
    "paddle": "paddlepaddle",
    "paddlepaddle": "paddlepaddle",
    "mxnet": "mxnet",
    "jax": "jax",
    "cuda-dl": "cuda-dl",
    "cuda-dl-base": "cuda-dl",
    "cuda": "cuda",
    "triton": "triton",
    "tritonserver": "triton",
    "nemo": "nemo",
}


@dataclass(frozen=True)
class FrameworkWant:
    name: str
    spec: str | None = None  # PEP 440 specifier as given ("==2.5.*", ">=2.4"), None: any version
    version: str | None = None  # the one version to be close to (from ==X or --like), for ranking

    def matches(self, version: str | None) -> bool | None:
        """True/False, or None when the candidate's version is unknown (then it is ranked after matches)."""
        if self.spec is None:
            return True
        v = parse(version)
        if v is None:
            return None
        return SpecifierSet(self.spec).contains(v, prereleases=True)

    def text(self) -> str:
        return self.name + (self.spec or "")


def parse(version: str | None) -> Version | None:
    if not version:
        return None
    try:
        return Version(version.split(";")[0].strip())
    except InvalidVersion:
        return None


def parse_want(text: str) -> FrameworkWant:
    """'pytorch', 'pytorch==2.5', 'torch>=2.4,<2.7' -> FrameworkWant; UsageError on anything else."""
    m = _SPEC.match(text or "")
    if not m:
        raise UsageError(f"--framework {text!r}: expected NAME or NAME==VERSION (e.g. pytorch==2.5)")
    name, rest = m.group(1).lower(), m.group(2).strip()
    name = _ALIASES.get(name, name)
    if not rest:
        return FrameworkWant(name)
    spec = rest
    single = re.fullmatch(r"==\s*([0-9][0-9A-Za-z.+]*)", rest)
    if single and "*" not in rest and "+" not in rest:
        spec = f"=={single.group(1)}.*"  # "==2.5": the 2.5 series
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        raise UsageError(f"--framework {text!r}: {rest!r} is not a version specifier (e.g. ==2.5, >=2.4)") from None
    return FrameworkWant(name, spec, single.group(1) if single else None)


def distance(want_version: str | None, version: str | None) -> tuple[int, ...]:
    """Sort key for closeness of two framework versions: same major.minor first, then fewer minors away
    (newer before older at equal distance); unknown last."""
    a, b = parse(want_version), parse(version)
    if a is None:
        return (0,)
    if b is None:
        return (2,)
    ra, rb = (a.release + (0, 0))[:2], (b.release + (0, 0))[:2]
    if ra[0] != rb[0]:
        return (1, abs(ra[0] - rb[0]) * 1000, 0 if rb > ra else 1)
    return (0, abs(ra[1] - rb[1]), 0 if rb >= ra else 1)
