#pragma once
// Helpers shared by the native tests: where external test data lives, and
// loading it. Two sources, and neither is part of this repository:
//  - the JSON Patch suite (json-patch-tests) comes from the npm package
//    `json-patch-test-suite`, a devDependency that `make test` installs into
//    node_modules/;
//  - the other external suites (SSE, RFC 8785, AG-UI apply cases) are read from
//    the folder named by the environment variable AGUI_CONFORMANCE_DIR. When it
//    is unset or missing, those tests pass without running (make test says so
//    in one line); with AGUI_REQUIRE_CONFORMANCE=1 (set by .ci/run) a missing
//    folder fails them instead.
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

namespace agui_test {

inline std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline nlohmann::json readJson(const std::string& path) { return nlohmann::json::parse(readFile(path)); }

// A file of the json-patch-tests suite ("tests.json", "spec_tests.json").
inline std::string jsonPatchSuitePath(const std::string& file) {
  return std::string(AGUI_SOURCE_DIR) + "/node_modules/json-patch-test-suite/" + file;
}

inline bool isDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The external suites' folder, if one is configured and exists.
inline std::optional<std::string> conformanceDir() {
  const char* dir = std::getenv("AGUI_CONFORMANCE_DIR");
  if (dir == nullptr || *dir == '\0' || !isDirectory(dir)) return std::nullopt;
  return std::string(dir);
}

inline bool conformanceRequired() {
  const char* v = std::getenv("AGUI_REQUIRE_CONFORMANCE");
  return v != nullptr && std::string(v) == "1";
}

inline std::string conformancePath(const std::string& rel) {
  std::optional<std::string> dir = conformanceDir();
  if (!dir) throw std::runtime_error("AGUI_CONFORMANCE_DIR is not set to an existing folder");
  return *dir + "/" + rel;
}

}  // namespace agui_test

// First line of a test that reads the external suites: without them the test
// passes without running, unless AGUI_REQUIRE_CONFORMANCE=1 makes that a failure.
#define AGUI_NEEDS_CONFORMANCE()                                                                  \
  do {                                                                                            \
    if (!agui_test::conformanceDir()) {                                                           \
      if (agui_test::conformanceRequired())                                                       \
        FAIL("AGUI_REQUIRE_CONFORMANCE=1 but AGUI_CONFORMANCE_DIR is not an existing folder");    \
      return;                                                                                     \
    }                                                                                             \
  } while (0)
