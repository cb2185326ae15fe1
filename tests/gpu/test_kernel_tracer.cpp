// KernelTracer on a real GPU, with a real kernel (tracer_test_kernels.cu) and plain CUDA runtime
// calls (no torch): what runs between begin() and end() is listed once, with its name, launch
// shape, stream and GPU times; what runs outside is not.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/device_memory_tracker.hpp"
#include "cuda/kernel_tracer.hpp"
#include "tracer_test_kernels.hpp"

namespace {

using kbv::cuda::DeviceMemoryTracker;
using kbv::cuda::KernelRecord;
using kbv::cuda::KernelTracer;
using kbv::cuda::test::kSpinKernelName;
using kbv::cuda::test::launch_spin_kernel;

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

constexpr int kOutInts = 1 << 16;  // room for every launch below

// Records of the test kernel only (the list is process-wide).
std::vector<KernelRecord> spin_records(const std::vector<KernelRecord>& records) {
  std::vector<KernelRecord> spins;
  for (const KernelRecord& r : records) {
    if (r.name.find(kSpinKernelName) != std::string::npos) spins.push_back(r);
  }
  return spins;
}

// The one test-kernel record launched with `grid_x` blocks; fails the test if not exactly one.
const KernelRecord* find_by_grid(const std::vector<KernelRecord>& spins, std::int64_t grid_x) {
  const KernelRecord* found = nullptr;
  int count = 0;
  for (const KernelRecord& r : spins) {
    if (r.grid_x == grid_x) {
      found = &r;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << "records of the test kernel with grid_x " << grid_x;
  return count == 1 ? found : nullptr;
}

class KernelTracerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // As in the worker: the memory tracker subscribes first, at start-up; the tracer uses the
    // Activity API alongside it.
    DeviceMemoryTracker::instance();
    KernelTracer& t = KernelTracer::instance();
    ASSERT_TRUE(t.available()) << t.error();
    int devices = 0;
    ASSERT_CUDA(cudaGetDeviceCount(&devices));
    ASSERT_GT(devices, 0);
    ASSERT_CUDA(cudaSetDevice(0));
    ASSERT_CUDA(cudaFree(nullptr));
    void* out = nullptr;
    ASSERT_CUDA(cudaMalloc(&out, kOutInts * sizeof(int)));
    out_ = static_cast<int*>(out);
    // Load the module and let the runtime finish its lazy set-up outside any window.
    ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, out_, 0));
    ASSERT_CUDA(cudaDeviceSynchronize());
  }

  void TearDown() override {
    cudaDeviceSynchronize();
    tracer().end();  // close a window an early ASSERT left open
    if (out_ != nullptr) cudaFree(out_);
  }

  KernelTracer& tracer() { return KernelTracer::instance(); }

  int* out_ = nullptr;
};

TEST_F(KernelTracerTest, KernelLaunchedInWindowIsRecordedWithNameShapeAndTimes) {
  constexpr std::int64_t kSpinNs = 200'000;
  const std::uint64_t before = KernelTracer::timestamp_now();
  tracer().begin();
  ASSERT_CUDA(launch_spin_kernel(nullptr, 3, 64, out_, kSpinNs));
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::uint64_t after = KernelTracer::timestamp_now();
  std::vector<KernelRecord> records = tracer().end();

  ASSERT_TRUE(tracer().available()) << tracer().error();
  EXPECT_EQ(tracer().dropped_records(), 0u);
  std::vector<KernelRecord> spins = spin_records(records);
  ASSERT_EQ(spins.size(), 1u) << "kernel records in the window: " << records.size();
  const KernelRecord& r = spins[0];
  EXPECT_NE(r.name, r.demangled) << "a C++ kernel's name should come back mangled: " << r.name;
  EXPECT_EQ(r.demangled.rfind(std::string(kSpinKernelName) + "(", 0), 0u) << r.demangled;
  EXPECT_EQ(r.grid_x, 3);
  EXPECT_EQ(r.grid_y, 1);
  EXPECT_EQ(r.grid_z, 1);
  EXPECT_EQ(r.block_x, 64);
  EXPECT_EQ(r.block_y, 1);
  EXPECT_EQ(r.block_z, 1);
  EXPECT_EQ(r.device_id, 0u);
  EXPECT_NE(r.correlation_id, 0u);

  EXPECT_GT(r.start_ns, 0u);
  EXPECT_GE(r.end_ns, r.start_ns);
  EXPECT_GE(r.end_ns - r.start_ns, static_cast<std::uint64_t>(kSpinNs * 3 / 4))
      << "the kernel spins for " << kSpinNs << " ns of GPU time";
  // The kernel's GPU times lie on the timestamp_now() clock, between the moments marked around it.
  EXPECT_LE(before, r.start_ns);
  EXPECT_LE(r.end_ns, after);
}

// The strict audit's marker: a copy on the caller's stream starts when that stream gets there,
// even while another stream's kernel fills every SM (a marker kernel would wait for free SMs).
TEST_F(KernelTracerTest, CopyIsTracedAndNotDelayedByAKernelFillingTheGpu) {
  cudaStream_t busy = nullptr, caller = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&caller, cudaStreamNonBlocking));
  float* host = nullptr;
  ASSERT_CUDA(cudaMallocHost(reinterpret_cast<void**>(&host), sizeof(float)));
  int sms = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = 4 * 2 * sms;  // four waves of two 1024-thread blocks per SM, 5 ms each
  int* wide = nullptr;             // one int per thread
  ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&wide), static_cast<std::size_t>(blocks) * 1024 * sizeof(int)));
  // Warm the copy path and the kernel's module first: on the H200 the first pinned copy cost ~2 ms
  // of host time, longer than a short spin, so the test measured the host and not the copy engine.
  ASSERT_CUDA(launch_spin_kernel(busy, 1, 32, wide, 1'000));
  ASSERT_CUDA(cudaMemcpyAsync(host, out_, sizeof(float), cudaMemcpyDeviceToHost, caller));
  ASSERT_CUDA(cudaDeviceSynchronize());
  tracer().begin(/*with_memcpy=*/true);
  ASSERT_CUDA(launch_spin_kernel(busy, blocks, 1024, wide, 5'000'000));
  ASSERT_CUDA(cudaMemcpyAsync(host, out_, sizeof(float), cudaMemcpyDeviceToHost, caller));
  ASSERT_CUDA(cudaDeviceSynchronize());
  const bool copies = tracer().copies_traced();
  std::vector<KernelRecord> records = tracer().end();
  const std::uint32_t caller_id = KernelTracer::stream_id_of(caller);
  ASSERT_CUDA(cudaStreamDestroy(busy));
  ASSERT_CUDA(cudaStreamDestroy(caller));
  ASSERT_CUDA(cudaFreeHost(host));
  ASSERT_CUDA(cudaFree(wide));

  ASSERT_TRUE(tracer().available()) << tracer().error();
  ASSERT_TRUE(copies) << "CUPTI refused CUPTI_ACTIVITY_KIND_MEMCPY";
  const KernelRecord* copy = nullptr;
  for (const KernelRecord& r : records)
    if (r.memcpy) copy = &r;
  ASSERT_NE(copy, nullptr) << "no copy record among " << records.size();
  EXPECT_EQ(copy->name, "memcpy DtoH");
  EXPECT_EQ(copy->bytes, sizeof(float));
  EXPECT_EQ(copy->stream_id, caller_id);
  std::vector<KernelRecord> spins = spin_records(records);
  ASSERT_EQ(spins.size(), 1u);
  // A marker kernel would start only in the last wave's tail (>= 15 ms in); the copy starts at once.
  EXPECT_LT(copy->start_ns + 10'000'000, spins[0].end_ns)
      << "the copy waited for the SMs: it started "
      << (static_cast<double>(copy->start_ns) - static_cast<double>(spins[0].start_ns)) / 1e6
      << " ms after the kernel, which ran " << (spins[0].end_ns - spins[0].start_ns) / 1e6 << " ms";
}

TEST_F(KernelTracerTest, KernelOnSecondStreamHasItsOwnStreamId) {
  cudaStream_t side = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  tracer().begin();
  ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, out_, 50'000));      // legacy default stream
  ASSERT_CUDA(launch_spin_kernel(side, 2, 32, out_ + 1024, 50'000));  // the second stream
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> records = tracer().end();
  const std::uint32_t side_id = KernelTracer::stream_id_of(side);
  const std::uint32_t legacy_id = KernelTracer::stream_id_of(nullptr);
  const std::uint32_t legacy_handle_id = KernelTracer::stream_id_of(cudaStreamLegacy);
  ASSERT_CUDA(cudaStreamDestroy(side));

  ASSERT_TRUE(tracer().available()) << tracer().error();
  std::vector<KernelRecord> spins = spin_records(records);
  ASSERT_EQ(spins.size(), 2u);
  const KernelRecord* on_default = find_by_grid(spins, 1);
  const KernelRecord* on_side = find_by_grid(spins, 2);
  ASSERT_NE(on_default, nullptr);
  ASSERT_NE(on_side, nullptr);
  EXPECT_NE(on_default->stream_id, on_side->stream_id);
  EXPECT_EQ(on_default->context_id, on_side->context_id);
  EXPECT_NE(on_default->correlation_id, on_side->correlation_id);

  EXPECT_NE(side_id, KernelTracer::kUnknownStream);
  EXPECT_EQ(side_id, on_side->stream_id);
  EXPECT_EQ(legacy_id, on_default->stream_id);
  EXPECT_EQ(legacy_handle_id, on_default->stream_id);
}

TEST_F(KernelTracerTest, PerThreadDefaultStreamIsNamed) {
  tracer().begin();
  ASSERT_CUDA(launch_spin_kernel(cudaStreamPerThread, 4, 32, out_, 10'000));
  ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, out_, 10'000));
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> records = tracer().end();

  std::vector<KernelRecord> spins = spin_records(records);
  const KernelRecord* per_thread = find_by_grid(spins, 4);
  const KernelRecord* legacy = find_by_grid(spins, 1);
  ASSERT_NE(per_thread, nullptr);
  ASSERT_NE(legacy, nullptr);
  EXPECT_NE(per_thread->stream_id, legacy->stream_id);
  EXPECT_EQ(KernelTracer::stream_id_of(cudaStreamPerThread), per_thread->stream_id);
}

TEST_F(KernelTracerTest, KernelLaunchedAfterEndIsNotRecorded) {
  tracer().begin();
  ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, out_, 10'000));
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> first = tracer().end();

  ASSERT_CUDA(launch_spin_kernel(nullptr, 5, 32, out_, 10'000));  // outside any window
  ASSERT_CUDA(cudaDeviceSynchronize());

  tracer().begin();  // nothing launched in this window; a late record must not leak into it
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> second = tracer().end();

  ASSERT_TRUE(tracer().available()) << tracer().error();
  std::vector<KernelRecord> first_spins = spin_records(first);
  ASSERT_EQ(first_spins.size(), 1u);
  EXPECT_EQ(first_spins[0].grid_x, 1);
  EXPECT_TRUE(spin_records(second).empty()) << "records in an empty window: " << second.size();
}

TEST_F(KernelTracerTest, EndWithoutBeginReturnsNothing) {
  EXPECT_TRUE(tracer().end().empty());
  EXPECT_TRUE(tracer().available()) << tracer().error();
}

TEST_F(KernelTracerTest, ManyKernelsFillSeveralBuffersAndAllAreRecorded) {
  // More records than one 4 MiB activity buffer holds (~16k), so CUPTI must ask for more.
  constexpr int kLaunches = 20'000;
  tracer().begin();
  for (int i = 0; i < kLaunches; ++i) {
    ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, out_, 0));
  }
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> records = tracer().end();

  ASSERT_TRUE(tracer().available()) << tracer().error();
  EXPECT_EQ(tracer().dropped_records(), 0u);
  std::vector<KernelRecord> spins = spin_records(records);
  EXPECT_EQ(spins.size(), static_cast<std::size_t>(kLaunches));
  for (const KernelRecord& r : spins) {
    ASSERT_GE(r.end_ns, r.start_ns) << "correlation id " << r.correlation_id;
  }
}

TEST_F(KernelTracerTest, WorksAlongsideDeviceMemoryTracker) {
  DeviceMemoryTracker& memory = DeviceMemoryTracker::instance();
  ASSERT_TRUE(memory.available()) << memory.error();
  memory.begin_window();
  tracer().begin();
  void* scratch = nullptr;
  ASSERT_CUDA(cudaMalloc(&scratch, 1 << 20));
  ASSERT_CUDA(launch_spin_kernel(nullptr, 1, 32, static_cast<int*>(scratch), 1'000));
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<KernelRecord> records = tracer().end();
  ASSERT_CUDA(cudaFree(scratch));
  kbv::cuda::WindowStats stats = memory.end_window();

  EXPECT_EQ(spin_records(records).size(), 1u);
  ASSERT_TRUE(stats.valid);
  // At least the cudaMalloc above; more would mean CUPTI's own buffers show up as allocations,
  // which is why the worker never measures memory inside a tracer window.
  EXPECT_GE(stats.allocations, 1);
  EXPECT_GE(stats.peak_delta_bytes(), 1 << 20);
  RecordProperty("allocations_in_window", static_cast<int>(stats.allocations));
}

}  // namespace
