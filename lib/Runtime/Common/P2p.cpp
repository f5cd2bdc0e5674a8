//===- P2p.cpp - Pipeline point-to-point with NCCL's group semantics ------===//
//
// sendAsync queues a copy of the tensor; nothing moves yet. exchangeStep
// issues the queued sends and the receives it is given together as one
// group and keeps what arrives until recv takes it; a recv of something no
// exchange brought issues the queued sends and that one receive as a group.
// waitAllSends and the step report issue the queued sends as a group of
// their own, and so does a collective over a group that includes the
// receiver of a queued send; other collectives leave the sends queued for
// the step's exchange (a pipeline stage's tp, cp, dp and ep collectives
// never include its pp neighbours). This is what the CUDA backend does with
// ncclGroupStart / ncclSend... ncclRecv... / ncclGroupEnd on its one
// communication stream, where a group finishes only when every send has
// met its receive and every receive has its data.
//
// The CPU backend (and the CUDA backend where the pp group shares a GPU)
// runs the same groups over MPI with the same blocking rule: synchronous
// sends (MPI_Issend, complete only once the receiver matched them) and the
// receives, waited for together. So a grouping that deadlocks on NCCL
// deadlocks on the CPU twin too, and the end-to-end tests show the
// programs' groupings (the Schedule library's transferSteps) do not. NCCL
// pairs the sends and receives of two ranks in issue order and knows no
// tags; the MPI path receives with MPI_ANY_TAG and rejects a message whose
// tag is not the one the program asked for, so a schedule that relies on
// tags to reorder messages fails on the CPU twin with a message instead of
// silently swapping tensors on GPUs.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"

#include <algorithm>
#include <limits>

namespace trident::rt {

using detail::check;

namespace {
std::vector<detail::QueuedSend> queued;

/// What exchangeStep received and no recv has taken yet.
struct Arrived {
  int peer = 0, tag = 0;
  const Group::Impl *G = nullptr;
  Tensor tensor;
};
std::vector<Arrived> arrived;

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

/// Issues the queued sends and `recvs` as one group.
void exchange(std::vector<detail::Receive> &recvs, const char *fn) {
  std::vector<detail::QueuedSend> sends;
  sends.swap(queued);
  detail::backendExchange(sends, recvs, fn);
}

std::vector<Arrived>::iterator findArrived(const Group::Impl &G, int peer,
                                           int tag) {
  return std::find_if(arrived.begin(), arrived.end(), [&](const Arrived &a) {
    return a.G == &G && a.peer == peer && a.tag == tag;
  });
}
} // namespace

void sendAsync(const Tensor &t, int peer, int tag, const Group &g) {
  const char *fn = "sendAsync";
  Group::Impl &G = detail::memberImpl(g, fn);
  checkPeer(G, peer, tag, fn);
  // The copy lets the caller overwrite `t` at once.
  queued.push_back({t.clone(), peer, tag, g});
}

void exchangeStep(const std::vector<Incoming> &incoming, const Group &g) {
  const char *fn = "exchangeStep";
  Group::Impl &G = detail::memberImpl(g, fn);
  if (incoming.empty() && queued.empty())
    return;
  std::vector<Arrived> got;
  for (const Incoming &in : incoming) {
    checkPeer(G, in.peer, in.tag, fn);
    bool twice = findArrived(G, in.peer, in.tag) != arrived.end() ||
                 std::any_of(got.begin(), got.end(), [&](const Arrived &a) {
                   return a.peer == in.peer && a.tag == in.tag;
                 });
    check(!twice, fn,
          "tag " + std::to_string(in.tag) + " from peer " +
              std::to_string(in.peer) + " of group '" + G.name +
              "' is awaited twice (one is not yet taken by recv)");
    got.push_back({in.peer, in.tag, &G, Tensor(in.shape)});
  }
  std::vector<detail::Receive> recvs;
  for (Arrived &a : got)
    recvs.push_back({&a.tensor, a.peer, a.tag, &G});
  exchange(recvs, fn);
  for (Arrived &a : got)
    arrived.push_back(std::move(a));
}

void recv(Tensor &t, int peer, int tag, const Group &g) {
  const char *fn = "recv";
  Group::Impl &G = detail::memberImpl(g, fn);
  checkPeer(G, peer, tag, fn);
  auto it = findArrived(G, peer, tag);
  if (it == arrived.end()) {
    std::vector<detail::Receive> recvs{{&t, peer, tag, &G}};
    exchange(recvs, fn);
    return;
  }
  check(it->tensor.shape() == t.shape(), fn,
        "the tensor exchangeStep received from peer " + std::to_string(peer) +
            " with tag " + std::to_string(tag) + " is " +
            it->tensor.shapeString() + ", not " + t.shapeString());
  t = std::move(it->tensor);
  arrived.erase(it);
}

void waitAllSends() {
  const char *fn = "waitAllSends";
  detail::flushSends(fn);
  if (arrived.empty())
    return;
  const Arrived &a = arrived.front();
  std::string what = std::to_string(arrived.size()) +
                     " received tensor(s) never taken by recv, the first "
                     "from peer " +
                     std::to_string(a.peer) + " of group '" + a.G->name +
                     "' with tag " + std::to_string(a.tag);
  arrived.clear();
  detail::fail(fn, what);
}

bool sendsQueued() { return !queued.empty(); }

namespace detail {

void flushSends(const char *fn) {
  if (queued.empty())
    return;
  std::vector<Receive> none;
  exchange(none, fn);
}

Group::Impl &collectiveImpl(const Group &g, const char *fn) {
  Group::Impl &G = memberImpl(g, fn);
  for (const QueuedSend &s : queued) {
    int to = s.impl().worldRanks.at(size_t(s.peer));
    if (std::find(G.worldRanks.begin(), G.worldRanks.end(), to) !=
        G.worldRanks.end()) {
      flushSends(fn);
      break;
    }
  }
  return G;
}

void mpiExchange(std::vector<QueuedSend> &sends, std::vector<Receive> &recvs,
                 const char *fn) {
  // Sizes first: nothing is posted when one cannot be.
  for (const QueuedSend &s : sends)
    mpiCount(s.copy.numel(), fn);
  for (const Receive &r : recvs)
    mpiCount(r.into->numel(), fn);
  std::vector<std::vector<float>> data(sends.size()), got(recvs.size());
  std::vector<MPI_Request> requests(sends.size() + recvs.size(),
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
  // Receives from one peer match its messages in posting order (MPI's
  // non-overtaking rule), as NCCL pairs them in issue order.
  for (size_t i = 0; i < recvs.size(); ++i) {
    const Receive &r = recvs[i];
    got[i].resize(size_t(r.into->numel()));
    int rc =
        MPI_Irecv(got[i].data(), static_cast<int>(r.into->numel()), MPI_FLOAT,
                  r.peer, MPI_ANY_TAG, r.G->comm, &requests[sends.size() + i]);
    if (rc != MPI_SUCCESS) {
      abandon(requests);
      fail(fn, "MPI_Irecv from peer " + std::to_string(r.peer) +
                   " failed on group '" + r.G->name + "': " + mpiText(rc));
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
      if (i >= sends.size()) {
        const Receive &r = recvs[i - sends.size()];
        what = "receiving a tensor " + r.into->shapeString() + " from peer " +
               std::to_string(r.peer) + " of group '" + r.G->name + "'";
      } else {
        what = "sending to peer " + std::to_string(sends[i].peer) +
               " of group '" + sends[i].impl().name + "'";
      }
      what += ": " + mpiText(e);
      break;
    }
    abandon(requests); // those still pending, before their buffers go
    fail(fn, what);
  }
  for (size_t i = 0; i < recvs.size(); ++i) {
    const Receive &r = recvs[i];
    const MPI_Status &st = status[sends.size() + i];
    check(st.MPI_TAG == r.tag, fn,
          "the next message from peer " + std::to_string(r.peer) +
              " of group '" + r.G->name + "' has tag " +
              std::to_string(st.MPI_TAG) + ", not the awaited " +
              std::to_string(r.tag) +
              ": NCCL pairs a rank pair's sends and receives in issue order, "
              "so a schedule must receive them in the order they were sent");
    int count = 0;
    MPI_Get_count(&st, MPI_FLOAT, &count);
    check(count == r.into->numel(), fn,
          "received " + std::to_string(count) + " values from peer " +
              std::to_string(r.peer) + " for a tensor " +
              r.into->shapeString());
  }
  for (size_t i = 0; i < recvs.size(); ++i)
    recvs[i].into->fromHost(got[i]);
}

} // namespace detail
} // namespace trident::rt
