#include "linkwise/report/collective_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"

namespace linkwise::report {

namespace {
std::string gbps(double bytes_per_s) { return fmt::format("{:.2f}", bytes_per_s / 1e9); }
}  // namespace

nlohmann::json collective_json(const comm::SweepResult& r) {
  nlohmann::json j;
  j["chassis"] = r.chassis;
  j["op"] = comm::to_string(r.op);
  j["ranks"] = r.ranks;
  j["boxes"] = r.boxes;
  j["dtype"] = r.dtype;
  j["bound_busbw_GBps"] = r.bound.busbw_Bps / 1e9;
  j["bound_cut"] = r.bound.cut;
  j["rings"] = nlohmann::json::array();
  for (const auto& ring : r.rings)
    j["rings"].push_back({{"order", ring.str}, {"GBps", ring.bytes_per_s / 1e9}});
  j["notes"] = r.notes;
  j["rows"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    const auto& p = row.prediction;
    j["rows"].push_back({{"bytes", row.bytes},
                         {"count", row.count},
                         {"time_us", p.time_s * 1e6},
                         {"algbw_GBps", p.algbw_Bps / 1e9},
                         {"busbw_GBps", p.busbw_Bps / 1e9},
                         {"algorithm", comm::to_string(p.algorithm)},
                         {"protocol", comm::to_string(p.protocol)},
                         {"ratio_to_bound", row.ratio_to_bound},
                         {"bottlenecks", p.bottlenecks},
                         {"saturated_resources", p.saturated},
                         {"choice", p.choice}});
  }
  return with_schema(std::move(j));
}

std::string collective_text(const comm::SweepResult& r) {
  std::string text =
      fmt::format("# linkwise collective: {} on {} ({} GPUs{}), predicted\n", comm::to_string(r.op),
                  r.chassis, r.ranks, r.boxes > 1 ? fmt::format(", {} boxes", r.boxes) : "");
  for (std::size_t i = 0; i < r.rings.size() && i < 8; ++i)
    text +=
        fmt::format("# ring {}: {}  ({} GB/s)\n", i, r.rings[i].str, gbps(r.rings[i].bytes_per_s));
  if (r.rings.size() > 8) text += fmt::format("# ... {} rings in all\n", r.rings.size());
  text += fmt::format("# bound: busbw <= {} GB/s (worst cut: {})\n", gbps(r.bound.busbw_Bps),
                      r.bound.cut);
  for (const auto& note : r.notes) text += "# " + note + "\n";
  Table t;
  t.header({"size", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm", "bound",
            "pred/bound"});
  for (const auto& row : r.rows) {
    const auto& p = row.prediction;
    std::string name =
        fmt::format("{}/{}", comm::to_string(p.algorithm), comm::to_string(p.protocol));
    t.row({fmt::format("{}", row.bytes), fmt::format("{}", row.count), r.dtype,
           fmt::format("{:.2f}", p.time_s * 1e6), gbps(p.algbw_Bps), gbps(p.busbw_Bps), name,
           gbps(r.bound.busbw_Bps), fmt::format("{:.3f}", row.ratio_to_bound)});
  }
  text += t.render();
  if (!r.rows.empty() && !r.rows.back().prediction.bottlenecks.empty()) {
    const auto& last = r.rows.back().prediction;
    const int more = last.saturated - static_cast<int>(last.bottlenecks.size());
    text += fmt::format("# limited by (largest size): {}{}\n", fmt::join(last.bottlenecks, ", "),
                        more > 0 ? fmt::format(", (+{} more)", more) : "");
  }
  if (!r.rows.empty() && !r.rows.back().prediction.choice.empty())
    text += fmt::format("# chosen (largest size): {}\n", r.rows.back().prediction.choice);
  return text;
}

}  // namespace linkwise::report
