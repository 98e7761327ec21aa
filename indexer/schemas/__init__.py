"""The JSON contract: one JSON Schema per `--format json` output, shipped as files beside this module and
printed by `tpindex schema NAME`.

The schemas are generated from the answers' data classes (indexer/answers/model.py), so the contract and
the code cannot drift apart silently: `python -m indexer.schemas` rewrites the files, and a test fails when
a model changes without them. `CONTRACT` is the contract's version: it changes only when a change is not
compatible (a field removed, renamed or retyped); adding a field or a new `type` of change is compatible,
and consumers should ignore fields they do not know.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path

CONTRACT = 1
HERE = Path(__file__).resolve().parent
BASE_ID = "urn:tpindex:schema"


def names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.json"))


def load(name: str) -> dict:
    path = HERE / f"{name}.json"
    if not path.is_file():
        raise KeyError(name)
    return json.loads(path.read_text(encoding="utf-8"))


# -- generation -----------------------------------------------------------------------------------------------


def _type(hint, defs: dict) -> dict:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        inner = _type(options[0], defs) if len(options) == 1 else {"anyOf": [_type(a, defs) for a in options]}
        if type(None) in typing.get_args(hint):
            if set(inner) == {"type"} and isinstance(inner["type"], str):
                return {"type": [inner["type"], "null"]}
            return {"anyOf": [inner, {"type": "null"}]}
        return inner
    if origin is list:
        (item,) = typing.get_args(hint) or (typing.Any,)
        return {"type": "array", "items": _type(item, defs)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if dataclasses.is_dataclass(hint):
        _define(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    return {
        str: {"type": "string"},
        int: {"type": "integer"},
        bool: {"type": "boolean"},
        float: {"type": "number"},
    }.get(hint, {})


def _object(cls, defs: dict, only: tuple[str, ...] | None = None) -> dict:
    hints = typing.get_type_hints(cls)
    fields = [
        f for f in dataclasses.fields(cls) if not f.name.startswith("_") and (only is None or f.name in only)
    ]
    props = {f.name.rstrip("_"): _type(hints[f.name], defs) for f in fields}
    required = [f.name.rstrip("_") for f in fields if not f.metadata.get("omittable")]  # plain.omittable()
    out = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
        out["description"] = " ".join(cls.__doc__.split())
    return out


def _define(cls, defs: dict) -> None:
    if cls.__name__ not in defs:
        defs[cls.__name__] = {}
        defs[cls.__name__] = _object(cls, defs)


def _document(name: str, title: str, body: dict, defs: dict) -> dict:
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE_ID}:{name}:v{CONTRACT}",
        "title": title,
        "x-tpindex-contract": CONTRACT,
        **body,
    }
    if defs:
        doc["$defs"] = dict(sorted(defs.items()))
    return doc


def generate() -> dict[str, dict]:
    """name -> schema, for every JSON output of the command line (and the MCP tools' structured output)."""
    from ..answers import atlas_model, contract_model, model
    from ..answers.card import CardSet
    from ..answers.export import COLUMNS
    from ..answers.fit import Fit

    out = {}
    for name, title, cls in (
        ("which", "tpindex which NAME --format json", model.Which),
        ("which-all", "tpindex which NAME --all --format json", model.History),
        ("diff", "tpindex diff A B --format json", model.Diff),
        ("card", "tpindex card NAME --format json (and card --all)", CardSet),
        ("show", "tpindex show PATH[:LINE[-END]] --format json", model.Shown),
        ("show-name", "tpindex show NAME [--method M] --format json", model.NameSpans),
        ("diff-code", "tpindex diff A B --code PATH --format json", model.CodeDiff),
        ("diff-code-name", "tpindex diff A B --code NAME --format json", model.NameCodeDiff),
        ("fit", "tpindex fit FILE --format json", Fit),
        ("log", "tpindex log NAME A B --format json", model.Log),
        ("contains", "tpindex contains COMMIT|#PR --format json", model.Contains),
        ("diff-contract", "tpindex diff A B --contract --format json", contract_model.ContractDiff),
        (
            "contract",
            "the parser contract of a version (Index.contract, the MCP tool contract)",
            contract_model.Contract,
        ),
        ("check-plugin", "tpindex check-plugin FILE.py --format json", contract_model.PluginReport),
        ("replay", "tpindex replay NAME --format json", model.Replay),
        ("atlas", "tpindex atlas [NAME...] --format json", atlas_model.Atlas),
    ):
        defs: dict = {}
        out[name] = _document(name, title, _object(cls, defs), defs)
    defs = {}
    row = _object(model.Parser, defs, only=COLUMNS)
    row["properties"]["chat_templates"] = {"type": "array", "items": {"type": "string"}}
    row["properties"]["tests"] = {"type": "array", "items": {"type": "string"}}
    row["required"] = list(COLUMNS)
    row.pop("description", None)
    export = _object(model.Export, defs)
    export["properties"]["parsers"] = {"type": "array", "items": row}
    defs.pop("Hop", None)
    out["export"] = _document("export", "tpindex export --format json", export, {})
    defs = {}
    out["versions"] = _document(
        "versions",
        "tpindex versions --format json",
        {"type": "array", "items": _type(model.VersionInfo, defs)},
        defs,
    )
    defs = {}
    out["grep"] = _document(
        "grep",
        "tpindex grep PATTERN --format json",
        {"type": "array", "items": _type(model.GrepMatch, defs)},
        defs,
    )
    for name, title, cls in (
        ("where", "tpindex where SYMBOL|PATH [--all] --format json", model.Where),
        ("check-doc", "tpindex check-doc FILE.md --format json", model.CheckDoc),
    ):
        defs = {}
        out[name] = _document(name, title, _object(cls, defs), defs)
    defs = {}
    out["check"] = _document("check", "tpindex check --format json", _object(model.CheckReport, defs), defs)
    return out


def write() -> list[Path]:
    written = []
    for name, schema in generate().items():
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written
