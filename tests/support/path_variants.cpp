#include "support/path_variants.hpp"

namespace vkamp::test {
namespace {

std::vector<PathVariant>& list() {
  static std::vector<PathVariant> all;
  return all;
}

}  // namespace

bool add_path_variants(std::vector<PathVariant> variants) {
  for (PathVariant& v : variants) list().push_back(std::move(v));
  return true;
}

const std::vector<PathVariant>& path_variants() { return list(); }

const PathVariant* find_path_variant(const std::string& name) {
  for (const PathVariant& v : list())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace vkamp::test
