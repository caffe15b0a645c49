#include "linkwise/report/bench_report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "linkwise/report/nccl_tests_table.h"
#include "linkwise/report/table.h"
#include "linkwise/util/text.h"

namespace linkwise::report {

using namespace measure;  // the benchmark's result types, read here

namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : "N/A"; }

std::string host_text(const BenchReport& r) {
  if (r.host.empty()) return "";
  Table t;
  t.header({"GPU", "engine", "size", "h2d", "d2h", "bidir", "bidir h2d", "bidir d2h"});
  std::map<std::tuple<int, std::string, std::uint64_t>, std::map<std::string, const CopyResult*>>
      rows;
  for (const auto& c : r.host)
    rows[{c.kind == "h2d" ? c.dst : c.src, to_string(c.engine), c.bytes}][c.kind] = &c;
  for (const auto& [key, k] : rows) {
    auto fig = [&k = k](const char* kind) {
      return k.count(kind) ? num(k.at(kind)->GBps.median) : "-";
    };
    const CopyResult* b = k.count("bidir") ? k.at("bidir") : nullptr;
    bool dirs = b && b->direction_GBps.size() == 2;
    t.row({std::to_string(std::get<0>(key)), std::get<1>(key), format_size_bytes(std::get<2>(key)),
           fig("h2d"), fig("d2h"), fig("bidir"), dirs ? num(b->direction_GBps[0]) : "-",
           dirs ? num(b->direction_GBps[1]) : "-"});
  }
  return fmt::format(
      "Host <-> device, pinned memory (GB/s; median of {} samples of {} copies; bidir = both at "
      "once, summed)\n{}\n",
      r.copy.samples, r.copy.loops, t.render());
}

// p2pBandwidthLatencyTest's matrix layout: "   D\D     0      1", rows "     0 value value".
std::string matrix(const std::string& title, const std::vector<int>& gpus,
                   const std::map<std::pair<int, int>, double>& v) {
  std::string o = title + "\n   D\\D";
  for (int g : gpus) o += fmt::format("{:>8}", g);
  o += "\n";
  for (int a : gpus) {
    o += fmt::format("{:>6} ", a);
    for (int b : gpus) {
      auto it = v.find({a, b});
      o += fmt::format("{:>8}", it == v.end() ? "N/A" : num(it->second));
    }
    o += "\n";
  }
  return o + "\n";
}

std::string peer_text(const BenchReport& r) {
  std::vector<int> gpus;
  for (const auto& d : r.devices) gpus.push_back(d.index);
  std::string o;
  std::set<std::pair<std::string, std::uint64_t>> engines_sizes;
  for (const auto* list : {&r.peer_on, &r.peer_off})
    for (const auto& c : *list) engines_sizes.insert({to_string(c.engine), c.bytes});
  for (const auto& [engine, bytes] : engines_sizes) {
    for (bool on : {false, true}) {
      const auto& list = on ? r.peer_on : r.peer_off;
      for (const char* kind : {"p2p", "p2p_bidir"}) {
        std::map<std::pair<int, int>, double> v;
        for (const auto& c : r.local)
          if (to_string(c.engine) == engine && c.bytes == bytes)
            v[{c.src, c.src}] = c.GBps.median * (kind[3] ? 2 : 1);
        bool any = false;
        for (const auto& c : list) {
          if (c.kind != kind || to_string(c.engine) != engine || c.bytes != bytes) continue;
          v[{c.src, c.dst}] = c.GBps.median;
          if (std::string(kind) == "p2p_bidir") v[{c.dst, c.src}] = c.GBps.median;
          any = true;
        }
        if (!any) continue;
        o += matrix(fmt::format("{} P2P={} Bandwidth Matrix (GB/s), {}, {}",
                                std::string(kind) == "p2p" ? "Unidirectional" : "Bidirectional",
                                on ? "Enabled" : "Disabled", engine, format_size_bytes(bytes)),
                    gpus, v);
      }
    }
  }
  for (bool on : {false, true}) {
    const auto& lat = on ? r.latency_on : r.latency_off;
    if (lat.empty()) continue;
    std::map<std::pair<int, int>, double> v;
    for (const auto& l : lat) v[{l.src, l.dst}] = l.us;
    o += matrix(fmt::format("P2P={} Latency Matrix (us), GPU", on ? "Enabled" : "Disabled"), gpus,
                v);
  }
  return o;
}

std::string local_text(const BenchReport& r) {
  if (r.local.empty()) return "";
  Table t;
  t.header({"GPU", "engine", "size", "local copy GB/s"});
  for (const auto& c : r.local)
    t.row({std::to_string(c.src), to_string(c.engine), format_size_bytes(c.bytes),
           num(c.GBps.median)});
  return "Device-local copy (bytes copied per second; each byte is read and written)\n" +
         t.render() + "\n";
}

std::string sustained_text(const SustainedResult& s) {
  Table t;
  t.header({"t (s)", "GB/s", "temp (C)", "SM MHz", "mem MHz", "power (W)"});
  for (const auto& p : s.points) {
    auto f = [&](double TelemetrySample::*m, const char* spec) {
      return p.telemetry && std::isfinite((*p.telemetry).*m)
                 ? fmt::format(fmt::runtime(spec), (*p.telemetry).*m)
                 : "-";
    };
    t.row({fmt::format("{:.1f}", p.t_s), num(p.GBps), f(&TelemetrySample::temp_c, "{:.0f}"),
           f(&TelemetrySample::sm_clock_mhz, "{:.0f}"),
           f(&TelemetrySample::mem_clock_mhz, "{:.0f}"), f(&TelemetrySample::power_w, "{:.0f}")});
  }
  const auto& o = s.options;
  std::string out = fmt::format("Sustained {} on GPU {} ({}), {} copies of {} for {:g} s\n{}",
                                o.kind, o.gpu, s.device, to_string(o.engine),
                                format_size_bytes(o.bytes), o.duration_s, t.render());
  if (!s.telemetry_note.empty()) out += s.telemetry_note + "\n";
  out += fmt::format(
      "first quarter {} GB/s, last quarter {} GB/s, drop {:.1f}%: {}\n\n", num(s.first_GBps),
      num(s.last_GBps), s.drop_pct,
      s.slows_down ? fmt::format("SLOWS DOWN (more than {:g}%)", o.slowdown_pct) : "steady");
  return out;
}

std::string nccl_text(const measure::NcclSweep& s) {
  std::vector<NcclTestsRow> rows;
  for (const auto& r : s.rows) {
    NcclTestsRow row{r.size_bytes, r.count, r.type, r.redop, r.root, {}};
    for (int k = 0; k < 2; ++k) row.groups[k] = {r.time_us[k], r.algbw[k], r.busbw[k], r.wrong[k]};
    rows.push_back(row);
  }
  return nccl_tests_table(rows, s.avg_busbw);
}

}  // namespace

std::string bench_text(const BenchReport& r) {
  std::string o;
  for (const auto& d : r.devices)
    o += fmt::format("# GPU {}: {} [{}] {} SMs, {:.0f} GiB\n", d.index, d.name, d.pci_bus_id,
                     d.sm_count, d.memory_bytes / 1073741824.0);
  o += "\n" + host_text(r) + local_text(r) + peer_text(r);
  o = fit_width(o);
  // The nccl-tests tables stay as nccl-tests prints them (wider than 100 columns), unwrapped, so
  // that tools reading nccl-tests logs read them; everything else fits 100 columns.
  for (const auto& s : r.nccl)
    o += fmt::format("# {}_perf: {} ranks, NCCL {}\n{}\n", to_string(s.op), s.nranks,
                     s.nccl_version, nccl_text(s));
  std::string tail;
  if (r.sustained) tail += sustained_text(*r.sustained);
  for (const auto& n : r.notes) tail += "note: " + n + "\n";
  return o + fit_width(tail);
}

std::string bench_stopped_line(const BenchReport& r, const std::string& signal,
                               const std::string& path) {
  if (signal.empty()) return "";
  std::size_t n = measurements_finished(r);
  std::string kept = path.empty() ? "" : fmt::format(", kept in {}", path);
  return fmt::format("linkwise: stopped by {}: {} measurement{} finished{}{}\n", signal, n,
                     n == 1 ? "" : "s", kept, r.complete ? "" : " (\"complete\": false)");
}

}  // namespace linkwise::report
