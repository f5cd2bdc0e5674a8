//===- Parallel.cpp - The axis table's helpers and the choices' names -----===//

#include "trident/Plan/Parallel.h"
#include "trident/Support/Text.h"

#include <charconv>

namespace trident {

namespace {

// Each row's default is the record's default: the table and the struct
// cannot drift apart.
constexpr bool defaultsAgree() {
  const ParallelAxes none{};
  for (const AxisSpec &a : kAxes)
    if (a.get(none) != a.defaultValue || a.defaultValue < a.minValue ||
        a.defaultValue > a.maxValue)
      return false;
  return true;
}
static_assert(defaultsAgree(), "an axis row's default differs from "
                               "ParallelAxes's default");

constexpr bool rowsInOrder() {
  for (size_t i = 0; i < kAxes.size(); ++i)
    if (size_t(kAxes[i].axis) != i)
      return false;
  return true;
}
static_assert(rowsInOrder(), "kAxes rows must follow the Axis enumerators");

struct RuntimeEntry {
  Runtime runtime;
  std::string_view name;
};
constexpr RuntimeEntry kRuntimes[] = {
    {Runtime::MegatronCore, "megatron-core"},
    {Runtime::MegatronLm, "megatron-lm"},
    {Runtime::Fsdp, "fsdp"},
    {Runtime::Torchtitan, "torchtitan"},
    {Runtime::Trident, "trident"},
    {Runtime::DeepSpeed, "deepspeed"},
    {Runtime::Nemo, "nemo"},
};
static_assert(std::size(kRuntimes) == kRuntimeCount);

/// `list` holds `key` as one of its comma-separated entries.
bool listHas(std::string_view list, std::string_view key) {
  if (list.empty())
    return false;
  for (std::string_view item : splitCommaList(list))
    if (item == key)
      return true;
  return false;
}

std::string fill(std::string_view why, const std::string &value) {
  std::string out(why);
  if (size_t at = out.find("{}"); at != std::string::npos)
    out.replace(at, 2, value);
  return out;
}

} // namespace

std::string_view recomputeName(Recompute r) {
  size_t i = size_t(r);
  return i < std::size(detail::kRecomputeChoices)
             ? detail::kRecomputeChoices[i]
             : detail::kRecomputeChoices[0];
}

std::optional<Recompute> parseRecompute(std::string_view n) {
  if (n == "none" || n == "no" || n == "off")
    return Recompute::None;
  if (n == "selective")
    return Recompute::Selective;
  if (n == "full" || n == "block" || n == "uniform")
    return Recompute::Full;
  return std::nullopt;
}

std::string_view runtimeName(Runtime r) {
  for (const RuntimeEntry &e : kRuntimes)
    if (e.runtime == r)
      return e.name;
  return "?";
}

std::optional<Runtime> parseRuntime(std::string_view name) {
  for (const RuntimeEntry &e : kRuntimes)
    if (e.name == name)
      return e.runtime;
  return std::nullopt;
}

std::string runtimeNames() {
  std::string s;
  for (const RuntimeEntry &e : kRuntimes) {
    if (!s.empty())
      s += ", ";
    s += e.name;
  }
  return s;
}

const AxisSpec *findAxis(std::string_view key) {
  for (const AxisSpec &a : kAxes)
    if (a.name == key || a.jsonKey == key || listHas(a.aliases, key))
      return &a;
  return nullptr;
}

std::string pinnableAxisNames() {
  std::string s;
  for (const AxisSpec &a : kAxes)
    if (a.pinnable)
      s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

std::string axisValueText(const AxisSpec &axis, int64_t v) {
  switch (axis.type) {
  case AxisType::Bool:
    return v ? "true" : "false";
  case AxisType::Choice:
    if (v >= 0 && size_t(v) < axis.choices.size())
      return std::string(axis.choices[size_t(v)]);
    return std::to_string(v);
  case AxisType::Size:
  case AxisType::Stage:
    break;
  }
  return std::to_string(v);
}

Result<int64_t> parseAxisValue(const AxisSpec &axis, std::string_view s) {
  switch (axis.type) {
  case AxisType::Bool:
    if (s == "1" || s == "true" || s == "on" || s == "yes")
      return int64_t(1);
    if (s == "0" || s == "false" || s == "off" || s == "no")
      return int64_t(0);
    return Status::error("expected 0, 1, true or false, got '" +
                         std::string(s) + "'");
  case AxisType::Choice: {
    // Recomputation also takes its historical spellings ("off", "block").
    if (axis.axis == Axis::Recompute) {
      if (auto r = parseRecompute(s))
        return int64_t(*r);
    } else if (axis.axis == Axis::Schedule) {
      if (auto k = parseScheduleKind(s))
        return int64_t(*k);
    }
    for (size_t i = 0; i < axis.choices.size(); ++i)
      if (s == axis.choices[i])
        return int64_t(i);
    std::string names;
    for (size_t i = 0; i < axis.choices.size(); ++i)
      names += std::string(i == 0 ? "" : i + 1 == axis.choices.size()
                                             ? " or "
                                             : ", ") +
               std::string(axis.choices[i]);
    return Status::error("expected " + names + ", got '" + std::string(s) +
                         "'");
  }
  case AxisType::Size:
  case AxisType::Stage:
    break;
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < axis.minValue ||
      v > axis.maxValue)
    return Status::error("expected an integer from " +
                         std::to_string(axis.minValue) + " to " +
                         std::to_string(axis.maxValue) + ", got '" +
                         std::string(s) + "'");
  return v;
}

Status checkAxisBounds(const AxisSpec &axis, int64_t v, std::string_view key) {
  if (v >= axis.minValue && v <= axis.maxValue)
    return Status::ok();
  return Status::error("'" + std::string(key) + "' must be in [" +
                       std::to_string(axis.minValue) + ", " +
                       std::to_string(axis.maxValue) + "], got " +
                       std::to_string(v));
}

std::string axisRefusal(const AxisSpec &axis, const AxisSupport &support,
                        int64_t v) {
  if (axisAccepts(axis, support, v))
    return "";
  return fill(support.why, axisValueText(axis, v));
}

namespace {
bool applies(const AxisSpec &a, const ParallelAxes &axes) {
  return !a.applies || a.applies(axes);
}
} // namespace

std::string fp8RecipePrecisionRefusal(Fp8Recipe recipe, DType precision) {
  if (recipe == Fp8Recipe::Delayed || precision == DType::FP8)
    return "";
  return "fp8_recipe " +
         axisValueText(axisSpec(Axis::Fp8Recipe), int64_t(recipe)) +
         " needs precision fp8 (got " + std::string(dtypeName(precision)) + ")";
}

bool runtimeAccepts(const ParallelAxes &axes, Runtime runtime) {
  for (const AxisSpec &a : kAxes) {
    const AxisSupport &support = a.runtimes[size_t(runtime)];
    // A row the runtime runs in every value class needs no look at the
    // axes (the search asks this of every configuration it weighs).
    if (support.mask == ~0u)
      continue;
    if (applies(a, axes) && !axisAccepts(a, support, a.get(axes)))
      return false;
  }
  return true;
}

std::string runtimeAxisRefusal(const ParallelAxes &axes, Runtime runtime) {
  for (const AxisSpec &a : kAxes) {
    if (!applies(a, axes))
      continue;
    int64_t v = a.get(axes);
    std::string why = axisRefusal(a, a.runtimes[size_t(runtime)], v);
    if (!why.empty())
      return std::string(a.name) + " " + axisValueText(a, v) + ": " + why;
  }
  return "";
}

std::string exportAxisRefusal(const ParallelAxes &axes,
                              plan::ExportTarget target) {
  for (const AxisSpec &a : kAxes) {
    if (!applies(a, axes))
      continue;
    std::string why =
        axisRefusal(a, a.exporters[plan::exportColumn(target)], a.get(axes));
    if (!why.empty())
      return why;
  }
  return "";
}

} // namespace trident
