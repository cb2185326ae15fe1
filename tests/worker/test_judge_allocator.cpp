// The judge's caching allocator setting (torch_host::prefer_expandable_segments) off CUDA: the
// allocator is left as it is. On a GPU: tests/gpu/test_judge_memory_gpu.cpp (the setting, the
// user's own configuration kept, the fragmented cache it places, the forward measured as the
// sandbox allocates).
#include <gtest/gtest.h>

#include <cstdlib>

#include <c10/core/AllocatorConfig.h>

#include "torch_host/memory.hpp"

namespace kbv::torch_host {
namespace {

TEST(JudgeAllocator, OffCudaTheAllocatorIsLeftAsItIs) {
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
  ::unsetenv("PYTORCH_ALLOC_CONF");
  EXPECT_FALSE(prefer_expandable_segments(at::Device(at::kCPU)));
  EXPECT_FALSE(c10::CachingAllocator::AcceleratorAllocatorConfig::use_expandable_segments());
}

}  // namespace
}  // namespace kbv::torch_host
