"""Datetimes at the note boundary: read any ISO 8601 form, write Obsidian's UTC form.

docs/user-guide.md, "The memory note": datetimes are written ``YYYY-MM-DDTHH:MM:SS`` in UTC. On read
we accept any ISO 8601 form (``Z`` and offsets honoured, naive = UTC, a bare date = midnight UTC),
epoch seconds, and YAML's own ``date``/``datetime`` objects. Everything inside vaultmem is an aware
UTC :class:`datetime.datetime` or epoch seconds (``float``).
"""

from __future__ import annotations

import datetime as dt
import math

from vaultmem.errors import InputError

UTC = dt.UTC
_DATETIME = dt.datetime

DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S"


def parse_datetime(value: object) -> dt.datetime:
    """Return ``value`` as an aware UTC datetime.

    Accepts ``datetime`` (naive = UTC), ``date`` (midnight UTC), ``int``/``float`` epoch seconds
    and ISO 8601 strings. Raises ``ValueError`` for anything else (including booleans) and for
    a time outside the years 1–9999 (``1e20``, ``inf``), which no datetime holds.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a datetime: {value!r}")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(UTC)
        if value.fold or type(value) is not dt.datetime:
            return value.replace(tzinfo=UTC)
        # made afresh: half the instructions of replace(tzinfo=...), whose keyword arguments
        # are parsed by name (every memory has two datetimes)
        return _DATETIME(
            value.year, value.month, value.day, value.hour, value.minute, value.second,
            value.microsecond, UTC,
        )
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, int | float):
        return _from_epoch_checked(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("empty datetime")
        try:
            seconds = float(text)
        except ValueError:
            pass
        else:
            return _from_epoch_checked(seconds)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        parsed = dt.datetime.fromisoformat(text)
        return parse_datetime(parsed)
    raise ValueError(f"not a datetime: {value!r}")


def _from_epoch_checked(seconds: float) -> dt.datetime:
    """Epoch ``seconds`` as a datetime; ``ValueError`` when not finite or outside years 1–9999."""
    try:
        if not math.isfinite(seconds):
            raise ValueError
        return dt.datetime.fromtimestamp(float(seconds), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"not a datetime in the years 1-9999: {seconds!r}") from None


def format_datetime(value: dt.datetime) -> str:
    """Format as ``YYYY-MM-DDTHH:MM:SS`` in UTC (Obsidian's datetime property format)."""
    moment = parse_datetime(value)
    if moment.year >= 1000:
        return moment.strftime(DATETIME_FORMAT)
    return moment.replace(microsecond=0, tzinfo=None).isoformat()  # strftime: no zero-padded year


def to_epoch(value: dt.datetime) -> float:
    """Epoch seconds of an aware (or naive = UTC) datetime."""
    return parse_datetime(value).timestamp()


def from_epoch(seconds: float) -> dt.datetime:
    """Aware UTC datetime of epoch ``seconds``."""
    return dt.datetime.fromtimestamp(seconds, tz=UTC)


def given_now(now: object) -> dt.datetime:
    """The ``now`` a Python API method was given, as an aware UTC datetime: ``None`` is the
    current time (:func:`utc_now`), a datetime without a time zone is UTC — as ``--now`` reads
    one ("UTC if no offset") — and an aware one is converted to UTC.

    Raises :class:`~vaultmem.errors.InputError` naming the value for anything else (a date, a
    string, a number): nothing is read or written then.
    """
    if now is None:
        return utc_now()
    if not isinstance(now, dt.datetime):
        raise InputError(
            f"now: {now!r} is not a datetime (give a datetime.datetime; one without a time "
            "zone is read as UTC)"
        )
    return parse_datetime(now)


def utc_now() -> dt.datetime:
    """The current time, aware UTC, truncated to whole seconds (notes store seconds)."""
    return dt.datetime.now(UTC).replace(microsecond=0)
