//===- Collectives.h - Collective communication time -----------*- C++ -*-===//
//
// alpha-beta time of NCCL-style collectives over a node group's topology:
// ring (pipelined over NVLink and the network, bandwidth = the slower of
// the two), double-binary tree (all-reduce; log latency across nodes) and
// hierarchical (intra reduce-scatter, inter all-reduce, intra all-gather).
// The busbw factors are nccl-tests' (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n,
// send/recv 1. Latencies follow NCCL's tuning model (base + hops x per-hop
// latency, LL and Simple protocols). The GPUs of a node share its NICs:
// a group with r ranks per node gets r/G of the node's NIC bandwidth, since
// the other G/r groups of the same axis communicate at the same time.
// See docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_COLLECTIVES_H
#define TRIDENT_COST_COLLECTIVES_H

#include "trident/Hardware/Cluster.h"

#include <cstdint>
#include <string_view>

namespace trident {

enum class CollectiveAlgo : uint8_t { Auto, Ring, Tree, Hierarchical };
std::string_view collectiveAlgoName(CollectiveAlgo a);

/// How a communication group sits on the nodes of one NodeGroup.
struct CommGroupShape {
  int64_t size = 1;         ///< ranks in the group
  int64_t ranksPerNode = 1; ///< ranks of the group inside one node
  int64_t nodes() const {
    return ranksPerNode > 0 ? (size + ranksPerNode - 1) / ranksPerNode : 1;
  }
};

/// Shape of a group of `size` ranks whose consecutive members are
/// `stride` GPUs apart (Megatron rank order: tp innermost, then cp, dp, pp).
CommGroupShape groupShape(const NodeGroup &hw, int64_t size, int64_t stride);

/// nccl-tests bus-bandwidth factor of `op` over n ranks.
double busBandwidthFactor(CollectiveOp op, int64_t n);

struct CollectiveTime {
  double seconds = 0;
  double latencySeconds = 0;   ///< the alpha part
  double bandwidthSeconds = 0; ///< the beta part
  CollectiveAlgo algo = CollectiveAlgo::Ring;
};

/// Time of one collective moving `bytes` as nccl-tests counts them (the
/// all-reduce buffer; the full gathered / scattered buffer for all-gather
/// and reduce-scatter; the per-rank send buffer for all-to-all; the message
/// for send/recv) over `group` on `hw`. Auto picks the fastest algorithm
/// and protocol, as NCCL's tuner does. Calibration points of `hw` for the
/// op and scope replace the modelled bandwidth.
CollectiveTime collectiveTime(const NodeGroup &hw, CollectiveOp op,
                              double bytes, const CommGroupShape &group,
                              CollectiveAlgo algo = CollectiveAlgo::Auto);

inline double collectiveSeconds(const NodeGroup &hw, CollectiveOp op,
                                double bytes, const CommGroupShape &group,
                                CollectiveAlgo algo = CollectiveAlgo::Auto) {
  return collectiveTime(hw, op, bytes, group, algo).seconds;
}

/// Expected number of distinct groups that `topK` experts chosen uniformly
/// without replacement from `experts`, held evenly by `groups` groups
/// (ranks or nodes), fall in: groups x (1 - C(E - E/g, k) / C(E, k)).
/// Force-balanced routing draws experts this way; learned routing with a
/// balancing loss approaches it.
double expectedDistinctGroups(int64_t experts, int64_t topK, int64_t groups);

/// One direction (dispatch or combine) of a node-aware expert-parallel
/// token exchange: DeepEP's normal kernels (DeepSeek-AI 2025, "DeepSeek-V3
/// Technical Report", Sec. 3.2.2: a token crosses InfiniBand once to each
/// node that holds one of its experts, to the GPU with the same in-node
/// index, and is forwarded over NVLink to the GPUs that need it; RDMA and
/// NVLink forwarding pipelined) and NVIDIA's HybridEP, which
/// Megatron-Core runs as --moe-token-dispatcher-type flex. A token is sent
/// once per destination rank, not once per chosen expert as the
/// all-to-all dispatcher's permutation does. `tokenBytes`: one copy of
/// this rank's tokens; `group`: the expert-parallel group.
double flexDispatchSeconds(const NodeGroup &hw, double tokenBytes,
                           int64_t experts, int64_t topK,
                           const CommGroupShape &group);

/// Point-to-point transfer of `bytes` between two GPUs of `hw`, inside a
/// node or across nodes (all GPUs of the node sending at once share NICs).
double p2pSeconds(const NodeGroup &hw, double bytes, bool sameNode);

} // namespace trident

#endif // TRIDENT_COST_COLLECTIVES_H
