//===- cublas_v2.h - lib/Runtime/Cuda's cuBLAS calls, emulated -*- C++ -*-===//
//
// Part of the CUDA emulation (cuda_runtime.h). Column-major, host pointer
// mode, as cuBLAS documents them: C = alpha op(A) op(B) + beta C, C not
// read where beta is 0; each operand's extent (from its leading dimension)
// must lie inside one cudaMalloc block. Sums run in double, rounded once;
// under CUBLAS_TF32_TENSOR_OP_MATH fp32 inputs are first rounded to TF32.
// cublasGemmEx and its strided batched form take bf16 (CUDA_R_16BF: the
// upper 16 bits of an fp32) or fp32 A and B, an fp32 C and fp32 compute.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_CUBLAS_V2_H
#define TRIDENT_CUDA_EMU_CUBLAS_V2_H

#include "cuda_runtime.h"

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cublasMath_t { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 };
enum cublasAtomicsMode_t {
  CUBLAS_ATOMICS_NOT_ALLOWED = 0,
  CUBLAS_ATOMICS_ALLOWED = 1
};

/// library_types.h's values for the types the runtime passes.
enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16BF = 14 };
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };

struct cublasContext;
using cublasHandle_t = cublasContext *;

cublasStatus_t cublasCreate(cublasHandle_t *h);
cublasStatus_t cublasDestroy(cublasHandle_t h);
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s);
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode);
cublasStatus_t cublasSetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t m);
cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta,
                           float *C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const float *alpha, const float *A, int lda, long long strideA,
    const float *B, int ldb, long long strideB, const float *beta, float *C,
    int ldc, long long strideC, int batchCount);
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType_t at,
                            int lda, const void *B, cudaDataType_t bt, int ldb,
                            const void *beta, void *C, cudaDataType_t ct,
                            int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const void *alpha, const void *A, cudaDataType_t at, int lda,
    long long strideA, const void *B, cudaDataType_t bt, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType_t ct, int ldc,
    long long strideC, int batchCount, cublasComputeType_t compute,
    cublasGemmAlgo_t algo);
cublasStatus_t cublasSscal(cublasHandle_t h, int n, const float *alpha,
                           float *x, int incx);

#endif // TRIDENT_CUDA_EMU_CUBLAS_V2_H
