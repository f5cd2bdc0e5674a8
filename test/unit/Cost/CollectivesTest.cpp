//===- CollectivesTest.cpp - Collective formulas vs. hand calculations ----===//

#include "trident/Cost/Collectives.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace trident;

namespace {
constexpr double us = 1e-6;
constexpr double GiB = 1024.0 * 1024 * 1024;
} // namespace

TEST_CASE("nccl-tests bus bandwidth factors", "[cost][collectives]") {
  CHECK(busBandwidthFactor(CollectiveOp::AllReduce, 8) == Approx(2 * 7.0 / 8));
  CHECK(busBandwidthFactor(CollectiveOp::AllGather, 8) == Approx(7.0 / 8));
  CHECK(busBandwidthFactor(CollectiveOp::ReduceScatter, 4) == Approx(3.0 / 4));
  CHECK(busBandwidthFactor(CollectiveOp::AllToAll, 16) == Approx(15.0 / 16));
  CHECK(busBandwidthFactor(CollectiveOp::SendRecv, 2) == 1);
  CHECK(busBandwidthFactor(CollectiveOp::AllReduce, 1) == 0);
}

TEST_CASE("ring all-reduce inside a DGX A100 node", "[cost][collectives]") {
  NodeGroup hw = parseClusterSpec("dgx-a100-80gb:1")->groups[0];
  CommGroupShape g = groupShape(hw, 8, 1);
  REQUIRE(g.ranksPerNode == 8);
  REQUIRE(g.nodes() == 1);
  // Hand calculation: t = 2(n-1)/n * S / busbw + (8.4 + 2(n-1) * 3.4) us
  // (NCCL Ring/Simple base + 14 NVLink hops).
  double S = 1 * GiB;
  double hand = 2 * 7.0 / 8 * S / 230e9 + (8.4 + 14 * 3.4) * us;
  CollectiveTime ring =
      collectiveTime(hw, CollectiveOp::AllReduce, S, g, CollectiveAlgo::Ring);
  CHECK(ring.seconds == Approx(hand).epsilon(1e-9));
  // At 1 GiB the tuner picks the ring too.
  CollectiveTime best = collectiveTime(hw, CollectiveOp::AllReduce, S, g);
  CHECK(best.algo == CollectiveAlgo::Ring);
  CHECK(best.seconds == Approx(hand));
  // Effective busbw ~ 230 GB/s (nccl-tests#149).
  double busbw = 2 * 7.0 / 8 * S / best.seconds;
  CHECK(busbw == Approx(230e9).epsilon(0.01));
  // Small message: latency-bound, LL protocol: 6.6 + 14 * 0.6 = 15 us
  // (HW §3.3 worked example) plus the LL half-rate bandwidth term.
  double small = 1024;
  CollectiveTime s = collectiveTime(hw, CollectiveOp::AllReduce, small, g,
                                    CollectiveAlgo::Ring);
  CHECK(s.latencySeconds == Approx(15.0 * us));
  CHECK(s.bandwidthSeconds == Approx(2 * 7.0 / 8 * small / (0.5 * 230e9)));
}

TEST_CASE("ring all-reduce across DGX A100 nodes: NICs are the bottleneck",
          "[cost][collectives]") {
  NodeGroup hw = parseClusterSpec("dgx-a100-80gb:4")->groups[0];
  double S = 1 * GiB;
  // All 32 GPUs in one ring: 8 ranks per node share 8 x 24 GB/s NICs:
  // busbw = min(230, 192) = 192 GB/s, NVIDIA's measured DGX A100 value.
  CommGroupShape g = groupShape(hw, 32, 1);
  REQUIRE(g.ranksPerNode == 8);
  REQUIRE(g.nodes() == 4);
  double lat = (8.4 + (62 - 6) * 3.4 + 6 * 14.0) * us;
  double hand = 2 * 31.0 / 32 * S / 192e9 + lat;
  CollectiveTime ring =
      collectiveTime(hw, CollectiveOp::AllReduce, S, g, CollectiveAlgo::Ring);
  CHECK(ring.seconds == Approx(hand).epsilon(1e-9));
  CHECK(collectiveTime(hw, CollectiveOp::AllReduce, S, g).algo ==
        CollectiveAlgo::Ring);
  // Inter-node is slower than intra-node for the same per-rank data.
  double intra = collectiveSeconds(hw, CollectiveOp::AllReduce, S,
                                   groupShape(hw, 8, 1));
  CHECK(ring.seconds > intra);

  // A data-parallel group under tp = 8: one rank per node, its own NIC
  // only (the other 7 groups use the other NICs): 24 GB/s.
  CommGroupShape dp = groupShape(hw, 4, 8);
  REQUIRE(dp.ranksPerNode == 1);
  double handDp = 2 * 3.0 / 4 * S / 24e9 + (8.4 + 6 * 14.0) * us;
  CHECK(collectiveSeconds(hw, CollectiveOp::AllReduce, S, dp,
                          CollectiveAlgo::Ring) == Approx(handDp));
  // Tree: log latency across nodes; for small messages across many nodes
  // it beats the ring.
  NodeGroup big = parseClusterSpec("dgx-h100:64")->groups[0];
  CommGroupShape wide = groupShape(big, 64, 8);
  double tiny = 64 * 1024;
  CHECK(collectiveSeconds(big, CollectiveOp::AllReduce, tiny, wide,
                          CollectiveAlgo::Tree) <
        collectiveSeconds(big, CollectiveOp::AllReduce, tiny, wide,
                          CollectiveAlgo::Ring));
}

TEST_CASE("all-gather, reduce-scatter, all-to-all, p2p", "[cost][collectives]") {
  NodeGroup hw = parseClusterSpec("dgx-h100:2")->groups[0];
  double S = 256e6;
  CommGroupShape g8 = groupShape(hw, 8, 1);
  double ag = collectiveSeconds(hw, CollectiveOp::AllGather, S, g8,
                                CollectiveAlgo::Ring);
  CHECK(ag == Approx(7.0 / 8 * S / 370e9 + (8.4 + 7 * 3.4) * us));
  double ar = collectiveSeconds(hw, CollectiveOp::AllReduce, S, g8,
                                CollectiveAlgo::Ring);
  double rs = collectiveSeconds(hw, CollectiveOp::ReduceScatter, S, g8,
                                CollectiveAlgo::Ring);
  // AR = RS + AG in bandwidth (one base latency less).
  CHECK(ar == Approx(rs + ag - 8.4 * us));
  // All-to-all inside a node uses the all-to-all busbw (320 GB/s).
  double a2a = collectiveSeconds(hw, CollectiveOp::AllToAll, S, g8);
  CHECK(a2a == Approx(7.0 / 8 * S / 320e9 + (8.4 + 3.4) * us));
  // Across 2 nodes (16 ranks, 8 per node): remote half over one NIC.
  CommGroupShape g16 = groupShape(hw, 16, 1);
  double a2aX = collectiveSeconds(hw, CollectiveOp::AllToAll, S, g16);
  CHECK(a2aX == Approx(8.0 / 16 * S / 48e9 + (8.4 + 14) * us));
  // p2p inside vs across nodes.
  CHECK(p2pSeconds(hw, S, true) == Approx(3.4 * us + S / 370e9));
  CHECK(p2pSeconds(hw, S, false) == Approx(14 * us + S / 48e9));
  // Hierarchical all-reduce exists and is a valid upper bound choice.
  CommGroupShape g2n = groupShape(hw, 16, 1);
  double h = collectiveSeconds(hw, CollectiveOp::AllReduce, S, g2n,
                               CollectiveAlgo::Hierarchical);
  double hand = 2 * 7.0 / 8 * S / 370e9 + 2 * 1.0 / 2 * (S / 8) / 48e9 +
                (8.4 + 2 * 7 * 3.4 + 2 * 14) * us;
  CHECK(h == Approx(hand));
}

TEST_CASE("node-aware expert dispatch (DeepEP / HybridEP)",
          "[cost][collectives]") {
  // Distinct groups among k uniform picks without replacement.
  CHECK(expectedDistinctGroups(8, 1, 4) == Approx(1));
  CHECK(expectedDistinctGroups(8, 8, 8) == Approx(8)); // every expert
  CHECK(expectedDistinctGroups(8, 8, 1) == 1);
  // 2 groups of 2 of 4 experts, 2 picks: P(one group misses) = C(2,2)/C(4,2).
  CHECK(expectedDistinctGroups(4, 2, 2) == Approx(2 * (1 - 1.0 / 6)));

  NodeGroup hw = parseClusterSpec("dgx-h100:2")->groups[0];
  double T = 64e6; // one copy of a rank's tokens
  // Inside a node: the copies to other ranks over NVLink's all-to-all
  // bandwidth, one per distinct destination rank (not one per expert).
  CommGroupShape g8 = groupShape(hw, 8, 1);
  double ranks8 = expectedDistinctGroups(128, 8, 8);
  CHECK(flexDispatchSeconds(hw, T, 128, 8, g8) ==
        Approx(3.4 * us + T * ranks8 * 7.0 / 8 / 320e9));
  // Across two nodes: InfiniBand carries one copy to the other node when
  // it holds a chosen expert; NVLink fans out. The slower side sets it.
  CommGroupShape g16 = groupShape(hw, 16, 1);
  double ranks16 = expectedDistinctGroups(128, 8, 16);
  double nodes = expectedDistinctGroups(128, 8, 2);
  double ib = T * nodes * 0.5 / 48e9;
  double nv = T * ranks16 * 7.0 / 8 / 320e9;
  CHECK(flexDispatchSeconds(hw, T, 128, 8, g16) ==
        Approx(14 * us + std::max(ib, nv)));
  // Far less than the all-to-all of the 8 routed copies, half remote.
  double a2a = collectiveSeconds(hw, CollectiveOp::AllToAll, 8 * T, g16);
  CHECK(flexDispatchSeconds(hw, T, 128, 8, g16) < a2a / 3);
  CHECK(flexDispatchSeconds(hw, T, 128, 8, groupShape(hw, 1, 1)) == 0);
}

TEST_CASE("collective calibration replaces the modelled bandwidth",
          "[cost][collectives]") {
  NodeGroup hw = parseClusterSpec("dgx-h100:1")->groups[0];
  CommGroupShape g8 = groupShape(hw, 8, 1);
  double S = 64e6;
  double before = collectiveSeconds(hw, CollectiveOp::AllReduce, S, g8);
  hw.collectiveCalibration.push_back(
      {CollectiveOp::AllReduce, CommScope::IntraNode, 16e6, 100e9});
  hw.collectiveCalibration.push_back(
      {CollectiveOp::AllReduce, CommScope::IntraNode, 256e6, 200e9});
  double after = collectiveSeconds(hw, CollectiveOp::AllReduce, S, g8);
  // log-interpolated halfway: 150 GB/s busbw.
  CHECK(after == Approx(2 * 7.0 / 8 * S / 150e9));
  CHECK(after > before);
}

TEST_CASE("a one-node group holds every member, whatever the stride",
          "[cost][collectives]") {
  // One node of 3 GPUs and no network: the first and last of 3 pipeline
  // stages (stride 2) sum a tied embedding inside the node. The shape used
  // to say one member per node, i.e. over a network of 0 bytes/s: an
  // infinite time that `trident plan` ranked and wrote as null.
  Cluster c = *parseClusterJson(
      R"({"name": "three", "groups": [{"gpu": "a100-80gb", "nodes": 1,
          "gpus_per_node": 3}]})",
      "three.json");
  const NodeGroup &hw = c.groups[0];
  REQUIRE(hw.nodeNetworkBytesPerS() == 0);
  CommGroupShape g = groupShape(hw, 2, 2);
  CHECK(g.ranksPerNode == 2);
  CHECK(g.nodes() == 1);
  double t = collectiveSeconds(hw, CollectiveOp::AllReduce, 1e6, g);
  CHECK(std::isfinite(t));
  CHECK(t > 0);
  // Several nodes: a stride that does not divide the node keeps the
  // conservative count (members 0 and 4 of 3-GPU nodes sit in two nodes).
  NodeGroup two = hw;
  two.nodes = 2;
  CHECK(groupShape(two, 2, 4).ranksPerNode == 1);
}
