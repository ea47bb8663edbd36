"""Every form in which a framework prints a failed CUDA call (data/triage/cuda_error_forms.json), joined with every
text cudaGetErrorString gives for a code (cuda_runtime_errors.json), added to the hand-written signature that owns
the code's cause. A short text such as 'invalid device ordinal' is too generic to match anywhere; inside a form that
quotes a CUDA error it names the code, in PyTorch's old THC form and its renumbered codes as much as in today's."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from ..knowledge import shipped
from .signatures import Signature, SignatureSet


def _data(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text(encoding="utf-8"))
    return doc


def _alternation(items: list[str]) -> str:
    return "(?:" + "|".join(re.escape(i) for i in sorted(set(items), key=len, reverse=True)) + ")"


@cache
def owned_patterns() -> dict[str, tuple[re.Pattern[str], ...]]:
    """Signature id -> the patterns the forms add for the codes it owns."""
    doc = _data("cuda_error_forms.json")
    runtime = {r["code"]: r for r in _data("cuda_runtime_errors.json")["rows"]}
    driver = {r["code"]: r for r in shipped().rows("cuda_driver_errors")}
    out: dict[str, tuple[re.Pattern[str], ...]] = {}
    for owner in doc["owners"]:
        texts: list[str] = []
        names: list[str] = []
        for code in owner["codes"]:
            rt = runtime.get(code, {})
            texts += rt.get("texts", [])
            names += [n for n in (rt.get("name"), driver.get(code, {}).get("name")) if n]
        pats = [rf"\b{re.escape(n)}\b" for n in sorted(set(names))]
        if texts:
            text = _alternation(texts) + r"(?!\w)"
            name = _alternation(names) if names else r"\w+"
            for form in doc["forms"]:
                pats.append(form["regex"].replace("{text}", text).replace("{name}", name))
        out[owner["signature"]] = tuple(re.compile(p) for p in pats)
    return out


def extend(sigset: SignatureSet) -> SignatureSet:
    """The signature set with each owner's patterns extended by the forms (an owner the set lacks is skipped: a
    --signatures file of one's own need not have it)."""
    extra = owned_patterns()
    sigs = tuple(_with(s, extra[s.id]) if s.id in extra else s for s in sigset.signatures)
    return dataclasses.replace(sigset, signatures=sigs)


def _with(sig: Signature, patterns: tuple[re.Pattern[str], ...]) -> Signature:
    have = {p.pattern for p in sig.patterns}
    return dataclasses.replace(sig, patterns=sig.patterns + tuple(p for p in patterns if p.pattern not in have))
