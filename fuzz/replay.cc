// Replays a seed corpus through a fuzz entry point with the normal compiler: `fuzz_replay TARGET
// DIR` feeds every file below DIR to the target's entry and fails if any input crashes it (or, in
// the sanitizer build, trips a sanitizer). Registered as one CTest test per target.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "targets.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET CORPUS_DIR\n");
    return 2;
  }
  auto entry = linkwise::fuzz::find_entry(argv[1]);
  if (!entry) {
    std::fprintf(stderr, "fuzz_replay: unknown target '%s'\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(argv[2]))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no inputs under '%s'\n", argv[2]);
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s\n", f.c_str());
    entry(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }
  std::printf("%s: %zu inputs replayed\n", argv[1], files.size());
  return 0;
}
