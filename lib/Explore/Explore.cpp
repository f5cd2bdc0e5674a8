//===- Explore.cpp - Cluster sizing and batch co-tuning by time to train -===//

#include "trident/Explore/Explore.h"

#include "trident/Hardware/Cluster.h"
#include "trident/Hardware/Gpu.h"
#include "trident/Support/Text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>

namespace trident::explore {

namespace {

using json = nlohmann::ordered_json;

std::optional<int64_t> parsePositive(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0)
    return std::nullopt;
  return v;
}

std::optional<double> parseNumber(std::string_view s) {
  std::string t(s);
  char *end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// Non-embedding parameters (Kaplan et al.'s N): the transformer blocks'.
double nonEmbeddingParams(const LayerProfile &p) {
  double n = 0;
  for (const LayerGroup &g : p.groups)
    if (g.cost.kind == LayerKind::Block || g.cost.kind == LayerKind::Other)
      n += double(g.count) *
           double(g.cost.paramsTpSharded + g.cost.paramsReplicated +
                  g.cost.paramsExpert);
  return n > 0 ? n : double(p.totalParams);
}

/// Fills the row's step parts and what bounds the step.
void boundOf(const Evaluation &e, ExploreRow &row) {
  double compute = 0, network = 0;
  for (const StageBreakdown &s : e.stages) {
    compute = std::max(compute, s.computeSeconds);
    network = std::max(network, s.exposedCommSeconds);
  }
  network += e.dpExposedSeconds;
  double bubble = e.bubbleFraction * e.iterationSeconds;
  row.computeSeconds = compute;
  row.networkSeconds = network;
  row.bubbleSeconds = bubble;
  row.bound = network >= compute && network >= bubble ? Bound::Network
              : bubble > compute                      ? Bound::Bubble
                                                      : Bound::Compute;
}

double priceFor(const ExploreOptions &o, const std::string &gpu) {
  if (auto it = o.prices.find(gpu); it != o.prices.end())
    return it->second;
  if (auto it = o.prices.find("*"); it != o.prices.end())
    return it->second;
  return 0;
}

/// Searches one scenario and fills the row's plan and figures.
void runScenario(const LayerProfile &profile, const Cluster &cluster,
                 const ExploreOptions &o, double bNoise, ExploreRow &row) {
  search::SearchOptions so = o.search;
  so.globalBatch = row.globalBatch;
  so.topK = 1;
  so.objective = search::Objective::StepTime;
  so.pricePerGpuHour = 0;
  Result<search::SearchResult> res =
      search::searchPlans(profile, cluster, so, o.eval);
  if (!res) {
    row.why = res.message();
    return;
  }
  if (res->top.empty()) {
    row.why = res->noFit ? res->noFit->message : "nothing fits";
    return;
  }
  const search::Candidate &c = res->top[0];
  const Cluster &cl = res->clusters[size_t(c.clusterIndex)];
  row.fits = true;
  row.plan = plan::makePlan(profile, cl, c.config, c.eval);
  row.gpus = row.plan.gpus;
  row.iterationSeconds = c.eval.iterationSeconds;
  row.lowSeconds = row.plan.predicted.iterationLowSeconds;
  row.highSeconds = row.plan.predicted.iterationHighSeconds;
  row.tokensPerSecond = c.eval.tokensPerSecond;
  row.mfu = c.eval.mfu;
  boundOf(c.eval, row);
  double batchTokens = double(row.globalBatch) * double(o.seqLen);
  row.tokenFactor = bNoise > 0 ? 1 + batchTokens / bNoise : 1;
  row.steps = std::ceil(o.tokens * row.tokenFactor / batchTokens);
  row.timeToTrainSeconds = row.steps * row.iterationSeconds;
  row.gpuHours = row.timeToTrainSeconds / 3600 * double(row.gpus);
  row.costUsd = row.gpuHours * priceFor(o, row.gpu);
}

std::string days(double seconds) {
  return fmt::format("{:.1f}", seconds / 86400);
}

std::string money(double usd) {
  if (usd >= 1e6)
    return fmt::format("${:.2f}M", usd / 1e6);
  if (usd >= 1e3)
    return fmt::format("${:.1f}k", usd / 1e3);
  return fmt::format("${:.0f}", usd);
}

std::string varyText(const ExploreRow &r) {
  return r.varyKey.empty() ? "" : r.varyKey + "=" + r.varyValue.text;
}

std::string rowName(const ExploreRow &r) {
  std::string s =
      fmt::format("{} x {} node{} ({} GPUs), batch {}", r.preset, r.nodes,
                  r.nodes == 1 ? "" : "s", r.gpus, r.globalBatch);
  if (!r.varyKey.empty())
    s += ", " + varyText(r);
  return s;
}

} // namespace

std::string planSummary(const plan::Plan &p) {
  std::string s = fmt::format("dp{} tp{} pp{}", p.dp, p.tp, p.pp);
  if (p.cp > 1)
    s += fmt::format(" cp{}", p.cp);
  if (p.ep > 1)
    s += fmt::format(" ep{}", p.ep);
  if (p.vpp > 1)
    s += fmt::format(" vpp{}", p.vpp);
  s += fmt::format(" mb{} z{}", p.microBatch, p.zeroStage);
  if (p.recompute != Recompute::None)
    s += fmt::format(" rc-{}", recomputeName(p.recompute));
  return s;
}

std::string_view boundName(Bound b) {
  switch (b) {
  case Bound::Compute:
    return "compute";
  case Bound::Network:
    return "network";
  case Bound::Bubble:
    return "bubble";
  }
  return "compute";
}

Result<std::vector<ClusterSweep>> parseClusterSweeps(std::string_view text) {
  std::vector<ClusterSweep> out;
  if (trimBlanks(text).empty())
    return Status::error("--clusters: expected PRESET:N or PRESET:A..B, "
                         "comma-separated (e.g. dgx-h100:8..64)");
  for (std::string_view item : splitCommaList(text)) {
    size_t colon = item.rfind(':');
    auto bad = [&](const std::string &why) {
      return Status::error("--clusters: '" + std::string(item) + "': " + why);
    };
    if (colon == std::string_view::npos || colon == 0)
      return bad("expected PRESET:N or PRESET:A..B (node counts, doubling)");
    ClusterSweep s;
    s.preset = std::string(item.substr(0, colon));
    std::string_view range = item.substr(colon + 1);
    size_t dots = range.find("..");
    auto lo = parsePositive(range.substr(0, dots));
    auto hi = dots == std::string_view::npos
                  ? lo
                  : parsePositive(range.substr(dots + 2));
    if (!lo || !hi)
      return bad("node counts must be positive integers");
    if (*hi < *lo)
      return bad("the range is reversed (" + std::to_string(*lo) + " > " +
                 std::to_string(*hi) + ")");
    for (int64_t n = *lo; n <= *hi; n *= 2)
      s.nodes.push_back(n);
    // The preset must exist: checked on its smallest cluster.
    auto c = parseClusterSpec(s.preset + ":" + std::to_string(*lo));
    if (!c)
      return bad(c.message());
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::map<std::string, double>> parsePrices(std::string_view text) {
  std::map<std::string, double> out;
  if (trimBlanks(text).empty())
    return out;
  for (std::string_view item : splitCommaList(text)) {
    size_t eq = item.find('=');
    std::string_view key =
        eq == std::string_view::npos ? "" : item.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? item : item.substr(eq + 1);
    auto v = parseNumber(trimBlanks(value));
    if (!v || *v <= 0)
      return Status::error("--price-per-gpu-hour: '" + std::string(item) +
                           "': expected GPU=DOLLARS with a positive price "
                           "(e.g. h100=2.5), or one price for every GPU");
    std::string name = "*";
    if (!trimBlanks(key).empty()) {
      auto g = lookupGpu(trimBlanks(key));
      if (!g)
        return Status::error("--price-per-gpu-hour: '" + std::string(item) +
                             "': " + g.message());
      name = g->name;
    }
    out[name] = *v;
  }
  return out;
}

Result<std::vector<int64_t>> parseBatchList(std::string_view text) {
  std::vector<int64_t> out;
  if (trimBlanks(text) == "auto")
    return out;
  for (std::string_view item : splitCommaList(text)) {
    auto v = parsePositive(item);
    if (!v)
      return Status::error("--global-batch: '" + std::string(item) +
                           "': expected 'auto' or positive sequence counts, "
                           "comma-separated");
    out.push_back(*v);
  }
  return out;
}

namespace {
struct VaryKey {
  std::string_view key, unit;
};
constexpr VaryKey kVaryKeys[] = {
    {"gpu.bf16_tflops", "TFLOP/s"}, {"gpu.fp8_tflops", "TFLOP/s"},
    {"gpu.hbm_bw", "TB/s"},         {"gpu.hbm_bytes", "GB"},
    {"node.nic_bw", "Gb/s"},        {"node.nvlink_bw", "GB/s"},
    {"node.gpus_per_node", "GPUs"},
};
std::string varyKeyList() {
  std::string s;
  for (const VaryKey &k : kVaryKeys)
    s += (s.empty() ? "" : ", ") + std::string(k.key);
  return s;
}
} // namespace

Result<Vary> parseVary(std::string_view text) {
  size_t eq = text.find('=');
  Vary v;
  v.key = std::string(trimBlanks(text.substr(0, eq)));
  bool known = false;
  for (const VaryKey &k : kVaryKeys)
    known = known || k.key == v.key;
  if (eq == std::string_view::npos || !known)
    return Status::error("--vary: '" + std::string(text) +
                         "': expected KEY=V1,V2,... with KEY one of " +
                         varyKeyList());
  for (std::string_view item : splitCommaList(text.substr(eq + 1))) {
    VaryValue x;
    x.text = std::string(item);
    std::string_view num = item;
    if (!num.empty() && (num.back() == 'x' || num.back() == 'X')) {
      x.multiplier = true;
      num.remove_suffix(1);
    }
    auto d = parseNumber(num);
    if (!d || *d <= 0)
      return Status::error("--vary " + v.key + ": '" + std::string(item) +
                           "': expected a positive number, or a multiplier "
                           "such as 1.5x");
    if (v.key == "node.gpus_per_node" && !x.multiplier && *d != std::floor(*d))
      return Status::error("--vary node.gpus_per_node: '" + std::string(item) +
                           "': expected a whole number");
    x.value = *d;
    v.values.push_back(std::move(x));
  }
  return v;
}

Status applyVary(Cluster &cluster, const std::string &key, const VaryValue &v) {
  auto set = [&](double &field, double unit) {
    field = v.multiplier ? field * v.value : v.value * unit;
  };
  for (NodeGroup &g : cluster.groups) {
    if (key == "gpu.bf16_tflops") {
      set(g.gpu.peakBf16FlopsPerS, 1e12);
      g.gpu.peakFp16FlopsPerS = g.gpu.peakBf16FlopsPerS;
    } else if (key == "gpu.fp8_tflops") {
      set(g.gpu.peakFp8FlopsPerS, 1e12);
    } else if (key == "gpu.hbm_bw") {
      set(g.gpu.hbmBandwidthBytesPerS, 1e12);
    } else if (key == "gpu.hbm_bytes") {
      set(g.gpu.hbmBytes, 1e9);
    } else if (key == "node.nic_bw") {
      set(g.nic.bandwidthBytesPerS, 1e9 / 8);
    } else if (key == "node.nvlink_bw") {
      double before = g.intra.bandwidthBytesPerS;
      set(g.intra.bandwidthBytesPerS, 1e9);
      if (before > 0)
        g.intraAllToAllBytesPerS *= g.intra.bandwidthBytesPerS / before;
    } else if (key == "node.gpus_per_node") {
      double n = double(g.gpusPerNode);
      set(n, 1);
      if (n < 1 || n != std::floor(n))
        return Status::error("--vary node.gpus_per_node: " + v.text +
                             " gives " + fmt::format("{:g}", n) +
                             " GPUs per node; expected a whole number >= 1");
      g.gpusPerNode = int64_t(n);
    } else {
      return Status::error("--vary: unknown key '" + key + "' (expected " +
                           varyKeyList() + ")");
    }
    // Measured collective bandwidths describe the preset's hardware.
    if (key.starts_with("node."))
      g.collectiveCalibration.clear();
  }
  return Status::ok();
}

double defaultCriticalBatchTokens(double n, double d) {
  // Kaplan et al. 2020, Eq. 1.5 and Sec. 1.2: alpha_N = 0.076,
  // alpha_D = 0.095, N_c = 8.8e13 non-embedding parameters, D_c = 5.4e13
  // tokens; Eq. 1.4: B* = 2e8 tokens, alpha_B = 0.21. Loss in nats per
  // token of their WebText2 / GPT-2 tokenizer setting.
  const double alphaN = 0.076, alphaD = 0.095, nc = 8.8e13, dc = 5.4e13;
  const double bStar = 2e8, alphaB = 0.21;
  double loss = std::pow(std::pow(nc / n, alphaN / alphaD) + dc / d, alphaD);
  return bStar / std::pow(loss, 1 / alphaB);
}

Result<ExploreResult> exploreScenarios(const LayerProfile &profile,
                                       const ExploreOptions &o) {
  if (o.seqLen <= 0)
    return Status::error("--seq-len is required and must be positive");
  if (!(o.tokens > 0) || !std::isfinite(o.tokens))
    return Status::error("--tokens is required and must be positive");
  if (o.clusters.empty())
    return Status::error("--clusters is required (e.g. dgx-h100:8..64)");
  if (o.criticalBatchTokens < 0 || o.deadlineDays < 0 || o.budgetUsd < 0)
    return Status::error(
        "--critical-batch, --deadline-days and --budget must be positive");

  ExploreResult r;
  r.autoBatch = o.globalBatches.empty();
  if (o.criticalBatchTokens > 0) {
    r.criticalBatchTokens = o.criticalBatchTokens;
  } else if (r.autoBatch) {
    r.nonEmbeddingParams = nonEmbeddingParams(profile);
    r.criticalBatchTokens =
        defaultCriticalBatchTokens(r.nonEmbeddingParams, o.tokens);
    r.criticalBatchFromLaw = true;
  }

  // Every price names a GPU of the sweep.
  std::vector<std::string> sweptGpus;
  for (const ClusterSweep &s : o.clusters) {
    auto c = parseClusterSpec(s.preset + ":" + std::to_string(s.nodes[0]));
    if (!c)
      return c.status();
    sweptGpus.push_back(c->groups[0].gpu.name);
  }
  for (const auto &[gpu, price] : o.prices)
    if (gpu != "*" &&
        std::find(sweptGpus.begin(), sweptGpus.end(), gpu) == sweptGpus.end())
      return Status::error("--price-per-gpu-hour: " + gpu +
                           " is not a GPU of the sweep (--clusters)");
  if (o.budgetUsd > 0)
    for (const std::string &gpu : sweptGpus)
      if (priceFor(o, gpu) <= 0)
        return Status::error("--budget needs a price for every GPU of the "
                             "sweep (--price-per-gpu-hour), " +
                             gpu + " has none");

  // Automatic batches: powers of two sequences from B_noise / 64 up; the
  // scan of a scenario stops once time to train has grown twice in a row
  // (it is unimodal in practice: throughput saturates while the tokens
  // needed keep growing).
  std::vector<int64_t> autoBatches;
  if (r.autoBatch) {
    double bSeq = r.criticalBatchTokens / double(o.seqLen);
    int64_t lo = 1;
    while (double(lo) * 2 <= bSeq / 64)
      lo *= 2;
    for (int64_t b = lo; double(b) <= 8 * std::max(bSeq, 1.0); b *= 2)
      autoBatches.push_back(b);
  }

  // The presets as they are, then each what-if value.
  std::vector<std::pair<std::string, VaryValue>> variants = {{"", {}}};
  for (const Vary &v : o.varies)
    for (const VaryValue &x : v.values)
      variants.push_back({v.key, x});
  int64_t total = 0, done = 0;
  for (const ClusterSweep &s : o.clusters)
    total += int64_t(s.nodes.size()) * int64_t(variants.size()) *
             int64_t(r.autoBatch ? autoBatches.size() : o.globalBatches.size());
  for (size_t si = 0; si < o.clusters.size(); ++si) {
    const ClusterSweep &s = o.clusters[si];
    for (int64_t nodes : s.nodes) {
      for (const auto &[varyKey, varyValue] : variants) {
        auto cluster = parseClusterSpec(s.preset + ":" + std::to_string(nodes));
        if (!cluster)
          return cluster.status();
        if (!varyKey.empty())
          if (Status st = applyVary(*cluster, varyKey, varyValue); !st)
            return st;
        auto fresh = [&](int64_t batch) {
          ExploreRow row;
          row.gpu = sweptGpus[si];
          row.preset = s.preset;
          row.nodes = nodes;
          row.gpus = cluster->totalGpus();
          row.globalBatch = batch;
          row.varyKey = varyKey;
          row.varyValue = varyValue;
          return row;
        };
        if (!r.autoBatch) {
          for (int64_t batch : o.globalBatches) {
            ExploreRow row = fresh(batch);
            runScenario(profile, *cluster, o, r.criticalBatchTokens, row);
            ++r.scenariosSearched;
            r.rows.push_back(std::move(row));
            if (o.progress)
              o.progress(++done, total);
          }
          continue;
        }
        std::optional<ExploreRow> best;
        std::string lastWhy;
        int worse = 0;
        for (int64_t batch : autoBatches) {
          ExploreRow row = fresh(batch);
          runScenario(profile, *cluster, o, r.criticalBatchTokens, row);
          ++r.scenariosSearched;
          if (o.progress)
            o.progress(++done, total);
          if (!row.fits) {
            lastWhy = row.why;
            continue;
          }
          if (!best || row.timeToTrainSeconds < best->timeToTrainSeconds) {
            best = std::move(row);
            worse = 0;
          } else if (++worse == 2) {
            break;
          }
        }
        if (best) {
          r.rows.push_back(std::move(*best));
        } else {
          ExploreRow row = fresh(0);
          row.why = lastWhy.empty() ? "nothing fits" : lastWhy;
          r.rows.push_back(std::move(row));
        }
      }
    }
  }
  if (o.progress)
    o.progress(total, total);

  // Priced when every fitting row has a price; the frontier is time to
  // train against cost, else against GPU-hours.
  r.priced = !o.prices.empty();
  for (const ExploreRow &row : r.rows)
    if (row.fits && priceFor(o, row.gpu) <= 0)
      r.priced = false;
  auto spend = [&](const ExploreRow &row) {
    return r.priced ? row.costUsd : row.gpuHours;
  };
  for (ExploreRow &a : r.rows) {
    if (!a.fits)
      continue;
    a.pareto = true;
    for (const ExploreRow &b : r.rows) {
      if (!b.fits || &a == &b)
        continue;
      bool noWorse =
          b.timeToTrainSeconds <= a.timeToTrainSeconds && spend(b) <= spend(a);
      bool better =
          b.timeToTrainSeconds < a.timeToTrainSeconds || spend(b) < spend(a);
      if (noWorse && better) {
        a.pareto = false;
        break;
      }
    }
  }
  // The answers; ties go to the earlier row (sweep order).
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const ExploreRow &row = r.rows[i];
    if (!row.fits)
      continue;
    if (o.deadlineDays > 0 &&
        row.timeToTrainSeconds <= o.deadlineDays * 86400 &&
        (!r.deadlineAnswer || spend(row) < spend(r.rows[*r.deadlineAnswer])))
      r.deadlineAnswer = i;
    if (o.budgetUsd > 0 && row.costUsd <= o.budgetUsd &&
        (!r.budgetAnswer ||
         row.timeToTrainSeconds < r.rows[*r.budgetAnswer].timeToTrainSeconds))
      r.budgetAnswer = i;
  }
  return r;
}

std::string renderExploreText(const ExploreResult &r, const ExploreOptions &o) {
  std::string out;
  out += fmt::format("explore     {:.4g} tokens at seq {}, {} scenarios "
                     "searched\n",
                     o.tokens, o.seqLen, r.scenariosSearched);
  if (r.criticalBatchTokens > 0)
    out += fmt::format(
        "batch       {}critical batch B_noise {:.3g} tokens ({}); a batch of "
        "B tokens needs (1 + B / B_noise) x the tokens (McCandlish et al. "
        "2018)\n",
        r.autoBatch ? "chosen per scenario to minimise time to train; " : "",
        r.criticalBatchTokens,
        r.criticalBatchFromLaw
            ? fmt::format("Kaplan et al. 2020 scaling law at N = {:.3g} "
                          "non-embedding parameters, D = {:.3g} tokens",
                          r.nonEmbeddingParams, o.tokens)
            : std::string("--critical-batch"));
  auto describe = [&](const ExploreRow &row) {
    std::string s = fmt::format("{}: {} days, {:.0f} GPU-hours", rowName(row),
                                days(row.timeToTrainSeconds), row.gpuHours);
    if (row.costUsd > 0)
      s += ", " + money(row.costUsd);
    return s;
  };
  if (o.deadlineDays > 0)
    out +=
        r.deadlineAnswer
            ? fmt::format("deadline    {:g} days: cheapest that meets it: "
                          "{}\n",
                          o.deadlineDays, describe(r.rows[*r.deadlineAnswer]))
            : fmt::format("deadline    {:g} days: no scenario meets it\n",
                          o.deadlineDays);
  if (o.budgetUsd > 0)
    out +=
        r.budgetAnswer
            ? fmt::format("budget      {}: fastest within it: {}\n",
                          money(o.budgetUsd), describe(r.rows[*r.budgetAnswer]))
            : fmt::format("budget      {}: no scenario fits within it\n",
                          money(o.budgetUsd));
  out += fmt::format("frontier    time to train against {} (no scenario is "
                     "both faster and cheaper):\n",
                     r.priced ? "cost" : "GPU-hours");
  for (const ExploreRow &row : r.rows)
    if (row.pareto)
      out += "  " + describe(row) + "\n";
  out += "\n";
  out += fmt::format("{:<16} {:>5} {:>5} {:>6} {:>6}  {:<28} {:>9} {:>10} "
                     "{:>6} {:>8} {:>9} {:>7} {:>10} {:>9}\n",
                     "cluster", "nodes", "GPUs", "batch", "tok x", "plan",
                     "step (s)", "tokens/s", "MFU", "bound", "steps", "days",
                     "GPU-hours", "cost");
  for (const ExploreRow &row : r.rows) {
    if (!row.fits) {
      out += fmt::format("{:<16} {:>5} {:>5} {:>6} {:>6}  nothing fits: {}\n",
                         row.preset, row.nodes, row.gpus,
                         row.globalBatch ? std::to_string(row.globalBatch)
                                         : std::string("-"),
                         "-", row.why.substr(0, row.why.find('\n')));
      if (!row.varyKey.empty())
        out.insert(out.size() - 1, "  (" + varyText(row) + ")");
      continue;
    }
    out += fmt::format(
        "{:<16} {:>5} {:>5} {:>6} {:>6.2f}  {:<28} {:>9.3f} {:>10.0f} "
        "{:>5.1f}% {:>8} {:>9.0f} {:>7} {:>10.0f} {:>9}{}\n",
        row.preset, row.nodes, row.gpus, row.globalBatch, row.tokenFactor,
        planSummary(row.plan), row.iterationSeconds, row.tokensPerSecond,
        100 * row.mfu, boundName(row.bound), row.steps,
        days(row.timeToTrainSeconds), row.gpuHours,
        row.costUsd > 0 ? money(row.costUsd) : std::string("-"),
        row.pareto ? " *" : "");
    if (!row.varyKey.empty())
      out.insert(out.size() - 1, "  " + varyText(row));
  }
  out += "(* on the frontier; tok x: tokens needed over --tokens)\n";
  return out;
}

std::string renderExploreJson(const ExploreResult &r, const ExploreOptions &o) {
  json j;
  j["schema"] = "trident.explore/v1";
  j["seq_len"] = o.seqLen;
  j["tokens"] = o.tokens;
  j["auto_batch"] = r.autoBatch;
  if (r.criticalBatchTokens > 0)
    j["critical_batch_tokens"] = r.criticalBatchTokens;
  else
    j["critical_batch_tokens"] = nullptr;
  j["critical_batch_source"] = r.criticalBatchTokens <= 0 ? "none"
                               : r.criticalBatchFromLaw   ? "kaplan2020"
                                                          : "option";
  j["rows"] = json::array();
  for (const ExploreRow &row : r.rows) {
    json x;
    x["gpu"] = row.gpu;
    x["preset"] = row.preset;
    x["nodes"] = row.nodes;
    x["gpus"] = row.gpus;
    x["global_batch"] = row.globalBatch;
    if (row.varyKey.empty())
      x["vary"] = nullptr;
    else
      x["vary"] = {{"key", row.varyKey},
                   {"value", row.varyValue.value},
                   {"multiplier", row.varyValue.multiplier}};
    x["fits"] = row.fits;
    if (!row.fits) {
      x["why"] = row.why;
      j["rows"].push_back(std::move(x));
      continue;
    }
    x["plan"] = json::parse(plan::planToJson(row.plan));
    x["iteration_time_s"] = row.iterationSeconds;
    x["iteration_time_range_s"] = {row.lowSeconds, row.highSeconds};
    x["tokens_per_s"] = row.tokensPerSecond;
    x["mfu"] = row.mfu;
    x["bound"] = boundName(row.bound);
    x["step_parts_s"] = {{"compute", row.computeSeconds},
                         {"network", row.networkSeconds},
                         {"bubble", row.bubbleSeconds}};
    x["token_factor"] = row.tokenFactor;
    x["steps"] = row.steps;
    x["time_to_train_s"] = row.timeToTrainSeconds;
    x["gpu_hours"] = row.gpuHours;
    if (row.costUsd > 0)
      x["cost_usd"] = row.costUsd;
    else
      x["cost_usd"] = nullptr;
    x["pareto"] = row.pareto;
    j["rows"].push_back(std::move(x));
  }
  auto answer = [&](const std::optional<size_t> &a) -> json {
    if (!a)
      return nullptr;
    return int64_t(*a);
  };
  j["answers"] = {
      {"deadline_days",
       o.deadlineDays > 0 ? json(o.deadlineDays) : json(nullptr)},
      {"deadline_row", answer(r.deadlineAnswer)},
      {"budget_usd", o.budgetUsd > 0 ? json(o.budgetUsd) : json(nullptr)},
      {"budget_row", answer(r.budgetAnswer)}};
  return j.dump(2) + "\n";
}

} // namespace trident::explore
