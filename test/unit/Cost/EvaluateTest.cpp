//===- EvaluateTest.cpp - The evaluate() entry point ----------------------===//

#include "GptProfile.h"

#include "trident/Cost/Collectives.h"
#include "trident/Cost/Evaluate.h"
#include "trident/Cost/Roofline.h"
#include "trident/Hardware/Calibration.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace trident;

namespace {
using test::cfgOf;

Evaluation mustEvaluate(const LayerProfile &p, const Cluster &c,
                        const ParallelConfig &cfg, const EvalOptions &o = {}) {
  Result<Evaluation> e = evaluate(p, c, cfg, o);
  if (!e)
    FAIL(e.message());
  return *e;
}

LayerProfile smallGpt() { return test::gptProfile("gpt-1.3b", 24, 2048, 16); }

LayerProfile mixtral() {
  TransformerShape s = llamaStyleShape("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 4096, 8);
  return *buildTransformerProfile(s);
}
/// Mixtral's tests: dp x pp, experts over ep, ZeRO-1, global batch 64.
ParallelConfig moeCfg(int64_t dp, int64_t pp, int64_t ep) {
  ParallelConfig cfg = cfgOf(dp, 1, pp, 1, 64);
  cfg.zeroStage = 1;
  cfg.ep = ep;
  return cfg;
}

/// With ep 1, options that differ only in how experts exchange their
/// tokens price the same step.
bool sameWithoutEp(const LayerProfile &p, const Cluster &c, ParallelConfig cfg,
                   const EvalOptions &a, const EvalOptions &b) {
  cfg.ep = 1;
  return mustEvaluate(p, c, cfg, a).iterationSeconds ==
         mustEvaluate(p, c, cfg, b).iterationSeconds;
}

/// The (last) layer group with routed experts, or null.
const LayerGroup *moeGroup(const LayerProfile &p) {
  const LayerGroup *moe = nullptr;
  for (const LayerGroup &g : p.groups)
    if (g.cost.topK > 0)
      moe = &g;
  return moe;
}
} // namespace

TEST_CASE("config validation names the problem", "[cost][evaluate]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:2"); // 16 GPUs
  Result<Evaluator> ev = Evaluator::create(p, c);
  REQUIRE(ev.isOk());
  auto expectError = [&](ParallelConfig cfg, const char *what) {
    Status s = ev->validate(cfg);
    INFO(what);
    REQUIRE(!s.isOk());
    INFO(s.message());
    CHECK(s.message().find(what) != std::string::npos);
  };
  expectError(cfgOf(4, 2, 1, 1, 64), "but cluster 'dgx-a100-80gb:2' has 16 GPUs");
  expectError(cfgOf(1, 16, 1, 1, 64), "tp=16 exceeds the 8 GPUs of a node");
  expectError(cfgOf(4, 3, 1, 1, 64), "dp*tp*pp*cp"); // 12 != 16
  expectError(cfgOf(16, 1, 1, 1, 40), "global_batch=40 is not divisible");
  expectError(cfgOf(0, 1, 1, 1, 64), "dp must be >= 1");
  {
    ParallelConfig x = cfgOf(16, 1, 1, 1, 64);
    x.ep = 2;
    expectError(x, "ep=2 but model 'gpt-1.3b' has no routed experts");
  }
  {
    ParallelConfig x = cfgOf(16, 1, 1, 1, 64);
    x.zeroStage = 4;
    expectError(x, "zero_stage = 4 is above the supported limit 3");
  }
  {
    ParallelConfig x = cfgOf(1, 1, 16, 1, 64);
    x.vpp = 2; // 32 chunks > 24 layers
    expectError(x, "fewer than pp*vpp");
  }
  {
    ParallelConfig x = cfgOf(4, 1, 4, 1, 20); // m = 5
    x.vpp = 2;
    expectError(x, "interleaved-1f1b with 5 micro-batches");
  }
  {
    ParallelConfig x = cfgOf(4, 1, 4, 1, 16);
    x.layersPerChunk = {6, 6, 6};
    expectError(x, "expected pp*vpp = 4");
    x.layersPerChunk = {6, 6, 6, 5};
    expectError(x, "sums to 23 but the model has 24");
  }
  {
    ParallelConfig x = cfgOf(16, 1, 1, 1, 64);
    x.precision = DType::FP8;
    expectError(x, "fp8 is not supported by A100-SXM4-80GB");
  }
  {
    ParallelConfig x = cfgOf(8, 1, 1, 1, 64);
    x.cp = 2;
    x.dp = 8;
    CHECK(ev->validate(x).isOk());
    x.cp = 16;
    x.dp = 1;
    // A sequence that cp does not divide.
    LayerProfile odd = test::gptProfile("odd", 24, 2048, 16, 2008);
    Result<Evaluator> ev2 = Evaluator::create(odd, c);
    REQUIRE(ev2.isOk());
    Status s = ev2->validate(x);
    REQUIRE(!s.isOk());
    CHECK(s.message().find("seq_len=2008 is not divisible by cp=16") !=
          std::string::npos);
  }
  {
    LayerProfile p12 = test::gptProfile("h12", 24, 1536, 12);
    Result<Evaluator> ev3 = Evaluator::create(p12, c);
    Status s = ev3->validate(cfgOf(2, 8, 1, 1, 64));
    REQUIRE(!s.isOk());
    CHECK(s.message().find("num_heads=12 is not divisible by tp=8") !=
          std::string::npos);
  }
  // V100 has no bf16.
  Cluster v = *parseClusterSpec("dgx2-v100:1");
  Status s = Evaluator::create(p, v)->validate(cfgOf(16, 1, 1, 1, 64));
  REQUIRE(!s.isOk());
  CHECK(s.message().find("bf16 is not supported by V100") != std::string::npos);
}

TEST_CASE("throughput, MFU and HFU are consistent", "[cost][evaluate]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(8, 1, 1, 4, 64);
  Evaluation e = mustEvaluate(p, c, cfg);
  double tokens = 64.0 * 2048;
  CHECK(e.tokensPerSecond == Approx(tokens / e.iterationSeconds));
  CHECK(e.tokensPerSecondPerGpu == Approx(e.tokensPerSecond / 8));
  CHECK(e.tflopsPerGpu * 1e12 ==
        Approx(p.trainFlopsPerToken * e.tokensPerSecondPerGpu));
  CHECK(e.mfu == Approx(e.tflopsPerGpu * 1e12 / 989.4e12));
  CHECK(e.hfu == Approx(e.mfu));
  CHECK(e.mfu > 0.2);
  CHECK(e.mfu < 0.8);
  CHECK(e.microBatches == 2);
  CHECK(e.iterationSeconds ==
        Approx(e.pipelineSeconds + e.dpExposedSeconds + e.optimizerSeconds));
  // Full recompute: HFU counts the extra forward; slower.
  cfg.recompute = Recompute::Full;
  Evaluation f = mustEvaluate(p, c, cfg);
  CHECK(f.iterationSeconds > e.iterationSeconds);
  CHECK(f.hfu > f.mfu * 1.25);
  CHECK(f.stages[0].activationBytes < e.stages[0].activationBytes);
  REQUIRE(f.stages.size() == 1);
  CHECK(f.stages[0].hasEmbedding);
  CHECK(f.stages[0].hasHead);
  CHECK(f.stages[0].layers == 24);
  CHECK(describeFit(f).find("fits: stage 0 needs") == 0);
}

TEST_CASE("pipeline: bubble, in-flight micro-batches, interleaving",
          "[cost][evaluate]") {
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:8"); // 64 GPUs
  ParallelConfig cfg = cfgOf(1, 8, 8, 1, 16);       // m = 16
  cfg.sequenceParallel = true;
  cfg.recompute = Recompute::Selective;
  Evaluation e = mustEvaluate(p, c, cfg);
  REQUIRE(e.stages.size() == 8);
  // 1F1B bubble ~ (p - 1) / m (Narayanan et al. 2021).
  CHECK(e.bubbleFraction == Approx(7.0 / 16).epsilon(0.2));
  CHECK(e.stages[0].peakInFlight == 8);
  CHECK(e.stages[7].peakInFlight == 1);
  CHECK(e.stages[0].hasEmbedding);
  CHECK(e.stages[7].hasHead);
  CHECK(e.stages[3].layers == 12);
  CHECK(e.stages[0].bubbleSeconds > 0);
  // Interleaving (v = 2) shrinks the bubble.
  ParallelConfig il = cfg;
  il.vpp = 2;
  Evaluation i = mustEvaluate(p, c, il);
  CHECK(i.schedule == ScheduleKind::Interleaved1F1B);
  CHECK(i.bubbleFraction < e.bubbleFraction * 0.7);
  CHECK(i.iterationSeconds < e.iterationSeconds);
  // GPipe keeps all m micro-batches in flight.
  ParallelConfig gp = cfg;
  gp.schedule = ScheduleKind::GPipe;
  Evaluation g = mustEvaluate(p, c, gp);
  CHECK(g.stages[0].peakInFlight == 16);
  CHECK(g.stages[0].activationBytes ==
        Approx(e.stages[0].activationBytes * 2).epsilon(0.02));
  // More micro-batches: smaller bubble.
  ParallelConfig more = cfg;
  more.globalBatch = 128;
  CHECK(mustEvaluate(p, c, more).bubbleFraction < e.bubbleFraction / 4);
}

TEST_CASE("explicit uneven layer split", "[cost][evaluate]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(2, 1, 4, 1, 16);
  cfg.layersPerChunk = {4, 7, 7, 6};
  Evaluation e = mustEvaluate(p, c, cfg);
  CHECK(e.stages[0].layers == 4);
  CHECK(e.stages[1].layers == 7);
  CHECK(e.stages[3].layers == 6);
  CHECK(e.stages[1].weightBytes == Approx(e.stages[2].weightBytes));
  CHECK(e.stages[1].weightBytes > e.stages[0].weightBytes);
  // Balanced default: 24 / 4 = 6 each.
  cfg.layersPerChunk.clear();
  Evaluation b = mustEvaluate(p, c, cfg);
  for (const StageBreakdown &s : b.stages)
    CHECK(s.layers == 6);
}

TEST_CASE("memory responds to ZeRO, SP and recompute", "[cost][evaluate]") {
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:16"); // 128 GPUs
  ParallelConfig cfg = cfgOf(2, 8, 8, 1, 64);
  Evaluation z0 = mustEvaluate(p, c, cfg);
  cfg.zeroStage = 1;
  Evaluation z1 = mustEvaluate(p, c, cfg);
  CHECK(z1.stages[3].optimizerBytes == Approx(z0.stages[3].optimizerBytes / 2));
  CHECK(z1.stages[3].weightBytes == Approx(z0.stages[3].weightBytes));
  cfg.zeroStage = 3;
  Evaluation z3 = mustEvaluate(p, c, cfg);
  CHECK(z3.stages[3].weightBytes == Approx(z0.stages[3].weightBytes / 2));
  // Weights of a middle stage: 12 layers x 12h^2/8 x 2 bytes (+ biases).
  double h = 12288;
  CHECK(z0.stages[3].weightBytes == Approx(12 * 12 * h * h / 8 * 2).epsilon(0.01));
  cfg.zeroStage = 1;
  cfg.sequenceParallel = true;
  Evaluation sp = mustEvaluate(p, c, cfg);
  CHECK(sp.stages[3].activationBytes < z1.stages[3].activationBytes);
  CHECK(sp.peakMemoryBytes < z1.peakMemoryBytes);
  cfg.recompute = Recompute::Full;
  Evaluation full = mustEvaluate(p, c, cfg);
  CHECK(full.stages[3].activationBytes < sp.stages[3].activationBytes / 5);
  // An impossible fit is reported with numbers.
  ParallelConfig dp = cfgOf(128, 1, 1, 1, 128);
  Evaluation big = mustEvaluate(p, c, dp);
  CHECK(!big.fits);
  CHECK(describeFit(big).find("does not fit") == 0);
  CHECK(big.peakMemoryBytes > big.memoryCapacityBytes);
}

TEST_CASE("evaluateIfFits stops at the memory of a plan that does not fit "
          "and is evaluate() otherwise",
          "[cost][evaluate]") {
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:16"); // 128 GPUs
  Result<Evaluator> ev = Evaluator::create(p, c);
  REQUIRE(ev.isOk());
  struct Case {
    ParallelConfig cfg;
    double fraction;
  };
  ParallelConfig interleaved = cfgOf(2, 8, 8, 1, 64);
  interleaved.vpp = 3;
  interleaved.recompute = Recompute::Full;
  interleaved.sequenceParallel = true;
  ParallelConfig z3 = cfgOf(2, 8, 8, 1, 64);
  z3.zeroStage = 3;
  int stopped = 0, completed = 0;
  for (Case k : {Case{cfgOf(2, 8, 8, 1, 64), 1.0},   // fits
                 Case{cfgOf(2, 8, 8, 1, 64), 0.2},   // not within 20 %
                 Case{cfgOf(128, 1, 1, 1, 128), 1.0}, // fits nowhere
                 Case{interleaved, 1.0}, Case{interleaved, 0.3},
                 Case{z3, 0.1}}) {
    INFO("dp " << k.cfg.dp << " vpp " << k.cfg.vpp << " zero "
               << k.cfg.zeroStage << " fraction " << k.fraction);
    Evaluation whole, early;
    REQUIRE(ev->evaluate(k.cfg, whole).isOk());
    REQUIRE(ev->evaluateIfFits(k.cfg, k.fraction, early).isOk());
    bool over = false;
    for (const StageBreakdown &st : whole.stages)
      over = over || st.totalBytes > k.fraction * st.capacityBytes;
    CHECK(early.memoryOnly == over);
    CHECK_FALSE(whole.memoryOnly);
    REQUIRE(early.stages.size() == whole.stages.size());
    for (size_t s = 0; s < whole.stages.size(); ++s) {
      CHECK(early.stages[s].totalBytes == whole.stages[s].totalBytes);
      CHECK(early.stages[s].activationBytes == whole.stages[s].activationBytes);
      CHECK(early.stages[s].bufferBytes == whole.stages[s].bufferBytes);
      CHECK(early.stages[s].capacityBytes == whole.stages[s].capacityBytes);
      CHECK(early.stages[s].zero3GatherElements ==
            whole.stages[s].zero3GatherElements);
    }
    CHECK(early.peakMemoryBytes == whole.peakMemoryBytes);
    CHECK(early.peakMemoryStage == whole.peakMemoryStage);
    if (over) {
      ++stopped;
      CHECK_FALSE(early.fits);
      CHECK(early.iterationSeconds == 0);
    } else {
      ++completed;
      CHECK(early.fits == whole.fits);
      CHECK(early.iterationSeconds == whole.iterationSeconds);
      CHECK(early.bubbleFraction == whole.bubbleFraction);
    }
  }
  CHECK(stopped >= 3);
  CHECK(completed >= 2);
}

TEST_CASE("an expert load imbalance below 1 or not finite is refused",
          "[cost][evaluate]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:1");
  for (double bad : {0.9, 0.0, -1.0, std::nan(""), HUGE_VAL}) {
    EvalOptions o;
    o.expertLoadImbalance = bad;
    Result<Evaluator> ev = Evaluator::create(p, c, o);
    REQUIRE_FALSE(ev.isOk());
    CHECK(ev.message().find("expertLoadImbalance") != std::string::npos);
  }
  EvalOptions ok;
  ok.expertLoadImbalance = 1.0;
  CHECK(Evaluator::create(p, c, ok).isOk());
}

TEST_CASE("recomputation per pipeline stage", "[cost][evaluate]") {
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:16"); // 128 GPUs
  ParallelConfig cfg = cfgOf(2, 8, 8, 1, 64);
  cfg.sequenceParallel = true;
  cfg.zeroStage = 1;
  Evaluation none = mustEvaluate(p, c, cfg);
  cfg.recompute = Recompute::Full;
  Evaluation full = mustEvaluate(p, c, cfg);
  // Full recompute on the first two stages only.
  ParallelConfig mixed = cfg;
  mixed.stageRecompute.assign(8, Recompute::None);
  mixed.stageRecompute[0] = mixed.stageRecompute[1] = Recompute::Full;
  Evaluation mix = mustEvaluate(p, c, mixed);
  for (int s = 0; s < 8; ++s) {
    const Evaluation &same = s < 2 ? full : none;
    INFO("stage " << s);
    CHECK(mix.stages[size_t(s)].recompute ==
          (s < 2 ? Recompute::Full : Recompute::None));
    CHECK(mix.stages[size_t(s)].activationBytes ==
          Approx(same.stages[size_t(s)].activationBytes));
    CHECK(mix.stages[size_t(s)].computeSeconds ==
          Approx(same.stages[size_t(s)].computeSeconds));
  }
  // Faster than recomputing everywhere, slower than never; HFU counts the
  // recomputed FLOPs of two stages out of eight (equal layer counts).
  CHECK(mix.iterationSeconds < full.iterationSeconds);
  CHECK(mix.iterationSeconds > none.iterationSeconds);
  double extraFull = full.hardwareFlopsPerStep - full.modelFlopsPerStep;
  double extraMix = mix.hardwareFlopsPerStep - mix.modelFlopsPerStep;
  CHECK(extraMix == Approx(extraFull * 2.0 / 8.0).epsilon(1e-9));
  // A list of the wrong length is an error that says so.
  mixed.stageRecompute.resize(3);
  Result<Evaluation> bad = evaluate(p, c, mixed);
  REQUIRE(!bad);
  CHECK(bad.message().find("per-stage recompute lists 3 stages but pp=8") !=
        std::string::npos);
}

/// GPT-3 22B at dp 4, tp 8 with sequence parallelism and ZeRO-1: the
/// configuration the tensor-parallel overlap tests price.
static ParallelConfig tpOverlapBase() {
  ParallelConfig cfg = cfgOf(4, 8, 1, 1, 64);
  cfg.zeroStage = 1;
  cfg.sequenceParallel = true;
  return cfg;
}

TEST_CASE("exposed versus hidden communication", "[cost][evaluate]") {
  LayerProfile p = test::gpt3_22B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:4");
  ParallelConfig cfg = tpOverlapBase();
  EvalOptions o;
  Evaluation base = mustEvaluate(p, c, cfg, o);
  CHECK(base.stages[0].exposedCommSeconds > 0);
  ParallelConfig overlapped = cfg;
  overlapped.tpCommOverlap = true;
  Evaluation ov = mustEvaluate(p, c, overlapped, o);
  CHECK(ov.stages[0].exposedCommSeconds < base.stages[0].exposedCommSeconds);
  CHECK(ov.stages[0].hiddenCommSeconds > base.stages[0].hiddenCommSeconds);
  CHECK(ov.iterationSeconds < base.iterationSeconds);
  // DP gradient reduction: overlapped by default; serial when disabled.
  EvalOptions serial;
  serial.overlapGradReduce = false;
  Evaluation s = mustEvaluate(p, c, cfg, serial);
  CHECK(s.dpExposedSeconds > base.dpExposedSeconds);
  CHECK(s.stages[0].dpCommSeconds == Approx(base.stages[0].dpCommSeconds));
}

TEST_CASE("compute beside hidden communication runs slower (Lee et al. "
          "2025)",
          "[cost][evaluate]") {
  LayerProfile p = test::gpt3_22B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:4"); // 32 GPUs
  EvalOptions alone;
  alone.overlapComputeSlowdown = 0;
  const double k = kOverlapComputeSlowdown;
  CHECK(EvalOptions{}.overlapComputeSlowdown == k);
  CHECK(k == 0.189);
  // ZeRO-3 over dp 32, one stage: every hidden gather and scatter adds k
  // of its time to the compute beside it, and the step grows by as much.
  ParallelConfig z3 = cfgOf(32, 1, 1, 1, 64);
  z3.zeroStage = 3;
  z3.recompute = Recompute::Full;
  Evaluation slow = mustEvaluate(p, c, z3);
  Evaluation fast = mustEvaluate(p, c, z3, alone);
  const StageBreakdown &s = slow.stages[0], &f = fast.stages[0];
  REQUIRE(f.hiddenCommSeconds > 0);
  CHECK(s.hiddenCommSeconds == Approx(f.hiddenCommSeconds));
  CHECK(s.computeSeconds - f.computeSeconds ==
        Approx(k * f.hiddenCommSeconds).epsilon(1e-9));
  CHECK(slow.iterationSeconds - fast.iterationSeconds ==
        Approx(k * f.hiddenCommSeconds).epsilon(1e-9));
  // Data parallelism (one stage): the gradient all-reduce hides under the
  // last backward, which runs k of it longer.
  ParallelConfig z1 = cfgOf(32, 1, 1, 8, 256);
  Evaluation s1 = mustEvaluate(p, c, z1), f1 = mustEvaluate(p, c, z1, alone);
  REQUIRE(f1.dpExposedSeconds == 0);
  double grad = f1.stages[0].hiddenCommSeconds;
  REQUIRE(grad > 0);
  REQUIRE(grad < f1.stages[0].backwardSecondsPerMicroBatch);
  CHECK(s1.dpExposedSeconds == Approx(k * grad).epsilon(1e-9));
  CHECK(s1.iterationSeconds - f1.iterationSeconds ==
        Approx(k * grad).epsilon(1e-9));
  // A reduction that is exposed anyway slows nothing.
  EvalOptions serial, serialAlone;
  serial.overlapGradReduce = serialAlone.overlapGradReduce = false;
  serialAlone.overlapComputeSlowdown = 0;
  CHECK(mustEvaluate(p, c, z1, serial).iterationSeconds ==
        Approx(mustEvaluate(p, c, z1, serialAlone).iterationSeconds));
  // The tensor-parallel overlap has its own price (fewer SMs for its
  // GEMMs, the next test): on one replica nothing else is hidden.
  Cluster one = *parseClusterSpec("dgx-a100-80gb:1");
  ParallelConfig tp = cfgOf(1, 8, 1, 1, 8);
  tp.sequenceParallel = true;
  tp.tpCommOverlap = true;
  CHECK(mustEvaluate(p, one, tp).iterationSeconds ==
        Approx(mustEvaluate(p, one, tp, alone).iterationSeconds));
}

TEST_CASE("the search's floors bound what ZeRO's collectives add",
          "[cost][evaluate][search]") {
  // tp 1, cp 1, no experts: a ZeRO-3 stage's communication is its gathers
  // and scatters only (no data-parallel sum follows), so k times their
  // time, summed over the stages, is at least the floor times m, with
  // equality on one stage and one chunk.
  LayerProfile p = test::gpt3_22B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:4"); // 32 GPUs
  auto comm = [](const Evaluation &e) {
    double sum = 0;
    for (const StageBreakdown &st : e.stages)
      sum += st.hiddenCommSeconds + st.exposedCommSeconds;
    return sum;
  };
  const double k = kOverlapComputeSlowdown;
  for (Runtime rt :
       {Runtime::MegatronCore, Runtime::Fsdp, Runtime::DeepSpeed}) {
    EvalOptions o;
    applyRuntime(o, rt);
    Result<Evaluator> ev = Evaluator::create(p, c, o);
    REQUIRE(ev.isOk());
    for (auto [pp, vpp] : {std::pair{1, 1}, {2, 1}, {4, 1}, {4, 3}}) {
      ParallelConfig cfg = cfgOf(32 / pp, 1, pp, 1, 64);
      cfg.vpp = vpp;
      cfg.zeroStage = 3;
      cfg.recompute = Recompute::Full;
      INFO(runtimeName(rt) << " pp " << pp << " vpp " << vpp);
      Evaluation e;
      REQUIRE(ev->evaluate(cfg, e).isOk());
      const double m = double(cfg.globalBatch / (cfg.dp * cfg.microBatch));
      const double floor = ev->zero3AddedFloor(cfg);
      CHECK(floor > 0);
      CHECK(floor * m <= k * comm(e) * (1 + 1e-12));
      if (pp == 1 && rt == Runtime::MegatronCore)
        CHECK(floor * m == Approx(k * comm(e)).epsilon(1e-12));
    }
  }
  // ZeRO-1/2's parameter gather: the floor times pp is at most the
  // step's exposed data-parallel time, equal on one stage with the
  // gradient sum hidden and not slowing anything.
  for (int zero : {1, 2})
    for (auto [pp, vpp] : {std::pair{1, 1}, {2, 1}, {4, 3}}) {
      EvalOptions quiet;
      quiet.overlapComputeSlowdown = 0;
      Result<Evaluator> ev = Evaluator::create(p, c, quiet);
      REQUIRE(ev.isOk());
      ParallelConfig cfg = cfgOf(32 / pp, 1, pp, 1, 256);
      cfg.vpp = vpp;
      cfg.zeroStage = zero;
      INFO("ZeRO-" << zero << " pp " << pp << " vpp " << vpp);
      Evaluation e;
      REQUIRE(ev->evaluate(cfg, e).isOk());
      const double floor = ev->paramGatherFloor(cfg);
      CHECK(floor > 0);
      CHECK(floor / double(pp) <= e.dpExposedSeconds * (1 + 1e-12));
      if (pp == 1)
        CHECK(floor == Approx(e.dpExposedSeconds).epsilon(1e-12));
      cfg.zeroStage = 0;
      CHECK(ev->paramGatherFloor(cfg) == 0);
    }
  Result<Evaluator> ev = Evaluator::create(p, c);
  ParallelConfig z2 = cfgOf(32, 1, 1, 1, 64);
  z2.zeroStage = 2;
  CHECK(ev->zero3AddedFloor(z2) == 0);
  // Two GPU types, or measured collective bandwidths: no floor claimed.
  Result<Cluster> mixedOr = parseClusterJson(R"({
    "groups": [{"preset": "dgx-h100", "nodes": 2},
               {"preset": "dgx-a100-80gb", "nodes": 2}]})");
  REQUIRE(mixedOr.isOk());
  Cluster mixed = *mixedOr;
  ParallelConfig z3 = cfgOf(16, 1, 2, 1, 64);
  z3.zeroStage = 3;
  Result<Evaluator> two = Evaluator::create(p, mixed);
  REQUIRE(two.isOk());
  CHECK(two->validate(z3).isOk());
  CHECK(two->zero3AddedFloor(z3) == 0);
  Cluster calibrated = c;
  calibrated.groups[0].collectiveCalibration.push_back(
      {CollectiveOp::AllGather, CommScope::InterNode, 1e9, 100e9});
  ParallelConfig z3one = cfgOf(32, 1, 1, 1, 64);
  z3one.zeroStage = 3;
  CHECK(ev->zero3AddedFloor(z3one) > 0);
  Result<Evaluator> cal = Evaluator::create(p, calibrated);
  REQUIRE(cal.isOk());
  CHECK(cal->zero3AddedFloor(z3one) == 0);
}

TEST_CASE("the tensor-parallel overlap's price: GEMMs on fewer SMs, "
          "userbuffers", "[cost][evaluate]") {
  LayerProfile p = test::gpt3_22B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:4");
  ParallelConfig cfg = tpOverlapBase();
  Evaluation base = mustEvaluate(p, c, cfg);
  ParallelConfig ov = cfg;
  ov.tpCommOverlap = true;
  Evaluation on = mustEvaluate(p, c, ov);
  // Megatron-LM asserts sequence parallelism with it; tp 1 has nothing to
  // overlap. (No EvalOptions flag prices it for every configuration: the
  // configuration's tp_comm_overlap is the one switch, under this rule.)
  ParallelConfig noSpCfg = ov;
  noSpCfg.sequenceParallel = false;
  Result<Evaluation> noSp = evaluate(p, c, noSpCfg);
  REQUIRE(!noSp);
  CHECK(noSp.message().find("tp_comm_overlap needs tp > 1 and sequence "
                            "parallelism") != std::string::npos);
  // The row-parallel forward GEMMs and the column-parallel backward GEMMs
  // run on 108 - 16 of the A100's SMs: compute grows, by less than the
  // SM ratio (the attention, the other GEMMs and the elementwise kernels
  // keep the whole GPU).
  double grew = on.stages[0].computeSeconds / base.stages[0].computeSeconds;
  CHECK(grew > 1.02);
  CHECK(grew < 108.0 / 92.0);
  // More SMs, a smaller share taken: H100 (132) slows less than A100.
  Cluster h = *parseClusterSpec("dgx-h100:4");
  double grewH = mustEvaluate(p, h, ov).stages[0].computeSeconds /
                 mustEvaluate(p, h, cfg).stages[0].computeSeconds;
  CHECK(grewH > 1.0);
  CHECK(grewH < grew);
  // Userbuffers: 12 buffers of (seq x micro-batch / cp) x hidden bf16
  // elements, once for the model.
  double ub = 12.0 * double(p.seqLen) * double(p.hidden) * 2;
  CHECK(on.stages[0].bufferBytes - base.stages[0].bufferBytes ==
        Approx(ub).epsilon(1e-9));
  // Under FP8 the 8 all-gather buffers hold one byte per element.
  ParallelConfig ov8 = ov, cfg8 = cfg;
  ov8.precision = cfg8.precision = DType::FP8;
  Cluster h8 = *parseClusterSpec("dgx-h100:4");
  CHECK(mustEvaluate(p, h8, ov8).stages[0].bufferBytes -
            mustEvaluate(p, h8, cfg8).stages[0].bufferBytes ==
        Approx(16.0 * double(p.seqLen) * double(p.hidden)).epsilon(1e-9));
}

TEST_CASE("calibration changes results", "[cost][evaluate]") {
  LayerProfile p = test::gpt3_22B();
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(1, 8, 1, 1, 16);
  Evaluation before = mustEvaluate(p, c, cfg);
  Result<Calibration> cal = parseCalibrationJson(R"({
      "gpu": "H100-SXM5-80GB",
      "gemm": [{"m": 2048, "n": 4608, "k": 6144, "dtype": "bf16", "tflops": 400}],
      "collectives": [{"op": "all_reduce", "scope": "intra_node",
                       "bytes": 25165824, "bus_bandwidth_gb_per_s": 100}]})");
  REQUIRE(cal.isOk());
  REQUIRE(applyCalibration(c, *cal).isOk());
  Evaluation after = mustEvaluate(p, c, cfg);
  CHECK(after.iterationSeconds > before.iterationSeconds * 1.2);
  CHECK(after.stages[0].exposedCommSeconds >
        before.stages[0].exposedCommSeconds * 2);
}

TEST_CASE("heterogeneous cluster: stages on different GPU types",
          "[cost][evaluate]") {
  Result<Cluster> c = parseClusterJson(R"({
    "groups": [{"preset": "dgx-h100", "nodes": 1},
               {"preset": "dgx-a100-80gb", "nodes": 1}],
    "inter_group": {"bandwidth_gb_per_s": 20, "latency_us": 20}})");
  REQUIRE(c.isOk());
  LayerProfile p = smallGpt();
  ParallelConfig cfg = cfgOf(8, 1, 2, 1, 64);
  Evaluation e = mustEvaluate(p, *c, cfg);
  REQUIRE(e.stages.size() == 2);
  CHECK(e.stages[0].nodeGroup == 0);
  CHECK(e.stages[1].nodeGroup == 1);
  // The tied embedding's gradient (51200 x 2048, 4-byte gradients) is
  // summed across the 20 GB/s, 20 us link between the groups.
  double tied = 51200.0 * 2048 * stateBytesPerParam(cfg.precision, {}).gradient;
  CHECK(e.tiedEmbeddingSeconds == Approx(2 * 20e-6 + tied / 20e9));
  // The A100 stage is slower per micro-batch (same layer count).
  CHECK(e.stages[1].forwardSecondsPerMicroBatch >
        e.stages[0].forwardSecondsPerMicroBatch * 1.5);
  // Uneven split moving layers to the H100 stage helps.
  cfg.layersPerChunk = {16, 8};
  Evaluation u = mustEvaluate(p, *c, cfg);
  CHECK(u.iterationSeconds < e.iterationSeconds);
  // A stage spanning both groups (pp = 1 over 8 + 8 GPUs) is rejected.
  Result<Evaluator> ev = Evaluator::create(p, *c);
  for (ParallelConfig bad : {cfgOf(16, 1, 1, 1, 64), cfgOf(2, 8, 1, 1, 64)}) {
    Status s = ev->validate(bad);
    REQUIRE(!s.isOk());
    CHECK(s.message().find("a stage would span two GPU types") !=
          std::string::npos);
  }
}

TEST_CASE("data shares: each GPU type runs its own replicas",
          "[cost][evaluate]") {
  const char *json = R"({
    "groups": [{"preset": "dgx-h100", "nodes": 1},
               {"preset": "dgx-a100-80gb", "nodes": 1}],
    "inter_group": {"bandwidth_gb_per_s": 20, "latency_us": 20}})";
  Result<Cluster> c = parseClusterJson(json);
  REQUIRE(c.isOk());
  LayerProfile p = smallGpt();
  // tp 2 everywhere: 4 H100 replicas with 6 micro-batches of 2, 4 A100
  // replicas with 2: 4*2*6 + 4*2*2 = 64 sequences.
  ParallelConfig cfg = cfgOf(8, 2, 1, 2, 64);
  cfg.dataShares = {{0, 4, 6}, {1, 4, 2}};
  Evaluation e = mustEvaluate(p, *c, cfg);
  REQUIRE(e.stages.size() == 2);
  CHECK(e.stages[0].nodeGroup == 0);
  CHECK(e.stages[1].nodeGroup == 1);
  REQUIRE(e.shareSeconds.size() == 2);
  // Each share is its group alone with its own batch.
  for (int g = 0; g < 2; ++g) {
    Cluster one = *c;
    one.groups = {c->groups[size_t(g)]};
    ParallelConfig sub = cfgOf(4, 2, 1, 2, g == 0 ? 48 : 16);
    Evaluation alone = mustEvaluate(p, one, sub);
    CHECK(e.shareSeconds[size_t(g)] == Approx(alone.iterationSeconds));
    CHECK(e.stages[size_t(g)].totalBytes == Approx(alone.peakMemoryBytes));
  }
  // The step: the slower share plus the gradient all-reduce between the
  // groups (each GPU its 1/dp slice of the fp16/bf16 gradients, ring of 2
  // over the 20 GB/s link: 2*(2-1)/2 of the bytes, 2 latencies).
  double slowest = std::max(e.shareSeconds[0], e.shareSeconds[1]);
  double paramsPerGpu = e.stages[0].weightBytes / 2.0; // bf16 weights
  double cross = (paramsPerGpu * 2.0 / 4.0) / 20e9 + 2 * 20e-6;
  CHECK(e.crossGroupSyncSeconds == Approx(cross).epsilon(1e-6));
  CHECK(e.iterationSeconds == Approx(slowest + cross));
  CHECK(e.tokensPerSecond == Approx(64.0 * 2048 / e.iterationSeconds));
  // Moving micro-batches towards the H100s pays off against an even split.
  ParallelConfig even = cfg;
  even.dataShares = {{0, 4, 4}, {1, 4, 4}};
  CHECK(e.iterationSeconds < mustEvaluate(p, *c, even).iterationSeconds);
  // Errors name the share and the problem.
  Result<Evaluator> ev = Evaluator::create(p, *c);
  REQUIRE(ev.isOk());
  auto expectError = [&](ParallelConfig bad, const char *what) {
    Status s = ev->validate(bad);
    INFO(what);
    REQUIRE(!s.isOk());
    INFO(s.message());
    CHECK(s.message().find(what) != std::string::npos);
  };
  ParallelConfig bad = cfg;
  bad.dataShares = {{0, 4, 6}};
  expectError(bad, "data shares list 1 node groups but cluster");
  bad.dataShares = {{0, 4, 6}, {0, 4, 2}};
  expectError(bad, "has two data shares");
  bad.dataShares = {{0, 4, 6}, {1, 4, 3}};
  expectError(bad, "the data shares run 72 sequences");
  bad.dataShares = {{0, 4, 6}, {1, 3, 2}};
  expectError(bad, "dp=8 but the data shares add up to 7");
  bad.dp = 6;
  bad.dataShares = {{0, 2, 6}, {1, 4, 4}};
  bad.globalBatch = 56;
  expectError(bad, "data share of 'dgx-h100'");
  Cluster single = *parseClusterSpec("dgx-h100:2");
  Result<Evaluator> ev1 = Evaluator::create(p, single);
  REQUIRE(ev1.isOk());
  Status s = ev1->validate(cfg);
  REQUIRE(!s.isOk());
  CHECK(s.message().find("need a cluster of several node groups") !=
        std::string::npos);
}

TEST_CASE("expert parallelism and context parallelism", "[cost][evaluate]") {
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = cfgOf(8, 2, 1, 1, 64);
  cfg.sequenceParallel = true;
  cfg.zeroStage = 1;
  Evaluation ep1 = mustEvaluate(p, c, cfg);
  cfg.ep = 8;
  Evaluation ep8 = mustEvaluate(p, c, cfg);
  // Expert weights divided by ep.
  CHECK(ep8.stages[0].weightBytes < ep1.stages[0].weightBytes / 3);
  // The all-to-all lengthens each micro-batch; the expert gradients no
  // longer need a data-parallel reduction (edp = 1).
  CHECK(ep8.stages[0].forwardSecondsPerMicroBatch >
        ep1.stages[0].forwardSecondsPerMicroBatch);
  CHECK(ep8.stages[0].dpCommSeconds < ep1.stages[0].dpCommSeconds);
  cfg.ep = 16;
  Result<Evaluator> ev = Evaluator::create(p, c);
  Status s = ev->validate(cfg);
  REQUIRE(!s.isOk());
  CHECK(s.message().find("ep=16 does not divide the 8 experts") !=
        std::string::npos);

  // Context parallel: activations per GPU halve; KV exchange appears.
  LayerProfile g = test::gptProfile("gpt-long", 24, 4096, 32, 16384);
  ParallelConfig a = cfgOf(4, 4, 1, 1, 16);
  a.sequenceParallel = true;
  ParallelConfig b = cfgOf(2, 4, 1, 1, 16);
  b.sequenceParallel = true;
  b.cp = 2;
  Evaluation ea = mustEvaluate(g, c, a), eb = mustEvaluate(g, c, b);
  CHECK(eb.stages[0].activationBytes ==
        Approx(ea.stages[0].activationBytes / 2).epsilon(0.05));
  CHECK(eb.stages[0].hiddenCommSeconds > ea.stages[0].hiddenCommSeconds);
}

TEST_CASE("the trident runtime prices its all-gather token dispatcher",
          "[cost][evaluate]") {
  // The emitted programs gather the ep group's tokens and reduce-scatter
  // the experts' outputs (and the same for the gradients), where the
  // all-to-all dispatcher sends each token's top-k copies once.
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = cfgOf(8, 2, 1, 1, 64);
  cfg.sequenceParallel = true;
  cfg.zeroStage = 1;
  cfg.ep = 8;
  EvalOptions gather;
  applyRuntime(gather, Runtime::Trident);
  CHECK(gather.moeDispatcher == MoeDispatcher::AllGather);
  // (The expectations below count 2-byte bf16 elements.)
  gather.bf16InFp32Storage = false;
  for (Runtime r : {Runtime::MegatronCore, Runtime::MegatronLm, Runtime::Fsdp,
                    Runtime::Torchtitan}) {
    EvalOptions o;
    applyRuntime(o, r);
    CHECK(o.moeDispatcher != MoeDispatcher::AllGather);
  }
  EvalOptions a2a = gather;
  a2a.moeDispatcher = MoeDispatcher::AllToAll;
  Evaluation eg = mustEvaluate(p, c, cfg, gather);
  Evaluation ea = mustEvaluate(p, c, cfg, a2a);
  // Per MoE layer and micro-batch, forward: AG + RS of the group's tokens
  // against two all-to-alls of a rank's top-k copies.
  const LayerGroup *moe = moeGroup(p);
  REQUIRE(moe);
  REQUIRE(moe->cost.topK == 2);
  const NodeGroup &hw = c.groups[0];
  CommGroupShape sh = groupShape(hw, 8, 2);
  double rankBytes = moe->cost.a2aBytesPerSample / 2; // sp over tp 2
  double group = rankBytes / 2 * 8;
  double perLayer =
      collectiveSeconds(hw, CollectiveOp::AllGather, group, sh,
                        gather.algorithm) +
      collectiveSeconds(hw, CollectiveOp::ReduceScatter, group, sh,
                        gather.algorithm) -
      2 * collectiveSeconds(hw, CollectiveOp::AllToAll, rankBytes, sh,
                            gather.algorithm);
  CHECK(perLayer > 0);
  CHECK(eg.stages[0].forwardSecondsPerMicroBatch -
            ea.stages[0].forwardSecondsPerMicroBatch ==
        Approx(double(moe->count) * perLayer).epsilon(1e-9));
  CHECK(eg.iterationSeconds > ea.iterationSeconds);
  // Without expert parallelism nothing is dispatched either way.
  CHECK(sameWithoutEp(p, c, cfg, gather, a2a));
}

TEST_CASE("the flex dispatcher and force-balanced routing",
          "[cost][evaluate]") {
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = moeCfg(16, 1, 8); // each ep group inside a node
  EvalOptions a2a;
  EvalOptions flex;
  flex.moeDispatcher = MoeDispatcher::Flex;
  Evaluation ea = mustEvaluate(p, c, cfg, a2a);
  Evaluation ef = mustEvaluate(p, c, cfg, flex);
  const LayerGroup *moe = moeGroup(p);
  REQUIRE(moe);
  // Per MoE layer and micro-batch, forward: dispatch + combine.
  const NodeGroup &hw = c.groups[0];
  CommGroupShape sh = groupShape(hw, 8, 1);
  double bytes = moe->cost.a2aBytesPerSample;
  double perLayer =
      2 * flexDispatchSeconds(hw, bytes / 2, moe->cost.numExperts, 2, sh) -
      2 * collectiveSeconds(hw, CollectiveOp::AllToAll, bytes, sh);
  CHECK(perLayer < 0); // a token once per rank, not once per expert
  CHECK(ef.stages[0].forwardSecondsPerMicroBatch -
            ea.stages[0].forwardSecondsPerMicroBatch ==
        Approx(double(moe->count) * perLayer).epsilon(1e-9));
  // Balanced routing: the expert GEMMs at the mean load, not 1.25 x.
  EvalOptions balanced;
  balanced.expertLoadImbalance = 1;
  Evaluation eb = mustEvaluate(p, c, cfg, balanced);
  CHECK(eb.stages[0].forwardSecondsPerMicroBatch <
        ea.stages[0].forwardSecondsPerMicroBatch);
  CHECK(eb.stages[0].activationBytes == ea.stages[0].activationBytes);
  CHECK(parseMoeDispatcher("flex") == MoeDispatcher::Flex);
  CHECK(parseMoeDispatcher("alltoall") == MoeDispatcher::AllToAll);
  CHECK_FALSE(parseMoeDispatcher("deepep"));
  CHECK(moeDispatcherName(MoeDispatcher::AllGather) == "allgather");
}

TEST_CASE("FP8 keeps its GEMM inputs in one byte", "[cost][evaluate]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
  LayerProfile marked = p;
  double perLayer = 0;
  for (LayerGroup &g : marked.groups)
    if (g.cost.kind == LayerKind::Block) {
      g.cost.actGemmInTpSharded = 1e6;
      perLayer = 1e6;
    }
  REQUIRE(perLayer > 0);
  for (DType d : {DType::BF16, DType::FP8}) {
    cfg.precision = d;
    Evaluation plain = mustEvaluate(p, c, cfg);
    Evaluation fp8 = mustEvaluate(marked, c, cfg);
    if (d == DType::BF16) {
      CHECK(fp8.stages[0].activationBytes == plain.stages[0].activationBytes);
    } else {
      // Half of each marked byte (a 16-bit activation kept as FP8) less.
      CHECK(fp8.stages[0].activationBytes < plain.stages[0].activationBytes);
      CHECK(fp8.iterationSeconds == plain.iterationSeconds);
    }
  }
}

/// `plain` and `marked` (a copy with some bf16 storage marked) evaluated
/// alike, on one H100 at dp 8, under the trident preset (whose bf16
/// programs the marks describe) and megatron-core, in bf16 and in fp32:
/// `check(tridentBf16, plainEvaluation, markedEvaluation)` for each.
template <class Check>
void underTridentAndCore(const LayerProfile &plain, const LayerProfile &marked,
                         Check check) {
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  EvalOptions core;
  applyRuntime(core, Runtime::MegatronCore);
  for (DType d : {DType::BF16, DType::F32})
    for (const EvalOptions *o : {&trident, &core}) {
      INFO(dtypeName(d) << (o == &trident ? " trident" : " megatron-core"));
      cfg.precision = d;
      check(d == DType::BF16 && o == &trident, mustEvaluate(plain, c, cfg, *o),
            mustEvaluate(marked, c, cfg, *o));
    }
}

TEST_CASE("the trident preset keeps what only bf16 readers read in bf16",
          "[cost][evaluate][bf16]") {
  // The bf16 programs of `trident emit` hold bf16 values in fp32 tensors
  // (bf16InFp32Storage) except what only linear layers read, which they
  // move into bf16 tensors (rt::toBf16): those saved bytes count two bytes
  // an element, not four. Their step time is priced as before.
  LayerProfile p = smallGpt();
  LayerProfile marked = p;
  for (LayerGroup &g : marked.groups)
    if (g.cost.kind == LayerKind::Block)
      g.cost.actBf16TensorTpSharded = 1e6;
  underTridentAndCore(p, marked, [](bool tridentBf16, const Evaluation &plain,
                                    const Evaluation &e) {
    CHECK(e.iterationSeconds == plain.iterationSeconds);
    if (tridentBf16)
      CHECK(e.stages[0].activationBytes < plain.stages[0].activationBytes);
    else
      CHECK(e.stages[0].activationBytes == plain.stages[0].activationBytes);
  });
}

TEST_CASE("the trident preset copies only a GEMM's operands not in the "
          "type it runs in",
          "[cost][evaluate][bf16]") {
  // bf16GemmPays (trident/Support/Bf16Gemm.h): a product of bf16 tensors
  // runs on bf16 tensor cores with nothing copied, so marking the linear
  // layers' operands as bf16 tensors (GemmCost::xBf16 ...) takes the
  // copies' traffic and launches off the trident preset's bf16 step, and
  // changes nothing under megatron-core (bf16 storage throughout) or in
  // fp32.
  LayerProfile p = smallGpt();
  LayerProfile marked = p;
  int gemms = 0;
  for (LayerGroup &g : marked.groups)
    for (GemmCost &gemm : g.cost.gemms)
      if (!gemm.attentionCore) {
        gemm.xBf16 = gemm.wBf16 = gemm.dyBf16 = true;
        ++gemms;
      }
  REQUIRE(gemms > 0);
  underTridentAndCore(p, marked, [](bool tridentBf16, const Evaluation &plain,
                                    const Evaluation &e) {
    if (tridentBf16)
      CHECK(e.iterationSeconds < plain.iterationSeconds);
    else
      CHECK(e.iterationSeconds == plain.iterationSeconds);
    CHECK(e.stages[0].activationBytes == plain.stages[0].activationBytes);
  });
  // Only the weight a bf16 tensor: a product of that weight and an fp32
  // x copies x alone, less than both (and the data gradient's dy W^T the
  // same), so still faster than nothing marked.
  LayerProfile weights = p;
  for (LayerGroup &g : weights.groups)
    for (GemmCost &gemm : g.cost.gemms)
      if (!gemm.attentionCore)
        gemm.wBf16 = true;
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8); // bf16
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  double plain = mustEvaluate(p, c, cfg, trident).iterationSeconds;
  double w = mustEvaluate(weights, c, cfg, trident).iterationSeconds;
  double all = mustEvaluate(marked, c, cfg, trident).iterationSeconds;
  CHECK(w < plain);
  CHECK(all < w);
}

TEST_CASE("a tied embedding's gradient is summed over the first and last "
          "stage after the schedule",
          "[cost][evaluate]") {
  // GPT ties its LM head to the token embedding (Megatron's default): with
  // pipeline stages, the first and last stage each hold the matrix and
  // all-reduce its gradient once per step, exposed.
  LayerProfile gpt = smallGpt();
  Cluster c = *parseClusterSpec("dgx-h100:2"); // 16 GPUs, 8 per node
  ParallelConfig cfg = cfgOf(1, 4, 4, 1, 32);
  EvalOptions o;
  Evaluation e = mustEvaluate(gpt, c, cfg, o);
  // Stage 0 on GPUs 0..3, stage 3 on GPUs 12..15: one in each node.
  const NodeGroup &hw = c.groups[0];
  StateBytesPerParam state = stateBytesPerParam(cfg.precision, o);
  double bytes = 51200.0 * 2048 / 4 * state.gradient;
  double sum = collectiveSeconds(hw, CollectiveOp::AllReduce, bytes,
                                 groupShape(hw, 2, 12), o.algorithm);
  CHECK(groupShape(hw, 2, 12).nodes() == 2);
  CHECK(sum > 1e-4);
  CHECK(e.tiedEmbeddingSeconds == Approx(sum).epsilon(1e-12));
  CHECK(e.iterationSeconds ==
        Approx(e.pipelineSeconds + e.dpExposedSeconds + e.optimizerSeconds));
  CHECK(e.dpExposedSeconds >= sum);
  // Only the first and last stage take part.
  REQUIRE(e.stages.size() == 4);
  CHECK(e.stages[0].dpCommSeconds ==
        Approx(e.stages[1].dpCommSeconds + sum).epsilon(1e-9));
  CHECK(e.stages[3].dpCommSeconds > e.stages[2].dpCommSeconds + 0.99 * sum);
  // Two stages inside one node sum over NVLink: faster.
  ParallelConfig two = cfgOf(1, 4, 2, 1, 32);
  Evaluation e2 = mustEvaluate(gpt, *parseClusterSpec("dgx-h100:1"), two, o);
  CHECK(e2.tiedEmbeddingSeconds ==
        Approx(collectiveSeconds(hw, CollectiveOp::AllReduce, bytes,
                                 groupShape(hw, 2, 4), o.algorithm))
            .epsilon(1e-12));
  CHECK(e2.tiedEmbeddingSeconds < sum);
  // One stage holds the matrix once: nothing to sum.
  CHECK(mustEvaluate(gpt, c, cfgOf(4, 4, 1, 1, 32), o).tiedEmbeddingSeconds ==
        0);
  // An untied model (Mixtral's separate LM head) sums nothing either.
  ParallelConfig m = cfgOf(1, 4, 4, 1, 32);
  CHECK(mustEvaluate(mixtral(), c, m, o).tiedEmbeddingSeconds == 0);
  // Interleaved stages: the head's chunk still sits on the last stage.
  ParallelConfig vpp = cfgOf(1, 4, 4, 1, 32);
  vpp.vpp = 2;
  Evaluation ev = mustEvaluate(gpt, c, vpp, o);
  CHECK(ev.tiedEmbeddingSeconds == Approx(sum).epsilon(1e-12));
  CHECK(ev.stages.back().hasHead);
  // ZeRO-2 with dp 2 (on 4 nodes): Megatron sums the whole gradient, the
  // trident programs their half of it.
  Cluster four = *parseClusterSpec("dgx-h100:4");
  ParallelConfig z2 = cfgOf(2, 4, 4, 1, 32);
  z2.zeroStage = 2;
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  CHECK(trident.tiedSumOfZeroSlice);
  StateBytesPerParam ts = stateBytesPerParam(z2.precision, trident);
  CommGroupShape across = groupShape(four.groups[0], 2, 24);
  CHECK(mustEvaluate(gpt, four, z2, o).tiedEmbeddingSeconds ==
        Approx(collectiveSeconds(four.groups[0], CollectiveOp::AllReduce,
                                 bytes, across, o.algorithm))
            .epsilon(1e-12));
  CHECK(mustEvaluate(gpt, four, z2, trident).tiedEmbeddingSeconds ==
        Approx(collectiveSeconds(four.groups[0], CollectiveOp::AllReduce,
                                 51200.0 * 2048 / 4 * ts.gradient / 2,
                                 across, trident.algorithm))
            .epsilon(1e-12));
  z2.zeroStage = 1; // ZeRO-1 holds whole gradients
  CHECK(mustEvaluate(gpt, four, z2, trident).tiedEmbeddingSeconds ==
        Approx(collectiveSeconds(four.groups[0], CollectiveOp::AllReduce,
                                 51200.0 * 2048 / 4 * ts.gradient, across,
                                 trident.algorithm))
            .epsilon(1e-12));
}

TEST_CASE("an Evaluator gives identical results when reused",
          "[cost][evaluate]") {
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:16");
  Result<Evaluator> ev = Evaluator::create(p, c);
  REQUIRE(ev.isOk());
  std::vector<ParallelConfig> cfgs;
  for (int64_t tp : {2, 4, 8})
    for (int64_t pp : {4, 8})
      for (int64_t mb : {1, 2}) {
        ParallelConfig x = cfgOf(128 / (tp * pp), tp, pp, mb, 256);
        x.sequenceParallel = true;
        x.recompute = Recompute::Selective;
        cfgs.push_back(x);
      }
  std::vector<double> first;
  Evaluation out;
  for (const ParallelConfig &x : cfgs) {
    REQUIRE(ev->evaluate(x, out).isOk());
    first.push_back(out.iterationSeconds);
  }
  Evaluator copy = *ev;
  for (size_t i = cfgs.size(); i-- > 0;) {
    REQUIRE(copy.evaluate(cfgs[i], out).isOk());
    CHECK(out.iterationSeconds == first[i]);
    Result<Evaluation> fresh = evaluate(p, c, cfgs[i]);
    CHECK(fresh->iterationSeconds == first[i]);
  }
}

//===----------------------------------------------------------------------===//
// Runtimes (docs/cost-model.md#runtimes)
//===----------------------------------------------------------------------===//

TEST_CASE("runtime names round-trip and unknown names are refused",
          "[cost][runtime]") {
  for (Runtime r : {Runtime::MegatronCore, Runtime::MegatronLm, Runtime::Fsdp,
                    Runtime::Torchtitan, Runtime::Trident}) {
    auto back = parseRuntime(runtimeName(r));
    REQUIRE(back);
    CHECK(*back == r);
  }
  CHECK_FALSE(parseRuntime("deepspeed-2019"));
  CHECK(runtimeNames().find("torchtitan") != std::string::npos);
  CHECK(runtimeNames().find("trident") != std::string::npos);
}

TEST_CASE("runtime presets set their switches and nothing else",
          "[cost][runtime]") {
  EvalOptions o;
  o.allowTpAcrossNodes = true; // not a runtime switch: kept
  applyRuntime(o, Runtime::Fsdp);
  CHECK(o.runtime == Runtime::Fsdp);
  CHECK(o.attentionKernel == AttentionKernel::FlashAttention2);
  CHECK(o.autocast);
  CHECK(o.allowTpAcrossNodes);
  applyRuntime(o, Runtime::MegatronLm);
  CHECK_FALSE(o.flashAttention);
  CHECK_FALSE(o.overlapGradReduce);
  CHECK_FALSE(o.autocast); // reset by the new preset
  CHECK(o.attentionKernel == AttentionKernel::Best);
  applyRuntime(o, Runtime::Torchtitan);
  CHECK(o.flashAttention);
  CHECK(o.selectiveForwardFraction == Approx(0.5));
  CHECK_FALSE(o.selectiveIsDominated());
  applyRuntime(o, Runtime::Trident);
  CHECK_FALSE(o.flashAttention);
  CHECK(o.overlapGradReduce); // not ZeRO-1: see the test below
  CHECK(o.selectiveForwardFraction == 0); // reset by the new preset
  CHECK(o.tiedSumOfZeroSlice);
  applyRuntime(o, Runtime::MegatronCore);
  CHECK(o.selectiveIsDominated());
  CHECK(o.overlapGradReduce);
  CHECK_FALSE(o.tiedSumOfZeroSlice);
}

TEST_CASE("FlashAttention-2 runtimes are slower on Hopper only",
          "[cost][runtime]") {
  // Long sequences so that the attention core matters.
  LayerProfile p = test::gptProfile("gpt-1.3b", 24, 2048, 16, 8192);
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
  EvalOptions best, fa2;
  applyRuntime(best, Runtime::MegatronCore);
  applyRuntime(fa2, Runtime::Torchtitan); // FA2, no autocast
  Cluster h100 = *parseClusterSpec("dgx-h100:1");
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:1");
  Evaluation hBest = mustEvaluate(p, h100, cfg, best);
  Evaluation hFa2 = mustEvaluate(p, h100, cfg, fa2);
  CHECK(hFa2.iterationSeconds > 1.05 * hBest.iterationSeconds);
  CHECK(hFa2.runtime == Runtime::Torchtitan);
  // FA2 is Ampere's best kernel: the same prediction.
  CHECK(mustEvaluate(p, a100, cfg, fa2).iterationSeconds ==
        Approx(mustEvaluate(p, a100, cfg, best).iterationSeconds));
  // The catalog's FA2 efficiency on Hopper is 35/75 of the best kernel's
  // (FlashAttention-3 paper).
  const GpuSpec &g = h100.groups[0].gpu;
  CHECK(g.attentionEfficiencyFa2 == Approx(g.attentionEfficiency * 0.35 / 0.75));
}

TEST_CASE("the attention core runs at its length efficiency",
          "[cost][attention]") {
  // The time of the fused core at the keys a query visits is its time at
  // unlimited keys over flashLengthEfficiency: measured against the same
  // core at half the efficiency (twice the time).
  const int64_t seq = 16384;
  LayerProfile p = test::gptProfile("gpt-1.3b", 24, 2048, 16, seq);
  LayerProfile unlimited = p;
  for (LayerGroup &L : unlimited.groups)
    for (GemmCost &g : L.cost.gemms)
      if (g.attentionCore) {
        REQUIRE(g.keys == seq);
        g.keys = 0;
      }
  ParallelConfig cfg = cfgOf(1, 8, 1, 1, 8);
  EvalOptions o;
  applyRuntime(o, Runtime::MegatronCore);
  Cluster h100 = *parseClusterSpec("dgx-h100:1");
  Cluster slow = h100;
  slow.groups[0].gpu.attentionEfficiency /= 2;
  double base = mustEvaluate(unlimited, h100, cfg, o).iterationSeconds;
  double core = mustEvaluate(unlimited, slow, cfg, o).iterationSeconds - base;
  REQUIRE(core > 0);
  double e = flashLengthEfficiency(seq * causalFlashDensity(seq));
  CHECK(mustEvaluate(p, h100, cfg, o).iterationSeconds - base ==
        Approx(core * (1 / e - 1)).epsilon(0.01));
}

TEST_CASE("autocast moves fp32 elementwise traffic", "[cost][runtime]") {
  LayerProfile p = smallGpt();
  ParallelConfig cfg = cfgOf(8, 1, 1, 4, 32);
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:1");
  EvalOptions plain, amp;
  applyRuntime(plain, Runtime::Torchtitan);
  applyRuntime(amp, Runtime::Fsdp); // same attention on A100, + autocast
  Evaluation e0 = mustEvaluate(p, a100, cfg, plain);
  Evaluation e1 = mustEvaluate(p, a100, cfg, amp);
  double extra = e1.iterationSeconds - e0.iterationSeconds;
  // More time, but less than the elementwise share could ever be (the
  // GEMMs dominate a 1.3B model at 8k tokens per micro-batch).
  CHECK(extra > 0.01 * e0.iterationSeconds);
  CHECK(extra < 0.5 * e0.iterationSeconds);
}

TEST_CASE("megatron-lm: unfused attention and an exposed gradient all-reduce",
          "[cost][runtime]") {
  LayerProfile p = smallGpt();
  ParallelConfig cfg = cfgOf(16, 1, 1, 4, 64);
  Cluster c = *parseClusterSpec("dgx-a100-80gb:2");
  EvalOptions core, legacy;
  applyRuntime(core, Runtime::MegatronCore);
  applyRuntime(legacy, Runtime::MegatronLm);
  Evaluation a = mustEvaluate(p, c, cfg, core);
  Evaluation b = mustEvaluate(p, c, cfg, legacy);
  // The s^2 scores are kept (Korthikanti's 5as/h term) ...
  CHECK(b.stages[0].activationBytes > 1.2 * a.stages[0].activationBytes);
  // ... and the all-reduce no longer hides behind the last backward.
  CHECK(b.dpExposedSeconds > a.dpExposedSeconds);
  CHECK(b.iterationSeconds > a.iterationSeconds);
}

TEST_CASE("trident programs: which gradient sums overlap the backward",
          "[cost][runtime]") {
  // trident emit starts ZeRO-0's all-reduces, ZeRO-1's reduce-scatters
  // and ZeRO-2's (every micro-batch) during the backward; ZeRO-1 and 2
  // gather the updated parameters while the next forward runs; ZeRO-3
  // gathers up to two weight matrices ahead of the one in use.
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:2");
  EvalOptions ours, legacy;
  applyRuntime(ours, Runtime::Trident);
  applyRuntime(legacy, Runtime::MegatronLm); // same attention, no overlap
  // The same bytes on both sides (bf16 in 2 bytes), only the overlap
  // differs.
  ours.bf16InFp32Storage = false;
  for (int zero : {0, 1, 2, 3}) {
    ParallelConfig cfg = cfgOf(16, 1, 1, 4, 64); // one micro-batch
    cfg.zeroStage = zero;
    Evaluation a = mustEvaluate(p, c, cfg, ours);
    Evaluation b = mustEvaluate(p, c, cfg, legacy);
    INFO("zero " << zero);
    if (zero < 3) { // ZeRO-3 counts its reduce-scatters inside the layers
      CHECK(b.dpExposedSeconds > 0);
      CHECK(a.dpExposedSeconds < 0.75 * b.dpExposedSeconds);
      if (zero >= 1) {
        // The parameters' all-gather after the optimizer step overlaps
        // the next forward; waiting for it at once exposes all of it.
        CHECK(ours.overlapParamGather);
        CHECK_FALSE(legacy.overlapParamGather);
        EvalOptions waits = ours;
        waits.overlapParamGather = false;
        Evaluation w = mustEvaluate(p, c, cfg, waits);
        // (about half of the dp traffic: an all-gather after a
        // reduce-scatter of the same bytes)
        CHECK(w.dpExposedSeconds >
              a.dpExposedSeconds + 0.4 * a.stages[0].dpCommSeconds);
        CHECK(w.iterationSeconds > a.iterationSeconds);
      }
      if (zero == 1) {
        // Reduce-scattering only in the optimizer step exposes it all, as
        // Megatron-LM's local DDP all-reduces after the backward.
        EvalOptions inStep = ours;
        inStep.zero1ReduceInOptimizer = true;
        inStep.overlapParamGather = false; // and the gather, as legacy's
        CHECK(mustEvaluate(p, c, cfg, inStep).dpExposedSeconds ==
              Approx(b.dpExposedSeconds));
      }
    } else {
      // Both hide the gathers behind compute; waiting for each would not.
      CHECK(a.iterationSeconds == Approx(b.iterationSeconds));
      EvalOptions waiting = ours;
      waiting.overlapZero3Gather = false;
      CHECK(mustEvaluate(p, c, cfg, waiting).iterationSeconds >
            a.iterationSeconds);
    }
  }
  // Pipelines: a stage after the first starts its sums after its last
  // send, so only the drain hides them (Megatron-LM's window); stage 0
  // still hides them behind its last backward.
  for (int zero : {0, 1}) {
    INFO("pipeline, zero " << zero);
    // ZeRO-1's reduce-scatter is half an all-reduce: shorter sequences
    // (a shorter drain) so that the drain alone does not hide it.
    LayerProfile pp =
        test::gptProfile("gpt-1.3b", 24, 2048, 16, zero == 0 ? 512 : 128);
    Cluster c4 = *parseClusterSpec("dgx-a100-80gb:4");
    ParallelConfig cfg = cfgOf(16, 1, 2, 1, 32);
    cfg.zeroStage = zero;
    // Both with the parameters' all-gather hidden (ZeRO-1): the sums
    // alone are compared.
    EvalOptions drainOnly = legacy;
    drainOnly.overlapParamGather = true;
    Evaluation a = mustEvaluate(pp, c4, cfg, ours);
    Evaluation b = mustEvaluate(pp, c4, cfg, drainOnly);
    CHECK(a.stages[1].exposedCommSeconds ==
          Approx(b.stages[1].exposedCommSeconds));
    // Stage 0 still hides them behind its last backward (ZeRO-1: the
    // reduce-scatter, about half of its 0.014 s; both runs hide the
    // all-gather).
    CHECK(a.stages[0].exposedCommSeconds <
          b.stages[0].exposedCommSeconds - (zero == 0 ? 0.005 : 0.003));
  }
  // ZeRO-2 with 4 micro-batches: four reduce-scatters of every gradient.
  ParallelConfig cfg = cfgOf(16, 1, 1, 1, 64);
  cfg.zeroStage = 2;
  EvalOptions core;
  applyRuntime(core, Runtime::MegatronCore);
  Evaluation a = mustEvaluate(p, c, cfg, ours);
  Evaluation b = mustEvaluate(p, c, cfg, core);
  CHECK(a.stages[0].dpCommSeconds > 2 * b.stages[0].dpCommSeconds);
}

TEST_CASE("fp32 training: 4-byte states, 8 bytes of Adam, TF32 GEMMs",
          "[cost][runtime]") {
  // fp32 training against bf16 mixed precision stored in 2 bytes; the
  // benchmark of scripts/gpu-bench.sh predicts the trident programs with
  // --precision fp32.
  LayerProfile p = smallGpt();
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
  Cluster c = *parseClusterSpec("dgx-h100:1");
  EvalOptions o;
  applyRuntime(o, Runtime::Trident);
  o.bf16InFp32Storage = false;
  Evaluation mixed = mustEvaluate(p, c, cfg, o);
  cfg.precision = DType::F32;
  Evaluation f32 = mustEvaluate(p, c, cfg, o);
  const StageBreakdown &a = mixed.stages[0], &b = f32.stages[0];
  CHECK(b.weightBytes == Approx(2 * a.weightBytes));
  CHECK(b.gradientBytes == Approx(2 * a.gradientBytes));
  CHECK(b.optimizerBytes == Approx(a.optimizerBytes * 8.0 / 12.0));
  CHECK(b.activationBytes > 1.9 * a.activationBytes);
  // TF32 peak (494.7 TFLOP/s on H100) is half the BF16 peak, at a lower
  // assumed GEMM efficiency, and the elementwise work moves twice the
  // bytes; launch latencies do not grow (1.84x for this small model).
  CHECK(f32.iterationSeconds > 1.5 * mixed.iterationSeconds);
  CHECK(c.groups[0].gpu.peakFlopsPerS(DType::F32) ==
        Approx(c.groups[0].gpu.peakTf32FlopsPerS));
}

TEST_CASE("trident programs: bf16 held in fp32 tensors, GEMMs on bf16 copies",
          "[cost][runtime]") {
  // The emitted bf16 programs round bf16 values but store them in fp32
  // tensors, and run their GEMMs on bf16 copies of the operands
  // (rt::setBf16Gemms; docs/emit.md, "bf16 mixed precision"): the trident
  // preset holds a bf16 plan's memory and traffic at the fp32 plan's, its
  // GEMMs at the bf16 rate plus the copies; MFU against the bf16 peak.
  LayerProfile p = smallGpt();
  ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
  Cluster c = *parseClusterSpec("dgx-h100:1");
  EvalOptions o;
  applyRuntime(o, Runtime::Trident);
  CHECK(o.bf16InFp32Storage);
  CHECK(costPrecision(DType::BF16, o) == DType::F32);
  CHECK(costPrecision(DType::FP8, o) == DType::FP8);
  Evaluation bf16 = mustEvaluate(p, c, cfg, o);
  cfg.precision = DType::F32;
  Evaluation f32 = mustEvaluate(p, c, cfg, o);
  CHECK(bf16.peakMemoryBytes == Approx(f32.peakMemoryBytes));
  // The GEMMs at twice the TF32 rate, the rest as in fp32.
  CHECK(bf16.iterationSeconds < 0.99 * f32.iterationSeconds);
  const double peakRatio = c.groups[0].gpu.peakFlopsPerS(DType::F32) /
                           c.groups[0].gpu.peakFlopsPerS(DType::BF16);
  CHECK(bf16.mfu == Approx(f32.mfu * peakRatio * f32.iterationSeconds /
                           bf16.iterationSeconds));
  // Slower than bf16 stored in 2 bytes (half the traffic, no copies).
  EvalOptions twoBytes = o;
  twoBytes.bf16InFp32Storage = false;
  cfg.precision = DType::BF16;
  Evaluation native = mustEvaluate(p, c, cfg, twoBytes);
  CHECK(native.iterationSeconds < bf16.iterationSeconds);
  // Another preset stores bf16 in 2 bytes.
  EvalOptions core;
  applyRuntime(core, Runtime::MegatronCore);
  CHECK_FALSE(core.bf16InFp32Storage);
  applyRuntime(o, Runtime::MegatronCore);
  CHECK_FALSE(o.bf16InFp32Storage); // reset by the new preset
}

TEST_CASE("trident programs: selective recomputation keeps the "
          "log-sum-exp and forms only the scores again",
          "[cost][runtime]") {
  // Under selective recomputation the trident programs save attention's
  // rows' log-sum-exp, and attention's backward computes the scores'
  // product and the probabilities from it (rt::attentionForward), not the
  // whole core's forward (Megatron-LM's selective: scores, softmax and
  // the values' product again).
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-h100:1");
  EvalOptions o;
  applyRuntime(o, Runtime::Trident);
  CHECK(o.selectiveKeepsLse);
  auto run = [&](Recompute r, bool keepsLse) {
    ParallelConfig cfg = cfgOf(8, 1, 1, 1, 8);
    cfg.recompute = r;
    EvalOptions e = o;
    e.selectiveKeepsLse = keepsLse;
    return mustEvaluate(p, c, cfg, e);
  };
  Evaluation none = run(Recompute::None, true);
  Evaluation lse = run(Recompute::Selective, true);
  Evaluation core = run(Recompute::Selective, false);
  // The same memory as recomputing the core: no s^2 tensor is saved.
  CHECK(lse.stages[0].activationBytes ==
        Approx(core.stages[0].activationBytes));
  CHECK(lse.stages[0].activationBytes < none.stages[0].activationBytes);
  // Dearer than keeping the probabilities, cheaper than the whole core.
  CHECK(lse.iterationSeconds > none.iterationSeconds);
  CHECK(lse.iterationSeconds < core.iterationSeconds);
  // Hardware FLOPs: the scores' product, half the core's forward here
  // (value heads as wide as query heads).
  double extraLse = lse.hardwareFlopsPerStep - lse.modelFlopsPerStep;
  double extraCore = core.hardwareFlopsPerStep - core.modelFlopsPerStep;
  CHECK(extraLse > 0);
  CHECK(extraLse == Approx(0.5 * extraCore).epsilon(1e-9));
  // Megatron-LM's selective recomputes the core's forward.
  EvalOptions lm;
  applyRuntime(lm, Runtime::MegatronLm);
  CHECK_FALSE(lm.selectiveKeepsLse);
  applyRuntime(o, Runtime::MegatronLm);
  CHECK_FALSE(o.selectiveKeepsLse); // reset by the new preset
}

TEST_CASE("torchtitan's selective recompute sits between none and full",
          "[cost][runtime]") {
  LayerProfile p = smallGpt();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:1");
  EvalOptions tt;
  applyRuntime(tt, Runtime::Torchtitan);
  auto run = [&](Recompute r) {
    ParallelConfig cfg = cfgOf(8, 1, 1, 4, 32);
    cfg.recompute = r;
    return mustEvaluate(p, c, cfg, tt);
  };
  Evaluation none = run(Recompute::None), sel = run(Recompute::Selective),
             full = run(Recompute::Full);
  CHECK(sel.iterationSeconds > none.iterationSeconds);
  CHECK(sel.iterationSeconds < full.iterationSeconds);
  CHECK(sel.stages[0].activationBytes < none.stages[0].activationBytes);
  CHECK(sel.stages[0].activationBytes > full.stages[0].activationBytes);
  // Half a forward recomputed: HFU counts half the block forward FLOPs.
  double extraSel = sel.hardwareFlopsPerStep - sel.modelFlopsPerStep;
  double extraFull = full.hardwareFlopsPerStep - full.modelFlopsPerStep;
  CHECK(extraSel == Approx(0.5 * extraFull).epsilon(1e-9));
}

TEST_CASE("every accepted configuration has a finite prediction",
          "[cost][evaluate]") {
  // One node of 3 A100s written as a cluster.json without a network (none
  // is needed for one node): pp 3 sums the tied embedding's gradient over
  // stages 0 and 2 inside the node.
  Cluster c = *parseClusterJson(
      R"({"name": "three", "groups": [{"gpu": "a100-80gb", "nodes": 1,
          "gpus_per_node": 3}]})",
      "three.json");
  LayerProfile p = smallGpt();
  for (DType precision : {DType::BF16, DType::F32})
    for (auto [dp, pp] : {std::pair{3, 1}, std::pair{1, 3}}) {
      ParallelConfig cfg = cfgOf(dp, 1, pp, 1, 24);
      cfg.precision = precision;
      Evaluation e = mustEvaluate(p, c, cfg);
      INFO("dp " << dp << " pp " << pp);
      CHECK(std::isfinite(e.iterationSeconds));
      CHECK(e.iterationSeconds > 0);
      CHECK(std::isfinite(e.dpExposedSeconds));
      for (const StageBreakdown &s : e.stages)
        CHECK(std::isfinite(s.exposedCommSeconds));
      if (pp == 3) {
        // The sum is NVLink-fast: well under a millisecond per MB.
        CHECK(e.tiedEmbeddingSeconds > 0);
        CHECK(e.tiedEmbeddingSeconds < e.iterationSeconds);
      }
    }
}

TEST_CASE("MoE parallel folding: ep need not divide dp", "[cost][evaluate]") {
  // Mixtral's 8 experts on 16 H100s as dp 4 x tp 2 x pp 2: Megatron-Core
  // lays the experts out over the stage's tp x dp ranks with etp innermost
  // (Liu et al. 2025, "MoE Parallel Folding"), so ep 8 with etp 1 is a
  // valid layout although 8 does not divide dp 4.
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = cfgOf(4, 2, 2, 1, 64);
  cfg.ep = 8;
  cfg.etp = 1;
  cfg.sequenceParallel = true;
  cfg.zeroStage = 1;
  Evaluation folded = mustEvaluate(p, c, cfg);
  // Each GPU holds one expert, whole: 1/8 of the expert weights.
  ParallelConfig dense = cfg;
  dense.ep = 1;
  Evaluation one = mustEvaluate(p, c, dense);
  CHECK(folded.stages[0].weightBytes < one.stages[0].weightBytes / 3);
  // The emitted programs carve ep out of dp and split experts like the
  // dense layers or not at all: refused there, naming the runtime.
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  auto ev = Evaluator::create(p, c, trident);
  REQUIRE(ev.isOk());
  Status s = ev->validate(cfg);
  REQUIRE(!s.isOk());
  CHECK(s.message().find("dp=4 is not divisible by ep=8 (runtime 'trident' "
                         "carves expert parallelism out of data "
                         "parallelism)") != std::string::npos);
  ParallelConfig odd = cfgOf(2, 4, 2, 1, 64);
  odd.ep = 2;
  odd.etp = 2;
  Status t = ev->validate(odd);
  REQUIRE(!t.isOk());
  CHECK(t.message().find("etp=2 with tp=4") != std::string::npos);
  auto mc = Evaluator::create(p, c);
  CHECK(mc->validate(odd).isOk()); // folded: any etp dividing the stage
  // The ep group is etp ranks apart when folded: with etp 1 its 8 members
  // share a node, while laid out over dp (stride tp x cp = 2) the same
  // group spans both nodes, so the folded all-to-all is faster.
  EvalOptions unfolded;
  unfolded.expertFolding = false;
  ParallelConfig byDp = cfgOf(8, 2, 1, 1, 64);
  byDp.ep = 8;
  byDp.etp = 1;
  byDp.sequenceParallel = true;
  byDp.zeroStage = 1;
  Evaluation viaDp = mustEvaluate(p, c, byDp, unfolded);
  Evaluation viaEtp = mustEvaluate(p, c, byDp);
  CHECK(viaEtp.stages[0].forwardSecondsPerMicroBatch <
        viaDp.stages[0].forwardSecondsPerMicroBatch);
}

TEST_CASE("the deepspeed runtime prices ZeRO-3 as DeepSpeed of 2021 did it",
          "[cost][evaluate][runtime]") {
  // Narayanan et al. 2021's ZeRO-3 comparison: GPT-3 175B, dp 384, full
  // recompute, one micro-batch per GPU.
  LayerProfile p = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:48"); // 384 GPUs
  ParallelConfig cfg = cfgOf(384, 1, 1, 4, 1536);
  cfg.zeroStage = 3;
  cfg.recompute = Recompute::Full;
  cfg.precision = DType::F16;
  EvalOptions lm, ds;
  applyRuntime(lm, Runtime::MegatronLm);
  applyRuntime(ds, Runtime::DeepSpeed);
  CHECK(ds.zero3GatherPerTensor);
  CHECK_FALSE(ds.overlapZero3Gather);
  CHECK(ds.zero3GradBucketElements == 5e8);
  CHECK_FALSE(ds.flashAttention);
  // Same compute (without the slowdown hidden collectives cause, which
  // differs as they do); the gathers no longer hide behind it and each
  // tensor pays its collective's latency.
  EvalOptions lm0 = lm, ds0 = ds;
  lm0.overlapComputeSlowdown = ds0.overlapComputeSlowdown = 0;
  CHECK(mustEvaluate(p, c, cfg, ds0).stages[0].computeSeconds ==
        Approx(mustEvaluate(p, c, cfg, lm0).stages[0].computeSeconds));
  Evaluation a = mustEvaluate(p, c, cfg, lm);
  Evaluation b = mustEvaluate(p, c, cfg, ds);
  CHECK(b.stages[0].exposedCommSeconds > a.stages[0].exposedCommSeconds + 1);
  CHECK(b.iterationSeconds > a.iterationSeconds);
  // On the network alone (without the implementation's rate below), one
  // collective per tensor costs more than one per layer group.
  EvalOptions net = ds;
  net.zero3GatherBytesPerS = 0;
  EvalOptions coalesced = net;
  coalesced.zero3GatherPerTensor = false;
  Evaluation perTensor = mustEvaluate(p, c, cfg, net);
  Evaluation one = mustEvaluate(p, c, cfg, coalesced);
  CHECK(perTensor.iterationSeconds > one.iterationSeconds);
  // DeepSpeed issue #1174's rate: the forward, the recompute forward and
  // the backward each gather every parameter into each GPU at 20.8 GB/s,
  // not hidden: at least three times the received bytes over the rate.
  CHECK(ds.zero3GatherBytesPerS == Approx(20.83e9).epsilon(0.001));
  CHECK(ds.zero3RegatherAfterRecompute);
  double received = b.stages[0].weightBytes * 384 * 383.0 / 384.0;
  double pass = received / ds.zero3GatherBytesPerS;
  CHECK(pass > 15); // 349 GB of fp16 parameters at 20.8 GB/s
  CHECK(b.stages[0].exposedCommSeconds >= 3 * pass * 0.999);
  CHECK(b.iterationSeconds > perTensor.iterationSeconds + 2 * pass);
  // Without the recompute forward's release, one gather less.
  EvalOptions kept = ds;
  kept.zero3RegatherAfterRecompute = false;
  Evaluation k = mustEvaluate(p, c, cfg, kept);
  CHECK(b.stages[0].exposedCommSeconds - k.stages[0].exposedCommSeconds ==
        Approx(pass).epsilon(0.01));
  // Without ZeRO-3 it is Megatron-LM whose gradient reduction overlaps
  // the backward (DeepSpeed's overlap_comm).
  cfg.zeroStage = 1;
  lm.overlapGradReduce = true;
  Evaluation lm1 = mustEvaluate(p, c, cfg, lm);
  Evaluation ds1 = mustEvaluate(p, c, cfg, ds);
  CHECK(ds1.iterationSeconds == Approx(lm1.iterationSeconds));
}

TEST_CASE("context parallelism as ring attention: point-to-point steps",
          "[cost][evaluate][cp]") {
  // Llama-3-70B-like shape at sequence 32768, one micro-batch per step.
  LayerProfile p = test::profileOf(llamaStyleShape(
      "llama-70b", 80, 8192, 64, 8, 28672, 128256, 32768));
  auto exposedComm = [&](int64_t tp, int64_t cp, int64_t nodes,
                         double nicScale) {
    Cluster c = *parseClusterSpec("dgx-h100:" + std::to_string(nodes));
    c.groups[0].nic.bandwidthBytesPerS *= nicScale;
    c.groups[0].nic.latencySeconds /= nicScale;
    ParallelConfig cfg = cfgOf(1, tp, 1, 1, 1);
    cfg.cp = cp;
    cfg.recompute = Recompute::Full;
    return mustEvaluate(p, c, cfg).stages[0].exposedCommSeconds;
  };
  // A ring inside a node (tp 2 x cp 4) never touches the network.
  CHECK(exposedComm(2, 4, 1, 1.0) == Approx(exposedComm(2, 4, 1, 1e-3)));
  // Across nodes (tp 8 x cp 16) each step crosses a NIC: a slower network
  // exposes more of it, a much faster one hides it behind the attention.
  double slow = exposedComm(8, 16, 16, 0.1);
  double normal = exposedComm(8, 16, 16, 1.0);
  double fast = exposedComm(8, 16, 16, 100.0);
  CHECK(slow > normal);
  CHECK(normal >= fast);
  CHECK(slow - normal > 0.1 * normal);
}

TEST_CASE("context parallelism's K/V exchange: ring, all-gather, all-to-all",
          "[cost][evaluate][cp]") {
  LayerProfile p = test::profileOf(
      llamaStyleShape("llama-70b", 80, 8192, 64, 8, 28672, 128256, 32768));
  Cluster c = *parseClusterSpec("dgx-h100:1");
  auto config = [](int64_t tp, CpCommType t) {
    ParallelConfig cfg = cfgOf(1, tp, 1, 1, 1);
    cfg.cp = 8 / tp;
    cfg.recompute = Recompute::Full;
    cfg.cpCommType = t;
    return cfg;
  };
  auto run = [&](CpCommType t, const EvalOptions &o = {}) {
    return mustEvaluate(p, c, config(1, t), o).stages[0];
  };
  const StageBreakdown ring = run(CpCommType::P2p);
  const StageBreakdown ag = run(CpCommType::AllGather);
  const StageBreakdown a2a = run(CpCommType::A2a);
  // The ring hides its steps behind the attention blocks, which run
  // slower meanwhile; the collectives run before the attention needs their
  // result, exposed whole.
  CHECK(ag.exposedCommSeconds > ring.exposedCommSeconds);
  CHECK(a2a.exposedCommSeconds > ring.exposedCommSeconds);
  CHECK(ag.exposedCommSeconds != Approx(a2a.exposedCommSeconds));
  CHECK(ag.computeSeconds < ring.computeSeconds);
  // Without the slowdown the ring still computes longer: each of its
  // steps runs the fused kernel on 1/cp of the keys, at a lower rate
  // (flashLengthEfficiency); the collectives hand it the whole sequence.
  EvalOptions alone;
  alone.overlapComputeSlowdown = 0;
  CHECK(run(CpCommType::AllGather, alone).computeSeconds <
        run(CpCommType::P2p, alone).computeSeconds);
  CHECK(run(CpCommType::AllGather, alone).computeSeconds ==
        Approx(run(CpCommType::A2a, alone).computeSeconds));
  // The runtime's kind when the plan says p2p (the default): the trident
  // programs all-gather.
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  CHECK(trident.cpCommType == CpCommType::AllGather);
  EvalOptions agOnly;
  agOnly.cpCommType = CpCommType::AllGather;
  CHECK(run(CpCommType::P2p, agOnly).exposedCommSeconds ==
        Approx(ag.exposedCommSeconds));
  applyRuntime(trident, Runtime::MegatronCore);
  CHECK(trident.cpCommType == CpCommType::P2p);
  // Ulysses hands each rank whole heads: 4 key/value heads do not split
  // over tp x cp = 8 ranks.
  LayerProfile few = test::profileOf(
      llamaStyleShape("few-kv", 8, 8192, 64, 4, 28672, 128256, 32768));
  few.numHeads = 64;
  few.numKvHeads = 4;
  Result<Evaluation> r = evaluate(few, c, config(1, CpCommType::A2a));
  REQUIRE(!r);
  CHECK(r.message().find("cp_comm_type a2a needs num_heads=64 and "
                         "num_kv_heads=4 divisible by tp*cp = 8") !=
        std::string::npos);
}

TEST_CASE("FP8 recipes: current scaling reads each quantised tensor again",
          "[cost][evaluate][fp8]") {
  LayerProfile p = test::profileOf(
      llamaStyleShape("llama-8b", 32, 4096, 32, 8, 14336, 128256, 8192));
  Cluster h100 = *parseClusterSpec("dgx-h100:1");
  auto config = [](Fp8Recipe recipe, DType precision = DType::FP8) {
    ParallelConfig cfg = cfgOf(8, 1, 1, 1, 64);
    cfg.zeroStage = 1;
    cfg.precision = precision;
    cfg.fp8Recipe = recipe;
    return cfg;
  };
  auto step = [&](Fp8Recipe recipe, const EvalOptions &o = {}) {
    return mustEvaluate(p, h100, config(recipe), o).iterationSeconds;
  };
  const double delayed = step(Fp8Recipe::Delayed);
  const double tensorwise = step(Fp8Recipe::Tensorwise);
  // The amax pass: 2 more bytes per element entering a GEMM, forward and
  // backward (fp8CastBytesPerElement); a few percent of the step.
  CHECK(tensorwise > delayed * 1.005);
  CHECK(tensorwise < delayed * 1.10);
  CHECK(fp8CastBytesPerElement(Fp8Recipe::Tensorwise, true) ==
        fp8CastBytesPerElement(Fp8Recipe::Delayed, true) + 2);
  CHECK(fp8CastBytesPerElement(Fp8Recipe::Tensorwise, false) ==
        fp8CastBytesPerElement(Fp8Recipe::Delayed, false) + 2);
  // Block scales come out of the cast itself.
  CHECK(step(Fp8Recipe::Blockwise) == Approx(delayed));
  // The options' recipe holds where the configuration names the default,
  // as a pinned --fix fp8_recipe does for every configuration.
  EvalOptions current;
  current.fp8Recipe = Fp8Recipe::Tensorwise;
  CHECK(step(Fp8Recipe::Delayed, current) == Approx(tensorwise));
  ParallelAxes stated = config(Fp8Recipe::Delayed);
  stateSettings(stated, current);
  CHECK(stated.fp8Recipe == Fp8Recipe::Tensorwise);

  // MXFP8 needs Blackwell's tensor cores; any recipe but the default needs
  // FP8 precision.
  Result<Evaluation> mx = evaluate(p, h100, config(Fp8Recipe::Mxfp8));
  REQUIRE(!mx);
  CHECK(mx.message().find("fp8_recipe mxfp8 needs GPUs that scale blocks of "
                          "32 in hardware") != std::string::npos);
  CHECK(mx.message().find("H100-SXM5-80GB has none") != std::string::npos);
  Cluster b200 = *parseClusterSpec("dgx-b200:1");
  CHECK(evaluate(p, b200, config(Fp8Recipe::Mxfp8)).isOk());
  Result<Evaluation> bf16 =
      evaluate(p, h100, config(Fp8Recipe::Tensorwise, DType::BF16));
  REQUIRE(!bf16);
  CHECK(bf16.message().find("fp8_recipe tensorwise needs precision fp8 (got "
                            "bf16)") != std::string::npos);
  // In bf16 the default recipe is no setting at all.
  CHECK(evaluate(p, h100, config(Fp8Recipe::Delayed, DType::BF16)).isOk());
}

TEST_CASE("the expert exchange overlapped with another micro-batch's compute",
          "[cost][evaluate]") {
  // Megatron-Core's --overlap-moe-expert-parallel-comm: in the steady
  // state a forward's dispatch and combine hide behind a backward of
  // another micro-batch and the other way round.
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = moeCfg(8, 2, 8);
  cfg.vpp = 2; // Megatron-Core wants virtual stages with pp > 1
  EvalOptions plain;
  EvalOptions overlap;
  overlap.overlapEpComm = true;
  Evaluation ep = mustEvaluate(p, c, cfg, plain);
  Evaluation eo = mustEvaluate(p, c, cfg, overlap);
  CHECK_FALSE(ep.overlapEpComm);
  CHECK(eo.overlapEpComm);
  REQUIRE(ep.stages[0].exposedCommSeconds > 0);
  CHECK(eo.stages[0].exposedCommSeconds < ep.stages[0].exposedCommSeconds);
  CHECK(eo.stages[0].hiddenCommSeconds > ep.stages[0].hiddenCommSeconds);
  CHECK(eo.iterationSeconds < ep.iterationSeconds);
  // The hidden exchange slows the compute beside it.
  CHECK(eo.stages[0].computeSeconds > ep.stages[0].computeSeconds);
  // The first forward and last backward have no partner: with one
  // micro-batch nothing overlaps.
  ParallelConfig one = moeCfg(16, 1, 8);
  one.globalBatch = 16;
  CHECK(mustEvaluate(p, c, one, overlap).iterationSeconds ==
        mustEvaluate(p, c, one, plain).iterationSeconds);
  // What Megatron-Core refuses, the evaluation refuses too.
  Result<Evaluator> ev = Evaluator::create(p, c, overlap);
  REQUIRE(ev);
  auto refusal = [&](ParallelConfig bad) {
    Status s = ev->validate(bad);
    return s.isOk() ? std::string() : s.message();
  };
  ParallelConfig noEp = cfg;
  noEp.ep = 1;
  CHECK(refusal(noEp).find("needs expert parallelism") != std::string::npos);
  ParallelConfig noVpp = cfg;
  noVpp.vpp = 1;
  CHECK(refusal(noVpp).find("virtual pipeline stages") != std::string::npos);
  ParallelConfig full = cfg;
  full.recompute = Recompute::Full;
  CHECK(refusal(full).find("no full recomputation") != std::string::npos);
  // Full recomputation of any one stage is refused too.
  ParallelConfig lastFull = cfg;
  lastFull.stageRecompute = {Recompute::None, Recompute::Full};
  CHECK(refusal(lastFull).find("no full recomputation") != std::string::npos);
  CHECK(refusal(cfg).empty());
}

TEST_CASE("the expert exchange and the tensor-parallel collectives share "
          "one compute budget",
          "[cost][evaluate]") {
  // A partner pass's compute hides its own tensor-parallel collectives
  // under --tp-comm-overlap; only what is left hides the expert exchange.
  // With an exchange longer than the partner's compute (a slow network
  // between nodes), turning the tensor-parallel overlap on cannot hide
  // more of the overlapped passes' communication: what it hides of the
  // collectives, the exchange loses. Only the passes without a partner
  // (the warm-up and cool-down, 5 of 16 chunk passes on the first stage
  // here) keep the collectives' hidden part: the stage's exposure falls by
  // less than half of what the overlap hides on its own (all of it, were
  // the budget counted twice).
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:4");
  for (NodeGroup &g : c.groups)
    g.nic.bandwidthBytesPerS /= 1000;
  ParallelConfig cfg = moeCfg(8, 2, 8);
  cfg.tp = 2;
  cfg.sequenceParallel = true;
  cfg.vpp = 2;
  EvalOptions o;
  o.moeDispatcher = MoeDispatcher::AllToAll;
  EvalOptions epOverlap = o;
  epOverlap.overlapEpComm = true;
  ParallelConfig tpOverlap = cfg;
  tpOverlap.tpCommOverlap = true;
  Evaluation a = mustEvaluate(p, c, cfg, epOverlap);
  Evaluation both = mustEvaluate(p, c, tpOverlap, epOverlap);
  Evaluation plain = mustEvaluate(p, c, cfg, o);
  Evaluation tpOnly = mustEvaluate(p, c, tpOverlap, o);
  const double tpHidden =
      tpOnly.stages[0].hiddenCommSeconds - plain.stages[0].hiddenCommSeconds;
  REQUIRE(tpHidden > 0);
  const double drop =
      a.stages[0].exposedCommSeconds - both.stages[0].exposedCommSeconds;
  CHECK(drop > 0);
  CHECK(drop < 0.5 * tpHidden);
}

TEST_CASE("a grouped GEMM pays a fixed cost per local expert",
          "[cost][evaluate]") {
  // Transformer Engine runs one cuBLAS GEMM per local expert: halving ep
  // doubles the local experts and adds their fixed costs (forward, data
  // and weight gradient of both expert GEMMs).
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = moeCfg(16, 1, 4);
  EvalOptions te, none;
  CHECK(te.groupedGemmSecondsPerExpert == kTeGroupedGemmSecondsPerExpert);
  none.groupedGemmSecondsPerExpert = 0;
  te.moeLayerHostSeconds = none.moeLayerHostSeconds = 0;
  const LayerGroup *moe = moeGroup(p);
  REQUIRE(moe);
  double local = double(moe->cost.numExperts) / 4;
  Evaluation et = mustEvaluate(p, c, cfg, te),
             en = mustEvaluate(p, c, cfg, none);
  CHECK(et.stages[0].forwardSecondsPerMicroBatch -
            en.stages[0].forwardSecondsPerMicroBatch ==
        Approx(double(moe->count) * 2 * local * kTeGroupedGemmSecondsPerExpert)
            .epsilon(1e-9));
  for (Runtime r : {Runtime::Torchtitan, Runtime::Trident, Runtime::Fsdp,
                    Runtime::DeepSpeed}) {
    EvalOptions o;
    applyRuntime(o, r);
    CHECK(o.groupedGemmSecondsPerExpert == 0);
  }
  EvalOptions core;
  applyRuntime(core, Runtime::MegatronCore);
  CHECK(core.groupedGemmSecondsPerExpert == kTeGroupedGemmSecondsPerExpert);
}

TEST_CASE("the host work of an MoE layer is paid where the expert kernels "
          "do not cover it",
          "[cost][evaluate]") {
  // EvalOptions::moeLayerHostSeconds: per MoE layer and micro-batch, the
  // host time beyond the expert GEMMs' forward; again in a recompute.
  LayerProfile p = mixtral();
  Cluster c = *parseClusterSpec("dgx-h100:2");
  ParallelConfig cfg = moeCfg(16, 1, 4);
  const LayerGroup *moe = moeGroup(p);
  REQUIRE(moe);
  EvalOptions none, tiny, long_;
  none.moeLayerHostSeconds = 0;
  tiny.moeLayerHostSeconds = 1e-9; // covered by the expert GEMMs
  long_.moeLayerHostSeconds = 1.0; // longer than any layer
  Evaluation en = mustEvaluate(p, c, cfg, none);
  Evaluation et = mustEvaluate(p, c, cfg, tiny);
  Evaluation el = mustEvaluate(p, c, cfg, long_);
  const double f0 = en.stages[0].forwardSecondsPerMicroBatch;
  CHECK(et.stages[0].forwardSecondsPerMicroBatch == Approx(f0));
  // 1 s per layer, less each layer's expert forward (a small part of f0).
  double added = el.stages[0].forwardSecondsPerMicroBatch - f0;
  CHECK(added < double(moe->count) * 1.0);
  CHECK(added > double(moe->count) * 1.0 - f0);
  CHECK(el.stages[0].backwardSecondsPerMicroBatch ==
        Approx(en.stages[0].backwardSecondsPerMicroBatch));
  // Full recomputation repeats the forward, and its host work.
  ParallelConfig full = cfg;
  full.recompute = Recompute::Full;
  CHECK(mustEvaluate(p, c, full, long_).stages[0].backwardSecondsPerMicroBatch -
            mustEvaluate(p, c, full, none)
                .stages[0]
                .backwardSecondsPerMicroBatch ==
        Approx(added));
  // A dense model has no MoE layer to wait for.
  LayerProfile dense = smallGpt();
  ParallelConfig d = cfgOf(16, 1, 1, 1, 64);
  CHECK(mustEvaluate(dense, c, d, long_).iterationSeconds ==
        Approx(mustEvaluate(dense, c, d, none).iterationSeconds));
  // The Megatron-Core presets price it (the fitted moe.host); the others
  // have no measurement of it.
  for (Runtime r :
       {Runtime::MegatronCore, Runtime::MegatronLm, Runtime::Nemo}) {
    EvalOptions o;
    applyRuntime(o, r);
    CHECK(o.moeLayerHostSeconds == kMoeLayerHostSeconds);
  }
  CHECK(kMoeLayerHostSeconds ==
        Approx(fittedValue(FitGroup::Moe, FitKind::MoeHost) * 1e-3));
  for (Runtime r : {Runtime::Torchtitan, Runtime::Trident, Runtime::Fsdp,
                    Runtime::DeepSpeed}) {
    EvalOptions o;
    applyRuntime(o, r);
    CHECK(o.moeLayerHostSeconds == 0);
  }
}
