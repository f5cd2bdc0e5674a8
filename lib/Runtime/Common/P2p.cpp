//===- P2p.cpp - Pipeline point-to-point with NCCL's group semantics ------===//
//
// sendAsync queues a copy of the tensor; nothing moves yet. The rank's next
// recv issues the queued sends and the receive together as one group, and
// every other communication call (collectives, waitAllSends, the step
// report) first issues the queued sends as a group of their own. This is
// what the CUDA backend does with ncclGroupStart / ncclSend... ncclRecv /
// ncclGroupEnd on its one communication stream, where a group finishes only
// when every send has met its receive and the receive has its data.
//
// The CPU backend (and the CUDA backend where the pp group shares a GPU)
// runs the same groups over MPI with the same blocking rule: synchronous
// sends (MPI_Issend, complete only once the receiver matched them) and the
// receive, waited for together. So a schedule that deadlocks on NCCL
// deadlocks on the CPU twin too, and the end-to-end tests show the
// schedules do not. NCCL pairs the sends and receives of two ranks in issue
// order and knows no tags; the MPI path receives with MPI_ANY_TAG and
// rejects a message whose tag is not the one the program asked for, so a
// schedule that relies on tags to reorder messages fails on the CPU twin
// with a message instead of silently swapping tensors on GPUs.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"

#include <limits>

namespace trident::rt {

using detail::check;

namespace {
std::vector<detail::QueuedSend> queued;

void checkPeer(const Group::Impl &G, int peer, int tag, const char *fn) {
  check(peer >= 0 && peer < G.size && peer != G.rank, fn,
        "peer " + std::to_string(peer) + " is not another member of group '" +
            G.name + "' (size " + std::to_string(G.size) + ")");
  check(tag >= 0 && tag <= 32767, fn,
        "tag " + std::to_string(tag) + " outside [0, 32767]");
}

int mpiCount(int64_t n, const char *fn) {
  check(n <= int64_t(std::numeric_limits<int>::max()), fn,
        std::to_string(n) + " elements exceed one MPI message");
  return static_cast<int>(n);
}

/// Cancels and completes the requests still active, so that an error can
/// unwind (freeing their buffers) without MPI still using them.
void abandon(std::vector<MPI_Request> &requests) {
  for (MPI_Request &r : requests)
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

std::string mpiText(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, len);
}

/// Issues the queued sends and `recvInto` (may be null) as one group.
void exchange(Tensor *recvInto, int peer, int tag, Group::Impl *G,
              const char *fn) {
  std::vector<detail::QueuedSend> sends;
  sends.swap(queued);
  detail::backendExchange(sends, recvInto, peer, tag, G, fn);
}
} // namespace

void sendAsync(const Tensor &t, int peer, int tag, const Group &g) {
  const char *fn = "sendAsync";
  Group::Impl &G = detail::memberImpl(g, fn);
  checkPeer(G, peer, tag, fn);
  // The copy lets the caller overwrite `t` at once.
  queued.push_back({t.clone(), peer, tag, g});
}

void recv(Tensor &t, int peer, int tag, const Group &g) {
  const char *fn = "recv";
  Group::Impl &G = detail::memberImpl(g, fn);
  checkPeer(G, peer, tag, fn);
  exchange(&t, peer, tag, &G, fn);
}

void waitAllSends() { detail::flushSends("waitAllSends"); }

bool sendsQueued() { return !queued.empty(); }

namespace detail {

void flushSends(const char *fn) {
  if (!queued.empty())
    exchange(nullptr, 0, 0, nullptr, fn);
}

Group::Impl &collectiveImpl(const Group &g, const char *fn) {
  flushSends(fn);
  return memberImpl(g, fn);
}

void mpiExchange(std::vector<QueuedSend> &sends, Tensor *recvInto, int peer,
                 int tag, Group::Impl *G, const char *fn) {
  // Sizes first: nothing is posted when one cannot be.
  for (const QueuedSend &s : sends)
    mpiCount(s.copy.numel(), fn);
  if (recvInto)
    mpiCount(recvInto->numel(), fn);
  std::vector<std::vector<float>> data(sends.size());
  std::vector<MPI_Request> requests(sends.size() + (recvInto ? 1 : 0),
                                    MPI_REQUEST_NULL);
  for (size_t i = 0; i < sends.size(); ++i) {
    QueuedSend &s = sends[i];
    data[i] = s.copy.toHost();
    int rc = MPI_Issend(data[i].data(), static_cast<int>(s.copy.numel()),
                        MPI_FLOAT, s.peer, s.tag, s.impl().comm, &requests[i]);
    if (rc != MPI_SUCCESS) {
      abandon(requests);
      fail(fn, "MPI_Issend to peer " + std::to_string(s.peer) +
                   " failed on group '" + s.impl().name + "': " + mpiText(rc));
    }
  }
  std::vector<float> got;
  if (recvInto) {
    got.resize(size_t(recvInto->numel()));
    int rc = MPI_Irecv(got.data(), static_cast<int>(recvInto->numel()), MPI_FLOAT,
                       peer, MPI_ANY_TAG, G->comm, &requests.back());
    if (rc != MPI_SUCCESS) {
      abandon(requests);
      fail(fn, "MPI_Irecv from peer " + std::to_string(peer) +
                   " failed on group '" + G->name + "': " + mpiText(rc));
    }
  }
  std::vector<MPI_Status> status(requests.size());
  int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                       status.data());
  if (rc != MPI_SUCCESS) {
    std::string what = "MPI_Waitall failed: " + mpiText(rc);
    for (size_t i = 0; rc == MPI_ERR_IN_STATUS && i < status.size(); ++i) {
      int e = status[i].MPI_ERROR;
      if (e == MPI_SUCCESS || e == MPI_ERR_PENDING)
        continue;
      bool isRecv = recvInto && i + 1 == status.size();
      what = isRecv ? "receiving a tensor " + recvInto->shapeString() +
                          " from peer " + std::to_string(peer) +
                          " of group '" + G->name + "'"
                    : "sending to peer " + std::to_string(sends[i].peer) +
                          " of group '" + sends[i].impl().name + "'";
      what += ": " + mpiText(e);
      break;
    }
    abandon(requests); // those still pending, before their buffers go
    fail(fn, what);
  }
  if (!recvInto)
    return;
  const MPI_Status &st = status.back();
  check(st.MPI_TAG == tag, fn,
        "the next message from peer " + std::to_string(peer) + " of group '" +
            G->name + "' has tag " + std::to_string(st.MPI_TAG) +
            ", not the awaited " + std::to_string(tag) +
            ": NCCL pairs a rank pair's sends and receives in issue order, so "
            "a schedule must receive them in the order they were sent");
  int count = 0;
  MPI_Get_count(&st, MPI_FLOAT, &count);
  check(count == recvInto->numel(), fn,
        "received " + std::to_string(count) + " values from peer " +
            std::to_string(peer) + " for a tensor " +
            recvInto->shapeString());
  recvInto->fromHost(got);
}

} // namespace detail
} // namespace trident::rt
