#include "facade/commit_loop_facade.h"

#include <algorithm>

#include "facade/facade_json.h"
#include "json/json_write.h"

namespace agui_sync {

using nlohmann::json;
using Next = CommitLoop::Next;

namespace {

const char* nextName(Next next) {
  switch (next) {
    case Next::Recover: return "recover";
    case Next::Reread: return "reread";
    case Next::Apply: return "apply";
    case Next::Append: return "append";
    case Next::Reload: return "reload";
    case Next::Wait: return "wait";
    case Next::Degrade: return "degrade";
    case Next::Return: return "return";
    case Next::Fail: return "fail";
    case Next::Raise: return "raise";
  }
  return "return";
}

int64_t intOf(const json& input, const char* name) {
  auto it = input.find(name);
  return it != input.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

bool flagOf(const json& input, const char* name) {
  auto it = input.find(name);
  return it != input.end() && it->is_boolean() && it->get<bool>();
}

std::string textOf(const json& input, const char* name) {
  auto it = input.find(name);
  return it != input.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string CommitLoopFacade::step(const std::string& inputJson) {
  json input;
  if (auto failure = parseBounded(inputJson, 4, input)) return failureJson(*failure);
  const std::string on = input.is_object() ? textOf(input, "on") : "";
  Next next;
  if (on == "begin") {
    next = loop_.begin(intOf(input, "now"));
  } else if (on == "tick") {
    next = loop_.tick(intOf(input, "now"), flagOf(input, "force"));
  } else if (on == "recovered") {
    const std::string r = textOf(input, "result");
    next = loop_.recovered(r == "ok" ? CommitLoop::Reset::Ok
                           : r == "written-meanwhile" ? CommitLoop::Reset::WrittenMeanwhile
                                                       : CommitLoop::Reset::Unreachable);
  } else if (on == "degraded") {
    next = loop_.degradedNow();
  } else if (on == "reread") {
    next = loop_.reread(flagOf(input, "ok"));
  } else if (on == "applied") {
    next = loop_.applied(static_cast<size_t>(std::max<int64_t>(0, intOf(input, "events"))));
  } else if (on == "appended") {
    const std::string a = textOf(input, "answer");
    next = loop_.appended(a == "ok" ? CommitLoop::Answer::Ok
                          : a == "conflict" ? CommitLoop::Answer::Conflict
                          : a == "cancelled" ? CommitLoop::Answer::Cancelled
                                             : CommitLoop::Answer::Error);
  } else if (on == "reloaded") {
    auto r = input.find("random");
    next = loop_.reloaded(flagOf(input, "ok"), r != input.end() && r->is_number() ? r->get<double>() : 0.5);
  } else {
    return failureJson(Code::InvalidRequest, "a write loop step is {on: begin | tick | recovered | reread | applied | appended | reloaded}");
  }
  json out = {{"ok", true}, {"next", nextName(next)}, {"waitMs", loop_.waitMs()}, {"degraded", loop_.degraded()},
              {"inFlight", loop_.inFlight()}, {"stale", loop_.stale()}};
  if (next == Next::Fail) {
    out["code"] = "store-conflict";
    out["message"] = "another writer won " + std::to_string(CommitLoop::kMaxAttempts) + " times in a row; nothing was sent";
  }
  return jsonText(out);
}

}  // namespace agui_sync
