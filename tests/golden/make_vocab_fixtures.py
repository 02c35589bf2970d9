#!/usr/bin/env python3
"""Writes tests/golden/fixtures/vocab_*/: Llama-family checkpoints with the
vocabularies real models have (GPT-2's 50,257, Llama 3's 128,256, Qwen2's
151,936) without committing their weights (issue 51). Each folder holds
config.json and lora_expected.safetensors; the weights are drawn by the
counter-based generator of shared_weights.py (twin: shared_weights.hpp),
which the C++ test runs again to write model.safetensors into a temporary
folder and load it with vkamp's own loader.

    /usr/bin/python3 tests/golden/make_vocab_fixtures.py [fixtures_dir [name ...]]

lora_expected.safetensors (float64 reference, llama_reference.py):
  metadata  weights: JSON [[name, shape, seed, a, offset, checksum], ...]
            in file order, dtype; the LoRA and AdamW settings as
            make_llama_fixtures.py writes them
  input_ids, targets  I64 [B, T], ids drawn over the whole vocabulary
  init.<adapter>      the adapters, drawn by the generator: A U(+-a), a
                      PEFT's 1/sqrt(in) rounded down to a power of two; B
                      U(+-1/8), not PEFT's 0, so that A's gradient is not 0
  sample.columns I64 [B T, 64] and sample.logits F32 [B T, 64]: logits at
            64 columns drawn per row; label_logits, logsumexp F32 [B T]
  loss, grad.<adapter>, adamw.losses [3], adamw.step3.<adapter>
The full [B, T, V] logits would take 10 MB a fixture.

run_expected.safetensors (vocab_gpt2 only): a LoRA run that learns (issue
51 item 3). STEPS AdamW steps of the adapters through batches of RUN_BATCH
windows of RUN_SEQ tokens, window j = stream[j T, j T + T) with the next
tokens as targets, batch k = windows [k B, k B + B): the same order the C++
test feeds vkamp's trainer. The stream has structure a LoRA can learn: the
tokens come from an alphabet of 8 ids spread over the vocabulary, each
followed by one of two (p' = 5 p + 1 + bit mod 8, bit from the generator).
Stored: run.init.<adapter>, run.losses [STEPS] (before each step),
run.grad_norms [STEPS], run.logit_rms [STEPS] (each step's logits' RMS),
run.step<k>.<adapter> after every SNAPSHOT steps; the metadata's stream_sum
(the ids' sum) checks the C++ test's stream.
"""
import json
import os
import sys

import numpy as np
import torch

from llama_reference import forward, lora_shapes, parameter_shapes
from safetensors_writer import write_safetensors
from shared_weights import checksum, token_ids, uniform

BATCH, SEQ, COLUMNS, STEPS = 2, 8, 64, 3
LORA_ADAMW = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
RUN = dict(steps=30, batch=4, seq=16, snapshot=5, alphabet=8, lr=5e-2,
           lora=dict(r=4, alpha=8.0, targets=["q_proj", "v_proj", "down_proj"]))
DTYPES = {"float32": (torch.float32, "F32"), "bfloat16": (torch.bfloat16, "BF16"), "float16": (torch.float16, "F16")}

VARIANTS = {
    # GPT-2's vocabulary; tied like GPT-2; F32 weights
    "vocab_gpt2": dict(seed=5100, arch="LlamaForCausalLM", vocab_size=50257, hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                       rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=True, bias=False,
                       rms_norm_eps=1e-6, dtype="float32", run=True,
                       lora=dict(r=2, alpha=4.0, targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                          "up_proj", "down_proj"])),
    # Llama 3's: rope scaling, an untied lm_head as the 8B's, BF16 weights
    "vocab_llama3": dict(seed=5200, arch="LlamaForCausalLM", vocab_size=128256, hidden_size=32,
                         intermediate_size=48, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=1,
                         head_dim=8, rope_theta=500000.0,
                         rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0, original_max_position_embeddings=8),
                         tie_word_embeddings=False, bias=False, rms_norm_eps=1e-5, dtype="bfloat16",
                         lora=dict(r=2, alpha=8.0, targets=["q_proj", "k_proj", "v_proj", "o_proj"])),
    # Qwen2's: q, k, v biases, tied as Qwen2.5-0.5B, F16 weights
    "vocab_qwen2": dict(seed=5300, arch="Qwen2ForCausalLM", vocab_size=151936, hidden_size=24, intermediate_size=48,
                        num_hidden_layers=2, num_attention_heads=3, num_key_value_heads=1, head_dim=8,
                        rope_theta=1000000.0, rope_scaling=None, tie_word_embeddings=True, bias=True,
                        rms_norm_eps=1e-6, dtype="float16",
                        lora=dict(r=3, alpha=16.0, targets=["q_proj", "v_proj", "gate_proj", "down_proj"])),
}


def config_json(v):
    return {"architectures": [v["arch"]], "model_type": "qwen2" if v["arch"].startswith("Qwen2") else "llama",
            "vocab_size": v["vocab_size"], "hidden_size": v["hidden_size"],
            "intermediate_size": v["intermediate_size"], "num_hidden_layers": v["num_hidden_layers"],
            "num_attention_heads": v["num_attention_heads"], "num_key_value_heads": v["num_key_value_heads"],
            "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": v["rms_norm_eps"],
            "rope_theta": v["rope_theta"], "rope_scaling": v["rope_scaling"],
            "tie_word_embeddings": v["tie_word_embeddings"], "torch_dtype": v["dtype"],
            "bos_token_id": 1, "eos_token_id": 2}


def weight_spec(name, scale=1.0):
    """(a, offset): RMSNorm gains 1 +- 1/8, biases and matrices +- 1/4, the
    embedding and lm_head +- 1/2 (logits of RMS 1.5 or so: room for the run's
    adapters to steer them); each a times `scale` (a power of two: the
    variant's weight_scale, for a wider model)."""
    if name.endswith("norm.weight"):
        return 0.125 * scale, 1.0
    return (0.5 * scale, 0.0) if name in ("model.embed_tokens.weight", "lm_head.weight") else (0.25 * scale, 0.0)


def draw_weights(v, cfg):
    """The file's tensors and the manifest the C++ test redraws them from."""
    dtype, _ = DTYPES[v["dtype"]]
    params, manifest = {}, []
    for k, (name, shape) in enumerate(parameter_shapes(cfg)):
        a, offset = weight_spec(name, v.get("weight_scale", 1.0))
        n = int(np.prod(shape))
        t = torch.from_numpy(uniform(v["seed"] + k, n, a, offset)).reshape(shape).to(dtype)
        bits = t.view(torch.int32 if dtype == torch.float32 else torch.int16).numpy()
        manifest.append([name, list(shape), v["seed"] + k, a, offset,
                         checksum(bits.view(np.uint32 if dtype == torch.float32 else np.uint16))])
        params[name] = t
    return params, manifest


def draw_adapters(cfg, lo, seed):
    adapters = {}
    for k, (name, shape) in enumerate(lora_shapes(cfg, lo["targets"], lo["r"])):
        # A as PEFT draws it, U(+-1/sqrt(in)) rounded down to a power of two
        a = 2.0 ** np.floor(np.log2(shape[1] ** -0.5)) if ".lora_A." in name else 0.125
        t = torch.from_numpy(uniform(seed + k, int(np.prod(shape)), a)).reshape(shape)
        adapters[name] = t.to(torch.float64)
    return adapters


def xent(cfg, p, idx, targets):
    logits = forward(cfg, p, idx)
    return logits, torch.nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab_size"]), targets.reshape(-1))


def lora_meta(lo, adamw, steps):
    return {"lora_r": str(lo["r"]), "lora_alpha": repr(lo["alpha"]), "lora_targets": ",".join(lo["targets"]),
            "adamw.lr": repr(adamw["lr"]), "adamw.beta1": repr(adamw["betas"][0]),
            "adamw.beta2": repr(adamw["betas"][1]), "adamw.eps": repr(adamw["eps"]),
            "adamw.weight_decay": repr(adamw["weight_decay"]), "steps": str(steps)}


def lora_step(cfg, base, init, idx, targets, columns, prefix=""):
    """The reference on `base` with the adapters `init`: the logits at the
    label's column and at `columns`, each row's logsumexp, the logits' RMS,
    the loss and the adapters' gradients, as tensors named <prefix>...;
    and the loss."""
    adapters = {n: t.clone().requires_grad_(True) for n, t in init.items()}
    logits, loss = xent(cfg, {**base, **adapters}, idx, targets)
    loss.backward()
    rows = idx.numel()
    z = logits.detach().reshape(rows, cfg["vocab_size"])
    p = prefix
    tensors = [(p + "sample.logits", z.gather(1, columns).float()),
               (p + "label_logits", z.gather(1, targets.reshape(rows, 1)).reshape(rows).float()),
               (p + "logsumexp", torch.logsumexp(z, 1).float()), (p + "loss", loss.detach().float().reshape(1)),
               (p + "logit_rms", z.pow(2).mean().sqrt().float().reshape(1))]
    tensors += [(p + "grad." + n, t.grad.float()) for n, t in adapters.items()]
    return tensors, loss.item()


def make(name, v, out_dir, quantized=None):
    """quantized (make_qlora_fixtures.py): the file's tensors -> (the base
    the reference runs on, metadata to add); the reference on the file's own
    weights is then stored too, as orig.<name> (no AdamW steps)."""
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_json(v), f, indent=2)
    V, lo = v["vocab_size"], v["lora"]
    cfg = dict(config_json(v), head_dim=v["head_dim"], bias=v["bias"], lora_scale=lo["alpha"] / lo["r"])
    params, manifest = draw_weights(v, cfg)
    base = {n: t.to(torch.float64) for n, t in params.items()}
    extra_meta = {}
    if quantized is not None:
        file_base, (base, extra_meta) = base, quantized(params)

    stream = torch.from_numpy(token_ids(v["seed"] + 900, BATCH * SEQ + 1, V))
    idx = torch.stack([stream[b * SEQ:b * SEQ + SEQ] for b in range(BATCH)])
    targets = torch.stack([stream[b * SEQ + 1:b * SEQ + SEQ + 1] for b in range(BATCH)])
    if V > 65536:
        assert (idx > 65535).any() and (targets > 65535).any(), "no id above 16 bits"
    init = draw_adapters(cfg, lo, v["seed"] + 700)
    rows = BATCH * SEQ
    columns = torch.from_numpy(token_ids(v["seed"] + 901, rows * COLUMNS, V)).reshape(rows, COLUMNS)
    tensors = [("input_ids", idx), ("targets", targets)]
    tensors += [("init." + n, t.float()) for n, t in init.items()]
    tensors += [("sample.columns", columns)]
    step, loss = lora_step(cfg, base, init, idx, targets, columns)
    tensors += step
    if quantized is not None:
        tensors += lora_step(cfg, file_base, init, idx, targets, columns, "orig.")[0]
    # Three AdamW steps of the adapters on the batch, as make_llama_fixtures.py
    w = {n: t.clone().requires_grad_(True) for n, t in init.items()}
    opt = torch.optim.AdamW(list(w.values()), **LORA_ADAMW)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        step_loss = xent(cfg, {**base, **w}, idx, targets)[1]
        losses.append(step_loss.item())
        step_loss.backward()
        opt.step()
    tensors += [("adamw.losses", torch.tensor(losses, dtype=torch.float32))]
    tensors += [("adamw.step3." + n, t.detach().float()) for n, t in w.items()]
    meta = dict(lora_meta(lo, LORA_ADAMW, STEPS), weights=json.dumps(manifest), dtype=DTYPES[v["dtype"]][1],
                torch=torch.__version__, reference="tests/golden/llama_reference.py", **extra_meta)
    write_safetensors(os.path.join(d, "lora_expected.safetensors"), tensors, meta)
    print(f"{name}: LoRA loss {loss:.6f}, adamw {losses}")
    if v.get("run"):
        make_run(d, v, cfg, base)


def run_stream(seed, n, vocab, alphabet):
    """The learnable stream: alphabet ids over the vocabulary, p' = 5 p + 1 + bit."""
    ids = token_ids(seed, alphabet, vocab)
    bits = token_ids(seed + 1, n, 2)
    p, out = 0, []
    for i in range(n):
        out.append(int(ids[p]))
        p = (5 * p + 1 + int(bits[i])) % alphabet
    return torch.tensor(out, dtype=torch.int64)


def make_run(d, v, cfg, base):
    r, lo = RUN, RUN["lora"]
    cfg = dict(cfg, lora_scale=lo["alpha"] / lo["r"])
    T, B = r["seq"], r["batch"]
    stream = run_stream(v["seed"] + 800, r["steps"] * B * T + 1, v["vocab_size"], r["alphabet"])
    w = {n: t.clone().requires_grad_(True) for n, t in draw_adapters(cfg, lo, v["seed"] + 600).items()}
    tensors = [("run.init." + n, t.detach().float()) for n, t in w.items()]
    adamw = dict(LORA_ADAMW, lr=r["lr"])
    opt = torch.optim.AdamW(list(w.values()), **adamw)
    losses, norms, rms = [], [], []
    for k in range(r["steps"]):
        win = range(k * B, k * B + B)
        idx = torch.stack([stream[j * T:j * T + T] for j in win])
        targets = torch.stack([stream[j * T + 1:j * T + T + 1] for j in win])
        opt.zero_grad()
        logits, loss = xent(cfg, {**base, **w}, idx, targets)
        loss.backward()
        losses.append(loss.item())
        norms.append(sum(t.grad.pow(2).sum() for t in w.values()).sqrt().item())
        rms.append(logits.detach().pow(2).mean().sqrt().item())
        opt.step()
        if (k + 1) % r["snapshot"] == 0:
            tensors += [(f"run.step{k + 1}." + n, t.detach().float()) for n, t in w.items()]
    tensors += [("run.losses", torch.tensor(losses, dtype=torch.float32)),
                ("run.grad_norms", torch.tensor(norms, dtype=torch.float32)),
                ("run.logit_rms", torch.tensor(rms, dtype=torch.float32))]
    meta = dict(lora_meta(lo, adamw, r["steps"]), batch=str(B), seq=str(T), snapshot=str(r["snapshot"]),
                alphabet=str(r["alphabet"]), stream_seed=str(v["seed"] + 800), stream_sum=str(int(stream.sum())),
                torch=torch.__version__)
    write_safetensors(os.path.join(d, "run_expected.safetensors"), tensors, meta)
    print(f"{os.path.basename(d)}: run losses " + " ".join(f"{x:.3f}" for x in losses))


def main():
    torch.set_num_threads(1)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures")
    names = sys.argv[2:] or list(VARIANTS)
    for name in names:
        make(name, VARIANTS[name], out_dir)


if __name__ == "__main__":
    main()
