//===- Bf16Gemm.h - Which GEMMs run on bf16 copies ------------*- C++ -*-===//
//
// The emitted bf16 programs hold bf16 values in fp32 tensors. Under
// rt::setBf16Gemms(Bf16Gemms::Large) the CUDA backend runs a GEMM on bf16
// tensor cores by first copying its two operands into bf16 buffers (read
// 4 bytes and write 2 per element); any other GEMM runs on TF32 tensor
// cores straight from the fp32 tensors, which on bf16 values forms the
// same products at half the bf16 rate. The copies pay where the product
// does enough work per copied byte. One rule, read by the runtime (which
// GEMMs it copies) and by the cost model's trident preset (which GEMMs
// it prices at the bf16 rate, with the copies' traffic). Header-only and
// free of MLIR, so that the runtime's CUDA code can include it.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_BF16GEMM_H
#define TRIDENT_SUPPORT_BF16GEMM_H

namespace trident {

/// FLOPs per copied byte from which a GEMM runs on bf16 copies. bf16
/// saves F / P16 seconds of a GEMM of F FLOPs against TF32 (whose dense
/// peak is half the bf16 one, P16 / 2), and the copies cost their bytes
/// over the memory bandwidth BW, so they pay above P16 / BW FLOPs per
/// byte: 989 TFLOP/s over 4.8 TB/s = 206 on an H200, over 3.35 TB/s = 295
/// on an H100 SXM, 312 over 2.04 = 153 on an A100 80 GB (NVIDIA's
/// datasheets, as in lib/Hardware/GpuCatalog.cpp). 200: the H200's,
/// the GPU issue 37 measures on.
inline constexpr double kBf16CopyFlopsPerByte = 200;

/// Whether a product of m x k by k x n (each of a batch alike) runs on
/// bf16 copies: 2 m n k FLOPs against 6 (m k + k n) copied bytes.
inline bool bf16CopiesPay(double m, double n, double k) {
  return 2 * m * n * k >= kBf16CopyFlopsPerByte * 6 * (m * k + k * n);
}

} // namespace trident

#endif // TRIDENT_SUPPORT_BF16GEMM_H
