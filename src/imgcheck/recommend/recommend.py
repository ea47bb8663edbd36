"""Recommend what to run instead: clean catalog images for the nodes, and the node-side path for the current image."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ..engine.report import group_nodes
from ..errors import ImgcheckError
from ..job.model import JobFacts
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Recommendation, Report
from .base import base_of, repository
from .candidates import Judgement, blocking_rules, clean_candidates, names_text, rank_key
from .catalog import CatalogEntry, all_entries
from .framework import FrameworkWant, parse_want
from .image_changes import applied, env_changes, job_env_changes, loaded_nccl, pip_changes, smallest_changes
from .node_path import node_paths
from .summary import Summary, compare_versions, differences, summary_of_facts

MAX_IMAGES = 5
MAX_NODE_GROUPS = 8  # node-side search per group of identical nodes; beyond this, ask per node
REPORT_TOP = 2  # a failing check shows the smallest one or two; `imgcheck recommend --like` shows them all
MAX_NODE_SEARCH = 6  # catalog images (closest first) tried for a node-side path when none is clean as is
# Rules whose cause is on the node (its driver, modules, limits, RDMA stack): when every catalog image fails on
# one of these, no image choice helps and the answer is the node-side path.
NODE_SIDE_RULES = frozenset(
    {
        "GDR-PEERMEM-MISSING",
        "CUDA-DRIVER-TOO-OLD",
        "MEMLOCK-TOO-LOW",
        "UVERBS-ABI-RANGE",
        "CUMEM-OLD-DRIVER",
        "GDR-NCCL-LEGACY-MEMORY-PEERS",
    }
)


@dataclass(frozen=True)
class RecommendResult:
    images: tuple[Recommendation, ...] = ()
    node_upgrades: tuple[Recommendation, ...] = ()
    image_changes: tuple[Recommendation, ...] = ()  # env edits / pip pins that keep the current image
    rejected: tuple[tuple[str, str], ...] = ()  # (reference, why not)
    message: str = ""
    problems: tuple[str, ...] = ()  # unreadable local catalog entries
    checked: int = 0
    nodes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def recommendations(self) -> tuple[Recommendation, ...]:
        """Smallest change first: Env / pip pin on the current image, then images (a newer tag of the same base
        ranks first), then the node-side path."""
        return self.image_changes + self.images + self.node_upgrades


def describe(summary: Summary) -> tuple[str, ...]:
    """What an image carries, for a recommendation with no current image to compare with."""
    parts = [
        ("rdma-core", summary.rdma_core if summary.flavor != "none" else "none (no libibverbs)"),
        ("PABI", summary.pabi),
        ("RDMA flavor", summary.flavor),
        ("NCCL", summary.nccl),
        ("CUDA", summary.cuda),
        ("UCX", summary.ucx),
        ("HPC-X", summary.hpcx),
        ("distro", summary.distro),
    ]
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


def _image_recommendation(
    j: Judgement, current: Summary | None, node_count: int, current_image: ImageFacts | None = None, against: str = ""
) -> Recommendation:
    e: CatalogEntry = j.entry
    image = _pinned(e)
    if e.origin == "local":
        basis = "facts inspected by `imgcheck catalog add` (verified)"
    elif e.origin == "imported":
        basis = f"facts stated by the team's `imgcheck catalog import` row, not inspected ({e.confidence}: {e.source})"
    else:
        basis = f"published facts from the shipped catalog ({e.confidence}: {e.source})"
    readings = f" under each of its {len(e.readings)} possible readings" if len(e.readings) > 1 else ""
    undecided = f"; still undecided: {', '.join(j.unknown_rules)}" if j.unknown_rules else ""
    if e.origin != "local":  # candidates.settings_only: catalog rows do not record Env
        undecided += "; its Env is not in the catalog: the NCCL settings checks assume it sets none"
    same = ""
    base = base_of(current_image) if current_image is not None else None
    if base is not None and repository(e.reference) == base.repository:
        newer = compare_versions(e.release, base.release) > 0
        built = "" if base.how == "reference" else f" {base.reference} ({base.how})"
        same = f"{'a newer' if newer else 'another'} tag of the same base image{built}: "
    why = (
        f"{same}"
        f"the engine predicts it clean on {'the node' if node_count == 1 else f'all {node_count} nodes'}"
        f"{readings}; {basis}{undecided}" + (f"; checked against {against}" if against else "")
    )
    missing = "none" if e.origin == "local" else "not listed"
    diffs = differences(current, e.summary, missing) if current is not None else describe(e.summary)
    return Recommendation(image=image, why=why, differences=diffs, kind="image")


def _node_recommendations(
    image: ImageFacts,
    groups: list[list[NodeFacts]],
    matrix: Matrix,
    ignore: frozenset[str],
    jobs: tuple[JobFacts, ...] = (),
) -> tuple[list[Recommendation], str]:
    out, skipped, stuck = [], 0, []
    failing_groups = []
    for group in groups:
        rules, _ = blocking_rules(image, group[:1], matrix, ignore, jobs)
        if rules:
            failing_groups.append(group)
    for i, group in enumerate(failing_groups):
        names = names_text(n.name for n in group)
        if i >= MAX_NODE_GROUPS:
            skipped += len(group)
            continue
        paths = node_paths(image, group[0], matrix, ignore, jobs)
        if not paths:
            stuck += [n.name for n in group]
            continue
        for path in paths:
            out.append(
                Recommendation(
                    image=image.reference,
                    kind="node-upgrade",
                    differences=path.changes,
                    why=f"on {names}: after {'this change' if len(path.changes) == 1 else 'these changes'} the engine "
                    f"predicts {image.reference} clean (re-run on the upgraded node facts)",
                )
            )
    notes = []
    if stuck and out:  # when nothing was found at all, the summary line says so
        notes.append(f"no node-side change imgcheck can model makes the current image clean on {names_text(stuck)}")
    if skipped:
        notes.append(f"{skipped} more failing node(s) not searched (run `imgcheck recommend --node NAME --like IMAGE`)")
    return out, ". ".join(notes)


def _checked_against(reps: list[NodeFacts], names_of: dict[str, list[str]]) -> str:
    """'gpu-r470 (node facts collected 2026-11-30T08:00:00Z)': what a re-check ran on, for the user to judge."""
    if len(reps) > 3:  # a fleet: one line, not one clause per configuration
        everyone = [name for n in reps for name in names_of.get(n.name, [n.name])]
        dates = sorted(n.collected_at for n in reps if n.collected_at)
        when = f", node facts collected {dates[0]}..{dates[-1]}" if dates else ""
        return f"{len(everyone)} nodes in {len(reps)} configurations ({names_text(everyone)}{when})"
    parts = []
    for n in reps:
        names = names_text(names_of.get(n.name, [n.name]))
        collected = n.collected_at
        parts.append(f"{names} (node facts collected {collected})" if collected else names)
    return "; ".join(parts)


def _fleet_clean(
    facts: ImageFacts,
    reps: list[NodeFacts],
    matrix: Matrix,
    must_decide: AbstractSet[str],
    ignore: frozenset[str],
    jobs: tuple[JobFacts, ...] = (),
) -> bool:
    blocking, unknown = blocking_rules(facts, reps, matrix, ignore, jobs)
    return not blocking and not (unknown & must_decide)


def _image_change_recommendations(
    current: ImageFacts,
    reps: list[NodeFacts],
    names_of: dict[str, list[str]],
    matrix: Matrix,
    must_decide: AbstractSet[str],
    ignore: frozenset[str],
    jobs: tuple[JobFacts, ...] = (),
) -> list[Recommendation]:
    """Env edits (the launch spec's first, pointing at its file and line, when a spec is given), then a pip pin
    of the NCCL wheel, then both together: each re-checked, with the spec's containers, on a modified copy."""

    def clean(facts: ImageFacts, modified_jobs: tuple[JobFacts, ...] = jobs) -> bool:
        return _fleet_clean(facts, reps, matrix, must_decide, ignore, modified_jobs)

    env = job_env_changes(jobs) + env_changes(current)
    pins = pip_changes(current, loaded_nccl(current), matrix)
    found = smallest_changes(env, clean, current, max_size=2, limit=2, jobs=jobs) if env else []
    found += smallest_changes(pins, clean, current, max_size=1, limit=1, jobs=jobs) if pins else []
    if not found and env and pins:
        found += [(e, p) for e in env for p in pins[:4] if clean(*applied(p, *applied(e, current, jobs)))][:1]
    against = _checked_against(reps, names_of)
    fixed = ", ".join(sorted(must_decide))
    out = []
    for combo in found:
        kind = "pip-pin" if any(c.kind == "pip-pin" for c in combo) else "env"
        sources = sorted({c.source for c in combo})
        in_spec = any(c.apply_jobs is not None for c in combo)
        copy = "the launch spec's and the image's facts" if jobs else "the image's facts"
        out.append(
            Recommendation(
                image=current.reference,
                kind=kind,
                differences=tuple(c.words for c in combo),
                why=f"{'a change to the launch spec; ' if in_spec else ''}keeps the image; after "
                f"{'this change' if len(combo) == 1 else 'these changes'} the engine, re-run on a modified copy of "
                f"{copy}, predicts it clean (fixes {fixed}); checked against {against} [{'; '.join(sources)}]",
            )
        )
    return out


def _node_side_for_catalog(
    judged: list[Judgement],
    groups: list[list[NodeFacts]],
    matrix: Matrix,
    ignore: frozenset[str],
    current: Summary | None,
    want: FrameworkWant | None,
    current_ref: str | None,
) -> list[Recommendation]:
    """No catalog image works as the nodes are: the node changes after which the closest catalog image does.
    Only entries with one reading (a row that leaves the flavor open would need a path valid for each)."""

    def node_side_only(
        j: Judgement,
    ) -> int:  # images that fail only for node-side reasons first: a node change can fix them
        return 0 if j.blocking and all(b.split(" on ", 1)[0] in NODE_SIDE_RULES for b in j.blocking) else 1

    candidates = sorted(
        (j for j in judged if len(j.entry.readings) == 1 and not j.entry.not_checkable),
        key=lambda j: (node_side_only(j), rank_key(j.entry, current, len(j.unknown_rules), want, current_ref)),
    )
    out = []
    for group in groups[:MAX_NODE_GROUPS]:  # beyond that, ask per node (as for the current image's path)
        names = names_text(n.name for n in group)
        for j in candidates[:MAX_NODE_SEARCH]:
            facts = j.entry.readings[0]
            paths = node_paths(facts, group[0], matrix, ignore)
            if paths:
                for path in paths[:2]:
                    out.append(
                        Recommendation(
                            image=j.entry.reference,
                            kind="node-upgrade",
                            differences=path.changes,
                            why=f"on {names}: no catalog image is clean as the node is; after "
                            f"{'this change' if len(path.changes) == 1 else 'these changes'} the engine predicts "
                            f"{j.entry.reference} clean (re-run on the upgraded node facts; catalog row "
                            f"{j.entry.confidence}: {j.entry.source})",
                        )
                    )
                break
    return out


def _node_side_reason(rejected: list[Judgement]) -> str | None:
    """'9 of the 12 checkable images fail only for node-side reasons (GDR-PEERMEM-MISSING)', or None."""
    checkable = [j for j in rejected if j.blocking]
    only = [j for j in checkable if all(b.split(" on ", 1)[0] in NODE_SIDE_RULES for b in j.blocking)]
    if not only:
        return None
    rules = sorted({b.split(" on ", 1)[0] for j in only for b in j.blocking})
    if len(only) == len(checkable):
        return (
            f"every one of the {len(checkable)} checkable images fails only for node-side reasons ({', '.join(rules)})"
        )
    return f"{len(only)} of the {len(checkable)} checkable images fail only for node-side reasons ({', '.join(rules)})"


def recommend(
    nodes: list[NodeFacts],
    matrix: Matrix,
    *,
    current: ImageFacts | None = None,
    framework: str | FrameworkWant | None = None,
    catalog_dir: str | None = None,
    limit: int = MAX_IMAGES,
    ignore_rules: frozenset[str] = frozenset(),
    jobs: tuple[JobFacts, ...] = (),
) -> RecommendResult:
    """`ignore_rules`: rules suppressed on every node; they neither rule a candidate out nor need fixing.
    `framework`: 'pytorch', 'pytorch==2.5' or a FrameworkWant; without it, the --like image's framework (an
    image with none gets no framework image proposed). `jobs`: the launch-spec containers that run the
    current image (`check --job`): every re-check includes them, and a value they set is fixed in the spec.

    With a current image, only changes that fix its findings are shown, smallest first: an Env (or spec) edit
    or a pip pin, an image of the same framework, the node-side path for this image. A node change that
    would only make some other catalog image work is not proposed for it."""
    nodes = list(nodes)
    ignore = frozenset(ignore_rules)
    entries, problems = all_entries(matrix, catalog_dir)
    current_summary = summary_of_facts(current) if current is not None else None
    want = (
        parse_want(framework)
        if isinstance(framework, str) and framework.strip()
        else (framework if isinstance(framework, FrameworkWant) else None)
    )
    if want is None and current_summary is not None and current_summary.framework:
        want = FrameworkWant(current_summary.framework, None, current_summary.framework_version)
    # Identical nodes get identical predictions: judge one representative per group (a fleet of 10,000 nodes
    # in 20 configurations costs 20 evaluations per candidate), and name the whole group in the reasons.
    groups = group_nodes(nodes)
    reps = [g[0] for g in groups]
    names_of = {g[0].name: [n.name for n in g] for g in groups}
    jobs = tuple(jobs)
    must_decide = blocking_rules(current, reps, matrix, ignore, jobs)[0] if current is not None else set()
    clean, rejected = clean_candidates(
        entries,
        reps,
        matrix,
        current_image=current,
        current=current_summary,
        want=want,
        must_decide=must_decide,
        ignore=ignore,
        names_of=names_of,
        jobs=jobs,
        same_framework_only=current is not None,
    )
    against = _checked_against(reps, names_of)
    images = tuple(_image_recommendation(j, current_summary, len(nodes), current, against) for j in clean[:limit])
    changes: list[Recommendation] = []
    if current is not None and must_decide:
        changes = _image_change_recommendations(current, reps, names_of, matrix, must_decide, ignore, jobs)
    node_recs: list[Recommendation] = []
    node_note = ""
    if current is not None and must_decide:
        node_recs, node_note = _node_recommendations(current, groups, matrix, ignore, jobs)
    where = nodes[0].name if len(nodes) == 1 else f"all {len(nodes)} nodes"
    scope = f" {want.text()}" if want else ""
    checked = len(clean) + len(rejected)
    reason = None
    if not images:
        reason = _node_side_reason(rejected)
        # For a current image, only what fixes *its* findings, smallest first: a node change that makes some
        # other catalog image work is offered only when no change to the image itself does, and only an image
        # of its framework (an image with none gets no framework image unless --framework asks for one).
        if not node_recs and (current is None or (not changes and want is not None)):
            node_recs = _node_side_for_catalog(
                rejected,
                groups,
                matrix,
                ignore,
                current_summary,
                want,
                base_of(current).reference if current is not None else None,
            )
    checkable = sum(1 for j in clean + rejected if j.entry.readings and not j.entry.not_checkable)
    if current is not None and not images and changes:
        # the smallest change fixes it: lead with that, not with the catalog (which is then beside the point)
        message = (
            f"{len(changes)} change(s) to the current image itself make it clean on {where}; "
            f"no{scope} catalog image is predicted clean there ({checked} listed)"
        )
        changes_said = True
    elif images:
        message = f"{len(clean)} of {checked}{scope} catalog image(s) are predicted clean on {where}"
        changes_said = False
    else:
        changes_said = False
        message = (
            f"no{scope} catalog image is predicted clean on {where} ({checked} listed, {checkable} with the "
            f"facts to check)"
        )
        if reason:
            message += f": {reason}"
        own_path = bool(node_recs) and current is not None and node_recs[0].image == current.reference
        if must_decide and not own_path:  # (a current image that is already clean needs no fixing)
            message += "; no node-side change imgcheck can model fixes the current image"
        if node_recs:
            message += (
                "; the node-side path below makes it work"
                if own_path
                else f"; the node-side path below makes {node_recs[0].image} work"
            )
    if changes and not changes_said:
        message += f"; {len(changes)} change(s) to the current image itself make it clean"
    if node_note:
        message += f". {node_note}"
    return RecommendResult(
        images=images,
        node_upgrades=tuple(node_recs),
        image_changes=tuple(changes),
        rejected=tuple((j.entry.reference, j.why_not or "") for j in rejected),
        message=message,
        problems=tuple(problems),
        checked=checked,
        nodes=tuple(n.name for n in nodes),
    )


def recommendations_for_report(
    report: Report, matrix: Matrix, jobs: Iterable[JobFacts] = ()
) -> tuple[Recommendation, ...]:
    """For a failing check: the top two of recommend --like (smallest change first: an Env edit, in the launch
    spec when it sets the value, or a pip pin; a newer tag of the same base, another image of the same
    framework; the node-side path), each re-checked with the spec's containers when `jobs` are given."""
    if report.verdict != "fail":
        return ()
    ignored = frozenset(s.rule for s in report.suppressed if s.node is None)
    return recommend(
        list(report.nodes), matrix, current=report.image, ignore_rules=ignored, jobs=tuple(jobs)
    ).recommendations[:REPORT_TOP]
