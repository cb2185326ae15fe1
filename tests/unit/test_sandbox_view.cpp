// What a candidate's sandbox is given to see of the host (judge/sandbox_setup.hpp): the private
// folders that hide the host's user data, the candidate's folders and the hidden tests', and the
// tool folders that come back beneath them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fresh_temp_dir.hpp"
#include "judge/sandbox_setup.hpp"

namespace kbv::judge {
namespace {

namespace fs = std::filesystem;

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

struct Tree {
  testing::FreshTempDir dir{"kbv-sandbox-view"};
  const fs::path& root = dir.path;
};

isolation::SandboxSpec spec_for(const WorkerJob& job) {
  ::setenv("KBV_SANDBOX", "/bin/true", 1);
  BuildCacheEntry cache;
  cache.dir = "/tmp/kbv-builds-view/entry";
  return candidate_sandbox_spec(job, cache, "/tmp/kbv-sandbox-view", 0);
}

// Every top-level folder that is not the system's is private (user data), /var/tmp too; the
// system's stay in sight.
TEST(SandboxView, TheHostsUserDataIsPrivateItsSystemIsNot) {
  WorkerJob job;
  job.problem_path = "/p.py";
  const auto spec = spec_for(job);
  for (const char* system : {"/usr", "/etc", "/opt", "/bin", "/lib", "/tmp", "/proc", "/dev"}) EXPECT_FALSE(has(spec.private_dirs, system)) << system;
  EXPECT_TRUE(has(spec.private_dirs, "/var/tmp"));
  std::error_code ec;
  for (const char* user : {"/home", "/root", "/srv", "/mnt", "/work"})
    if (fs::is_directory(user, ec)) EXPECT_TRUE(has(spec.private_dirs, user)) << user;
}

// A candidate file that is a link: the folder its file really lies in is private too (under a
// system folder only that would hide it). So is the hidden tests' folder, as named and as real.
TEST(SandboxView, TheCandidatesRealFolderAndTheHiddenTestsArePrivate) {
  Tree t;
  fs::create_directories(t.root / "store");
  fs::create_directories(t.root / "run");
  fs::create_directories(t.root / "hidden");
  std::ofstream(t.root / "store" / "blob.py") << "x = 1\n";
  std::ofstream(t.root / "hidden" / "1_hidden.py") << "x = 1\n";
  fs::create_symlink(t.root / "store" / "blob.py", t.root / "run" / "c.py");
  fs::create_directory_symlink(t.root / "hidden", t.root / "hidden-link");
  WorkerJob job;
  job.problem_path = "/p.py";
  job.candidate_path = (t.root / "run" / "c.py").string();
  job.hidden_tests_path = (t.root / "hidden-link" / "1_hidden.py").string();
  const auto spec = spec_for(job);
  EXPECT_TRUE(has(spec.private_dirs, (t.root / "run").string()));
  EXPECT_TRUE(has(spec.private_dirs, fs::canonical(t.root / "store").string()));
  EXPECT_TRUE(has(spec.private_dirs, (t.root / "hidden-link").string()));
  EXPECT_TRUE(has(spec.private_dirs, fs::canonical(t.root / "hidden").string()));
}

// A PATH entry that is a venv's bin/ brings back its pyvenv.cfg and lib/ (its ninja's python reads
// them), not the rest of the folder (a project made with `python -m venv .` keeps its files
// there); a plain bin/ comes back alone.
TEST(SandboxView, AVenvOnPathBringsBackItsPartsNotItsFolder) {
  Tree t;
  fs::create_directories(t.root / "venv" / "bin");
  fs::create_directories(t.root / "venv" / "lib");
  fs::create_directories(t.root / "venv" / "runs");
  std::ofstream(t.root / "venv" / "pyvenv.cfg") << "home = /usr/bin\n";
  fs::create_directories(t.root / "plain" / "bin");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", ((t.root / "venv" / "bin").string() + ":" + (t.root / "plain" / "bin").string()).c_str(), 1);
  WorkerJob job;
  job.problem_path = "/p.py";
  const auto spec = spec_for(job);
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(has(spec.private_keep, (t.root / "venv" / "pyvenv.cfg").string()));
  EXPECT_TRUE(has(spec.private_keep, (t.root / "venv" / "lib").string()));
  EXPECT_FALSE(has(spec.private_keep, (t.root / "venv").string()));
  EXPECT_FALSE(has(spec.private_keep, (t.root / "venv" / "runs").string()));
  EXPECT_TRUE(has(spec.private_keep, (t.root / "plain" / "bin").string()));
  EXPECT_FALSE(has(spec.private_keep, (t.root / "plain").string()));
}

}  // namespace
}  // namespace kbv::judge
