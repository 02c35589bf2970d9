"""The PyTorch GPT that vkamp's GPT is checked against, and the charlm data
definitions that both sides must agree on.

One module so that the golden fixture (make_gpt_fixture.py), the export
check (check_charlm_export.py) and the benchmark peer (bench/torch_charlm.py)
cannot drift apart: a difference between vkamp and PyTorch then means a bug
in one of the two implementations, not two readings of "nanoGPT".

The model is nanoGPT's GPT (karpathy/nanoGPT model.py) with its parameter
names, so weights move between vkamp, nanoGPT and this file by name alone
(docs/design.md, "Interchange conventions"). Two deliberate differences:

- The MLP's GELU is the tanh approximation (nn.GELU(approximate="tanh")),
  because that is the GELU vkamp implements; nanoGPT's nn.GELU() is the
  exact erf form. GPTConfig.gelu = "exact" gives nanoGPT's.
- There is no lm_head module: the logits are x @ wte.weight^T. nanoGPT ties
  lm_head.weight to transformer.wte.weight, but state_dict() then lists the
  tensor twice and also carries each block's causal-mask buffer
  (attn.bias). Here the mask is computed on the fly, so state_dict() has
  exactly the parameter names, the ones a vkamp export holds, and a strict
  load_state_dict of an export checks that nothing is missing or extra.
  nanoGPT checkpoints load after strip_nanogpt_extras().

Needs Debian's python3-torch (1.13, CPU); numpy only for reading files.
"""
import json
import math
import os
import struct
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LAYERNORM_EPS = 1e-5  # nanoGPT's (and PyTorch's default)


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_embd: int
    bias: bool = True      # GPT-2 style: biases in every Linear and LayerNorm
    gelu: str = "tanh"     # "tanh" (vkamp) or "exact" (nanoGPT's nn.GELU())


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        # c_attn's output rows are [q | k | v], each split into heads of hs
        # consecutive channels: the layout a nanoGPT checkpoint has.
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.gelu = nn.GELU(approximate="tanh" if cfg.gelu == "tanh" else "none")
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm: the residual stream itself is never normalized."""

    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=LAYERNORM_EPS, elementwise_affine=True)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=LAYERNORM_EPS, elementwise_affine=True)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=nn.LayerNorm(cfg.n_embd, eps=LAYERNORM_EPS),
        ))
        self.init_weights()

    @torch.no_grad()
    def init_weights(self):
        """nanoGPT's init: Linear and Embedding weights N(0, 0.02), biases 0,
        LayerNorm gain 1 and bias 0, and every c_proj.weight (the projections
        that add into the residual stream) N(0, 0.02 / sqrt(2 n_layer)) so
        the stream's variance does not grow with depth (GPT-2 paper)."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * self.config.n_layer))

    def forward(self, idx, targets=None):
        """logits [B, T, V] at every position (nanoGPT computes only the last
        one when targets is None; the checks here need all), and the mean
        cross-entropy over all B*T positions when targets is given."""
        B, T = idx.shape
        assert T <= self.config.block_size, f"sequence of {T} > block_size {self.config.block_size}"
        pos = torch.arange(T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = F.linear(x, self.transformer.wte.weight)  # the tied lm_head
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, eps=1e-8):
        """nanoGPT's AdamW groups: decay every parameter with dim >= 2 (the
        matmul weights and both embeddings), none of the biases and
        LayerNorm parameters."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, eps=eps)


def strip_nanogpt_extras(state_dict):
    """A nanoGPT state_dict without what this GPT does not keep: the tied
    lm_head.weight (the same tensor as transformer.wte.weight) and the
    causal-mask buffers (*.attn.bias). torch.compile's _orig_mod. prefix is
    dropped too."""
    out = {}
    for k, v in state_dict.items():
        k = k.removeprefix("_orig_mod.")
        if k == "lm_head.weight" or k.endswith(".attn.bias"):
            continue
        out[k] = v
    return out


# --- vkamp exports ---------------------------------------------------------

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def load_vkamp_safetensors(path):
    """(state_dict, metadata) of a safetensors file, read with struct + json
    (independently of vkamp and of the safetensors package). F32, F16 and
    BF16 tensors become float32; I32/I64 become int64. metadata is the
    __metadata__ dict of strings ({} when absent)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", None) or {}
    sd = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        dt = info["dtype"]
        if dt == "BF16":
            # bfloat16 is the top half of a float32: widen by a 16-bit shift.
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt in _DTYPES:
            a = np.frombuffer(raw, dtype=np.dtype(_DTYPES[dt]).newbyteorder("<"))
        else:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {dt}")
        a = a.reshape(info["shape"])
        t = torch.from_numpy(a.astype(np.int64 if dt in ("I32", "I64") else np.float32))
        sd[name] = t
    return sd, meta


def config_from_metadata(meta, gelu="tanh"):
    """GPTConfig from a vkamp GPT export's __metadata__ (decimal strings)."""
    model = meta.get("vkamp.model")
    if model != "gpt":
        raise ValueError(f"vkamp.model is {model!r}, not 'gpt'")
    get = lambda k: int(meta["vkamp." + k])  # noqa: E731
    return GPTConfig(vocab_size=get("vocab_size"), block_size=get("block_size"), n_layer=get("n_layer"),
                     n_head=get("n_head"), n_embd=get("n_embd"), gelu=gelu)


def build_from_metadata(meta):
    """An (initialized, to be overwritten) GPT of the export's shape."""
    return GPT(config_from_metadata(meta))


def vocab_from_metadata(meta):
    """The vocabulary as bytes, token id i <-> byte vocab[i].

    vkamp.vocab is a JSON string whose i-th character is U+00XX for byte XX
    (latin-1), since safetensors metadata must be strings and JSON cannot
    hold raw bytes."""
    vocab = bytes(json.loads(meta["vkamp.vocab"]), "latin-1")
    if len(set(vocab)) != len(vocab):
        raise ValueError("vkamp.vocab repeats a byte")
    if "vkamp.vocab_size" in meta and int(meta["vkamp.vocab_size"]) != len(vocab):
        raise ValueError(f"vkamp.vocab has {len(vocab)} bytes, vkamp.vocab_size says {meta['vkamp.vocab_size']}")
    return vocab


def vocab_to_metadata(vocab):
    """The inverse of vocab_from_metadata (for writers)."""
    return json.dumps(bytes(vocab).decode("latin-1"))


# --- charlm data: the definitions vkamp's C++ side implements identically ---

FORTUNES = "/usr/share/games/fortunes"


def load_corpus(text=None, directory=FORTUNES):
    """The raw bytes of the corpus.

    With text: that file's bytes. Otherwise every regular file directly in
    directory (not symlinks such as the *.u8 links, not the *.dat index
    files, no subdirectories), sorted by file name in byte order,
    concatenated as raw bytes with nothing between them."""
    if text is not None:
        with open(text, "rb") as f:
            return f.read()
    names = []
    with os.scandir(os.fsencode(directory)) as it:
        for e in it:
            if e.is_file(follow_symlinks=False) and not e.name.endswith(b".dat"):
                names.append(e.name)
    if not names:
        raise FileNotFoundError(f"no corpus files in {directory}")
    out = bytearray()
    for name in sorted(names):
        with open(os.path.join(os.fsencode(directory), name), "rb") as f:
            out += f.read()
    return bytes(out)


def corpus_vocab(corpus):
    """A vocabulary for training: the distinct bytes of the corpus, ascending."""
    return bytes(sorted(set(corpus)))


def tokenize(corpus, vocab):
    """int64 token ids of corpus under vocab; a byte outside vocab is an error."""
    table = np.full(256, -1, dtype=np.int64)
    table[np.frombuffer(vocab, dtype=np.uint8)] = np.arange(len(vocab))
    ids = table[np.frombuffer(corpus, dtype=np.uint8)]
    if (ids < 0).any():
        missing = sorted(set(corpus) - set(vocab))
        raise ValueError(f"{len(missing)} byte value(s) of the text are not in the vocabulary, "
                         f"e.g. {missing[:8]}")
    return torch.from_numpy(ids)


def split(tokens):
    """(train, val): the first len * 9 // 10 tokens, and the rest."""
    s = len(tokens) * 9 // 10
    return tokens[:s], tokens[s:]


def val_windows(n, block_size):
    """Starts of the consecutive non-overlapping windows over n tokens:
    0, T, 2T, ... while start + T + 1 <= n; each predicts tokens
    start+1 .. start+T, and a shorter tail is dropped."""
    return list(range(0, n - block_size, block_size))


@torch.no_grad()
def eval_loss(model, tokens, block_size, batch=256, device="cpu"):
    """Mean cross-entropy (nats per token) over every position of the
    val_windows of tokens, summed in float64 across windows."""
    starts = val_windows(len(tokens), block_size)
    if not starts:
        raise ValueError(f"{len(tokens)} tokens hold no window of {block_size} + 1")
    was_training = model.training
    model.eval()
    total = 0.0
    offs = torch.arange(block_size, device=tokens.device)
    for i in range(0, len(starts), batch):
        s = torch.tensor(starts[i:i + batch], device=tokens.device).unsqueeze(1)
        x = tokens[s + offs].to(device)
        y = tokens[s + offs + 1].to(device)
        logits, _ = model(x)
        total += F.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1), reduction="sum").item()
    model.train(was_training)
    return total / (len(starts) * block_size)
