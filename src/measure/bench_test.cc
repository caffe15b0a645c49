#include "linkwise/measure/bench.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "linkwise/measure/fake_gpu.h"
#include "linkwise/util/text.h"

namespace linkwise::measure {

namespace {

// A small run of every part on two simulated GPUs: copies, latency, two collectives of two sizes
// each, a sustained run of a few windows.
BenchOptions small_run() {
  BenchOptions o;
  o.copy.sizes = {1 << 20};
  o.copy.samples = 2;
  o.copy.loops = 1;
  o.copy.warmup = 0;
  o.ops = {comm::Op::kAllReduce, comm::Op::kAllGather};
  o.nccl_options.sizes = {1024, 65536};
  o.nccl_options.min_bytes = 1024;
  o.nccl_options.max_bytes = 65536;
  o.nccl_options.iters = 1;
  o.nccl_options.warmup = 0;
  SustainedOptions s;
  s.bytes = 1 << 20;
  s.duration_s = 0.004;  // 1 MiB at 55 GB/s is ~19 us a copy: a few windows of 1 ms
  s.interval_s = 0.001;
  o.sustained = s;
  return o;
}

// The measurements a measurement file's text holds, counted as measurements_finished() counts
// them: copy entries, latency pairs, collective rows, the sustained run.
std::size_t measurements_in(const std::string& text, const std::string& name) {
  auto parsed = parse_measurements(text, name);  // throws if it is not a valid measurement file
  std::size_t n = 0;
  for (const auto& m : parsed.measurements) n += m.kind != "collective";
  auto j = nlohmann::json::parse(text);
  n += j.at("latency_us").size();
  for (const auto& s : j.at("nccl")) n += s.at("rows").size();
  n += j.contains("sustained");
  return n;
}
std::size_t measurements_in_file(const std::string& path) {
  return measurements_in(read_file(path), path);
}

struct Fakes {
  FakeCuda cuda{parse_fake_spec("gpus=2,p2p=300,latency=0")};
  FakeNccl nccl{cuda};
  FakeTelemetry telemetry;
};

}  // namespace

TEST(MeasureBench, HooksSeeEachMeasurementAsItFinishes) {
  Fakes f;
  std::vector<std::size_t> seen;
  BenchHooks hooks;
  hooks.finished = [&](const BenchReport& r) {
    EXPECT_FALSE(r.complete);  // the run is not over while it reports
    seen.push_back(measurements_finished(r));
  };
  auto r = run_bench(f.cuda, &f.nccl, &f.telemetry, small_run(), {}, hooks);
  EXPECT_TRUE(r.complete);
  // Hand count: host 2 GPUs x 2 engines x (h2d, d2h, bidir) = 12; local 2 x 2 = 4; peer on:
  // 0->1 (p2p, bidir) and 1->0 (p2p) for ce and sm = 6; peer off, ce only = 3; latency 2 x 2
  // pairs (the diagonal included), on and off = 8; collectives 2 ops x 2 sizes = 4; sustained 1.
  const std::size_t n = measurements_finished(r);
  EXPECT_EQ(n, 12u + 4 + 6 + 3 + 8 + 4 + 1);
  ASSERT_EQ(seen.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], i + 1);  // one at a time, in order
  EXPECT_EQ(f.cuda.live_handles(), 0);
}

TEST(MeasureBench, ThePlanIsWhatACompleteRunMeasures) {
  // The progress total: the plan counted before the run equals what the run finishes, and each
  // planned list is the results' list in order (same kind, GPUs, engine, size).
  auto same = [](const std::vector<CopyResult>& plan, const std::vector<CopyResult>& got) {
    ASSERT_EQ(plan.size(), got.size());
    for (std::size_t i = 0; i < plan.size(); ++i) {
      EXPECT_EQ(plan[i].kind, got[i].kind) << i;
      EXPECT_EQ(plan[i].src, got[i].src) << i;
      EXPECT_EQ(plan[i].dst, got[i].dst) << i;
      EXPECT_EQ(plan[i].engine, got[i].engine) << i;
      EXPECT_EQ(plan[i].bytes, got[i].bytes) << i;
      EXPECT_EQ(plan[i].peer_access, got[i].peer_access) << i;
    }
  };
  for (const char* spec : {"gpus=3,p2p=300,latency=0", "gpus=3,p2p=0,latency=0", "gpus=1"}) {
    SCOPED_TRACE(spec);
    FakeCuda cuda{parse_fake_spec(spec)};
    FakeNccl nccl{cuda};
    FakeTelemetry telemetry;
    auto o = small_run();
    o.copy.sizes = {4096, 1 << 20};
    std::string why;
    const int gpus = cuda.device_count(&why);
    std::vector<int> all;
    for (int i = 0; i < gpus; ++i) all.push_back(i);
    const auto plan = plan_bench(cuda, true, all, o, {});
    auto r = run_bench(cuda, &nccl, &telemetry, o, {});
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(plan.measurements(), measurements_finished(r));
    same(plan.host, r.host);
    same(plan.local, r.local);
    same(plan.peer_on, r.peer_on);
    same(plan.peer_off, r.peer_off);
    EXPECT_EQ(plan.latency_on.size(), r.latency_on.size());
    EXPECT_EQ(plan.latency_off.size(), r.latency_off.size());
  }
  // Hand count for 3 GPUs without peer access, 2 sizes: host 3 x 2 sizes x 2 engines x 3 kinds =
  // 36; local 3 x 2 x 2 = 12; peer on 0 (no pair can access); peer off 6 ordered pairs x 2 sizes x
  // ce, plus bidir on the 3 pairs a < b x 2 sizes = 18; latency on: the 3 diagonal pairs only;
  // latency off: 9 pairs; collectives 2 ops x 2 sizes = 4; sustained 1.
  FakeCuda cuda{parse_fake_spec("gpus=3,p2p=0")};
  auto o = small_run();
  o.copy.sizes = {4096, 1 << 20};
  EXPECT_EQ(plan_bench(cuda, true, {0, 1, 2}, o, {}).measurements(),
            36u + 12 + 0 + 18 + 3 + 9 + 4 + 1);
  // Without NCCL the collectives are not planned; under mpirun only they are, and only rank 0
  // holds the sustained run.
  EXPECT_EQ(plan_bench(cuda, false, {0, 1, 2}, o, {}).measurements(), 36u + 12 + 18 + 3 + 9 + 1);
  ProcessGroup g;
  g.size = 4;
  g.rank = 1;
  EXPECT_EQ(plan_bench(cuda, true, {1}, o, g).measurements(), 4u);
}

TEST(MeasureBench, StopAfterKMeasurementsLeavesExactlyK) {
  // k into every part of the run: copies, latency, collectives, just before the sustained run.
  const std::size_t n = 38;  // as counted in the test above
  for (std::size_t k = 1; k < n; ++k) {
    SCOPED_TRACE(k);
    Fakes f;
    std::size_t calls = 0;
    BenchHooks hooks{[&](const BenchReport&) { ++calls; }, [&] { return calls >= k; }};
    auto r = run_bench(f.cuda, &f.nccl, &f.telemetry, small_run(), {}, hooks);
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(calls, k);
    EXPECT_EQ(measurements_finished(r), k);
    EXPECT_EQ(measurements_in(bench_file_text(r), "final"), k);
    EXPECT_EQ(f.cuda.live_handles(), 0);
  }
}

TEST(MeasureBench, StopAfterKMeasurementsLeavesExactlyKInAValidFile) {
  for (std::size_t k : {1, 14, 37}) {  // in the copies, the latency pairs, the collectives
    SCOPED_TRACE(k);
    Fakes f;
    std::string path = testing::temp_dir() + "/measured.json";
    std::size_t calls = 0;
    BenchHooks hooks = write_as_it_goes(path, [&] { return calls >= k; });
    auto write = hooks.finished;
    hooks.finished = [&](const BenchReport& r) {
      write(r);
      ++calls;
      // At every moment the file is a valid measurement file of what finished.
      EXPECT_EQ(measurements_in_file(path), calls);
    };
    auto r = run_bench(f.cuda, &f.nccl, &f.telemetry, small_run(), {}, hooks);
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(calls, k);
    EXPECT_EQ(measurements_in_file(path), k);
    auto j = nlohmann::json::parse(read_file(path));
    EXPECT_EQ(j.at("complete"), false);
    // The final document (bench -o's last write) holds the same k and says it stopped.
    write_file_atomic(path, bench_file_text(r));
    EXPECT_EQ(measurements_in_file(path), k);
    j = nlohmann::json::parse(read_file(path));
    EXPECT_EQ(j.at("complete"), false);
    EXPECT_NE(j.at("notes").dump().find("stopped before the end"), std::string::npos);
  }
}

TEST(MeasureBench, StopBeforeTheFirstMeasurementWritesNothing) {
  Fakes f;
  std::string path = testing::temp_dir() + "/never.json";
  auto r = run_bench(f.cuda, &f.nccl, &f.telemetry, small_run(), {},
                     write_as_it_goes(path, [] { return true; }));
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(measurements_finished(r), 0u);
  EXPECT_FALSE(std::filesystem::exists(path));
  // What the command writes at the end is still a valid, empty file.
  write_file_atomic(path, bench_file_text(r));
  EXPECT_EQ(measurements_in_file(path), 0u);
}

TEST(MeasureBench, CompleteRunIsMarkedComplete) {
  Fakes f;
  auto r = run_bench(f.cuda, &f.nccl, &f.telemetry, small_run(), {});
  auto j = nlohmann::json::parse(bench_file_text(r));
  EXPECT_EQ(j.at("complete"), true);
  EXPECT_EQ(j.at("nccl").size(), 2u);
  EXPECT_EQ(j.at("nccl")[0].at("rows").size(), 2u);
}

TEST(MeasureBench, StoppedCollectiveKeepsItsFinishedSizes) {
  Fakes f;
  auto o = small_run();
  o.host = o.local = o.peer = o.latency = false;
  o.sustained.reset();
  o.nccl_options.sizes = {1024, 4096, 16384, 65536};
  std::size_t calls = 0;
  BenchHooks hooks{[&](const BenchReport&) { ++calls; }, [&] { return calls >= 3; }};
  auto r = run_bench(f.cuda, &f.nccl, nullptr, o, {}, hooks);
  ASSERT_EQ(r.nccl.size(), 1u);  // the second op never started
  ASSERT_EQ(r.nccl[0].rows.size(), 3u);
  EXPECT_EQ(r.nccl[0].rows.back().size_bytes, 16384u);
  // The average is over the sizes that finished: (out-of-place + in-place) x 3 rows / 6.
  double sum = 0;
  for (const auto& row : r.nccl[0].rows) sum += row.busbw[0] + row.busbw[1];
  EXPECT_NEAR(r.nccl[0].avg_busbw, sum / 6, 1e-9);
  // The file's collective entry is the largest size measured.
  auto file = bench_measurements(r);
  ASSERT_EQ(file.measurements.size(), 1u);
  EXPECT_EQ(file.measurements[0].bytes, 16384u);
}

}  // namespace linkwise::measure
