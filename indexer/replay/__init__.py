"""Replay: run an indexed version's own vLLM parser and serving code on a raw model output (issue 25).

    tpindex replay NAME --at V | --tags SPEC  (--text FILE | --deltas FILE.json)

Design
------
Pipeline (tpindex side, this package; nothing here imports vLLM):

1. versions   the versions asked (`--at` / `--tags`, among the indexed ones) and, per version, whether NAME
              is registered there (`parser_map`); a version without it is reported, not run.
2. trees      (trees.py) each version's tree is materialized ONCE into the user cache directory
              (platformdirs `user_cache_dir("tpindex")/replay/trees/<label>-<commit12>/`) from the source it
              was indexed from (`versions.source/origin/ref/commit_id`: a git repository, the cached release
              archive, a directory) through indexer/sources/. Only what imports need: `vllm/**.py` and the
              requirement files (stand-in package versions are read from them). Files are stored once by
              blob id (`replay/blobs/`) and hard-linked into each tree (59 releases share most files).
3. env        (env.py) the replay environment: a virtualenv in the cache (`replay/env-<digest>/`), created
              on first use with a progress line (`tpindex replay --setup` ahead), with the pure-Python
              packages (and a few light native wheels such as psutil and msgspec) that vLLM's parser,
              protocol and serving modules import, installed by pip from the index pip is configured with.
              One environment serves v0.6.3..v0.33.0 (found by running all eight names over all of them:
              current pydantic/openai/fastapi import every era's protocol and serving code).
4. jobs       (run.py) one job per version: name, text or exact deltas, the splits, the request (tools,
              tool_choice), the reasoning parser, the name's sentinels from the index (the sentinel facts of
              its card) as special tokens, the modes.
5. runner     (runner.py, server.py) a replay server (the environment's interpreter running child/main.py by
              path) imports the third-party packages once and forks a session per run, which forks one
              worker per version (at most -j at a time). The server stays warm between runs (a Unix socket
              in the cache; ended when idle, stopped, stale or killed: server.py), so a run pays only its
              trees' imports. Each worker moves into its own process group and sets resource limits
              (address space, CPU seconds); tpindex enforces a wall-clock timeout per worker (kills its
              process group) and for the whole run (kills the session's). Results come back as JSON files.
6. answer     (run.py) `Replay` (answers/model.py): per version and mode the tool calls (name, arguments
              parsed as JSON), content, reasoning, finish_reason, argument chunks, errors, the stand-ins a
              result touched; and a matrix over the versions marking where each mode's result changes
              (the first version with the new behaviour). Rendered as text, JSON (schema `replay`),
              Markdown (render/replay.py); `Index.replay()` is what the CLI, the MCP tool and the web page call.

Child side (child/, run only by the replay interpreter, never imported by tpindex; vLLM reached only
through importlib there):

- standins.py  a light `vllm` package whose `__path__` is the tree (the release's heavy `vllm/__init__.py`
               never runs; `from vllm import X` answered from its import lines), and a meta-path finder
               appended LAST that supplies stand-ins only for native/heavy packages (torch, transformers,
               xgrammar, llguidance, cv2, zmq, vllm._C, ...) with package metadata at the version the tree
               requires. A pure-Python package is never stubbed: missing, it fails the import visibly.
               Stand-ins record being imported and being touched (an attribute used while the replay ran).
- tokenizer.py the synthetic tokenizer (sentinels as single special tokens, ids from 1, word-like pieces)
               and the splits (token, char, word, random:SEED, interval:K); `--tokenizer tokenizer.json`
               uses the `tokenizers` package of the environment.
- drive.py     per era, found by what the tree defines (not by version numbers): the request model;
               `ParserManager.get_parser` + `parse`/`parse_delta` (engine era) or the tool-parser registry +
               `extract_tool_calls`/`extract_tool_calls_streaming` (earlier), fed as serving feeds them; and
               the release's own `OpenAIServingChat` full and stream generators driven by a synthetic engine
               output (one delta per step, then an EOS step with finish_reason "stop").
- main.py      the server and its sessions described in 5.
- speed.py     cheaper imports that change no value: a class's source line from one walk of its module,
               dataclass method code compiled once from texts earlier workers met.

Speed: the third-party imports (pydantic, openai, fastapi: 1.5-3 CPU seconds) are paid once per warm
server, not per run nor per version; each worker pays only its tree's imports (compiled once: `__pycache__`
stays in the tree). Trees and the environment are made once; a warm run of 59 versions is forks and tree
imports on two cores (README, "What a replay costs").
"""
