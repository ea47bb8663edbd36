"""The Env lint for the communication libraries beside NCCL: every UCX_*, OFI_NCCL_* and FI_* setting the process
gets (image Env, the launch spec's env) against what each release of its library reads (catalogs/ucx_params.json
and catalogs/ofi_params.json, generated from the release tags by tools/upstreams/): a name no release reads (with the
nearest one that does), a name this release does not read yet or no longer. NCCL_* names are env_nccl_params'.

A library the image does not have is not this family's concern (its own rules say so); a library whose version is
unknown makes the release check unknown, never silent."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..model.report import Evidence, Finding
from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("ENV-UPSTREAM-PARAM-UNKNOWN", "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE", "ENV-PARAM-NEAR-MISS")
NEAR_MISS = "ENV-PARAM-NEAR-MISS"
# names every release reads: the tables are there (validate refuses a matrix without them)
NEEDS: dict[str, set[Any]] = {
    "ucx_params": {"UCX_TLS"},
    "ofi_params": {"FI_PROVIDER", "OFI_NCCL_GDR_FLUSH_DISABLE"},
    "torch_nccl_env": {"TORCH_NCCL_ASYNC_ERROR_HANDLING"},
}

# a vendor build of the library (AWS's 1.22.0amzn4.0, HPE's cray builds) may read a variable before or after the
# upstream release of the same number: the release check is then unknown, never a finding
# What each rule is about and reads (engine/contract.py): the UCX_*, FI_*, OFI_NCCL_* and TORCH_NCCL_* settings the
# process sees, against the library releases that read them.
_SETTINGS = tuple(facts.setting_prefix(p) for p in ("UCX_", "FI_", "OFI_NCCL_", "TORCH_NCCL_"))
REQUIRES: dict[str, tuple[facts.Fact, ...]] = {rule: () for rule in RULES}
# the names PyTorch 2.2.0 renamed (the old one is still read, as a deprecated alias): catalogs/torch_nccl_env.json
_TORCH_OLD = facts.setting(
    "NCCL_BLOCKING_WAIT",
    "NCCL_ENABLE_TIMING",
    "NCCL_DESYNC_DEBUG",
    "NCCL_ASYNC_ERROR_HANDLING",
    "ENABLE_NCCL_HEALTH_CHECK",
    "NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
)
READS = {rule: (*_SETTINGS, facts.UCX, facts.PLUGINS) for rule in RULES}
READS["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"] += (_TORCH_OLD, facts.PACKAGES)
READS[NEAR_MISS] = (facts.ANY_SETTING,)  # every variable the process gets, whatever its prefix

_VENDOR_BUILD = re.compile(r"\d(amzn|cray|hpe|aws|nvidia|mlnx)", re.I)
_FI_PROVIDER_PREFIX = re.compile(r"FI_([A-Z0-9]+)_")
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")
_TORCH_PREFIXES = ("TORCH_NCCL_", "TORCH_ENABLE_NCCL_")
# UCX_-prefixed names another program reads, not UCX: ucx-py's own settings (UCX_PY_LOG_LEVEL in its docs,
# https://ucx-py.readthedocs.io/en/latest/configuration.html)
_NOT_UCX = ("UCX_PY_",)


@dataclass(frozen=True)
class _Library:
    upstream: str
    table: str
    version: str | None  # release number only ("1.9.1" of "1.9.1-aws")
    evidence: list[Evidence]
    why_unknown: str | None  # why the version is unknown; None when known
    vendor: str | None = None  # the raw version when it is a vendor build (see _VENDOR_BUILD)


def check(ctx: Ctx) -> Iterator[Outcome]:
    outcomes = [*_check(ctx), *_torch_old_names(ctx), *_near_misses(ctx)]
    found = {o.id for o in outcomes if isinstance(o, Finding)}
    seen: set[str] = set()
    for o in outcomes:
        if isinstance(o, Finding):
            yield o
        elif o.rule not in found and o.rule not in seen:
            seen.add(o.rule)  # one unknown per rule: the first names the fact it needs
            yield o


def _names(ctx: Ctx) -> list[str]:
    found = set(ctx.image.env)
    if ctx.job is not None:
        found |= {v.name for v in ctx.job.env}
    names = (n for n in found if n.startswith(("UCX_", "OFI_NCCL_", "FI_", *_TORCH_PREFIXES)))
    return sorted(n for n in names if not n.startswith(_NOT_UCX))


def _release(text: str | None) -> str | None:
    m = _VERSION.search(text or "")
    return m.group(0) if m else None


def _library(ctx: Ctx, name: str) -> _Library:
    img = ctx.image
    if name.startswith("UCX_"):
        ucx = img.ucx
        why = ctx.image_unknown("ucx") or (
            None if ucx is None or ucx.version else "the image's UCX version was not read"
        )
        ev = [Evidence("image.ucx.version", ucx.version, ucx.location)] if ucx else []
        if ucx is None and why is None:
            why = "the image has no UCX; the setting matters only to a UCX the job brings"
        return _Library(
            "UCX", "ucx_params", _release(ucx.version if ucx else None), ev, why, _vendor(ucx.version if ucx else None)
        )
    if name.startswith("OFI_NCCL_"):
        plugins = [p for p in img.nccl_net_plugins if (p.project or "").startswith("aws-ofi-nccl") or "ofi" in p.name]
        version = next((p.version for p in plugins if p.version), None)
        why = ctx.image_unknown("nccl_net_plugins")
        if why is None and version is None:
            why = (
                "the aws-ofi-nccl plugin's release was not read" if plugins else "the image has no aws-ofi-nccl plugin"
            )
        ev = [Evidence("image.nccl_net_plugins.version", p.version, p.location) for p in plugins[:1]]
        return _Library("aws-ofi-nccl", "aws-ofi-nccl", _release(version), ev, why)  # -aws: the upstream's own tags
    fab = img.libfabric
    why = ctx.image_unknown("libfabric") or (None if fab is None or fab.version else "libfabric's release was not read")
    if fab is None and why is None:
        why = "the image has no libfabric"
    ev = [Evidence("image.libfabric.version", fab.version, fab.location)] if fab else []
    raw = fab.version if fab else None
    return _Library("libfabric", "libfabric", _release(raw), ev, why, _vendor(raw))


def _vendor(raw: str | None) -> str | None:
    return raw if raw and _VENDOR_BUILD.search(raw) else None


_BY_NAME: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}


def _rows(ctx: Ctx, lib: _Library) -> dict[str, dict[str, Any]]:
    """name -> row of the library's table, built once per matrix (keyed by its digest)."""
    key = (ctx.matrix.digest, lib.table)
    if key not in _BY_NAME:
        if lib.table == "ucx_params":
            _BY_NAME[key] = {r["name"]: r for r in ctx.matrix.rows("ucx_params")}
        else:
            _BY_NAME[key] = {r["name"]: r for r in ctx.matrix.rows("ofi_params") if r["upstream"] == lib.table}
    return _BY_NAME[key]


def _check(ctx: Ctx) -> Iterator[Outcome]:
    for name in _names(ctx):
        s = ctx.setting(name)
        if s is None:
            continue
        if name.startswith(_TORCH_PREFIXES):
            yield from _torch(ctx, s, name)
            continue
        lib = _library(ctx, name)
        rows = _rows(ctx, lib)
        if name.startswith("FI_") and not _fi_covered(name, rows):
            yield unknown(
                "ENV-UPSTREAM-PARAM-UNKNOWN",
                f"{name}: no libfabric release defines a variable with its FI_<word>_ prefix "
                "(catalogs/ofi_params.json); another program or an unenumerated provider may read it",
            )
            continue
        row = rows.get(name)
        if row is None:
            yield from _unknown_name(ctx, s, name, lib, rows)
        else:
            yield from _in_release(ctx, s, name, lib, row, rows)


def _torch(ctx: Ctx, s: Any, name: str) -> Iterator[Outcome]:
    """PyTorch's c10d variables against the releases that declare them (torch_nccl_env, generated from every torch
    wheel's c10d headers and libraries): set for a torch older than the first that declares it, a finding; for one
    newer than the last, a question (ProcessGroupNCCL's own .cpp is not read, the name may have moved there). A name
    the table does not list is unknown, never a typo: a name read only in that .cpp is not enumerated."""
    rule = "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"
    rows = {r["name"]: r for r in ctx.matrix.rows("torch_nccl_env")}
    row = rows.get(name)
    if row is None:
        near = difflib.get_close_matches(name, list(rows), n=1, cutoff=0.85)
        yield unknown(
            "ENV-UPSTREAM-PARAM-UNKNOWN",
            f"{name}: PyTorch's c10d variables are not enumerated per release (catalogs/torch_nccl_env.json lists "
            "the renamed and documented ones only)" + (f"; a listed name close to it: {near[0]}" if near else ""),
        )
        return
    if row["first"] is None:
        return  # listed by PyTorch's docs or code, first release not known: nothing to compare
    torch = next((p for p in ctx.image.packages if p.db == "python" and p.name.lower() == "torch"), None)
    if torch is None:
        why = ctx.image_unknown("packages")
        if why:
            yield unknown(rule, f"whether torch reads {name} (from {row['first']}) needs its version: {why}")
        return  # no torch in the image: the setting is for no one here
    version = _release(torch.version)
    if version is None:
        yield unknown(rule, f"torch's version {torch.version!r} does not parse; {name} is read from {row['first']}")
        return
    evidence = [s.evidence, Evidence("image.packages.torch", torch.version, torch.location)]
    generated = row.get("generated") or {}
    if version in (generated.get("gaps") or []):
        yield unknown(rule, f"{name}: declared by torch {row['first']}.. but not by torch {version}'s c10d")
        return
    removed = row.get("removed_in")
    if removed and ranges.at_least(version, removed):
        # gone from the c10d headers and the libraries the wheel builds for every platform; ProcessGroupNCCL's own
        # .cpp is not in what was read, so a name that moved there would look the same: a question, not a finding
        yield unknown(
            rule,
            f"{name}: torch {row['first']}..{row['last']} declare it and no wheel from {removed} does, but "
            f"ProcessGroupNCCL's own code is not in what was read: whether torch {version} still reads it is not decided",
        )
        return
    if ranges.below(version, row["first"]):
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            variant="renamed" if row["renamed_from"] else "not-yet",
            setting=s.label,
            name=name,
            upstream="PyTorch",
            version=version,
            first=row["first"],
            last=None,
            removed_in=None,
            old=row["renamed_from"] or name,
        )


def _torch_old_names(ctx: Ctx) -> Iterator[Outcome]:
    """An old c10d name (NCCL_ASYNC_ERROR_HANDLING) set for a torch that has the new one (TORCH_NCCL_...): torch still
    reads it as a deprecated alias, so this is information, never a failure; with the new name set too, the new wins."""
    torch = next((p for p in ctx.image.packages if p.db == "python" and p.name.lower() == "torch"), None)
    version = _release(torch.version) if torch is not None else None
    if torch is None or version is None:
        return  # which torch is unknown or absent: the old name is read by every release that has the variable
    for row in ctx.matrix.rows("torch_nccl_env"):
        old, first = row.get("renamed_from"), row.get("first")
        if not old or not first or ranges.below(version, first):
            continue
        s = ctx.setting(old)
        if s is None:
            continue
        evidence = [s.evidence, Evidence("image.packages.torch", torch.version, torch.location)]
        generated = row.get("generated") or {}
        # the releases that read the alias: to the variable's own last one, or fewer if the alias went first
        alias = (generated.get("deprecated_aliases") or {}).get(old) or {}
        alias_last, alias_removed = alias.get("last", row.get("last")), alias.get("removed_in", row.get("removed_in"))
        if alias_last and alias_removed and ranges.at_least(version, alias_removed):
            yield unknown(
                "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE",
                f"{old}: torch {first}..{alias_last} read it as a deprecated alias of {row['name']} and no wheel from "
                f"{alias_removed} declares it; whether torch {version} still reads it is not decided",
            )
            continue
        yield finding(
            ctx.matrix,
            "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE",
            evidence,
            variant="deprecated-name",
            setting=s.label,
            name=row["name"],
            upstream="PyTorch",
            version=version,
            first=first,
            last=None,
            removed_in=None,
            old=old,
            new_set="set too, and wins" if ctx.setting(row["name"]) is not None else "not set",
        )


def _fi_covered(name: str, rows: dict[str, dict[str, Any]]) -> bool:
    """A name the table has, or one whose FI_<WORD>_ prefix (a provider such as FI_EFA_, or a core group such as
    FI_HMEM_) the table has names of; anything else names a provider or program the catalog does not enumerate."""
    if name in rows:
        return True
    m = _FI_PROVIDER_PREFIX.match(name)
    return m is not None and any(n.startswith(f"FI_{m.group(1)}_") for n in rows)


def _span(rows: dict[str, dict[str, Any]]) -> tuple[str, str]:
    firsts = [r["first"] for r in rows.values() if r["first"]]
    lasts = [r["last"] for r in rows.values() if r["last"]]
    return min(firsts, key=_key), max(lasts, key=_key)


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _unknown_name(ctx: Ctx, s: Any, name: str, lib: _Library, rows: dict[str, dict[str, Any]]) -> Iterator[Outcome]:
    rule = "ENV-UPSTREAM-PARAM-UNKNOWN"
    oldest, newest = _span(rows)
    if lib.version is not None and ranges.below(newest, lib.version):
        yield unknown(rule, f"{name} is read by no {lib.upstream} release up to {newest}; the image's is {lib.version}")
        return
    near = difflib.get_close_matches(name, list(rows), n=1, cutoff=0.85)
    params = dict(setting=s.label, name=name, upstream=lib.upstream, oldest=oldest, newest=newest)
    evidence = [s.evidence, *lib.evidence]
    if near:
        yield finding(ctx.matrix, rule, evidence, near=near[0], **params)
    else:
        yield finding(ctx.matrix, rule, evidence, variant="no-near", **params)


def _in_release(
    ctx: Ctx, s: Any, name: str, lib: _Library, row: dict[str, Any], rows: dict[str, dict[str, Any]]
) -> Iterator[Outcome]:
    rule = "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"
    first, last, removed = row["first"], row["last"], row["removed_in"]
    if lib.version is None:
        if lib.why_unknown and "has no" in lib.why_unknown:
            return  # no such library in the image: the library's own rules speak; nothing to compare against
        yield unknown(
            rule, f"{lib.why_unknown}, so whether it reads {name} ({lib.upstream} {first}..{last}) cannot be told"
        )
        return
    _, newest = _span(rows)
    params = dict(
        setting=s.label,
        name=name,
        upstream=lib.upstream,
        version=lib.version,
        first=first,
        last=last,
        removed_in=removed,
    )
    evidence = [s.evidence, *lib.evidence]
    outside = ranges.below(lib.version, first) or (
        removed and ranges.at_least(lib.version, removed) and not ranges.below(newest, lib.version)
    )
    if outside and lib.vendor:
        yield unknown(
            rule,
            f"{lib.upstream} {lib.vendor} is a vendor build: upstream {lib.version} does not read {name} "
            f"({first}..{last}), but the vendor's tree may",
        )
        return
    uncertain = row.get("uncertain") or []
    bound = "first" if ranges.below(lib.version, first) else "removed_in"
    if outside and bound in uncertain:
        # the generator could not read every table of a release that decides this bound (docs/knowledge-coverage.md)
        yield unknown(
            rule,
            f"{name}: the catalog's {bound} for it ({row[bound]}) may come from a table the generator did not "
            f"read in an older release, so whether {lib.upstream} {lib.version} reads it is not decided",
        )
        return
    if ranges.below(lib.version, first):
        yield finding(ctx.matrix, rule, evidence, variant="not-yet", **params)
    elif removed and ranges.at_least(lib.version, removed) and not ranges.below(newest, lib.version):
        yield finding(ctx.matrix, rule, evidence, **params)
    elif (deprecated := row.get("deprecated_in")) and ranges.at_least(lib.version, deprecated) is not False:
        yield from _deprecated(ctx, s, name, lib, deprecated, evidence, params)
    elif lib.version in (row.get("absent_in") or []):
        # a release in the middle of the range whose tables lack the name: a rename and back, or a table the
        # generator did not reach in that release (docs/knowledge-coverage.md): not decided either way
        yield unknown(
            rule,
            f"{name} is read by {lib.upstream} {first}..{last} but not listed for {lib.version} "
            f"(absent_in); the generator may have missed it there",
        )


def _deprecated(
    ctx: Ctx, s: Any, name: str, lib: _Library, since: str, evidence: list[Evidence], params: dict[str, Any]
) -> Iterator[Outcome]:
    """A UCX field kept only as deprecated from `since` on (ucx_params deprecated_in): UCX skips it with a warning."""
    rule = "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"
    if lib.vendor or ranges.at_least(lib.version, since) is None:
        yield unknown(
            rule,
            f"{name} is a deprecated field, skipped by UCX {since} and later; whether {lib.upstream} "
            f"{lib.vendor or lib.version} is one of those is not decided",
        )
        return
    yield finding(ctx.matrix, rule, evidence, variant="deprecated", deprecated_in=since, **params)


# Prefixes whose names the Env lints judge against their own catalogs (env_nccl_params for NCCL_*, above for the
# rest): a near miss is a name outside all of them, one or two letters from a name one of them reads.
_LINTED = ("NCCL_", "UCX_", "FI_", "OFI_NCCL_", *_TORCH_PREFIXES)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{5,63}$")
_KNOWN: dict[str, dict[str, str]] = {}


def _known_names(ctx: Ctx) -> dict[str, str]:
    """Every variable name the enumerated catalogs say a library reads -> the library (built once per matrix)."""
    key = ctx.matrix.digest
    if key not in _KNOWN:
        found: dict[str, str] = {}
        for r in ctx.matrix.rows("nccl_params"):
            found[r["name"]] = "NCCL"
        for r in ctx.matrix.rows("ucx_params"):
            found[r["name"]] = "UCX"
        for r in ctx.matrix.rows("ofi_params"):
            found[r["name"]] = r["upstream"]
        for r in ctx.matrix.rows("torch_nccl_env"):
            found[r["name"]] = "PyTorch c10d"
            if r.get("renamed_from"):
                found[r["renamed_from"]] = "PyTorch c10d"
        _KNOWN[key] = found
    return _KNOWN[key]


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance with adjacent transpositions, or limit + 1 once it is certainly above limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _near_misses(ctx: Ctx) -> Iterator[Outcome]:
    """A variable no catalog lists whose name is one edit from one a library reads: a dropped
    or doubled prefix letter (CCL_NET_GDR_LEVEL, NCLL_DEBUG, TORCH_NCLL_...) reaches no library, so the setting
    the job meant is silently not applied."""
    names = set(ctx.image.env) | ({v.name for v in ctx.job.env} if ctx.job is not None else set())
    known = _known_names(ctx)
    for name in sorted(names):
        if name in known or name.startswith(_LINTED) or not _ENV_NAME.match(name):
            continue
        if any(name.startswith(r["prefix"]) for r in ctx.matrix.rows("env_foreign_prefixes")):
            continue  # another collective library's own variable (RCCL_, HCCL_, UCC_, ...)
        limit = 1  # one dropped, doubled, changed or swapped letter: wider catches other programs' names
        close = sorted(
            (d, k)
            for k in known
            for d in [_distance(name, k, limit)]
            if d <= limit and k.split("_")[-1] == name.split("_")[-1]
        )
        if not close:
            continue
        s = ctx.setting(name)
        if s is None:
            continue
        meant = close[0][1]
        if ctx.setting(meant) is not None:
            continue  # the name it is close to is set too: that setting reaches its library
        yield finding(
            ctx.matrix,
            NEAR_MISS,
            [s.evidence],
            setting=s.label,
            name=name,
            meant=meant,
            library=known[meant],
            value=s.value,
        )
