// libFuzzer target: the ONLINEWS_* parser (runtime/config.cpp) on random
// environments.  The input is read as lines "NAME=value"; a line whose
// name is not ONLINEWS_* gets one prepended, so that most inputs reach the
// table's variables.  What must hold for every input (else the target
// traps): parse_config never throws; every Seconds, Size and Int value it
// returns lies within its table bounds, or is inf for Seconds (a bad value
// leaves the default, which does); each warning names an ONLINEWS_ variable; and the helpers
// (sizes, yes/no, globs, the clock-skew knob) return without fault.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/config.hpp"

using namespace onlinews::rt;

namespace {
void require(bool ok) {
  if (!ok) __builtin_trap();
}

std::vector<std::string> lines_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < size && out.size() < 64; ++i) {
    if (data[i] == '\n') {
      out.emplace_back();
    } else {
      out.back().push_back(static_cast<char>(data[i]));
    }
  }
  return out;
}

// The table's variable names, to steer random names onto real ones.
const std::vector<std::string>& names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& d : config_docs()) v.push_back(d.env);
    return v;
  }();
  return n;
}

void check_bounds(const Config& c) {
#define ONLINEWS_VAR(field, env, type, def, lo, hi, desc) check_one(#type, c.field, lo, hi);
  auto check_one = [](const char* type, const auto& value, double lo, double hi) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const double v = static_cast<double>(value);
      // ("inf" is a valid Seconds value: ONLINEWS_EPOCH_SECONDS=inf, one epoch.)
      require((v >= lo && v <= hi) || (std::string(type) == "Seconds" && std::isinf(v) && v > 0));
    }
  };
#include "runtime/config_table.def"
#undef ONLINEWS_VAR
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::map<std::string, std::string> env;
  std::vector<std::string> entries;
  for (std::string line : lines_of(data, size)) {
    const auto eq = line.find('=');
    std::string name = eq == std::string::npos ? line : line.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
    if (name.rfind("ONLINEWS_", 0) != 0) {
      // Short names pick a table variable; others become unknown ONLINEWS_ names.
      name = name.size() < 2 && !names().empty()
                 ? names()[static_cast<unsigned char>(name.empty() ? 0 : name[0]) % names().size()]
                 : "ONLINEWS_" + name;
    }
    env[name] = value;
    entries.push_back(name + "=" + value);
  }
  std::vector<std::string> warnings;
  Config c;
  try {
    c = parse_config(
        [&](const char* n) -> const char* {
          auto it = env.find(n);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        entries, warnings);
  } catch (...) {
    require(false);
  }
  check_bounds(c);
  for (const auto& w : warnings) {
    if (w.find("ONLINEWS_") == std::string::npos) std::fprintf(stderr, "fuzz_config: warning without its variable: %s\n", w.c_str());
    require(w.find("ONLINEWS_") != std::string::npos);
  }
  for (const auto& [name, value] : env) {
    std::uint64_t bytes = 0;
    bool yes = false;
    ClockSkew skew;
    if (parse_size_text(value, bytes)) require(bytes <= 1000000000000000ull);
    (void)parse_bool_text(value, yes);
    (void)parse_clock_skew(value, skew);
    (void)glob_match(name.c_str(), value.c_str());
    (void)glob_match(value.c_str(), name.c_str());
  }
  return 0;
}
