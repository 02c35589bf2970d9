// Short names for the per-tensor table. A Llama model's full names differ
// only in the middle (model.layers.12.self_attn.q_proj.lora_A.weight), so
// the table's old cut from the left showed every adapter of a fine-tune as
// "..proj.lora_A.weight": 336 rows of a 24-layer model that no one could
// tell apart.
#pragma once
#include <string>

namespace vkamp::ui {

// The layer, the projection and the factor: "12.q_proj.A" for
// model.layers.12.self_attn.q_proj.lora_A.weight; "3.down_proj.weight" for
// model.layers.3.mlp.down_proj.weight (the projection says which block);
// PEFT's "base_model.model." and the leading "model." dropped
// ("embed_tokens.weight"). Any other name (fc1.weight,
// h.0.attn.c_attn.weight) comes back as it is.
std::string short_tensor_name(const std::string& name);

}  // namespace vkamp::ui
