"""The data classes of `which` (answers/which.py): a name's parsers at one version, with every hop. Apart from
model.py so that `which` starts without building every answer's classes; model.py re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, field

from .docpairs_model import DocPair
from .plain import Model, omittable


@dataclass
class Hop(Model):
    step: int
    hop: str  # registered, reexport, alias, class, base, adapter, engine attribute, name-check, wrapper, init, real
    class_: str | None
    module: str | None
    file: str | None
    line: int | None
    end_line: int | None = omittable()  # init: the __init__'s last line
    rebinds: list[str] = omittable()  # init: the attributes it rebinds that the parsing methods read


@dataclass
class Attribute(Model):
    """A behaviour attribute as one of the name's classes has it once created, in vLLM's default
    configuration (parser_attrs): the class that has it, where it is set, what set it at class creation
    (`ToolParser.__init_subclass__`, `decorator f`, `assignment after the class body`; null: the class body)
    and the condition that changes it (the guard, the flags' defaults, the value with a flag turned)."""

    role: str
    attribute: str
    value: str | None
    class_: str | None
    file: str | None
    line: int | None
    set_by: str | None
    condition: str | None


@dataclass
class Parser(Model):
    """One registered name at one version: where it is registered, its registered class, and the class whose
    code does the parsing (`real_*`), with every hop between them."""

    version: str
    kind: str  # tool | reasoning | engine
    name: str
    impl: str  # standalone | unified | name-check | dispatch | unresolved
    form: str | None
    registry_file: str | None
    registry_line: int | None
    registered_module: str | None
    registered_class: str | None
    registered_file: str | None
    registered_line: int | None
    real_class: str | None
    real_module: str | None
    real_file: str | None
    real_line: int | None
    adapter: str | None
    wrapper_class: str | None
    wrapper_file: str | None
    wrapper_line: int | None
    aliases: list[str]
    stub: bool | None
    reexport: bool
    parent_class: str | None
    parent_file: str | None
    streaming: str | None
    streaming_class: str | None  # the class whose streaming method runs
    streaming_file: str | None
    streaming_line: int | None  # the streaming method's line
    streaming_from: list[
        str
    ]  # the other names whose registered class that is (streaming from another name's)
    notes: list[str]
    reason: str | None
    hops: list[Hop] = field(default_factory=list)
    attributes: list[Attribute] | None = None  # which: the behaviour attributes (None: not read)
    _code_sig: str | None = None  # internal: changes when the name's own code does

    @classmethod
    def from_row(cls, r: dict, hops: list[Hop] | None = None) -> Parser:
        return cls(
            version=r["version"],
            kind=r["kind"],
            name=r["name"],
            impl=r["impl"],
            form=r["form"],
            registry_file=r["registry_file"],
            registry_line=r["registry_line"],
            registered_module=r["reg_module"],
            registered_class=r["reg_class"],
            registered_file=r["reg_file"],
            registered_line=r["reg_line"],
            real_class=r["real_class"],
            real_module=r["real_module"],
            real_file=r["real_file"],
            real_line=r["real_line"],
            adapter=r["adapter"],
            wrapper_class=r["wrapper_class"],
            wrapper_file=r["wrapper_file"],
            wrapper_line=r["wrapper_line"],
            aliases=[a for a in (r["alias_of"] or "").split(", ") if a],
            stub=None if r["stub"] is None else bool(r["stub"]),
            reexport=bool(r["reexport"]),
            parent_class=r["parent_class"],
            parent_file=r["parent_file"],
            streaming=r["streaming"],
            streaming_class=r["streaming_class"],
            streaming_file=r["streaming_file"],
            streaming_line=r["streaming_line"],
            streaming_from=_listed(r["streaming_from"]),
            notes=_notes(r["notes"]),
            reason=r["reason"],
            hops=hops or [],
            _code_sig=r["code_sig"],
        )


def _listed(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def _notes(text: str | None) -> list[str]:
    if not text:
        return []
    import json  # here: most names have no notes, and `which` in text reads no other JSON

    return json.loads(text)


@dataclass
class Which(Model):
    """A name's parsers at one version, and the pairings the version's documentation gives with it (`models`:
    the model families it is documented for, with the other parser of each pair; answers/docpairs.py)."""

    name: str
    version: str
    parsers: list[Parser]
    models: list[DocPair] = field(default_factory=list)
