//===- EmuSelfTest.cpp - The CUDA emulation's own checks ------------------===//
//
// The emulation (lib/Runtime/Cuda/Emu) stands in for a GPU in the tests of
// the CUDA backend; this test shows that it executes CUDA's semantics
// (barriers, 2-D thread ids, cuBLAS's column-major GEMM, NCCL's
// collectives) and that each of its checks fires: a host pointer passed to
// a kernel, a copy against its cudaMemcpyKind or past its block, a GEMM
// operand past its block or with a short leading dimension, threads of a
// block passing different numbers of barriers, a block too large, memory
// read before it was written, an NCCL result read by a stream that did not
// wait for it, an NCCL buffer written before its stream was waited for,
// an NCCL call on a buffer another stream wrote without waiting for it,
// a communicator of ranks sharing a GPU; and NCCL's broadcast and
// communicator split. Run on 2 MPI ranks and 2 emulated GPUs (the NCCL
// checks);
// prints "emu self-test: PASSED" when every check holds.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <mpi.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;
void expect(bool ok, const std::string &what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "emu self-test: FAILED: %s\n", what.c_str());
  }
}

// --- kernels, written as for nvcc ------------------------------------------

/// Block-wide tree sum of v[block * n + thread]; thread 0 writes it.
__global__ void kBlockSum(float *out, const float *v) {
  __shared__ float sh[256];
  const unsigned t = threadIdx.x;
  sh[t] = v[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      sh[t] += sh[t + s];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = sh[0];
}

/// Each thread reads its right neighbour's value after a barrier.
__global__ void kRotate(int *out) {
  __shared__ int sh[128];
  const unsigned t = threadIdx.x;
  sh[t] = int(t) * 10;
  __syncthreads();
  out[t] = sh[(t + 1) % blockDim.x];
}

/// 2-D blocks in a 2-D grid: every thread writes its linear position.
__global__ void kIds(int *out, int width) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  out[y * width + x] = y * 1000 + x;
}

/// Thread 0 skips the barrier that every other thread passes.
__global__ void kDivergent(int *out) {
  if (threadIdx.x != 0)
    __syncthreads();
  out[threadIdx.x] = 1;
}

/// A kernel argument holding a pointer, listed for the check.
struct Target {
  float *p;
};
std::array<const void *, 1> emuPointers(const Target &t) { return {t.p}; }
__global__ void kFillTarget(Target t) { t.p[threadIdx.x] = 2.0f; }

__global__ void kFill(float *p, float v, int n) {
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += int(blockDim.x * gridDim.x))
    p[i] = v;
}

template <class T> T *deviceAlloc(size_t n) {
  T *p = nullptr;
  expect(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess, "cudaMalloc");
  return p;
}

void kernels() {
  // Barrier-separated tree sums, 4 blocks of 256.
  std::vector<float> v(1024);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(i % 7);
  float *dv = deviceAlloc<float>(1024), *dout = deviceAlloc<float>(4);
  cudaMemcpy(dv, v.data(), 4096, cudaMemcpyHostToDevice);
  TRIDENT_LAUNCH(kBlockSum, 4, 256, 0, nullptr)(dout, dv);
  expect(cudaGetLastError() == cudaSuccess, "kBlockSum launch");
  std::vector<float> out(4);
  cudaMemcpy(out.data(), dout, 16, cudaMemcpyDeviceToHost);
  for (int b = 0; b < 4; ++b) {
    double want = 0;
    for (int i = 0; i < 256; ++i)
      want += v[size_t(b * 256 + i)];
    expect(out[size_t(b)] == float(want),
           "block " + std::to_string(b) + " sums to " +
               std::to_string(out[size_t(b)]) + ", not " +
               std::to_string(want));
  }

  int *dr = deviceAlloc<int>(128);
  TRIDENT_LAUNCH(kRotate, 1, 128, 0, nullptr)(dr);
  std::vector<int> r(128);
  cudaMemcpy(r.data(), dr, 512, cudaMemcpyDeviceToHost);
  for (int t = 0; t < 128; ++t)
    expect(r[size_t(t)] == ((t + 1) % 128) * 10,
           "thread " + std::to_string(t) + " read its neighbour before the "
                                            "barrier");

  const int w = 48, h = 20;
  int *di = deviceAlloc<int>(size_t(w * h));
  TRIDENT_LAUNCH(kIds, dim3(3, 5), dim3(16, 4), 0, nullptr)(di, w);
  std::vector<int> ids(size_t(w * h));
  cudaMemcpy(ids.data(), di, sizeof(int) * ids.size(), cudaMemcpyDeviceToHost);
  bool idsOk = true;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      idsOk = idsOk && ids[size_t(y * w + x)] == y * 1000 + x;
  expect(idsOk, "2-D thread and block ids");

  // Checks that must fire.
  std::vector<float> host(16, 0.0f);
  TRIDENT_LAUNCH(kFill, 1, 32, 0, nullptr)(host.data(), 1.0f, 16);
  expect(cudaGetLastError() == cudaErrorLaunchFailure && host[0] == 0.0f,
         "a host pointer passed to a kernel is refused");
  TRIDENT_LAUNCH(kFillTarget, 1, 4, 0, nullptr)(Target{host.data()});
  expect(cudaGetLastError() == cudaErrorLaunchFailure && host[0] == 0.0f,
         "a host pointer inside a kernel's struct argument is refused");
  TRIDENT_LAUNCH(kFill, 1, 2048, 0, nullptr)(dv, 1.0f, 16);
  expect(cudaGetLastError() == cudaErrorInvalidConfiguration,
         "a block of 2048 threads is refused");
  TRIDENT_LAUNCH(kDivergent, 1, 64, 0, nullptr)(dr);
  expect(cudaGetLastError() == cudaErrorLaunchFailure,
         "threads passing different numbers of barriers are reported");

  float *fresh = deviceAlloc<float>(8);
  float f = 0;
  cudaMemcpy(&f, fresh + 3, 4, cudaMemcpyDeviceToHost);
  expect(std::isnan(f), "fresh device memory reads as NaN");
  expect(cudaMemcpy(dv, dout, 16, cudaMemcpyHostToDevice) != cudaSuccess,
         "a device source under cudaMemcpyHostToDevice is refused");
  expect(cudaMemcpy(host.data(), dout, 32, cudaMemcpyDeviceToHost) !=
             cudaSuccess,
         "a copy past the end of its block is refused");
  expect(cudaMemsetAsync(dout + 2, 0, 16, nullptr) != cudaSuccess,
         "a memset past the end of its block is refused");
  expect(cudaFree(dv + 1) != cudaSuccess,
         "freeing inside a block is refused");
  // 2-D copies: rows of 8 bytes, pitches 16, 3 rows inside one block;
  // side by side they are fine, rows that overlap are refused.
  expect(cudaMemcpy2D(dv + 2, 16, dv, 16, 8, 3, cudaMemcpyDeviceToDevice) ==
             cudaSuccess,
         "2-D copy between interleaved, disjoint rows");
  expect(cudaMemcpy2D(dv + 1, 16, dv, 16, 8, 3, cudaMemcpyDeviceToDevice) !=
             cudaSuccess,
         "a 2-D copy between overlapping rows is refused");
  expect(cudaMemcpy2D(dv, 16, host.data(), 16, 8, 3,
                      cudaMemcpyDeviceToDevice) != cudaSuccess,
         "a host source of a device-to-device 2-D copy is refused");
  cudaFree(fresh);
  cudaFree(di);
  cudaFree(dr);
  cudaFree(dout);
  cudaFree(dv);
}

void blas() {
  // Row-major C[m x n] = A[m x k] B[k x n], through the column-major
  // transposes (C^T = B^T A^T), and with A given transposed.
  const int m = 5, n = 3, k = 4;
  std::vector<float> A(size_t(m * k)), At(size_t(k * m)), B(size_t(k * n));
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l) {
      A[size_t(i * k + l)] = float(i + 2 * l) - 3.0f;
      At[size_t(l * m + i)] = A[size_t(i * k + l)];
    }
  for (int l = 0; l < k; ++l)
    for (int j = 0; j < n; ++j)
      B[size_t(l * n + j)] = float(l * j % 5) - 1.5f;
  float *dA = deviceAlloc<float>(A.size()), *dAt = deviceAlloc<float>(At.size()),
        *dB = deviceAlloc<float>(B.size()), *dC = deviceAlloc<float>(size_t(m * n));
  cudaMemcpy(dA, A.data(), 4 * A.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dAt, At.data(), 4 * At.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B.data(), 4 * B.size(), cudaMemcpyHostToDevice);
  // dC against A B element by element (exact: small integers and halves).
  auto expectProduct = [&](const std::string &what) {
    std::vector<float> C(size_t(m * n));
    cudaMemcpy(C.data(), dC, 4 * C.size(), cudaMemcpyDeviceToHost);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double want = 0;
        for (int l = 0; l < k; ++l)
          want += double(A[size_t(i * k + l)]) * B[size_t(l * n + j)];
        expect(C[size_t(i * n + j)] == float(want),
               what + " element " + std::to_string(i) + "," +
                   std::to_string(j));
      }
  };
  cublasHandle_t hd;
  cublasCreate(&hd);
  const float one = 1.0f, zero = 0.0f;
  for (bool transA : {false, true}) {
    // C may hold NaN: beta 0 must not read it.
    cudaMemsetAsync(dC, 0xff, sizeof(float) * size_t(m * n), nullptr);
    cublasStatus_t st =
        cublasSgemm(hd, CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                    k, &one, dB, n, transA ? dAt : dA, transA ? m : k, &zero,
                    dC, n);
    expect(st == CUBLAS_STATUS_SUCCESS, "cublasSgemm");
    expectProduct(std::string("GEMM") + (transA ? " (A transposed)" : ""));
  }
  expect(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dB, n - 1,
                     dA, k, &zero, dC, n) == CUBLAS_STATUS_INVALID_VALUE,
         "a leading dimension below the rows is refused");
  expect(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, m + 1, k, &one, dB, n,
                     dA, k, &zero, dC, n) == CUBLAS_STATUS_INVALID_VALUE,
         "an operand past its block is refused");
  expect(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, 2,
                     dA + 4, 2, &zero, dA + 2, 2) == CUBLAS_STATUS_INVALID_VALUE,
         "C overlapping A is refused");
  // Batches side by side within ldc (as attention's heads) are fine;
  // batches whose C matrices share elements are refused.
  expect(cublasSgemmStridedBatched(hd, CUBLAS_OP_N, CUBLAS_OP_N, 1, 2, 1,
                                   &one, dA, 1, 1, dB, 1, 2, &zero, dC, 3, 1,
                                   3) == CUBLAS_STATUS_SUCCESS,
         "batched GEMM with side-by-side C matrices");
  expect(cublasSgemmStridedBatched(hd, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 1,
                                   &one, dA, 2, 2, dB, 1, 2, &zero, dC, 3, 1,
                                   2) == CUBLAS_STATUS_INVALID_VALUE,
         "batched GEMM whose C matrices overlap is refused");
  // cublasGemmEx on bf16 operands (the upper 16 bits of an fp32; these
  // values are exact in bf16) in blocks of exactly 2 bytes an element, so
  // reading 4 would leave them: the same product, fp32 C.
  auto bits = [](const std::vector<float> &v) {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &v[i], 4);
      out[i] = uint16_t(u >> 16);
    }
    return out;
  };
  const std::vector<uint16_t> A16 = bits(A), B16 = bits(B);
  uint16_t *dA16 = deviceAlloc<uint16_t>(A16.size()),
           *dB16 = deviceAlloc<uint16_t>(B16.size());
  cudaMemcpy(dA16, A16.data(), 2 * A16.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dB16, B16.data(), 2 * B16.size(), cudaMemcpyHostToDevice);
  cudaMemsetAsync(dC, 0xff, sizeof(float) * size_t(m * n), nullptr);
  expect(cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dB16,
                      CUDA_R_16BF, n, dA16, CUDA_R_16BF, k, &zero, dC,
                      CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
         "cublasGemmEx on bf16 operands");
  expectProduct("bf16 GEMM");
  expect(cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, dB16,
                      CUDA_R_16BF, n, dA, CUDA_R_32F, k, &zero, dC, CUDA_R_32F,
                      n, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
         "cublasGemmEx with A and B of different types is refused");
  expect(cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, m + 1, k, &one, dB16,
                      CUDA_R_16BF, n, dA16, CUDA_R_16BF, k, &zero, dC,
                      CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE,
         "a bf16 operand past its block is refused");
  // Two batches of C[1 x 2] = A[1 x 1] B[1 x 2], side by side.
  expect(cublasGemmStridedBatchedEx(
             hd, CUBLAS_OP_N, CUBLAS_OP_N, 1, 2, 1, &one, dA16, CUDA_R_16BF, 1,
             1, dB16, CUDA_R_16BF, 1, 2, &zero, dC, CUDA_R_32F, 3, 1, 2,
             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
         "cublasGemmStridedBatchedEx on bf16 operands");
  std::vector<float> C16(5);
  cudaMemcpy(C16.data(), dC, 4 * 5, cudaMemcpyDeviceToHost);
  // Column-major C = A B: batch b at C + b, element (0, j) at C[b + 3 j].
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 2; ++j)
      expect(C16[size_t(b + 3 * j)] == A[size_t(b)] * B[size_t(2 * b + j)],
             "bf16 batched GEMM batch " + std::to_string(b) + " element " +
                 std::to_string(j));
  cublasDestroy(hd);
  cudaFree(dA);
  cudaFree(dAt);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dA16);
  cudaFree(dB16);
}

/// A world communicator from one unique id made by rank 0.
ncclResult_t worldComm(ncclComm_t *comm, int rank, int size) {
  ncclUniqueId id;
  if (rank == 0)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  return ncclCommInitRank(comm, size, id, rank);
}

void nccl(int rank, int size) {
  // Two ranks on one GPU: NCCL refuses the communicator, on every rank.
  cudaSetDevice(0);
  ncclComm_t comm = nullptr;
  if (size > 1)
    expect(worldComm(&comm, rank, size) == ncclInvalidUsage,
           "a communicator of ranks sharing a GPU is refused");
  int devices = 0;
  cudaGetDeviceCount(&devices);
  expect(devices >= size, "TRIDENT_CUDA_EMU_DEVICES gives each rank a GPU");
  cudaSetDevice(rank % devices);
  expect(worldComm(&comm, rank, size) == ncclSuccess, "ncclCommInitRank");
  const int n = 6;
  float *d = deviceAlloc<float>(size_t(n * size));
  std::vector<float> v(size_t(n * size));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(rank + 1) * float(i + 1);
  cudaMemcpy(d, v.data(), 4 * v.size(), cudaMemcpyHostToDevice);
  ncclAllReduce(d, d, size_t(n * size), ncclFloat, ncclSum, comm, nullptr);
  cudaMemcpy(v.data(), d, 4 * v.size(), cudaMemcpyDeviceToHost);
  const float ranks = float(size * (size + 1) / 2);
  bool ok = true;
  for (size_t i = 0; i < v.size(); ++i)
    ok = ok && v[i] == ranks * float(i + 1);
  expect(ok, "in-place ncclAllReduce");
  // In place: this rank's block of the sum, then gathered back.
  ncclReduceScatter(d, d + rank * n, size_t(n), ncclFloat, ncclSum, comm,
                    nullptr);
  ncclAllGather(d + rank * n, d, size_t(n), ncclFloat, comm, nullptr);
  cudaMemcpy(v.data(), d, 4 * v.size(), cudaMemcpyDeviceToHost);
  ok = true;
  for (size_t i = 0; i < v.size(); ++i)
    ok = ok && v[i] == float(size) * ranks * float(i + 1);
  expect(ok, "in-place ncclReduceScatter then ncclAllGather");
  // A ring of sends and receives in one group.
  float *s = deviceAlloc<float>(1), *r = deviceAlloc<float>(1);
  float mine = float(rank);
  cudaMemcpy(s, &mine, 4, cudaMemcpyHostToDevice);
  ncclGroupStart();
  ncclSend(s, 1, ncclFloat, (rank + 1) % size, comm, nullptr);
  ncclRecv(r, 1, ncclFloat, (rank + size - 1) % size, comm, nullptr);
  expect(ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  float got = -1;
  cudaMemcpy(&got, r, 4, cudaMemcpyDeviceToHost);
  expect(got == float((rank + size - 1) % size), "grouped send/recv ring");
  // A receive of 2 elements matched by a send of 1 is refused.
  if (size >= 2 && rank < 2) {
    ncclGroupStart();
    if (rank == 0)
      ncclSend(s, 1, ncclFloat, 1, comm, nullptr);
    else
      ncclRecv(d, 2, ncclFloat, 0, comm, nullptr);
    ncclResult_t res = ncclGroupEnd();
    expect(rank == 0 ? res == ncclSuccess : res == ncclInvalidUsage,
           "a receive must get exactly its count");
  }
  // Reduce-scatter: in place only as this rank's block (d + 2 rank for
  // blocks of 2); d + 1 is no rank's.
  expect(ncclReduceScatter(d, d + 1, 2, ncclFloat, ncclSum, comm, nullptr) ==
             ncclInvalidArgument,
         "a reduce-scatter overlapping other than in place is refused");
  // Stream order: an all-reduce on stream A is seen by stream B only
  // after B waits for an event recorded on A after it; its buffer may not
  // change before.
  cudaStream_t A, B;
  cudaStreamCreateWithFlags(&A, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&B, cudaStreamNonBlocking);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  float one = 1.0f, seen = 0.0f;
  cudaMemcpy(s, &one, 4, cudaMemcpyHostToDevice);
  ncclAllReduce(s, s, 1, ncclFloat, ncclSum, comm, A);
  cudaMemcpyAsync(&seen, s, 4, cudaMemcpyDeviceToHost, B);
  expect(seen == 1.0f, "an all-reduce's result is not visible to another "
                       "stream that did not wait for it");
  cudaEventRecord(ev, A);
  cudaStreamWaitEvent(B, ev, 0);
  cudaMemcpyAsync(&seen, s, 4, cudaMemcpyDeviceToHost, B);
  expect(seen == float(size), "an all-reduce's result is visible after "
                              "waiting for its stream's event");
  ncclAllReduce(s, s, 1, ncclFloat, ncclSum, comm, A);
  cudaMemsetAsync(s, 0, 4, B); // before anyone waited for A
  cudaGetLastError();
  cudaStreamSynchronize(A);
  expect(cudaGetLastError() == cudaErrorLaunchFailure,
         "a buffer written while an all-reduce on another stream may still "
         "use it is reported");
  // An all-reduce on A of what B wrote needs A to wait for B's event.
  cudaStreamSynchronize(A);
  cudaStreamSynchronize(B);
  cudaMemsetAsync(s, 0, 4, B);
  cudaGetLastError();
  ncclAllReduce(s, s, 1, ncclFloat, ncclSum, comm, A);
  expect(cudaGetLastError() == cudaErrorLaunchFailure,
         "an all-reduce of a buffer another stream wrote, without waiting "
         "for it, is reported");
  cudaStreamSynchronize(A);
  cudaMemsetAsync(s, 0, 4, B);
  cudaEventRecord(ev, B);
  cudaStreamWaitEvent(A, ev, 0);
  ncclAllReduce(s, s, 1, ncclFloat, ncclSum, comm, A);
  expect(cudaGetLastError() == cudaSuccess,
         "the same after waiting for the writer's event");
  cudaStreamSynchronize(A);
  cudaEventDestroy(ev);
  cudaStreamDestroy(A);
  cudaStreamDestroy(B);
  // Broadcast: from the last rank's own buffer into everyone's, then in
  // place from rank 0; only the root's send buffer is read.
  float *src = deviceAlloc<float>(3), *dst = deviceAlloc<float>(3);
  const int root = size - 1;
  const float three[3] = {7.0f, 8.0f, float(rank)};
  cudaMemcpy(rank == root ? src : dst, three, 12, cudaMemcpyHostToDevice);
  expect(ncclBroadcast(rank == root ? src : nullptr, dst, 3, ncclFloat, root,
                       comm, nullptr) == ncclSuccess,
         "ncclBroadcast");
  float back[3] = {};
  cudaMemcpy(back, dst, 12, cudaMemcpyDeviceToHost);
  expect(back[0] == 7.0f && back[1] == 8.0f && back[2] == float(root),
         "ncclBroadcast from the last rank");
  expect(ncclBroadcast(dst, dst, 3, ncclFloat, 0, comm, nullptr) ==
             ncclSuccess,
         "in-place ncclBroadcast");
  expect(ncclBroadcast(dst, dst, 3, ncclFloat, size, comm, nullptr) ==
             ncclInvalidArgument,
         "a broadcast from a root outside the communicator is refused");
  cudaFree(src);
  cudaFree(dst);
  // Split: one colour, keys reversed (NCCL ranks by key); then rank 0 out
  // (NCCL_SPLIT_NOCOLOR: a null communicator).
  ncclComm_t sub = nullptr;
  int count = 0, subRank = -1;
  expect(ncclCommSplit(comm, 3, size - 1 - rank, &sub, nullptr) ==
                 ncclSuccess &&
             ncclCommCount(sub, &count) == ncclSuccess &&
             ncclCommUserRank(sub, &subRank) == ncclSuccess &&
             count == size && subRank == size - 1 - rank,
         "ncclCommSplit ranks the members by key");
  cudaMemcpy(s, &one, 4, cudaMemcpyHostToDevice);
  ncclAllReduce(s, s, 1, ncclFloat, ncclSum, sub, nullptr);
  cudaMemcpy(&seen, s, 4, cudaMemcpyDeviceToHost);
  expect(seen == float(size), "an all-reduce on a split communicator");
  ncclCommDestroy(sub);
  sub = reinterpret_cast<ncclComm_t>(&count);
  expect(ncclCommSplit(comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 0, 0, &sub,
                       nullptr) == ncclSuccess &&
             (rank == 0) == (sub == nullptr),
         "NCCL_SPLIT_NOCOLOR gives no communicator");
  if (sub) {
    expect(ncclCommCount(sub, &count) == ncclSuccess && count == size - 1,
           "the other ranks' communicator");
    ncclCommDestroy(sub);
  }
  expect(ncclCommSplit(comm, -5, 0, &sub, nullptr) == ncclInvalidArgument,
         "a negative colour other than NCCL_SPLIT_NOCOLOR is refused");
  std::vector<float> hostBuf(4);
  expect(ncclAllReduce(hostBuf.data(), hostBuf.data(), 4, ncclFloat, ncclSum,
                       comm, nullptr) == ncclInvalidArgument,
         "a host buffer given to NCCL is refused");
  ncclCommDestroy(comm);
  cudaFree(s);
  cudaFree(r);
  cudaFree(d);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  kernels();
  blas();
  nccl(rank, size);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("emu self-test: %s (%d failed checks over %d ranks)\n",
                total == 0 ? "PASSED" : "FAILED", total, size);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
