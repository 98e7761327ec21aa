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
    def __init__(self, specials: list[str]):
        self.special_tokens = [EOS] + [s for s in dict.fromkeys(specials) if s and s != EOS]
        self._vocab: dict[str, int] = {}
        for s in self.special_tokens:
            self._add(s)
        self.eos_token = EOS
        self.eos_token_id = self._vocab[EOS]
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

    def __init__(self, path: str, specials: list[str]):
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


def tokens(tokenizer: SyntheticTokenizer, text: str) -> list[tuple[str, int]]:
    """The text as (piece, id) pairs; the pieces join back to the text."""
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
