//===- Partition.cpp - Layer-to-stage split by dynamic programming --------===//
//
// best[t][j]: the smallest possible slowest-stage time when blocks [0, j)
// are placed on stages 0..t-1. Stage t-1 takes blocks [i, j):
//   best[t][j] = min_i max(best[t-1][i], sec_{t-1}(i, j))
//                subject to mem_{t-1}(i, j) <= limit_{t-1}
// (PipeDream, SOSP'19, Sec. 3.1; memory limits and per-stage device types
// as in Metis, ATC'24, Sec. 4). Scanning i downward from j-1, both the
// stage time and its memory only grow, so the scan stops at the first i
// whose stage alone is already no better than the best found, or below
// the first i whose stage fits (found for all j by one sweep per stage):
// exact cuts that keep the scan short (about two stages' worth of blocks)
// without giving up optimality.
//
//===----------------------------------------------------------------------===//

#include "trident/Search/Partition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace trident::search {

namespace {

double rangeMax(const std::vector<double> &v, int64_t begin, int64_t end) {
  double m = 0;
  for (int64_t i = begin; i < end; ++i)
    m = std::max(m, v[size_t(i)]);
  return m;
}

/// Prefix sums and piecewise-constant runs of one LayerCosts.
struct Prefix {
  const LayerCosts *costs = nullptr;
  std::vector<double> sec, act, state;
  /// Start of each run of equal (peak act, gather) values, plus N.
  std::vector<int32_t> runStart;
};

double runMax(const Prefix &px, const std::vector<double> &v, int64_t begin,
              int64_t end) {
  // Values are constant within a run: visit one element per run.
  double m = 0;
  auto it = std::upper_bound(px.runStart.begin(), px.runStart.end(),
                             int32_t(begin));
  int64_t at = begin;
  while (at < end) {
    m = std::max(m, v[size_t(at)]);
    if (it == px.runStart.end())
      break;
    at = *it++;
  }
  return m;
}

} // namespace

namespace {

/// A stage's bytes from the sums over its blocks (state and activations)
/// and their maxima (peak activations, ZeRO-3 gather): the embedding and
/// head added where the stage holds them, the dynamic part grown by the
/// caching allocator's share. The one formula both the direct sum
/// (stageBytes) and the partition's prefix sums use.
double stageBytesOf(const StageDevice &dev, bool first, bool last, double state,
                    double act, double peak, double gather) {
  const LayerCosts &c = *dev.costs;
  if (first) {
    state += c.embeddingStateBytes;
    act += c.embeddingActBytes;
    peak = std::max(peak, c.embeddingPeakActBytes);
    gather = std::max(gather, c.embeddingGatherBytes);
  }
  if (last) {
    state += c.headStateBytes;
    act += c.headActBytes;
    peak = std::max(peak, c.headPeakActBytes);
    gather = std::max(gather, c.headGatherBytes);
  }
  return dev.fixedBytes + state +
         dev.dynamicScale * (double(dev.inFlight) * act + peak + gather);
}

/// Splits already found, keyed by everything the split depends on when no
/// stage has a memory limit (interleaved plans: their chunks' memory is
/// checked by the evaluation, not here): the stage count, the block count,
/// each stage's table of block seconds and its embedding and head seconds.
/// A search meets the same split for every ZeRO stage, data-parallel size
/// and micro-batch count of a family and for every pipeline depth with the
/// same chunk count (up to the model's depth), and `trident explore` meets
/// it again in every scenario on the same GPU type. The split is a pure
/// function of the key, so a hit gives exactly what the dynamic program
/// would; the stage bytes are recomputed for the caller's memory. One memo
/// per thread, keyed by content (callers reuse LayerCosts objects).
class SplitMemo {
public:
  struct Split {
    std::vector<int64_t> layers;
    double maxStageSeconds;
  };
  /// The key of `stages` whose prefix tables are `prefixOf`, `prefixes`.
  void makeKey(const std::vector<StageDevice> &stages, int64_t numBlocks,
               const std::vector<int32_t> &prefixOf, size_t used) {
    key_.clear();
    key_.push_back(double(stages.size()));
    key_.push_back(double(numBlocks));
    for (int32_t k : prefixOf)
      key_.push_back(double(k));
    std::vector<const LayerCosts *> seen(used, nullptr);
    for (size_t s = 0; s < stages.size(); ++s)
      seen[size_t(prefixOf[s])] = stages[s].costs;
    for (const LayerCosts *c : seen) {
      key_.push_back(c->embeddingSeconds);
      key_.push_back(c->headSeconds);
      key_.insert(key_.end(), c->blockSeconds.begin(),
                  c->blockSeconds.begin() + numBlocks);
    }
  }
  const Split *find() const {
    auto it = map_.find(key_);
    return it == map_.end() ? nullptr : &it->second;
  }
  void insert(Split split) {
    // Bounded: a thread's memo starts over past this many splits.
    if (map_.size() >= 4096)
      map_.clear();
    map_.emplace(key_, std::move(split));
  }

private:
  struct Hash {
    size_t operator()(const std::vector<double> &k) const {
      uint64_t h = 0x9E3779B97F4A7C15ull;
      for (double d : k) {
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        h = (h ^ bits) * 0x100000001B3ull;
        h ^= h >> 29;
      }
      return size_t(h);
    }
  };
  struct Equal {
    bool operator()(const std::vector<double> &a,
                    const std::vector<double> &b) const {
      return a.size() == b.size() &&
             std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
    }
  };
  std::vector<double> key_;
  std::unordered_map<std::vector<double>, Split, Hash, Equal> map_;
};

} // namespace

double stageBytes(const StageDevice &dev, bool first, bool last, int64_t begin,
                  int64_t end) {
  const LayerCosts &c = *dev.costs;
  double state = 0, act = 0;
  for (int64_t i = begin; i < end; ++i) {
    state += c.blockStateBytes[size_t(i)];
    act += c.blockActBytes[size_t(i)];
  }
  return stageBytesOf(dev, first, last, state, act,
                      rangeMax(c.blockPeakActBytes, begin, end),
                      rangeMax(c.blockGatherBytes, begin, end));
}

double pipelineFillBound(double work, int64_t m, int64_t pp) {
  if (m < 1 || pp < 1)
    return 0;
  const double filled =
      1 - std::pow(1 - 1 / double(m), double(pp)); // (0, 1]: m >= 1
  return work / filled;
}

double stageSeconds(const StageDevice &dev, bool first, bool last,
                    int64_t begin, int64_t end) {
  const LayerCosts &c = *dev.costs;
  double s = 0;
  for (int64_t i = begin; i < end; ++i)
    s += c.blockSeconds[size_t(i)];
  if (first)
    s += c.embeddingSeconds;
  if (last)
    s += c.headSeconds;
  return s;
}

PartitionResult partitionLayers(const std::vector<StageDevice> &stages,
                                int64_t numBlocks, PartitionWorkspace &ws) {
  PartitionResult r;
  const int64_t p = int64_t(stages.size()), N = numBlocks;
  if (p < 1 || N < p)
    return r;

  // Prefix tables, one per distinct device type (usually one).
  // One set per thread, reused across calls (the search loop must not
  // allocate once warm).
  thread_local std::vector<Prefix> prefixes;
  size_t used = 0;
  std::vector<int32_t> prefixOf(static_cast<size_t>(p), 0);
  for (int64_t s = 0; s < p; ++s) {
    const LayerCosts *c = stages[size_t(s)].costs;
    size_t k = 0;
    while (k < used && prefixes[k].costs != c)
      ++k;
    if (k == used) {
      if (prefixes.size() <= used)
        prefixes.emplace_back();
      Prefix &px = prefixes[used++];
      px.costs = c;
      px.sec.assign(size_t(N + 1), 0.0);
      px.act.assign(size_t(N + 1), 0.0);
      px.state.assign(size_t(N + 1), 0.0);
      px.runStart.clear();
      for (int64_t i = 0; i < N; ++i) {
        px.sec[size_t(i + 1)] = px.sec[size_t(i)] + c->blockSeconds[size_t(i)];
        px.act[size_t(i + 1)] = px.act[size_t(i)] + c->blockActBytes[size_t(i)];
        px.state[size_t(i + 1)] =
            px.state[size_t(i)] + c->blockStateBytes[size_t(i)];
        if (i > 0 &&
            (c->blockPeakActBytes[size_t(i)] !=
                 c->blockPeakActBytes[size_t(i - 1)] ||
             c->blockGatherBytes[size_t(i)] != c->blockGatherBytes[size_t(i - 1)]))
          px.runStart.push_back(int32_t(i));
      }
    }
    prefixOf[size_t(s)] = int32_t(k);
  }

  auto memOf = [&](int64_t s, int64_t i, int64_t j) {
    const Prefix &px = prefixes[size_t(prefixOf[size_t(s)])];
    const LayerCosts &c = *px.costs;
    return stageBytesOf(stages[size_t(s)], s == 0, s == p - 1,
                        px.state[size_t(j)] - px.state[size_t(i)],
                        px.act[size_t(j)] - px.act[size_t(i)],
                        runMax(px, c.blockPeakActBytes, i, j),
                        runMax(px, c.blockGatherBytes, i, j));
  };

  const double inf = std::numeric_limits<double>::infinity();
  // Each stage's memory from the split, as the dynamic program's result
  // carries it.
  auto finish = [&](const std::vector<int64_t> &layers, double maxSec) {
    r.feasible = true;
    r.maxStageSeconds = maxSec;
    r.layersPerStage = layers;
    r.stageBytes.assign(size_t(p), 0);
    int64_t at = 0;
    for (int64_t s = 0; s < p; ++s) {
      r.stageBytes[size_t(s)] = memOf(s, at, at + layers[size_t(s)]);
      at += layers[size_t(s)];
    }
  };
  const bool unlimited =
      std::all_of(stages.begin(), stages.end(), [&](const StageDevice &d) {
        return d.memoryLimitBytes == inf;
      });
  thread_local SplitMemo memo;
  if (unlimited) {
    memo.makeKey(stages, N, prefixOf, used);
    if (const SplitMemo::Split *hit = memo.find()) {
      finish(hit->layers, hit->maxStageSeconds);
      return r;
    }
  }
  const size_t W = size_t(N + 1);
  ws.best.assign(size_t(p + 1) * W, inf);
  std::vector<int32_t> &choice = ws.choice;
  choice.assign(size_t(p + 1) * W, -1);
  auto best = [&](int64_t t, int64_t j) -> double & {
    return ws.best[size_t(t) * W + size_t(j)];
  };
  best(0, 0) = 0;
  for (int64_t t = 1; t <= p; ++t) {
    const int64_t s = t - 1; // the stage being placed
    const int64_t jLo = t == p ? N : t, jHi = t == p ? N : N - (p - t);
    // The stage's prefix seconds and the previous row, hoisted: this loop
    // is most of the search's time.
    const double *sec = prefixes[size_t(prefixOf[size_t(s)])].sec.data();
    // A stage's seconds: the prefix difference of its blocks, plus the
    // embedding on the first stage and the head on the last.
    const LayerCosts &sc = *prefixes[size_t(prefixOf[size_t(s)])].costs;
    const double addFirst = s == 0 ? sc.embeddingSeconds : 0.0;
    const double addLast = s == p - 1 ? sc.headSeconds : 0.0;
    const double limit = stages[size_t(s)].memoryLimitBytes;
    const double *prevRow = &ws.best[size_t(t - 1) * W];
    bool any = false;
    // The stage's memory only grows with its end and with its length, so
    // the stages [i, j) that fit are those with i >= iMin, and iMin never
    // decreases with j: one sweep finds it for every j.
    int64_t iMin = s;
    for (int64_t j = jLo; j <= jHi; ++j) {
      double cur = inf;
      int32_t arg = -1;
      while (limit < inf && iMin < j && memOf(s, iMin, j) > limit)
        ++iMin;
      for (int64_t i = j - 1; i >= iMin; --i) {
        const double stageSec = sec[j] - sec[i] + addFirst + addLast;
        if (!(stageSec < cur))
          break; // a longer stage is never faster
        const double prev = prevRow[i];
        if (prev == inf)
          continue;
        const double v = std::max(prev, stageSec);
        if (v < cur) {
          cur = v;
          arg = int32_t(i);
        }
      }
      best(t, j) = cur;
      choice[size_t(t) * W + size_t(j)] = arg;
      any = any || cur < inf;
    }
    if (!any)
      return r; // no split of the first t stages fits
  }
  if (!(best(p, N) < inf))
    return r;
  std::vector<int64_t> layers(size_t(p), 0);
  int64_t j = N;
  for (int64_t t = p; t >= 1; --t) {
    int64_t i = choice[size_t(t) * W + size_t(j)];
    layers[size_t(t - 1)] = j - i;
    j = i;
  }
  finish(layers, best(p, N));
  if (unlimited)
    memo.insert({std::move(layers), r.maxStageSeconds});
  return r;
}

} // namespace trident::search
