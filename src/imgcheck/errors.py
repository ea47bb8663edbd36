"""One error hierarchy; the exit code of each kind lives here and nowhere else."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_UNDECIDED = 4  # --fail-on unknown: no error found, but a check that could give one was not decided
EXIT_INTERRUPTED = 130


class ImgcheckError(Exception):
    """Base of every error imgcheck reports to a user as one line."""

    exit_code = EXIT_USAGE


class UsageError(ImgcheckError):
    """The command line itself is wrong (bad flag value, malformed reference)."""

    exit_code = EXIT_USAGE


class BadInputError(ImgcheckError):
    """The input was obtained but is not valid: corrupt tar, wrong digest, malformed JSON."""

    exit_code = EXIT_USAGE


class LimitExceededError(BadInputError):
    """The input exceeds a configured safety limit (size, entry count, layer count)."""


class UnavailableError(ImgcheckError):
    """The image or node facts could not be obtained: missing file, network, auth, daemon down."""

    exit_code = EXIT_UNAVAILABLE
