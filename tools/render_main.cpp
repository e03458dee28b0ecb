// agui-sync-render: the native renderStateForPrompt from the command line,
// through the same string facade the WebAssembly binding calls, so that its
// output can be compared byte for byte with the package's (tests/js).
//
//   agui-sync-render [state.json | -] [--options JSON]
//       renders one state; prints renderPromptJson's result (one line of JSON,
//       {"ok":true,"text",...} or {"ok":false,"code","message"}); exits 1 when
//       the render was refused.
//   agui-sync-render --lines
//       reads pairs of lines from stdin, a state's JSON text then an options
//       JSON text ("" for the defaults), and prints one result line per pair.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "facade/prompt_facade.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: agui-sync-render [state.json | -] [--options JSON]\n       agui-sync-render --lines\n");
  return 2;
}

int renderLines() {
  std::string state, options;
  while (std::getline(std::cin, state)) {
    if (!std::getline(std::cin, options)) {
      std::fprintf(stderr, "agui-sync-render: a state line without its options line\n");
      return 2;
    }
    std::cout << agui_sync::renderPromptJson(state, options) << '\n';
  }
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "-", options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--lines" && argc == 2) return renderLines();
    if (a == "--options" && i + 1 < argc) options = argv[++i];
    else if (a.size() > 1 && a[0] == '-') return usage();
    else path = a;
  }
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "agui-sync-render: cannot open %s\n", path.c_str());
      return 2;
    }
    in = &file;
  }
  const std::string state((std::istreambuf_iterator<char>(*in)), std::istreambuf_iterator<char>());
  const std::string result = agui_sync::renderPromptJson(state, options);
  std::cout << result << '\n';
  return result.rfind("{\"ok\":true", 0) == 0 ? 0 : 1;
}
