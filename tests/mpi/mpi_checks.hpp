// The checks the mpi tests run on mpi_train_driver's result files
// (mpi_checks.cpp). Each prints what it compared and returns the exit
// status: 0 when the check holds, 1 when it does not, 2 on bad arguments.
#pragma once

namespace vkamp::test {

int run_check(int argc, char** argv);

}  // namespace vkamp::test
