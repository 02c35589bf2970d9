#!/usr/bin/python3
"""The PyTorch peer for the charlm benchmark: the same GPT
(tests/golden/gpt_reference.py), corpus, vocabulary, split and training
recipe as vkamp's charlm, so that tokens/s and the final validation loss can
be set side by side. Without the same recipe a faster peer could simply be
doing less work, or a better loss could come from a different schedule.

The recipe (what vkamp's charlm implements identically):
- Corpus, split and validation loss as in tests/golden/check_charlm_export.py
  (the fortunes files, or --text; split = len * 9 // 10; consecutive
  non-overlapping windows over val). Vocabulary: the distinct bytes of the
  whole corpus in ascending order; token id = rank of the byte.
- Each step takes --batch windows of T = --block-size at offsets drawn
  uniformly from [0, len(train) - T - 1] by a torch.Generator seeded with
  --seed (x = train[o:o+T], y = train[o+1:o+T+1]); the model is initialized
  after torch.manual_seed(--seed) (nanoGPT's init).
- AdamW with nanoGPT's groups (weight decay on dim >= 2 only), betas
  (0.9, 0.95), eps 1e-8; the gradients clipped to global norm 1.0 before
  each step.
- Learning rate at step s (0-based) of N: lr * (s + 1) / W for s < W
  (W = --warmup), then lr * 0.5 * (1 + cos(pi * (s - W) / (N - W))), which
  reaches 0 only after the last step.

Timing: tokens/s = batch * block_size * (timed steps) / their wall time,
leaving out the first WARMUP_STEPS steps (allocator, BLAS buffers and, on
CUDA, kernel selection settle there) and the time spent in evaluations.

--threads sets torch's intra-op threads (default: all cores); OpenBLAS runs
its own pthreads beside them (bench/NOTES.md, "PyTorch on OpenBLAS"), which
the BLAS line reports. --amp on the CPU trains under torch.autocast
(bfloat16); --device cuda always trains under autocast(float16) with a
GradScaler. The validation loss is computed in fp32 either way.

--save PATH writes the trained model as a vkamp GPT export (nanoGPT names,
vkamp.* metadata, vkamp.val_loss), which check_charlm_export.py reads.

--profile N records N steps after the timed ones with torch.profiler and
prints the device time per step by op class, in the classes vkamp's
--profile prints (gemm, attention, layer_norm, softmax, elementwise,
optimizer, amp_check, other; OP_CLASSES below), then the ten costliest
kernels. On CUDA it also prints the peak memory of a step
(torch.cuda.max_memory_allocated) and the part of it above the step's
start (activations and gradients).

The last line is machine-readable:
  RESULT tokens_per_s=<x> val_loss=<y> steps=<n>
"""
import argparse
import math
import os
import sys
import time

# As torch_peer.py: libgomp's spinning threads starve OpenBLAS's otherwise.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
import gpt_reference as ref  # noqa: E402
from peer_info import blas_line, cuda_line, grad_scaler  # noqa: E402

WARMUP_STEPS = 5
BETAS = (0.9, 0.95)
EPS = 1e-8
CLIP = 1.0


# PyTorch's operators onto vkamp's op classes (kernel_profile.cpp), by the
# aten operator that launched each kernel. The reference GPT's attention is
# written out (q @ k^T, masked_fill, softmax, @ v), so its batched products
# (bmm, the model's only ones), mask and row softmax count as attention, as
# vkamp's fused attention does; the loss's log_softmax and nll_loss as
# softmax (vkamp's softmax_xent); the gradient clipping and GradScaler's
# check as amp_check (vkamp's amp_check does both).
OP_CLASSES = [
    ("attention", ("aten::bmm", "aten::baddbmm", "aten::masked_fill", "aten::_softmax",
                   "aten::_softmax_backward_data", "aten::_scaled_dot_product", "aten::_flash_attention",
                   "aten::_efficient_attention")),
    ("gemm", ("aten::mm", "aten::addmm", "aten::matmul", "aten::linear")),
    ("layer_norm", ("aten::native_layer_norm",)),
    ("softmax", ("aten::_log_softmax", "aten::nll_loss", "aten::cross_entropy")),
    ("amp_check", ("aten::_amp_", "aten::_foreach_norm", "aten::linalg_vector_norm", "aten::norm",
                   "aten::stack", "aten::clamp", "aten::reciprocal")),
    ("optimizer", ("aten::_foreach_", "aten::_fused_adam", "aten::addcdiv", "aten::addcmul", "aten::lerp")),
    ("elementwise", ("aten::add", "aten::mul", "aten::gelu", "aten::copy_", "aten::_to_copy", "aten::fill_",
                     "aten::zero_", "aten::div", "aten::sub", "aten::tanh", "aten::pow", "aten::where",
                     "aten::clone", "aten::sum")),
]
CLASS_ORDER = ["gemm", "attention", "layer_norm", "softmax", "elementwise", "optimizer", "amp_check", "other"]


def op_class(name):
    for cls, prefixes in OP_CLASSES:
        if any(name.startswith(p) for p in prefixes):
            return cls
    return "other"


def self_time_us(event, cuda):
    """An event's own device time (kernels it launched itself), in us;
    CPU time when profiling on the CPU. torch >= 2.4 names it
    self_device_time_total, older ones self_cuda_time_total."""
    if not cuda:
        return event.self_cpu_time_total
    t = getattr(event, "self_device_time_total", None)
    return t if t is not None else event.self_cuda_time_total


def profile_steps(step_fn, n, cuda):
    """Runs step_fn n times under torch.profiler; prints the device time per
    step by op class and the ten costliest kernels."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        for _ in range(n):
            step_fn()
        if cuda:
            torch.cuda.synchronize()
    events = prof.key_averages()
    per_class = dict.fromkeys(CLASS_ORDER, 0.0)
    kernels = []
    for e in events:
        on_device = "CUDA" in str(e.device_type)
        if cuda and on_device:
            kernels.append((self_time_us(e, cuda) / 1000 / n, e.key))  # a kernel's own row
        elif not on_device and e.key.startswith("aten::"):
            per_class[op_class(e.key)] += self_time_us(e, cuda) / 1000 / n
    if not cuda:  # no kernels: rank the operators by their own CPU time
        kernels = [(self_time_us(e, cuda) / 1000 / n, e.key) for e in events if e.key.startswith("aten::")]
    total = sum(per_class.values())
    share = lambda ms: 100 * ms / total if total > 0 else 0.0  # noqa: E731
    print(f"profile  {n} steps, {'CUDA' if cuda else 'CPU'} time by op class (ms/step, share): "
          f"total {total:.3f} ms")
    for cls in CLASS_ORDER:
        print(f"    {cls:<12s} {per_class[cls]:9.3f}  {share(per_class[cls]):5.1f}%")
    kernels.sort(reverse=True)
    print(f"  top {min(10, len(kernels))} {'kernels' if cuda else 'operators'} (ms/step, share):")
    for ms, name in kernels[:10]:
        print(f"    {ms:9.3f}  {share(ms):5.1f}%  {name[:90]}")


def lr_at(step, steps, lr, warmup):
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def blas_report():
    # The build's BLAS settings (Debian's say "generic": whatever libblas.so.3
    # resolves to), then the library the process actually mapped.
    items = [i.strip().rstrip(",") for l in torch.__config__.show().splitlines() for i in l.split(", ")]
    blas = [i for i in items if "BLAS" in i.upper()]
    print(f"config   {'; '.join(blas) if blas else 'no BLAS in torch.__config__.show()'}")
    print(blas_line())


def save_export(path, model, vocab, val_loss, step):
    from safetensors_writer import write_safetensors
    cfg = model.config
    meta = {
        "vkamp.model": "gpt",
        "vkamp.vocab": ref.vocab_to_metadata(vocab),
        "vkamp.vocab_size": str(cfg.vocab_size),
        "vkamp.n_layer": str(cfg.n_layer),
        "vkamp.n_head": str(cfg.n_head),
        "vkamp.n_embd": str(cfg.n_embd),
        "vkamp.block_size": str(cfg.block_size),
        "vkamp.val_loss": repr(val_loss),
        "vkamp.step": str(step),
        "vkamp.precision": "float32",
        "writer": "bench/torch_charlm.py",
    }
    tensors = [(n, p.detach().float().cpu()) for n, p in model.named_parameters()]
    write_safetensors(path, tensors, meta)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--eval-every", type=int, default=100, help="print the mean train loss every N steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--text", help="corpus file (default: the fortunes files)")
    ap.add_argument("--amp", action="store_true", help="CPU: train under autocast(bfloat16)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--save", help="write the trained model as a vkamp GPT export")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="after the timed steps, profile N more (device time by op class, top kernels)")
    a = ap.parse_args()
    if a.steps <= WARMUP_STEPS:
        sys.exit(f"torch_charlm.py: --steps must exceed the {WARMUP_STEPS} untimed warm-up steps")

    torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("torch_charlm.py: --device cuda, but torch.cuda.is_available() is False")
    if cuda:
        print(cuda_line())
        print(f"device   {torch.cuda.get_device_name(0)}; autocast float16 + GradScaler")
    else:
        blas_report()
        print(f"device   cpu; {'autocast bfloat16' if a.amp else 'float32'}")

    corpus = ref.load_corpus(a.text)
    vocab = ref.corpus_vocab(corpus)
    tokens = ref.tokenize(corpus, vocab)
    train, val = ref.split(tokens)
    T = a.block_size
    print(f"data     {a.text or ref.FORTUNES}: {len(tokens)} bytes, vocab {len(vocab)}, "
          f"train {len(train)}, val {len(val)}")

    torch.manual_seed(a.seed)
    cfg = ref.GPTConfig(vocab_size=len(vocab), block_size=T, n_layer=a.n_layer, n_head=a.n_head,
                        n_embd=a.n_embd)
    model = ref.GPT(cfg).to(dev)
    opt = model.configure_optimizers(a.weight_decay, a.lr, BETAS, EPS)
    scaler = grad_scaler() if cuda else None
    autocast = (torch.autocast("cuda", dtype=torch.float16) if cuda else
                torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.amp))
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model    {a.n_layer} layers, {a.n_head} heads, {a.n_embd} channels, block {T}: {n_params} parameters; "
          f"batch {a.batch}, {a.steps} steps, lr {a.lr} warmup {a.warmup} cosine to 0, "
          f"wd {a.weight_decay}, betas {BETAS}, clip {CLIP}; torch threads {torch.get_num_threads()}")

    gen = torch.Generator().manual_seed(a.seed)
    offs = torch.arange(T, device=dev)
    train_dev = train.to(dev)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    running, running_n = torch.zeros((), device=dev), 0
    t_start, paused = None, 0.0

    def train_step(step):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.steps, a.lr, a.warmup)
        o = torch.randint(0, len(train) - T, (a.batch, 1), generator=gen).to(dev)
        x, y = train_dev[o + offs], train_dev[o + offs + 1]
        with autocast:
            _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        if scaler:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            opt.step()
        return loss

    for step in range(a.steps):
        if step == WARMUP_STEPS:
            sync()
            t_start = time.perf_counter()
        loss = train_step(step)
        running += loss.detach().float()
        running_n += 1
        if (step + 1) % a.eval_every == 0 or step + 1 == a.steps:
            sync()
            t0 = time.perf_counter()
            print(f"step {step + 1:6d}  train loss {running.item() / running_n:.4f}  "
                  f"lr {opt.param_groups[0]['lr']:.2e}", flush=True)
            running, running_n = torch.zeros((), device=dev), 0
            if t_start is not None:
                paused += time.perf_counter() - t0
    sync()
    secs = time.perf_counter() - t_start - paused
    timed = a.steps - WARMUP_STEPS
    tps = timed * a.batch * T / secs

    t0 = time.perf_counter()
    val_loss = ref.eval_loss(model, val.to(dev), T, device=dev)
    windows = len(ref.val_windows(len(val), T))
    print(f"val      loss {val_loss:.4f} nats/char over {windows} windows of {T} "
          f"(fp32, {time.perf_counter() - t0:.1f} s)")
    print(f"speed    {tps:.0f} tokens/s over steps {WARMUP_STEPS + 1}-{a.steps} "
          f"({timed} steps, {secs:.2f} s, first {WARMUP_STEPS} steps and evals untimed)")
    if a.save:
        save_export(a.save, model, vocab, val_loss, a.steps)
        print(f"saved    {a.save}")
    if cuda:
        # After the evaluation (the extra steps change no reported loss): one
        # more step's peak, and what it adds to the memory held between
        # steps (parameters, optimizer state): activations and gradients.
        sync()
        held = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        train_step(a.steps - 1)
        sync()
        peak = torch.cuda.max_memory_allocated()
        print(f"memory   max_memory_allocated {peak / 2**20:.1f} MiB over a step; "
              f"{(peak - held) / 2**20:.1f} MiB above the {held / 2**20:.1f} MiB held between steps")
    if a.profile:
        profile_steps(lambda: train_step(a.steps - 1), a.profile, cuda)

    print(f"RESULT tokens_per_s={tps:.1f} val_loss={val_loss:.6f} steps={a.steps}")


if __name__ == "__main__":
    main()
