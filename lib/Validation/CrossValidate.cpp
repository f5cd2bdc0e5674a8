//===- CrossValidate.cpp - Refitting the fitted constants, out of sample --===//
//
// `trident validate --fit` and `--cross-validate`. The constants of
// trident/Hardware/Fitted.h are refit per GPU generation by an exhaustive
// search over the grid each row of the table states (lo..hi by step, the
// generation's constants together), minimising the median |error| over the
// training cases on that generation's GPUs: a least-median estimate
// (Rousseeuw, "Least Median of Squares Regression", JASA 1984), which a
// minority of cases cannot move however large their errors. The constants
// say how fast a GPU runs its kernels; they should not bend to the few
// runs whose error comes from what the model lacks (narayanan21's ZeRO-3
// rows, +27 to +168 %, were 6 of the 40 A100 cases left when mpt was held
// out, and median + p90, the objective before, moved sustained.ampere from
// 0.89 to 0.78 to shorten them, under-predicting mpt's A100 runs by 10 to
// 20 %). Exhaustive so that no starting point (which would carry the
// published values, fitted on every source) can leak into a fold.
//
// Leave-one-source-out: for each source, the constants are refit without
// its cases and its cases are predicted with them; the errors of all folds
// together are the out-of-sample figure (docs/validation.md).
//
//===----------------------------------------------------------------------===//

#include "Prepared.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace trident::validation {

using detail::PreparedCase;
using detail::PreparedCases;

namespace {

constexpr FitGroup kGroups[] = {FitGroup::Ampere, FitGroup::Hopper};

/// The grid values of constant `i`: lo, lo + step, ..., hi.
std::vector<double> gridOf(size_t i) {
  const FittedConstant &f = kFittedConstants[i];
  int64_t n = int64_t(std::llround((f.hi - f.lo) / f.step)) + 1;
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k)
    v.push_back(std::round((f.lo + double(k) * f.step) * 1e6) / 1e6);
  return v;
}

/// Whether a case prices Megatron-Core's MoE layer: a model with experts
/// under a runtime with a host time for it (EvalOptions::
/// moeLayerHostSeconds).
bool pricesMoeLayer(const PreparedCase &p) {
  if (!p.profile || !(p.options.moeLayerHostSeconds > 0))
    return false;
  return std::any_of(p.profile->groups.begin(), p.profile->groups.end(),
                     [](const LayerGroup &g) { return g.cost.numExperts > 0; });
}

/// The errors of the cases at the fit values they have been evaluated at,
/// so that no case is evaluated twice at the same values: the grid
/// searches of every alternation and every fold (each fold refits on all
/// the cases but one source's) revisit the same points. A case's result
/// depends only on the constants that apply to it (those of its GPUs'
/// generations, the pooled ones, and the MoE layer's when its runtime
/// prices the layer; applyFit and evaluateCase scale by to / published,
/// exactly 1 for the others; only a layer with experts reads the MoE
/// layer's), so the key is the values with every other
/// constant at its published value. One lock per case: the threads of a
/// grid search evaluate different points of the same cases.
class EvaluationMemo {
public:
  explicit EvaluationMemo(const PreparedCases &prepared)
      : first(prepared.cases.data()), slots(prepared.cases.size()) {
    for (size_t k = 0; k < prepared.cases.size(); ++k)
      slots[k].relevant = relevantConstants(prepared.cases[k]);
  }

  /// The case's |error| at `values`; NaN when it does not evaluate.
  double error(const PreparedCase &p, const FitValues &values) {
    Slot &slot = slots[size_t(&p - first)];
    FitValues key = FitValues::published();
    for (size_t i = 0; i < kNumFitted; ++i)
      if (slot.relevant[i])
        key.values[i] = values.values[i];
    {
      std::lock_guard<std::mutex> lock(slot.mutex);
      auto it = slot.errors.find(key.values);
      if (it != slot.errors.end())
        return it->second;
    }
    CaseResult r = detail::evaluateCase(p, key);
    double e = r.outcome == CaseResult::Outcome::Evaluated ? r.error : NAN;
    std::lock_guard<std::mutex> lock(slot.mutex);
    slot.errors.emplace(key.values, e);
    return e;
  }

private:
  struct Slot {
    std::array<bool, kNumFitted> relevant{};
    std::map<std::array<double, kNumFitted>, double> errors;
    std::mutex mutex;
  };

  static std::array<bool, kNumFitted> relevantConstants(const PreparedCase &p) {
    std::array<bool, kNumFitted> relevant{};
    for (size_t i = 0; i < kNumFitted; ++i) {
      const FittedConstant &f = kFittedConstants[i];
      if (f.kind == FitKind::MoeHost) {
        relevant[i] = pricesMoeLayer(p);
        continue;
      }
      for (const NodeGroup &g : p.cluster.groups)
        if (auto group = fitGroupOf(g.gpu))
          relevant[i] = relevant[i] || appliesTo(f, *group, f.kind);
    }
    return relevant;
  }

  const PreparedCase *first;
  std::vector<Slot> slots;
};

/// The median |error| of `training` at `values`; infinity when none
/// evaluates.
double objective(const std::vector<const PreparedCase *> &training,
                 const FitValues &values, EvaluationMemo &memo) {
  std::vector<double> errors;
  errors.reserve(training.size());
  for (const PreparedCase *p : training) {
    double e = memo.error(*p, values);
    if (!std::isnan(e))
      errors.push_back(e);
  }
  if (errors.empty())
    return INFINITY;
  return errorStats(errors).median;
}

/// The grid points of the constants `members` (indices into
/// kFittedConstants), enumerated in grid order: point k sets each member
/// to its grid value at k's mixed-radix digit (the last member varies
/// fastest).
struct Grid {
  std::vector<size_t> members;
  std::vector<std::vector<double>> values;
  int64_t size() const {
    int64_t total = 1;
    for (const auto &g : values)
      total *= int64_t(g.size());
    return total;
  }
  void set(FitValues &v, int64_t point) const {
    for (size_t m = members.size(); m-- > 0;) {
      int64_t n = int64_t(values[m].size());
      v.values[members[m]] = values[m][size_t(point % n)];
      point /= n;
    }
  }
};

Grid gridFor(FitGroup group) {
  Grid g;
  for (size_t i = 0; i < kNumFitted; ++i)
    if (kFittedConstants[i].group == group) {
      g.members.push_back(i);
      g.values.push_back(gridOf(i));
    }
  return g;
}

/// The point of `grid` (the other constants as in `base`) that minimises
/// the median |error| of `training`: the first in grid order among equals.
/// Each point is independent; the threads split the points, and the
/// choice reads them in grid order, so the result never depends on the
/// thread count. Returns the point's values and its objective.
std::pair<FitValues, double>
searchGrid(const Grid &grid, const FitValues &base,
           const std::vector<const PreparedCase *> &training, int threads,
           EvaluationMemo &memo) {
  const int64_t total = grid.size();
  std::vector<double> scores(size_t(total), INFINITY);
  int workers = std::max(1, std::min<int>(threads, int(total)));
  auto work = [&](int t) {
    for (int64_t k = t; k < total; k += workers) {
      FitValues v = base;
      grid.set(v, k);
      scores[size_t(k)] = objective(training, v, memo);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &th : pool)
    th.join();
  int64_t best = 0;
  for (int64_t k = 1; k < total; ++k)
    if (scores[size_t(k)] < scores[size_t(best)])
      best = k;
  FitValues v = base;
  grid.set(v, best);
  return {v, scores[size_t(best)]};
}

/// One pass of the fit from `start`. Each generation's own constants
/// minimise the median |error| over its cases (the MoE runs among them).
/// A pooled constant (FitGroup::Pooled, one value for every generation) is
/// profiled: at each of its grid values the generations' constants are
/// fitted as above, and the value whose fits give the least median
/// |error| over every generation's cases together is kept. Then the MoE
/// layer's constants (FitGroup::Moe) minimise the median |error| over the
/// cases that price the layer, the GPUs' constants as fitted. A group
/// without training cases keeps its value in `start`.
FitReport fitOnce(const PreparedCases &prepared,
                  const std::function<bool(const Case &)> &include,
                  const FitValues &start, int threads, EvaluationMemo &memo) {
  FitReport report;
  std::vector<std::vector<const PreparedCase *>> training(std::size(kGroups));
  std::vector<const PreparedCase *> all, moe;
  for (const PreparedCase &p : prepared.cases) {
    if (!p.profile || (include && !include(*p.c)))
      continue;
    if (pricesMoeLayer(p) && p.group)
      moe.push_back(&p);
    for (size_t gi = 0; gi < std::size(kGroups); ++gi)
      if (p.group == kGroups[gi]) {
        training[gi].push_back(&p);
        all.push_back(&p);
      }
  }
  const Grid pooled = gridFor(FitGroup::Pooled);
  std::vector<Grid> grids;
  for (FitGroup group : kGroups)
    grids.push_back(gridFor(group));

  struct Candidate {
    FitValues values;
    std::vector<double> groupObjective;
    double objective = INFINITY;
  };
  auto fitAt = [&](int64_t point) {
    Candidate c;
    c.values = start;
    pooled.set(c.values, point);
    for (size_t gi = 0; gi < std::size(kGroups); ++gi) {
      double obj = NAN;
      if (!training[gi].empty())
        std::tie(c.values, obj) =
            searchGrid(grids[gi], c.values, training[gi], threads, memo);
      c.groupObjective.push_back(obj);
    }
    c.objective = all.empty() ? INFINITY : objective(all, c.values, memo);
    return c;
  };
  Candidate best = fitAt(0);
  for (int64_t k = 1; k < pooled.size(); ++k) {
    Candidate c = fitAt(k);
    if (c.objective < best.objective)
      best = std::move(c);
  }
  report.values = best.values;
  for (size_t gi = 0; gi < std::size(kGroups); ++gi) {
    GroupFit gf;
    gf.group = kGroups[gi];
    gf.cases = int64_t(training[gi].size());
    gf.objective = best.groupObjective[gi];
    gf.gridPoints = training[gi].empty() ? 0 : grids[gi].size();
    report.groups.push_back(gf);
  }
  if (!pooled.members.empty()) {
    GroupFit gf;
    gf.group = FitGroup::Pooled;
    gf.cases = int64_t(all.size());
    gf.objective = best.objective;
    gf.gridPoints = pooled.size();
    report.groups.push_back(gf);
  }
  const Grid moeGrid = gridFor(FitGroup::Moe);
  if (!moeGrid.members.empty()) {
    GroupFit gf;
    gf.group = FitGroup::Moe;
    gf.cases = int64_t(moe.size());
    gf.objective = NAN;
    if (!moe.empty()) {
      std::tie(report.values, gf.objective) =
          searchGrid(moeGrid, report.values, moe, threads, memo);
      gf.gridPoints = moeGrid.size();
    }
    report.groups.push_back(gf);
  }
  return report;
}

/// The GPUs' constants are fitted on runs that include the MoE ones, and
/// the MoE constants at the GPUs' fitted values, so each fit moves the
/// other's optimum: the two alternate from the published values until a
/// state repeats (at most kMaxAlternations), and of the states in that
/// cycle the one with the least summed objective is kept (ties: the least
/// values, in table order), so the result does not depend on where the
/// alternation started within the cycle.
constexpr int kMaxAlternations = 8;

FitReport fitPrepared(const PreparedCases &prepared,
                      const std::function<bool(const Case &)> &include,
                      int threads, EvaluationMemo &memo) {
  std::vector<FitReport> seen;
  FitValues start = FitValues::published();
  size_t cycleStart = 0;
  for (int i = 0; i < kMaxAlternations; ++i) {
    FitReport r = fitOnce(prepared, include, start, threads, memo);
    auto again =
        std::find_if(seen.begin(), seen.end(),
                     [&](const FitReport &s) { return s.values == r.values; });
    if (again != seen.end()) {
      cycleStart = size_t(again - seen.begin());
      break;
    }
    start = r.values;
    seen.push_back(std::move(r));
  }
  auto total = [](const FitReport &r) {
    double t = 0;
    for (const GroupFit &g : r.groups)
      if (std::isfinite(g.objective))
        t += g.objective;
    return t;
  };
  size_t best = cycleStart;
  for (size_t k = cycleStart + 1; k < seen.size(); ++k) {
    double a = total(seen[k]), b = total(seen[best]);
    if (a < b || (a == b && seen[k].values.values < seen[best].values.values))
      best = k;
  }
  return seen[best];
}

/// The q-quantile of `v` (sorted here), interpolated as errorStats does.
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

bool evaluated(const CrossValidation &cv, size_t i) {
  return cv.outOfSample.results[i].outcome == CaseResult::Outcome::Evaluated &&
         !cv.gpuNames[i].empty();
}

/// measured / predicted step time of case i, out of sample.
double timeRatio(const CrossValidation &cv, size_t i) {
  return 1 + cv.outOfSample.results[i].error;
}

/// The residuals of the regime of case `i` at the deepest level holding
/// kMinRegimeCases runs, among the cases `use` accepts.
template <typename Use>
std::vector<double> regimeResiduals(const CrossValidation &cv, size_t i,
                                    Use use) {
  for (int level = RegimeKey::kLevels; level >= 0; --level) {
    std::string name = cv.regimes[i].name(level);
    std::vector<double> r;
    for (size_t j = 0; j < cv.regimes.size(); ++j)
      if (evaluated(cv, j) && use(j) && cv.regimes[j].name(level) == name)
        r.push_back(timeRatio(cv, j));
    if (int64_t(r.size()) >= kMinRegimeCases || level == 0)
      return r;
  }
  return {};
}

/// An interval's end `factor` widened by `lambda` in log space about the
/// regime's median `mid`.
double widen(double factor, double mid, double lambda) {
  return mid * std::exp(lambda * std::log(factor / mid));
}

/// Coverage of the 80 % intervals, each built without the case's source.
/// Sources err in their own direction, so intervals from the other sources'
/// residuals alone cover too little; the widening lambda, the smallest on
/// a 0.1 grid from 1 whose intervals cover kIntervalHighQuantile -
/// kIntervalLowQuantile of the cases, calibrates them (one constant,
/// fitted on these nested folds; docs/cost-model.md, Uncertainty).
void intervalCoverage(CrossValidation &cv) {
  struct Nested {
    double x, lo, mid, hi;
  };
  std::vector<Nested> nested;
  for (size_t i = 0; i < cv.regimes.size(); ++i) {
    if (!evaluated(cv, i))
      continue;
    const std::string source = cv.outOfSample.results[i].c->foldKey();
    std::vector<double> r = regimeResiduals(cv, i, [&](size_t j) {
      return cv.outOfSample.results[j].c->foldKey() != source;
    });
    if (r.empty())
      continue;
    nested.push_back({timeRatio(cv, i), quantile(r, kIntervalLowQuantile),
                      quantile(r, 0.5), quantile(r, kIntervalHighQuantile)});
  }
  auto hits = [&](double lambda) {
    int64_t n = 0;
    for (const Nested &c : nested)
      n += c.x >= widen(c.lo, c.mid, lambda) &&
           c.x <= widen(c.hi, c.mid, lambda);
    return n;
  };
  cv.intervalCases = int64_t(nested.size());
  cv.unwidenedHits = hits(1.0);
  double target = kIntervalHighQuantile - kIntervalLowQuantile;
  cv.intervalWidening = 1.0;
  for (int k = 0; k <= 40; ++k) {
    double lambda = 1.0 + 0.1 * k;
    cv.intervalWidening = lambda;
    if (double(hits(lambda)) >= target * double(cv.intervalCases))
      break;
  }
  cv.intervalHits = hits(cv.intervalWidening);
}

} // namespace

std::string renderEnvelope(const CrossValidation &cv,
                           const std::string &command) {
  std::string out = fmt::format(
      "// Generated by `{}` from the out-of-sample residuals of the\n"
      "// published runs (docs/cost-model.md, Uncertainty); do not edit. Read\n"
      "// by lib/Cost/Envelope.cpp; test/tools/envelope-current.test checks\n"
      "// that it is current.\n\n",
      command);
  // Regimes at every level: measured / predicted step time, 10th and
  // 90th percentile.
  std::map<std::string, std::vector<double>> regimes;
  for (size_t i = 0; i < cv.regimes.size(); ++i)
    if (evaluated(cv, i))
      for (int level = 0; level <= RegimeKey::kLevels; ++level)
        regimes[cv.regimes[i].name(level)].push_back(timeRatio(cv, i));
  out += fmt::format(
      "// regime (gpu/precision/experts/pp/tp/zero3), runs, measured / "
      "predicted step time at the 10th and 90th percentile, widened by "
      "{:.1f} in log space about the median\n",
      cv.intervalWidening);
  out += "constexpr RegimeResiduals kRegimeResiduals[] = {\n";
  for (const auto &[name, r] : regimes)
    if (int64_t(r.size()) >= kMinRegimeCases || name == RegimeKey().name(0))
      out +=
          fmt::format("    {{\"{}\", {}, {:.4f}, {:.4f}}},\n", name, r.size(),
                      widen(quantile(r, kIntervalLowQuantile), quantile(r, 0.5),
                            cv.intervalWidening),
                      widen(quantile(r, kIntervalHighQuantile),
                            quantile(r, 0.5), cv.intervalWidening));
  out += "};\n\n";
  // Highest measured MFU per GPU and precision (measured = predicted MFU x
  // measured / predicted throughput, the model FLOPs being the same).
  std::map<std::pair<std::string, std::string>, std::pair<double, std::string>>
      mfu;
  for (size_t i = 0; i < cv.regimes.size(); ++i) {
    if (!evaluated(cv, i))
      continue;
    const CaseResult &r = cv.inSampleReport.results[i];
    double measured =
        r.mfu * r.c->measuredTokensPerSecPerGpu / r.predictedTokensPerSecPerGpu;
    auto key = std::make_pair(
        cv.gpuNames[i], std::string(cv.regimes[i].fp8 ? "fp8" : "16-bit"));
    auto it = mfu.find(key);
    if (it == mfu.end() || measured > it->second.first)
      mfu[key] = {measured, r.c->id};
  }
  out += "// GPU, precision, highest measured MFU, the run\n";
  out += "constexpr MfuCeiling kMfuCeilings[] = {\n";
  for (const auto &[key, v] : mfu)
    out += fmt::format("    {{\"{}\", \"{}\", {:.4f}, \"{}\"}},\n", key.first,
                       key.second, v.first, v.second);
  out += "};\n\n";
  std::map<std::string, int64_t> axes;
  for (size_t i = 0; i < cv.regimes.size(); ++i) {
    if (!evaluated(cv, i))
      continue;
    const ParallelConfig &c = cv.outOfSample.results[i].c->config;
    for (auto [name, v] :
         std::initializer_list<std::pair<const char *, int64_t>>{
             {"gpus", c.dp * c.tp * c.pp * c.cp},
             {"tp", c.tp},
             {"pp", c.pp},
             {"dp", c.dp},
             {"cp", c.cp},
             {"ep", c.ep},
             {"vpp", c.vpp},
             {"seq_len", cv.seqLens[i]}})
      axes[name] = std::max(axes[name], v);
  }
  out += "// axis, the largest size a validated run used\n";
  out += "constexpr AxisCeiling kAxisCeilings[] = {\n";
  for (const auto &[name, v] : axes)
    out += fmt::format("    {{\"{}\", {}}},\n", name, v);
  out += "};\n\n";
  // The settings each run used (a context-parallel exchange the case does
  // not name is its runtime's).
  std::map<std::string, int64_t> settings;
  for (const std::string_view kind : trident::detail::kCpCommChoices)
    settings["cp_comm_type " + std::string(kind)] = 0;
  for (const std::string_view recipe : trident::detail::kFp8RecipeChoices)
    settings["fp8_recipe " + std::string(recipe)] = 0;
  settings["tp_comm_overlap"] = 0;
  for (size_t i = 0; i < cv.regimes.size(); ++i) {
    if (!evaluated(cv, i))
      continue;
    const Case &k = *cv.outOfSample.results[i].c;
    ParallelConfig config = k.config;
    EvalOptions preset;
    applyRuntime(preset, k.runtime);
    stateSettings(config, preset);
    for (const std::string &name : settingsUsed(config))
      ++settings[name];
  }
  out += "// setting, the validated runs that used it\n";
  out += "constexpr SettingRuns kSettingRuns[] = {\n";
  for (const auto &[name, n] : settings)
    out += fmt::format("    {{\"{}\", {}}},\n", name, n);
  out += "};\n";
  return out;
}

FitReport fitConstants(const std::vector<Case> &cases,
                       const std::function<bool(const Case &)> &include,
                       int threads) {
  PreparedCases prepared = detail::prepareCases(cases, {}, std::nullopt);
  EvaluationMemo memo(prepared);
  return fitPrepared(prepared, include, threads, memo);
}

CrossValidation crossValidate(const std::vector<Case> &cases, int threads) {
  PreparedCases prepared = detail::prepareCases(cases, {}, std::nullopt);
  CrossValidation cv;
  EvaluationMemo memo(prepared);
  cv.inSample = fitPrepared(prepared, {}, threads, memo);
  for (const PreparedCase &p : prepared.cases)
    cv.inSampleReport.results.push_back(
        detail::evaluateCase(p, cv.inSample.values));
  summarize(cv.inSampleReport);

  std::set<std::string> sources;
  for (const PreparedCase &p : prepared.cases)
    if (p.profile)
      sources.insert(p.c->foldKey());
  std::map<std::string, FitValues> byFold;
  for (const std::string &source : sources) {
    Fold fold;
    fold.heldOut = source;
    fold.fit = fitPrepared(
        prepared, [&](const Case &c) { return c.foldKey() != source; }, threads,
        memo);
    byFold[source] = fold.fit.values;
    cv.folds.push_back(std::move(fold));
  }
  for (const PreparedCase &p : prepared.cases) {
    auto it = byFold.find(p.c->foldKey());
    cv.outOfSample.results.push_back(detail::evaluateCase(
        p, it == byFold.end() ? cv.inSample.values : it->second));
    RegimeKey key;
    std::string gpu;
    if (p.profile) {
      key = regimeOf(*p.profile, p.cluster, p.c->config);
      gpu = p.cluster.groups.front().gpu.name;
    }
    cv.regimes.push_back(key);
    cv.gpuNames.push_back(gpu);
    cv.seqLens.push_back(p.c->seqLen);
  }
  summarize(cv.outOfSample);
  intervalCoverage(cv);
  return cv;
}

} // namespace trident::validation
