// Cold start: the weights from the box's NVMe drives into every GPU (docs/serving.md, "Cold
// start").
//
// Page cache (safetensors' default): the checkpoint is read once from the drives, striped evenly
// over them, into host memory; then each GPU copies its shard over its PCIe path. The loader faults
// a tensor's pages in and then copies it, so the two phases add:
//   t = max over drives and PCIe links on the drives' way up (bytes / rate)
//     + max over PCIe links on the GPUs' way down (shard bytes / rate)
// GPUDirect Storage: each GPU DMAs its own shard from the drives (each drive a 1/n share); the
// replicas read the checkpoint once each; a transfer turns at the lowest switch the drive and the
// GPU share and never crosses the links above it. The phases overlap: t = max over drives and links
// of bytes / rate.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/serve.h"
#include "work/serve_impl.h"

namespace linkwise::work {

namespace {

// The PCIe links from `node` up to its CPU, nearest first.
std::vector<int> chain_up(const topo::Chassis& c, int node) {
  std::vector<int> links;
  for (int n = node; n >= 0 && c.node(n).kind != topo::NodeKind::kCpu; n = c.node(n).pcie_parent) {
    if (c.node(n).pcie_uplink < 0) break;
    links.push_back(c.node(n).pcie_uplink);
  }
  return links;
}

struct Load {
  std::map<std::pair<int, int>, double> link_bytes;  ///< (link, 1 = up towards the CPU, 0 = down)
  std::map<int, double> drive_bytes;

  void add_path(const topo::Chassis& c, int drive, int gpu, double bytes, bool turn_at_common) {
    auto up = chain_up(c, drive), down = chain_up(c, gpu);
    if (turn_at_common) {  // drop the links both share (above the lowest common switch)
      while (!up.empty() && !down.empty() && up.back() == down.back()) {
        up.pop_back();
        down.pop_back();
      }
    }
    for (int l : up) link_bytes[{l, 1}] += bytes;
    for (int l : down) link_bytes[{l, 0}] += bytes;
  }
  // Seconds and what bounds them.
  std::pair<double, std::string> time(const topo::Chassis& c) const {
    double worst = 0;
    std::string what;
    for (const auto& [d, bytes] : drive_bytes) {
      double rate = c.node(d).fig("read_bytes_per_s", 3e9);
      if (bytes / rate > worst) {
        worst = bytes / rate;
        what = fmt::format("{} read ({:.1f} GB/s)", c.node(d).name, rate / 1e9);
      }
    }
    for (const auto& [key, bytes] : link_bytes) {
      const auto& l = c.link(key.first);
      double rate = l.effective_bytes_per_s();
      if (bytes / rate > worst) {
        worst = bytes / rate;
        // Up: from the node below (the drive's or GPU's side) to its parent.
        int lower = c.node(l.a).pcie_uplink == l.index ? l.a : l.b;
        int upper = l.other(lower);
        what = key.second ? fmt::format("{}->{} ({:.1f} GB/s)", c.node(lower).name,
                                        c.node(upper).name, rate / 1e9)
                          : fmt::format("{}->{} ({:.1f} GB/s)", c.node(upper).name,
                                        c.node(lower).name, rate / 1e9);
      }
    }
    return {worst, what};
  }
};

}  // namespace

LoadTime ServeModel::Impl::load() const {
  LoadTime t;
  std::vector<int> drives = chassis.nodes_of_kind(topo::NodeKind::kNvme);
  t.drives = static_cast<int>(drives.size());
  if (drives.empty()) {
    t.notes.push_back(
        fmt::format("{} has no NVMe drive: the load time is not modelled", chassis.name()));
    return t;
  }
  // The checkpoint: every stage's weights once (tp shards of each stage add up to the stage).
  double checkpoint = 0;
  for (int s = 0; s < opt.pp; ++s) checkpoint += w_stage_bytes * opt.tp;
  double nd = static_cast<double>(drives.size());
  std::vector<int> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  double shard = w_stage_bytes;
  t.bytes_to_gpus = shard * all.size();
  if (opt.load == LoadPath::kGds) {
    Load l;
    for (int g : all)
      for (int d : drives) {
        l.drive_bytes[d] += shard / nd;
        l.add_path(chassis, d, g, shard / nd, true);
      }
    t.bytes_from_drives = t.bytes_to_gpus;
    auto [s, what] = l.time(chassis);
    t.seconds = s;
    t.bottleneck = what;
    t.notes.push_back(
        "GPUDirect Storage: each GPU reads its shard from the drives; every replica reads the "
        "checkpoint");
  } else {
    Load read, copy;
    for (int d : drives) {
      read.drive_bytes[d] += checkpoint / nd;
      for (int l : chain_up(chassis, d)) read.link_bytes[{l, 1}] += checkpoint / nd;
    }
    for (int g : all)
      for (int l : chain_up(chassis, g)) copy.link_bytes[{l, 0}] += shard;
    t.bytes_from_drives = checkpoint;
    auto [r, rwhat] = read.time(chassis);
    auto [c, cwhat] = copy.time(chassis);
    t.seconds = r + c;
    t.bottleneck = r >= c ? rwhat : cwhat;
    t.notes.push_back(
        fmt::format("page cache: {:.1f} GB read once in {:.1f} s (bound by {}), then copied to the "
                    "GPUs in {:.1f} s (bound by {})",
                    checkpoint / 1e9, r, rwhat, c, cwhat));
  }
  return t;
}

}  // namespace linkwise::work
