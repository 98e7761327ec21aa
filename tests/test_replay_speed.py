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
MODULE = '''
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
'''


def run(script: str, tmp_path: Path) -> dict:
    (tmp_path / "fixture_mod.py").write_text(MODULE)
    code = f"import sys; sys.path[:0] = [{str(CHILD)!r}, {str(tmp_path)!r}]\n" + textwrap.dedent(script)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_indexed_findsource_gives_the_line_inspect_gives(tmp_path):
    got = run('''
        import inspect, json
        import fixture_mod as m
        classes = [m.Plain, m.Decorated, m.Outer, m.Outer.Inner, m.Outer.Inner.Deepest, m.Twice, m.factory()]
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
    ''', tmp_path)
    assert got["after"] == got["before"]
    if got["applies"]:  # Python < 3.13: the module was walked once for all its classes
        assert got["indexed"] >= 6


def test_learnt_dataclass_code_makes_the_same_classes(tmp_path):
    """A worker that learnt the texts earlier workers met runs the code compiled from those very texts; an
    unknown text is compiled as before and reported, to be learnt."""
    got = run('''
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
    ''', tmp_path)
    assert got["met"] > 0 and got["learnt"] == got["met"]  # the broken text is never cached
    assert got["unknown_after"] == []
    assert got["repr"] == got["a_repr"] and got["order"] and got["eq"] and got["frozen"] and got["same_code"]
