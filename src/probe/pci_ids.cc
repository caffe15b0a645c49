#include "pci_ids.h"

namespace linkwise::probe::detail {

namespace {

constexpr unsigned kNvidia = 0x10de, kAmd = 0x1002, kMellanox = 0x15b3, kPlx = 0x10b5,
                   kBroadcom = 0x1000;

struct Entry {
  unsigned vendor, device;
  const char* part;
  const char* name;
};

// Device ids and names: PCI ID repository (https://pci-ids.ucw.cz), pci.ids as shipped in Debian 12
// (version 2023.04.10), except those marked "later", added to the repository after that snapshot.
constexpr Entry kTable[] = {
    {kNvidia, 0x2330, "h100-sxm", "GH100 [H100 SXM5 80GB]"},
    {kNvidia, 0x2336, "h100-sxm", "GH100 [H100]"},  // later
    {kNvidia, 0x2331, "h100-pcie", "GH100 [H100 PCIe]"},
    {kNvidia, 0x2335, "h200-sxm", "GH100 [H200 SXM 141GB]"},  // later
    {kNvidia, 0x20b0, "a100-sxm", "GA100 [A100 SXM4 40GB]"},
    {kNvidia, 0x20b2, "a100-sxm", "GA100 [A100 SXM4 80GB]"},
    {kNvidia, 0x20b5, "a100-pcie", "GA100 [A100 PCIe 80GB]"},
    {kNvidia, 0x20f1, "a100-pcie", "GA100 [A100 PCIe 40GB]"},
    {kNvidia, 0x1db1, "v100-sxm2", "GV100GL [Tesla V100 SXM2 16GB]"},
    {kNvidia, 0x1db5, "v100-sxm2", "GV100GL [Tesla V100 SXM2 32GB]"},
    {kNvidia, 0x2684, "rtx-4090", "AD102 [GeForce RTX 4090]"},
    {kNvidia, 0x2901, "b200", "GB100 [B200]"},                    // later
    {kAmd, 0x74a1, "mi300x", "Aqua Vanjaram [Instinct MI300X]"},  // later
    {kNvidia, 0x1af1, "nvswitch-gen2", "GA100 [A100 NVSwitch]"},
    {kNvidia, 0x22a3, "nvswitch-gen3", "GH100 [H100 NVSwitch]"},  // later
    {kMellanox, 0x1017, "connectx-5", "MT27800 Family [ConnectX-5]"},
    {kMellanox, 0x1019, "connectx-5", "MT28800 Family [ConnectX-5 Ex]"},
    {kMellanox, 0x101b, "connectx-6", "MT28908 Family [ConnectX-6]"},
    {kMellanox, 0x101d, "connectx-6", "MT2892 Family [ConnectX-6 Dx]"},
    {kMellanox, 0x1021, "connectx-7", "MT2910 Family [ConnectX-7]"},
    {kMellanox, 0x1023, "connectx-8", "CX8 Family [ConnectX-8]"},
    {kMellanox, 0xa2dc, "bluefield-3",
     "MT43244 BlueField-3 integrated ConnectX-7 network controller"},
    {kPlx, 0x8747, "plx-pex8747", "PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch"},
    {kBroadcom, 0xc010, "pex88096", "PEX880xx PCIe Gen 4 Switch"},
    {kBroadcom, 0xc030, "pex89144", "PEX890xx PCIe Gen 5 Switch"},
    // One device id for the whole PEX890xx family (PCI ID repository 1000:c030): found devices read
    // as the entry above, a designed pex89104 exports with this id.
    {kBroadcom, 0xc030, "pex89104", "PEX890xx PCIe Gen 5 Switch"},
};

}  // namespace

DeviceKind kind_of(unsigned vendor, unsigned class_code) {
  unsigned base = class_code >> 16, sub = (class_code >> 8) & 0xff;
  bool gpu_vendor = vendor == kNvidia || vendor == kAmd;
  // PCI Code and ID Assignment Specification: 03h display, 12h processing accelerator, 02h network
  // (00h Ethernet, 07h InfiniBand), 01h/08h/02h NVMe, 06h/04h PCI-to-PCI bridge, 06h/80h other
  // bridge.
  if (gpu_vendor && (base == 0x03 || base == 0x12)) return DeviceKind::kGpu;
  if (base == 0x02 && (sub == 0x00 || sub == 0x07)) return DeviceKind::kNic;
  if (class_code == 0x010802) return DeviceKind::kNvme;
  if (base == 0x06 && sub == 0x04) return DeviceKind::kBridge;
  if (vendor == kNvidia && base == 0x06 && sub == 0x80) return DeviceKind::kNvSwitch;
  return DeviceKind::kOther;
}

KnownPart known_part(unsigned vendor, unsigned device) {
  for (const auto& e : kTable)
    if (e.vendor == vendor && e.device == device) return {e.part, e.name};
  return {};
}

bool ids_for_part(const std::string& part, unsigned* vendor, unsigned* device) {
  for (const auto& e : kTable)
    if (part == e.part) {
      *vendor = e.vendor;
      *device = e.device;
      return true;
    }
  return false;
}

namespace {

// x86 CPUID signatures (family, model) of the catalog's CPUs, as NCCL writes them in
// familyid/modelid. Intel 64 and IA-32 Architectures Software Developer's Manual Vol. 4, Table 2-1
// (CPUID signatures): 06_4FH Broadwell-EP, 06_6AH Ice Lake-SP, 06_8FH Sapphire Rapids (Xeon
// Scalable 4th gen and Xeon W-3400), 06_ADH Granite Rapids. AMD: EPYC 7002 "Rome" is family 17h
// model 31h (AMD Processor Programming Reference for Family 17h Model 31h, pub. 55803); EPYC 9004
// "Genoa" family 19h model 11h (PPR for Family 19h Model 11h, pub. 55901). The first entry of a
// signature is the part an import picks.
struct CpuId {
  const char* part;
  const char* vendor;
  int family, model;
};
constexpr CpuId kCpuIds[] = {
    {"xeon-e5-2698v4", "GenuineIntel", 6, 0x4f}, {"xeon-8380", "GenuineIntel", 6, 0x6a},
    {"xeon-8480c", "GenuineIntel", 6, 0x8f},     {"xeon-w9-3495x", "GenuineIntel", 6, 0x8f},
    {"xeon-6960p", "GenuineIntel", 6, 0xad},     {"epyc-7742", "AuthenticAMD", 0x17, 0x31},
    {"epyc-9654", "AuthenticAMD", 0x19, 0x11},
};

}  // namespace

std::string cpu_part_for_cpuid(const std::string& vendor, int family, int model) {
  for (const auto& c : kCpuIds)
    if (vendor == c.vendor && family == c.family && model == c.model) return c.part;
  // AMD: every family 17h model is Zen/Zen 2, and family 19h models 10h-1Fh are Zen 4 "Genoa" (same
  // PPRs).
  if (vendor == "AuthenticAMD" && family == 0x17) return "epyc-7742";
  if (vendor == "AuthenticAMD" && family == 0x19 && model >= 0x10 && model <= 0x1f)
    return "epyc-9654";
  return "";
}

bool cpuid_for_part(const std::string& part, std::string* vendor, int* family, int* model) {
  for (const auto& c : kCpuIds)
    if (part == c.part) {
      *vendor = c.vendor;
      *family = c.family;
      *model = c.model;
      return true;
    }
  return false;
}

std::string closest_part(DeviceKind kind, unsigned vendor, int gen) {
  switch (kind) {
    case DeviceKind::kGpu:
      if (vendor == kAmd) return "mi300x";
      return gen >= 6   ? "b200"
             : gen == 5 ? "h100-pcie"
             : gen == 4 ? "a100-pcie"
             : gen > 0  ? "v100-sxm2"
                        : "h100-pcie";
    case DeviceKind::kNic:
      return gen >= 6   ? "connectx-8"
             : gen == 5 ? "connectx-7"
             : gen == 4 ? "connectx-6"
                        : "connectx-5";
    case DeviceKind::kNvme:
      return gen >= 5 ? "kioxia-cm7" : "micron-7450";
    case DeviceKind::kBridge:
      return gen >= 5 ? "pex89144" : gen == 4 ? "pex88096" : "plx-pex8747";
    case DeviceKind::kNvSwitch:
      return "nvswitch-gen3";
    case DeviceKind::kOther:
      break;
  }
  return "";
}

std::string cpu_part_for_model(const std::string& model) {
  struct Cpu {
    const char* token;
    const char* part;
  };
  static constexpr Cpu kCpus[] = {{"8480", "xeon-8480c"},
                                  {"9654", "epyc-9654"},
                                  {"7742", "epyc-7742"},
                                  {"8380", "xeon-8380"},
                                  {"E5-2698 v4", "xeon-e5-2698v4"},
                                  {"w9-3495X", "xeon-w9-3495x"},
                                  {"6960P", "xeon-6960p"}};
  for (const auto& c : kCpus)
    if (model.find(c.token) != std::string::npos) return c.part;
  return "";
}

std::string closest_cpu_part(const std::string& vendor, int gen) {
  if (vendor == "AuthenticAMD") return gen >= 5 ? "epyc-9654" : "epyc-7742";
  return gen >= 6   ? "xeon-6960p"
         : gen == 5 ? "xeon-8480c"
         : gen == 4 ? "xeon-8380"
         : gen > 0  ? "xeon-e5-2698v4"
                    : "xeon-8480c";
}

}  // namespace linkwise::probe::detail
