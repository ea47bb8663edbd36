"""Second RDMA stacks inside Python wheels: nixl, pyverbs, libucx-style wheels ship their own rdma-core,
UCX or DOCA libraries (auditwheel renames them lib<name>-<8 hex>.so.N into `<dist>.libs/`).

Those copies are found through the wheel's extension modules' RPATH ($ORIGIN/...), so a Python
process importing the distribution loads them, while every other process gets the system copy: two
stacks, each of which must match the node (its PABI against the node's providers, its UCX against the
transports). They are reported with which process would load them; the system copy stays the one in
`rdma` and `ucx`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ..elf.reader import NotElf, read_elf
from ..model.image import BundledStack
from ..view.fileview import FileView
from ..view.wants import ANY_DIRS, Want
from .python import Distribution, PythonFacts
from .rdma import compiled_dirs

_HASH = r"(?:-[0-9a-f]{8})?"
WANTS = (
    # auditwheel-renamed copies; the plain names are wanted by rdma/ucx already (anywhere)
    Want(ANY_DIRS + r"libibverbs-[0-9a-f]{8}\.so\.1(?:\.[0-9]+)*", content=True, max_bytes=16 * 1024 * 1024),
    Want(ANY_DIRS + r"lib(?:mlx5|efa|rdmacm|ucp|ucs|uct)-[0-9a-f]{8}\.so(?:\.[0-9]+)*"),
    Want(ANY_DIRS + r"libdoca_[a-z0-9_]+\.so(?:\.[0-9]+)*"),
)
_KINDS = (
    (
        "rdma-core",
        re.compile(r"lib(?:ibverbs|mlx5|efa|rdmacm)" + _HASH + r"\.so(?:\.[0-9]+)*|lib[^/]+-rdmav[0-9]+\.so"),
    ),
    ("ucx", re.compile(r"libuc[pst]" + _HASH + r"\.so(?:\.[0-9]+)*")),
    ("doca", re.compile(r"libdoca_[a-z0-9_]+\.so(?:\.[0-9]+)*")),
)
_VERBS = re.compile(r"libibverbs" + _HASH + r"\.so\.1\.\d+\.(\d+(?:\.\d+)*)$")
_PRIVATE = re.compile(r"IBVERBS_PRIVATE_(\d{1,9})$")  # bounded: symbol versions are image data


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extract(view: FileView, python: PythonFacts) -> list[BundledStack]:
    stacks: dict[tuple[str, str], dict[str, Any]] = {}
    sites = set(python.sites)
    by_site: dict[str, dict[str, Distribution]] = {}
    for d in python.distributions:
        by_site.setdefault(d.site, {})[d.name] = d
    for path in view.entries:  # one pass: each path's site is the nearest ancestor that is one
        base = posixpath.basename(path)
        kind = next((k for k, rx in _KINDS if rx.fullmatch(base)), None)
        if kind is None:
            continue
        site = posixpath.dirname(path)
        while site and site not in sites:
            site = posixpath.dirname(site)
        if not site or posixpath.dirname(path) == site:
            continue  # not inside a distribution's directory on a site
        top = path[len(site) + 1 :].split("/", 1)[0]
        key = (site + "/" + top, kind)
        stack = stacks.setdefault(
            key,
            {
                "libs": [],
                "site": site,
                "top": top,
                "dists": by_site.get(site, {}),
                "layer": None,
                "version": None,
                "private": None,
            },
        )
        stack["libs"].append("/" + path)
        stack["layer"] = stack["layer"] or view.entries[path].layer
        if kind == "rdma-core" and (match := _VERBS.search(base)):
            stack["version"] = match.group(1)
            ref = view.file(path)
            if ref is not None and ref.data is not None:
                try:
                    defined = read_elf(ref.data).defined_versions
                    stack["private"] = next((int(m.group(1)) for v in defined if (m := _PRIVATE.match(v))), None)
                except NotElf:
                    pass
                # where this copy looks for providers: a system path, not the wheel's
                stack["dirs"] = compiled_dirs(ref.data)
    found = []
    for (directory, kind), stack in sorted(stacks.items()):
        # the owning distribution: the top-level directory's name (`nixl`, `nixl_cu12.libs`, `libucx`)
        top = _canonical(stack["top"].removesuffix(".libs"))
        dist = stack["dists"].get(top) or next(
            (d for name, d in stack["dists"].items() if name.startswith(top + "-") or top.startswith(name)), None
        )
        version = stack["version"]
        if version is None and kind == "ucx" and dist is not None and "ucx" in dist.name:
            version = dist.version  # libucp's own file version is 0.0.0; a libucx wheel's version is UCX's
        who = dist.name if dist else stack["top"]
        provider_dir, config_dir = stack.get("dirs", (None, None))
        system: tuple[str, ...] = ()
        if provider_dir:  # what this copy would find there (its PABI must match theirs)
            system = tuple(
                "/" + p for p in view.paths(re.escape(provider_dir.strip("/")) + r"/lib[^/]+-rdmav[0-9]+\.so")
            )
        found.append(
            BundledStack(
                kind=kind,
                path="/" + directory,
                distribution=dist.name if dist else None,
                version=version,
                libraries=tuple(sorted(stack["libs"])),
                private_abi=stack["private"],
                loaded_by=f"a Python process importing {who} (its modules' RPATH); other processes load the system copy",
                layer=stack["layer"],
                provider_dir=provider_dir,
                config_dir=config_dir,
                system_providers=system,
            )
        )
    return found
