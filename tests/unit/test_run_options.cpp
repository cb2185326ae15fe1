// kbv run's decisions before any work: which stored verdicts a re-run evaluates again, the one
// spelling of devices, option values that cannot work, and the identity a verdict is stored under.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "orchestrate/device_spec.hpp"
#include "orchestrate/option_checks.hpp"
#include "orchestrate/resume_rule.hpp"
#include "orchestrate/run_command.hpp"
#include "orchestrate/run_plan.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;

StoredVerdictSummary stored(const std::string& outcome, const std::string& stage = "done",
                            std::optional<VerdictLimits> limits = std::nullopt) {
  StoredVerdictSummary s;
  s.outcome = outcome;
  s.stage = stage;
  s.limits = limits;
  return s;
}

TEST(ResumeRule, NothingStoredIsEvaluatedAndAnOrdinaryVerdictIsKept) {
  VerdictLimits now{900, 600};
  EXPECT_TRUE(resume_choice(std::nullopt, now).evaluate);
  for (const char* o : {"correct", "incorrect", "compile_error", "runtime_error", "crashed", "skipped", "protocol_violation"})
    EXPECT_FALSE(resume_choice(stored(o), now).evaluate) << o;
}

TEST(ResumeRule, InternalErrorsAndUnknownOutcomesAreEvaluatedAgain) {
  VerdictLimits now{900, 600};
  EXPECT_TRUE(resume_choice(stored("internal_error"), now).evaluate);
  auto unknown = resume_choice(stored("exploded"), now);
  EXPECT_TRUE(unknown.evaluate);
  EXPECT_NE(unknown.why.find("exploded"), std::string::npos);
}

TEST(ResumeRule, TimeoutIsEvaluatedAgainOnlyUnderALargerLimitForItsStage) {
  VerdictLimits then{900, 5};
  EXPECT_FALSE(resume_choice(stored("timeout", "correctness", then), {900, 5}).evaluate) << "same limits";
  EXPECT_FALSE(resume_choice(stored("timeout", "correctness", then), {900, 1}).evaluate) << "smaller";
  EXPECT_FALSE(resume_choice(stored("timeout", "correctness", then), {2000, 5}).evaluate) << "the other stage's limit";
  auto larger = resume_choice(stored("timeout", "correctness", then), {900, 10});
  EXPECT_TRUE(larger.evaluate);
  EXPECT_NE(larger.why.find("--run-timeout 5 s; now 10 s"), std::string::npos) << larger.why;
  EXPECT_TRUE(resume_choice(stored("timeout", "build", then), {1000, 5}).evaluate) << "a build timeout: the compile limit";
  EXPECT_FALSE(resume_choice(stored("timeout", "build", then), {900, 50}).evaluate);
  EXPECT_FALSE(resume_choice(stored("timeout", "correctness"), {900, 6000}).evaluate)
      << "limits unknown (an older verdict): nothing says they were smaller";
}

TEST(ResumeRule, AVerdictWithoutWhatThisRunAddsIsEvaluatedAgain) {
  VerdictLimits now{900, 600};
  StoredVerdictSummary plain = stored("correct");
  plain.timed = true;
  auto hidden = resume_choice(plain, now, {"abc", false});
  EXPECT_TRUE(hidden.evaluate);
  EXPECT_EQ(hidden.why, "stored without the hidden tests");
  StoredVerdictSummary with_file = plain;
  with_file.hidden_tests_sha256 = "abc";
  EXPECT_FALSE(resume_choice(with_file, now, {"abc", false}).evaluate) << "the same file";
  EXPECT_TRUE(resume_choice(with_file, now, {"def", false}).evaluate) << "an edited file";
  EXPECT_FALSE(resume_choice(with_file, now, {"", false}).evaluate) << "checked on more than this run asks";

  auto compile = resume_choice(plain, now, {"", true});
  EXPECT_TRUE(compile.evaluate);
  EXPECT_EQ(compile.why, "stored without the torch_compile baseline");
  StoredVerdictSummary compiled = plain;
  compiled.torch_compile_timed = true;
  EXPECT_FALSE(resume_choice(compiled, now, {"", true}).evaluate);
  EXPECT_FALSE(resume_choice(stored("incorrect"), now, {"", true}).evaluate) << "never timed: nothing to add";
}

TEST(HiddenTestFile, KernelBenchVerifiedsLayoutOrAFlatFolder) {
  fs::path dir = fs::temp_directory_path() / ("kbv-hidden-layout-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "level1");
  fs::create_directories(dir / "level2");
  std::ofstream(dir / "level1" / "7_hidden.py") << "def get_hidden_inputs(): return []\n";
  std::ofstream(dir / "12_hidden.py") << "def get_hidden_inputs(): return []\n";
  fs::create_directories(dir / "level1" / "8_hidden.py");  // a folder, not a file
  EXPECT_EQ(hidden_test_file(dir.string(), 1, 7), fs::absolute(dir / "level1" / "7_hidden.py").string());
  EXPECT_EQ(hidden_test_file(dir.string(), 2, 7), "") << "another level's file is not this problem's";
  EXPECT_EQ(hidden_test_file(dir.string(), 3, 12), "") << "a folder with level folders: no flat fallback";
  EXPECT_EQ(hidden_test_file(dir.string(), 1, 8), "");
  EXPECT_EQ(hidden_test_file("", 1, 7), "");
  fs::path flat = dir / "level1";  // one level's folder given itself
  EXPECT_EQ(hidden_test_file(flat.string(), 1, 7), fs::absolute(flat / "7_hidden.py").string());
  EXPECT_EQ(hidden_test_file(flat.string(), 2, 7), fs::absolute(flat / "7_hidden.py").string())
      << "a flat folder is taken to be of the run's level";
  fs::remove_all(dir);
}

TEST(DeviceSpec, OneSpellingForEveryCommand) {
  EXPECT_EQ(normalize_device("cpu"), "cpu");
  EXPECT_EQ(normalize_device("auto"), "auto");
  EXPECT_EQ(normalize_device("cuda"), "cuda:0");
  EXPECT_EQ(normalize_device("cuda:1"), "cuda:1");
  EXPECT_EQ(normalize_device("3"), "cuda:3") << "kbv run --gpus 3";
  for (const char* bad : {"gpu", "GPU", "cuda:x", "gpu:0", "", "cuda:", "nvidia"}) {
    try {
      normalize_device(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("write cuda or cuda:N"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(normalize_devices({"0", "cuda:1", "cuda:0"}), (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_TRUE(normalize_devices({"auto"}).empty());
  EXPECT_THROW(normalize_devices({"auto", "cpu"}), UsageError);
}

TEST(OptionChecks, LimitsMustBeFiniteAndPositive) {
  EXPECT_NO_THROW(check_positive("--run-timeout", 0.5));
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) EXPECT_THROW(check_positive("--run-timeout", bad), UsageError) << bad;
  EXPECT_NO_THROW(check_non_negative("--tolerance", 0));
  for (double bad : {-1e-9, std::nan(""), HUGE_VAL}) EXPECT_THROW(check_non_negative("--tolerance", bad), UsageError) << bad;
  EXPECT_THROW(check_at_least_one("--jobs", 0), UsageError);
}

TEST(OptionChecks, OutputPathIsCheckedWithoutLeavingOrTruncatingAFile) {
  auto dir = fs::temp_directory_path() / ("kbv-option-checks-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto fresh = (dir / "new.json").string();
  EXPECT_NO_THROW(check_output_writable("--json", fresh));
  EXPECT_FALSE(fs::exists(fresh)) << "the check leaves no file behind";
  auto kept = (dir / "kept.json").string();
  std::ofstream(kept) << "old";
  EXPECT_NO_THROW(check_output_writable("--json", kept));
  EXPECT_EQ(fs::file_size(kept), 3u) << "an existing file is not truncated by the check";
  EXPECT_THROW(check_output_writable("--json", (dir / "missing/x.json").string()), UsageError);
  EXPECT_THROW(check_output_writable("--json", dir.string()), UsageError) << "a folder";
  EXPECT_THROW(check_folder_writable("--build-dir", "/proc/version/builds"), UsageError);
  EXPECT_NO_THROW(check_folder_writable("--build-dir", (dir / "builds").string()));
  fs::remove_all(dir);
}

TEST(RunOptionsCheck, RejectsValuesThatCannotWorkAndMergesRepeatedProtocols) {
  std::ostringstream out;
  RunOptions o;
  o.protocols = {"standard", "verified", "standard"};
  check_run_options(o, out);
  EXPECT_EQ(o.protocols, (std::vector<std::string>{"standard", "verified"}));
  EXPECT_NE(out.str().find("--protocol standard given more than once"), std::string::npos);
  auto rejects = [](auto change) {
    RunOptions bad;
    change(bad);
    std::ostringstream sink;
    EXPECT_THROW(check_run_options(bad, sink), UsageError);
  };
  rejects([](RunOptions& r) { r.run_timeout = 0; });
  rejects([](RunOptions& r) { r.compile_timeout = std::nan(""); });
  rejects([](RunOptions& r) { r.time_budget = -1; });
  rejects([](RunOptions& r) { r.store_wait = 0; });
  rejects([](RunOptions& r) { r.protocols = {"fast"}; });
  rejects([](RunOptions& r) { r.protocols = {}; });
  rejects([](RunOptions& r) { r.jobs = -1; });
  rejects([](RunOptions& r) { r.db_path = "/nonexistent-kbv-folder/kbv.db"; });
}

RunJob job() {
  RunJob j;
  j.candidate = {"m", "runs/m/level_1_problem_3_sample_0_kernel.py", 1, 3, 0};
  j.problem = {"suite/level1/3_P.py", 1, 3, "P"};
  j.protocol = "strict";
  j.candidate_sha = std::string(64, 'c');
  j.problem_sha = std::string(64, 'p');
  return j;
}

RunConditions conditions() {
  RunConditions c;
  c.precision = "bf16";
  c.size = "small";
  c.device.kind = "cpu";
  c.device.name = "Some CPU";
  c.limits = {900, 600};
  return c;
}

TEST(RunPlan, AVerdictThatDoesNotKnowItsJobIsStoredUnderTheJobsKey) {
  Verdict empty;  // a worker that failed before it knew anything: parser defaults throughout
  empty.outcome = Outcome::crashed;
  complete_identity(empty, job(), conditions());
  EXPECT_EQ(ResultStore::key_of(sample_of(job()), empty).device_fingerprint, "cpu:Some CPU::0");
  EXPECT_EQ(empty.protocol, "strict");
  EXPECT_EQ(empty.precision, "bf16") << "not the parser's fp32";
  EXPECT_EQ(empty.problem.size, "small") << "not the parser's default";
  auto key = ResultStore::key_of(sample_of(job()), empty);
  auto expected = key_of(job(), conditions());
  EXPECT_EQ(key.protocol, expected.protocol);
  EXPECT_EQ(key.precision, expected.precision);
  EXPECT_EQ(key.problem_size, expected.problem_size);
  EXPECT_EQ(key.candidate_sha256, expected.candidate_sha256);
  EXPECT_EQ(key.device_fingerprint, expected.device_fingerprint);
}

TEST(RunPlan, AWorkerVerdictThatKnowsItsJobKeepsWhatItSays) {
  Verdict v;
  v.outcome = Outcome::correct;
  v.protocol = "strict";
  v.protocol_version = 1;
  v.precision = "bf16";
  v.problem.sha256 = std::string(64, 'p');
  v.candidate.sha256 = std::string(64, 'c');
  v.device.kind = "cuda";
  v.device.name = "NVIDIA H200";
  complete_identity(v, job(), conditions());
  EXPECT_EQ(v.device.name, "NVIDIA H200");
  EXPECT_EQ(v.problem.size, "default") << "the worker's own word on what it ran";
}

}  // namespace
}  // namespace kbv
