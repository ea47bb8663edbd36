"""What a base-image bump changed in the RDMA/GPU userspace, and which nodes move between ok and failing.

Pure: two ImageFacts, the nodes and the matrix in; a DiffResult out. The verdict per node is the engine's,
run on both images (nodes with identical facts are evaluated once).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.report import evaluate_fleet, group_nodes
from ..knowledge.image_rdma import provider_loads
from ..knowledge.providers import providers_of
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import verdict_of
from .summary import chosen_nccl

# Env that changes how NCCL, UCX, CUDA or the loader behave (prefixes and exact names).
RELEVANT_ENV_PREFIXES = ("NCCL_", "UCX_", "CUDA_", "NVIDIA_", "OMPI_MCA_", "HPCX_", "RDMAV_", "IBV_", "MLX5_")
RELEVANT_ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PATH")
# Symbol versions whose arrival changes what NCCL calls (rdma-core catalog: rdma_core_functions).
NOTABLE_SYMBOLS = {"IBVERBS_1.8": "ibv_reg_mr_iova2", "IBVERBS_1.12": "ibv_reg_dmabuf_mr"}
RANK = {"ok": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class FactChange:
    fact: str  # e.g. "rdma.libibverbs.private_abi"
    label: str  # e.g. "provider ABI (PABI)"
    old: str | None
    new: str | None


@dataclass(frozen=True)
class ProviderMove:
    """A libibverbs provider a node's devices need whose loading changed between the images."""

    provider: str  # mlx5, efa, ...
    old: bool | None  # loads under OLD (None: unknown)
    new: bool | None


@dataclass(frozen=True)
class RuleSeen:
    id: str
    severity: str  # the highest severity of its findings under NEW (or OLD, for a rule that went away)
    title: str


@dataclass(frozen=True)
class NodeMove:
    node: str
    old: str  # verdict ok | warn | fail
    new: str
    added: tuple[str, ...] = ()  # rule ids with an error/warning finding only under NEW
    removed: tuple[str, ...] = ()  # ... only under OLD
    providers: tuple[ProviderMove, ...] = ()  # providers this node needs that went loaded <-> not loaded

    @property
    def direction(self) -> str:
        return "worse" if RANK[self.new] > RANK[self.old] else "better" if RANK[self.new] < RANK[self.old] else "same"


@dataclass(frozen=True)
class DiffResult:
    old: str
    new: str
    changes: tuple[FactChange, ...]
    nodes: tuple[NodeMove, ...]  # every node, moved or not
    rules: tuple[RuleSeen, ...] = ()  # every rule id named in a node's added / removed

    @property
    def moved(self) -> tuple[NodeMove, ...]:
        return tuple(m for m in self.nodes if m.old != m.new or m.added or m.removed or m.providers)

    @property
    def newly_failing(self) -> tuple[NodeMove, ...]:
        return tuple(m for m in self.nodes if m.new == "fail" and m.old != "fail")


def _s(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or None
    return str(value)


def _provider_abis(facts: ImageFacts) -> str:
    abis = sorted({p.pabi for p in facts.rdma.providers if p.pabi is not None})
    return ", ".join(f"rdmav{a}" for a in abis) or "no PABI in file names"


def _providers(old: ImageFacts, new: ImageFacts) -> tuple[str | None, str | None]:
    """('15, rdmav33', '17, rdmav34 (+erdma, irdma, mana; -i40iw)'): counts, file ABIs, and which came or went."""
    a = {p.name for p in old.rdma.providers}
    b = {p.name for p in new.rdma.providers}
    before = f"{len(a)}, {_provider_abis(old)}" if a else None
    after = f"{len(b)}, {_provider_abis(new)}" if b else None
    moved = [f"+{', '.join(sorted(b - a))}"] if b - a else []
    moved += [f"-{', '.join(sorted(a - b))}"] if a - b else []
    if after and moved and a:
        after += f" ({'; '.join(moved)})"
    return before, after


def _rdma_packages(facts: ImageFacts) -> dict[str, str]:
    return {p.name: p.version for p in facts.rdma.packages}


def fact_changes(old: ImageFacts, new: ImageFacts) -> tuple[FactChange, ...]:
    a, b = old.rdma.libibverbs, new.rdma.libibverbs

    def lib(attr: str) -> tuple[str | None, str | None]:
        return (_s(getattr(a, attr)) if a else None), (_s(getattr(b, attr)) if b else None)

    rows = [
        ("rdma.libibverbs.rdma_core", "rdma-core", *lib("rdma_core")),
        ("rdma.libibverbs.version", "libibverbs", *lib("version")),
        ("rdma.libibverbs.private_abi", "provider ABI (PABI)", *lib("private_abi")),
        ("rdma.providers", "providers", *_providers(old, new)),
        ("rdma.flavor", "RDMA flavor", old.rdma.flavor, new.rdma.flavor),
        ("rdma.ofed_version", "MLNX_OFED/DOCA-OFED", old.rdma.ofed_version, new.rdma.ofed_version),
        ("ucx.version", "UCX", old.ucx.version if old.ucx else None, new.ucx.version if new.ucx else None),
        ("nccl.version", "NCCL", chosen_nccl(old), chosen_nccl(new)),
        ("cuda.version", "CUDA", old.cuda.version if old.cuda else None, new.cuda.version if new.cuda else None),
        (
            "cuda.compat_driver",
            "CUDA forward-compat driver",
            old.cuda.compat_driver if old.cuda else None,
            new.cuda.compat_driver if new.cuda else None,
        ),
        ("hpcx.version", "HPC-X", old.hpcx.version if old.hpcx else None, new.hpcx.version if new.hpcx else None),
        (
            "os",
            "distro",
            " ".join(x for x in (old.os.id, old.os.version_id) if x) or None,
            " ".join(x for x in (new.os.id, new.os.version_id) if x) or None,
        ),
    ]
    out = [FactChange(fact, label, o, n) for fact, label, o, n in rows if o != n]
    old_syms = set(a.symbol_versions) if a else set()
    new_syms = set(b.symbol_versions) if b else set()
    for sym, fn in NOTABLE_SYMBOLS.items():
        if (sym in old_syms) != (sym in new_syms):
            had = sym in old_syms
            out.append(
                FactChange(
                    f"rdma.libibverbs.symbol_versions.{sym}",
                    f"{fn}@{sym}",
                    "present" if had else "absent",
                    "absent" if had else "present",
                )
            )
    pa, pb = _rdma_packages(old), _rdma_packages(new)
    for name in sorted(set(pa) | set(pb)):
        if pa.get(name) != pb.get(name):
            out.append(FactChange(f"rdma.packages.{name}", f"package {name}", pa.get(name), pb.get(name)))
    for where, ea, eb in (("env", old.env, new.env), ("nccl_conf", old.nccl_conf, new.nccl_conf)):
        for name in sorted(set(ea) | set(eb)):
            relevant = where == "nccl_conf" or name in RELEVANT_ENV_NAMES or name.startswith(RELEVANT_ENV_PREFIXES)
            if relevant and ea.get(name) != eb.get(name):
                label = f"Env {name}" if where == "env" else f"/etc/nccl.conf {name}"
                out.append(FactChange(f"{where}.{name}", label, ea.get(name), eb.get(name)))
    return tuple(out)


def _per_node(
    image: ImageFacts, nodes: list[NodeFacts], matrix: Matrix, seen: dict[str, RuleSeen]
) -> dict[str, tuple[str, set[str]]]:
    """node name -> (verdict, rule ids with error/warning findings); `seen` collects each rule's title."""
    out = {}
    for group in group_nodes(nodes):
        result = evaluate_fleet(image, group[:1], matrix)
        verdict = verdict_of(result.findings)
        problems = [f for f in result.findings if f.severity in ("error", "warning") and not f.assumes]
        for f in problems:
            if f.id not in seen or (f.severity == "error" and seen[f.id].severity != "error"):
                seen[f.id] = RuleSeen(f.id, f.severity, f.title)
        for node in group:
            out[node.name] = (verdict, {f.id for f in problems})
    return out


def provider_moves(old: ImageFacts, new: ImageFacts, node: NodeFacts) -> tuple[ProviderMove, ...]:
    """Providers the node's devices need whose loading differs between OLD and NEW."""
    needed = providers_of(node.rdma.devices) or set()  # unknown devices: nothing to name
    moves = []
    for name in sorted(needed):
        a, b = provider_loads(old, name), provider_loads(new, name)
        if a != b:
            moves.append(ProviderMove(name, a, b))
    return tuple(moves)


def diff_images(old: ImageFacts, new: ImageFacts, nodes: list[NodeFacts], matrix: Matrix) -> DiffResult:
    seen_new: dict[str, RuleSeen] = {}
    seen_old: dict[str, RuleSeen] = {}
    before, after = _per_node(old, nodes, matrix, seen_old), _per_node(new, nodes, matrix, seen_new)
    moves = []
    for node in nodes:
        (va, ra), (vb, rb) = before[node.name], after[node.name]
        moves.append(
            NodeMove(
                node.name,
                va,
                vb,
                tuple(sorted(rb - ra)),
                tuple(sorted(ra - rb)),
                provider_moves(old, new, node),
            )
        )
    named = {r for m in moves for r in m.added + m.removed}
    rules = tuple(seen_new.get(r) or seen_old[r] for r in sorted(named))
    return DiffResult(old.reference, new.reference, fact_changes(old, new), tuple(moves), rules)
