// Which GPUs kbv run takes when none are named: CUDA_VISIBLE_DEVICES by CUDA's rules.
#include <gtest/gtest.h>

#include "orchestrate/visible_devices.hpp"

namespace kbv {
namespace {

using Devices = std::vector<std::string>;

GpuInventory files(int n) {
  GpuInventory h;
  h.device_files = n;
  return h;
}

GpuInventory nvml(std::vector<std::string> uuids) {
  GpuInventory h;
  h.nvml_uuids = std::move(uuids);
  h.device_files = static_cast<int>(h.nvml_uuids->size());
  return h;
}

TEST(VisibleDevices, UnsetMeansEveryGpuOfTheHost) {
  EXPECT_EQ(visible_cuda_devices(std::nullopt, files(2)), (Devices{"cuda:0", "cuda:1"}));
  EXPECT_EQ(visible_cuda_devices(std::nullopt, files(0)), Devices{});
  // NVML's count wins over the device files (a /dev/nvidiaN may be missing in a container).
  GpuInventory h = nvml({"GPU-a", "GPU-b", "GPU-c"});
  h.device_files = 1;
  EXPECT_EQ(visible_cuda_devices(std::nullopt, h).size(), 3u);
}

TEST(VisibleDevices, EmptyOrMinusOneMeansNoGpu) {
  EXPECT_EQ(visible_cuda_devices(std::string(""), files(8)), Devices{});
  EXPECT_EQ(visible_cuda_devices(std::string("-1"), files(8)), Devices{});
}

TEST(VisibleDevices, IndicesAreRenumberedFromZero) {
  // CUDA numbers the visible devices 0..k-1 in the variable's order: cuda:1 here is physical 5.
  EXPECT_EQ(visible_cuda_devices(std::string("3,5"), files(8)), (Devices{"cuda:0", "cuda:1"}));
  EXPECT_EQ(visible_cuda_devices(std::string(" 2 , 0 "), files(8)), (Devices{"cuda:0", "cuda:1"}));
}

TEST(VisibleDevices, TheListEndsAtTheFirstEntryThatNamesNoDevice) {
  EXPECT_EQ(visible_cuda_devices(std::string("1,7,2"), files(4)), Devices{"cuda:0"});
  EXPECT_EQ(visible_cuda_devices(std::string("0,-1,1"), files(4)), Devices{"cuda:0"});
  EXPECT_EQ(visible_cuda_devices(std::string("0,foo,1"), files(4)), Devices{"cuda:0"});
  EXPECT_EQ(visible_cuda_devices(std::string("0"), files(0)), Devices{});  // no GPU at all
  EXPECT_EQ(visible_cuda_devices(std::string("99999999999"), files(4)), Devices{});
}

TEST(VisibleDevices, ARepeatedDeviceIsNotASecondGpu) {
  EXPECT_EQ(visible_cuda_devices(std::string("0,0,1"), files(4)), Devices{"cuda:0"});
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-a,GPU-a"), files(0)), Devices{"cuda:0"});
}

TEST(VisibleDevices, UuidsAreCountedAsListedWithoutNvml) {
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-1234,GPU-5678"), files(0)), (Devices{"cuda:0", "cuda:1"}));
  EXPECT_EQ(visible_cuda_devices(std::string("MIG-abcd"), files(0)), Devices{"cuda:0"});
}

TEST(VisibleDevices, UuidsAreCheckedAgainstNvml) {
  GpuInventory h = nvml({"GPU-1111aaaa-0000", "GPU-1111bbbb-0000", "GPU-2222cccc-0000"});
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-2222cccc-0000,GPU-1111aaaa"), h), (Devices{"cuda:0", "cuda:1"}));
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-9999"), h), Devices{});        // no such GPU
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-2222,GPU-1111"), h), Devices{"cuda:0"});  // GPU-1111: ambiguous
  // A prefix and the full UUID of one GPU are one GPU.
  EXPECT_EQ(visible_cuda_devices(std::string("GPU-2222,GPU-2222cccc-0000"), h), Devices{"cuda:0"});
}

}  // namespace
}  // namespace kbv
