#include "report/html_printer.hpp"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/report_columns.hpp"
#include "report/svg_plot.hpp"

namespace kbv {
namespace {

constexpr const char* kCss = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px 32px; color: #222; background: #fafafa; }
h1 { margin-bottom: 4px; }
h2 { margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #555; margin: 2px 0; }
.note { background: #fff7e0; border-left: 4px solid #e6a700; padding: 6px 10px; margin: 6px 0; }
.banner { background: #fde8e8; border-left: 6px solid #c0392b; padding: 10px 14px; margin: 10px 0; font-size: 1.1em; }
.wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; background: #fff; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; white-space: nowrap; }
th { white-space: normal; vertical-align: bottom; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f2f5; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th.asc::after { content: " \25B2"; font-size: 9px; }
table.sortable th.desc::after { content: " \25BC"; font-size: 9px; }
td.reason { white-space: normal; max-width: 420px; color: #555; }
tr.correct td.outcome { color: #137333; font-weight: 600; }
tr.failed td.outcome { color: #b3261e; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
.plots svg { border: 1px solid #ddd; }
.help { color: #666; font-size: 12px; }
input.filter { margin: 6px 0; padding: 4px 8px; width: 320px; }
)css";

// Sorts a table by the clicked column (numbers by data-v, else text) and filters rows by text.
constexpr const char* kJs = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var asc = !th.classList.contains('asc');
      table.querySelectorAll('th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        var xv = x.getAttribute('data-v'), yv = y.getAttribute('data-v');
        var r;
        if (xv !== null && yv !== null) r = parseFloat(xv) - parseFloat(yv);
        else if (xv !== null) r = -1;
        else if (yv !== null) r = 1;
        else r = x.textContent.localeCompare(y.textContent);
        return asc ? r : -r;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.querySelectorAll('input.filter').forEach(function (input) {
  var table = document.getElementById(input.getAttribute('data-table'));
  input.addEventListener('input', function () {
    var q = input.value.toLowerCase();
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      row.style.display = row.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
    });
  });
});
)js";

std::string esc(const std::string& s) { return xml_escape(s); }

constexpr const char* kInternalErrorsHelp =
    "kbv's own failures, not the candidates' results: left out of every figure above; the next kbv run evaluates them again.";
constexpr const char* kUnreadableHelp =
    "Rows of the DB whose verdict_json could not be read (invalid JSON, an unknown outcome): left out of every figure above.";

std::string td(const std::string& text, std::optional<double> number, const std::string& extra_class = "") {
  std::string cls = number ? "num" : "";
  if (!extra_class.empty()) cls += (cls.empty() ? "" : " ") + extra_class;
  std::string attrs = cls.empty() ? "" : " class=\"" + cls + "\"";
  if (number && std::isfinite(*number)) attrs += fmt::format(" data-v=\"{}\"", *number);
  return "<td" + attrs + ">" + esc(text) + "</td>";
}

template <typename Cols>
std::string thead(const Cols& cols) {
  std::string out = "<thead><tr>";
  for (const auto& c : cols) out += "<th title=\"" + esc(c.help) + "\">" + esc(c.header) + "</th>";
  return out + "</tr></thead>\n";
}

std::string aggregate_table(const std::vector<Aggregate>& rows, const std::string& id) {
  const auto& cols = aggregate_columns();
  std::string out = "<div class=\"wrap\"><table class=\"sortable\" id=\"" + id + "\">" + thead(cols) + "<tbody>\n";
  for (const auto& a : rows) {
    out += "<tr>";
    for (const auto& c : cols) out += td(c.text(a), c.number ? c.number(a) : std::nullopt);
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::map<std::string, std::string> run_colors(const Report& r) {
  std::map<std::string, std::string> colors;
  for (std::size_t i = 0; i < r.runs.size(); ++i) colors[r.runs[i]] = plot_color(i);
  return colors;
}

std::string point_tip(const ProblemScore& p) {
  return fmt::format("{} L{} #{} {}: speedup {}, memory {}", p.run, p.level, p.problem_id, p.problem_name,
                     format_speedup(p.speedup), format_speedup(p.memory_ratio));
}

std::string plots(const Report& r) {
  auto colors = run_colors(r);
  std::string out = "<div class=\"plots\">\n";

  // Decomposition bars: Correct Speedup and fast_1 of each run under each scoring.
  std::vector<std::string> categories;
  for (const auto& s : r.scorings) categories.push_back(s.name);
  std::vector<PlotSeries> speed, fast1;
  double max_speed = 1.0;
  for (const auto& row : r.decomposition) {
    PlotSeries a{row.run, colors[row.run], {}}, b{row.run, colors[row.run], {}};
    for (const auto& c : row.cells) {
      double sp = c.scores && c.scores->correct_speedup ? *c.scores->correct_speedup : NAN;
      double f1 = c.scores && c.scores->fast(1.0) ? *c.scores->fast(1.0) * 100 : NAN;
      if (std::isfinite(sp)) max_speed = std::max(max_speed, sp);
      a.points.push_back({0, sp, fmt::format("{} / {}: Correct Speedup {}", row.run, c.scoring, format_speedup(c.scores ? c.scores->correct_speedup : std::nullopt))});
      b.points.push_back({0, f1, fmt::format("{} / {}: fast_1 {}", row.run, c.scoring, format_rate(c.scores ? c.scores->fast(1.0) : std::nullopt))});
    }
    speed.push_back(std::move(a));
    fast1.push_back(std::move(b));
  }
  PlotSize wide{std::max(440, 120 * static_cast<int>(categories.size()) + 80), 320};
  out += svg_grouped_bars("Decomposition: Correct Speedup by scoring", categories,
                          PlotAxis{"geomean speedup (x)", 0, std::ceil(max_speed * 1.15 * 2) / 2, false}, speed, 1.0, "x", wide);
  out += svg_grouped_bars("Decomposition: fast_1 by scoring", categories, PlotAxis{"fast_1 (% of problems)", 0, 100, false}, fast1,
                          std::nullopt, "%", wide);

  // Speedup CDF per run, and memory vs speedup per run, on shared axes.
  std::vector<double> speedups, ratios;
  std::map<std::string, PlotSeries> cdf, scatter;
  for (const auto& run : r.runs) {
    cdf[run] = PlotSeries{run, colors[run], {}};
    scatter[run] = PlotSeries{run, colors[run], {}};
  }
  for (const auto& p : r.problems) {
    if (!p.correct || !p.speedup) continue;
    speedups.push_back(*p.speedup);
    cdf[p.run].points.push_back({*p.speedup, 0, point_tip(p)});
    if (p.memory_ratio) {
      ratios.push_back(*p.memory_ratio);
      scatter[p.run].points.push_back({*p.speedup, *p.memory_ratio, point_tip(p)});
    }
  }
  auto [xlo, xhi] = log_range(speedups, 1.0);
  auto [ylo, yhi] = log_range(ratios, 1.0);
  std::vector<PlotSeries> cdf_series;
  for (const auto& run : r.runs) cdf_series.push_back(cdf[run]);
  out += svg_cdf("Speedup CDF (best correct sample per problem)", PlotAxis{"speedup vs " + r.baseline + " (x, log)", xlo, xhi, true},
                 cdf_series, 1.0);
  for (const auto& run : r.runs)
    out += svg_scatter("Memory vs speed: " + run, PlotAxis{"speedup (x, log)", xlo, xhi, true},
                       PlotAxis{"baseline / kernel peak memory (x, log)", ylo, yhi, true}, {scatter[run]}, 1.0, 1.0,
                       "faster and leaner", "slower and hungrier");
  return out + "</div>\n";
}

}  // namespace

std::string render_html(const Report& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kbv report</title>\n<style>";
  out += kCss;
  out += "</style></head><body>\n<h1>kbv report</h1>\n";
  out += "<p class=\"meta\">Source <code>" + esc(r.source) + "</code>, generated " + esc(r.generated_at) + ".</p>\n";
  if (r.protocol.empty()) return out + "<p>The results DB holds no verdicts.</p></body></html>\n";
  std::string protocols, devices;
  for (const auto& p : r.protocols) protocols += (protocols.empty() ? "" : ", ") + p;
  for (const auto& d : r.devices) devices += (devices.empty() ? "" : ", ") + d;
  if (!r.nothing_judged.empty()) {
    out += fmt::format("<p class=\"meta\">Protocols present: {}; device(s): {}.</p>\n", esc(protocols), esc(devices));
    out += "<p class=\"banner\"><b>" + esc(r.nothing_judged) + "</b></p>\n";
    for (const auto& n : r.notes) out += "<p class=\"note\">" + esc(n) + "</p>\n";
    return out + "</body></html>\n";
  }
  out += fmt::format("<p class=\"meta\">Headline protocol <b>{}</b> v{} (speedups vs <code>{}</code>); protocols present: {}; "
                     "device(s): {}. Each problem counts once per run, by its best sample (best-of-k).</p>\n",
                     esc(r.protocol), r.protocol_version, esc(r.baseline), esc(protocols), esc(devices));
  for (const auto& n : r.notes) out += "<p class=\"note\">" + esc(n) + "</p>\n";

  out += "<h2>Summary</h2>\n" + aggregate_table(r.overall, "summary");
  out += "<p class=\"help\">Hover a column header for its definition. Correct Speedup and Mem Efficiency are geometric means "
         "over correct problems; fast_p counts problems with a correct sample strictly faster than p.</p>\n";
  out += "<h2>Plots</h2>\n" + plots(r);

  out += "<h2>Decomposition</h2>\n<p class=\"help\">The same problems of each run scored under each protocol choice:</p><ul class=\"help\">";
  for (const auto& s : r.scorings) out += "<li><b>" + esc(s.name) + "</b>: " + esc(s.description) + "</li>";
  out += "</ul>\n";
  {
    const auto& cols = decomposition_columns();
    out += "<div class=\"wrap\"><table class=\"sortable\" id=\"decomposition\">" + thead(cols) + "<tbody>\n";
    for (const auto& row : r.decomposition)
      for (const auto& cell : row.cells) {
        out += "<tr>";
        for (const auto& c : cols) out += td(c.text(row, cell), c.number ? c.number(row, cell) : std::nullopt);
        out += "</tr>\n";
      }
    out += "</tbody></table></div>\n";
  }

  out += "<h2>Per level</h2>\n" + aggregate_table(r.per_level, "per-level");

  out += "<h2>Integrity flags</h2>\n";
  std::set<std::string> flags;
  for (const auto& a : r.overall)
    for (const auto& [f, n] : a.flag_counts) flags.insert(f);
  if (flags.empty()) {
    out += "<p>No sample carries an integrity flag (flags come from the strict protocol's checks).</p>\n";
  } else {
    out += "<div class=\"wrap\"><table class=\"sortable\" id=\"flags\"><thead><tr><th>run</th>";
    for (const auto& f : flags) out += "<th>" + esc(f) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& a : r.overall) {
      out += "<tr><td>" + esc(a.run) + "</td>";
      for (const auto& f : flags) {
        auto it = a.flag_counts.find(f);
        int n = it == a.flag_counts.end() ? 0 : it->second;
        out += td(std::to_string(n), n);
      }
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
  }

  out += "<h2>Excluded problems</h2>\n";
  if (r.excluded.empty()) {
    out += "<p>None.</p>\n";
  } else {
    out += "<div class=\"wrap\"><table class=\"sortable\" id=\"excluded\"><thead><tr><th>level</th><th>id</th><th>problem</th><th>kind</th><th>reason</th></tr></thead><tbody>\n";
    for (const auto& e : r.excluded)
      out += "<tr>" + td(std::to_string(e.level), e.level) + td(std::to_string(e.problem_id), e.problem_id) +
             td(e.problem_name, std::nullopt) + td(e.kind, std::nullopt) + td(e.reason, std::nullopt, "reason") + "</tr>\n";
    out += "</tbody></table></div>\n";
  }

  auto listed = [&](const std::string& title, const std::string& id, const std::string& help, const ListedRows& rows) {
    if (rows.rows.empty()) return;
    out += "<h2>" + esc(title) + "</h2>\n<p class=\"help\">" + esc(help) + "</p>\n<div class=\"wrap\"><table class=\"sortable\" id=\"" +
           id + "\"><thead><tr>";
    for (const auto& h : rows.headers) out += "<th>" + esc(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& row : rows.rows) {
      out += "<tr>";
      for (const auto& cell : row) out += td(cell, std::nullopt);
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
  };
  listed("Internal errors", "internal-errors", kInternalErrorsHelp, internal_error_rows(r));
  listed("Unreadable rows", "unreadable", kUnreadableHelp, unreadable_rows(r));

  out += "<h2>Per problem</h2>\n<p class=\"help\">The best sample of each problem per run under " + esc(r.protocol) +
         ". Click a header to sort.</p>\n<input class=\"filter\" data-table=\"problems\" placeholder=\"filter rows\">\n";
  {
    const auto& cols = problem_columns();
    out += "<div class=\"wrap\"><table class=\"sortable\" id=\"problems\">" + thead(cols) + "<tbody>\n";
    for (const auto& p : r.problems) {
      out += std::string("<tr class=\"") + (p.correct ? "correct" : "failed") + "\">";
      for (const auto& c : cols) {
        std::string cls = c.header == "outcome" ? "outcome" : (c.header == "reason" ? "reason" : "");
        out += td(c.text(r, p), c.number ? c.number(r, p) : std::nullopt, cls);
      }
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
  }
  out += "<h2>Evaluation cost</h2>\n<p class=\"help\">Worker time per run over every stored verdict, and where it went.</p>\n";
  {
    const auto& cols = cost_columns();
    out += "<div class=\"wrap\"><table class=\"sortable\" id=\"costs\">" + thead(cols) + "<tbody>\n";
    for (const auto& c : r.costs) {
      out += "<tr>";
      for (const auto& col : cols) out += td(col.text(c), col.number ? col.number(c) : std::nullopt);
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
  }
  out += "<script>";
  out += kJs;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace kbv
