#include "linkwise/report/collective_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "linkwise/report/json.h"
#include "linkwise/report/nccl_tests_table.h"
#include "linkwise/report/table.h"
#include "linkwise/util/verbosity.h"

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
  // nccl-tests' table (nccl_tests_table.h), a prediction filling the out-of-place and in-place
  // groups alike, #wrong N/A as nccl-tests prints without data checks. linkwise's own figures are
  // '#' lines, so a reader of nccl-tests logs skips them.
  const std::string binary = comm::nccl_tests_binary(r.op);
  std::string text = fit_width(fmt::format(
      "# linkwise collective: {} on {} ({} GPUs{}), predicted by the model, not measured\n",
      comm::to_string(r.op), r.chassis, r.ranks,
      r.boxes > 1 ? fmt::format(", {} boxes", r.boxes) : ""));
  text += fmt::format("# Collective test starting: {}\n", binary);
  text += fmt::format(
      "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {}({}) warmup iters: 0 iters: 0 agg "
      "iters: 1 validation: 0 graph: 0\n#\n",
      r.ranks, r.min_bytes, r.max_bytes, r.step, r.step_bytes ? "bytes" : "factor");
  std::string ours;
  for (std::size_t i = 0; i < r.rings.size() && i < 8; ++i)
    ours +=
        fmt::format("# ring {}: {}  ({} GB/s)\n", i, r.rings[i].str, gbps(r.rings[i].bytes_per_s));
  if (r.rings.size() > 8) ours += fmt::format("# ... {} rings in all\n", r.rings.size());
  ours += fmt::format("# bound: busbw <= {} GB/s (worst cut: {})\n", gbps(r.bound.busbw_Bps),
                      r.bound.cut);
  if (!quiet())
    for (const auto& note : r.notes) ours += "# " + note + "\n";
  text += fit_width(ours) + "#\n";
  std::vector<NcclTestsRow> rows;
  double busbw_sum = 0;
  for (const auto& row : r.rows) {
    const auto& p = row.prediction;
    const NcclTestsRow::Group g{p.time_s * 1e6, p.algbw_Bps / 1e9, p.busbw_Bps / 1e9, -1};
    rows.push_back({row.bytes, row.count, r.dtype, r.redop, r.root, {g, g}});
    busbw_sum += p.busbw_Bps / 1e9;
  }
  text +=
      nccl_tests_table(rows, r.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(r.rows.size()));
  // linkwise's figures per size, as comments.
  Table t;
  t.header({"size", "algorithm", "bound(GB/s)", "busbw/bound"});
  for (const auto& row : r.rows) {
    const auto& p = row.prediction;
    t.row({fmt::format("{}", row.bytes),
           fmt::format("{}/{}", comm::to_string(p.algorithm), comm::to_string(p.protocol)),
           gbps(r.bound.busbw_Bps), fmt::format("{:.3f}", row.ratio_to_bound)});
  }
  std::string after = "# linkwise: the algorithm/protocol chosen and the cut bound per size\n";
  std::string table = t.render();
  for (std::size_t pos = 0; pos < table.size();) {
    std::size_t nl = table.find('\n', pos);
    if (nl == std::string::npos) nl = table.size();
    after += "# " + table.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  if (!r.rows.empty() && !r.rows.back().prediction.bottlenecks.empty()) {
    const auto& last = r.rows.back().prediction;
    const int more = last.saturated - static_cast<int>(last.bottlenecks.size());
    after += fmt::format("# limited by (largest size, fullest first): {}{}\n",
                         fmt::join(last.bottlenecks, ", "),
                         more > 0 ? fmt::format(", (+{} more)", more) : "");
  }
  if (!r.rows.empty() && !r.rows.back().prediction.choice.empty())
    after += fmt::format("# chosen (largest size): {}\n", r.rows.back().prediction.choice);
  text += fit_width(after);
  text += "#\n";
  text += fmt::format("# Collective test concluded: {}\n", binary);
  return text;
}

}  // namespace linkwise::report
