#include "mpi_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace vkamp::test {
namespace {

struct Step {
  unsigned step = 0, applied = 0;
  double loss = 0, scale = 0;
  int skipped = 0, overflow = 0;
};

struct Result {
  std::string text;  // the step records, final scale and weights as written (hex floats): compared bitwise
  std::vector<Step> steps;
  std::vector<double> master, buffers;
  double final_scale = 0;
  int failed = -1;
  unsigned ranks = 0;
  unsigned local_overflows = 0;  // this rank's own (per-rank, not compared across ranks)
  unsigned allreduce_waits = 0, loop_waits = 0;
};

bool read_result(const std::string& path, Result& r) {
  std::ifstream in(path);
  if (!in) {
    std::printf("cannot read %s\n", path.c_str());
    return false;
  }
  std::stringstream all;
  all << in.rdbuf();
  std::istringstream lines(all.str());
  std::string word;
  std::string line;
  while (std::getline(lines, line)) {
    // The wait counters depend on when each rank's host polled its GPU;
    // everything else must be the same on every rank.
    if (line.rfind("allreduce_waits", 0) != 0 && line.rfind("loop_waits", 0) != 0 &&
        line.rfind("local_overflows", 0) != 0)
      r.text += line + "\n";
  }
  lines.clear();
  lines.seekg(0);
  while (lines >> word) {
    if (word == "step") {
      Step s;
      std::string loss, scale;
      lines >> s.step >> loss >> scale >> s.skipped >> s.overflow >> s.applied;
      s.loss = std::strtod(loss.c_str(), nullptr);
      s.scale = std::strtod(scale.c_str(), nullptr);
      r.steps.push_back(s);
    } else if (word == "final_scale") {
      lines >> word;
      r.final_scale = std::strtod(word.c_str(), nullptr);
    } else if (word == "failed") {
      lines >> r.failed;
    } else if (word == "ranks") {
      lines >> r.ranks;
    } else if (word == "local_overflows") {
      lines >> r.local_overflows;
    } else if (word == "allreduce_waits") {
      lines >> r.allreduce_waits;
    } else if (word == "loop_waits") {
      lines >> r.loop_waits;
    } else if (word == "master" || word == "buffers") {
      size_t n = 0;
      lines >> n;
      std::vector<double>& to = word == "master" ? r.master : r.buffers;
      for (size_t i = 0; i < n && lines >> word; ++i) to.push_back(std::strtod(word.c_str(), nullptr));
    } else {
      lines >> word;  // a counter the checks do not use
    }
  }
  if (r.failed != 0 || r.master.empty()) {
    std::printf("%s: the run failed or wrote no weights\n", path.c_str());
    return false;
  }
  return true;
}

// Every rank of a data-parallel run saw the same records and ends with the
// same weights, bit for bit (the files are identical).
bool same_on_every_rank(const std::string& prefix, unsigned ranks, Result& rank0) {
  if (!read_result(prefix + ".rank0", rank0)) return false;
  if (rank0.ranks != ranks) {
    std::printf("%s.rank0: trained over %u ranks, expected %u\n", prefix.c_str(), rank0.ranks, ranks);
    return false;
  }
  for (unsigned r = 1; r < ranks; ++r) {
    Result other;
    const std::string path = prefix + ".rank" + std::to_string(r);
    if (!read_result(path, other)) return false;
    if (other.text != rank0.text) {
      std::printf("%s differs from %s.rank0: the replicas diverged\n", path.c_str(), prefix.c_str());
      return false;
    }
  }
  std::printf("%s: %u ranks, identical records (%zu steps) and weights\n", prefix.c_str(), ranks, rank0.steps.size());
  return true;
}

// Two ranks at batch B against one process at 2B (argv: SINGLE DUAL TOL).
//
// The bound. Both runs compute, per step, every gradient element as a sum
// g = sum_i t_i over the same 2B rows; they differ only in the order of the
// additions: one process sums the 2B rows in its GEMM's order, two ranks
// each sum B rows and the all-reduce adds the two partial sums. The 1/B
// and 1/(2B) of the mean, the /2 after the all-reduce and the loss scale
// are powers of two, so exact. Recursive summation of n terms in fp32 is
// within gamma_n * sum_i |t_i| of the exact sum (gamma_n = n u / (1 - n u),
// u = 2^-24; Higham, Accuracy and Stability, 4.2), so the two computed
// gradients differ by at most 2 gamma_2B sum|t_i| = 1.9e-6 sum|t_i| for
// 2B = 16. sum|t_i| is the mean of |x| |dL/dz| over the rows: below 1 here
// (standardised inputs, softmax-minus-one-hot gradients in [-1, 1]). The
// update (SGD, lr 0.1, momentum 0.9: a step's gradient moves the weights
// by at most lr / (1 - 0.9) = 1 in total) adds at most 1.9e-6 to a
// weight's difference per step, 5.7e-5 over 30 steps, before any
// amplification of earlier differences through the next gradients
// (1 + lr L per step; small here, the loss being smooth and the steps
// short: we allow it a factor below 2). TOL = 1e-4 relative (absolute below
// 1). The losses are means of the same per-row values summed in two
// orders: the same bound. A bug that mixes up the ranks' rows, forgets the
// /2 or drops a rank's gradient gives differences of order 1e-2 or more.
int check_equivalent(int argc, char** argv) {
  if (argc != 5) return 2;
  Result one, two;
  if (!read_result(argv[2], one) || !same_on_every_rank(argv[3], 2, two)) return 1;
  const double tol = std::strtod(argv[4], nullptr);
  if (one.steps.size() != two.steps.size() || one.master.size() != two.master.size()) {
    std::printf("different runs: %zu vs %zu steps, %zu vs %zu weights\n", one.steps.size(), two.steps.size(),
                one.master.size(), two.master.size());
    return 1;
  }
  double loss_diff = 0, w_diff = 0;
  for (size_t i = 0; i < one.steps.size(); ++i)
    loss_diff = std::max(loss_diff, std::abs(one.steps[i].loss - two.steps[i].loss) /
                                        std::max(1.0, std::abs(one.steps[i].loss)));
  for (size_t i = 0; i < one.master.size(); ++i)
    w_diff = std::max(w_diff, std::abs(one.master[i] - two.master[i]) / std::max(1.0, std::abs(one.master[i])));
  std::printf("1 rank at 2B vs 2 ranks at B over %zu steps: largest relative loss difference %.3g, weight "
              "difference %.3g (bound %.3g)\n",
              one.steps.size(), loss_diff, w_diff, tol);
  return loss_diff <= tol && w_diff <= tol && one.steps.size() >= 30 ? 0 : 1;
}

// An overflow injected into one rank at step S (argv: PREFIX S BACKOFF):
// both ranks skip S, both back off by BACKOFF, and nothing else is skipped.
int check_shared_overflow(int argc, char** argv) {
  if (argc != 5) return 2;
  Result r;
  if (!same_on_every_rank(argv[2], 2, r)) return 1;
  const unsigned s = unsigned(std::atoi(argv[3]));
  const double backoff = std::strtod(argv[4], nullptr);
  bool ok = true;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const Step& st = r.steps[i];
    const bool expect = st.step == s;
    if ((st.skipped != 0) != expect || (st.overflow != 0) != expect) {
      std::printf("step %u: skipped %d overflow %d, expected %d\n", st.step, st.skipped, st.overflow, expect ? 1 : 0);
      ok = false;
    }
    if (expect && (i + 1 >= r.steps.size() || r.steps[i + 1].scale != st.scale * backoff)) {
      std::printf("step %u: the scale after the overflow is not %g x %g\n", st.step, st.scale, backoff);
      ok = false;
    }
  }
  // Only rank 1's own gradients overflowed: the others learned of it from the sum.
  Result rank1;
  if (!read_result(std::string(argv[2]) + ".rank1", rank1)) return 1;
  if (r.local_overflows != 0 || rank1.local_overflows != 1) {
    std::printf("local overflows: rank 0 %u, rank 1 %u; expected 0 and 1\n", r.local_overflows,
                rank1.local_overflows);
    ok = false;
  }
  // The steady state of a data-parallel run: its waits are all counted as
  // the all-reduce's (two per step at most), none left in the loop's count.
  if (r.loop_waits != 0 || r.allreduce_waits == 0 || r.allreduce_waits > 2 * r.steps.size()) {
    std::printf("host waits: %u in the loop, %u for the all-reduce over %zu steps\n", r.loop_waits,
                r.allreduce_waits, r.steps.size());
    ok = false;
  }
  if (ok)
    std::printf("step %u: overflow on rank 1 only, skipped on every rank, scale backed off by %g on every rank\n", s,
                backoff);
  return ok ? 0 : 1;
}

// A run resumed from a checkpoint continues exactly (argv: FULL RESUMED):
// the resumed run's records are the full run's from where it resumed, and
// the final weights are bit-identical, on every rank.
int check_resume(int argc, char** argv) {
  if (argc != 4) return 2;
  Result full, resumed;
  if (!same_on_every_rank(argv[2], 2, full) || !same_on_every_rank(argv[3], 2, resumed)) return 1;
  if (resumed.steps.empty() || resumed.steps.size() >= full.steps.size()) {
    std::printf("the resumed run has %zu steps, the full one %zu\n", resumed.steps.size(), full.steps.size());
    return 1;
  }
  const size_t offset = full.steps.size() - resumed.steps.size();
  for (size_t i = 0; i < resumed.steps.size(); ++i) {
    const Step &a = full.steps[offset + i], &b = resumed.steps[i];
    if (a.step != b.step || a.loss != b.loss || a.scale != b.scale || a.applied != b.applied) {
      std::printf("step %u: the resumed run differs (loss %a vs %a)\n", b.step, b.loss, a.loss);
      return 1;
    }
  }
  if (full.master != resumed.master) {
    std::printf("the final weights differ\n");
    return 1;
  }
  std::printf("resumed at step %u: %zu records and the final weights bit-identical to the uninterrupted run\n",
              resumed.steps.front().step, resumed.steps.size());
  return 0;
}

// Two data-parallel runs that must be the same bit for bit (argv: A B):
// the training set resident on the GPU and streamed from the host.
int check_identical(int argc, char** argv) {
  if (argc != 4) return 2;
  Result a, b;
  if (!same_on_every_rank(argv[2], 2, a) || !same_on_every_rank(argv[3], 2, b)) return 1;
  if (a.text != b.text) {
    std::printf("%s and %s differ\n", argv[2], argv[3]);
    return 1;
  }
  std::printf("%s and %s: the same records and weights, bit for bit\n", argv[2], argv[3]);
  return 0;
}

// A run whose ranks must end as replicas, buffers included (argv: RUN):
// BatchNorm without --sync-bn, where each rank's running statistics are its
// own until the replica check averages them.
int check_replicas(int argc, char** argv) {
  if (argc != 3) return 2;
  Result r;
  if (!same_on_every_rank(argv[2], 2, r)) return 1;
  if (r.buffers.empty()) {
    std::printf("%s: the model has no buffers\n", argv[2]);
    return 1;
  }
  std::printf("%s: %zu buffer values identical on every rank\n", argv[2], r.buffers.size());
  return 0;
}

}  // namespace

int run_check(int argc, char** argv) {
  const std::map<std::string, int (*)(int, char**)> checks = {
      {"equivalent", check_equivalent}, {"shared_overflow", check_shared_overflow}, {"resume", check_resume},
      {"identical", check_identical}, {"replicas", check_replicas}};
  if (argc >= 2) {
    auto it = checks.find(argv[1]);
    if (it != checks.end()) {
      const int status = it->second(argc, argv);
      if (status == 2) std::fprintf(stderr, "%s: wrong arguments\n", argv[1]);
      return status;
    }
  }
  std::fprintf(stderr, "usage: mpi_train_driver train OUT [key=value ...] | equivalent | shared_overflow | resume | identical | replicas\n");
  return 2;
}

}  // namespace vkamp::test
