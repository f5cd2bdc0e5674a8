//===- SearchInternal.h - the planner's shared types ----------------------===//
//
// What the parts of the search share (Search.cpp, Variants.cpp,
// Enumerate.cpp, Bounds.cpp, Worker.cpp): the cost keys, the configuration
// families, the cluster variants and the state of one search. Internal to
// lib/Search.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_SEARCH_SEARCHINTERNAL_H
#define TRIDENT_LIB_SEARCH_SEARCHINTERNAL_H

#include "trident/Search/Search.h"

#include "trident/Cost/Collectives.h"
#include "trident/Schedule/ScheduleCache.h"
#include "trident/Search/Partition.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <unordered_map>

namespace trident::search::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline std::string str(int64_t v) { return std::to_string(v); }
inline std::string gbStr(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

inline std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i)
        d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

inline DType activationDtype(DType precision) {
  // As the Evaluator: FP8 training keeps activations in 16 bits.
  return precision == DType::FP8 ? DType::BF16 : precision;
}

/// The parallel axes that fix one layer's per-micro-batch cost.
struct AxesKey {
  int32_t group = 0; ///< node group of the input cluster
  int32_t tp = 1, cp = 1, ep = 1;
  int32_t etp = 0; ///< ParallelConfig::etp (0: as tp)
  int32_t mb = 1;
  bool sp = false;
  Recompute recompute = Recompute::None;
  bool tpOverlap = false; ///< ParallelConfig::tpCommOverlap
  bool operator==(const AxesKey &) const = default;
};
/// The cost key of configuration `c`'s stages on input node group `group`.
inline AxesKey axesKeyOf(int32_t group, const ParallelConfig &c) {
  return AxesKey{group,
                 int32_t(c.tp),
                 int32_t(c.cp),
                 int32_t(c.ep),
                 int32_t(c.etp),
                 int32_t(c.microBatch),
                 c.sequenceParallel,
                 c.recompute,
                 c.tpCommOverlap};
}
struct AxesKeyHash {
  size_t operator()(const AxesKey &k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : {int64_t(k.group), int64_t(k.tp), int64_t(k.cp),
                      int64_t(k.ep), int64_t(k.etp), int64_t(k.mb),
                      int64_t(k.sp), int64_t(k.recompute),
                      int64_t(k.tpOverlap)})
      h = (h ^ uint64_t(x)) * 1099511628211ull;
    return size_t(h);
  }
};

/// Probed per-layer costs of each profile group (per micro-batch, one GPU).
struct GroupCosts {
  std::vector<double> fwd, bwd; ///< the two passes of one layer
  /// fwd + bwd of one layer of profile group `gi`.
  double seconds(size_t gi) const { return fwd[gi] + bwd[gi]; }
  std::vector<double> actBytes; ///< saved activations of one layer
  std::vector<double> peakActBytes; ///< full recompute: its whole activations
  double totalSeconds = 0; ///< the whole model on one stage
};

/// One outer configuration to evaluate.
struct Config {
  ParallelConfig cfg;
  int32_t variant = 0;
  int32_t keyIndex = 0; ///< into the probed costs (per group of the variant)
  double lowerBound = 0; ///< objective units
  /// The least work of one micro-batch over all the stages (seconds, on
  /// the GPU type that does it fastest): lowerBound = objectiveScale x m x
  /// minWork / pp.
  double minWork = 0;
  int64_t members = 0;   ///< (vpp, ZeRO) configurations in the family
};

/// The input cluster, reordered or with fewer nodes.
struct Variant {
  Cluster cluster;
  std::string note;
  std::vector<int32_t> origGroup; ///< variant group -> input group
  double objectiveScale = 1;       ///< objective = scale * seconds
  /// SearchOptions::robust: the high end of the step time's 80 % interval
  /// over minHighFactor() (so >= 1; objectiveScale carries
  /// minHighFactor(), which keeps the lower bounds bounds), by
  /// robustIndex(); all 1 otherwise.
  std::array<double, 8> robustFactor{1, 1, 1, 1, 1, 1, 1, 1};
};

/// The regime attributes a configuration decides (Cost/Envelope.h): pp >
/// 1, tp > 1, ZeRO-3.
inline size_t robustIndex(const ParallelConfig &c) {
  return size_t(c.pp > 1) | size_t(c.tp > 1) << 1 |
         size_t(c.zeroStage >= 3) << 2;
}

inline double objectiveScale(const SearchOptions &o, const Cluster &c,
                      double tokensPerStep) {
  if (o.objective == Objective::CostPerToken)
    return o.pricePerGpuHour * double(c.totalGpus()) / 3600.0 / tokensPerStep;
  return 1.0;
}

/// Per-parameter byte counts exactly as the Evaluator uses them.
struct StateBytes {
  double weight = 2, grad = 2, opt = 12;
};
inline StateBytes stateBytes(DType precision, const EvalOptions &o) {
  StateBytesPerParam s = stateBytesPerParam(precision, o);
  return {s.weight, s.gradient, s.optimizer};
}

/// The Evaluator's default even split (Evaluate.cpp): N/G each, the
/// remainder to chunks 1..r.
inline std::vector<int64_t> balancedSplit(int64_t numBlocks, int64_t chunks) {
  std::vector<int64_t> v(static_cast<size_t>(chunks));
  for (int64_t g = 0; g < chunks; ++g)
    v[size_t(g)] = numBlocks / chunks +
                   ((g >= 1 && g <= numBlocks % chunks) ? 1 : 0);
  return v;
}

inline bool fitsWithin(const Evaluation &e, double fraction) {
  if (!e.fits)
    return false;
  for (const StageBreakdown &s : e.stages)
    if (s.totalBytes > fraction * s.capacityBytes)
      return false;
  return true;
}

/// Peak memory over the allowed memory, worst stage.
inline double memoryRatio(const Evaluation &e, double fraction) {
  double r = 0;
  for (const StageBreakdown &s : e.stages)
    r = std::max(r, s.totalBytes / (fraction * s.capacityBytes));
  return r;
}

//===----------------------------------------------------------------------===//
// Shared state of one search
//===----------------------------------------------------------------------===//

struct Shared {
  const LayerProfile &profile;
  const SearchOptions &opt;
  const EvalOptions &evalOpt;
  std::vector<Variant> variants;
  std::vector<Evaluator> evaluators; ///< per variant (copied per thread)
  // Profile structure.
  std::vector<int32_t> embGroups, blockGroups, headGroups;
  std::vector<int32_t> blockGroupOf; ///< per block: its profile group
  int64_t numBlocks = 0;
  bool hasExperts = false;
  int64_t minExperts = 0;
  StateBytes sb;
  double tokensPerStep = 0;
  /// Whether the runtime can overlap the tensor-parallel collectives
  /// (its column of the axis table; tpOverlapCandidate), set once.
  bool runtimeOverlapsTp = false;

  // Phase 2: probed costs, indexed by key index.
  std::vector<AxesKey> keys;
  std::vector<GroupCosts> costs;
  std::unordered_map<AxesKey, int32_t, AxesKeyHash> keyIndex;

  // Phase 3.
  std::vector<Config> configs; ///< families, see enumerate()
  int64_t members = 0;          ///< configurations in all families
  std::atomic<size_t> next{0};
  std::atomic<double> threshold{kInf};
  std::mutex topMutex;
  std::vector<Candidate> top;
  /// The first SearchOptions::acceptAxes refusal of the enumeration.
  std::string axesRefusal;
};


/// ZeRO-1 and ZeRO-2 move the same bytes (reduce-scatter + all-gather)
/// in the cost model and ZeRO-2 also shards the gradients, so ZeRO-1 is
/// dominated: unless the runtime reduce-scatters ZeRO-2's gradients every
/// micro-batch (m times the bytes: the trident programs).
inline bool zero1Dominated(const Shared &sh) {
  return !sh.evalOpt.zero2ReducePerMicroBatch;
}

/// Whether sequence parallelism `sp` (0 or 1) is a choice of its own for
/// tp x cp and the pins allow it: with tp = 1 it is the same plan as
/// without, and it splits a rank's sequence (seq / cp) over tp.
inline bool spCandidate(const Shared &sh, int sp, int64_t tp, int64_t cp) {
  if (sp && (tp == 1 || (sh.profile.seqLen / cp) % tp != 0))
    return false;
  // Overlapping the tensor-parallel collectives (pinned for the whole
  // search, searchPlans) needs tp > 1 and sequence parallelism.
  if (sh.opt.pins[Axis::TpCommOverlap].value_or(0) && (!sp || tp == 1))
    return false;
  return sh.opt.pins.admits(Axis::Sp, sp);
}

/// The (sequence parallelism, tensor-parallel overlap) pairs the
/// enumerations try; the overlap needs sequence parallelism.
inline constexpr std::array<std::pair<int, int>, 3> kSpOverlap{
    {{0, 0}, {1, 0}, {1, 1}}};

/// Whether overlapping the tensor-parallel collectives with the GEMMs
/// (`ov` 0 or 1, Megatron-Core's --tp-comm-overlap) is a choice of its own
/// for tp and sp: on, it needs tp > 1, sequence parallelism and a runtime
/// that has it (the axis table, Plan/Parallel.h); pinned, only the pinned
/// value, and a runtime without it refuses by name (axesAccepted). It is
/// priced (Evaluator: hidden collectives, slower GEMMs, userbuffers), so
/// neither value dominates the other.
inline bool tpOverlapCandidate(const Shared &sh, int ov, int64_t tp, int sp) {
  if (!sh.opt.pins.admits(Axis::TpCommOverlap, ov))
    return false;
  if (!ov)
    return true;
  if (tp == 1 || !sp)
    return false;
  if (sh.opt.pins[Axis::TpCommOverlap])
    return true;
  return sh.runtimeOverlapsTp;
}

/// Whether recomputation policy `rc` is allowed by the pins and, unpinned,
/// not exactly dominated: with fused (flash) attention Megatron's
/// selective recompute keeps the same activations as none and only adds
/// time.
inline bool recomputeCandidate(const Shared &sh, Recompute rc) {
  const Pins &pin = sh.opt.pins;
  if (pin[Axis::Recompute])
    return pin.admits(Axis::Recompute, int64_t(rc));
  return !(rc == Recompute::Selective && sh.evalOpt.selectiveIsDominated());
}

/// Whether the runtime the plan is costed for can run family member (vpp,
/// zero) of `c` (the runtime column of the axis table, Plan/Parallel.h),
/// then SearchOptions::acceptAxes on it. A refusal's reason goes to `why`
/// when given and still empty.
inline bool axesAccepted(const Shared &sh, const ParallelConfig &c, int64_t vpp,
                  int zero, std::string *why = nullptr) {
  // The axes alone first (no copy of the configuration's lists, no
  // message): this runs for every family member.
  ParallelAxes axes = c;
  axes.vpp = vpp;
  axes.zeroStage = zero;
  axes.schedule = sh.opt.pins.as<ScheduleKind>(Axis::Schedule);
  stateSettings(axes, sh.evalOpt);
  if (runtimeAccepts(axes, sh.evalOpt.runtime) && !sh.opt.acceptAxes)
    return true;
  ParallelConfig m = c;
  static_cast<ParallelAxes &>(m) = axes;
  std::string reason = runtimeAxisRefusal(m, sh.evalOpt.runtime);
  if (!reason.empty())
    reason = "runtime '" + std::string(runtimeName(sh.evalOpt.runtime)) +
             "' cannot run " + reason;
  else if (sh.opt.acceptAxes)
    reason = sh.opt.acceptAxes(m);
  if (reason.empty())
    return true;
  if (why && why->empty())
    *why = std::move(reason);
  return false;
}

/// Calls f(vpp, zero) for every virtual-stage count and ZeRO stage of a
/// family (pins applied, exact dominance rules below, and
/// SearchOptions::acceptAxes).
template <typename F>
void forEachMember(const Shared &sh, const Config &C, F &&f,
                   std::string *refused = nullptr) {
  const Pins &pin = sh.opt.pins;
  const ParallelConfig &c = C.cfg;
  const int64_t pp = c.pp, N = sh.numBlocks;
  const int64_t m = c.globalBatch / (c.dp * c.microBatch);
  const int64_t dpcp = c.dp * c.cp;
  const int64_t edp =
      std::max<int64_t>(1, c.dp * c.cp * c.tp / (c.ep * c.expertTp()));
  for (int64_t vpp = 1; vpp * pp <= N; ++vpp) {
    if (!pin.admits(Axis::Vpp, vpp))
      continue;
    // Interleaving needs pp > 1 and m divisible by pp (Megatron-LM).
    if (vpp > 1 && (pp == 1 || m % pp != 0))
      break;
    if (auto sched = pin.as<ScheduleKind>(Axis::Schedule);
        sched && (*sched == ScheduleKind::Interleaved1F1B) != (vpp > 1))
      continue;
    for (int zero = 0; zero <= 3; ++zero) {
      if (!pin.admits(Axis::Zero, zero))
        continue;
      if (!pin[Axis::Zero]) {
        // Without data parallelism there is nothing to shard.
        if (zero > 0 && dpcp == 1 && edp == 1)
          continue;
        // ZeRO-1 (zero1Dominated), unless SearchOptions::acceptAxes
        // refuses ZeRO-2 here (DeepSpeed's pipeline engine).
        if (zero == 1 && zero1Dominated(sh) && axesAccepted(sh, c, vpp, 2))
          continue;
      }
      if (!axesAccepted(sh, c, vpp, zero, refused))
        continue;
      f(vpp, zero);
    }
  }
}

//===----------------------------------------------------------------------===//
// The parts of a search
//===----------------------------------------------------------------------===//

/// The profile's structure: embedding, block and head groups, blocks,
/// experts (Bounds.cpp).
void initProfile(Shared &sh);
/// The cost key of each configuration family, indexed once (Bounds.cpp).
int32_t addKeys(Shared &sh, const Config &C);
/// Probes every distinct cost key on `threads` threads (Bounds.cpp).
Status probeAll(Shared &sh, const Cluster &input, int64_t threads,
                int64_t &probes);
/// Drops the overlap families slower in every layer pass than their twin
/// without the overlap (Bounds.cpp).
void dropDominatedOverlap(Shared &sh);
/// Each family's lower bound, and the visiting order (Bounds.cpp).
void orderByBound(Shared &sh);
/// Phase 1 on variant `vi` (Enumerate.cpp).
void enumerate(Shared &sh, int32_t vi, const Evaluator &ev);
/// Why no configuration is valid at all (Enumerate.cpp).
std::string whyNoConfig(const Shared &sh, const Evaluator &ev);
/// Pins that cannot work on this cluster or model (Enumerate.cpp).
Status checkPins(const Shared &sh, const Cluster &cluster);
/// The cluster variants and their evaluators (Variants.cpp).
Status buildVariants(Shared &sh, const Cluster &cluster,
                     const Evaluator &base);
/// One configuration's per-layer costs and stage devices, as the
/// partitioner sees them (Worker.cpp; search::stageModel).
void stageCosts(Shared &sh, const Config &C,
                const std::vector<int32_t> &inflight,
                std::vector<LayerCosts> &costs,
                std::vector<StageDevice> &devices);
/// Phase 3: the workers, their results and, when nothing is ranked, why
/// (Worker.cpp).
Status rankFamilies(Shared &sh, const Cluster &cluster, int64_t threads,
                    SearchResult &result);

} // namespace trident::search::detail

#endif // TRIDENT_LIB_SEARCH_SEARCHINTERNAL_H
