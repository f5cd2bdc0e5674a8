//===- ParallelJson.h - The axis table as JSON, read and written -*- C++ -*-===//
//
// Every JSON Trident reads or writes spells the parallel axes as kAxes says
// (Parallel.h): plan files (trident.plan/v1), `trident evaluate --json`,
// validation cases. Two layouts:
//  - Plan: the axes marked `inParallelObject` inside a "parallel" object,
//    the others as top-level keys (micro_batch_size, recompute,
//    zero_stage, schedule), all required when reading;
//  - Flat: every axis as a top-level key, each optional (the record's
//    default when absent or null), as in shared/validation/cases.json.
// Readers also accept each row's short name ("zero") and aliases
// ("micro_batch").
// Templates over the nlohmann JSON type (ordered or not).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_PARALLELJSON_H
#define TRIDENT_PLAN_PARALLELJSON_H

#include "trident/Plan/Parallel.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace trident {

enum class AxesLayout : uint8_t { Plan, Flat };

/// The JSON value of `v` for `axis`: a number, a boolean or a name.
template <typename Json>
Json axisJsonValue(const AxisSpec &axis, int64_t v) {
  switch (axis.type) {
  case AxisType::Bool:
    return Json(v != 0);
  case AxisType::Choice:
    return Json(axisValueText(axis, v));
  case AxisType::Size:
  case AxisType::Stage:
    break;
  }
  return Json(v);
}

/// Writes `axes` into `j` in the Plan layout: j["parallel"] holds the
/// parallel-object axes in table order, then the top-level axes follow in
/// table order; `afterAxis(axis, j)` runs after each top-level axis is
/// written (the plan writes num_micro_batches after the micro-batch size).
template <typename Json, typename Hook>
void writeAxesJson(Json &j, const ParallelAxes &axes, Hook &&afterAxis) {
  auto stated = [&](const AxisSpec &a) {
    return !a.optionalInPlan || a.get(axes) != a.defaultValue;
  };
  Json par = Json::object();
  for (const AxisSpec &a : kAxes)
    if (a.inParallelObject && stated(a))
      par[std::string(a.jsonKey)] = axisJsonValue<Json>(a, a.get(axes));
  j["parallel"] = par;
  for (const AxisSpec &a : kAxes) {
    if (a.inParallelObject)
      continue;
    if (stated(a))
      j[std::string(a.jsonKey)] = axisJsonValue<Json>(a, a.get(axes));
    afterAxis(a.axis, j);
  }
}

template <typename Json>
void writeAxesJson(Json &j, const ParallelAxes &axes) {
  writeAxesJson(j, axes, [](Axis, Json &) {});
}

/// Reads the axes of `obj` into `axes`. Errors read "<source>: '<path>'
/// must be ...", "<source>: missing field '<path>'" or, for values out of
/// the row's bounds, "<source>: '<path>' must be in [min, max], got v".
template <typename Json>
Status readAxesJson(const Json &obj, ParallelAxes &axes, AxesLayout layout,
                    const std::string &source) {
  if (!obj.is_object())
    return Status::error(source + ": expected a JSON object");
  const Json *par = &obj;
  if (layout == AxesLayout::Plan) {
    auto it = obj.find("parallel");
    if (it == obj.end())
      return Status::error(source + ": missing field 'parallel'");
    if (!it->is_object())
      return Status::error(source + ": 'parallel' must be an object");
    par = &*it;
  }
  for (const AxisSpec &a : kAxes) {
    const Json &holder = a.inParallelObject ? *par : obj;
    const std::string prefix =
        layout == AxesLayout::Plan && a.inParallelObject ? "parallel." : "";
    // The key as written, the row's short name, or one of its aliases.
    std::string key(a.jsonKey);
    auto it = holder.find(key);
    if (it == holder.end() && a.name != a.jsonKey) {
      key = std::string(a.name);
      it = holder.find(key);
    }
    for (std::string_view rest = a.aliases;
         it == holder.end() && !rest.empty();) {
      size_t comma = rest.find(',');
      key = std::string(rest.substr(0, comma));
      it = holder.find(key);
      rest = comma == std::string_view::npos ? std::string_view()
                                             : rest.substr(comma + 1);
    }
    if (it == holder.end() || (layout == AxesLayout::Flat && it->is_null())) {
      if (layout == AxesLayout::Plan && !a.optionalInPlan)
        return Status::error(source + ": missing field '" + prefix +
                             std::string(a.jsonKey) + "'");
      continue; // the record's default
    }
    const std::string path = prefix + key;
    int64_t v = 0;
    switch (a.type) {
    case AxisType::Bool:
      if (!it->is_boolean())
        return Status::error(source + ": '" + path +
                             "' must be true or false");
      v = it->template get<bool>() ? 1 : 0;
      break;
    case AxisType::Choice: {
      if (!it->is_string())
        return Status::error(source + ": '" + path + "' must be a string");
      auto parsed = parseAxisValue(a, it->template get<std::string>());
      if (!parsed)
        return Status::error(source + ": '" + path + "': " +
                             parsed.message());
      v = *parsed;
      break;
    }
    case AxisType::Size:
    case AxisType::Stage:
      if (!it->is_number_integer())
        return Status::error(source + ": '" + path + "' must be an integer");
      if (it->is_number_unsigned() &&
          it->template get<uint64_t>() > uint64_t(INT64_MAX))
        return Status::error(source + ": '" + path +
                             "' is too large for a 64-bit integer");
      v = it->template get<int64_t>();
      if (Status s = checkAxisBounds(a, v, path); !s)
        return Status::error(source + ": " + s.message() +
                             (a.axis == Axis::Etp
                                  ? " (0: experts split like the dense "
                                    "layers)"
                                  : ""));
      break;
    }
    a.set(axes, v);
  }
  return Status::ok();
}

} // namespace trident

#endif // TRIDENT_PLAN_PARALLELJSON_H
