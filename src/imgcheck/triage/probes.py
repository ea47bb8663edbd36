"""Benign probes (data/triage/benign_probes.json): messages components print while probing in runs that work.

A line a signature matched is information, not a failure, when its probe matches it and every condition of one
`harmless_when` alternative holds for this job (the condition language of signatures.json, three-valued: an
unknown condition leaves the line as the signature says).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from .. import safejson
from ..errors import BadInputError
from .conditions import Condition, EvalContext, parse_condition
from .evidence import ALL_PREDICATES

PROBES_FILE = "benign_probes.json"


@dataclass(frozen=True)
class Probe:
    id: str
    component: str
    signatures: tuple[str, ...]
    match: re.Pattern[str]
    unless: re.Pattern[str] | None
    site: str
    harmless: str
    matters_when: str
    harmless_when: tuple[tuple[Condition, ...], ...]
    source: tuple[str, ...]

    def applies(self, signature: str, text: str) -> bool:
        return (
            signature in self.signatures
            and self.match.search(text) is not None
            and (self.unless is None or self.unless.search(text) is None)
        )

    def judge(self, ctx: EvalContext) -> tuple[bool | None, str]:
        """(harmless here?, why): True for the first alternative whose conditions all hold; False when every
        alternative has a condition the facts make false (the probe's failure case is this job's); None when the
        facts leave some alternative open (the log cannot say whether the line mattered)."""
        whys: list[str] = []
        undecided = False
        for alt in self.harmless_when:
            results = [c.evaluate(ctx) for c in alt]
            if all(v is True for v, _ in results):
                return True, "; ".join(why for _, why in results) or "the line itself is a probe"
            undecided = undecided or not any(v is False for v, _ in results)
            whys.extend(why for v, why in results if v is not True)
        return (None if undecided else False), "; ".join(dict.fromkeys(whys))


def load_probes(known_signatures: frozenset[str]) -> tuple[Probe, ...]:
    return _load(known_signatures)


@functools.cache
def _load(known_signatures: frozenset[str]) -> tuple[Probe, ...]:
    ref = resources.files("imgcheck.data.triage").joinpath(PROBES_FILE)
    where = f"imgcheck.data.triage/{PROBES_FILE}"
    return parse_probes(safejson.loads(ref.read_text(encoding="utf-8"), where), where, known_signatures)


def _rx(value: object, where: str) -> re.Pattern[str]:
    if not isinstance(value, str) or not value:
        raise BadInputError(f"{where}: must be a non-empty regex")
    try:
        return re.compile(value)
    except re.error as exc:
        raise BadInputError(f"{where}: bad regex: {exc}") from None


def parse_probes(doc: object, where: str, known_signatures: frozenset[str] | set[str]) -> tuple[Probe, ...]:
    if not isinstance(doc, dict) or not isinstance(doc.get("probes"), list):
        raise BadInputError(f"{where}: expected an object with a 'probes' list")
    out = []
    for i, p in enumerate(doc["probes"]):
        here = f"{where}: probes[{i}]"
        if not isinstance(p, dict):
            raise BadInputError(f"{here}: must be an object")
        texts = {k: p.get(k) for k in ("id", "component", "site", "harmless", "matters_when")}
        if not all(isinstance(v, str) and v.strip() for v in texts.values()):
            raise BadInputError(f"{here}: needs id, component, site, harmless and matters_when")
        sigs = p.get("signatures")
        if not isinstance(sigs, list) or not sigs or not all(isinstance(s, str) and s for s in sigs):
            raise BadInputError(f"{here}: 'signatures' must list signature ids")
        # a user's --signatures file may lack some: the probe then refines only the ones it has
        # (tests/triage/test_triage_probes.py checks the packaged data names only packaged signatures)
        sigs = [s for s in sigs if s in known_signatures]
        alts = p.get("harmless_when")
        if not isinstance(alts, list) or not alts or not all(isinstance(a, list) for a in alts):
            raise BadInputError(f"{here}: 'harmless_when' must be a non-empty list of condition lists")
        sources = p.get("source")
        if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s for s in sources):
            raise BadInputError(f"{here}: 'source' must name at least one URL or upstream site")
        out.append(
            Probe(
                id=str(texts["id"]),
                component=str(texts["component"]),
                signatures=tuple(sigs),
                match=_rx(p.get("match"), f"{here}: match"),
                unless=_rx(p["unless"], f"{here}: unless") if p.get("unless") is not None else None,
                site=str(texts["site"]),
                harmless=str(texts["harmless"]),
                matters_when=str(texts["matters_when"]),
                harmless_when=tuple(
                    tuple(
                        parse_condition(c, f"{here}: harmless_when", set(ALL_PREDICATES), set(known_signatures))
                        for c in a
                    )
                    for a in alts
                ),
                source=tuple(sources),
            )
        )
    return tuple(out)
