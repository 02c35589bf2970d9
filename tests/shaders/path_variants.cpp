// test_shaders' path variants (support/path_variants.hpp): the code paths
// the default device does not take, run on it anyway, each on the cases
// that reach what the path changes. Compiling pipelines is nearly the whole
// cost of a case on lavapipe, so the GEMM's variants take its cheap tests at
// every shape and the costly ones at three shapes (docs/testing.md, "Path
// variants", has the measurements behind each choice).
#include <string>
#include <vector>

#include "support/path_variants.hpp"

namespace vkamp::test {
namespace {

const char* const kFormats[] = {"fp32", "fp16", "bf16", "cb16"};

// Three shapes that between them take the GEMM plans' edges: 7 x 33 (8
// threads wide, partial tiles both ways), 1000 x 33 (several tiles along m)
// and 6 x 25 over k = 4099 (split over k).
const char* const kGemmVariantShapes[] = {"m7_n33_k127", "m1000_n33_k7", "m6_n25_k4099"};

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ":") + p;
  return s;
}

// Each of the ':'-separated patterns at one format's cases.
std::string at_format(const std::string& patterns, const std::string& fmt) {
  std::string out, rest = patterns;
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    out += (out.empty() ? "" : ":") + rest.substr(0, colon) + "/" + fmt + "_*";
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  return out;
}

// Shaders/<test>* at each of the three shapes, in one format.
std::string gemm_tests_at(const std::string& fmt, const std::vector<std::string>& tests) {
  std::vector<std::string> f;
  for (const char* shape : kGemmVariantShapes)
    for (const std::string& t : tests) f.push_back("Shaders/" + t + "*/" + fmt + "_" + shape);
  return join(f);
}

// A GEMM path's set: the linear products and NaN rows at every shape, the
// rest of the GEMM's tests and the epilogue's (forward and backward) at the
// three shapes. Not the texel/storage comparison, which sets the loads itself.
struct GemmSet {
  std::string linear, other, epilogue;
};
GemmSet gemm_set(const std::string& fmt) {
  return {"Shaders/Gemm.Linear*/" + fmt + "_*:Shaders/Gemm.NanAndInf*/" + fmt + "_*",
          gemm_tests_at(fmt, {"Gemm.Alpha", "Gemm.Batched", "Gemm.ColumnBlocks"}),
          gemm_tests_at(fmt, {"GemmEpilogue."})};
}

std::vector<PathVariant> gemm_variant(const std::string& name, const KernelPaths& paths,
                                      std::vector<std::string> formats = {kFormats, kFormats + 4},
                                      bool fp16_storage_only = false) {
  std::vector<PathVariant> out;
  for (const std::string& fmt : formats) {
    const GemmSet s = gemm_set(fmt);
    out.push_back({name + "_" + fmt, s.linear + ":" + s.other + ":" + s.epilogue, paths, fp16_storage_only});
  }
  return out;
}

// One variant per storage format, <name>_<format>: a whole variant in one
// process ran past 200 s on an H100 under the validation layer, and a split
// by format compiles no pipeline twice (each format has its own shaders).
std::vector<PathVariant> by_format(const std::string& name, const std::string& patterns, const KernelPaths& paths,
                                   std::vector<std::string> env = {}) {
  std::vector<PathVariant> out;
  for (const char* fmt : kFormats)
    out.push_back({name + "_" + fmt, at_format(patterns, fmt), paths, false, std::nullopt, env});
  return out;
}

KernelPaths paths(void (*set)(KernelPaths&)) {
  KernelPaths p;
  set(p);
  return p;
}

void add(std::vector<PathVariant>& all, std::vector<PathVariant> more) {
  for (PathVariant& v : more) all.push_back(std::move(v));
}

std::vector<PathVariant> variants() {
  std::vector<PathVariant> all;
  // The shared-memory GEMM GPUs take (lavapipe takes the direct one).
  add(all, gemm_variant("gemm_tiled_path", paths([](KernelPaths& p) { p.gemm_tiled = true; })));

  // The direct GEMM's 16 x 8 register blocks (the default run takes them
  // only at 127 x 127) on every shape, through storage buffers, with the
  // subgroup broadcast of A wherever the tile is 8 or more threads wide. A
  // pipeline depends on the plan's workgroup, not on the shape, and what the
  // format changes (loads, stores) is the same code at every block: so fp32
  // takes the linear products and NaN rows at every shape (nine plans), the
  // 16-bit formats at the three shapes; every format takes alpha and the
  // column blocks at those three and the batches at 1000 x 33. Not the fused
  // epilogue (its store is the same code at every block), nor all formats
  // in one process (lavapipe slowed as the 16 x 8 pipelines piled up).
  const KernelPaths block_16x8 = paths([](KernelPaths& p) {
    p.gemm_tiled = false;
    p.gemm_block = KernelPaths::Dims{16, 8};
    p.gemm_texel_loads = false;
  });
  for (const char* fmt : kFormats) {
    const std::string f = fmt;
    const std::string other =
        "Shaders/Gemm.Batched*/" + f + "_m1000_n33_k7:" + gemm_tests_at(f, {"Gemm.Alpha", "Gemm.ColumnBlocks"});
    if (f == "fp32") {
      all.push_back({"gemm_block_16x8_fp32_linear", gemm_set(f).linear, block_16x8, false, {}, {}, 50});
      all.push_back({"gemm_block_16x8_fp32_other", other, block_16x8, false, {}, {}, 50});
    } else {
      const std::string linear = gemm_tests_at(f, {"Gemm.Linear", "Gemm.NanAndInf"});
      all.push_back({"gemm_block_16x8_" + f, linear + ":" + other, block_16x8, false, {}, {}, 50});
    }
  }
  // The direct GEMM's operand loads both ways whatever the device.
  add(all, gemm_variant("gemm_storage_loads", paths([](KernelPaths& p) {
                          p.gemm_tiled = false;
                          p.gemm_texel_loads = false;
                        })));
  add(all, gemm_variant("gemm_texel_loads", paths([](KernelPaths& p) {
                          p.gemm_tiled = false;
                          p.gemm_texel_loads = true;
                        })));

  // The row kernels (LayerNorm, RMSNorm, attention's softmax) both ways: one
  // workgroup per row (GPUs) and one invocation per row (CPU drivers), on
  // attention's materialized path (the softmax's row kernel). The group path
  // keeps LLVM's passes (GALLIVM_PERF empty; support/test_main.cpp).
  const std::string row_tests = "Shaders/LayerNorm*:Shaders/RmsNorm*:Shaders/Attention*";
  add(all, by_format("row_group_path", row_tests, paths([](KernelPaths& p) {
                       p.row_per_thread = false;
                       p.attention = AttentionPath::materialized;
                     }),
                     {"GALLIVM_PERF="}));
  add(all, by_format("row_thread_path", row_tests, paths([](KernelPaths& p) {
                       p.row_per_thread = true;
                       p.attention = AttentionPath::materialized;
                     })));
  // The fused attention at both tile defaults, whatever the device.
  add(all, by_format("attention_fused_cpu_tiles", "Shaders/Attention*", paths([](KernelPaths& p) {
                       p.attention = AttentionPath::fused;
                       p.attention_tiles = "cpu";
                     })));
  add(all, by_format("attention_fused_gpu_tiles", "Shaders/Attention*", paths([](KernelPaths& p) {
                       p.attention = AttentionPath::fused;
                       p.attention_tiles = "gpu";
                     })));
  // The fused path on 16 x 16 fragments, its multiply-accumulate emulated,
  // at both tile defaults; fp16 only.
  for (const char* tiles : {"cpu", "gpu"}) {
    KernelPaths p;
    p.attention = AttentionPath::mma;
    p.gemm_mma = GemmMma::emulated;
    p.attention_tiles = tiles;
    all.push_back({std::string("attention_mma_emulated_") + tiles + "_tiles", "Shaders/Attention*/fp16_*", p});
  }
  // Its warps at Intel's 16 lanes and AMD's 64: each lane's share of the
  // fragments and output rows. 64 lanes take three shapes (heads of 4, 16
  // and 64, one of 130 positions): each pipeline compiles for seconds there.
  const std::pair<uint32_t, std::string> attention_lanes[] = {
      {16, "Shaders/Attention.ForwardAndBackward/fp16_*:Shaders/Attention.NanReachesOnlyWhatDependsOnIt/fp16_*"},
      {64, "Shaders/Attention.ForwardAndBackward/fp16_b1_t130_c8_h2:Shaders/Attention.ForwardAndBackward/"
           "fp16_b1_t33_c48_h3:Shaders/Attention.ForwardAndBackward/fp16_b2_t67_c128_h2"}};
  for (const auto& [lanes, filter] : attention_lanes) {
    KernelPaths p;
    p.attention = AttentionPath::mma;
    p.gemm_mma = GemmMma::emulated;
    p.mma_lanes = lanes;
    all.push_back({"attention_mma_emulated_" + std::to_string(lanes) + "_lanes", filter, p});
  }

  // The column sums (bias, LayerNorm's and RMSNorm's parameters, BatchNorm)
  // in GPUs' many short chunks of rows.
  add(all, by_format("column_sum_gpu", "Shaders/Bias*:Shaders/LayerNorm*:Shaders/RmsNorm*:Shaders/BatchNorm*",
                     paths([](KernelPaths& p) { p.column_sum_gpu = true; })));
  // The embedding's token gradient both ways.
  for (bool scatter : {false, true}) {
    KernelPaths p;
    p.embedding_scatter = scatter;
    all.push_back({std::string("embedding_grad_") + (scatter ? "scatter" : "scan") + "_path", "Shaders/Embedding*", p});
  }
  // Pooling's backward both ways where windows do not overlap.
  add(all, by_format("pool_grad_gather_path", "Shaders/Pool*",
                     paths([](KernelPaths& p) { p.pool_grad_window = false; })));
  add(all, by_format("pool_grad_window_path", "Shaders/Pool*",
                     paths([](KernelPaths& p) { p.pool_grad_window = true; })));

  // Without SignedZeroInfNanPreserve (lavapipe offers it): the ops whose NaN
  // handling rests on the shaders' own exponent-bit tests (ReLU, max
  // pooling, attention, the GEMM's epilogue and its backward form's NaN rows).
  for (const char* fmt : kFormats) {
    const std::string f = fmt;
    const std::string filter = "Shaders/Activation*/" + f + "_*:Shaders/Pool.*/" + f + "_*:Shaders/PoolWindows.*/" +
                               f + "_*:Shaders/Attention*/" + f + "_*:" +
                               gemm_tests_at(f, {"GemmEpilogue.FusedEpilogue", "GemmEpilogue.ActivationBackwardKeepsNan"});
    all.push_back({"no_inf_nan_preserve_" + f, filter, {}, false, false});
  }

  // The tensor-core GEMM with its multiply-accumulate emulated: the GEMM's
  // path-variant set in fp16 on the tuner's kernel, then attention (whose
  // causal products take the family too), in four entries.
  const KernelPaths mma_emulated = paths([](KernelPaths& p) {
    p.gemm_mma = GemmMma::emulated;
    p.attention = AttentionPath::materialized;
  });
  const GemmSet fp16 = gemm_set("fp16");
  all.push_back({"gemm_mma_emulated_linear", fp16.linear, mma_emulated});
  all.push_back({"gemm_mma_emulated_other", fp16.other, mma_emulated});
  all.push_back({"gemm_mma_emulated_epilogue", fp16.epilogue, mma_emulated});
  all.push_back({"gemm_mma_emulated_attention", "Shaders/Attention*/fp16_*", mma_emulated});
  // The family's own tests (test_gemm_mma.cpp), emulated, on a covering set
  // of shapes, in four entries.
  const KernelPaths emulated = paths([](KernelPaths& p) { p.gemm_mma = GemmMma::emulated; });
  all.push_back({"gemm_mma_family_shapes", "GemmMmaFamily.CoveringShapes*:GemmMmaFamily.Takes*", emulated});
  all.push_back({"gemm_mma_family_unaligned", "GemmMmaFamily.Unaligned*", emulated});
  all.push_back({"gemm_mma_family_causal", "GemmMmaFamily.Causal*", emulated});
  all.push_back({"gemm_mma_family_split_lanes", "GemmMmaFamily.SplitK*:GemmMmaFamily.Emulated*", emulated});
  // The emulation's warps at 16 and 64 lanes: the forward, the transposed
  // dW and the NaN rows and columns. At 16 lanes each test is an entry of
  // its own, and the NaN test leaves out the shapes split over k (the other
  // two take them there, and the 64-lane entry takes all).
  std::vector<std::string> lanes_tests;
  for (const char* t : {"LinearForward", "LinearBackwardWeight", "NanAndInfReachOnlyTheirRowsAndColumns"}) {
    KernelPaths p = emulated;
    p.mma_lanes = 16;
    std::string filter = std::string("Shaders/Gemm.") + t + "/fp16_*";
    lanes_tests.push_back(filter);
    if (std::string(t) == "NanAndInfReachOnlyTheirRowsAndColumns") filter += "-*_k1000:*_k4099";
    all.push_back({std::string("gemm_mma_emulated_16_lanes_") + t, filter, p});
  }
  KernelPaths lanes_64 = emulated;
  lanes_64.mma_lanes = 64;
  all.push_back({"gemm_mma_emulated_64_lanes", join(lanes_tests), lanes_64});

  // The same on tensor cores: every test skips, saying why, on a device
  // without them (lavapipe), and runs on one with them. NV's build, then the
  // KHR build (tools/spirv_khr writes it from the NV one). Debian's
  // validation layer (1.3.239) predates VK_KHR_cooperative_matrix: its
  // SPIR-V check fails on the KHR capability and its parameter check on the
  // KHR feature struct in vkCreateDevice's chain, so the KHR entries turn
  // off the layer's shader checks and that one message id; the rest stays on.
  const std::string mma_tests = "Shaders/Gemm*/fp16_*:GemmMmaFamily.*:Shaders/Attention*/fp16_*";
  const std::string attention_mma_tests = "Shaders/Attention*/fp16_*:AttentionPath.Mma*";
  const std::vector<std::string> khr_layer = {"VK_LAYER_DISABLES=VK_VALIDATION_FEATURE_DISABLE_SHADERS_EXT",
                                              "VK_LAYER_MESSAGE_ID_FILTER=VUID-VkDeviceCreateInfo-pNext-pNext"};
  for (const bool khr : {false, true}) {
    KernelPaths gemm;
    gemm.gemm_mma = GemmMma::coopmat;
    if (khr) gemm.coopmat_api = CoopmatApi::khr;
    gemm.attention = AttentionPath::materialized;
    KernelPaths attention = gemm;
    attention.attention = AttentionPath::mma;
    const std::string build = khr ? "khr" : "coopmat";
    const std::vector<std::string> env = khr ? khr_layer : std::vector<std::string>{};
    all.push_back({"gemm_mma_" + build, mma_tests, gemm, false, {}, env});
    all.push_back({"attention_mma_" + build, attention_mma_tests, attention, false, {}, env});
  }

  // fp16 storage with fp32 math (devices without shaderFloat16): the GEMM's
  // set, then every other fp16 case, the real models' sizes in an entry of
  // their own (the `large` ones left out, as from the default run).
  add(all, gemm_variant("fp16_storage_only_gemm", {}, {"fp16"}, true));
  all.push_back({"fp16_storage_only_other", "*fp16_*:-Shaders/Gemm*:Large/*:RealSize/*", {}, true});
  all.push_back({"fp16_storage_only_real_size", "RealSize/*fp16_*", {}, true});
  return all;
}

const bool registered = add_path_variants(variants());

}  // namespace
}  // namespace vkamp::test
