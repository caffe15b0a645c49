#include "linkwise/measure/bench.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "linkwise/measure/fake_gpu.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::measure {

namespace {

// A run in progress: the report so far, and its hooks made sticky (once stopped, stopped) and, for
// the collectives under mpirun, agreed between processes.
class Run {
 public:
  Run(BenchReport& r, const BenchHooks& hooks, const ProcessGroup& g, Progress& progress)
      : r_(r), hooks_(hooks), g_(g), progress_(progress) {}

  // This process's own answer; for what only this process runs.
  bool stop_here() {
    if (!stopped_ && hooks_.stop) stopped_ = hooks_.stop();
    return stopped_;
  }
  // Every process's answer combined, polled at the same points on each (the collectives).
  bool stop_all() {
    if (g_.size == 1 || !hooks_.stop) return stop_here();
    if (!stopped_) stopped_ = g_.sum(hooks_.stop() ? 1 : 0) > 0;
    return stopped_;
  }
  bool stopped() const { return stopped_; }

  void finished() const {
    if (hooks_.finished) hooks_.finished(r_);
    progress_.update(measurements_finished(r_));
  }
  // Hooks that add each result to `list` and report it.
  template <class Result>
  Hooks<Result> into(std::vector<Result>& list) {
    return {[this, &list](const Result& x) {
              list.push_back(x);
              finished();
            },
            [this] { return stop_here(); }};
  }

 private:
  BenchReport& r_;
  const BenchHooks& hooks_;
  const ProcessGroup& g_;
  Progress& progress_;
  bool stopped_ = false;
};

void run_collectives(CudaApi& cuda, NcclApi& nccl, const BenchPlan& plan, const BenchOptions& o,
                     const ProcessGroup& g, const std::vector<int>& gpus, BenchReport& r,
                     Run& run) {
  if (run.stop_all()) return;
  RankSet rs;
  if (g.size > 1) {
    int dev = gpus.at(0);
    std::string id = g.broadcast(g.rank == 0 ? nccl.unique_id() : std::string());
    rs.nranks = g.size;
    rs.devices = {dev};
    rs.ranks = {g.rank};
    rs.comms = {nccl.init_rank(g.size, id, g.rank, dev)};
    rs.sum_over_processes = g.sum;
  } else {
    rs.nranks = static_cast<int>(gpus.size());
    rs.devices = gpus;
    for (int i = 0; i < rs.nranks; ++i) rs.ranks.push_back(i);
    rs.comms = nccl.init_all(gpus);
  }
  try {
    for (auto op : plan.ops) {
      if (run.stop_all()) break;
      NcclOptions no = o.nccl_options;
      no.op = op;
      no.sizes = plan.nccl_sizes;
      // The sweep so far replaces its entry after each size; an entry appears with its first size.
      const std::size_t at = r.nccl.size();
      Hooks<NcclSweep> hooks{[&](const NcclSweep& s) {
                               if (r.nccl.size() == at)
                                 r.nccl.push_back(s);
                               else
                                 r.nccl[at] = s;
                               run.finished();
                             },
                             [&] { return run.stop_all(); }};
      run_nccl_sweep(cuda, nccl, rs, no, hooks);
    }
  } catch (...) {
    for (auto c : rs.comms) try {
        nccl.destroy(c);
      } catch (...) {
      }
    throw;
  }
  for (auto c : rs.comms) nccl.destroy(c);
}

}  // namespace

std::size_t measurements_finished(const BenchReport& r) {
  std::size_t n = r.host.size() + r.local.size() + r.peer_on.size() + r.peer_off.size() +
                  r.latency_on.size() + r.latency_off.size() + (r.sustained ? 1 : 0);
  for (const auto& s : r.nccl) n += s.rows.size();
  return n;
}

std::size_t BenchPlan::measurements() const {
  return host.size() + local.size() + peer_on.size() + peer_off.size() + latency_on.size() +
         latency_off.size() + ops.size() * nccl_sizes.size() + (sustained ? 1 : 0);
}

BenchPlan plan_bench(CudaApi& cuda, bool with_nccl, const std::vector<int>& gpus,
                     const BenchOptions& o, const ProcessGroup& g) {
  BenchPlan p;
  if (g.size == 1) {  // under mpirun only the collectives run
    if (o.host) p.host = plan_host_device(gpus, o.copy);
    if (o.local) p.local = plan_local(gpus, o.copy);
    if (o.peer && gpus.size() > 1) {
      p.peer_on = plan_peer(cuda, gpus, true, o.copy);
      p.peer_off = plan_peer(cuda, gpus, false, o.copy);
    }
    if (o.latency && gpus.size() > 1) {
      p.latency_on = plan_latency(cuda, gpus, true);
      p.latency_off = plan_latency(cuda, gpus, false);
    }
  }
  if (o.nccl && with_nccl) {
    p.ops = o.ops;
    p.nccl_sizes = nccl_sizes(o.nccl_options);
  }
  p.sustained = o.sustained && g.rank == 0;
  return p;
}

BenchReport run_bench(CudaApi& cuda, NcclApi* nccl, GpuTelemetry* telemetry, const BenchOptions& o,
                      const ProcessGroup& g, const BenchHooks& hooks) {
  std::string why;
  int count = cuda.device_count(&why);
  if (count == 0) throw RuntimeError("no GPU found: " + why);
  BenchReport r;
  r.machine = o.machine;
  r.copy = o.copy;
  r.process_rank = g.rank;
  r.complete = false;
  std::vector<int> gpus = o.gpus;
  if (g.size > 1) {
    if (g.local_rank >= count)
      throw RuntimeError(fmt::format("rank {} has local rank {} but its box has {} GPU(s)", g.rank,
                                     g.local_rank, count));
    gpus = {g.local_rank};
  } else if (gpus.empty()) {
    for (int i = 0; i < count; ++i) gpus.push_back(i);
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    int d = gpus[i];
    if (std::find(gpus.begin(), gpus.begin() + i, d) != gpus.begin() + i)
      throw InputError(fmt::format("--gpus: GPU {} is listed twice", d));
    if (d < 0 || d >= count)
      throw InputError(fmt::format("--gpus: no GPU {} (this machine has {})", d, count));
    r.devices.push_back(cuda.device_info(d));
  }
  const BenchPlan plan = plan_bench(cuda, nccl != nullptr, gpus, o, g);
  Progress progress("bench: measurements", g.rank == 0 ? plan.measurements() : 0);
  Run run(r, hooks, g, progress);
  if (g.size > 1) {
    r.notes.push_back(
        "under mpirun: copy benchmarks skipped, collectives run one rank per process");
  } else {
    // Each part returns at once when a stop was requested; a part not planned is empty.
    measure_copies(cuda, plan.host, o.copy, run.into(r.host));
    measure_copies(cuda, plan.local, o.copy, run.into(r.local));
    measure_copies(cuda, plan.peer_on, o.copy, run.into(r.peer_on));
    measure_copies(cuda, plan.peer_off, o.copy, run.into(r.peer_off));
    measure_latency(cuda, plan.latency_on, 100, 3, run.into(r.latency_on));
    measure_latency(cuda, plan.latency_off, 100, 3, run.into(r.latency_off));
    if ((o.peer || o.latency) && gpus.size() < 2)
      r.notes.push_back("one GPU: no peer bandwidth or latency to measure");
  }
  if (!plan.ops.empty()) run_collectives(cuda, *nccl, plan, o, g, gpus, r, run);
  if (o.nccl && !nccl) r.notes.push_back("collectives skipped: NCCL is not available");
  if (plan.sustained && !run.stop_here()) {
    SustainedOptions so = *o.sustained;
    if (std::find(gpus.begin(), gpus.end(), so.gpu) == gpus.end()) {
      // Under mpirun rank 0 holds it on its own GPU; otherwise the GPU must be one being measured.
      if (g.size == 1)
        throw InputError(fmt::format("--sustained-gpu: GPU {} is not among the measured GPUs ({})",
                                     so.gpu, fmt::join(gpus, ",")));
      so.gpu = gpus[0];
    }
    auto s = run_sustained(cuda, telemetry, so, [&] { return run.stop_here(); });
    if (!s.points.empty() || !run.stopped()) {
      r.sustained = std::move(s);
      run.finished();
    }
  }
  r.complete = !run.stopped();
  if (!r.complete)
    r.notes.push_back(fmt::format("stopped before the end: {} measurement(s) finished are kept",
                                  measurements_finished(r)));
  return r;
}

namespace {

Measurement from_copy(const CopyResult& c, const CopyOptions& o) {
  Measurement m;
  m.kind = c.kind;
  if (c.kind == "h2d")
    m.gpus = {c.dst};
  else if (c.kind == "d2h" || c.kind == "bidir" || c.kind == "d2d_local")
    m.gpus = {c.src};
  else
    m.gpus = {c.src, c.dst};
  m.engine = to_string(c.engine);
  m.peer_access = c.peer_access;
  m.bytes = c.bytes;
  m.measured_GBps = c.GBps.median;
  m.source = fmt::format("linkwise bench: median of {} samples of {} copies", o.samples, o.loops);
  m.extra = {{"min_GBps", c.GBps.min}, {"max_GBps", c.GBps.max}};
  if (!c.direction_GBps.empty()) m.extra["direction_GBps"] = c.direction_GBps;
  if (c.kind == "p2p" || c.kind == "p2p_bidir") m.peer_access = c.peer_access;
  return m;
}

nlohmann::json sweep_json(const NcclSweep& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.rows)
    rows.push_back({{"bytes", r.size_bytes},
                    {"count", r.count},
                    {"type", r.type},
                    {"redop", r.redop},
                    {"root", r.root},
                    {"time_us", {r.time_us[0], r.time_us[1]}},
                    {"algbw_GBps", {r.algbw[0], r.algbw[1]}},
                    {"busbw_GBps", {r.busbw[0], r.busbw[1]}},
                    {"wrong", {r.wrong[0], r.wrong[1]}}});
  return {{"op", to_string(s.op)},
          {"ranks", s.nranks},
          {"nccl_version", s.nccl_version},
          {"rows", rows},
          {"avg_busbw_GBps", s.avg_busbw},
          {"wrong_total", s.wrong_total},
          {"columns", "[out-of-place, in-place]"}};
}

nlohmann::json sustained_json(const SustainedResult& s) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : s.points) {
    nlohmann::json j = {{"t_s", p.t_s}, {"GBps", p.GBps}};
    if (p.telemetry) {
      auto put = [&](const char* k, double v) {
        j[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
      };
      put("temp_c", p.telemetry->temp_c);
      put("sm_clock_mhz", p.telemetry->sm_clock_mhz);
      put("mem_clock_mhz", p.telemetry->mem_clock_mhz);
      put("power_w", p.telemetry->power_w);
    }
    pts.push_back(j);
  }
  return {{"kind", s.options.kind},
          {"gpu", s.options.gpu},
          {"engine", to_string(s.options.engine)},
          {"bytes", s.options.bytes},
          {"duration_s", s.options.duration_s},
          {"points", pts},
          {"first_GBps", s.first_GBps},
          {"last_GBps", s.last_GBps},
          {"drop", s.drop_pct / 100},
          {"slows_down", s.slows_down},
          {"telemetry_note", s.telemetry_note}};
}

}  // namespace

MeasurementFile bench_measurements(const BenchReport& r) {
  MeasurementFile f;
  f.machine = r.machine;
  f.tool = "linkwise bench 0.1.0";
  for (const auto* list : {&r.host, &r.local, &r.peer_on, &r.peer_off})
    for (const auto& c : *list) f.measurements.push_back(from_copy(c, r.copy));
  for (const auto& s : r.nccl) {
    if (s.nranks < 2 || s.rows.empty()) continue;
    const auto& row = s.rows.back();
    Measurement m;
    m.kind = "collective";
    m.op = to_string(s.op);
    for (int i = 0; i < s.nranks; ++i) m.gpus.push_back(i);
    m.bytes = row.size_bytes;
    m.measured_GBps = row.busbw[0];
    m.metric = "busbw";
    m.source =
        fmt::format("linkwise bench: nccl-tests method, out-of-place, NCCL {}", s.nccl_version);
    f.measurements.push_back(m);
  }
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : r.devices)
    devs.push_back({{"index", d.index},
                    {"name", d.name},
                    {"pci_bus_id", d.pci_bus_id},
                    {"sm_count", d.sm_count},
                    {"memory_bytes", d.memory_bytes},
                    {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)}});
  f.extra["devices"] = devs;
  nlohmann::json nccl = nlohmann::json::array();
  for (const auto& s : r.nccl) nccl.push_back(sweep_json(s));
  f.extra["nccl"] = nccl;
  nlohmann::json lat = nlohmann::json::array();
  for (const auto* list : {&r.latency_on, &r.latency_off})
    for (const auto& l : *list)
      lat.push_back({{"src", l.src}, {"dst", l.dst}, {"peer_access", l.peer_access}, {"us", l.us}});
  f.extra["latency_us"] = lat;
  if (r.sustained) f.extra["sustained"] = sustained_json(*r.sustained);
  f.extra["notes"] = r.notes;
  f.extra["complete"] = r.complete;
  f.extra["schema_version"] = 1;  // docs/json.md (report::kSchemaVersion)
  return f;
}

std::string bench_file_text(const BenchReport& r) {
  return to_json(bench_measurements(r)).dump(2) + "\n";
}

BenchHooks write_as_it_goes(const std::string& path, std::function<bool()> stop) {
  BenchHooks h;
  if (!path.empty())
    h.finished = [path](const BenchReport& r) {
      if (r.process_rank == 0) write_file_atomic(path, bench_file_text(r));
    };
  h.stop = std::move(stop);
  return h;
}

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

CopyEngine parse_engine(const std::string& e) {
  if (e == "ce") return CopyEngine::kCe;
  if (e == "sm") return CopyEngine::kSm;
  throw InputError(fmt::format("unknown copy engine '{}'; valid: ce, sm", e));
}

std::vector<int> parse_gpus(const std::string& list) {
  std::vector<int> out;
  for (const auto& g : split(list)) {
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(g, &used);
    } catch (const std::exception&) {
    }
    if (used != g.size() || d < 0)
      throw InputError(fmt::format("--gpus: '{}' is not a GPU number", g));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw InputError(fmt::format("--gpus: GPU {} is listed twice in '{}'", d, list));
    out.push_back(d);
  }
  return out;
}

SustainedOptions sustained_options(const BenchFlags& f, const std::vector<int>& gpus) {
  SustainedOptions s;
  s.duration_s = parse_duration_s(f.sustained);
  check_sustained_kind(f.sustained_kind);
  s.kind = f.sustained_kind;
  s.bytes = parse_size_bytes(f.sustained_size, "--sustained-size");
  s.engine = parse_engine(f.sustained_engine);
  if (f.sustained_gpu < 0)
    throw InputError(fmt::format("--sustained-gpu: '{}' is not a GPU number", f.sustained_gpu));
  if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), f.sustained_gpu) == gpus.end())
    throw InputError(
        fmt::format("--sustained-gpu: GPU {} is not among --gpus {}", f.sustained_gpu, f.gpus));
  s.gpu = f.sustained_gpu;
  s.interval_s = std::min(1.0, s.duration_s / 10);
  return s;
}

}  // namespace

BenchOptions bench_options(const BenchFlags& f) {
  BenchOptions o;
  o.gpus = parse_gpus(f.gpus);
  o.copy.sizes.clear();
  for (const auto& s : split(f.sizes)) o.copy.sizes.push_back(parse_size_bytes(s, "--sizes"));
  if (o.copy.sizes.empty()) throw InputError("--sizes: give at least one size");
  o.copy.engines.clear();
  for (const auto& e : split(f.engines)) o.copy.engines.push_back(parse_engine(e));
  if (o.copy.engines.empty()) throw InputError("--engines: give at least one of ce, sm");
  o.copy.samples = f.samples;
  o.copy.loops = f.loops;
  static const std::vector<std::string> parts = {"host", "local", "peer", "latency", "nccl"};
  for (const auto& s : split(f.skip)) {
    if (std::find(parts.begin(), parts.end(), s) == parts.end())
      throw InputError(fmt::format("--skip: unknown part '{}'; valid: {}", s,
                                   fmt::to_string(fmt::join(parts, ", "))));
    (s == "host"      ? o.host
     : s == "local"   ? o.local
     : s == "peer"    ? o.peer
     : s == "latency" ? o.latency
                      : o.nccl) = false;
  }
  o.ops.clear();
  for (const auto& op : split(f.ops)) {
    if (op == "all") {
      o.ops = comm::all_ops();
      break;
    }
    o.ops.push_back(comm::parse_op(op));
  }
  auto& n = o.nccl_options;
  n.sizes = comm::sweep_sizes(f.sweep);
  n.min_bytes = n.sizes.front();
  n.max_bytes = parse_size_bytes(f.sweep.max, "-e/--maxbytes");
  n.iters = f.iters;
  n.warmup = f.warmup;
  n.check = f.check != 0;
  if (!f.sustained.empty()) o.sustained = sustained_options(f, o.gpus);
  o.machine = f.machine;
  return o;
}

BenchRun bench_this_machine(const BenchOptions& o, const std::string& fake_spec,
                            const BenchHooks& hooks) {
  std::unique_ptr<CudaApi> cuda;
  FakeCuda* fake = nullptr;
  if (!fake_spec.empty()) {
    auto fc = std::make_unique<FakeCuda>(parse_fake_spec(fake_spec));
    fake = fc.get();
    cuda = std::move(fc);
  } else {
    cuda = make_cuda_api();
  }
  if (!cuda) throw RuntimeError("no GPU found: linkwise was built without CUDA");
  std::string why;
  if (cuda->device_count(&why) == 0) throw RuntimeError("no GPU found: " + why);
  BenchRun run;
  if (launched_by_mpirun()) {
    auto g = mpi_process_group(&why);
    if (!g) throw RuntimeError(why);
    run.group = *g;
  }
  std::unique_ptr<NcclApi> nccl;
  std::string nccl_why;
  if (o.nccl) {
    if (fake)
      nccl = std::make_unique<FakeNccl>(*fake);
    else
      nccl = make_nccl_api(*cuda, &nccl_why);
  }
  std::unique_ptr<GpuTelemetry> telemetry;
  std::string tel_why;
  if (o.sustained) {
    if (fake)
      telemetry = std::make_unique<FakeTelemetry>();
    else
      telemetry = make_nvml_telemetry(&tel_why);
  }
  run.report = run_bench(*cuda, nccl.get(), telemetry.get(), o, run.group, hooks);
  if (o.nccl && !nccl) run.report.notes.push_back("collectives skipped: " + nccl_why);
  if (run.report.sustained && !telemetry)
    run.report.sustained->telemetry_note = "no telemetry: " + tel_why;
  return run;
}

const std::vector<OptionSpec<BenchFlags>>& bench_flags() {
  using B = BenchFlags;
  using Spec = OptionSpec<B>;
  static const std::vector<Spec> specs = {
      {"--gpus", at<&B::gpus>, "CUDA devices to measure, e.g. 0,1 (default: all)"},
      {"--sizes", at<&B::sizes>, "Copy sizes, e.g. 4M,64M,256M (default 64M, as nvbandwidth)"},
      {"--engines", at<&B::engines>, "Copy engines: ce (cudaMemcpyAsync), sm (copy kernel)"},
      Spec{"--samples", at<&B::samples>, "Samples per figure; the median is reported (default 3)"}
          .range(1, 1000),
      Spec{"--loops", at<&B::loops>, "Copies per sample (default 16)"}.range(1, 100000),
      {"--skip", at<&B::skip>, "Parts to skip: host, local, peer, latency, nccl"},
      {"--ops", at<&B::ops>,
       "Collectives: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, "
       "sendrecv, or all"},
      {"-b,--minbytes", at<&B::sweep, &comm::SweepFlags::min>,
       "Smallest collective size (nccl-tests -b; default 8)"},
      {"-e,--maxbytes", at<&B::sweep, &comm::SweepFlags::max>,
       "Largest collective size (nccl-tests -e; default 128M)"},
      {"-f,--stepfactor", at<&B::sweep, &comm::SweepFlags::factor>,
       "Size factor between collective sizes, a whole number >= 2 (nccl-tests -f; default 2)"},
      Spec{"-n,--iters", at<&B::iters>, "Timed collective iterations (nccl-tests -n; default 20)"}
          .range(1, 100000),
      Spec{"-w,--warmup_iters", at<&B::warmup>, "Warm-up iterations (nccl-tests -w; default 5)"}
          .range(0, 100000),
      Spec{"-c,--check", at<&B::check>, "Check collective results (nccl-tests -c; default 1)"}
          .range(0, 1),
      {"--sustained", at<&B::sustained>,
       "Hold a transfer this long (90s, 5m) beside temperature, clocks and power"},
      Spec{"--sustained-kind", at<&B::sustained_kind>,
           "Transfer to hold: h2d, d2h, bidir, p2p, d2d_local (default h2d)"}
          .only_with("--sustained"),
      Spec{"--sustained-size", at<&B::sustained_size>, "Size of each held copy (default 256M)"}
          .only_with("--sustained"),
      Spec{"--sustained-engine", at<&B::sustained_engine>, "ce or sm (default ce)"}.only_with(
          "--sustained"),
      Spec{"--sustained-gpu", at<&B::sustained_gpu>, "GPU of the held transfer (default 0)"}
          .only_with("--sustained"),
      {"--machine", at<&B::machine>,
       "Free text naming the machine, written into the measurement file"},
  };
  return specs;
}

}  // namespace linkwise::measure
