"""The base class of the answers' data classes (model.py, and the answers that define their own): `to_json()`.
Apart from model.py so that an answer defining its own classes (card) starts without building all of them."""

from __future__ import annotations

import dataclasses
from dataclasses import field


class _Omitted:
    """The value of a field an answer does not have: its key is left out of the JSON (and the schema does not
    require it). False in a test, like an absent key."""

    def __repr__(self) -> str:
        return "OMITTED"

    def __bool__(self) -> bool:
        return False


OMITTED = _Omitted()


def omittable():
    """A field left out of the JSON unless the answer sets it."""
    return field(default=OMITTED, metadata={"omittable": True})


def given(value) -> bool:
    """Whether an omittable field was set (a set field may still be empty, null or false)."""
    return value is not OMITTED


class Model:
    def to_json(self) -> dict:
        return _plain(self)


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {
            f.name.rstrip("_"): _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_") and getattr(value, f.name) is not OMITTED
        }
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
