// fashion_mlp: trains a 784-256-256-10 ReLU MLP on Fashion-MNIST in mixed
// precision (fp16 with dynamic loss scaling by default) and reports test
// accuracy, skipped steps and the final loss scale. The job itself is
// defined in app/workloads.cpp, shared with vkamp-studio.
#include "sample_main.hpp"
#include "vkamp/platform.hpp"

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  return vkamp::samples::classifier_sample_main(
      "fashion_mlp",
      "Trains a 784-256-256-10 ReLU MLP on Fashion-MNIST (Debian package\n"
      "dataset-fashion-mnist, or --data DIR with the IDX files) with momentum SGD,\n"
      "in fp16 with dynamic loss scaling unless told otherwise, then reports the\n"
      "test accuracy, the skipped steps and the final loss scale.",
      argc, argv);
}
