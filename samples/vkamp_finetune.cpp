// vkamp-finetune: fine-tunes a Llama-family model from a Hugging Face
// folder (or a named shape with random weights, --synthetic) on the user's
// text, with LoRA adapters on a frozen base held once in the run's 16-bit
// format (--lora-rank 0: every weight trains), dynamic loss scaling and
// every training flag of the other tools. Prints the validation loss
// before and after, and writes the adapters in PEFT's layout (--out).
// Exit status: 0, 1 (a runtime failure), 2 (bad flags, folders or data).
#include "app/finetune_job.hpp"
#include "finetune.hpp"
#include "sample_main.hpp"
#include "vkamp/platform.hpp"


int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  const vkamp::app::RunOptions defaults = vkamp::app::finetune_defaults(argc, argv);
  return vkamp::samples::sample_main(
      {"vkamp-finetune",
       "Fine-tunes a Llama-family model (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM) from a\n"
       "Hugging Face folder on --data: plain text, or JSON Lines of {\"text\": ...} or {\"prompt\": ...,\n"
       "\"completion\": ...} (the loss on the completion alone) or {\"messages\": [...]} (conversations\n"
       "rendered with the model's chat template, the loss on the assistant's turns), packed into --seq-len\n"
       "sequences with EOS between documents; the last --val-fraction validates. LoRA adapters train on\n"
       "--lora-targets, the base frozen and held once in the run's format (fp16 with dynamic loss scaling\n"
       "by default); --lora-rank 0 trains every weight. Prints the validation loss before and after and\n"
       "writes adapter_model.safetensors and adapter_config.json into --out, which PEFT's\n"
       "PeftModel.from_pretrained reads. --max-steps 0 only evaluates. --synthetic NAME (qwen2.5-0.5b,\n"
       "qwen2.5-1.5b, tinyllama-1.1b, llama-3.2-1b, llama-3.1-8b, llama-tiny) builds that shape with random weights, so\n"
       "--dry-run plans memory without a download. A run whose plan passes the device's memory budget\n"
       "exits 2 before allocating anything, with the plan and the settings that would fit.",
       vkamp::app::Rows::FineTune},
      defaults, argc, argv,
      [](vkamp::app::RunOptions& cfg, vkamp::Context& ctx) { return vkamp::samples::finetune(cfg, ctx, "vkamp-finetune"); });
}
