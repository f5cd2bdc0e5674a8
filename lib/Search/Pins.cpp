//===- Pins.cpp - Parsing --fix -------------------------------------------===//

#include "trident/Search/Pins.h"
#include "trident/Support/Text.h"

#include <string>

namespace trident::search {

bool Pins::any() const { return !(*this == Pins{}); }

void Pins::applyTo(ParallelAxes &axes) const {
  for (const AxisSpec &a : kAxes)
    if (auto v = (*this)[a.axis])
      a.set(axes, *v);
}

Result<Pins> parsePins(std::string_view spec) {
  Pins pins;
  std::string_view rest = spec;
  if (trimBlanks(rest).empty())
    return Status::error("--fix: expected KEY=VALUE[,KEY=VALUE...], got an "
                         "empty list");
  for (std::string_view item : splitCommaList(rest)) {
    if (item.empty())
      return Status::error("--fix: empty item in '" + std::string(spec) + "'");
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status::error("--fix: '" + std::string(item) +
                           "' is not KEY=VALUE");
    std::string_view key = trimBlanks(item.substr(0, eq));
    std::string_view val = trimBlanks(item.substr(eq + 1));
    std::string k(key), v(val);
    if (val.empty())
      return Status::error("--fix: '" + k + "' has no value");
    const AxisSpec *axis = findAxis(key);
    if (!axis || !axis->pinnable)
      return Status::error("--fix: unknown axis '" + k + "' (known: " +
                           pinnableAxisNames() + ")");
    auto value = parseAxisValue(*axis, val);
    if (!value)
      return Status::error("--fix: '" + k + "': " + value.message());
    std::optional<int64_t> &slot = pins[axis->axis];
    if (slot && *slot != *value)
      return Status::error("--fix: '" + k +
                           "' is pinned twice with different values (the "
                           "second is '" +
                           v + "')");
    slot = *value;
  }
  // Contradictions that need no cluster.
  const std::optional<int64_t> tp = pins[Axis::Tp], pp = pins[Axis::Pp],
                               vpp = pins[Axis::Vpp];
  if (pins[Axis::Sp].value_or(0) && tp && *tp == 1)
    return Status::error("--fix: sp=1 contradicts tp=1 (sequence parallelism "
                         "splits activations over the tensor-parallel group)");
  if (pins[Axis::TpCommOverlap].value_or(0) &&
      ((tp && *tp == 1) || (pins[Axis::Sp] && !*pins[Axis::Sp])))
    return Status::error("--fix: tp_comm_overlap=true contradicts " +
                         std::string(tp && *tp == 1 ? "tp=1" : "sp=false") +
                         " (the overlap needs tp > 1 and sequence "
                         "parallelism)");
  if (vpp && *vpp > 1 && pp && *pp == 1)
    return Status::error("--fix: vpp=" + std::to_string(*vpp) +
                         " contradicts pp=1 (virtual stages interleave "
                         "pipeline stages)");
  if (auto schedule = pins.as<ScheduleKind>(Axis::Schedule); vpp && schedule) {
    bool interleaved = *schedule == ScheduleKind::Interleaved1F1B;
    if (interleaved && *vpp == 1)
      return Status::error("--fix: schedule=interleaved-1f1b contradicts "
                           "vpp=1 (it needs vpp >= 2)");
    if (!interleaved && *vpp > 1)
      return Status::error("--fix: schedule=" +
                           std::string(scheduleKindName(*schedule)) +
                           " contradicts vpp=" + std::to_string(*vpp) +
                           " (only interleaved-1f1b has virtual stages)");
  }
  return pins;
}

std::string formatPins(const Pins &p) {
  std::string out;
  for (const AxisSpec &a : kAxes) {
    auto v = p[a.axis];
    if (!v)
      continue;
    // Booleans as 0/1, as --fix takes them.
    std::string text =
        a.type == AxisType::Bool ? std::to_string(*v) : axisValueText(a, *v);
    out += (out.empty() ? "" : ",") + std::string(a.name) + "=" + text;
  }
  return out;
}

} // namespace trident::search
