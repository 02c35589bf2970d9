#!/usr/bin/python3
"""The GEMM peer for `vkamp-bench gemm --peer`: one form and shape of a
linear layer's GEMM through torch.mm on the CPU in fp32, timed as
vkamp-bench times its own (warm-up, then the median per call of R calls x N
timed runs, R chosen so that one run takes about 20 ms). Prints one line:
  ms=<median per call> r=<R> n=<N>

--device cuda (bench/gpu_vs_torch.sh) runs it on the GPU, timed the same way
with CUDA events around each run of R calls; --dtype fp16 multiplies fp16
operands (cuBLAS on tensor cores, PyTorch's default settings). fp32 on CUDA
keeps TF32 off (PyTorch's default for matmul, set here explicitly), so it is
true fp32.

  --form forward  Y  = X W^T    (batch x in) (out x in)^T
  --form dx       dX = dY W     (batch x out) (out x in)
  --form dw       dW = dY^T X   (batch x out)^T (batch x in)

--threads: PyTorch's intra-op threads (default 1, as torch_peer.py); OpenBLAS
runs torch.mm on its own threads, one per core.

usage: gemm_peer.py --form F --batch B --in I --out O [--repeats N] [--threads T]
                    [--device cpu|cuda] [--dtype fp32|fp16]
"""
import argparse
import os
import statistics
import sys
import time

# OpenBLAS (Debian's torch reaches it through libblas.so.3) runs the GEMMs on
# its own pthreads, beside PyTorch's OpenMP threads. libgomp's default is to
# spin after each parallel region, and on a 2-core machine the spinning
# threads starve OpenBLAS's: measured 2,700 against 64,000 samples/s for the
# MLP. Passive waiting keeps the peer honest at any --threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402 (after the OpenMP setting, which libgomp reads on load)

TARGET_RUN_S = 0.020
MAX_CALLS = 256


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", choices=["forward", "dx", "dw"], required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--in", dest="fan_in", type=int, required=True)
    ap.add_argument("--out", type=int, required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--dtype", choices=["fp32", "fp16"], default="fp32")
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("gemm_peer.py: --device cuda, but torch.cuda.is_available() is False")
    torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(12345)
    opts = dict(device=a.device, dtype=torch.float16 if a.dtype == "fp16" else torch.float32)
    x = torch.randn(a.batch, a.fan_in, **opts)
    w = torch.randn(a.out, a.fan_in, **opts)
    dy = torch.randn(a.batch, a.out, **opts)
    # The transposed operands are views, as in nn.Linear's forward and
    # autograd's backward: torch.mm hands BLAS the transpose flag, no copy.
    lhs, rhs = {"forward": (x, w.t()), "dx": (dy, w), "dw": (dy.t(), x)}[a.form]
    out = torch.empty(lhs.shape[0], rhs.shape[1], **opts)

    def run(calls):
        if a.device == "cuda":
            # GPU time of the R calls: the launches queue, the events bracket them.
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                torch.mm(lhs, rhs, out=out)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e-3 / calls
        t0 = time.perf_counter()
        for _ in range(calls):
            torch.mm(lhs, rhs, out=out)
        return (time.perf_counter() - t0) / calls

    probe = run(1)  # warm-up: first-call allocation and thread start (cuBLAS handle, kernel choice)
    probe = run(1)
    calls = int(min(max(TARGET_RUN_S / max(probe, 1e-9), 1), MAX_CALLS))
    run(calls)  # warm-up run at the timed length
    per_call = [run(calls) for _ in range(a.repeats)]
    print(f"ms={1e3 * statistics.median(per_call):.6f} r={calls} n={a.repeats}")


if __name__ == "__main__":
    main()
