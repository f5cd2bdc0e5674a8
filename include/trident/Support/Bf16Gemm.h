//===- Bf16Gemm.h - Which GEMMs run on bf16 tensor cores ------*- C++ -*-===//
//
// Under rt::setBf16Gemms(Bf16Gemms::Large) the CUDA backend decides per
// GEMM whether it runs on bf16 tensor cores or on TF32 ones. Each operand
// that is not in the element type of the chosen path is first copied into
// it by a kernel: an fp32 tensor rounded into a bf16 buffer for the bf16
// path, a bf16 tensor (DType::BF16, rt::toBf16) widened into an fp32 one
// for the TF32 path; either copy reads and writes 6 bytes an element.
// TF32 forms the same products of bf16 values at half the bf16 rate. One
// rule, read by the runtime (which path each GEMM takes) and by the cost
// model's trident preset (which rate it prices, with which copies).
// Header-only and free of MLIR, so that the runtime's CUDA code can
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_BF16GEMM_H
#define TRIDENT_SUPPORT_BF16GEMM_H

namespace trident {

/// FLOPs per copied byte from which the bf16 rate pays for copies. bf16
/// saves F / P16 seconds of a GEMM of F FLOPs against TF32 (whose dense
/// peak is half the bf16 one, P16 / 2), and copies cost their bytes over
/// the memory bandwidth BW, so bf16 pays for C more copied bytes above
/// P16 / BW FLOPs per byte: 989 TFLOP/s over 4.8 TB/s = 206 on an H200,
/// over 3.35 TB/s = 295 on an H100 SXM, 312 over 2.04 = 153 on an A100
/// 80 GB (NVIDIA's datasheets, as in lib/Hardware/GpuCatalog.cpp). 200:
/// the H200's, the GPU issue 37 measures on.
inline constexpr double kBf16CopyFlopsPerByte = 200;

/// Bytes a copy kernel reads and writes per operand element (4 + 2).
inline constexpr double kGemmCopyBytesPerElement = 6;

/// Whether a product of m x k (A) by k x n (B), each of a batch alike,
/// runs on bf16 tensor cores, given which operands are bf16 tensors
/// already: the bf16 path copies the fp32 operands, the TF32 path the
/// bf16 ones, and bf16 is taken where its 2 m n k FLOPs reach
/// kBf16CopyFlopsPerByte per byte it copies beyond what TF32 would. With
/// both operands bf16 it always is; with both fp32 it is where
/// 2 m n k >= 200 x 6 (m k + k n).
inline bool bf16GemmPays(double m, double n, double k, bool aBf16, bool bBf16) {
  const double a = m * k, b = k * n;
  const double toBf16 = (aBf16 ? 0 : a) + (bBf16 ? 0 : b);
  const double toF32 = (aBf16 ? a : 0) + (bBf16 ? b : 0);
  return 2 * m * n * k >=
         kBf16CopyFlopsPerByte * kGemmCopyBytesPerElement * (toBf16 - toF32);
}

} // namespace trident

#endif // TRIDENT_SUPPORT_BF16GEMM_H
