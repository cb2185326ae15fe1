// `kbv export` against KernelBench's own result files (kernelbench_fixtures/README.md says where
// each comes from; eval_results_h200.json was written by KernelBench's own code on an H200):
// same key layout, same entry keys in the same order, same value semantics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "../support/report_fixtures.hpp"
#include "core/errors.hpp"
#include "report/eval_results_export.hpp"
#include "report/kernelbench_sample.hpp"
#include "report/kernelbench_timing_stats.hpp"
#include "report/verified_results.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using J = nlohmann::ordered_json;

J read_json(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << p;
  return J::parse(in);
}

J fixture(const std::string& name) {
  return read_json(fs::path(KBV_SOURCE_DIR) / "tests/unit/kernelbench_fixtures" / name);
}

std::vector<std::string> keys_in_order(const J& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

// Every metadata key KernelBench's entries use, from the fixture.
std::set<std::string> metadata_keys(const std::vector<J>& entries) {
  std::set<std::string> out;
  for (const auto& e : entries)
    for (const auto& [k, v] : e["metadata"].items()) out.insert(k);
  return out;
}

// The value semantics of one entry, shared by KernelBench's file and kbv's export.
void expect_entry_semantics(const J& e, const J& reference_entry,
                            const std::set<std::string>& kernelbench_metadata) {
  EXPECT_EQ(keys_in_order(e), keys_in_order(reference_entry)) << e.dump();
  EXPECT_TRUE(e.at("sample_id").is_number_integer());
  EXPECT_TRUE(e.at("compiled").is_boolean());
  EXPECT_TRUE(e.at("correctness").is_boolean());
  EXPECT_TRUE(e.at("runtime").is_number());
  ASSERT_TRUE(e.at("runtime_stats").is_object());
  ASSERT_TRUE(e.at("metadata").is_object());
  const auto& m = e.at("metadata");
  EXPECT_TRUE(m.at("hardware").is_string());
  EXPECT_TRUE(std::regex_match(m.at("device").get<std::string>(), std::regex("cuda:[0-9]+")))
      << m.at("device");
  for (const auto& [k, v] : m.items()) {
    if (k.rfind("kbv_", 0) != 0) {
      EXPECT_TRUE(kernelbench_metadata.count(k)) << "not a KernelBench metadata key: " << k;
    }
  }
  if (!e.at("compiled").get<bool>()) {
    // A build failure, or what KernelBench's last-level catch calls a CUDA or other error.
    EXPECT_FALSE(e.at("correctness").get<bool>());
    EXPECT_TRUE(m.contains("compilation_error") || m.contains("cuda_error") || m.contains("other_error")) << e.dump();
  }
  // Every error KernelBench writes comes with its exception's name, "<module>.<class>".
  for (const char* k : {"compilation_error", "runtime_error", "cuda_error", "other_error"})
    if (m.contains(k)) {
      ASSERT_TRUE(m.contains(std::string(k) + "_name")) << k << ": " << e.dump();
      EXPECT_TRUE(std::regex_match(m.at(std::string(k) + "_name").get<std::string>(), std::regex(R"(\w+(\.\w+)+)")))
          << m.at(std::string(k) + "_name");
    }
  if (m.contains("max_difference") && m.contains("avg_difference"))
    EXPECT_EQ(m.at("max_difference").size(), m.at("avg_difference").size()) << "one of each per failing trial";
  if (e.at("runtime_stats").empty()) {
    EXPECT_EQ(e.at("runtime").get<double>(), -1.0);
    return;
  }
  // Timed: only a correct sample, and runtime IS runtime_stats.mean (KernelBench's mean, 3 s.f.).
  EXPECT_TRUE(e.at("correctness").get<bool>());
  const auto& st = e.at("runtime_stats");
  for (const auto& [ref_key, ignored] : reference_entry.at("runtime_stats").items())
    EXPECT_TRUE(st.contains(ref_key)) << ref_key;
  EXPECT_EQ(keys_in_order(st), (std::vector<std::string>{"mean", "std", "min", "max", "num_trials",
                                                         "hardware", "device"}));
  EXPECT_EQ(e.at("runtime").get<double>(), st.at("mean").get<double>());
  for (const char* k : {"mean", "std", "min", "max"})
    EXPECT_EQ(st.at(k).get<double>(), round_3_significant(st.at(k).get<double>())) << k;
  EXPECT_LE(st.at("min").get<double>(), st.at("mean").get<double>());
  EXPECT_LE(st.at("mean").get<double>(), st.at("max").get<double>());
  EXPECT_TRUE(st.at("num_trials").is_number_integer());
  EXPECT_EQ(st.at("device"), m.at("device"));
  EXPECT_EQ(st.at("hardware"), m.at("hardware"));
}

// KernelBench's layout: problem id (decimal string) -> samples sorted by sample_id.
void expect_kernelbench_file(const J& file, const J& reference) {
  ASSERT_TRUE(file.is_object());
  std::vector<J> ref_entries;
  for (const auto& [pid, samples] : reference.items())
    for (const auto& s : samples) ref_entries.push_back(s);
  auto known = metadata_keys(ref_entries);
  const J& timed = *std::find_if(ref_entries.begin(), ref_entries.end(),
                                 [](const J& e) { return !e["runtime_stats"].empty(); });
  for (const auto& [pid, samples] : file.items()) {
    EXPECT_TRUE(std::regex_match(pid, std::regex("[1-9][0-9]*"))) << pid;
    ASSERT_TRUE(samples.is_array());
    int last = -1;
    for (const auto& s : samples) {
      EXPECT_GT(s["sample_id"].get<int>(), last);
      last = s["sample_id"];
      expect_entry_semantics(s, timed, known);
    }
  }
}

// A small run: one correct and timed, one incorrect, one build failure, one skipped.
std::vector<VerdictRecord> small_run(const std::string& protocol) {
  std::vector<VerdictRecord> out;
  testing::FakeVerdict f;
  f.run = "gpt-x";
  f.protocol = protocol;
  f.problem = 19;
  f.speedup_on = 1.3;
  f.speedup_off = 1.6;
  f.memory = std::make_pair<std::int64_t, std::int64_t>(1 << 20, 2 << 20);
  out.push_back(testing::make_record(f));
  f.sample = 1;
  f.outcome = Outcome::incorrect;
  out.push_back(testing::make_record(f));
  f.problem = 23;
  f.sample = 0;
  f.outcome = Outcome::compile_error;
  out.push_back(testing::make_record(f));
  f.problem = 40;
  f.outcome = Outcome::skipped;
  out.push_back(testing::make_record(f));
  return out;
}

class KernelBenchExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kbv-kb-export-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(KernelBenchFixture, PassesItsOwnSemantics) {
  for (const char* name : {"eval_results_h200.json", "eval_results.json"}) {
    SCOPED_TRACE(name);
    auto ref = fixture(name);
    expect_kernelbench_file(ref, ref);
  }
}

TEST_F(KernelBenchExport, MatchesKernelBenchsFileFieldForField) {
  auto records = small_run("verified");
  auto result = export_eval_results(records, dir_.string(), {});
  // One level: KernelBench's place, runs/<run>/eval_results.json.
  ASSERT_EQ(result.files,
            std::vector<std::string>{(dir_ / "gpt-x" / "eval_results.json").string()});
  auto file = read_json(result.files[0]);
  // KernelBench's own file, written by its code on an H200, and the excerpt of its writer.
  for (const char* name : {"eval_results_h200.json", "eval_results.json"}) {
    SCOPED_TRACE(name);
    expect_kernelbench_file(file, fixture(name));
  }

  EXPECT_EQ(keys_in_order(file), (std::vector<std::string>{"19", "23"}))
      << "the skipped sample has no row";
  EXPECT_EQ(result.left_out, 1);
  const auto& timed = file["19"][0];
  // KernelBench's runtime is the mean of the trials: samples 0.9, 1.0, 1.0, 1.15 -> 1.0125 -> 1.01.
  EXPECT_EQ(timed["runtime"].get<double>(), 1.01);
  EXPECT_EQ(timed["runtime_stats"]["std"].get<double>(), 0.0893) << "population std, 3 s.f.";
  EXPECT_EQ(timed["runtime_stats"]["device"], "cuda:0");
  EXPECT_DOUBLE_EQ(timed["metadata"]["kbv_runtime_mean_ms"].get<double>(), 1.0125);
  const auto& wrong = file["19"][1];
  EXPECT_EQ(wrong["metadata"]["correctness_trials"], "(1 / 2)");
  EXPECT_EQ(wrong["metadata"]["correctness_issue"], "Output mismatch") << "KernelBench's words";
  EXPECT_EQ(wrong["metadata"]["kbv_reason"], "incorrect on purpose") << "kbv's own, beside them";
  EXPECT_EQ(file["23"][0]["compiled"], false);
  EXPECT_EQ(file["23"][0]["metadata"]["compilation_error_name"], "builtins.RuntimeError");
}

// KernelBench's eval_kernel_against_ref and the last-level catch of eval_from_generations.py:
// an exception in forward is compiled (runtime_error); a CUDA error, a crash, a hang are not
// (cuda_error / other_error): "not runnable code".
TEST_F(KernelBenchExport, CompiledAndErrorKeysAsKernelBenchWritesThem) {
  std::vector<VerdictRecord> records;
  testing::FakeVerdict f;
  f.run = "gpt-x";
  f.problem = 19;
  auto add = [&](Outcome o, const std::string& reason) {
    f.outcome = o;
    auto r = testing::make_record(f);
    r.verdict.reason = reason;
    records.push_back(r);
    ++f.sample;
  };
  add(Outcome::runtime_error, "forward raised ValueError: bad shape");
  add(Outcome::runtime_error, "forward raised RuntimeError: CUDA error: an illegal memory access was encountered");
  add(Outcome::crashed, "the sandbox died of SIGSEGV");
  add(Outcome::timeout, "candidate timed out after 600 s");
  add(Outcome::compile_error, "Error building extension 'relu': torch.utils.cpp_extension.BuildError: ninja failed");
  auto result = export_eval_results(records, dir_.string(), {});
  auto file = read_json(result.files.at(0));
  const auto& s = file["19"];
  ASSERT_EQ(s.size(), 5u) << file.dump();
  EXPECT_EQ(s[0]["compiled"], true);
  EXPECT_EQ(s[0]["metadata"]["runtime_error_name"], "builtins.ValueError");
  EXPECT_FALSE(s[0]["metadata"].contains("cuda_error"));
  EXPECT_EQ(s[1]["compiled"], false);
  EXPECT_EQ(s[1]["metadata"]["cuda_error"], "CUDA Error: forward raised RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(s[1]["metadata"]["cuda_error_name"], "builtins.RuntimeError");
  EXPECT_FALSE(s[1]["metadata"].contains("runtime_error"));
  EXPECT_EQ(s[2]["compiled"], false);
  EXPECT_EQ(s[2]["metadata"]["other_error"], "error: the sandbox died of SIGSEGV");
  EXPECT_EQ(s[2]["metadata"]["other_error_name"], "kbv.crashed");
  EXPECT_EQ(s[3]["compiled"], false);
  EXPECT_EQ(s[3]["metadata"]["other_error_name"], "builtins.TimeoutError");
  EXPECT_EQ(s[4]["compiled"], false);
  EXPECT_EQ(s[4]["metadata"]["compilation_error_name"], "torch.utils.cpp_extension.BuildError");
  for (const auto& e : s) EXPECT_EQ(e["correctness"], false);
  for (const char* name : {"eval_results_h200.json", "eval_results.json"}) {
    SCOPED_TRACE(name);
    auto ref = fixture(name);
    auto known = metadata_keys(std::vector<J>(ref["19"].begin(), ref["19"].end()));
    for (const char* k : {"cuda_error", "cuda_error_name", "other_error", "other_error_name", "runtime_error",
                          "runtime_error_name", "compilation_error", "compilation_error_name"})
      known.insert(k);  // KernelBench's keys for the cases its fixtures do not hold
    expect_entry_semantics(s[0], ref["19"][0], known);
  }
}

// KernelBench's max_difference and avg_difference: one "%.6f" string each per failing trial.
TEST_F(KernelBenchExport, DifferencesArePerFailingTrial) {
  testing::FakeVerdict f;
  f.run = "gpt-x";
  f.protocol = "standard";
  f.problem = 19;
  f.outcome = Outcome::incorrect;
  auto r = testing::make_record(f);
  auto& d = r.verdict.correctness->distributions;
  d.clear();
  for (int i = 0; i < 5; ++i) {
    DistributionResult t;
    t.name = "trial_" + std::to_string(i);
    t.kind = "seeded_template";
    t.status = i % 2 ? DistributionStatus::pass : DistributionStatus::fail;
    t.max_abs_err = i % 2 ? 0.0 : 0.5 + i;
    t.mean_abs_err = i % 2 ? 0.0 : 0.25 + i;
    d.push_back(t);
  }
  auto result = export_eval_results({r}, dir_.string(), {});
  auto m = read_json(result.files.at(0))["19"][0]["metadata"];
  EXPECT_EQ(m["max_difference"], J::array({"0.500000", "2.500000", "4.500000"}));
  EXPECT_EQ(m["avg_difference"], J::array({"0.250000", "2.250000", "4.250000"}));
  EXPECT_EQ(m["correctness_trials"], "(2 / 5)");

  // A verdict whose judge did not measure the mean: no avg_difference, never a made-up one.
  for (auto& t : d) t.mean_abs_err.reset();
  fs::remove_all(dir_);
  result = export_eval_results({r}, dir_.string(), {});
  m = read_json(result.files.at(0))["19"][0]["metadata"];
  EXPECT_FALSE(m.contains("avg_difference"));
  EXPECT_EQ(m["max_difference"].size(), 3u);
}

TEST_F(KernelBenchExport, SkippedSamplesAreNeverCompileFailures) {
  auto records = small_run("standard");
  for (auto& r : records) r.verdict.outcome = Outcome::skipped;  // a CPU machine, CUDA candidates
  auto result = export_eval_results(records, dir_.string(), {});
  auto file = read_json(result.files.at(0));
  EXPECT_TRUE(file.empty()) << file.dump();
  EXPECT_EQ(result.left_out, 4);
}

TEST_F(KernelBenchExport, NeverOverwritesKernelBenchsOwnResults) {
  auto records = small_run("verified");
  fs::create_directories(dir_ / "gpt-x");
  fs::copy_file(fs::path(KBV_SOURCE_DIR) / "tests/unit/kernelbench_fixtures/eval_results_h200.json",
                dir_ / "gpt-x/eval_results.json");
  EXPECT_THROW(export_eval_results(records, dir_.string(), {}), UsageError);
  EXPECT_EQ(read_json(dir_ / "gpt-x/eval_results.json"), fixture("eval_results_h200.json"))
      << "left as it was";
  ExportOptions force;
  force.force = true;
  auto forced = export_eval_results(records, dir_.string(), force);
  EXPECT_TRUE(read_json(forced.files.at(0))["19"][0]["metadata"].contains("kbv_outcome")) << "--force replaces it";
  fs::remove(dir_ / "gpt-x/eval_results.json");
  export_eval_results(records, dir_.string(), {});
  EXPECT_NO_THROW(export_eval_results(records, dir_.string(), {})) << "kbv's own file is replaced";
}

// One layout, OUT/<run>/eval_results.json: a run of several levels is exported a level at a time.
TEST_F(KernelBenchExport, SeveralLevelsOfOneRunAreExportedOneLevelAtATime) {
  auto records = small_run("verified");
  auto more = small_run("verified");
  for (auto& r : more) r.sample.level = 2;
  records.insert(records.end(), more.begin(), more.end());
  try {
    export_eval_results(records, dir_.string(), {});
    ADD_FAILURE() << "a run of two levels exported into one file";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gpt-x (levels 1, 2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--level"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_)) << "nothing written";
  ExportOptions two;
  two.level = 2;
  auto result = export_eval_results(records, (dir_ / "level2").string(), two);
  EXPECT_EQ(result.files, (std::vector<std::string>{(dir_ / "level2/gpt-x/eval_results.json").string()}));
  EXPECT_EQ(read_json(result.files[0]).size(), 2u) << "level 2's problems 19 and 23";
}

TEST_F(KernelBenchExport, VerifiedFormatMatchesKernelBenchVerifiedsFiles) {
  auto records = small_run("standard");
  auto hidden = small_run("verified");
  records.insert(records.end(), hidden.begin(), hidden.end());
  auto result =
      export_eval_results(records, dir_.string(), {ExportFormat::kernelbench_verified, ""});
  EXPECT_EQ(result.protocol, "standard");
  EXPECT_EQ(result.hidden_protocol, "verified");
  ASSERT_EQ(result.files.size(), 2u);
  EXPECT_EQ(result.files[1], (dir_ / "gpt-x" / "eval_results_hidden.json").string());

  for (const auto& [ours_name, theirs_name] :
       {std::pair{0, "eval_results_kbv.json"}, std::pair{1, "eval_results_hidden_kbv.json"}}) {
    auto ours = read_json(result.files[ours_name]);
    auto theirs = fixture(theirs_name);
    std::vector<J> ref_entries;
    for (const auto& [k, e] : theirs.items()) ref_entries.push_back(e);
    auto known = metadata_keys(ref_entries);
    for (const char* k : {"correctness_issue", "runtime_error", "hidden_runtime_error", "compilation_error_name"})
      known.insert(k);
    EXPECT_EQ(keys_in_order(ours), (std::vector<std::string>{"19_0", "19_1", "23_0"}));
    for (const auto& [key, e] : ours.items()) {
      // scripts/benchmark_eval_analysis.py: pid, sid = key.rsplit('_', 1)
      EXPECT_EQ(key,
                fmt::format("{}_{}", key.substr(0, key.rfind('_')), e["sample_id"].get<int>()));
      const J& ref = e["runtime_stats"].empty() ? theirs["23_0"] : theirs["19_0"];
      expect_entry_semantics(e, ref, known);
    }
  }
  auto main = read_json(result.files[0]);
  EXPECT_EQ(main["19_0"]["peak_memory"].get<std::int64_t>(), 1 << 20);
  EXPECT_EQ(main["23_0"]["peak_memory"].get<std::int64_t>(), -1);
  auto hidden_file = read_json(result.files[1]);
  EXPECT_EQ(hidden_file["19_1"]["metadata"]["hidden_failed_configs"], J::array({"config_4"}))
      << "D4_neg failed";
  EXPECT_EQ(hidden_file["19_1"]["metadata"]["hidden_correctness_trials"], "(1 / 2)");
  EXPECT_TRUE(hidden_file["19_0"]["metadata"]["hidden_failed_configs"].empty());
  EXPECT_EQ(hidden_file["19_0"]["correctness"], true);
}

TEST_F(KernelBenchExport, AHiddenTestFilesConfigurationsAreTheHiddenRun) {
  auto records = small_run("verified");
  // Sample 1 was also checked on a hidden-test file's three lists; its second failed.
  auto& d = records[1].verdict.correctness->distributions;
  for (int i = 1; i <= 3; ++i) {
    DistributionResult h;
    h.name = "hidden_" + std::to_string(i);
    h.kind = "hidden_file";
    h.status = i == 2 ? DistributionStatus::fail : DistributionStatus::pass;
    h.max_abs_err = i == 2 ? 1234.5 : 0;
    d.push_back(h);
  }
  auto result = export_eval_results(records, dir_.string(), {ExportFormat::kernelbench_verified, "verified"});
  ASSERT_EQ(result.files.size(), 2u);
  auto hidden_file = read_json(result.files[1]);
  EXPECT_EQ(hidden_file["19_1"]["metadata"]["hidden_correctness_trials"], "(2 / 3)") << hidden_file["19_1"].dump();
  EXPECT_EQ(hidden_file["19_1"]["metadata"]["hidden_failed_configs"], J::array({"config_2"}));
  EXPECT_EQ(hidden_file["19_1"]["metadata"]["max_difference"], J::array({"1234.500000"}));
  EXPECT_EQ(hidden_file["19_0"]["metadata"]["hidden_correctness_trials"], "(2 / 2)")
      << "a sample without the file keeps verified's distributions";
}

TEST(KernelBenchStats, RoundsAsPythonsFormatG) {
  // float(f"{x:.3g}") in CPython 3.11
  EXPECT_EQ(round_3_significant(1.23456), 1.23);
  EXPECT_EQ(round_3_significant(0.0123456), 0.0123);
  EXPECT_EQ(round_3_significant(1234.5), 1230.0);
  EXPECT_EQ(round_3_significant(2.675), 2.67);
  EXPECT_EQ(round_3_significant(0.00012549), 0.000125);
  EXPECT_EQ(round_3_significant(99999.0), 100000.0);
  EXPECT_EQ(round_3_significant(1.0125), 1.01);
  EXPECT_EQ(round_3_significant(-1.0), -1.0);
}

TEST(KernelBenchStats, ConfigNamesOfTheHiddenDistributions) {
  EXPECT_EQ(verified_config_name("D1_x1"), "config_1");
  EXPECT_EQ(verified_config_name("D4_neg"), "config_4");
  EXPECT_EQ(verified_config_name("D5_heavy"), "");
  EXPECT_EQ(verified_config_name("trial_0"), "");
}

}  // namespace
}  // namespace kbv
