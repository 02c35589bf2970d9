#!/usr/bin/python3
"""Writes a random Llama-shaped Hugging Face folder (config.json,
model.safetensors in F16, llama_tiny's tokenizer from examples/llama_tiny)
for timing vkamp-generate: the weights are N(0, 0.02) as Hugging Face
initialises a Llama, the norms 1. Usage:
  bench/make_random_llama.py OUT_DIR [hidden layers heads kv_heads intermediate]
(default 1024 16 16 8 2816: about 200M parameters with the 4487-token vocabulary)."""
import json
import os
import shutil
import sys

import numpy as np

out = sys.argv[1]
hidden, layers, heads, kv, inter = (int(x) for x in (sys.argv[2:7] if len(sys.argv) > 2 else (1024, 16, 16, 8, 2816)))
here = os.path.dirname(os.path.abspath(__file__))
tiny = os.path.join(here, "..", "examples", "llama_tiny")
vocab = 4487
os.makedirs(out, exist_ok=True)
config = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": vocab, "hidden_size": hidden,
    "intermediate_size": inter, "num_hidden_layers": layers, "num_attention_heads": heads,
    "num_key_value_heads": kv, "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
    "torch_dtype": "float16",
}
json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=2)
for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    shutil.copy(os.path.join(tiny, f), out)
hd = hidden // heads
shapes = {"model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,), "lm_head.weight": (vocab, hidden)}
for i in range(layers):
    p = f"model.layers.{i}."
    shapes.update({
        p + "input_layernorm.weight": (hidden,), p + "post_attention_layernorm.weight": (hidden,),
        p + "self_attn.q_proj.weight": (heads * hd, hidden), p + "self_attn.k_proj.weight": (kv * hd, hidden),
        p + "self_attn.v_proj.weight": (kv * hd, hidden), p + "self_attn.o_proj.weight": (hidden, heads * hd),
        p + "mlp.gate_proj.weight": (inter, hidden), p + "mlp.up_proj.weight": (inter, hidden),
        p + "mlp.down_proj.weight": (hidden, inter),
    })
rng = np.random.default_rng(0)
header, blobs, offset = {}, [], 0
for name, shape in shapes.items():
    a = (np.ones(shape) if name.endswith("norm.weight") else rng.normal(0, 0.02, shape)).astype(np.float16)
    b = a.tobytes()
    header[name] = {"dtype": "F16", "shape": list(shape), "data_offsets": [offset, offset + len(b)]}
    blobs.append(b)
    offset += len(b)
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(len(h).to_bytes(8, "little"))
    f.write(h)
    for b in blobs:
        f.write(b)
print(sum(int(np.prod(s)) for s in shapes.values()), "parameters ->", out)
