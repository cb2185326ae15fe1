#include "report/markdown_printer.hpp"

#include <set>

#include <fmt/format.h>

#include "report/report_columns.hpp"

namespace kbv {
namespace {

// Text from the DB (run names, reasons, paths) as Markdown text: HTML a renderer would
// interpret (<script>, <img onerror>) becomes entities, newlines are flattened.
std::string text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

// A table cell: text() with pipes escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : text(s)) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

std::string listed_table(const ListedRows& rows) {
  std::string out = "|";
  std::string rule = "|";
  for (const auto& h : rows.headers) {
    out += " " + h + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : rows.rows) {
    out += "|";
    for (const auto& c : row) out += " " + cell(c) + " |";
    out += "\n";
  }
  return out;
}

template <typename Cols, typename Cell>
std::string table(const Cols& cols, std::size_t rows, Cell cell_text) {
  std::string out = "|";
  std::string rule = "|";
  for (const auto& c : cols) {
    out += " " + c.header + " |";
    rule += c.number ? "---:|" : "---|";
  }
  out += "\n" + rule + "\n";
  for (std::size_t r = 0; r < rows; ++r) {
    out += "|";
    for (std::size_t c = 0; c < cols.size(); ++c) out += " " + cell(cell_text(r, c)) + " |";
    out += "\n";
  }
  return out;
}

std::string aggregate_table(const std::vector<Aggregate>& rows) {
  const auto& cols = aggregate_columns();
  return table(cols, rows.size(), [&](std::size_t r, std::size_t c) { return cols[c].text(rows[r]); });
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::string out;
  out += "# kbv report\n\n";
  out += fmt::format("Source {}, generated {}.  \n", report.source.empty() ? "?" : text(report.source), report.generated_at);
  if (report.protocol.empty()) {
    out += "\nThe results DB holds no verdicts.\n";
    return out;
  }
  std::string protocols;
  for (const auto& p : report.protocols) protocols += (protocols.empty() ? "" : ", ") + p;
  std::string devices;
  for (const auto& d : report.devices) devices += (devices.empty() ? "" : ", ") + d;
  if (!report.nothing_judged.empty()) {
    out += fmt::format("Protocols present: {}; device(s): {}.\n", text(protocols), text(devices));
    out += "\n> **" + text(report.nothing_judged) + "**\n";
    for (const auto& n : report.notes) out += "\n> Note: " + text(n) + "\n";
    return out;
  }
  out += fmt::format("Headline protocol **{}** v{} (speedups vs `{}`); protocols present: {}; device(s): {}.\n",
                     text(report.protocol), report.protocol_version, report.baseline.empty() ? "?" : report.baseline,
                     text(protocols), text(devices));
  out += "Each problem counts once per run, by its best sample (best-of-k).\n";
  for (const auto& n : report.notes) out += "\n> Note: " + text(n) + "\n";

  out += "\n## Summary\n\n" + aggregate_table(report.overall);
  out += "\n## Per level\n\n" + aggregate_table(report.per_level);

  std::set<std::string> flags;
  for (const auto& a : report.overall)
    for (const auto& [f, n] : a.flag_counts) flags.insert(f);
  out += "\n## Integrity flags\n\n";
  if (flags.empty()) {
    out += "No sample carries an integrity flag (flags come from the strict protocol's checks).\n";
  } else {
    out += "Samples carrying each flag.\n\n| run |";
    std::string rule = "|---|";
    for (const auto& f : flags) {
      out += " " + cell(f) + " |";
      rule += "---:|";
    }
    out += "\n" + rule + "\n";
    for (const auto& a : report.overall) {
      out += "| " + cell(a.run) + " |";
      for (const auto& f : flags) {
        auto it = a.flag_counts.find(f);
        out += fmt::format(" {} |", it == a.flag_counts.end() ? 0 : it->second);
      }
      out += "\n";
    }
  }

  out += "\n## Decomposition\n\n";
  out += "The same problems of each run scored under each protocol choice, so each choice's inflation is visible:\n\n";
  for (const auto& s : report.scorings) out += fmt::format("- **{}**: {}\n", s.name, s.description);
  out += "\n";
  {
    const auto& cols = decomposition_columns();
    std::vector<std::pair<const DecompositionRow*, const DecompositionCell*>> rows;
    for (const auto& r : report.decomposition)
      for (const auto& c : r.cells) rows.emplace_back(&r, &c);
    out += table(cols, rows.size(), [&](std::size_t r, std::size_t c) { return cols[c].text(*rows[r].first, *rows[r].second); });
  }

  out += "\n## Excluded problems\n\n";
  if (report.excluded.empty()) {
    out += "None.\n";
  } else {
    out += "Left out of every aggregate above.\n\n| level | id | problem | kind | reason |\n|---:|---:|---|---|---|\n";
    for (const auto& e : report.excluded)
      out += fmt::format("| {} | {} | {} | {} | {} |\n", e.level, e.problem_id, cell(e.problem_name), e.kind, cell(e.reason));
  }

  if (!report.internal_errors.empty())
    out += "\n## Internal errors\n\nkbv's own failures, not the candidates' results: left out of every figure above; the next "
           "kbv run evaluates them again.\n\n" + listed_table(internal_error_rows(report));
  if (!report.unreadable.empty())
    out += "\n## Unreadable rows\n\nRows of the DB whose verdict_json could not be read: left out of every figure above.\n\n" +
           listed_table(unreadable_rows(report));

  out += "\n## Per problem\n\nThe best sample of each problem per run, under " + text(report.protocol) + ".\n\n";
  {
    const auto& cols = problem_columns();
    out += table(cols, report.problems.size(),
                 [&](std::size_t r, std::size_t c) { return cols[c].text(report, report.problems[r]); });
  }

  out += "\n## Evaluation cost\n\nWorker time per run over every stored verdict, and where it went (stage groups: "
         "start-up = process, interpreter, torch, CUDA context; build = importing the candidate and its extensions).\n\n";
  {
    const auto& cols = cost_columns();
    out += table(cols, report.costs.size(), [&](std::size_t r, std::size_t c) { return cols[c].text(report.costs[r]); });
  }
  return out;
}

}  // namespace kbv
