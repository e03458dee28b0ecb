#include "facade/cursor_facade.h"

#include <cmath>
#include <utility>

#include "facade/facade_json.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

constexpr size_t kEnvelopeDepth = 4;  // an event around the state (as emitter_facade.cpp)

// A seq from a binding: a non-negative integer, else 0 (the cursor then never
// thinks the emitter in step by accident: 0 is before any write).
uint64_t seqOf(double value) {
  return std::isfinite(value) && value >= 0 && value <= 9007199254740991.0 ? static_cast<uint64_t>(value) : 0;
}

std::string dumpSafe(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::optional<Failure> readOptions(const std::string& text, CursorOptions& options, size_t& maxDepth) {
  json opts;
  if (auto failure = parseBounded(text.empty() ? "{}" : text, 8, opts)) return failure;
  if (!opts.is_object()) return Failure{Code::InvalidOptions, "cursor options must be an object", std::nullopt};
  auto it = opts.find("alwaysRebase");
  if (it != opts.end() && !it->is_null()) {
    if (!it->is_boolean()) return Failure{Code::InvalidOptions, "option alwaysRebase must be a boolean", std::nullopt};
    options.alwaysRebase = it->get<bool>();
  }
  if (auto failure = readPositive(opts, "maxDepth", maxDepth)) return failure;
  options.maxDepth = maxDepth;
  return std::nullopt;
}

}  // namespace

CursorFacade::CursorFacade(const std::string& optionsJson) {
  CursorOptions options;
  if (auto failure = readOptions(optionsJson, options, maxDepth_)) {
    initResult_ = failureJson(*failure);
    return;
  }
  cursor_ = UpstreamCursor(options);
  initResult_ = okJson();
}

std::string CursorFacade::begin(const std::string& viewJson, bool fromInput, double emitterSeq) {
  json view;
  if (auto failure = parseBounded(viewJson, maxDepth_ + kEnvelopeDepth, view)) return failureJson(*failure);
  cursor_.begin(std::move(view), fromInput, seqOf(emitterSeq));
  return okJson();
}

std::string CursorFacade::beginApart(const std::string& viewJson) {
  json view;  // (as begin(): a view the cursor cannot hold leaves the run where it was)
  if (auto failure = parseBounded(viewJson, maxDepth_ + kEnvelopeDepth, view)) return failureJson(*failure);
  cursor_.beginApart(std::move(view));
  return okJson();
}

std::string CursorFacade::plan(const std::string& eventJson, double emitterSeq) {
  json event;
  if (auto failure = parseBounded(eventJson, maxDepth_ + kEnvelopeDepth + 2, event)) return failureJson(*failure);
  const CursorPlan plan = cursor_.plan(std::move(event), seqOf(emitterSeq));  // the snapshot moves into the view
  if (plan.kind == CursorPlan::Kind::Pass) return R"({"ok":true,"kind":"pass"})";
  if (plan.kind == CursorPlan::Kind::Drop) return std::string(R"({"ok":true,"kind":"drop","reason":")") + plan.reason + "\"}";
  std::string out = R"({"ok":true,"kind":"write","snapshot":)";
  out += plan.snapshot ? "true" : "false";
  out += ",\"tries\":[";
  for (size_t i = 0; i < plan.tries.size(); ++i) {
    if (i) out += ',';
    out += plan.tries[i].update ? "{\"update\":" : "{\"patch\":";
    out += plan.tries[i].fromEvent ? "\"event\"" : dumpSafe(plan.tries[i].value);
    out += '}';
  }
  return out + "]}";
}

void CursorFacade::settle(int landed, double emitterSeq) { cursor_.settle(landed, seqOf(emitterSeq)); }

}  // namespace agui_sync
