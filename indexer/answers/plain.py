"""The base class of the answers' data classes (model.py, and the answers that define their own): `to_json()`.
Apart from model.py so that an answer defining its own classes (card) starts without building all of them."""

from __future__ import annotations

import dataclasses


class Model:
    def to_json(self) -> dict:
        return _plain(self)


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name.rstrip("_"): _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.name.startswith("_")}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
