//===- MoE.cpp - Routed mixture of experts --------------------------------===//
//
// One implementation for both backends, and it runs on the backend's
// device: the routing (Common/MoERouting.h), the layout of the rows routed
// to this rank's experts, their gather, activations and weighted sums, and
// the backward's per-row work (Common/MoEExperts.h) are backend operations
// (detail::moeRoute, moeExpertRows, moeGather, moeHidden, moeCombine,
// moeGateGrads, moeHiddenGrads, moeRouterGrad: loops on the CPU, kernels on
// CUDA) that compute every value in the same order on both; each local expert's
// GEMMs run on the backend's matmul (Eigen on the CPU, cuBLAS on CUDA) over all
// the rows routed to it, with views of the expert weights and their
// gradients. On CUDA a call waits for the device once: one copy to the
// host of the local experts' row counts, which size the GEMMs, with the
// routing's status.
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

#include <cmath>

namespace trident::rt {
namespace {

using detail::check;

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
  // Row indices are int32 (Common/MoEExperts.h).
  check(s.n * s.k < (int64_t(1) << 31), fn,
        std::to_string(s.n) + " tokens of " + std::to_string(s.k) +
            " choices each: a call takes fewer than 2^31 choices");
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

/// What routing needs of `d` for a router of hidden size h.
moe::RouteSpec routeSpec(const MoEDims &d, int64_t h) {
  moe::RouteSpec r;
  r.h = h, r.E = d.experts, r.k = d.topK;
  r.groups = d.groups, r.topkGroups = d.topkGroups;
  r.sigmoidScores = d.sigmoidScores, r.renormalize = d.renormalize;
  r.routedScale = d.routedScale;
  return r;
}

/// What the experts' rows need of `d` and the call's shape.
moe::ExpertSpec expertSpec(const MoEDims &d, const Shape &s) {
  moe::ExpertSpec e;
  e.n = s.n, e.h = s.h, e.f = s.f, e.fin = s.fin, e.k = s.k;
  e.first = s.first, e.local = s.local;
  e.gated = d.gated, e.outBiasHere = d.outBiasHere;
  e.act = d.act, e.swigluLimit = d.swigluLimit;
  return e;
}

/// The routing of rows [begin, end) on the backend (detail::moeRoute):
/// prob [rows, E], expert and weight [rows, k], and its status, on the
/// device until checkRouted reads it.
struct RoutedTensors {
  Tensor prob, expert, weight, status;
};
RoutedTensors routeRows(const Tensor &x, const Tensor &router,
                        const MoEBiases &b, const moe::RouteSpec &s,
                        int64_t begin, int64_t end) {
  const int64_t rows = end - begin;
  RoutedTensors r{Tensor({rows, s.E}), Tensor({rows, s.k}, DType::I32),
                  Tensor({rows, s.k}), Tensor({1}, DType::I32)};
  detail::moeRoute(r.prob, r.expert, r.weight, r.status, x, router, b.router,
                   b.select, s, begin, end);
  return r;
}
/// Fails when the routing's status names a row (counted from begin) whose
/// logits were not all finite.
void checkRouted(int64_t bad, int64_t begin, const char *fn) {
  check(bad < 0, fn,
        "a router logit of token " + std::to_string(begin + bad) +
            " is not finite");
}

/// body(e, first, m) for each local expert with m > 0 rows routed to it,
/// from row `first`, in expert order.
template <typename Body>
void forEachExpert(const detail::MoeRows &rows, const Shape &s, Body body) {
  for (int64_t e = 0; e < s.local; ++e) {
    const int64_t first = rows.hostBegin[size_t(e)];
    if (int64_t m = rows.hostBegin[size_t(e + 1)] - first; m > 0)
      body(e, first, m);
  }
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

/// The routed rows through their experts' first linear: a = x wIn[e] +
/// bIn[e] (each expert's GEMM into its rows of one tensor, on the rows'
/// inputs gathered for it) and u = act(a).
struct ExpertActs {
  Tensor a, u;
};
ExpertActs expertForward(const Tensor &x, const Tensor &wIn, const Tensor &bIn,
                         const detail::MoeRows &rows, const Shape &s,
                         const moe::ExpertSpec &spec) {
  const int64_t M = rows.size();
  ExpertActs acts{Tensor({M, s.fin}), Tensor()};
  {
    Tensor xRows({M, s.h});
    detail::moeGather(xRows, x, rows.token, Tensor());
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      Tensor ae = rowsView(acts.a, first, m);
      matmul(ae, rowsView(xRows, first, m), expertIn(wIn, e, s), false);
    });
  }
  acts.u = Tensor({M, s.f});
  detail::moeHidden(acts.a, acts.u, bIn, rows, spec);
  return acts;
}

/// The routing of every row and the layout of the local experts' rows.
detail::MoeRows routeAndLayOut(const Tensor &x, const Tensor &router,
                               const MoEBiases &biases, const MoEDims &d,
                               const Shape &s, const moe::ExpertSpec &spec,
                               const char *fn) {
  RoutedTensors r = routeRows(x, router, biases, routeSpec(d, s.h), 0, s.n);
  detail::MoeRows rows =
      detail::moeExpertRows(r.expert, r.weight, r.status, spec);
  checkRouted(rows.badRow, 0, fn);
  return rows;
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
  const moe::ExpertSpec spec = expertSpec(d, s);
  const detail::MoeRows rows =
      routeAndLayOut(x, router, biases, d, s, spec, fn);
  const int64_t M = rows.size();
  Tensor o({0, s.h});
  if (M > 0) {
    ExpertActs acts = expertForward(x, wIn, biases.in, rows, s, spec);
    acts.a = Tensor();
    o = Tensor({M, s.h});
    // o = u wOut[e]; y[t] = sum over t's rows of g (o + bOut[e]).
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      Tensor oe = rowsView(o, first, m);
      matmul(oe, rowsView(acts.u, first, m), expertOut(wOut, e, s), false);
    });
  }
  detail::moeCombine(y, o, true, d.outBiasHere ? biases.out : Tensor(), rows,
                     spec);
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
  const moe::ExpertSpec spec = expertSpec(d, s);
  const detail::MoeRows rows =
      routeAndLayOut(x, router, biases, d, s, spec, fn);
  const int64_t M = rows.size();
  // The forward again: a = x wIn[e] + bIn[e], u = act(a); the input rows
  // are gathered again for dwIn below rather than kept.
  ExpertActs acts = expertForward(x, wIn, biases.in, rows, s, spec);
  // o = u wOut[e] (+ bOut[e]); y[t] += g o. With dy_q the row's output
  // gradient: back = dy_q wOut[e]^T, dg = u . back (+ bOut[e] . dy_q
  // where this rank adds the bias), du = g back, dwOut[e] += u^T (g dy),
  // dbOut[e] += g dy. The weight gradients are linearBackward's dW +=
  // dy^T x, with u as its dy and g dy as its x (and below x as dy, da as
  // x). Each tensor is freed once no phase needs it, before the next
  // phase allocates.
  Tensor noDx, noDb, back({M, s.f});
  {
    Tensor dyRows({M, s.h});
    detail::moeGather(dyRows, dy, rows.token, Tensor());
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      Tensor be = rowsView(back, first, m);
      matmul(be, rowsView(dyRows, first, m), expertOut(wOut, e, s), true);
    });
    detail::moeGateGrads(dgate, dbiases.out, acts.u, back, dyRows, biases.out,
                         rows, spec);
  }
  {
    Tensor gdy({M, s.h});
    detail::moeGather(gdy, dy, rows.token, rows.weight);
    forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
      Tensor dwo = expertOut(dwOut, e, s);
      linearBackward(noDx, dwo, noDb, rowsView(acts.u, first, m),
                     rowsView(gdy, first, m), expertOut(wOut, e, s));
    });
  }
  acts.u = Tensor();
  // da over a, in place (each element pair is read, then written).
  Tensor dA = acts.a;
  detail::moeHiddenGrads(dA, dbiases.in, acts.a, back, rows, spec);
  acts.a = Tensor(), back = Tensor();
  // a = x wIn[e] + bIn[e]: dwIn[e] += x^T da, dx += da wIn[e]^T.
  Tensor xRows({M, s.h}), dxRows({M, s.h});
  detail::moeGather(xRows, x, rows.token, Tensor());
  forEachExpert(rows, s, [&](int64_t e, int64_t first, int64_t m) {
    Tensor dwi = expertIn(dwIn, e, s), dae = rowsView(dA, first, m);
    linearBackward(noDx, dwi, noDb, rowsView(xRows, first, m), dae,
                   expertIn(wIn, e, s));
    Tensor dxq = rowsView(dxRows, first, m);
    matmul(dxq, dae, expertIn(wIn, e, s), true);
  });
  detail::moeCombine(dx, dxRows, false, Tensor(), rows, spec);
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
  const moe::RouteSpec spec = routeSpec(d, s.h);
  RoutedTensors r =
      routeRows(x, router, biases, spec, rowOffset, rowOffset + rows);
  checkRouted(r.status.toHostI32()[0], rowOffset, fn);
  if (selectLoad)
    detail::moeExpertLoad(*selectLoad, r.expert);
  detail::moeRouterGrad(dx, drouter, dRouterBias, dgate, x, router, r.prob,
                        r.expert, r.weight, spec, rowOffset, rowOffset + rows);
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
