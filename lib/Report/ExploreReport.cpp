//===- ExploreReport.cpp - `trident explore --report` ---------------------===//

#include "trident/Report/ExploreReport.h"

#include "trident/Report/Svg.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace trident::report {

namespace {

using namespace svg;
using explore::ExploreRow;

// One colour per GPU type, in the order the sweep names them (Tableau 10).
const char *kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                          "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};

double days(const ExploreRow &r) { return r.timeToTrainSeconds / 86400; }

std::string rowLabel(const ExploreRow &r) {
  std::string s = r.preset + " x " + std::to_string(r.nodes) + " (" +
                  std::to_string(r.gpus) + " GPUs), batch " +
                  std::to_string(r.globalBatch);
  if (!r.varyKey.empty())
    s += ", " + r.varyKey + "=" + r.varyValue.text;
  return s;
}

struct Point {
  double x = 0, y = 0;
  std::string title;
};
struct Series {
  std::string name, colour;
  std::vector<Point> points;
  bool connect = false;
};

/// An x-y chart from zero: one marker per point, series joined by lines
/// where asked, and an optional frontier drawn over them.
std::string xyChart(const std::vector<Series> &series,
                    const std::vector<Point> &frontier,
                    const std::string &xLabel, const std::string &yLabel,
                    const std::string &aria) {
  const double W = 620, H = 400, left = 70, right = 20, top = 44, bottom = 56;
  const double plotW = W - left - right, plotH = H - top - bottom;
  double xmax = 0, ymax = 0;
  for (const Series &s : series)
    for (const Point &p : s.points) {
      xmax = std::max(xmax, p.x);
      ymax = std::max(ymax, p.y);
    }
  xmax = xmax > 0 ? xmax * 1.08 : 1;
  ymax = ymax > 0 ? ymax * 1.08 : 1;
  const Frame f{left, top, plotW, plotH, 0, xmax, 0, ymax};
  auto X = [&](double v) { return f.X(v); };
  auto Y = [&](double v) { return f.Y(v); };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(W) +
                  "\" height=\"" + px(H) + "\" viewBox=\"0 0 " + px(W) + " " +
                  px(H) + "\" role=\"img\" aria-label=\"" + esc(aria) + "\">\n";
  double lx = left;
  for (const Series &ser : series) {
    s += legendItem(lx, 16, ser.colour, ser.name);
    lx += 30 + 7.0 * double(ser.name.size());
  }
  if (!frontier.empty()) {
    s += line(lx, 12, lx + 20, 12, "#c00", " stroke-width=\"2\"") +
         text(lx + 25, 16, "Pareto frontier", "class=\"lg\"");
  }
  s += axes(f, 7, 6, xLabel, yLabel);
  for (const Series &ser : series) {
    if (ser.connect && ser.points.size() > 1) {
      std::string pts;
      for (const Point &p : ser.points)
        pts += px(X(p.x)) + "," + px(Y(p.y)) + " ";
      s += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" +
           ser.colour + "\" stroke-width=\"2\"/>\n";
    }
    for (const Point &p : ser.points)
      s += "<circle cx=\"" + px(X(p.x)) + "\" cy=\"" + px(Y(p.y)) +
           "\" r=\"5\" fill=\"" + ser.colour +
           "\" fill-opacity=\"0.8\"><title>" + esc(p.title) +
           "</title></circle>\n";
  }
  if (frontier.size() > 1) {
    std::string pts;
    for (const Point &p : frontier)
      pts += px(X(p.x)) + "," + px(Y(p.y)) + " ";
    s += "<polyline points=\"" + pts +
         "\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\"/>\n";
  }
  return s + "</svg>\n";
}

/// Horizontal bars of time to train, one per what-if value (and the
/// preset as it is), grouped by key.
std::string barLabel(const ExploreRow &r) {
  return (r.varyKey.empty() ? std::string("as is")
                            : r.varyKey + "=" + r.varyValue.text) +
         " (" + r.preset + " x " + std::to_string(r.nodes) + ")";
}

std::string whatIfBars(const std::vector<const ExploreRow *> &rows) {
  // Room on the left for the longest label (about 7 px a character).
  size_t longest = 0;
  for (const ExploreRow *r : rows)
    longest = std::max(longest, barLabel(*r).size());
  const double left = 20 + 7.2 * double(longest), right = 60, rowH = 22,
               top = 12, W = left + 380 + right;
  double xmax = 0;
  for (const ExploreRow *r : rows)
    xmax = std::max(xmax, days(*r));
  xmax = xmax > 0 ? xmax * 1.1 : 1;
  double H = top + rowH * double(rows.size()) + 30;
  double plotW = W - left - right;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(W) +
                  "\" height=\"" + px(H) + "\" viewBox=\"0 0 " + px(W) + " " +
                  px(H) + "\" role=\"img\" aria-label=\"what-if bars\">\n";
  double y = top;
  for (const ExploreRow *r : rows) {
    s += text(left - 8, y + 15, barLabel(*r),
              "class=\"row\" text-anchor=\"end\"");
    double w = days(*r) / xmax * plotW;
    s += rect(left, y + 3, w, rowH - 6,
              r->varyKey.empty() ? "#bab0ac" : "#4e79a7",
              rowLabel(*r) + ": " + fmt("%.1f days", days(*r)));
    s += text(left + w + 5, y + 15, fmt("%.1f d", days(*r)), "class=\"row\"");
    y += rowH;
  }
  s += text(left + plotW / 2, H - 8, "time to train (days)",
            "class=\"axis\" text-anchor=\"middle\"");
  return s + "</svg>\n";
}

std::string money(double usd) {
  return usd >= 1e6   ? fmt("$%.2fM", usd / 1e6)
         : usd >= 1e3 ? fmt("$%.1fk", usd / 1e3)
                      : fmt("$%.0f", usd);
}

std::string rowsTable(const explore::ExploreResult &r) {
  std::string h = "<table>\n<tr><th>cluster</th><th>nodes</th><th>GPUs</th>"
                  "<th>batch</th><th>what-if</th><th>plan</th>"
                  "<th>step (s)</th><th>tokens/s</th><th>MFU</th>"
                  "<th>bound</th><th>days</th><th>GPU-hours</th>"
                  "<th>cost</th><th>frontier</th></tr>\n";
  for (const ExploreRow &row : r.rows) {
    h +=
        "<tr><td>" + esc(row.preset) + "</td><td>" + std::to_string(row.nodes) +
        "</td><td>" + std::to_string(row.gpus) + "</td><td>" +
        std::to_string(row.globalBatch) + "</td><td>" +
        esc(row.varyKey.empty() ? "" : row.varyKey + "=" + row.varyValue.text) +
        "</td>";
    if (!row.fits) {
      h += "<td style=\"text-align:left\" colspan=\"9\">nothing fits: " +
           esc(row.why) + "</td></tr>\n";
      continue;
    }
    h += "<td style=\"text-align:left\">" +
         esc(explore::planSummary(row.plan)) + "</td><td>" +
         fmt("%.3f", row.iterationSeconds) + "</td><td>" +
         fmt("%.0f", row.tokensPerSecond) + "</td><td>" +
         fmt("%.1f%%", row.mfu * 100) + "</td><td>" +
         esc(std::string(explore::boundName(row.bound))) + "</td><td>" +
         fmt("%.1f", days(row)) + "</td><td>" + fmt("%.0f", row.gpuHours) +
         "</td><td>" + (row.costUsd > 0 ? money(row.costUsd) : "-") +
         "</td><td>" + (row.pareto ? "yes" : "") + "</td></tr>\n";
  }
  return h + "</table>\n";
}

} // namespace

std::string renderExploreHtml(const explore::ExploreResult &r,
                              const explore::ExploreOptions &o,
                              const std::string &modelName,
                              const std::string &command) {
  std::string h = pageHead("Trident explore report: " + modelName);
  h += "<h1>Trident explore report: " + esc(modelName) + "</h1>\n";
  h += "<p>" + fmt("%.4g", o.tokens) + " tokens at sequence " +
       std::to_string(o.seqLen) + "; " + std::to_string(r.rows.size()) +
       " scenarios (" + std::to_string(r.scenariosSearched) +
       " searches)</p>\n";
  if (!command.empty())
    h += "<p><code>" + esc(command) + "</code></p>\n";

  // The answers.
  h += "<h2>Answers</h2>\n";
  auto answer = [&](const char *what, const std::optional<size_t> &i,
                    double limit, const std::string &unit) {
    if (!(limit > 0))
      return std::string();
    if (!i)
      return "<p>" + std::string(what) + " " + fmt("%g", limit) + unit +
             ": no scenario meets it.</p>\n";
    const ExploreRow &row = r.rows[*i];
    return "<p>" + std::string(what) + " " + fmt("%g", limit) + unit + ": <b>" +
           esc(rowLabel(row)) + "</b>, " + fmt("%.1f days", days(row)) + ", " +
           fmt("%.0f GPU-hours", row.gpuHours) +
           (row.costUsd > 0 ? ", " + money(row.costUsd) : "") + "</p>\n";
  };
  std::string answers =
      answer("Deadline", r.deadlineAnswer, o.deadlineDays, " days") +
      answer("Budget", r.budgetAnswer, o.budgetUsd, " USD");
  h += answers.empty() ? "<p>No --deadline-days or --budget given; the "
                         "frontier below is the answer.</p>\n"
                       : answers;

  // Colours by GPU type, in the order of the rows.
  std::map<std::string, std::string> colour;
  std::vector<std::string> gpus;
  for (const ExploreRow &row : r.rows)
    if (!colour.count(row.gpu)) {
      colour[row.gpu] = kPalette[gpus.size() % std::size(kPalette)];
      gpus.push_back(row.gpu);
    }

  // Frontier: time to train against cost (GPU-hours without prices).
  bool priced = r.priced;
  auto xOf = [&](const ExploreRow &row) {
    return priced ? row.costUsd / 1e3 : row.gpuHours / 1e3;
  };
  std::vector<Series> all;
  std::vector<Point> frontier;
  for (const std::string &g : gpus) {
    Series s{g, colour[g], {}, false};
    for (const ExploreRow &row : r.rows)
      if (row.fits && row.gpu == g)
        s.points.push_back({xOf(row), days(row), rowLabel(row)});
    all.push_back(std::move(s));
  }
  for (const ExploreRow &row : r.rows)
    if (row.fits && row.pareto)
      frontier.push_back({xOf(row), days(row), rowLabel(row)});
  std::sort(frontier.begin(), frontier.end(),
            [](const Point &a, const Point &b) {
              return a.x != b.x ? a.x < b.x : a.y < b.y;
            });
  h += "<div class=\"charts\">\n<div>\n<h2>Time to train against " +
       std::string(priced ? "cost" : "GPU-hours") + "</h2>\n" +
       xyChart(all, frontier,
               priced ? "cost (thousand USD)" : "GPU-hours (thousands)",
               "time to train (days)", "frontier") +
       "<p class=\"caption\">Every scenario that fits, one colour per GPU "
       "type; the frontier joins those no other scenario beats on both "
       "time and " +
       std::string(priced ? "cost" : "GPU-hours") + ".</p>\n</div>\n";

  // Scaling: the fastest batch per GPU type and GPU count, no what-if.
  std::vector<Series> scaling;
  for (const std::string &g : gpus) {
    std::map<int64_t, const ExploreRow *> best;
    for (const ExploreRow &row : r.rows)
      if (row.fits && row.gpu == g && row.varyKey.empty()) {
        auto [it, fresh] = best.emplace(row.gpus, &row);
        if (!fresh && days(row) < days(*it->second))
          it->second = &row;
      }
    Series s{g, colour[g], {}, true};
    for (auto &[n, row] : best)
      s.points.push_back({double(n), days(*row), rowLabel(*row)});
    scaling.push_back(std::move(s));
  }
  h += "<div>\n<h2>Scaling: time to train against GPUs</h2>\n" +
       xyChart(scaling, {}, "GPUs", "time to train (days)", "scaling") +
       "<p class=\"caption\">Per GPU type, the fastest scenario at each "
       "GPU count (hardware as the preset has it).</p>\n</div>\n</div>\n";

  // What-if bars.
  std::vector<const ExploreRow *> whatIf;
  for (const ExploreRow &row : r.rows)
    if (row.fits && !row.varyKey.empty())
      whatIf.push_back(&row);
  h += "<h2>What-if hardware</h2>\n";
  if (whatIf.empty()) {
    h += "<p>No --vary given.</p>\n";
  } else {
    std::vector<const ExploreRow *> bars;
    for (const ExploreRow &row : r.rows)
      if (row.fits && row.varyKey.empty())
        for (const ExploreRow *w : whatIf)
          if (w->preset == row.preset && w->nodes == row.nodes &&
              w->globalBatch == row.globalBatch) {
            bars.push_back(&row);
            break;
          }
    bars.insert(bars.end(), whatIf.begin(), whatIf.end());
    std::stable_sort(bars.begin(), bars.end(),
                     [](const ExploreRow *a, const ExploreRow *b) {
                       if (a->preset != b->preset)
                         return a->preset < b->preset;
                       if (a->nodes != b->nodes)
                         return a->nodes < b->nodes;
                       return a->varyKey < b->varyKey;
                     });
    h += whatIfBars(bars) +
         "<p class=\"caption\">Time to train with one hardware property "
         "changed (grey: the preset as it is), each the planner's best "
         "plan on the changed cluster.</p>\n";
  }
  h += "<h2>Every scenario</h2>\n" + rowsTable(r);
  h += "<p style=\"color:#777;margin-top:18px\">Generated by trident "
       "explore --report; times are the cost model's predictions "
       "(docs/explore.md, docs/cost-model.md).</p>\n</body>\n</html>\n";
  return h;
}

} // namespace trident::report
