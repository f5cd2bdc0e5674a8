//===- Enumerate.cpp - the configuration families -------------------------===//
//
// Phase 1 of the search (Search.cpp): every valid combination of the
// outer axes on a cluster variant, as families whose members are the
// (vpp, ZeRO) choices; the pins checked against the cluster and model
// first, and why nothing is valid when nothing is.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"

namespace trident::search::detail {

/// Pins that cannot work on this cluster or model: input errors.
Status checkPins(const Shared &sh, const Cluster &cluster) {
  const SearchOptions &opt = sh.opt;
  const LayerProfile &profile = sh.profile;
  const EvalOptions &evalOpt = sh.evalOpt;
  const Pins &pin = opt.pins;
  int64_t total = cluster.totalGpus();
  if (auto tp = pin[Axis::Tp])
    for (const NodeGroup &g : cluster.groups) {
      if (*tp > g.gpusPerNode && !evalOpt.allowTpAcrossNodes)
        return Status::error(
            "--fix: tp=" + str(*tp) + " exceeds the " +
            str(g.gpusPerNode) + " GPUs of a node of '" + g.name +
            "' (tensor parallelism stays inside an NVLink domain)");
    }
  if (auto etp = pin[Axis::Etp]; etp && !sh.hasExperts)
    return Status::error("--fix: etp=" + str(*etp) + " but model '" +
                         profile.modelName + "' has no routed experts");
  if (auto ep = pin[Axis::Ep]; ep && *ep > 1 && !sh.hasExperts)
    return Status::error("--fix: ep=" + str(*ep) + " but model '" +
                         profile.modelName + "' has no routed experts");
  {
    int64_t prod = 1;
    std::string names;
    for (Axis a : {Axis::Dp, Axis::Tp, Axis::Pp, Axis::Cp})
      if (auto v = pin[a]; v) {
        prod *= *v;
        names += std::string(names.empty() ? "" : "*") +
                 std::string(axisSpec(a).name);
      }
    if (prod > 1 && total % prod != 0)
      return Status::error("--fix: " + names + " = " + str(prod) +
                           " does not divide the " + str(total) +
                           " GPUs of cluster '" + cluster.name + "'");
    if (pin[Axis::Dp] && pin[Axis::Tp] && pin[Axis::Pp] && pin[Axis::Cp] &&
        prod != total)
      return Status::error("--fix: dp*tp*pp*cp = " + str(prod) +
                           " but cluster '" + cluster.name + "' has " +
                           str(total) + " GPUs");
  }
  if (auto pp = pin[Axis::Pp]; pp && *pp > sh.numBlocks)
    return Status::error("--fix: pp=" + str(*pp) + " exceeds the " +
                         str(sh.numBlocks) + " layers of the model");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Enumeration
//===----------------------------------------------------------------------===//

/// Every valid outer configuration of variant `vi` (pins applied).
void enumerate(Shared &sh, int32_t vi, const Evaluator &ev) {
  const Variant &var = sh.variants[size_t(vi)];
  const Cluster &cl = var.cluster;
  const Pins &pin = sh.opt.pins;
  const LayerProfile &prof = sh.profile;
  const int64_t total = cl.totalGpus();
  const int64_t B = sh.opt.globalBatch;
  const int64_t N = sh.numBlocks;
  int64_t minGpn = std::numeric_limits<int64_t>::max();
  for (const NodeGroup &g : cl.groups)
    minGpn = std::min(minGpn, g.gpusPerNode);

  std::vector<int64_t> tps;
  for (int64_t tp : divisorsOf(total)) {
    bool ok = true;
    for (const NodeGroup &g : cl.groups) {
      if (tp <= g.gpusPerNode)
        ok = ok && g.gpusPerNode % tp == 0;
      else
        ok = ok && sh.evalOpt.allowTpAcrossNodes && tp % g.gpusPerNode == 0;
    }
    if ((prof.numHeads > 0 && prof.numHeads % tp != 0) ||
        (prof.numKvHeads > 0 && prof.numKvHeads % tp != 0))
      ok = false;
    if (ok)
      tps.push_back(tp);
  }
  for (int64_t tp : tps) {
    if (!pin.admits(Axis::Tp, tp))
      continue;
    for (int64_t cp : divisorsOf(total / tp)) {
      if (!pin.admits(Axis::Cp, cp) || prof.seqLen % cp != 0)
        continue;
      for (int64_t pp : divisorsOf(total / (tp * cp))) {
        if (pp > N || !pin.admits(Axis::Pp, pp))
          continue;
        int64_t dp = total / (tp * cp * pp);
        if (!pin.admits(Axis::Dp, dp) || B % dp != 0)
          continue;
        int64_t stageGpus = dp * tp * cp;
        bool ok = true;
        for (const NodeGroup &g : cl.groups)
          ok = ok && g.gpus() % stageGpus == 0;
        if (!ok)
          continue;
        // The experts' layouts, (ep, etp) with etp 0 for "as tp". Folded
        // (EvalOptions::expertFolding, Megatron-Core): etp any divisor of
        // tp and ep any divisor of tp x cp x dp / etp, so ep need not divide
        // dp; else ep divides dp and etp is tp or 1.
        std::vector<std::pair<int64_t, int64_t>> experts{{1, 0}};
        if (sh.hasExperts) {
          experts.clear();
          const bool folding = sh.evalOpt.expertFolding;
          std::vector<int64_t> etps =
              folding ? divisorsOf(tp)
                      : (tp > 1 ? std::vector<int64_t>{1, tp}
                                : std::vector<int64_t>{1});
          for (int64_t etp : etps) {
            // A pinned etp 0 means "as tp".
            auto pinEtp = pin[Axis::Etp];
            if (pinEtp && *pinEtp != etp && !(*pinEtp == 0 && etp == tp))
              continue;
            for (int64_t ep : divisorsOf(folding ? dp * cp * tp / etp : dp))
              if (sh.minExperts == 0 || sh.minExperts % ep == 0)
                experts.push_back({ep, etp == tp ? 0 : etp});
          }
        }
        for (auto [ep, etp] : experts) {
          if (!pin.admits(Axis::Ep, ep))
            continue;
          for (auto [sp, ov] : kSpOverlap) {
            if (!spCandidate(sh, sp, tp, cp) ||
                !tpOverlapCandidate(sh, ov, tp, sp))
              continue;
            for (int64_t mb : divisorsOf(B / dp)) {
              if (!pin.admits(Axis::MicroBatch, mb))
                continue;
              for (Recompute rc : {Recompute::None, Recompute::Selective,
                                   Recompute::Full}) {
                if (!recomputeCandidate(sh, rc))
                  continue;
                // One family: the virtual stages and ZeRO stages share the
                // per-layer costs and the step-time bound, and are
                // expanded by the worker that takes the family.
                Config C;
                ParallelConfig &c = C.cfg;
                c.dp = dp, c.tp = tp, c.pp = pp, c.cp = cp, c.ep = ep;
                c.etp = etp;
                c.microBatch = mb;
                c.globalBatch = B;
                c.sequenceParallel = sp;
                c.tpCommOverlap = ov;
                c.recompute = rc;
                c.precision = sh.opt.precision;
                C.variant = vi;
                if (!ev.validate(c).isOk())
                  continue;
                int64_t members = 0;
                forEachMember(
                    sh, C, [&](int64_t, int) { ++members; }, &sh.axesRefusal);
                if (members == 0)
                  continue;
                sh.members += members;
                C.members = members;
                sh.configs.push_back(C);
              }
            }
          }
        }
      }
    }
  }
}

/// A message saying why no configuration satisfies the pins.
std::string whyNoConfig(const Shared &sh, const Evaluator &ev) {
  const Pins &pin = sh.opt.pins;
  const Cluster &cl = sh.variants[0].cluster;
  int64_t total = cl.totalGpus();
  ParallelConfig c;
  pin.applyTo(c);
  c.precision = sh.opt.precision;
  c.globalBatch = sh.opt.globalBatch;
  int64_t rest = c.tp * c.cp * c.pp;
  c.dp = pin[Axis::Dp].value_or(rest > 0 && total % rest == 0 ? total / rest : 1);
  std::string head = "no parallel configuration of " + str(total) +
                     " GPUs fits the model, the global batch " +
                     str(sh.opt.globalBatch);
  if (pin.any())
    head += " and --fix " + formatPins(pin);
  Status s = ev.validate(c);
  if (!s)
    return head + ": " + s.message();
  return head;
}


} // namespace trident::search::detail
