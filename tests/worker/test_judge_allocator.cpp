// The judge's caching allocator setting (torch_host::prefer_expandable_segments): expandable
// segments in the judge's environment unless the user's environment names an allocator
// configuration, which is kept. On a GPU, tests/gpu/test_judge_memory_gpu.cpp checks what the
// setting does (the fragmented cache it places, a forward measured as the sandbox allocates).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "torch_host/memory.hpp"

namespace kbv::torch_host {
namespace {

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

TEST(JudgeAllocator, ExpandableSegmentsAreAskedForByDefault) {
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
  ::unsetenv("PYTORCH_ALLOC_CONF");
  EXPECT_TRUE(prefer_expandable_segments());
  EXPECT_EQ(environment("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
}

TEST(JudgeAllocator, TheUsersAllocatorConfigurationIsKept) {
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
  ::setenv("PYTORCH_ALLOC_CONF", "max_split_size_mb:128", 1);
  EXPECT_FALSE(prefer_expandable_segments());
  EXPECT_EQ(environment("PYTORCH_CUDA_ALLOC_CONF"), "(unset)");
  EXPECT_EQ(environment("PYTORCH_ALLOC_CONF"), "max_split_size_mb:128");
  ::setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False", 1);
  EXPECT_FALSE(prefer_expandable_segments());
  EXPECT_EQ(environment("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:False");
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
  ::unsetenv("PYTORCH_ALLOC_CONF");
}

}  // namespace
}  // namespace kbv::torch_host
