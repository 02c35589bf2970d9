// A world of one: the build without MPI (VKAMP_WITH_MPI=OFF). Every
// collective returns its input, so the trainer's code is the same either way.
#include <cstdio>
#include <cstdlib>

#include "vkamp/dist/communicator.hpp"

namespace vkamp::dist {

Communicator::Communicator() = default;
Communicator::~Communicator() = default;

Communicator& Communicator::world() {
  static Communicator w;
  return w;
}

void Communicator::sum(float*, size_t) {}
uint64_t Communicator::min(uint64_t value) { return value; }
uint64_t Communicator::max(uint64_t value) { return value; }
bool Communicator::any(bool flag) { return flag; }
int Communicator::agree_ready(bool ready) {
  ready_agreed_ = true;
  first_failed_ = ready ? -1 : 0;
  return first_failed_;
}

void Communicator::barrier() {}

void Communicator::abort(int code, const std::string& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(code);
}

std::string Communicator::prefix() const { return ""; }

bool built_with_mpi() { return false; }

}  // namespace vkamp::dist
