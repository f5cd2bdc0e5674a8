//===- Explain.cpp - Why the winner beats the runners-up ------------------===//
//
// Attributes the step-time difference between two plans to the parts of
// the step the Evaluator reports for the busiest stage (compute including
// recompute, exposed communication, pipeline bubble) plus the optimizer,
// and names the largest parts. Plain arithmetic on two Evaluations, so it
// can never disagree with the numbers in the table.
//
//===----------------------------------------------------------------------===//

#include "trident/Search/Search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trident::search {

namespace {

struct Parts {
  double compute = 0, comm = 0, bubble = 0, other = 0;
};

Parts partsOf(const Evaluation &e) {
  Parts p;
  size_t crit = 0;
  double busiest = -1;
  for (size_t s = 0; s < e.stages.size(); ++s) {
    double b = e.stages[s].computeSeconds + e.stages[s].exposedCommSeconds;
    if (b > busiest)
      busiest = b, crit = s;
  }
  if (!e.stages.empty()) {
    p.compute = e.stages[crit].computeSeconds;
    p.comm = e.stages[crit].exposedCommSeconds;
    p.bubble = e.stages[crit].bubbleSeconds;
  }
  p.other = e.iterationSeconds - p.compute - p.comm - p.bubble;
  return p;
}

std::string fmt(const char *f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string shortConfig(const ParallelConfig &c) {
  std::string s = "dp=" + std::to_string(c.dp) + " tp=" + std::to_string(c.tp) +
                  " pp=" + std::to_string(c.pp);
  if (c.cp > 1)
    s += " cp=" + std::to_string(c.cp);
  if (c.ep > 1)
    s += " ep=" + std::to_string(c.ep);
  if (c.vpp > 1)
    s += " vpp=" + std::to_string(c.vpp);
  s += " mb=" + std::to_string(c.microBatch);
  s += c.sequenceParallel ? " sp" : "";
  s += c.tpCommOverlap ? " tp-overlap" : "";
  s += " " + std::string(recomputeName(c.recompute));
  s += " zero" + std::to_string(c.zeroStage);
  return s;
}

} // namespace

std::string explainWinner(const SearchResult &r) {
  if (r.top.empty())
    return "";
  const Candidate &w = r.top[0];
  Parts pw = partsOf(w.eval);
  std::string out;
  out += "why #1: busiest stage computes " + fmt("%.3f s", pw.compute) +
         ", exposed communication " + fmt("%.3f s", pw.comm) + ", bubble " +
         fmt("%.3f s", pw.bubble) + ", DP sync + optimizer " +
         fmt("%.3f s", pw.other) + "; peak memory " +
         fmt("%.1f GB", w.eval.peakMemoryBytes / 1e9) + " of " +
         fmt("%.1f GB", w.eval.memoryCapacityBytes / 1e9) + ".\n";
  if (w.partition == "dp") {
    std::string split;
    for (size_t i = 0; i < w.config.layersPerChunk.size() && i < 12; ++i)
      split += (i ? "," : "") + std::to_string(w.config.layersPerChunk[i]);
    if (w.config.layersPerChunk.size() > 12)
      split += ",...";
    out += "  layers split unevenly by the partitioner [" + split +
           "] to even out the stage times (embedding, LM head, device speed) within each stage's memory.\n";
  }
  for (size_t i = 1; i < r.top.size() && i < 4; ++i) {
    const Candidate &c = r.top[i];
    Parts pc = partsOf(c.eval);
    double d = c.eval.iterationSeconds - w.eval.iterationSeconds;
    struct Item {
      const char *name;
      double delta, mine, theirs;
    } items[] = {{"compute (incl. recompute)", pc.compute - pw.compute,
                  pw.compute, pc.compute},
                 {"exposed communication", pc.comm - pw.comm, pw.comm, pc.comm},
                 {"pipeline bubble", pc.bubble - pw.bubble, pw.bubble,
                  pc.bubble},
                 {"DP sync + optimizer", pc.other - pw.other, pw.other,
                  pc.other}};
    std::stable_sort(std::begin(items), std::end(items),
                     [](const Item &a, const Item &b) {
                       return std::fabs(a.delta) > std::fabs(b.delta);
                     });
    out += "  vs #" + std::to_string(i + 1) + " (" + shortConfig(c.config) +
           "): ";
    if (d <= 0 && c.objective > w.objective) {
      out += "cheaper per token on fewer GPUs; ";
    }
    out += d >= 0 ? fmt("%.3f s faster", d) : fmt("%.3f s slower", -d);
    double rel = c.eval.iterationSeconds > 0 ? d / c.eval.iterationSeconds : 0;
    out += fmt(" (%.1f%%)", 100 * std::fabs(rel));
    int shown = 0;
    for (const Item &it : items) {
      if (shown == 2 || std::fabs(it.delta) < 1e-4 * c.eval.iterationSeconds)
        break;
      out += shown ? "; " : ": ";
      out += std::string(it.name) + " " + fmt("%.3f s", it.mine) + " vs " +
             fmt("%.3f s", it.theirs);
      ++shown;
    }
    if (shown == 0) {
      if (w.eval.peakMemoryBytes < c.eval.peakMemoryBytes)
        out += ": same time; less memory (" +
               fmt("%.1f GB", w.eval.peakMemoryBytes / 1e9) + " vs " +
               fmt("%.1f GB", c.eval.peakMemoryBytes / 1e9) + ")";
      else
        out += ": same predicted time and memory (listed in configuration "
               "order)";
    }
    out += ".\n";
  }
  return out;
}

} // namespace trident::search
