"""The Env lint: every NCCL_* setting the process gets (image Env, /etc/nccl.conf, the launch spec's env) against the
catalog of what each NCCL release reads (catalogs/nccl_params.json, generated from the release tags by
tools/nccl/gen_params.py): a name no release reads (with the nearest one that does), a name this NCCL does not read
yet or no longer, a value NCCL's parser turns into something else, a setting this node's links ignore.

Settings with rules of their own (env_traps, env_devices, env_node_names) are checked here only for name,
release and parse, never again for their meaning."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from ..knowledge.settings import IMAGE_ENV, NCCL_CONF_PATH, ORIGIN_CONF, ORIGIN_ENV, Setting
from ..model.location import Location
from ..model.report import Evidence, Finding
from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = (
    "ENV-NCCL-PARAM-UNKNOWN",
    "ENV-NCCL-PARAM-NOT-IN-RELEASE",
    "ENV-NCCL-PARAM-VALUE",
    "ENV-NCCL-PARAM-LINK-LAYER",
    "ENV-NCCL-PARAM-OVERRIDDEN",
    "ENV-NCCL-PARAM-INTERNAL",
    "ENV-NCCL-PARAM-IB-OFF",
)
NEEDS: dict[str, set[Any]] = {"nccl_params": {"NCCL_DEBUG"}}  # every release reads it: the table is there
# What each rule is about and reads (engine/contract.py): the NCCL_* settings the process sees, checked against the
# NCCL that reads them; the link-layer rule also reads the node's RDMA ports.
_SETTINGS = facts.setting_prefix("NCCL_")
REQUIRES = {rule: (_SETTINGS,) for rule in RULES}
READS = {rule: (_SETTINGS, facts.NCCL) for rule in RULES} | {
    "ENV-NCCL-PARAM-LINK-LAYER": (_SETTINGS, facts.NCCL, facts.NODE_RDMA),
    "ENV-NCCL-PARAM-IB-OFF": (_SETTINGS, facts.NCCL, facts.PLUGINS),
}

_PREFIX = "NCCL_"
# strtoll(str, NULL, 0): leading space, a sign, then 0x/0 prefixed or decimal digits; the rest is ignored
_LLONG_MAX, _LLONG_MIN = 2**63 - 1, -(2**63)
_LONGEST = 24  # "0x" and 16 hex digits, or 22 octal digits, is the longest 64-bit value: more only saturates
_STRTOLL = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def check(ctx: Ctx) -> Iterator[Outcome]:
    outcomes = list(_check(ctx))
    # the engine's contract is one outcome kind per rule and evaluation; with a partial NCCL version ("2.18") one
    # setting can be decided and another not: the finding is kept and the other setting's unknown is dropped
    found = {o.id for o in outcomes if isinstance(o, Finding)}
    yield from (o for o in outcomes if isinstance(o, Finding) or o.rule not in found)
    env_unknown = ctx.image.unknown_reason("env")
    if env_unknown and _names(ctx):
        # the launch's NCCL_* settings were checked; the image's Env, which may hold more, was not read
        spoke = found | {o.rule for o in outcomes if not isinstance(o, Finding)}
        for rule in RULES:
            if rule not in spoke:
                yield unknown(
                    rule, f"the image's Env is unknown ({env_unknown}): the NCCL_* settings it holds were not checked"
                )


def _check(ctx: Ctx) -> Iterator[Outcome]:
    names = _names(ctx)
    if not names or (ctx.nccl is None and not ctx.gpu_image):
        return  # nothing sets NCCL_*, or nothing in the image loads NCCL: the settings reach no reader
    rows = {r["name"]: r for r in ctx.matrix.rows("nccl_params")}
    newest = max((r["last"] for r in rows.values() if r["last"]), key=_key)
    oldest = min((r["first"] for r in rows.values() if r["first"]), key=_key)
    version = ctx.nccl.version if ctx.nccl else None
    for name in names:
        s = ctx.setting(name)
        if s is None:
            continue
        row = rows.get(name)
        if row is None:
            yield from _overridden(ctx, s)
            yield from _unknown_name(ctx, s, rows, version, (oldest, newest))
            continue
        yield from _overridden(ctx, s)
        if row["first"] is None:
            continue  # read by another program (PyTorch, a build), not NCCL: nothing to check here
        yield from _release(ctx, s, row, version, (oldest, newest))
        yield from _value(ctx, s, row)
        yield from _link_layer(ctx, s, row)
        yield from _documented(ctx, s, row)
        yield from _ib_off(ctx, s, row)


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def _names(ctx: Ctx) -> list[str]:
    found = set(ctx.image.env) | set(ctx.image.nccl_conf)
    if ctx.job is not None:
        found |= {v.name for v in ctx.job.env}
    return sorted(n for n in found if n.startswith(_PREFIX))


def _unknown_name(
    ctx: Ctx, s: Setting, rows: dict[str, dict[str, Any]], version: str | None, span: tuple[str, str]
) -> Iterator[Outcome]:
    rule = "ENV-NCCL-PARAM-UNKNOWN"
    oldest, newest = span
    after_newest = ".".join(newest.split(".")[:-1] + [str(int(newest.split(".")[-1]) + 1)])
    near = difflib.get_close_matches(s.name, [n for n, r in rows.items() if r["first"]], n=1, cutoff=0.8)
    newer = ranges.at_least(version, after_newest)
    if version is not None and ranges.below(version, oldest) is not False:
        yield unknown(
            rule,
            f"{s.name} is read by no NCCL release {oldest}..{newest}, and NCCL {version} is older than those: "
            "whether it reads the name cannot be told",
        )
        return
    if newer is not False:
        # an NCCL newer than the catalog may read names the catalog does not list: ask instead of answering
        which = "unknown (image.nccl.version)" if version is None else f"{version}, which may be newer"
        hint = f" (did you mean {near[0]}?)" if near else ""
        yield unknown(
            rule,
            f"{s.name} is read by no NCCL release {oldest}..{newest}{hint}; is the image's NCCL newer? Its version "
            f"is {which}",
        )
        return
    evidence = [s.evidence] + ctx.nccl_evidence()
    params = dict(setting=s.label, name=s.name, oldest=oldest, newest=newest)
    if near:
        yield finding(ctx.matrix, rule, evidence, near=near[0], **params)
    else:
        yield finding(ctx.matrix, rule, evidence, variant="no-near", **params)


def _overridden(ctx: Ctx, s: Setting) -> Iterator[Outcome]:
    """A value set in a place that loses: /etc/nccl.conf under an Env value (NCCL loads the file with setenv(name,
    value, 0), which keeps what the environment has), or the image Env under the launch spec's env."""
    losers = []
    conf = ctx.image.nccl_conf.get(s.name)
    if conf is not None and s.origin != ORIGIN_CONF and conf.strip() != s.value.strip():
        losers.append((f"image.nccl_conf.{s.name}", conf, NCCL_CONF_PATH))
    env = ctx.image.env.get(s.name)
    if env is not None and s.origin not in (ORIGIN_ENV, ORIGIN_CONF) and env.strip() != s.value.strip():
        losers.append((f"image.env.{s.name}", env, "the image Env"))
    for fact, value, where in losers:
        yield finding(
            ctx.matrix,
            "ENV-NCCL-PARAM-OVERRIDDEN",
            [s.evidence, Evidence(fact, value, IMAGE_ENV if where == "the image Env" else Location.file(where))],
            setting=s.label,
            name=s.name,
            lost=f"{s.name}={value}",
            where=where,
        )


def _release(
    ctx: Ctx, s: Setting, row: dict[str, Any], version: str | None, covered: tuple[str, str]
) -> Iterator[Outcome]:
    rule = "ENV-NCCL-PARAM-NOT-IN-RELEASE"
    first, removed = row["first"], row["removed_in"]
    span = f"{first}..{row['last']}"
    if version is not None and ranges.below(version, covered[0]) is not False:
        # the catalog is read from the release tags from covered[0] on: what an older NCCL reads is not in it
        yield unknown(
            rule,
            f"NCCL {version} is older than the releases whose sources were read ({covered[0]}..{covered[1]}), "
            f"so whether it reads {s.name} cannot be told",
        )
        return
    if version is None:
        yield unknown(
            rule,
            f"which NCCL the image loads is unknown (image.nccl.version), so whether it reads {s.name} "
            f"(read by NCCL {span}) cannot be told",
        )
        return
    params = dict(setting=s.label, name=s.name, nccl=version, first=first, last=row["last"], removed_in=removed)
    evidence = [s.evidence] + ctx.nccl_evidence()
    before = ranges.below(version, first)
    after = ranges.at_least(version, removed) if removed else False
    gaps = row.get("absent_in") or []
    gap = next((g for g in gaps if ranges.within(version, g, None) and ranges.below(version, g + ".1")), None)
    if before:
        yield finding(ctx.matrix, rule, evidence, variant="not-yet", **params)
    elif after:
        yield finding(ctx.matrix, rule, evidence, **params)
    elif gap is not None:
        yield finding(ctx.matrix, rule, evidence, variant="gap", **params)
    elif before is None or after is None:
        yield unknown(rule, f"NCCL {version} may or may not be one of the releases that read {s.name} ({span})")


def _strtoll(text: str) -> int:
    m = _STRTOLL.match(text)
    if not m:
        return 0
    sign, digits = m.groups()
    if len(digits) > _LONGEST:
        # past any 64-bit value (and past what int() converts): strtoll saturates at LLONG_MAX / LLONG_MIN
        return _LLONG_MIN if sign == "-" else _LLONG_MAX
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0") else int(digits)
    value = -value if sign == "-" else value
    return max(_LLONG_MIN, min(_LLONG_MAX, value))


def _value(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    yield from _words(ctx, s, row)
    if row["type"] != "int64" or row["form"] != "NCCL_PARAM" or row.get("form_history"):
        return  # only NCCL_PARAM integers have one parser across releases; strings are parsed by their reader
    text = s.value.strip()
    if not text:
        return  # NCCL treats an empty value as unset
    read = _strtoll(s.value)
    whole = _STRTOLL.fullmatch(s.value.rstrip())
    params = dict(setting=s.label, name=s.name, value=s.value, read=read, site=row["site"])
    if whole is None:
        yield finding(ctx.matrix, "ENV-NCCL-PARAM-VALUE", [s.evidence], **params)
        return
    low, high = row.get("range_min"), row.get("range_max")
    if (low is not None and read < low) or (high is not None and read > high):
        yield finding(ctx.matrix, "ENV-NCCL-PARAM-VALUE", [s.evidence], variant="range", low=low, high=high, **params)


_CLOSED_WORDS = 3  # a word list this long is the whole set the reader accepts (levels, subsystems), not one keyword


def _words(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    if row.get("values_match"):
        yield from _named(ctx, s, row)
        return
    words = row.get("values") or []
    if len(words) < _CLOSED_WORDS or not s.value.strip():
        return
    tokens = [t.strip().lstrip("^").upper() for t in s.value.split(",") if t.strip()]
    bad = [t for t in tokens if t not in words]
    if bad:
        yield finding(
            ctx.matrix,
            "ENV-NCCL-PARAM-VALUE",
            [s.evidence],
            variant="word",
            setting=s.label,
            name=s.name,
            value=s.value,
            word=bad[0],
            words=", ".join(words),
            site=row["site"],
        )


def history_at(history: list[str] | None, version: str | None) -> str | None:
    """The value a 'version: value' history (tools/nccl/gen_params.py) has at `version`; None when the version is
    unknown, older than the history or straddles a change (a partial version such as "2.18")."""
    if not history or version is None:
        return None
    entries = [h.split(": ", 1) for h in history]
    for (since, value), nxt in zip(entries, [e[0] for e in entries[1:]] + [None], strict=True):
        inside = ranges.within(version, since, nxt)
        if inside is None:
            return None
        if inside:
            return value
    return None


_NOT_COMPARED = "(not compared"
_LEVEL_FORM = "helper ncclGetLevel()"


def _named(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    """A setting whose reader compares it with a word list that changes by release (NCCL_P2P_LEVEL and
    NCCL_NET_GDR_LEVEL: path types, exact case, or an old-style number; NCCL_ALGO / NCCL_PROTO: algorithm and
    protocol names, any case, in 'func:list;...' entries with an optional '^'). With the image's NCCL version known
    the words of that release decide; otherwise only a word no release accepts is reported."""
    rule = "ENV-NCCL-PARAM-VALUE"
    value = s.value.strip()
    if not value:
        return
    version = ctx.nccl.version if ctx.nccl else None
    at_version = history_at(row.get("values_history"), version)
    if at_version is not None and at_version.startswith(_NOT_COMPARED):
        return  # this release reads it as a number (NCCL_PARAM), which the integer check covers
    words = at_version.split(",") if at_version else list(row.get("values") or [])
    exact = row["values_match"] == "case-sensitive"
    if exact:
        if value[:1].isdigit() and row["form"] == _LEVEL_FORM:
            return  # ncclGetLevel reads a leading digit as an old-style numeric level
        tokens = [value]
    else:
        tokens = [
            t.strip().lstrip("^")
            for entry in value.split(";")
            for t in entry.split(":")[-1].split(",")
            if t.strip().lstrip("^")
        ]
    known = set(words) if exact else {w.upper() for w in words}
    bad = [t for t in tokens if (t if exact else t.upper()) not in known]
    if not bad:
        return
    if at_version is None and version is not None:
        # the release is not pinned down: a word some release accepts may be fine in this one
        union = set(row.get("values") or [])
        if all(t.upper() in union for t in bad):
            yield unknown(rule, f"{s.label}: whether NCCL {version} accepts {bad[0]} depends on its exact release")
            return
    unknown_at = history_at(row.get("unknown_value"), version)
    fails = bool(unknown_at and unknown_at.startswith("ncclInvalidUsage"))
    yield finding(
        ctx.matrix,
        rule,
        [s.evidence, *ctx.nccl_evidence()],
        variant="named-fails" if fails else "named",
        setting=s.label,
        name=s.name,
        value=s.value,
        word=bad[0],
        words=", ".join(words),
        match="exact case" if exact else "any case",
        nccl=f"NCCL {version}" if at_version else "any NCCL release read",
        unknown_words=unknown_at or "(" + "; ".join(row.get("unknown_value") or []) + ")",
        site=row["site"],
    )


def _link_layer(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    wants = row.get("link_layer")
    if not wants:
        return
    rule = "ENV-NCCL-PARAM-LINK-LAYER"
    ports = [(d.name, p) for d in ctx.node.rdma.devices for p in d.ports]
    if ctx.node_has_rdma is False:
        return  # env_traps' rules already say NCCL's IB settings do nothing without RDMA devices
    if not ports:
        yield unknown(rule, f"{s.name} matters only on {wants} ports; {ctx.unknown_why('rdma.devices')}")
        return
    layers = {p.link_layer for _, p in ports}
    if None in layers:
        yield unknown(rule, f"{s.name} matters only on {wants} ports; the node's port link layers were not read")
    elif wants not in layers:
        names = ", ".join(sorted({f"{d}/{p.link_layer}" for d, p in ports}))
        evidence = [s.evidence, ctx.node_ev("rdma.devices.ports.link_layer", names)]
        yield finding(ctx.matrix, rule, evidence, setting=s.label, name=s.name, wants=wants, ports=names)


_LIBNCCL = "libnccl"


def _documented(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    """What NVIDIA's environment variable page says of the name (catalogs/nccl_params.json doc, from
    tools/nccl/env_doc.py): not listed at all (an internal parameter: read by the source, not supported), or listed
    under "Debugging" (not for production, with the page's own caution). Settings of the "System configuration"
    section are what the page means to be set."""
    section = row.get("doc")
    if section is None or row.get("reader") != _LIBNCCL:
        return  # not an NCCL parameter, or read by an example plugin in NCCL's tree rather than by libnccl
    params = dict(
        setting=s.label,
        name=s.name,
        site=row["site"],
        form=row["form"],
        default=row["default"] if row["default"] is not None else "none declared",
        span=f"{row['first']}..{row['last']}",
        note=f" The page's note on {s.name}: {row['doc_note']}." if row.get("doc_note") else "",
    )
    evidence = [s.evidence, *ctx.nccl_evidence()]
    if section == "undocumented":
        yield finding(ctx.matrix, "ENV-NCCL-PARAM-INTERNAL", evidence, **params)
    elif section == "debugging":
        yield finding(ctx.matrix, "ENV-NCCL-PARAM-INTERNAL", evidence, variant="debugging", **params)


# the readers of NCCL's own IB transport (net_ib/, and the verbs wrapper it calls): nothing else reads these names
_IB_READERS = ("src/transport/net_ib", "src/misc/ibvwrap.cc")


def _ib_off(ctx: Ctx, s: Setting, row: dict[str, Any]) -> Iterator[Outcome]:
    """An NCCL_IB_* setting in a process that also turns NCCL's IB transport off (NCCL_IB_DISABLE=1):
    ncclIbInitDevices returns before it reads a device, so no IB (or GIN) device exists and nothing reads the
    setting. A net plugin in the image may carry its own copy of the IB code and read the same names."""
    rule = "ENV-NCCL-PARAM-IB-OFF"
    off = ctx.setting("NCCL_IB_DISABLE")
    if s.name == "NCCL_IB_DISABLE" or off is None or not (off.as_int() or 0):
        return
    if not (row.get("site") or "").startswith(_IB_READERS):
        return
    version = ctx.nccl.version if ctx.nccl else None
    if row["removed_in"] and version and ranges.at_least(version, row["removed_in"]):
        return  # this NCCL reads the name in no case: ENV-NCCL-PARAM-NOT-IN-RELEASE says so
    plugins = ctx.image.nccl_net_plugins
    why = ctx.image.unknown_reason("nccl_net_plugins")
    if plugins or why:
        which = ", ".join(p.name for p in plugins) if plugins else f"unknown ({why})"
        yield unknown(
            rule,
            f"{off.label} turns NCCL's IB transport off, so NCCL itself does not read {s.name}; the image's net "
            f"plugins ({which}) may read it with their own copy of the IB code",
        )
        return
    yield finding(
        ctx.matrix,
        rule,
        [s.evidence, off.evidence],
        setting=s.label,
        name=s.name,
        off=off.label,
        site=row["site"],
    )
