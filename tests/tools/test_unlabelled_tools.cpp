// vkamp-train and vkamp-predict on data with a row whose label is empty, as
// a user runs them (the validation layer on): exit status 2 naming the
// file, line and column (CSV) or index (.npz string labels), never a model
// with a class named ""; --drop-unlabelled trains and predicts without
// those rows and counts them. Also string labels in an .npz end to end,
// and the --skip-rows hint of a count line read as the header.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "support/cli_test.hpp"
#include "tools/tool_runs.hpp"
#include "vkamp/io/safetensors.hpp"

namespace {

using Result = vkamp::test::ChildResult;
using vkamp::test::rejected;
using vkamp::test::run_tool;

class Unlabelled : public vkamp::test::TempDirTest {
 protected:
  // write_linear_table's rows with the classes named (0 -> "cat", ...), the
  // label of every row in `blank` (data rows from 0) left empty or blank.
  std::string named_table(const char* name, int rows, uint32_t seed, const std::vector<int>& blank) {
    const std::string raw = path("raw.csv");
    vkamp::test::write_linear_table(raw, rows, seed);
    std::ifstream in(raw);
    std::ofstream out(path(name));
    std::string line;
    std::getline(in, line);
    out << line << "\n";
    const char* names[] = {"cat", "dog", "eel"};
    for (int r = 0; std::getline(in, line); ++r) {
      const size_t comma = line.rfind(',');
      const bool empty = std::find(blank.begin(), blank.end(), r) != blank.end();
      out << line.substr(0, comma + 1) << (empty ? (r % 2 ? " " : "") : names[line[comma + 1] - '0']) << "\n";
    }
    return path(name);
  }
};

TEST_F(Unlabelled, TrainRefusesAnEmptyLabelNamingLineAndColumn) {
  // Data row 6 is line 8 (the header is line 1).
  const std::string train = named_table("train.csv", 200, 1, {6});
  const Result r = run_tool("vkamp-train", "--train " + train + " --label kind --val-split 0.2 --epochs 1");
  EXPECT_TRUE(rejected(r, "train.csv:8: column 'kind' is empty")) << r.output;
  EXPECT_NE(r.output.find("--drop-unlabelled"), std::string::npos) << r.output;
}

TEST_F(Unlabelled, DropUnlabelledTrainsWithoutThoseRowsAndPredictCountsItsOwn) {
  const std::string train = named_table("train.csv", 300, 1, {3, 10, 11});
  const Result r = run_tool("vkamp-train", "--train " + train + " --label kind --val-split 0.2 --epochs 2 "
                                           "--drop-unlabelled --save " + path("w.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("train.csv: 3 rows without a label left out (--drop-unlabelled)"), std::string::npos)
      << r.output;
  // 297 rows kept: 59 held out (a fifth, rounded down), 238 to train on.
  EXPECT_NE(r.output.find("238 train / 59 held-out rows (3 rows without a label left out)"), std::string::npos)
      << r.output;
  const vkamp::io::TensorFile f = vkamp::io::read_safetensors(path("w.safetensors"));
  EXPECT_EQ(f.metadata.at("vkamp.classes"), R"(["cat","dog","eel"])") << "no class named \"\"";

  const std::string test = named_table("test.csv", 50, 2, {0});
  const Result p = run_tool("vkamp-predict", "--weights " + path("w.safetensors") + " --data " + test);
  EXPECT_TRUE(rejected(p, "test.csv:2: column 'kind' is empty")) << p.output;
  const Result q =
      run_tool("vkamp-predict", "--weights " + path("w.safetensors") + " --data " + test + " --drop-unlabelled");
  ASSERT_EQ(q.status, 0) << q.output;
  EXPECT_NE(q.output.find("test.csv: 1 row without a label left out"), std::string::npos) << q.output;
  EXPECT_NE(q.output.find(" over 49 rows of "), std::string::npos) << q.output;
}

// np.savez(x=..., y=np.array(["cat", ...])): string classes train and
// predict; an empty string is refused naming its index, or dropped.
TEST_F(Unlabelled, NpzStringLabelsTrainAndAnEmptyOneIsNamed) {
  std::vector<float> x;
  std::vector<std::string> y;
  for (int r = 0; r < 120; ++r) {
    const float a = float(r % 3) + 0.1f * float(r % 7);
    x.insert(x.end(), {a, -a});
    y.push_back(r % 3 == 0 ? "cat" : r % 3 == 1 ? "dog" : "eel");
  }
  const auto x_npy = vkamp::test::npy_bytes("<f4", "(120, 2)", x.data(), x.size() * sizeof(float));
  auto write = [&](const char* name, const std::vector<std::string>& labels) {
    const auto zip = vkamp::test::stored_zip({{"x.npy", x_npy}, {"y.npy", vkamp::test::unicode_npy(labels)}});
    std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(zip.data()), zip.size());
    return path(name);
  };
  const std::string good = write("good.npz", y);
  const Result r = run_tool("vkamp-train", "--train " + good + " --val-split 0.25 --epochs 1 --save " +
                                               path("w.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("3 classes"), std::string::npos) << r.output;
  EXPECT_EQ(vkamp::io::read_safetensors(path("w.safetensors")).metadata.at("vkamp.classes"),
            R"(["cat","dog","eel"])");

  y[7] = "";
  const std::string bad = write("bad.npz", y);
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--train " + bad + " --val-split 0.25 --epochs 1"),
                       "bad.npz: y.npy: index 7: the label is empty"));
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", "--weights " + path("w.safetensors") + " --data " + bad),
                       "bad.npz: y.npy: index 7: the label is empty"));
  const Result d = run_tool("vkamp-train", "--train " + bad + " --val-split 0.25 --epochs 1 --drop-unlabelled");
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_NE(d.output.find("bad.npz: 1 row without a label left out"), std::string::npos) << d.output;
}

TEST_F(Unlabelled, CountLineAsHeaderHintsSkipRows) {
  std::ofstream(path("iris.csv")) << "150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,setosa\n";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--train " + path("iris.csv") + " --label species"),
                       "a count line to skip with --skip-rows 1?"));
}

}  // namespace
