#include "config.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace onlinews::rt {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Each parser returns false (and leaves `out` alone) on a bad value; `why`
// says what was expected.
bool parse_value(const std::string& raw, bool& out, double, double, std::string& why) {
  if (parse_bool_text(raw, out)) return true;
  why = "expected 0/1, yes/no, true/false or on/off";
  return false;
}

bool parse_value(const std::string& raw, double& out, double lo, double hi, std::string& why) {
  const std::string v = lower(trim(raw));
  if (v == "inf" || v == "infinity") { out = HUGE_VAL; return true; }
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !std::isfinite(d) || d < lo || d > hi) {
    std::ostringstream os;
    os << "expected seconds between " << lo << " and " << hi << ", or inf";
    why = os.str();
    return false;
  }
  out = d;
  return true;
}

bool parse_value(const std::string& raw, std::uint64_t& out, double lo, double hi, std::string& why) {
  std::string v = lower(trim(raw));
  if (!v.empty() && v.back() == 'b') v.pop_back();  // allow "16MB"
  double mult = 1;
  if (!v.empty()) {
    switch (v.back()) {
      case 'k': mult = 1024.0; break;
      case 'm': mult = 1024.0 * 1024; break;
      case 'g': mult = 1024.0 * 1024 * 1024; break;
      default: break;
    }
    if (mult != 1) v.pop_back();
  }
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  d *= mult;
  if (v.empty() || *end != '\0' || errno != 0 || !std::isfinite(d) || d < lo || d > hi) {
    std::ostringstream os;
    os << "expected a size between " << static_cast<std::uint64_t>(lo) << " and "
       << static_cast<std::uint64_t>(hi) << " bytes (suffix K, M or G allowed)";
    why = os.str();
    return false;
  }
  out = static_cast<std::uint64_t>(d);
  return true;
}

bool parse_value(const std::string& raw, long& out, double lo, double hi, std::string& why) {
  const std::string v = trim(raw);
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi) {
    std::ostringstream os;
    os << "expected an integer from " << static_cast<long>(lo) << " to " << static_cast<long>(hi);
    why = os.str();
    return false;
  }
  out = x;
  return true;
}

bool parse_value(const std::string& raw, std::string& out, double, double, std::string&) {
  out = trim(raw);
  return true;
}

bool parse_value(const std::string& raw, std::vector<std::string>& out, double, double, std::string& why) {
  std::vector<std::string> items;
  std::stringstream ss(raw);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) items.push_back(item);
  }
  for (const auto& i : items) {
    for (char c : i) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        why = "expected a comma-separated list without blanks inside names";
        return false;
      }
    }
  }
  out = std::move(items);
  return true;
}

}  // namespace

bool parse_bool_text(const std::string& text, bool& out) {
  const std::string v = lower(trim(text));
  if (v == "1" || v == "yes" || v == "true" || v == "on") { out = true; return true; }
  if (v == "0" || v == "no" || v == "false" || v == "off") { out = false; return true; }
  return false;
}

bool parse_clock_skew(const std::string& text, ClockSkew& out) {
  double v[3] = {0, 0, 0};
  int n = 0;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (n == 3) return false;
    char* end = nullptr;
    const double d = std::strtod(item.c_str(), &end);
    if (item.empty() || end == item.c_str() || *end != '\0' || !std::isfinite(d)) return false;
    v[n++] = d;
  }
  if (n < 2 || std::fabs(v[0]) > 1e6 || std::fabs(v[1]) > 1e5 || std::fabs(v[2]) > 1e6) return false;
  out = {v[0], v[1], v[2], true};
  return true;
}

const std::vector<ConfigVarDoc>& config_docs() {
  static const std::vector<ConfigVarDoc> docs = {
#define ONLINEWS_VAR(field, env, type, def, lo, hi, desc) \
  {"ONLINEWS_" #env, #type, def, static_cast<double>(lo), static_cast<double>(hi), desc},
#include "config_table.def"
#undef ONLINEWS_VAR
  };
  return docs;
}

Config parse_config(const std::function<const char*(const char*)>& getenv_fn,
                    const std::vector<std::string>& environ_entries,
                    std::vector<std::string>& warnings) {
  Config cfg;
  std::string why;
#define ONLINEWS_VAR(field, env, type, def, lo, hi, desc)                                 \
  {                                                                                       \
    parse_value(def, cfg.field, lo, hi, why); /* defaults are valid by construction */    \
    const char* raw = getenv_fn("ONLINEWS_" #env);                                        \
    if (raw != nullptr) {                                                                 \
      why.clear();                                                                        \
      if (!parse_value(raw, cfg.field, lo, hi, why)) {                                    \
        warnings.push_back(std::string("ONLINEWS_" #env "='") + raw + "' is not valid (" + \
                           why + "); using the default '" def "'");                      \
      }                                                                                   \
    }                                                                                     \
  }
#include "config_table.def"
#undef ONLINEWS_VAR

  if (const char* raw = getenv_fn("ONLINEWS_TEST_CLOCK_SKEW"); raw != nullptr && *raw != '\0') {
    if (!parse_clock_skew(raw, cfg.test_clock_skew)) {
      warnings.push_back(std::string("ONLINEWS_TEST_CLOCK_SKEW='") + raw +
                         "' is not valid (expected OFFSET_s,DRIFT_ppm[,ERROR_us], e.g. 0.5,100,20); clocks are not "
                         "skewed");
    }
  }
  if (const char* raw = getenv_fn("ONLINEWS_TEST_REFERENCE"); raw != nullptr) cfg.test_reference = trim(raw);
  if (const char* raw = getenv_fn("ONLINEWS_TEST_STALL"); raw != nullptr) cfg.test_stall = trim(raw) == "1";
  if (const char* raw = getenv_fn("ONLINEWS_TEST_LATE_CUT"); raw != nullptr) cfg.test_late_cut = trim(raw) == "1";
  if (const char* raw = getenv_fn("ONLINEWS_TEST_SLOW_SLICE"); raw != nullptr) {
    const std::string text = trim(raw);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0' && v >= 0 && v <= 1) {
      cfg.test_slow_slice = v;
    } else {
      warnings.push_back(std::string("ONLINEWS_TEST_SLOW_SLICE='") + raw +
                         "' is not valid (expected seconds in [0, 1]); slices are not slowed");
    }
  }
  if (const char* raw = getenv_fn("ONLINEWS_TEST_PARALLEL_PROFILE"); raw != nullptr) {
    cfg.test_parallel_profile = trim(raw) == "1";
  }
  for (const auto& entry : environ_entries) {
    if (entry.rfind("ONLINEWS_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    bool known = false;
    for (const auto& d : config_docs()) known = known || name == d.env;
    // Test knobs of later analyses are reserved, not unknown.
    known = known || name.rfind("ONLINEWS_TEST_", 0) == 0;
    if (!known) {
      warnings.push_back("unknown variable " + name +
                         " is ignored (run 'onlinews-config' for the list of variables)");
    }
  }
  return cfg;
}

Config parse_config_from_environment(std::vector<std::string>& warnings) {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return parse_config([](const char* n) { return std::getenv(n); }, entries, warnings);
}

std::string config_markdown_table() {
  std::ostringstream os;
  os << "| Variable | Type | Default | Description |\n";
  os << "|---|---|---|---|\n";
  for (const auto& d : config_docs()) {
    std::string def = d.default_value;
    os << "| `" << d.env << "` | " << d.type << " | " << (def.empty() ? "(see text)" : "`" + def + "`")
       << " | " << d.description << " |\n";
  }
  return os.str();
}

bool parse_size_text(const std::string& text, std::uint64_t& out) {
  std::string why;
  return parse_value(text, out, 0.0, 1e15, why);
}

bool glob_match(const char* p, const char* t) {
  // Iterative matcher with single-star backtracking.
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*t != '\0') {
    if (*p == '*') {
      star = p++;
      resume = t;
    } else if (*p == '?' || *p == *t) {
      ++p;
      ++t;
    } else if (star != nullptr) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (*p == '*') ++p;
  return *p == '\0';
}

}  // namespace onlinews::rt
