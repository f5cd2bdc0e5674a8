//===- CudaState.h - Streams and handles of the CUDA backend ----*- C++ -*-===//

#ifndef TRIDENT_LIB_RUNTIME_CUDA_CUDASTATE_H
#define TRIDENT_LIB_RUNTIME_CUDA_CUDASTATE_H

#include "../Internal.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace trident::rt::cuda {

/// Process-wide CUDA state: kernels run on `compute`, collectives on `comm`.
struct State {
  bool ready = false;
  int device = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t cublas = nullptr;
  /// rt::setBf16Gemms: which GEMMs' operands go to cuBLAS as bf16 copies.
  Bf16Gemms bf16Gemms = Bf16Gemms::Off;
  /// rt::setFusedAttention.
  bool fusedAttention = false;
};
State &state();

/// Throws rt::Error naming `fn` when `rc` is an error.
void check(cudaError_t rc, const char *fn);
void check(cublasStatus_t rc, const char *fn);
/// Whether a row-major product of m x k (A) by k x n (B) runs on bf16
/// tensor cores, given which operands are bf16 tensors already
/// (State::bf16Gemms; trident/Support/Bf16Gemm.h, bf16GemmPays).
bool bf16Gemm(int64_t m, int64_t n, int64_t k, bool aBf16, bool bBf16);
/// Throws unless init() ran.
State &ready(const char *fn);

/// `height` rows of `row` bytes from src (rows `spitch` apart) to dst
/// (rows `dpitch` apart), on `stream` (the compute stream if null); past
/// cudaMemcpy2D's pitch limit (2^31 - 1 bytes) row by row.
void copyRows(float *dst, size_t dpitch, const float *src, size_t spitch,
              size_t row, int64_t height, const char *fn,
              cudaStream_t stream = nullptr);

} // namespace trident::rt::cuda

#endif // TRIDENT_LIB_RUNTIME_CUDA_CUDASTATE_H
