// The judge's record of what was built in a candidate's build-cache entry: a library that
// changed, appeared or vanished after kbv recorded it empties the entry (it is rebuilt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "judge/build_cache.hpp"

namespace kbv::judge {
namespace {

namespace fs = std::filesystem;

class BuildCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kbv-cache-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    entry_ = build_cache_entry(root_.string(), "0123456789abcdef0123456789abcdef");
    build_cache_create(entry_);
    write("ext/ext.so", "the built library");
    build_cache_record(entry_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((fs::path(entry_.dir) / rel).parent_path());
    std::ofstream(fs::path(entry_.dir) / rel) << text;
  }
  fs::path root_;
  BuildCacheEntry entry_;
};

TEST_F(BuildCache, TheEntryIsKeyedByTheSourceAndItsManifestLivesOutsideIt) {
  EXPECT_EQ(fs::path(entry_.dir).filename(), "0123456789abcdef");
  EXPECT_EQ(fs::path(entry_.manifest).parent_path().filename(), ".kbv-manifests");
  EXPECT_FALSE(entry_.manifest.rfind(entry_.dir, 0) == 0) << "a sandbox may write its entry, never its manifest";
}

// Another uid's sandbox must not enter an entry (it could hold the entry's build lock, kbv.flock,
// and stall its builds), also one made before entries were private.
TEST_F(BuildCache, OnlyTheOwnerMayEnterAnEntry) {
  EXPECT_EQ(fs::status(entry_.dir).permissions() & fs::perms::all, fs::perms::owner_all);
  fs::permissions(entry_.dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                                  fs::perms::others_exec);
  build_cache_create(entry_);
  EXPECT_EQ(fs::status(entry_.dir).permissions() & fs::perms::all, fs::perms::owner_all);
}

// Its candidate opened the folder to everyone; once its sandbox has ended the folder is the owner's
// alone again (WarmJudge.ACandidateLeavesNothingInItsBuildFolderForTheNext: the attack).
TEST_F(BuildCache, AClosedEntryIsTheOwnersAloneWhateverModeItWasGiven) {
  fs::permissions(entry_.dir, fs::perms::all);
  build_cache_close(entry_);
  EXPECT_EQ(fs::status(entry_.dir).permissions() & fs::perms::all, fs::perms::owner_all);
  const fs::path link = fs::path(entry_.dir).parent_path() / "a-link";
  fs::create_directory_symlink(entry_.dir, link);
  fs::permissions(entry_.dir, fs::perms::all);
  BuildCacheEntry through_link = entry_;
  through_link.dir = link.string();
  build_cache_close(through_link);  // a link is not followed
  EXPECT_EQ(fs::status(entry_.dir).permissions() & fs::perms::all, fs::perms::all);
  build_cache_close(BuildCacheEntry{});  // no entry: nothing to do
}

TEST_F(BuildCache, AnUntouchedEntryVerifies) { EXPECT_EQ(build_cache_verify(entry_), std::nullopt); }

TEST_F(BuildCache, AChangedLibraryIsCaughtAndTheEntryEmptied) {
  write("ext/ext.so", "overwritten by another candidate");
  auto changed = build_cache_verify(entry_);
  ASSERT_TRUE(changed.has_value());
  EXPECT_NE(changed->find("ext/ext.so"), std::string::npos) << *changed;
  EXPECT_FALSE(fs::exists(fs::path(entry_.dir) / "ext" / "ext.so"));
  EXPECT_EQ(build_cache_verify(entry_), std::nullopt) << "an empty entry is simply rebuilt";
}

TEST_F(BuildCache, AnAddedLibraryIsCaught) {
  write("planted/planted.so", "x");
  EXPECT_TRUE(build_cache_verify(entry_).has_value());
}

TEST_F(BuildCache, AVanishedLibraryIsCaught) {
  fs::remove(fs::path(entry_.dir) / "ext" / "ext.so");
  EXPECT_TRUE(build_cache_verify(entry_).has_value());
}

TEST_F(BuildCache, ALinkIsNeverFollowed) {
  // A library replaced by a link to an endless device must not hang the judge's hashing.
  fs::remove(fs::path(entry_.dir) / "ext" / "ext.so");
  fs::create_symlink("/dev/zero", fs::path(entry_.dir) / "ext" / "ext.so");
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(build_cache_verify(entry_).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(BuildCache, LibrariesWithNoRecordAreNotTrusted) {
  fs::remove(entry_.manifest);
  EXPECT_TRUE(build_cache_verify(entry_).has_value());
}

}  // namespace
}  // namespace kbv::judge
