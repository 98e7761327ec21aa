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

Neither changes a value a release's code sees: same lines, same code.
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

    class Index(finder):
        """One walk over a module: every class's line, as `_ClassFinder(qualname)` would find each."""

        def __init__(self):
            super().__init__(None)
            self.found: dict[str, int] = {}

        def visit_ClassDef(self, node):
            self.stack.append(node.name)
            qualname = ".".join(self.stack)
            if qualname not in self.found:
                self.found[qualname] = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
            self.generic_visit(node)
            self.stack.pop()

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
                index = Index()
                index.visit(ast.parse(source))
            except Exception:  # a syntax error, ...: the original raises it as before
                return original(object)
            found = _CLASS_LINES[source] = index.found
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

    def install(self) -> None:
        import dataclasses

        if getattr(dataclasses, "exec", None) is not None:
            return
        code, met = self.code, self.met

        def exec_(source, globals=None, locals=None, /):
            if globals is None:  # exec's defaults: the calling frame's namespaces (dataclasses', not this one's)
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
