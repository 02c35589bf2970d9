// The .npz reader: libzip opens the archive from memory, and each wanted
// member is inflated into a buffer that grows as data actually comes out
// (so a damaged size field cannot make us allocate more than the member
// really holds), then parsed as a .npy.
#include "vkamp/data/npz.hpp"

#include <zip.h>

#include <algorithm>
#include <memory>

#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {


struct ArchiveCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct MemberCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;
using Member = std::unique_ptr<zip_file_t, MemberCloser>;

Archive open_archive(const uint8_t* bytes, size_t size, const std::string& label) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes, size, 0, &error);
  zip_t* archive = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  if (!archive) {
    if (source) zip_source_free(source);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw DataError(label + ": not a readable .npz (zip) archive: " + why);
  }
  zip_error_fini(&error);
  return Archive(archive);
}

std::string member_list(zip_t* archive) {
  const zip_int64_t n = zip_get_num_entries(archive, 0);
  std::string s;
  for (zip_int64_t i = 0; i < n && i < 20; ++i) {
    const char* name = zip_get_name(archive, zip_uint64_t(i), 0);
    s += std::string(i ? ", '" : "'") + (name ? name : "?") + "'";
  }
  if (n > 20) s += ", ... (" + std::to_string(n) + " in all)";
  return s.empty() ? "none" : s;
}

std::vector<uint8_t> inflate_member(zip_t* archive, zip_int64_t index, const std::string& where) {
  Member member(zip_fopen_index(archive, zip_uint64_t(index), 0));
  if (!member) throw DataError(where + ": cannot open the member: " + zip_strerror(archive));
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint8_t> out;
  while (true) {
    const size_t have = out.size();
    out.resize(have + kChunk);
    const zip_int64_t got = zip_fread(member.get(), out.data() + have, kChunk);
    if (got < 0)
      throw DataError(where + ": byte " + std::to_string(have) +
                      ": cannot inflate the member: " + zip_file_strerror(member.get()));
    out.resize(have + size_t(got));
    if (got == 0) break;
  }
  return out;
}

}  // namespace

std::map<std::string, NpyArray> parse_npz(const uint8_t* bytes, size_t size, const std::string& label,
                                          const std::vector<std::string>& names,
                                          const std::vector<std::string>& optional) {
  Archive archive = open_archive(bytes, size, label);
  std::map<std::string, NpyArray> arrays;
  std::vector<std::string> wanted = names;
  wanted.insert(wanted.end(), optional.begin(), optional.end());
  for (size_t i = 0; i < wanted.size(); ++i) {
    const std::string& name = wanted[i];
    const std::string member = name + ".npy";
    const zip_int64_t index = zip_name_locate(archive.get(), member.c_str(), 0);
    if (index < 0 && i >= names.size()) continue;
    if (index < 0)
      throw DataError(label + ": no member '" + member + "' (members: " + member_list(archive.get()) + ")");
    const std::string where = label + ": " + member;
    const std::vector<uint8_t> npy = inflate_member(archive.get(), index, where);
    arrays.emplace(name, parse_npy(npy.data(), npy.size(), where));
  }
  return arrays;
}

}  // namespace vkamp::data
