// The judge's caching allocator setting (torch_host::prefer_expandable_segments): on unless the
// user's environment names an allocator configuration, which is kept. Each test runs in its own
// process under ctest (gtest_discover_tests), and torch reads the environment once a process.
#include <gtest/gtest.h>

#include <cstdlib>

#include <c10/core/AllocatorConfig.h>

#include "torch_host/memory.hpp"

namespace kbv::torch_host {
namespace {

TEST(JudgeAllocator, ExpandableSegmentsAreOnByDefault) {
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
  ::unsetenv("PYTORCH_ALLOC_CONF");
  EXPECT_TRUE(prefer_expandable_segments());
  EXPECT_TRUE(c10::CachingAllocator::AcceleratorAllocatorConfig::use_expandable_segments());
}

TEST(JudgeAllocator, TheUsersAllocatorConfigurationIsKept) {
  ::setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False", 1);
  EXPECT_FALSE(prefer_expandable_segments());
  EXPECT_FALSE(c10::CachingAllocator::AcceleratorAllocatorConfig::use_expandable_segments());
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
}

}  // namespace
}  // namespace kbv::torch_host
