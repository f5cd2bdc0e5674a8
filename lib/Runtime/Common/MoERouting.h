//===- MoERouting.h - A mixture of experts' routing, per token ------------===//
//
// The router of Common/MoE.cpp, one token (or one output element) at a
// time, for the host and the device: the CPU backend runs these functions
// in loops (Cpu/CpuKernels.cpp), the CUDA backend in its kernels
// (Cuda/CudaKernels.cu), so both route alike and sum in the same order.
//
// Routing (Mixtral, Jiang et al. 2024, "Mixtral of Experts"): softmax over
// the router logits, the top-k experts (ties: the lower index), weights
// renormalised over them, or the probabilities themselves (Qwen-MoE);
// DeepSeek-V3 ("DeepSeek-V3 Technical Report", 2024, section 2.1.2)
// scores with a sigmoid, chooses with a selection bias among the best
// groups of experts, and scales the weights. Expert indices are int32
// (rt::DType::I32 tensors).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_MOEROUTING_H
#define TRIDENT_RUNTIME_COMMON_MOEROUTING_H

#include "HostDevice.h"

#include <cmath>
#include <cstdint>

namespace trident::rt::moe {

/// What routing needs of MoEDims, and the router's hidden size.
struct RouteSpec {
  int64_t h = 0, E = 0, k = 0;
  int64_t groups = 1, topkGroups = 1;
  bool sigmoidScores = false, renormalize = true;
  float routedScale = 1.0f;
};

/// Whether `v` is finite (no NaN, no infinity), on host and device alike.
TRIDENT_HD inline bool finite(double v) { return v - v == 0.0; }

/// Token row `xt`'s logit of expert e: x . router[:, e] in double, over the
/// hidden dimension in order, plus the router bias (null: none).
TRIDENT_HD inline double routerLogit(const float *xt, const float *router,
                                     const float *bias, int64_t h, int64_t E,
                                     int64_t e) {
  double acc = 0;
  for (int64_t i = 0; i < h; ++i)
    acc += double(xt[i]) * router[i * E + e];
  return bias ? acc + bias[e] : acc;
}

/// Routes one token from its E finite logits (`logit`, overwritten): the
/// scores p (softmax, or sigmoids), the chosen experts in order and their
/// weights. `select` (null: none) is added to the scores only to choose;
/// `choice` (E floats) and `groupScore` (groups doubles) are scratch.
TRIDENT_HD inline void routeToken(const RouteSpec &s, double *logit,
                                  const float *select, float *p, float *choice,
                                  double *groupScore, int32_t *expert,
                                  float *weight) {
  if (s.sigmoidScores) {
    for (int64_t e = 0; e < s.E; ++e)
      p[e] = float(1.0 / (1.0 + exp(-logit[e])));
  } else {
    double mx = logit[0], z = 0;
    for (int64_t e = 1; e < s.E; ++e)
      mx = logit[e] > mx ? logit[e] : mx;
    for (int64_t e = 0; e < s.E; ++e)
      z += (logit[e] = exp(logit[e] - mx));
    for (int64_t e = 0; e < s.E; ++e)
      p[e] = float(logit[e] / z);
  }
  // The selection scores: the scores plus the selection bias; outside the
  // best groups, 0.
  for (int64_t e = 0; e < s.E; ++e)
    choice[e] = select ? p[e] + select[e] : p[e];
  if (s.groups > 1) {
    const int64_t size = s.E / s.groups;
    for (int64_t g = 0; g < s.groups; ++g) {
      // The sum of the group's two best selection scores (one in a group
      // of one).
      const float *c = choice + g * size;
      float best = -INFINITY, second = -INFINITY;
      for (int64_t j = 0; j < size; ++j) {
        if (c[j] > best) {
          second = best;
          best = c[j];
        } else if (c[j] > second) {
          second = c[j];
        }
      }
      groupScore[g] = size > 1 ? double(best) + double(second) : double(best);
    }
    // The best topkGroups groups (ties: the lower index), marked +inf.
    for (int64_t r = 0; r < s.topkGroups; ++r) {
      int64_t best = -1;
      for (int64_t g = 0; g < s.groups; ++g)
        if (groupScore[g] != INFINITY &&
            (best < 0 || groupScore[g] > groupScore[best]))
          best = g;
      groupScore[best] = INFINITY;
    }
    for (int64_t g = 0; g < s.groups; ++g)
      if (groupScore[g] != INFINITY)
        for (int64_t j = 0; j < size; ++j)
          choice[g * size + j] = 0.0f;
  }
  // The top k by selection score (ties: the lower index); a chosen
  // expert's score is then set below every finite one.
  double chosen = 0;
  for (int64_t j = 0; j < s.k; ++j) {
    int64_t best = -1;
    for (int64_t e = 0; e < s.E; ++e)
      if (choice[e] != -INFINITY && (best < 0 || choice[e] > choice[best]))
        best = e;
    choice[best] = -INFINITY;
    expert[j] = int32_t(best);
    chosen += p[best];
  }
  if (s.sigmoidScores)
    chosen += 1e-20; // DeepseekV3's denominator
  if (!s.renormalize)
    chosen = 1.0;
  for (int64_t j = 0; j < s.k; ++j) {
    float w = float(p[expert[j]] / chosen);
    if (s.routedScale != 1.0f)
      w *= s.routedScale;
    weight[j] = w;
  }
}

/// One token's logit gradients from its scores p, chosen experts, weights
/// and weight gradients g (all of one token); `dp` (E floats) is scratch.
/// Weights w_j = r p_j / S over the chosen experts (r the routed scale, S
/// their sum): dp_j = (r dw_j - sum_l dw_l w_l) / S; unchosen experts get 0
/// (the selection bias and the group mask only choose). Without
/// renormalisation w_j = r p_j: dp_j = r dw_j. Then softmax's dlogit_e =
/// p_e (dp_e - sum_l p_l dp_l), or the sigmoid's dp_e p_e (1 - p_e).
TRIDENT_HD inline void routerGradToken(const RouteSpec &s, const float *p,
                                       const int32_t *expert,
                                       const float *weight, const float *g,
                                       float *dp, float *dlogit) {
  double chosen = 0, mix = 0;
  for (int64_t j = 0; j < s.k; ++j) {
    chosen += p[expert[j]];
    mix += double(g[j]) * weight[j];
  }
  if (s.sigmoidScores)
    chosen += 1e-20;
  if (!s.renormalize) {
    chosen = 1.0;
    mix = 0.0;
  }
  const double scale = s.routedScale;
  for (int64_t e = 0; e < s.E; ++e)
    dp[e] = 0.0f;
  for (int64_t j = 0; j < s.k; ++j)
    dp[expert[j]] = float((scale * g[j] - mix) / chosen);
  if (s.sigmoidScores) {
    for (int64_t e = 0; e < s.E; ++e)
      dlogit[e] = float(double(dp[e]) * p[e] * (1.0 - double(p[e])));
  } else {
    double pdp = 0;
    for (int64_t e = 0; e < s.E; ++e)
      pdp += double(p[e]) * dp[e];
    for (int64_t e = 0; e < s.E; ++e)
      dlogit[e] = float(p[e] * (dp[e] - pdp));
  }
}

/// The router's gradients from the logit gradients of rows [0, rows)
/// (`dlogit` [rows, E], `x` the same rows [rows, h]), each element a sum
/// over the rows in order: the router bias's element e, the router's
/// element (i, e) (added to `dr`), and row t's input gradient element i
/// (router[i, :] . dlogit[t, :] in double).
TRIDENT_HD inline float routerBiasGrad(const float *dlogit, int64_t rows,
                                       int64_t E, int64_t e, float db) {
  for (int64_t t = 0; t < rows; ++t)
    db += dlogit[t * E + e];
  return db;
}
TRIDENT_HD inline float routerWeightGrad(const float *x, const float *dlogit,
                                         int64_t rows, int64_t h, int64_t E,
                                         int64_t i, int64_t e, float dr) {
  for (int64_t t = 0; t < rows; ++t)
    dr += x[t * h + i] * dlogit[t * E + e];
  return dr;
}
TRIDENT_HD inline float routerInputGrad(const float *router,
                                        const float *dlogitRow, int64_t E,
                                        int64_t i) {
  double acc = 0;
  for (int64_t e = 0; e < E; ++e)
    acc += double(router[i * E + e]) * dlogitRow[e];
  return float(acc);
}

} // namespace trident::rt::moe

#endif // TRIDENT_RUNTIME_COMMON_MOEROUTING_H
