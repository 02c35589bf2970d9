#!/usr/bin/python3
"""The PyTorch peer for the lora benchmark: a hand-written LoRA fine-tune of
a Llama-shaped model (no transformers or peft package), the shape and the
recipe vkamp-finetune --synthetic runs, so tokens/s and memory can be set
side by side.

The model is Hugging Face's Llama arithmetic (RMSNorm, rotate-half rotary
embedding, grouped-query attention by repeat_kv, SwiGLU MLP; as
tests/golden/llama_reference.py), its base weights random N(0, 0.02) in
float16 and frozen (requires_grad False: no gradient, no optimizer state),
LoRA adapters A (U(+-1/sqrt(in)), PEFT's draw) and B (0) in float32 on
q, k, v, o, gate, up and down, scaled by alpha / r. Training: random token
windows, autocast(float16) with a GradScaler, AdamW (lr 2e-4, no weight
decay) on the adapters, gradients clipped to 1.0: vkamp-finetune's
defaults. Attention is F.scaled_dot_product_attention where torch has it.

Timing: tokens/s = batch * seq * (timed steps) / their wall time, leaving
out WARMUP_STEPS. Memory: torch.cuda.max_memory_allocated over the run.

    bench/torch_lora.py --shape tinyllama-1.1b --seq-len 512 --batch 2 --steps 30 [--device cuda]
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F

WARMUP_STEPS = 3
SHAPES = {  # vkamp's models/llama_presets.cpp
    "tinyllama-1.1b": dict(vocab=32000, hidden=2048, inter=5632, layers=22, heads=32, kv=4, eps=1e-5),
    "llama-tiny": dict(vocab=4487, hidden=64, inter=176, layers=2, heads=4, kv=2, eps=1e-5),
}
TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


class LoraLinear(torch.nn.Module):
    def __init__(self, n_in, n_out, r, alpha, dtype, device):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n_out, n_in, dtype=dtype, device=device) * 0.02,
                                         requires_grad=False)
        bound = 1 / math.sqrt(n_in)
        self.lora_A = torch.nn.Parameter((torch.rand(r, n_in, device=device) * 2 - 1) * bound)
        self.lora_B = torch.nn.Parameter(torch.zeros(n_out, r, device=device))
        self.scale = alpha / r

    def forward(self, x):
        return F.linear(x, self.weight) + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale


def rms_norm(x, w, eps):
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(torch.nn.Module):
    def __init__(self, s, r, alpha, dtype, device):
        super().__init__()
        C, I, H, KV = s["hidden"], s["inter"], s["heads"], s["kv"]
        hd = C // H
        lin = lambda i, o: LoraLinear(i, o, r, alpha, dtype, device)  # noqa: E731
        self.q, self.k, self.v, self.o = lin(C, H * hd), lin(C, KV * hd), lin(C, KV * hd), lin(H * hd, C)
        self.gate, self.up, self.down = lin(C, I), lin(C, I), lin(I, C)
        self.n1 = torch.nn.Parameter(torch.ones(C, dtype=dtype, device=device), requires_grad=False)
        self.n2 = torch.nn.Parameter(torch.ones(C, dtype=dtype, device=device), requires_grad=False)
        self.H, self.KV, self.hd, self.eps = H, KV, hd, s["eps"]

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = rms_norm(x, self.n1, self.eps)
        q = self.q(h).view(B, T, self.H, self.hd).transpose(1, 2)
        k = self.k(h).view(B, T, self.KV, self.hd).transpose(1, 2)
        v = self.v(h).view(B, T, self.KV, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.H // self.KV, dim=1)
        v = v.repeat_interleave(self.H // self.KV, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(2, 3)) / math.sqrt(self.hd)
            att = att.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            y = torch.softmax(att.float(), dim=-1).to(q.dtype) @ v
        x = x + self.o(y.transpose(1, 2).reshape(B, T, self.H * self.hd))
        h = rms_norm(x, self.n2, self.eps)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(torch.nn.Module):
    def __init__(self, s, r, alpha, dtype, device):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(s["vocab"], s["hidden"], dtype=dtype, device=device) * 0.02,
                                        requires_grad=False)
        self.head = torch.nn.Parameter(torch.randn(s["vocab"], s["hidden"], dtype=dtype, device=device) * 0.02,
                                       requires_grad=False)
        self.norm = torch.nn.Parameter(torch.ones(s["hidden"], dtype=dtype, device=device), requires_grad=False)
        self.blocks = torch.nn.ModuleList(Block(s, r, alpha, dtype, device) for _ in range(s["layers"]))
        self.s = s

    def forward(self, idx):
        T, hd = idx.shape[1], self.s["hidden"] // self.s["heads"]
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, device=idx.device).float() / hd))
        f = torch.arange(T, device=idx.device).float()[:, None] * inv[None, :]
        emb = torch.cat((f, f), dim=-1)
        cos, sin = emb.cos().to(self.embed.dtype), emb.sin().to(self.embed.dtype)
        x = self.embed[idx]
        for b in self.blocks:
            x = b(x, cos, sin)
        return F.linear(rms_norm(x, self.norm, self.s["eps"]), self.head)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="tinyllama-1.1b", choices=sorted(SHAPES))
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--lora-alpha", type=float, default=32)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    cuda = a.device == "cuda"
    s = SHAPES[a.shape]
    dtype = torch.float16 if cuda else torch.float32  # the CPU runs it in fp32: a check, not a measurement
    model = Llama(s, a.lora_rank, a.lora_alpha, dtype, a.device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.0)
    scaler = torch.cuda.amp.GradScaler(enabled=cuda)
    gen = torch.Generator(device="cpu").manual_seed(a.seed)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    timed, t0 = 0, None
    for step in range(a.steps):
        if step == WARMUP_STEPS:
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        tokens = torch.randint(0, s["vocab"], (a.batch, a.seq_len + 1), generator=gen).to(a.device)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cuda):
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.float().reshape(-1, s["vocab"]), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        scaler.step(opt)
        scaler.update()
        timed += step >= WARMUP_STEPS
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0 if t0 is not None else float("nan")
    trained = sum(p.numel() for p in params)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    print(f"torch_lora: {a.shape} seq {a.seq_len} batch {a.batch}: {frozen} frozen, {trained} trained; "
          f"last loss {loss.item():.4f}")
    print(f"tokens_per_s={a.batch * a.seq_len * timed / seconds:.1f}")
    if cuda:
        print(f"memory max_memory_allocated {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
