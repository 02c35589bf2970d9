// Runs fuzz-target inputs without libFuzzer (any compiler): every file in
// the directories or files given on the command line goes through
// LLVMFuzzerTestOneInput once. Exit 0 means none crashed or aborted.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", p.string().c_str());
        return 2;
      }
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("replay: %zu inputs, none crashed\n", inputs);
  return inputs > 0 ? 0 : 2;  // an empty corpus tests nothing
}
