"""Loading and validating the triage signature data (src/imgcheck/data/triage/signatures.json).

Signatures are data: adding one needs no code as long as its conditions use the existing
condition forms and fact predicates. Validation is strict so a typo fails loudly at load time.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .. import safejson
from ..errors import BadInputError, UnavailableError
from ..model.report import CONFIDENCES
from .conditions import Condition, parse_condition
from .evidence import ALL_PREDICATES

SIGNATURES_SCHEMA_VERSION = 1
CAUSE_KINDS = ("cause", "read")
ROLES = ("primary", "secondary", "advisory")  # primary: a local failure; secondary: a consequence seen by a victim
SEVERITIES = ("error", "warning", "info")
# signatures computed from log structure instead of a regex; "fabric_catalog": a line the fabric message catalog
# (fabric_catalog.py) recognises, counted as the signature of its condition class
DERIVED = ("init_incomplete", "nccl_version_mismatch", "fabric_catalog", "stall_after_init")


@dataclass(frozen=True)
class Cause:
    id: str
    text: str
    next: str
    confidence: str
    when: tuple[Condition, ...] = ()
    why: str | None = None
    promote: bool = False  # when every condition holds, move this cause first
    # "promote": "first": ahead of the other promoted causes too (the deeper cause of the same symptom,
    # e.g. NCCL dialling a bridge address explains the "connection refused" the line shows)
    promote_first: bool = False
    # "read": advice to read more of the log (the preceding WARN, the rank's stack), not a cause: it ranks after
    # every concrete cause the facts do not rule out, so a wrapper's answer names a mechanism first
    kind: str = "cause"
    # the environment the cause presumes (a container, several nodes): false -> unlikely; unknown -> after the
    # causes that presume nothing
    assumes: tuple[Condition, ...] = ()
    # the evidence the cause needs (another line, an in-log fact, a node fact): all hold -> supported; one false ->
    # the log contradicts it (unlikely, behind -v); one unknown -> the evidence is absent, so it ranks after the
    # advice to read more (a guess never outranks reading the line that names the call)
    needs: tuple[Condition, ...] = ()
    # the producer classes of a generic result code this cause explains (data/triage/nccl_result_sites.json)
    producers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    patterns: tuple[re.Pattern[str], ...]
    role: str
    severity: str
    priority: int
    meaning: str
    causes: tuple[Cause, ...]
    source: tuple[str, ...]
    confidence: str
    suppresses: tuple[str, ...] = ()
    derived: str | None = None
    # When every condition holds, the signature is information, not a failure (e.g. "No device
    # found" on a job that never meant to use IB).
    info_when: tuple[Condition, ...] = ()
    # The process carries on after this warning (NCCL uses the other devices, falls back to a simple
    # order, ...): alone it makes the verdict "advisory_only", never "signature_found".
    continues: bool = False
    # the job was ended from outside (a scheduler's time limit, a preemption): a report of how it ended, not a failing
    # line, so it does not hide the structural hang signatures (an init or a stall it would confirm)
    external_end: bool = False
    # A framework's or library's result code (NCCL Error 2, torchrun exitcode 1): within one process, a
    # signature that names a concrete cause is that process's first failure instead.
    generic: bool = False


@dataclass(frozen=True)
class GeneralStep:
    step: str
    next: str


@dataclass(frozen=True)
class SignatureSet:
    version: str
    signatures: tuple[Signature, ...]
    general_order: tuple[GeneralStep, ...]
    general_source: tuple[str, ...]
    general_confidence: str
    path: str
    # join-note texts (triage/joins/), keyed TOPIC.CASE; a user's file may leave them out
    note_templates: tuple[tuple[str, str], ...] = ()

    def by_id(self) -> dict[str, Signature]:
        return {s.id: s for s in self.signatures}


SIGNATURES_FILE = "signatures.json"
DEFAULT_RESOURCE = ("imgcheck.data.triage", SIGNATURES_FILE)
_OWN_FIELDS = ("version", "content_digest")  # what the digest of the triage data leaves out


def triage_data_digest(files: dict[str, bytes]) -> str:
    """The digest of the triage data (every file of data/triage, the signatures without their own `version` and
    `content_digest`): what `version` in signatures.json stands for, recorded there as `content_digest`."""
    import hashlib
    import json

    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        if name == SIGNATURES_FILE:
            doc = {k: v for k, v in json.loads(data).items() if k not in _OWN_FIELDS}
            data = json.dumps(doc, sort_keys=True, ensure_ascii=False).encode("utf-8")
        h.update(name.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return "sha256:" + h.hexdigest()


@functools.cache
def catalog_class_ids() -> frozenset[str]:
    """Ids of the packaged catalog classes (host_catalog.CLASS_FILES), read without building their signatures."""
    from . import host_catalog  # host_catalog imports this module

    out: set[str] = set()
    for name in host_catalog.CLASS_FILES:
        doc = json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text(encoding="utf-8"))
        out.update(m["id"] for m in doc["messages"])
    return frozenset(out)


def load_signatures(path: str | None = None) -> SignatureSet:
    """The packaged signatures, or a file given by the user (same schema)."""
    if path is None:
        pkg, name = DEFAULT_RESOURCE
        ref = resources.files(pkg).joinpath(name)
        where = f"{pkg}/{name}"
        text = ref.read_text(encoding="utf-8")
    else:
        where = path
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            raise UnavailableError(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInputError(f"{path}: cannot read signatures ({exc})") from None
    try:
        doc = safejson.loads(text, where)  # depth-bounded (hostile input)
    except ValueError as exc:
        raise BadInputError(f"{where}: not valid JSON ({exc})") from None
    return parse_signatures(doc, where)


def _need(obj: dict[str, Any], key: str, kind: type[Any] | tuple[type[Any], ...], where: str) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
        raise BadInputError(
            f"{where}: '{key}' must be a non-empty {kind.__name__ if isinstance(kind, type) else 'value'}"
        )
    return value


def _sources(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadInputError(f"{where}: 'source' must name at least one URL or document")
    return tuple(value)


def _flag(value: object, where: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise BadInputError(f"{where}: '{name}' must be true or false")
    return value


def _confidence(value: object, where: str) -> str:
    if not isinstance(value, str) or value not in CONFIDENCES:
        raise BadInputError(f"{where}: confidence {value!r} is not one of {', '.join(CONFIDENCES)}")
    return value


def parse_signatures(doc: object, where: str) -> SignatureSet:
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: expected a JSON object")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BadInputError(f"{where}: schema_version must be a positive integer")
    if version > SIGNATURES_SCHEMA_VERSION:
        raise BadInputError(
            f"{where}: signatures schema_version {version} is newer than this imgcheck "
            f"understands ({SIGNATURES_SCHEMA_VERSION}); upgrade imgcheck"
        )
    raw = doc.get("signatures")
    if not isinstance(raw, list) or not raw:
        raise BadInputError(f"{where}: 'signatures' must be a non-empty list")
    ids = [s.get("id") for s in raw if isinstance(s, dict)]
    # a cause may also be conditioned on a packaged catalog class (sig:KERNEL-LINK-DOWN.count>=1: a kernel line
    # in the same input); those ids are added to the set by host_catalog.extend, after this file is parsed
    known = {i for i in ids if isinstance(i, str)} | catalog_class_ids()
    seen: set[str] = set()
    sigs = []
    for i, item in enumerate(raw):
        here = f"{where}: signatures[{i}]"
        if not isinstance(item, dict):
            raise BadInputError(f"{here}: must be an object")
        sid = _need(item, "id", str, here)
        here = f"{where}: signature {sid}"
        if sid in seen:
            raise BadInputError(f"{here}: duplicate id")
        seen.add(sid)
        derived = item.get("derived")
        if derived is not None and derived not in DERIVED:
            raise BadInputError(f"{here}: unknown derived kind {derived!r} (known: {', '.join(DERIVED)})")
        pats = item.get("patterns", [])
        if not isinstance(pats, list) or not all(isinstance(p, str) and p for p in pats):
            raise BadInputError(f"{here}: 'patterns' must be a list of regex strings")
        if not pats and derived is None:
            raise BadInputError(f"{here}: needs at least one pattern (or 'derived')")
        compiled = []
        for p in pats:
            try:
                compiled.append(re.compile(p))
            except re.error as exc:
                raise BadInputError(f"{here}: bad regex {p!r}: {exc}") from None
        role = item.get("role")
        if role not in ROLES:
            raise BadInputError(f"{here}: role must be one of {', '.join(ROLES)}")
        severity = item.get("severity")
        if severity not in SEVERITIES:
            raise BadInputError(f"{here}: severity must be one of {', '.join(SEVERITIES)}")
        priority = item.get("priority")
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise BadInputError(f"{here}: priority must be an integer")
        suppresses = item.get("suppresses", [])
        if not isinstance(suppresses, list) or any(s not in known for s in suppresses):
            raise BadInputError(f"{here}: 'suppresses' must list known signature ids")
        causes_raw = item.get("causes")
        if not isinstance(causes_raw, list) or not causes_raw:
            raise BadInputError(f"{here}: needs at least one cause")
        causes = []
        for j, c in enumerate(causes_raw):
            chere = f"{here}: causes[{j}]"
            if not isinstance(c, dict):
                raise BadInputError(f"{chere}: must be an object")
            when = c.get("when", [])
            if not isinstance(when, list):
                raise BadInputError(f"{chere}: 'when' must be a list of conditions")
            assumes = c.get("assumes", [])
            if not isinstance(assumes, list):
                raise BadInputError(f"{chere}: 'assumes' must be a list of conditions")
            needs = c.get("needs", [])
            if not isinstance(needs, list):
                raise BadInputError(f"{chere}: 'needs' must be a list of conditions")
            producers = c.get("producers", [])
            if not isinstance(producers, list) or not all(isinstance(x, str) and x for x in producers):
                raise BadInputError(f"{chere}: 'producers' must list producer class names")
            kind = c.get("kind", "cause")
            if kind not in CAUSE_KINDS:
                raise BadInputError(f"{chere}: kind must be one of {', '.join(CAUSE_KINDS)}")
            causes.append(
                Cause(
                    id=_need(c, "id", str, chere),
                    text=_need(c, "text", str, chere),
                    next=_need(c, "next", str, chere),
                    confidence=_confidence(c.get("confidence"), chere),
                    when=tuple(parse_condition(w, chere, set(ALL_PREDICATES), known) for w in when),
                    why=c.get("why"),
                    promote_first=_promote_first(c.get("promote", False), chere),
                    promote=c.get("promote", False) in (True, "first"),
                    kind=kind,
                    assumes=tuple(parse_condition(a, chere, set(ALL_PREDICATES), known) for a in assumes),
                    needs=tuple(parse_condition(n, chere, set(ALL_PREDICATES), known) for n in needs),
                    producers=tuple(producers),
                )
            )
        info_when = item.get("info_when", [])
        if not isinstance(info_when, list):
            raise BadInputError(f"{here}: 'info_when' must be a list of conditions")
        sigs.append(
            Signature(
                id=sid,
                title=_need(item, "title", str, here),
                patterns=tuple(compiled),
                role=role,
                severity=severity,
                priority=priority,
                meaning=_need(item, "meaning", str, here),
                causes=tuple(causes),
                source=_sources(item.get("source"), here),
                confidence=_confidence(item.get("confidence"), here),
                suppresses=tuple(suppresses),
                derived=derived,
                continues=_flag(item.get("continues", False), here, "continues"),
                external_end=_flag(item.get("external_end", False), here, "external_end"),
                generic=_flag(item.get("generic", False), here, "generic"),
                info_when=tuple(
                    parse_condition(w, f"{here}: info_when", set(ALL_PREDICATES), known) for w in info_when
                ),
            )
        )
    general = doc.get("general_order")
    if not isinstance(general, dict) or not isinstance(general.get("steps"), list) or not general["steps"]:
        raise BadInputError(f"{where}: 'general_order' needs a non-empty 'steps' list")
    steps = []
    for k, st in enumerate(general["steps"]):
        shere = f"{where}: general_order.steps[{k}]"
        if not isinstance(st, dict):
            raise BadInputError(f"{shere}: must be an object")
        steps.append(GeneralStep(step=_need(st, "step", str, shere), next=_need(st, "next", str, shere)))
    return SignatureSet(
        note_templates=_note_templates(doc.get("join_notes"), where),
        version=str(doc.get("version") or ""),
        signatures=tuple(sigs),
        general_order=tuple(steps),
        general_source=_sources(general.get("source"), f"{where}: general_order"),
        general_confidence=_confidence(general.get("confidence"), f"{where}: general_order"),
        path=where,
    )


def _note_templates(value: object, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    templates = value.get("templates") if isinstance(value, dict) else None
    if not isinstance(templates, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in templates.items()
    ):
        raise BadInputError(f"{where}: 'join_notes.templates' must map note keys to non-empty texts")
    return tuple(sorted(templates.items()))


def _promote_first(value: object, where: str) -> bool:
    if value not in (True, False, "first"):
        raise BadInputError(f"{where}: 'promote' must be true, false or \"first\"")
    return value == "first"
