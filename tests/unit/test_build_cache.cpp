// The judge's record of what was built in a candidate's build-cache entry: a library that
// changed, appeared or vanished after kbv recorded it empties the entry (it is rebuilt).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
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

// An entry its candidate filled past the cap (allocated blocks count: a fallocated file whole) is
// emptied once its sandbox has ended; one a real build's size is kept.
TEST_F(BuildCache, AnEntryFilledPastTheCapIsEmptied) {
  EXPECT_EQ(build_cache_cap(entry_, 1 << 20), std::nullopt);
  const std::string big = (fs::path(entry_.dir) / "filler.bin").string();
  int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::posix_fallocate(fd, 0, 3 << 20), 0);
  ::close(fd);
  EXPECT_GE(build_cache_bytes(entry_), std::uintmax_t{3} << 20);
  auto warning = build_cache_cap(entry_, 1 << 20);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("emptied"), std::string::npos) << *warning;
  EXPECT_FALSE(fs::exists(big));
  EXPECT_TRUE(fs::is_directory(entry_.dir)) << "the entry itself stays, empty";
}

// A build out of disk is the host's only when, its sandbox ended and its entry emptied, the judge
// still sees the build root's disk (almost) full: filled by someone else. A disk its own entry
// filled, or one with room, keeps the candidate's compile_error whatever it claimed.
TEST_F(BuildCache, ABuildOutOfDiskIsTheHostsOnlyWhenTheJudgeSeesTheDiskFull) {
  EXPECT_TRUE(build_says_disk_full("OSError: [Errno 28] No space left on device", ""));
  EXPECT_FALSE(build_says_disk_full("SyntaxError: invalid syntax", ""));
  EXPECT_EQ(build_failed_for_host_disk(entry_), std::nullopt) << "this disk has room: the claim is the candidate's";
  // On a full file system of its own (a small tmpfs, in a mount namespace of a child process).
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    std::string answer = "skip";
    const fs::path small = root_ / "small";
    fs::create_directories(small);
    auto fill = [](const fs::path& file) {
      std::ofstream out(file);
      std::string block(1 << 16, 'x');
      while (out.write(block.data(), block.size())) {
      }
    };
    if (::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        ::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=4m") == 0) {
      const BuildCacheEntry e = build_cache_entry(small.string(), "fedcba9876543210fedcba9876543210");
      build_cache_create(e);
      // Filled by its own entry: emptied, the disk has room again.
      fill(fs::path(e.dir) / "filler");
      answer = build_failed_for_host_disk(e) ? "host" : "candidate";
      // Filled beside it (another candidate's entry): still full.
      fill(small / "filler");
      auto why = build_failed_for_host_disk(e);
      answer += why ? "|host: " + *why : "|candidate";
    }
    (void)!::write(p[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string answer;
  char buf[512];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) answer.append(buf, n);
  ::close(p[0]);
  ::waitpid(child, nullptr, 0);
  if (answer == "skip") GTEST_SKIP() << "no mount namespace for a small file system here";
  EXPECT_EQ(answer.rfind("candidate|host: the build ran out of disk space", 0), 0u) << answer;
}

}  // namespace
}  // namespace kbv::judge
