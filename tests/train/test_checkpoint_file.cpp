// The checkpoint container: round trips, atomic replacement, and clear
// errors for every way a file on disk can be wrong.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <optional>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"
#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/platform.hpp"

namespace fs = std::filesystem;
using vkamp::test::ScratchDir;
using vkamp::train::CheckpointError;
using vkamp::train::CheckpointFile;
using vkamp::train::load_checkpoint_file;
using vkamp::train::save_checkpoint_file;

namespace {

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

std::vector<std::string> dir_entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Runs load and returns the error message, or "" when it loaded.
std::string load_error(const std::string& path) {
  try {
    load_checkpoint_file(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

CheckpointFile small_checkpoint() {
  CheckpointFile ck;
  ck.sections["meta"] = {'{', '}'};
  ck.sections["empty"] = {};
  ck.sections["weights"] = random_bytes(37, 1);
  return ck;
}

}  // namespace

TEST(CheckpointFile, RoundTripsSeveralSections) {
  const ScratchDir dir;
  CheckpointFile ck;
  ck.sections["config"] = {'a', 'b', 'c'};
  ck.sections["empty"] = {};
  ck.sections["big"] = random_bytes(1 << 20, 42);
  ck.sections[""] = {0, 1, 2};  // even an empty name survives
  ck.sections[std::string("with\0nul", 8)] = {255};
  const std::string path = dir.file("ck.bin");
  save_checkpoint_file(path, ck);
  CheckpointFile back = load_checkpoint_file(path);
  ASSERT_EQ(back.sections.size(), ck.sections.size());
  for (const auto& [name, payload] : ck.sections) {
    auto it = back.sections.find(name);
    ASSERT_NE(it, back.sections.end()) << "missing section " << name;
    EXPECT_EQ(it->second, payload) << "section " << name;
  }
  EXPECT_TRUE(back.sections.at("empty").empty());
  EXPECT_EQ(back.sections.at("big").size(), 1u << 20);
}

TEST(CheckpointFile, RoundTripsNoSections) {
  const ScratchDir dir;
  const std::string path = dir.file("none.bin");
  save_checkpoint_file(path, CheckpointFile{});
  // magic 8 + version 4 + count 4 + crc 4
  EXPECT_EQ(fs::file_size(path), 20u);
  EXPECT_TRUE(load_checkpoint_file(path).sections.empty());
}

TEST(CheckpointFile, LayoutIsTheDocumentedOne) {
  const ScratchDir dir;
  const std::string path = dir.file("layout.bin");
  CheckpointFile ck;
  ck.sections["ab"] = {7, 8, 9};
  save_checkpoint_file(path, ck);
  std::vector<uint8_t> b = read_all(path);
  const std::vector<uint8_t> expect_prefix = {
      'V', 'K', 'A', 'M', 'P', 'C', 'K', 0,  // magic
      1, 0, 0, 0,                            // version
      1, 0, 0, 0,                            // section count
      2, 0, 0, 0, 'a', 'b',                  // name
      3, 0, 0, 0, 0, 0, 0, 0, 7, 8, 9};      // payload
  ASSERT_EQ(b.size(), expect_prefix.size() + 4);
  EXPECT_TRUE(std::equal(expect_prefix.begin(), expect_prefix.end(), b.begin()));
}

TEST(CheckpointFile, AtomicWriteLeavesNoTempFiles) {
  const ScratchDir dir;
  const std::string path = dir.file("ck.bin");
  for (int i = 0; i < 3; ++i) save_checkpoint_file(path, small_checkpoint());
  EXPECT_EQ(dir_entries(dir.path), std::vector<std::string>{"ck.bin"});
}

TEST(CheckpointFile, OverwritesAnExistingFile) {
  const ScratchDir dir;
  const std::string path = dir.file("ck.bin");
  CheckpointFile first;
  first.sections["step"] = {1};
  first.sections["only_in_first"] = random_bytes(1000, 3);
  save_checkpoint_file(path, first);
  CheckpointFile second;
  second.sections["step"] = {2};
  save_checkpoint_file(path, second);
  CheckpointFile back = load_checkpoint_file(path);
  EXPECT_EQ(back.sections.size(), 1u);
  EXPECT_EQ(back.sections.at("step"), std::vector<uint8_t>{2});
  EXPECT_EQ(dir_entries(dir.path), std::vector<std::string>{"ck.bin"});
}

TEST(CheckpointFile, EveryTruncationIsReported) {
  const ScratchDir dir;
  const std::string good = dir.file("good.bin");
  save_checkpoint_file(good, small_checkpoint());
  const std::vector<uint8_t> bytes = read_all(good);
  ASSERT_GT(bytes.size(), 40u);
  const std::string cut = dir.file("cut.bin");
  for (size_t len = 0; len < bytes.size(); ++len) {
    write_all(cut, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(len)));
    std::string err = load_error(cut);
    ASSERT_FALSE(err.empty()) << "a file cut to " << len << " bytes loaded";
    EXPECT_NE(err.find("truncated"), std::string::npos) << "cut at " << len << ": " << err;
    EXPECT_NE(err.find(cut), std::string::npos) << "the error names the file: " << err;
  }
}

TEST(CheckpointFile, TruncatedLargeFileIsReportedWithoutHugeAllocations) {
  const ScratchDir dir;
  const std::string good = dir.file("good.bin");
  CheckpointFile ck;
  ck.sections["a"] = random_bytes(300000, 5);
  ck.sections["b"] = random_bytes(200000, 6);
  save_checkpoint_file(good, ck);
  const std::vector<uint8_t> bytes = read_all(good);
  const std::string cut = dir.file("cut.bin");
  std::mt19937_64 rng(9);
  for (int i = 0; i < 40; ++i) {
    size_t len = rng() % bytes.size();
    write_all(cut, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(len)));
    std::string err = load_error(cut);
    EXPECT_NE(err.find("truncated"), std::string::npos) << "cut at " << len << ": " << err;
  }
}

TEST(CheckpointFile, HeaderCutBeforeTheMagicEndsIsTruncatedButGarbageIsNotACheckpoint) {
  const ScratchDir dir;
  const std::string path = dir.file("short.bin");
  write_all(path, {'V', 'K', 'A'});
  EXPECT_NE(load_error(path).find("truncated"), std::string::npos) << load_error(path);
  write_all(path, {'P', 'K', 3, 4});
  EXPECT_NE(load_error(path).find("not a vkamp checkpoint"), std::string::npos) << load_error(path);
}

TEST(CheckpointFile, FlippedByteAnywhereIsAnError) {
  const ScratchDir dir;
  const std::string good = dir.file("good.bin");
  save_checkpoint_file(good, small_checkpoint());
  const std::vector<uint8_t> bytes = read_all(good);
  // Offsets of the length fields: damage there reads as a cut-off file or a
  // checksum mismatch. Everywhere else (names, payloads, the CRC itself) it
  // must be reported as a checksum mismatch; in the magic, as not a checkpoint.
  std::vector<bool> is_length(bytes.size(), false);
  for (size_t i = 8; i < 16; ++i) is_length[i] = true;  // version + count
  size_t pos = 16;
  for (const auto& [name, payload] : small_checkpoint().sections) {
    for (size_t i = 0; i < 4; ++i) is_length[pos + i] = true;
    pos += 4 + name.size();
    for (size_t i = 0; i < 8; ++i) is_length[pos + i] = true;
    pos += 8 + payload.size();
  }
  ASSERT_EQ(pos + 4, bytes.size());

  const std::string bad = dir.file("bad.bin");
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}}) {
      std::vector<uint8_t> b = bytes;
      b[i] ^= mask;
      write_all(bad, b);
      std::string err = load_error(bad);
      ASSERT_FALSE(err.empty()) << "byte " << i << " flipped by " << int(mask) << " loaded";
      if (i < 8) {
        EXPECT_NE(err.find("not a vkamp checkpoint"), std::string::npos) << i << ": " << err;
      } else if (is_length[i]) {
        bool named = err.find("checksum mismatch") != std::string::npos ||
                     err.find("truncated") != std::string::npos;
        EXPECT_TRUE(named) << i << ": " << err;
      } else {
        EXPECT_NE(err.find("corrupt: checksum mismatch"), std::string::npos) << i << ": " << err;
      }
    }
  }
}

TEST(CheckpointFile, FlippedByteInALargePayloadIsAChecksumMismatch) {
  const ScratchDir dir;
  const std::string path = dir.file("big.bin");
  CheckpointFile ck;
  ck.sections["w"] = random_bytes(1 << 20, 11);
  save_checkpoint_file(path, ck);
  std::vector<uint8_t> b = read_all(path);
  b[b.size() / 2] ^= 0x10;
  write_all(path, b);
  EXPECT_NE(load_error(path).find("corrupt: checksum mismatch"), std::string::npos) << load_error(path);
}

TEST(CheckpointFile, UnsupportedVersionWithAValidChecksumIsNamed) {
  const ScratchDir dir;
  const std::string path = dir.file("v2.bin");
  // A well-formed empty checkpoint claiming version 2, with its CRC fixed up.
  std::vector<uint8_t> b = {'V', 'K', 'A', 'M', 'P', 'C', 'K', 0, 2, 0, 0, 0, 0, 0, 0, 0};
  uLong crc = crc32(0, b.data(), static_cast<uInt>(b.size()));
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(crc >> (8 * i)));
  write_all(path, b);
  std::string err = load_error(path);
  EXPECT_NE(err.find("unsupported version 2"), std::string::npos) << err;
}

TEST(CheckpointFile, TrailingBytesAreAnError) {
  const ScratchDir dir;
  const std::string path = dir.file("ck.bin");
  save_checkpoint_file(path, small_checkpoint());
  std::vector<uint8_t> b = read_all(path);
  b.push_back(0);
  write_all(path, b);
  EXPECT_FALSE(load_error(path).empty());
}

TEST(CheckpointFile, NotACheckpointIsNamed) {
  const ScratchDir dir;
  const std::string path = dir.file("notes.txt");
  std::string text = "this is a text file, long enough to have a header's worth of bytes\n";
  write_all(path, std::vector<uint8_t>(text.begin(), text.end()));
  std::string err = load_error(path);
  EXPECT_NE(err.find("not a vkamp checkpoint"), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
}

TEST(CheckpointFile, MissingFileNamesThePath) {
  const ScratchDir dir;
  const std::string path = dir.file("does-not-exist.bin");
  std::string err = load_error(path);
  EXPECT_NE(err.find("cannot open checkpoint " + path), std::string::npos) << err;
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
}

TEST(CheckpointFile, DirectoryIsNotLoadable) {
  const ScratchDir dir;
  EXPECT_THROW(load_checkpoint_file(dir.path.string()), CheckpointError);
}

TEST(CheckpointFile, SaveIntoAMissingDirectoryFails) {
  const ScratchDir dir;
  const std::string path = dir.file("no/such/dir/ck.bin");
  try {
    save_checkpoint_file(path, small_checkpoint());
    FAIL() << "saving into a missing directory succeeded";
  } catch (const CheckpointError& e) {
    std::string err = e.what();
    EXPECT_NE(err.find(path), std::string::npos) << err;
    EXPECT_NE(err.find("No such file"), std::string::npos) << err;
  }
  EXPECT_EQ(dir_entries(dir.path), std::vector<std::string>{});
}

TEST(CheckpointFile, SaveIntoAnUnwritableDirectoryFails) {
  if (!vkamp::platform::permission_bits_bind()) GTEST_SKIP() << "permission bits do not stop this process (root, or Windows, whose folders have no write bit)";
  const ScratchDir dir;
  fs::path ro = dir.path / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string path = (ro / "ck.bin").string();
  try {
    save_checkpoint_file(path, small_checkpoint());
    FAIL() << "saving into a read-only directory succeeded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
  }
  fs::permissions(ro, fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(ro));
}

TEST(CheckpointFile, SaveIntoAKernelDirectoryFailsEvenForRoot) {
  // Linux's /proc refuses new files whoever asks, so this covers the
  // unwritable directory case when the tests run as root.
  const std::optional<std::string> kernel = vkamp::platform::folder_refusing_new_files();
  if (!kernel) GTEST_SKIP() << "this system has no folder that refuses new files to every user (Linux: /proc)";
  const std::string path = *kernel + "/vkamp-test-ck.bin";
  EXPECT_THROW(save_checkpoint_file(path, small_checkpoint()), CheckpointError);
  EXPECT_FALSE(fs::exists(path));
}

TEST(CheckpointFile, FailedRenameRemovesTheTempFileAndKeepsTheTarget) {
  // The target is a non-empty directory: the temp file is written, the
  // rename fails, and the temp file must be gone afterwards.
  const ScratchDir dir;
  fs::path target = dir.path / "target";
  fs::create_directory(target);
  std::ofstream(target / "keep").put('x');
  try {
    save_checkpoint_file(target.string(), small_checkpoint());
    FAIL() << "renaming over a non-empty directory succeeded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot move " + target.string() + ".tmp."), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir_entries(dir.path), std::vector<std::string>{"target"});
  EXPECT_TRUE(fs::exists(target / "keep"));
}
