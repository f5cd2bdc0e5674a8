//===- Svg.h - Inline-SVG building blocks of the HTML reports --*- C++ -*-===//
//
// The pieces the plan report (HtmlReport.cpp) and the explore report
// (ExploreReport.cpp) draw with: number formatting, escaping, round axis
// ticks, rectangles, text, lines, legend items, and the page head with the
// reports' one style sheet. Inline SVG and CSS only (no script, no
// external resource).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_REPORT_SVG_H
#define TRIDENT_REPORT_SVG_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace trident::report::svg {

inline std::string fmt(const char *f, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

inline std::string px(double v) { return fmt("%.1f", v); }

inline std::string esc(std::string_view s) {
  std::string r;
  for (char c : s) {
    switch (c) {
    case '&':
      r += "&amp;";
      break;
    case '<':
      r += "&lt;";
      break;
    case '>':
      r += "&gt;";
      break;
    case '"':
      r += "&quot;";
      break;
    default:
      r += c;
    }
  }
  return r;
}

/// Round tick positions covering [lo, hi]: steps of 1, 2 or 5 x 10^k.
inline std::vector<double> ticks(double lo, double hi, int target,
                                 double &step) {
  double range = hi - lo;
  if (!(range > 0))
    range = std::abs(hi) > 0 ? std::abs(hi) : 1;
  double raw = range / std::max(1, target);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9;
       v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

inline std::string tickLabel(double v, double step) {
  int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
  return fmt(("%." + std::to_string(std::min(decimals, 6)) + "f").c_str(), v);
}

inline std::string rect(double x, double y, double w, double h,
                        const std::string &fill, const std::string &title,
                        const std::string &extra = "") {
  std::string r = "<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" +
                  px(std::max(w, 0.0)) + "\" height=\"" + px(h) + "\" fill=\"" +
                  fill + "\"" + extra;
  if (title.empty())
    return r + "/>\n";
  return r + "><title>" + esc(title) + "</title></rect>\n";
}

inline std::string text(double x, double y, const std::string &s,
                        const std::string &attrs = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" +
         (attrs.empty() ? "" : " " + attrs) + ">" + esc(s) + "</text>\n";
}

inline std::string line(double x1, double y1, double x2, double y2,
                        const std::string &stroke,
                        const std::string &extra = "") {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) +
         "\" y2=\"" + px(y2) + "\" stroke=\"" + stroke + "\"" + extra + "/>\n";
}

inline std::string legendItem(double x, double y, const std::string &fill,
                              const std::string &label) {
  return rect(x, y - 9, 12, 12, fill, "",
              " stroke=\"#666\" stroke-width=\"0.5\"") +
         text(x + 17, y + 1, label, "class=\"lg\"");
}

/// A chart's plot area and value ranges; X and Y map values to pixels.
struct Frame {
  double left = 0, top = 0, plotW = 0, plotH = 0;
  double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  double X(double v) const { return left + (v - xlo) / (xhi - xlo) * plotW; }
  double Y(double v) const {
    return top + plotH - (v - ylo) / (yhi - ylo) * plotH;
  }
};

/// Grid lines with round tick labels (about `xTicks` and `yTicks` of
/// them), the two axes and their labels.
inline std::string axes(const Frame &f, int xTicks, int yTicks,
                        const std::string &xLabel, const std::string &yLabel) {
  std::string s;
  double step;
  for (double t : ticks(f.xlo, f.xhi, xTicks, step)) {
    if (t < f.xlo || t > f.xhi)
      continue;
    s += line(f.X(t), f.top, f.X(t), f.top + f.plotH, "#eeeeee");
    s += text(f.X(t), f.top + f.plotH + 16, tickLabel(t, step),
              "text-anchor=\"middle\" class=\"tick\"");
  }
  for (double t : ticks(f.ylo, f.yhi, yTicks, step)) {
    if (t < f.ylo || t > f.yhi)
      continue;
    s += line(f.left, f.Y(t), f.left + f.plotW, f.Y(t), "#eeeeee");
    s += text(f.left - 6, f.Y(t) + 4, tickLabel(t, step),
              "text-anchor=\"end\" class=\"tick\"");
  }
  s += line(f.left, f.top, f.left, f.top + f.plotH, "#333");
  s += line(f.left, f.top + f.plotH, f.left + f.plotW, f.top + f.plotH, "#333");
  s += text(f.left + f.plotW / 2, f.top + f.plotH + 40, xLabel,
            "text-anchor=\"middle\" class=\"axis\"");
  s += text(16, f.top + f.plotH / 2, yLabel,
            "class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 "
            "16 " +
                px(f.top + f.plotH / 2) + ")\"");
  return s;
}

/// The page up to <body>: the title and the reports' style sheet.
inline std::string pageHead(const std::string &title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<title>" +
         esc(title) +
         "</title>\n<style>\n"
         "body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;"
         "font-size:13px;color:#222;margin:18px 24px;background:#fff}\n"
         "h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 "
         "6px}\n"
         "p{margin:4px 0}code{background:#f3f3f3;padding:1px 4px}\n"
         "table{border-collapse:collapse;margin-top:6px}\n"
         "th,td{border:1px solid #ccc;padding:2px 5px;text-align:right;"
         "font-size:12px;"
         "white-space:nowrap}\n"
         "th{background:#eef2f7}tr.best td{background:#fff6d6;font-weight:"
         "bold}\n"
         ".row{font-size:12px}.rowsm{font-size:9px;fill:#555}.grp{font-size:"
         "12px;"
         "font-weight:bold}\n.ev{font-size:9px;fill:#fff}.tick{font-size:"
         "11px}"
         ".axis{font-size:13px}.lg{font-size:12px}.lbl{font-size:12px;"
         "font-weight:bold}\n"
         ".charts{display:flex;gap:20px;flex-wrap:wrap}"
         ".caption{color:#555;max-width:640px}\n"
         ".tl{overflow-x:auto;max-width:100%}.tlk{display:none}"
         "#tlzk:checked~.tlk{display:block}#tlzk:checked~.tl1{display:none}\n"
         "td.runs{white-space:normal;text-align:left;min-width:140px}"
         "details{margin:3px 0}summary{cursor:pointer}"
         "pre{background:#f6f6f6;padding:6px;font-size:11px;overflow-x:auto;"
         "max-width:1300px}\n"
         "</style>\n</head>\n<body>\n";
}

} // namespace trident::report::svg

#endif // TRIDENT_REPORT_SVG_H
