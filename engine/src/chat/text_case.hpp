// Python's whitespace and letter case over UTF-8 text, for str.strip,
// lower, upper, title and capitalize. Case maps cover ASCII, Latin-1,
// basic Greek and Cyrillic, fullwidth Latin and circled letters; a cased
// letter outside them (Latin Extended, Armenian, Greek's final sigma, ...)
// throws RenderError rather than being left as it is.
#pragma once
#include <string>

namespace vkamp::chat {

// Python's str.isspace() of one code point (given as its UTF-8 bytes).
bool is_space(const std::string& code_point);
// str.strip/lstrip/rstrip: whitespace, or the code points in `chars`.
std::string python_strip(const std::string& s, const std::string* chars, bool left, bool right);
std::string to_lower(const std::string& s);
std::string to_upper(const std::string& s);
std::string to_title(const std::string& s);
std::string capitalize(const std::string& s);

}  // namespace vkamp::chat
