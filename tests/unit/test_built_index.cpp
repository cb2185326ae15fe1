// BuiltIndex: the record of which candidate sources the build cache already holds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "orchestrate/built_index.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

TEST(BuiltIndex, RemembersBuildsPerDeviceAndForgetsVanishedFolders) {
  fs::path root = fs::temp_directory_path() / ("kbv-built-index-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "abc123");
  BuiltIndex h200(root.string(), "NVIDIA H200|9.0");
  EXPECT_FALSE(h200.built_dir("abc"));
  h200.mark_built("abc", (root / "abc123").string());
  ASSERT_TRUE(h200.built_dir("abc"));
  EXPECT_EQ(*h200.built_dir("abc"), (root / "abc123").string());
  EXPECT_TRUE(BuiltIndex(root.string(), "NVIDIA H200|9.0").built_dir("abc")) << "a new run reads it";
  EXPECT_FALSE(BuiltIndex(root.string(), "NVIDIA A100|8.0").built_dir("abc")) << "another device checks again";
  EXPECT_FALSE(h200.built_dir("abd"));
  fs::remove_all(root / "abc123");
  EXPECT_FALSE(h200.built_dir("abc")) << "the cache folder was deleted";
  fs::remove_all(root);
}

}  // namespace
}  // namespace kbv
