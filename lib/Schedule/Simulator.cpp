//===- Simulator.cpp - Schedule validation, compilation, simulation -------===//
//
// Validation and compilation share one dependency analysis: a schedule is
// valid exactly when Kahn's algorithm over "stage order + data dependency"
// edges reaches every action, and the order it reaches them in is the order
// the simulator evaluates them in. Evaluating in a topological order turns
// the discrete-event simulation into a single pass: an action's start is
// max(its stage free, its input arrived), both already known.
//
//===----------------------------------------------------------------------===//

#include "trident/Schedule/Simulator.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace trident {

namespace {

std::string describe(const ScheduleAction &a) {
  return std::string(actionKindName(a.kind)) +
         "(mb=" + std::to_string(a.microBatch) +
         ", chunk=" + std::to_string(a.chunk) + ")";
}

/// Everything compileSchedule() precomputes, before it is moved into a
/// CompiledSchedule.
struct Analysis {
  std::vector<CompiledSchedule::Op> ops;
  std::vector<int32_t> listPosition;
  std::vector<int32_t> sendBoundary;
  std::vector<int32_t> lastOp;
  std::vector<int32_t> peakInFlight;
  std::vector<int32_t> warmup;
  CompiledSchedule::SteadyState steady;
};

/// The longest run of ops that repeats with the period of `microBatches`
/// micro-batches (see CompiledSchedule::SteadyState). Found by comparing
/// the compiled ops, not assumed from the schedule's kind.
CompiledSchedule::SteadyState
findSteadyState(const std::vector<CompiledSchedule::Op> &ops, int64_t p,
                int64_t v, int64_t microBatches) {
  CompiledSchedule::SteadyState st;
  const int64_t N = static_cast<int64_t>(ops.size());
  const int64_t P = 2 * p * v * microBatches;
  if (P <= 0 || 2 * P > N)
    return st;
  auto same = [&](int64_t i) {
    const CompiledSchedule::Op &a = ops[i], &b = ops[i + P];
    if (a.stage != b.stage || a.cost != b.cost)
      return false;
    if (a.dep == N || b.dep == N)
      return a.dep == N && b.dep == N;
    return int64_t(b.dep) == int64_t(a.dep) + P;
  };
  int64_t bestBegin = 0, bestLen = 0;
  for (int64_t i = 0; i + P < N;) {
    if (!same(i)) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j + P < N && same(j))
      ++j;
    if (j - i > bestLen)
      bestBegin = i, bestLen = j - i;
    i = j;
  }
  // A steady state holds at least two whole periods.
  if (bestLen < P)
    return st;
  st.begin = bestBegin;
  st.end = bestBegin + bestLen + P;
  st.ops = static_cast<int32_t>(P);
  st.microBatches = static_cast<int32_t>(microBatches);
  int64_t lookback = P;
  for (int64_t i = bestBegin; i < N; ++i)
    if (ops[i].dep != N)
      lookback = std::max<int64_t>(lookback, i - ops[i].dep);
  st.lookback = static_cast<int32_t>(lookback);
  return st;
}

/// A stage's most activations held at once (forwards whose backward has
/// not run) and its warm-up (the forwards before its first backward). A
/// stage runs one action at a time, so the count changes only at action
/// ends, in list order.
std::pair<int32_t, int32_t> occupancy(const std::vector<ScheduleAction> &list) {
  int32_t live = 0, peak = 0, warm = 0;
  bool seenBackward = false;
  for (const ScheduleAction &a : list) {
    if (a.kind == ActionKind::Forward) {
      peak = std::max(peak, ++live);
      warm += seenBackward ? 0 : 1;
    } else {
      --live;
      seenBackward = true;
    }
  }
  return {peak, warm};
}

/// `order` (a topological order of the nodes) sorted by start time under
/// unit costs (F = 1, B = 2): still topological (a consumer starts
/// strictly after its producers end), and consecutive ops then belong to
/// different stages as in a running pipeline, so the simulation loop's
/// per-stage dependency chains overlap in the CPU instead of stalling on
/// each other. Ties by stage: then the order is the same in every period
/// of the steady state (findSteadyState), which Kahn's order is not.
void sortByUnitStart(const Schedule &s, const std::vector<int32_t> &dep,
                     const std::vector<int32_t> &stageOf,
                     const std::vector<int32_t> &posOf,
                     std::vector<int32_t> &order) {
  const size_t N = order.size();
  std::vector<double> unitStart(N), unitEnd(N);
  std::vector<double> stageFree(size_t(s.p), 0.0);
  for (int32_t id : order) {
    double ready = dep[id] >= 0 ? unitEnd[dep[id]] : 0.0;
    double t0 = std::max(stageFree[stageOf[id]], ready);
    bool forward =
        s.perStage[stageOf[id]][posOf[id]].kind == ActionKind::Forward;
    unitStart[id] = t0;
    unitEnd[id] = stageFree[stageOf[id]] = t0 + (forward ? 1.0 : 2.0);
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (unitStart[a] != unitStart[b])
      return unitStart[a] < unitStart[b];
    return stageOf[a] < stageOf[b];
  });
}

Status analyzeSchedule(const Schedule &s, Analysis *out) {
  auto err = [&](const std::string &what) {
    return Status::error("schedule " + std::string(scheduleKindName(s.kind)) +
                         " (p=" + std::to_string(s.p) +
                         ", m=" + std::to_string(s.m) +
                         ", v=" + std::to_string(s.v) + "): " + what);
  };
  if (s.p < 1 || s.m < 1 || s.v < 1)
    return err("p, m and v must be at least 1");
  if (s.p > kMaxPipelineStages)
    return err("p exceeds " + std::to_string(kMaxPipelineStages) + " stages");
  if (int64_t(s.m) > kMaxScheduleMicroBatchChunks / s.p ||
      int64_t(s.v) > kMaxScheduleMicroBatchChunks / (int64_t(s.p) * s.m))
    return err("p*m*v exceeds " + std::to_string(kMaxScheduleMicroBatchChunks));
  if (static_cast<int64_t>(s.perStage.size()) != s.p)
    return err("has " + std::to_string(s.perStage.size()) +
               " stage lists, expected p");

  const int64_t p = s.p, m = s.m, G = int64_t(s.p) * s.v;
  const int64_t perStage = 2 * m * s.v;
  std::vector<int64_t> offset(p + 1, 0);
  for (int64_t st = 0; st < p; ++st) {
    int64_t n = static_cast<int64_t>(s.perStage[st].size());
    if (n != perStage)
      return err("stage " + std::to_string(st) + " has " + std::to_string(n) +
                 " actions, expected 2*m*v = " + std::to_string(perStage));
    offset[st + 1] = offset[st] + n;
  }
  const int64_t N = offset[p];

  // Node ids are stage-major list positions; slot[(kind*m + mb)*G + g] maps
  // an action to its node, which finds each action's data dependency.
  std::vector<int32_t> slot(2 * m * G, -1);
  auto slotOf = [&](bool backward, int64_t mb, int64_t g) -> int32_t & {
    return slot[((backward ? 1 : 0) * m + mb) * G + g];
  };
  std::vector<int32_t> stageOf(N), posOf(N);
  for (int64_t st = 0; st < p; ++st) {
    const auto &list = s.perStage[st];
    for (int64_t i = 0; i < perStage; ++i) {
      const ScheduleAction &a = list[i];
      // Built only for an error: this loop runs over every action of every
      // schedule the search compiles.
      auto where = [&] {
        return "stage " + std::to_string(st) + " position " + std::to_string(i);
      };
      if (a.kind == ActionKind::BackwardInput ||
          a.kind == ActionKind::BackwardWeight)
        return err(where() + ": " + describe(a) +
                   ": split backward actions are reserved for zero-bubble "
                   "schedules and not supported yet");
      if (a.kind != ActionKind::Forward && a.kind != ActionKind::Backward)
        return err(where() + ": unknown action kind");
      if (a.microBatch < 0 || a.microBatch >= m)
        return err(where() + ": " + describe(a) + ": micro-batch out of range");
      if (a.chunk < 0 || a.chunk >= s.v)
        return err(where() + ": " + describe(a) + ": chunk out of range");
      bool backward = a.kind == ActionKind::Backward;
      int64_t g = globalChunk(a.chunk, st, p);
      int32_t &id = slotOf(backward, a.microBatch, g);
      if (id >= 0)
        return err(where() + ": " + describe(a) + " appears twice");
      // The forward sits in the same stage's list, so "not yet seen" means
      // it comes later (or never): its activations would not exist.
      if (backward && slotOf(false, a.microBatch, g) < 0)
        return err(where() + ": " + describe(a) + " precedes its forward");
      id = static_cast<int32_t>(offset[st] + i);
      stageOf[id] = static_cast<int32_t>(st);
      posOf[id] = static_cast<int32_t>(i);
    }
  }
  // Per-stage counts are exact and there are no duplicates, so every
  // (kind, mb, chunk) of every stage is present exactly once.

  // Data dependency of each node, and its (at most one) dependent:
  // F(mb,g) <- F(mb,g-1); B(mb,g) <- B(mb,g+1); B(mb,G-1) <- F(mb,G-1).
  std::vector<int32_t> dep(N, -1), dependent(N, -1);
  for (int64_t id = 0; id < N; ++id) {
    const ScheduleAction &a = s.perStage[stageOf[id]][posOf[id]];
    int64_t g = globalChunk(a.chunk, stageOf[id], p);
    int32_t d = -1;
    if (a.kind == ActionKind::Forward) {
      if (g > 0)
        d = slotOf(false, a.microBatch, g - 1);
    } else {
      d = g + 1 < G ? slotOf(true, a.microBatch, g + 1)
                    : slotOf(false, a.microBatch, g);
    }
    dep[id] = d;
    if (d >= 0)
      dependent[d] = static_cast<int32_t>(id);
  }

  // Kahn's algorithm, FIFO: deterministic, and it interleaves the stages'
  // independent chains, which keeps the simulation loop's critical path
  // short (instruction-level parallelism across stages).
  std::vector<uint8_t> indeg(N);
  std::vector<int32_t> queue;
  queue.reserve(N);
  for (int64_t id = 0; id < N; ++id) {
    indeg[id] = static_cast<uint8_t>((posOf[id] > 0) + (dep[id] >= 0));
    if (indeg[id] == 0)
      queue.push_back(static_cast<int32_t>(id));
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    int32_t id = queue[head];
    if (posOf[id] + 1 < perStage && --indeg[id + 1] == 0)
      queue.push_back(id + 1);
    if (int32_t d = dependent[id]; d >= 0 && --indeg[d] == 0)
      queue.push_back(d);
  }
  if (static_cast<int64_t>(queue.size()) != N) {
    // Name the first blocked action of the first stuck stage.
    std::vector<uint8_t> done(N, 0);
    for (int32_t id : queue)
      done[id] = 1;
    for (int64_t st = 0; st < p; ++st)
      for (int64_t i = 0; i < perStage; ++i)
        if (!done[offset[st] + i])
          return err("deadlock: stage " + std::to_string(st) +
                     " waits forever at position " + std::to_string(i) + ", " +
                     describe(s.perStage[st][i]));
    return err("deadlock");
  }
  if (!out)
    return Status::ok();

  sortByUnitStart(s, dep, stageOf, posOf, queue);
  std::vector<int32_t> topo(N);
  for (int64_t t = 0; t < N; ++t)
    topo[queue[t]] = static_cast<int32_t>(t);
  out->ops.resize(N);
  out->listPosition.resize(N);
  for (int64_t t = 0; t < N; ++t) {
    int32_t id = queue[t];
    int64_t st = stageOf[id];
    const ScheduleAction &a = s.perStage[st][posOf[id]];
    int64_t g = globalChunk(a.chunk, st, p);
    CompiledSchedule::Op op;
    op.dep = dep[id] >= 0 ? topo[dep[id]] : static_cast<int32_t>(N);
    op.cost = static_cast<int32_t>(a.kind == ActionKind::Forward ? g : G + g);
    op.stage = static_cast<int32_t>(st);
    out->ops[t] = op;
    out->listPosition[t] = posOf[id];
  }
  // Boundary b joins stage b and (b + 1) % p. F(g) feeds F(g+1) over
  // boundary g % p; B(g) feeds B(g-1) over boundary (g-1) % p, the same one
  // B(g-1) receives over, so a transfer is a property of its sender.
  out->sendBoundary.assign(2 * G, -1);
  if (p > 1)
    for (int64_t g = 0; g < G; ++g) {
      if (g + 1 < G)
        out->sendBoundary[g] = static_cast<int32_t>(g % p);
      if (g > 0)
        out->sendBoundary[G + g] = static_cast<int32_t>((g - 1) % p);
    }
  out->lastOp.resize(p);
  out->peakInFlight.resize(p);
  out->warmup.resize(p);
  for (int64_t st = 0; st < p; ++st) {
    out->lastOp[st] = topo[offset[st] + perStage - 1];
    std::tie(out->peakInFlight[st], out->warmup[st]) =
        occupancy(s.perStage[st]);
  }
  if (s.kind != ScheduleKind::GPipe)
    out->steady = findSteadyState(
        out->ops, p, s.v, s.kind == ScheduleKind::Interleaved1F1B ? p : 1);
  return Status::ok();
}

} // namespace

Status validateSchedule(const Schedule &schedule) {
  return analyzeSchedule(schedule, nullptr);
}

Result<CompiledSchedule> compileSchedule(Schedule schedule) {
  Analysis a;
  if (Status st = analyzeSchedule(schedule, &a); !st)
    return st;
  CompiledSchedule c;
  c.schedule_ = std::move(schedule);
  c.ops_ = std::move(a.ops);
  c.listPosition_ = std::move(a.listPosition);
  c.sendBoundary_ = std::move(a.sendBoundary);
  c.lastOp_ = std::move(a.lastOp);
  c.peakInFlight_ = std::move(a.peakInFlight);
  c.forwardsBeforeFirstBackward_ = std::move(a.warmup);
  c.steady_ = a.steady;
  return c;
}

PipelineCosts PipelineCosts::uniform(int64_t p, int64_t v,
                                     double forwardSeconds,
                                     double backwardSeconds, double p2pSeconds,
                                     bool overlapP2P) {
  PipelineCosts c;
  int64_t G = std::max<int64_t>(p, 0) * std::max<int64_t>(v, 0);
  c.forwardSeconds.assign(G, forwardSeconds);
  c.backwardSeconds.assign(G, backwardSeconds);
  c.p2pSeconds.assign(std::max<int64_t>(p, 0), p2pSeconds);
  c.overlapP2P = overlapP2P;
  return c;
}

Status checkPipelineCosts(const CompiledSchedule &sched,
                          const PipelineCosts &costs) {
  const size_t p = sched.p();
  const size_t G = p * sched.v();
  auto err = [&](const std::string &what) {
    return Status::error("pipeline costs for " +
                         std::string(scheduleKindName(sched.kind())) +
                         " (p=" + std::to_string(p) +
                         ", v=" + std::to_string(sched.v()) + "): " + what);
  };
  if (costs.forwardSeconds.size() != G || costs.backwardSeconds.size() != G)
    return err("forwardSeconds and backwardSeconds need p*v = " +
               std::to_string(G) + " entries (one per model chunk), got " +
               std::to_string(costs.forwardSeconds.size()) + " and " +
               std::to_string(costs.backwardSeconds.size()));
  size_t n = costs.p2pSeconds.size();
  bool wraps = sched.v() > 1 && p > 1;
  if (!(n == 0 || n == p || (!wraps && n + 1 == p)))
    return err("p2pSeconds needs 0, " +
               (wraps ? std::string() : std::to_string(p - 1) + " or ") +
               std::to_string(p) + " entries (one per stage boundary), got " +
               std::to_string(n));
  auto bad = [](double x) { return !std::isfinite(x) || x < 0; };
  for (size_t g = 0; g < G; ++g)
    if (bad(costs.forwardSeconds[g]) || bad(costs.backwardSeconds[g]))
      return err("chunk " + std::to_string(g) +
                 ": durations must be finite and non-negative");
  for (size_t b = 0; b < n; ++b)
    if (bad(costs.p2pSeconds[b]))
      return err("boundary " + std::to_string(b) +
                 ": p2p time must be finite and non-negative");
  return Status::ok();
}

namespace {

/// The simulation pass; returns the makespan. With Record, `start` and
/// `end` receive each op's times (in topological order).
/// Sizes the workspace for `sched` and fills its cost table.
void prepare(const CompiledSchedule &sched, const PipelineCosts &costs,
             SimWorkspace &ws) {
  const int64_t p = sched.p();
  const int64_t G = p * sched.v();
  const size_t N = sched.ops().size();
  ws.available.resize(N + 1);
  ws.available[N] = 0.0; // the "no dependency" slot
  ws.stageFree.assign(p, 0.0);
  ws.cost.resize(2 * G);
  const auto &boundary = sched.sendBoundary();
  for (int64_t k = 0; k < 2 * G; ++k) {
    double compute =
        k < G ? costs.forwardSeconds[k] : costs.backwardSeconds[k - G];
    int32_t b = boundary[k];
    double link =
        b >= 0 && !costs.p2pSeconds.empty() ? costs.p2pSeconds[b] : 0.0;
    ws.cost[k] = {compute, link, costs.overlapP2P ? 0.0 : link};
  }
}

/// Simulates ops [from, to) of a prepared workspace. With Record, `start`
/// and `end` receive each op's times (in topological order).
template <bool Record>
void runOps(const CompiledSchedule &sched, SimWorkspace &ws, size_t from,
            size_t to, double *start = nullptr, double *end = nullptr) {
  double *avail = ws.available.data();
  double *freeAt = ws.stageFree.data();
  const SimWorkspace::CostEntry *cost = ws.cost.data();
  const CompiledSchedule::Op *op = sched.ops().data();
  // The whole discrete-event simulation: in topological order an action's
  // start is max(its stage is free, its input has arrived), both final.
  for (size_t i = from; i < to; ++i) {
    const CompiledSchedule::Op o = op[i];
    const SimWorkspace::CostEntry c = cost[o.cost];
    double ready = avail[o.dep];
    double f = freeAt[o.stage];
    double t0 = f > ready ? f : ready;
    double t1 = t0 + c.computeSeconds;
    if constexpr (Record) {
      start[i] = t0;
      end[i] = t1;
    }
    avail[i] = t1 + c.transferSeconds;
    freeAt[o.stage] = t1 + c.blockSeconds;
  }
}

/// Every action but a backward of model chunk 0 has a consumer that ends
/// no earlier (durations are non-negative), so the step ends with stage 0's
/// last action, which sends nothing: its `available` is its end, exactly.
double makespanOf(const CompiledSchedule &sched, const SimWorkspace &ws) {
  return ws.available[sched.lastOpOfStage()[0]];
}

/// The simulation pass; returns the makespan.
template <bool Record>
double runPass(const CompiledSchedule &sched, const PipelineCosts &costs,
               SimWorkspace &ws, double *start, double *end) {
  prepare(sched, costs, ws);
  runOps<Record>(sched, ws, 0, sched.ops().size(), start, end);
  return makespanOf(sched, ws);
}

/// The makespan of `sched` with `extra` more periods of its steady state,
/// without simulating them; nullopt when the simulation did not settle
/// into its steady state inside the schedule's periodic ops.
///
/// Why a settled state may be moved ahead: one period maps the state that
/// later ops read (each stage's free time and the last `lookback` ops'
/// outputs) to the next by max and + only. Such a map is monotone and
/// moves with a shift (F(x + c) = F(x) + c for c >= 0; the "no
/// dependency" slot reads 0, below every time). So if one period moved
/// every component by between lo and hi, then k more move each by between
/// k lo and k hi, and the rest of the step, monotone and shift-moving
/// too, ends between the makespans of those two states: the answer given
/// here, which moves each component by k times its own last increment,
/// is within k (hi - lo) of the step simulated op by op (apart from
/// rounding). It is used only when that bound is below 1e-12 of the
/// makespan; an exact period (hi == lo) gives the same makespan. The
/// periods of `sched`'s own steady state left after the boundary where it
/// settled are skipped the same way (k counts them too), so the pass costs
/// the warm-up, a few periods and the cool-down.
std::optional<double> runExtendedPass(const CompiledSchedule &sched,
                                      const PipelineCosts &costs,
                                      SimWorkspace &ws, int64_t extra) {
  const CompiledSchedule::SteadyState &ss = sched.steadyState();
  if (ss.ops == 0)
    return std::nullopt;
  const int64_t P = ss.ops, D = ss.lookback, p = sched.p();
  const int64_t N = sched.numActions();
  // The state at boundary i (ops [i - D, i) and the stages' free times)
  // is compared with the one a period before, so both must lie in the
  // steady state, and a stage's last op before each must be one too.
  int64_t i = ss.begin + P + D;
  const int64_t last = ss.end;
  if (i > last)
    return std::nullopt;
  prepare(sched, costs, ws);
  runOps<false>(sched, ws, 0, size_t(i - P));
  std::vector<double> &prevFree = ws.prevFree, &delta = ws.delta;
  for (; i <= last; i += P) {
    prevFree.assign(ws.stageFree.begin(), ws.stageFree.end());
    runOps<false>(sched, ws, size_t(i - P), size_t(i));
    const double *avail = ws.available.data();
    delta.resize(size_t(D + p));
    double lo = INFINITY, hi = -INFINITY, top = 0;
    for (int64_t t = 0; t < D; ++t) {
      double d = avail[i - D + t] - avail[i - D + t - P];
      delta[size_t(t)] = d;
      lo = std::min(lo, d), hi = std::max(hi, d);
    }
    for (int64_t s = 0; s < p; ++s) {
      double d = ws.stageFree[size_t(s)] - prevFree[size_t(s)];
      delta[size_t(D + s)] = d;
      lo = std::min(lo, d), hi = std::max(hi, d);
      top = std::max(top, ws.stageFree[size_t(s)]);
    }
    // The short schedule's own periods left before `last` are skipped as
    // well: the state moves to the boundary `to`, k periods on.
    const int64_t left = (last - i) / P;
    const int64_t to = i + left * P;
    double k = double(extra + left);
    if (!(lo >= 0) || k * (hi - lo) > 1e-12 * (top + k * lo))
      continue;
    double *av = ws.available.data();
    // Through `delta` (the ranges may overlap): base + k * increment.
    for (int64_t t = 0; t < D; ++t)
      delta[size_t(t)] = av[i - D + t] + k * delta[size_t(t)];
    for (int64_t t = 0; t < D; ++t)
      av[to - D + t] = delta[size_t(t)];
    for (int64_t s = 0; s < p; ++s)
      ws.stageFree[size_t(s)] += k * delta[size_t(D + s)];
    runOps<false>(sched, ws, size_t(to), size_t(N));
    return makespanOf(sched, ws);
  }
  return std::nullopt;
}

/// Compute seconds per stage: m times the stage's chunks' F + B.
void stageBusy(const CompiledSchedule &sched, const PipelineCosts &costs,
               std::vector<double> &busy, int64_t microBatches) {
  const int64_t p = sched.p(), v = sched.v();
  busy.assign(p, 0.0);
  for (int64_t c = 0; c < v; ++c)
    for (int64_t s = 0; s < p; ++s) {
      int64_t g = globalChunk(c, s, p);
      busy[s] += costs.forwardSeconds[g] + costs.backwardSeconds[g];
    }
  for (double &b : busy)
    b *= double(microBatches);
}

double bubbleFractionOf(double makespan, double maxBusy) {
  // The makespan sums the same durations in another order than the busy
  // time: without a bubble the difference is rounding, never idle time.
  return maxBusy > 0 ? std::max(0.0, (makespan - maxBusy) / maxBusy) : 0.0;
}

} // namespace

Result<MakespanResult> simulateMakespan(const CompiledSchedule &sched,
                                        const PipelineCosts &costs,
                                        SimWorkspace &ws,
                                        std::span<double> stageIdleSeconds) {
  bool settled = true;
  return simulateMakespan(sched, costs, ws, stageIdleSeconds, 0, &settled);
}

Result<MakespanResult> simulateMakespan(const CompiledSchedule &sched,
                                        const PipelineCosts &costs,
                                        SimWorkspace &ws,
                                        std::span<double> stageIdleSeconds,
                                        int64_t extraPeriods, bool *settled) {
  if (Status st = checkPipelineCosts(sched, costs); !st)
    return st;
  if (!stageIdleSeconds.empty() &&
      stageIdleSeconds.size() != static_cast<size_t>(sched.p()))
    return Status::error("simulateMakespan: stageIdleSeconds needs p = " +
                         std::to_string(sched.p()) + " entries");
  if (extraPeriods < 0 ||
      (extraPeriods > 0 && sched.steadyState().ops == 0))
    return Status::error("simulateMakespan: " +
                         std::to_string(extraPeriods) +
                         " extra periods of a schedule without a steady "
                         "state");
  MakespanResult r;
  *settled = true;
  if (extraPeriods == 0) {
    r.makespanSeconds = runPass<false>(sched, costs, ws, nullptr, nullptr);
  } else {
    std::optional<double> t = runExtendedPass(sched, costs, ws, extraPeriods);
    if (!t) {
      *settled = false;
      return r;
    }
    r.makespanSeconds = *t;
  }
  stageBusy(sched, costs, ws.busy,
            sched.m() + extraPeriods * sched.steadyState().microBatches);
  for (size_t s = 0; s < ws.busy.size(); ++s) {
    r.maxStageBusySeconds = std::max(r.maxStageBusySeconds, ws.busy[s]);
    if (!stageIdleSeconds.empty())
      stageIdleSeconds[s] = std::max(0.0, r.makespanSeconds - ws.busy[s]);
  }
  r.bubbleFraction = bubbleFractionOf(r.makespanSeconds, r.maxStageBusySeconds);
  for (int32_t peak : sched.peakInFlight())
    r.maxPeakInFlight = std::max(r.maxPeakInFlight, peak);
  return r;
}

Result<MakespanResult> simulateMakespan(const CompiledSchedule &sched,
                                        const PipelineCosts &costs) {
  thread_local SimWorkspace ws;
  return simulateMakespan(sched, costs, ws);
}

Status simulateInto(const CompiledSchedule &sched, const PipelineCosts &costs,
                    SimulationResult &r) {
  if (Status st = checkPipelineCosts(sched, costs); !st)
    return st;
  thread_local SimWorkspace ws;
  const size_t N = sched.ops().size();
  ws.start.resize(N);
  ws.end.resize(N);
  r.makespanSeconds =
      runPass<true>(sched, costs, ws, ws.start.data(), ws.end.data());
  stageBusy(sched, costs, r.busySeconds, sched.m());
  const int64_t p = sched.p();
  double maxBusy = 0;
  r.idleSeconds.resize(p);
  for (int64_t s = 0; s < p; ++s) {
    maxBusy = std::max(maxBusy, r.busySeconds[s]);
    r.idleSeconds[s] = std::max(0.0, r.makespanSeconds - r.busySeconds[s]);
  }
  r.bubbleFraction = bubbleFractionOf(r.makespanSeconds, maxBusy);
  r.peakInFlight = sched.peakInFlight();
  r.sendBlockedSeconds.assign(p, 0.0);
  const Schedule &s = sched.schedule();
  r.timeline.resize(p);
  for (int64_t st = 0; st < p; ++st)
    r.timeline[st].resize(s.perStage[st].size());
  const auto &ops = sched.ops();
  for (size_t i = 0; i < N; ++i) {
    const auto &o = ops[i];
    int32_t pos = sched.listPosition()[i];
    TimedAction &t = r.timeline[o.stage][pos];
    t.action = s.perStage[o.stage][pos];
    t.startSeconds = ws.start[i];
    t.endSeconds = ws.end[i];
    r.sendBlockedSeconds[o.stage] += ws.cost[o.cost].blockSeconds;
  }
  return Status::ok();
}

Result<SimulationResult> simulate(const CompiledSchedule &sched,
                                  const PipelineCosts &costs) {
  SimulationResult r;
  if (Status st = simulateInto(sched, costs, r); !st)
    return st;
  return r;
}

} // namespace trident
