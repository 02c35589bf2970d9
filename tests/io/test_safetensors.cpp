// The safetensors reader and writer: round trips, a file from an independent
// writer (make_safetensors_fixture.py), and every way an untrusted file can
// be wrong, each a FormatError naming the file and the problem.
#include "support/test_paths.hpp"
#include "vkamp/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support/rejected_with.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::io {
namespace {

namespace fs = std::filesystem;

const std::string kLabel = "bad.safetensors";

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-st-" + std::to_string(vkamp::platform::process_id()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::vector<uint8_t> read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file of the given header text and data bytes, with a correct length prefix.
std::vector<uint8_t> file_of(const std::string& header, size_t data_bytes = 0) {
  std::vector<uint8_t> f(8);
  for (int i = 0; i < 8; ++i) f[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  f.insert(f.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) f.push_back(uint8_t(i));
  return f;
}

// parse_safetensors throws a FormatError naming kLabel and saying `phrase`.
::testing::AssertionResult rejected(const std::vector<uint8_t>& bytes, const std::string& phrase) {
  return test::rejected_with<io::FormatError>([&] { parse_safetensors(bytes.data(), bytes.size(), kLabel); }, kLabel,
                                              phrase);
}

std::string one_tensor(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return R"({"w": {"dtype": ")" + dtype + R"(", "shape": )" + shape + R"(, "data_offsets": )" + offsets + "}}";
}

TEST_F(Safetensors, RoundTripsEveryDtypeScalarsEmptyTensorsAndMetadata) {
  TensorFile out;
  out.metadata = {{"vkamp.model", "4-3r-2"}, {"note", "ünïcode, \"quotes\""}};
  const DType all[] = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                       DType::I32, DType::I16, DType::I8,  DType::U8,   DType::BOOL};
  uint8_t next = 1;
  for (DType d : all) {
    Tensor t{std::string("t_") + dtype_name(d), d, {2, 3}, {}};
    for (size_t i = 0; i < 6 * dtype_bytes(d); ++i) t.data.push_back(next++);
    out.tensors.push_back(t);
  }
  out.tensors.push_back({"scalar", DType::F32, {}, {0, 0, 0x50, 0x40}});  // 3.25
  out.tensors.push_back({"zero_size", DType::F16, {3, 0}, {}});
  out.tensors.push_back({"after_empty", DType::I8, {1}, {0x7f}});

  write_safetensors(path("w.safetensors"), out);
  TensorFile in = read_safetensors(path("w.safetensors"));
  EXPECT_EQ(in.metadata, out.metadata);
  ASSERT_EQ(in.tensors.size(), out.tensors.size());
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    SCOPED_TRACE(out.tensors[i].name);
    EXPECT_EQ(in.tensors[i].name, out.tensors[i].name) << "file order is kept";
    EXPECT_EQ(in.tensors[i].dtype, out.tensors[i].dtype);
    EXPECT_EQ(in.tensors[i].shape, out.tensors[i].shape);
    EXPECT_EQ(in.tensors[i].data, out.tensors[i].data);
  }
  EXPECT_EQ(in.find("scalar")->elements(), 1u);
  EXPECT_EQ(in.floats("scalar", "w"), std::vector<float>{3.25f});
  EXPECT_EQ(in.find("zero_size")->elements(), 0u);

  // The data starts 8-byte aligned, and the tensors fill it with no gaps.
  std::vector<uint8_t> bytes = read_bytes(path("w.safetensors"));
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  EXPECT_EQ((8 + header) % 8, 0u);
  size_t data = 0;
  for (const Tensor& t : out.tensors) data += t.data.size();
  EXPECT_EQ(bytes.size(), 8 + header + data);
  EXPECT_EQ(fs::directory_iterator(dir_)->path().filename(), "w.safetensors") << "no temporary file left";
}

TEST_F(Safetensors, ReadsAFileFromAnIndependentWriter) {
  TensorFile f = read_safetensors(VKAMP_TEST_DIR(VKAMP_IO_FIXTURES) + "/independent.safetensors");
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("source"), "make_safetensors_fixture.py");
  std::vector<std::string> names;
  for (const Tensor& t : f.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "bf", "scalar", "empty", "ids"}));

  const std::string label = "independent.safetensors";
  EXPECT_EQ(f.find("fc1.weight")->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(f.floats("fc1.weight", label), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_EQ(f.find("fc1.bias")->dtype, DType::F16);
  EXPECT_EQ(f.floats("fc1.bias", label), (std::vector<float>{0.25f, -3.0f}));
  EXPECT_EQ(f.find("bf")->dtype, DType::BF16);
  EXPECT_EQ(f.floats("bf", label), (std::vector<float>{1.5f, -2.0f, 96.0f}));
  EXPECT_TRUE(f.find("scalar")->shape.empty());
  EXPECT_EQ(f.floats("scalar", label), std::vector<float>{3.25f});
  EXPECT_EQ(f.find("empty")->shape, (std::vector<uint64_t>{0, 4}));
  EXPECT_TRUE(f.find("empty")->data.empty());
  const Tensor* ids = f.find("ids");
  ASSERT_EQ(ids->data.size(), 24u);
  int64_t v[3];
  std::memcpy(v, ids->data.data(), 24);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], -2);
  EXPECT_EQ(v[2], 3);
}

// The header alone, and then one tensor at a time: the same names, dtypes,
// shapes and bytes as reading the whole file.
TEST_F(Safetensors, TheHeaderAloneThenEachTensorGivesWhatTheWholeFileDoes) {
  const std::string p = VKAMP_TEST_DIR(VKAMP_IO_FIXTURES) + "/independent.safetensors";
  const TensorFile whole = read_safetensors(p);
  const TensorDirectory d = read_safetensors_header(p);
  EXPECT_EQ(d.metadata, whole.metadata);
  ASSERT_EQ(d.entries.size(), whole.tensors.size());
  for (size_t i = 0; i < d.entries.size(); ++i) {
    const TensorEntry& e = d.entries[i];
    EXPECT_EQ(e.name, whole.tensors[i].name);
    EXPECT_EQ(e.dtype, whole.tensors[i].dtype);
    EXPECT_EQ(e.shape, whole.tensors[i].shape);
    EXPECT_EQ(d.read(e), whole.tensors[i].data) << e.name;
  }
  EXPECT_EQ(d.find("bf"), &d.entries[2]);
  EXPECT_EQ(d.find("nope"), nullptr);
  EXPECT_EQ(to_floats(DType::BF16, d.read(*d.find("bf")), "bf"), (std::vector<float>{1.5f, -2.0f, 96.0f}));
}

// The header is checked against the file's size as a whole read checks it;
// a file cut after its header was read fails that tensor's read, naming it.
TEST_F(Safetensors, TheHeaderReaderRejectsWhatTheWholeReaderDoes) {
  const std::string p = path("cut.safetensors");
  {
    std::vector<uint8_t> f = file_of(one_tensor("F32", "[6]", "[0, 24]"), 10);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size()));
  }
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { read_safetensors_header(p); }, p, "run past the end of the data"));
  {
    std::vector<uint8_t> f = file_of(one_tensor("F32", "[6]", "[0, 24]"), 24);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size()));
  }
  const TensorDirectory d = read_safetensors_header(p);
  fs::resize_file(p, fs::file_size(p) - 8);
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { d.read(d.entries[0]); }, p, "tensor 'w': read error"));
  EXPECT_TRUE(test::rejected_with<FormatError>([&] { read_safetensors_header(path("absent.safetensors")); },
                                               "absent.safetensors", "cannot open"));
}

TEST_F(Safetensors, FloatsNamesTheFileForAMissingTensorOrAnIntegerDtype) {
  TensorFile f;
  f.tensors.push_back({"ids", DType::I64, {1}, std::vector<uint8_t>(8, 0)});
  try {
    f.floats("ids", "w.safetensors");
    ADD_FAILURE() << "an I64 tensor converted to floats";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("w.safetensors: tensor 'ids' has dtype I64"), std::string::npos) << e.what();
  }
  try {
    f.floats("fc1.weight", "w.safetensors");
    ADD_FAILURE() << "a missing tensor converted to floats";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("w.safetensors: no tensor 'fc1.weight'"), std::string::npos) << e.what();
  }
}

// ---- truncated files and files that are not safetensors ------------------

TEST_F(Safetensors, ShorterThanTheLengthPrefix) {
  EXPECT_TRUE(rejected({1, 0, 0, 0, 0}, "5 bytes, shorter than the 8-byte header length"));
  EXPECT_TRUE(rejected({}, "0 bytes"));
}

TEST_F(Safetensors, HeaderLengthBeyondTheFile) {
  std::vector<uint8_t> f = file_of(one_tensor("F32", "[1]", "[0, 4]"), 4);
  f.resize(20);  // cut inside the header
  EXPECT_TRUE(rejected(f, "runs past the end of the file (20 bytes)"));
}

TEST_F(Safetensors, HeaderLengthOverTheLimit) {
  std::vector<uint8_t> f = file_of("{}");
  f[5] = 1;  // 2^40 + 2 bytes of header
  EXPECT_TRUE(rejected(f, "100000000-byte limit"));
}

TEST_F(Safetensors, DataShorterThanTheOffsets) {
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[6]", "[0, 24]"), 10), "run past the end of the data (10 bytes"));
}

TEST_F(Safetensors, ATextFileIsNotSafetensors) {
  std::ofstream(path("notes.txt")) << "These are notes, not tensors.\n";
  try {
    read_safetensors(path("notes.txt"));
    ADD_FAILURE() << "a text file was read";
  } catch (const FormatError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path("notes.txt")), std::string::npos) << m;
    EXPECT_NE(m.find("not a safetensors file"), std::string::npos) << m;
  }
}

TEST_F(Safetensors, RandomBytesAreNotSafetensors) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint8_t> f(64 + trial);
    for (uint8_t& b : f) b = uint8_t(gen());
    EXPECT_TRUE(rejected(f, "not a safetensors file")) << "trial " << trial;
  }
}

TEST_F(Safetensors, AMissingFileNamesItself) {
  try {
    read_safetensors(path("absent.safetensors"));
    ADD_FAILURE() << "a missing file was read";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path("absent.safetensors") + ": cannot open"), std::string::npos) << e.what();
  }
}

// ---- a header that is not what the format says ----------------------------

TEST_F(Safetensors, BadJson) {
  EXPECT_TRUE(rejected(file_of(R"({"w": {"dtype": "F32", )"), "header is not valid JSON"));
  EXPECT_TRUE(rejected(file_of("[1, 2]"), "header is not a JSON object"));
  EXPECT_TRUE(rejected(file_of(R"({"w": [1]})"), "tensor 'w': header entry is not a JSON object"));
}

TEST_F(Safetensors, MissingFields) {
  EXPECT_TRUE(rejected(file_of(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4), "tensor 'w': no \"dtype\""));
  EXPECT_TRUE(rejected(file_of(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4), "no \"shape\""));
  EXPECT_TRUE(rejected(file_of(R"({"w": {"dtype": "F32", "shape": [1]}})", 4), "no \"data_offsets\""));
}

TEST_F(Safetensors, UnknownDtype) {
  EXPECT_TRUE(rejected(file_of(one_tensor("F8", "[1]", "[0, 1]"), 1), "tensor 'w': unknown dtype 'F8'"));
  EXPECT_TRUE(rejected(file_of(one_tensor("f32", "[1]", "[0, 4]"), 4), "unknown dtype 'f32'"));
}

TEST_F(Safetensors, ShapeEntriesMustBeNonNegativeIntegers) {
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[-1]", "[0, 4]"), 4), "shape entry -1 is not a non-negative"));
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[1.5]", "[0, 4]"), 4), "shape entry 1.5 is not"));
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "4", "[0, 4]"), 4), "\"shape\" is not an array"));
}

TEST_F(Safetensors, OffsetsOutsideTheData) {
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[100]", "[0, 400]"), 24), "run past the end of the data"));
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[1]", "[8, 4]"), 24), "begin after end"));
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[1]", "[0]"), 24), "\"data_offsets\" is not two"));
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[1]", "[-4, 0]"), 24), "\"data_offsets\" is not two"));
}

TEST_F(Safetensors, SizeMismatchWithTheShape) {
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[2, 3]", "[0, 20]"), 24),
                       "tensor 'w': data_offsets hold 20 bytes but shape [2, 3] of F32 needs 24"));
}

TEST_F(Safetensors, ShapesWhoseProductOverflows) {
  // 2^32 * 2^32 * 4 wraps to 0 in 64 bits, which would match empty offsets.
  EXPECT_TRUE(rejected(file_of(one_tensor("F32", "[4294967296, 4294967296]", "[0, 0]")), "overflows 64 bits"));
  EXPECT_TRUE(rejected(file_of(one_tensor("U8", "[18446744073709551615, 2]", "[0, 0]")), "overflows 64 bits"));
}

TEST_F(Safetensors, OverlappingTensors) {
  EXPECT_TRUE(rejected(file_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                               12),
                       "tensors 'a' and 'b' overlap"));
}

TEST_F(Safetensors, MetadataValuesMustBeStrings) {
  EXPECT_TRUE(rejected(file_of(R"({"__metadata__": {"vkamp.step": 3}})"), "value of 'vkamp.step' is not a string"));
  EXPECT_TRUE(rejected(file_of(R"({"__metadata__": ["a"]})"), "\"__metadata__\" is not a JSON object"));
}

// ---- the writer -----------------------------------------------------------

TEST_F(Safetensors, WriteIntoAMissingDirectoryNamesThePathAndLeavesNothing) {
  TensorFile f;
  f.tensors.push_back({"w", DType::F32, {1}, {0, 0, 0, 0}});
  const std::string target = path("nowhere") + "/w.safetensors";
  try {
    write_safetensors(target, f);
    ADD_FAILURE() << "wrote into a missing directory";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(target + ": cannot write"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Safetensors, WriterRefusesDataOfTheWrongSizeAndTwiceUsedNames) {
  TensorFile f;
  f.tensors.push_back({"w", DType::F16, {3}, {0, 0, 0, 0}});
  EXPECT_THROW(write_safetensors(path("w.safetensors"), f), FormatError);
  f.tensors[0].data.resize(6);
  f.tensors.push_back(f.tensors[0]);
  EXPECT_THROW(write_safetensors(path("w.safetensors"), f), FormatError);
  EXPECT_TRUE(fs::is_empty(dir_)) << "a refused file is not written at all";
}

}  // namespace
}  // namespace vkamp::io
