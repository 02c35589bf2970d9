// vkamp-generate: samples text from a GPT that charlm saved (--save), with
// no text to load, no training step and no validation pass. The model's
// size, vocabulary and precision come from the file's metadata; the
// sampling flags are charlm's (the same rows, so the same checks). The
// text streams to stdout as it is sampled.
// Exit status: 0, 1 (a runtime failure), 2 (bad flags or files).
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "app/run_options.hpp"
#include "app/saved_gpt.hpp"
#include "app/tool_main.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/safetensors.hpp"

namespace {

using namespace vkamp;

const char* kUsage =
    "usage: vkamp-generate --weights FILE.safetensors [--prompt TEXT] [--max-new N] [flags]\n"
    "\n"
    "Samples text from a GPT saved by charlm --save: the model, its vocabulary and the precision it\n"
    "trained in are read from the file. The prompt and its continuation go to stdout as they are\n"
    "sampled. The same file, flags and seed give the same text as charlm's sample at the end of the\n"
    "run that saved it.\n"
    "\n"
    "  --weights FILE     a .safetensors file written by charlm --save (required)\n"
    "  --prompt TEXT      the text to continue; every byte must be in the model's vocabulary\n"
    "                     [default: a new line]\n"
    "  --max-new N        characters to sample [default: 400]\n"
    "  --temperature T    sampling temperature, > 0 [default: 0.8]\n"
    "  --top-k K          sample among the K likeliest characters, 0 = all [default: 0]\n"
    "  --seed N           the sampler's seed [default: 1]\n"
    "  --precision P      fp32 | float16 | bfloat16 | cbfloat16 [default: the precision it trained in]\n"
    "  --device SEL       GPU index or a substring of its name [default: the first suitable GPU]\n"
    "  -h, --help         print this help and exit\n";

struct Options {
  std::string weights;
  app::RunOptions run;  // the sampling rows (lm.*), seed, device, precision
  bool precision_given = false;
};

// The flags this tool takes, by the setting each one sets; "max-new" is
// charlm's "generate" under the name the sampler knows it by here.
std::optional<std::string> key_of(const std::string& flag) {
  static const std::set<std::string> shared = {"prompt", "temperature", "top-k", "seed", "precision", "device"};
  if (flag == "max-new") return "generate";
  if (!shared.count(flag)) return std::nullopt;
  std::string key = flag;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

Options parse(int argc, char** argv, bool& help) {
  Options o;
  const auto& rows = app::run_settings(app::Rows::LanguageModel);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    const size_t eq = a.find('=');
    const std::string flag = a.substr(0, eq);
    if (flag.rfind("--", 0) != 0) throw ConfigError("unexpected argument '" + a + "'");
    auto value = [&]() -> std::string {
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) throw ConfigError(flag + ": missing value");
      return argv[++i];
    };
    if (flag == "--weights") {
      o.weights = value();
      continue;
    }
    const std::optional<std::string> key = key_of(flag.substr(2));
    if (!key) throw ConfigError("unknown flag '" + a + "'");
    config::apply_row(rows, *key, value(), o.run, flag);
    o.precision_given |= *key == "precision";
  }
  if (o.weights.empty()) throw ConfigError("--weights FILE is required (a GPT saved by charlm --save)");
  return o;
}

int run(const Options& o) {
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
  Options o;
  return app::tool_main(
      "vkamp-generate", kUsage,
      [&] {
        bool help = false;
        o = parse(argc, argv, help);
        return help;
      },
      [&] { return run(o); });
}
