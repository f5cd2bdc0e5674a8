//===- nccl.h - The NCCL calls of lib/Runtime/Cuda, over MPI -------*- C++ -*-===//
//
// Part of the CUDA emulation (cuda_runtime.h). A communicator is an MPI
// communicator of its ranks, built by ncclCommInitRank from the unique id
// (which names the MPI rank that created it), which refuses two ranks on
// one GPU as NCCL does, or by ncclCommSplit from a parent's. Collectives
// and grouped send/receive run at the call on device (cudaMalloc)
// buffers, checked to lie inside their blocks. Between ncclGroupStart and
// ncclGroupEnd the calls are queued; ncclGroupEnd posts every receive and
// send, then waits.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_NCCL_H
#define TRIDENT_CUDA_EMU_NCCL_H

#include "cuda_runtime.h"

enum ncclResult_t {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};
enum ncclDataType_t { ncclInt32 = 2, ncclFloat = 7 };
enum ncclRedOp_t { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 };

/// ncclCommSplit's colour for a rank that joins no new communicator.
#define NCCL_SPLIT_NOCOLOR -1

/// Communicator options; the emulation takes none (null: the parent's).
struct ncclConfig_t;

struct ncclUniqueId {
  char internal[128];
};
struct ncclComm;
using ncclComm_t = ncclComm *;

const char *ncclGetErrorString(ncclResult_t r);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *config);
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t s);
ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t s);
ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t s);

#endif // TRIDENT_CUDA_EMU_NCCL_H
