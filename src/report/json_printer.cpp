#include "report/json_printer.hpp"

#include <fmt/format.h>

namespace kbv {
namespace {

using J = nlohmann::ordered_json;

template <typename T>
J opt(const std::optional<T>& v) {
  return v ? J(*v) : J(nullptr);
}

J aggregate_json(const Aggregate& a) {
  J fast = J::object();
  for (const auto& [p, share] : a.fast_p) fast[fmt::format("{}", p)] = opt(share);
  return J{{"run", a.run},
           {"level", a.level == 0 ? J("all") : J(a.level)},
           {"problems", a.problems},
           {"samples", a.samples},
           {"compiled", a.compiled},
           {"correct", a.correct},
           {"timed_correct", a.timed_correct},
           {"compile_rate", a.compile_rate},
           {"correctness_rate", a.correctness_rate},
           {"correct_speedup", opt(a.correct_speedup)},
           {"fast_p", fast},
           {"memory_measured", a.memory_measured},
           {"memory_efficiency", opt(a.memory_efficiency)},
           {"memory_efficient_share", opt(a.memory_efficient_share)},
           {"memory_increase_share", opt(a.memory_increase_share)},
           {"flag_counts", a.flag_counts}};
}

}  // namespace

nlohmann::ordered_json report_to_json(const Report& report) {
  J j{{"schema", kReportSchema},
      {"source", report.source},
      {"generated_at", report.generated_at},
      {"protocol", report.protocol},
      {"protocol_version", report.protocol_version},
      {"baseline", report.baseline},
      {"protocols", report.protocols},
      {"runs", report.runs},
      {"devices", report.devices},
      {"notes", report.notes},
      {"nothing_judged", report.nothing_judged}};
  j["summary"] = J::array();
  for (const auto& a : report.overall) j["summary"].push_back(aggregate_json(a));
  j["per_level"] = J::array();
  for (const auto& a : report.per_level) j["per_level"].push_back(aggregate_json(a));
  j["scorings"] = J::array();
  for (const auto& s : report.scorings)
    j["scorings"].push_back(J{{"name", s.name}, {"protocol", s.protocol}, {"baseline", s.baseline}, {"description", s.description}});
  j["decomposition"] = J::array();
  for (const auto& row : report.decomposition) {
    J cells = J::array();
    for (const auto& c : row.cells)
      cells.push_back(J{{"scoring", c.scoring},
                        {"scores", c.scores ? aggregate_json(*c.scores) : J(nullptr)},
                        {"moved_vs_standard", opt(c.moved)}});
    j["decomposition"].push_back(J{{"run", row.run}, {"problems", row.problems}, {"scorings", cells}});
  }
  j["costs"] = J::array();
  for (const auto& c : report.costs)
    j["costs"].push_back(J{{"run", c.run}, {"evaluations", c.evaluations}, {"worker_seconds", c.worker_seconds},
                           {"group_seconds", c.group_seconds}});
  j["excluded"] = J::array();
  for (const auto& e : report.excluded)
    j["excluded"].push_back(J{{"level", e.level},
                              {"problem_id", e.problem_id},
                              {"problem_name", e.problem_name},
                              {"kind", e.kind},
                              {"reason", e.reason}});
  j["internal_errors"] = J::array();
  for (std::size_t i : report.internal_errors) j["internal_errors"].push_back(record_fields_json(report.records[i]));
  j["unreadable_rows"] = J::array();
  for (const auto& u : report.unreadable)
    j["unreadable_rows"].push_back(J{{"id", u.id},
                                     {"run_name", u.sample.run_name},
                                     {"level", u.sample.level},
                                     {"problem_id", u.sample.problem_id},
                                     {"sample_id", u.sample.sample_id},
                                     {"protocol", u.protocol},
                                     {"error", u.error}});
  j["problems"] = J::array();
  for (const auto& p : report.problems)
    j["problems"].push_back(J{{"run", p.run},
                              {"level", p.level},
                              {"problem_id", p.problem_id},
                              {"problem_name", p.problem_name},
                              {"samples", p.samples},
                              {"compiled_samples", p.compiled_samples},
                              {"correct_samples", p.correct_samples},
                              {"compiled", p.compiled},
                              {"correct", p.correct},
                              {"speedup", opt(p.speedup)},
                              {"speedup_ci_low", opt(p.speedup_ci_low)},
                              {"speedup_ci_high", opt(p.speedup_ci_high)},
                              {"memory_ratio", opt(p.memory_ratio)},
                              {"flag_counts", p.flag_counts},
                              {"best", record_fields_json(report.best(p))}});
  return j;
}

std::string render_json(const Report& report) {
  return report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kbv
