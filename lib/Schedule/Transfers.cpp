//===- Transfers.cpp - How a schedule's pipeline transfers are grouped ----===//
//
// transferSteps() says which actions of a stage share a communication step;
// checkTransferGroups() plays the resulting groups under NCCL's rules and
// reports a deadlock instead of letting a program hang.
//
// Why the steps matter: an NCCL group of sends and receives ends only when
// every send met the peer's matching receive, and the peer posts its
// receives only when it reaches its own group. Sending each action's output
// with the very next receive (enough for GPipe and 1F1B) deadlocks the
// interleaved schedule once more micro-batches than stages are in flight:
// a stage's warm-up forward of model chunk 0 receives nothing, so its send
// waits in the same group as a later send its neighbour cannot take yet.
// Megatron-LM's interleaved schedule avoids that by exchanging both
// directions of each steady-state forward/backward pair in one call
// (send_forward_backward_recv_forward_backward), receiving the next pair's
// inputs at the same time. test/unit/Schedule/TransfersTest.cpp shows both.
//
//===----------------------------------------------------------------------===//

#include "trident/Schedule/Schedule.h"

#include <algorithm>
#include <map>
#include <utility>

namespace trident {

std::vector<int32_t> transferSteps(const Schedule &s, int64_t stage) {
  const auto &list = s.perStage.at(static_cast<size_t>(stage));
  const int32_t n = static_cast<int32_t>(list.size());
  if (s.kind != ScheduleKind::Interleaved1F1B)
    return std::vector<int32_t>(static_cast<size_t>(n), 1);
  // Megatron-LM: warm-up forwards, then (total - warm-up) steady steps of
  // one forward and one backward, then the remaining backwards.
  const int64_t total = static_cast<int64_t>(s.m) * s.v;
  const int64_t warmup = interleavedWarmupForwards(s.p, s.m, s.v, stage);
  const int64_t steady = total - warmup;
  std::vector<int32_t> steps;
  steps.reserve(static_cast<size_t>(n));
  steps.insert(steps.end(), static_cast<size_t>(warmup), 1);
  steps.insert(steps.end(), static_cast<size_t>(steady), 2);
  steps.insert(steps.end(), static_cast<size_t>(total - steady), 1);
  return steps;
}

namespace {

/// One message: the forward output (backward = false) or input gradient
/// of model chunk `from` for micro-batch `mb`.
struct Message {
  bool backward = false;
  int32_t mb = 0;
  int64_t from = 0;
  bool operator<(const Message &o) const {
    return std::tie(backward, mb, from) < std::tie(o.backward, o.mb, o.from);
  }
  bool operator==(const Message &) const = default;
};

std::string describe(const Message &m) {
  return std::string(m.backward ? "the input gradient" : "the activation") +
         " of micro-batch " + std::to_string(m.mb) + " from model chunk " +
         std::to_string(m.from);
}

struct Op {
  bool send = false;
  int64_t peer = 0; ///< stage
  Message msg;
  int64_t partner = -1; ///< the matching op's index in the peer's op list
  int64_t group = 0;    ///< index of the group this op belongs to
};

/// What an action sends and receives (model chunk g of G).
void transfersOf(const ScheduleAction &a, int64_t stage, int64_t p, int64_t G,
                 std::vector<Op> &recvs, std::vector<Op> &sends) {
  const int64_t g = globalChunk(a.chunk, stage, p);
  if (a.kind == ActionKind::Forward) {
    if (g > 0)
      recvs.push_back({false, (g - 1) % p, {false, a.microBatch, g - 1}});
    if (g + 1 < G)
      sends.push_back({true, (g + 1) % p, {false, a.microBatch, g}});
  } else {
    if (g + 1 < G)
      recvs.push_back({false, (g + 1) % p, {true, a.microBatch, g + 1}});
    if (g > 0)
      sends.push_back({true, (g - 1) % p, {true, a.microBatch, g}});
  }
}

} // namespace

Status checkTransferGroups(const Schedule &s) {
  std::vector<std::vector<int32_t>> steps;
  for (int64_t st = 0; st < s.p; ++st)
    steps.push_back(transferSteps(s, st));
  return checkTransferGroups(s, steps);
}

Status checkTransferGroups(const Schedule &s,
                           const std::vector<std::vector<int32_t>> &stepSizes) {
  const int64_t p = s.p, G = static_cast<int64_t>(s.p) * s.v;
  if (static_cast<int64_t>(s.perStage.size()) != p ||
      static_cast<int64_t>(stepSizes.size()) != p)
    return Status::error("transfer steps: expected one list per stage (" +
                         std::to_string(p) + ")");
  // Each stage's ops in issue order, with their group index.
  std::vector<std::vector<Op>> ops(static_cast<size_t>(p));
  std::vector<int64_t> numGroups(static_cast<size_t>(p), 0);
  for (int64_t st = 0; st < p; ++st) {
    const auto &list = s.perStage[st];
    const auto &sizes = stepSizes[st];
    int64_t sum = 0;
    for (int32_t n : sizes) {
      if (n < 1)
        return Status::error("transfer steps of stage " + std::to_string(st) +
                             ": a step of " + std::to_string(n) + " actions");
      sum += n;
    }
    if (sum != static_cast<int64_t>(list.size()))
      return Status::error("transfer steps of stage " + std::to_string(st) +
                           " cover " + std::to_string(sum) + " actions, not " +
                           std::to_string(list.size()));
    // Group k (k = 0 .. steps): the sends of step k-1 and the receives of
    // step k.
    std::vector<std::vector<Op>> recvsOf(sizes.size()), sendsOf(sizes.size());
    size_t at = 0;
    for (size_t k = 0; k < sizes.size(); ++k)
      for (int32_t i = 0; i < sizes[k]; ++i, ++at)
        transfersOf(list[at], st, p, G, recvsOf[k], sendsOf[k]);
    auto &mine = ops[st];
    int64_t group = 0;
    for (size_t k = 0; k <= sizes.size(); ++k) {
      size_t before = mine.size();
      if (k > 0)
        for (Op o : sendsOf[k - 1])
          mine.push_back(o);
      if (k < sizes.size())
        for (Op o : recvsOf[k])
          mine.push_back(o);
      if (mine.size() == before)
        continue; // an empty group is no call
      for (size_t i = before; i < mine.size(); ++i)
        mine[i].group = group;
      ++group;
    }
    numGroups[st] = group;
  }
  // Pair the n-th send from a to b with b's n-th receive from a (NCCL's
  // issue order), and check they carry the same message.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> sent, received;
  for (int64_t st = 0; st < p; ++st)
    for (int64_t i = 0; i < static_cast<int64_t>(ops[st].size()); ++i) {
      const Op &o = ops[st][i];
      if (o.send)
        sent[{st, o.peer}].push_back(i);
      else
        received[{o.peer, st}].push_back(i);
    }
  for (auto &[pair, sends] : sent) {
    auto &recvs = received[pair];
    auto [a, b] = pair;
    for (size_t n = 0; n < std::max(sends.size(), recvs.size()); ++n) {
      if (n >= sends.size() || n >= recvs.size())
        return Status::error("stage " + std::to_string(b) + " expects " +
                             std::to_string(recvs.size()) +
                             " messages from stage " + std::to_string(a) +
                             ", which sends " + std::to_string(sends.size()));
      Op &snd = ops[a][sends[n]];
      Op &rcv = ops[b][recvs[n]];
      if (!(snd.msg == rcv.msg))
        return Status::error(
            "stage " + std::to_string(b) + " receives its message " +
            std::to_string(n) + " from stage " + std::to_string(a) +
            " expecting " + describe(rcv.msg) + ", but that stage sends " +
            describe(snd.msg) + " then (NCCL pairs in issue order)");
      snd.partner = recvs[n];
      rcv.partner = sends[n];
    }
  }
  for (auto &[pair, recvs] : received)
    if (!sent.count(pair) && !recvs.empty())
      return Status::error("stage " + std::to_string(pair.second) +
                           " expects a message from stage " +
                           std::to_string(pair.first) +
                           ", which sends it none");
  // Play the groups: an op completes once its partner's group is the
  // partner stage's current one (or already behind it); a group ends when
  // all its ops completed. Each round advances at least one group or the
  // schedule is stuck.
  std::vector<int64_t> cur(static_cast<size_t>(p), 0), first(p, 0);
  // first[st]: index of the first op of the current group.
  auto groupEnd = [&](int64_t st) {
    int64_t i = first[st];
    while (i < static_cast<int64_t>(ops[st].size()) &&
           ops[st][i].group == cur[st])
      ++i;
    return i;
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t st = 0; st < p; ++st) {
      if (cur[st] == numGroups[st])
        continue;
      int64_t end = groupEnd(st);
      bool all = true;
      for (int64_t i = first[st]; i < end && all; ++i) {
        const Op &o = ops[st][i];
        all = ops[o.peer][o.partner].group <= cur[o.peer];
      }
      if (all) {
        ++cur[st];
        first[st] = end;
        progress = true;
      }
    }
  }
  std::string stuck;
  for (int64_t st = 0; st < p; ++st) {
    if (cur[st] == numGroups[st])
      continue;
    int64_t end = groupEnd(st);
    for (int64_t i = first[st]; i < end; ++i) {
      const Op &o = ops[st][i];
      if (ops[o.peer][o.partner].group <= cur[o.peer])
        continue;
      stuck += (stuck.empty() ? "" : "; ") + std::string("stage ") +
               std::to_string(st) + (o.send ? " sends " : " receives ") +
               describe(o.msg) + (o.send ? " to" : " from") + " stage " +
               std::to_string(o.peer);
      break;
    }
  }
  if (!stuck.empty())
    return Status::error("schedule " + std::string(scheduleKindName(s.kind)) +
                         " (p=" + std::to_string(p) + ", m=" +
                         std::to_string(s.m) + ", v=" + std::to_string(s.v) +
                         "): its pipeline transfers deadlock: " + stuck);
  return Status::ok();
}

} // namespace trident
