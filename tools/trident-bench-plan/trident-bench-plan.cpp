//===- trident-bench-plan.cpp - Speed of the planner's search -------------===//
//
// trident-bench-plan [--threads N] [--only gpt3|llama]: runs the full
// search of the two reference problems of docs/planner.md and prints wall
// time, work done, the winner and the process's max RSS (getrusage):
//   GPT-3 175B, dgx-a100-80gb:128, global batch 1536, seq 2048;
//   Llama-3.1-405B, dgx-h100:2048, global batch 2048, seq 8192.
// The model is built through the real pipeline (zoo -> tgraph ->
// LayerProfile); that time is reported separately.
//
//===----------------------------------------------------------------------===//

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Search/Search.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>

using namespace trident;

namespace {

struct Problem {
  const char *key, *model, *cluster;
  int64_t globalBatch, seqLen;
  double targetSeconds;
};

double maxRssMB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0; // Linux: kilobytes
}

} // namespace

int main(int argc, char **argv) {
  int64_t threads = 1;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: trident-bench-plan [--threads N] [--only gpt3|llama]\n");
      return 2;
    }
  }
  const Problem problems[] = {
      {"gpt3", "gpt3-175b", "dgx-a100-80gb:128", 1536, 2048, 1.0},
      {"llama", "llama-3.1-405b", "dgx-h100:2048", 2048, 8192, 10.0},
  };
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  int rc = 0;
  for (const Problem &pb : problems) {
    if (!only.empty() && only != pb.key)
      continue;
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    auto loaded = frontend::loadModel(ctx, pb.model, pb.seqLen);
    if (!loaded) {
      std::fprintf(stderr, "%s\n", loaded.message().c_str());
      return 1;
    }
    LayerProfile profile =
        analysis::buildLayerProfile(loaded->model(), pb.seqLen);
    auto cluster = loadCluster(pb.cluster);
    if (!cluster) {
      std::fprintf(stderr, "%s\n", cluster.message().c_str());
      return 1;
    }
    auto t1 = clock::now();
    search::SearchOptions so;
    so.globalBatch = pb.globalBatch;
    so.threads = threads;
    so.topK = 5;
    auto res = search::searchPlans(profile, *cluster, so);
    auto t2 = clock::now();
    if (!res) {
      std::fprintf(stderr, "%s\n", res.message().c_str());
      return 1;
    }
    double model = std::chrono::duration<double>(t1 - t0).count();
    double searchS = std::chrono::duration<double>(t2 - t1).count();
    const search::SearchStats &st = res->stats;
    std::printf("%s on %s, global batch %lld, seq %lld, %lld thread(s)\n",
                pb.model, pb.cluster, (long long)pb.globalBatch,
                (long long)pb.seqLen, (long long)threads);
    std::printf("  search wall     %.3f s (target < %.0f s: %s); model "
                "build %.3f s\n",
                searchS, pb.targetSeconds,
                searchS < pb.targetSeconds ? "ok" : "MISSED", model);
    std::printf("  configurations  %lld (%lld pruned by the bound, %lld by "
                "memory)\n",
                (long long)st.configurations, (long long)st.prunedByBound,
                (long long)st.prunedByMemory);
    std::printf("  work            %lld full evaluations, %lld partitions, "
                "%lld probes\n",
                (long long)st.evaluations, (long long)st.partitions,
                (long long)st.probes);
    if (!res->top.empty()) {
      const search::Candidate &c = res->top[0];
      std::printf("  best            dp=%lld tp=%lld pp=%lld cp=%lld vpp=%lld "
                  "mb=%lld %s zero%d%s: %.3f s/step, MFU %.1f%%, %.1f GB\n",
                  (long long)c.config.dp, (long long)c.config.tp,
                  (long long)c.config.pp, (long long)c.config.cp,
                  (long long)c.config.vpp, (long long)c.config.microBatch,
                  std::string(recomputeName(c.config.recompute)).c_str(),
                  int(c.config.zeroStage), c.config.sequenceParallel ? " sp" : "",
                  c.eval.iterationSeconds, 100 * c.eval.mfu,
                  c.eval.peakMemoryBytes / 1e9);
    } else {
      std::printf("  nothing fits\n");
    }
    std::printf("  max RSS so far  %.0f MB (target < 500 MB: %s)\n",
                maxRssMB(), maxRssMB() < 500 ? "ok" : "MISSED");
    if (searchS >= pb.targetSeconds || maxRssMB() >= 500)
      rc = 1;
  }
  return rc;
}
