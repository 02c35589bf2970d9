// test_shaders at other subgroup sizes: lavapipe runs 8 lanes by default,
// 4 under LP_NATIVE_VECTOR_WIDTH=128 and 16 under 512, while GPUs run 8 to
// 64 (Intel's compiler picks per pipeline, AMD 32 or 64, NVIDIA 32). Every
// shader must be right at any of them (docs/design.md, "Limits every kernel
// keeps"), so these variants run every op's tests in fp32 and fp16 on the
// default paths at 4 and at 16 lanes: each op's cases at every size, less
// the GEMM's tests that compile several pipelines a shape (at one shape, in
// an entry of their own) and what kLeftOut lists, and not the real models'
// sizes (RealSize/, Large/: lavapipe's loop limits, not lanes). Together
// the six entries took 140 CPU-s, cold (docs/testing.md).
//
// Each is an entry labelled `subgroups` as well as `shaders`, in the default
// run. The test main checks that lavapipe really reports the lanes asked for
// (every test fails if not) and skips, saying so, on any other driver,
// where the variable means nothing and the device keeps its own size.
//
// Mesa's on-disk shader cache keys lavapipe's compiled shaders without the
// vector width (Mesa 22.3: the same keys at 128, 256 and 512 bits, different
// code), so a run at 4 lanes after one at 8 would load 8-lane code and test
// nothing new, and the default run would then load 4-lane code. These
// entries keep out of the cache (MESA_SHADER_CACHE_DISABLE): they compile
// cold every time, which is what CI measures anyway (docs/testing.md has
// their times).
#include <string>
#include <vector>

#include "support/path_variants.hpp"

namespace vkamp::test {
namespace {

// The GEMM's tests that compile several pipelines a shape, at one shape
// that takes partial tiles both ways (7 x 33 over k = 127).
const char* const kGemmCostly[] = {"Gemm.Alpha", "Gemm.Batched", "Gemm.ColumnBlocks", "GemmEpilogue."};
const char* const kGemmShape = "m7_n33_k127";

// What every_op leaves out besides kGemmCostly: the texel-against-storage
// comparison (it sets the loads itself: a path test), the products and
// losses past one binding (GemmBindingChunks, LossesVocabulary: binding
// limits, at sizes that run for seconds on kernels the other tests take;
// 11 to 43 s and 5 to 16 s of an entry, loaded), the GEMM's backward
// products at 127 x 127 x 127 (the forward takes that 16 x 8 block) and
// attention's largest shape (up to 7 s; six others stay).
const char* const kLeftOut[] = {"Shaders/Gemm.TexelAndStorageLoadsGiveTheSameBits*", "Shaders/GemmBindingChunks.*",
                                "Shaders/LossesVocabulary.*", "Shaders/Gemm.LinearBackward*_m127_n127_k127",
                                "Shaders/Attention.ForwardAndBackward/*_b2_t67_c128_h2"};

// Every op's cases in one format: the parameterised suites
// (Shaders/<op>.<test>/<fmt>_<size>, or /<fmt> alone), less kGemmCostly and kLeftOut.
std::string every_op(const std::string& fmt) {
  std::string negative;
  for (const char* t : kGemmCostly) negative += std::string(negative.empty() ? "" : ":") + "Shaders/" + t + "*";
  for (const char* t : kLeftOut) negative += std::string(":") + t;
  return "Shaders/*/" + fmt + "_*:Shaders/*/" + fmt + "-" + negative;
}

// The GEMM's costly tests at kGemmShape, both formats.
std::string gemm_costly() {
  std::string f;
  for (const char* fmt : {"fp32", "fp16"})
    for (const char* t : kGemmCostly)
      f += std::string(f.empty() ? "" : ":") + "Shaders/" + t + "*/" + fmt + "_" + kGemmShape;
  return f;
}

std::vector<PathVariant> variants() {
  std::vector<PathVariant> all;
  for (const uint32_t lanes : {4u, 16u}) {
    const std::string name = "subgroups_" + std::to_string(lanes) + "_lanes_";
    // lavapipe's vector width in bits is 32 lanes' worth of fp32.
    const std::vector<std::string> env = {"LP_NATIVE_VECTOR_WIDTH=" + std::to_string(32 * lanes),
                                          "MESA_SHADER_CACHE_DISABLE=true"};
    PathVariant v{.env = env, .cost = 50, .label = "subgroups", .lavapipe_lanes = lanes};
    for (const char* fmt : {"fp32", "fp16"}) {
      v.name = name + fmt;
      v.filter = every_op(fmt);
      all.push_back(v);
    }
    v.name = name + "gemm";
    v.filter = gemm_costly();
    all.push_back(v);
  }
  return all;
}

const bool registered = add_path_variants(variants());

}  // namespace
}  // namespace vkamp::test
