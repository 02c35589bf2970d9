// resnet: trains a small ResNet with BatchNorm on Fashion-MNIST in mixed
// precision (fp16 with dynamic loss scaling by default): a conv-BN-ReLU
// stem (stride 2), one residual block per stage at widths 8/16/32 (stride-2
// downsampling with 1x1 projection shortcuts), global average pooling and
// a linear classifier, trained with momentum SGD, weight decay and a cosine
// schedule. Reports the test accuracy every epoch and exports the weights
// (PyTorch's names, BatchNorm's running statistics included). The job
// itself is defined in app/workloads.cpp, shared with vkamp-studio.
#include "sample_main.hpp"
#include "vkamp/platform.hpp"

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  return vkamp::samples::classifier_sample_main(
      "resnet",
      "Trains a small ResNet (conv 3x3 - BN - ReLU stem at stride 2, then one residual\n"
      "block of two 3x3 conv-BN pairs per stage at widths 8, 16 and 32, halving the\n"
      "resolution with stride 2 and 1x1 conv-BN shortcuts, global average pooling,\n"
      "linear 10: \"resnet 8-16-32 x1 (stem stride 2)\") on Fashion-MNIST\n"
      "(Debian package dataset-fashion-mnist, or --data DIR with the IDX files) with\n"
      "momentum SGD, weight decay and a cosine schedule, in fp16 with dynamic loss\n"
      "scaling unless told otherwise. Reports the test accuracy after every epoch, the\n"
      "skipped steps and the final loss scale, then writes the weights to --save FILE\n"
      "(resnet.safetensors by default; --save '' skips it) under PyTorch's names.",
      argc, argv);
}
