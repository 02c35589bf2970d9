// Class labels (strings as read from a file) to class ids.
//
// Without a given list: when every label is a non-negative integer, class i
// is the string of i and the classes are "0" .. "max" (so ids are the
// integers themselves, as in IDX and NumPy files); otherwise the distinct
// labels are numbered in sorted (byte) order, which does not depend on the
// row order. With a given list (from the training set or a saved model) a
// label maps to its exact match there, and one not in the list is an error.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vkamp::data {

struct ClassIds {
  std::vector<uint32_t> ids;         // one per label
  std::vector<std::string> classes;  // names in id order
};

// A label cell that is empty or only white space: no class at all, never
// a class named "" (the readers refuse such a row, or drop it when asked).
inline bool is_blank_label(const std::string& s) { return s.find_first_not_of(" \t\r\n\v\f") == std::string::npos; }
// What an error about such a label ends with.
inline const char* const kUnlabelledAdvice =
    "every row needs a label (--drop-unlabelled leaves such rows out and counts them)";

// Integer labels above this are an error rather than that many classes (a
// damaged file must not make a model with four billion outputs).
inline constexpr uint32_t kMaxIntegerClass = 65535;

// `where(i)` names label i in an error, e.g. "data.csv:17" or
// "d.npz: y.npy: index 4". Throws DataError.
ClassIds number_classes(const std::vector<std::string>& labels, const std::vector<std::string>& given,
                        const std::function<std::string(size_t)>& where);

// Whether labels numbered as above look like a continuous target (a
// regression's y read as classes) rather than classes: every class name is
// a number, and either one is not a whole number, or more than
// kMaxDiscreteValues distinct values occur with fewer than
// kMinRowsPerValue rows each on average (a classifier needs several
// examples of each class). Returns why, e.g. "'151.5' is not a whole
// number" or "214 distinct values over 442 rows", or "" for classes.
inline constexpr size_t kMaxDiscreteValues = 50;
inline constexpr size_t kMinRowsPerValue = 5;
std::string continuous_label_reason(const std::vector<std::string>& classes, const std::vector<uint32_t>& ids);

}  // namespace vkamp::data
