// A main() for the fuzz targets where libFuzzer is not at hand (GCC builds,
// ctest): runs the target on each file given, then on RUNS random inputs
// (0-LEN bytes, splitmix64 from SEED), and prints what it ran.  A failed
// property traps, as under libFuzzer; the input is then in
// fuzz-failure.bin for `TARGET fuzz-failure.bin`.
//   TARGET [--runs N] [--seed S] [--max-len L] [FILE...]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
std::uint64_t state;
std::uint64_t next() {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
void run(const std::vector<std::uint8_t>& input) {
  // Kept until the run returns: a trap leaves it for the reproduction.
  std::FILE* f = std::fopen("fuzz-failure.bin", "wb");
  if (f != nullptr) {
    if (!input.empty()) std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
  }
  LLVMFuzzerTestOneInput(input.data(), input.size());
}
}  // namespace

int main(int argc, char** argv) {
  long runs = 1000, max_len = 512;
  std::uint64_t seed = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atol(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-len" && i + 1 < argc) {
      max_len = std::atol(argv[++i]);
    } else {
      files.push_back(a);
    }
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    run(std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {}));
  }
  state = seed;
  for (long k = 0; k < runs; ++k) {
    std::vector<std::uint8_t> input(next() % static_cast<std::uint64_t>(max_len + 1));
    for (auto& byte : input) byte = static_cast<std::uint8_t>(next());
    run(input);
  }
  std::remove("fuzz-failure.bin");
  std::printf("%s: %zu files and %ld random inputs (seed %llu, up to %ld bytes): every property held\n", argv[0],
              files.size(), runs, static_cast<unsigned long long>(seed), max_len);
  return 0;
}
