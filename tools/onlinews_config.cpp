// onlinews-config: the configuration table, for people and for the README.
//   onlinews-config              list every ONLINEWS_* variable
//   onlinews-config --markdown   the README's table
//   onlinews-config --check      validate the current environment as the
//                                library would at MPI_Init, and load the HDF5
//                                output module (exit 1 on problems)
//   onlinews-config --version
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "config.hpp"
#include "inline_analysis/analysis.hpp"
#include "include/onlinews.h"
#include "module_check.hpp"

using namespace onlinews::rt;

static void usage() {
  std::puts("usage: onlinews-config [--markdown | --check | --version | --help]");
}

int main(int argc, char** argv) {
  const std::string arg = argc > 1 ? argv[1] : "";
  if (arg == "--help" || arg == "-h") {
    usage();
    return 0;
  }
  if (arg == "--version") {
    std::printf("onlinews %d.%d.%d\n", ONLINEWS_VERSION_MAJOR, ONLINEWS_VERSION_MINOR, ONLINEWS_VERSION_PATCH);
    return 0;
  }
  if (arg == "--markdown") {
    std::fputs(config_markdown_table().c_str(), stdout);
    return 0;
  }
  if (arg == "--check") {
    std::vector<std::string> warnings;
    const Config cfg = parse_config_from_environment(warnings);
    for (const auto& name : onlinews::analysis::unknown_selections(cfg.analyses)) {
      warnings.push_back("ONLINEWS_ANALYSES: unknown analysis '" + name + "' is ignored (valid: " +
                         onlinews::analysis::known_selections() + ")");
    }
    for (const auto& w : warnings) std::printf("onlinews: warning: %s\n", w.c_str());
    if (warnings.empty()) std::puts("onlinews: configuration OK");
    std::string module;
    const bool loads = onlinews::tools::check_module(module);
    std::printf("onlinews: %s%s\n", loads ? "" : "warning: ", module.c_str());
    return warnings.empty() && loads ? 0 : 1;
  }
  if (!arg.empty()) {
    usage();
    return 2;
  }
  for (const auto& d : config_docs()) {
    std::printf("%s  (%s, default %s)\n    %s\n", d.env, d.type,
                std::strlen(d.default_value) ? d.default_value : "see text", d.description);
  }
  return 0;
}
