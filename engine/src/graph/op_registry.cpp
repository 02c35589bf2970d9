#include "vkamp/graph/op_registry.hpp"

namespace vkamp::graph {

// Each op's definition, from its file under ops/; op_list.inc is generated
// from ops.cmake's vkamp_add_op() lines (cmake/Ops.cmake).
#define VKAMP_OP(name) OpDef name##_op();
#include "op_list.inc"
#undef VKAMP_OP

namespace {

const std::vector<OpDef>& registry() {
#define VKAMP_OP(name) name##_op(),
  static const std::vector<OpDef> ops{
#include "op_list.inc"
  };
#undef VKAMP_OP
  return ops;
}

}  // namespace

const OpDef* find_op(const std::string& name) {
  for (const OpDef& d : registry())
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& d : registry()) names.push_back(d.name);
  return names;
}

}  // namespace vkamp::graph
