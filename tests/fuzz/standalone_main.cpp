// A main() for the fuzz targets where libFuzzer is not at hand (GCC builds,
// ctest): runs the target on each file given, then on RUNS random inputs
// (0-LEN bytes, splitmix64 from SEED), and prints what it ran.  A failed
// property traps, as under libFuzzer; the input is then in
// fuzz-failure.bin for `TARGET fuzz-failure.bin`.
//   TARGET [--runs N] [--seed S] [--max-len L] [FILE...]
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
std::uint64_t state;
std::uint64_t next() {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// The input being run, for the handler below.
const std::vector<std::uint8_t>* g_input = nullptr;

// A failed property traps (SIGILL), a memory error may end in SIGSEGV or
// SIGABRT: the input that did it goes to fuzz-failure.bin, then the signal
// ends the process as it would have (open/write/close are signal-safe).
extern "C" void keep_input(int sig) {
  const int fd = open("fuzz-failure.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0 && g_input != nullptr && !g_input->empty()) {
    [[maybe_unused]] const ssize_t n = write(fd, g_input->data(), g_input->size());
  }
  if (fd >= 0) close(fd);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void run(const std::vector<std::uint8_t>& input) {
  g_input = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
}
}  // namespace

int main(int argc, char** argv) {
  for (int sig : {SIGILL, SIGSEGV, SIGABRT, SIGBUS, SIGFPE}) std::signal(sig, keep_input);
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
  std::printf("%s: %zu files and %ld random inputs (seed %llu, up to %ld bytes): every property held\n", argv[0],
              files.size(), runs, static_cast<unsigned long long>(seed), max_len);
  return 0;
}
