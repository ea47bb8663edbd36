"""Python distributions of the image: which directories Python imports from, and what is installed there.

Site directories are the ones CPython's site.py puts on sys.path: every directory named in the Env's
PYTHONPATH (`pip install --target DIR`), the standard names `<prefix>/lib/pythonX.Y/site-packages` and
Debian's `dist-packages` (`/usr/lib/python3/dist-packages`, `/usr/local/lib/pythonX.Y/dist-packages`),
and the directories `.pth` files in those add (https://docs.python.org/3/library/site.html).
A site-packages inside conda's package cache (`<conda>/pkgs/<build>/lib/...`) is no interpreter's:
its copies are not imported.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..model.image import Package
from ..view.fileview import FileView
from ..view.wants import ANY_DIRS, Want

# Distributions whose METADATA is read in full (requirements, versions); others are named by their
# directory, which the wheel spec makes `{name}-{version}.dist-info`.
READ_METADATA = r"(?:torch|nvidia_[a-z0-9_]+|nixl[a-z0-9_]*|pyverbs|libucx[a-z0-9_]*|ucx_py[a-z0-9_]*|ucxx[a-z0-9_]*)"
WANTS = (
    Want(ANY_DIRS + r"[^/]+\.dist-info/METADATA"),
    Want(ANY_DIRS + READ_METADATA + r"-[^/]+\.dist-info/METADATA", content=True, max_bytes=4 * 1024 * 1024),
    Want(ANY_DIRS + r"[^/]+\.egg-info(?:/PKG-INFO)?"),
    Want(ANY_DIRS + r"(?:site|dist)-packages/[^/]+\.pth", content=True, max_bytes=256 * 1024),
)
# site-packages of a prefix's interpreter, Debian's dist-packages, a venv's or root's user site
_STANDARD_SITE = re.compile(ANY_DIRS + r"lib(?:64)?/python[0-9]+(?:\.[0-9]+)?/(?:site|dist)-packages")
_DIST_INFO = re.compile(r"(?P<site>(?:[^/]+/)*?)(?P<name>[^/]+?)-(?P<version>[^-/]+)\.dist-info/METADATA")
_EGG_INFO = re.compile(
    r"(?P<site>(?:[^/]+/)*?)(?P<name>[^/]+?)-(?P<version>[^-/]+?)(?:-py[0-9.]+)?\.egg-info(?:/PKG-INFO)?"
)


@dataclass(frozen=True)
class Distribution:
    """One installed Python distribution on a site directory."""

    name: str  # canonical (PEP 503): nvidia-nccl-cu12
    version: str
    site: str  # the site directory, no leading slash
    path: str  # its METADATA (or egg-info), no leading slash
    layer: str | None
    metadata: str | None  # METADATA text when kept (READ_METADATA)


@dataclass(frozen=True)
class PythonFacts:
    sites: tuple[str, ...]  # no leading slash, in sys.path order as far as it is known
    distributions: tuple[Distribution, ...]
    how: dict[str, str]  # site -> why it is on sys.path


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _is_conda_cache(site: str) -> bool:
    # conda's package cache: <conda>/pkgs/<name>-<version>-<build>/lib/... holds unpacked packages, not environments
    return "/pkgs/" in "/" + site


def _kept_dirs(view: FileView) -> set[str]:
    """Every directory holding a kept entry: site checks are set lookups, so a hostile .pth with
    thousands of lines costs thousands of lookups, not thousands of scans of the view."""
    dirs: set[str] = set()
    for path in view.entries:
        parent = posixpath.dirname(path)
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return dirs


def site_dirs(view: FileView, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Site directories (no leading slash) and why each is one, in sys.path order: PYTHONPATH first."""
    sites: list[str] = []
    how: dict[str, str] = {}
    kept = _kept_dirs(view)

    def _dir_exists(_view: FileView, directory: str) -> bool:
        return posixpath.normpath(directory).strip("/") in kept

    def add(directory: str, why: str) -> None:
        directory = posixpath.normpath(directory).lstrip("/")
        if directory in ("", ".") or directory.startswith("..") or directory in how:
            return
        sites.append(directory)
        how[directory] = why

    for entry in (env.get("PYTHONPATH") or "").split(":"):
        if entry.startswith("/"):  # relative entries depend on the working directory
            add(entry, "PYTHONPATH")
    for path in view.paths(ANY_DIRS + r"[^/]+\.(?:dist|egg)-info(?:/METADATA|/PKG-INFO)?"):
        site = posixpath.dirname(path[: path.index("-info") + len("-info")])
        if _STANDARD_SITE.fullmatch(site) and not _is_conda_cache(site):
            add(site, "standard site directory name")
    # site.py reads .pth files only in the site directories it adds itself (addsitedir), not in PYTHONPATH
    # entries, and the directories a .pth adds are not scanned for .pth files in turn
    standard = {site for site, why in how.items() if why == "standard site directory name"}
    for pth in view.paths(ANY_DIRS + r"(?:site|dist)-packages/[^/]+\.pth"):
        site = posixpath.dirname(pth)
        if site not in standard:
            continue
        data = view.read(pth)
        for line in (data or b"").decode("utf-8", "replace").splitlines():
            line = line.strip()
            # comments are skipped, `import` lines are executed by site.py (never here), others are directories
            if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            target = line if line.startswith("/") else posixpath.join(site, line)
            if _dir_exists(view, target.lstrip("/")):
                add(target, f"/{pth}")
    return [s for s in sites if _dir_exists(view, s)], how


def extract(view: FileView, env: dict[str, str]) -> PythonFacts:
    sites, how = site_dirs(view, env)
    site_set = set(sites)
    dists: list[Distribution] = []
    for path in view.paths(ANY_DIRS + r"[^/]+\.dist-info/METADATA"):
        match = _DIST_INFO.fullmatch(path)
        if not match or match.group("site").rstrip("/") not in site_set:
            continue
        ref = view.file(path)
        text = ref.data.decode("utf-8", "replace") if ref is not None and ref.data is not None else None
        version = _field(text, "Version") or match.group("version")
        name = _field(text, "Name") or match.group("name")
        dists.append(
            Distribution(
                name=_canonical(name),
                version=version,
                site=match.group("site").rstrip("/"),
                path=path,
                layer=view.entries[path].layer,
                metadata=text,
            )
        )
    for path in view.paths(ANY_DIRS + r"[^/]+\.egg-info(?:/PKG-INFO)?"):
        match = _EGG_INFO.fullmatch(path)
        if not match or match.group("site").rstrip("/") not in site_set:
            continue
        if not path.endswith("/PKG-INFO") and path + "/PKG-INFO" in view.entries:
            continue  # the directory form, counted by its PKG-INFO
        dists.append(
            Distribution(
                name=_canonical(match.group("name")),
                version=match.group("version"),
                site=match.group("site").rstrip("/"),
                path=path,
                layer=view.entries[path].layer,
                metadata=None,
            )
        )
    order = {s: i for i, s in enumerate(sites)}
    dists.sort(key=lambda d: (order[d.site], d.name))
    return PythonFacts(sites=tuple(sites), distributions=tuple(dists), how=how)


def packages_of(facts: PythonFacts) -> list[Package]:
    return [
        Package(name=d.name, version=d.version, db="python", path="/" + d.path, layer=d.layer)
        for d in facts.distributions
    ]


def _field(text: str | None, name: str) -> str | None:
    if not text:
        return None
    # METADATA is RFC 822 headers; the body (description) starts after the first empty line
    head = text.split("\n\n", 1)[0]
    match = re.search(rf"^{name}:[ \t]*(\S[^\n]*)$", head, re.M)
    return match.group(1).strip() if match else None


def requires_dist(dist: Distribution) -> list[str]:
    if not dist.metadata:
        return []
    head = dist.metadata.split("\n\n", 1)[0]
    return [m.group(1).strip() for m in re.finditer(r"^Requires-Dist:[ \t]*(\S[^\n]*)$", head, re.M)]


def pinned(dist: Distribution, wanted: re.Pattern[str], machine: str | None = None) -> list[tuple[str, str, str]]:
    """(canonical name, pinned version, the requirement line) for each `==` pin of a wanted name.

    Every PEP 508 form (`name==v`, `name (==v)`, markers) is parsed by packaging; requirements
    behind an extra, or whose markers exclude Linux on this machine, are not installed and skipped.
    """
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    env = {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix", "extra": ""}
    if machine:
        env["platform_machine"] = machine
    found = []
    for line in requires_dist(dist):
        try:
            req = Requirement(line)
        except (InvalidRequirement, ValueError):
            continue  # an image's METADATA is untrusted text
        name = _canonical(req.name)
        if not wanted.fullmatch(name):
            continue
        if req.marker is not None:
            try:
                if not req.marker.evaluate(env):
                    continue
            except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
                pass  # a marker we cannot evaluate: keep the pin rather than drop a real requirement
        exact = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if len(exact) == 1:
            found.append((name, exact[0], line))
    return found
