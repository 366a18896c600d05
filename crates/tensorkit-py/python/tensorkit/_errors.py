"""The exceptions tensorkit raises: one per error kind, with the kind's name in ``kind``.

Errors about the input's content (truncated, malformed, unsupported, over a limit) and bad
arguments are also ``ValueError``s, as Python's own parsers raise; the integrity errors are
``IntegrityError``s; ``IoError`` is also an ``OSError``.

The names and messages are those the ``tensorkit`` command prints as ``error[kind]: message``.
"""

from __future__ import annotations


class TensorkitError(Exception):
    """Base class of every tensorkit error."""

    kind: str = "error"


class IoError(TensorkitError, OSError):
    """The operating system refused a read or write."""

    kind = "io"


class TruncatedError(TensorkitError, ValueError):
    """The input ends before a structure it declares."""

    kind = "truncated"


class MalformedError(TensorkitError, ValueError):
    """The input is structurally invalid."""

    kind = "malformed"


class UnsupportedError(TensorkitError, ValueError):
    """Valid input using a feature, version, dtype or codec tensorkit does not implement."""

    kind = "unsupported"


class LimitExceededError(TensorkitError, ValueError):
    """The input asks for more memory or work than the limits allow."""

    kind = "limit_exceeded"


class IntegrityError(TensorkitError):
    """A stored checksum or hash could not vouch for the data: it does not match
    (``ChecksumMismatchError``), or it was asked for and is absent (``MissingHashError``)."""


class ChecksumMismatchError(IntegrityError):
    """A checksum or hash stored with the data does not match the data."""

    kind = "checksum_mismatch"


class InvalidArgumentError(TensorkitError, ValueError):
    """Arguments that cannot work together (a buffer of the wrong size, an unknown format)."""

    kind = "invalid_argument"


class MissingHashError(IntegrityError):
    """A hash check was asked for, but the data carries none."""

    kind = "missing_hash"


__all__ = [
    "ChecksumMismatchError",
    "IntegrityError",
    "InvalidArgumentError",
    "IoError",
    "LimitExceededError",
    "MalformedError",
    "MissingHashError",
    "TensorkitError",
    "TruncatedError",
    "UnsupportedError",
]
