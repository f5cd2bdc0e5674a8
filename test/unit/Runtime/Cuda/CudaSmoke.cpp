//===- CudaSmoke.cpp - Link check and GPU smoke test of the CUDA runtime --===//
//
// `--link-only`: prints the linked backend without touching a GPU (ctest
// on machines without one). Without arguments (scripts/gpu-check.sh, on a
// GPU): runs a few kernels and compares them with host formulas (the
// reductions over rows with more rows than one block of them takes,
// attention with grouped kv heads at a context-parallel offset, DLRM's
// bag pooling, dot interaction and binary cross-entropy, a mixture of
// experts whose GEMMs run on views of the expert weights, bf16 rounding,
// GEMMs on bf16 copies of their operands, and a copy between overlapping
// views).
//
//===----------------------------------------------------------------------===//

#include "trident/Runtime/Runtime.h"

#include "../../../../lib/Runtime/Common/Bf16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace trident::rt;

namespace {
int bad = 0;

/// Counts a mismatch (and names it) when got and want differ by more than
/// rtol times `scale` (the sum of the terms' magnitudes, or 1).
/// |got - want| <= bound.
void expectWithin(const char *what, int64_t index, double got, double want,
                  double bound) {
  if (std::fabs(got - want) <= bound)
    return;
  if (bad < 20)
    std::printf("%s smoke: %s[%lld] = %.9g, want %.9g\n", backendName(),
                what, static_cast<long long>(index), got, want);
  ++bad;
}

void expectNear(const char *what, int64_t index, double got, double want,
                double scale, double rtol = 1e-6) {
  expectWithin(what, index, got, want, rtol * (1.0 + scale));
}

/// Uniform values in [-scale, scale) for a 2-D tensor.
/// Counts every element where two tensors' values differ in their bits
/// (a NaN equal to a NaN).
void expectSame(const char *what, const Tensor &got, const Tensor &want) {
  const std::vector<float> g = got.toHost(), w = want.toHost();
  for (size_t e = 0; e < g.size() && e < w.size(); ++e)
    if (!(g[e] == w[e] || (std::isnan(g[e]) && std::isnan(w[e])))) {
      if (bad < 20)
        std::printf("%s smoke: %s[%zu] = %.9g, want %.9g\n", backendName(),
                    what, e, double(g[e]), double(w[e]));
      ++bad;
    }
  if (g.size() != w.size()) {
    std::printf("%s smoke: %s: %zu elements, want %zu\n", backendName(), what,
                g.size(), w.size());
    ++bad;
  }
}

Tensor filled(const char *name, int64_t rows, int64_t cols,
              float scale = 1.0f) {
  Tensor t({rows, cols});
  initParam(t, name, {rows, cols}, {0, 0}, {rows, cols}, 7, scale);
  return t;
}

/// Column sums over more rows than the two-pass reduction's kMaxColParts
/// (64) row blocks of at least 256 rows take (20,001 rows: 64 blocks of
/// 313, the last one shorter) and over columns that are not a multiple of
/// its kColTile (32) columns (lib/Runtime/Cuda/CudaKernels.cu; change n
/// and h with them), against host sums in double: a linear's weight and
/// bias gradients, LayerNorm's weight and bias and RMSNorm's weight
/// gradients (each accumulated onto a non-zero starting value), and the
/// cross-entropy's loss over rows.
void checkReductions() {
  const int64_t n = 20001, h = 70, in = 5;
  // Linear: db += column sums of dy, dW += dy^T x.
  Tensor dy = filled("dy", n, h), x = filled("x", n, in), w = filled("w", h, in);
  Tensor dx({n, in}), dw({h, in}), db({h});
  fillConstant(db, 1.0f);
  fillConstant(dw, 0.25f);
  linearBackward(dx, dw, db, dy, x, w);
  std::vector<float> DY = dy.toHost(), X = x.toHost(), DB = db.toHost(),
                     DW = dw.toHost();
  for (int64_t j = 0; j < h; ++j) {
    double s = 1.0, mag = 1.0;
    for (int64_t i = 0; i < n; ++i)
      s += DY[i * h + j], mag += std::fabs(DY[i * h + j]);
    expectNear("linearBackward db", j, DB[j], s, mag);
    for (int64_t k = 0; k < in; ++k) {
      double d = 0.25, dm = 1.0;
      for (int64_t i = 0; i < n; ++i) {
        d += double(DY[i * h + j]) * X[i * in + k];
        dm += std::fabs(double(DY[i * h + j]) * X[i * in + k]);
      }
      expectNear("linearBackward dw", j * in + k, DW[j * in + k], d, dm);
    }
  }
  // LayerNorm and RMSNorm weight gradients: sum_i dy * xhat (+ 0.5).
  Tensor xs = filled("xs", n, h), g = filled("g", 1, h).reshape({h});
  Tensor beta = filled("beta", 1, h).reshape({h});
  const float eps = 1e-5f;
  std::vector<float> XS = xs.toHost();
  for (bool rms : {false, true}) {
    Tensor y({n, h}), mean({n}), rstd({n}), dxs({n, h}), dg({h}), dbeta({h});
    fillConstant(dg, 0.5f);
    fillConstant(dbeta, 0.75f);
    if (rms) {
      rmsNormForward(y, rstd, xs, g, eps);
      rmsNormBackward(dxs, dg, dy, xs, g, rstd);
    } else {
      layerNormForward(y, mean, rstd, xs, g, beta, eps);
      layerNormBackward(dxs, dg, dbeta, dy, xs, g, mean, rstd);
    }
    std::vector<float> DG = dg.toHost(), DBETA = dbeta.toHost();
    std::vector<double> sg(h, 0.5), sb(h, 0.75), mg(h, 1.0), mb(h, 1.0);
    for (int64_t i = 0; i < n; ++i) {
      double m = 0.0, q = 0.0;
      for (int64_t j = 0; j < h; ++j)
        m += XS[i * h + j];
      m = rms ? 0.0 : m / h;
      for (int64_t j = 0; j < h; ++j)
        q += (XS[i * h + j] - m) * (XS[i * h + j] - m);
      double r = 1.0 / std::sqrt(q / h + eps);
      for (int64_t j = 0; j < h; ++j) {
        double t = DY[i * h + j] * (XS[i * h + j] - m) * r;
        sg[j] += t, mg[j] += std::fabs(t);
        sb[j] += DY[i * h + j], mb[j] += std::fabs(DY[i * h + j]);
      }
    }
    for (int64_t j = 0; j < h; ++j) {
      expectNear(rms ? "rmsNormBackward dgamma" : "layerNormBackward dgamma",
                 j, DG[j], sg[j], mg[j]);
      if (!rms)
        expectNear("layerNormBackward dbeta", j, DBETA[j], sb[j], mb[j]);
    }
    // In place (dx aliasing dy): the same dx and weight gradients, to the
    // bit (the weight gradients read dy before dx overwrites it).
    Tensor io({n, h}), dg2({h}), dbeta2({h});
    copy(io, dy);
    fillConstant(dg2, 0.5f);
    fillConstant(dbeta2, 0.75f);
    if (rms)
      rmsNormBackward(io, dg2, io, xs, g, rstd);
    else
      layerNormBackward(io, dg2, dbeta2, io, xs, g, mean, rstd);
    const char *inPlace =
        rms ? "rmsNormBackward in place" : "layerNormBackward in place";
    std::vector<float> IO = io.toHost(), DXS = dxs.toHost(),
                       DG2 = dg2.toHost(), DBETA2 = dbeta2.toHost();
    for (int64_t e = 0; e < n * h; ++e)
      expectNear(inPlace, e, IO[size_t(e)], DXS[size_t(e)], 0.0, 0.0);
    for (int64_t j = 0; j < h; ++j) {
      expectNear(inPlace, j, DG2[size_t(j)], DG[size_t(j)], 0.0, 0.0);
      if (!rms)
        expectNear(inPlace, j, DBETA2[size_t(j)], DBETA[size_t(j)], 0.0, 0.0);
    }
  }
  // Cross-entropy: the loss sums lse - logit[target] over the rows.
  const int64_t V = 50;
  Tensor logits = filled("logits", n, V, 3.0f), lse({n}), loss({1});
  Tensor tgt({n}, DType::I32);
  std::vector<int32_t> T(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    T[size_t(i)] = int32_t((i * 7) % V);
  tgt.fromHostI32(T);
  crossEntropyForward(loss, lse, logits, tgt);
  std::vector<float> L = logits.toHost(), LSE = lse.toHost();
  double total = 0.0, mag = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double mx = L[i * V];
    for (int64_t j = 1; j < V; ++j)
      mx = std::max(mx, double(L[i * V + j]));
    double z = 0.0;
    for (int64_t j = 0; j < V; ++j)
      z += std::exp(L[i * V + j] - mx);
    double l = mx + std::log(z);
    expectNear("crossEntropyForward lse", i, LSE[i], l, std::fabs(l));
    total += l - L[i * V + T[size_t(i)]];
    mag += std::fabs(l - L[i * V + T[size_t(i)]]);
  }
  // Summed in double, rounded once to float (ulp 0.0078 at 80,000).
  expectNear("crossEntropyForward loss", 0, loss.toHost()[0], total, mag,
             2e-7);
}
/// Causal attention with grouped keys and values (4 query heads on 2
/// kv heads), value heads narrower than query heads, and queries placed at
/// positions 2.. of 7 keys (a context-parallel chunk), forward and
/// backward, against the softmax and its gradient written out in double.
///
/// With `bf16` (under rt::setBf16Gemms) q, k, v and dout are bf16 values
/// and the probabilities enter the products with the values rounded to
/// bf16: the output and dv are held to the products of the rounded
/// probabilities as tightly as in fp32 (unrounded ones miss by about 1e-3),
/// dq and dk (whose score gradients the backend rounds too) to 1e-2.
///
/// With `lse` the forward saves its rows' log-sum-exp [b, heads, s] in
/// place of the probabilities, held to max + log(sum) in double, and the
/// backward computes the probabilities again from it.
void checkAttention(bool bf16 = false, bool lse = false) {
  AttentionDims d;
  d.batch = 2;
  d.seq = 5;
  d.heads = 4;
  d.kvHeads = 2;
  d.headDim = 3;
  d.vHeadDim = 2;
  d.kvSeq = 7;
  d.qOffset = 2;
  const int64_t B = d.batch, S = d.seq, T = d.keys(), H = d.heads,
                hd = d.headDim, vd = d.valueDim(), group = H / d.kvHeads;
  const int64_t qs = H * hd, ks = d.kvHeads * hd, vs = d.kvHeads * vd,
                os = H * vd;
  Tensor q = filled("aq", B * S, qs), k = filled("ak", B * T, ks);
  Tensor v = filled("av", B * T, vs), dout = filled("ado", B * S, os);
  if (bf16)
    for (Tensor *t : {&q, &k, &v, &dout})
      roundToBf16(*t);
  Tensor out({B * S, os});
  Tensor probs = lse ? Tensor({B, H, S}) : Tensor({B, H, S, T});
  attentionForward(out, probs, q, k, v, d);
  Tensor dq({B * S, qs}), dk({B * T, ks}), dv({B * T, vs});
  attentionBackward(dq, dk, dv, dout, q, k, v, probs, d);
  std::vector<float> Q = q.toHost(), K = k.toHost(), V = v.toHost(),
                     DO = dout.toHost(), O = out.toHost(), P = probs.toHost(),
                     DQ = dq.toHost(), DK = dk.toHost(), DV = dv.toHost();
  const double sc = 1.0 / std::sqrt(double(hd));
  std::vector<double> dQ(Q.size(), 0.0), dK(K.size(), 0.0), dV(V.size(), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / group;
      std::vector<double> p(size_t(S * T), 0.0), dp(size_t(S * T), 0.0);
      for (int64_t i = 0; i < S; ++i) {
        double mx = -1e300, z = 0.0;
        std::vector<double> sco(size_t(T), 0.0);
        for (int64_t j = 0; j <= d.qOffset + i; ++j) {
          for (int64_t e = 0; e < hd; ++e)
            sco[size_t(j)] += Q[(b * S + i) * qs + h * hd + e] *
                              double(K[(b * T + j) * ks + g * hd + e]);
          sco[size_t(j)] *= sc;
          mx = std::max(mx, sco[size_t(j)]);
        }
        for (int64_t j = 0; j <= d.qOffset + i; ++j)
          z += std::exp(sco[size_t(j)] - mx);
        for (int64_t j = 0; j <= d.qOffset + i; ++j)
          p[size_t(i * T + j)] = std::exp(sco[size_t(j)] - mx) / z;
        if (lse)
          expectNear("attentionForward lse", (b * H + h) * S + i,
                     P[size_t((b * H + h) * S + i)], mx + std::log(z),
                     std::fabs(mx));
        else
          for (int64_t j = 0; j < T; ++j)
            expectNear("attentionForward probs", ((b * H + h) * S + i) * T + j,
                       P[size_t(((b * H + h) * S + i) * T + j)],
                       p[size_t(i * T + j)], 1.0);
        // The probabilities the values are weighted with: the backend's
        // own, rounded, under bf16 GEMMs.
        std::vector<double> pv(p);
        if (bf16)
          for (int64_t j = 0; j < T; ++j)
            pv[size_t(i * T + j)] = trident::rt::detail::roundToBf16(
                P[size_t(((b * H + h) * S + i) * T + j)]);
        for (int64_t e = 0; e < vd; ++e) {
          double o = 0.0;
          for (int64_t j = 0; j < T; ++j)
            o += pv[size_t(i * T + j)] * V[(b * T + j) * vs + g * vd + e];
          expectNear("attentionForward out", (b * S + i) * os + h * vd + e,
                     O[(b * S + i) * os + h * vd + e], o, 1.0);
        }
        // dV += P^T dO; dP = dO V^T; dS = P (dP - sum_j P dP).
        double dot = 0.0;
        for (int64_t j = 0; j < T; ++j) {
          for (int64_t e = 0; e < vd; ++e) {
            dV[(b * T + j) * vs + g * vd + e] +=
                pv[size_t(i * T + j)] * DO[(b * S + i) * os + h * vd + e];
            dp[size_t(i * T + j)] += DO[(b * S + i) * os + h * vd + e] *
                                     double(V[(b * T + j) * vs + g * vd + e]);
          }
          dot += p[size_t(i * T + j)] * dp[size_t(i * T + j)];
        }
        for (int64_t j = 0; j < T; ++j) {
          double ds = p[size_t(i * T + j)] * (dp[size_t(i * T + j)] - dot) * sc;
          for (int64_t e = 0; e < hd; ++e) {
            dQ[(b * S + i) * qs + h * hd + e] +=
                ds * K[(b * T + j) * ks + g * hd + e];
            dK[(b * T + j) * ks + g * hd + e] +=
                ds * Q[(b * S + i) * qs + h * hd + e];
          }
        }
      }
    }
  const double rtolQK = bf16 ? 1e-2 : 1e-6;
  for (size_t i = 0; i < dQ.size(); ++i)
    expectNear("attentionBackward dq", int64_t(i), DQ[i], dQ[i], 1.0, rtolQK);
  for (size_t i = 0; i < dK.size(); ++i)
    expectNear("attentionBackward dk", int64_t(i), DK[i], dK[i], 1.0, rtolQK);
  for (size_t i = 0; i < dV.size(); ++i)
    expectNear("attentionBackward dv", int64_t(i), DV[i], dV[i], 1.0);
}

/// DLRM's kernels: bag pooling (sum and mean) and its backward, the dot
/// interaction of 6 features and its backward, and the sigmoid binary
/// cross-entropy over 20,001 logits up to +-40 (where a naive
/// log(1 + exp(-z)) overflows), against host formulas in double.
void checkRecommender() {
  const int64_t n = 301, bag = 3, d = 40, F = 6;
  Tensor rows = filled("rows", n * bag, d), dpool = filled("dpool", n, d);
  std::vector<float> R = rows.toHost(), DP = dpool.toHost();
  for (bool mean : {false, true}) {
    Tensor pooled({n, d}), drows({n * bag, d});
    bagPoolForward(pooled, rows, bag, mean);
    bagPoolBackward(drows, dpool, bag, mean);
    std::vector<float> P = pooled.toHost(), DR = drows.toHost();
    const double s = mean ? 1.0 / bag : 1.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < d; ++c) {
        double want = 0.0, mag = 0.0;
        for (int64_t j = 0; j < bag; ++j) {
          want += R[(i * bag + j) * d + c] * s;
          mag += std::fabs(R[(i * bag + j) * d + c]);
          expectNear("bagPoolBackward", (i * bag + j) * d + c,
                     DR[(i * bag + j) * d + c], DP[i * d + c] * s, 1.0);
        }
        expectNear("bagPoolForward", i * d + c, P[i * d + c], want, mag);
      }
  }
  std::vector<Tensor> feats, dfeats;
  std::vector<std::vector<float>> FH;
  for (int64_t a = 0; a < F; ++a) {
    std::string name = "feature" + std::to_string(a);
    feats.push_back(filled(name.c_str(), n, d));
    dfeats.push_back(Tensor({n, d}));
    FH.push_back(feats.back().toHost());
  }
  const int64_t w = d + F * (F - 1) / 2;
  Tensor inter({n, w}), dinter = filled("dinter", n, w);
  dotInteractionForward(inter, feats);
  dotInteractionBackward(dfeats, dinter, feats);
  std::vector<float> I = inter.toHost(), DI = dinter.toHost();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < d; ++c)
      expectNear("dotInteractionForward", i * w + c, I[i * w + c],
                 FH[0][i * d + c], 1.0);
    int64_t col = d;
    for (int64_t a = 1; a < F; ++a)
      for (int64_t b = 0; b < a; ++b, ++col) {
        double dot = 0.0, mag = 0.0;
        for (int64_t c = 0; c < d; ++c) {
          dot += double(FH[a][i * d + c]) * FH[b][i * d + c];
          mag += std::fabs(double(FH[a][i * d + c]) * FH[b][i * d + c]);
        }
        expectNear("dotInteractionForward", i * w + col, I[i * w + col], dot,
                   mag);
      }
  }
  for (int64_t a = 0; a < F; ++a) {
    std::vector<float> G = dfeats[size_t(a)].toHost();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < d; ++c) {
        double want = a == 0 ? DI[i * w + c] : 0.0, mag = std::fabs(want);
        for (int64_t b = 0; b < F; ++b) {
          if (b == a)
            continue;
          int64_t hi = std::max(a, b), lo = std::min(a, b);
          double t = double(DI[i * w + d + hi * (hi - 1) / 2 + lo]) *
                     FH[b][i * d + c];
          want += t, mag += std::fabs(t);
        }
        expectNear("dotInteractionBackward", i * d + c, G[i * d + c], want,
                   mag);
      }
  }
  const int64_t m = 20001;
  Tensor z = filled("z", m, 1, 40.0f), loss({1}), dz({m, 1});
  Tensor y({m}, DType::I32);
  std::vector<int32_t> Y(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i)
    Y[size_t(i)] = int32_t((i * 5 / 3) % 2);
  y.fromHostI32(Y);
  fillConstant(loss, 1.5f);
  binaryCrossEntropyForward(loss, z, y);
  binaryCrossEntropyBackward(dz, z, y, 0.5f);
  std::vector<float> Z = z.toHost(), DZ = dz.toHost();
  double total = 1.5, mag = 1.5;
  for (int64_t i = 0; i < m; ++i) {
    double zi = Z[i], p = 1.0 / (1.0 + std::exp(-zi));
    // -log p = softplus(-z) for a click, -log(1 - p) = softplus(z) else.
    auto softplus = [](double x) {
      return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    };
    double l = Y[size_t(i)] ? softplus(-zi) : softplus(zi);
    total += l, mag += std::fabs(l);
    expectNear("binaryCrossEntropyBackward", i, DZ[i],
               0.5 * (p - Y[size_t(i)]), 1.0);
  }
  expectNear("binaryCrossEntropyForward", 0, loss.toHost()[0], total, mag,
             2e-7);
}
/// A mixture of experts as an expert-parallel rank holds it: experts 2..5
/// of 6, Mixtral's routing (softmax, top 2, renormalised), gated SiLU.
/// Its GEMMs run on views of wIn / wOut at each expert's offset
/// (lib/Runtime/Common/MoE.cpp); y, dx, dwIn and dwOut against host
/// formulas in double. The routing, the rows' gather, activations and
/// sums run on the backend: each call copies less than one float per
/// token between host and tensors (on CUDA only the local experts' row
/// counts and the routing's status, in one copy). With 37
/// tokens, and with 700, whose 1,400 choices the CUDA backend counts and
/// lays out in two chunks (Common/MoEExperts.h, kChoiceChunk).
void checkExperts(int64_t n) {
  const int64_t h = 12, f = 7, fin = 2 * f, E = 6, first = 2, local = 4, k = 2;
  MoEDims d;
  d.experts = E, d.topK = k, d.gated = true, d.expertOffset = first;
  Tensor x = filled("moe.x", n, h), r = filled("moe.router", h, E, 2.0f),
         dy = filled("moe.dy", n, h);
  Tensor wIn({local, h, fin}), wOut({local, f, h});
  initParam(wIn, "moe.wIn", {local, h, fin}, {0, 0, 0}, {local, h, fin}, 7,
            1.0f);
  initParam(wOut, "moe.wOut", {local, f, h}, {0, 0, 0}, {local, f, h}, 7,
            1.0f);
  Tensor y({n, h}), dx({n, h}), dwIn({local, h, fin}), dwOut({local, f, h}),
      dgate({n, k});
  std::string staged;
  for (const char *call : {"moeForward", "moeBackward"}) {
    const int64_t before = hostCopyBytes();
    if (call[3] == 'F')
      moeForward(y, x, r, wIn, wOut, d);
    else
      moeBackward(dx, dwIn, dwOut, dgate, dy, x, r, wIn, wOut, d);
    const int64_t copied = hostCopyBytes() - before;
    staged += std::string(staged.empty() ? "" : ", ") + call + " " +
              std::to_string(copied);
    if (copied >= n * int64_t(sizeof(float))) {
      std::printf("%s smoke: %s copied %lld bytes through the host\n",
                  backendName(), call, static_cast<long long>(copied));
      ++bad;
    }
  }
  std::printf("%s smoke: mixture of experts, %lld tokens, bytes copied "
              "through the host: %s\n",
              backendName(), static_cast<long long>(n), staged.c_str());
  const std::vector<float> X = x.toHost(), R = r.toHost(), DY = dy.toHost(),
                           Wi = wIn.toHost(), Wo = wOut.toHost();
  std::vector<double> Y(static_cast<size_t>(n * h)),
      DX(static_cast<size_t>(n * h)), DWi(Wi.size()), DWo(Wo.size());
  for (int64_t t = 0; t < n; ++t) {
    std::vector<double> p(static_cast<size_t>(E));
    double mx = -INFINITY, z = 0.0;
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t i = 0; i < h; ++i)
        p[size_t(e)] += double(X[size_t(t * h + i)]) * R[size_t(i * E + e)];
      mx = std::max(mx, p[size_t(e)]);
    }
    for (double &v : p)
      z += (v = std::exp(v - mx));
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e)
      order[size_t(e)] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return p[size_t(a)] > p[size_t(b)];
    });
    double chosen = p[size_t(order[0])] + p[size_t(order[1])];
    for (int64_t j = 0; j < k; ++j) {
      int64_t e = order[size_t(j)] - first;
      if (e < 0 || e >= local)
        continue; // another rank's expert
      double g = p[size_t(order[size_t(j)])] / chosen;
      const float *wi = &Wi[size_t(e * h * fin)], *wo = &Wo[size_t(e * f * h)];
      std::vector<double> a(static_cast<size_t>(fin)),
          u(static_cast<size_t>(f)), back(static_cast<size_t>(f));
      for (int64_t c = 0; c < fin; ++c)
        for (int64_t i = 0; i < h; ++i)
          a[size_t(c)] += double(X[size_t(t * h + i)]) * wi[i * fin + c];
      for (int64_t m = 0; m < f; ++m) {
        double s = 1.0 / (1.0 + std::exp(-a[size_t(m)]));
        u[size_t(m)] = a[size_t(m)] * s * a[size_t(f + m)];
        for (int64_t i = 0; i < h; ++i) {
          Y[size_t(t * h + i)] += g * u[size_t(m)] * wo[m * h + i];
          back[size_t(m)] += double(wo[m * h + i]) * DY[size_t(t * h + i)];
          DWo[size_t(e * f * h + m * h + i)] +=
              g * u[size_t(m)] * DY[size_t(t * h + i)];
        }
        // da for the gate (SiLU' times up) and the up half (SiLU).
        double du = g * back[size_t(m)], gate = a[size_t(m)];
        double daGate = du * a[size_t(f + m)] * s * (1.0 + gate * (1.0 - s));
        double daUp = du * gate * s;
        for (int64_t i = 0; i < h; ++i) {
          double xi = X[size_t(t * h + i)];
          DWi[size_t(e * h * fin + i * fin + m)] += xi * daGate;
          DWi[size_t(e * h * fin + i * fin + f + m)] += xi * daUp;
          DX[size_t(t * h + i)] +=
              daGate * wi[i * fin + m] + daUp * wi[i * fin + f + m];
        }
      }
    }
  }
  auto compare = [](const char *what, const std::vector<float> &got,
                    const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); ++i)
      expectNear(what, int64_t(i), got[i], want[i], std::fabs(want[i]), 1e-4);
  };
  compare("moeForward y", y.toHost(), Y);
  compare("moeBackward dx", dx.toHost(), DX);
  compare("moeBackward dwIn", dwIn.toHost(), DWi);
  compare("moeBackward dwOut", dwOut.toHost(), DWo);
  // A token whose router logits are not finite is named, by the forward
  // (its status read with the row counts) and by the router's backward
  // (its status read alone).
  std::vector<float> infinite = X;
  infinite[size_t(5 * h + 3)] = INFINITY;
  x.fromHost(infinite);
  Tensor drouter({h, E});
  for (int call = 0; call < 2; ++call) {
    std::string message;
    try {
      if (call == 0)
        moeForward(y, x, r, wIn, wOut, d);
      else
        moeRouterBackward(dx, drouter, dgate, x, r, d);
    } catch (const Error &e) {
      message = e.what();
    }
    if (message.find("router logit of token 5 is not finite") ==
        std::string::npos) {
      std::printf("%s smoke: %s with an infinite input said '%s'\n",
                  backendName(), call ? "moeRouterBackward" : "moeForward",
                  message.c_str());
      ++bad;
    }
  }
}
/// Every collective on a group of one leaves the data as it is. On CUDA
/// under TRIDENT_CUDA_NCCL_SELF=1 the group has a one-rank NCCL
/// communicator, so this runs NCCL's all-reduce (sum, max), all-gather,
/// reduce-scatter, send/receive (all-to-all), broadcast and the
/// asynchronous forms with their events on a machine with one GPU.
// roundToBf16 against bit-level facts of the format: 8 significant bits,
// ties to even, infinities and NaN kept, overflow to infinity; bf16Copy
// leaves its source alone.
void checkBf16() {
  const float inf = std::numeric_limits<float>::infinity();
  const float u = std::ldexp(1.0f, -8); // half a bf16 ulp at 1
  const std::vector<float> in = {
      1.0f,    1.0f + u, 1.0f + 3 * u, 1.0f + u + u / 64,     -(1.0f + 3 * u),
      3.4e38f, -inf,     0.1f,         std::ldexp(1.0f, -130)};
  const std::vector<float> want = {
      1.0f, 1.0f, 1.0f + 4 * u, 1.0f + 2 * u, -(1.0f + 4 * u), inf, -inf,
      // 0.1 = 0x3dcccccd -> 0x3dcd0000; a subnormal keeps its top bits.
      0.10009765625f, std::ldexp(1.0f, -130)};
  Tensor t({int64_t(in.size())}), nan({1});
  t.fromHost(in);
  nan.fromHost({std::numeric_limits<float>::quiet_NaN()});
  Tensor c = bf16Copy(t);
  roundToBf16(nan);
  std::vector<float> got = c.toHost(), kept = t.toHost();
  // Exact equality (infinities included).
  for (size_t i = 0; i < in.size(); ++i)
    for (auto [what, g, w] : {std::tuple{"roundToBf16", got[i], want[i]},
                              std::tuple{"bf16Copy source", kept[i], in[i]}})
      if (g != w) {
        std::printf("%s smoke: %s[%zu] = %.9g, want %.9g\n", backendName(),
                    what, i, double(g), double(w));
        ++bad;
      }
  if (!std::isnan(nan.toHost()[0])) {
    std::printf("roundToBf16: NaN did not stay NaN\n");
    ++bad;
  }
}

// rt::setBf16Gemms: a linear's operands (not bf16 values) rounded to bf16,
// the products summed in fp32 (against the rounded operands' products in
// double: unrounded ones miss by about 2^-9 of each term). Under
// Bf16Gemms::All every product, attention's batched ones too; under Large
// a 1200 x 16 by 16 x 1200 product (200 FLOPs per copied byte: 2 m n k
// over 6 (m k + k n)) but not a 33 x 70 by 70 x 17 one (3.7), which stays
// fp32 (TF32 is off here), as it does under Off. Where the backend has no
// bf16 GEMMs (CPU) it says so and checks that nothing changed.
void checkLinear(const char *what, int64_t n, int64_t in, int64_t out,
                 bool rounded) {
  Tensor x = filled("gx", n, in), w = filled("gw", out, in), y({n, out});
  Tensor b({out});
  initParam(b, "gb", {out}, {0}, {out}, 7, 1.0f);
  const std::vector<float> X = x.toHost(), W = w.toHost(), B = b.toHost();
  linearForward(y, x, w, b);
  const std::vector<float> Y = y.toHost();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < out; ++o) {
      double sum = B[size_t(o)], scale = std::fabs(B[size_t(o)]);
      for (int64_t e = 0; e < in; ++e) {
        float xv = X[size_t(i * in + e)], wv = W[size_t(o * in + e)];
        if (rounded) {
          xv = trident::rt::detail::roundToBf16(xv);
          wv = trident::rt::detail::roundToBf16(wv);
        }
        sum += double(xv) * wv;
        scale += std::fabs(double(xv) * wv);
      }
      expectNear(what, i * out + o, Y[size_t(i * out + o)], sum, scale, 1e-5);
    }
}

/// Attention that keeps the log-sum-exp under a bf16 GEMM mode and
/// rt::setFusedAttention: on the CUDA backend the fused forward
/// (kFlashForward: tensor-core tiles, the online softmax, no scores in
/// device memory), elsewhere the unfused one.
/// Its output and log-sum-exp against softmax attention in double on the
/// bf16-rounded q, k, v: the fused kernel rounds the probabilities to
/// bf16 before multiplying them with the values, so the output is held to
/// 2^-8 of the values' magnitude; the log-sum-exp (fp32 scores) to 1e-5.
/// Two row blocks (the second partial) over keys at an offset of 8 (a
/// context-parallel chunk), grouped kv heads; causal, with a window of 12,
/// with sinks, and bidirectional; head sizes 16 and 64, and causal at 128.
/// On the CUDA backend no tensor of the scores' size may be allocated.
/// Then the backward given the forward's output (on the CUDA backend the
/// fused one: kFlashBwdKeys, kFlashBwdQueries) against the same attention
/// in double: dq, dk, dv and the sinks' gradient within 2^-7 of their
/// terms' magnitudes. The fused kernels round P and dS to bf16 (2^-9
/// each) and take each row's sum_j p_j dp_j as dO . O from the forward's
/// bf16-product output, so the magnitude of a term p_j (dp_j - delta)
/// counts |dp_j|, |delta| and dO's products with the output's magnitude.
/// On the CUDA backend the backward may allocate only the rows' deltas
/// (and with sinks their sink terms): [batch, heads, seq] each.
void checkFlashAttention() {
  const bool on = setBf16Gemms(Bf16Gemms::Large) && setFusedAttention(true);
  struct Case {
    const char *name;
    int64_t headDim, window;
    bool sinks, causal;
  };
  for (const Case &c :
       {Case{"causal", 16, 0, false, true}, Case{"window", 64, 12, false, true},
        Case{"sinks", 16, 0, true, true},
        Case{"bidirectional", 64, 0, false, false},
        Case{"causal, head size 128", 128, 0, false, true}}) {
    AttentionDims d;
    d.batch = 2, d.seq = 40, d.heads = 4, d.kvHeads = 2;
    d.headDim = c.headDim, d.kvSeq = 48, d.qOffset = 8;
    d.window = c.window, d.causal = c.causal;
    const int64_t B = 2, S = 40, T = 48, H = 4, hd = c.headDim, group = 2;
    const int64_t qs = H * hd, ks = 2 * hd;
    Tensor q = filled("fq", B * S, qs, 1.5f), k = filled("fk", B * T, ks, 1.5f);
    Tensor v = filled("fv", B * T, ks);
    for (Tensor *t : {&q, &k, &v})
      roundToBf16(*t);
    Tensor sinks;
    if (c.sinks) {
      sinks = Tensor({H});
      sinks.fromHost({0.7f, -0.4f, 2.5f, 0.0f});
    }
    Tensor out({B * S, qs}), lse({B, H, S});
    resetPeakTensorBytes();
    const int64_t before = peakTensorBytes();
    attentionForward(out, lse, q, k, v, sinks, d);
    synchronize();
    const int64_t extra = peakTensorBytes() - before;
    if (on && extra != 0) {
      std::printf("%s smoke: fused attention (%s) allocated %lld bytes\n",
                  backendName(), c.name, static_cast<long long>(extra));
      ++bad;
    }
    std::vector<float> Q = q.toHost(), K = k.toHost(), V = v.toHost(),
                       O = out.toHost(), L = lse.toHost();
    std::vector<float> SK = c.sinks ? sinks.toHost() : std::vector<float>();
    const double sc = 1.0 / std::sqrt(double(hd));
    std::string what = std::string("attention (") + c.name + ")";
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i) {
          const int64_t g = h / group;
          const int64_t last = c.causal ? d.qOffset + i : T - 1;
          const int64_t first =
              c.window > 0 ? std::max<int64_t>(0, last - c.window + 1) : 0;
          std::vector<double> sco(size_t(T), 0.0);
          double mx = c.sinks ? SK[size_t(h)] : -1e300;
          for (int64_t j = first; j <= last; ++j) {
            for (int64_t e = 0; e < hd; ++e)
              sco[size_t(j)] +=
                  double(Q[size_t((b * S + i) * qs + h * hd + e)]) *
                  K[size_t((b * T + j) * ks + g * hd + e)];
            sco[size_t(j)] *= sc;
            mx = std::max(mx, sco[size_t(j)]);
          }
          double z = c.sinks ? std::exp(SK[size_t(h)] - mx) : 0.0;
          for (int64_t j = first; j <= last; ++j)
            z += std::exp(sco[size_t(j)] - mx);
          expectNear((what + " lse").c_str(), (b * H + h) * S + i,
                     L[size_t((b * H + h) * S + i)], mx + std::log(z),
                     std::fabs(mx), 1e-5);
          for (int64_t e = 0; e < hd; ++e) {
            double o = 0.0, mag = 0.0;
            for (int64_t j = first; j <= last; ++j) {
              const double p = std::exp(sco[size_t(j)] - mx) / z;
              const double x = V[size_t((b * T + j) * ks + g * hd + e)];
              o += p * x;
              mag += p * std::fabs(x);
            }
            expectNear((what + " out").c_str(), (b * S + i) * qs + h * hd + e,
                       O[size_t((b * S + i) * qs + h * hd + e)], o, mag,
                       1.0 / 256);
          }
        }
    // The backward.
    Tensor dout = filled("fdo", B * S, qs);
    roundToBf16(dout);
    Tensor dq({B * S, qs}), dk({B * T, ks}), dv({B * T, ks});
    Tensor dsinks = c.sinks ? Tensor({H}) : Tensor();
    resetPeakTensorBytes();
    const int64_t beforeBwd = peakTensorBytes();
    attentionBackward(dq, dk, dv, dsinks, dout, q, k, v, out, lse, d);
    synchronize();
    const int64_t extraBwd = peakTensorBytes() - beforeBwd;
    const int64_t rowBytes = B * H * S * int64_t(sizeof(float));
    if (on && extraBwd != (c.sinks ? 2 : 1) * rowBytes) {
      std::printf("%s smoke: fused attention backward (%s) allocated %lld "
                  "bytes, want %lld\n",
                  backendName(), c.name, static_cast<long long>(extraBwd),
                  static_cast<long long>((c.sinks ? 2 : 1) * rowBytes));
      ++bad;
    }
    const std::vector<float> DO = dout.toHost(), DQ = dq.toHost(),
                             DK = dk.toHost(), DV = dv.toHost();
    std::vector<double> wdq(DQ.size(), 0.0), mdq(DQ.size(), 0.0);
    std::vector<double> wdk(DK.size(), 0.0), mdk(DK.size(), 0.0);
    std::vector<double> wdv(DV.size(), 0.0), mdv(DV.size(), 0.0);
    std::vector<double> wds(size_t(H), 0.0), mds(size_t(H), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i) {
          const int64_t g = h / group, qr = (b * S + i) * qs + h * hd;
          const int64_t last = c.causal ? d.qOffset + i : T - 1;
          const int64_t first =
              c.window > 0 ? std::max<int64_t>(0, last - c.window + 1) : 0;
          std::vector<double> p(size_t(T), 0.0), dp(size_t(T), 0.0);
          double mx = c.sinks ? SK[size_t(h)] : -1e300;
          for (int64_t j = first; j <= last; ++j) {
            for (int64_t e = 0; e < hd; ++e)
              p[size_t(j)] += double(Q[size_t(qr + e)]) *
                              K[size_t((b * T + j) * ks + g * hd + e)];
            p[size_t(j)] *= sc;
            mx = std::max(mx, p[size_t(j)]);
          }
          double z = c.sinks ? std::exp(SK[size_t(h)] - mx) : 0.0;
          for (int64_t j = first; j <= last; ++j)
            z += std::exp(p[size_t(j)] - mx);
          double delta = 0.0, outMag = 0.0;
          for (int64_t j = first; j <= last; ++j) {
            p[size_t(j)] = std::exp(p[size_t(j)] - mx) / z;
            for (int64_t e = 0; e < hd; ++e) {
              const double x = V[size_t((b * T + j) * ks + g * hd + e)];
              dp[size_t(j)] += double(DO[size_t(qr + e)]) * x;
              outMag += p[size_t(j)] * std::fabs(x * DO[size_t(qr + e)]);
            }
            delta += p[size_t(j)] * dp[size_t(j)];
          }
          const double pSink = c.sinks ? std::exp(SK[size_t(h)] - mx) / z : 0.0;
          wds[size_t(h)] -= pSink * delta;
          mds[size_t(h)] += pSink * (std::fabs(delta) + outMag);
          for (int64_t j = first; j <= last; ++j) {
            const double pj = p[size_t(j)];
            const double ds = pj * (dp[size_t(j)] - delta);
            const double dsMag =
                pj * (std::fabs(dp[size_t(j)]) + std::fabs(delta) + outMag);
            const int64_t kr = (b * T + j) * ks + g * hd;
            for (int64_t e = 0; e < hd; ++e) {
              const double qe = Q[size_t(qr + e)], ke = K[size_t(kr + e)];
              wdq[size_t(qr + e)] += sc * ds * ke;
              mdq[size_t(qr + e)] += sc * dsMag * std::fabs(ke);
              wdk[size_t(kr + e)] += sc * ds * qe;
              mdk[size_t(kr + e)] += sc * dsMag * std::fabs(qe);
              wdv[size_t(kr + e)] += pj * DO[size_t(qr + e)];
              mdv[size_t(kr + e)] += pj * std::fabs(DO[size_t(qr + e)]);
            }
          }
        }
    const double tol = 1.0 / 128;
    for (auto [name, got, want, mag] :
         {std::tuple{"dq", &DQ, &wdq, &mdq}, std::tuple{"dk", &DK, &wdk, &mdk},
          std::tuple{"dv", &DV, &wdv, &mdv}})
      for (size_t e = 0; e < got->size(); ++e)
        expectWithin((what + " " + name).c_str(), int64_t(e), (*got)[e],
                     (*want)[e], tol * (*mag)[e] + 1e-6);
    if (c.sinks) {
      const std::vector<float> DS = dsinks.toHost();
      for (int64_t h = 0; h < H; ++h)
        expectWithin((what + " dsinks").c_str(), h, DS[size_t(h)],
                     wds[size_t(h)], tol * mds[size_t(h)] + 1e-6);
    }
    // The output in bf16 storage (rt::toBf16), as the bf16 programs keep
    // the output projection's input: the gradients of its values in an
    // fp32 tensor, bit for bit, and nothing more allocated (the row dots
    // read the bf16 elements).
    Tensor outRounded = bf16Copy(out), outBf16 = toBf16(out);
    Tensor dqR({B * S, qs}), dkR({B * T, ks}), dvR({B * T, ks});
    Tensor dqB({B * S, qs}), dkB({B * T, ks}), dvB({B * T, ks});
    Tensor dsR = c.sinks ? Tensor({H}) : Tensor();
    Tensor dsB = c.sinks ? Tensor({H}) : Tensor();
    attentionBackward(dqR, dkR, dvR, dsR, dout, q, k, v, outRounded, lse, d);
    resetPeakTensorBytes();
    const int64_t beforeB = peakTensorBytes();
    attentionBackward(dqB, dkB, dvB, dsB, dout, q, k, v, outBf16, lse, d);
    synchronize();
    if (on && peakTensorBytes() - beforeB != extraBwd) {
      std::printf("%s smoke: fused attention backward (%s) from a bf16 output "
                  "allocated %lld bytes, want %lld\n",
                  backendName(), c.name,
                  static_cast<long long>(peakTensorBytes() - beforeB),
                  static_cast<long long>(extraBwd));
      ++bad;
    }
    for (auto [name, got, want] :
         {std::tuple{"dq", &dqB, &dqR}, std::tuple{"dk", &dkB, &dkR},
          std::tuple{"dv", &dvB, &dvR}, std::tuple{"dsinks", &dsB, &dsR}})
      expectSame((what + " " + name + " from a bf16 output").c_str(), *got,
                 *want);
  }
  std::printf("%s smoke: attention keeping the log-sum-exp: %s\n",
              backendName(),
              on ? "fused forward and backward (bf16 tensor cores)"
                 : "unfused (no bf16 GEMMs)");
  setFusedAttention(false);
}

/// bf16 tensors (DType::BF16): two bytes an element; toBf16 rounds as
/// roundToBf16 does, toF32 and toHost give the values back exactly,
/// fromHost rounds, clone and view keep the elements; reading one as fp32
/// is refused by name. Then linearForward and linearBackward given x, W
/// and dy in bf16 tensors: the same bits as given their values in fp32
/// tensors, under the GEMM mode in force (a bf16 GEMM reads them as they
/// are, an fp32 one from a widened copy).
void checkBf16Tensors(const char *mode, Bf16Gemms gemms) {
  const std::vector<float> in = {
      1.0f, 1.0f + std::ldexp(1.0f, -8), 0.1f, -3.0e38f, 3.4e38f, -0.0f, 7.0f};
  Tensor t({int64_t(in.size())});
  t.fromHost(in);
  const int64_t live = liveTensorBytes();
  Tensor b = toBf16(t);
  if (liveTensorBytes() - live != 2 * int64_t(in.size())) {
    std::printf("%s smoke: a bf16 tensor of %zu elements takes %lld bytes\n",
                backendName(), in.size(),
                static_cast<long long>(liveTensorBytes() - live));
    ++bad;
  }
  Tensor rounded = bf16Copy(t);
  expectSame("toBf16", b, rounded);
  expectSame("toF32 of toBf16", toF32(b), rounded);
  if (toBf16(b).bf16() != b.bf16() || toF32(t).f32() != t.f32()) {
    std::printf("%s smoke: toBf16 of a bf16 tensor or toF32 of an fp32 one "
                "copied it\n",
                backendName());
    ++bad;
  }
  expectSame("clone of a bf16 tensor", b.clone(), rounded);
  expectSame("view of a bf16 tensor", b.view(2, {3}), rounded.view(2, {3}));
  Tensor filledB({int64_t(in.size())}, DType::BF16);
  filledB.fromHost(in);
  expectSame("fromHost into a bf16 tensor", filledB, rounded);
  try {
    (void)b.f32();
    std::printf("%s smoke: a bf16 tensor read as fp32\n", backendName());
    ++bad;
  } catch (const Error &e) {
    if (std::string(e.what()).find("holds bf16 values") == std::string::npos) {
      std::printf("%s smoke: unexpected message: %s\n", backendName(),
                  e.what());
      ++bad;
    }
  }
  // The activations given x (SwiGLU gate and up) in a bf16 tensor: the
  // same bits as given its values in an fp32 one, forward and backward.
  {
    Tensor x = filled("ax", 37, 19, 3.0f), u = filled("au", 37, 19);
    Tensor dy = filled("ady", 37, 19);
    for (Tensor *r : {&x, &u})
      roundToBf16(*r);
    const Tensor xB = toBf16(x), uB = toBf16(u);
    // And written into bf16 tensors: the bits of toBf16 of the fp32
    // results.
    auto both = [&](const char *name, auto fwd, auto bwd) {
      Tensor y({37, 19}), yB({37, 19}), dx({37, 19}), dxB({37, 19});
      Tensor yOut({37, 19}, DType::BF16), dxOut({37, 19}, DType::BF16);
      fwd(y, x);
      fwd(yB, xB);
      fwd(yOut, xB);
      bwd(dx, dy, x);
      bwd(dxB, dy, xB);
      bwd(dxOut, dy, x);
      expectSame(
          (std::string(name) + " forward from a bf16 x (" + mode + ")").c_str(),
          yB, y);
      expectSame((std::string(name) + " backward from a bf16 x (" + mode + ")")
                     .c_str(),
                 dxB, dx);
      expectSame(
          (std::string(name) + " forward into a bf16 y (" + mode + ")").c_str(),
          yOut, toBf16(y));
      expectSame((std::string(name) + " backward into a bf16 dx (" + mode + ")")
                     .c_str(),
                 dxOut, toBf16(dx));
    };
    both(
        "gelu", [](Tensor &y, const Tensor &in) { geluForward(y, in, false); },
        [](Tensor &d, const Tensor &g, const Tensor &in) {
          geluBackward(d, g, in, false);
        });
    both(
        "gelu (tanh)",
        [](Tensor &y, const Tensor &in) { geluForward(y, in, true); },
        [](Tensor &d, const Tensor &g, const Tensor &in) {
          geluBackward(d, g, in, true);
        });
    both("silu", siluForward, siluBackward);
    both("relu", reluForward, reluBackward);
    both("squared relu", squaredReluForward, squaredReluBackward);
    using Pair = std::pair<const Tensor *, const Tensor *>;
    for (auto [gate, up] : {Pair{&xB, &uB}, Pair{&xB, &u}, Pair{&x, &uB}}) {
      Tensor y({37, 19}), yB({37, 19});
      Tensor dg({37, 19}), du({37, 19}), dgB({37, 19}), duB({37, 19});
      swigluForward(y, x, u);
      swigluForward(yB, *gate, *up);
      swigluBackward(dg, du, dy, x, u);
      swigluBackward(dgB, duB, dy, *gate, *up);
      const std::string at =
          std::string(" from ") +
          (gate->dtype() == DType::BF16 ? "bf16" : "fp32") + " gate and " +
          (up->dtype() == DType::BF16 ? "bf16" : "fp32") + " up (" + mode + ")";
      expectSame(("swiglu forward" + at).c_str(), yB, y);
      expectSame(("swiglu backward dgate" + at).c_str(), dgB, dg);
      expectSame(("swiglu backward dup" + at).c_str(), duB, du);
      Tensor yOut({37, 19}, DType::BF16), dgOut({37, 19}, DType::BF16);
      Tensor duOut({37, 19}, DType::BF16);
      swigluForward(yOut, *gate, *up);
      swigluBackward(dgOut, duOut, dy, *gate, *up);
      expectSame(("swiglu forward into a bf16 y" + at).c_str(), yOut,
                 toBf16(y));
      expectSame(("swiglu backward into bf16 dgate" + at).c_str(), dgOut,
                 toBf16(dg));
      expectSame(("swiglu backward into bf16 dup" + at).c_str(), duOut,
                 toBf16(du));
    }
  }
  // The linear layers from bf16 x, W and dy. 33 x 70 by 70 x 17 runs in
  // fp32 from fp32 tensors under Bf16Gemms::Large, 1200 x 16 by 16 x 1200
  // on bf16 copies; from bf16 tensors both run on bf16 tensor cores there
  // (bf16GemmPays: nothing to copy), so the fp32 tensors' reference runs
  // under Bf16Gemms::All, the same products.
  for (auto [n, inF, out] :
       {std::tuple<int64_t, int64_t, int64_t>{33, 70, 17},
        std::tuple<int64_t, int64_t, int64_t>{1200, 16, 1200}}) {
    Tensor x = filled("bx", n, inF), w = filled("bw", out, inF);
    Tensor dy = filled("bdy", n, out), bias({out});
    for (Tensor *r : {&x, &w, &dy})
      roundToBf16(*r);
    initParam(bias, "bb", {out}, {0}, {out}, 7, 1.0f);
    const Tensor xB = toBf16(x), wB = toBf16(w), dyB = toBf16(dy);
    Tensor y({n, out}), yB({n, out});
    Tensor dx({n, inF}), dw({out, inF}), db({out});
    if (gemms == Bf16Gemms::Large)
      setBf16Gemms(Bf16Gemms::All);
    linearForward(y, x, w, bias);
    linearBackward(dx, dw, db, dy, x, w);
    setBf16Gemms(gemms);
    linearForward(yB, xB, wB, bias);
    const std::string at = std::string(mode) + ", " + std::to_string(n) +
                           " x " + std::to_string(inF) + " x " +
                           std::to_string(out);
    expectSame(("linearForward from bf16 x and W (" + at + ")").c_str(), yB, y);
    Tensor dxB({n, inF}), dwB({out, inF}), dbB({out});
    linearBackward(dxB, dwB, dbB, dyB, xB, wB);
    for (auto [name, got, want] :
         {std::tuple{"dx", &dxB, &dx}, std::tuple{"dW", &dwB, &dw},
          std::tuple{"db", &dbB, &db}})
      expectSame(("linearBackward " + std::string(name) +
                  " from bf16 dy, x and W (" + at + ")")
                     .c_str(),
                 *got, *want);
  }
}

void checkBf16Gemms() {
  const bool on = setBf16Gemms(Bf16Gemms::All);
  std::printf("%s smoke: bf16 GEMMs %s\n", backendName(),
              on ? "on" : "not on this backend (fp32 GEMMs)");
  checkLinear(on ? "linearForward (Bf16Gemms::All)"
                 : "linearForward (fp32 GEMM)",
              33, 70, 17, on);
  if (on) {
    checkAttention(true);
    setBf16Gemms(Bf16Gemms::Large);
    checkLinear("linearForward (Bf16Gemms::Large, 3.7 FLOPs a copied byte)", 33,
                70, 17, false);
    checkLinear("linearForward (Bf16Gemms::Large, 200 FLOPs a copied byte)",
                1200, 16, 1200, true);
  }
  checkFlashAttention();
  if (on) {
    setBf16Gemms(Bf16Gemms::All);
    checkBf16Tensors("Bf16Gemms::All", Bf16Gemms::All);
    setBf16Gemms(Bf16Gemms::Large);
    checkBf16Tensors("Bf16Gemms::Large", Bf16Gemms::Large);
  }
  setBf16Gemms(Bf16Gemms::Off);
  checkLinear("linearForward (bf16 GEMMs off)", 33, 70, 17, false);
  checkBf16Tensors(on ? "Bf16Gemms::Off" : "fp32 GEMMs", Bf16Gemms::Off);
}

/// adamUpdateMany against adamUpdate on each tensor in turn: the same bits
/// (the CUDA backend's multi-tensor kernel does kAdam's arithmetic). 61
/// tensors: more than one launch takes (48), sizes around a block's chunk
/// of 16 Ki elements (one, a chunk, a chunk and one, three chunks and a
/// part), an empty one, and 56 small ones; weight decay on, step 3.
void checkAdamMany() {
  std::vector<int64_t> sizes = {1, 16 * 1024, 16 * 1024 + 1, 0, 3 * 16384 + 77};
  for (int i = 0; i < 56; ++i)
    sizes.push_back(5 + 3 * i);
  AdamConfig cfg;
  cfg.lr = 0.01f, cfg.weightDecay = 0.1f;
  std::vector<AdamTensors> many, one;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t n = sizes[i];
    std::vector<Tensor> t;
    for (int a = 0; a < 4; ++a) {
      Tensor x = filled(("adam" + std::to_string(a)).c_str(), 1, n);
      if (a == 3) // v >= 0
        fillConstant(x, 0.25f + 0.01f * float(i));
      t.push_back(x.reshape({n}));
    }
    many.push_back({t[0], t[1], t[2], t[3]});
    one.push_back({t[0].clone(), t[1], t[2].clone(), t[3].clone()});
  }
  adamUpdateMany(many, cfg, 3);
  for (AdamTensors &t : one)
    adamUpdate(t.param, t.grad, t.m, t.v, cfg, 3);
  for (size_t i = 0; i < sizes.size(); ++i)
    for (auto [name, got, want] :
         {std::tuple{"adamUpdateMany param", &many[i].param, &one[i].param},
          std::tuple{"adamUpdateMany m", &many[i].m, &one[i].m},
          std::tuple{"adamUpdateMany v", &many[i].v, &one[i].v}}) {
      const std::vector<float> G = got->toHost(), W = want->toHost();
      for (size_t e = 0; e < G.size(); ++e)
        expectWithin(name, int64_t(i * 100000 + e), G[e], W[e], 0.0);
    }
}

void checkCollectivesAlone(const Group &g) {
  const int64_t r = 6, c = 10;
  Tensor src = filled("collective", r, c);
  const std::vector<float> S = src.toHost();
  auto same = [&](const char *what, const Tensor &t) {
    std::vector<float> got = t.toHost();
    if (got.size() != S.size()) {
      std::printf("%s smoke: %s has %zu elements, want %zu\n", backendName(),
                  what, got.size(), S.size());
      ++bad;
      return;
    }
    for (size_t i = 0; i < S.size(); ++i)
      expectNear(what, int64_t(i), got[i], S[i], 0.0, 0.0);
  };
  Tensor t({r, c});
  copy(t, src);
  allReduceSum(t, g);
  same("allReduceSum (group of one)", t);
  allReduceMax(t, g);
  same("allReduceMax (group of one)", t);
  broadcast(t, 0, g);
  same("broadcast (group of one)", t);
  for (int dim : {0, 1}) {
    Tensor gathered({r, c}), scattered({r, c}), exchanged({r, c});
    allGather(gathered, src, dim, g);
    same(dim ? "allGather dim 1 (group of one)" : "allGather dim 0 (group of one)",
         gathered);
    reduceScatterSum(scattered, src, dim, g);
    same(dim ? "reduceScatterSum dim 1 (group of one)"
             : "reduceScatterSum dim 0 (group of one)",
         scattered);
    allToAll(exchanged, src, dim, 1 - dim, g);
    same("allToAll (group of one)", exchanged);
  }
  Tensor a({r, c}), rs({r, c}), ag({r, c});
  copy(a, src);
  Pending pa = allReduceSumAsync(a, g);
  Pending prs = reduceScatterSumAsync(rs, src, 0, g);
  Pending pag = allGatherAsync(ag, src, g);
  pa.wait();
  prs.wait();
  pag.wait();
  same("allReduceSumAsync (group of one)", a);
  same("reduceScatterSumAsync (group of one)", rs);
  same("allGatherAsync (group of one)", ag);
  // In place: out is in (NCCL's in-place forms).
  Tensor ip({r, c});
  copy(ip, src);
  Pending pip = reduceScatterSumAsync(ip, ip, 0, g);
  pip.wait();
  same("reduceScatterSumAsync in place (group of one)", ip);
  Pending pig = allGatherAsync(ip, ip, g);
  pig.wait();
  same("allGatherAsync in place (group of one)", ip);
}
} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--link-only") {
    std::printf("linked backend %s\n", backendName());
    return 0;
  }
  try {
    init(&argc, &argv);
    Grid grid({});
    // linear: y = x W^T + b against a host loop.
    int64_t n = 3, in = 5, out = 4;
    Tensor x({n, in}), w({out, in}), b({out}), y({n, out});
    initParam(x, "x", {n, in}, {0, 0}, {n, in}, 1, 1.0f);
    initParam(w, "w", {out, in}, {0, 0}, {out, in}, 1, 1.0f);
    initParam(b, "b", {out}, {0}, {out}, 1, 1.0f);
    linearForward(y, x, w, b);
    auto X = x.toHost(), W = w.toHost(), B = b.toHost(), Y = y.toHost();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < out; ++o) {
        double s = B[o];
        for (int64_t k = 0; k < in; ++k)
          s += double(X[i * in + k]) * W[o * in + k];
        if (std::fabs(s - Y[i * out + o]) > 1e-5 * (1 + std::fabs(s)))
          ++bad;
      }
    // cross-entropy of zero logits is log V per row.
    Tensor logits({2, 8}), lse({2}), loss({1});
    Tensor tgt({2}, DType::I32);
    tgt.fromHostI32({1, 7});
    crossEntropyForward(loss, lse, logits, tgt);
    if (std::fabs(loss.toHost()[0] - 2 * std::log(8.0)) > 1e-5)
      ++bad;
    checkReductions();
    checkAttention();
    checkAttention(false, /*lse=*/true);
    checkRecommender();
    checkExperts(37);
    checkExperts(700);
    checkBf16();
    checkBf16Gemms();
    checkAdamMany();
    // copy between overlapping views of one buffer, both ways (memmove's
    // result; cudaMemcpy alone is undefined there).
    for (int64_t shift : {2, -2}) {
      Tensor buf({10});
      std::vector<float> v(10);
      for (int i = 0; i < 10; ++i)
        v[size_t(i)] = float(i);
      buf.fromHost(v);
      Tensor dst = buf.view(shift > 0 ? shift : 0, {8});
      Tensor src = buf.view(shift > 0 ? 0 : -shift, {8});
      copy(dst, src);
      std::vector<float> want = v;
      for (int i = 0; i < 8; ++i)
        want[size_t(i + (shift > 0 ? shift : 0))] =
            v[size_t(i + (shift > 0 ? 0 : -shift))];
      std::vector<float> got = buf.toHost();
      for (size_t i = 0; i < 10; ++i)
        expectNear("overlapping copy", int64_t(i), got[i], want[i], 0.0, 0.0);
    }
    Tensor t({4});
    fillConstant(t, 2.0f);
    allReduceSum(t, grid.group(Axis::World));
    if (t.toHost()[0] != 2.0f)
      ++bad;
    checkCollectivesAlone(grid.group(Axis::World));
    std::printf("%s smoke: %s (%d mismatches)\n", backendName(),
                bad ? "FAILED" : "PASSED", bad);
    finalize();
  } catch (const std::exception &e) {
    reportFatal(e);
  }
  return bad ? 1 : 0;
}
