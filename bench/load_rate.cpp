// load-rate-bench DIR: how fast a Hugging Face folder's weights load as
// vkamp loads them (models::load_hf_weight_slices: a slice of a tensor at
// a time read, converted to floats and packed to fp16, as a fine-tune's
// frozen base is filled) against reading the same bytes of the same files
// and nothing else, in turns (bench/NOTES.md). Host only: the device's own
// write (a memcpy into mapped memory on unified devices) is left out.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "vkamp/float_formats.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama.hpp"

namespace {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Every .safetensors file of the folder, read through in slices of the loader's size.
uint64_t read_files(const fs::path& dir) {
  uint64_t n = 0;
  std::vector<char> buf(vkamp::models::kLoadSliceBytes);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".safetensors") continue;
    std::ifstream in(e.path(), std::ios::binary);
    while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0) n += uint64_t(in.gcount());
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::printf("usage: load-rate-bench DIR\n  a Hugging Face Llama-family folder's weights loaded as vkamp loads them "
                "(sliced, converted to fp16), against reading the same files, in 3 turns each\n");
    return argc == 2 ? 0 : 2;
  }
  try {
    const std::string dir = argv[1];
    const vkamp::graph::Graph g = vkamp::models::llama_graph(vkamp::models::read_hf_config(dir), 1);
    double load_s = 0, read_s = 0;
    uint64_t loaded = 0, read = 0;
    for (int turn = 0; turn < 3; ++turn) {
      auto t = std::chrono::steady_clock::now();
      uint64_t packed = 0;
      loaded = vkamp::models::load_hf_weight_slices(dir, g, [&](const std::string&, uint64_t, std::vector<float>&& v) {
        packed += vkamp::pack(vkamp::Format::F16, v).size();
      });
      load_s += seconds_since(t);
      t = std::chrono::steady_clock::now();
      read = read_files(dir);
      read_s += seconds_since(t);
      std::printf("  turn %d: loaded %llu bytes (%llu packed fp16), read %llu\n", turn,
                  static_cast<unsigned long long>(loaded), static_cast<unsigned long long>(packed),
                  static_cast<unsigned long long>(read));
    }
    const double mib = double(loaded) / (1 << 20);
    std::printf("load-rate-bench %s: load %.0f MiB/s, read %.0f MiB/s; the load takes %.2fx the read's time\n",
                dir.c_str(), 3 * mib / load_s, 3 * double(read) / (1 << 20) / read_s, load_s / read_s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "load-rate-bench: %s\n", e.what());
    return 2;
  }
}
