"""`imgcheck verify`: run a small verifier inside the image on this node and join what really
happens with the static prediction. See docs/verify.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import VerifyReport

__all__ = ["verify_image"]


def verify_image(*args: Any, **kwargs: Any) -> VerifyReport:  # run.verify_image's parameters
    from .run import verify_image as _verify_image  # lazy: importing the package stays cheap

    return _verify_image(*args, **kwargs)
