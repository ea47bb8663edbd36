"""Known issues of the node's driver-side stack, from vendor data the matrix holds.

- VENDOR-KNOWN-ISSUE: the MLNX_OFED / DOCA-OFED / nv_peer_mem release-note known issues and bug fixes
  (catalogs/vendor_known_issues.json) whose release range the node's stack is in and whose conditions the node's facts
  show. A row whose condition the facts cannot show is counted in an unknown naming the condition. A version range is
  weaker evidence than a mechanism shown, so the rule stays at warning.
- NODE-PEERMEM-OPTION: an `options nvidia-peermem NAME=VALUE` line the node configures, checked against the module
  parameters of the node's driver release (catalogs/nvidia_kernel_modules.json, generated from every release tag of
  NVIDIA/open-gpu-kernel-modules): a name that release does not have is ignored by the kernel; a value outside the
  ones the module's parameter check accepts makes module init fail, so nvidia-peermem does not load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..model.node import STACK_DOCA, STACK_MLNX_OFED
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx, series_of
from .contract import family, rule
from .emit import Outcome, finding, unknown

KNOWN_ISSUE = "VENDOR-KNOWN-ISSUE"
PEERMEM_OPTION = "NODE-PEERMEM-OPTION"
_STACK_OF = {"mlnx_ofed": STACK_MLNX_OFED, "doca": STACK_DOCA}
_LISTED = 4
# conditions no node fact shows: a row naming one is never reported as shown
_UNPROBED = {
    "sriov_vf": "whether the job's RDMA devices are SR-IOV virtual functions",
    "devx_umem": "whether the application registers memory through DevX umem",
    "odp": "whether the application uses On-Demand Paging",
    "nvlink5": "whether the node is an NVLink 5 system",
}


def _peer_client(ctx: Ctx, want: str) -> bool | None:
    pm = ctx.node.gpu.peermem
    new, legacy = pm.loaded, pm.legacy_nv_peer_mem
    if want == "nvidia-peermem":
        return new
    if want == "nv_peer_mem":
        return legacy
    if new or legacy:
        return True
    return None if new is None or legacy is None else False


def _condition(ctx: Ctx, cond: str) -> tuple[bool | None, str]:
    """Whether the node shows one condition of a row, and the question when it cannot tell."""
    kind, _, value = cond.partition(":")
    if kind in _UNPROBED:
        return None, _UNPROBED[kind]
    if kind == "peer_client":
        return _peer_client(ctx, value), "which peer-memory client the node loads (" + ctx.unknown_why(
            "gpu.peermem.loaded"
        ) + ")"
    if kind == "link_layer":
        layers = {p.link_layer for d in ctx.node.rdma.devices for p in d.ports}
        if not layers or None in layers:
            return None, "the link layer of the node's RDMA ports"
        return value in layers, ""
    if kind == "os":
        os_id, version = ctx.node.os.id, ctx.node.os.version_id
        if not os_id or not version:
            return None, "the node's OS release (/etc/os-release)"
        m = re.fullmatch(r"([a-z]+)(\d+)", value)
        if not m:
            return None, f"condition {cond} is not in the form os:<id><major>"
        return (os_id == m.group(1) and version.split(".")[0] == m.group(2)), ""
    if kind == "ofed_series":
        series = series_of(ctx.node.rdma.ofed_version)
        return (None, ctx.unknown_why("rdma.ofed_version")) if series is None else (series == value, "")
    if kind == "module_above":
        name, _, floor = value.partition(":")
        module = ctx.node.rdma.modules.get(name)
        if module is None:
            return False, ""
        newer = ranges.below(floor, module.version) if module.version else None
        return newer, f"the version of the loaded {name} module"
    return None, f"condition {cond} (not a condition this rule knows)"


def _in_range(version: str, row: dict[str, Any]) -> bool | None:
    """Whether a release is affected: at or above affected_min (when named) and not fixed (at or above a fixed_in of
    its own series, or at or above the newest fixed_in). Releases compare on every number they carry: an MLNX_OFED
    release ("5.4-1.0.3.0") is ordered past its dash, where a plain version compare stops."""
    mine = _numeric(version)
    if not mine:
        return None
    low = row.get("affected_min")
    if low and _cmp(mine, _numeric(low)) < 0:
        return False
    fixed = row.get("fixed_in") or []
    series = series_of(version)
    for f in fixed:
        if series is not None and series == series_of(f) and _cmp(mine, _numeric(f)) >= 0:
            return False
    if fixed and _cmp(mine, max((_numeric(f) for f in fixed), key=_pad)) >= 0:
        return False
    return True


def _numeric(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _pad(a: tuple[int, ...]) -> tuple[int, ...]:
    return a + (0,) * (8 - len(a))


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return (_pad(a) > _pad(b)) - (_pad(a) < _pad(b))


def _component_version(ctx: Ctx, component: str) -> tuple[str | None, bool, Evidence | None]:
    """(release, whether the component is on the node, evidence) for a row's component."""
    rdma = ctx.node.rdma
    if component in _STACK_OF:
        if rdma.stack != _STACK_OF[component]:
            return None, False, None
        return rdma.ofed_version, True, ctx.node_ev("rdma.ofed_version", rdma.ofed_version)
    if component == "nv_peer_mem":
        module = rdma.modules.get("nv_peer_mem")
        legacy = ctx.node.gpu.peermem.legacy_nv_peer_mem
        if not legacy and module is None:
            return None, False, None
        version = module.version if module else None
        return version or "", True, ctx.node_ev("gpu.peermem.legacy_nv_peer_mem", legacy)
    return None, False, None


@rule(KNOWN_ISSUE, requires=(facts.NODE_RDMA,), reads=(facts.PEERMEM,))
def known_issue(ctx: Ctx) -> Iterator[Outcome]:
    shown: list[tuple[dict[str, Any], Evidence | None]] = []
    undecided: list[tuple[dict[str, Any], list[str]]] = []
    for row in ctx.matrix.rows("vendor_known_issues"):
        component = row.get("component")
        if not component:
            continue  # not a node-side release (a CUDA toolkit row): nothing on the node to compare
        version, present, ev = _component_version(ctx, component)
        if not present:
            continue
        if version is None:
            undecided.append((row, [ctx.unknown_why("rdma.ofed_version")]))
            continue
        ranged = bool(row.get("affected_min") or row.get("fixed_in"))
        affected = _in_range(version, row) if version and ranged else (None if ranged else True)
        if affected is False:
            continue
        states = [_condition(ctx, c) for c in row.get("conditions") or []]
        if any(v is False for v, _ in states):
            continue
        questions = [q for v, q in states if v is None]
        if affected is None:
            questions.append(
                f"whether the node's {component} release ({version or 'not readable'}) is in "
                f"{row.get('affected_min') or 'any'} .. {row.get('fixed_in') or 'no fix named'}"
            )
        if questions:
            undecided.append((row, questions))
        else:
            shown.append((row, ev))
    if shown:
        entries = "; ".join(_entry(r) for r, _ in shown[:_LISTED])
        more = f"; and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
        evidence = [e for _, e in shown if e is not None][:1] + [
            ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
            ctx.node_ev("gpu.peermem.loaded", ctx.node.gpu.peermem.loaded),
        ]
        fixes = "; ".join(f"{r['issue']}: {r['fix']}" for r, _ in shown[:_LISTED] if r.get("fix"))
        yield finding(
            ctx.matrix,
            KNOWN_ISSUE,
            evidence,
            count=len(shown),
            stack=f"{ctx.node.rdma.stack} {ctx.node.rdma.ofed_version or ''}".strip(),
            entries=entries + more,
            row_fixes=fixes or "none named by the vendor",
        )
    elif undecided:
        listed = "; ".join(f"{r['issue']} ({r['vendor']} #{r.get('ref') or '-'}): {', '.join(q)}" for r, q in undecided)
        yield unknown(
            KNOWN_ISSUE,
            f"{len(undecided)} vendor known issue(s) (vendor_known_issues) may apply to this node's stack; "
            f"the facts cannot show: {listed}",
        )


def _entry(row: dict[str, Any]) -> str:
    ref = f" #{row['ref']}" if row.get("ref") else ""
    fixed = f", fixed in {' / '.join(row['fixed_in'])}" if row.get("fixed_in") else ", no fixed release named"
    return f"{row['vendor']}{ref}: {row['symptom']} when {row['trigger']}{fixed}"


_OPTION = re.compile(r"^options\s+nvidia[-_]peermem\s+(.*)$")


def _options(lines: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(name, value, 'path: line') for every NAME=VALUE of an `options nvidia-peermem` line."""
    out = []
    for entry in lines:
        path, _, line = entry.partition(": ")
        m = _OPTION.match(line.split("#", 1)[0].strip())
        if not m:
            continue
        for word in m.group(1).split():
            name, _, value = word.partition("=")
            out.append((name, value, entry))
    return out


def _params_at(ctx: Ctx, driver: str) -> tuple[dict[str, dict[str, Any]] | None, str]:
    """The nvidia-peermem parameters of a driver release (name -> {type, default, accepted, ...}), or None and why."""
    rows = [r for r in ctx.matrix.rows("nvidia_kernel_modules") if r["kind"] == "param"]
    if not rows:
        return None, "the matrix has no nvidia_kernel_modules parameter rows"
    oldest = min((r["first_release"] for r in rows), key=_numeric)
    if ranges.below(driver, oldest) is not False:
        return None, f"driver {driver} is older than the oldest release read from NVIDIA/open-gpu-kernel-modules"
    params: dict[str, dict[str, Any]] = {}
    for r in rows:
        if ranges.at_least(driver, r["first_release"]) and (
            r["removed_in"] is None or ranges.below(driver, r["removed_in"])
        ):
            params[r["subject"]] = {**json.loads(r["value"] or "{}"), "source": r["source"]}
    return params, ""


@rule(PEERMEM_OPTION, requires=(facts.PEERMEM_CONFIG,), reads=(facts.GPU_DRIVER,))
def peermem_option(ctx: Ctx) -> Iterator[Outcome]:
    configured = ctx.node.gpu.peermem_configured
    options = _options(configured or ())
    if not options:
        return  # nothing configured for nvidia-peermem's parameters (or /etc unread: the engine says so)
    driver = ctx.node.gpu.driver_version
    if not driver:
        return  # settled as unknown through GPU_DRIVER
    params, why = _params_at(ctx, driver)
    if params is None:
        yield unknown(PEERMEM_OPTION, f"nvidia-peermem options are set ({options[0][2]}); {why}")
        return
    for name, value, line in options:
        evidence = [ctx.node_ev("gpu.peermem_configured", line), ctx.node_ev("gpu.driver_version", driver)]
        spec = params.get(name)
        if spec is None:
            yield finding(
                ctx.matrix,
                PEERMEM_OPTION,
                evidence,
                variant="unknown-parameter",
                name=name,
                value=value,
                line=line,
                driver=driver,
                known=", ".join(sorted(params)) or "none",
            )
            continue
        accepted = spec.get("accepted")
        if accepted is not None and value.strip() not in accepted:
            yield finding(
                ctx.matrix,
                PEERMEM_OPTION,
                evidence,
                name=name,
                value=value,
                line=line,
                driver=driver,
                accepted=" or ".join(accepted),
                description=spec.get("description") or "",
                param_source=spec["source"],
            )


RULES, NEEDS, REQUIRES, READS, check = family(known_issue, peermem_option)
