#pragma once
// What kbv's CLI needs to know about the host without LibTorch: where its caches go and which
// GPUs there are (NVML and device files, not CUDA: the CLI never initialises a device).
#include <string>
#include <vector>

#include "core/cache_dir.hpp"

namespace kbv {

// "cuda:0", "cuda:1"... for each GPU CUDA would show this process (CUDA_VISIBLE_DEVICES
// respected, logical indices: visible_devices.hpp); {"cpu"} when there is none.
std::vector<std::string> detect_devices();

// "cuda:0" when a GPU is present, else "cpu".
std::string default_device();

}  // namespace kbv
