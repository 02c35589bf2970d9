// vkamp-bench: throughput of vkamp's kernels, timed on the GPU with
// timestamp queries; this file is its command line. Each benchmark has a
// file of its own: gemm (gemm_bench.cpp: the GEMMs of a linear layer in
// training), conv (conv_bench.cpp: LeNet-5's layers, im2col + GEMM against a
// direct convolution), reduce (reduce_bench.cpp: a charlm step's column
// sums and norms), generate (generate_bench.cpp: a GPT's tokens with and
// without the KV cache), attention (attention_bench.cpp: its paths and tiles),
// quant (quant_bench.cpp: a frozen layer's W in ggml blocks against 16 bits).
#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/charlm.hpp"
#include "app/cli.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/knobs.hpp"
#include "attention_bench.hpp"
#include "conv_bench.hpp"
#include "gemm_bench.hpp"
#include "gemm_tune_bench.hpp"
#include "generate_bench.hpp"
#include "quant_bench.hpp"
#include "reduce_bench.hpp"
#include "vkamp/platform.hpp"

namespace {

using vkamp::bench::GemmForm;
using vkamp::bench::GemmShape;
using vkamp::bench::form_flag;
using vkamp::bench::parse_shape;
using vkamp::bench::kMaxShapeDim;

// The benchmarks, as --help lists them after the flags.
const char* kCommands =
    "vkamp-bench gemm: the GEMMs of a linear layer in training, GFLOP/s per format\n"
    "(vkamp-bench gemm --help).\n"
    "vkamp-bench conv: LeNet-5's convolution and pooling layers, step by step\n"
    "(vkamp-bench conv --help).\n"
    "vkamp-bench reduce: the reductions over rows of charlm medium, with GB/s\n"
    "(vkamp-bench reduce --help).\n"
    "vkamp-bench generate: a GPT's generation per token, KV cache against the\n"
    "full window (vkamp-bench generate --help).\n"
    "vkamp-bench attention: causal attention's three paths and the fused ones'\n"
    "tile sizes at charlm's shapes (vkamp-bench attention --help).\n"
    "vkamp-bench quant: a frozen linear layer's forward and dX with W in ggml\n"
    "blocks against W in 16 bits (vkamp-bench quant --help).\n";

// The items of a comma-separated list (an empty item stays, to be refused).
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (size_t p = 0; p <= list.size();) {
    size_t q = list.find(',', p);
    if (q == std::string::npos) q = list.size();
    items.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return items;
}

// Every flag of every benchmark, one table (app/flags.hpp); each
// benchmark's --help lists its own (Command::keys), and a flag of
// another benchmark is refused naming the one it belongs to.
struct BenchOptions {
  int repeats = 0;  // 0: automatic
  double max_dispatch_s = 1.0;
  bool quick = false, peer = false;
  std::vector<vkamp::Format> formats = {vkamp::Format::F32, vkamp::Format::F16, vkamp::Format::BF16};
  bool formats_given = false;
  std::vector<GemmForm> forms = {GemmForm::Forward, GemmForm::BackwardInput, GemmForm::BackwardWeight};
  bool forms_given = false;
  std::vector<vkamp::quant::GgmlType> types = {vkamp::quant::GgmlType::Q8_0, vkamp::quant::GgmlType::Q4_0,
                                               vkamp::quant::GgmlType::Q4_K, vkamp::quant::GgmlType::Q6_K};
  std::vector<vkamp::bench::LinearShape> layers;  // quant
  std::vector<GemmShape> shapes;
  std::vector<std::string> sizes;  // generate: one (tiny); attention: a list (medium, gpt2)
  std::vector<std::string> tiles = {"device"};  // attention
  std::vector<std::string> paths;               // gemm: kernel paths side by side
  bool tune = false;          // gemm --tune
  double max_tune_s = 20;
};

using Row = vkamp::config::Setting<BenchOptions>;
using vkamp::ConfigError;
using vkamp::config::kGeneralGroup;

std::vector<Row> bench_rows() {
  const char* g = kGeneralGroup;
  Row repeats = vkamp::config::row<BenchOptions>("repeats", {g, "N", "timed runs per case, N >= 1"});
  repeats.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.repeats = int(vkamp::config::parse_u32(v, l, 1));
  };
  repeats.show = [](const BenchOptions&) {
    return std::string(
        "gemm 5, or 3 where one dispatch takes over 0.25 s; conv and reduce 7; generate 5, 3 for medium; attention 5");
  };
  Row max_dispatch = vkamp::config::real<BenchOptions>(
      "max_dispatch_s", {g, "S", "gemm: skip cases estimated to take longer than S seconds per dispatch (0 runs every case)"},
      VKAMP_FIELD(max_dispatch_s), vkamp::config::Range::at_least(0));
  Row formats = vkamp::config::row<BenchOptions>("formats", {g, "LIST", "comma-separated storage formats from fp32,fp16,bf16,cb16"});
  formats.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.formats.clear();
    o.formats_given = true;
    for (const std::string& item : split_list(v)) {
      auto f = vkamp::parse_format(item);
      if (!f) vkamp::config::fail(l, "unknown format '" + item + "'");
      o.formats.push_back(*f);
    }
  };
  formats.show = [](const BenchOptions&) { return std::string("fp32,fp16,bf16; attention and quant fp16"); };
  Row forms = vkamp::config::row<BenchOptions>("forms", {g, "LIST", "gemm: comma-separated forms from forward,dx,dw (quant: forward,dx)"});
  forms.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.forms.clear();
    o.forms_given = true;
    for (const std::string& item : split_list(v)) {
      GemmForm f = GemmForm::Forward;
      if (item == "dx") f = GemmForm::BackwardInput;
      else if (item == "dw") f = GemmForm::BackwardWeight;
      else if (item != "forward") vkamp::config::fail(l, "unknown form '" + item + "' (forward, dx, dw)");
      if (std::find(o.forms.begin(), o.forms.end(), f) == o.forms.end()) o.forms.push_back(f);
    }
    std::sort(o.forms.begin(), o.forms.end());  // the table's order: forward, dX, dW
  };
  forms.show = [](const BenchOptions&) { return std::string("all (quant: forward,dx)"); };
  Row shape = vkamp::config::row<BenchOptions>(
      "shape", {g, "LIST", "gemm: comma-separated shapes MxNxK, each dimension 1 to 8192, instead of the default "
                           "shapes (repeatable; e.g. --shape 1024x1024x1024,4096x4096x4096)"});
  shape.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    for (const std::string& item : split_list(v)) {
      auto sh = parse_shape(item);
      if (!sh)
        vkamp::config::fail(l, "takes MxNxK with each dimension a whole number from 1 to " +
                                   std::to_string(kMaxShapeDim) + ", got '" + item + "'");
      o.shapes.push_back(*sh);
    }
  };
  shape.aliases = {"shapes"};  // --shapes: the tuner's sweep takes a list
  Row size = vkamp::config::row<BenchOptions>(
      "size", {g, "S", "generate: tiny | medium; attention: a comma-separated list of charlm's sizes from tiny, "
                       "small, medium, gpt2"});
  size.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.sizes.clear();
    for (const std::string& item : split_list(v)) {
      vkamp::app::LmOptions lm;  // charlm's table of sizes decides
      lm.size = item;
      try {
        vkamp::app::gpt_config(lm, 65);
      } catch (const ConfigError& e) {
        vkamp::config::fail(l, e.what());
      }
      o.sizes.push_back(item);
    }
  };
  size.show = [](const BenchOptions&) { return std::string("generate tiny; attention medium,gpt2"); };
  Row tiles = vkamp::config::row<BenchOptions>(
      "tiles", {g, "LIST", "attention: the fused paths' tile sizes to time, comma-separated, each RxT (rows a "
                           "workgroup x keys a tile, as VKAMP_ATTENTION_TILES), gpu, cpu or device"});
  tiles.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.tiles.clear();
    for (const std::string& item : split_list(v)) {
      if (!vkamp::parse_dims(item) && item != "gpu" && item != "cpu" && item != "device")
        vkamp::config::fail(l, "takes RxT (e.g. 64x32), gpu, cpu or device, got '" + item + "'");
      o.tiles.push_back(item);
    }
  };
  tiles.show = [](const BenchOptions&) { return std::string("device"); };
  Row paths = vkamp::config::row<BenchOptions>(
      "paths", {g, "SPEC", "gemm, quant: a kernel path to time beside the others, each on a context of its own: "
                           "NAME=value pairs, comma-separated, of the kernel-path variables (vkamp-info --knobs; "
                           "VKAMP_ optional), or default (repeatable; e.g. --paths default --paths GEMM_TILED=0)"});
  paths.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    try {
      vkamp::kernel_paths_from_settings(v);
    } catch (const ConfigError& e) {
      vkamp::config::fail(l, e.what());
    }
    o.paths.push_back(v);
  };
  paths.show = [](const BenchOptions&) { return std::string("default"); };
  Row types = vkamp::config::row<BenchOptions>(
      "types", {g, "LIST", "quant: comma-separated ggml block types to hold W in (llama.cpp's names)"});
  types.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    o.types.clear();
    for (const std::string& item : split_list(v)) {
      const auto t = vkamp::quant::ggml_type_from_name(item);
      if (!t || !vkamp::quant::is_quantized(*t))
        vkamp::config::fail(l, "'" + item + "' is not a block type vkamp reads (q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, "
                               "q5_k, q6_k)");
      o.types.push_back(*t);
    }
  };
  types.show = [](const BenchOptions&) { return std::string("q8_0,q4_0,q4_k,q6_k"); };
  Row layer = vkamp::config::row<BenchOptions>(
      "layer", {g, "LIST", "quant: comma-separated linear layers TOKENSxINxOUT instead of the default ones "
                           "(repeatable; e.g. --layer 512x2048x5632)"});
  layer.parse = [](BenchOptions& o, const std::string& v, const std::string& l) {
    for (const std::string& item : split_list(v)) {
      const auto sh = parse_shape(item, vkamp::bench::kMaxLayerDim);  // the same form: three dimensions
      if (!sh)
        vkamp::config::fail(l, "takes TOKENSxINxOUT, each a whole number from 1 to " +
                                   std::to_string(vkamp::bench::kMaxLayerDim) + ", got '" + item + "'");
      o.layers.push_back({sh->m, sh->n, sh->k});
    }
  };
  return {
      repeats, formats, max_dispatch,
      vkamp::config::toggle<BenchOptions>("quick", {g, "", "gemm, quant: fewer, smaller shapes"}, VKAMP_FIELD(quick)),
      vkamp::config::toggle<BenchOptions>(
          "peer",
          {g, "", "gemm: also time each fp32 shape through PyTorch's torch.mm on the CPU (bench/gemm_peer.py), print "
                  "which BLAS it ran and the CPU's fp32 peak, and add columns: peer GFLOP/s, vkamp/peer, % of peak"},
          VKAMP_FIELD(peer)),
      forms, shape, size, tiles, paths, types, layer,
      vkamp::config::toggle<BenchOptions>(
          "tune",
          {g, "", "gemm, quant: instead, the GEMM tuner's sweep (fp16): time every kernel the device fits per class "
                  "of product of the --shapes (quant: --layer and --types) and --forms, print the table and write "
                  "the winners to the per-device cache ($XDG_CACHE_HOME or ~/.cache, vkamp/gemm-tune-*.txt)"},
          VKAMP_FIELD(tune)),
      vkamp::config::real<BenchOptions>("max_tune_s", {g, "S", "gemm, quant --tune: at most S seconds of timing a class"},
                                        VKAMP_FIELD(max_tune_s), vkamp::config::Range::above(0)),
  };
}

struct Command {
  const char* name;
  const char* about;
  std::vector<std::string> keys;  // its flags
};

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"gemm", vkamp::bench::kGemmHelp,
       {"device", "repeats", "formats", "max_dispatch_s", "quick", "peer", "forms", "shape", "paths", "tune",
        "max_tune_s"}},
      {"conv", vkamp::bench::kConvHelp, {"device", "repeats", "formats", "batch"}},
      {"reduce", vkamp::bench::kReduceHelp, {"device", "repeats", "formats", "batch"}},
      {"generate", vkamp::bench::kGenerateHelp, {"device", "repeats", "formats", "size"}},
      {"attention", vkamp::bench::kAttentionHelp, {"device", "repeats", "formats", "size", "tiles"}},
      {"quant", vkamp::bench::kQuantHelp, {"device", "repeats", "formats", "forms", "quick", "types", "layer", "paths", "tune", "max_tune_s"}},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  namespace app = vkamp::app;
  // The benchmark is the first argument that names one; the rest are flags.
  std::string command;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const bool names_one = std::any_of(commands().begin(), commands().end(),
                                       [&](const Command& c) { return argv[i] == std::string(c.name); });
    if (names_one && command.empty()) command = argv[i];
    else args.push_back(argv[i]);
  }
  const Command* cmd = nullptr;
  for (const Command& c : commands())
    if (command == c.name) cmd = &c;

  BenchOptions opt;
  vkamp::app::RunOptions run;  // the shared rows: --device and --batch (conv, reduce)
  run.batch = 64;
  const BenchOptions opt_defaults = opt;
  const vkamp::app::RunOptions run_defaults = run;
  static const std::vector<Row> rows = bench_rows();
  std::vector<app::Flag> flags = app::shared_flags(run, run_defaults, {"device", "batch"});
  flags[1].help.front().meaning = "conv, reduce: the batch size (1 to 4096; reduce: sequences of 256)";
  flags[1].check = [&run] {
    if (run.batch > 4096) throw ConfigError("--batch needs a whole number from 1 to 4096, got " + std::to_string(run.batch));
  };
  for (app::Flag& f : app::bind_rows(rows, opt, opt_defaults)) flags.push_back(std::move(f));

  app::Program program{"vkamp-bench", "gemm|conv|reduce|generate|attention|quant [flags]",
                       "Times vkamp's kernels on the GPU with timestamp queries; name the benchmark first.", false,
                       kCommands};
  if (cmd) {  // --help: the benchmark's own flags
    program.synopsis = std::string(cmd->name) + " [flags]";
    program.about = cmd->about;
    program.listed_keys = cmd->keys;
  }
  const int argn = int(args.size());
  int status = app::parse_or_exit(program, argn, args.data(), flags, [&](const app::ParsedFlags& parsed) {
    if (!cmd) throw ConfigError("no benchmark named (try 'vkamp-bench gemm'; there are: gemm, conv, reduce, generate, attention, quant)");
    for (const auto& item : parsed.items)
      if (std::find(cmd->keys.begin(), cmd->keys.end(), item.flag->key) == cmd->keys.end()) {
        std::string owners;
        for (const Command& c : commands())
          if (std::find(c.keys.begin(), c.keys.end(), item.flag->key) != c.keys.end())
            owners += (owners.empty() ? "vkamp-bench " : " and vkamp-bench ") + std::string(c.name);
        throw ConfigError(item.label + " is an option of " + owners);
      }
    parsed.apply();
    if (command == "quant" && opt.forms_given &&
        std::find(opt.forms.begin(), opt.forms.end(), GemmForm::BackwardWeight) != opt.forms.end())
      throw ConfigError("vkamp-bench quant times the products that read W: --forms forward,dx (a frozen W has no dW)");
    if (command == "quant" && opt.quick && !opt.layers.empty()) throw ConfigError("--quick picks layers: leave it out with --layer");
    if (opt.quick && !opt.shapes.empty()) throw ConfigError("--quick picks shapes: leave it out with --shape");
    if (opt.tune && (opt.peer || (opt.quick && command != "quant") || opt.formats_given || !opt.paths.empty()))
      throw ConfigError("--tune times fp16 kernels: leave out --peer, --quick, --formats and --paths");
    if (command == "generate" && (opt.sizes.size() > 1 || (opt.sizes.size() == 1 && opt.sizes[0] != "tiny" &&
                                                           opt.sizes[0] != "medium")))
      throw ConfigError("vkamp-bench generate takes one --size: tiny or medium");
  });
  if (status >= 0) return status;
  if (opt.quick && !opt.formats_given && command != "quant") opt.formats = {vkamp::Format::F32, vkamp::Format::F16};

  try {
    if (command == "conv") return vkamp::bench::run_conv(run.device, opt.repeats, run.batch, opt.formats);
    if (command == "reduce") return vkamp::bench::run_reduce(run.device, opt.repeats, run.batch, opt.formats);
    if (command == "generate")
      return vkamp::bench::run_generate(run.device, opt.repeats, opt.sizes.empty() ? "tiny" : opt.sizes[0], opt.formats);
    if (command == "quant") {
      std::vector<std::string> forms;
      for (GemmForm f : opt.forms)
        if (f != GemmForm::BackwardWeight) forms.push_back(form_flag(f));
      if (opt.tune)
        return vkamp::bench::run_quant_tune(run.device, vkamp::bench::quant_layers(opt.layers, opt.quick, opt.types),
                                            opt.types, forms, opt.max_tune_s);
      return vkamp::bench::run_quant(run.device, opt.repeats, opt.formats_given ? opt.formats[0] : vkamp::Format::F16,
                                     opt.types, forms, opt.layers, opt.quick, opt.paths);
    }
    if (command == "attention") {
      if (!opt.formats_given) opt.formats = {vkamp::Format::F16};
      if (opt.sizes.empty()) opt.sizes = {"medium", "gpt2"};
      return vkamp::bench::run_attention(run.device, opt.repeats, opt.sizes, opt.tiles, opt.formats);
    }
    if (opt.tune) {
      std::vector<std::array<uint32_t, 3>> dims;
      for (const GemmShape& sh : opt.shapes) dims.push_back({sh.m, sh.n, sh.k});
      std::vector<std::string> form_names;
      for (GemmForm f : opt.forms) form_names.push_back(form_flag(f));
      return vkamp::bench::run_gemm_tune(run.device, dims, form_names, opt.max_tune_s);
    }
    return vkamp::bench::run_gemm(run.device, opt.repeats, opt.max_dispatch_s, opt.quick, opt.peer, opt.formats, opt.forms,
                    opt.shapes, opt.paths);
  } catch (const ConfigError& e) {  // a bad --paths value or kernel-path variable
    std::fprintf(stderr, "vkamp-bench: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkamp-bench: %s\n", e.what());
    return 1;
  }
}
