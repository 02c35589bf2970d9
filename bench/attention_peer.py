#!/usr/bin/python3
"""PyTorch's side of `vkamp-bench attention`: nanoGPT's causal
self-attention, forward and backward, at charlm's shapes, on each of
PyTorch's scaled_dot_product_attention backends that runs here: math (the
probabilities stored, as vkamp's materialized path), flash
(FlashAttention-2, as vkamp's fused path) and efficient (memory-efficient).

As nanoGPT does it: q, k and v are views of one [B, T, 3C] tensor split
and transposed to [B, H, T, hd]; the output is transposed back to
[B, T, C] (contiguous), which vkamp's op writes directly. Timed as
vkamp-bench times its own: a warm-up, then per part (forward; backward)
the median over N runs of R calls, CUDA events around each run. GFLOP/s
counts the same causal products as vkamp-bench attention (2 in the
forward, 4 in the backward, 2 flops a multiply-add over T (T + 1) / 2
pairs); MiB is what one forward allocates at its peak beside its output
(saved tensors and temporaries: torch.cuda.max_memory_allocated over the
memory held before it, less the output's bytes), where vkamp-bench
attention counts what its path keeps plus the backward's scratch.

--device cpu checks the script where there is no GPU (fp32; the math
backend alone where SDPA is missing, PyTorch before 2.0).

usage: attention_peer.py [--size LIST] [--dtype fp16|fp32] [--repeats N]
                         [--device cuda|cpu]
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

# charlm's sizes (app/charlm.cpp) and bench/gpu_vs_torch.sh's batches.
SIZES = {  # name: (batch, T, C, heads)
    "tiny": (16, 64, 64, 4),
    "small": (16, 128, 128, 4),
    "medium": (64, 256, 384, 6),
    "gpt2": (8, 1024, 768, 12),
}
TARGET_RUN_S = 0.050
MAX_CALLS = 64


def attention(qkv, heads, backend):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = qkv.split(C, dim=2)
    q, k, v = (x.view(B, T, heads, C // heads).transpose(1, 2) for x in (q, k, v))
    if backend == "math-manual":  # PyTorch before 2.0: nanoGPT's own fallback
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        mask = torch.ones(T, T, dtype=torch.bool, device=qkv.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = att @ v
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        which = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
                 "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
        with sdpa_kernel(which):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).contiguous().view(B, T, C)


class Timer:
    def __init__(self, device):
        self.cuda = device == "cuda"

    def run(self, fn, calls):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end) / calls
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t) * 1e3 / calls


def measure(size, backend, dtype, device, repeats):
    B, T, C, H = SIZES[size]
    gen = torch.Generator(device="cpu").manual_seed(12345)
    qkv = (torch.rand(B, T, 3 * C, generator=gen) * 2 - 1).to(device=device, dtype=dtype).requires_grad_()
    dy = (torch.rand(B, T, C, generator=gen) * 2 - 1).to(device=device, dtype=dtype)
    timer = Timer(device)
    held = {}

    def forward():
        held["y"] = attention(qkv, H, backend)

    def backward():
        qkv.grad = None
        held["y"].backward(dy, retain_graph=True)

    forward()
    backward()  # warm-up; fails here for a backend that cannot run this case
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        forward()
        kept_mib = (torch.cuda.max_memory_allocated() - base) / 2**20 - B * T * C * qkv.element_size() / 2**20
    else:
        kept_mib = float("nan")
    probe = timer.run(forward, 1) + timer.run(backward, 1)
    calls = max(1, min(MAX_CALLS, int(TARGET_RUN_S * 1e3 / max(probe, 1e-6))))
    fwd, bwd = [], []
    for _ in range(repeats):
        fwd.append(timer.run(forward, calls))
        bwd.append(timer.run(backward, calls))
    flops = 4.0 * B * H * 0.5 * T * (T + 1) * (C // H)
    f, b = statistics.median(fwd), statistics.median(bwd)
    return f, b, 3 * flops / ((f + b) * 1e6), kept_mib, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="medium,gpt2")
    ap.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    a = ap.parse_args()
    sizes = a.size.split(",")
    bad = [s for s in sizes if s not in SIZES]
    if bad or a.repeats < 1:
        ap.error("--size takes a list of " + ", ".join(SIZES) + " and --repeats a whole number >= 1")
    if a.device == "cuda" and not torch.cuda.is_available():
        print("attention_peer.py: PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    dtype = {"fp16": torch.float16, "fp32": torch.float32}[a.dtype]
    have_sdpa = hasattr(F, "scaled_dot_product_attention")
    backends = ["math", "flash", "efficient"] if have_sdpa else ["math-manual"]
    where = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    print(f"peer     PyTorch {torch.__version__} on {where}, {a.dtype}")
    print(f"{'size':<6} {'backend':<12} {'fwd ms':>10} {'bwd ms':>10} {'GFLOP/s':>9} {'MiB':>8} {'R':>4}")
    for size in sizes:
        for backend in backends:
            try:
                f, b, gflops, mib, calls = measure(size, backend, dtype, a.device, a.repeats)
            except RuntimeError as e:  # a backend that does not take this case here
                print(f"{size:<6} {backend:<12} not run: {str(e).splitlines()[0][:100]}")
                continue
            print(f"{size:<6} {backend:<12} {f:>10.3f} {b:>10.3f} {gflops:>9.1f} {mib:>8.2f} {calls:>4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
