// vkamp-spirv-khr: the .khr build of a cooperative-matrix shader from its
// .coopmat SPIR-V (GL_NV_cooperative_matrix, as glslang 12 writes it), run
// by cmake/Shaders.cmake at build time (khr_rewrite.hpp says what changes).
//
//   vkamp-spirv-khr IN.spv OUT.spv
//
// (cmake/EmbedSpirv.cmake then embeds OUT.spv as it does glslang's.) Exit status 1 when the
// module holds something the pass cannot translate (the message names the
// instruction), 2 on bad arguments or files.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "khr_check.hpp"
#include "khr_rewrite.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr, "vkamp-spirv-khr: %s\nusage: vkamp-spirv-khr IN.spv OUT.spv\n",
               why);
  return 2;
}

bool read_words(const char* path, std::vector<uint32_t>& words) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in.good()) return false;
  if (bytes.empty() || bytes.size() % 4 != 0) return false;
  words.resize(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return true;
}

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return bool(out.flush());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf("usage: vkamp-spirv-khr IN.spv OUT.spv\n"
                "Writes the SPV_KHR_cooperative_matrix build of an SPV_NV_cooperative_matrix module.\n");
    return 0;
  }
  if (argc != 3) return usage("wrong number of arguments");
  std::vector<uint32_t> in;
  if (!read_words(argv[1], in)) return usage((std::string("cannot read whole words from ") + argv[1]).c_str());
  std::vector<uint32_t> out;
  try {
    out = spirv_khr::nv_to_khr(in);
    spirv_khr::check_khr_module(spirv_khr::parse(out));
  } catch (const spirv_khr::Error& e) {
    std::fprintf(stderr, "vkamp-spirv-khr: %s: %s\n", argv[1], e.what());
    return 1;
  }
  const std::string bytes(reinterpret_cast<const char*>(out.data()), out.size() * 4);
  if (!write_file(argv[2], bytes)) return usage((std::string("cannot write ") + argv[2]).c_str());
  return 0;
}
