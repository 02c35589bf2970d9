"""A Llama-family causal LM written from Hugging Face transformers'
modeling_llama.py / modeling_qwen2.py (LlamaRMSNorm, LlamaRotaryEmbedding
with rope_type "default" and "llama3", rotate_half, repeat_kv, eager
attention, LlamaMLP), for vkamp's Llama golden tests. Debian has no
transformers package; this is the same arithmetic in a few lines.

It runs in the dtype of its parameters (the fixtures use float64, so the
reference is exact to far below fp32's rounding); the rotary angles are
taken in that dtype too (transformers takes them in float32, which differs
at large positions only).
"""
import math

import torch


def inverse_frequencies(cfg, dtype):
    hd = cfg["head_dim"]
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).to(dtype) / hd))
    rs = cfg.get("rope_scaling")
    if not rs or rs.get("rope_type", rs.get("type")) == "default":
        return inv
    # transformers' _compute_llama3_parameters
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    inv_llama = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_llama / factor + smooth * inv_llama
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, inv_llama)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rms_norm(x, weight, eps):
    var = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(var + eps))


def forward(cfg, p, idx):
    """Logits [B, T, V] for ids [B, T]; p maps HF names to tensors."""
    B, T = idx.shape
    H, KV, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    dtype = p["model.embed_tokens.weight"].dtype
    inv = inverse_frequencies(cfg, dtype)
    freqs = torch.arange(T, dtype=dtype)[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((T, T), float("-inf"), dtype=dtype).triu(1)
    eps = cfg["rms_norm_eps"]

    def linear(x, name):
        b = p.get(name + ".bias")
        y = torch.nn.functional.linear(x, p[name + ".weight"], b)
        if name + ".lora_A.weight" in p:  # PEFT's Linear: base + lora_B(lora_A(x)) * scaling
            y = y + (x @ p[name + ".lora_A.weight"].T) @ p[name + ".lora_B.weight"].T * cfg["lora_scale"]
        return y

    x = p["model.embed_tokens.weight"][idx]
    for i in range(cfg["num_hidden_layers"]):
        L = f"model.layers.{i}."
        h = rms_norm(x, p[L + "input_layernorm.weight"], eps)
        q = linear(h, L + "self_attn.q_proj").view(B, T, H, hd).transpose(1, 2)
        k = linear(h, L + "self_attn.k_proj").view(B, T, KV, hd).transpose(1, 2)
        v = linear(h, L + "self_attn.v_proj").view(B, T, KV, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=1)  # repeat_kv
        v = v.repeat_interleave(H // KV, dim=1)
        att = (q @ k.transpose(2, 3)) * hd ** -0.5 + mask
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, H * hd)
        x = x + linear(y, L + "self_attn.o_proj")
        h = rms_norm(x, p[L + "post_attention_layernorm.weight"], eps)
        m = torch.nn.functional.silu(linear(h, L + "mlp.gate_proj")) * linear(h, L + "mlp.up_proj")
        x = x + linear(m, L + "mlp.down_proj")
    x = rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else p["lm_head.weight"]
    return x @ head.T


def lora_shapes(cfg, targets, rank):
    """The adapters' names and shapes ([r, in] and [out, r]) on `targets`."""
    shapes = dict(parameter_shapes(cfg))
    out = []
    for i in range(cfg["num_hidden_layers"]):
        for path in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                     "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
            if path.split(".")[1] not in targets:
                continue
            name = f"model.layers.{i}.{path}"
            o, n = shapes[name + ".weight"]
            out += [(name + ".lora_A.weight", (rank, n)), (name + ".lora_B.weight", (o, rank))]
    return out


def parameter_shapes(cfg):
    """HF names and shapes, in vkamp's declaration order."""
    C, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, KV, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    out = [("model.embed_tokens.weight", (V, C))]
    for i in range(cfg["num_hidden_layers"]):
        L = f"model.layers.{i}."
        out += [(L + "self_attn.q_proj.weight", (H * hd, C)), (L + "self_attn.k_proj.weight", (KV * hd, C)),
                (L + "self_attn.v_proj.weight", (KV * hd, C)), (L + "self_attn.o_proj.weight", (C, H * hd)),
                (L + "mlp.gate_proj.weight", (I, C)), (L + "mlp.up_proj.weight", (I, C)),
                (L + "mlp.down_proj.weight", (C, I))]
    if not cfg["tie_word_embeddings"]:
        out.append(("lm_head.weight", (V, C)))
    for i in range(cfg["num_hidden_layers"]):
        L = f"model.layers.{i}."
        out += [(L + "input_layernorm.weight", (C,)), (L + "post_attention_layernorm.weight", (C,))]
        if cfg["bias"]:
            out += [(L + "self_attn.q_proj.bias", (H * hd,)), (L + "self_attn.k_proj.bias", (KV * hd,)),
                    (L + "self_attn.v_proj.bias", (KV * hd,))]
    out.append(("model.norm.weight", (C,)))
    return out
