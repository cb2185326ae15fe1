// DeviceMemoryTracker on a real GPU, with plain CUDA runtime and driver calls (no torch): every
// allocation path it hooks is counted once, with its size, and only while it is live.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <thread>

#include "cuda/device_memory_tracker.hpp"

namespace {

using kbv::cuda::DeviceMemoryTracker;
using kbv::cuda::WindowStats;

constexpr std::int64_t kMiB = 1024 * 1024;

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define ASSERT_CU(expr) ASSERT_EQ((expr), CUDA_SUCCESS) << #expr

class DeviceMemoryTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Subscribe before anything is allocated, as the worker does at start-up.
    DeviceMemoryTracker& tracker = DeviceMemoryTracker::instance();
    ASSERT_TRUE(tracker.available()) << tracker.error();
    int devices = 0;
    ASSERT_CUDA(cudaGetDeviceCount(&devices));
    ASSERT_GT(devices, 0);
    ASSERT_CUDA(cudaSetDevice(0));
    // Create the context and let the runtime do its lazy set-up outside any window.
    ASSERT_CUDA(cudaFree(nullptr));
    void* warm = nullptr;
    ASSERT_CUDA(cudaMalloc(&warm, 1 * kMiB));
    ASSERT_CUDA(cudaFree(warm));
  }

  DeviceMemoryTracker& tracker() { return DeviceMemoryTracker::instance(); }
};

TEST_F(DeviceMemoryTrackerTest, PeakSeesFreedAllocationAndEndSeesLiveOne) {
  tracker().begin_window();
  void* big = nullptr;
  ASSERT_CUDA(cudaMalloc(&big, 256 * kMiB));
  ASSERT_CUDA(cudaFree(big));
  void* small = nullptr;
  ASSERT_CUDA(cudaMalloc(&small, 64 * kMiB));
  WindowStats stats = tracker().end_window();
  ASSERT_CUDA(cudaFree(small));

  ASSERT_TRUE(stats.valid);
  EXPECT_GE(stats.peak_delta_bytes(), 256 * kMiB);
  EXPECT_EQ(stats.end_delta_bytes(), 64 * kMiB);
  EXPECT_EQ(stats.allocations, 2);
  EXPECT_EQ(stats.frees, 1);
}

TEST_F(DeviceMemoryTrackerTest, RuntimeAllocationIsNotDoubleCounted) {
  // cudaMalloc runs cuMemAlloc inside; whether or not CUPTI reports both, count it once.
  tracker().begin_window();
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 256 * kMiB));
  WindowStats stats = tracker().end_window();
  const std::int64_t live_before_free = tracker().live_bytes();
  ASSERT_CUDA(cudaFree(p));

  ASSERT_TRUE(stats.valid);
  EXPECT_GE(stats.peak_delta_bytes(), 256 * kMiB);
  EXPECT_LT(stats.peak_delta_bytes(), 2 * 256 * kMiB);
  EXPECT_EQ(stats.allocations, 1);
  EXPECT_EQ(tracker().live_bytes(), live_before_free - 256 * kMiB)
      << "the free must be counted once too";
}

TEST_F(DeviceMemoryTrackerTest, DriverAllocationIsCounted) {
  tracker().begin_window();
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 128 * kMiB));
  const std::int64_t live_while_allocated = tracker().live_bytes();
  ASSERT_CU(cuMemFree(p));
  WindowStats stats = tracker().end_window();

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(live_while_allocated - stats.baseline_live_bytes, 128 * kMiB);
  EXPECT_EQ(stats.peak_delta_bytes(), 128 * kMiB);
  EXPECT_EQ(stats.end_delta_bytes(), 0);
  EXPECT_EQ(stats.allocations, 1);
  EXPECT_EQ(stats.frees, 1);
}

#if CUDART_VERSION >= 12050
TEST_F(DeviceMemoryTrackerTest, DriverCallThroughEntryPointIsCounted) {
  // PyTorch and Triton call the driver through pointers from cudaGetDriverEntryPoint*, not
  // through libcuda's exported symbols; CUPTI must still see those calls.
  using MemAllocFn = CUresult(CUDAAPI*)(CUdeviceptr*, std::size_t);
  using MemFreeFn = CUresult(CUDAAPI*)(CUdeviceptr);
  void* alloc_fn = nullptr;
  void* free_fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  ASSERT_CUDA(
      cudaGetDriverEntryPointByVersion("cuMemAlloc", &alloc_fn, 12000, cudaEnableDefault, &found));
  ASSERT_EQ(found, cudaDriverEntryPointSuccess);
  ASSERT_CUDA(
      cudaGetDriverEntryPointByVersion("cuMemFree", &free_fn, 12000, cudaEnableDefault, &found));
  ASSERT_EQ(found, cudaDriverEntryPointSuccess);

  tracker().begin_window();
  CUdeviceptr p = 0;
  ASSERT_CU(reinterpret_cast<MemAllocFn>(alloc_fn)(&p, 8 * kMiB));
  ASSERT_CU(reinterpret_cast<MemFreeFn>(free_fn)(p));
  WindowStats stats = tracker().end_window();

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(stats.peak_delta_bytes(), 8 * kMiB);
  EXPECT_EQ(stats.end_delta_bytes(), 0);
}
#endif

TEST_F(DeviceMemoryTrackerTest, PitchedAllocationCountsPitchTimesHeight) {
  tracker().begin_window();
  void* p = nullptr;
  std::size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(&p, &pitch, 1000, 1000));  // pitch is rounded up past 1000 bytes
  WindowStats stats = tracker().end_window();
  ASSERT_CUDA(cudaFree(p));

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(stats.end_delta_bytes(), static_cast<std::int64_t>(pitch) * 1000);
  EXPECT_EQ(stats.allocations, 1);
}

TEST_F(DeviceMemoryTrackerTest, StreamOrderedAllocationIsCounted) {
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  tracker().begin_window();
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&p, 32 * kMiB, stream));
  ASSERT_CUDA(cudaFreeAsync(p, stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  WindowStats stats = tracker().end_window();
  ASSERT_CUDA(cudaStreamDestroy(stream));

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(stats.peak_delta_bytes(), 32 * kMiB);
  EXPECT_EQ(stats.end_delta_bytes(), 0);
  EXPECT_EQ(stats.allocations, 1);
  EXPECT_EQ(stats.frees, 1);
}

TEST_F(DeviceMemoryTrackerTest, VirtualMemoryCountsPhysicalAllocation) {
  // PyTorch's expandable segments: cuMemAddressReserve + cuMemCreate + cuMemMap.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  std::size_t granularity = 0;
  ASSERT_CU(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  ASSERT_GT(granularity, 0u);
  const std::size_t size = (64 * kMiB + granularity - 1) / granularity * granularity;

  tracker().begin_window();
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_CU(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr address = 0;
  ASSERT_CU(cuMemAddressReserve(&address, size, 0, 0, 0));  // virtual only: not counted
  ASSERT_CU(cuMemMap(address, size, 0, handle, 0));
  const std::int64_t live_while_mapped = tracker().live_bytes();
  ASSERT_CU(cuMemUnmap(address, size));
  ASSERT_CU(cuMemAddressFree(address, size));
  ASSERT_CU(cuMemRelease(handle));
  WindowStats stats = tracker().end_window();

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(live_while_mapped - stats.baseline_live_bytes, static_cast<std::int64_t>(size));
  EXPECT_EQ(stats.peak_delta_bytes(), static_cast<std::int64_t>(size));
  EXPECT_EQ(stats.end_delta_bytes(), 0);
}

TEST_F(DeviceMemoryTrackerTest, AllocationOnAnotherThreadIsCounted) {
  tracker().begin_window();
  void* p = nullptr;
  cudaError_t status = cudaErrorUnknown;
  std::thread worker([&] {
    status = cudaSetDevice(0);
    if (status == cudaSuccess) status = cudaMalloc(&p, 16 * kMiB);
  });
  worker.join();
  ASSERT_CUDA(status);
  WindowStats stats = tracker().end_window();
  ASSERT_CUDA(cudaFree(p));

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(stats.end_delta_bytes(), 16 * kMiB);
}

TEST_F(DeviceMemoryTrackerTest, FailedAllocationIsNotCounted) {
  tracker().begin_window();
  void* p = nullptr;
  constexpr std::size_t kOnePiB = std::size_t{1} << 50;  // more than any GPU has
  EXPECT_NE(cudaMalloc(&p, kOnePiB), cudaSuccess);
  (void)cudaGetLastError();  // clear the sticky-until-read allocation error
  WindowStats stats = tracker().end_window();

  ASSERT_TRUE(stats.valid);
  EXPECT_EQ(stats.peak_delta_bytes(), 0);
  EXPECT_EQ(stats.allocations, 0);
}

}  // namespace
