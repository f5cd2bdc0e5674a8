//===- Schedule.cpp - GPipe, 1F1B and interleaved 1F1B builders -----------===//
//
// The builders reproduce the orders of the reference implementations so that
// a plan Trident predicts is the plan Megatron-LM runs:
//  - 1F1B: Megatron-LM `forward_backward_pipelining_without_interleaving`
//    (PipeDream-Flush, Narayanan et al. 2021 "Memory-Efficient Pipeline-
//    Parallel DNN Training").
//  - interleaved: Megatron-LM `forward_backward_pipelining_with_interleaving`
//    (Narayanan et al. SC'21, Sec. 2.2) with micro-batch groups of p.
// validateSchedule() lives in Simulator.cpp beside the dependency analysis
// it shares with compileSchedule().
//
//===----------------------------------------------------------------------===//

#include "trident/Schedule/Schedule.h"

#include <algorithm>
#include <string>

namespace trident {

std::string_view scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved1F1B:
    return "interleaved-1f1b";
  }
  return "unknown";
}

std::optional<ScheduleKind> parseScheduleKind(std::string_view name) {
  for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                         ScheduleKind::Interleaved1F1B})
    if (scheduleKindName(k) == name)
      return k;
  return std::nullopt;
}

std::string_view actionKindName(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return "F";
  case ActionKind::Backward:
    return "B";
  case ActionKind::BackwardInput:
    return "Bi";
  case ActionKind::BackwardWeight:
    return "W";
  }
  return "?";
}

int64_t Schedule::numActions() const {
  int64_t n = 0;
  for (const auto &list : perStage)
    n += static_cast<int64_t>(list.size());
  return n;
}

Status checkScheduleParams(ScheduleKind kind, int64_t p, int64_t m, int64_t v) {
  std::string name(scheduleKindName(kind));
  auto err = [&](const std::string &what) {
    return Status::error("schedule " + name + " (p=" + std::to_string(p) +
                         ", m=" + std::to_string(m) +
                         ", v=" + std::to_string(v) + "): " + what);
  };
  if (kind != ScheduleKind::GPipe && kind != ScheduleKind::OneFOneB &&
      kind != ScheduleKind::Interleaved1F1B)
    return err("unknown schedule kind");
  if (p < 1)
    return err("pipeline stages p must be at least 1");
  if (m < 1)
    return err("micro-batches m must be at least 1");
  if (v < 1)
    return err("virtual chunks per stage v must be at least 1");
  if (p > kMaxPipelineStages)
    return err("p exceeds " + std::to_string(kMaxPipelineStages) + " stages");
  // Divide instead of multiplying so huge inputs cannot overflow.
  if (m > kMaxScheduleMicroBatchChunks / p ||
      v > kMaxScheduleMicroBatchChunks / (p * m))
    return err("p*m*v exceeds " + std::to_string(kMaxScheduleMicroBatchChunks));
  if (kind != ScheduleKind::Interleaved1F1B && v != 1)
    return err("v must be 1 (only interleaved-1f1b has virtual chunks)");
  if (kind == ScheduleKind::Interleaved1F1B) {
    if (v < 2)
      return err("interleaving needs v >= 2 (use 1f1b for v = 1)");
    // Megatron-LM processes micro-batches in groups of p per chunk and
    // requires m % p == 0 for the interleaved schedule.
    if (m % p != 0)
      return err("interleaving needs m to be a multiple of p, as in "
                 "Megatron-LM");
  }
  return Status::ok();
}

int64_t interleavedWarmupForwards(int64_t p, int64_t m, int64_t v,
                                  int64_t stage) {
  // Megatron-LM `forward_backward_pipelining_with_interleaving`
  // (Narayanan et al. SC'21): (p - rank - 1) * 2 + (v - 1) * p warm-up
  // forwards, all forwards if that reaches the total m * v.
  int64_t warmup = (p - stage - 1) * 2 + (v - 1) * p;
  return std::min(warmup, m * v);
}

namespace {

ScheduleAction fwd(int64_t mb, int64_t chunk) {
  return {ActionKind::Forward, static_cast<int32_t>(mb),
          static_cast<int32_t>(chunk)};
}
ScheduleAction bwd(int64_t mb, int64_t chunk) {
  return {ActionKind::Backward, static_cast<int32_t>(mb),
          static_cast<int32_t>(chunk)};
}

void buildGPipe(Schedule &s) {
  // GPipe (Huang et al. 2019): every micro-batch forward, then every
  // backward, in micro-batch order.
  for (auto &list : s.perStage) {
    list.reserve(2 * s.m);
    for (int64_t mb = 0; mb < s.m; ++mb)
      list.push_back(fwd(mb, 0));
    for (int64_t mb = 0; mb < s.m; ++mb)
      list.push_back(bwd(mb, 0));
  }
}

void build1F1B(Schedule &s) {
  for (int64_t st = 0; st < s.p; ++st) {
    auto &list = s.perStage[st];
    list.reserve(2 * s.m);
    // Megatron-LM: num_warmup = min(p - rank - 1, m); the steady state
    // alternates one forward, one backward; the cool-down drains backwards.
    int64_t warmup = std::min<int64_t>(s.p - st - 1, s.m);
    int64_t steady = s.m - warmup;
    for (int64_t i = 0; i < warmup; ++i)
      list.push_back(fwd(i, 0));
    for (int64_t i = 0; i < steady; ++i) {
      list.push_back(fwd(warmup + i, 0));
      list.push_back(bwd(i, 0));
    }
    for (int64_t i = steady; i < s.m; ++i)
      list.push_back(bwd(i, 0));
  }
}

void buildInterleaved(Schedule &s) {
  const int64_t p = s.p, m = s.m, v = s.v;
  const int64_t total = m * v;
  // Megatron-LM get_model_chunk_id / get_microbatch_id_in_model_chunk: the
  // k-th forward (backward) of a stage walks micro-batches in groups of p,
  // each group through chunk 0..v-1 (backwards: v-1..0).
  auto kth = [&](int64_t k, bool forward) {
    int64_t inGroup = k % (p * v);
    int64_t chunk = inGroup / p;
    if (!forward)
      chunk = v - 1 - chunk;
    int64_t mb = (k / (p * v)) * p + k % p;
    return forward ? fwd(mb, chunk) : bwd(mb, chunk);
  };
  for (int64_t st = 0; st < p; ++st) {
    auto &list = s.perStage[st];
    list.reserve(2 * total);
    int64_t warmup = interleavedWarmupForwards(p, m, v, st);
    int64_t steady = total - warmup;
    for (int64_t k = 0; k < warmup; ++k)
      list.push_back(kth(k, true));
    for (int64_t i = 0; i < steady; ++i) {
      list.push_back(kth(warmup + i, true));
      list.push_back(kth(i, false));
    }
    for (int64_t k = steady; k < total; ++k)
      list.push_back(kth(k, false));
  }
}

} // namespace

Result<Schedule> buildSchedule(ScheduleKind kind, int64_t p, int64_t m,
                               int64_t v) {
  if (Status st = checkScheduleParams(kind, p, m, v); !st)
    return st;
  Schedule s;
  s.kind = kind;
  s.p = static_cast<int32_t>(p);
  s.m = static_cast<int32_t>(m);
  s.v = static_cast<int32_t>(v);
  s.perStage.resize(p);
  switch (kind) {
  case ScheduleKind::GPipe:
    buildGPipe(s);
    break;
  case ScheduleKind::OneFOneB:
    build1F1B(s);
    break;
  case ScheduleKind::Interleaved1F1B:
    buildInterleaved(s);
    break;
  }
  return s;
}

std::string formatSchedule(const Schedule &schedule) {
  std::string out;
  for (size_t st = 0; st < schedule.perStage.size(); ++st) {
    out += "s" + std::to_string(st) + ":";
    for (const ScheduleAction &a : schedule.perStage[st]) {
      out += ' ';
      out += actionKindName(a.kind);
      out += std::to_string(a.microBatch) + "." + std::to_string(a.chunk);
    }
    out += '\n';
  }
  return out;
}

} // namespace trident
