#pragma once
// Helpers shared by the native tests: locating and loading conformance files.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace agui_test {

inline std::string conformancePath(const std::string& rel) {
  return std::string(AGUI_CONFORMANCE_DIR) + "/" + rel;
}

inline std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path +
                                   " (set -DAGUI_CONFORMANCE_DIR to the shared/conformance folder)");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline nlohmann::json readJson(const std::string& path) { return nlohmann::json::parse(readFile(path)); }

}  // namespace agui_test
