// UTF-8 strings and std::filesystem paths, both ways. vkamp's interfaces
// take and print paths as UTF-8; a path built straight from a std::string
// reads it in the system's narrow encoding (the ANSI code page on Windows),
// which would open the wrong file for a name like "données.csv".
#pragma once
#include <filesystem>
#include <string>

namespace vkamp {

inline std::filesystem::path path_from_utf8(const std::string& s) {
  return std::filesystem::path(std::u8string(s.begin(), s.end()));
}

inline std::string utf8_of(const std::filesystem::path& p) {
  const std::u8string s = p.u8string();
  return std::string(s.begin(), s.end());
}

}  // namespace vkamp
