// Rows without a label: an empty or blank label cell (CSV) or string
// (NumPy '<U' and '|S' arrays) is an error naming the file, the line (or
// index) and the column, never a class named ""; with drop_unlabelled such
// rows are left out, counted, and the rest keep their order and values.
// Also NumPy text labels themselves, and the --skip-rows hint for a label
// column missing next to a header of numbers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/data/labeled_data.hpp"

namespace {

using vkamp::data::LabeledData;
using vkamp::data::LoadOptions;
using vkamp::data::Task;
using vkamp::test::data_rejected;
using vkamp::test::npy_bytes;
using vkamp::test::ScratchDir;
using vkamp::test::stored_zip;
using vkamp::test::unicode_npy;

LoadOptions classify(const std::string& label = "species") {
  LoadOptions o;
  o.label = label;
  return o;
}

const std::string kIris =
    "a,b,species\n"
    "1,2,setosa\n"
    "3,4,\n"           // line 3: empty
    "5,6,virginica\n"
    "7,8,  \t\n"       // line 5: only white space
    "9,10,setosa\n";

TEST(Unlabelled, CsvEmptyLabelNamesFileLineAndColumn) {
  const auto load = [](const std::string& text, const LoadOptions& o) {
    return vkamp::data::parse_csv(text, "iris.csv", o);
  };
  EXPECT_TRUE(data_rejected([&] { load(kIris, classify()); }, "iris.csv:3: column 'species' is empty",
                            "--drop-unlabelled"));
  // Only white space (spaces, a tab) is no label either; a quoted "" too.
  EXPECT_TRUE(data_rejected([&] { load("a,b,species\n1,2,x\n7,8,  \t\n", classify()); },
                            "iris.csv:3: column 'species' is empty", "every row needs a label"));
  EXPECT_TRUE(data_rejected([&] { load("a,b,species\n1,2,x\n7,8,\"\"\n", classify()); },
                            "iris.csv:3: column 'species' is empty", "label"));
  // The label column last without --label, and prediction inputs that
  // have the column (label_optional) are refused the same way.
  EXPECT_TRUE(data_rejected([&] { load(kIris, classify("")); }, "iris.csv:3: column 'species'", "empty"));
  LoadOptions predict = classify();
  predict.label_optional = true;
  predict.classes = {"setosa", "virginica"};
  EXPECT_TRUE(data_rejected([&] { load(kIris, predict); }, "iris.csv:3: column 'species'", "empty"));
}

TEST(Unlabelled, CsvDropLeavesTheRowsOutAndCountsThem) {
  LoadOptions o = classify();
  o.drop_unlabelled = true;
  const LabeledData d = vkamp::data::parse_csv(kIris, "iris.csv", o);
  EXPECT_EQ(d.dropped_unlabelled, 2u);
  EXPECT_EQ(d.data.count, 3u);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"setosa", "virginica"})) << "no class named \"\"";
  EXPECT_EQ(d.data.x, (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(d.data.labels, (std::vector<uint32_t>{0, 1, 0}));
  // A dropped row's features are still read: a bad one is still an error.
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_csv("a,b,species\n1,2,x\nq,4,\n", "iris.csv", o); },
                            "iris.csv:3: column 'a'", "not a number"));
  // Every row unlabelled: nothing to train on, said so.
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_csv("a,b,species\n1,2,\n3,4, \n", "iris.csv", o); },
                            "iris.csv", "every one of its 2 rows has an empty label"));
  // The count reaches the notes through load_labeled.
  ScratchDir dir;
  const LabeledData f = vkamp::data::load_labeled(dir.write("iris.csv", kIris), o);
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_NE(f.notes[0].find("iris.csv: 2 rows without a label left out (--drop-unlabelled)"), std::string::npos)
      << f.notes[0];
}

TEST(Unlabelled, CsvEmptyRegressionTargetIsNamedAndDroppedAlike) {
  const std::string text = "x,y,z\n1,2,3\n4,,6\n7,8,9\n";
  LoadOptions o;
  o.task = Task::Regress;
  o.targets = {"y", "z"};
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_csv(text, "r.csv", o); }, "r.csv:3: column 'y' is empty",
                            "--drop-unlabelled"));
  o.drop_unlabelled = true;
  const LabeledData d = vkamp::data::parse_csv(text, "r.csv", o);
  EXPECT_EQ(d.dropped_unlabelled, 1u);
  EXPECT_EQ(d.data.x, (std::vector<float>{1, 7}));
  EXPECT_EQ(d.data.targets, (std::vector<float>{2, 3, 8, 9}));
}

TEST(Unlabelled, NumpyTextLabelsAreClassNames) {
  ScratchDir dir;
  const float x[4] = {1, 2, 3, 4};
  const std::string path =
      dir.write("d.npz", stored_zip({{"x.npy", npy_bytes("<f4", "(4, 1)", x, sizeof x)},
                                     {"y.npy", unicode_npy({"setosa", "virginica", "setosa", "versicolor"})}}));
  const LabeledData d = vkamp::data::load_labeled(path, {});
  EXPECT_EQ(d.classes, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
  EXPECT_EQ(d.data.labels, (std::vector<uint32_t>{0, 2, 0, 1}));
  // Bytes ('|S'), NUL-padded, read the same.
  const char bytes[] = "ab\0\0cd\0\0ab\0\0efgh";
  const std::string s_path = dir.write(
      "s.npz", stored_zip({{"x.npy", npy_bytes("<f4", "(4, 1)", x, sizeof x)},
                           {"y.npy", npy_bytes("|S4", "(4,)", bytes, 16)}}));
  EXPECT_EQ(vkamp::data::load_labeled(s_path, {}).classes, (std::vector<std::string>{"ab", "cd", "efgh"}));
  // Text is for labels: as inputs or regression targets it is refused.
  const char ucs4[8] = {'a', 0, 0, 0, 'b', 0, 0, 0};
  const std::string as_x = dir.write("t.npz", stored_zip({{"x.npy", npy_bytes("<U1", "(2, 1)", ucs4, 8)},
                                                          {"y.npy", unicode_npy({"a", "b"})}}));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(as_x, {}); }, "t.npz: x.npy", "must be numbers"));
  LoadOptions regress;
  regress.task = Task::Regress;
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(path, regress); }, "d.npz: y.npy", "are numbers"));
}

TEST(Unlabelled, NumpyEmptyTextLabelNamesTheIndexOrIsDropped) {
  ScratchDir dir;
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::string path = dir.write(
      "d.npz", stored_zip({{"x.npy", npy_bytes("<f4", "(4, 2)", x, sizeof x)},
                           {"y.npy", unicode_npy({"setosa", "", "virginica", "  "})}}));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(path, {}); }, "d.npz: y.npy: index 1",
                            "the label is empty"));
  LoadOptions o;
  o.drop_unlabelled = true;
  const LabeledData d = vkamp::data::load_labeled(path, o);
  EXPECT_EQ(d.dropped_unlabelled, 2u);
  EXPECT_EQ(d.data.count, 2u);
  EXPECT_EQ(d.data.x, (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(d.classes, (std::vector<std::string>{"setosa", "virginica"}));
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("2 rows without a label left out"), std::string::npos) << d.notes[0];
  // A label outside the given classes names its index in the file, not
  // among the rows kept.
  o.classes = {"setosa"};
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(path, o); }, "d.npz: y.npy: index 2",
                            "'virginica' is not one of the 1 classes"));
}

TEST(Unlabelled, MissingLabelNextToAHeaderOfNumbersHintsSkipRows) {
  // scikit-learn's iris.csv: a count line where the header should be.
  const std::string text = "150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,0\n";
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_csv(text, "iris.csv", classify()); },
                            "iris.csv:1: no column 'species'", "--skip-rows 1"));
  // A header of names gets no such hint.
  try {
    vkamp::data::parse_csv("a,b,c\n1,2,3\n", "ok.csv", classify());
    ADD_FAILURE() << "a missing label column was accepted";
  } catch (const vkamp::data::DataError& e) {
    EXPECT_EQ(std::string(e.what()).find("--skip-rows"), std::string::npos) << e.what();
  }
}

}  // namespace
