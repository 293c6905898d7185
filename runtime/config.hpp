// Configuration from ONLINEWS_* environment variables (table: config_table.def).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace onlinews::rt {

// ONLINEWS_TEST_CLOCK_SKEW="OFFSET_s,DRIFT_ppm[,ERROR_us]": a test knob,
// outside the documented table (what it does: runtime/clock_sync.hpp).
struct ClockSkew {
  double offset_s = 0, drift_ppm = 0, error_us = 0;
  bool on = false;
};
// False (and `out` unchanged) if `text` is malformed.
bool parse_clock_skew(const std::string& text, ClockSkew& out);

// ONLINEWS_TEST_REFERENCE=PATH: a test knob, outside the documented table.
// Every event is also kept (unbounded memory) and, after MPI_Finalize's
// epoch, analyzed again as one epoch into the file PATH: the epochs'
// results against the post-mortem reference of the same execution
// (runtime/reference.cpp).

struct Config {
  ClockSkew test_clock_skew;  // validated with the table's variables
  std::string test_reference;  // empty: off
  bool test_stall = false;     // ONLINEWS_TEST_STALL=1: rank 1's analysis of the final window waits forever
  bool test_late_cut = false;  // ONLINEWS_TEST_LATE_CUT=1: rank 0 announces a cut in MPI_Finalize after the others left its barrier
  double test_slow_slice = 0;  // ONLINEWS_TEST_SLOW_SLICE=S: every entry slice first sleeps S seconds (a descheduled slice)
  bool test_parallel_profile = false;  // ONLINEWS_TEST_PARALLEL_PROFILE=1: /profile through parallel HDF5 at any size
#define ONLINEWS_VAR(field, env, type, def, lo, hi, desc) ConfigType_##type field{};
  using ConfigType_Bool = bool;
  using ConfigType_Seconds = double;
  using ConfigType_Size = std::uint64_t;
  using ConfigType_Int = long;
  using ConfigType_Text = std::string;
  using ConfigType_List = std::vector<std::string>;
#include "config_table.def"
#undef ONLINEWS_VAR
};

// One documented variable, as the table declares it.
struct ConfigVarDoc {
  const char* env;          // full name, e.g. "ONLINEWS_BUFFER"
  const char* type;         // "Bool", "Seconds", ...
  const char* default_value;
  double min, max;
  const char* description;
};
const std::vector<ConfigVarDoc>& config_docs();

// Reads every variable through `getenv_fn` (nullptr when unset) and validates
// it.  A bad value leaves the default in place and adds one warning; unknown
// ONLINEWS_* names found in `environ_entries` ("NAME=value") add one warning
// each.  Never throws.
Config parse_config(const std::function<const char*(const char*)>& getenv_fn,
                    const std::vector<std::string>& environ_entries,
                    std::vector<std::string>& warnings);

// Convenience: the process environment.
Config parse_config_from_environment(std::vector<std::string>& warnings);

// Markdown table of all variables (the README's configuration table).
std::string config_markdown_table();

// A yes/no value (0/1, yes/no, true/false, on/off, any case); false if
// it is none of them.
bool parse_bool_text(const std::string& text, bool& out);

// A byte size such as "4096", "64K" or "16M"; false if malformed.
bool parse_size_text(const std::string& text, std::uint64_t& out);

// Shell-style glob match ('*' and '?'), used by ONLINEWS_FILTER.
bool glob_match(const char* pattern, const char* text);

}  // namespace onlinews::rt
