// Each shader handle of vkamp/gpu_abi/ against every embedded build of
// its shader, read from the SPIR-V: the handle's buffer count is the number
// of bindings the shader declares (0..n-1, descriptor set 0), and its Push
// is as large as the shader's push-constant block (none for void). The
// block's members come from the same header in C++ and GLSL; this checks
// the buffer count and the std430 sizes the header's static_asserts state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

// Every header of vkamp/gpu_abi/ that declares a shader handle (a generated
// list: each #include, then VKAMP_HANDLE(<handle>) for each handle the
// header declares; the test below includes it again, when the guards leave
// only the handles).
#define VKAMP_HANDLE(Handle)
#include "shader_interfaces.inc"
#undef VKAMP_HANDLE
#include "vkamp/kernel.hpp"
#include "vkamp/shader_registry.hpp"

namespace vkamp::test {
namespace {

// What a module declares: its bindings, and the byte size of its push-constant
// block (0 without one).
struct Interface {
  std::set<uint32_t> bindings;
  uint32_t push_bytes = 0;
};

Interface interface_of(const ShaderCode& s) {
  constexpr uint32_t kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeVector = 23, kOpTypeStruct = 30,
                     kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72;
  constexpr uint32_t kBinding = 33, kDescriptorSet = 34, kOffset = 35, kPushConstant = 9;
  std::map<uint32_t, uint32_t> scalar_bytes;                    // int and float types
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> vectors;    // id: component type, count
  std::map<uint32_t, std::vector<uint32_t>> structs;            // id: member types
  std::map<uint32_t, uint32_t> pointee;                         // pointer type: pointee
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> offsets;    // (struct, member): offset
  std::map<uint32_t, uint32_t> binding, set;                    // variable: decoration
  std::vector<uint32_t> push_variables_types;
  const uint32_t* m = s.words;
  for (size_t at = 5; at < s.word_count && (m[at] >> 16) != 0; at += m[at] >> 16) {
    const uint32_t op = m[at] & 0xFFFF, n = m[at] >> 16;
    const uint32_t* w = m + at;
    if (op == kOpTypeInt || op == kOpTypeFloat) scalar_bytes[w[1]] = w[2] / 8;
    if (op == kOpTypeVector) vectors[w[1]] = {w[2], w[3]};
    if (op == kOpTypeStruct) structs[w[1]] = std::vector<uint32_t>(w + 2, w + n);
    if (op == kOpTypePointer) pointee[w[1]] = w[3];
    if (op == kOpMemberDecorate && w[3] == kOffset) offsets[{w[1], w[2]}] = w[4];
    if (op == kOpDecorate && w[2] == kBinding) binding[w[1]] = w[3];
    if (op == kOpDecorate && w[2] == kDescriptorSet) set[w[1]] = w[3];
    if (op == kOpVariable && w[3] == kPushConstant) push_variables_types.push_back(w[1]);
  }
  auto bytes_of = [&](uint32_t type) -> uint32_t {
    if (auto v = vectors.find(type); v != vectors.end()) return scalar_bytes.at(v->second.first) * v->second.second;
    if (auto sc = scalar_bytes.find(type); sc != scalar_bytes.end()) return sc->second;
    ADD_FAILURE() << "a push-constant member of a type this test does not size";
    return 0;
  };
  Interface out;
  for (const auto& [var, b] : binding) {
    EXPECT_EQ(set.count(var) ? set.at(var) : 0u, 0u) << "binding " << b << " outside descriptor set 0";
    out.bindings.insert(b);
  }
  EXPECT_LE(push_variables_types.size(), 1u);
  for (uint32_t ptr : push_variables_types) {
    const uint32_t block = pointee.at(ptr);
    const std::vector<uint32_t>& members = structs.at(block);
    for (uint32_t i = 0; i < members.size(); ++i)
      out.push_bytes = std::max(out.push_bytes, offsets.at({block, i}) + bytes_of(members[i]));
  }
  return out;
}

// The embedded builds of a handle's shader: "<name>" for a shader built
// once, "<name>.<format>[.<build>]" for one built per format.
template <class Shader>
std::vector<const ShaderCode*> builds_of() {
  const std::string name = Shader::name;
  std::vector<const ShaderCode*> out;
  for (const ShaderCode* s : all_shaders()) {
    const std::string key = s->name;
    if (Shader::per_format ? key.rfind(name + ".", 0) == 0 : key == name) out.push_back(s);
  }
  return out;
}

template <class Shader>
void check_handle() {
  SCOPED_TRACE(Shader::name);
  const std::vector<const ShaderCode*> builds = builds_of<Shader>();
  ASSERT_FALSE(builds.empty()) << "no embedded build of the shader (per_format wrong?)";
  std::set<uint32_t> want;
  for (uint32_t b = 0; b < Shader::buffers; ++b) want.insert(b);
  for (const ShaderCode* s : builds) {
    SCOPED_TRACE(s->name);
    const Interface got = interface_of(*s);
    EXPECT_EQ(got.bindings, want) << "the handle says " << Shader::buffers << " buffers";
    EXPECT_EQ(got.push_bytes, TypedKernel<typename Shader::Push>::push_bytes);
  }
}

TEST(ShaderInterfaces, HandlesMatchTheirShaders) {
  using namespace shader;
  size_t checked = 0;
#define VKAMP_HANDLE(Handle) (check_handle<Handle>(), ++checked);
#include "shader_interfaces.inc"
#undef VKAMP_HANDLE
  EXPECT_GE(checked, size_t(40)) << "the generated list lost handles";
}

}  // namespace
}  // namespace vkamp::test
