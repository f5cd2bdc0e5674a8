//===- MoE.cpp - Routed mixture of experts ---------------------------------===//
//
// One implementation for both backends. The routing, the activations and
// the gather and weighted scatter of each expert's rows run on the host in
// a fixed order; each local expert's GEMMs run on the backend's matmul
// (Eigen on the CPU, cuBLAS on CUDA) over all the rows routed to it, with
// views of the expert weights and their gradients, which never leave the
// device. The rows of all local experts move together: each phase runs
// every expert's GEMMs on its rows of one tensor before the phase's one
// download, so on CUDA a call waits for the device a fixed number of times
// (7 host copies in the forward, 13 in the backward without biases), where
// it waited 4 times per expert in the forward and 8 in the backward. The
// rows and the router still stage through host memory (docs/runtime.md).
//
// Routing (Mixtral, Jiang et al. 2024, "Mixtral of Experts"): softmax over
// the router logits, the top-k experts, weights renormalised over them
// (or, MoEDims::renormalize false, the probabilities themselves: Qwen-MoE).
// gpt-oss adds biases to the router and to every expert linear, and uses a
// clamped SwiGLU (MoEDims::swigluLimit). DeepSeek-V3 scores with a sigmoid,
// chooses with a selection bias among the best groups of experts, and
// scales the weights (MoEDims::sigmoidScores, groups, routedScale).
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"
#include "trident/Support/ExpertGroups.h"
#include "Activations.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trident::rt {
namespace {

using detail::check;

float activate(Activation a, float v) {
  switch (a) {
  case Activation::Silu:
    return act::silu(v);
  case Activation::Relu:
    return act::relu(v);
  case Activation::Gelu:
    return act::geluErf(v);
  case Activation::GeluTanh:
    return act::geluTanh(v);
  }
  return v;
}

float activateGrad(Activation a, float v) {
  switch (a) {
  case Activation::Silu:
    return act::siluGrad(v);
  case Activation::Relu:
    return act::reluGrad(v);
  case Activation::Gelu:
    return act::geluErfGrad(v);
  case Activation::GeluTanh:
    return act::geluTanhGrad(v);
  }
  return 1.0f;
}

/// The routing fields of MoEDims: groups dividing the experts, the top-k
/// inside the chosen groups, a positive scale.
void checkRouting(const MoEDims &d, const char *fn) {
  const std::string why =
      checkExpertGroups(d.experts, d.topK, d.groups, d.topkGroups);
  check(why.empty(), fn, why);
  check(std::isfinite(d.routedScale) && d.routedScale > 0.0f, fn,
        "routedScale must be positive");
}

struct Shape {
  int64_t n, h, E, f, fin, k;
  int64_t first, local; ///< experts held here: first .. first + local - 1
};

Shape checkMoE(const Tensor &x, const Tensor &router, const Tensor &wIn,
               const Tensor &wOut, const MoEDims &d, const char *fn) {
  check(d.experts > 0 && d.topK > 0 && d.topK <= d.experts, fn,
        "need 0 < topK <= experts, got topK " + std::to_string(d.topK) +
            " of " + std::to_string(d.experts));
  check(d.swigluLimit == 0.0f ||
            (std::isfinite(d.swigluLimit) && d.swigluLimit > 0.0f && d.gated),
        fn, "swigluLimit must be 0, or positive with gated experts");
  check(router.rank() == 2 && router.dim(1) == d.experts, fn,
        "router " + router.shapeString() + " must be [hidden, experts]");
  checkRouting(d, fn);
  Shape s{};
  s.h = router.dim(0);
  s.E = d.experts;
  s.k = d.topK;
  check(s.h > 0 && x.rank() >= 1 && x.dim(-1) == s.h, fn,
        "x " + x.shapeString() + " must be rows of the router's hidden size " +
            std::to_string(s.h));
  s.n = x.numel() / s.h;
  check(wIn.rank() == 3 && wIn.dim(1) == s.h && wIn.dim(0) >= 1, fn,
        "wIn " + wIn.shapeString() + " must be [experts, hidden, ffn]");
  s.first = d.expertOffset;
  s.local = wIn.dim(0);
  check(s.first >= 0 && s.first + s.local <= s.E, fn,
        "experts " + std::to_string(s.first) + ".." +
            std::to_string(s.first + s.local - 1) + " held here fall outside "
            "the router's " + std::to_string(s.E));
  s.fin = wIn.dim(2);
  check(!d.gated || s.fin % 2 == 0, fn, "gated wIn needs 2 * ffn columns");
  s.f = d.gated ? s.fin / 2 : s.fin;
  check(wOut.rank() == 3 && wOut.dim(0) == s.local && wOut.dim(1) == s.f &&
            wOut.dim(2) == s.h,
        fn, "wOut " + wOut.shapeString() + " must be [experts, ffn, hidden]");
  return s;
}

void checkBiases(const MoEBiases &b, const Shape &s, const char *fn,
                 const char *what) {
  check(!b.router.defined() || b.router.numel() == s.E, fn,
        std::string(what) + " router " + b.router.shapeString() +
            " must hold one value per expert (" + std::to_string(s.E) + ")");
  check(!b.in.defined() || b.in.numel() == s.local * s.fin, fn,
        std::string(what) + " in " + b.in.shapeString() + " must be [" +
            std::to_string(s.local) + ", " + std::to_string(s.fin) + "]");
  check(!b.select.defined() || b.select.numel() == s.E, fn,
        std::string(what) + " select " + b.select.shapeString() +
            " must hold one value per expert (" + std::to_string(s.E) + ")");
  check(!b.out.defined() || b.out.numel() == s.local * s.h, fn,
        std::string(what) + " out " + b.out.shapeString() + " must be [" +
            std::to_string(s.local) + ", " + std::to_string(s.h) + "]");
}

std::vector<float> hostOrEmpty(const Tensor &t) {
  return t.defined() ? t.toHost() : std::vector<float>();
}

/// Per token: the chosen experts, their weights and all scores (softmax
/// probabilities, or sigmoids under MoEDims::sigmoidScores).
struct Routing {
  std::vector<int32_t> expert; // [n, k]
  std::vector<float> weight;   // [n, k]
  std::vector<float> prob;     // [n, E]
  std::vector<double> chosen;  // [n]: the weights' denominator
};

Routing route(const std::vector<float> &X, const std::vector<float> &R,
              const Shape &s, const MoEDims &d,
              const std::vector<float> &bias = {},
              const std::vector<float> &select = {}) {
  Routing r;
  r.expert.resize(size_t(s.n * s.k));
  r.weight.resize(size_t(s.n * s.k));
  r.prob.resize(size_t(s.n * s.E));
  r.chosen.resize(size_t(s.n));
  std::vector<double> logit(size_t(s.E));
  std::vector<float> choice(size_t(s.E));
  std::vector<int32_t> idx(size_t(s.E));
  const int64_t groupSize = s.E / d.groups;
  std::vector<double> groupScore(size_t(d.groups));
  std::vector<int32_t> groupIdx(size_t(d.groups));
  // Every row is routed (each is cheap next to its experts).
  for (int64_t t = 0; t < s.n; ++t) {
    for (int64_t e = 0; e < s.E; ++e) {
      double acc = 0;
      for (int64_t i = 0; i < s.h; ++i)
        acc += double(X[size_t(t * s.h + i)]) * R[size_t(i * s.E + e)];
      logit[size_t(e)] = bias.empty() ? acc : acc + bias[size_t(e)];
    }
    for (double l : logit)
      check(std::isfinite(l), "moe", "router logit " + std::to_string(l) +
                                         " of token " + std::to_string(t) +
                                         " is not finite");
    float *p = &r.prob[size_t(t * s.E)];
    if (d.sigmoidScores) {
      for (int64_t e = 0; e < s.E; ++e)
        p[e] = float(1.0 / (1.0 + std::exp(-logit[size_t(e)])));
    } else {
      double mx = *std::max_element(logit.begin(), logit.end()), z = 0;
      for (double &l : logit)
        z += (l = std::exp(l - mx));
      for (int64_t e = 0; e < s.E; ++e)
        p[e] = float(logit[size_t(e)] / z);
    }
    // The selection scores: the scores plus the selection bias; outside
    // the best groups, 0.
    for (int64_t e = 0; e < s.E; ++e)
      choice[size_t(e)] = select.empty() ? p[e] : p[e] + select[size_t(e)];
    if (d.groups > 1) {
      for (int64_t g = 0; g < d.groups; ++g) {
        // The sum of the group's two best selection scores (one in a
        // group of one).
        const float *c = &choice[size_t(g * groupSize)];
        float best = -INFINITY, second = -INFINITY;
        for (int64_t j = 0; j < groupSize; ++j) {
          if (c[j] > best) {
            second = best;
            best = c[j];
          } else if (c[j] > second) {
            second = c[j];
          }
        }
        groupScore[size_t(g)] =
            groupSize > 1 ? double(best) + double(second) : double(best);
      }
      std::iota(groupIdx.begin(), groupIdx.end(), 0);
      std::stable_sort(groupIdx.begin(), groupIdx.end(), [&](int32_t a, int32_t b) {
        return groupScore[size_t(a)] > groupScore[size_t(b)];
      });
      for (int64_t gi = d.topkGroups; gi < d.groups; ++gi)
        std::fill_n(&choice[size_t(groupIdx[size_t(gi)] * groupSize)],
                    groupSize, 0.0f);
    }
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) {
      return choice[size_t(a)] > choice[size_t(b)];
    });
    double chosen = 0;
    for (int64_t j = 0; j < s.k; ++j)
      chosen += p[idx[size_t(j)]];
    if (d.sigmoidScores)
      chosen += 1e-20; // DeepseekV3's denominator
    if (!d.renormalize)
      chosen = 1.0;
    r.chosen[size_t(t)] = chosen;
    for (int64_t j = 0; j < s.k; ++j) {
      r.expert[size_t(t * s.k + j)] = idx[size_t(j)];
      float w = float(p[idx[size_t(j)]] / chosen);
      if (d.routedScale != 1.0f)
        w *= d.routedScale;
      r.weight[size_t(t * s.k + j)] = w;
    }
  }
  return r;
}

/// gpt-oss's clamped SwiGLU of one (gate, up) pair, and its partial
/// derivatives (the clamps pass the gradient where the value is inside,
/// bounds included, as torch.clamp's backward does).
struct ClampedSwiglu {
  float value, dGate, dUp;
};
ClampedSwiglu clampedSwiglu(float gate, float up, float limit) {
  const float g = std::min(gate, limit);
  const float u = std::clamp(up, -limit, limit);
  const float sig = act::sigmoid(kGptOssSwigluAlpha * g);
  const float glu = g * sig;
  const float dglu = sig + kGptOssSwigluAlpha * g * sig * (1.0f - sig);
  return {(u + 1.0f) * glu, gate <= limit ? (u + 1.0f) * dglu : 0.0f,
          up >= -limit && up <= limit ? glu : 0.0f};
}

/// u = act(a) (or act(gate) * up, or the clamped SwiGLU).
void expertHidden(std::vector<float> &u, const std::vector<float> &a,
                  const Shape &s, const MoEDims &d) {
  for (int64_t j = 0; j < s.f; ++j)
    u[size_t(j)] =
        d.swigluLimit > 0.0f
            ? clampedSwiglu(a[size_t(j)], a[size_t(s.f + j)], d.swigluLimit)
                  .value
        : d.gated ? activate(d.act, a[size_t(j)]) * a[size_t(s.f + j)]
                  : activate(d.act, a[size_t(j)]);
}

/// The rows routed to this rank's experts, concatenated in expert order
/// (an expert's rows in token order): row q's token, its (token, choice)
/// slot in [n, k] and its weight; expert e's rows are [begin[e],
/// begin[e + 1]). Other ranks' experts are left out.
struct RoutedRows {
  std::vector<int64_t> token, slot;
  std::vector<float> weight;
  std::vector<int64_t> begin; ///< local experts + 1 entries
  int64_t size() const { return int64_t(token.size()); }
  int64_t rowsOf(int64_t e) const {
    return begin[size_t(e + 1)] - begin[size_t(e)];
  }
};

RoutedRows routedRows(const Routing &r, const Shape &s) {
  std::vector<int64_t> count(size_t(s.local), 0);
  for (int64_t t = 0; t < s.n * s.k; ++t) {
    int64_t e = r.expert[size_t(t)] - s.first;
    if (e >= 0 && e < s.local)
      ++count[size_t(e)];
  }
  RoutedRows rows;
  rows.begin.assign(size_t(s.local + 1), 0);
  for (int64_t e = 0; e < s.local; ++e)
    rows.begin[size_t(e + 1)] = rows.begin[size_t(e)] + count[size_t(e)];
  const int64_t total = rows.begin.back();
  rows.token.resize(size_t(total));
  rows.slot.resize(size_t(total));
  rows.weight.resize(size_t(total));
  std::vector<int64_t> next(rows.begin.begin(), rows.begin.end() - 1);
  for (int64_t t = 0; t < s.n; ++t)
    for (int64_t j = 0; j < s.k; ++j) {
      int64_t e = r.expert[size_t(t * s.k + j)] - s.first;
      if (e < 0 || e >= s.local)
        continue; // held by another rank
      size_t q = size_t(next[size_t(e)]++);
      rows.token[q] = t;
      rows.slot[q] = t * s.k + j;
      rows.weight[q] = r.weight[size_t(t * s.k + j)];
    }
  return rows;
}

/// body(e, first, m) for each local expert with m > 0 rows routed to it,
/// from row `first`, in expert order.
template <typename Body>
void forEachExpert(const RoutedRows &rows, const Shape &s, Body body) {
  for (int64_t e = 0; e < s.local; ++e)
    if (int64_t m = rows.rowsOf(e); m > 0)
      body(e, rows.begin[size_t(e)], m);
}

/// A host buffer as a backend tensor of `shape`.
Tensor upload(const std::vector<float> &values, std::vector<int64_t> shape) {
  Tensor t(std::move(shape));
  t.fromHost(values);
  return t;
}

/// Rows [first, first + m) of a [rows, cols] tensor.
Tensor rowsView(const Tensor &t, int64_t first, int64_t m) {
  const int64_t cols = t.dim(1);
  return t.view(first * cols, {m, cols});
}

/// Local expert e's [hidden, fin] block of wIn (or of its gradient) and
/// its [ffn, hidden] block of wOut, as views.
Tensor expertIn(const Tensor &w, int64_t e, const Shape &s) {
  return w.view(e * s.h * s.fin, {s.h, s.fin});
}
Tensor expertOut(const Tensor &w, int64_t e, const Shape &s) {
  return w.view(e * s.f * s.h, {s.f, s.h});
}

/// The routed rows through their experts' first linear: xRows (the rows'
/// inputs, a backend tensor), a = x wIn[e] + bIn[e] (each expert's GEMM on
/// the backend, into its rows of one tensor) and u = act(a), a and u
/// row-major on the host. One upload and one download for all experts.
struct ExpertActs {
  std::vector<float> a, u;
  Tensor xRows;
};
ExpertActs expertForward(const std::vector<float> &X, const Tensor &wIn,
                         const RoutedRows &rows, const Shape &s,
                         const MoEDims &d, const std::vector<float> &bIn) {
  const int64_t M = rows.size();
  ExpertActs acts;
  std::vector<float> x(size_t(M * s.h));
  for (int64_t q = 0; q < M; ++q)
    std::copy_n(&X[size_t(rows.token[size_t(q)] * s.h)], s.h,
                &x[size_t(q * s.h)]);
  acts.xRows = upload(x, {M, s.h});
  Tensor a({M, s.fin});
  forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
    Tensor ae = rowsView(a, first, m);
    matmul(ae, rowsView(acts.xRows, first, m), expertIn(wIn, e, s), false);
  });
  acts.a = a.toHost();
  acts.u.resize(size_t(M * s.f));
  std::vector<float> row(size_t(s.fin)), u(size_t(s.f));
  forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
    for (int64_t q = first; q < first + m; ++q) {
      if (!bIn.empty())
        for (int64_t c = 0; c < s.fin; ++c)
          acts.a[size_t(q * s.fin + c)] += bIn[size_t(e * s.fin + c)];
      std::copy_n(&acts.a[size_t(q * s.fin)], s.fin, row.begin());
      expertHidden(u, row, s, d);
      std::copy(u.begin(), u.end(), &acts.u[size_t(q * s.f)]);
    }
  });
  return acts;
}

} // namespace

void moeForward(Tensor &y, const Tensor &x, const Tensor &router,
                const Tensor &wIn, const Tensor &wOut, const MoEDims &d) {
  moeForward(y, x, router, wIn, wOut, d, MoEBiases{});
}

void moeForward(Tensor &y, const Tensor &x, const Tensor &router,
                const Tensor &wIn, const Tensor &wOut, const MoEDims &d,
                const MoEBiases &biases) {
  const char *fn = "moeForward";
  Shape s = checkMoE(x, router, wIn, wOut, d, fn);
  checkBiases(biases, s, fn, "bias");
  check(y.numel() == x.numel(), fn, "y must have x's shape");
  std::vector<float> X = x.toHost(), R = router.toHost(),
                     Y(size_t(s.n * s.h), 0.0f);
  const std::vector<float> Br = hostOrEmpty(biases.router),
                           Bi = hostOrEmpty(biases.in),
                           Bo = d.outBiasHere ? hostOrEmpty(biases.out)
                                              : std::vector<float>();
  Routing r = route(X, R, s, d, Br, hostOrEmpty(biases.select));
  const RoutedRows rows = routedRows(r, s);
  if (rows.size() > 0) {
    ExpertActs acts = expertForward(X, wIn, rows, s, d, Bi);
    acts.xRows = Tensor(); // only the backward reuses the rows
    // o = u wOut[e] on the backend; y[t] += g (o + bOut[e]).
    const int64_t M = rows.size();
    Tensor uAll = upload(acts.u, {M, s.f}), o({M, s.h});
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      Tensor oe = rowsView(o, first, m);
      matmul(oe, rowsView(uAll, first, m), expertOut(wOut, e, s), false);
    });
    const std::vector<float> O = o.toHost();
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      for (int64_t q = first; q < first + m; ++q) {
        float g = rows.weight[size_t(q)];
        float *out = &Y[size_t(rows.token[size_t(q)] * s.h)];
        const float *oq = &O[size_t(q * s.h)];
        for (int64_t i = 0; i < s.h; ++i)
          out[i] +=
              g * (Bo.empty() ? oq[i] : oq[i] + Bo[size_t(e * s.h + i)]);
      }
    });
  }
  y.fromHost(Y);
}

void moeBackward(Tensor &dx, Tensor &dwIn, Tensor &dwOut, Tensor &dgate,
                 const Tensor &dy, const Tensor &x, const Tensor &router,
                 const Tensor &wIn, const Tensor &wOut, const MoEDims &d) {
  MoEBiases none;
  moeBackward(dx, dwIn, dwOut, dgate, dy, x, router, wIn, wOut, d, none,
              none);
}

void moeBackward(Tensor &dx, Tensor &dwIn, Tensor &dwOut, Tensor &dgate,
                 const Tensor &dy, const Tensor &x, const Tensor &router,
                 const Tensor &wIn, const Tensor &wOut, const MoEDims &d,
                 const MoEBiases &biases, MoEBiases &dbiases) {
  const char *fn = "moeBackward";
  Shape s = checkMoE(x, router, wIn, wOut, d, fn);
  checkBiases(biases, s, fn, "bias");
  checkBiases(dbiases, s, fn, "bias gradient");
  check(biases.in.defined() == dbiases.in.defined() &&
            biases.out.defined() == dbiases.out.defined(),
        fn, "each expert bias needs its gradient");
  check(dy.numel() == x.numel() && dx.numel() == x.numel(), fn,
        "dy and dx must have x's shape");
  check(dwIn.numel() == wIn.numel() && dwOut.numel() == wOut.numel(), fn,
        "expert gradients must have their parameters' shapes");
  check(dgate.numel() == s.n * s.k, fn,
        "dgate " + dgate.shapeString() + " must be [n, topK]");
  std::vector<float> X = x.toHost(), R = router.toHost(), DY = dy.toHost(),
                     DX(size_t(s.n * s.h), 0.0f), DG(size_t(s.n * s.k), 0.0f);
  const std::vector<float> Br = hostOrEmpty(biases.router),
                           Bi = hostOrEmpty(biases.in),
                           Bo = hostOrEmpty(biases.out);
  std::vector<float> DBi = hostOrEmpty(dbiases.in),
                     DBo = hostOrEmpty(dbiases.out);
  Routing r = route(X, R, s, d, Br, hostOrEmpty(biases.select));
  const RoutedRows rows = routedRows(r, s);
  const int64_t M = rows.size();
  if (M > 0) {
    // The forward again: a = x wIn[e] + bIn[e], u = act(a).
    ExpertActs acts = expertForward(X, wIn, rows, s, d, Bi);
    // o = u wOut[e] (+ bOut[e]); y[t] += g o. With dy_q the row's output
    // gradient: back = dy_q wOut[e]^T, dg = u . back (+ bOut[e] . dy_q
    // where this rank adds the bias), du = g back, dwOut[e] += u^T (g
    // dy), dbOut[e] += g dy. Each phase runs every expert's GEMMs before
    // the one download it needs.
    std::vector<float> DYe(size_t(M * s.h)), GDY(size_t(M * s.h));
    for (int64_t q = 0; q < M; ++q) {
      const float *dyt = &DY[size_t(rows.token[size_t(q)] * s.h)];
      float g = rows.weight[size_t(q)];
      for (int64_t i = 0; i < s.h; ++i) {
        DYe[size_t(q * s.h + i)] = dyt[i];
        GDY[size_t(q * s.h + i)] = g * dyt[i];
      }
    }
    // Each phase's tensors hold every local expert's rows: scoped, so
    // that one phase's are freed before the next allocates.
    std::vector<float> B;
    {
      Tensor dyAll = upload(DYe, {M, s.h}), back({M, s.f});
      forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
        Tensor be = rowsView(back, first, m);
        matmul(be, rowsView(dyAll, first, m), expertOut(wOut, e, s), true);
      });
      B = back.toHost();
    }
    // The weight gradients are linearBackward's dW += dy^T x, with u as
    // its dy and g dy as its x (and below x as dy, da as x).
    Tensor noDx, noDb;
    {
      Tensor uAll = upload(acts.u, {M, s.f}), gdyAll = upload(GDY, {M, s.h});
      forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
        Tensor dwo = expertOut(dwOut, e, s);
        linearBackward(noDx, dwo, noDb, rowsView(uAll, first, m),
                       rowsView(gdyAll, first, m), expertOut(wOut, e, s));
      });
    }
    std::vector<float> DA(size_t(M * s.fin));
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      for (int64_t q = first; q < first + m; ++q) {
        float g = rows.weight[size_t(q)];
        const float *u = &acts.u[size_t(q * s.f)], *bq = &B[size_t(q * s.f)];
        const float *a = &acts.a[size_t(q * s.fin)];
        const float *dyq = &DYe[size_t(q * s.h)];
        double dg = 0;
        for (int64_t j = 0; j < s.f; ++j)
          dg += double(u[j]) * bq[j];
        if (!Bo.empty())
          for (int64_t i = 0; i < s.h; ++i) {
            if (d.outBiasHere)
              dg += double(Bo[size_t(e * s.h + i)]) * dyq[i];
            DBo[size_t(e * s.h + i)] += g * dyq[i];
          }
        DG[size_t(rows.slot[size_t(q)])] = float(dg);
        float *da = &DA[size_t(q * s.fin)];
        for (int64_t j = 0; j < s.f; ++j) {
          float du = g * bq[j], gv = a[j];
          if (d.swigluLimit > 0.0f) {
            ClampedSwiglu c = clampedSwiglu(gv, a[s.f + j], d.swigluLimit);
            da[j] = du * c.dGate;
            da[s.f + j] = du * c.dUp;
          } else if (d.gated) {
            float up = a[s.f + j];
            da[j] = du * up * activateGrad(d.act, gv);
            da[s.f + j] = du * activate(d.act, gv);
          } else {
            da[j] = du * activateGrad(d.act, gv);
          }
        }
        if (!DBi.empty())
          for (int64_t c = 0; c < s.fin; ++c)
            DBi[size_t(e * s.fin + c)] += da[c];
      }
    });
    // a = x wIn[e] + bIn[e]: dwIn[e] += x^T da, dx += da wIn[e]^T.
    std::vector<float> DXe;
    {
      Tensor dA = upload(DA, {M, s.fin}), dxe({M, s.h});
      forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
        Tensor dwi = expertIn(dwIn, e, s), dae = rowsView(dA, first, m);
        linearBackward(noDx, dwi, noDb, rowsView(acts.xRows, first, m), dae,
                       expertIn(wIn, e, s));
        Tensor dxq = rowsView(dxe, first, m);
        matmul(dxq, dae, expertIn(wIn, e, s), true);
      });
      DXe = dxe.toHost();
    }
    for (int64_t q = 0; q < M; ++q) {
      float *dxt = &DX[size_t(rows.token[size_t(q)] * s.h)];
      for (int64_t i = 0; i < s.h; ++i)
        dxt[i] += DXe[size_t(q * s.h + i)];
    }
  }
  dx.fromHost(DX);
  dgate.fromHost(DG);
  if (!DBi.empty())
    dbiases.in.fromHost(DBi);
  if (!DBo.empty())
    dbiases.out.fromHost(DBo);
}

void moeRouterBackward(Tensor &dx, Tensor &drouter, const Tensor &dgate,
                       const Tensor &x, const Tensor &router,
                       const MoEDims &d, int64_t rowOffset) {
  Tensor none;
  moeRouterBackward(dx, drouter, none, dgate, x, router, Tensor(), d,
                    rowOffset);
}

void moeRouterBackward(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                       const Tensor &dgate, const Tensor &x,
                       const Tensor &router, const Tensor &routerBias,
                       const MoEDims &d, int64_t rowOffset) {
  MoEBiases b;
  b.router = routerBias;
  moeRouterBackward(dx, drouter, dRouterBias, dgate, x, router, b, d,
                    rowOffset);
}

void moeRouterBackward(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                       const Tensor &dgate, const Tensor &x,
                       const Tensor &router, const MoEBiases &biases,
                       const MoEDims &d, int64_t rowOffset,
                       Tensor *selectLoad) {
  const char *fn = "moeRouterBackward";
  check(!selectLoad || selectLoad->numel() == d.experts, fn,
        "the expert load must hold one value per expert");
  const Tensor &routerBias = biases.router;
  check(routerBias.defined() == dRouterBias.defined() &&
            (!routerBias.defined() || (routerBias.numel() == d.experts &&
                                       dRouterBias.numel() == d.experts)),
        fn, "the router bias and its gradient must both hold one value per "
            "expert, or both be undefined");
  check(d.experts > 0 && d.topK > 0 && d.topK <= d.experts, fn,
        "need 0 < topK <= experts");
  check(router.rank() == 2 && router.dim(1) == d.experts, fn,
        "router " + router.shapeString() + " must be [hidden, experts]");
  checkRouting(d, fn);
  check(!biases.select.defined() || biases.select.numel() == d.experts, fn,
        "the selection bias must hold one value per expert");
  Shape s{};
  s.h = router.dim(0), s.E = d.experts, s.k = d.topK;
  check(s.h > 0 && x.rank() >= 1 && x.dim(-1) == s.h, fn,
        "x " + x.shapeString() + " must be rows of the router's hidden size " +
            std::to_string(s.h));
  s.n = x.numel() / s.h;
  check(x.numel() == s.n * s.h && dgate.numel() == s.n * s.k, fn,
        "x " + x.shapeString() + " and dgate " + dgate.shapeString() +
            " must be [n, hidden] and [n, topK]");
  check(drouter.numel() == router.numel(), fn,
        "drouter must have the router's shape");
  const int64_t rows = dx.numel() / s.h;
  check(dx.numel() == rows * s.h && rowOffset >= 0 &&
            rowOffset + rows <= s.n,
        fn, "rows " + std::to_string(rowOffset) + ".." +
                std::to_string(rowOffset + rows - 1) + " fall outside x's " +
                std::to_string(s.n));
  std::vector<float> X = x.toHost(), R = router.toHost(), G = dgate.toHost(),
                     DR = drouter.toHost(), DX(size_t(rows * s.h), 0.0f);
  std::vector<float> DB = hostOrEmpty(dRouterBias);
  Routing r = route(X, R, s, d, hostOrEmpty(routerBias),
                    hostOrEmpty(biases.select));
  const double scale = d.routedScale;
  if (selectLoad) {
    // Counts stay exact in fp32 up to 2^24 tokens per expert and step.
    std::vector<float> L = selectLoad->toHost();
    for (int64_t t = rowOffset; t < rowOffset + rows; ++t)
      for (int64_t j = 0; j < s.k; ++j)
        L[size_t(r.expert[size_t(t * s.k + j)])] += 1.0f;
    selectLoad->fromHost(L);
  }
  std::vector<float> dp(size_t(s.E)), dlogit(size_t(s.E));
  for (int64_t t = rowOffset; t < rowOffset + rows; ++t) {
    const float *xt = &X[size_t(t * s.h)];
    float *dxt = &DX[size_t((t - rowOffset) * s.h)];
    // Weights w_j = r p_j / S over the chosen experts (r the routed
    // scale): dp_j = (r dw_j - sum_l dw_l w_l) / S; unchosen experts get 0
    // (the selection bias and the group mask only choose). Without
    // renormalisation w_j = r p_j: dp_j = r dw_j.
    const float *p = &r.prob[size_t(t * s.E)];
    const double chosen = r.chosen[size_t(t)];
    double mix = 0;
    for (int64_t j = 0; j < s.k; ++j)
      mix += double(G[size_t(t * s.k + j)]) * r.weight[size_t(t * s.k + j)];
    if (!d.renormalize)
      mix = 0.0;
    std::fill(dp.begin(), dp.end(), 0.0f);
    for (int64_t j = 0; j < s.k; ++j)
      dp[size_t(r.expert[size_t(t * s.k + j)])] =
          float((scale * G[size_t(t * s.k + j)] - mix) / chosen);
    if (d.sigmoidScores) {
      // Sigmoid: dlogit_e = dp_e p_e (1 - p_e).
      for (int64_t e = 0; e < s.E; ++e)
        dlogit[size_t(e)] =
            float(double(dp[size_t(e)]) * p[e] * (1.0 - double(p[e])));
    } else {
      // Softmax: dlogit_e = p_e (dp_e - sum_l p_l dp_l).
      double pdp = 0;
      for (int64_t e = 0; e < s.E; ++e)
        pdp += double(p[e]) * dp[size_t(e)];
      for (int64_t e = 0; e < s.E; ++e)
        dlogit[size_t(e)] = float(p[e] * (dp[size_t(e)] - pdp));
    }
    if (!DB.empty())
      for (int64_t e = 0; e < s.E; ++e)
        DB[size_t(e)] += dlogit[size_t(e)];
    // logits = x router: drouter += x^T dlogit, dx = router dlogit.
    for (int64_t i = 0; i < s.h; ++i) {
      double acc = 0;
      for (int64_t e = 0; e < s.E; ++e) {
        DR[size_t(i * s.E + e)] += xt[i] * dlogit[size_t(e)];
        acc += double(R[size_t(i * s.E + e)]) * dlogit[size_t(e)];
      }
      dxt[i] = float(acc);
    }
  }
  dx.fromHost(DX);
  drouter.fromHost(DR);
  if (!DB.empty())
    dRouterBias.fromHost(DB);
}

void loadBalanceUpdate(Tensor &bias, const Tensor &load, float rate,
                       int64_t begin) {
  const char *fn = "loadBalanceUpdate";
  const int64_t E = load.numel();
  check(E > 0 && begin >= 0 && begin <= E, fn,
        "bias elements from " + std::to_string(begin) + " of " +
            std::to_string(E) + " experts");
  check(std::isfinite(rate) && rate >= 0.0f, fn,
        "rate " + std::to_string(rate) + " must be finite and >= 0");
  std::vector<float> L = load.toHost(), B = bias.toHost();
  double total = 0;
  for (float c : L) {
    check(std::isfinite(c) && c >= 0.0f, fn,
          "an expert load of " + std::to_string(c) + " tokens");
    total += c;
  }
  const double mean = total / double(E);
  for (int64_t i = 0; i < int64_t(B.size()) && begin + i < E; ++i) {
    double c = L[size_t(begin + i)];
    B[size_t(i)] += c < mean ? rate : c > mean ? -rate : 0.0f;
  }
  bias.fromHost(B);
}

} // namespace trident::rt
