// The sandbox's private tmp on the host: a folder its judge holds while it lives. One left by a
// judge killed outright is removed by the next judge; one a judge holds, or a fresh one, stays.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fresh_temp_dir.hpp"
#include "isolation/sandbox_tmp.hpp"

namespace kbv::isolation {
namespace {

namespace fs = std::filesystem;

struct Parent : testing::FreshTempDir {
  Parent() : FreshTempDir("kbv-sandbox-tmp-test") {}
};

// A judge in a child process makes its folder, puts a file in it, and is killed with SIGKILL.
std::string folder_of_a_killed_judge(const fs::path& parent) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    SandboxTmp tmp = SandboxTmp::make(parent.string());
    std::ofstream(tmp.path() + "/candidate.py") << "class ModelNew: pass\n";
    const std::string path = tmp.path() + "\n";
    (void)!::write(p[1], path.data(), path.size());
    ::pause();
    ::_exit(0);
  }
  ::close(p[1]);
  std::string path;
  char c;
  while (::read(p[0], &c, 1) == 1 && c != '\n') path += c;
  ::close(p[0]);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return path;
}

TEST(SandboxTmp, AFolderLeftByAKilledJudgeIsRemovedByTheNext) {
  Parent parent;
  const std::string left = folder_of_a_killed_judge(parent.path);
  ASSERT_TRUE(fs::exists(fs::path(left) / "candidate.py")) << left;
  // Too fresh to tell from a folder whose judge is about to lock it.
  EXPECT_EQ(remove_abandoned_sandbox_tmps(parent.path.string(), std::chrono::seconds(3600)), 0u);
  EXPECT_TRUE(fs::exists(left));
  EXPECT_EQ(remove_abandoned_sandbox_tmps(parent.path.string(), std::chrono::seconds(0)), 1u);
  EXPECT_FALSE(fs::exists(left));
}

TEST(SandboxTmp, AFolderItsJudgeHoldsStays) {
  Parent parent;
  SandboxTmp held = SandboxTmp::make(parent.path.string());
  fs::create_directories(parent.path / "not-a-sandbox");
  EXPECT_EQ(remove_abandoned_sandbox_tmps(parent.path.string(), std::chrono::seconds(0)), 0u);
  EXPECT_TRUE(fs::exists(held.path()));
  EXPECT_TRUE(fs::exists(parent.path / "not-a-sandbox"));
  const std::string path = held.path();
  EXPECT_TRUE(held.remove().ok);
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace kbv::isolation
