//===- Cluster.h - Cluster topology: node groups, links, presets -*- C++ -*-===//
//
// A cluster is one or more groups of identical nodes. A "node" here is a
// scale-up domain: the GPUs joined by NVLink/NVSwitch (or xGMI, or PCIe):
// 8 for a DGX, 72 for a GB200 NVL72 rack. Nodes talk through their NICs,
// which the GPUs of a node share. Groups of different GPU types make a
// heterogeneous cluster; groups are joined by `interGroup`.
//
// Bandwidths are achievable figures (nccl-tests bus bandwidth, bytes/s),
// not line rates; latencies are per hop as in NCCL's tuning model
// (src/graph/tuning.cc, Simple protocol). See docs/hardware.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_HARDWARE_CLUSTER_H
#define TRIDENT_HARDWARE_CLUSTER_H

#include "trident/Hardware/Gpu.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

/// Collective operations (Collectives.h models their time).
enum class CollectiveOp : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  SendRecv
};
/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv".
std::string_view collectiveOpName(CollectiveOp op);

/// Whether a communication group stays inside one node or crosses nodes.
enum class CommScope : uint8_t { IntraNode, InterNode };

/// A measured collective bus bandwidth at one message size.
struct CollectiveCalibrationPoint {
  CollectiveOp op = CollectiveOp::AllReduce;
  CommScope scope = CommScope::IntraNode;
  double bytes = 0;             ///< message size as nccl-tests counts it
  double busBwBytesPerS = 0;    ///< measured bus bandwidth
};

/// A bandwidth with a per-hop latency.
struct LinkSpec {
  double bandwidthBytesPerS = 0;
  double latencySeconds = 0;
};

/// Identical nodes of one GPU type.
struct NodeGroup {
  std::string name;
  GpuSpec gpu;
  int64_t nodes = 1;
  int64_t gpusPerNode = 8; ///< scale-up domain size
  /// Inside a node: all-reduce bus bandwidth per GPU; per-hop latency.
  LinkSpec intra;
  /// Inside a node: all-to-all bus bandwidth per GPU.
  double intraAllToAllBytesPerS = 0;
  /// Network: NICs per node (shared by the node's GPUs), achievable
  /// bandwidth of one NIC in one direction, per-hop latency.
  int64_t nicsPerNode = 0;
  LinkSpec nic;
  /// Measured collective bandwidths (Calibration.h); empty by default.
  std::vector<CollectiveCalibrationPoint> collectiveCalibration;

  int64_t gpus() const { return nodes * gpusPerNode; }
  /// Network bandwidth of a node, all NICs together.
  double nodeNetworkBytesPerS() const {
    return double(nicsPerNode) * nic.bandwidthBytesPerS;
  }
};

/// The whole machine. GPUs are numbered group by group, node by node.
struct Cluster {
  std::string name;
  std::vector<NodeGroup> groups;
  /// Between groups (heterogeneous clusters); defaults to the slower
  /// group's NIC.
  LinkSpec interGroup;

  int64_t totalGpus() const;
  bool homogeneous() const { return groups.size() == 1; }
  /// Group holding global GPU index `gpu` (0-based); -1 when out of range.
  int64_t groupOfGpu(int64_t gpu) const;
  /// First global GPU index of group `g`.
  int64_t firstGpuOfGroup(int64_t g) const;
};

/// Names of the built-in presets ("dgx-a100-40gb", "dgx-h100", ...).
std::span<const std::string_view> clusterPresetNames();

/// A preset's node group with `nodes` nodes; error for an unknown name.
Result<NodeGroup> presetNodeGroup(std::string_view preset, int64_t nodes);

/// Parses "NAME:NODES" (e.g. "dgx-h100:32"; ":NODES" defaults to 1).
Result<Cluster> parseClusterSpec(std::string_view spec);

/// Parses a cluster.json text (schema in docs/hardware.md); `source` names
/// the input in error messages.
Result<Cluster> parseClusterJson(std::string_view text,
                                 std::string_view source = "cluster.json");

/// Reads and parses a cluster.json file.
Result<Cluster> loadClusterFile(const std::string &path);

/// A "NAME:NODES" spec or a path to a cluster.json (anything ending in
/// ".json" or naming an existing file).
Result<Cluster> loadCluster(std::string_view specOrPath);

/// Checks every number of a cluster (positive, finite) and the GPU specs.
Status validateCluster(const Cluster &cluster);

} // namespace trident

#endif // TRIDENT_HARDWARE_CLUSTER_H
