// The report's printers (CSV, HTML, Markdown, JSON) and the eval_results.json export.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "../support/report_fixtures.hpp"
#include "core/errors.hpp"
#include "report/csv_printer.hpp"
#include "report/eval_results_export.hpp"
#include "report/export_layout.hpp"
#include "report/html_printer.hpp"
#include "report/json_printer.hpp"
#include "report/markdown_printer.hpp"
#include "report/svg_plot.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

Report suite_report(const std::string& protocol = "") {
  return build_report(testing::synthetic_suite(), ReportOptions{protocol, "suite.db"});
}

TEST(CsvPrinter, HeaderIsTheFieldListAndOneRowPerVerdict) {
  auto records = testing::synthetic_suite();
  auto csv = render_csv(records);
  std::string header = csv.substr(0, csv.find("\r\n"));
  std::string expected;
  for (const auto& f : result_fields()) expected += (expected.empty() ? "" : ",") + f.name;
  EXPECT_EQ(header, expected);
  EXPECT_EQ(count(csv, "\r\n"), records.size() + 1);
}

TEST(CsvPrinter, QuotesWhatNeedsQuoting) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
}

TEST(HtmlPrinter, SelfContainedWithOneSvgPerPlot) {
  auto report = suite_report();
  auto html = render_html(report);
  // Two decomposition bar charts, one CDF, one scatter per run.
  EXPECT_EQ(count(html, "<svg "), 3 + report.runs.size());
  EXPECT_EQ(count(html, "kbv-scatter"), report.runs.size());
  EXPECT_EQ(count(html, "kbv-cdf"), 1u);
  EXPECT_EQ(count(html, "kbv-bars"), 2u);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos) << "no external scripts or images";
  EXPECT_NE(html.find("<table class=\"sortable\" id=\"problems\">"), std::string::npos);
  EXPECT_NE(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("<circle"), std::string::npos) << "the scatter has points";
  EXPECT_NE(html.find("<path d=\"M"), std::string::npos) << "the CDF has lines";
  // Every problem row is there.
  EXPECT_EQ(count(html, "<tr class=\"correct\">") + count(html, "<tr class=\"failed\">"), report.problems.size());
}

TEST(HtmlPrinter, EscapesNamesFromTheDb) {
  auto f = testing::FakeVerdict{};
  f.run = "<script>alert(1)</script>";
  f.speedup_on = 1.0;
  auto report = build_report({testing::make_record(f)}, ReportOptions{});
  auto html = render_html(report);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert"), std::string::npos);
}

TEST(SvgPlot, LogRangeCoversTheDataAndOne) {
  auto [lo, hi] = log_range({0.3, 12.0}, 1.0);
  EXPECT_LE(lo, 0.3 / 1.5 + 1e-12);
  EXPECT_GE(hi, 12.0 * 1.5 - 1e-12);
  auto [lo1, hi1] = log_range({}, 1.0);
  EXPECT_LT(lo1, 1.0);
  EXPECT_GT(hi1, 1.0);
}

TEST(MarkdownPrinter, EscapesHtmlFromTheDb) {
  testing::FakeVerdict f;
  f.run = "<script>alert(1)</script>";
  f.outcome = Outcome::incorrect;
  auto v = testing::make_record(f);
  v.verdict.reason = "<img src=x onerror=alert(2)> & more";
  auto md = render_markdown(build_report({v}, ReportOptions{"", "<b>db</b>.db"}));
  EXPECT_EQ(md.find("<script>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img"), std::string::npos) << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << md;
  EXPECT_NE(md.find("&lt;img src=x onerror=alert(2)&gt; &amp; more"), std::string::npos) << md;
}

TEST(MarkdownPrinter, UnknownFastPAndMovedReadNotAvailable) {
  std::vector<VerdictRecord> records;
  for (int p = 1; p <= 2; ++p) {
    testing::FakeVerdict f;
    f.problem = p;
    f.protocol = "standard";
    f.speedup_off = 2.0;  // timed against TF32 off only, as on the CPU
    records.push_back(testing::make_record(f));
  }
  auto report = build_report(records, ReportOptions{"", "cpu.db"});
  auto md = render_markdown(report);
  EXPECT_NE(md.find("| model-a | standard+TF32 baseline | 2 | 100.0% | n/a | n/a | n/a |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| 100.0% |\n"), std::string::npos) << "no moved 100%";
  auto html = render_html(report);
  EXPECT_EQ(html.find("fast_1 0.0%"), std::string::npos) << "the HTML bar is n/a, not 0%";
  EXPECT_NE(html.find(">n/a</text>"), std::string::npos);
}

TEST(MarkdownPrinter, HasEverySectionAndTheHeadlineNumbers) {
  auto report = suite_report();
  auto md = render_markdown(report);
  for (const char* section : {"## Summary", "## Per level", "## Integrity flags", "## Decomposition", "## Excluded problems", "## Per problem", "## Evaluation cost"})
    EXPECT_NE(md.find(section), std::string::npos) << section;
  EXPECT_NE(md.find("Headline protocol **strict**"), std::string::npos);
  for (const auto& run : report.runs) EXPECT_NE(md.find("| " + run + " |"), std::string::npos) << run;
  EXPECT_NE(md.find("| fast_0 | fast_0.5 | fast_0.8 | fast_1 | fast_1.5 | fast_2 |"), std::string::npos);
  EXPECT_NE(md.find("standard+TF32 baseline"), std::string::npos);
  EXPECT_NE(md.find("reference output is all zeros"), std::string::npos) << "the degenerate problem is listed with its reason";
  EXPECT_NE(md.find("get_inputs() raised"), std::string::npos) << "the broken problem is listed";
  // The summary's correctness cell is the aggregate's rate, formatted.
  const auto& a = report.overall[0];
  EXPECT_NE(md.find(fmt::format("| {:.1f}% |", a.correctness_rate * 100)), std::string::npos);
}

// A DB of verdicts none of which judged a kernel (a CPU machine, CUDA candidates): a banner that
// says so and why, not empty tables and "speedups vs `?`".
TEST(MarkdownPrinter, NothingJudgedIsABannerNotEmptyTables) {
  std::vector<VerdictRecord> records;
  for (int p = 1; p <= 3; ++p) {
    testing::FakeVerdict f;
    f.problem = p;
    f.protocol = "standard";
    f.outcome = p < 3 ? Outcome::skipped : Outcome::internal_error;
    auto r = testing::make_record(f);
    r.verdict.reason = p < 3 ? "candidate needs CUDA (x); run it with --device cuda" : "cannot start the sandbox";
    records.push_back(r);
  }
  auto report = build_report(records, ReportOptions{"", "cpu.db"});
  auto md = render_markdown(report);
  EXPECT_NE(md.find("Nothing was judged"), std::string::npos) << md;
  EXPECT_NE(md.find("2 skipped: CUDA candidates need a GPU"), std::string::npos) << md;
  EXPECT_NE(md.find("1 internal_error (kbv's own fault), the first: cannot start the sandbox"), std::string::npos) << md;
  EXPECT_EQ(md.find("## Summary"), std::string::npos) << md;
  EXPECT_EQ(md.find("`?`"), std::string::npos) << md;
  auto html = render_html(report);
  EXPECT_NE(html.find("class=\"banner\""), std::string::npos);
  EXPECT_EQ(html.find("<h2>Summary</h2>"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_json(report))["nothing_judged"].get<std::string>().empty());

  // One judged verdict: the tables are back, and no banner.
  testing::FakeVerdict f;
  f.problem = 4;
  f.protocol = "standard";
  f.speedup_off = 1.5;
  records.push_back(testing::make_record(f));
  auto judged = build_report(records, ReportOptions{"", "cpu.db"});
  EXPECT_TRUE(judged.nothing_judged.empty());
  EXPECT_NE(render_markdown(judged).find("## Summary"), std::string::npos);
}

TEST(JsonPrinter, CarriesTheNumbersAndEveryFieldOfEachBestSample) {
  auto report = suite_report("verified");
  auto j = nlohmann::json::parse(render_json(report));
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_EQ(j["protocol"], "verified");
  EXPECT_EQ(j["summary"].size(), report.runs.size());
  EXPECT_EQ(j["problems"].size(), report.problems.size());
  EXPECT_EQ(j["excluded"].size(), 2u);
  for (const auto& f : result_fields()) EXPECT_TRUE(j["problems"][0]["best"].contains(f.name)) << f.name;
  EXPECT_DOUBLE_EQ(j["summary"][0]["correctness_rate"].get<double>(), report.overall[0].correctness_rate);
  EXPECT_TRUE(j["summary"][0]["fast_p"].contains("1.5"));
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kbv-export-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ExportTest, WritesOneKernelBenchFilePerRunOfTheLevelAsked) {
  auto records = testing::synthetic_suite();
  EXPECT_THROW(export_eval_results(records, dir_.string(), {ExportFormat::kernelbench, "verified"}), UsageError)
      << "two levels, one file each: --level says which";
  ExportOptions options{ExportFormat::kernelbench, "verified"};
  options.level = 1;
  auto result = export_eval_results(records, (dir_ / "level1").string(), options);
  options.level = 2;
  EXPECT_EQ(export_eval_results(records, (dir_ / "level2").string(), options).files.size(), 3u);
  EXPECT_EQ(result.protocol, "verified");
  EXPECT_EQ(result.files.size(), 3u) << "three runs";
  fs::path file = dir_ / "level1" / "gpt-x" / "eval_results.json";
  ASSERT_TRUE(fs::exists(file));
  std::ifstream in(file);
  auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 14u) << "problem ids 1..14";
  bool saw_correct = false, saw_incorrect = false;
  for (const auto& [pid, samples] : j.items()) {
    EXPECT_TRUE(std::regex_match(pid, std::regex("[0-9]+"))) << pid;
    ASSERT_TRUE(samples.is_array());
    EXPECT_EQ(samples.size(), 2u);
    int last = -1;
    for (const auto& s : samples) {
      std::set<std::string> keys;
      for (const auto& [k, v] : s.items()) keys.insert(k);
      EXPECT_EQ(keys, (std::set<std::string>{"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"}));
      EXPECT_GT(s["sample_id"].get<int>(), last);
      last = s["sample_id"];
      EXPECT_TRUE(s["compiled"].is_boolean());
      EXPECT_TRUE(s["correctness"].is_boolean());
      EXPECT_EQ(s["metadata"]["kbv_protocol"], "verified");
      if (s["correctness"]) {
        saw_correct = true;
        EXPECT_DOUBLE_EQ(s["runtime"].get<double>(), 1.01) << "candidate mean ms, 3 significant digits";
        const auto& st = s["runtime_stats"];
        for (const char* k : {"mean", "std", "min", "max", "num_trials"}) EXPECT_TRUE(st.contains(k)) << k;
        EXPECT_EQ(st["num_trials"], 4);
        EXPECT_DOUBLE_EQ(st["std"].get<double>(), 0.0893) << "population std of 0.9, 1.0, 1.0, 1.15";
        EXPECT_TRUE(s["metadata"].contains("kbv_speedup"));
        EXPECT_EQ(s["metadata"]["hardware"], "NVIDIA H200");
      } else {
        saw_incorrect = true;
        EXPECT_EQ(s["runtime"].get<double>(), -1.0);
        EXPECT_TRUE(s["runtime_stats"].empty());
      }
    }
  }
  EXPECT_TRUE(saw_correct);
  EXPECT_TRUE(saw_incorrect);
}

TEST_F(ExportTest, DefaultsToTheStrictestProtocolAndRejectsAbsentOnes) {
  auto records = testing::synthetic_suite();
  ExportOptions level1;
  level1.level = 1;
  EXPECT_EQ(export_eval_results(records, dir_.string(), level1).protocol, "strict");
  EXPECT_THROW(export_eval_results(records, dir_.string(), {ExportFormat::kernelbench, "lenient"}), UsageError);
  EXPECT_THROW(export_eval_results({}, dir_.string(), {}), UsageError);
  EXPECT_THROW(export_format_from_name("kernelbench2"), UsageError);
}

TEST(ExportFolder, RunNamesBecomeSafeFolderNames) {
  EXPECT_EQ(run_folder_name("gpt-5.5"), "gpt-5.5");
  EXPECT_EQ(run_folder_name("a/b c"), "a_b_c");
  EXPECT_EQ(run_folder_name(".."), "run_..");
  EXPECT_EQ(run_folder_name("m [bf16]"), "m__bf16_");
}

}  // namespace
}  // namespace kbv
