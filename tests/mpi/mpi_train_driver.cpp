// The data-parallel test driver. Run under mpirun, it trains the toy model
// ("6-5t-3" on make_classification data, as tests/train/test_trainer.cpp,
// or model=SPEC) with the settings given as key=value arguments and writes
// what each rank saw into OUT.rank<r>: every step record, the final fp32
// masters and buffers (BatchNorm's running statistics), as hex floats so
// that a comparison can be bitwise. `compare` mode (no mpirun)
// checks such files against each other: see mpi_checks.cpp.
//
//   mpi_train_driver train OUT [key=value ...]   (train:: setting keys, plus
//       rows=N: the examples; fail_rank=R fail_at=S: rank R throws at step S;
//       perturb_rank=R: rank R starts from different weights; model=SPEC)
//   mpi_train_driver <check> ARGS...             (mpi_checks.cpp)
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_checks.hpp"
#include "vkamp/context.hpp"
#include "vkamp/dist/communicator.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/train/trainer.hpp"

using namespace vkamp;

namespace {

int train_main(int argc, char** argv) {
  dist::Communicator& comm = dist::Communicator::world();
  const std::string out = argv[2];
  config::TrainConfig cfg;
  cfg.batch = 8;
  cfg.epochs = 4;
  cfg.seed = 7;
  cfg.optimizer.lr = 0.1;
  cfg.optimizer.momentum = 0.9;
  cfg.scaler.histogram_interval = 0;
  uint32_t rows = 128;
  int fail_rank = -1, perturb_rank = -1;
  uint32_t fail_at = 0;
  std::string model = "6-5t-3";
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) throw vkamp::ConfigError("expected key=value, got '" + arg + "'");
    const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    if (key == "rows") rows = config::parse_u32(value, key, 1);
    else if (key == "fail_rank") fail_rank = int(config::parse_u32(value, key));
    else if (key == "fail_at") fail_at = config::parse_u32(value, key);
    else if (key == "perturb_rank") perturb_rank = int(config::parse_u32(value, key));
    else if (key == "model") model = value;
    else config::apply_setting(key, value, cfg);
  }
  ContextOptions opt;
  opt.local_rank = comm.local_rank();
  Context ctx(opt);
  const data::HostData data =
      data::HostData::classification(data::make_classification(rows, 6, 3, /*seed=*/5));
  train::Trainer trainer(ctx, cfg, models::parse_model(model), train::LossKind::SoftmaxXent, data);

  if (int(comm.rank()) == perturb_rank) {  // a replica that is not one: the replica check must notice
    std::vector<float> w = trainer.model().read_master();
    w[0] += 0.25f;
    trainer.model().write_master(w);
  }
  FILE* f = std::fopen((out + ".rank" + std::to_string(comm.rank())).c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + out);
  trainer.on_step = [&](const train::StepMetrics& m) {
    if (int(comm.rank()) == fail_rank && m.step == fail_at)
      throw std::runtime_error("injected failure at step " + std::to_string(m.step));
    std::fprintf(f, "step %u %a %a %d %d %u\n", m.step, double(m.loss), double(m.loss_scale), m.skipped ? 1 : 0,
                 m.overflow ? 1 : 0, m.applied);
  };
  const train::TrainSummary s = trainer.run();
  const std::vector<float> w = trainer.model().read_master();
  std::fprintf(f,
               "final_scale %a\nfailed %d\nranks %u\nallreduce_waits %llu\nloop_waits %llu\nlocal_overflows %u\n"
               "master %zu\n",
               double(s.final_scale), s.failed ? 1 : 0, s.ranks,
               static_cast<unsigned long long>(s.host_waits_for_allreduce),
               static_cast<unsigned long long>(s.host_waits_in_loop), s.local_overflow_steps, w.size());
  for (float v : w) std::fprintf(f, "%a\n", double(v));
  const std::vector<float> b = trainer.model().read_buffers();
  std::fprintf(f, "buffers %zu\n", b.size());
  for (float v : b) std::fprintf(f, "%a\n", double(v));
  std::fclose(f);
  return s.failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "train") {
    dist::Communicator& comm = dist::Communicator::world();
    try {
      return train_main(argc, argv);
    } catch (const std::exception& e) {
      // Another rank may be waiting in an all-reduce: end the whole job.
      comm.abort(1, std::string("mpi_train_driver: ") + e.what());
    }
  }
  return vkamp::test::run_check(argc, argv);
}
