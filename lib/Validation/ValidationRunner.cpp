//===- ValidationRunner.cpp - Evaluating cases through the real pipeline --===//

#include "Prepared.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Validation/CaseProfile.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace trident::validation {

Result<LayerProfile> caseProfile(mlir::MLIRContext &context, const Case &c) {
  std::string source = "cases.json:" + c.id;
  std::vector<std::string> warnings;
  auto cfg = frontend::parseHFConfig(c.modelJson, source, &warnings);
  if (!cfg)
    return cfg.status();
  cfg->seqLen = c.seqLen;
  if (cfg->position == frontend::PositionKind::Learned &&
      cfg->maxPositions < c.seqLen)
    cfg->maxPositions = c.seqLen;
  if (Status s = frontend::validateModelConfig(*cfg, source); !s)
    return s;
  auto module = frontend::buildModel(context, *cfg);
  frontend::LoadedModel loaded;
  loaded.module = std::move(module);
  return analysis::buildLayerProfile(loaded.model(), c.seqLen);
}

namespace detail {

PreparedCases prepareCases(const std::vector<Case> &cases,
                           const EvalOptions &options,
                           std::optional<Runtime> forceRuntime,
                           std::optional<MoeDispatcher> forceDispatcher) {
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  PreparedCases out;
  std::map<std::pair<std::string, int64_t>, std::string> failures;
  for (const Case &c : cases) {
    PreparedCase p;
    p.c = &c;
    if (!c.evaluable) {
      p.reason = c.skipReason.empty() ? "marked not evaluable" : c.skipReason;
      out.cases.push_back(std::move(p));
      continue;
    }
    p.outcome = CaseResult::Outcome::Failed;
    auto key = std::make_pair(c.modelJson, c.seqLen);
    if (!out.profiles.count(key) && !failures.count(key)) {
      auto profile = caseProfile(context, c);
      if (profile)
        out.profiles[key] = std::make_unique<LayerProfile>(std::move(*profile));
      else
        failures[key] = profile.message();
    }
    if (auto f = failures.find(key); f != failures.end()) {
      p.reason = f->second;
      out.cases.push_back(std::move(p));
      continue;
    }
    auto cluster = loadCluster(c.cluster);
    if (!cluster) {
      p.reason = cluster.message();
      out.cases.push_back(std::move(p));
      continue;
    }
    p.profile = out.profiles.at(key).get();
    p.cluster = std::move(*cluster);
    p.options = options;
    p.runtime = forceRuntime ? *forceRuntime : c.runtime;
    applyRuntime(p.options, p.runtime);
    if (c.forceBalanced)
      p.options.expertLoadImbalance = 1;
    if (c.moeDispatcher)
      p.options.moeDispatcher = *c.moeDispatcher;
    p.options.overlapEpComm = p.options.overlapEpComm || c.overlapEpComm;
    if (forceDispatcher)
      p.options.moeDispatcher = *forceDispatcher;
    p.group = fitGroupOf(p.cluster.groups.front().gpu);
    for (const NodeGroup &g : p.cluster.groups)
      if (fitGroupOf(g.gpu) != p.group)
        p.group.reset(); // mixed generations: not fitted
    out.cases.push_back(std::move(p));
  }
  return out;
}

CaseResult evaluateCase(const PreparedCase &p, const FitValues &fit) {
  CaseResult r;
  r.c = p.c;
  r.runtime = p.runtime;
  if (!p.profile) {
    r.outcome = p.outcome;
    r.reason = p.reason;
    return r;
  }
  const Cluster *cluster = &p.cluster;
  Cluster refit;
  EvalOptions options = p.options;
  if (!(fit == FitValues::published())) {
    refit = p.cluster;
    for (NodeGroup &g : refit.groups)
      applyFit(g.gpu, fit);
    cluster = &refit;
    // The MoE layer's host time, where the runtime prices it, rescaled as
    // applyFit rescales the GPUs' constants.
    double published =
        FitValues::published().get(FitGroup::Moe, FitKind::MoeHost);
    if (published > 0)
      options.moeLayerHostSeconds *=
          fit.get(FitGroup::Moe, FitKind::MoeHost) / published;
  }
  auto eval = evaluate(*p.profile, *cluster, p.c->config, options);
  if (!eval) {
    r.outcome = CaseResult::Outcome::Failed;
    r.reason = eval.message();
    return r;
  }
  const Case &c = *p.c;
  r.outcome = CaseResult::Outcome::Evaluated;
  r.predictedTokensPerSecPerGpu = eval->tokensPerSecondPerGpu;
  r.error = (r.predictedTokensPerSecPerGpu - c.measuredTokensPerSecPerGpu) /
            c.measuredTokensPerSecPerGpu;
  r.mfu = eval->mfu;
  r.fits = eval->fits;
  r.peakMemoryBytes = eval->peakMemoryBytes;
  r.capacityBytes = eval->memoryCapacityBytes;
  return r;
}

} // namespace detail

Report runValidation(const std::vector<Case> &cases, const EvalOptions &options,
                     std::optional<Runtime> forceRuntime, const FitValues &fit,
                     std::optional<MoeDispatcher> forceDispatcher) {
  detail::PreparedCases prepared =
      detail::prepareCases(cases, options, forceRuntime, forceDispatcher);
  Report report;
  for (const detail::PreparedCase &p : prepared.cases)
    report.results.push_back(detail::evaluateCase(p, fit));
  summarize(report);
  return report;
}

} // namespace trident::validation
