//===- ScheduleCache.cpp - Shared cache of compiled schedules -------------===//

#include "trident/Schedule/ScheduleCache.h"

#include <algorithm>
#include <mutex>

namespace trident {

namespace {

/// What an entry holds, roughly: per action its op (12 bytes), its list
/// position (4) and its place in the schedule's per-stage lists (about
/// 16), plus the per-stage vectors.
size_t entryBytes(const CompiledSchedule &c) {
  return size_t(c.numActions()) * 32 + size_t(c.p()) * 64 + 256;
}

} // namespace

size_t ScheduleCache::KeyHash::operator()(const Key &k) const {
  // p <= 4096 and p*m*v <= 2^24 keep the fields small; mix them so that
  // neighbouring keys land in different buckets.
  uint64_t h = static_cast<uint64_t>(k.kind);
  h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.p);
  h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.m);
  h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.v);
  return static_cast<size_t>(h ^ (h >> 29));
}

Result<ScheduleCache::Entry> ScheduleCache::get(ScheduleKind kind, int64_t p,
                                                int64_t m, int64_t v) {
  // Reject before narrowing to the key's 32-bit fields.
  if (Status st = checkScheduleParams(kind, p, m, v); !st)
    return st;
  Key key{kind, static_cast<int32_t>(p), static_cast<int32_t>(m),
          static_cast<int32_t>(v)};
  {
    std::shared_lock lock(mutex_);
    if (auto it = map_.find(key); it != map_.end())
      return it->second;
  }
  // Build outside the lock: a large schedule takes milliseconds and other
  // keys should not wait for it. Two threads may both build the same key;
  // the results are identical and the first insert wins.
  Result<Schedule> built = buildSchedule(kind, p, m, v);
  if (!built)
    return built.status();
  Result<CompiledSchedule> compiled = compileSchedule(std::move(*built));
  if (!compiled)
    return compiled.status();
  auto entry = std::make_shared<const CompiledSchedule>(std::move(*compiled));
  std::unique_lock lock(mutex_);
  if (auto it = map_.find(key); it != map_.end())
    return it->second; // another thread inserted it meanwhile
  size_t size = entryBytes(*entry);
  if (budget_ > 0 && bytes_ + size > budget_) {
    map_.clear();
    bytes_ = 0;
  }
  bytes_ += size;
  return map_.emplace(key, std::move(entry)).first->second;
}

Result<ScheduleCache::Simulated>
ScheduleCache::getSimulated(ScheduleKind kind, int64_t p, int64_t m, int64_t v,
                            int attempt) {
  if (Status st = checkScheduleParams(kind, p, m, v); !st)
    return st;
  Simulated out;
  out.kind = kind, out.p = p, out.m = m, out.v = v;
  auto whole = [&]() -> Result<Simulated> {
    Result<Entry> full = get(kind, p, m, v);
    if (!full)
      return full.status();
    out.schedule = *full;
    return out;
  };
  // A period is one micro-batch of 1F1B, p of interleaved (one round of
  // Megatron-LM's micro-batch groups). The shortest schedule tried holds
  // about 8 periods beside its warm-up and cool-down (about 2p micro-batches
  // of 1F1B, 2 periods of interleaved): time for the simulation to settle,
  // which it does within a few periods unless two of the pipeline's cycles
  // take almost the same time. Each further attempt is 8 times longer.
  const bool interleaved = kind == ScheduleKind::Interleaved1F1B;
  const int64_t perPeriod = interleaved ? p : 1;
  const int64_t periods = (interleaved ? 10 : 2 * p + 8)
                          << (3 * std::min(attempt, 8));
  int64_t shortM = kind == ScheduleKind::GPipe ? m : periods * perPeriod;
  if (shortM >= m)
    return whole();
  Result<Entry> e = get(kind, p, shortM, v);
  if (!e)
    return e.status();
  const CompiledSchedule::SteadyState &ss = (*e)->steadyState();
  if (ss.ops == 0 || ss.microBatches != perPeriod ||
      (m - shortM) % perPeriod != 0)
    return whole();
  out.schedule = *e;
  out.extraPeriods = (m - shortM) / perPeriod;
  return out;
}

Result<MakespanResult> simulateMakespan(ScheduleCache &cache,
                                        const ScheduleCache::Simulated &s,
                                        const PipelineCosts &costs,
                                        SimWorkspace &ws,
                                        std::span<double> stageIdleSeconds) {
  const ScheduleCache::Simulated *at = &s;
  ScheduleCache::Simulated longer;
  for (int attempt = 1;; ++attempt) {
    bool settled = false;
    Result<MakespanResult> r = simulateMakespan(
        *at->schedule, costs, ws, stageIdleSeconds, at->extraPeriods, &settled);
    if (!r || settled)
      return r;
    Result<ScheduleCache::Simulated> next =
        cache.getSimulated(s.kind, s.p, s.m, s.v, attempt);
    if (!next)
      return next.status();
    longer = std::move(*next);
    at = &longer;
  }
}

size_t ScheduleCache::bytes() const {
  std::shared_lock lock(mutex_);
  return bytes_;
}

void ScheduleCache::setByteBudget(size_t bytes) {
  std::unique_lock lock(mutex_);
  budget_ = bytes;
}

size_t ScheduleCache::size() const {
  std::shared_lock lock(mutex_);
  return map_.size();
}

void ScheduleCache::clear() {
  std::unique_lock lock(mutex_);
  map_.clear();
  bytes_ = 0;
}

ScheduleCache &ScheduleCache::global() {
  static ScheduleCache cache;
  return cache;
}

} // namespace trident
