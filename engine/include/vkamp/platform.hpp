// The platform layer: what differs between operating systems, behind one
// interface, so that no other file names an OS macro or a POSIX-only call.
// Paths are UTF-8 std::strings in every interface.
#pragma once
#include <string>

namespace vkamp::platform {

// vkamp's folder of per-user caches (pipelines, GEMM tunings):
// $XDG_CACHE_HOME/vkamp, else ~/.cache/vkamp on Linux; %LOCALAPPDATA%\vkamp
// on Windows. Empty where the variables it is made from are unset.
std::string user_cache_dir();

// Sets (value non-null) or removes an environment variable of this process.
void set_env(const char* name, const char* value);

// Standard input and output as bytes: no CRLF translation on Windows
// (a program that reads and writes UTF-8 text line by line).
void binary_stdio();

}  // namespace vkamp::platform
