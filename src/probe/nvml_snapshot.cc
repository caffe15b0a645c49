#include "nvml_snapshot.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "linkwise/util/error.h"

namespace linkwise::probe::detail {

namespace {

using nlohmann::json;

struct Reader {
  std::string file;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(fmt::format("NVML snapshot {}: {}", where, what), {file, 0, 0});
  }
  void keys(const json& o, const std::set<std::string>& known, const std::string& where) const {
    if (!o.is_object()) fail(where, "must be an object");
    for (auto it = o.begin(); it != o.end(); ++it)
      if (!known.count(it.key())) fail(where, fmt::format("unknown key '{}'", it.key()));
  }
  std::uint64_t count(const json& v, const std::string& where, std::uint64_t max) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
      fail(where, fmt::format("must be a whole number from 0 to {}", max));
    return v.get<std::uint64_t>();
  }
  bool flag(const json& v, const std::string& where) const {
    if (!v.is_boolean()) fail(where, "must be true or false");
    return v.get<bool>();
  }
  std::string text(const json& v, const std::string& where) const {
    if (!v.is_string() || v.get<std::string>().size() > 256)
      fail(where, "must be a string (at most 256 characters)");
    return v.get<std::string>();
  }
};

constexpr std::uint64_t kU32 = std::numeric_limits<unsigned>::max();

}  // namespace

std::unique_ptr<FakeNvml> parse_nvml_snapshot(const std::string& json_text,
                                              const std::string& filename) {
  Reader r{filename};
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded()) throw InputError("not valid JSON (an NVML snapshot)", {filename, 0, 0});
  r.keys(j, {"gpus"}, "top level");
  if (!j.contains("gpus") || !j["gpus"].is_array() || j["gpus"].size() > 1024)
    r.fail("'gpus'", "must be a list of at most 1024 GPUs");
  auto nvml = std::make_unique<FakeNvml>();
  for (std::size_t i = 0; i < j["gpus"].size(); ++i) {
    const json& g = j["gpus"][i];
    const std::string at = fmt::format("gpus[{}]", i);
    r.keys(g,
           {"bus_id", "name", "throttle_reasons", "temperature_c", "slowdown_temperature_c",
            "power_mw", "power_limit_mw", "ecc_corrected", "ecc_uncorrected", "bar1_total_bytes",
            "remapped_rows", "fabric_state", "fabric_status", "nvlinks"},
           at);
    FakeNvml::Gpu gpu;
    if (!g.contains("bus_id")) r.fail(at, "needs 'bus_id'");
    gpu.bus_id = r.text(g["bus_id"], at + ".bus_id");
    if (g.contains("name")) gpu.name = r.text(g["name"], at + ".name");
    auto u32 = [&](const char* k) {
      return static_cast<unsigned>(r.count(g[k], at + "." + k, kU32));
    };
    auto u64 = [&](const char* k) {
      return r.count(g[k], at + "." + k, std::numeric_limits<std::uint64_t>::max());
    };
    if (g.contains("throttle_reasons")) gpu.throttle_reasons = u64("throttle_reasons");
    if (g.contains("temperature_c")) gpu.temperature_c = u32("temperature_c");
    if (g.contains("slowdown_temperature_c"))
      gpu.slowdown_temperature_c = u32("slowdown_temperature_c");
    if (g.contains("power_mw")) gpu.power_mw = u32("power_mw");
    if (g.contains("power_limit_mw")) gpu.power_limit_mw = u32("power_limit_mw");
    if (g.contains("ecc_corrected")) gpu.ecc_corrected = u64("ecc_corrected");
    if (g.contains("ecc_uncorrected")) gpu.ecc_uncorrected = u64("ecc_uncorrected");
    if (g.contains("bar1_total_bytes")) gpu.bar1_total_bytes = u64("bar1_total_bytes");
    if (g.contains("fabric_state"))
      gpu.fabric_state = static_cast<unsigned>(r.count(g["fabric_state"], at + ".fabric_state", 3));
    if (g.contains("fabric_status"))
      gpu.fabric_status =
          static_cast<NvmlReturn>(r.count(g["fabric_status"], at + ".fabric_status", 999));
    if (g.contains("remapped_rows")) {
      const json& rr = g["remapped_rows"];
      const std::string rat = at + ".remapped_rows";
      r.keys(rr, {"correctable", "uncorrectable", "pending", "failure"}, rat);
      NvmlRemappedRows rows;
      if (rr.contains("correctable"))
        rows.correctable = static_cast<unsigned>(r.count(rr["correctable"], rat, kU32));
      if (rr.contains("uncorrectable"))
        rows.uncorrectable = static_cast<unsigned>(r.count(rr["uncorrectable"], rat, kU32));
      if (rr.contains("pending")) rows.pending = r.flag(rr["pending"], rat + ".pending");
      if (rr.contains("failure")) rows.failure = r.flag(rr["failure"], rat + ".failure");
      gpu.remapped_rows = rows;
    }
    if (g.contains("nvlinks")) {
      if (!g["nvlinks"].is_array() || g["nvlinks"].size() > 64)
        r.fail(at + ".nvlinks", "must be a list of at most 64 links");
      for (std::size_t l = 0; l < g["nvlinks"].size(); ++l) {
        const json& lj = g["nvlinks"][l];
        const std::string lat = fmt::format("{}.nvlinks[{}]", at, l);
        r.keys(lj, {"active", "version", "remote_bus_id"}, lat);
        FakeNvml::Link link;
        if (lj.contains("active")) link.active = r.flag(lj["active"], lat + ".active");
        if (lj.contains("version"))
          link.version = static_cast<unsigned>(r.count(lj["version"], lat + ".version", 100));
        if (lj.contains("remote_bus_id"))
          link.remote_bus_id = r.text(lj["remote_bus_id"], lat + ".remote_bus_id");
        gpu.links.push_back(link);
      }
    }
    nvml->gpus.push_back(std::move(gpu));
  }
  return nvml;
}

}  // namespace linkwise::probe::detail
