"""Recommend what to run instead: clean catalog images for the nodes, and the node-side path for the current image."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.report import group_nodes
from ..errors import ImgcheckError
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Recommendation
from .candidates import Judgement, blocking_rules, clean_candidates, names_text
from .catalog import CatalogEntry, all_entries
from .node_path import node_paths
from .summary import Summary, differences, summary_of_facts

MAX_IMAGES = 5
MAX_NODE_GROUPS = 8  # node-side search per group of identical nodes; beyond this, ask per node


@dataclass(frozen=True)
class RecommendResult:
    images: tuple[Recommendation, ...] = ()
    node_upgrades: tuple[Recommendation, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()  # (reference, why not)
    message: str = ""
    problems: tuple[str, ...] = ()  # unreadable local catalog entries
    checked: int = 0
    nodes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def recommendations(self) -> tuple[Recommendation, ...]:
        return self.images + self.node_upgrades


def describe(summary: Summary) -> tuple[str, ...]:
    """What an image carries, for a recommendation with no current image to compare with."""
    parts = [("rdma-core", summary.rdma_core if summary.flavor != "none" else "none (no libibverbs)"),
             ("PABI", summary.pabi), ("RDMA flavor", summary.flavor), ("NCCL", summary.nccl), ("CUDA", summary.cuda),
             ("UCX", summary.ucx), ("HPC-X", summary.hpcx), ("distro", summary.distro)]
    return tuple(f"{label} {value}" for label, value in parts if value is not None)


def _pinned(e: CatalogEntry) -> str:
    """A registry reference pinned to the digest that was inspected (local files and daemons take no digest)."""
    from ..sources.resolve import split_scheme

    if e.origin != "local" or not e.digest or "@" in e.reference:
        return e.reference
    try:
        scheme, _ = split_scheme(e.reference)
    except ImgcheckError:  # a malformed stored reference: show it as it was stored
        return e.reference
    return f"{e.reference}@{e.digest}" if scheme in (None, "registry") else e.reference


def _image_recommendation(j: Judgement, current: Summary | None, node_count: int) -> Recommendation:
    e: CatalogEntry = j.entry
    image = _pinned(e)
    if e.origin == "local":
        basis = "facts inspected by `imgcheck catalog add` (verified)"
    else:
        basis = f"published facts from the shipped catalog ({e.confidence}: {e.source})"
    readings = f" under each of its {len(e.readings)} possible readings" if len(e.readings) > 1 else ""
    undecided = f"; still undecided: {', '.join(j.unknown_rules)}" if j.unknown_rules else ""
    why = (f"the engine predicts it clean on {'the node' if node_count == 1 else f'all {node_count} nodes'}"
           f"{readings}; {basis}{undecided}")
    missing = "none" if e.origin == "local" else "not listed"
    diffs = differences(current, e.summary, missing) if current is not None else describe(e.summary)
    return Recommendation(image=image, why=why, differences=diffs, kind="image")


def _node_recommendations(image: ImageFacts, groups: list[list[NodeFacts]], matrix: Matrix,
                          ignore: frozenset[str]) -> tuple[list[Recommendation], str]:
    out, skipped, stuck = [], 0, []
    failing_groups = []
    for group in groups:
        rules, _ = blocking_rules(image, group[:1], matrix, ignore)
        if rules:
            failing_groups.append(group)
    for i, group in enumerate(failing_groups):
        names = names_text(n.name for n in group)
        if i >= MAX_NODE_GROUPS:
            skipped += len(group)
            continue
        paths = node_paths(image, group[0], matrix, ignore)
        if not paths:
            stuck += [n.name for n in group]
            continue
        for path in paths:
            out.append(Recommendation(
                image=image.reference, kind="node-upgrade", differences=path.changes,
                why=f"on {names}: after {'this change' if len(path.changes) == 1 else 'these changes'} the engine "
                    f"predicts {image.reference} clean (re-run on the upgraded node facts)"))
    notes = []
    if stuck and out:  # when nothing was found at all, the summary line says so
        notes.append(f"no node-side change imgcheck can model makes the current image clean on {names_text(stuck)}")
    if skipped:
        notes.append(f"{skipped} more failing node(s) not searched (run `imgcheck recommend --node NAME --like IMAGE`)")
    return out, ". ".join(notes)


def recommend(nodes: list[NodeFacts], matrix: Matrix, *, current: ImageFacts | None = None,
              framework: str | None = None, catalog_dir: str | None = None, limit: int = MAX_IMAGES,
              ignore_rules: frozenset[str] = frozenset()) -> RecommendResult:
    """`ignore_rules`: rules suppressed on every node; they neither rule a candidate out nor need fixing."""
    nodes = list(nodes)
    ignore = frozenset(ignore_rules)
    entries, problems = all_entries(matrix, catalog_dir)
    current_summary = summary_of_facts(current) if current is not None else None
    # Identical nodes get identical predictions: judge one representative per group (a fleet of 10,000 nodes
    # in 20 configurations costs 20 evaluations per candidate), and name the whole group in the reasons.
    groups = group_nodes(nodes)
    reps = [g[0] for g in groups]
    names_of = {g[0].name: [n.name for n in g] for g in groups}
    must_decide = blocking_rules(current, reps, matrix, ignore)[0] if current is not None else set()
    framework = framework or None
    clean, rejected = clean_candidates(entries, reps, matrix, current_image=current, current=current_summary,
                                       framework=framework, must_decide=must_decide, ignore=ignore, names_of=names_of)
    images = tuple(_image_recommendation(j, current_summary, len(nodes)) for j in clean[:limit])
    node_recs: list[Recommendation] = []
    node_note = ""
    if current is not None and must_decide:
        node_recs, node_note = _node_recommendations(current, groups, matrix, ignore)
    where = nodes[0].name if len(nodes) == 1 else f"all {len(nodes)} nodes"
    scope = f" {framework}" if framework else ""
    checked = len(clean) + len(rejected)
    if images:
        message = f"{len(clean)} of {checked}{scope} catalog image(s) are predicted clean on {where}"
    else:
        message = f"no{scope} catalog image is predicted clean on {where} ({checked} checked)"
        if current is not None:
            message += "; the node-side path below makes the current image work" if node_recs else \
                "; and no node-side change imgcheck can model fixes the current image"
    if node_note:
        message += f". {node_note}"
    return RecommendResult(images=images, node_upgrades=tuple(node_recs),
                           rejected=tuple((j.entry.reference, j.why_not or "") for j in rejected),
                           message=message, problems=tuple(problems), checked=checked,
                           nodes=tuple(n.name for n in nodes))


def recommendations_for_report(report, matrix: Matrix) -> tuple[Recommendation, ...]:
    """For a failing check: clean images ranked by closeness to the checked one, then the node-side path."""
    if report.verdict != "fail":
        return ()
    ignored = frozenset(s.rule for s in report.suppressed if s.node is None)
    return recommend(list(report.nodes), matrix, current=report.image, ignore_rules=ignored).recommendations
