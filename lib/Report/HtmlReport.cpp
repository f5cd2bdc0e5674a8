//===- HtmlReport.cpp - One self-contained HTML page per search -----------===//
//
// Plain string building: the page is small, has a fixed structure and must
// be byte-identical run to run, which a template engine would not add to.
// Every SVG coordinate is printed with one decimal; every number shown is
// one the search, the Evaluator or the simulator produced. Hover titles
// (SVG <title>) carry the exact values without any script.
//
//===----------------------------------------------------------------------===//

#include "trident/Report/HtmlReport.h"
#include "trident/Plan/Export.h"
#include "trident/Report/Svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace trident::report {

namespace {

using namespace svg;

std::string gb(double bytes) { return fmt("%.1f GB", bytes / 1e9); }

// Palette: Tableau 10.
const char *kForward = "#4e79a7", *kForwardLate = "#8fb0d4";
const char *kBackward = "#f28e2b", *kBackwardLate = "#f7bd80";
const char *kBubble = "#e6e6e6", *kSend = "#b07aa1", *kP2P = "#76b7b2";
const char *kDP = "#e15759", *kOptimizer = "#59a14f";
const char *kTP = "#edc948", *kCP = "#9c755f", *kEP = "#ff9da7";

std::string eventFill(const TraceEvent &e) {
  switch (e.category) {
  case TraceCategory::Forward:
    return e.chunk > 0 ? kForwardLate : kForward;
  case TraceCategory::Backward:
    return e.chunk > 0 ? kBackwardLate : kBackward;
  case TraceCategory::Bubble:
    return kBubble;
  case TraceCategory::SendBlocked:
    return kSend;
  case TraceCategory::P2P:
    return kP2P;
  case TraceCategory::DataParallel:
    return kDP;
  case TraceCategory::Optimizer:
    return kOptimizer;
  case TraceCategory::TensorParallel:
    return kTP;
  case TraceCategory::ContextParallel:
    return kCP;
  case TraceCategory::ExpertParallel:
    return kEP;
  }
  return "#999";
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

/// The export targets, in the order the page lists them.
constexpr plan::ExportTarget kTargets[] = {
    plan::ExportTarget::Megatron, plan::ExportTarget::MegatronBridge,
    plan::ExportTarget::TorchTitan, plan::ExportTarget::DeepSpeed};

/// leader[i]: the row plan i is shown in (the first plan of the same
/// prediction).
std::vector<size_t> rowLeaders(const std::vector<plan::Plan> &plans) {
  std::vector<size_t> leader(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    leader[i] = i;
    for (size_t j = 0; j < i; ++j)
      if (leader[j] == j && samePrediction(plans[j], plans[i])) {
        leader[i] = j;
        break;
      }
  }
  return leader;
}

/// What sets `b` apart from `a`, "dp 16 vs 8, cp 1 vs 2".
std::string differences(const plan::Plan &a, const plan::Plan &b) {
  std::string out;
  auto diff = [&](const char *name, const std::string &x,
                  const std::string &y) {
    if (x != y)
      out += std::string(out.empty() ? "" : ", ") + name + " " + x + " vs " + y;
  };
  auto n = [](int64_t v) { return std::to_string(v); };
  diff("dp", n(a.dp), n(b.dp));
  diff("tp", n(a.tp), n(b.tp));
  diff("pp", n(a.pp), n(b.pp));
  diff("cp", n(a.cp), n(b.cp));
  diff("ep", n(a.ep), n(b.ep));
  diff("vpp", n(a.vpp), n(b.vpp));
  diff("sp", a.sequenceParallel ? "on" : "off",
       b.sequenceParallel ? "on" : "off");
  diff("tp overlap", a.tpCommOverlap ? "on" : "off",
       b.tpCommOverlap ? "on" : "off");
  diff("micro-batch", n(a.microBatch), n(b.microBatch));
  diff("recompute", std::string(recomputeName(a.recompute)),
       std::string(recomputeName(b.recompute)));
  diff("ZeRO", n(a.zeroStage), n(b.zeroStage));
  diff("schedule", std::string(scheduleKindName(a.scheduleKind())),
       std::string(scheduleKindName(b.scheduleKind())));
  if (out.empty() && a.layersPerChunk != b.layersPerChunk)
    out = "the layer split";
  return out.empty() ? "nothing the table shows" : out;
}

/// Each target's export of `p` (the text), or why it refuses.
struct TargetExport {
  plan::ExportTarget target;
  bool ok = false;
  std::string text; ///< the export (with notes), or the refusal
};
std::vector<TargetExport> exportsOf(const plan::Plan &p,
                                    const frontend::ModelConfig *model,
                                    const std::string &label) {
  std::vector<TargetExport> out;
  for (plan::ExportTarget t : kTargets) {
    TargetExport x{t};
    auto e = plan::exportPlan(p, t, label, model);
    x.ok = e.isOk();
    if (!x.ok) {
      x.text = e.message();
    } else {
      if (!e->notesInText)
        for (const std::string &note : e->notes)
          x.text += "# " + note + "\n";
      x.text += e->text;
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::string plansTable(const HtmlReportInput &in,
                       const std::vector<std::vector<TargetExport>> &exports) {
  const std::vector<size_t> leader = rowLeaders(in.plans);
  std::string h = "<table>\n<tr><th>#</th><th>dp</th><th>tp</th><th>pp</th>"
                  "<th>cp</th><th>ep</th><th>vpp</th><th>sp</th>"
                  "<th>mb &times; m</th><th>recompute</th>"
                  "<th>ZeRO</th><th>schedule</th><th>layers per chunk</th>"
                  "<th>step (s)</th><th>80% range (s)</th><th>tokens/s</th>"
                  "<th>MFU</th><th>memory/GPU</th><th>bubble</th>"
                  "<th>exposed comm</th><th>runs on</th></tr>\n";
  std::string collapsed;
  for (size_t i = 0; i < in.plans.size(); ++i) {
    const plan::Plan &p = in.plans[i];
    if (leader[i] != i) {
      collapsed += "<li>#" + std::to_string(i + 1) + " is shown as #" +
                   std::to_string(leader[i] + 1) +
                   ": the same step time and memory; it differs in " +
                   esc(differences(in.plans[leader[i]], p)) + "</li>\n";
      continue;
    }
    std::string number = std::to_string(i + 1);
    for (size_t j = i + 1; j < in.plans.size(); ++j)
      if (leader[j] == i)
        number += ", " + std::to_string(j + 1);
    std::string runs;
    for (const TargetExport &x : exports[i])
      if (x.ok)
        runs += (runs.empty() ? "" : ", ") +
                std::string(plan::exportTargetTitle(x.target));
    std::string split;
    for (size_t g = 0; g < p.layersPerChunk.size(); ++g) {
      if (g)
        split += ',';
      split += std::to_string(p.layersPerChunk[g]);
    }
    if (split.size() > 24)
      split = split.substr(0, 21) + "...";
    std::string rc(recomputeName(p.recompute));
    for (const plan::StagePlan &s : p.stages)
      if (s.recompute != p.recompute) {
        rc += " (per stage)";
        break;
      }
    h += std::string(i == 0 ? "<tr class=\"best\">" : "<tr>") + "<td>" +
         number + "</td><td>" + std::to_string(p.dp) + "</td><td>" +
         std::to_string(p.tp) + "</td><td>" + std::to_string(p.pp) +
         "</td><td>" + std::to_string(p.cp) + "</td><td>" +
         std::to_string(p.ep) + "</td><td>" + std::to_string(p.vpp) +
         "</td><td>" + p.spCell() + "</td><td>" +
         std::to_string(p.microBatch) + " &times; " +
         std::to_string(p.numMicroBatches) + "</td><td>" + esc(rc) +
         "</td><td>" + std::to_string(p.zeroStage) + "</td><td>" +
         esc(scheduleKindName(p.scheduleKind())) + "</td><td>[" + esc(split) +
         "] " + esc(p.partition) + "</td><td>" +
         fmt("%.3f", p.predicted.iterationSeconds) + "</td><td>" +
         fmt("%.2f", p.predicted.iterationLowSeconds) + " &ndash; " +
         fmt("%.2f", p.predicted.iterationHighSeconds) + "</td><td>" +
         fmt("%.0f", p.predicted.tokensPerSecond) + "</td><td>" +
         fmt("%.1f%%", 100 * p.predicted.mfu) + "</td><td>" +
         gb(p.predicted.peakMemoryBytes) + "</td><td>" +
         fmt("%.1f%%", 100 * p.predicted.bubbleFraction) + "</td><td>" +
         fmt("%.1f%%", 100 * p.predicted.exposedCommFraction) +
         "</td><td class=\"runs\">" +
         (runs.empty() ? std::string("none") : esc(runs)) + "</td></tr>\n";
  }
  h += "</table>\n";
  if (std::any_of(in.plans.begin(), in.plans.end(),
                  [](const plan::Plan &p) { return p.tpCommOverlap; }))
    h += std::string("<p class=\"legend\">sp ov: ") + kSpOverlapLegend +
         "</p>\n";
  if (!collapsed.empty())
    h += "<ul class=\"collapsed\">\n" + collapsed + "</ul>\n";
  // The best plan's warnings: where it leaves the validated envelope
  // (docs/cost-model.md, Uncertainty).
  if (!in.plans.empty() && !in.plans[0].warnings.empty()) {
    h += "<ul class=\"warnings\">\n";
    for (const std::string &w : in.plans[0].warnings)
      h += "<li>warning: " + esc(w) + "</li>\n";
    h += "</ul>\n";
  }
  return h;
}

/// Per row of the table, each framework's exported text in a collapsible
/// block (HTML's details element: no script), and why the others refuse.
std::string whatToRun(const HtmlReportInput &in,
                      const std::vector<std::vector<TargetExport>> &exports) {
  const std::vector<size_t> leader = rowLeaders(in.plans);
  std::string h = "<h2>What to run</h2>\n<p class=\"caption\" "
                  "style=\"max-width:1300px\">Each plan as the frameworks "
                  "that can run it take it (trident export --to ..., "
                  "docs/exporters.md); open a block for the text.</p>\n";
  for (size_t i = 0; i < in.plans.size(); ++i) {
    if (leader[i] != i)
      continue;
    std::string refused;
    for (const TargetExport &x : exports[i]) {
      if (!x.ok) {
        refused += "<li>" + std::string(plan::exportTargetTitle(x.target)) +
                   ": " + esc(x.text) + "</li>\n";
        continue;
      }
      h += "<details><summary>#" + std::to_string(i + 1) + " on " +
           std::string(plan::exportTargetTitle(x.target)) +
           "</summary>\n<pre>" + esc(x.text) + "</pre></details>\n";
    }
    if (!refused.empty())
      h += "<details><summary>#" + std::to_string(i + 1) +
           ": frameworks that cannot run it</summary>\n<ul>\n" + refused +
           "</ul></details>\n";
  }
  return h;
}

std::string timelineSvg(const Trace &tr, double zoom = 1) {
  const double left = 300, right = 20, top = 34;
  const double plotW = (1320 - left - right) * zoom;
  const double W = left + plotW + right;
  const double stageH = 20, otherH = 12, gap = 3;
  std::vector<double> rowY(tr.tracks.size()), rowH(tr.tracks.size());
  double y = top;
  for (size_t i = 0; i < tr.tracks.size(); ++i) {
    rowH[i] = int64_t(i) < tr.numStages ? stageH : otherH;
    if (i == 0 || tr.tracks[i - 1].process != tr.tracks[i].process)
      y += 18; // room for the process (node group, links, tail) header
    rowY[i] = y;
    y += rowH[i] + gap;
  }
  const double axisY = y + 4, H = axisY + 44;
  const double end = std::max(tr.stepSeconds, 1e-30);
  const bool ms = end < 1;
  const double unit = ms ? 1e3 : 1;
  auto X = [&](double s) { return left + s / end * plotW; };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  px(W) + "\" height=\"" + px(H) + "\" viewBox=\"0 0 " +
                  px(W) + " " + px(H) + "\" role=\"img\" aria-label=\"" +
                  "pipeline timeline\">\n";
  // Legend: the kinds of pass communication the trace has, after the rest.
  std::vector<std::pair<const char *, const char *>> legend = {
      {kForward, "forward"},
      {kBackward, "backward"},
      {kForwardLate, "forward, later chunk"},
      {kBackwardLate, "backward, later chunk"},
      {kBubble, "bubble (idle)"},
      {kSend, "blocked send"},
      {kP2P, "p2p transfer"},
      {kDP, "DP (exposed)"},
      {kOptimizer, "optimizer"}};
  auto has = [&](TraceCategory c) {
    return std::any_of(tr.events.begin(), tr.events.end(),
                       [&](const TraceEvent &e) { return e.category == c; });
  };
  if (has(TraceCategory::TensorParallel))
    legend.push_back({kTP, "TP (exposed)"});
  if (has(TraceCategory::ContextParallel))
    legend.push_back({kCP, "CP (exposed)"});
  if (has(TraceCategory::ExpertParallel))
    legend.push_back({kEP, "EP (exposed)"});
  double lx = 8;
  for (auto [fill, label] : legend) {
    s += legendItem(lx, 14, fill, label);
    lx += 26 + 7.2 * double(std::string_view(label).size());
  }
  // Rows.
  for (size_t i = 0; i < tr.tracks.size(); ++i) {
    const TraceTrack &t = tr.tracks[i];
    std::string label = t.thread;
    if (i == 0 || tr.tracks[i - 1].process != t.process)
      s += text(left, rowY[i] - 5, t.process, "class=\"grp\"");
    s += rect(left, rowY[i], plotW, rowH[i], "#fafafa", "");
    s += text(left - 6, rowY[i] + rowH[i] - (rowH[i] > 15 ? 6 : 2), label,
              std::string("text-anchor=\"end\" class=\"") +
                  (rowH[i] > 15 ? "row" : "rowsm") + "\"");
  }
  // Events.
  for (const TraceEvent &e : tr.events) {
    size_t i = size_t(e.track);
    double x0 = X(e.startSeconds), w = X(e.startSeconds + e.durationSeconds) - x0;
    // Transfers last milliseconds of a seconds-long step: keep them visible.
    if (e.category != TraceCategory::Forward &&
        e.category != TraceCategory::Backward &&
        e.category != TraceCategory::Bubble &&
        e.category != TraceCategory::SendBlocked)
      w = std::max(w, 1.5);
    std::string title = e.name + ": " +
                        fmt("%.3f", e.startSeconds * unit) + " to " +
                        fmt("%.3f", (e.startSeconds + e.durationSeconds) * unit) +
                        (ms ? " ms" : " s");
    s += rect(x0, rowY[i], w, rowH[i], eventFill(e), title);
    bool work = e.category == TraceCategory::Forward ||
                e.category == TraceCategory::Backward;
    if (work && w >= 16 && rowH[i] > 15)
      s += text(x0 + w / 2, rowY[i] + 14,
                std::string(e.category == TraceCategory::Forward ? "F" : "B") +
                    std::to_string(e.microBatch),
                "class=\"ev\" text-anchor=\"middle\"");
  }
  // Pipeline end and axis.
  double pe = X(tr.pipelineSeconds);
  s += line(pe, top - 4, pe, axisY, "#333",
            " stroke-dasharray=\"4 3\" stroke-width=\"1\"");
  s += text(pe - 4, top + 12, "pipeline end", "class=\"lg\" text-anchor=\"end\"");
  s += line(left, axisY, left + plotW, axisY, "#333");
  double step;
  for (double t : ticks(0, end * unit, 10, step)) {
    double x = X(t / unit);
    s += line(x, axisY, x, axisY + 5, "#333");
    s += text(x, axisY + 17, tickLabel(t, step),
              "text-anchor=\"middle\" class=\"tick\"");
  }
  s += text(left + plotW / 2, axisY + 36,
            std::string("time in the training step (") + (ms ? "ms" : "s") +
                ")",
            "text-anchor=\"middle\" class=\"axis\"");
  return s + "</svg>\n";
}

std::string memorySvg(const plan::Plan &p, double maxFraction) {
  const double W = 650, H = 440, left = 70, right = 16, top = 40, bottom = 58;
  const double plotW = W - left - right, plotH = H - top - bottom;
  double cap = 0, peak = 0;
  for (const plan::StagePlan &s : p.stages) {
    cap = std::max(cap, s.capacityBytes);
    peak = std::max(peak, s.totalBytes);
  }
  double ymax = std::max(cap, peak) * 1.08 / 1e9;
  if (!(ymax > 0))
    ymax = 1;
  auto Y = [&](double v) { return top + plotH - v / ymax * plotH; };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  px(W) + "\" height=\"" + px(H) + "\" viewBox=\"0 0 " +
                  px(W) + " " + px(H) + "\" role=\"img\" aria-label=\"" +
                  "memory per stage\">\n";
  struct Series {
    const char *name, *fill;
    double plan::StagePlan::*field;
  };
  const Series series[] = {
      {"weights", "#4e79a7", &plan::StagePlan::weightBytes},
      {"gradients", "#f28e2b", &plan::StagePlan::gradientBytes},
      {"optimizer", "#e15759", &plan::StagePlan::optimizerBytes},
      {"activations", "#59a14f", &plan::StagePlan::activationBytes},
      {"buffers & other", "#bab0ac", &plan::StagePlan::bufferBytes}};
  double lx = left;
  for (const Series &se : series) {
    s += legendItem(lx, 16, se.fill, se.name);
    lx += 30 + 7.2 * double(std::string_view(se.name).size());
  }
  // Grid and y axis.
  double step;
  for (double t : ticks(0, ymax, 8, step)) {
    if (t > ymax)
      continue;
    s += line(left, Y(t), left + plotW, Y(t), "#e3e3e3");
    s += text(left - 6, Y(t) + 4, tickLabel(t, step),
              "text-anchor=\"end\" class=\"tick\"");
  }
  s += line(left, top, left, top + plotH, "#333");
  s += line(left, top + plotH, left + plotW, top + plotH, "#333");
  s += text(16, top + plotH / 2, "memory per GPU (GB)",
            "class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
                px(top + plotH / 2) + ")\"");
  // Bars.
  const size_t n = p.stages.size();
  const double slot = plotW / double(std::max<size_t>(n, 1));
  const double bw = std::clamp(slot * 0.7, 1.0, 90.0);
  const size_t every = std::max<size_t>(1, (n + 23) / 24);
  for (size_t i = 0; i < n; ++i) {
    const plan::StagePlan &st = p.stages[i];
    double x = left + slot * double(i) + (slot - bw) / 2, acc = 0;
    for (const Series &se : series) {
      double v = st.*(se.field) / 1e9;
      std::string title = "stage " + std::to_string(i) + " " + se.name +
                          ": " + fmt("%.2f GB", v);
      s += rect(x, Y(acc + v), bw, Y(acc) - Y(acc + v), se.fill, title);
      acc += v;
    }
    if (i % every == 0)
      s += text(x + bw / 2, top + plotH + 16, std::to_string(i),
                "text-anchor=\"middle\" class=\"tick\"");
  }
  s += text(left + plotW / 2, top + plotH + 40, "pipeline stage",
            "text-anchor=\"middle\" class=\"axis\"");
  // Capacity and the usable limit.
  if (cap > 0) {
    s += line(left, Y(cap / 1e9), left + plotW, Y(cap / 1e9), "#c00",
              " stroke-dasharray=\"6 4\" stroke-width=\"1.5\"");
    s += text(left + plotW - 4, Y(cap / 1e9) - 5,
              "GPU memory " + gb(cap), "text-anchor=\"end\" class=\"lg\"");
    if (maxFraction < 1) {
      double lim = cap * maxFraction / 1e9;
      s += line(left, Y(lim), left + plotW, Y(lim), "#c60",
                " stroke-dasharray=\"2 3\"");
      s += text(left + plotW - 4, Y(lim) + 13,
                "limit " + fmt("%.0f%%", 100 * maxFraction),
                "text-anchor=\"end\" class=\"lg\"");
    }
  }
  return s + "</svg>\n";
}

std::string scatterSvg(const HtmlReportInput &in, std::string &caption) {
  const double W = 650, H = 440, left = 70, right = 20, top = 40, bottom = 58;
  const double plotW = W - left - right, plotH = H - top - bottom;
  std::vector<ScatterPoint> pts;
  if (in.search)
    for (const search::ExploredPoint &e : in.search->explored)
      pts.push_back({e.peakMemoryBytes, e.iterationSeconds, e.fits});
  // The ranked plans are points too (a per-stage recompute variant may not
  // be among the explored ones).
  std::vector<ScatterPoint> ranked;
  for (const plan::Plan &p : in.plans)
    ranked.push_back({p.predicted.peakMemoryBytes, p.predicted.iterationSeconds,
                   true});
  std::vector<ScatterPoint> all = pts;
  all.insert(all.end(), ranked.begin(), ranked.end());
  std::vector<size_t> front = paretoFrontier(all);

  // The x range covers the plans that fit and the GPU memory with some
  // room; plans that need far more would squeeze the interesting part
  // into a corner, so they are counted in the caption instead.
  double fitMax = 0, cap = 0;
  for (const ScatterPoint &q : all)
    if (q.fits)
      fitMax = std::max(fitMax, q.memoryBytes / 1e9);
  if (!in.plans.empty())
    for (const plan::StagePlan &s : in.plans[0].stages)
      cap = std::max(cap, s.capacityBytes / 1e9);
  double xmax = std::max(fitMax, cap) * 1.3;
  if (!(xmax > 0))
    xmax = 1;
  auto shown = [&](const ScatterPoint &q) {
    return q.memoryBytes / 1e9 <= xmax;
  };
  double ymin = 1e300, ymax = 0;
  size_t offChart = 0;
  for (const ScatterPoint &q : all) {
    if (!shown(q)) {
      ++offChart;
      continue;
    }
    ymin = std::min(ymin, q.stepSeconds);
    ymax = std::max(ymax, q.stepSeconds);
  }
  double ylo = 0, yhi = ymax * 1.06;
  if (ymin < 1e300 && ymin > 0.3 * ymax)
    ylo = ymin - (ymax - ymin) * 0.08 - ymin * 0.01; // zoom to the cloud
  if (!(yhi > ylo))
    yhi = ylo + 1;
  auto X = [&](double gbv) { return left + gbv / xmax * plotW; };
  auto Y = [&](double sec) {
    return top + plotH - (sec - ylo) / (yhi - ylo) * plotH;
  };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  px(W) + "\" height=\"" + px(H) + "\" viewBox=\"0 0 " +
                  px(W) + " " + px(H) + "\" role=\"img\" aria-label=\"" +
                  "explored plans\">\n";
  // Legend.
  s += "<circle cx=\"" + px(left + 6) + "\" cy=\"12\" r=\"3.5\" fill=\"" +
       std::string(kForward) + "\" fill-opacity=\"0.55\"/>\n" +
       text(left + 14, 16, "fits", "class=\"lg\"");
  s += text(left + 52, 16.5, "\u00d7", "class=\"lg\" fill=\"#888\"") +
       text(left + 62, 16, "does not fit", "class=\"lg\"");
  s += line(left + 150, 12, left + 170, 12, "#c00", " stroke-width=\"2\"") +
       text(left + 175, 16, "Pareto frontier", "class=\"lg\"");
  s += "<circle cx=\"" + px(left + 290) +
       "\" cy=\"12\" r=\"6\" fill=\"none\" stroke=\"#000\" "
       "stroke-width=\"1.5\"/>\n" +
       text(left + 300, 16, "ranked plan (1 = best)", "class=\"lg\"");
  // Axes.
  Frame frame{left, top, plotW, plotH, 0, xmax, ylo, yhi};
  s += axes(frame, 8, 8, "memory per GPU, fullest stage (GB)", "step time (s)");
  if (cap > 0) {
    s += line(X(cap), top, X(cap), top + plotH, "#c00",
              " stroke-dasharray=\"6 4\" stroke-width=\"1.2\"");
    s += text(X(cap) - 4, top + 12, "GPU memory", "text-anchor=\"end\" "
                                                  "class=\"lg\"");
  }
  // Points.
  size_t fitting = 0;
  for (const ScatterPoint &q : pts) {
    fitting += q.fits ? 1 : 0;
    if (!shown(q))
      continue;
    double x = X(q.memoryBytes / 1e9), y = Y(q.stepSeconds);
    std::string title = fmt("%.3f s, ", q.stepSeconds) + gb(q.memoryBytes) +
                        (q.fits ? "" : " (does not fit)");
    if (q.fits) {
      s += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) +
           "\" r=\"3\" fill=\"" + kForward +
           "\" fill-opacity=\"0.45\"><title>" + esc(title) +
           "</title></circle>\n";
    } else {
      s += "<path d=\"M" + px(x - 3) + " " + px(y - 3) + "l6 6m0 -6l-6 6\" "
           "stroke=\"#999\" stroke-width=\"1.2\"><title>" + esc(title) +
           "</title></path>\n";
    }
  }
  // Frontier.
  std::string poly;
  for (size_t i : front)
    poly += px(X(all[i].memoryBytes / 1e9)) + "," + px(Y(all[i].stepSeconds)) +
            " ";
  if (!poly.empty())
    s += "<polyline points=\"" + poly +
         "\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\"/>\n";
  for (size_t i : front)
    s += "<circle cx=\"" + px(X(all[i].memoryBytes / 1e9)) + "\" cy=\"" +
         px(Y(all[i].stepSeconds)) + "\" r=\"3.5\" fill=\"#c00\"><title>" +
         esc("frontier: " + fmt("%.3f s, ", all[i].stepSeconds) +
             gb(all[i].memoryBytes)) +
         "</title></circle>\n";
  // Ranked plans, last first so that #1 is drawn on top.
  for (size_t k = ranked.size(); k-- > 0;) {
    double x = X(ranked[k].memoryBytes / 1e9), y = Y(ranked[k].stepSeconds);
    s += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" +
         (k == 0 ? "7" : "6") +
         "\" fill=\"none\" stroke=\"#000\" stroke-width=\"" +
         (k == 0 ? "2.2" : "1.2") + "\"><title>" +
         esc("plan #" + std::to_string(k + 1) + ": " +
             fmt("%.3f s, ", ranked[k].stepSeconds) + gb(ranked[k].memoryBytes)) +
         "</title></circle>\n";
    s += text(x + 8, y - 6 - 9 * double(k % 2), std::to_string(k + 1),
              "class=\"lbl\"");
  }
  auto ordinal = [](size_t k) {
    std::string n = std::to_string(k);
    if (k % 100 >= 11 && k % 100 <= 13)
      return n + "th";
    return n + (k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd"
                                                                       : "th");
  };
  caption = std::to_string(pts.size()) +
            " configurations evaluated in full by the search (those whose "
            "step-time lower bound was within the " +
            (in.plans.size() == 1 ? std::string("best")
                                  : ordinal(in.plans.size()) + "-best") +
            " plan: a set that does not depend on the thread count); " +
            std::to_string(fitting) + " of them fit. The frontier (" +
            std::to_string(front.size()) +
            " points) holds the plans no other fitting plan beats on both "
            "step time and memory." +
            (offChart ? " " + std::to_string(offChart) +
                            " plans need more than " + fmt("%.0f GB", xmax) +
                            " per GPU and are off the chart."
                      : std::string());
  return s + "</svg>\n";
}

} // namespace

bool samePrediction(const plan::Plan &a, const plan::Plan &b) {
  auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-6 * std::max(std::abs(x), std::abs(y));
  };
  return close(a.predicted.iterationSeconds, b.predicted.iterationSeconds) &&
         close(a.predicted.peakMemoryBytes, b.predicted.peakMemoryBytes);
}

double timelineZoom(const Trace &tr, double minPixels) {
  const double plotW = 1320 - 300 - 20;
  const double end = std::max(tr.stepSeconds, 1e-30);
  double shortest = 0;
  for (const TraceEvent &e : tr.events)
    if ((e.category == TraceCategory::Forward ||
         e.category == TraceCategory::Backward) &&
        e.durationSeconds > 0 &&
        (shortest == 0 || e.durationSeconds < shortest))
      shortest = e.durationSeconds;
  if (shortest == 0)
    return 1;
  double z = minPixels / (shortest / end * plotW);
  return std::clamp(std::ceil(z), 1.0, 32.0);
}

std::vector<size_t> paretoFrontier(const std::vector<ScatterPoint> &points) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].fits)
      idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (points[a].memoryBytes != points[b].memoryBytes)
      return points[a].memoryBytes < points[b].memoryBytes;
    return points[a].stepSeconds < points[b].stepSeconds;
  });
  std::vector<size_t> front;
  double best = INFINITY;
  for (size_t i : idx)
    if (points[i].stepSeconds < best) {
      best = points[i].stepSeconds;
      front.push_back(i);
    }
  return front;
}

std::string renderHtmlReport(const HtmlReportInput &in) {
  std::string title = "Trident plan report";
  if (!in.plans.empty())
    title += ": " + in.plans[0].model;
  std::string h = svg::pageHead(title);
  if (in.plans.empty())
    return h + "<h1>Trident plan report</h1>\n<p>No plan.</p>\n</body>\n"
               "</html>\n";
  const plan::Plan &best = in.plans[0];
  h += "<h1>Trident plan report: " + esc(best.model) + "</h1>\n";
  h += "<p>" + esc(best.cluster) + ", " + std::to_string(best.gpus) +
       " GPUs" + (best.clusterNote.empty() ? "" : " (" + esc(best.clusterNote) +
                                                    ")") +
       "; sequence length " + std::to_string(best.seqLen) +
       ", global batch " + std::to_string(best.globalBatch) + ", " +
       esc(best.precision) + "</p>\n";
  if (in.search) {
    const search::SearchStats &st = in.search->stats;
    // Only the deterministic count: how many evaluations the pruning
    // saved depends on the thread timing, and the page must not.
    h += "<p>Searched " + std::to_string(st.configurations) +
         " configurations (every valid combination of the parallel axes, "
         "micro-batch, recomputation and ZeRO stage).</p>\n";
  }
  if (!in.command.empty())
    h += "<p><code>" + esc(in.command) + "</code></p>\n";
  std::vector<std::vector<TargetExport>> exports;
  for (size_t i = 0; i < in.plans.size(); ++i)
    exports.push_back(
        exportsOf(in.plans[i], in.model, "plan #" + std::to_string(i + 1)));
  h += "<h2>Top plans</h2>\n" + plansTable(in, exports);
  h += "<h2>Pipeline timeline of plan #1 (one training step)</h2>\n"
       "<p class=\"caption\" style=\"max-width:1300px\">" +
       esc(in.trace.title) + ". Simulated: pipeline " +
       fmt("%.3f s", in.trace.pipelineSeconds) + ", step " +
       fmt("%.3f s", in.trace.stepSeconds) +
       ". One row per pipeline stage, then the point-to-point links, "
       "the step's tail and the communication exposed inside the passes "
       "(one row per stage and kind: TP, CP, EP, ZeRO-3); hover a block "
       "for its times.</p>\n";
  // With 8 or more stages the blocks get thin: a zoomed copy to scroll
  // through, chosen with radio buttons (CSS only).
  const double zoom = in.trace.numStages >= 8 ? timelineZoom(in.trace) : 1;
  if (zoom > 1) {
    const std::string z = fmt("%.0f", zoom);
    h += "<div class=\"zoom\">\n<input type=\"radio\" name=\"tlz\" "
         "id=\"tlz1\" checked><label for=\"tlz1\">whole step</label>\n"
         "<input type=\"radio\" name=\"tlz\" id=\"tlzk\"><label "
         "for=\"tlzk\">zoom &times;" +
         z + " (scroll sideways)</label>\n<div class=\"tl tl1\">\n" +
         timelineSvg(in.trace) + "</div>\n<div class=\"tl tlk\">\n" +
         timelineSvg(in.trace, zoom) + "</div>\n</div>\n";
  } else {
    h += timelineSvg(in.trace);
  }
  std::string caption;
  std::string scatter = scatterSvg(in, caption);
  h += "<div class=\"charts\">\n<div>\n<h2>Memory per GPU of each stage "
       "(plan #1)</h2>\n" +
       memorySvg(best, in.maxMemoryFraction) +
       "<p class=\"caption\">The Evaluator's breakdown per GPU at the "
       "stage's peak: weights, gradients, optimizer states, activations of "
       "the micro-batches in flight, and buffers (p2p, reserved).</p>\n"
       "</div>\n<div>\n<h2>Explored plans: step time against memory</h2>\n" +
       scatter + "<p class=\"caption\">" + esc(caption) + "</p>\n</div>\n"
       "</div>\n";
  h += whatToRun(in, exports);
  h += "<p style=\"color:#777;margin-top:18px\">Generated by trident plan "
       "--report; times and memory are the cost model's predictions "
       "(docs/cost-model.md), the timeline the schedule simulator's "
       "(docs/schedules.md).</p>\n</body>\n</html>\n";
  return h;
}

} // namespace trident::report
