// Reading tokenizer.json's fields, each error naming the file, the field's
// path ("pre_tokenizer.pretokenizers[1].pattern") and what was expected:
// the files are input, so nothing in them is trusted.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "vkamp/text/tokenizer.hpp"

namespace vkamp::text {

using json = nlohmann::json;

struct Where {
  std::string file;  // the file as the user named it
  std::string path;  // the field inside it; empty for the whole file

  Where at(const std::string& key) const { return {file, path.empty() ? key : path + "." + key}; }
  Where at(std::size_t i) const { return {file, path + "[" + std::to_string(i) + "]"}; }
  [[noreturn]] void fail(const std::string& what) const {
    throw TokenizerError(file + ": " + (path.empty() ? "" : path + ": ") + what);
  }
};

inline const char* json_kind(const json& j) { return j.type_name(); }

inline void expect_object(const json& j, const Where& w) {
  if (!j.is_object()) w.fail(std::string("expected an object, found ") + json_kind(j));
}

// The member `key` of the object `obj`, which must be there.
inline const json& member(const json& obj, const std::string& key, const Where& w) {
  expect_object(obj, w);
  const auto it = obj.find(key);
  if (it == obj.end()) w.at(key).fail("missing");
  return *it;
}

// The member, or nullptr where it is absent or null.
inline const json* optional_member(const json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

inline std::string as_string(const json& j, const Where& w) {
  if (!j.is_string()) w.fail(std::string("expected a string, found ") + json_kind(j));
  return j.get<std::string>();
}

inline std::string string_member(const json& obj, const std::string& key, const Where& w) {
  return as_string(member(obj, key, w), w.at(key));
}

inline std::string string_or(const json& obj, const std::string& key, const std::string& otherwise, const Where& w) {
  const json* j = optional_member(obj, key);
  return j ? as_string(*j, w.at(key)) : otherwise;
}

inline bool bool_or(const json& obj, const std::string& key, bool otherwise, const Where& w) {
  const json* j = optional_member(obj, key);
  if (!j) return otherwise;
  if (!j->is_boolean()) w.at(key).fail(std::string("expected true or false, found ") + json_kind(*j));
  return j->get<bool>();
}

inline int64_t integer_or(const json& obj, const std::string& key, int64_t otherwise, const Where& w) {
  const json* j = optional_member(obj, key);
  if (!j) return otherwise;
  if (!j->is_number_integer()) w.at(key).fail(std::string("expected an integer, found ") + json_kind(*j));
  return j->get<int64_t>();
}

inline const json& array_member(const json& obj, const std::string& key, const Where& w) {
  const json& j = member(obj, key, w);
  if (!j.is_array()) w.at(key).fail(std::string("expected an array, found ") + json_kind(j));
  return j;
}

// A component's "type" (which the caller then checks against what it reads).
inline std::string component_type(const json& obj, const Where& w) { return string_member(obj, "type", w); }

// Refuses a component by name; `supported` lists what vkamp reads instead.
[[noreturn]] inline void unsupported(const Where& w, const std::string& component, const std::string& type,
                                     const std::string& supported) {
  w.fail("the " + component + " \"" + type + "\" is not supported by vkamp (it reads " + supported + ")");
}

}  // namespace vkamp::text
