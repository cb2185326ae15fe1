// kbv run --shard I/N: a stable partition of the candidates by their place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/errors.hpp"
#include "orchestrate/run_scan.hpp"
#include "orchestrate/shard.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

TEST(Shard, ParsesIOfN) {
  Shard s = parse_shard("1/4");
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.text(), "1/4");
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const char* bad : {"4/4", "-1/4", "1", "1/", "/4", "a/b", "0/0", "1/4x", " 1/4", "1/+4"})
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
}

TEST(Shard, PartitionIsPinnedToTheDocumentedHash) {
  // First 8 bytes of SHA-256("model-a\n1\n19\n0") mod N (docs/scale.md). Changing the rule would
  // move every candidate of every existing shard DB: this test says so first.
  EXPECT_EQ(shard_of("model-a", 1, 19, 0, 4), 3);
  EXPECT_EQ(shard_of("model-a", 1, 19, 0, 7), 5);
  EXPECT_EQ(shard_of("model-b", 2, 7, 3, 4), 0);
  EXPECT_EQ(shard_of("model-b", 2, 7, 3, 7), 2);
  EXPECT_EQ(shard_of("anything", 3, 1, 1, 1), 0);
}

TEST(Shard, EveryCandidateIsInExactlyOneShardAndTheShardsAreBalanced) {
  const int n = 4;
  std::map<int, int> sizes;
  for (int run = 0; run < 5; ++run)
    for (int problem = 1; problem <= 100; ++problem)
      for (int sample = 0; sample < 2; ++sample) {
        CandidateFile c{"run" + std::to_string(run), "x.py", 1, problem, sample};
        int holders = 0;
        for (int i = 0; i < n; ++i) holders += Shard{i, n}.holds(c);
        EXPECT_EQ(holders, 1);
        ++sizes[shard_of(c.run, c.level, c.problem_id, c.sample_id, n)];
      }
  ASSERT_EQ(sizes.size(), 4u);
  for (const auto& [shard, size] : sizes) EXPECT_NEAR(size, 250, 60) << "shard " << shard;
}

// The place decides, nothing else: the candidate's path (or the other candidates) do not.
TEST(Shard, AddingRunsOrMovingFilesMovesNoCandidate) {
  CandidateFile a{"model-a", "/old/runs/model-a/level_1_problem_19_sample_0_kernel.py", 1, 19, 0};
  CandidateFile b{"model-a", "/new/place/level_1_problem_19_sample_0_kernel.py", 1, 19, 0};
  for (int n = 1; n <= 8; ++n)
    for (int i = 0; i < n; ++i) EXPECT_EQ(Shard({i, n}).holds(a), Shard({i, n}).holds(b));
}

TEST(Shard, ScanWithShardsSplitsTheMatchedCandidates) {
  fs::path root = fs::temp_directory_path() / ("kbv-shard-scan-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto touch = [&](const std::string& rel) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << "# test\n";
  };
  for (int p = 1; p <= 6; ++p) touch("suite/level1/" + std::to_string(p) + "_P.py");
  for (const char* run : {"m1", "m2", "m3"})
    for (int p = 1; p <= 6; ++p) touch(std::string("runs/") + run + "/level_1_problem_" + std::to_string(p) + "_sample_0_kernel.py");
  std::set<std::string> all, seen;
  for (const auto& [c, p] : scan_run((root / "suite").string(), (root / "runs").string()).matched) all.insert(c.path);
  std::size_t total = 0;
  for (int i = 0; i < 3; ++i) {
    RunFilter f;
    f.shard = Shard{i, 3};
    auto part = scan_run((root / "suite").string(), (root / "runs").string(), f).matched;
    EXPECT_FALSE(part.empty()) << "shard " << i;
    total += part.size();
    for (const auto& [c, p] : part) seen.insert(c.path);
  }
  EXPECT_EQ(total, all.size());  // disjoint...
  EXPECT_EQ(seen, all);          // ...and complete
  fs::remove_all(root);
}

}  // namespace
}  // namespace kbv
