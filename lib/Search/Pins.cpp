//===- Pins.cpp - Parsing --fix -------------------------------------------===//

#include "trident/Search/Pins.h"

#include <charconv>
#include <string>

namespace trident::search {

bool Pins::any() const { return !(*this == Pins{}); }

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::optional<bool> parseBool(std::string_view s) {
  if (s == "1" || s == "true" || s == "on" || s == "yes")
    return true;
  if (s == "0" || s == "false" || s == "off" || s == "no")
    return false;
  return std::nullopt;
}

/// Sets `slot` to `v`, or reports a contradiction with an earlier value.
template <typename T>
Status setPin(std::optional<T> &slot, T v, std::string_view key,
              std::string_view text) {
  if (slot && *slot != v)
    return Status::error("--fix: '" + std::string(key) +
                         "' is pinned twice with different values (the "
                         "second is '" +
                         std::string(text) + "')");
  slot = v;
  return Status::ok();
}

} // namespace

Result<Pins> parsePins(std::string_view spec) {
  Pins pins;
  std::string_view rest = spec;
  if (trim(rest).empty())
    return Status::error("--fix: expected KEY=VALUE[,KEY=VALUE...], got an "
                         "empty list");
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    if (item.empty())
      return Status::error("--fix: empty item in '" + std::string(spec) + "'");
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status::error("--fix: '" + std::string(item) +
                           "' is not KEY=VALUE");
    std::string_view key = trim(item.substr(0, eq));
    std::string_view val = trim(item.substr(eq + 1));
    std::string k(key), v(val);
    if (val.empty())
      return Status::error("--fix: '" + k + "' has no value");
    auto intPin = [&](std::optional<int64_t> &slot) -> Status {
      auto n = parseInt(val);
      if (!n || *n < 1)
        return Status::error("--fix: '" + k +
                             "' must be a positive integer, got '" + v + "'");
      return setPin(slot, *n, key, val);
    };
    Status s;
    if (key == "dp")
      s = intPin(pins.dp);
    else if (key == "tp")
      s = intPin(pins.tp);
    else if (key == "pp")
      s = intPin(pins.pp);
    else if (key == "cp")
      s = intPin(pins.cp);
    else if (key == "ep")
      s = intPin(pins.ep);
    else if (key == "vpp")
      s = intPin(pins.vpp);
    else if (key == "mb" || key == "micro_batch" || key == "micro-batch")
      s = intPin(pins.microBatch);
    else if (key == "sp" || key == "sequence_parallel" ||
             key == "sequence-parallel") {
      auto b = parseBool(val);
      if (!b)
        return Status::error("--fix: '" + k +
                             "' must be 0, 1, true or false, got '" + v + "'");
      s = setPin(pins.sequenceParallel, *b, key, val);
    } else if (key == "recompute") {
      auto r = parseRecompute(val);
      if (!r)
        return Status::error(
            "--fix: 'recompute' must be none, selective or full, got '" + v +
            "'");
      s = setPin(pins.recompute, *r, key, val);
    } else if (key == "zero") {
      auto n = parseInt(val);
      if (!n || *n < 0 || *n > 3)
        return Status::error("--fix: 'zero' must be 0, 1, 2 or 3, got '" + v +
                             "'");
      s = setPin(pins.zeroStage, int(*n), key, val);
    } else if (key == "schedule") {
      auto kind = parseScheduleKind(val);
      if (!kind)
        return Status::error("--fix: 'schedule' must be gpipe, 1f1b or "
                             "interleaved-1f1b, got '" +
                             v + "'");
      s = setPin(pins.schedule, *kind, key, val);
    } else {
      return Status::error("--fix: unknown axis '" + k +
                           "' (known: dp, tp, pp, cp, ep, vpp, mb, sp, "
                           "recompute, zero, schedule)");
    }
    if (!s)
      return s;
  }
  // Contradictions that need no cluster.
  if (pins.sequenceParallel.value_or(false) && pins.tp && *pins.tp == 1)
    return Status::error("--fix: sp=1 contradicts tp=1 (sequence parallelism "
                         "splits activations over the tensor-parallel group)");
  if (pins.vpp && *pins.vpp > 1 && pins.pp && *pins.pp == 1)
    return Status::error("--fix: vpp=" + std::to_string(*pins.vpp) +
                         " contradicts pp=1 (virtual stages interleave "
                         "pipeline stages)");
  if (pins.vpp && pins.schedule) {
    bool interleaved = *pins.schedule == ScheduleKind::Interleaved1F1B;
    if (interleaved && *pins.vpp == 1)
      return Status::error("--fix: schedule=interleaved-1f1b contradicts "
                           "vpp=1 (it needs vpp >= 2)");
    if (!interleaved && *pins.vpp > 1)
      return Status::error("--fix: schedule=" +
                           std::string(scheduleKindName(*pins.schedule)) +
                           " contradicts vpp=" + std::to_string(*pins.vpp) +
                           " (only interleaved-1f1b has virtual stages)");
  }
  return pins;
}

std::string formatPins(const Pins &p) {
  std::string out;
  auto add = [&](const char *k, const std::string &v) {
    if (!out.empty())
      out += ",";
    out += k;
    out += "=";
    out += v;
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  if (p.dp)
    add("dp", num(*p.dp));
  if (p.tp)
    add("tp", num(*p.tp));
  if (p.pp)
    add("pp", num(*p.pp));
  if (p.cp)
    add("cp", num(*p.cp));
  if (p.ep)
    add("ep", num(*p.ep));
  if (p.vpp)
    add("vpp", num(*p.vpp));
  if (p.microBatch)
    add("mb", num(*p.microBatch));
  if (p.sequenceParallel)
    add("sp", *p.sequenceParallel ? "1" : "0");
  if (p.recompute)
    add("recompute", std::string(recomputeName(*p.recompute)));
  if (p.zeroStage)
    add("zero", num(*p.zeroStage));
  if (p.schedule)
    add("schedule", std::string(scheduleKindName(*p.schedule)));
  return out;
}

} // namespace trident::search
