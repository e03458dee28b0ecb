#pragma once
// The two-call route of a cursor plan (plan, the tries in order, settle), as
// bindings/python's RunStamper and js/src/server/upstream-cursor.js take it:
// the one driver the cursor tests share.
#include <string>

#include <nlohmann/json.hpp>

#include "facade/cursor_facade.h"
#include "facade/emitter_facade.h"

namespace cursor_support {

using nlohmann::json;
using agui_sync::CursorFacade;
using agui_sync::EmitterFacade;

// {"failed":code} | {"kind":"pass"|"drop"} | {"landed":i,"events":[...]} | {"landed":-1,"code":code}
inline json twoCalls(CursorFacade& cursor, EmitterFacade& emitter, const json& event) {
  const json plan = json::parse(cursor.plan(event.dump(), emitter.seq()));
  if (plan["ok"] != true) {
    cursor.settle(-1, emitter.seq());
    return {{"failed", plan["code"]}};
  }
  if (plan["kind"] != "write") return {{"kind", plan["kind"]}};
  int index = 0;
  json last;
  for (const auto& attempt : plan["tries"]) {
    const bool update = attempt.contains("update");
    // The core carries each try out on the emitter (a rebase as it fits the state there).
    last = json::parse(cursor.tryPlanned(index, emitter));
    if (last["ok"] == true) {
      cursor.settlePlanned(index, emitter.seq());
      return {{"landed", index}, {"events", last["events"]}};
    }
    const std::string code = last["code"];
    if (update || (code != "patch-failed" && code != "precondition-failed" && code != "invalid-patch")) break;
    ++index;
  }
  cursor.settlePlanned(-1, emitter.seq());
  return {{"landed", -1}, {"code", last["code"]}};
}

}  // namespace cursor_support
