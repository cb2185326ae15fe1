#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kbv {
namespace {

constexpr int kLeft = 58, kRight = 16, kTop = 34, kBottom = 48;

struct Frame {
  PlotAxis x, y;
  PlotSize size;
  int top = kTop;  // more when a legend row sits above the plot
  double plot_w() const { return size.width - kLeft - kRight; }
  double plot_h() const { return size.height - top - kBottom; }
  static double t(const PlotAxis& a, double v) { return a.log ? std::log10(std::max(v, 1e-300)) : v; }
  double sx(double v) const {
    double lo = t(x, x.min), hi = t(x, x.max);
    double f = hi > lo ? (t(x, v) - lo) / (hi - lo) : 0.5;
    return kLeft + std::clamp(f, 0.0, 1.0) * plot_w();
  }
  double sy(double v) const {
    double lo = t(y, y.min), hi = t(y, y.max);
    double f = hi > lo ? (t(y, v) - lo) / (hi - lo) : 0.5;
    return top + plot_h() - std::clamp(f, 0.0, 1.0) * plot_h();
  }
};

std::vector<double> ticks(const PlotAxis& a) {
  std::vector<double> out;
  if (a.log) {
    int d0 = static_cast<int>(std::floor(std::log10(a.min))), d1 = static_cast<int>(std::ceil(std::log10(a.max)));
    bool dense = d1 - d0 <= 3;
    for (int d = d0; d <= d1; ++d)
      for (double m : {1.0, 2.0, 5.0}) {
        if (!dense && m != 1.0) continue;
        double v = m * std::pow(10.0, d);
        if (v >= a.min * (1 - 1e-9) && v <= a.max * (1 + 1e-9)) out.push_back(v);
      }
    return out;
  }
  double raw = (a.max - a.min) / 5;
  if (raw <= 0) return {a.min};
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-9; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string tick_label(double v) {
  if (v != 0 && (std::abs(v) < 0.01 || std::abs(v) >= 1e4)) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

std::string open_svg(const std::string& title, const PlotSize& size, const std::string& css_class) {
  return fmt::format(
      "<svg class=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"13\" font-weight=\"600\" fill=\"#222\">{}</text>\n",
      css_class, size.width, size.height, size.width, size.height, xml_escape(title), kLeft, xml_escape(title));
}

// Grid, ticks and labels of both axes.
std::string axes(const Frame& f, bool x_ticks = true) {
  std::string out;
  double x0 = kLeft, x1 = kLeft + f.plot_w(), y0 = f.top, y1 = f.top + f.plot_h();
  if (x_ticks)
    for (double v : ticks(f.x)) {
      double px = f.sx(v);
      out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e6e6e6\"/>\n", px, y0, y1);
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n", px, y1 + 14,
                         tick_label(v));
    }
  for (double v : ticks(f.y)) {
    double py = f.sy(v);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e6e6e6\"/>\n", x0, py, x1);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#555\">{}</text>\n", x0 - 5, py + 4,
                       tick_label(v));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0,
                     f.plot_w(), f.plot_h());
  if (!f.x.label.empty())
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", x0 + f.plot_w() / 2,
                       y1 + 34, xml_escape(f.x.label));
  if (!f.y.label.empty())
    out += fmt::format("<text transform=\"translate(14 {:.1f}) rotate(-90)\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n",
                       y0 + f.plot_h() / 2, xml_escape(f.y.label));
  return out;
}

// A legend row between the title and the plot (for charts whose data may fill any corner).
std::string legend_row(const Frame& f, const std::vector<PlotSeries>& series) {
  std::string out;
  double x = kLeft;
  for (const auto& s : series) {
    std::string name = s.name.substr(0, 40);
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n", x, f.top - 19, s.color);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#222\">{}</text>\n", x + 14, f.top - 10, xml_escape(name));
    x += 30 + 6.2 * static_cast<double>(name.size());
  }
  return out;
}

std::string legend(const Frame& f, const std::vector<PlotSeries>& series, bool left) {
  if (series.size() < 2) return {};
  std::string out;
  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.name.size());
  double w = 22 + 6.2 * static_cast<double>(std::min<std::size_t>(longest, 40));
  double x = left ? kLeft + 8 : kLeft + f.plot_w() - w - 8, y = f.top + 8;
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
                     x, y, w, 16 * series.size() + 6);
  for (std::size_t i = 0; i < series.size(); ++i) {
    double yy = y + 14 + 16.0 * static_cast<double>(i);
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n", x + 6, yy - 9, series[i].color);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#222\">{}</text>\n", x + 20, yy, xml_escape(series[i].name.substr(0, 40)));
  }
  return out;
}

std::string empty_note(const Frame& f, const std::string& text) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#888\">{}</text>\n", kLeft + f.plot_w() / 2,
                     f.top + f.plot_h() / 2, xml_escape(text));
}

}  // namespace

const std::string& plot_color(std::size_t i) {
  static const std::vector<std::string> k{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                          "#56B4E9", "#F0E442", "#000000"};
  return k[i % k.size()];
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::pair<double, double> log_range(const std::vector<double>& values, double always, double floor, double ceil) {
  double lo = always, hi = always;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  lo = std::max(floor, lo / 1.5);
  hi = std::min(ceil, hi * 1.5);
  // Snap to 1-2-5 steps so the axis ends on a tick.
  auto snap_down = [](double v) {
    double d = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {5.0, 2.0, 1.0})
      if (m * d <= v) return m * d;
    return d;
  };
  auto snap_up = [](double v) {
    double d = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (m * d >= v) return m * d;
    return 10 * d;
  };
  return {snap_down(lo), snap_up(hi)};
}

std::string svg_scatter(const std::string& title, const PlotAxis& x, const PlotAxis& y, const std::vector<PlotSeries>& series,
                        std::optional<double> ref_x, std::optional<double> ref_y, const std::string& top_right_caption,
                        const std::string& bottom_left_caption, PlotSize size) {
  Frame f{x, y, size};
  std::string out = open_svg(title, size, "kbv-plot kbv-scatter") + axes(f);
  if (ref_x)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                       f.sx(*ref_x), f.top, f.top + f.plot_h());
  if (ref_y)
    out += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                       f.sy(*ref_y), kLeft, kLeft + f.plot_w());
  if (!top_right_caption.empty())
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" fill=\"#2a7\" font-size=\"10\">{}</text>\n",
                       kLeft + f.plot_w() - 6, f.top + 14, xml_escape(top_right_caption));
  if (!bottom_left_caption.empty())
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#c44\" font-size=\"10\">{}</text>\n", kLeft + 6,
                       f.top + f.plot_h() - 6, xml_escape(bottom_left_caption));
  std::size_t n = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) {
      ++n;
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"0.75\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{}</title></circle>\n",
                         f.sx(p.x), f.sy(p.y), s.color, xml_escape(p.tip));
    }
  if (n == 0) out += empty_note(f, "no correct problem with both measurements");
  out += legend(f, series, false);
  return out + "</svg>\n";
}

std::string svg_cdf(const std::string& title, const PlotAxis& x, const std::vector<PlotSeries>& series,
                    std::optional<double> ref_x, PlotSize size) {
  Frame f{x, PlotAxis{"share of correct problems with speedup <= x", 0, 1, false}, size};
  std::string out = open_svg(title, size, "kbv-plot kbv-cdf") + axes(f);
  if (ref_x)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                       f.sx(*ref_x), f.top, f.top + f.plot_h());
  std::size_t drawn = 0;
  for (const auto& s : series) {
    std::vector<double> xs;
    for (const auto& p : s.points) xs.push_back(p.x);
    if (xs.empty()) continue;
    ++drawn;
    std::sort(xs.begin(), xs.end());
    std::string d = fmt::format("M{:.1f},{:.1f}", f.sx(x.min), f.sy(0));
    for (std::size_t i = 0; i < xs.size(); ++i) {
      double px = f.sx(xs[i]);
      d += fmt::format(" H{:.1f} V{:.1f}", px, f.sy(static_cast<double>(i + 1) / static_cast<double>(xs.size())));
    }
    d += fmt::format(" H{:.1f}", f.sx(x.max));
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{} ({} problems)</title></path>\n", d,
                       s.color, xml_escape(s.name), xs.size());
  }
  if (drawn == 0) out += empty_note(f, "no correct problem with a speedup");
  out += legend(f, series, true);
  return out + "</svg>\n";
}

std::string svg_grouped_bars(const std::string& title, const std::vector<std::string>& categories, const PlotAxis& y,
                             const std::vector<PlotSeries>& series, std::optional<double> ref_y,
                             const std::string& value_suffix, PlotSize size) {
  Frame f{PlotAxis{"", 0, 1, false}, y, size};
  if (series.size() > 1) f.top = kTop + 22;
  std::string out = open_svg(title, size, "kbv-plot kbv-bars") + axes(f, false);
  if (series.size() > 1) out += legend_row(f, series);
  double band = categories.empty() ? f.plot_w() : f.plot_w() / static_cast<double>(categories.size());
  double bar = series.empty() ? 0 : band * 0.8 / static_cast<double>(series.size());
  for (std::size_t c = 0; c < categories.size(); ++c) {
    double bx = kLeft + band * static_cast<double>(c) + band * 0.1;
    for (std::size_t s = 0; s < series.size(); ++s) {
      double x = bx + bar * static_cast<double>(s);
      double v = c < series[s].points.size() ? series[s].points[c].y : NAN;
      if (!std::isfinite(v)) {
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#aaa\" font-size=\"9\">n/a</text>\n",
                           x + bar / 2, f.top + f.plot_h() - 4);
        continue;
      }
      double top = f.sy(std::min(v, y.max)), base = f.sy(y.min);
      std::string tip = c < series[s].points.size() ? series[s].points[c].tip : "";
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>\n",
                         x + 1, top, std::max(bar - 2, 1.0), std::max(base - top, 0.5), series[s].color, xml_escape(tip));
      if (bar >= 22)
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\" font-size=\"9\">{}</text>\n",
                           x + bar / 2, top - 3,
                           value_suffix == "%" ? fmt::format("{:.0f}%", v) : fmt::format("{:.2f}{}", v, value_suffix));
    }
    // Category label, split before '+' so long scorings fit their band.
    std::string label = categories[c];
    auto plus = label.find('+');
    double cx = kLeft + band * (static_cast<double>(c) + 0.5), ly = f.top + f.plot_h() + 14;
    if (plus == std::string::npos) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", cx, ly, xml_escape(label));
    } else {
      out += fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" fill=\"#333\"><tspan x=\"{0:.1f}\">{2}</tspan>"
                         "<tspan x=\"{0:.1f}\" dy=\"13\">{3}</tspan></text>\n",
                         cx, ly, xml_escape(label.substr(0, plus)), xml_escape(label.substr(plus)));
    }
  }
  if (ref_y)
    out += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"#c44\" stroke-dasharray=\"4 3\"/>\n",
                       f.sy(*ref_y), kLeft, kLeft + f.plot_w());
  return out + "</svg>\n";
}

}  // namespace kbv
