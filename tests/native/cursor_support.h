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
    json value = update ? attempt["update"] : attempt["patch"];
    if (value == "event") value = update ? event["snapshot"] : event["delta"];
    last = json::parse(update ? emitter.update(value.dump()) : emitter.patch(value.dump()));
    if (last["ok"] == true) {
      cursor.settle(index, emitter.seq());
      return {{"landed", index}, {"events", last["events"]}};
    }
    const std::string code = last["code"];
    if (update || (code != "patch-failed" && code != "precondition-failed" && code != "invalid-patch")) break;
    ++index;
  }
  cursor.settle(-1, emitter.seq());
  return {{"landed", -1}, {"code", last["code"]}};
}

}  // namespace cursor_support
