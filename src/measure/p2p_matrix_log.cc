#include "measure/p2p_matrix_log.h"

#include <fmt/format.h>

#include "measure/text_matrix.h"

namespace linkwise::measure::detail {

namespace {

struct Block {
  bool bidir = false, peer = false, reads = false;
};

// "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", "Bidirectional P2P=Disabled
// Bandwidth Matrix (GB/s)", ...; latency matrices are not bandwidth blocks.
std::optional<Block> parse_header(const std::string& l) {
  const bool uni = l.rfind("Unidirectional P2P=", 0) == 0;
  const bool bi = l.rfind("Bidirectional P2P=", 0) == 0;
  if ((!uni && !bi) || l.find("Bandwidth") == std::string::npos || l.size() < 13 ||
      l.compare(l.size() - 13, 13, "Matrix (GB/s)") != 0)
    return std::nullopt;
  Block b;
  b.bidir = bi;
  b.peer = l.find("P2P=Enabled") != std::string::npos;
  b.reads = l.find("(P2P Reads)") != std::string::npos;
  return b;
}

}  // namespace

bool is_p2p_matrix_log(const std::string& text) {
  for (const auto& l : split_lines(text))
    if (parse_header(l)) return true;
  return false;
}

MeasurementFile parse_p2p_matrix_log(const std::string& text, const std::string& filename) {
  MeasurementFile f;
  f.tool = "p2pBandwidthLatencyTest";
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto b = parse_header(lines[i]);
    if (!b) continue;
    const std::string header = lines[i];
    Matrix m = read_matrix(lines, i + 1, filename, "D\\D");
    i = m.end - 1;
    for (const auto& cell : m.cells) {
      if (cell.row == cell.col) continue;  // a copy inside one GPU
      Measurement e;
      e.kind = b->bidir ? "p2p_bidir" : "p2p";
      e.engine = "ce";
      e.peer_access = b->peer;
      // Writes (and bidirectional runs): row i's stream copies i -> j; reads: j -> i.
      e.gpus =
          b->reads ? std::vector<int>{cell.col, cell.row} : std::vector<int>{cell.row, cell.col};
      e.measured_GBps = cell.value;
      e.source = "p2pBandwidthLatencyTest: " + header;
      e.where = {filename, cell.line, 0};
      f.measurements.push_back(std::move(e));
    }
  }
  if (f.measurements.empty())
    throw InputError("p2pBandwidthLatencyTest output without a bandwidth figure between two GPUs",
                     {filename, 0, 0});
  return f;
}

}  // namespace linkwise::measure::detail
