// lenet5: trains LeNet-5 on Fashion-MNIST in mixed precision (fp16 with
// dynamic loss scaling by default): conv 5x5 to 6 channels (padding 2) ->
// max pool 2 -> conv 5x5 to 16 channels -> max pool 2 -> 120 -> 84 -> 10,
// ReLU after each conv and hidden layer, momentum SGD with a cosine
// learning-rate schedule. Reports the test accuracy, the skipped steps and
// the final loss scale. The job itself is defined in
// app/workloads.cpp, shared with vkamp-studio.
#include "sample_main.hpp"
#include "vkamp/platform.hpp"

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  return vkamp::samples::classifier_sample_main(
      "lenet5",
      "Trains LeNet-5 (conv 5x5x6 pad 2 - max pool 2 - conv 5x5x16 - max pool 2 -\n"
      "120 - 84 - 10, ReLU; model string 28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10)\n"
      "on Fashion-MNIST (Debian package dataset-fashion-mnist, or --data DIR with\n"
      "the IDX files) with momentum SGD and a cosine learning-rate schedule, in fp16\n"
      "with dynamic loss scaling unless told otherwise, then reports the test\n"
      "accuracy, the skipped steps and the final loss scale.",
      argc, argv);
}
