#pragma once
// Small inline-SVG charts for the HTML report, drawn by hand so the page needs nothing from the
// network: a scatter, a step CDF and grouped bars, with log or linear axes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbv {

struct PlotAxis {
  std::string label;
  double min = 0;
  double max = 1;
  bool log = false;  // log10 scale; min and max must be > 0
};

struct PlotPoint {
  double x = 0;
  double y = 0;
  std::string tip;  // shown on hover (<title>)
};

struct PlotSeries {
  std::string name;
  std::string color;
  std::vector<PlotPoint> points;
};

struct PlotSize {
  int width = 440;
  int height = 320;
};

// The i-th colour of a palette that stays distinguishable for colour-blind readers (Okabe-Ito).
const std::string& plot_color(std::size_t i);
std::string xml_escape(const std::string& s);

// Points of every series; dashed lines at x = ref_x and y = ref_y when given; corner captions.
std::string svg_scatter(const std::string& title, const PlotAxis& x, const PlotAxis& y,
                        const std::vector<PlotSeries>& series, std::optional<double> ref_x,
                        std::optional<double> ref_y, const std::string& top_right_caption,
                        const std::string& bottom_left_caption, PlotSize size = {});

// Empirical CDF per series: each series' points' x values (y ignored); y axis 0..1.
std::string svg_cdf(const std::string& title, const PlotAxis& x, const std::vector<PlotSeries>& series,
                    std::optional<double> ref_x, PlotSize size = {});

// Grouped bars: one group per category, one bar per series (series.points[i].y is the value of
// category i; NaN for none). A dashed line at ref_y when given.
std::string svg_grouped_bars(const std::string& title, const std::vector<std::string>& categories,
                             const PlotAxis& y, const std::vector<PlotSeries>& series, std::optional<double> ref_y,
                             const std::string& value_suffix, PlotSize size = {});

// A range [min, max] covering `values` and `always` (e.g. 1.0), padded, for a log axis.
std::pair<double, double> log_range(const std::vector<double>& values, double always, double floor = 1e-3,
                                    double ceil = 1e4);

}  // namespace kbv
