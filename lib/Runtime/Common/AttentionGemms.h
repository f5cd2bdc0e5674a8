//===- AttentionGemms.h - Batched products of one sample's attention ------===//
//
// The CUDA backend computes a sample's attention with strided batched GEMMs
// (cublasSgemmStridedBatched) instead of one GEMM pair per head. Where each
// product reads and writes is plain index arithmetic, kept here as data so
// that a CPU unit test (RuntimeKernelsTest.cpp, "attention's batched
// products") runs the very same descriptors through a host GEMM and checks
// them against the per-head formulas; the CUDA code only maps a descriptor
// onto one cuBLAS call.
//
// Query head h = j * group + r reads kv head j (grouped-query attention,
// group = heads / kvHeads). For each r, one batched product runs over the
// kv heads j: consecutive products are `group` query heads, one kv head and
// `group` score matrices apart. A kv head's dV and dK so sum its query
// heads r = 0, 1, ... in that order, as a loop over the heads would.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H
#define TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H

#include "trident/Runtime/Runtime.h"

#include <cstdint>
#include <vector>

namespace trident::rt::detail {

/// The buffers a product reads or writes. Q, K, V, O, dO, dQ, dK and dV are
/// the whole tensors (the descriptors add the sample's offset); P, PV and
/// dP are the sample's [heads, s, keys] matrices: its probabilities, the
/// probabilities the values are weighted with (P, or P with attention
/// dropout applied) and their gradient.
enum class AttnBuf { Q, K, V, O, DO, DQ, DK, DV, P, PV, DP };

/// Row-major C[m, n] = alpha op(A) op(B) + beta C for `batch` products,
/// product i at offsets off + i * stride of its buffers.
struct AttnGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  AttnBuf a = AttnBuf::Q, b = AttnBuf::K, c = AttnBuf::P;
  int64_t offA = 0, lda = 0, strideA = 0;
  int64_t offB = 0, ldb = 0, strideB = 0;
  int64_t offC = 0, ldc = 0, strideC = 0;
  int64_t batch = 1;
};

/// Which products of sample b: the scores (P = scale Q K^T, before the
/// softmax), the output (O = PV V), the backward's first half (dV += PV^T
/// dO, dP = dO V^T, before the softmax's backward) or its second (dQ = dP
/// K, dK += dP^T Q, dP now the scores' gradient).
enum class AttnPhase { Scores, Output, BackwardValues, BackwardKeys };

inline std::vector<AttnGemm> attentionGemms(const AttentionDims &d, int64_t b,
                                            AttnPhase phase) {
  const int64_t s = d.seq, t = d.keys(), hd = d.headDim, vd = d.valueDim();
  const int64_t H = d.heads, kvH = d.kvHeads, group = H / kvH;
  const int64_t qs = H * hd, ks = kvH * hd, os = H * vd, vs = kvH * vd;
  // Per r: query-side offsets and strides (rows of q, out, dout, dq), the
  // kv side's (rows of k, v, dk, dv) and the score matrices'.
  const int64_t q0 = b * s * qs, o0 = b * s * os, k0 = b * t * ks,
                v0 = b * t * vs, mat = s * t;
  std::vector<AttnGemm> out;
  for (int64_t r = 0; r < group; ++r) {
    auto add = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   float alpha, float beta, AttnBuf A, int64_t offA,
                   int64_t lda, int64_t strideA, AttnBuf B, int64_t offB,
                   int64_t ldb, int64_t strideB, AttnBuf C, int64_t offC,
                   int64_t ldc, int64_t strideC) {
      AttnGemm g;
      g.transA = ta, g.transB = tb, g.m = m, g.n = n, g.k = k;
      g.alpha = alpha, g.beta = beta;
      g.a = A, g.offA = offA, g.lda = lda, g.strideA = strideA;
      g.b = B, g.offB = offB, g.ldb = ldb, g.strideB = strideB;
      g.c = C, g.offC = offC, g.ldc = ldc, g.strideC = strideC;
      g.batch = kvH;
      out.push_back(g);
    };
    switch (phase) {
    case AttnPhase::Scores: // P_h = scale Q_h K_j^T
      add(false, true, s, t, hd, d.softmaxScale(), 0.0f, AttnBuf::Q,
          q0 + r * hd, qs, group * hd, AttnBuf::K, k0, ks, hd, AttnBuf::P,
          r * mat, t, group * mat);
      break;
    case AttnPhase::Output: // O_h = PV_h V_j
      add(false, false, s, vd, t, 1.0f, 0.0f, AttnBuf::PV, r * mat, t,
          group * mat, AttnBuf::V, v0, vs, vd, AttnBuf::O, o0 + r * vd, os,
          group * vd);
      break;
    case AttnPhase::BackwardValues: // dV_j += PV_h^T dO_h; dP_h = dO_h V_j^T
      add(true, false, t, vd, s, 1.0f, 1.0f, AttnBuf::PV, r * mat, t,
          group * mat, AttnBuf::DO, o0 + r * vd, os, group * vd, AttnBuf::DV,
          v0, vs, vd);
      add(false, true, s, t, vd, 1.0f, 0.0f, AttnBuf::DO, o0 + r * vd, os,
          group * vd, AttnBuf::V, v0, vs, vd, AttnBuf::DP, r * mat, t,
          group * mat);
      break;
    case AttnPhase::BackwardKeys: // dQ_h = dP_h K_j; dK_j += dP_h^T Q_h
      add(false, false, s, hd, t, 1.0f, 0.0f, AttnBuf::DP, r * mat, t,
          group * mat, AttnBuf::K, k0, ks, hd, AttnBuf::DQ, q0 + r * hd, qs,
          group * hd);
      add(true, false, t, hd, s, 1.0f, 1.0f, AttnBuf::DP, r * mat, t,
          group * mat, AttnBuf::Q, q0 + r * hd, qs, group * hd, AttnBuf::DK,
          k0, ks, hd);
      break;
    }
  }
  return out;
}

} // namespace trident::rt::detail

#endif // TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H
