"""What address a RoCE GID is: the classification lives in the model (model/gid_address.py), so GID entries read
from a facts file get their kind the same way; the probe uses it from here."""

from __future__ import annotations

from ..model.gid_address import GLOBAL, IPV4_MAPPED, LINK_LOCAL, UNCONFIGURED, gid_kind, ipv4_of, words

__all__ = ["GLOBAL", "IPV4_MAPPED", "LINK_LOCAL", "UNCONFIGURED", "gid_kind", "ipv4_of", "words"]
