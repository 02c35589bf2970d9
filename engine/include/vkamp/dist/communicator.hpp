// The process group of a data-parallel run: which rank this process is, how
// many there are, and the few collective operations training needs. The
// only module that talks to MPI (communicator_mpi.cpp); a build without MPI
// (VKAMP_WITH_MPI=OFF) compiles communicator_single.cpp instead, a world of
// one where every collective is the identity. No other file includes <mpi.h>.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace vkamp::dist {

// Thrown on the ranks that were ready when another rank failed on its input
// before training (agree_ready): that rank reports the error.
class PeerFailed : public std::runtime_error {
 public:
  explicit PeerFailed(int rank)
      : std::runtime_error("rank " + std::to_string(rank) + " failed before training"), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

class Communicator {
 public:
  // The process's world. MPI is initialised on first use, and only when the
  // process was started by a launcher (mpirun sets OMPI_COMM_WORLD_SIZE,
  // PMI_SIZE or PMIX_RANK): a plain run never pays for, or depends on,
  // MPI_Init. Finalised at exit.
  static Communicator& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This process's index among the ranks on its machine (device choice).
  int local_rank() const { return local_rank_; }
  bool distributed() const { return size_ > 1; }

  // Element-wise sums over every rank, in place. Every rank must call with
  // the same count. The order of the additions is MPI's, the same on every
  // rank for one call, so every rank gets the same bits.
  void sum(float* data, size_t count);
  // The smallest and the largest of `value` over the ranks.
  uint64_t min(uint64_t value);
  uint64_t max(uint64_t value);
  // The logical or of `flag` over the ranks (one rank's bad input stops all).
  bool any(bool flag);
  // The agreement before training: every rank says whether it is ready;
  // returns the lowest rank that is not (-1: all are). A rank that fails on
  // its input before this point must still call it (from its error
  // handler), or the others wait here forever. Remembered for the handler.
  int agree_ready(bool ready);
  bool ready_agreed() const { return ready_agreed_; }
  int first_failed() const { return first_failed_; }
  void barrier();
  // Ends every rank of the job with `code`, after printing why on stderr,
  // prefixed with this rank. Without MPI: prints and exits.
  [[noreturn]] void abort(int code, const std::string& why);
  // "[rank 1/2] " under MPI, "" in a world of one: the prefix of every line
  // only some ranks print.
  std::string prefix() const;

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

 private:
  Communicator();
  ~Communicator();
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool initialized_ = false, ready_agreed_ = false;
  int first_failed_ = -1;
};

// Whether this build can run under MPI at all (VKAMP_WITH_MPI).
bool built_with_mpi();

}  // namespace vkamp::dist
