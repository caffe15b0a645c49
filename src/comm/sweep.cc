#include "linkwise/comm/sweep.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "linkwise/comm/transport.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/chassis_options.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::comm {

namespace {

// The whole number after -f: at least 2, as nccl-tests' integer step factor.
std::uint64_t parse_factor(const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isdigit(static_cast<unsigned char>(text[0])) ||
      v < 2)
    throw InputError(
        fmt::format("-f/--stepfactor must be a whole number of at least 2, not '{}'", text));
  return v;
}

int parse_gpu_number(const std::string& s, const std::string& list) {
  std::size_t used = 0;
  int v = -1;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 0)
    throw InputError(
        fmt::format("--gpus: '{}' in '{}' is not a GPU number (use e.g. 0,1,2,3 or 0-3)", s, list));
  return v;
}

}  // namespace

Op parse_collective(const std::string& name) {
  const std::string suffix = "_perf";
  if (name.size() > suffix.size() && name.ends_with(suffix))
    return parse_op(name.substr(0, name.size() - suffix.size()));
  return parse_op(name);
}

std::string parse_redop(const std::string& name) {
  static const std::vector<std::string> valid = {"sum", "prod", "min", "max", "avg"};
  std::string lower = name;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& v : valid)
    if (lower == v) return v;
  bool collective = true;
  try {
    parse_collective(name);
  } catch (const InputError&) {
    collective = false;
  }
  if (collective)
    throw InputError(fmt::format(
        "-o/--op is the reduction, as in nccl-tests (sum, prod, min, max, avg), not '{}': name the "
        "collective with --collective {}",
        name, name));
  std::string hint = did_you_mean(name, valid);
  throw InputError(fmt::format("-o/--op: unknown reduction '{}'{}; valid: sum, prod, min, max, avg",
                               name, hint.empty() ? "" : " (" + hint + ")"));
}

std::string nccl_tests_binary(Op op) { return std::string(to_string(op)) + "_perf"; }

std::vector<std::uint64_t> sweep_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t f) {
  if (lo == 0 || hi < lo)
    throw InputError(
        fmt::format("size sweep: need 0 < min <= max, not min {} and max {} bytes", lo, hi));
  if (f < 1) throw InputError(fmt::format("size sweep: the factor must be at least 1, not {}", f));
  if (f == 1) return {lo};
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = lo;; s *= f) {  // at most 64 sizes
    sizes.push_back(s);
    if (s > hi / f) break;  // s × f would pass hi (or overflow)
  }
  return sizes;
}

std::vector<std::uint64_t> sweep_sizes(const SweepFlags& o) {
  const std::uint64_t lo = parse_size_bytes(o.min, "-b/--minbytes");
  const std::uint64_t hi = parse_size_bytes(o.max, "-e/--maxbytes");
  if (lo > hi) throw InputError(fmt::format("-b {} is larger than -e {}", o.min, o.max));
  if (o.factor && o.step) throw InputError("give -f/--stepfactor or -i/--stepbytes, not both");
  if (o.step) {
    const std::uint64_t inc = parse_size_bytes(*o.step, "-i/--stepbytes");
    const std::uint64_t rows = (hi - lo) / inc + 1;
    if (rows > kMaxSweepSizes)
      throw InputError(
          fmt::format("-b {} -e {} -i {} makes {} sizes; the most is {} (use a larger -i, or -f)",
                      o.min, o.max, *o.step, rows, kMaxSweepSizes));
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = lo; s <= hi; s += inc) sizes.push_back(s);
    return sizes;
  }
  return sweep_sizes(lo, hi, o.factor ? parse_factor(*o.factor) : 2);
}

bool counts_per_rank(Op op) {
  return op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAllToAll;
}

std::uint64_t element_unit(Op op, int dtype_bytes, int ranks) {
  return static_cast<std::uint64_t>(dtype_bytes) * (counts_per_rank(op) ? ranks : 1);
}

std::vector<std::uint64_t> whole_elements(const std::vector<std::uint64_t>& sizes,
                                          std::uint64_t unit, const SweepFlags& o,
                                          const std::string& what) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes) {
    std::uint64_t r = s / unit * unit;
    if (r > 0 && (out.empty() || out.back() != r)) out.push_back(r);
  }
  if (out.empty())
    throw InputError(fmt::format("-b {} -e {}: no size holds {} ({} bytes); use -b {} or more",
                                 o.min, o.max, what, unit, unit));
  return out;
}

std::vector<int> parse_gpu_list(const std::optional<std::string>& given,
                                const topo::Chassis& chassis) {
  const auto& all = chassis.gpus();
  if (!given || *given == "all") return all;
  const std::string& list = *given;
  if (list.empty())
    throw InputError(
        "--gpus: empty list; give GPUs such as 0,1,2,3 or 0-3, or leave --gpus out for every GPU");
  std::vector<int> out;
  std::set<int> seen;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    std::string item =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t dash = item.find('-');
    int lo = parse_gpu_number(dash == std::string::npos ? item : item.substr(0, dash), list);
    int hi = dash == std::string::npos ? lo : parse_gpu_number(item.substr(dash + 1), list);
    if (hi < lo) throw InputError(fmt::format("--gpus: range '{}' runs backwards", item));
    for (int g = lo; g <= hi; ++g) {
      if (g >= static_cast<int>(all.size()))
        throw InputError(
            fmt::format("--gpus: GPU{} is not in chassis '{}', which has GPU0 to GPU{}", g,
                        chassis.name(), all.size() - 1));
      if (!seen.insert(g).second) throw InputError(fmt::format("--gpus: GPU{} is listed twice", g));
      out.push_back(all[g]);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() < 2)
    throw InputError(
        fmt::format("--gpus: a collective needs at least 2 GPUs, got {} ('{}')", out.size(), list));
  return out;
}

SweepResult predict_sweep(const SweepRequest& o) {
  // The request's own values are checked before the chassis is read, so that their errors come
  // first.
  parse_collective(o.op);
  parse_redop(o.redop);
  parse_algo(o.algo);
  dtype_bytes(o.dtype);
  sweep_sizes(o.sweep);
  auto chassis = topo::load_chassis(o.chassis, o.nodes, topo::link_rates(o.as_designed));
  return predict_sweep(o, chassis);
}

SweepResult predict_sweep(const SweepRequest& o, const topo::Chassis& chassis) {
  SweepResult r;
  r.op = parse_collective(o.op);
  const std::string redop = parse_redop(o.redop);
  const Algo algo = parse_algo(o.algo);
  const int dt = dtype_bytes(o.dtype);
  auto sizes = sweep_sizes(o.sweep);
  std::optional<std::string> gpus = o.gpus;
  if (o.first_gpus) {
    if (o.gpus) throw InputError("give -g/--ngpus or --gpus, not both");
    if (*o.first_gpus < 1)
      throw InputError(fmt::format("-g/--ngpus must be at least 1, not {}", *o.first_gpus));
    gpus = *o.first_gpus == 1 ? "0" : fmt::format("0-{}", *o.first_gpus - 1);
  }
  Communicator comm(chassis, parse_gpu_list(gpus, chassis), nccl_options(chassis, o.nccl));
  const int n = static_cast<int>(comm.ranks().size());
  const bool rooted = r.op == Op::kBroadcast || r.op == Op::kReduce;
  if (rooted && (o.root < 0 || o.root >= n))
    throw InputError(
        fmt::format("-r/--root {} is not a rank: {} ranks, 0 to {}", o.root, n, n - 1));
  r.root = rooted ? o.root : -1;
  const bool reduces = r.op == Op::kAllReduce || r.op == Op::kReduceScatter || r.op == Op::kReduce;
  r.redop = reduces ? redop : "none";
  r.min_bytes = parse_size_bytes(o.sweep.min, "-b/--minbytes");
  r.max_bytes = parse_size_bytes(o.sweep.max, "-e/--maxbytes");
  r.step_bytes = o.sweep.step.has_value();
  r.step = r.step_bytes ? parse_size_bytes(*o.sweep.step, "-i/--stepbytes")
                        : (o.sweep.factor ? std::stoull(*o.sweep.factor) : 2);
  if (o.iterations)
    r.notes.push_back(
        "-n and -w (iterations, warm-up) only time real runs: a prediction ignores them");
  r.chassis = chassis.name();
  r.ranks = n;
  r.boxes = chassis.boxes();
  r.dtype = o.dtype;
  // nccl-tests counts elements per rank for some: a size is whole elements on every rank.
  r.unit = element_unit(r.op, dt, n);
  const std::string what = counts_per_rank(r.op)
                               ? fmt::format("one {} per rank on {} GPUs", o.dtype, n)
                               : fmt::format("one {}", o.dtype);
  if (auto note = topo::link_rates_note(chassis); !note.empty()) r.notes.push_back(note);
  const auto asked = sizes;
  sizes = whole_elements(sizes, r.unit, o.sweep, what);
  if (asked != sizes)
    r.notes.push_back(
        fmt::format("sizes rounded down to whole elements ({} bytes: {}), as nccl-tests does; "
                    "{} of {} sizes remain",
                    r.unit, what, sizes.size(), asked.size()));
  r.bound = comm.bound(r.op);
  r.rings.reserve(comm.rings().size());
  for (const auto& ring : comm.rings())
    r.rings.push_back({ring.order, ring.bytes_per_s, {}, {}, ring.str});
  Progress progress("collective: predicting sizes", sizes.size());
  for (std::uint64_t s : sizes) {
    SweepRow row;
    row.bytes = s;
    row.count = s / r.unit;
    row.prediction = comm.predict(r.op, static_cast<double>(s), algo);
    row.ratio_to_bound = r.bound.busbw_Bps > 0 ? row.prediction.busbw_Bps / r.bound.busbw_Bps : 0;
    r.rows.push_back(std::move(row));
    progress.update(r.rows.size());
  }
  return r;
}

const std::vector<OptionSpec<SweepRequest>>& sweep_options() {
  using R = SweepRequest;
  using Spec = OptionSpec<R>;
  static const std::vector<Spec> specs = {
      topo::chassis_option(at<&R::chassis>).with(Spec::kRequired),
      {"--collective", at<&R::op>,
       "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv or the "
       "nccl-tests binary's name, all_reduce_perf (default all_reduce)"},
      Spec{"-o,--op", at<&R::redop>, "Reduction, as nccl-tests: sum, prod, min, max, avg"}.python(
          "redop"),
      {"-r,--root", at<&R::root>, "Root rank of broadcast and reduce (default 0)"},
      Spec{"-n,--iters,-w,--warmup_iters", at<&R::iterations>, "Accepted, ignored"}.with(
          Spec::kLast),
      {"--gpus", at<&R::gpus>, "GPUs taking part, e.g. 0,1,2,3 or 0-3 (default: all)"},
      {"-g,--ngpus", at<&R::first_gpus>, "Or the first N GPUs, as nccl-tests -g"},
      {"-b,--minbytes", at<&R::sweep, &SweepFlags::min>,
       "Smallest size, as nccl-tests reads it: 8, 64K, 8M, 8G (default 8)"},
      {"-e,--maxbytes", at<&R::sweep, &SweepFlags::max>, "Largest size (default 8G)"},
      {"-f,--stepfactor", at<&R::sweep, &SweepFlags::factor>,
       "Multiply the size by this whole number (>= 2) between rows (default 2)"},
      {"-i,--stepbytes", at<&R::sweep, &SweepFlags::step>,
       "Or add this many bytes between rows, e.g. 1M"},
      {"-d,--dtype,--datatype", at<&R::dtype>,
       "Element type, nccl-tests names: float, half, bfloat16, double, int8, ..."},
      {"--algo", at<&R::algo>,
       "auto (what NCCL's tuner would pick by its own cost model: ring, tree, nvls; direct for "
       "alltoall and sendrecv), best (the fastest schedule the flow model finds among those), "
       "ring, tree, nvls, direct, hierarchical (default auto)"},
      topo::nodes_option(at<&R::nodes>),
      topo::as_designed_option(at<&R::as_designed>),
      Spec{"--nccl", at<&R::nccl>,
           std::string("NCCL settings by name, comma-separated, after the chassis file's `nccl:` "
                       "ones: ") +
               nccl_settings_help()}
          .with(Spec::kOneArg),
  };
  return specs;
}

}  // namespace linkwise::comm
