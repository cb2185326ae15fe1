#pragma once
// The columns of the report's tables, defined once for every printer (Markdown, HTML): header,
// a one-line help, the cell text, and a number to sort by. The per-verdict fields are in
// store/result_fields.hpp; these are the per-run and per-problem summaries built on them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/aggregates.hpp"

namespace kbv {

std::string format_rate(std::optional<double> share);      // "45.2%", "n/a"
std::string format_speedup(std::optional<double> ratio);   // "1.23x", "n/a"
std::string format_ms(std::optional<double> ms);           // "0.0123", "n/a"
std::string format_level(int level);                       // "all" for 0
std::string format_flag_counts(const std::map<std::string, int>& counts);  // "side_stream 2, aliasing 1" or ""

struct AggregateColumn {
  std::string header;
  std::string help;
  std::function<std::string(const Aggregate&)> text;
  std::function<std::optional<double>(const Aggregate&)> number;  // for sorting and plots; nullopt = text
};
const std::vector<AggregateColumn>& aggregate_columns();

struct ProblemColumn {
  std::string header;
  std::string help;
  std::function<std::string(const Report&, const ProblemScore&)> text;
  std::function<std::optional<double>(const Report&, const ProblemScore&)> number;
};
const std::vector<ProblemColumn>& problem_columns();

struct DecompositionColumn {
  std::string header;
  std::string help;
  std::function<std::string(const DecompositionRow&, const DecompositionCell&)> text;
  std::function<std::optional<double>(const DecompositionRow&, const DecompositionCell&)> number;
};
// Long format: one row per (run, scoring).
const std::vector<DecompositionColumn>& decomposition_columns();

struct CostColumn {
  std::string header;
  std::string help;
  std::function<std::string(const EvaluationCost&)> text;
  std::function<std::optional<double>(const EvaluationCost&)> number;
};
const std::vector<CostColumn>& cost_columns();

// Rows that count in no figure, as headers and text cells for every printer: kbv's internal
// errors (run, level, id, sample, protocol, reason) and DB rows that could not be read (row id,
// run, level, id, sample, protocol, error).
struct ListedRows {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};
ListedRows internal_error_rows(const Report& report);
ListedRows unreadable_rows(const Report& report);

}  // namespace kbv
