#include "vkamp/knobs.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "vkamp/config_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp {

// Every variable once. A reader names its variable here first; tests and
// scripts read theirs directly, and are listed so that one table says what
// the project reads. (A function's static, so that a reader running during
// static initialization finds it built.)
const std::vector<EnvKnob>& env_knobs() {
  static const std::vector<EnvKnob> knobs = {
    // ---- the device and the instance (engine)
    {"VKAMP_DEVICE", {}, "an index or a name substring", "the first discrete GPU, then integrated, virtual, CPU",
     "engine", "the device to run on (--device wins)"},
    {"VKAMP_VALIDATION", {"0", "1"}, "", "0", "engine",
     "load the Khronos validation layer (any value but 0 turns it on)"},
    {"VKAMP_FP16_STORAGE_ONLY", {"0", "1"}, "", "0", "engine",
     "take the fp16-storage path (fp16 in memory, fp32 math) on any device"},
    {"VKAMP_INF_NAN_PRESERVE", {"0", "1"}, "", "1", "engine",
     "0: request no SignedZeroInfNanPreserve, leaving overflow to the exponent-bit checks alone"},
    {"VKAMP_COOPMAT", {"auto", "0", "1", "emulate", "khr"}, "", "auto", "engine",
     "fp16 GEMMs: tensor cores only for the classes a tuning on this device measured faster, else the shader "
     "GEMM (auto); the shader GEMM (0); tensor cores (1: NV build where the device runs it, else KHR); the "
     "tensor-core tiling emulated (emulate); tensor cores through VK_KHR_cooperative_matrix (khr)"},
    {"VKAMP_GEMM_TUNE", {"off", "cached", "on"}, "", "cached", "engine",
     "GEMM kernels per class: compiled-in (off), from the per-device cache vkamp-bench gemm --tune writes "
     "(cached), or also tuned on first use and saved (on)"},
    {"VKAMP_PIPELINE_CACHE", {}, "a file, or none",
     "$XDG_CACHE_HOME (else ~/.cache; Windows: %LOCALAPPDATA%)/vkamp/pipelines-<uuid>.bin",
     "engine", "where compiled pipelines are kept between runs"},
    {"VKAMP_HOST_VALIDATION", {"0", "1"}, "", "0", "engine",
     "1: the validation layer is added outside the process (Wine: the host's VK_INSTANCE_LAYERS), so take "
     "its messages without listing it"},
    {"VKAMP_VULKAN_LOADER", {}, "a file or library name", "libvulkan.so.1 (Windows: vulkan-1.dll)", "engine",
     "the Vulkan loader to open at the first Vulkan call (tests take a missing one)"},
    {"VKAMP_TEST_MAX_BINDING", {}, "a size (64K, 3M, 2G or bytes; at least 4K)", "the device's maxStorageBufferRange",
     "engine", "tests: bind at most this much in one descriptor, so small models take every chunked path"},
    {"VKAMP_TEST_MAX_ALLOCATION", {}, "a size (at least 4K)", "the device's maxMemoryAllocationSize and maxBufferSize",
     "engine", "tests: allocate device memory in blocks of at most this much"},
    {"VKAMP_TEST_MEMORY_BUDGET", {}, "a size (at least 4K)", "the device-local heap's budget (or size)", "engine",
     "tests: plan runs against this budget, as on a device that has only this much"},
    {"VKAMP_LOGIT_CHUNK", {}, "auto, off or a row count", "auto: chunks of at most 32 MiB of logits", "engine",
     "a language model's training loss: the logits a chunk of rows (tokens) at a time, or whole (off); same bits"},
    // ---- which kernel an op takes: KernelPaths, filled from these when a Context is made
    // (kernel_paths.cpp) where the code leaves a field unset
    {"VKAMP_GEMM_TILED", {"0", "1"}, "", "1 on GPUs, 0 on CPU drivers", "engine",
     "the GEMM through shared-memory tiles (1) or direct loads (0; any value but 1)"},
    {"VKAMP_GEMM_KERNEL", {}, "shader or mma-wW-fMxN-kK-db|sb", "the tuner's choice", "engine",
     "every fp16 GEMM that may take tensor cores on this kernel (tests, benchmarks)"},
    {"VKAMP_GEMM_BLOCK", {}, "RxC, each 1 to 16", "16x8 where C is at least 64 x 64, else 4x4", "engine",
     "the direct GEMM's outputs per thread (other values are refused)"},
    {"VKAMP_GEMM_SG", {"0", "1"}, "", "1", "engine",
     "0: the direct GEMM's 16-row blocks load all of A, with no subgroup broadcast"},
    {"VKAMP_GEMM_LOADS", {"texel", "storage"}, "", "texel on CPU drivers, storage elsewhere", "engine",
     "how the direct GEMM reads its operands (any value but texel: storage)"},
    {"VKAMP_ROW_KERNEL", {"thread", "group"}, "", "thread on CPU drivers, group elsewhere", "engine",
     "the row kernels (LayerNorm, softmax): one invocation or one workgroup per row"},
    {"VKAMP_EMBEDDING_GRAD", {"scan", "scatter"}, "", "scatter on CPU drivers, scan elsewhere", "engine",
     "how the embedding's token gradient is summed (the same bits either way)"},
    {"VKAMP_POOL_GRAD", {"window", "gather"}, "", "window where windows do not overlap", "engine",
     "the pooling backward: one invocation per window or per input (the same bits)"},
    {"VKAMP_COLUMN_SUM", {"gpu", "cpu"}, "", "gpu on GPUs, cpu on CPU drivers", "engine",
     "how column sums (bias and LayerNorm gradients) split their rows"},
    {"VKAMP_MMA_LANES", {"16", "32", "64"}, "", "32", "engine",
     "the emulated tensor-core GEMM's and attention's warp width (Intel's subgroups are 16 wide, AMD's 64); "
     "tensor cores take the device's subgroup size"},
    {"VKAMP_ATTENTION", {"fused", "mma", "materialized"}, "",
     "attention_defaults.txt: materialized (the fused paths are unmeasured on GPUs)", "engine",
     "attention through FlashAttention-2 tiles (fused; head sizes up to 128), the same on 16 x 16 fp16 fragments "
     "(mma: tensor cores where the GEMM has them, else their emulation; fp16 only, else fused), or stored "
     "probabilities"},
    {"VKAMP_ATTENTION_TILES", {}, "gpu, cpu or RxT (e.g. 64x32)", "cpu on CPU drivers, gpu elsewhere", "engine",
     "the fused attention's tile sizes: 64 rows a workgroup x 32 keys a tile (gpu), 16 x 16 (cpu), or R x T "
     "(vkamp-bench attention --tiles sweeps them; mma: multiples of 16)"},
    {"VKAMP_FUSE_EPILOGUE", {"0", "1"}, "", "1", "engine",
     "0: bias and activation run as their own kernels, not in the GEMM's epilogue"},
    {"VKAMP_FUSE_RESIDUAL_GRAD", {"0", "1"}, "", "1", "engine",
     "0: a residual add's backward copies dY into each input's gradient instead of leaving it in dY's buffer, "
     "where the stream's LayerNorm backward adds its part"},
    {"VKAMP_FUSE_ACT_GRAD", {"0", "1"}, "", "1", "engine",
     "0: a fused activation's backward (dZ = dY f'(z)) runs as its own kernel, not in the epilogue of the "
     "next linear's dX GEMM (on only with VKAMP_FUSE_EPILOGUE)"},
    // ---- the applications
    {"VKAMP_SHARED_DATA_DIR", {}, "a directory", "/usr/share (Windows: the program's folder)", "samples",
     "where datasets/fashion-mnist and games/fortunes are looked for (scripts/wine-run.sh: the host's)"},
    {"VKAMP_FASHION_MNIST_DIR", {}, "a directory",
     "/usr/share/datasets/fashion-mnist (Windows: datasets\\fashion-mnist beside the program)", "samples",
     "where the Fashion-MNIST samples find their data without --data"},
    // ---- test-only (tests/support) and the scripts': never read by a vkamp binary
    {"VKAMP_ALLOW_NO_DEVICE", {"0", "1"}, "", "0", "tests",
     "1: without a usable device the GPU tests skip instead of failing"},
    {"VKAMP_TEST_VALIDATION", {"0", "1"}, "", "1", "tests",
     "0: the GPU tests run without the Khronos validation layer (a machine that has none: the Windows "
     "package's run-tests.cmd sets it when the layer is missing)"},
    {"VKAMP_TEST_SEED", {}, "an integer", "a fresh seed per test", "tests", "replay a randomized test's inputs"},
    {"VKAMP_GOLDEN_DIR", {}, "a directory", "the compiled-in tests/golden/fixtures", "tests",
     "where the golden tests find their fixtures (the test bundle moves them)"},
    {"VKAMP_DATA_FIXTURES", {}, "a directory", "the compiled-in tests/data/fixtures", "tests",
     "where the data tests find their fixtures"},
    {"VKAMP_IO_FIXTURES", {}, "a directory", "the compiled-in tests/io/fixtures", "tests",
     "where the io tests find their fixtures"},
    {"VKAMP_EXAMPLES_DIR", {}, "a directory", "the compiled-in examples/", "tests",
     "where the config tests find the example files"},
    {"VKAMP_SAMPLES_DIR", {}, "a directory", "the build's samples/", "tests",
     "where the CLI tests find the binaries they run"},
    {"VKAMP_BUILD", {}, "a directory", "build/", "scripts", "the build directory of scripts/*.sh"},
    {"VKAMP_TEST_TIMEOUT", {}, "seconds", "1800", "scripts", "each suite's time limit in the test bundle"},
  };
  return knobs;
}

bool EnvKnob::test_only() const { return std::strcmp(reader, "tests") == 0; }

std::string EnvKnob::values_text() const {
  if (choices.empty()) return values;
  std::string s;
  for (const std::string& c : choices) s += (s.empty() ? "" : " | ") + c;
  return s;
}

const EnvKnob& env_knob_row(const char* name) {
  for (const EnvKnob& k : env_knobs())
    if (std::strcmp(k.name, name) == 0) return k;
  throw std::logic_error(std::string(name) + " is read but not listed in vkamp's knob table (knobs.cpp)");
}

std::optional<std::string> env_knob(const char* name) {
  env_knob_row(name);
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> env_text(const char* name) {
  std::optional<std::string> v = env_knob(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

bool env_switch(const char* name, bool fallback) {
  const std::optional<std::string> v = env_text(name);
  return v ? *v != "0" : fallback;
}

std::string env_choice(const char* name) {
  const EnvKnob& row = env_knob_row(name);
  const std::optional<std::string> v = env_text(name);
  if (!v) return row.fallback;
  return knob_choice(name, *v);
}

std::string knob_choice(const char* name, const std::string& value) {
  const EnvKnob& row = env_knob_row(name);
  for (const std::string& c : row.choices)
    if (value == c) return value;
  // "VKAMP_COOPMAT is auto, 0, 1, emulate or khr, not "x"".
  std::string list;
  for (size_t i = 0; i < row.choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == row.choices.size() ? " or " : ", ") + row.choices[i];
  throw ConfigError(std::string(name) + " is " + list + ", not \"" + value + "\"");
}

std::optional<std::pair<uint32_t, uint32_t>> parse_dims(const std::string& text) {
  unsigned r = 0, c = 0;
  char end = 0;
  if (std::sscanf(text.c_str(), "%ux%u%c", &r, &c, &end) != 2 || r == 0 || c == 0) return std::nullopt;
  return std::pair<uint32_t, uint32_t>{r, c};
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  platform::set_env(name, value);
}

ScopedEnv::~ScopedEnv() { platform::set_env(name_, old_ ? old_->c_str() : nullptr); }

}  // namespace vkamp
