// linkwise collective CHASSIS --op OP: nccl-tests-style predictions of a collective over a size sweep.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <optional>
#include <set>

#include "commands.h"
#include "linkwise/comm/predict.h"
#include "linkwise/report/table.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

namespace {

struct CollectiveOpts {
  std::string chassis, op = "all_reduce", min = "8", max = "8G", dtype = "float", algo = "auto", output;
  std::optional<std::string> gpus;          // absent: every GPU
  std::optional<std::string> factor, step;  // -f (default 2) or -i; set from CLI options given
  std::vector<std::string> nccl;            // --nccl NAME=VALUE lists
  int nodes = 0;
  bool json = false;
};

// The most rows one run prints: -f 2 from 1 byte to 2^40 gives 41; -i can ask for billions.
constexpr std::uint64_t kMaxRows = 10000;

int parse_int(const std::string& s, const std::string& list) {
  std::size_t used = 0;
  int v = -1;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 0)
    throw InputError(fmt::format("--gpus: '{}' in '{}' is not a GPU number (use e.g. 0,1,2,3 or 0-3)", s, list));
  return v;
}

// "0,1,4-7" -> GPU node indices, checked against the chassis; absent: every GPU.
std::vector<int> parse_gpus(const std::optional<std::string>& given, const topo::Chassis& chassis) {
  const auto& all = chassis.gpus();
  if (!given || *given == "all") return all;
  const std::string& list = *given;
  if (list.empty())
    throw InputError("--gpus: empty list; give GPUs such as 0,1,2,3 or 0-3, or leave --gpus out for every GPU");
  std::vector<int> out;
  std::set<int> seen;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t dash = item.find('-');
    int lo = parse_int(dash == std::string::npos ? item : item.substr(0, dash), list);
    int hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1), list);
    if (hi < lo) throw InputError(fmt::format("--gpus: range '{}' runs backwards", item));
    for (int g = lo; g <= hi; ++g) {
      if (g >= static_cast<int>(all.size()))
        throw InputError(fmt::format("--gpus: GPU{} is not in chassis '{}', which has GPU0 to GPU{}", g,
                                     chassis.name(), all.size() - 1));
      if (!seen.insert(g).second) throw InputError(fmt::format("--gpus: GPU{} is listed twice", g));
      out.push_back(all[g]);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() < 2)
    throw InputError(fmt::format("--gpus: a collective needs at least 2 GPUs, got {} ('{}')", out.size(), list));
  return out;
}

// The whole number after -f: at least 2, as nccl-tests' integer step factor.
std::uint64_t parse_factor(const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isdigit(static_cast<unsigned char>(text[0])) || v < 2)
    throw InputError(fmt::format("-f/--stepfactor must be a whole number of at least 2, not '{}'", text));
  return v;
}

// Sizes from -b to -e, multiplied by -f (default 2) or stepped by -i, as nccl-tests makes them.
std::vector<std::uint64_t> sweep(const CollectiveOpts& o) {
  const std::uint64_t lo = parse_size_bytes(o.min, "-b/--minbytes");
  const std::uint64_t hi = parse_size_bytes(o.max, "-e/--maxbytes");
  if (lo > hi) throw InputError(fmt::format("-b {} is larger than -e {}", o.min, o.max));
  if (o.factor && o.step) throw InputError("give -f/--stepfactor or -i/--stepbytes, not both");
  std::vector<std::uint64_t> sizes;
  if (o.step) {
    const std::uint64_t inc = parse_size_bytes(*o.step, "-i/--stepbytes");
    const std::uint64_t rows = (hi - lo) / inc + 1;
    if (rows > kMaxRows)
      throw InputError(fmt::format("-b {} -e {} -i {} makes {} sizes; the most is {} (use a larger -i, or -f)", o.min,
                                   o.max, *o.step, rows, kMaxRows));
    for (std::uint64_t s = lo; s <= hi; s += inc) sizes.push_back(s);
    return sizes;
  }
  const std::uint64_t f = o.factor ? parse_factor(*o.factor) : 2;
  for (std::uint64_t s = lo; s <= hi; s = s > hi / f ? hi + 1 : s * f) sizes.push_back(s);  // at most 41
  return sizes;
}

// Each size rounded down to whole elements (whole elements per rank where nccl-tests counts per rank),
// repeats and sizes under one element left out. `unit` = element bytes (× ranks).
std::vector<std::uint64_t> whole_elements(const std::vector<std::uint64_t>& sizes, std::uint64_t unit,
                                          const CollectiveOpts& o, const std::string& what) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes) {
    std::uint64_t r = s / unit * unit;
    if (r > 0 && (out.empty() || out.back() != r)) out.push_back(r);
  }
  if (out.empty())
    throw InputError(fmt::format("-b {} -e {}: no size holds {} ({} bytes); use -b {} or more", o.min, o.max, what,
                                 unit, unit));
  return out;
}

std::string gbps(double bytes_per_s) { return fmt::format("{:.2f}", bytes_per_s / 1e9); }

int run_collective(const CollectiveOpts& o) {
  comm::Op op = comm::parse_op(o.op);
  comm::Algo algo = comm::parse_algo(o.algo);
  int dt = comm::dtype_bytes(o.dtype);
  auto sizes = sweep(o);
  auto chassis = topo::load_chassis(o.chassis, o.nodes);
  auto gpus = parse_gpus(o.gpus, chassis);
  comm::Communicator comm(chassis, gpus, comm::nccl_options(chassis, o.nccl));
  const int n = static_cast<int>(gpus.size());
  // nccl-tests counts elements per rank for these: a size is whole elements on every rank.
  const bool per_rank_count = op == comm::Op::kAllGather || op == comm::Op::kReduceScatter || op == comm::Op::kAllToAll;
  const std::uint64_t unit = static_cast<std::uint64_t>(dt) * (per_rank_count ? n : 1);
  const std::string what = per_rank_count ? fmt::format("one {} per rank on {} GPUs", o.dtype, n)
                                          : fmt::format("one {}", o.dtype);
  const auto asked = sizes;
  sizes = whole_elements(sizes, unit, o, what);
  auto bound = comm.bound(op);

  nlohmann::json j;
  j["chassis"] = chassis.name();
  j["op"] = comm::to_string(op);
  j["ranks"] = n;
  j["boxes"] = chassis.boxes();
  j["dtype"] = o.dtype;
  j["bound_busbw_GBps"] = bound.busbw_Bps / 1e9;
  j["bound_cut"] = bound.cut;
  j["rings"] = nlohmann::json::array();
  for (const auto& r : comm.rings()) j["rings"].push_back({{"order", r.str}, {"GBps", r.bytes_per_s / 1e9}});
  j["notes"] = nlohmann::json::array();
  if (asked != sizes)
    j["notes"].push_back(fmt::format("sizes rounded down to whole elements ({} bytes: {}), as nccl-tests does; "
                                     "{} of {} sizes remain",
                                     unit, what, sizes.size(), asked.size()));
  j["rows"] = nlohmann::json::array();
  report::Table t;
  t.header({"size", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm", "bound", "pred/bound"});
  comm::Prediction last;
  for (std::uint64_t s : sizes) {
    auto p = comm.predict(op, static_cast<double>(s), algo);
    const std::uint64_t count = s / unit;
    std::string name = fmt::format("{}/{}", comm::to_string(p.algorithm), comm::to_string(p.protocol));
    double ratio = bound.busbw_Bps > 0 ? p.busbw_Bps / bound.busbw_Bps : 0;
    t.row({fmt::format("{}", s), fmt::format("{}", count), o.dtype, fmt::format("{:.2f}", p.time_s * 1e6),
           gbps(p.algbw_Bps), gbps(p.busbw_Bps), name, gbps(bound.busbw_Bps), fmt::format("{:.3f}", ratio)});
    j["rows"].push_back({{"bytes", s},
                         {"count", count},
                         {"time_us", p.time_s * 1e6},
                         {"algbw_GBps", p.algbw_Bps / 1e9},
                         {"busbw_GBps", p.busbw_Bps / 1e9},
                         {"algorithm", comm::to_string(p.algorithm)},
                         {"protocol", comm::to_string(p.protocol)},
                         {"ratio_to_bound", ratio},
                         {"bottlenecks", p.bottlenecks},
                         {"saturated_resources", p.saturated},
                         {"choice", p.choice}});
    last = std::move(p);
  }
  if (o.json) {
    emit(j.dump(2) + "\n", o.output);
    return 0;
  }
  std::string text = fmt::format("# linkwise collective: {} on {} ({} GPUs{}), predicted\n", comm::to_string(op),
                                 chassis.name(), n, chassis.boxes() > 1 ? fmt::format(", {} boxes", chassis.boxes()) : "");
  for (std::size_t i = 0; i < comm.rings().size() && i < 8; ++i)
    text += fmt::format("# ring {}: {}  ({} GB/s)\n", i, comm.rings()[i].str, gbps(comm.rings()[i].bytes_per_s));
  if (comm.rings().size() > 8) text += fmt::format("# ... {} rings in all\n", comm.rings().size());
  text += fmt::format("# bound: busbw <= {} GB/s (worst cut: {})\n", gbps(bound.busbw_Bps), bound.cut);
  for (const auto& note : j["notes"]) text += "# " + note.get<std::string>() + "\n";
  text += t.render();
  if (!last.bottlenecks.empty()) {
    const int more = last.saturated - static_cast<int>(last.bottlenecks.size());
    text += fmt::format("# limited by (largest size): {}{}\n", join(last.bottlenecks, ", "),
                        more > 0 ? fmt::format(", (+{} more)", more) : "");
  }
  if (!last.choice.empty()) text += fmt::format("# chosen (largest size): {}\n", last.choice);
  emit(text, o.output);
  return 0;
}

}  // namespace

Handler setup_collective(CLI::App& sub) {
  auto o = std::make_shared<CollectiveOpts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file")->required();
  sub.add_option("--op", o->op,
                 "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv (default all_reduce)");
  auto gpus = std::make_shared<std::string>(), factor = std::make_shared<std::string>(),
       step = std::make_shared<std::string>();
  auto* gpus_opt = sub.add_option("--gpus", *gpus, "GPUs taking part, e.g. 0,1,2,3 or 0-3 (default: all)");
  sub.add_option("-b,--minbytes", o->min, "Smallest size, as nccl-tests reads it: 8, 64K, 8M, 8G (default 8)");
  sub.add_option("-e,--maxbytes", o->max, "Largest size (default 8G)");
  auto* factor_opt =
      sub.add_option("-f,--stepfactor", *factor, "Multiply the size by this whole number (>= 2) between rows (default 2)");
  auto* step_opt = sub.add_option("-i,--stepbytes", *step, "Or add this many bytes between rows, e.g. 1M");
  sub.add_option("--dtype", o->dtype, "Element type, nccl-tests names: float, half, bfloat16, double, int8, ...");
  sub.add_option("--algo", o->algo,
                 "auto (what NCCL's tuner would pick, by its own cost model: ring, tree, nvls; direct for alltoall and "
                 "sendrecv), best (the fastest schedule the flow model finds among those), ring, tree, nvls, direct, "
                 "hierarchical (default auto)");
  add_nodes_flag(sub, o->nodes);
  sub.add_option("--nccl", o->nccl,
                 std::string("NCCL settings by name, comma-separated, after the chassis file's `nccl:` ones: ") +
                     comm::nccl_settings_help())
      ->allow_extra_args(false);
  sub.add_flag("--json", o->json, "Print as JSON");
  sub.add_option("-o,--output", o->output, "Write to this file (atomically) instead of standard output");
  return [=] {
    if (gpus_opt->count() > 0) o->gpus = *gpus;
    if (factor_opt->count() > 0) o->factor = *factor;
    if (step_opt->count() > 0) o->step = *step;
    return run_collective(*o);
  };
}

}  // namespace linkwise::cli
