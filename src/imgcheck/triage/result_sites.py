"""Which producer site of a generic NCCL result code printed the log's WARN (data/triage/nccl_result_sites.json).

ncclRemoteError / ncclSystemError / ncclInternalError name a family of calls, not a mechanism; the site that returned
the code does. The generated table lists, per code, each producer class with the WARN formats printed just above its
sites in every release. A cause of a result-code signature that names `producers` is contradicted when the log's WARN
comes from another class of the same code, and shown when its only producer class is the WARN's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from .. import safejson
from ..errors import BadInputError

SITES_FILE = "nccl_result_sites.json"
# signature id -> the ncclResult_t it stands for (NCCL's own names, src/nccl.h.in)
RESULT_OF_SIGNATURE = {
    "NCCL-ERR-2": "ncclSystemError",
    "NCCL-ERR-3": "ncclInternalError",
    "NCCL-ERR-6": "ncclRemoteError",
}
MIN_FIXED_TEXT = len("Connection c")  # a format with less fixed text than this cannot tell sites apart
_CONV = re.compile(r"%[-+ #0-9.]*(?:l{0,2}|z|h{0,2})[sdiufxXpc]")


@dataclass(frozen=True)
class ProducerClass:
    code: str
    name: str
    first: str
    last: str
    formats: tuple[re.Pattern[str], ...]


def _format_rx(fmt: str) -> re.Pattern[str] | None:
    """A printf format as a regex over the printed line: conversions match any text."""
    parts = _CONV.split(fmt.replace("\\n", "").strip())
    literal = [re.escape(p) for p in parts]
    if sum(len(p.strip()) for p in parts) < MIN_FIXED_TEXT:
        return None
    return re.compile(".*?".join(literal).replace(r"\ ", r"\s*"))


@functools.cache
def classes() -> dict[str, tuple[ProducerClass, ...]]:
    ref = resources.files("imgcheck.data.triage").joinpath(SITES_FILE)
    doc = safejson.loads(ref.read_text(encoding="utf-8"), f"imgcheck.data.triage/{SITES_FILE}")
    codes = doc.get("codes") if isinstance(doc, dict) else None
    if not isinstance(codes, dict):
        raise BadInputError(f"imgcheck.data.triage/{SITES_FILE}: expected an object with 'codes'")
    out: dict[str, tuple[ProducerClass, ...]] = {}
    for code, rows in codes.items():
        found = []
        for name, row in rows.items():
            rxs = tuple(rx for f in row.get("formats", []) if (rx := _format_rx(f)) is not None)
            found.append(ProducerClass(code, name, row["first"], row["last"], rxs))
        out[code] = tuple(found)
    return out


def producer_of(signature_id: str, warn_text: str | None) -> ProducerClass | None:
    """The producer class of `signature_id`'s result code whose WARN format the text matches; None when the
    signature is no result code, there is no WARN, or no (or more than one) class matches."""
    code = RESULT_OF_SIGNATURE.get(signature_id)
    if code is None or not warn_text:
        return None
    hits = [c for c in classes().get(code, ()) if any(rx.search(warn_text) for rx in c.formats)]
    names = {c.name for c in hits}
    return hits[0] if len(names) == 1 else None
