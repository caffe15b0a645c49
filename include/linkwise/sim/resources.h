// The resources of a chassis, as the engine and the max-min allocator number them.
//
//   link l carried from link.a to link.b   resource 2l       capacity: line rate × efficiency
//   link l carried from link.b to link.a   resource 2l + 1   (Link::effective_bytes_per_s())
//   CPU c's host memory                    2L + k            capacity: the CPU part's
//   memory_bytes_per_s
//                                                            (k = the CPU's order among CPUs)
// Traffic staged through host memory (GPU pairs that cannot use peer-to-peer) crosses the memory
// resource twice: written by the sender, read by the receiver.
//
//   auto res = linkwise::sim::chassis_resources(chassis);
//   linkwise::sim::Engine engine(res.capacity);
#pragma once

#include <string>
#include <vector>

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::sim {

struct ChassisResources {
  std::vector<double> capacity;  ///< bytes/s by resource id
  int links = 0;                 ///< L: resources 0 .. 2L-1 are link directions
  std::vector<int> cpu_memory;   ///< by node index: memory resource of that CPU, or -1

  /// The resource of link `link` carried away from node `from` (2l when from is link.a, else 2l+1).
  static int link_dir(int link, bool from_a) { return 2 * link + (from_a ? 0 : 1); }
  /// Memory resource of the CPU at node index `cpu_node`, or -1.
  int memory(int cpu_node) const { return cpu_memory.at(cpu_node); }
  int size() const { return static_cast<int>(capacity.size()); }
};

/// Builds the resources of a chassis with effective capacities (line rate × efficiency).
ChassisResources chassis_resources(const topo::Chassis& chassis);

/// A readable name for a resource: "gpu0->nvsw1", "cpu0 memory".
std::string resource_name(const topo::Chassis& chassis, const ChassisResources& res, int resource);

}  // namespace linkwise::sim
