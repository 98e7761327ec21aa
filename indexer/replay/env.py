"""The replay environment: a virtualenv in the user cache with the packages vLLM's parser, protocol and
serving modules import, installed by pip (which honours the machine's pip configuration: index, mirrors,
certificates). Created on first use, with a progress line; `tpindex replay --setup` makes it ahead.

Pure-Python packages are installed, never stubbed (a stubbed ijson streams nothing, a stubbed mistral_common
changes the mistral parser's tokens, silently). The light native wheels that modules import at top level
(psutil, msgspec, orjson, regex, pydantic-core, ...) are installed too; only heavy or GPU packages (torch,
transformers, xgrammar, ...) are left to the child's stand-ins (child/standins.py HEAVY).

One environment serves every era v0.6.3..v0.33.0 (current pydantic, openai and fastapi import the old
releases' protocol and serving modules), so there is one, not one per era.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from .trees import ReplayError, cache_root

PACKAGES = (
    # protocol, parsers, serving
    "pydantic",
    "partial-json-parser",
    "regex",
    "msgspec",
    "fastapi",
    "openai",
    "jinja2",
    "pyyaml",
    "email-validator",
    "ijson",
    "orjson",
    "prometheus-client",
    "prometheus-fastapi-instrumentator",
    "mistral_common",
    "openai-harmony",
    "lxml",
    "lark",
    "jsonschema",
    "partial-json-parser",
    # what vllm's utilities import at module level
    "psutil",
    "packaging",
    "tqdm",
    "py-cpuinfo",
    "protobuf",
    "aiohttp",
    "uvicorn",
    "filelock",
    "importlib_metadata",
    "six",
    "cachetools",
    "blake3",
    "multidict",
    "cloudpickle",
    "watchfiles",
    "python-json-logger",
    "pybase64",
    "cbor2",
    "setproctitle",
    "anthropic",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "huggingface_hub",
    "tokenizers",
    "einops",
    "gguf",
    "diskcache",
    "lm-format-enforcer",
    "numpy",
    "pillow",
    "requests",
    "tiktoken",
    "typing_extensions",
)
ENV_FORMAT = 1


def env_key() -> str:
    text = "\n".join(
        [str(ENV_FORMAT), f"{sys.version_info[0]}.{sys.version_info[1]}", *sorted(set(PACKAGES))]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def env_dir(root: Path | None = None) -> Path:
    return (root or cache_root()) / f"env-{env_key()}"


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def ready(root: Path | None = None) -> bool:
    return (env_dir(root) / ".complete").is_file()


def interpreter(root: Path | None = None, progress=None, create: bool = True) -> Path:
    """The replay interpreter: TPINDEX_REPLAY_PYTHON when set (an interpreter you made yourself), else the
    environment's, created now when it is not there (unless `create` is False: a server never installs
    packages because a visitor asked for a replay; its operator sets the environment up)."""
    given = os.environ.get("TPINDEX_REPLAY_PYTHON")
    if given:
        if not os.access(given, os.X_OK):
            raise ReplayError(
                f"TPINDEX_REPLAY_PYTHON={given} is not an executable interpreter",
                "unset it to use the replay environment tpindex makes",
            )
        return Path(given)
    if not create and not ready(root):
        raise ReplayError(
            "the replay environment is not set up where this server runs",
            "its operator creates it once: tpindex replay --setup",
        )
    return setup(root, progress)


def setup(root: Path | None = None, progress=None) -> Path:
    """Create the environment (once; a concurrent run waits for it) -> its interpreter."""
    env = env_dir(root)
    if (env / ".complete").is_file():
        return python_of(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f".env-{env_key()}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (env / ".complete").is_file():
            return python_of(env)
        say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
        say(f"replay: creating the replay environment in {env} ({len(set(PACKAGES))} packages, once)...")
        start = time.monotonic()
        log = env.parent / f"env-{env_key()}.log"
        with open(log, "w") as out:
            base = getattr(sys, "_base_executable", None) or sys.executable
            steps = [
                [base, "-m", "venv", "--clear", str(env)],
                [str(python_of(env)), "-m", "pip", "install", "-q", *sorted(set(PACKAGES))],
            ]
            for cmd in steps:
                r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
                if r.returncode != 0:
                    raise ReplayError(
                        f"creating the replay environment failed ({' '.join(cmd[:4])} ...: exit "
                        f"{r.returncode}; see {log})",
                        "check that pip reaches its package index, then run tpindex replay --setup",
                    )
        (env / ".complete").write_text(f"{time.monotonic() - start:.1f}\n")
        say(f"replay: environment ready in {time.monotonic() - start:.0f} s")
    return python_of(env)


def setup_seconds(root: Path | None = None) -> float | None:
    try:
        return float((env_dir(root) / ".complete").read_text())
    except (OSError, ValueError):
        return None
