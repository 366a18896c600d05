"""The exceptions tensorkit raises: one per error kind, with the kind's name in ``kind``.

The names and messages are those the ``tensorkit`` command prints as ``error[kind]: message``.
"""

from __future__ import annotations


class TensorkitError(Exception):
    """Base class of every tensorkit error."""

    kind: str = "error"


class IoError(TensorkitError, OSError):
    """The operating system refused a read or write."""

    kind = "io"


class TruncatedError(TensorkitError):
    """The input ends before a structure it declares."""

    kind = "truncated"


class MalformedError(TensorkitError):
    """The input is structurally invalid."""

    kind = "malformed"


class UnsupportedError(TensorkitError):
    """Valid input using a feature, version, dtype or codec tensorkit does not implement."""

    kind = "unsupported"


class LimitExceededError(TensorkitError):
    """The input asks for more memory or work than the limits allow."""

    kind = "limit_exceeded"


class ChecksumMismatchError(TensorkitError):
    """A checksum or hash stored with the data does not match the data."""

    kind = "checksum_mismatch"


class InvalidArgumentError(TensorkitError, ValueError):
    """Arguments that cannot work together (a buffer of the wrong size, an unknown format)."""

    kind = "invalid_argument"


class MissingHashError(TensorkitError):
    """A hash check was asked for, but the data carries none."""

    kind = "missing_hash"


__all__ = [
    "ChecksumMismatchError",
    "InvalidArgumentError",
    "IoError",
    "LimitExceededError",
    "MalformedError",
    "MissingHashError",
    "TensorkitError",
    "TruncatedError",
    "UnsupportedError",
]
