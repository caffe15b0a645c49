// The hardware catalog: link technologies and parts, every figure with its source.
//
// The catalog is data/catalog.yaml, compiled into the library. Each figure there is written as
// `[value, "source"]`; a source that begins with "derived:" says how the figure follows from
// others. Units are in the field names: `_bytes_per_s` is bytes per second per direction, `_s`
// seconds,
// `_w` watts, `_tflops` 1e12 floating-point operations per second, `_GTps` 1e9 transfers per
// second.
//
// Line rate and efficiency are kept apart: a link's line rate is what its standard signals
// (`unit_bytes_per_s` × lanes or links); `efficiency` is the fraction of it that large real
// transfers reach, measured by the sources the catalog names.
//
//   const auto& cat = linkwise::hw::Catalog::builtin();
//   const auto& pcie5 = cat.link_tech("pcie5");
//   double x16 = pcie5.line_bytes_per_s(16);   // 63.0e9
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linkwise::hw {

/// A figure and where it came from.
struct Figure {
  double value = 0;
  std::string source;  ///< spec or document and section; "derived: ..." when computed from others
  bool derived() const { return source.rfind("derived", 0) == 0; }
  bool operator==(const Figure&) const = default;
};

/// Families of link technology.
enum class LinkFamily { kPcie, kNvlink, kSocket, kNetwork };
const char* to_string(LinkFamily f);

/// One link technology at one generation, e.g. PCIe Gen5 or NVLink 4 or InfiniBand NDR.
struct LinkTech {
  std::string id;    ///< catalog key, e.g. "pcie5", "nvlink4", "upi-16", "ib-ndr"
  std::string name;  ///< human name, e.g. "PCIe Gen5"
  LinkFamily family = LinkFamily::kPcie;
  int generation = 0;
  std::string unit;         ///< "lane" (PCIe: width counts lanes) or "link" (count of links/ports)
  std::vector<int> widths;  ///< allowed lane widths (PCIe); empty = any positive count
  Figure transfer_rate_GTps;  ///< PCIe: transfers per second per lane (0 when not applicable)
  Figure encoding;            ///< PCIe: payload fraction of the line code (128/130 etc.)
  Figure unit_bytes_per_s;    ///< per lane or per link, per direction, at line rate
  Figure efficiency;          ///< fraction of line rate large real transfers reach
  /// Fraction of the one-way effective rate each direction keeps when both directions carry data at
  /// once (1 = the directions are independent; PCIe loses some to the other direction's read
  /// requests, ACKs and flow-control DLLPs). Optional in the catalog: 1 when not given.
  Figure duplex_efficiency{1.0, "derived: not given; the two directions assumed independent"};
  Figure latency_s;  ///< one traversal of the link (serialisation excluded)
  /// NCCL's bandwidth figure for the link, GB/s per direction, as its topology search counts it
  /// (src/graph/topo.h, topo.cc): per lane (PCIe), per link (NVLink), or for the whole connection
  /// between two CPUs whatever its count of links (socket: NCCL has one figure per CPU pair).
  /// Required for PCIe, NVLink and socket technologies; network ones carry none (value 0, no
  /// source): NCCL's search on one host does not count them.
  Figure nccl_bw_GBps;

  /// Line rate of `count` lanes or links, per direction, in bytes per second.
  double line_bytes_per_s(int count) const { return unit_bytes_per_s.value * count; }
  bool operator==(const LinkTech&) const = default;
};

enum class PartKind { kGpu, kCpu, kPcieSwitch, kNvSwitch, kNic, kNvme, kRetimer, kNetSwitch };
const char* to_string(PartKind k);
std::optional<PartKind> part_kind_from_string(const std::string& s);

/// A part: its kind, names, and figures keyed by field name (e.g. "bf16_dense_tflops").
/// Fields each kind carries are listed in docs/catalog.md.
struct Part {
  std::string id;    ///< catalog key, e.g. "h100-sxm"
  std::string name;  ///< marketing name
  PartKind kind = PartKind::kGpu;
  std::string vendor;
  std::map<std::string, Figure> figures;
  std::map<std::string, std::string>
      attributes;  ///< non-numeric: "nvlink" -> "nvlink4", "pcie" -> "pcie5"

  /// The figure's value, or `fallback` when the part does not carry it.
  double get(const std::string& field, double fallback = 0) const;
  bool has(const std::string& field) const { return figures.count(field) != 0; }
  /// A non-numeric attribute, or "".
  std::string attr(const std::string& key) const;
  bool operator==(const Part&) const = default;
};

/// A circuit-board or cable material: its insertion loss per millimetre at two frequencies. Loss at
/// another frequency follows the two-term model of a transmission line, conductor (skin-effect)
/// loss growing as sqrt(f) and dielectric loss as f:  alpha(f) = c·sqrt(f) + d·f, with c and d
/// fitted through the two catalog points (loss_db_per_mm_at(), docs/catalog.md).
struct BoardMaterial {
  std::string id;  ///< "fr4", "megtron6", "twinax-cable"
  std::string name;
  Figure loss_db_per_mm_8GHz;
  Figure loss_db_per_mm_16GHz;
  /// Insertion loss per millimetre at `ghz`, dB.
  double loss_db_per_mm_at(double ghz) const;
  bool operator==(const BoardMaterial&) const = default;
};

/// A PCIe generation's channel: its Nyquist frequency and the insertion loss its receivers recover,
/// bump to bump, with the share each end's package takes and each connector costs.
struct ChannelBudget {
  std::string tech;       ///< link technology id, "pcie5"
  Figure nyquist_GHz;     ///< half the symbol rate
  Figure loss_budget_db;  ///< total channel insertion loss allowed at the Nyquist frequency
  Figure package_db;      ///< one end's package (die bump to ball), charged at each end
  Figure connector_db;    ///< one connector (CEM slot, MCIO) mated pair
  Figure via_db;          ///< one via transition
  bool operator==(const ChannelBudget&) const = default;
};

/// The catalog of link technologies and parts.
class Catalog {
 public:
  /// The catalog compiled into the library: data/catalog.yaml, checked and turned into tables when
  /// the library is built (a catalog that does not parse fails the build), so nothing is parsed at
  /// run time. Built from those tables once, on first use.
  static const Catalog& builtin();
  /// Parses a catalog file; `filename` is used in error messages. Throws InputError.
  static Catalog parse(const std::string& yaml_text, const std::string& filename);

  /// Throws InputError with the closest ids when `id` is unknown.
  const LinkTech& link_tech(const std::string& id) const;
  const LinkTech* find_link_tech(const std::string& id) const;
  /// Throws InputError with the closest ids of that kind when `id` is unknown or of another kind.
  const Part& part(const std::string& id, std::optional<PartKind> kind = std::nullopt) const;
  const Part* find_part(const std::string& id) const;

  const std::vector<LinkTech>& link_techs() const { return techs_; }
  const std::vector<Part>& parts() const { return parts_; }
  std::vector<std::string> part_ids(std::optional<PartKind> kind = std::nullopt) const;
  std::vector<std::string> link_tech_ids() const;

  /// Board materials and PCIe channel budgets (the catalog's signal-integrity section).
  const std::vector<BoardMaterial>& materials() const { return materials_; }
  const BoardMaterial* find_material(const std::string& id) const;
  /// The channel budget of a PCIe technology id, or null.
  const ChannelBudget* channel_budget(const std::string& tech) const;
  const std::vector<ChannelBudget>& channels() const { return channels_; }

 private:
  std::vector<LinkTech> techs_;
  std::vector<Part> parts_;
  std::vector<BoardMaterial> materials_;
  std::vector<ChannelBudget> channels_;
};

/// One catalog entry's figures with their sources (those it carries) and its non-numeric
/// attributes, as `linkwise catalog ID` shows them.
struct EntryFigures {
  std::string id;
  std::vector<std::pair<std::string, Figure>> figures;
  std::vector<std::pair<std::string, std::string>> attributes;
};
/// The figures of link technology or part `id`. Throws InputError naming the closest ids when it is
/// neither.
EntryFigures describe(const Catalog& catalog, const std::string& id);

}  // namespace linkwise::hw
