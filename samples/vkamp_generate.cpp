// vkamp-generate: samples text from a GPT that charlm saved (--save), with
// no text to load, no training step and no validation pass. The model's
// size, vocabulary and precision come from the file's metadata; the
// sampling flags are charlm's (the same rows, so the same checks). Or,
// with --model, from a Llama-family Hugging Face folder and its tokenizer,
// with --adapter's LoRA (PEFT folder or GGUF file) folded in (app/llama_generate.hpp). The text
// streams to stdout as it is sampled.
// Exit status: 0, 1 (a runtime failure), 2 (bad flags or files).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "app/cli.hpp"
#include "app/llama_generate.hpp"
#include "app/run_options.hpp"
#include "app/saved_gpt.hpp"
#include "app/tool_main.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"

namespace {

using namespace vkamp;

const char* kAbout =
    "Samples text from a GPT saved by charlm --save: the model, its vocabulary and the precision it\n"
    "trained in are read from the file. The prompt and its continuation go to stdout as they are\n"
    "sampled. The same file, flags and seed give the same text as charlm's sample at the end of the\n"
    "run that saved it. Or from a Llama-family Hugging Face folder (--model DIR, its tokenizer.json),\n"
    "with a LoRA adapter folded in (--adapter DIR, a PEFT folder as vkamp-finetune writes it, or\n"
    "FILE.gguf, an adapter as llama.cpp's --lora reads it), through a KV\n"
    "cache; --max-new counts tokens there, --temperature 0 is greedy, and --ids also prints the new\n"
    "tokens' ids. --chat takes the prompt as a user turn, --messages FILE.json a conversation: rendered\n"
    "with the model's chat template (or --chat-template FILE) and its generation prompt, the reply\n"
    "alone is printed, and it stops at the template's end-of-turn token as well as at EOS.";

struct Options {
  std::string weights, model, adapter;
  bool ids = false;
  bool chat = false;
  std::string messages, chat_template;
  app::RunOptions run;  // the sampling rows (lm.*), seed, device, precision
  bool precision_given = false;
};

// Every flag, bound to `o`: --weights, then charlm's sampling rows and the
// shared ones; "max-new" is charlm's "generate" under the name the sampler
// knows it by here.
std::vector<app::Flag> flags_for(Options& o, const Options& defaults) {
  static const std::vector<config::Setting<Options>> rows = [] {
    const char* g = config::kLanguageModelGroup;
    auto weights = config::text<Options>("weights", {g, "FILE", "a .safetensors file written by charlm --save"},
                                         VKAMP_FIELD(weights), "required unless --model");
    weights.check = [](const Options& o) {
      if (o.weights.empty() == o.model.empty())
        throw ConfigError("give --weights FILE (a GPT saved by charlm --save) or --model DIR|FILE.gguf (a Llama-family "
                          "Hugging Face folder or GGUF file), one of them");
    };
    return std::vector<config::Setting<Options>>{
        weights,
        config::text<Options>("model", {g, "DIR|FILE.gguf", "a Llama-family Hugging Face folder (config.json, safetensors, "
                                                           "tokenizer.json) or GGUF file (its quantized matrices read in their blocks)"},
                              VKAMP_FIELD(model), "none"),
        config::text<Options>("adapter", {g, "DIR|FILE.gguf", "--model: a LoRA adapter to fold in: a PEFT folder, or a GGUF adapter file"},
                              VKAMP_FIELD(adapter), "none"),
        config::toggle<Options>("ids", {g, "", "--model: also print the new tokens' ids on one line"}, VKAMP_FIELD(ids)),
        config::toggle<Options>("chat", {g, "", "--model: the prompt is a user turn, rendered with the chat template"},
                                VKAMP_FIELD(chat)),
        config::text<Options>("messages", {g, "FILE.json", "--model: reply to this conversation (a JSON list of messages)"},
                              VKAMP_FIELD(messages), "none"),
        config::text<Options>("chat_template", {g, "FILE", "--chat/--messages: this Jinja template, not the model's"},
                              VKAMP_FIELD(chat_template), "the model's")};
  }();
  std::vector<app::Flag> flags = app::bind_rows(rows, o, defaults);
  std::vector<app::Flag> shared = app::shared_flags(
      o.run, defaults.run, {"prompt", "generate", "temperature", "top_k", "seed", "precision", "device", "top_p"});
  app::Flag& max_new = shared[1];
  max_new.names = {"max-new", "max-new-tokens"};
  max_new.help.front().flag = "--max-new N";
  max_new.help.front().meaning = "characters (--model: tokens) to sample; also --max-new-tokens";
  app::Flag& precision = shared[5];
  precision.help.front().shown_default = "the precision it trained in";
  precision.parse = [&o, inner = precision.parse](const std::string& v, const std::string& l) {
    inner(v, l);
    o.precision_given = true;
  };
  flags.insert(flags.end(), shared.begin(), shared.end());
  return flags;
}

std::string read_messages(const std::string& path) {
  std::FILE* f = platform::open_file(path, "rb");
  if (!f) throw ConfigError(path + ": cannot be opened (--messages names a JSON file with a list of messages)");
  std::string text;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

// --model: a Llama-family folder, streamed token by token.
int run_llama(const Options& o, Context& ctx) {
  app::LlamaGeneration g;
  g.model_dir = o.model;
  g.adapter_dir = o.adapter;
  if (o.precision_given) g.precision = o.run.precision;
  g.prompt = o.run.lm.prompt;
  g.chat = o.chat;
  g.chat_template = o.chat_template;
  if (!o.messages.empty()) g.messages_json = read_messages(o.messages);
  const bool chat = o.chat || !o.messages.empty();
  g.max_new_tokens = o.run.lm.generate;
  g.sampling = {o.run.lm.temperature, o.run.lm.top_k, o.run.lm.top_p};
  g.seed = o.run.seed;
  if (!chat) std::fputs(g.prompt.c_str(), stdout);  // a chat prints the reply alone
  std::fflush(stdout);
  const app::Generated out = app::generate_llama(ctx, g, [](const std::string& piece) {
    std::fputs(piece.c_str(), stdout);
    std::fflush(stdout);
  });
  std::fputc('\n', stdout);
  if (o.ids) {
    for (size_t i = 0; i < out.ids.size(); ++i) std::printf("%s%d", i ? " " : "", out.ids[i]);
    std::fputc('\n', stdout);
  }
  std::fprintf(stderr, "vkamp-generate: %zu tokens after %zu of prompt%s from %s%s%s in %s\n", out.ids.size(),
               out.prompt_ids.size(), chat ? " (the chat template's rendering)" : "", o.model.c_str(),
               o.adapter.empty() ? "" : " with ", o.adapter.c_str(), format_name(out.precision));
  return 0;
}

int run(const Options& o) {
  if (!o.adapter.empty() && o.model.empty()) throw ConfigError("--adapter goes with --model DIR|FILE.gguf");
  if ((o.chat || !o.messages.empty() || !o.chat_template.empty()) && o.model.empty())
    throw ConfigError("--chat, --messages and --chat-template go with --model DIR");
  if (o.chat && !o.messages.empty()) throw ConfigError("--chat (the prompt as a user turn) or --messages FILE.json, not both");
  std::unique_ptr<Context> ctx;
  try {
    ContextOptions copt;
    copt.device = o.run.device;
    ctx = std::make_unique<Context>(copt);
  } catch (const Error& e) {  // no such device, or no Vulkan: a setting to change
    throw ConfigError(e.what());
  }
  // A cold cache costs most of a first run on a CPU driver (17 s against
  // 3 s on lavapipe): say so, and where later runs find the pipelines.
  if (!ctx->pipeline_cache_warm())
    std::fprintf(stderr, "vkamp-generate: note: no compiled pipelines cached for %s yet; compiling them makes this "
                         "run slower%s\n",
                 ctx->info().name.c_str(),
                 ctx->pipeline_cache_path().empty()
                     ? " (VKAMP_PIPELINE_CACHE=none: nothing is kept for later runs)"
                     : ("; later runs read them from " + ctx->pipeline_cache_path()).c_str());
  if (!o.model.empty()) return run_llama(o, *ctx);
  app::SavedGpt gpt(*ctx, o.weights,
                    o.precision_given ? std::optional<Format>(o.run.precision) : std::nullopt);
  const models::GptConfig& c = gpt.config();
  std::fprintf(stderr,
               "vkamp-generate: GPT with %u layers, %u heads, %u channels, block %u (%llu parameters) from %s, on %s "
               "(%s); %u characters, temperature %g, top-k %u, seed %llu\n",
               c.n_layer, c.n_head, c.n_embd, c.block_size, static_cast<unsigned long long>(gpt.param_count()),
               o.weights.c_str(), ctx->info().name.c_str(), format_name(gpt.precision()), o.run.lm.generate,
               o.run.lm.temperature, o.run.lm.top_k, static_cast<unsigned long long>(o.run.seed));
  // The prompt first, then each byte as it is sampled.
  const std::string prompt = o.run.lm.prompt.empty() ? "\n" : o.run.lm.prompt;
  bool prompt_shown = false;
  gpt.generate(o.run.lm, o.run.seed, [&](char ch) {
    if (!prompt_shown) std::fputs(prompt.c_str(), stdout);
    prompt_shown = true;
    std::fputc(ch, stdout);
    std::fflush(stdout);
  });
  if (!prompt_shown) std::fputs(prompt.c_str(), stdout);  // --max-new 0
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  Options o;
  const Options defaults = o;
  const std::vector<app::Flag> flags = flags_for(o, defaults);
  const app::Program program{"vkamp-generate",
                             "--weights FILE.safetensors | --model DIR [--adapter DIR|FILE.gguf] [--prompt TEXT] [--chat | --messages FILE.json] [--max-new N] [flags]",
                             kAbout, false, ""};
  if (int status = app::parse_or_exit(program, argc, argv, flags); status >= 0) return status;
  return app::tool_main("vkamp-generate", [&] { return run(o); });
}
