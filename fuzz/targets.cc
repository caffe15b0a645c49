#include "targets.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "linkwise/measure/measurement.h"
#include "linkwise/probe/discover.h"
#include "linkwise/probe/machine.h"
#include "linkwise/probe/nccl_xml.h"
#include "linkwise/probe/sysfs.h"
#include "linkwise/report/drawing.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/work/model.h"
#include "measure/nvbandwidth_log.h"
#include "measure/p2p_matrix_log.h"
#include "probe/xid.h"

namespace linkwise::fuzz {

namespace {

std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `f`; the documented errors are expected outcomes.
template <class F>
int guarded(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const RuntimeError&) {
  }
  return 0;
}

// A built chassis is analysed and drawn too when it is small (what topo and draw run next).
void use_chassis(const topo::ChassisSpec& spec) {
  topo::Chassis c = topo::build_chassis(spec);
  if (c.nodes().size() <= 64) (void)topo::analyse(c), (void)report::chassis_svg(c);
}

}  // namespace

int chassis_yaml(const std::uint8_t* data, std::size_t size) {
  return guarded([&] { use_chassis(topo::parse_chassis_spec(text_of(data, size), "fuzz.yaml")); });
}

int model_yaml(const std::uint8_t* data, std::size_t size) {
  return guarded([&] { (void)work::parse_model(text_of(data, size), "fuzz.yaml"); });
}

int measurement_json(const std::uint8_t* data, std::size_t size) {
  return guarded([&] { (void)measure::parse_measurements(text_of(data, size), "fuzz.json"); });
}

int tool_log(const std::uint8_t* data, std::size_t size) {
  const std::string text = text_of(data, size);
  (void)probe::detail::parse_xid_events(text);
  return guarded([&] {
    if (measure::detail::is_nvbandwidth_log(text))
      (void)measure::detail::parse_nvbandwidth_log(text, "fuzz.txt");
    if (measure::detail::is_p2p_matrix_log(text))
      (void)measure::detail::parse_p2p_matrix_log(text, "fuzz.txt");
  });
}

int nccl_xml(const std::uint8_t* data, std::size_t size) {
  return guarded([&] {
    std::vector<std::string> notes;
    use_chassis(probe::import_nccl_topology(text_of(data, size), "fuzz.xml", "", &notes));
  });
}

int sysfs_tree(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  // Deep below the temporary folder, so that relative links with a few ".." stay inside it.
  static const fs::path base =
      fs::temp_directory_path() / ("linkwise-fuzz-" + std::to_string(::getpid()));
  static const fs::path root = base / "a/b/c/d/e/f/g/h/root";
  std::error_code ec;
  fs::remove_all(base, ec);
  fs::create_directories(root, ec);
  std::string in = text_of(data, size);
  std::size_t pos = 0;
  int records = 0;
  auto next = [&](std::string& out) {
    if (pos >= in.size()) return false;
    std::size_t end = in.find('\0', pos);
    if (end == std::string::npos) end = in.size();
    out = in.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  std::string path, contents;
  while (records < 256 && next(path)) {
    if (!next(contents)) contents.clear();
    ++records;
    bool link = !path.empty() && path[0] == '@';
    if (link) path.erase(0, 1);
    // Paths stay below the root: no absolute paths, no "..", nothing long.
    if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos || path.size() > 300)
      continue;
    fs::path p = root / path;
    fs::create_directories(p.parent_path(), ec);
    if (link) {
      // Link targets are relative and climb at most eight folders.
      std::size_t ups = 0;
      for (std::size_t i = contents.find(".."); i != std::string::npos;
           i = contents.find("..", i + 2))
        ++ups;
      if (contents.empty() || contents[0] == '/' || ups > 8 || contents.size() > 300) continue;
      fs::create_symlink(contents, p, ec);
    } else {
      std::ofstream(p, std::ios::binary) << contents;
    }
  }
  int rc = guarded([&] {
    probe::SysfsReader sys = probe::SysfsReader::for_copy(root.string());
    probe::Machine m = probe::read_machine(sys, nullptr, "no NVML while fuzzing");
    probe::Discovery d = probe::discover(m, "fuzz");
    (void)topo::build_chassis(d.spec);
  });
  fs::remove_all(base, ec);
  return rc;
}

Entry find_entry(std::string_view name) {
  if (name == "chassis_yaml") return chassis_yaml;
  if (name == "model_yaml") return model_yaml;
  if (name == "measurement_json") return measurement_json;
  if (name == "nccl_xml") return nccl_xml;
  if (name == "sysfs_tree") return sysfs_tree;
  if (name == "tool_log") return tool_log;
  return nullptr;
}

}  // namespace linkwise::fuzz
