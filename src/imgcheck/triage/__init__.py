"""`imgcheck triage`: from a failed job's logs to the first failure, its signature, and the
cause candidates in order, optionally joined with the static facts of the image and node."""

from .api import triage

__all__ = ["triage"]
