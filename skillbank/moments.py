"""How a time without a zone is read, in one place: stored and file times are UTC, times a
person types are local.

Two conventions meet here, on purpose (hunt-time #3 and #7, session 29):

- Times the bank writes (journals, guideline files, the audit log) carry `+00:00`; a time in a
  file that has no zone (written by hand, or imported from a JSONL line) is read as UTC, as it
  always was, so a file means the same on every machine (`stored_utc`).
- Times a person gives as an argument (`recall(since=datetime.now() - timedelta(hours=1))`,
  `skillbank audit --since 2026-12-07T04:59`) follow Python's own convention: a naive datetime
  is local time, as `datetime.timestamp()` reads it (`typed_utc`). They were read as UTC, so
  "the last hour" in Auckland (UTC+13) began 12 hours in the future and found nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from datetime import date, datetime, time, timedelta, timezone
from typing import Any, Iterator

#: Dates a record may carry (hunt-time #2, session 29): a hand-written `created: 0001-01-01`
#: loaded, then broke the memory browser's Stats page (OverflowError, HTTP 500). Nothing the
#: bank keeps predates the unix epoch, and a year past 2999 is a typing slip.
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(3000, 1, 1, tzinfo=timezone.utc)


def stored_utc(moment: datetime) -> datetime:
    """A stored (or file) time as an aware datetime: one without a zone is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


#: The UTC offset of the process that typed the time, when it is not this one: a client of an
#: owner process sends its own (`local_offset`) with every call. The owner read a client's
#: zone-less `since` in the owner's zone: a client in Auckland asking a UTC owner for "the
#: last hour" found nothing (review of hunt-time #3, session 29). One offset is right only
#: for times near the call's date, so a client now writes the zone into its typed times
#: itself (`with_local_zone`); the offset still reads a client of an earlier release.
_CALLER_OFFSET: contextvars.ContextVar[timedelta | None] = contextvars.ContextVar(
    "skillbank_caller_utc_offset", default=None)
#: Offsets a zone can have (UTC-12 to UTC+14, with room).
_MAX_OFFSET = timedelta(hours=18)


def local_offset() -> float:
    """This process's UTC offset now, in seconds (what a client sends with a call)."""
    offset = datetime.now().astimezone().utcoffset()
    return offset.total_seconds() if offset is not None else 0.0


#: The arguments that are typed times (read by `typed_since`): a client gives them a zone.
TYPED_ARGUMENTS = ("since",)


def with_local_zone(value: Any) -> Any:
    """A typed time as this process reads it, with its zone written out: a naive datetime or
    a date gets this process's UTC offset *on that date* (Python's local-time rule, DST
    included), an ISO text without a zone the same (returned as aware ISO text); anything else
    is returned as it is. A client of an owner process sends its typed times this way: it sent
    one offset, its own at the moment of the call, so a July time typed in Berlin in December
    was read an hour off (hunt-trust #3, session 30)."""
    try:
        if isinstance(value, datetime):
            return value.astimezone() if value.tzinfo is None else value
        if isinstance(value, date):
            return datetime.combine(value, time()).astimezone()
        if isinstance(value, str):
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return moment.astimezone().isoformat() if moment.tzinfo is None else value
    except (ValueError, OverflowError, OSError):  # not a time, or past the years there are:
        pass  # the owner reads it (and names what is wrong with it) as before
    return value


@contextlib.contextmanager
def caller_offset(seconds: Any) -> Iterator[None]:
    """Typed times in this block are read at the caller's UTC offset (`seconds`; None or a
    value no zone has: this process's own zone)."""
    offset = None
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) \
            and math.isfinite(seconds) and abs(seconds) <= _MAX_OFFSET.total_seconds():
        offset = timedelta(seconds=seconds)
    token = _CALLER_OFFSET.set(offset)
    try:
        yield
    finally:
        _CALLER_OFFSET.reset(token)


def typed_utc(moment: datetime | date) -> datetime:
    """A time a person gave, in UTC: one without a zone is local time (a date: local midnight),
    as Python's `datetime.timestamp()` reads it; the caller's local time when a client of this
    process gave it (`caller_offset`)."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time())
    offset = _CALLER_OFFSET.get()
    try:
        if moment.tzinfo is None and offset is not None:
            return moment.replace(tzinfo=timezone(offset)).astimezone(timezone.utc)
        return moment.astimezone(timezone.utc)
    except (OverflowError, OSError, ValueError):  # year 1 east of UTC, 9999 west of it
        edge = datetime.min if moment.year < 1970 else datetime.max
        return edge.replace(tzinfo=timezone.utc)


def typed_since(since: Any) -> datetime:
    """A `since` a caller gave, as an aware UTC datetime: a datetime or date (`typed_utc`), an
    ISO date or time (one without a zone is local time, as a datetime), unix seconds, or a
    timedelta meaning "within the last ...". What `recall(since=...)` takes, for every `since`
    of the API: `audit.query(since="2026-12-01")` raised a raw TypeError from deep inside the
    log's reader (hunt-trust #4, session 30). Anything else is an InvalidInputError."""
    from skillbank.errors import InvalidInputError

    if isinstance(since, (datetime, date)):
        return typed_utc(since)
    edge = None
    if isinstance(since, timedelta):
        try:
            return datetime.now(timezone.utc) - since
        except OverflowError:
            edge = since.total_seconds() < 0
    elif isinstance(since, (int, float)) and not isinstance(since, bool) \
            and math.isfinite(since):
        try:
            return datetime.fromtimestamp(since, timezone.utc)
        except (OverflowError, OSError, ValueError):
            edge = since > 0
    elif isinstance(since, str):
        try:
            return typed_utc(datetime.fromisoformat(since.strip().replace("Z", "+00:00")))
        except ValueError:
            pass
    if edge is not None:  # a span or a number past the years there are: the first or last
        return (datetime.max if edge else datetime.min).replace(tzinfo=timezone.utc)
    raise InvalidInputError(
        f"since={since!r} is not a time: pass a datetime, an ISO date such as '2026-01-31', "
        "a unix timestamp, or a timedelta meaning 'within the last …'")


def out_of_range(moment: datetime) -> str | None:
    """Why `moment` (aware) is not a date a record may carry, or None when it is."""
    try:
        if EARLIEST <= moment < LATEST:
            return None
    except (OverflowError, TypeError):
        pass
    return (f"{moment.isoformat()} is outside the dates a record may carry "
            f"({EARLIEST:%Y-%m-%d} to {LATEST.year - 1}-12-31)")


def imported_time(value: Any, name: str = "created") -> datetime | None:
    """An import line's `created` (or another time, `name`: an experience's `updated`): an ISO
    text (a time without a zone, or a date, is UTC, as in guideline files) or a number of unix
    seconds; None when the line has none (then "now" for `created`).

    Raises ValueError naming the value for anything else, so the line is named as not read:
    a zone-less time was stored naive and then broke `skills propose` (hunt-time #7), and a
    number was silently replaced by "now" (hunt-time #8)."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"{name} {value!r} is not a time")
        try:
            moment = datetime.fromtimestamp(value, timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{name} {value!r} is not a time in unix seconds") from None
    elif isinstance(value, str):
        try:
            moment = stored_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            raise ValueError(f"{name} {value!r} is not an ISO date or time "
                             "(2024-05-01, 2024-05-01T09:00:00+00:00) or unix seconds") from None
    else:
        raise ValueError(f"{name} must be an ISO date or time or unix seconds, "
                         f"not {type(value).__name__}")
    problem = out_of_range(moment)
    if problem is not None:
        raise ValueError(f"{name} {problem}")
    return moment
