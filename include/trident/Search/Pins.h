//===- Pins.h - Axes the user fixes with --fix ------------------*- C++ -*-===//
//
// `--fix tp=8,pp=16,recompute=full` pins any axis of the search. Parsing is
// separate from checking against a cluster and a model (Search.cpp), so
// that a malformed list is a usage error and a list that cannot work on
// this cluster is an input error.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SEARCH_PINS_H
#define TRIDENT_SEARCH_PINS_H

#include "trident/Cost/Memory.h"
#include "trident/Schedule/Schedule.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trident::search {

/// Pinned axes; nullopt = searched.
struct Pins {
  std::optional<int64_t> dp, tp, pp, cp, ep, vpp, microBatch;
  std::optional<bool> sequenceParallel;
  std::optional<Recompute> recompute;
  std::optional<int> zeroStage;
  std::optional<ScheduleKind> schedule;

  bool any() const;
  bool operator==(const Pins &) const = default;
};

/// Parses "KEY=VALUE[,KEY=VALUE...]". Keys: dp tp pp cp ep vpp mb (also
/// micro_batch, micro-batch), sp (also sequence_parallel; values
/// 0/1/true/false/on/off), recompute (none/selective/full), zero (0..3),
/// schedule (gpipe/1f1b/interleaved-1f1b). A key given twice with
/// different values is an error (the pins contradict each other); so are
/// pins that contradict each other without any cluster (sp=1 with tp=1,
/// vpp>1 with pp=1, vpp>1 with schedule=1f1b or gpipe). Errors start with
/// "--fix: " and name the key.
Result<Pins> parsePins(std::string_view spec);

/// "tp=8,pp=16" (canonical key order); "" for no pins.
std::string formatPins(const Pins &pins);

} // namespace trident::search

#endif // TRIDENT_SEARCH_PINS_H
