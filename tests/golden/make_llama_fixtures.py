#!/usr/bin/env python3
"""Writes tests/golden/fixtures/llama_*/: tiny random Llama-family models in
Hugging Face's folder layout (config.json, model.safetensors or shards with
model.safetensors.index.json) and, beside them, expected.safetensors: one
batch of token windows, the logits, the mean cross-entropy and the gradient
of every parameter, computed by llama_reference.py in float64.

    /usr/bin/python3 tests/golden/make_llama_fixtures.py [fixtures_dir]

Needs Debian's python3-torch; the committed fixtures are what the C++ test
(and CI) reads.

The variants cover what differs between checkpoints people hold:
    llama_gqa     LlamaForCausalLM, 4 heads sharing 2 key/value heads,
                  untied lm_head, rope_theta 10000, F32 weights
    llama3_tied   LlamaForCausalLM, 2 heads sharing 1, head_dim 12 (not
                  hidden 16 / 2 heads), tied lm_head, rope_theta 500000 with
                  rope_scaling llama3 (its 6 frequencies fall in all three
                  bands: kept, blended, divided), BF16 weights
    qwen2_bias    Qwen2ForCausalLM (q, k and v biases), 3 heads sharing 1,
                  rope_theta 1e6, F16 weights in two shards
Weights are drawn N(0, 0.1) (matrices) and 1 + N(0, 0.1) (RMSNorm), biases
N(0, 0.1): away from the special values 0 and 1 a kernel that ignored one
would still pass. They are rounded to the file's dtype first, so the
reference runs on exactly the values vkamp reads.

expected.safetensors: input_ids and targets I64 [B, T] (windows at random
offsets of one random stream, targets the next token), logits F32 [B, T, V],
loss F32 [1], grad.<name> F32 for every parameter.

lora_expected.safetensors: the same batch through the same model with LoRA
adapters (PEFT's Linear: base + lora_B(lora_A(x)) * lora_alpha / r) on the
metadata's lora_targets, rank lora_r, lora_alpha: init.<adapter> (A drawn
as PEFT draws it, U(+-1/sqrt(in)); B drawn N(0, 0.1), not PEFT's 0, so that
A's gradient is not 0), logits, loss, and grad.<adapter> for the adapters
alone (the base frozen); adamw.losses [3], the loss before each of 3 AdamW
steps of the adapters on the batch (LORA_ADAMW, in the metadata), and
adamw.step3.<adapter> after them.
"""
import json
import os
import sys

import torch

from llama_reference import forward, lora_shapes, parameter_shapes
from safetensors_writer import write_safetensors

SEED = 20261202
BATCH, SEQ, STREAM = 3, 8, 40
STEPS = 3
LORA_ADAMW = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)

VARIANTS = {
    "llama_gqa": dict(lora=dict(r=2, alpha=4.0, targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                         "up_proj", "down_proj"]),
                      arch="LlamaForCausalLM", vocab_size=37, hidden_size=24, intermediate_size=40,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=6,
                      explicit_head_dim=False, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False,
                      bias=False, rms_norm_eps=1e-6, dtype=torch.float32, shards=1),
    "llama3_tied": dict(arch="LlamaForCausalLM", vocab_size=29, hidden_size=16, intermediate_size=36,
                        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=12,
                        explicit_head_dim=True, rope_theta=500000.0,
                        rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                          original_max_position_embeddings=64),
                        tie_word_embeddings=True, bias=False, rms_norm_eps=1e-5, dtype=torch.bfloat16, shards=1),
    "qwen2_bias": dict(lora=dict(r=3, alpha=16.0, targets=["q_proj", "v_proj", "down_proj"]),
                       arch="Qwen2ForCausalLM", vocab_size=31, hidden_size=18, intermediate_size=32,
                       num_hidden_layers=2, num_attention_heads=3, num_key_value_heads=1, head_dim=6,
                       explicit_head_dim=False, rope_theta=1000000.0, rope_scaling=None, tie_word_embeddings=False,
                       bias=True, rms_norm_eps=1e-6, dtype=torch.float16, shards=2),
}


def config_json(v):
    c = {"architectures": [v["arch"]], "model_type": "qwen2" if v["arch"].startswith("Qwen2") else "llama",
         "vocab_size": v["vocab_size"], "hidden_size": v["hidden_size"],
         "intermediate_size": v["intermediate_size"], "num_hidden_layers": v["num_hidden_layers"],
         "num_attention_heads": v["num_attention_heads"], "num_key_value_heads": v["num_key_value_heads"],
         "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": v["rms_norm_eps"],
         "rope_theta": v["rope_theta"], "rope_scaling": v["rope_scaling"],
         "tie_word_embeddings": v["tie_word_embeddings"], "torch_dtype": str(v["dtype"]).split(".")[1],
         "bos_token_id": 1, "eos_token_id": 2}
    if v["explicit_head_dim"]:
        c["head_dim"] = v["head_dim"]
    return c


def make(name, v, out_dir, gen):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    cfg = dict(config_json(v), head_dim=v["head_dim"], bias=v["bias"])
    params = {}
    for pname, shape in parameter_shapes(cfg):
        if pname.endswith("norm.weight"):
            t = 1 + 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        params[pname] = t.to(v["dtype"])  # the file's values
    names = list(params)
    if v["shards"] == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), [(n, params[n]) for n in names], {"format": "pt"})
    else:
        half = len(names) // 2
        parts = [names[:half], names[half:]]
        weight_map = {}
        for i, part in enumerate(parts):
            file = f"model-{i + 1:05d}-of-{len(parts):05d}.safetensors"
            write_safetensors(os.path.join(d, file), [(n, params[n]) for n in part], {"format": "pt"})
            weight_map.update({n: file for n in part})
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_json(v), f, indent=2)

    stream = torch.randint(0, v["vocab_size"], (STREAM,), generator=gen)
    starts = torch.randint(0, STREAM - SEQ, (BATCH,), generator=gen)
    idx = torch.stack([stream[s:s + SEQ] for s in starts])
    targets = torch.stack([stream[s + 1:s + SEQ + 1] for s in starts])
    p64 = {n: t.to(torch.float64).requires_grad_(True) for n, t in params.items()}
    logits = forward(cfg, p64, idx)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, v["vocab_size"]), targets.reshape(-1))
    loss.backward()
    tensors = [("input_ids", idx), ("targets", targets), ("logits", logits.detach().float()),
               ("loss", loss.detach().float().reshape(1))]
    tensors += [("grad." + n, p64[n].grad.float()) for n in names]
    write_safetensors(os.path.join(d, "expected.safetensors"), tensors,
                      {"torch": torch.__version__, "seed": str(SEED), "reference": "tests/golden/llama_reference.py"})
    print(f"{name}: loss {loss.item():.6f}")
    if "lora" not in v:
        return
    lo = v["lora"]
    adapters = {}
    for aname, shape in lora_shapes(cfg, lo["targets"], lo["r"]):
        if ".lora_A." in aname:
            bound = 1 / shape[1] ** 0.5
            t = (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        else:
            t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        adapters[aname] = t.float().to(torch.float64).requires_grad_(True)  # fp32 values: vkamp's masters
    base = {n: t.to(torch.float64) for n, t in params.items()}
    cfg_l = dict(cfg, lora_scale=lo["alpha"] / lo["r"])
    logits = forward(cfg_l, {**base, **adapters}, idx)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, v["vocab_size"]), targets.reshape(-1))
    loss.backward()
    tensors = [("init." + n, t.detach().float()) for n, t in adapters.items()]
    tensors += [("logits", logits.detach().float()), ("loss", loss.detach().float().reshape(1))]
    tensors += [("grad." + n, t.grad.float()) for n, t in adapters.items()]
    # Three AdamW steps of the adapters on the batch, from init (the base
    # frozen; no clipping, a constant rate): the loss before each, and the
    # adapters after the third.
    w = {n: t.detach().clone().requires_grad_(True) for n, t in adapters.items()}
    opt = torch.optim.AdamW(list(w.values()), **LORA_ADAMW)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        step_logits = forward(cfg_l, {**base, **w}, idx)
        step_loss = torch.nn.functional.cross_entropy(step_logits.reshape(-1, v["vocab_size"]), targets.reshape(-1))
        losses.append(step_loss.item())
        step_loss.backward()
        opt.step()
    tensors += [("adamw.losses", torch.tensor(losses, dtype=torch.float32))]
    tensors += [("adamw.step3." + n, t.detach().float()) for n, t in w.items()]
    write_safetensors(os.path.join(d, "lora_expected.safetensors"), tensors,
                      {"lora_r": str(lo["r"]), "lora_alpha": repr(lo["alpha"]), "lora_targets": ",".join(lo["targets"]),
                       "adamw.lr": repr(LORA_ADAMW["lr"]), "adamw.beta1": repr(LORA_ADAMW["betas"][0]),
                       "adamw.beta2": repr(LORA_ADAMW["betas"][1]), "adamw.eps": repr(LORA_ADAMW["eps"]),
                       "adamw.weight_decay": repr(LORA_ADAMW["weight_decay"]), "steps": str(STEPS)})
    print(f"{name}: LoRA loss {loss.item():.6f}")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures")
    gen = torch.Generator().manual_seed(SEED)
    for name, v in VARIANTS.items():
        make(name, v, out_dir, gen)


if __name__ == "__main__":
    main()
