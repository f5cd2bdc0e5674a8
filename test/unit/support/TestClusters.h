//===- TestClusters.h - Clusters shared by the unit tests -------*- C++ -*-===//

#ifndef TRIDENT_TEST_UNIT_SUPPORT_TESTCLUSTERS_H
#define TRIDENT_TEST_UNIT_SUPPORT_TESTCLUSTERS_H

#include "trident/Hardware/Cluster.h"

#include <stdexcept>

namespace trident::test {

/// `nodes` DGX H100 then `nodes` DGX A100-80GB nodes, joined by the A100
/// NIC (a heterogeneous cluster, as a cluster.json with two groups).
inline Cluster h100A100Cluster(int64_t nodes = 2) {
  Result<NodeGroup> h = presetNodeGroup("dgx-h100", nodes);
  Result<NodeGroup> a = presetNodeGroup("dgx-a100-80gb", nodes);
  if (!h || !a)
    throw std::runtime_error(!h ? h.message() : a.message());
  Cluster c;
  c.name = "h100+a100";
  c.groups = {*h, *a};
  c.interGroup = a->nic;
  return c;
}

} // namespace trident::test

#endif // TRIDENT_TEST_UNIT_SUPPORT_TESTCLUSTERS_H
