//===- MemoryTest.cpp - Korthikanti and ZeRO memory figures ---------------===//

#include "GptProfile.h"

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/Memory.h"

#include <catch2/catch.hpp>

using namespace trident;

TEST_CASE("Korthikanti per-layer activation formulas", "[cost][memory]") {
  // GPT-3 175B: s = 2048, h = 12288, a = 96, b = 1.
  double s = 2048, b = 1, h = 12288, a = 96;
  double sbh = s * b * h;
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 1, false, Recompute::None) ==
        Approx(sbh * (34 + 5 * a * s / h)));
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 1, false,
                                        Recompute::Selective) == Approx(34 * sbh));
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 8, false, Recompute::None) ==
        Approx(sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8))));
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 8, true, Recompute::None) ==
        Approx(sbh / 8 * (34 + 5 * a * s / h)));
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 8, true,
                                        Recompute::Selective) ==
        Approx(34 * sbh / 8));
  CHECK(korthikantiLayerActivationBytes(s, b, h, a, 8, true, Recompute::Full) ==
        Approx(2 * sbh / 8));
}

TEST_CASE("the analytic profile reproduces Korthikanti's per-layer terms",
          "[cost][memory]") {
  LayerProfile p = test::gpt3_175B();
  const LayerCost &blk = p.groups[1].cost;
  double s = 2048, h = 12288, a = 96;
  CHECK(blk.actReplicated == Approx(10 * s * h));
  CHECK(blk.actTpSharded == Approx(24 * s * h));
  CHECK(blk.actAttnCore == Approx(5 * a * s * s));
  CHECK(blk.actLayerInput == Approx(2 * s * h));
  // Model FLOPs: 72 L s h^2 (1 + s/6h + V/12hL) per sequence.
  double L = 96, V = 51200;
  CHECK(p.trainFlopsPerToken * s ==
        Approx(72 * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L))));
  CHECK(double(p.totalParams) == Approx(175e9).epsilon(0.01));
}

namespace {
/// First-stage activation bytes of the evaluator (1F1B holds pp
/// micro-batches of L/pp layers: L layers' worth), without flash attention.
double firstStageActivations(const LayerProfile &prof, const char *cluster,
                             int64_t tp, int64_t pp, bool sp, Recompute r) {
  Cluster c = *parseClusterSpec(cluster);
  EvalOptions o;
  o.flashAttention = false;
  ParallelConfig cfg;
  cfg.tp = tp;
  cfg.pp = pp;
  cfg.dp = c.totalGpus() / (tp * pp);
  cfg.microBatch = 1;
  cfg.globalBatch = cfg.dp * pp * 4;
  cfg.sequenceParallel = sp;
  cfg.recompute = r;
  cfg.zeroStage = 1;
  Result<Evaluation> e = evaluate(prof, c, cfg, o);
  if (!e)
    FAIL(e.message());
  return e->stages[0].activationBytes;
}
} // namespace

TEST_CASE("first-stage activation memory matches Korthikanti Table 3 setups",
          "[cost][memory]") {
  // Korthikanti et al. 2022 Table 3 configurations (t = 8; p = 1, 8, 35,
  // 64); the paper's Eq. for the first stage: L layers' worth of
  // activations (p micro-batches in flight x L/p layers), per GPU.
  struct Row {
    LayerProfile prof;
    double h, a, L;
    int64_t pp;
    const char *cluster;
  } rows[] = {
      {test::gpt3_22B(), 6144, 64, 48, 1, "dgx-a100-80gb:1"},
      {test::gpt3_175B(), 12288, 96, 96, 8, "dgx-a100-80gb:8"},
      {test::gpt3_530B(), 20480, 128, 105, 35, "dgx-a100-80gb:35"},
      {test::gpt3_1T(), 25600, 160, 128, 64, "dgx-a100-80gb:64"},
  };
  const double s = 2048, t = 8;
  for (Row &r : rows) {
    INFO(r.prof.modelName);
    struct {
      bool sp;
      Recompute rc;
    } variants[] = {{false, Recompute::None},
                    {true, Recompute::None},
                    {true, Recompute::Selective},
                    {false, Recompute::Selective}};
    for (auto &v : variants) {
      INFO("sp=" << v.sp << " recompute=" << int(v.rc));
      double paper = r.L * korthikantiLayerActivationBytes(s, 1, r.h, r.a, t,
                                                           v.sp, v.rc);
      double ours =
          firstStageActivations(r.prof, r.cluster, 8, r.pp, v.sp, v.rc);
      // The evaluator adds the embedding dropout mask (and, with p = 1, the
      // head's logits): the paper's block terms must be within 5 %.
      CHECK(ours == Approx(paper).epsilon(0.05));
    }
  }
}

TEST_CASE("ZeRO paper model-state figures (Psi = 7.5B, Nd = 64, K = 12)",
          "[cost][memory]") {
  const double psi = 7.5e9;
  // (2 + 2 + K) Psi = 120 GB baseline (Rajbhandari et al. 2020, Fig. 1).
  CHECK(zeroModelStateBytes(psi, 64, 0).total() == Approx(120e9).epsilon(0.05));
  CHECK(zeroModelStateBytes(psi, 64, 1).total() == Approx(31.4e9).epsilon(0.05));
  CHECK(zeroModelStateBytes(psi, 64, 2).total() == Approx(16.6e9).epsilon(0.05));
  CHECK(zeroModelStateBytes(psi, 64, 3).total() ==
        Approx(1.88e9).epsilon(0.05));
  CHECK(zeroModelStateBytes(psi, 1, 0).total() == Approx((2 + 2 + 12) * psi));
}

TEST_CASE("the evaluator's model states follow ZeRO for a 7.5B model",
          "[cost][memory]") {
  // ~7.5B GPT (h = 4096, L = 36, tied embeddings) on 64 GPUs, pure DP.
  LayerProfile p = test::gptProfile("gpt-7.5b", 37, 4096, 32);
  double psi = double(p.totalParams);
  REQUIRE(psi == Approx(7.5e9).epsilon(0.05));
  Cluster c = *parseClusterSpec("dgx-a100-80gb:8");
  EvalOptions o;
  o.gradBytesPerParam = 2; // the paper's fp16 gradients
  ParallelConfig cfg;
  cfg.dp = 64;
  cfg.globalBatch = 64;
  cfg.recompute = Recompute::Full;
  double expect[] = {120e9 * psi / 7.5e9, 31.4e9 * psi / 7.5e9,
                     16.6e9 * psi / 7.5e9, 1.88e9 * psi / 7.5e9};
  for (int z = 0; z <= 3; ++z) {
    cfg.zeroStage = z;
    Result<Evaluation> e = evaluate(p, c, cfg, o);
    REQUIRE(e.isOk());
    const StageBreakdown &st = e->stages[0];
    INFO("zero stage " << z);
    CHECK(st.weightBytes + st.gradientBytes + st.optimizerBytes ==
          Approx(expect[z]).epsilon(0.05));
  }
}

/// GPT-3 175B's tp 8 x pp 8 split on 64 GPUs, ZeRO-1, 16 micro-batches.
static ParallelConfig ptdp64() {
  ParallelConfig cfg;
  cfg.tp = 8;
  cfg.pp = 8;
  cfg.dp = 1;
  cfg.microBatch = 1;
  cfg.globalBatch = 16;
  cfg.zeroStage = 1;
  return cfg;
}

TEST_CASE("optimizer state per runtime: NeMo keeps 16-bit remainders",
          "[cost][memory]") {
  EvalOptions core, nemo;
  applyRuntime(core, Runtime::MegatronCore);
  applyRuntime(nemo, Runtime::Nemo);
  CHECK(nemo.masterWeightRemainders);
  CHECK_FALSE(core.masterWeightRemainders);
  CHECK(stateBytesPerParam(DType::BF16, core).optimizer == 12);
  // Apex DistributedFusedAdam's store_param_remainders: 2 + 4 + 4 bytes.
  CHECK(stateBytesPerParam(DType::BF16, nemo).optimizer == 10);
  CHECK(stateBytesPerParam(DType::FP8, nemo).optimizer == 10);
  // fp16 models keep full fp32 masters; fp32 training has none.
  CHECK(stateBytesPerParam(DType::F16, nemo).optimizer == 12);
  CHECK(stateBytesPerParam(DType::F32, nemo).optimizer == 8);
  // An explicit figure wins.
  nemo.optimizerBytesPerParam = 16;
  CHECK(stateBytesPerParam(DType::BF16, nemo).optimizer == 16);
  // The same plan under each: only the optimizer bytes differ.
  LayerProfile prof = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:8");
  ParallelConfig cfg = ptdp64();
  EvalOptions nemo2;
  applyRuntime(nemo2, Runtime::Nemo);
  Result<Evaluation> a = evaluate(prof, c, cfg, core);
  Result<Evaluation> b = evaluate(prof, c, cfg, nemo2);
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  CHECK(b->stages[0].optimizerBytes ==
        Approx(a->stages[0].optimizerBytes * 10.0 / 12.0));
  CHECK(b->stages[0].weightBytes == a->stages[0].weightBytes);
  CHECK(b->stages[0].activationBytes == a->stages[0].activationBytes);
}

TEST_CASE("the caching allocator's share is counted in the buffers",
          "[cost][memory]") {
  LayerProfile prof = test::gpt3_175B();
  Cluster c = *parseClusterSpec("dgx-a100-80gb:8");
  ParallelConfig cfg = ptdp64();
  EvalOptions none, some;
  none.allocatorCacheFraction = 0;
  some.allocatorCacheFraction = 0.05;
  Result<Evaluation> a = evaluate(prof, c, cfg, none);
  Result<Evaluation> b = evaluate(prof, c, cfg, some);
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  for (size_t s = 0; s < a->stages.size(); ++s) {
    const StageBreakdown &x = a->stages[s], &y = b->stages[s];
    // Without ZeRO-3 the dynamic bytes are the activations and the two
    // pipeline buffers (buffers less the reserve).
    double dynamic = x.activationBytes + (x.bufferBytes - none.reservedBytes);
    CHECK(y.bufferBytes == Approx(x.bufferBytes + 0.05 * dynamic));
    CHECK(y.totalBytes == Approx(x.totalBytes + 0.05 * dynamic));
  }
  // The default is documented (docs/cost-model.md, Memory) and small.
  CHECK(EvalOptions{}.allocatorCacheFraction == 0.01);
  EvalOptions bad;
  bad.allocatorCacheFraction = -0.1;
  CHECK_FALSE(evaluate(prof, c, cfg, bad).isOk());
}

TEST_CASE("DeepSpeed's per-tensor ZeRO-3 gather buffers the largest tensor",
          "[cost][memory]") {
  LayerProfile prof = test::gpt3_175B();
  const LayerCost &blk = prof.groups[1].cost;
  // GPT-3 175B's largest tensors: the MLP's 4h x h weights.
  const double h = 12288;
  CHECK(double(blk.largestTpShardedTensor) == 4 * h * h);
  CHECK(zero3GatherElements(blk, 1, 1, true) == 4 * h * h);
  CHECK(zero3GatherElements(blk, 2, 1, true) == 2 * h * h);
  CHECK(zero3GatherElements(blk, 1, 1, false) ==
        double(blk.paramsTpSharded + blk.paramsReplicated));
  Cluster c = *parseClusterSpec("dgx-a100-80gb:8");
  ParallelConfig cfg;
  cfg.dp = 64;
  cfg.microBatch = 1;
  cfg.globalBatch = 64;
  cfg.zeroStage = 3;
  cfg.recompute = Recompute::Full;
  EvalOptions core, ds;
  core.allocatorCacheFraction = ds.allocatorCacheFraction = 0;
  applyRuntime(ds, Runtime::DeepSpeed);
  Result<Evaluation> a = evaluate(prof, c, cfg, core);
  Result<Evaluation> b = evaluate(prof, c, cfg, ds);
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  // Two buffers (current and prefetched) of 2-byte elements: the largest
  // block, or the largest tensor of the stage, the 51200 x h embedding
  // (larger than a block's 4h x h).
  CHECK(a->stages[0].bufferBytes - core.reservedBytes ==
        Approx(2 * 2 * zero3GatherElements(blk, 1, 1, false)));
  CHECK(b->stages[0].bufferBytes - ds.reservedBytes ==
        Approx(2 * 2 * 51200 * h));
}
