// linkwise bench: measure host-device, peer and collective bandwidth on this machine's GPUs.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "commands.h"
#include "linkwise/comm/sweep.h"
#include "linkwise/measure/bench.h"
#include "linkwise/measure/fake_gpu.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

namespace {

struct BenchFlags {
  std::string gpus, sizes = "64M", engines = "ce,sm", skip, ops = "all_reduce";
  int samples = 3, loops = 16;
  comm::SweepFlags sweep{"8", "128M", {}, {}};
  int iters = 20, warmup = 5, check = 1;
  std::string sustained, sustained_kind = "h2d", sustained_size = "256M", sustained_engine = "ce";
  int sustained_gpu = 0;
  std::string machine, output, fake;
  bool json = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

measure::CopyEngine parse_engine(const std::string& e) {
  if (e == "ce") return measure::CopyEngine::kCe;
  if (e == "sm") return measure::CopyEngine::kSm;
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
    if (used != g.size() || d < 0) throw InputError(fmt::format("--gpus: '{}' is not a GPU number", g));
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw InputError(fmt::format("--gpus: GPU {} is listed twice in '{}'", d, list));
    out.push_back(d);
  }
  return out;
}

measure::SustainedOptions sustained_options(const BenchFlags& f, const std::vector<int>& gpus) {
  measure::SustainedOptions s;
  s.duration_s = measure::parse_duration_s(f.sustained);
  measure::check_sustained_kind(f.sustained_kind);
  s.kind = f.sustained_kind;
  s.bytes = parse_size_bytes(f.sustained_size, "--sustained-size");
  s.engine = parse_engine(f.sustained_engine);
  if (f.sustained_gpu < 0) throw InputError(fmt::format("--sustained-gpu: '{}' is not a GPU number", f.sustained_gpu));
  if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), f.sustained_gpu) == gpus.end())
    throw InputError(fmt::format("--sustained-gpu: GPU {} is not among --gpus {}", f.sustained_gpu, f.gpus));
  s.gpu = f.sustained_gpu;
  s.interval_s = std::min(1.0, s.duration_s / 10);
  return s;
}

// Every flag is checked here, before a GPU is looked for: bad input exits 2 on any machine.
measure::BenchOptions options(const BenchFlags& f) {
  measure::BenchOptions o;
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
      throw InputError(fmt::format("--skip: unknown part '{}'; valid: {}", s, join(parts, ", ")));
    (s == "host" ? o.host : s == "local" ? o.local : s == "peer" ? o.peer : s == "latency" ? o.latency : o.nccl) = false;
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

}  // namespace

Handler setup_bench(CLI::App& sub) {
  auto f = std::make_shared<BenchFlags>();
  sub.add_option("--gpus", f->gpus, "CUDA devices to measure, e.g. 0,1 (default: all)");
  sub.add_option("--sizes", f->sizes, "Copy sizes, e.g. 4M,64M,256M (default 64M, as nvbandwidth)");
  sub.add_option("--engines", f->engines, "Copy engines: ce (cudaMemcpyAsync), sm (copy kernel)");
  sub.add_option("--samples", f->samples, "Samples per figure; the median is reported (default 3)")->check(CLI::Range(1, 1000));
  sub.add_option("--loops", f->loops, "Copies per sample (default 16)")->check(CLI::Range(1, 100000));
  sub.add_option("--skip", f->skip, "Parts to skip: host, local, peer, latency, nccl");
  sub.add_option("--ops", f->ops, "Collectives: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, or all");
  sub.add_option("-b,--minbytes", f->sweep.min, "Smallest collective size (nccl-tests -b; default 8)");
  sub.add_option("-e,--maxbytes", f->sweep.max, "Largest collective size (nccl-tests -e; default 128M)");
  auto factor = std::make_shared<std::string>();
  auto* factor_opt = sub.add_option("-f,--stepfactor", *factor,
                                    "Size factor between collective sizes, a whole number >= 2 (nccl-tests -f; default 2)");
  sub.add_option("-n,--iters", f->iters, "Timed collective iterations (nccl-tests -n; default 20)")->check(CLI::Range(1, 100000));
  sub.add_option("-w,--warmup_iters", f->warmup, "Warm-up iterations (nccl-tests -w; default 5)")->check(CLI::Range(0, 100000));
  sub.add_option("-c,--check", f->check, "Check collective results (nccl-tests -c; default 1)")->check(CLI::Range(0, 1));
  sub.add_option("--sustained", f->sustained, "Hold a transfer this long (90s, 5m) beside temperature, clocks and power");
  std::vector<CLI::Option*> held;
  held.push_back(sub.add_option("--sustained-kind", f->sustained_kind, "Transfer to hold: h2d, d2h, bidir, p2p, d2d_local (default h2d)"));
  held.push_back(sub.add_option("--sustained-size", f->sustained_size, "Size of each held copy (default 256M)"));
  held.push_back(sub.add_option("--sustained-engine", f->sustained_engine, "ce or sm (default ce)"));
  held.push_back(sub.add_option("--sustained-gpu", f->sustained_gpu, "GPU of the held transfer (default 0)"));
  sub.add_option("--machine", f->machine, "Free text naming the machine, written into the measurement file");
  sub.add_flag("--json", f->json, "Print the measurement file (JSON) instead of tables");
  sub.add_option("-o,--output", f->output, "Also write the measurement file (JSON, for linkwise calibrate) here");
  sub.add_option("--fake-gpus", f->fake, "Run on a simulated machine (tests)")->group("");
  return [f, held, factor, factor_opt] {
    if (factor_opt->count() > 0) f->sweep.factor = *factor;
    for (const auto* opt : held)
      if (opt->count() > 0 && f->sustained.empty())
        throw InputError(fmt::format("{} needs --sustained DURATION", opt->get_name()));
    auto o = options(*f);
    std::unique_ptr<measure::CudaApi> cuda;
    measure::FakeCuda* fake = nullptr;
    if (!f->fake.empty()) {
      auto fc = std::make_unique<measure::FakeCuda>(measure::parse_fake_spec(f->fake));
      fake = fc.get();
      cuda = std::move(fc);
    } else {
      cuda = measure::make_cuda_api();
    }
    if (!cuda) throw RuntimeError("no GPU found: linkwise was built without CUDA");
    std::string why;
    if (cuda->device_count(&why) == 0) throw RuntimeError("no GPU found: " + why);
    measure::ProcessGroup group;
    if (measure::launched_by_mpirun()) {
      auto g = measure::mpi_process_group(&why);
      if (!g) throw RuntimeError(why);
      group = *g;
    }
    std::unique_ptr<measure::NcclApi> nccl;
    std::string nccl_why;
    if (o.nccl) {
      if (fake) nccl = std::make_unique<measure::FakeNccl>(*fake);
      else nccl = measure::make_nccl_api(*cuda, &nccl_why);
    }
    std::unique_ptr<measure::GpuTelemetry> telemetry;
    std::string tel_why;
    if (o.sustained) {
      if (fake) telemetry = std::make_unique<measure::FakeTelemetry>();
      else telemetry = measure::make_nvml_telemetry(&tel_why);
    }
    auto report = measure::run_bench(*cuda, nccl.get(), telemetry.get(), o, group);
    if (o.nccl && !nccl) report.notes.push_back("collectives skipped: " + nccl_why);
    if (report.sustained && !telemetry) report.sustained->telemetry_note = "no telemetry: " + tel_why;
    auto file = measure::bench_measurements(report);
    std::string json = measure::to_json(file).dump(2) + "\n";
    if (group.rank == 0) {
      emit(f->json ? json : measure::bench_text(report), "");
      if (!f->output.empty()) write_file_atomic(f->output, json);
    }
    group.finalize();
    return 0;
  };
}

}  // namespace linkwise::cli
