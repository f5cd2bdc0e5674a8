//===- Collectives.cpp - alpha-beta collective model over a topology ------===//
//
// NCCL constants (src/graph/tuning.cc @5067397c == v2.30.7-1, HW §3.3):
// base latency Ring LL 6.6 / Simple 8.4 us, Tree LL 6.8 / Simple 8.4 us;
// per-hop latency (cluster's LinkSpec holds the Ring/Simple value: NVLink
// 3.4, NET 14 us) scaled for the other algorithm/protocol by NCCL's own
// ratios: Ring LL NVLink 0.6 / NET 2.7; Tree Simple NVLink 4.0 / NET 14;
// Tree LL NVLink 0.6 / NET 5.0. LL moves 4 B of data per 8 B store, so its
// bandwidth is half (tuning.cc: "min(llMaxBw, 0.5 busBw)"); Tree all-reduce
// moves 2S per GPU (sjeaugey, NVIDIA/nccl#457).
//
//===----------------------------------------------------------------------===//

#include "trident/Cost/Collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trident {

namespace {
constexpr double us = 1e-6;
constexpr double kRingBase[2] = {6.6 * us, 8.4 * us}; // LL, Simple
constexpr double kTreeBase[2] = {6.8 * us, 8.4 * us};
// Per-hop latency relative to Ring/Simple (NVLink 3.4, NET 14).
constexpr double kRingIntraScale[2] = {0.6 / 3.4, 1.0};
constexpr double kRingInterScale[2] = {2.7 / 14.0, 1.0};
constexpr double kTreeIntraScale[2] = {0.6 / 3.4, 4.0 / 3.4};
constexpr double kTreeInterScale[2] = {5.0 / 14.0, 1.0};
constexpr double kProtoBw[2] = {0.5, 1.0};
} // namespace

std::string_view collectiveAlgoName(CollectiveAlgo a) {
  switch (a) {
  case CollectiveAlgo::Auto:
    return "auto";
  case CollectiveAlgo::Ring:
    return "ring";
  case CollectiveAlgo::Tree:
    return "tree";
  case CollectiveAlgo::Hierarchical:
    return "hierarchical";
  }
  return "?";
}

CommGroupShape groupShape(const NodeGroup &hw, int64_t size, int64_t stride) {
  CommGroupShape s;
  s.size = std::max<int64_t>(size, 1);
  stride = std::max<int64_t>(stride, 1);
  int64_t perNode = hw.gpusPerNode / stride; // members that fit in a node
  s.ranksPerNode = std::clamp<int64_t>(perNode, 1, s.size);
  // A group of one node holds every member, whatever the stride: with 3
  // GPUs a node, the first and last of 3 pipeline stages (stride 2) share
  // it. Counting them as one per node sent their sum over a network that a
  // one-node cluster.json need not describe (0 bytes/s: an infinite time).
  if (hw.nodes <= 1)
    s.ranksPerNode = s.size;
  return s;
}

double busBandwidthFactor(CollectiveOp op, int64_t n) {
  if (n <= 1)
    return 0;
  double dn = double(n);
  switch (op) {
  case CollectiveOp::AllReduce:
    return 2 * (dn - 1) / dn;
  case CollectiveOp::AllGather:
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllToAll:
    return (dn - 1) / dn;
  case CollectiveOp::SendRecv:
    return 1;
  }
  return 1;
}

namespace {
/// Log-size interpolation of measured bus bandwidth; 0 when none applies.
double calibratedBusBw(const NodeGroup &hw, CollectiveOp op, CommScope scope,
                       double bytes) {
  const CollectiveCalibrationPoint *lo = nullptr, *hi = nullptr;
  for (const CollectiveCalibrationPoint &p : hw.collectiveCalibration) {
    if (p.op != op || p.scope != scope)
      continue;
    if (p.bytes <= bytes && (!lo || p.bytes > lo->bytes))
      lo = &p;
    if (p.bytes >= bytes && (!hi || p.bytes < hi->bytes))
      hi = &p;
  }
  if (!lo && !hi)
    return 0;
  if (!lo)
    return hi->busBwBytesPerS;
  if (!hi || hi->bytes == lo->bytes)
    return lo->busBwBytesPerS;
  double f = std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
  return lo->busBwBytesPerS + f * (hi->busBwBytesPerS - lo->busBwBytesPerS);
}
} // namespace

CollectiveTime collectiveTime(const NodeGroup &hw, CollectiveOp op,
                              double bytes, const CommGroupShape &g,
                              CollectiveAlgo algo) {
  CollectiveTime best;
  int64_t n = g.size;
  if (n <= 1 || bytes <= 0)
    return best;
  int64_t ppn = std::clamp<int64_t>(g.ranksPerNode, 1, n);
  int64_t k = g.nodes();
  double dn = double(n), dk = double(k), dppn = double(ppn);
  double factor = busBandwidthFactor(op, n);
  bool multiNode = k > 1;

  // Bandwidths (bytes/s per rank).
  double intraBw = op == CollectiveOp::AllToAll ? hw.intraAllToAllBytesPerS
                                                : hw.intra.bandwidthBytesPerS;
  // This rank's share of the node's NICs (all G GPUs communicate at once).
  double nicPerRank = hw.nodeNetworkBytesPerS() / double(hw.gpusPerNode);
  // A flat ring leaves each node once per channel: the group's node-level
  // outbound traffic equals one rank's, over the group's NIC share.
  double interRingBw = dppn * nicPerRank;
  double intraLat = hw.intra.latencySeconds, interLat = hw.nic.latencySeconds;

  // Calibration: measured busbw at this size replaces the model.
  CommScope scope = multiNode ? CommScope::InterNode : CommScope::IntraNode;
  if (double cb = calibratedBusBw(hw, op, scope, bytes); cb > 0) {
    best.bandwidthSeconds = factor * bytes / cb;
    best.latencySeconds = 0; // measured busbw already includes it
    best.seconds = best.bandwidthSeconds;
    best.algo = CollectiveAlgo::Ring;
    return best;
  }

  best.seconds = std::numeric_limits<double>::infinity();
  auto consider = [&](CollectiveAlgo a, double lat, double bw) {
    if (lat + bw < best.seconds) {
      best.seconds = lat + bw;
      best.latencySeconds = lat;
      best.bandwidthSeconds = bw;
      best.algo = a;
    }
  };

  if (op == CollectiveOp::AllToAll) {
    // Pairwise exchange: intra-node peers over NVLink, remote peers over
    // this rank's NIC share ("Alltoall cannot aggregate the bandwidth of
    // multiple NICs", sjeaugey, nccl-tests#267).
    double local = bytes * (dppn - 1) / dn / intraBw;
    double remote = multiNode ? bytes * (dn - dppn) / dn / nicPerRank : 0;
    double lat = kRingBase[1] + (multiNode ? interLat : intraLat);
    consider(CollectiveAlgo::Ring, lat, std::max(local, remote));
    return best;
  }
  if (op == CollectiveOp::SendRecv) {
    double bw = multiNode ? nicPerRank : intraBw;
    consider(CollectiveAlgo::Ring, kRingBase[1] + (multiNode ? interLat : intraLat),
             bytes / bw);
    return best;
  }

  double steps = op == CollectiveOp::AllReduce ? 2 * (dn - 1) : dn - 1;
  double interSteps =
      multiNode ? (op == CollectiveOp::AllReduce ? 2 * (dk - 1) : dk - 1) : 0;
  for (int proto = 0; proto < 2; ++proto) {
    double pbw = kProtoBw[proto];
    if (algo == CollectiveAlgo::Auto || algo == CollectiveAlgo::Ring) {
      double ringBw = multiNode ? std::min(intraBw, interRingBw) : intraBw;
      if (ppn == 1 && multiNode)
        ringBw = interRingBw;
      double lat = kRingBase[proto] +
                   (steps - interSteps) * intraLat * kRingIntraScale[proto] +
                   interSteps * interLat * kRingInterScale[proto];
      consider(CollectiveAlgo::Ring, lat, factor * bytes / (ringBw * pbw));
    }
    if (op == CollectiveOp::AllReduce &&
        (algo == CollectiveAlgo::Auto || algo == CollectiveAlgo::Tree)) {
      // Chain inside the node, double binary tree across nodes; 2S per GPU.
      double treeBw = multiNode ? std::min(intraBw, interRingBw) : intraBw;
      if (ppn == 1 && multiNode)
        treeBw = interRingBw;
      double lat = kTreeBase[proto] +
                   2 * ((dppn - 1) * intraLat * kTreeIntraScale[proto] +
                        std::log2(dk) * interLat * kTreeInterScale[proto]);
      consider(CollectiveAlgo::Tree, lat, 2 * bytes / (treeBw * pbw));
    }
    if (multiNode && ppn > 1 &&
        (algo == CollectiveAlgo::Auto || algo == CollectiveAlgo::Hierarchical)) {
      // Intra RS -> inter op on 1/ppn of the data (each rank on its own NIC
      // share, all ranks in parallel) -> intra AG; phases in sequence.
      double intraFactor = (dppn - 1) / dppn;
      double intraPhases = op == CollectiveOp::AllReduce ? 2 : 1;
      double interFactor = op == CollectiveOp::AllReduce ? 2 * (dk - 1) / dk
                                                         : (dk - 1) / dk;
      double bw = intraPhases * intraFactor * bytes / (intraBw * pbw) +
                  interFactor * (bytes / dppn) / (nicPerRank * pbw);
      double lat = kRingBase[proto] +
                   intraPhases * (dppn - 1) * intraLat * kRingIntraScale[proto] +
                   interSteps * interLat * kRingInterScale[proto];
      consider(CollectiveAlgo::Hierarchical, lat, bw);
    }
  }
  return best;
}

double expectedDistinctGroups(int64_t experts, int64_t topK, int64_t groups) {
  if (groups <= 1 || experts <= 0 || topK <= 0)
    return groups >= 1 && topK > 0 ? 1.0 : 0.0;
  // P(a given group holds none of the k picks) = C(E - E/g, k) / C(E, k).
  double perGroup = double(experts) / double(groups);
  double none = 1;
  for (int64_t i = 0; i < topK; ++i) {
    double num = double(experts) - perGroup - double(i);
    if (num <= 0) {
      none = 0;
      break;
    }
    none *= num / (double(experts) - double(i));
  }
  return double(groups) * (1 - none);
}

double flexDispatchSeconds(const NodeGroup &hw, double tokenBytes,
                           int64_t experts, int64_t topK,
                           const CommGroupShape &g) {
  int64_t n = g.size;
  if (n <= 1 || tokenBytes <= 0 || topK <= 0)
    return 0;
  int64_t ppn = std::clamp<int64_t>(g.ranksPerNode, 1, n);
  int64_t nodes = g.nodes();
  double ranks = expectedDistinctGroups(experts, topK, n);
  // NVLink: a copy for each destination rank, sent directly or forwarded
  // by the GPU that received it from another node; with the load even,
  // a rank moves as many as its own tokens need, (ppn - 1)/ppn of them to
  // another GPU of the node.
  double intra = tokenBytes * ranks * double(ppn - 1) / double(ppn) /
                 hw.intraAllToAllBytesPerS;
  double inter = 0;
  if (nodes > 1) {
    // InfiniBand: one copy for each other node holding a chosen expert.
    double nodeHits = expectedDistinctGroups(experts, topK, nodes);
    double remote = nodeHits * double(nodes - 1) / double(nodes);
    double nicPerRank = hw.nodeNetworkBytesPerS() / double(hw.gpusPerNode);
    inter = tokenBytes * remote / nicPerRank;
  }
  double lat = nodes > 1 ? hw.nic.latencySeconds : hw.intra.latencySeconds;
  return lat + std::max(intra, inter);
}

double p2pSeconds(const NodeGroup &hw, double bytes, bool sameNode) {
  if (bytes <= 0)
    return 0;
  if (sameNode)
    return hw.intra.latencySeconds + bytes / hw.intra.bandwidthBytesPerS;
  double nicPerRank = hw.nodeNetworkBytesPerS() / double(hw.gpusPerNode);
  return hw.nic.latencySeconds + bytes / nicPerRank;
}

} // namespace trident
