// Removing what a candidate wrote: everything under the folder goes, nothing a link points to
// does, and no depth of nesting or permission trick leaves files behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "isolation/remove_tree.hpp"

namespace kbv::isolation {
namespace {

namespace fs = std::filesystem;

class RemoveTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kbv-remove-tree-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "tree");
    fs::create_directories(root_ / "outside");
    write(root_ / "outside" / "keep.txt");
  }
  void TearDown() override {
    // The test's own clean-up may not rely on what it tests; chmod back what a test locked.
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }
  static void write(const fs::path& p, const std::string& text = "data") {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path tree() const { return root_ / "tree"; }
  fs::path root_;
};

TEST_F(RemoveTree, RemovesNestedFilesAndFolders) {
  write(tree() / "a.bin");
  write(tree() / "d1" / "d2" / "b.bin");
  fs::create_directories(tree() / "empty" / "deeper");
  auto r = remove_tree(tree().string());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(fs::exists(tree()));
}

TEST_F(RemoveTree, RemovesLinksButNeverWhatTheyPointTo) {
  fs::create_directory_symlink(root_ / "outside", tree() / "to_outside");
  fs::create_symlink(root_ / "outside" / "keep.txt", tree() / "to_file");
  fs::create_directories(tree() / "sub");
  fs::create_directory_symlink(root_ / "outside", tree() / "sub" / "again");
  auto r = remove_tree(tree().string());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(fs::exists(tree()));
  EXPECT_TRUE(fs::exists(root_ / "outside" / "keep.txt"));
}

TEST_F(RemoveTree, ALinkGivenAsTheFolderIsRemovedAsALink) {
  fs::path link = root_ / "link";
  fs::create_directory_symlink(root_ / "outside", link);
  auto r = remove_tree(link.string());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_TRUE(fs::exists(root_ / "outside" / "keep.txt"));
}

TEST_F(RemoveTree, AnyDepthOfNestingIsRemoved) {
  // Far deeper than the folders it keeps open at once (it moves deep folders up instead).
  fs::path p = tree();
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(::mkdir((p / "d").c_str(), 0700), 0);
    p /= "d";
    if (p.string().size() > 3000) break;  // keep below PATH_MAX for the test's own mkdir
  }
  write(p / "deep.bin");
  auto r = remove_tree(tree().string());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(fs::exists(tree()));
}

TEST_F(RemoveTree, FoldersMadeUnreadableOrReadOnlyAreRemoved) {
  write(tree() / "locked" / "inside.bin");
  write(tree() / "readonly" / "inside.bin");
  ::chmod((tree() / "locked").c_str(), 0);
  ::chmod((tree() / "readonly").c_str(), 0500);
  auto r = remove_tree(tree().string());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(fs::exists(tree()));
}

TEST_F(RemoveTree, EmptyTreeKeepsTheFolder) {
  write(tree() / "x" / "y.bin");
  write(tree() / "z.bin");
  auto r = empty_tree(tree().string());
  EXPECT_TRUE(r.ok) << r.error;
  ASSERT_TRUE(fs::is_directory(tree()));
  EXPECT_TRUE(fs::is_empty(tree()));
}

TEST_F(RemoveTree, AMissingFolderIsNotAnError) {
  EXPECT_TRUE(remove_tree((root_ / "never").string()).ok);
  EXPECT_TRUE(empty_tree((root_ / "never").string()).ok);
}

}  // namespace
}  // namespace kbv::isolation
