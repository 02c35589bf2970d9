#!/usr/bin/env python3
"""Writes tests/golden/fixtures/gpt.safetensors: one fp32 PyTorch run of a
tiny nanoGPT GPT (gpt_reference.GPT) on one fixed batch, for vkamp's GPT
golden test (llm.c's test_gpt2 idea, as make_fixtures.py for the MLP and
LeNet-5).

    python3 tests/golden/make_gpt_fixture.py [out_dir]

Needs Debian's python3-torch (1.13, CPU); the committed fixture is what the
C++ test (and CI) reads.

The model: pre-LayerNorm blocks, learned position embedding, final
LayerNorm, lm_head tied to transformer.wte, biases everywhere, no dropout,
vocab 23, block 8, 2 layers, 2 heads, 16 channels. Its GELU is the tanh
approximation (nn.GELU(approximate="tanh")), the one vkamp implements, not
nanoGPT's exact erf GELU.

The initial weights are nanoGPT's init (N(0, 0.02), c_proj weights
N(0, 0.02/sqrt(2 n_layer)), biases 0, LayerNorm gain 1 and bias 0), then
every LayerNorm gain and bias and every Linear bias gets N(0, 0.1) added: at
exactly 1 and 0 a kernel that ignores the gain or the bias, or swaps them,
would pass the forward check, and their gradients would be checked only
through the other tensors.

The batch is like a real LM batch: 4 windows of 8 at random offsets into one
random token stream of 40 tokens (so windows overlap and share tokens), with
targets the next token of each position.

Contents (fp32 unless said; nanoGPT names, PyTorch layouts, Linear
[out, in]; no lm_head.weight, which is tied, and no attn.bias mask buffer):

    init.<p>            the initial parameters
    idx, targets        I64 [4, 8]
    logits [4, 8, 23], loss [1]   at init (mean cross-entropy over 32 positions)
    grad.<p>            d loss / d p at init (wte's includes its lm_head use)
    adamw.step3.<p>     after 3 steps of AdamW from init, same batch each step
    adamw.losses [3]    the loss before each step
    adamw.grad_norms [3]  the global gradient norm before clipping, per step
                        (clipping scales the gradients by min(1, clip/norm))

AdamW is nanoGPT's configure_optimizers: weight decay 0.1 on the parameters
with dim >= 2, 0 on the rest; lr 1e-3 constant, betas (0.9, 0.95), eps 1e-8;
torch.nn.utils.clip_grad_norm_ to 0.5 before each step (nanoGPT uses 1.0;
these gradient norms are about 0.65, so 0.5 makes the fixture test the
clipping). Hyperparameters, the
config and the torch version are in __metadata__ (also as the vkamp.* keys a
vkamp GPT export carries, so gpt_reference.build_from_metadata reads it).

Everything is float32 on one thread (torch's and the BLAS's), so two runs on
one machine give identical bytes; another CPU or BLAS may differ in the last
bits.
"""
import os
import sys

# One BLAS thread too: torch.set_num_threads does not reach OpenBLAS's own
# pthreads, and a split reduction could change the bits between machines
# with different core counts. Set before torch loads the library.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import torch  # noqa: E402

from gpt_reference import GPT, GPTConfig, build_from_metadata  # noqa: E402
from safetensors_writer import write_safetensors  # noqa: E402

SEED = 20261123
CONFIG = GPTConfig(vocab_size=23, block_size=8, n_layer=2, n_head=2, n_embd=16, bias=True, gelu="tanh")
BATCH = 4
STREAM = 40
PERTURB_STD = 0.1
ADAMW = dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
CLIP = 0.5  # below the step-0 gradient norm (about 0.66), so clipping acts on every step
STEPS = 3


@torch.no_grad()
def perturb(model, gen):
    """LayerNorm gains/biases and Linear biases += N(0, PERTURB_STD)."""
    for name, p in model.named_parameters():
        if p.dim() == 1:  # exactly the LayerNorm and Linear vectors in this model
            p.add_(torch.randn(p.shape, generator=gen) * PERTURB_STD)


def blas_mapped():
    """The BLAS library this process mapped (recorded: it decides the bits)."""
    a = torch.ones(8, 8)
    torch.mm(a, a)
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "blas" in l and l.split()[-1].startswith("/")})
    return " ".join(os.path.realpath(p) for p in libs) or "none mapped"


def params(model, prefix):
    return [(prefix + n, p.detach().clone()) for n, p in model.named_parameters()]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "gpt.safetensors")
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)

    init = GPT(CONFIG)
    perturb(init, gen)
    T = CONFIG.block_size
    stream = torch.randint(0, CONFIG.vocab_size, (STREAM,), generator=gen, dtype=torch.int64)
    offsets = torch.randint(0, STREAM - T, (BATCH,), generator=gen)  # offset + T + 1 <= STREAM
    idx = torch.stack([stream[o:o + T] for o in offsets.tolist()])
    targets = torch.stack([stream[o + 1:o + T + 1] for o in offsets.tolist()])
    names = [n for n, _ in init.named_parameters()]
    assert list(init.state_dict().keys()) == names, "state_dict must hold exactly the parameters"

    model = GPT(CONFIG)
    model.load_state_dict(init.state_dict(), strict=True)
    logits, loss = model(idx, targets)
    loss.backward()
    grads = [("grad." + n, p.grad.detach().clone()) for n, p in model.named_parameters()]

    model = GPT(CONFIG)
    model.load_state_dict(init.state_dict(), strict=True)
    opt = model.configure_optimizers(weight_decay=ADAMW["weight_decay"], learning_rate=ADAMW["lr"],
                                     betas=ADAMW["betas"], eps=ADAMW["eps"])
    losses, norms = [], []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        _, step_loss = model(idx, targets)
        losses.append(step_loss.item())
        step_loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP).item())
        opt.step()
    assert losses[0] == loss.item()

    meta = {
        "vkamp.model": "gpt",
        "vkamp.vocab_size": str(CONFIG.vocab_size),
        "vkamp.block_size": str(CONFIG.block_size),
        "vkamp.n_layer": str(CONFIG.n_layer),
        "vkamp.n_head": str(CONFIG.n_head),
        "vkamp.n_embd": str(CONFIG.n_embd),
        "writer": "tests/golden/make_gpt_fixture.py",
        "torch": torch.__version__,
        "blas": blas_mapped(),
        "precision": "float32 (PyTorch CPU, 1 thread, 1 BLAS thread)",
        "seed": str(SEED),
        "vocab_size": str(CONFIG.vocab_size),
        "block_size": str(CONFIG.block_size),
        "n_layer": str(CONFIG.n_layer),
        "n_head": str(CONFIG.n_head),
        "n_embd": str(CONFIG.n_embd),
        "bias": "true",
        "dropout": "0",
        "gelu": "tanh",
        "layernorm_eps": "1e-05",
        "init": "nanoGPT: N(0, 0.02), c_proj.weight N(0, 0.02/sqrt(2*n_layer)), biases 0, LayerNorm 1/0; "
                f"then LayerNorm weight/bias and Linear biases += N(0, {PERTURB_STD})",
        "batch": str(BATCH),
        "batch_rule": f"4 windows of block_size at random offsets into a random stream of {STREAM} tokens; "
                      "targets = next tokens",
        "loss": "mean cross-entropy over all batch*block_size positions",
        "steps": str(STEPS),
        "lr": str(ADAMW["lr"]),
        "beta1": str(ADAMW["betas"][0]),
        "beta2": str(ADAMW["betas"][1]),
        "eps": str(ADAMW["eps"]),
        "weight_decay": str(ADAMW["weight_decay"]),
        "weight_decay_rule": "parameters with dim >= 2 only (nanoGPT configure_optimizers); 0 on the rest",
        "clip": str(CLIP),
        "clip_rule": "torch.nn.utils.clip_grad_norm_ (global L2 norm over all gradients) before each step",
        "adamw.rule": "torch.optim.AdamW: w *= 1 - lr * wd, then Adam with bias correction",
    }
    # The metadata must describe the model that was run.
    assert build_from_metadata(meta).config == CONFIG

    tensors = params(init, "init.") + [("idx", idx), ("targets", targets), ("logits", logits.detach()),
                                       ("loss", loss.detach().reshape(1))] + grads
    tensors += params(model, "adamw.step3.") + [("adamw.losses", torch.tensor(losses, dtype=torch.float32)),
                                                 ("adamw.grad_norms", torch.tensor(norms, dtype=torch.float32))]
    write_safetensors(path, tensors, meta)
    print(f"{path}: loss {loss.item():.6f}, adamw losses {losses}, grad norms {norms}, "
          f"{os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
