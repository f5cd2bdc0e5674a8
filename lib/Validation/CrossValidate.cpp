//===- CrossValidate.cpp - Refitting the fitted constants, out of sample --===//
//
// `trident validate --fit` and `--cross-validate`. The constants of
// trident/Hardware/Fitted.h are refit per GPU generation by an exhaustive
// search over the grid each row of the table states (lo..hi by step, the
// generation's constants together), minimising median + 90th percentile of
// |error| over the training cases on that generation's GPUs. Exhaustive so
// that no starting point (which would carry the published values, fitted
// on every source) can leak into a fold.
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
#include <set>
#include <thread>

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

/// median + p90 of |error| of `training` at `values`; infinity when none
/// evaluates.
double objective(const std::vector<const PreparedCase *> &training,
                 const FitValues &values) {
  std::vector<double> errors;
  errors.reserve(training.size());
  for (const PreparedCase *p : training) {
    CaseResult r = detail::evaluateCase(*p, values);
    if (r.outcome == CaseResult::Outcome::Evaluated)
      errors.push_back(r.error);
  }
  if (errors.empty())
    return INFINITY;
  ErrorStats s = errorStats(errors);
  return s.median + s.p90;
}

FitReport fitPrepared(const PreparedCases &prepared,
                      const std::function<bool(const Case &)> &include,
                      int threads) {
  FitReport report;
  report.values = FitValues::published();
  for (FitGroup group : kGroups) {
    GroupFit gf;
    gf.group = group;
    std::vector<const PreparedCase *> training;
    for (const PreparedCase &p : prepared.cases)
      if (p.profile && p.group == group && (!include || include(*p.c)))
        training.push_back(&p);
    gf.cases = int64_t(training.size());
    std::vector<size_t> members;
    std::vector<std::vector<double>> grids;
    for (size_t i = 0; i < kNumFitted; ++i)
      if (kFittedConstants[i].group == group) {
        members.push_back(i);
        grids.push_back(gridOf(i));
      }
    if (training.empty()) {
      gf.objective = NAN;
      report.groups.push_back(gf);
      continue;
    }
    int64_t total = 1;
    for (const auto &g : grids)
      total *= int64_t(g.size());
    gf.gridPoints = total;
    auto pointValues = [&](int64_t point) {
      FitValues v = report.values;
      for (size_t m = members.size(); m-- > 0;) {
        int64_t n = int64_t(grids[m].size());
        v.values[members[m]] = grids[m][size_t(point % n)];
        point /= n;
      }
      return v;
    };
    // Each point is independent; the threads split the points, and the
    // choice below reads them in grid order, so the result never depends
    // on the thread count.
    std::vector<double> scores(size_t(total), INFINITY);
    int workers = std::max(1, std::min<int>(threads, int(total)));
    auto work = [&](int t) {
      for (int64_t k = t; k < total; k += workers)
        scores[size_t(k)] = objective(training, pointValues(k));
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
    report.values = pointValues(best);
    gf.objective = scores[size_t(best)];
    report.groups.push_back(gf);
  }
  return report;
}

} // namespace

FitReport fitConstants(const std::vector<Case> &cases,
                       const std::function<bool(const Case &)> &include,
                       int threads) {
  PreparedCases prepared = detail::prepareCases(cases, {}, std::nullopt);
  return fitPrepared(prepared, include, threads);
}

CrossValidation crossValidate(const std::vector<Case> &cases, int threads) {
  PreparedCases prepared = detail::prepareCases(cases, {}, std::nullopt);
  CrossValidation cv;
  cv.inSample = fitPrepared(prepared, {}, threads);
  for (const PreparedCase &p : prepared.cases)
    cv.inSampleReport.results.push_back(
        detail::evaluateCase(p, cv.inSample.values));
  summarize(cv.inSampleReport);

  std::set<std::string> sources;
  for (const PreparedCase &p : prepared.cases)
    if (p.profile)
      sources.insert(p.c->sourceGroup);
  std::map<std::string, FitValues> byFold;
  for (const std::string &source : sources) {
    Fold fold;
    fold.heldOut = source;
    fold.fit = fitPrepared(
        prepared, [&](const Case &c) { return c.sourceGroup != source; },
        threads);
    byFold[source] = fold.fit.values;
    cv.folds.push_back(std::move(fold));
  }
  for (const PreparedCase &p : prepared.cases) {
    auto it = byFold.find(p.c->sourceGroup);
    cv.outOfSample.results.push_back(detail::evaluateCase(
        p, it == byFold.end() ? cv.inSample.values : it->second));
  }
  summarize(cv.outOfSample);
  return cv;
}

} // namespace trident::validation
