//===- trident-bench-evaluate.cpp - Full evaluations per second -----------===//
//
// trident-bench-evaluate [seconds]: evaluates a fixed set of parallel plans
// of GPT-3 175B (s = 2048, global batch 1536) on 64 DGX A100 nodes, in a
// loop on one thread, and prints evaluations per second. Each evaluation is
// complete: validation, per-layer costs (cached by axes), the pipeline
// schedule simulation, DP sync, optimizer, memory.
//
//===----------------------------------------------------------------------===//

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Cost/Evaluate.h"
#include "trident/Frontend/GraphBuilder.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace trident;

int main(int argc, char **argv) {
  double seconds = 2.0;
  if (argc > 1) {
    char *end = nullptr;
    seconds = std::strtod(argv[1], &end);
    if (end == argv[1] || *end != '\0' || !(seconds > 0) || seconds > 3600) {
      std::fprintf(stderr, "usage: trident-bench-evaluate [seconds]\n"
                           "  measures full evaluations per second on one "
                           "thread for the given time (default 2)\n");
      return 2;
    }
  }
  // The model through the real pipeline: zoo -> tgraph -> LayerProfile.
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext context(registry);
  auto loaded = frontend::loadModel(context, "gpt3-175b", 2048);
  if (!loaded) {
    std::fprintf(stderr, "%s\n", loaded.message().c_str());
    return 1;
  }
  Result<LayerProfile> prof =
      analysis::buildLayerProfile(loaded->model(), 2048);
  Result<Cluster> cluster = parseClusterSpec("dgx-a100-80gb:64");
  if (!prof || !cluster) {
    std::fprintf(stderr, "setup failed\n");
    return 1;
  }
  Result<Evaluator> ev = Evaluator::create(*prof, *cluster);
  if (!ev) {
    std::fprintf(stderr, "%s\n", ev.message().c_str());
    return 1;
  }

  std::vector<ParallelConfig> configs;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t pp : {1, 2, 4, 8, 16})
      for (int64_t vpp : {1, 2})
        for (int64_t mb : {1, 2, 4})
          for (Recompute r :
               {Recompute::None, Recompute::Selective, Recompute::Full})
            for (int zero : {0, 1}) {
              ParallelConfig c;
              c.tp = tp;
              c.pp = pp;
              c.dp = 512 / (tp * pp);
              c.vpp = vpp;
              c.microBatch = mb;
              c.globalBatch = 1536;
              c.sequenceParallel = tp > 1;
              c.recompute = r;
              c.zeroStage = zero;
              if (ev->validate(c).isOk())
                configs.push_back(c);
            }
  if (configs.empty()) {
    std::fprintf(stderr, "no valid configuration\n");
    return 1;
  }

  Evaluation out;
  double best = 0;
  size_t bestIdx = 0;
  // Warm-up pass (fills the schedule and layer caches), then timed loops.
  for (size_t i = 0; i < configs.size(); ++i) {
    if (Status s = ev->evaluate(configs[i], out); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    if (out.fits && out.tokensPerSecond > best)
      best = out.tokensPerSecond, bestIdx = i;
  }
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  int64_t n = 0;
  double elapsed = 0, checksum = 0;
  while (elapsed < seconds) {
    for (const ParallelConfig &c : configs) {
      (void)ev->evaluate(c, out);
      checksum += out.iterationSeconds;
    }
    n += int64_t(configs.size());
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  }
  const ParallelConfig &b = configs[bestIdx];
  std::printf("model gpt3-175b, cluster dgx-a100-80gb:64 (512 GPUs), "
              "%zu configurations\n",
              configs.size());
  std::printf("evaluations: %lld in %.2f s = %.0f evaluations/s (one "
              "thread; checksum %.3g)\n",
              (long long)n, elapsed, double(n) / elapsed, checksum);
  std::printf("best fitting: tp=%lld pp=%lld dp=%lld vpp=%lld mb=%lld "
              "recompute=%s zero=%d: %.0f tokens/s\n",
              (long long)b.tp, (long long)b.pp, (long long)b.dp,
              (long long)b.vpp, (long long)b.microBatch,
              std::string(recomputeName(b.recompute)).c_str(), int(b.zeroStage),
              best);
  return 0;
}
