// vkamp-info: lists every Vulkan device with its driver, API version,
// fp16/bf16/cooperative-matrix support, and the precision path vkamp takes;
// with --knobs, every setting and environment variable instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/cli.hpp"
#include "app/settings_table.hpp"
#include "vkamp/context.hpp"
#include "vkamp/device_info.hpp"
#include "vkamp/dist/communicator.hpp"
#include "vkamp/error.hpp"
#include "vkamp/instance.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/gemm_tuner.hpp"
#include "vkamp/platform.hpp"

namespace {

// vkamp-info's own flags; --device is the shared row (app/cli.hpp).
struct InfoOptions {
  bool validation = false;  // also VKAMP_VALIDATION=1
  bool knobs = false;
};

std::vector<vkamp::config::Setting<InfoOptions>> info_rows() {
  using vkamp::config::kGeneralGroup;
  return {
      vkamp::config::toggle<InfoOptions>(
          "validation", {kGeneralGroup, "", "load the Khronos validation layer (also VKAMP_VALIDATION=1)"},
          VKAMP_FIELD(validation)),
      vkamp::config::toggle<InfoOptions>("knobs",
                                         {kGeneralGroup, "",
                                          "list every setting (flag and config key) and every VKAMP_* environment "
                                          "variable, with values and defaults; no device needed"},
                                         VKAMP_FIELD(knobs)),
  };
}

const char* yes(bool b) { return b ? "yes" : "no"; }

// "NV  16x16x16 fp16 x fp16 -> fp32: the .coopmat build runs here", or why not.
std::string tensor_cores(const vkamp::DeviceInfo& d, vkamp::CoopmatApi api) {
  const std::string gap = d.tensor_core_gap(api);
  const char* build = api == vkamp::CoopmatApi::nv ? ".coopmat" : ".khr";
  return std::string(vkamp::coopmat_api_name(api)) + (api == vkamp::CoopmatApi::nv ? "  " : " ") +
         (gap.empty() ? std::string("16x16x16 fp16 x fp16 -> fp32: the ") + build + " build runs here"
                      : "none for vkamp: " + gap);
}

// The build an fp16 GEMM takes on this device under $VKAMP_COOPMAT, and why
// (Context's rules: NV where the device runs it, else KHR; khr forces KHR).
std::string fp16_gemm(const vkamp::DeviceInfo& d) {
  if (d.path() != vkamp::PrecisionPath::Fp16Arithmetic) return "shader GEMM (the fp16 storage path computes in fp32)";
  try {
    const vkamp::KernelPaths paths = vkamp::kernel_paths_from_env();
    const std::optional<vkamp::GemmMma> want = paths.gemm_mma;
    const std::optional<vkamp::CoopmatApi> forced =
        want == vkamp::GemmMma::coopmat ? paths.coopmat_api : std::nullopt;
    if (want == vkamp::GemmMma::emulated) return "emulated (the tensor-core tiling in plain GLSL: VKAMP_COOPMAT=emulate)";
    const vkamp::CoopmatApi api = forced.value_or(d.tensor_core_api());
    const std::string gap = forced ? d.tensor_core_gap(*forced) : d.tensor_core_gap();
    const std::string name = vkamp::coopmat_api_name(api);
    const std::string setting = std::string("VKAMP_COOPMAT=") + (forced ? "khr" : "1");
    // Why KHR where the device has not NV's build to offer.
    const std::string why_khr = !forced && api == vkamp::CoopmatApi::khr
                                    ? "; NV: " + d.tensor_core_gap(vkamp::CoopmatApi::nv) : "";
    if (want == vkamp::GemmMma::coopmat)
      return gap.empty() ? name + " tensor cores (" + setting + why_khr + ")"
                         : "none: " + setting + " stops a run here: " + gap;
    if (want == vkamp::GemmMma::off) return "shader GEMM (VKAMP_COOPMAT=0)";
    return gap.empty() ? "the tuner's kernel per class (below): " + name + " tensor cores only where a tuning on "
                         "this device measured them faster, else the shader GEMM (VKAMP_COOPMAT=auto" + why_khr +
                         "; =1 forces them, =0 turns them off)"
                       : "shader GEMM (no tensor cores for vkamp)";
  } catch (const std::exception& e) {
    return std::string("unknown: ") + e.what();
  }
}

// "fp16 yes  fp32 yes  fp64 no" for one float-controls property.
std::string per_width(const bool (&v)[3]) {
  return std::string("fp16 ") + yes(v[0]) + "  fp32 " + yes(v[1]) + "  fp64 " + yes(v[2]);
}

std::string denormals(const vkamp::DeviceInfo& d) {
  std::string s;
  const char* names[3] = {"fp16", "fp32", "fp64"};
  for (int w = 0; w < 3; ++w) {
    const char* how = d.denorm_preserve[w] && d.denorm_flush_to_zero[w] ? "preserve or flush-to-zero"
                      : d.denorm_preserve[w]                            ? "preserve"
                      : d.denorm_flush_to_zero[w]                       ? "flush-to-zero"
                                                                        : "none (driver's choice)";
    s += std::string(w ? "; " : "") + names[w] + " " + how;
  }
  return s;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The kernel each fp16 GEMM class of the classes this device has a choice
// for (its cache file's and the linear layers of the bundled models') runs
// on, and where the choice came from: a Context on the device, as a run
// would make one.
void print_gemm_kernels(const vkamp::DeviceInfo& d, bool validation) {
  try {
    // Listing never tunes: VKAMP_GEMM_TUNE=on reads the cache as cached does.
    vkamp::ContextOptions opt;
    if (vkamp::kernel_paths_from_env().gemm_tune == vkamp::GemmTuneMode::on) opt.paths.gemm_tune = vkamp::GemmTuneMode::cached;
    opt.device = std::to_string(d.index);
    opt.validation = validation;
    opt.pipeline_cache = "none";
    vkamp::Context ctx(opt);
    if (ctx.gemm_mma() == vkamp::GemmMma::off) {
      std::printf("      GEMM kernels    the shader GEMM for every class (no tensor-core GEMM on this context)\n");
      return;
    }
    auto& tuner = vkamp::ops::gemm_tuner(ctx);
    using vkamp::ops::Gemm;
    std::vector<Gemm> products;
    for (const auto& [cls, c] : tuner.table()) products.push_back(vkamp::ops::gemm_class_example(cls));
    // A linear layer's three products (forward, dX, dW) at batch x in -> out:
    // charlm medium's 64 x 256 tokens, 384 -> 1536 and back; the MLP's batch
    // 128, 784 -> 256.
    for (auto [batch, in, out] : {std::array<uint32_t, 3>{16384, 384, 1536}, {16384, 1536, 384}, {128, 784, 256}}) {
      products.push_back({.m = batch, .n = out, .k = in, .trans_b = true});
      products.push_back({.m = batch, .n = in, .k = out});
      products.push_back({.m = out, .n = in, .k = batch, .trans_a = true});
    }
    for (const Gemm& g : products) tuner.choose(vkamp::Format::F16, g);
    std::printf("      GEMM kernels    cache %s%s\n", tuner.path().empty() ? "(none)" : tuner.path().c_str(),
                tuner.table().empty() ? " (no tuned rows: the compiled-in defaults)" : "");
    for (const auto& u : tuner.used())
      std::printf("        %-10s %-22s %s\n", u.cls.c_str(), u.kernel.c_str(), u.source.c_str());
  } catch (const vkamp::Error& e) {
    std::printf("      GEMM kernels    unknown: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  namespace app = vkamp::app;
  vkamp::app::RunOptions run;
  InfoOptions info;
  info.validation = vkamp::validation_requested_by_env();
  const InfoOptions info_defaults = info;
  const std::vector<vkamp::config::Setting<InfoOptions>> rows = info_rows();
  std::vector<app::Flag> flags = app::shared_flags(run, run, {"device"});
  flags.front().help.front().meaning =
      "mark the device a vkamp run would pick for SEL: an index or a name substring";
  flags.front().help.front().shown_default = "$VKAMP_DEVICE, else the first discrete GPU, then integrated, virtual, CPU";
  for (app::Flag& f : app::bind_rows(rows, info, info_defaults)) flags.push_back(std::move(f));
  const app::Program program{"vkamp-info", "[--device SEL] [--validation] [--knobs]",
                             "Lists every Vulkan device and the precision path vkamp will use on it.", false, ""};
  if (int status = app::parse_or_exit(program, argc, argv, flags); status >= 0) return status;
  if (info.knobs) {
    std::printf("%s\n%s", app::settings_table().c_str(), app::env_knobs_table().c_str());
    return 0;
  }
  const bool validation = info.validation;
  std::string selector = run.device;
  if (selector.empty()) selector = vkamp::env_text("VKAMP_DEVICE").value_or("");

  try {
    vkamp::Instance instance(validation);
    auto devices = vkamp::probe_devices(instance);
    size_t chosen = vkamp::select_device(devices, selector);
    std::printf("%s: %zu Vulkan device(s)%s\n", vkamp::app::version_line("vkamp").c_str(), devices.size(),
                instance.validation() ? ", validation on" : "");
    std::printf("MPI: %s\n\n", vkamp::dist::built_with_mpi()
                                    ? "on (data-parallel training under mpirun)"
                                    : "off in this build, one process (Windows builds have no MPI)");
    for (const auto& d : devices) {
      std::printf("%s [%u] %s (%s)\n", d.index == chosen ? "*" : " ", d.index, d.name.c_str(),
                  vkamp::device_type_name(d.type));
      std::printf("      driver          %s\n", d.driver.c_str());
      std::printf("      Vulkan          %s\n", vkamp::api_version_string(d.api_version).c_str());
      std::printf("      shaderFloat16   %-5s  storageBuffer16BitAccess %s\n", yes(d.shader_float16),
                  yes(d.storage_buffer_16bit));
      std::printf("      bfloat16 ext    %-5s  cooperative matrix       KHR %s, NV %s\n", yes(d.bfloat16),
                  yes(d.cooperative_matrix), yes(d.cooperative_matrix_nv));
      for (const auto& s : d.cooperative_matrix_shapes)
        std::printf("      %-15s %-3s %s\n", &s == &d.cooperative_matrix_shapes.front() ? "matrix shapes" : "", s.api,
                    s.describe().c_str());
      std::printf("      subgroup        %u lanes: %s\n", d.subgroup_size,
                  vkamp::subgroup_ops_string(d.subgroup_ops).c_str());
      std::printf("      timestamps      %s (%u bits, %.3g ns/tick)\n", yes(d.timestamps),
                  d.timestamp_valid_bits, d.timestamp_period_ns);
      std::printf("      memory          %s device-local%s, %u B shared per workgroup\n",
                  mib(d.device_local_bytes).c_str(), d.unified_memory ? " (unified)" : "",
                  d.max_shared_memory);
      std::printf("      one binding     %s (maxStorageBufferRange), offsets aligned to %llu B\n",
                  mib(d.max_storage_range).c_str(), (unsigned long long)d.storage_offset_alignment);
      std::printf("      one allocation  %s (maxMemoryAllocationSize), one buffer %s (maxBufferSize)\n",
                  mib(d.max_allocation).c_str(),
                  d.max_buffer == UINT64_MAX ? "not reported (Vulkan 1.2 or older)" : mib(d.max_buffer).c_str());
      for (size_t h = 0; h < d.heaps.size(); ++h)
        std::printf("      heap %zu          %s%s, budget %s (%s)\n", h, mib(d.heaps[h].size).c_str(),
                    d.heaps[h].device_local ? " device-local" : "", mib(d.heaps[h].budget).c_str(),
                    d.memory_budget ? "VK_EXT_memory_budget" : "no VK_EXT_memory_budget: the heap's size");
      if (d.unified_memory) std::printf("      shared memory   the device's memory is the host's: its budget is shared with every program\n");
      if (!d.capped.empty()) std::printf("      lowered         %s (tests' caps)\n", d.capped.c_str());
      if (d.float_controls) {
        std::printf("      inf/NaN keep    %s (SignedZeroInfNanPreserve)\n", per_width(d.inf_nan_preserve).c_str());
        std::printf("      denormal modes  %s\n", denormals(d).c_str());
      } else {
        std::printf("      float controls  not reported (Vulkan 1.1 without VK_KHR_shader_float_controls)\n");
      }
      const bool keep16 = d.float_controls && d.inf_nan_preserve[0], keep32 = d.float_controls && d.inf_nan_preserve[1];
      std::printf("      overflow checks exponent-bit tests%s%s%s\n",
                  keep16 || keep32 ? ", SignedZeroInfNanPreserve requested in every kernel for " : " only",
                  keep32 ? "fp32" : "", keep16 ? (keep32 ? " and fp16" : "fp16") : "");
      std::printf("      precision path  %s%s%s\n", vkamp::precision_path_name(d.path()),
                  d.unsupported_reason.empty() ? "" : ": ", d.unsupported_reason.c_str());
      if (d.path() == vkamp::PrecisionPath::Fp16Arithmetic)
        std::printf("                      (bf16/cb16 are stored as 16 bits, computed in fp32)\n");
      // Tensor cores through each extension, and the build each format's
      // GEMM takes (Context's choice, from VKAMP_COOPMAT), with why.
      std::printf("      tensor cores    %s\n", tensor_cores(d, vkamp::CoopmatApi::nv).c_str());
      std::printf("                      %s\n", tensor_cores(d, vkamp::CoopmatApi::khr).c_str());
      std::printf("      GEMM builds     fp16: %s\n", fp16_gemm(d).c_str());
      std::printf("                      fp32: shader GEMM (the tensor-core GEMM is written for fp16 operands)\n");
      std::printf("                      bf16, cb16: shader GEMM (glslang 12 declares no bf16 cooperative matrix;"
                  " docs/tensor-cores.md)\n");
      if (d.index == chosen && d.path() == vkamp::PrecisionPath::Fp16Arithmetic) print_gemm_kernels(d, validation);
      std::printf("\n");
    }
    std::printf("* = the device vkamp uses%s%s\n", selector.empty() ? "" : " for --device ",
                selector.c_str());
  } catch (const vkamp::Error& e) {
    std::fprintf(stderr, "vkamp-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
