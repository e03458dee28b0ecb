#include "facade/relay_facade.h"

#include <agui_sync/sync_engine.h>

#include "facade/result_json.h"
#include "json/json_escape.h"

namespace agui_sync {

namespace {

bool isState(const Outcome& o) { return o.kind == OutcomeKind::Applied && o.messageId.empty(); }

// Is `at` the last applied outcome of its document (the state, or its activity) in `outcomes`?
bool lastOfDocument(const std::vector<Outcome>& outcomes, size_t at) {
  for (size_t i = at + 1; i < outcomes.size(); ++i)
    if (outcomes[i].kind == OutcomeKind::Applied && outcomes[i].messageId == outcomes[at].messageId) return false;
  return true;
}

}  // namespace

uint8_t* RelayFacade::inputBuffer(size_t n) { return sync_.inputBuffer(n); }

void RelayFacade::pushInput(size_t n) {
  const auto [bytes, size] = sync_.input(n);
  sync_.engine().push(bytes, size);
}

std::string RelayFacade::next() {
  outcomes_.clear();
  if (!sync_.engine().step(outcomes_)) return std::string();
  return outcomesJson();
}

std::string RelayFacade::end() {
  outcomes_.clear();
  sync_.engine().end(outcomes_);
  return outcomesJson();
}

const nlohmann::json& RelayFacade::state() { return sync_.engine().state(); }
size_t RelayFacade::maxDepth() { return sync_.engine().options().maxDepth; }

const ReceivedState* RelayFacade::received(int ref) const {
  if (ref < 0 || static_cast<uint64_t>(ref) < firstRef_ || static_cast<uint64_t>(ref) - firstRef_ >= states_.size())
    return nullptr;
  return &states_[static_cast<size_t>(static_cast<uint64_t>(ref) - firstRef_)];
}

// The step's outcomes; an applied state's text moves into states_ instead of
// the answer (its ref says where), so the state is never written out here.
std::string RelayFacade::outcomesJson() {
  firstRef_ += states_.size();
  if (firstRef_ > kMaxRef) firstRef_ = 0;  // (after two billion states: a ref from then is long settled)
  states_.clear();
  std::string out = "{\"outcomes\":[";
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    Outcome& o = outcomes_[i];
    if (i) out.push_back(',');
    const bool last = o.kind == OutcomeKind::Applied && lastOfDocument(outcomes_, i);
    if (!isState(o)) {
      appendOutcomeJson(out, o);
      if (o.kind == OutcomeKind::Applied) out.insert(out.size() - 1, last ? ",\"last\":true" : ",\"last\":false");
      continue;
    }
    out += "{\"kind\":\"applied\",\"type\":";
    appendJsonString(out, o.type);
    out += o.seq ? ",\"seq\":" + std::to_string(*o.seq) : std::string(",\"seq\":null");
    out += ",\"ref\":" + std::to_string(firstRef_ + states_.size()) + (last ? ",\"last\":true}" : ",\"last\":false}");
    states_.push_back(ReceivedState{o.type == "STATE_SNAPSHOT", last, std::move(o.raw)});
  }
  outcomes_.clear();
  return out + "]}";
}

}  // namespace agui_sync
