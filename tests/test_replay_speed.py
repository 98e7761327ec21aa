"""The replay child's cheaper imports (indexer/replay/child/speed.py): they must answer exactly what CPython
answers without them. Run in a subprocess, since they patch `inspect` and `dataclasses` of the process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = Path(__file__).resolve().parent.parent / "indexer" / "replay" / "child"

# A module whose classes test the rule inspect uses to find a class's line: nested, decorated, a name
# defined twice (the first one wins), a class inside a function (its qualname has <locals>).
MODULE = """
import dataclasses

def deco(c):
    return c

class Plain:
    pass

@deco
@dataclasses.dataclass
class Decorated:
    x: int = 1

class Outer:
    class Inner:
        class Deepest:
            pass

class Twice:
    a = 1

class Twice:  # noqa
    b = 2

def factory():
    class Local:
        pass
    return Local

class Host:
    def method(self):
        if True:
            class InMethod:
                pass
        return InMethod

try:
    import no_such_module_here  # noqa
except ImportError:
    class InHandler:
        pass
else:
    class InElse:
        pass
finally:
    class InFinally:
        pass

if True:
    with open(__file__) as _f:
        for _ in range(1):
            while True:
                class Deep:
                    pass
                break

match 1:
    case 1:
        class InCase:
            pass

async def coroutine():
    class InAsync:
        pass
    return InAsync
"""


def run(script: str, tmp_path: Path) -> dict:
    (tmp_path / "fixture_mod.py").write_text(MODULE)
    code = f"import sys; sys.path[:0] = [{str(CHILD)!r}, {str(tmp_path)!r}]\n" + textwrap.dedent(script)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_indexed_findsource_gives_the_line_inspect_gives(tmp_path):
    got = run(
        """
        import inspect, json
        import fixture_mod as m
        classes = [m.Plain, m.Decorated, m.Outer, m.Outer.Inner, m.Outer.Inner.Deepest, m.Twice, m.factory(),
                   m.Host().method(), m.InHandler, m.InFinally, m.Deep, m.InCase]
        def lines():
            out = []
            for c in classes:
                try:
                    out.append(inspect.findsource(c)[1])
                except OSError as e:
                    out.append(type(e).__name__)
            return out
        before = lines()
        import speed
        applies = speed.class_lines()
        print(json.dumps({"before": before, "after": lines(), "applies": applies,
                          "indexed": sum(len(v) for v in speed._CLASS_LINES.values())}))
    """,
        tmp_path,
    )
    assert got["after"] == got["before"]
    if got["applies"]:  # Python < 3.13: the module was walked once for all its classes
        assert got["indexed"] >= 11


def test_learnt_dataclass_code_makes_the_same_classes(tmp_path):
    """A worker that learnt the texts earlier workers met runs the code compiled from those very texts; an
    unknown text is compiled as before and reported, to be learnt."""
    got = run(
        """
        import dataclasses, json
        import speed
        speed.DATACLASS.install()
        @dataclasses.dataclass(order=True, frozen=True)
        class A:
            x: int
            y: str = "a"
        met = speed.DATACLASS.new()
        learner = speed.DataclassCode()
        learnt = learner.learn(met + ["def broken(:"])
        speed.DATACLASS.code, speed.DATACLASS.met = learner.code, []
        @dataclasses.dataclass(order=True, frozen=True)
        class B:
            x: int
            y: str = "a"
        b = B(1)
        try:
            b.x = 2
            frozen = False
        except dataclasses.FrozenInstanceError:
            frozen = True
        print(json.dumps({"met": len(met), "learnt": learnt, "unknown_after": speed.DATACLASS.new(),
                          "repr": repr(b).replace("B(", "A("), "a_repr": repr(A(1)), "order": B(1) < B(2),
                          "eq": B(1, "z") == B(1, "z"), "frozen": frozen,
                          "same_code": B.__init__.__code__.co_code == A.__init__.__code__.co_code}))
    """,
        tmp_path,
    )
    assert got["met"] > 0 and got["learnt"] == got["met"]  # the broken text is never cached
    assert got["unknown_after"] == []
    assert got["repr"] == got["a_repr"] and got["order"] and got["eq"] and got["frozen"] and got["same_code"]


# A module that rebuilds its models at its top level, as v0.9.0..v0.11.2's serving module does (a generic
# context parametrized, forward references to a name defined after the class, a subclass of a parametrized
# model), and a rebuild from another module's top level with that module's own names.
MODELS = """
from typing import Generic, TypeVar, Union
from pydantic import BaseModel, ConfigDict, Field

class Request(BaseModel):
    model: str
    n: int = 1

class Other(BaseModel):
    text: str = ""

T = TypeVar("T", bound=Union[Request, Other])

class Mixin(BaseModel):
    prompts: list["Prompt"] | None = []
    model_config = ConfigDict(arbitrary_types_allowed=True)

class Context(Mixin, BaseModel, Generic[T]):
    request: T
    request_id: str
    created: int = Field(default=0, ge=0)

OtherContext = Context[Other]

class RequestContext(Context[Request]):
    chat_template: str | None = None

Prompt = Union[str, list[int]]

class Late(BaseModel):
    value: "Later"

class Used(BaseModel):
    x: int

Mixin.model_rebuild()
Context.model_rebuild()
OtherContext.model_rebuild()
RequestContext.model_rebuild()
Used.model_rebuild()
USED = Used(x="1").x  # its first use, at the top level of its own module
"""

ELSEWHERE = """
from fixture_models import Late
Later = int
Late.model_rebuild()
"""


def test_deferred_rebuilds_build_the_same_schemas_at_first_use(tmp_path):
    """With schemas deferred (drive._defer_schemas), a model_rebuild() at a module's top level on that
    module's own models only records its namespace: the schema is built at first use, from that namespace,
    the same as the eager build (json schema, validation, errors); a rebuild with other names is not
    deferred."""
    (tmp_path / "fixture_models.py").write_text(MODELS)
    (tmp_path / "fixture_elsewhere.py").write_text(ELSEWHERE)
    script = """
        import json, sys
        DEFER = sys.argv[1] == "defer"
        if DEFER:
            import speed
            from pydantic._internal import _config
            _config.config_defaults["defer_build"] = True
            speed.defer_rebuilds()
        import fixture_models as m
        import fixture_elsewhere  # noqa: F401
        from pydantic._internal._mock_val_ser import MockValSer
        classes = [m.Mixin, m.Context, m.OtherContext, m.RequestContext]
        built = [not isinstance(c.__dict__.get("__pydantic_validator__"), MockValSer) for c in classes]
        out = {"built_at_import": built, "late_built": not isinstance(m.Late.__dict__.get("__pydantic_validator__"),
                                                                      MockValSer)}
        out["schemas"] = [c.model_json_schema() for c in classes + [m.Late]]
        ctx = m.RequestContext(request={"model": "x"}, request_id="r", prompts=["a", [1, 2]])
        out["dump"] = ctx.model_dump()
        try:
            m.OtherContext(request={"text": 1}, request_id="r", created=-1)
        except Exception as e:
            out["errors"] = sorted((tuple(x["loc"]), x["type"]) for x in e.errors())
        out["late"] = m.Late(value="3").value
        out["used"] = m.USED
        print(json.dumps(out, default=str))
    """
    eager = run_with(script, tmp_path, "eager")
    deferred = run_with(script, tmp_path, "defer")
    assert all(eager["built_at_import"])
    assert not any(deferred["built_at_import"])
    assert eager["late_built"] and deferred["late_built"]
    assert {k: v for k, v in deferred.items() if k != "built_at_import"} == {
        k: v for k, v in eager.items() if k != "built_at_import"
    }


def run_with(script: str, tmp_path: Path, arg: str) -> dict:
    code = f"import sys; sys.path[:0] = [{str(CHILD)!r}, {str(tmp_path)!r}]\n" + textwrap.dedent(script)
    out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_learnt_dataclass_code_is_compiled_once_for_many_servers(tmp_path):
    """The texts file (written by tpindex) is compiled by the first server that learns it, which keeps the
    code beside it for this interpreter; the next server loads that code instead of compiling the texts
    again, and learns (compiles) only texts added since."""
    got = run(
        """
        import dataclasses, json, sys
        import speed
        speed.DATACLASS.install()
        @dataclasses.dataclass(order=True)
        class A:
            x: int
            y: str = "a"
        texts = speed.DATACLASS.new()
        path = "TMP/learnt.json"
        with open(path, "w") as f:
            json.dump(texts, f)
        first = speed.DataclassCode()
        n1 = first.learn_file(path)
        second = speed.DataclassCode()
        n2 = second.learn_file(path)
        with open(path, "w") as f:
            json.dump(texts + ["def added():\\n return 1\\n"], f)
        third = speed.DataclassCode()
        n3 = third.learn_file(path)
        same = all(second.code[t].co_code == first.code[t].co_code and second.code[t].co_consts ==
                   first.code[t].co_consts for t in texts)
        print(json.dumps({"texts": len(texts), "compiled": [n1, n2, n3], "known": [len(first.code),
                          len(second.code), len(third.code)], "same": same}))
    """.replace("TMP", str(tmp_path)),
        tmp_path,
    )
    n = got["texts"]
    assert n > 0 and got["compiled"] == [n, 0, 1]
    assert got["known"] == [n, n, n + 1] and got["same"]
