//===- Variants.cpp - cluster variants ------------------------------------===//
//
// Heterogeneous clusters are searched in every order of their node
// groups (up to four), and with a price per GPU-hour a homogeneous
// cluster also on fewer nodes; each variant gets its own Evaluator.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"

#include "trident/Cost/Envelope.h"

namespace trident::search::detail {

/// The cluster variants (the heterogeneous groups' orders; with a price,
/// fewer nodes) and an evaluator for each; `base` is the given cluster's.
Status buildVariants(Shared &sh, const Cluster &cluster,
                     const Evaluator &base) {
  const SearchOptions &opt = sh.opt;
  const LayerProfile &profile = sh.profile;
  const EvalOptions &evalOpt = sh.evalOpt;
  {
    Variant v0;
    v0.cluster = cluster;
    for (size_t g = 0; g < cluster.groups.size(); ++g)
      v0.origGroup.push_back(int32_t(g));
    sh.variants.push_back(v0);
    if (!cluster.homogeneous() && opt.permuteGroups &&
        cluster.groups.size() <= 4) {
      std::vector<int32_t> perm = v0.origGroup;
      while (std::next_permutation(perm.begin(), perm.end())) {
        Variant v;
        v.origGroup = perm;
        v.cluster = cluster;
        v.cluster.groups.clear();
        std::string order;
        for (int32_t g : perm) {
          v.cluster.groups.push_back(cluster.groups[size_t(g)]);
          order += (order.empty() ? "" : ", ") + cluster.groups[size_t(g)].name;
        }
        v.note = "groups in order " + order;
        sh.variants.push_back(v);
      }
    }
    if (cluster.homogeneous() && opt.objective == Objective::CostPerToken &&
        opt.considerFewerNodes) {
      for (int64_t n = cluster.groups[0].nodes / 2;
           n >= 1 && cluster.groups[0].nodes % n == 0; n /= 2) {
        Variant v;
        v.cluster = cluster;
        v.cluster.groups[0].nodes = n;
        v.origGroup = {0};
        v.note = str(n) + " of " + str(cluster.groups[0].nodes) + " nodes";
        sh.variants.push_back(v);
        if (n % 2 != 0)
          break;
      }
    }
  }
  for (Variant &v : sh.variants) {
    v.objectiveScale = objectiveScale(opt, v.cluster, sh.tokensPerStep);
    if (opt.robust) {
      // Rank by the high end of the interval (Cost/Envelope.h).
      double minHigh = minHighFactor();
      v.objectiveScale *= minHigh;
      for (size_t k = 0; k < v.robustFactor.size(); ++k) {
        ParallelConfig c;
        c.pp = (k & 1) ? 2 : 1;
        c.tp = (k & 2) ? 2 : 1;
        c.zeroStage = (k & 4) ? 3 : 0;
        c.precision = opt.precision;
        v.robustFactor[k] =
            timeRange(regimeOf(profile, v.cluster, c), 1.0).highFactor /
            minHigh;
      }
    }
    if (&v == &sh.variants[0]) {
      sh.evaluators.push_back(base);
      continue;
    }
    Result<Evaluator> e = Evaluator::create(profile, v.cluster, evalOpt);
    if (!e)
      return e.status();
    sh.evaluators.push_back(std::move(*e));
  }
  return Status::ok();
}


} // namespace trident::search::detail
