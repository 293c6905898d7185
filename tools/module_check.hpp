// onlinews-config --check: whether the HDF5 output module next to the
// library loads and belongs to this build (module_check.cpp).
#pragma once
#include <string>

namespace onlinews::tools {

// True if it loads; `report` says what was found, or what is wrong.
bool check_module(std::string& report);

}  // namespace onlinews::tools
