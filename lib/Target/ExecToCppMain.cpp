//===- ExecToCppMain.cpp - main.cpp of an emitted program -----------------===//
//
// A stage becomes a class with its parameters, one forward and one
// backward method per chunk, and a step method that runs the schedule's
// action list, the gradient synchronisation and the optimizer; main()
// builds the grid and runs the class of the rank's pipeline stage. The
// runtime-side classes the generated code derives from are the prelude.
//
//===----------------------------------------------------------------------===//

#include "ExecToCppInternal.h"

namespace trident::target {

using namespace detail;

namespace {

const char *kPrelude = R"cpp(
namespace {

/// [b, s, f] -> [b*s, f] (the runtime's [tokens, features]); other ranks
/// unchanged.
rt::Tensor act2(const rt::Tensor &t) {
  if (t.rank() < 3)
    return t;
  return t.reshape({t.numel() / t.dim(-1), t.dim(-1)});
}
/// Token ids [b, s] -> [b*s].
rt::Tensor ids1(const rt::Tensor &t) { return t.reshape({t.numel()}); }
/// Tag of a pipeline message: (micro-batch, receiving chunk, direction).
int tagOf(int mb, int chunk, int chunks, int backward) {
  return (mb * chunks + chunk) * 2 + backward;
}

/// One parameter shard: value (a ZeRO-3 slice under ZeRO-3), gradient,
/// optimizer state, and the group of ranks holding the same shard (its
/// ZeRO slices and gradient sums).
struct Param {
  std::string name;
  std::vector<int64_t> global, local;
  int splitDim = -1;
  std::string splitAxis, init, group;
  rt::Tensor value, grad, m, v;
  /// ZeRO-2/3: this rank's slice of the reduced gradient.
  rt::Tensor gradSlice;
  /// A second split (experts over ep, then their columns over tp).
  int split2Dim = -1;
  std::string split2Axis;
  /// The last split's dimension holds its piece of `blocks` blocks.
  int64_t blocks = 1;
  /// > 0: a selection bias updated by the expert load its gradient buffer
  /// counts (rt::loadBalanceUpdate at this rate), not by the optimizer.
  float loadBalance = 0.0f;
  /// ZeRO-1: this step's reduce-scatter into gradSlice was started in the
  /// backward (startSliceSum); the optimizer updates from the slice.
  bool sliceStarted = false;
  /// ZeRO-1/2: the [chunk * dp] storage whose head is `value`; after an
  /// optimizer step only this rank's chunk is current until the all-gather
  /// into it (gatherDue: not started yet; gather: running) is waited for.
  rt::Tensor padded;
  rt::Pending gather;
  bool gatherDue = false, gatherRunning = false;
  rt::ShardBlocks shardBlocks() const {
    return {blocks > 1 ? (split2Dim >= 0 ? split2Dim : splitDim) : -1,
            blocks};
  }
};

/// What every stage shares: the grid, the groups, the step's loss sum and
/// this step's data.
struct Context {
  rt::Grid &grid;
  std::map<std::string, rt::Group> groups;
  rt::Tensor lossSum{std::vector<int64_t>{1}};
  int64_t step = 0;

  const rt::Group &group(const std::string &name) const {
    return groups.at(name);
  }
  int coord(const std::string &axis) const {
    if (axis == "dp")
      return grid.coord(rt::Axis::DP);
    if (axis == "tp")
      return grid.coord(rt::Axis::TP);
    if (axis == "cp")
      return grid.coord(rt::Axis::CP);
    if (axis == "ep")
      return grid.coord(rt::Axis::EP);
    if (axis == "edp")
      return grid.coord(rt::Axis::EDP);
    return grid.coord(rt::Axis::PP);
  }
  /// Samples of micro-batch `mb` of this data-parallel rank (global sample
  /// numbering, so every plan reads the same sequences), at this
  /// context-parallel rank's positions.
  int64_t firstSample(int mb) const {
    return int64_t(coord("dp")) * kMicroBatches * kMicroBatchSize +
           int64_t(mb) * kMicroBatchSize;
  }
  void batch(int mb, rt::Tensor &tok, rt::Tensor &lab) const {
    tok = rt::Tensor({kMicroBatchSize * kLocalSeqLen}, rt::DType::I32);
    lab = rt::Tensor({kMicroBatchSize * kLocalSeqLen}, rt::DType::I32);
    rt::syntheticBatch(tok, lab, kDataSeed, step, firstSample(mb),
                       kMicroBatchSize,
                       int64_t(coord("cp")) * kLocalSeqLen, kLocalSeqLen,
                       kVocab);
  }
  /// Dropout `site` of micro-batch `mb`: the mask is drawn from the global
  /// (sample, position, feature) of every element (rt::DropoutSite).
  rt::DropoutSite dropout(int mb, float rate, int64_t site, int64_t seqLen,
                          int64_t firstPos, int64_t features,
                          int64_t firstFeature) const {
    rt::DropoutSite d;
    d.rate = rate;
    d.seed = kDataSeed;
    d.step = step;
    d.site = site;
    d.firstSample = firstSample(mb);
    d.seqLen = seqLen;
    d.firstPos = firstPos;
    d.features = features;
    d.firstFeature = firstFeature;
    return d;
  }
  /// Synthetic floats of a float input (`name`): `shape` per sample.
  rt::Tensor floats(int mb, const char *name,
                    std::vector<int64_t> shape) const {
    int64_t per = 1;
    for (int64_t d : shape)
      per *= d;
    shape.insert(shape.begin(), kMicroBatchSize);
    rt::Tensor t(shape);
    rt::syntheticFloats(t, kDataSeed, name, step, firstSample(mb),
                        kMicroBatchSize, per);
    return t;
  }
  /// Synthetic ids of another input (`name`, in [0, range)): one per
  /// position of this rank's chunk, or one per sample.
  rt::Tensor ids(int mb, const char *name, int64_t range,
                 bool perPosition) const {
    const int64_t per = perPosition ? kLocalSeqLen : 0;
    rt::Tensor t({kMicroBatchSize * (per ? per : 1)}, rt::DType::I32);
    rt::syntheticIds(t, kDataSeed, name, step, firstSample(mb),
                     kMicroBatchSize, int64_t(coord("cp")) * kLocalSeqLen,
                     per, range);
    return perPosition ? t.reshape({kMicroBatchSize, kLocalSeqLen})
                       : t.reshape({kMicroBatchSize});
  }
  /// Synthetic ids of an embedding bag (`name`, in [0, range)): `bag` per
  /// sample, the same on every cp rank.
  rt::Tensor bagIds(int mb, const char *name, int64_t range,
                    int64_t bag) const {
    rt::Tensor t({kMicroBatchSize * bag}, rt::DType::I32);
    rt::syntheticIds(t, kDataSeed, name, step, firstSample(mb),
                     kMicroBatchSize, 0, bag, range);
    return t.reshape({kMicroBatchSize, bag});
  }
  rt::Tensor tokens(int mb) const {
    rt::Tensor t, l;
    batch(mb, t, l);
    return t.reshape({kMicroBatchSize, kLocalSeqLen});
  }
  rt::Tensor labels(int mb) const {
    rt::Tensor t, l;
    batch(mb, t, l);
    return l.reshape({kMicroBatchSize, kLocalSeqLen});
  }
};

/// The code of one pipeline stage.
class Stage {
public:
  explicit Stage(Context &c) : c(c) {}
  virtual ~Stage() = default;
  virtual void step() = 0;

  /// Allocates and initialises every parameter (sharding-independent
  /// values: rt::initParam hashes the global position).
  void initParams() {
    for (Param &p : P) {
      const rt::Group &dp = c.group(p.group);
      std::vector<int64_t> offset = shardOffset(p);
      int64_t numel = 1;
      for (int64_t d : p.local)
        numel *= d;
      rt::ZeroRange range = rt::zeroRange(numel, dp.size(), dp.rank());
      // ZeRO-1/2: the parameter is the head of a [chunk * dp] buffer, which
      // the optimizer step's all-gather fills in place.
      rt::Tensor full;
      if (kZeroStage == 1 || kZeroStage == 2) {
        p.padded = rt::Tensor({range.chunk * dp.size()});
        full = p.padded.view(0, p.local);
      } else {
        full = rt::Tensor(p.local);
      }
      // Vocabulary padding rows (past the global shape) stay zero.
      std::vector<int64_t> held = heldShape(p, offset);
      rt::Tensor real = full.view(0, held);
      if (real.numel() > 0) { // none: padding only (a table smaller than tp)
        if (p.init == "uniform")
          rt::initParam(real, p.name, p.global, offset, held, kInitSeed,
                        kInitScale, p.shardBlocks());
        else
          rt::fillConstant(real, p.init == "ones" ? 1.0f : 0.0f);
      }
      // ZeRO-2/3 keep a slice of the gradient; the full one exists only
      // inside a backward (fullGrad / shardGrad).
      if (kZeroStage >= 2)
        p.gradSlice = rt::Tensor({range.chunk});
      else
        p.grad = rt::Tensor(p.local);
      if (kZeroStage == 3) {
        p.value = rt::Tensor({range.chunk});
        rt::zero3TakeSlice(p.value, full, dp);
      } else {
        p.value = full;
      }
      if (kOptimizerAdam) {
        int64_t states = kZeroStage == 0 ? numel : range.chunk;
        p.m = rt::Tensor({states});
        p.v = rt::Tensor({states});
      }
    }
  }

  /// Adds every parameter shard (whole, ZeRO-3 slices gathered) to `dump`.
  void dumpParams(rt::ParamDump &dump) {
    awaitAllParams();
    for (Param &p : P) {
      std::vector<int64_t> offset = shardOffset(p);
      rt::Tensor full = p.value;
      if (kZeroStage == 3) {
        full = rt::Tensor(p.local);
        rt::zero3Gather(full, p.value, c.group(p.group));
      }
      std::vector<int64_t> held = heldShape(p, offset);
      if (held.empty() || held[0] > 0) // a shard of padding only adds nothing
        dump.add(p.name, p.global, offset, full.view(0, held),
                 p.shardBlocks());
    }
  }

  /// Where parameter p's state sits in the logical parameter: the shard,
  /// or (`chunk`) this rank's ZeRO chunk of its flattening.
  rt::Slice sliceOf(const Param &p, bool chunk) const {
    rt::Slice s;
    s.global = p.global;
    s.offset = shardOffset(p);
    s.local = p.local;
    s.blocks = p.shardBlocks();
    if (chunk) {
      const rt::Group &dp = c.group(p.group);
      s.flatBegin = rt::zeroRange(rt::numelOf(p.local), dp.size(), dp.rank())
                        .begin;
    }
    return s;
  }
  /// Calls f(name, slice, tensor) for every tensor of state this rank
  /// holds: its parameters and Adam moments as it holds them (ZeRO chunks
  /// stay chunks), each with its slice of the logical parameter.
  template <class F> void forEachState(F &&f) {
    awaitAllParams();
    for (Param &p : P) {
      f(p.name, sliceOf(p, kZeroStage == 3), p.value);
      if (kOptimizerAdam && p.loadBalance == 0.0f) {
        f(p.name + "/adam_m", sliceOf(p, kZeroStage >= 1), p.m);
        f(p.name + "/adam_v", sliceOf(p, kZeroStage >= 1), p.v);
      }
    }
  }
  /// Adds this rank's state to a checkpoint: nothing is gathered
  /// (docs/elastic.md).
  void saveCheckpoint(rt::CheckpointWriter &w) {
    forEachState([&](const std::string &name, const rt::Slice &s,
                     rt::Tensor &t) { w.add(name, s, t); });
  }
  /// Reads what this rank holds from a checkpoint of any plan.
  void loadCheckpoint(const rt::CheckpointReader &r) {
    forEachState([&](const std::string &name, const rt::Slice &s,
                     rt::Tensor &t) { r.read(name, s, t); });
  }

  /// Where this rank's shard starts in the global parameter (inside each
  /// block along a blocked dimension).
  std::vector<int64_t> shardOffset(const Param &p) const {
    std::vector<int64_t> offset(p.global.size(), 0);
    const rt::ShardBlocks b = p.shardBlocks();
    for (auto [dim, axis] : {std::pair{p.splitDim, &p.splitAxis},
                             std::pair{p.split2Dim, &p.split2Axis}})
      if (dim >= 0)
        offset[dim] = int64_t(c.coord(*axis)) *
                      (p.local[dim] / (dim == b.dim ? b.count : 1));
    return offset;
  }
  /// The shard without its vocabulary padding: a padded table (dimension
  /// 0 rounded up to a multiple of tp) ends in rows past the global shape.
  static std::vector<int64_t> heldShape(const Param &p,
                                        const std::vector<int64_t> &offset) {
    std::vector<int64_t> held = p.local;
    if (held.empty())
      return held;
    held[0] = std::max<int64_t>(
        0, std::min<int64_t>(held[0], p.global[0] - offset[0]));
    return held;
  }

protected:
  Context &c;
  std::vector<Param> P;

  /// ZeRO-1/2: the parameters in the order the stage first reads them (its
  /// chunks' forwards in turn; set by the constructor). The optimizer step
  /// only updates each rank's chunk; the all-gathers start in this order,
  /// at most kParamGathersInFlight matrices (biases and norm weights, 1-D,
  /// are not counted) ahead of the forward, as Megatron-LM's
  /// --overlap-param-gather runs one bucket ahead. On CUDA they share the
  /// one communication stream with the forward's own collectives and
  /// transfers, which so wait behind only that much.
  std::vector<int> gatherOrder;
  size_t gatherCursor = 0;
  int gathersRunning = 0;
  static bool countsAsRunning(const Param &p) { return p.local.size() >= 2; }
  void startGather(int i) {
    Param &p = P[i];
    p.gatherDue = false;
    if (c.group(p.group).size() == 1) // the chunk is the parameter
      return;
    p.gather = rt::zeroGatherChunksAsync(p.padded, c.group(p.group));
    p.gatherRunning = true;
    gathersRunning += countsAsRunning(p);
  }
  void prefetchGathers() {
    while (gathersRunning < kParamGathersInFlight &&
           gatherCursor < gatherOrder.size()) {
      int j = gatherOrder[gatherCursor++];
      if (P[j].gatherDue)
        startGather(j);
    }
  }
  /// Parameter i is complete (its gather started now if it was still due,
  /// then waited for), and the next ones in gatherOrder start.
  void awaitParam(int i) {
    Param &p = P[i];
    if (p.gatherDue)
      startGather(i);
    if (p.gatherRunning) {
      p.gather.wait();
      p.gatherRunning = false;
      gathersRunning -= countsAsRunning(p);
    }
    prefetchGathers();
  }
  void awaitAllParams() {
    for (size_t i = 0; i < P.size(); ++i)
      awaitParam(int(i));
  }

  void zeroGrads() {
    for (Param &p : P) {
      if (kZeroStage >= 2) {
        rt::zero(p.gradSlice);
        p.grad = rt::Tensor();
      } else {
        if (p.grad.defined())
          rt::zero(p.grad);
        else // released by startSliceSum
          p.grad = rt::Tensor(p.local);
        p.gradSlice = rt::Tensor(); // ZeRO-1: startSliceSum's, used up
        p.sliceStarted = false;
      }
    }
  }
  /// ZeRO-2/3: parameter i's full gradient, allocated (zero) on first use
  /// in a backward.
  rt::Tensor &fullGrad(int i) {
    if (!P[i].grad.defined())
      P[i].grad = rt::Tensor(P[i].local);
    return P[i].grad;
  }
  /// ZeRO-2/3: starts summing parameter i's full gradient over its group
  /// into this rank's slice and releases it. The sums run while the
  /// backward goes on (on CUDA on the communication stream); each holds a
  /// full-size buffer until it is done, so at most kShardSumsInFlight run
  /// at once (DeepSpeed's overlap_comm likewise trades buffer memory for
  /// overlap).
  void shardGrad(int i) {
    Param &p = P[i];
    shardSums.push_back(
        rt::zero2AccumulateGradAsync(p.gradSlice, p.grad, c.group(p.group)));
    p.grad = rt::Tensor();
    while (shardSums.size() > kShardSumsInFlight) {
      shardSums.front().wait();
      shardSums.pop_front();
    }
  }
  static constexpr size_t kShardSumsInFlight = 2;
  std::deque<rt::Pending> shardSums;
  /// ZeRO-1: starts reduce-scattering parameter i's complete gradient over
  /// its group into this rank's slice (the part of the optimizer state it
  /// holds) without waiting: called right after the parameter's last
  /// contribution of the step, so the sum overlaps the rest of the
  /// backward. The full gradient is released then, as shardGrad does
  /// (zeroGrads allocates it again), with the same limit on sums in
  /// flight: the slices take the place of the full gradients, and the
  /// peak grows only by the buffers of the sums in flight.
  void startSliceSum(int i) {
    Param &p = P[i];
    const rt::Group &g = c.group(p.group);
    p.gradSlice =
        rt::Tensor({rt::zeroRange(p.grad.numel(), g.size(), g.rank()).chunk});
    shardSums.push_back(rt::zero2AccumulateGradAsync(p.gradSlice, p.grad, g));
    p.grad = rt::Tensor();
    p.sliceStarted = true;
    while (shardSums.size() > kShardSumsInFlight) {
      shardSums.front().wait();
      shardSums.pop_front();
    }
  }
  /// ZeRO-0/1: starts summing parameter i's gradient over each of `groups`
  /// (in order) without waiting: called right after the parameter's last
  /// contribution of the step, so the sums run while the backward goes on
  /// (on CUDA on the communication stream; the CPU backend completes them
  /// at once, or in waitGradSums() under TRIDENT_RT_DEFER_ASYNC=1).
  void startGradSums(int i, std::initializer_list<const char *> groups) {
    for (const char *g : groups)
      gradSums.push_back(rt::allReduceSumAsync(P[i].grad, c.group(g)));
  }
  /// Makes every started sum visible to later kernels (ZeRO-2/3: adds
  /// the reduce-scattered parts into the gradient slices).
  void waitGradSums() {
    for (rt::Pending &p : gradSums)
      p.wait();
    gradSums.clear();
    for (rt::Pending &p : shardSums)
      p.wait();
    shardSums.clear();
  }
  std::vector<rt::Pending> gradSums;

  /// Sums gradients over `g` (under ZeRO-2/3 the slices: every member of
  /// `g` holds the same slice of the same parameter).
  void gradAllReduce(const std::vector<int> &which, const rt::Group &g) {
    waitGradSums();
    for (int i : which)
      rt::allReduceSum(kZeroStage >= 2 ? P[i].gradSlice : P[i].grad, g);
  }
  /// ZeRO 1-3 shard each parameter's state over its own group (ZeRO-2:
  /// its gradient slice is already reduced).
  void optimizerStep(int zeroStage) {
    waitGradSums();
    rt::AdamConfig cfg;
    cfg.lr = kLr;
    cfg.beta1 = kBeta1;
    cfg.beta2 = kBeta2;
    cfg.eps = kEps;
    awaitAllParams(); // ZeRO-1/2: parameters no kernel read this step
    // The Adam updates of whole parameters (ZeRO-0) and of ZeRO-3's
    // slices, run together after the loop (rt::adamUpdateMany: one launch
    // for many parameters on CUDA).
    std::vector<rt::AdamTensors> adam;
    for (Param &p : P) {
      const rt::Group &dp = c.group(p.group);
      rt::Tensor w = p.value.reshape({p.value.numel()});
      if (p.loadBalance > 0.0f) {
        // The whole step's expert load: ZeRO-2/3 hold it as slices summed
        // over the group, ZeRO-1 not yet summed, ZeRO-0 summed already.
        rt::Tensor load(p.local);
        if (zeroStage >= 2) {
          rt::zero3Gather(load, p.gradSlice, dp);
        } else {
          rt::copy(load, p.grad);
          if (zeroStage == 1)
            rt::allReduceSum(load, dp);
        }
        int64_t begin = zeroStage == 3
            ? rt::zeroRange(load.numel(), dp.size(), dp.rank()).begin : 0;
        rt::loadBalanceUpdate(w, load, p.loadBalance, begin);
        continue;
      }
      // ZeRO-1/2 update this rank's chunk; the parameter's all-gather
      // waits for the next forward (prefetchGathers, awaitParam). ZeRO-1
      // parameters whose slice was reduce-scattered in the backward
      // (startSliceSum) step from that slice, as ZeRO-2's.
      if (zeroStage == 2 || p.sliceStarted) {
        if (kOptimizerAdam)
          rt::zero2AdamUpdateChunk(p.padded, p.gradSlice, p.m, p.v, cfg,
                                   c.step, dp);
        else
          rt::zero2SgdUpdateChunk(p.padded, p.gradSlice, kLr, dp);
        p.gatherDue = true;
        continue;
      }
      if (zeroStage == 3) { // the parameter is its slice too
        if (kOptimizerAdam)
          adam.push_back({p.value, p.gradSlice, p.m, p.v});
        else
          rt::sgdUpdate(p.value, p.gradSlice, kLr);
        continue;
      }
      rt::Tensor g = p.grad.reshape({p.grad.numel()});
      if (zeroStage == 0) {
        if (kOptimizerAdam)
          adam.push_back({w, g, p.m, p.v});
        else
          rt::sgdUpdate(w, g, kLr);
      } else {
        if (kOptimizerAdam)
          rt::zero1AdamUpdateChunk(p.padded, g, p.m, p.v, cfg, c.step, dp);
        else
          rt::zero1SgdUpdateChunk(p.padded, g, kLr, dp);
        p.gatherDue = true;
      }
    }
    rt::adamUpdateMany(adam, cfg, c.step);
    // The first gathers run while the step ends and the next one starts.
    gatherCursor = 0;
    prefetchGathers();
  }
};

} // namespace

)cpp";

const char *kMain = R"cpp(
int usage(const char *argv0) {
  if (rt::worldRank() == 0)
    std::fprintf(stderr, "usage: %s [--steps N] [--dump DIR] [--tf32] "
                         "[--fused-attention] "
                         "[--checkpoint-dir DIR [--checkpoint-every K]] "
                         "[--resume DIR]\n",
                 argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  try {
    rt::init(&argc, &argv);
  } catch (const std::exception &e) { // no GPU, no driver, MPI refused
    rt::reportFatal(e);
  }
  int64_t steps = 3, checkpointEvery = 1;
  std::string dumpDir, checkpointDir, resumeDir;
  bool tf32 = false, fusedAttention = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      char *end = nullptr;
      steps = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || steps < 1 || steps > 1000000) {
        if (rt::worldRank() == 0)
          std::fprintf(stderr, "error: --steps needs an integer in 1..1000000, "
                               "got '%s'\n", argv[i]);
        rt::finalize();
        return 2;
      }
    } else if (a == "--dump" && i + 1 < argc) {
      dumpDir = argv[++i];
    } else if (a == "--checkpoint-dir" && i + 1 < argc) {
      checkpointDir = argv[++i];
    } else if (a == "--resume" && i + 1 < argc) {
      resumeDir = argv[++i];
    } else if (a == "--checkpoint-every" && i + 1 < argc) {
      char *end = nullptr;
      checkpointEvery = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || checkpointEvery < 1) {
        if (rt::worldRank() == 0)
          std::fprintf(stderr, "error: --checkpoint-every needs a positive "
                               "integer, got '%s'\n", argv[i]);
        rt::finalize();
        return 2;
      }
    } else if (a == "--tf32") {
      tf32 = true;
    } else if (a == "--fused-attention") {
      fusedAttention = true;
    } else {
      int code = usage(argv[0]);
      rt::finalize();
      return code;
    }
  }
  try {
    // A bf16 program's GEMMs run on bf16 tensor cores where the backend
    // has them and the copies of its fp32 operands pay (rt::setBf16Gemms,
    // Bf16Gemms::Large; trident/Support/Bf16Gemm.h): its operands are bf16
    // values already, but for the attention probabilities and their
    // gradient, which the copies round as flash attention does. The
    // others, and fp32 programs' GEMMs under --tf32 (for benchmarks), run
    // on TF32 tensor cores (rt::setTf32Gemms): TF32 (10 mantissa bits)
    // holds bf16 values exactly and accumulates in fp32.
    const bool bf16Gemms = kBf16 && rt::setBf16Gemms(rt::Bf16Gemms::Large);
    const bool tf32On = (tf32 || kBf16) && rt::setTf32Gemms(true);
    if (tf32 && !tf32On && rt::worldRank() == 0)
      std::printf("note: --tf32: the %s backend has no TF32 GEMMs; they "
                  "stay fp32\n", rt::backendName());
    // The fused attention kernels (rt::setFusedAttention, which
    // TRIDENT_FUSED_ATTENTION overrides; for benchmarks until measured):
    // selective recomputation's attention under bf16 GEMMs.
    if (!rt::setFusedAttention(fusedAttention) && fusedAttention &&
        rt::worldRank() == 0)
      std::printf("note: --fused-attention: the %s backend has no fused "
                  "attention kernel\n", rt::backendName());
    if (rt::worldRank() == 0)
      std::printf("precision %s%s\n",
                  kBf16    ? "bf16 (fp32 master weights, gradients and "
                             "optimizer state"
                  : tf32On ? "fp32 (TF32 GEMMs"
                           : "fp32",
                  bf16Gemms ? "; bf16 and TF32 GEMMs)"
                  : kBf16 || tf32On ? ")"
                                    : "");
    const int ranks = kDp * kCp * kTp * kPp;
    if (rt::worldSize() != ranks)
      throw rt::Error("this program runs on dp*cp*tp*pp = " +
                      std::to_string(ranks) + " ranks, got " +
                      std::to_string(rt::worldSize()) +
                      " (mpirun -np " + std::to_string(ranks) + ")");
    rt::GridShape shape;
    shape.pp = kPp;
    shape.dp = kDp;
    shape.cp = kCp;
    shape.tp = kTp;
    shape.ep = kEp;
    rt::Grid grid(shape);
    Context c{grid, {}};
    makeGroups(c);
    std::unique_ptr<Stage> stage = makeStage(c, grid.coord(rt::Axis::PP));
    stage->initParams();
    // What a checkpoint must agree on to continue this training: the
    // data each step reads and the optimizer's state (docs/elastic.md).
    const std::vector<std::pair<std::string, std::string>> meta = {
        {"plan", kPlanSummary},
        {"global_tokens", std::to_string(int64_t(kGlobalTokens))},
        {"seq_len", std::to_string(kSeqLen)},
        {"optimizer", kOptimizerAdam ? "adam" : "sgd"}};
    int64_t first = 1;
    if (!resumeDir.empty()) {
      rt::CheckpointReader ckpt(resumeDir);
      for (const auto &[key, want] : meta)
        if (key != "plan" && ckpt.meta(key) != want)
          throw rt::Error("--resume: " + ckpt.path() + " was written with " +
                          key + " '" + ckpt.meta(key) +
                          "'; this program trains with " + key + " '" + want +
                          "'");
      stage->loadCheckpoint(ckpt);
      first = ckpt.step() + 1;
      if (rt::worldRank() == 0)
        std::printf("resumed from step %lld (plan %s)\n",
                    static_cast<long long>(ckpt.step()),
                    ckpt.meta("plan").c_str());
    }
    rt::synchronize();
    for (int64_t step = first; step <= steps; ++step) {
      double t0 = rt::wallSeconds();
      c.step = step;
      rt::zero(c.lossSum);
      stage->step();
      // The compute stream only: ZeRO-1/2's parameter all-gathers run on
      // into the next step's forward, so a step's time is the steady
      // state's (the next step waits for what this one left exposed).
      rt::synchronizeCompute();
      double seconds = rt::wallSeconds() - t0;
      double loss = rt::globalMeanLoss(c.lossSum, kGlobalTokens, grid);
      rt::reportStep(step, loss, seconds, grid);
      if (!checkpointDir.empty() && step % checkpointEvery == 0) {
        rt::CheckpointWriter w;
        stage->saveCheckpoint(w);
        w.write(checkpointDir, step, meta);
      }
    }
    rt::synchronize(); // ZeRO-1/2: the gathers still running
    rt::reportMemory(grid);
    if (!dumpDir.empty()) {
      rt::ParamDump dump;
      stage->dumpParams(dump);
      dump.write(dumpDir);
    }
  } catch (const std::exception &e) {
    rt::reportFatal(e);
  }
  rt::finalize();
  return 0;
}
)cpp";

/// When each parameter's gradient sums start in a stage's step.
/// ZeRO-0 and 1: a parameter's gradient sums over groups inside the stage
/// (dp, dp x cp, tp, the experts' data group) start right after its last
/// contribution of the step, in the backward of the last micro-batch
/// that reaches it, so they overlap the rest of the backward
/// (Megatron-Core's --overlap-grad-reduce, one parameter per bucket).
/// Sums with another stage (a tied embedding's group) stay after the
/// schedule: the other stage reaches them at another time, and an
/// all-reduce waiting for it mid-backward would hold up the pipeline's
/// own transfers.
struct StageGradSums {
  struct Action {
    size_t pos;
    int64_t kind, microBatch, chunk;
  };
  struct Reach {
    size_t pos;         ///< in the schedule's action list
    int64_t microBatch; ///< of that backward
    int64_t chunk;
  };
  tx::ProgramOp program;
  tx::StageOp stage;
  /// The groups inside the stage each parameter's gradient is summed over
  /// in the backward.
  llvm::StringMap<SmallVector<std::string, 2>> asyncGroups;
  /// ZeRO-1: parameters whose optimizer reduce-scatter starts in the
  /// backward (startSliceSum).
  llvm::StringSet<> sliceParams;
  /// The stage's last schedule action with a send or receive.
  std::optional<Action> lastTransferAction;
  /// Each parameter's last contribution of the step.
  llvm::StringMap<Reach> lastReach;
  /// Sums that start after the last transfer action's transfers.
  llvm::StringMap<RegionEmitter::AsyncSum> later;

  /// A group within the stage (no pp axis).
  bool withinStage(StringRef group) {
    tx::GroupOp g = program.lookupGroup(group);
    if (!g)
      return false;
    for (Attribute axis : g.getAxes())
      if (cast<StringAttr>(axis).getValue() == "pp")
        return false;
    return true;
  }
  /// The parameters a gradient all-reduce sums (all of the stage's when
  /// it names none).
  SmallVector<std::string> paramsOf(tx::GradAllReduceOp gar) {
    SmallVector<std::string> v;
    if (auto params = gar.getParams()) {
      for (Attribute a : *params)
        v.push_back(cast<StringAttr>(a).getValue().str());
    } else {
      for (auto p : stage.getBody().front().getOps<tx::ParamOp>())
        v.push_back(p.getSym().str());
    }
    return v;
  }
  RegionEmitter::AsyncSum asyncSumOf(StringRef sym, int64_t microBatch) {
    return RegionEmitter::AsyncSum{microBatch, asyncGroups.lookup(sym),
                                   sliceParams.contains(sym)};
  }
};

FailureOr<StageGradSums> planGradSums(tx::ProgramOp program,
                                      tx::StageOp stage) {
  StageGradSums g;
  g.program = program;
  g.stage = stage;
  if (program.getZeroStage() < 2) // ZeRO-2/3 hold gradient slices
    for (auto gar : stage.getBody().front().getOps<tx::GradAllReduceOp>())
      if (g.withinStage(gar.getGroup()))
        for (const std::string &p : g.paramsOf(gar))
          g.asyncGroups[p].push_back(gar.getGroup().str());
  // ZeRO-1: the optimizer's reduce-scatter over the parameter's data
  // group starts in the backward too, for parameters with no other sum
  // (startSliceSum). A parameter summed over tp or with another stage
  // first keeps it in the optimizer step: a reduce-scatter that copies
  // a padded gradient at issue would not see a sum still running on the
  // communication stream. Load-balanced biases are not optimized.
  if (program.getZeroStage() == 1) {
    llvm::StringSet<> summed;
    for (auto gar : stage.getBody().front().getOps<tx::GradAllReduceOp>())
      for (const std::string &p : g.paramsOf(gar))
        summed.insert(p);
    for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
      if (!summed.contains(decl.getSym()) && !decl.getLoadBalance())
        g.sliceParams.insert(decl.getSym());
  }
  // The schedule position and micro-batch of each chunk's last backward,
  // and the stage's last action with a send or receive.
  auto schedules = stage.getBody().front().getOps<tx::ScheduleOp>();
  if (!schedules.empty() && std::next(schedules.begin()) != schedules.end())
    return stage.emitOpError("has more than one texec.schedule");
  DenseMap<int64_t, std::pair<size_t, int64_t>> lastBackward;
  DenseMap<int64_t, tx::ChunkOp> chunkOf;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    chunkOf[chunk.getIndex()] = chunk;
  auto transfers = [](Region &r) {
    return r
        .walk([](Operation *op) {
          return isa<tx::SendOp, tx::RecvOp>(op) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
        })
        .wasInterrupted();
  };
  for (auto sched : schedules) {
    ArrayRef<int64_t> a = sched.getActions();
    for (size_t i = 0; i + 2 < a.size(); i += 3) {
      if (a[i] == 1)
        lastBackward[a[i + 2]] = {i, a[i + 1]};
      tx::ChunkOp ch = chunkOf.lookup(a[i + 2]);
      if (ch && transfers(a[i] == 1 ? ch.getBackward() : ch.getForward()))
        g.lastTransferAction =
            StageGradSums::Action{i, a[i], a[i + 1], a[i + 2]};
    }
  }
  // Each parameter's last contribution: the latest of those backwards
  // among the chunks that accumulate into it.
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    auto lb = lastBackward.find(chunk.getIndex());
    if (lb == lastBackward.end())
      continue;
    chunk.getBackward().walk([&](tx::AccumulateGradOp acc) {
      StringRef sym = acc.getSym();
      if (!g.asyncGroups.count(sym) && !g.sliceParams.contains(sym))
        return;
      auto it = g.lastReach.find(sym);
      if (it == g.lastReach.end() || it->second.pos < lb->second.first)
        g.lastReach[sym] =
            StageGradSums::Reach{lb->second.first, lb->second.second,
                                 static_cast<int64_t>(chunk.getIndex())};
    });
  }
  // A sum reached before the stage's last transfer action (interleaved
  // schedules) starts after that action's last transfer, in its backward;
  // if that action is a forward, after the schedule like the others.
  if (g.lastTransferAction)
    for (auto it = g.lastReach.begin(); it != g.lastReach.end();) {
      auto cur = it++;
      if (cur->second.pos >= g.lastTransferAction->pos)
        continue;
      StringRef sym = cur->getKey();
      if (g.lastTransferAction->kind == 1)
        g.later[sym] = g.asyncSumOf(sym, g.lastTransferAction->microBatch);
      else
        g.lastReach.erase(cur);
    }
  return g;
}

/// The generated main.cpp's banner, includes and constants.
void emitMainHeader(tx::ProgramOp program, tx::OptimizerOp anyOpt,
                    llvm::raw_ostream &os) {
  int64_t globalTokens = program.getDp() * program.getMicroBatches() *
                         program.getMicroBatchSize() * program.getSeqLen();
  os << "//===- main.cpp - Generated by trident emit from texec.program @"
     << program.getSymName() << " -===//\n"
     << "//\n// One SPMD program for every rank of a dp " << program.getDp()
     << " x cp " << program.getCp() << " x tp " << program.getTp() << " x pp "
     << program.getPp()
     << " grid (vpp " << program.getVpp() << ", " << program.getMicroBatches()
     << " micro-batches of " << program.getMicroBatchSize()
     << ", ZeRO " << program.getZeroStage() << ", schedule "
     << program.getSchedule() << "). Do not edit: re-emit.\n//\n"
     << "//===----------------------------------------------------------------------===//\n\n"
     << "#include \"trident/Runtime/Runtime.h\"\n\n"
     << "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n"
     << "#include <deque>\n#include <map>\n#include <memory>\n"
     << "#include <string>\n"
     << "#include <vector>\n\nnamespace rt = trident::rt;\n\n"
     << "namespace {\n"
     << "constexpr int kDp = " << program.getDp() << ", kCp = "
     << program.getCp() << ", kTp = " << program.getTp()
     << ", kPp = " << program.getPp() << ", kEp = " << program.getEp()
     << ";\n"
     << "constexpr int kMicroBatches = " << program.getMicroBatches()
     << ";\nconstexpr int64_t kMicroBatchSize = "
     << program.getMicroBatchSize() << ", kSeqLen = " << program.getSeqLen()
     << ", kLocalSeqLen = " << program.getLocalSeqLen()
     << ", kVocab = " << program.getVocab() << ";\n"
     << "/// Ranks that hold the same parameters (gradient sum, ZeRO shards).\n"
     << "constexpr const char *kDataGroup = "
     << cppString(anyOpt.getGroup()) << ";\n"
     << "constexpr int kZeroStage = " << program.getZeroStage() << ";\n"
     << "/// bf16 mixed precision (texec.program precision): activations and\n"
     << "/// the weights the kernels read are bf16 values; master weights,\n"
     << "/// gradients and optimizer state fp32.\n"
     << "constexpr bool kBf16 = "
     << (program.getPrecision() == "bf16" ? "true" : "false") << ";\n"
     << "constexpr double kGlobalTokens = " << globalTokens << ";\n"
     << "/// The plan, as a checkpoint's manifest records it.\n"
     << "constexpr const char *kPlanSummary = \"dp " << program.getDp()
     << " x cp " << program.getCp() << " x tp " << program.getTp() << " x pp "
     << program.getPp() << ", vpp " << program.getVpp() << ", ep "
     << program.getEp() << ", ZeRO " << program.getZeroStage() << "\";\n"
     << "constexpr bool kOptimizerAdam = "
     << (anyOpt.getKind() == "adam" ? "true" : "false") << ";\n"
     << llvm::formatv("constexpr float kLr = {0:e}f, kBeta1 = {1:e}f, kBeta2 "
                      "= {2:e}f, kEps = {3:e}f;\n",
                      anyOpt.getLr().convertToDouble(),
                      anyOpt.getBeta1().convertToDouble(),
                      anyOpt.getBeta2().convertToDouble(),
                      anyOpt.getEps().convertToDouble())
     << "// Seeds of the deterministic initialisation and synthetic data,\n"
     << "// and the half-width of the uniform initialisation (GPT-2's 0.02,\n"
     << "// Radford et al. 2019, used here as a uniform bound).\n"
     << "constexpr uint64_t kInitSeed = 1234, kDataSeed = 42;\n"
     << "constexpr float kInitScale = 0.02f;\n"
     << "/// ZeRO-1/2: parameter all-gathers in flight ahead of the forward\n"
     << "/// (matrices; 1-D parameters go along uncounted).\n"
     << "constexpr int kParamGathersInFlight = " << kParamGathersAhead
     << ";\n"
     << "} // namespace\n";
  os << kPrelude;
}

/// The step's loop over schedule `sched`'s actions: each runs its chunk's
/// forward or backward; with transfers, the Schedule library's
/// communication steps exchange between them.
static void emitScheduleLoop(tx::ScheduleOp sched, int numChunks,
                             bool transfers, llvm::raw_ostream &os) {
  ArrayRef<int64_t> a = sched.getActions();
  os << "    // Schedule '" << sched.getKind()
     << "': (kind, micro-batch, chunk), kind 0 forward, 1 backward.\n"
     << "    static const int kActions[][3] = {";
  for (size_t i = 0; i < a.size(); i += 3)
    os << (i ? ", " : "") << "{" << a[i] << ", " << a[i + 1] << ", " << a[i + 2]
       << "}";
  os << "};\n";
  // Runs action `a` (the generated code's variable).
  auto emitRun = [&](StringRef indent) {
    os << indent << "switch (a[2] * 2 + a[0]) {\n";
    for (int i = 0; i < numChunks; ++i)
      os << indent << "case " << 2 * i << ": forward" << i << "(a[1]); break;\n"
         << indent << "case " << 2 * i + 1 << ": backward" << i
         << "(a[1]); break;\n";
    os << indent << "}\n";
  };
  if (!transfers) {
    os << "    for (const auto &a : kActions) {\n";
    emitRun("      ");
    os << "    }\n";
  } else {
    // The Schedule library's communication steps (transferSteps): a
    // step's sends go out with the receives of the next step's
    // actions, as one group.
    SmallVector<int64_t> steps;
    if (std::optional<ArrayRef<int64_t>> given = sched.getSteps())
      steps.assign(given->begin(), given->end());
    else
      steps.assign(a.size() / 3, 1);
    os << "    // Actions per communication step (Megatron-LM: one at a "
          "time, or a\n    // steady-state forward and backward "
          "together under interleaving).\n"
       << "    static const int kSteps[] = {";
    llvm::interleaveComma(steps, os);
    os << "};\n"
       << "    const size_t numSteps = std::size(kSteps);\n"
       << "    auto incomingOf = [&](size_t at, size_t step) {\n"
       << "      std::vector<rt::Incoming> in;\n"
       << "      for (int i = 0; step < numSteps && i < kSteps[step]; "
          "++i)\n"
       << "        for (rt::Incoming &x : incoming(kActions[at + i]))\n"
       << "          in.push_back(std::move(x));\n"
       << "      return in;\n    };\n"
       << "    const rt::Group &pp = " << groupExpr("pp") << ";\n"
       << "    rt::exchangeStep(incomingOf(0, 0), pp);\n"
       << "    for (size_t s = 0, at = 0; s < numSteps; ++s) {\n"
       << "      for (int i = 0; i < kSteps[s]; ++i, ++at) {\n"
       << "        const int *a = kActions[at];\n";
    emitRun("        ");
    os << "      }\n"
       << "      rt::exchangeStep(incomingOf(at, s + 1), pp);\n"
       << "    }\n";
  }
  os << "    rt::waitAllSends();\n";
}

/// One pipeline stage's class: its parameters, its chunks' forward,
/// recompute and backward functions, and its step.
LogicalResult emitStageClass(tx::ProgramOp program, tx::StageOp stage,
                             tx::OptimizerOp anyOpt, llvm::raw_ostream &os) {
  int64_t s = stage.getIndex();
  llvm::StringMap<int> paramIndex;
  std::string ctor;
  llvm::raw_string_ostream cs(ctor);
  for (auto p : stage.getBody().front().getOps<tx::ParamOp>()) {
    int idx = paramIndex.size();
    paramIndex[p.getSym()] = idx;
    auto t = cast<RankedTensorType>(p.getType());
    int64_t splitDim = -1; // not split
    if (std::optional<uint64_t> d = p.getSplitDim())
      splitDim = static_cast<int64_t>(*d);
    cs << "    P.push_back(Param{" << cppString(p.getSym()) << ", "
       << shapeList(p.getGlobalShape()) << ", " << shapeList(t.getShape())
       << ", " << splitDim << ", "
       << cppString(p.getSplitAxis() ? *p.getSplitAxis() : "") << ", "
       << cppString(p.getInit()) << ", "
       << (p.getDataGroup() ? cppString(*p.getDataGroup()) : "kDataGroup")
       << ", {}, {}, {}, {}});\n";
    if (std::optional<uint64_t> d = p.getSplit2Dim())
      cs << "    P.back().split2Dim = " << *d << ";\n"
         << "    P.back().split2Axis = " << cppString(*p.getSplit2Axis())
         << ";\n";
    if (std::optional<uint64_t> b = p.getBlocks())
      cs << "    P.back().blocks = " << *b << ";\n";
    if (std::optional<APFloat> rate = p.getLoadBalance())
      cs << "    P.back().loadBalance = "
         << floatLiteral(rate->convertToDouble()) << ";\n";
  }
  os << "namespace {\n/// Pipeline stage " << s << ".\n"
     << "class Stage" << s << " final : public Stage {\npublic:\n"
     << "  explicit Stage" << s << "(Context &c) : Stage(c) {\n"
     << ctor;
  int numChunks = 0;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    (void)chunk;
    ++numChunks;
  }
  for (int i = 0; i < numChunks; ++i)
    os << "    S" << i << ".resize(kMicroBatches);\n";
  if (program.getZeroStage() == 1 || program.getZeroStage() == 2) {
    // First reads: each chunk's forward in turn.
    SmallVector<int> order;
    llvm::DenseSet<int> seen;
    for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
      chunk.getForward().walk([&](tx::ParamRefOp r) {
        int idx = paramIndex.lookup(r.getSym());
        if (seen.insert(idx).second)
          order.push_back(idx);
      });
    os << "    gatherOrder = {";
    llvm::interleaveComma(order, os);
    os << "};\n";
  }
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    if (chunk.getRecompute())
      os << "    X" << chunk.getIndex() << ".resize(kMicroBatches);\n";
  os << "  }\n\n";
  FailureOr<StageGradSums> sums = planGradSums(program, stage);
  if (failed(sums))
    return failure();
  StageGradSums &g = *sums;
  using Mode = RegionEmitter::Mode;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    int64_t c = chunk.getIndex();
    os << "  /// Forward of local chunk " << c << " (model chunk "
       << chunk.getGlobalIndex() << ")"
       << (chunk.getRecompute() ? ", recomputed before its backward" : "")
       << ".\n  void forward" << c << "(int mb) {\n";
    RegionEmitter f(program, chunk, paramIndex, os, Mode::Forward);
    if (failed(f.emit(chunk.getForward().front())))
      return failure();
    os << "  }\n\n";
    if (chunk.getRecompute()) {
      os << "  /// Chunk " << c << "'s forward again, from its stashed "
         << "inputs: rebuilds S" << c << "[mb].\n  void recompute" << c
         << "(int mb) {\n";
      RegionEmitter r(program, chunk, paramIndex, os, Mode::Recompute);
      if (failed(r.emit(chunk.getForward().front())))
        return failure();
      os << "  }\n\n";
    }
    os << "  void backward" << c << "(int mb) {\n";
    if (chunk.getRecompute())
      os << "    recompute" << c << "(mb);\n";
    RegionEmitter b(program, chunk, paramIndex, os, Mode::Backward);
    for (auto &[sym, where] : g.lastReach)
      if (!g.later.count(sym) && where.chunk == c)
        b.asyncSums[sym] = g.asyncSumOf(sym, where.microBatch);
    if (g.lastTransferAction && g.lastTransferAction->kind == 1 &&
        g.lastTransferAction->chunk == c) {
      // In parameter order, the same on every rank of the stage.
      for (auto decl : stage.getBody().front().getOps<tx::ParamOp>())
        if (g.later.count(decl.getSym()))
          b.sumsAfterTransfers.push_back(
              {decl.getSym().str(), g.later.lookup(decl.getSym())});
    }
    if (failed(b.emit(chunk.getBackward().front())))
      return failure();
    os << "  }\n\n";
  }
  // What each action receives, for the schedule's exchanges.
  bool transfers = false;
  std::string incomingCases;
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>()) {
    int64_t totalChunks = program.getPp() * program.getVpp();
    for (int backward = 0; backward < 2; ++backward) {
      std::string list;
      Region &body = backward ? chunk.getBackward() : chunk.getForward();
      body.walk([&](tx::RecvOp r) {
        list += (list.empty() ? "{" : ", {") +
                std::to_string(r.getPeer() % program.getPp()) + ", " +
                tagCall(chunk.getGlobalIndex(), totalChunks, backward) +
                ", " + shapeList(r.getResult().getType().getShape()) + "}";
      });
      body.walk([&](tx::SendOp) { transfers = true; });
      if (list.empty())
        continue;
      transfers = true;
      incomingCases += "    case " +
                       std::to_string(2 * chunk.getIndex() + backward) +
                       ": return {" + list + "};\n";
    }
  }
  if (transfers)
    os << "  /// What an action (kind, micro-batch, chunk) receives: its\n"
       << "  /// exchangeStep posts these a step early.\n"
       << "  static std::vector<rt::Incoming> incoming(const int *a) {\n"
       << "    const int mb = a[1];\n    (void)mb;\n"
       << "    switch (a[2] * 2 + a[0]) {\n"
       << incomingCases << "    }\n    return {};\n  }\n\n";
  os << "  void step() override {\n    zeroGrads();\n";
  bool waited = false;
  for (Operation &op : stage.getBody().front()) {
    if (auto sched = dyn_cast<tx::ScheduleOp>(op)) {
      emitScheduleLoop(sched, numChunks, transfers, os);
    } else if (auto gar = dyn_cast<tx::GradAllReduceOp>(op)) {
      if (!g.lastReach.empty() && !waited) {
        os << "    waitGradSums(); // started in the backward\n";
        waited = true;
      }
      // What did not start in the backward: every sum with another
      // stage, and parameters no backward reaches.
      SmallVector<int> now;
      for (const std::string &p : g.paramsOf(gar))
        if (!g.lastReach.count(p) || !g.withinStage(gar.getGroup()))
          now.push_back(paramIndex.lookup(p));
      if (now.empty())
        continue;
      os << "    gradAllReduce({";
      for (auto [i, idx] : llvm::enumerate(now))
        os << (i ? ", " : "") << idx;
      os << "}, " << groupExpr(gar.getGroup()) << ");\n";
    } else if (auto opt = dyn_cast<tx::OptimizerOp>(op)) {
      if (opt.getKind() != anyOpt.getKind() || opt.getLr() != anyOpt.getLr() ||
          opt.getGroup() != anyOpt.getGroup() ||
          opt.getZeroStage() != anyOpt.getZeroStage() ||
          opt.getBeta1() != anyOpt.getBeta1() ||
          opt.getBeta2() != anyOpt.getBeta2() ||
          opt.getEps() != anyOpt.getEps())
        return opt.emitOpError("stages with different optimizers are not "
                               "translated");
      os << "    optimizerStep(" << opt.getZeroStage() << ");\n";
    }
  }
  os << "  }\n\nprivate:\n";
  for (int i = 0; i < numChunks; ++i)
    os << "  /// Saved activations of chunk " << i << ", per micro-batch.\n"
       << "  std::vector<std::vector<rt::Tensor>> S" << i << ";\n";
  for (auto chunk : stage.getBody().front().getOps<tx::ChunkOp>())
    if (chunk.getRecompute())
      os << "  /// What chunk " << chunk.getIndex()
         << " received, per micro-batch (recompute).\n"
         << "  std::vector<std::vector<rt::Tensor>> X" << chunk.getIndex()
         << ";\n";
  os << "};\n} // namespace\n\n";
  return success();
}

/// The groups, the stage factory and main().
LogicalResult emitGroupsAndMain(tx::ProgramOp program, llvm::raw_ostream &os) {
  // Groups and the stage factory.
  os << "namespace {\nvoid makeGroups(Context &c) {\n";
  for (auto g : program.getBody().front().getOps<tx::GroupOp>()) {
    ArrayAttr axes = g.getAxes();
    std::string ax;
    auto pair = [&](StringRef a, StringRef b) {
      return axes.size() == 2 && cast<StringAttr>(axes[0]).getValue() == a &&
             cast<StringAttr>(axes[1]).getValue() == b && !g.getMembers();
    };
    if (pair("dp", "cp")) {
      ax = "rt::Axis::DPCP";
    } else if (pair("edp", "cp")) {
      ax = "rt::Axis::EDPCP";
    } else if (axes.size() != 1) {
      return g.emitOpError("groups over several axes other than [\"dp\", "
                           "\"cp\"] and [\"edp\", \"cp\"] are not "
                           "translated");
    } else {
      StringRef axis = cast<StringAttr>(axes[0]).getValue();
      ax = axis == "dp"    ? "rt::Axis::DP"
           : axis == "tp"  ? "rt::Axis::TP"
           : axis == "cp"  ? "rt::Axis::CP"
           : axis == "ep"  ? "rt::Axis::EP"
           : axis == "edp" ? "rt::Axis::EDP"
                           : "rt::Axis::PP";
    }
    if (auto members = g.getMembers()) {
      os << "  c.groups[" << cppString(g.getSym()) << "] = c.grid.subgroup("
         << ax << ", {";
      for (auto [i, m] : llvm::enumerate(*members))
        os << (i ? ", " : "") << m;
      os << "}, " << cppString(g.getSym()) << ");\n";
    } else {
      os << "  c.groups[" << cppString(g.getSym()) << "] = c.grid.group(" << ax
         << ");\n";
    }
  }
  os << "}\n\nstd::unique_ptr<Stage> makeStage(Context &c, int stage) {\n"
     << "  switch (stage) {\n";
  for (int64_t s = 0; s < (int64_t)program.getPp(); ++s)
    os << "  case " << s << ": return std::make_unique<Stage" << s
       << ">(c);\n";
  os << "  }\n  throw rt::Error(\"no stage \" + std::to_string(stage));\n}\n";
  os << kMain;
  return success();
}

} // namespace

LogicalResult emitMainCpp(tx::ProgramOp program, llvm::raw_ostream &os) {
  // Everything except the chunk bodies is fixed by the program's
  // attributes, its groups and its stages' declarations.
  tx::OptimizerOp anyOpt;
  program.walk([&](tx::OptimizerOp o) {
    if (!anyOpt)
      anyOpt = o;
  });
  if (!anyOpt)
    return program.emitOpError("has no texec.optimizer to translate");
  emitMainHeader(program, anyOpt, os);
  for (auto stage : program.getBody().front().getOps<tx::StageOp>())
    if (failed(emitStageClass(program, stage, anyOpt, os)))
      return failure();
  return emitGroupsAndMain(program, os);
}

LogicalResult emitModuleCpp(ModuleOp module, llvm::raw_ostream &os) {
  auto programs = module.getBody()->getOps<tx::ProgramOp>();
  if (programs.empty())
    return module.emitError("texec-to-cpp: the module holds no texec.program");
  if (std::next(programs.begin()) != programs.end())
    return module.emitError("texec-to-cpp: the module holds more than one "
                            "texec.program");
  return emitMainCpp(*programs.begin(), os);
}

} // namespace trident::target
