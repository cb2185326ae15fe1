// Matching KernelBench runs folders to a problem suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "orchestrate/run_scan.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

class RunScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kbv-run-scan-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    touch("suite/level1/7_ReLU.py");
    touch("suite/level1/12_LayerNorm.py");
    touch("suite/level2/3_Gemm_Scale.py");
    touch("suite/level1/README.md");
    touch("runs/model_b/level_1_problem_7_sample_1_kernel.py");
    touch("runs/model_b/level_1_problem_7_sample_0_kernel.py");
    touch("runs/model_a/level_2_problem_3_sample_0_kernel.py");
    touch("runs/model_a/level_1_problem_99_sample_0_kernel.py");
    touch("runs/model_a/level_1_problem_7_sample_0_prompt.txt");
  }
  void TearDown() override { fs::remove_all(root_); }
  void touch(const std::string& rel) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << "# test\n";
  }
  std::string at(const std::string& rel) const { return (root_ / rel).string(); }
  fs::path root_;
};

TEST_F(RunScanTest, FindsProblemsByLevelAndId) {
  auto problems = scan_problems(at("suite"));
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems.at({1, 12}).name, "LayerNorm");
  EXPECT_EQ(problems.at({2, 3}).level, 2);
}

TEST_F(RunScanTest, MatchesCandidatesAndKeepsTheUnmatched) {
  auto scan = scan_run(at("suite"), at("runs"));
  ASSERT_EQ(scan.matched.size(), 3u);
  ASSERT_EQ(scan.unmatched.size(), 1u);
  EXPECT_EQ(scan.unmatched[0].problem_id, 99);
  // Sorted by run, then level, problem, sample; prompts and other files ignored.
  EXPECT_EQ(scan.matched[0].first.run, "model_a");
  EXPECT_EQ(scan.matched[0].second.name, "Gemm_Scale");
  EXPECT_EQ(scan.matched[1].first.run, "model_b");
  EXPECT_EQ(scan.matched[1].first.sample_id, 0);
  EXPECT_EQ(scan.matched[2].first.sample_id, 1);
}

TEST_F(RunScanTest, ASingleRunFolderIsOneRun) {
  auto candidates = scan_candidates(at("runs/model_b"));
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].run, "model_b");
}

TEST_F(RunScanTest, BadFoldersAreUsageErrors) {
  EXPECT_THROW(scan_problems(at("nowhere")), UsageError);
  EXPECT_THROW(scan_problems(at("runs")), UsageError) << "a folder without levelN/ problems";
  EXPECT_THROW(scan_candidates(at("nowhere")), UsageError);
}

TEST_F(RunScanTest, NumbersAboveIntMaxAreSkippedWithTheReason) {
  touch("suite/level99999999999/1_Huge.py");
  touch("suite/level1/99999999999_Huge.py");
  touch("runs/model_b/level_1_problem_7_sample_99999999999_kernel.py");
  touch("runs/model_b/level_99999999999_problem_7_sample_0_kernel.py");
  touch("runs/model_b/level_1_problem_99999999999_sample_0_kernel.py");
  RunScan scan = scan_run(at("suite"), at("runs"));
  EXPECT_EQ(scan.matched.size(), 3u) << "the usable files are all there";
  ASSERT_EQ(scan.skipped.size(), 5u);
  for (const auto& s : scan.skipped) EXPECT_NE(s.why.find("out of range"), std::string::npos) << s.path << ": " << s.why;
  EXPECT_EQ(scan.problems.size(), 3u);
}

TEST_F(RunScanTest, AProblemHeldTwiceIsRefusedOnlyWhenACandidateNeedsIt) {
  touch("suite/level1/007_ReLU.py");  // the same (level 1, id 7) as 7_ReLU.py
  try {
    scan_run(at("suite"), at("runs"));
    FAIL() << "a duplicate problem with candidates was taken";
  } catch (const UsageError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("7_ReLU.py"), std::string::npos) << what;
    EXPECT_NE(what.find("007_ReLU.py"), std::string::npos) << what;
  }
  RunFilter others;
  others.problem_ids = {3};
  RunScan scan = scan_run(at("suite"), at("runs"), others);
  EXPECT_EQ(scan.matched.size(), 1u);
  ASSERT_EQ(scan.duplicates.size(), 1u) << "named, but no candidate of this run needs it";
  EXPECT_EQ(scan.duplicates[0].paths.size(), 2u);
}

// No sandbox of the run sees into the runs folder, nor into a run folder that is a link to
// elsewhere (its real folder lies outside the runs folder's tmpfs).
TEST_F(RunScanTest, ARunFolderLinkedFromElsewhereIsHiddenToo) {
  touch("elsewhere/model_c/level_1_problem_7_sample_0_kernel.py");
  fs::create_directory_symlink(root_ / "elsewhere" / "model_c", root_ / "runs" / "model_c");
  RunScan scan = scan_run(at("suite"), at("runs"));
  const std::string runs = fs::canonical(root_ / "runs").string();
  const std::string linked = fs::canonical(root_ / "elsewhere" / "model_c").string();
  EXPECT_EQ(scan.batch_folders, (std::vector<std::string>{runs, linked}));
}

TEST_F(RunScanTest, FilterTakesLevelIdsAndRuns) {
  RunFilter f;
  f.runs = {"model_b"};
  EXPECT_EQ(scan_run(at("suite"), at("runs"), f).matched.size(), 2u);
  f.runs.clear();
  f.level = 2;
  auto scan = scan_run(at("suite"), at("runs"), f);
  ASSERT_EQ(scan.matched.size(), 1u);
  EXPECT_EQ(scan.matched[0].first.run, "model_a");
  EXPECT_TRUE(scan.unmatched.empty()) << "problem 99 of level 1 is filtered out, not unmatched";
}

}  // namespace
}  // namespace kbv
