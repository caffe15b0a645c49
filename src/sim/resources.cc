// Resource numbering of a chassis; see include/linkwise/sim/resources.h.
#include "linkwise/sim/resources.h"

#include <fmt/format.h>

#include "linkwise/topo/chassis.h"

namespace linkwise::sim {

ChassisResources chassis_resources(const topo::Chassis& chassis) {
  ChassisResources res;
  res.links = static_cast<int>(chassis.links().size());
  res.capacity.reserve(2 * res.links + 4);
  for (const auto& l : chassis.links()) {
    double c = l.effective_bytes_per_s();
    res.capacity.push_back(c);
    res.capacity.push_back(c);
  }
  res.cpu_memory.assign(chassis.nodes().size(), -1);
  for (const auto& n : chassis.nodes()) {
    if (n.kind != topo::NodeKind::kCpu) continue;
    double mem = n.fig("memory_bytes_per_s", 0);
    if (mem <= 0) continue;
    res.cpu_memory[n.index] = static_cast<int>(res.capacity.size());
    res.capacity.push_back(mem);
  }
  return res;
}

std::string resource_name(const topo::Chassis& chassis, const ChassisResources& res, int r) {
  if (r >= 0 && r < 2 * res.links) {
    const auto& l = chassis.link(r / 2);
    int from = r % 2 == 0 ? l.a : l.b;
    return fmt::format("{}->{}", chassis.node(from).name, chassis.node(l.other(from)).name);
  }
  for (std::size_t n = 0; n < res.cpu_memory.size(); ++n)
    if (res.cpu_memory[n] == r) return chassis.node(static_cast<int>(n)).name + " memory";
  return fmt::format("resource {}", r);
}

}  // namespace linkwise::sim
