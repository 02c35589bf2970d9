// NumPy .npz archives: a zip of .npy members, stored (np.savez) or deflated
// (np.savez_compressed), read with libzip.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vkamp/data/npy.hpp"

namespace vkamp::data {

// The arrays named in `names` (member "<name>.npy"), each required; a
// missing one is an error listing the members there are. Those named in
// `optional` are read when present. `label` names the archive in errors.
// Throws DataError.
std::map<std::string, NpyArray> parse_npz(const uint8_t* bytes, size_t size, const std::string& label,
                                          const std::vector<std::string>& names,
                                          const std::vector<std::string>& optional = {});

}  // namespace vkamp::data
