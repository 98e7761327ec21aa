"""Child side (runs only in a replay child, never in tpindex's own process): how a version's tree is made
importable without its heavy dependencies.

- A light `vllm` package whose `__path__` is the tree's `vllm/` directory: the release's own
  `vllm/__init__.py` (which imports the engine, torch, ...) never runs; its submodules import as usual.
- A meta-path finder appended LAST to sys.meta_path that supplies stand-in modules only for the native or
  heavy packages named in HEAVY (torch, transformers, xgrammar, ...): anything installed in the replay
  environment wins, and a module that is neither installed nor listed fails to import as it would in a real
  installation (a pure-Python package must be installed, never stubbed).
- Every stand-in records its use: `imported` (a module of the tree imported it) and `touched` (an
  attribute of it was used while the replay ran, after the imports): a result that touched one may depend
  on it.
"""

from __future__ import annotations

import abc
import importlib.abc
import importlib.machinery
import importlib.metadata
import re
import sys
import types

# Top-level packages (or dotted prefixes) that are native or heavy: never installed in the replay environment.
HEAVY = (
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "xgrammar",
    "llguidance",
    "outlines",
    "outlines_core",
    "lm_format_enforcer",
    "cv2",
    "zmq",
    "triton",
    "numba",
    "ray",
    "flashinfer",
    "xformers",
    "vllm_flash_attn",
    "vllm._C",
    "vllm._moe_C",
    "vllm._rocm_C",
    "vllm.vllm_flash_attn",
    "vllm._flashmla_C",
    "vllm.cumem_allocator",
    "compressed_tensors",
    "safetensors",
    "sentencepiece",
    "accelerate",
    "bitsandbytes",
    "deep_gemm",
    "deep_ep",
    "pplx_kernels",
    "flash_attn",
    "amdsmi",
    "pynvml",
    "nvidia",
    "cupy",
    "intel_extension_for_pytorch",
    "habana_frameworks",
    "tpu_info",
    "torch_xla",
    "jax",
    "mamba_ssm",
    "librosa",
    "soundfile",
    "av",
    "decord",
    "timm",
    "scipy",
    "sklearn",
    "datasets",
    "tensorizer",
    "cuda",
    "pyarrow",
    "pandas",
    "uvloop",
    "numexpr",
    "opencv",
    "aiter",
    "quack",
    "cutlass",
    "nixl",
    "lmcache",
    "mooncake",
    "helion",
    "tilelang",
    "fastsafetensors",
    "runai_model_streamer",
    "modelopt",
    "qutlass",
    "flash_mla",
    "gpt_oss",
    "vllm_xpu_kernels",
    "ixformer",
)

STATE = {"phase": "import", "imported": {}, "touched": {}}


def _heavy(name: str) -> str | None:
    for h in HEAVY:
        if name == h or name.startswith(h + "."):
            return h
    return None


def _touch(module: str, attr: str) -> None:
    if STATE["phase"] == "replay":
        STATE["touched"].setdefault(module, set()).add(attr)


class _StandInMeta(abc.ABCMeta):
    """Classes made from a stand-in: usable as a base, in annotations (X | None), as a decorator, called."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        _touch(cls._standin_origin, name)
        return _make(cls._standin_origin, f"{cls.__name__}.{name}")

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __getitem__(cls, item):
        return cls

    def __bool__(cls):
        return False

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __instancecheck__(cls, obj):
        return False

    def register(cls, *args, **kwargs):  # AutoConfig.register("x", XConfig): not ABCMeta.register
        _touch(cls._standin_origin, "register")
        return args[-1] if args else None


class _StandIn(metaclass=_StandInMeta):
    _standin_origin = "?"

    def __init__(self, *args, **kwargs):
        _touch(type(self)._standin_origin, type(self).__name__ + "()")

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        _touch(type(self)._standin_origin, name)
        return _make(type(self)._standin_origin, name)()

    def __call__(self, *args, **kwargs):
        _touch(type(self)._standin_origin, type(self).__name__ + "()")
        if len(args) == 1 and callable(args[0]) and not kwargs:  # used as a decorator
            return args[0] if isinstance(args[0], type) else _Decorated(args[0], type(self)._standin_origin)
        return type(self)()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __radd__(self, other):  # "op_name" + schema: the other operand unchanged
        return other

    def __add__(self, other):
        return self

    __mul__ = __rmul__ = __sub__ = __truediv__ = __add__

    def __str__(self):
        return ""

    def __eq__(self, other):  # two stand-in values (schemas inferred from stand-ins) compare equal
        return isinstance(other, _StandIn) or other == ""  # "" is what str() of a stand-in value gives

    def __hash__(self):
        return id(self)

    def __index__(self):
        return 0

    def __int__(self):
        return 0


class _Decorated:
    """A function decorated by a stand-in (torch.library.custom_op, torch.compile): still callable; its
    attributes (`.register_fake`) are stand-in decorators."""

    def __init__(self, fn, origin):
        self._fn, self._origin = fn, origin
        self.__name__ = getattr(fn, "__name__", "decorated")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __get__(self, obj, owner=None):
        return self if obj is None else self._fn.__get__(obj, owner)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _make(self._origin, name)()


def _make(origin: str, name: str) -> type:
    return _StandInMeta(name.rpartition(".")[2] or "StandIn", (_StandIn,), {"_standin_origin": origin})


class StandInModule(types.ModuleType):
    def __getattribute__(self, name):  # an attribute made at import and used by the replay counts too
        if STATE["phase"] == "replay" and not name.startswith("__"):
            _touch(object.__getattribute__(self, "__name__"), name)
        return super().__getattribute__(name)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        _touch(self.__name__, name)
        value = _make(self.__name__, f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


def _iinfo(dtype=None):
    return types.SimpleNamespace(min=-(1 << 63), max=(1 << 63) - 1, bits=64)


def _finfo(dtype=None):
    return types.SimpleNamespace(
        min=-3.4028234663852886e38,
        max=3.4028234663852886e38,
        eps=1.1920928955078125e-07,
        tiny=1.1754943508222875e-38,
        bits=32,
    )


def _infer_schema(fn, *args, **kwargs):
    """torch.library.infer_schema: a schema string of the function's shape, "(Tensor a, Tensor b) -> Tensor",
    which module-level code of later trees splits and compares."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "() -> ()"
    n = str(sig.return_annotation).count("Tensor")
    returns = "()" if n == 0 else "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
    return "(" + ", ".join(f"Tensor {p}" for p in sig.parameters) + ") -> " + returns


class _DType:
    """A torch dtype: distinct from every other (module-level tables use dtypes as keys), with its item size
    and kind (v0.34.0's torch helpers assert the size of each against the array module's at import). Any
    other attribute is a stand-in, recorded as touched."""

    def __init__(self, name: str, itemsize: int, floating: bool):
        self.name, self.itemsize, self.is_floating_point = name, itemsize, floating

    def __repr__(self):
        return f"torch.{self.name}"

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        _touch("torch", f"{self.name}.{name}")
        return _make("torch", f"dtype.{name}")()


def _dtypes() -> dict[str, _DType]:
    """torch's dtypes by every name torch gives them (torch.float and torch.float32 are one dtype)."""
    out: dict[str, _DType] = {}
    for names, size, floating in (
        (("float32", "float"), 4, True),
        (("float64", "double"), 8, True),
        (("float16", "half"), 2, True),
        (("bfloat16",), 2, True),
        (("float8_e4m3fn",), 1, True),
        (("float8_e5m2",), 1, True),
        (("float8_e4m3fnuz",), 1, True),
        (("float8_e5m2fnuz",), 1, True),
        (("complex64", "cfloat"), 8, False),
        (("complex128", "cdouble"), 16, False),
        (("uint8",), 1, False),
        (("int8",), 1, False),
        (("int16", "short"), 2, False),
        (("int32", "int"), 4, False),
        (("int64", "long"), 8, False),
        (("uint16",), 2, False),
        (("uint32",), 4, False),
        (("uint64",), 8, False),
        (("bool",), 1, False),
    ):
        dtype = _DType(names[0], size, floating)
        out.update(dict.fromkeys(names, dtype))
    return out


# The few values module-level code of the trees computes with (asserts, version checks, dtype tables), not
# behaviour.
KNOWN = {
    "torch": {"__version__": "2.5.0", "iinfo": _iinfo, "finfo": _finfo, **_dtypes()},
    "torch.library": {"infer_schema": _infer_schema},
    "torch._library.infer_schema": {"infer_schema": _infer_schema},
    "torch.version": {"cuda": None, "hip": None, "__version__": "2.5.0"},
    "transformers": {"__version__": "4.45.0"},
}


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = StandInModule(spec.name)
        module.__path__ = []  # a package: submodules are stand-ins too
        module.__standin__ = True
        for k, v in KNOWN.get(spec.name, {}).items():
            setattr(module, k, v)
        return module

    def exec_module(self, module):
        STATE["imported"].setdefault(_heavy(module.__name__) or module.__name__, set()).add(module.__name__)


class _Dist(importlib.metadata.Distribution):
    """Package metadata for a stand-in (`importlib.metadata.version("transformers")`): the lowest version the
    tree's own requirement files accept, so its version checks take the path a supported install takes."""

    def __init__(self, name: str, version: str):
        self._name, self._version = name, version

    def read_text(self, filename):
        if filename in ("METADATA", "PKG-INFO"):
            return f"Metadata-Version: 2.1\nName: {self._name}\nVersion: {self._version}\n"
        return None

    def locate_file(self, path):
        return path


class HeavyFinder(importlib.abc.MetaPathFinder):
    """Appended last: reached only when nothing installed (and nothing in the tree) provides the module."""

    def __init__(self, versions: dict[str, str]):
        self.versions = versions

    def find_spec(self, fullname, path=None, target=None):
        if _heavy(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)

    def find_distributions(self, context=None):
        context = context or importlib.metadata.DistributionFinder.Context()
        name = (context.name or "").replace("-", "_").lower()
        if name and _heavy(name) and "." not in name:
            STATE["imported"].setdefault(name, set()).add(f"{name} (metadata)")
            return iter([_Dist(name, self.versions.get(name, "0"))])
        return iter(())


_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*(?:==|>=|~=)\s*([0-9][0-9A-Za-z.+]*)", re.M)


def required_versions(tree: str) -> dict[str, str]:
    """name -> the lowest version the tree's requirement files name (== or >= or ~=), first file wins."""
    import glob
    import os

    out: dict[str, str] = {}
    files = sorted(glob.glob(os.path.join(tree, "requirements*.txt"))) + sorted(
        glob.glob(os.path.join(tree, "requirements", "*.txt"))
    )
    for f in files:
        try:
            text = open(f, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for m in _REQ.finditer(text):
            out.setdefault(m.group(1).replace("-", "_").lower(), m.group(2).rstrip("."))
    return out


def _init_names(tree: str) -> dict[str, str]:
    """What the tree's own vllm/__init__.py exports and from where (never running it): `from vllm.x import N`
    and the lazy `MODULE_ATTRS = {"N": ".x:N"}` of later releases."""
    import ast
    import os

    try:
        module = ast.parse(open(os.path.join(tree, "vllm", "__init__.py"), encoding="utf-8").read())
    except (OSError, SyntaxError):
        return {}
    out = {}
    for node in ast.walk(module):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("vllm.")
        ):
            for a in node.names:
                out.setdefault(a.asname or a.name, f"{node.module}:{a.name}")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=False):
                if (
                    isinstance(k, ast.Constant)
                    and isinstance(v, ast.Constant)
                    and isinstance(v.value, str)
                    and ":" in v.value
                ):
                    mod, _, attr = v.value.partition(":")
                    out.setdefault(k.value, f"vllm{mod}:{attr}" if mod.startswith(".") else f"{mod}:{attr}")
    return out


class TreeRecorder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: records every vllm.* module asked for (found or not), then lets the others find it."""

    def __init__(self):
        self.asked: list[str] = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "vllm" or fullname.startswith("vllm."):
            self.asked.append(fullname)
        return None


def install(tree: str, version: str) -> TreeRecorder:
    """Make `vllm` import from the tree (light package), stand-ins last, and a recorder first."""
    import os

    pkg = types.ModuleType("vllm")
    pkg.__path__ = [os.path.join(tree, "vllm")]
    pkg.__file__ = os.path.join(tree, "vllm", "__init__.py")
    pkg.__version__ = version.lstrip("v")
    pkg.__package__ = "vllm"
    pkg.__spec__ = importlib.machinery.ModuleSpec("vllm", None, is_package=True)
    pkg.__spec__.submodule_search_locations = pkg.__path__

    names = _init_names(tree)

    def _lazy(name):  # `from vllm import SamplingParams`: the names the real __init__ would give
        import importlib

        if name in names:
            mod, _, attr = names[name].partition(":")
            return getattr(importlib.import_module(mod), attr)
        try:
            return importlib.import_module(f"vllm.{name}")
        except ImportError:
            raise AttributeError(f"module 'vllm' has no attribute {name!r} (light replay package)") from None

    pkg.__getattr__ = _lazy
    sys.modules["vllm"] = pkg
    recorder = TreeRecorder()
    sys.meta_path.insert(0, recorder)
    sys.meta_path.append(HeavyFinder(required_versions(tree)))
    return recorder


def report() -> dict:
    return {
        "imported": sorted(STATE["imported"]),
        "touched": {k: sorted(v) for k, v in sorted(STATE["touched"].items())},
    }
