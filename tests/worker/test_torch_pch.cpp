// torch_pch_dir (src/judge/torch_pch.*): the shared precompiled header lives only in a build
// folder that is this user's alone, in a folder named after the torch headers it was made from.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "judge/torch_pch.hpp"

namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

// Not fs::remove_all: in this binary it resolves to libtorch's own copy, which crashes.
void remove_tree(const fs::path& p) { ASSERT_EQ(std::system(("rm -rf '" + p.string() + "'").c_str()), 0); }

fs::path fresh(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("kbv-pch-test-" + std::to_string(::getpid()) + "-" + name);
  remove_tree(p);
  fs::create_directories(p);
  ::chmod(p.c_str(), 0755);
  return p;
}

TEST(TorchPch, APrivateBuildFolderGetsAKeyedFolderTheSameEachTime) {
  fs::path root = fresh("private");
  std::string dir = torch_pch_dir(root.string());
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(fs::path(dir).parent_path(), root / "torch-pch");
  EXPECT_EQ(fs::path(dir).filename().string().size(), 16u) << dir;
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(torch_pch_dir(root.string()), dir) << "the same torch headers, the same folder";
  remove_tree(root);
}

TEST(TorchPch, AFolderOthersCanWriteGetsNone) {
  fs::path root = fresh("shared");
  ::chmod(root.c_str(), 0777);
  EXPECT_EQ(torch_pch_dir(root.string()), "") << "anyone could plant a .gch there";
  EXPECT_FALSE(fs::exists(root / "torch-pch"));
  remove_tree(root);
}

TEST(TorchPch, ALinkedTorchPchFolderGetsNone) {
  fs::path root = fresh("linked");
  fs::path elsewhere = fresh("elsewhere");
  fs::create_directory_symlink(elsewhere, root / "torch-pch");
  EXPECT_EQ(torch_pch_dir(root.string()), "");
  remove_tree(root);
  remove_tree(elsewhere);
}

}  // namespace
}  // namespace kbv::judge
