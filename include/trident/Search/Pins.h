//===- Pins.h - Axes the user fixes with --fix ------------------*- C++ -*-===//
//
// `--fix tp=8,pp=16,recompute=full` pins any pinnable axis of the search
// (kAxes in Plan/Parallel.h says which, under which keys). Parsing is
// separate from checking against a cluster and a model (Search.cpp), so
// that a malformed list is a usage error and a list that cannot work on
// this cluster is an input error.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SEARCH_PINS_H
#define TRIDENT_SEARCH_PINS_H

#include "trident/Plan/Parallel.h"
#include "trident/Support/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trident::search {

/// Pinned axes, by Axis; nullopt = searched.
struct Pins {
  std::array<std::optional<int64_t>, kAxisCount> values;

  std::optional<int64_t> operator[](Axis a) const { return values[size_t(a)]; }
  std::optional<int64_t> &operator[](Axis a) { return values[size_t(a)]; }
  /// The pin of `a` as the record's type (Recompute, ScheduleKind, bool...).
  template <typename T> std::optional<T> as(Axis a) const {
    if (auto v = (*this)[a])
      return static_cast<T>(*v);
    return std::nullopt;
  }
  /// Whether `v` satisfies the pin of `a` (true when `a` is not pinned).
  bool admits(Axis a, int64_t v) const {
    auto p = (*this)[a];
    return !p || *p == v;
  }
  /// Sets every pinned axis of `axes` to its pin.
  void applyTo(ParallelAxes &axes) const;

  bool any() const;
  bool operator==(const Pins &) const = default;
};

/// Parses "KEY=VALUE[,KEY=VALUE...]". Keys: a pinnable row's name, JSON
/// key or alias (dp tp pp cp ep vpp; mb, micro_batch, micro-batch; sp,
/// sequence_parallel; recompute; zero, zero_stage; schedule); values as
/// parseAxisValue reads them. A key given twice with different values is
/// an error (the pins contradict each other); so are pins that contradict
/// each other without any cluster (sp=1 with tp=1, vpp>1 with pp=1, vpp>1
/// with schedule=1f1b or gpipe). Errors start with "--fix: " and name the
/// key.
Result<Pins> parsePins(std::string_view spec);

/// "tp=8,pp=16" (table order); "" for no pins.
std::string formatPins(const Pins &pins);

} // namespace trident::search

#endif // TRIDENT_SEARCH_PINS_H
