//===- ScheduleCache.h - Shared cache of compiled schedules -----*- C++ -*-===//
//
// The search evaluates many plans with the same (kind, p, m, v); building and
// compiling the schedule is O(p*m*v) with allocations, simulating it is one
// pass over flat arrays. The cache makes the former happen once per key.
//
// Thread-safe: lookups take a shared lock; a miss builds outside the lock
// and the first insert wins. Deterministic: the entry is a pure function of
// the key, so which thread builds it cannot change any result. Callers in a
// hot loop should look up once and keep the shared_ptr.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SCHEDULE_SCHEDULECACHE_H
#define TRIDENT_SCHEDULE_SCHEDULECACHE_H

#include "trident/Schedule/Schedule.h"
#include "trident/Schedule/Simulator.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

namespace trident {

class ScheduleCache {
public:
  using Entry = std::shared_ptr<const CompiledSchedule>;

  /// The compiled schedule for (kind, p, m, v), built on first use. Bad
  /// parameters give the buildSchedule() error (errors are not cached).
  Result<Entry> get(ScheduleKind kind, int64_t p, int64_t m, int64_t v = 1);

  /// Entries held.
  size_t size() const;
  /// Drops every entry (holders of an Entry keep theirs alive).
  void clear();

  /// A process-wide cache.
  static ScheduleCache &global();

private:
  struct Key {
    ScheduleKind kind;
    int32_t p, m, v;
    bool operator==(const Key &) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key &k) const;
  };
  mutable std::shared_mutex mutex_;
  std::unordered_map<Key, Entry, KeyHash> map_;
};

} // namespace trident

#endif // TRIDENT_SCHEDULE_SCHEDULECACHE_H
