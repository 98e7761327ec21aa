"""The evidence of `fit` (answers/fit.py), apart so that the pairing (answers/pairing.py) makes it without importing
fit."""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import Model


@dataclass
class Evidence(Model):
    """One fact for or against a candidate: `kind` sentinel, look-alike, regex, shape, markup, template,
    vocabulary or stripped; `stance` for, against or note; `weight` what it adds to the score."""

    kind: str
    stance: str
    weight: int
    text: str
    token: str | None = None  # the parser's token string concerned
    found: str | None = None  # what the input has instead (a look-alike)
    code_points: list[str] = field(
        default_factory=list
    )  # the differing characters, named: "A where the parser has B"
    file: str | None = None  # where the parser's code has it
    line: int | None = None
