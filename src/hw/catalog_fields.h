// The figures of the catalog's fixed-shape entries (link technologies, board materials, PCIe
// channels) by their key in data/catalog.yaml. The parser (catalog.cc) reads a key into the member
// named here; the build-time generator (catalog_codegen.cc) writes every member listed here and the
// built-in catalog (catalog_builtin.cc) reads them back, so a figure added to one of these structs
// needs one row here to travel the whole way.
#pragma once

#include <string_view>
#include <utility>

#include "linkwise/hw/catalog.h"

namespace linkwise::hw::gen {

template <class T>
using FigureField = std::pair<std::string_view, Figure T::*>;

inline constexpr FigureField<LinkTech> kLinkTechFigures[] = {
    {"transfer_rate_GTps", &LinkTech::transfer_rate_GTps},
    {"encoding", &LinkTech::encoding},
    {"unit_bytes_per_s", &LinkTech::unit_bytes_per_s},
    {"efficiency", &LinkTech::efficiency},
    {"duplex_efficiency", &LinkTech::duplex_efficiency},
    {"latency_s", &LinkTech::latency_s},
    {"nccl_bw_GBps", &LinkTech::nccl_bw_GBps},
};

inline constexpr FigureField<BoardMaterial> kMaterialFigures[] = {
    {"loss_db_per_mm_8GHz", &BoardMaterial::loss_db_per_mm_8GHz},
    {"loss_db_per_mm_16GHz", &BoardMaterial::loss_db_per_mm_16GHz},
};

inline constexpr FigureField<ChannelBudget> kChannelFigures[] = {
    {"nyquist_GHz", &ChannelBudget::nyquist_GHz},
    {"loss_budget_db", &ChannelBudget::loss_budget_db},
    {"package_db", &ChannelBudget::package_db},
    {"connector_db", &ChannelBudget::connector_db},
    {"via_db", &ChannelBudget::via_db},
};

/// The member that `key` names in `table`, or null.
template <class T, std::size_t N>
Figure T::*figure_field(const FigureField<T> (&table)[N], std::string_view key) {
  for (const auto& [name, member] : table)
    if (name == key) return member;
  return nullptr;
}

}  // namespace linkwise::hw::gen
