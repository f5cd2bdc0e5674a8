//===- ScheduleCache.h - Shared cache of compiled schedules -----*- C++ -*-===//
//
// The search evaluates many plans with the same (kind, p, m, v); building and
// compiling the schedule is O(p*m*v) with allocations, simulating it is one
// pass over flat arrays. The cache makes the former happen once per key.
//
// Thread-safe: lookups take a shared lock; a miss builds outside the lock
// and the first insert wins. Bounded: past a byte budget the cache starts
// over. Deterministic: the entry is a pure function of
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
#include <span>
#include <unordered_map>

namespace trident {

class ScheduleCache {
public:
  using Entry = std::shared_ptr<const CompiledSchedule>;

  /// The compiled schedule for (kind, p, m, v), built on first use. Bad
  /// parameters give the buildSchedule() error (errors are not cached).
  Result<Entry> get(ScheduleKind kind, int64_t p, int64_t m, int64_t v = 1);

  /// What simulates a step of (kind, p, m, v): `schedule` is the compiled
  /// schedule of m - extraPeriods * steadyState().microBatches
  /// micro-batches. For 1F1B and interleaved schedules with many
  /// micro-batches it is a shorter schedule whose steady state the
  /// simulation extends (simulateMakespan below), so neither building nor
  /// simulating grows with m; else the schedule itself, extraPeriods 0.
  /// Its peak in-flight counts are the full schedule's.
  struct Simulated {
    Entry schedule;
    int64_t extraPeriods = 0;
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int64_t p = 1, m = 1, v = 1;
  };
  /// `attempt` 0 is the shortest; each next one is 8 times longer, until
  /// the schedule itself.
  Result<Simulated> getSimulated(ScheduleKind kind, int64_t p, int64_t m,
                                 int64_t v = 1, int attempt = 0);

  /// Entries held.
  size_t size() const;
  /// Approximate bytes the entries hold (CompiledSchedule actions).
  size_t bytes() const;
  /// At most this many bytes are held: an insert that would pass it first
  /// drops every other entry (holders of an Entry keep theirs alive).
  /// Results do not change (an entry is a pure function of its key); only
  /// rebuilds may. 0: no bound.
  void setByteBudget(size_t bytes);
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
  size_t bytes_ = 0;
  /// 512 MiB by default: a sweep of `trident explore` over large batches on
  /// deep pipelines met tens of gigabytes of schedules without it.
  size_t budget_ = size_t(1) << 29;
};

/// simulateMakespan() of the step `s` stands for (its m micro-batches):
/// extends `s.schedule`'s steady state, and where the simulation did not
/// settle inside it, tries the next longer schedule from `cache`, up to the
/// full one. The same as simulating the full schedule op by op, to 1e-12.
Result<MakespanResult> simulateMakespan(ScheduleCache &cache,
                                        const ScheduleCache::Simulated &s,
                                        const PipelineCosts &costs,
                                        SimWorkspace &ws,
                                        std::span<double> stageIdleSeconds);

} // namespace trident

#endif // TRIDENT_SCHEDULE_SCHEDULECACHE_H
