// The configuration table: defaults, validation, unknown names, sizes.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "runtime/config.hpp"

using namespace onlinews::rt;

namespace {
Config parse(const std::map<std::string, std::string>& env, std::vector<std::string>& warnings) {
  std::vector<std::string> entries;
  for (const auto& [k, v] : env) entries.push_back(k + "=" + v);
  return parse_config(
      [&](const char* n) -> const char* {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      entries, warnings);
}
}  // namespace

TEST_CASE("defaults come from the table", "[config]") {
  std::vector<std::string> w;
  const Config c = parse({}, w);
  CHECK(w.empty());
  CHECK(c.enable);
  CHECK(c.epoch_seconds == 5.0);
  CHECK(c.buffer == 16u * 1024 * 1024);
  CHECK(c.analyses == std::vector<std::string>{"all"});
  CHECK(c.verbose == 1);
  CHECK(c.output.empty());
  CHECK(c.eager_limit == "auto");
}

TEST_CASE("valid values are parsed", "[config]") {
  std::vector<std::string> w;
  const Config c = parse({{"ONLINEWS_EPOCH_SECONDS", "inf"},
                          {"ONLINEWS_BUFFER", "64M"},
                          {"ONLINEWS_ENABLE", "off"},
                          {"ONLINEWS_ANALYSES", "p2p, mpi_barrier_wait"},
                          {"ONLINEWS_FILTER", "tiny_*"},
                          {"ONLINEWS_VERBOSE", "2"}},
                         w);
  CHECK(w.empty());
  CHECK(std::isinf(c.epoch_seconds));
  CHECK(c.buffer == 64u * 1024 * 1024);
  CHECK_FALSE(c.enable);
  CHECK(c.analyses == std::vector<std::string>{"p2p", "mpi_barrier_wait"});
  CHECK(c.filter == std::vector<std::string>{"tiny_*"});
  CHECK(c.verbose == 2);
  std::vector<std::string> w2;
  CHECK(parse({{"ONLINEWS_EPOCH_SECONDS", "0"}}, w2).epoch_seconds == 0.0);
  CHECK(w2.empty());
}

TEST_CASE("bad values: one warning each, default kept", "[config]") {
  std::vector<std::string> w;
  const Config c = parse({{"ONLINEWS_EPOCH_SECONDS", "-1"},
                          {"ONLINEWS_BUFFER", "1K"},  // below the minimum
                          {"ONLINEWS_VERBOSE", "loud"},
                          {"ONLINEWS_ENABLE", "maybe"}},
                         w);
  REQUIRE(w.size() == 4);
  CHECK(c.epoch_seconds == 5.0);
  CHECK(c.buffer == 16u * 1024 * 1024);
  CHECK(c.verbose == 1);
  CHECK(c.enable);
  CHECK(w[0].find("ONLINEWS_ENABLE='maybe' is not valid") != std::string::npos);
}

TEST_CASE("unknown ONLINEWS_ variables are reported, test knobs are not", "[config]") {
  std::vector<std::string> w;
  parse({{"ONLINEWS_EPOCH", "1"}, {"ONLINEWS_TEST_CLOCK_SKEW", "0.5,100"}, {"OTHER", "1"}}, w);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("unknown variable ONLINEWS_EPOCH") != std::string::npos);
}

TEST_CASE("sizes and globs", "[config]") {
  std::uint64_t v = 0;
  CHECK(parse_size_text("4096", v));
  CHECK(v == 4096);
  CHECK(parse_size_text("64k", v));
  CHECK(v == 65536);
  CHECK(parse_size_text("2GB", v));
  CHECK(v == 2ull << 30);
  CHECK_FALSE(parse_size_text("lots", v));
  CHECK(glob_match("tiny_*", "tiny_loop"));
  CHECK(glob_match("*loop*", "tiny_loop_2"));
  CHECK(glob_match("a?c", "abc"));
  CHECK_FALSE(glob_match("tiny_*", "big_loop"));
  CHECK(config_markdown_table().find("`ONLINEWS_BUFFER`") != std::string::npos);
}

TEST_CASE("the clock-skew test knob", "[config]") {
  ClockSkew k;
  CHECK(parse_clock_skew("0.5,100", k));
  CHECK(k.on);
  CHECK(k.offset_s == 0.5);
  CHECK(k.drift_ppm == 100);
  CHECK(k.error_us == 0);
  CHECK(parse_clock_skew("1,-80,-60", k));
  CHECK(k.error_us == -60);
  ClockSkew bad;
  for (const char* text : {"fast", "0.5", "0.5,,1", "1,2,3,4", "1e9,0", "0.5,100x"}) {
    CHECK_FALSE(parse_clock_skew(text, bad));
  }
  CHECK_FALSE(bad.on);
  std::vector<std::string> w;
  const Config c = parse({{"ONLINEWS_TEST_CLOCK_SKEW", "fast"}}, w);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("ONLINEWS_TEST_CLOCK_SKEW='fast' is not valid") != std::string::npos);
  CHECK_FALSE(c.test_clock_skew.on);
}

TEST_CASE("the slow-slice test knob", "[config]") {
  std::vector<std::string> w;
  CHECK(parse({{"ONLINEWS_TEST_SLOW_SLICE", " 0.005 "}}, w).test_slow_slice == 0.005);
  CHECK(w.empty());
  for (const char* text : {"5ms", "0.005x", "", "2", "-0.1"}) {
    w.clear();
    CHECK(parse({{"ONLINEWS_TEST_SLOW_SLICE", text}}, w).test_slow_slice == 0);
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("ONLINEWS_TEST_SLOW_SLICE='") != std::string::npos);
  }
}
