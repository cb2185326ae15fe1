// Handing a build-cache entry to a sandbox's uid: everything under it changes owner, nothing a
// link points to does (the judge runs this as root).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "isolation/chown_tree.hpp"

namespace kbv::isolation {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kUid = 54321;

uid_t owner(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_uid;
}

class ChownTree : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "changing owners needs root (as the judge that does it)";
    root_ = fs::temp_directory_path() / ("kbv-chown-tree-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "entry" / "ext" / "build");
    fs::create_directories(root_ / "outside");
    std::ofstream(root_ / "entry" / "ext" / "build" / "ext.so") << "lib";
    std::ofstream(root_ / "outside" / "host.txt") << "host";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(ChownTree, EverythingUnderTheFolderIsGiven) {
  EXPECT_TRUE(chown_tree((root_ / "entry").string(), kUid, kUid));
  for (const auto& p : {root_ / "entry", root_ / "entry" / "ext", root_ / "entry" / "ext" / "build" / "ext.so"})
    EXPECT_EQ(owner(p), kUid) << p;
}

TEST_F(ChownTree, LinksAreGivenNotWhatTheyPointTo) {
  fs::create_directory_symlink(root_ / "outside", root_ / "entry" / "ext" / "to_dir");
  fs::create_symlink(root_ / "outside" / "host.txt", root_ / "entry" / "to_file");
  chown_tree((root_ / "entry").string(), kUid, kUid);
  EXPECT_EQ(owner(root_ / "entry" / "ext" / "to_dir"), kUid);
  EXPECT_EQ(owner(root_ / "entry" / "to_file"), kUid);
  EXPECT_EQ(owner(root_ / "outside"), 0u);
  EXPECT_EQ(owner(root_ / "outside" / "host.txt"), 0u);
}

TEST_F(ChownTree, ALinkGivenAsTheFolderIsRefused) {
  fs::create_directory_symlink(root_ / "outside", root_ / "link");
  EXPECT_FALSE(chown_tree((root_ / "link").string(), kUid, kUid));
  EXPECT_EQ(owner(root_ / "outside"), 0u);
  EXPECT_EQ(owner(root_ / "outside" / "host.txt"), 0u);
}

}  // namespace
}  // namespace kbv::isolation
