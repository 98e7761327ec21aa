"""Child side: make a release's imports cheaper without changing what they compute (measured on the 59 releases
v0.6.3..v0.33.0, one worker each; see the README's replay section for the figures).

Two places where CPython repeats the same work over and over while a tree imports:

- `inspect.findsource` of a class (Python < 3.13) parses the class's whole module and walks the syntax tree,
  once per class asked. v0.8.4..v0.9.1's `vllm/config.py` asks it of each of its ~20 config classes at import
  (its `@config` decorator reads the attribute docstrings): 20 parses of a 4,000-line file, 1-2 CPU s a
  worker. Here the module is parsed and walked once per source text, every class's line recorded by the
  same rule (`inspect._ClassFinder`'s: the first class of that qualified name in the walk's order, its first
  decorator's line when it has one); anything unusual (no file, no lines, no such class, a syntax error) is
  left to the original, which then answers or fails exactly as before.
- `dataclasses` writes the source of each class's generated methods (`__init__`, `__repr__`, `__eq__`, ...)
  and compiles it with `exec`: ~400 compiles a worker, 0.07 CPU s. The same dataclass in 59 trees writes the
  same text. Texts learnt from earlier workers are compiled once in the fork server (`DataclassCode`); a
  worker's `exec` of a known text runs the code compiled from that very text (same compiler, same flags:
  the same code object), an unknown one is compiled as before, and recorded to be learnt.

- pydantic's `model_rebuild()` at a module's top level (v0.9.0..v0.11.2's serving module rebuilds its
  request contexts, parametrized generics and all: the whole request schema, 0.1-0.15 CPU s a worker,
  for models a chat replay never uses). With schemas deferred (drive._defer_schemas), such a rebuild of a
  model the module itself defined, with that module's own names, records its namespace instead; the schema
  is built from that very namespace at the model's first use, as pydantic builds any deferred model
  (`defer_rebuilds`). A rebuild with any other names, forced, or of a model already built runs as before.

None changes a value a release's code sees: same lines, same code, the same schema from the same names
(a rebuild that would fail at import fails at first use instead).
"""

# No `from __future__` import here: this module compiles code for dataclasses, which must not inherit a flag.
import ast
import builtins
import sys


def install() -> None:
    """Both, in this process (the fork server, before its first fork; or a worker started alone)."""
    class_lines()
    DATACLASS.install()


# -- inspect.findsource of a class -------------------------------------------------------------------------

_CLASS_LINES: dict[str, dict[str, int]] = {}  # module source -> {class qualname: 0-based line}


def class_lines() -> bool:
    """Install the indexed findsource (-> whether it applies: Python < 3.13 walks the module per class)."""
    import inspect

    finder = getattr(inspect, "_ClassFinder", None)
    if sys.version_info >= (3, 13) or finder is None or getattr(inspect.findsource, "_tpindex", False):
        return False
    original = inspect.findsource

    def index(module) -> dict[str, int]:
        """Every class's line, as `_ClassFinder(qualname)` finds each (the first of a qualified name in its walk's
        order, the first decorator's line): the same walk over the statements alone, where classes can be (an
        expression holds none), once for all the module's classes."""
        found: dict[str, int] = {}
        nested = (ast.stmt, ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))

        def walk(node, stack):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    walk(child, (*stack, child.name, "<locals>"))
                elif isinstance(child, ast.ClassDef):
                    inner = (*stack, child.name)
                    found.setdefault(
                        ".".join(inner),
                        (child.decorator_list[0].lineno if child.decorator_list else child.lineno) - 1,
                    )
                    walk(child, inner)
                elif isinstance(child, nested):
                    walk(child, stack)

        walk(module, ())
        return found

    def findsource(object):
        if not inspect.isclass(object):
            return original(object)
        file = inspect.getsourcefile(object)
        if not file:
            return original(object)
        import linecache

        linecache.checkcache(file)
        module = inspect.getmodule(object, file)
        lines = linecache.getlines(file, module.__dict__) if module else linecache.getlines(file)
        if not lines:
            return original(object)
        source = "".join(lines)
        found = _CLASS_LINES.get(source)
        if found is None:
            try:
                found = _CLASS_LINES[source] = index(ast.parse(source))
            except Exception:  # a syntax error, ...: the original raises it as before
                return original(object)
        line = found.get(object.__qualname__)
        return original(object) if line is None else (lines, line)

    findsource._tpindex = True
    inspect.findsource = findsource
    return True


# -- dataclasses' generated methods ------------------------------------------------------------------------


class DataclassCode:
    """The code of dataclasses' generated methods, compiled once from texts learnt by earlier workers.

    `learn(texts)` (the fork server, before forking) compiles the texts not yet known; `install()` makes
    dataclasses' `exec` of a text use that text's code; `new()` (a worker, at its end) the texts it met that
    were not known, for the next runs to learn."""

    def __init__(self):
        self.code = {}  # text -> its code
        self.seen = set()  # texts learn() was given (compiled or not)
        self.met = []  # texts exec'd here that were not known

    def learn(self, texts) -> int:
        n = 0
        for text in texts:
            if isinstance(text, str) and text not in self.code and text not in self.seen:
                self.seen.add(text)
                try:
                    self.code[text] = compile(text, "<string>", "exec", dont_inherit=True)
                    n += 1
                except (SyntaxError, ValueError):  # never cached: exec raises it as it would have
                    pass
        return n

    def learn_file(self, path: str) -> int:
        """Learn the texts of a file tpindex keeps (a JSON list) -> how many were compiled here. The code is
        kept beside it for this interpreter (`<file>.<magic>.code`, marshal, as bytecode files are: the texts
        compile to code with no file name in it), marking the texts file's size and time it holds: a later
        server loads it instead of compiling every text again (about 1 CPU s for a few thousand), and compiles
        only texts added since."""
        import json
        import marshal
        import os
        from importlib.util import MAGIC_NUMBER

        try:
            st = os.stat(path)
        except OSError:
            return 0
        stamp = [st.st_size, st.st_mtime_ns, sys.version]
        cache = f"{path}.{MAGIC_NUMBER.hex()}.code"
        try:
            with open(cache, "rb") as f:
                kept = marshal.load(f)
            if kept.get("stamp") == stamp and isinstance(kept.get("code"), dict):
                for text, code in kept["code"].items():
                    self.seen.add(text)
                    self.code.setdefault(text, code)
                return 0
            old = kept.get("code") if isinstance(kept.get("code"), dict) else {}
        except (OSError, ValueError, EOFError, TypeError, AttributeError):
            old = {}
        try:
            with open(path, encoding="utf-8") as f:
                texts = json.load(f)
        except (OSError, ValueError):
            return 0
        if not isinstance(texts, list):
            return 0
        for text in texts:  # what an older keeping of the file holds is not compiled again
            if isinstance(text, str) and text in old and text not in self.code:
                self.seen.add(text)
                self.code[text] = old[text]
        n = self.learn(texts)
        try:
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                marshal.dump({"stamp": stamp, "code": {t: self.code[t] for t in texts if t in self.code}}, f)
            os.replace(tmp, cache)
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return n

    def install(self) -> None:
        import dataclasses

        if getattr(dataclasses, "exec", None) is not None:
            return
        code, met = self.code, self.met

        def exec_(source, globals=None, locals=None, /):
            if (
                globals is None
            ):  # exec's defaults: the calling frame's namespaces (dataclasses', not this one's)
                frame = sys._getframe(1)
                globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
            if isinstance(source, str):
                compiled = code.get(source)
                if compiled is None:
                    met.append(source)
                    # as exec compiles a text in dataclasses (no future flag there): never this module's flags
                    compiled = compile(source, "<string>", "exec", dont_inherit=True)
                return builtins.exec(compiled, globals, locals)
            return builtins.exec(source, globals, locals)

        dataclasses.exec = exec_  # dataclasses calls the global name `exec` (3.9-3.13): the module's own wins

    def new(self) -> list[str]:
        return list(dict.fromkeys(t for t in self.met if t not in self.code))


DATACLASS = DataclassCode()


# -- pydantic's model_rebuild() at a module's top level ----------------------------------------------------

_PENDING = {}  # model class -> the namespace of its deferred rebuild


def defer_rebuilds() -> bool:
    """Install the deferring model_rebuild (-> whether it applies: pydantic 2 with its internals as known)."""
    try:
        from pydantic import BaseModel
        from pydantic._internal import _config, _mock_val_ser, _typing_extra
    except ImportError:
        return False
    current = BaseModel.__dict__.get("model_rebuild")
    original = getattr(current, "__func__", None)
    if (
        original is None
        or getattr(original, "_tpindex", False)
        or not hasattr(_mock_val_ser, "MockValSer")
        or not hasattr(_typing_extra, "parent_frame_namespace")
    ):
        return False
    MockValSer, ConfigWrapper = _mock_val_ser.MockValSer, _config.ConfigWrapper
    frame_namespace = _typing_extra.parent_frame_namespace
    mock_module = _mock_val_ser.__name__

    def model_rebuild(
        cls, *, force=False, raise_errors=True, _parent_namespace_depth=2, _types_namespace=None
    ):
        if cls.__pydantic_complete__ and not force:
            return None
        # the namespace exactly as the original computes it (this frame stands where the original's would)
        if _types_namespace is not None:
            ns = _types_namespace
        elif _parent_namespace_depth > 0:
            ns = frame_namespace(parent_depth=_parent_namespace_depth, force=True) or {}
        else:
            ns = {}
        pending = cls in _PENDING
        first_use = sys._getframe(1).f_globals.get("__name__") == mock_module  # pydantic's mock asks: build
        if not force and not first_use and _own_names(cls, ns) and (pending or _deferrable(cls)):
            # the first such rebuild would have built the model (so a later one found it complete): record
            if not pending:
                _PENDING[cls] = ns
            return True if not pending else None
        if pending:  # its first use, or a rebuild with other names: built now, from the recorded names
            recorded = _PENDING.pop(cls)
            if not force:
                return original(cls, raise_errors=raise_errors, _types_namespace=recorded)
        return original(cls, force=force, raise_errors=raise_errors, _types_namespace=ns)

    def _deferrable(cls) -> bool:
        try:
            return bool(ConfigWrapper(cls.model_config, check=False).defer_build) and isinstance(
                cls.__dict__.get("__pydantic_validator__"), MockValSer
            )
        except Exception:
            return False

    def _own_names(cls, ns) -> bool:
        module = sys.modules.get(getattr(cls, "__module__", None) or "")
        return (module is not None and ns is module.__dict__) or (isinstance(ns, dict) and not ns)

    model_rebuild._tpindex = True
    BaseModel.model_rebuild = classmethod(model_rebuild)
    return True
