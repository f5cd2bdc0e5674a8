//===- ScheduleCache.cpp - Shared cache of compiled schedules -------------===//

#include "trident/Schedule/ScheduleCache.h"

#include <mutex>

namespace trident {

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
  return map_.try_emplace(key, std::move(entry)).first->second;
}

size_t ScheduleCache::size() const {
  std::shared_lock lock(mutex_);
  return map_.size();
}

void ScheduleCache::clear() {
  std::unique_lock lock(mutex_);
  map_.clear();
}

ScheduleCache &ScheduleCache::global() {
  static ScheduleCache cache;
  return cache;
}

} // namespace trident
