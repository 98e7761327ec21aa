"""The data classes of what a version's documentation pairs (answers/docpairs.py), apart so that the answers that
carry them (`which`, `fit`) import them without the reading."""

from __future__ import annotations

from dataclasses import dataclass

from .plain import Model


@dataclass
class DocLine(Model):
    """A line of a documentation page: the evidence for what was read from it."""

    file: str
    line: int
    text: str  # the line as written (stripped, at most 240 characters)


@dataclass
class Documented(Model):
    """What a version's documentation says about a model or family: the parsers it pairs with it, with the lines
    that say so. Several tool (or reasoning) parsers or templates: the docs do not decide between them."""

    query: str
    family: (
        str | None
    )  # the documented family it belongs to: the reasoning table's, else the section's heading
    match: str  # how: model id | family | member
    tool: list[str]
    reasoning: list[str]
    chat_template: str | None  # the docs' --chat-template for it, when every flags line read names that one
    templates_named: list[str]  # every chat template its flags lines name (several: one per model or base)
    tool_calling: bool | None  # the reasoning table's tool-calling column
    thinking: str | None  # on | off by default (the table's notes)
    kwargs: list[str]  # chat_template_kwargs the notes name: name=value
    evidence: list[DocLine]
    notes: list[DocLine]  # the table's notes on the family
    unregistered: list[str]  # names the docs give that the version does not register
    section: str | None = None  # the tool-calling section it was read from


@dataclass
class DocPair(Model):
    """A pairing the documentation gives: a model family (a row of the reasoning table, or a tool-calling section),
    its tool parser and reasoning parser (null: none given), with the lines."""

    family: str
    tool: str | None
    reasoning: str | None
    chat_template: str | None
    tool_calling: bool | None  # the reasoning table's column (null: no row)
    thinking: str | None
    evidence: list[DocLine]
    notes: list[DocLine]
