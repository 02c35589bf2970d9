// The process group over MPI: the only file that includes <mpi.h>.
// The C API only: Open MPI's and MPICH's deprecated C++ bindings would
// otherwise come along and need their own library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "vkamp/dist/communicator.hpp"

namespace vkamp::dist {
namespace {

// Set by the launchers vkamp knows: Open MPI, MPICH/Hydra (PMI), PMIx.
bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

Communicator::Communicator() {
  if (!launched_by_mpirun()) return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    initialized_ = true;
  }
  // Errors come back as codes (check() throws), so a failing collective
  // reaches the caller's handler, which aborts the job with a reason.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  local_rank_ = env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", env_int("PMI_LOCAL_RANK", rank_)));
}

// A static's destructor: runs at a normal exit. A rank that ends by
// abort() or a crash never gets here, and mpirun then ends the job.
Communicator::~Communicator() {
  if (initialized_) MPI_Finalize();
}

Communicator& Communicator::world() {
  static Communicator w;
  return w;
}

void Communicator::sum(float* data, size_t count) {
  if (size_ == 1) return;
  // One call per 2^30 floats: MPI counts are ints.
  for (size_t done = 0; done < count;) {
    const int n = int(std::min<size_t>(count - done, size_t(1) << 30));
    check(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    done += size_t(n);
  }
}

uint64_t Communicator::min(uint64_t value) {
  if (size_ == 1) return value;
  uint64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce(MIN)");
  return out;
}

uint64_t Communicator::max(uint64_t value) {
  if (size_ == 1) return value;
  uint64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce(MAX)");
  return out;
}

bool Communicator::any(bool flag) { return max(flag ? 1 : 0) != 0; }

int Communicator::agree_ready(bool ready) {
  ready_agreed_ = true;
  const uint64_t lowest = min(ready ? uint64_t(size_) : uint64_t(rank_));
  first_failed_ = lowest < uint64_t(size_) ? int(lowest) : -1;
  return first_failed_;
}

void Communicator::barrier() {
  if (size_ > 1) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void Communicator::abort(int code, const std::string& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s%s\n", prefix().c_str(), why.c_str());
  std::fflush(stderr);
  if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

std::string Communicator::prefix() const {
  if (size_ == 1) return "";
  return "[rank " + std::to_string(rank_) + "/" + std::to_string(size_) + "] ";
}

bool built_with_mpi() { return true; }

}  // namespace vkamp::dist
