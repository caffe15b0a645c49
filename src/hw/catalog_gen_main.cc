// linkwise_catalog_gen CATALOG_YAML OUTPUT_CC: parses and checks the catalog with Catalog::parse()
// and writes it as tables (catalog_codegen.h). Run by the build (src/hw/module.cmake): an invalid
// catalog stops the build with the parser's file:line:column message (exit status 2; 1 when a file
// cannot be read or written).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "hw/catalog_codegen.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/util/error.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: linkwise_catalog_gen CATALOG_YAML OUTPUT_CC\n");
    return 2;
  }
  const std::string in_path = argv[1], out_path = argv[2];
  try {
    std::ifstream in(in_path, std::ios::binary);
    if (!in) throw linkwise::RuntimeError("cannot read " + in_path);
    std::stringstream text;
    text << in.rdbuf();
    const auto catalog = linkwise::hw::Catalog::parse(text.str(), in_path);
    const std::string code = linkwise::hw::gen::catalog_to_cpp(catalog, "data/catalog.yaml");
    const std::string tmp = out_path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << code;
      if (!out.flush()) throw linkwise::RuntimeError("cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), out_path.c_str()) != 0)
      throw linkwise::RuntimeError("cannot write " + out_path);
  } catch (const linkwise::InputError& e) {
    std::fprintf(stderr, "%s\nlinkwise_catalog_gen: the catalog is invalid; nothing written\n",
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linkwise_catalog_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
