"""The grammar of a selection setting's value, per NCCL release (compat_matrix nccl_env_grammar, generated from
parseList at every release tag by tools/nccl/gen_env_grammar.py).

NCCL_ALGO / NCCL_PROTO: from 2.24.3 the value is ';'-separated entries, each 'function:list' (the function named
in any case from ncclFuncStr) except that the first may have no function; an unknown function, a prefix-less entry
after the first, or an unknown word makes ncclCommInitRank fail with ncclInvalidUsage. Before, the whole value is
one comma list whose unknown words are skipped: a 'function:list' or ';' form names nothing, so an including list
made only of such words enables no algorithm (protocol) and the first collective fails with "no
algorithm/protocol available" (src/enqueue.cc), and an excluding one excludes nothing.
The words themselves (which algorithm and protocol names a release knows) are ENV-NCCL-PARAM-VALUE's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .env_nccl_params import history_at

RULE = "ENV-NCCL-ALGO-PROTO-GRAMMAR"
SETTINGS = ("NCCL_ALGO", "NCCL_PROTO")
_FORM_MARKS = (":", ";")


@dataclass(frozen=True)
class Entry:
    """One ';'-separated entry the way parseList splits it (strtok_r: empty pieces are skipped)."""

    prefix: str | None  # the collective it is limited to; None for a prefix-less entry
    exclude: bool
    words: tuple[str, ...]


def entries(value: str) -> list[Entry]:
    """parseList's reading of a per-collective value (2.24.3 on): ';' entries, 'prefix:list', '^' excludes."""
    found = []
    for piece in (p for p in value.split(";") if p):
        parts = [p for p in piece.split(":") if p]
        if not parts:
            continue
        prefix, body = (parts[0], parts[1]) if len(parts) > 1 else (None, parts[0])
        exclude = body.startswith("^")
        words = tuple(w for w in body.lstrip("^").split(",") if w)
        found.append(Entry(prefix, exclude, words))
    return found


def _row(ctx: Ctx, version: str) -> dict[str, Any] | None | Literal[False]:
    """The nccl_env_grammar row for `version`; None when no release in the table is that old (the setting is not
    read), False when the version straddles rows (a partial version such as "2.2")."""
    rows = list(ctx.matrix.rows("nccl_env_grammar"))
    bounds = [r["first"] for r in rows[1:]] + [None]
    for row, nxt in zip(rows, bounds, strict=True):
        inside = ranges.within(version, row["first"], nxt)
        if inside is None:
            return False
        if inside:
            return row
    return None


def _per_collective_since(ctx: Ctx) -> str:
    """The first release that reads the per-collective form (nccl_env_grammar)."""
    return next((r["first"] for r in ctx.matrix.rows("nccl_env_grammar") if r["per_collective"]), "no release")


def _words_at(ctx: Ctx, name: str, version: str) -> set[str] | None:
    """The algorithm (protocol) names NCCL `version` knows, upper case (nccl_params values_history)."""
    row = next((r for r in ctx.matrix.rows("nccl_params") if r["name"] == name), None)
    at = history_at(row.get("values_history") if row else None, version)
    return {w.upper() for w in at.split(",")} if at else None


@rule(RULE, requires=(facts.NCCL, facts.setting(*SETTINGS)), reads=(facts.NCCL,), needs={"nccl_env_grammar": set()})
def algo_proto_grammar(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl_present is not True:
        return  # no NCCL reads the setting; unknown: the engine asks
    for name in SETTINGS:
        s = ctx.setting(name)
        if s is None or not s.value.strip():
            continue
        value = s.value.strip()
        if not any(mark in value for mark in _FORM_MARKS):
            yield decided(RULE, f"{s.label} is a plain list, read the same way by every release")
            continue
        version = ctx.nccl.version if ctx.nccl is not None else None
        if version is None:
            yield unknown(
                RULE,
                f"{s.label} uses the 'function:list;...' form, which only NCCL {_per_collective_since(ctx)} and later "
                f"read (compat_matrix nccl_env_grammar): {ctx.nccl_unknown_reason()}",
                facts=("image.nccl.version",),
            )
            continue
        row = _row(ctx, version)
        if row is False:
            yield unknown(RULE, f"{s.label}: NCCL {version} straddles a grammar change; its exact release decides")
        elif row is None:
            yield decided(RULE, f"NCCL {version} does not read {name}")
        elif row["per_collective"]:
            yield from _per_collective(ctx, s, row, version)
        else:
            yield from _one_list(ctx, s, row, version)


def _per_collective(ctx: Ctx, s: Any, row: dict[str, Any], version: str) -> Iterator[Outcome]:
    functions = row.get("functions") or []
    known = {f.upper() for f in functions}
    common = {
        "setting": s.label,
        "name": s.name,
        "value": s.value.strip(),
        "nccl": f"NCCL {version}",
        "functions": ", ".join(functions),
        "site": row["source"][0],
    }
    evidence = [s.evidence, *ctx.nccl_evidence()]
    for i, entry in enumerate(entries(s.value.strip())):
        if entry.prefix is None and i > 0 and row["prefix_after_first"]:
            yield finding(ctx.matrix, RULE, evidence, variant="no-prefix", entry=",".join(entry.words), **common)
            return
        if entry.prefix is not None and known and entry.prefix.upper() not in known and row["unknown_prefix"]:
            yield finding(ctx.matrix, RULE, evidence, prefix=entry.prefix, **common)
            return
    yield decided(RULE, f"{s.label}: every entry is one NCCL {version} parses (the words are ENV-NCCL-PARAM-VALUE's)")


def _one_list(ctx: Ctx, s: Any, row: dict[str, Any], version: str) -> Iterator[Outcome]:
    value = s.value.strip()
    exclude = value.startswith("^")
    tokens = [t for t in value.lstrip("^").split(",") if t]
    words = _words_at(ctx, s.name, version)
    if words is None:
        yield unknown(RULE, f"{s.label}: the names NCCL {version} knows for {s.name} are not in nccl_params")
        return
    skipped = [t for t in tokens if any(m in t for m in _FORM_MARKS)]
    if not skipped:
        yield decided(RULE, f"{s.label}: no 'function:list' or ';' word in the list NCCL {version} reads")
        return
    enabled = [t for t in tokens if t.upper() in words]
    variant = "old-excludes-nothing" if exclude else "old-ignored" if enabled else "old-nothing"
    fallback, fails = _all_off(row, s.name)
    if variant == "old-nothing" and fails:
        variant = "old-nothing-fails"
    yield finding(
        ctx.matrix,
        RULE,
        [s.evidence, *ctx.nccl_evidence()],
        variant=variant,
        setting=s.label,
        name=s.name,
        value=value,
        word=skipped[0],
        nccl=f"NCCL {version}",
        enabled=", ".join(enabled) or "none",
        fallback=fallback,
        site=row["source"][0],
    )


_FAILS = "the first collective finds no algorithm/protocol and fails (src/enqueue.cc)"


def _all_off(row: dict[str, Any], name: str) -> tuple[str, bool]:
    """What the release's tuning step does when the setting leaves nothing enabled (nccl_env_grammar
    all_off_ring_tree / all_off_ring), and whether the collective then fails whatever the communicator."""
    ring = "Ring is made available with every protocol for each collective that has nothing left"
    if name == "NCCL_ALGO" and row["all_off_ring_tree"]:
        with_collnet = ring if row["all_off_ring"] else _FAILS
        return (
            f"without CollNet (SHARP) support NCCL re-enables Ring and Tree and chooses itself; with it, {with_collnet}",
            False,
        )
    if row["all_off_ring"]:
        return ring, False
    return _FAILS, True


RULES, NEEDS, REQUIRES, READS, check = family(algo_proto_grammar)
