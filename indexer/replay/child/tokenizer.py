"""Child side: the synthetic tokenizer a replay hands the parser, and how token streams are cut into deltas.

Vocabulary: the name's sentinels (from the index) are single special tokens, present before the parser's
`__init__` runs; ordinary text is split into word-like pieces (a run of letters/digits with its leading
space, a run of spaces, one other character each), each piece a token, ids given in order of first use.
Ids start at 1 (0 is never used: parsers test `if not self.tool_call_start_token_id`). The methods are the
ones vLLM's parsers and serving code call on a tokenizer (get_vocab, vocab, encode/decode, tokenize,
convert_tokens_to_ids/convert_ids_to_tokens, all_special_tokens/ids, eos_token_id, get_added_vocab).
"""

from __future__ import annotations

import random
import re

_PIECE = re.compile(r" ?[^\W_]+| +|\n+|.", re.S)
EOS = "<|replay_eos|>"


class SyntheticTokenizer:
    def __init__(self, specials: list[str], eos: str | None = None):
        eos = eos or EOS
        self.special_tokens = [eos] + [s for s in dict.fromkeys(specials) if s and s != eos]
        self._vocab: dict[str, int] = {}
        for s in self.special_tokens:
            self._add(s)
        self.eos_token = eos
        self.eos_token_id = self._vocab[eos]
        self.bos_token, self.bos_token_id = None, None
        self.pad_token, self.pad_token_id = None, None
        self.name_or_path = "tpindex-replay-synthetic"
        self.chat_template = None
        self.truncation_side = "left"
        self.is_fast = True
        self._special = re.compile(
            "|".join(re.escape(s) for s in sorted(self.special_tokens, key=len, reverse=True))
        )

    def _add(self, piece: str) -> int:
        if piece not in self._vocab:
            self._vocab[piece] = len(self._vocab) + 1
        return self._vocab[piece]

    # -- what parsers ask ---------------------------------------------------------------------------------
    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab) + 1

    def __len__(self) -> int:
        return len(self._vocab) + 1

    def get_added_vocab(self) -> dict[str, int]:
        return {s: self._vocab[s] for s in self.special_tokens}

    @property
    def all_special_tokens(self) -> list[str]:
        return list(self.special_tokens)

    @property
    def all_special_ids(self) -> list[int]:
        return [self._vocab[s] for s in self.special_tokens]

    @property
    def added_tokens_encoder(self) -> dict[str, int]:
        return self.get_added_vocab()

    @property
    def added_tokens_decoder(self) -> dict[int, str]:
        return {i: s for s, i in self.get_added_vocab().items()}

    def pieces(self, text: str) -> list[str]:
        out: list[str] = []
        pos = 0
        for m in self._special.finditer(text):
            out += _PIECE.findall(text[pos : m.start()])
            out.append(m.group())
            pos = m.end()
        out += _PIECE.findall(text[pos:])
        return out

    def tokenize(self, text: str, **kwargs) -> list[str]:
        return self.pieces(text)

    def encode(self, text: str, add_special_tokens: bool = False, **kwargs) -> list[int]:
        return [self._add(p) for p in self.pieces(text)]

    def __call__(self, text, **kwargs):
        if isinstance(text, list):
            return {"input_ids": [self.encode(t) for t in text]}
        return {"input_ids": self.encode(text)}

    def convert_tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return self._vocab.get(tokens)
        return [self._vocab.get(t) for t in tokens]

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False):
        inverse = {i: s for s, i in self._vocab.items()}
        if isinstance(ids, int):
            return inverse.get(ids)
        return [
            inverse.get(i) for i in ids if not (skip_special_tokens and inverse.get(i) in self.special_tokens)
        ]

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        return "".join(tokens)

    def decode(self, ids, skip_special_tokens: bool = False, **kwargs) -> str:
        if isinstance(ids, int):
            ids = [ids]
        return "".join(t or "" for t in self.convert_ids_to_tokens(list(ids), skip_special_tokens))

    def batch_decode(self, seqs, **kwargs):
        return [self.decode(s, **kwargs) for s in seqs]

    def apply_chat_template(self, *args, **kwargs):
        return "" if kwargs.get("tokenize") is False else []


class FileTokenizer(SyntheticTokenizer):
    """The model's own tokenizer.json (needs the `tokenizers` package in the replay environment)."""

    def __init__(self, path: str, specials: list[str], eos: str | None = None):
        import tokenizers

        self._tk = tokenizers.Tokenizer.from_file(path)
        super().__init__([])
        self._vocab = dict(self._tk.get_vocab(with_added_tokens=True))
        added = (
            [t.content for t in self._tk.get_added_tokens_decoder().values()]
            if hasattr(self._tk, "get_added_tokens_decoder")
            else []
        )
        self.special_tokens = [s for s in dict.fromkeys(added + specials) if s in self._vocab]
        if eos:
            if eos not in self._vocab:
                raise ValueError(f"--eos {eos!r} is not a token of {path}")
            self.eos_token, self.eos_token_id = eos, self._vocab[eos]
        else:
            self.eos_token_id = max(self._vocab.values()) + 1
            self._vocab[EOS] = self.eos_token_id

    def pieces(self, text: str) -> list[str]:
        enc = self._tk.encode(text, add_special_tokens=False)
        return [text[a:b] for a, b in enc.offsets] if enc.offsets else enc.tokens

    def encode(self, text: str, add_special_tokens: bool = False, **kwargs) -> list[int]:
        return list(self._tk.encode(text, add_special_tokens=False).ids)

    def decode(self, ids, skip_special_tokens: bool = False, **kwargs) -> str:
        if isinstance(ids, int):
            ids = [ids]
        return self._tk.decode(
            [i for i in ids if i != self.eos_token_id], skip_special_tokens=skip_special_tokens
        )


def is_mistral_file(path: str) -> bool:
    """A Mistral tokenizer file as `--tokenizer-mode mistral` loads it: tekken.json (a JSON object with a tekken
    `config` and `vocab`) or a SentencePiece model (`tokenizer.model`, `tokenizer.model.v3`, ...)."""
    import json
    import os

    name = os.path.basename(path)
    if ".model" in name and not name.endswith(".json"):
        return True
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and isinstance(data.get("config"), dict)
        and isinstance(data.get("vocab"), list)
    )


class MistralCommonAdapter:
    """What vLLM's MistralTokenizer (v0.11 on) calls on transformers' MistralCommonTokenizer/Backend, which wraps
    mistral_common: transformers is not installed in the replay environment (a heavy package), so this adapter
    answers those calls from mistral_common itself (`tokenizer` is mistral_common's MistralTokenizer)."""

    truncation_side = "left"
    pad_token = None

    def __init__(self, mistral):
        self.tokenizer = mistral
        self._tok = mistral.instruct_tokenizer.tokenizer

    @property
    def vocab_size(self) -> int:
        return self._tok.n_words

    def encode(self, text, add_special_tokens: bool = True, **kwargs):
        return self._tok.encode(text, bos=add_special_tokens, eos=False)

    def __call__(self, text, add_special_tokens: bool = True, **kwargs):
        if isinstance(text, list):
            return _Encoding(input_ids=[self.encode(t, add_special_tokens) for t in text])
        return _Encoding(input_ids=self.encode(text, add_special_tokens))

    def decode(self, ids, skip_special_tokens: bool = True, **kwargs):
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        ids = [ids] if isinstance(ids, int) else list(ids)
        policy = SpecialTokenPolicy.IGNORE if skip_special_tokens else SpecialTokenPolicy.KEEP
        return self._tok.decode(ids, special_token_policy=policy)

    def batch_decode(self, seqs, **kwargs):
        return [self.decode(s, **kwargs) for s in seqs]

    def convert_tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return _mistral_special_ids(self._tok).get(tokens, self._tok.unk_id)
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def apply_chat_template(self, *args, **kwargs):
        raise NotImplementedError("replay renders no chat template")


class _Encoding(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _mistral_special_ids(tok) -> dict[str, int]:
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    n = getattr(tok, "num_special_tokens", None)
    if n is None:  # SentencePiece: its control tokens
        ids = sorted(getattr(tok, "_control_tokens", ()) or ())
    else:
        ids = range(n)
    out = {}
    for i in ids:
        try:
            out.setdefault(tok.decode([i], special_token_policy=SpecialTokenPolicy.KEEP), i)
        except Exception:  # noqa: S112 - an id that does not decode alone
            continue
    return {k: v for k, v in out.items() if k}


def mistral_tokenizer(tree_cls, path: str):
    """The tree's own MistralTokenizer over mistral_common's tokenizer loaded from the file (in test mode, as
    `--tokenizer-mode mistral` loads it), constructed as that version constructs it: from mistral_common's
    tokenizer up to v0.10, from transformers' wrapper of it later (MistralCommonAdapter standing in)."""
    import inspect

    from mistral_common.protocol.instruct.validator import ValidationMode
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    mistral = MistralTokenizer.from_file(path, mode=ValidationMode.test)
    source = inspect.getsource(tree_cls.__init__)
    wrapped = "transformers_tokenizer" in source
    return tree_cls(MistralCommonAdapter(mistral) if wrapped else mistral), mistral, wrapped


class MistralPieces:
    """Raw text -> (piece, id) pairs with mistral_common's tokenizer: the special tokens written in the text
    (`[TOOL_CALLS]`, `[ARGS]`, ...) as their ids, the rest encoded; a piece is the text its id completes."""

    def __init__(self, mistral):
        self.tok = mistral.instruct_tokenizer.tokenizer
        self.specials = _mistral_special_ids(self.tok)
        self._special = re.compile(
            "|".join(re.escape(s) for s in sorted(self.specials, key=len, reverse=True) if len(s) > 1)
        )

    def __call__(self, text: str) -> list[tuple[str, int]]:
        out, pos = [], 0
        for m in self._special.finditer(text):
            out += self._plain(text[pos : m.start()])
            out.append((m.group(), self.specials[m.group()]))
            pos = m.end()
        return out + self._plain(text[pos:])

    def _plain(self, s: str) -> list[tuple[str, int]]:
        if not s:
            return []
        ids = self.tok.encode(s, bos=False, eos=False)
        out, done = [], 0
        for k, i in enumerate(ids):
            d = self.tok.decode(ids[: k + 1])
            if s.startswith(d) and len(d) > done:
                out.append((s[done : len(d)], i))
                done = len(d)
            else:
                out.append(("", i))
        if done < len(s) and out:
            out[-1] = (out[-1][0] + s[done:], out[-1][1])
        return out


def tokens(tokenizer: SyntheticTokenizer, text: str) -> list[tuple[str, int]]:
    """The text as (piece, id) pairs; the pieces join back to the text."""
    if isinstance(tokenizer, MistralPieces):
        return tokenizer(text)
    if isinstance(tokenizer, FileTokenizer):
        enc = tokenizer._tk.encode(text, add_special_tokens=False)
        out, pos = [], 0
        for (_a, b), i in zip(enc.offsets, enc.ids, strict=False):
            out.append((text[pos:b], i))
            pos = b
        if pos < len(text) and out:
            out[-1] = (out[-1][0] + text[pos:], out[-1][1])
        return out
    return [(p, tokenizer._add(p)) for p in tokenizer.pieces(text)]


def split(toks: list[tuple[str, int]], how: str, specials: frozenset[str] = frozenset()) -> list[dict]:
    """Group tokens into deltas: token (one per delta), word (a word with what precedes it), char (one character
    per delta, a special token whole, as a stream never splits one; a token's id goes with the delta its last
    character is in), random:SEED (1-4 tokens), interval:K (K tokens)."""
    if how == "token":
        return [{"text": t, "ids": [i]} for t, i in toks]
    if how == "char":
        out = []
        for t, i in toks:
            if t in specials:
                out.append({"text": t, "ids": [i]})
                continue
            for k, ch in enumerate(t):
                out.append({"text": ch, "ids": [i] if k == len(t) - 1 else []})
        return out
    if how == "word":
        out, cur = [], {"text": "", "ids": []}
        for t, i in toks:
            if cur["ids"] and (t[:1].isspace() or not t[:1].isalnum()):
                out.append(cur)
                cur = {"text": "", "ids": []}
            cur["text"] += t
            cur["ids"].append(i)
        return out + ([cur] if cur["ids"] else [])
    kind, _, arg = how.partition(":")
    if kind == "random":
        rng = random.Random(int(arg or 0))
        sizes = []
        while sum(sizes) < len(toks):
            sizes.append(rng.randint(1, 4))
    elif kind == "interval":
        sizes = [max(1, int(arg or 1))] * (len(toks) // max(1, int(arg or 1)) + 1)
    else:
        raise ValueError(f"unknown split {how!r}")
    out, pos = [], 0
    for n in sizes:
        group = toks[pos : pos + n]
        if group:
            out.append({"text": "".join(t for t, _ in group), "ids": [i for _, i in group]})
        pos += n
    return out
