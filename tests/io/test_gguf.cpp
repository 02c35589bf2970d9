// The GGUF reader: a file written by llama.cpp's own writer (gguf-py,
// make_gguf_fixture.py) read back key by key and tensor by tensor, and
// every truncation and damaged count of it a FormatError, never a crash.
#include "vkamp/io/gguf.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/rejected_with.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::io {
namespace {

namespace fs = std::filesystem;
using quant::GgmlType;

const std::string kFixture = std::string(VKAMP_IO_FIXTURES) + "/values.gguf";

std::vector<uint8_t> read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GgufBad : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-gguf-" + std::to_string(vkamp::platform::process_id()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::vector<uint8_t>& bytes) const {
    std::string p = (dir_ / "bad.gguf").string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
  fs::path dir_;
};

TEST(Gguf, ReadsEveryValueTypeAsLlamaCppWroteIt) {
  GgufFile f = GgufFile::open(kFixture);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.string("general.architecture"), "llama");
  EXPECT_EQ(f.unsigned_integer("t.u8"), 200u);
  EXPECT_EQ(f.number("t.i8"), -100);
  EXPECT_EQ(f.unsigned_integer("t.u16"), 60000u);
  EXPECT_EQ(f.number("t.i16"), -30000);
  EXPECT_EQ(f.unsigned_integer("t.u32"), 4000000000u);
  EXPECT_EQ(f.number("t.i32"), -2000000000);
  EXPECT_EQ(f.number("t.f32"), double(0.1f));  // stored as f32: 0.1 rounded to float
  EXPECT_EQ(f.unsigned_integer("t.u64"), uint64_t(1) << 40);
  EXPECT_EQ(f.find("t.i64")->integer, -(int64_t(1) << 40));
  EXPECT_EQ(f.number("t.f64"), 0.1);
  EXPECT_EQ(f.optional_bool("t.bool"), true);
  EXPECT_EQ(f.string("t.string"), "naïve ▁token");
  EXPECT_EQ(f.strings("t.strings"), (std::vector<std::string>{"a", "", "ü▁"}));
  EXPECT_EQ(f.numbers("t.numbers"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(f.numbers("t.floats"), (std::vector<double>{0.5, -1.25}));
  EXPECT_EQ(f.find("t.floats")->element, GgufType::F32);
  EXPECT_FALSE(f.optional_string("no.such.key").has_value());
}

TEST(Gguf, ReadsTensorsInPlace) {
  GgufFile f = GgufFile::open(kFixture);
  ASSERT_EQ(f.tensors().size(), 4u);
  const GgufTensor* m = f.find_tensor("m.f32");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dims, (std::vector<uint64_t>{64, 3}));
  EXPECT_EQ(m->shape(), (std::vector<uint64_t>{3, 64}));
  EXPECT_EQ(m->bytes, 3u * 64 * 4);
  EXPECT_EQ(m->offset % 64, 0u);
  const GgufTensor* h = f.find_tensor("m.f16");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->type, GgmlType::F16);
  for (uint64_t i = 0; i < 3; ++i)
    for (uint64_t j = 0; j < 64; ++j) {
      float v32;
      uint16_t v16;
      std::memcpy(&v32, m->data + 4 * (i * 64 + j), 4);
      std::memcpy(&v16, h->data + 2 * (i * 64 + j), 2);
      EXPECT_EQ(v32, float(j) + 0.5f * float(i));
      EXPECT_EQ(fp16_to_f32(v16), v32);  // every value is exact in fp16
    }
  const GgufTensor* q = f.find_tensor("m.q8_0");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::Q8_0);
  EXPECT_EQ(q->bytes, 6u * 34);  // two 32-value blocks a row
  EXPECT_EQ(f.find_tensor("v.f32")->elements(), 5u);
}

TEST(Gguf, WrongTypesAndMissingKeysNameTheKey) {
  GgufFile f = GgufFile::open(kFixture);
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { f.string("t.u32"); }, "values.gguf", "t.u32 is u32, not a string"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { f.strings("t.numbers"); }, "values.gguf", "array of i32"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { f.unsigned_integer("t.i8"); }, "values.gguf", "an integer >= 0"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { f.number("absent"); }, "values.gguf", "the key absent is missing"));
}

TEST_F(GgufBad, EveryTruncationIsAFormatError) {
  const std::vector<uint8_t> good = read_bytes(kFixture);
  // The file may end in padding after its last tensor; any cut before that
  // tensor's last byte loses something the reader needs.
  uint64_t end = 0;
  for (const GgufTensor& t : GgufFile::open(kFixture).tensors()) end = std::max(end, t.offset + t.bytes);
  ASSERT_GT(end, 2000u);
  for (size_t n = 0; n < end; ++n) {
    const std::string p = write({good.begin(), good.begin() + std::ptrdiff_t(n)});
    EXPECT_THROW(GgufFile::open(p), FormatError) << n << " bytes";
  }
}

TEST_F(GgufBad, DamagedHeadersSayWhat) {
  const std::vector<uint8_t> good = read_bytes(kFixture);
  auto with = [&](size_t at, std::vector<uint8_t> bytes) {
    std::vector<uint8_t> f = good;
    std::copy(bytes.begin(), bytes.end(), f.begin() + std::ptrdiff_t(at));
    return write(f);
  };
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(with(0, {'G', 'G', 'M', 'L'})); }, "bad.gguf",
                                               "not a GGUF file"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(with(4, {1, 0, 0, 0})); }, "bad.gguf",
                                               "GGUF version 1"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(with(4, {0, 0, 0, 3})); }, "bad.gguf",
                                               "big-endian"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(with(8, {0xff, 0xff, 0xff, 0xff})); }, "bad.gguf",
                                               "counts larger than the file"));
  // The first key's length (at byte 24) past the file.
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(with(24, {0, 0, 0, 0, 0, 0, 0, 1})); }, "bad.gguf",
                                               "runs past the end"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open(write({})); }, "bad.gguf", "the magic"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { GgufFile::open((dir_ / "absent.gguf").string()); }, "absent.gguf",
                                               "cannot map"));
}

}  // namespace
}  // namespace vkamp::io
