"""What a CUDA_VISIBLE_DEVICES value makes visible, read the way the CUDA driver reads it.

The driver walks the comma-separated entries in order and keeps each until one ends the list
(pytorch/pytorch@v2.1.0:torch/cuda/__init__.py _parse_visible_devices mirrors it for device_count, and
test/test_cuda.py TestVisibleDeviceParses pins the cases down):
- an entry is read like strtoul: leading digits after an optional sign ("1gpu2" is 1, "+3" is 3, "-0" is 0);
- a negative number or an entry that does not start with a number ("none", "", "-1") ends the list: the entries
  before it stay visible, so a list that starts with one (or an empty value) leaves no device;
- an ordinal named twice empties the whole list;
- "GPU-<uuid>" / "MIG-<uuid>" entries name devices by (a prefix of) their UUID (CUDA C Programming Guide,
  "CUDA Environment Variables"; https://docs.nvidia.com/deploy/topics/topic_5_2_1.html).
An ordinal counts among the GPUs the process can see (a container's GPUs are renumbered from 0); the CUDA guide says
only the devices whose index precedes an invalid one are visible, so an ordinal at or past that count ends the list
too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ORDINAL = re.compile(r"\s*([+-]?)(\d+)")
_UUID_FORMS = ("GPU-", "MIG-")


@dataclass(frozen=True)
class Visible:
    """The parsed value: the entries kept in order, and what ended the list (None: every entry was kept)."""

    value: str
    ordinals: tuple[int, ...]  # kept ordinal entries, in order
    uuids: tuple[str, ...]  # kept UUID entries ("GPU-8932f937", "MIG-...")
    stopped_at: str | None  # the entry that ended the list (a negative number, a word, an empty entry)
    duplicate: int | None  # an ordinal named twice: the list is empty

    @property
    def none(self) -> bool:
        """True when the value leaves the process no device at all, whatever the node has."""
        return self.duplicate is not None or (not self.ordinals and not self.uuids)

    def visible_with(self, gpus: int) -> tuple[int, ...]:
        """The ordinals still visible when the process can see `gpus` GPUs: the list ends at the first one out of
        range (UUID entries are not counted here)."""
        if self.duplicate is not None:
            return ()
        kept: list[int] = []
        for o in self.ordinals:
            if o >= gpus:
                break
            kept.append(o)
        return tuple(kept)

    def first_out_of_range(self, gpus: int) -> int | None:
        return next((o for o in self.ordinals if o >= gpus), None)


def parse(value: str) -> Visible:
    ordinals: list[int] = []
    uuids: list[str] = []
    stopped: str | None = None
    for raw in value.split(","):
        entry = raw.strip()
        if entry.upper().startswith(_UUID_FORMS) and not ordinals:
            uuids.append(entry)
            continue
        m = _ORDINAL.match(entry)
        if m is None or (m.group(1) == "-" and int(m.group(2)) != 0) or uuids:
            stopped = entry
            break
        n = int(m.group(2))
        if n in ordinals:
            return Visible(value, tuple(ordinals), (), None, n)
        ordinals.append(n)
    return Visible(value, tuple(ordinals), tuple(uuids), stopped, None)
