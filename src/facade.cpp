#include "facade.h"

#include "json_measure.h"
#include "outcome_json.h"
#include "sync_engine.h"

namespace agui_sync {

using nlohmann::json;

namespace {

// Reads a positive integer option; leaves `target` alone when absent.
bool readLimit(const json& opts, const char* name, size_t& target, std::string& error) {
  auto it = opts.find(name);
  if (it == opts.end() || it->is_null()) return true;
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0) {
    error = std::string("option '") + name + "' must be a positive integer";
    return false;
  }
  target = static_cast<size_t>(it->get<uint64_t>());
  return true;
}

}  // namespace

Facade::Facade(const std::string& optionsJson) {
  Options options;
  json opts = optionsJson.empty() ? json::object() : json::parse(optionsJson, nullptr, false);
  json initial;
  bool hasInitial = false;
  if (opts.is_discarded() || !opts.is_object()) {
    initError_ = "options must be a JSON object";
  } else {
    readLimit(opts, "reorderWindow", options.reorderWindow, initError_) &&
        readLimit(opts, "reorderBytes", options.reorderBytes, initError_) &&
        readLimit(opts, "maxGapEvents", options.maxGapEvents, initError_) &&
        readLimit(opts, "maxEventBytes", options.maxEventBytes, initError_) &&
        readLimit(opts, "maxDepth", options.maxDepth, initError_) &&
        readLimit(opts, "maxStateBytes", options.maxStateBytes, initError_);
    auto it = opts.find("initialState");
    if (initError_.empty() && it != opts.end() && !it->is_null()) {
      if (valueDepth(*it) > options.maxDepth) initError_ = "initialState nests deeper than maxDepth";
      else if (approxSize(*it) > options.maxStateBytes) initError_ = "initialState exceeds maxStateBytes";
      else {
        initial = std::move(*it);
        hasInitial = true;
      }
    }
  }
  engine_ = std::make_unique<SyncEngine>(options);
  if (hasInitial) engine_->setInitialState(std::move(initial));
}

Facade::~Facade() = default;

uint8_t* Facade::inputBuffer(size_t n) {
  if (input_.size() < n) input_.resize(n);
  return input_.data();
}

std::string Facade::feedBytes(const uint8_t* p, size_t n) {
  std::vector<Outcome> out;
  engine_->feed(p, n, out);
  return resultJson(*engine_, out);
}

std::string Facade::feedInput(size_t n) {
  if (n > input_.size()) n = input_.size();
  return feedBytes(input_.data(), n);
}

std::string Facade::feed(const std::string& bytes) {
  return feedBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::string Facade::end() {
  std::vector<Outcome> out;
  engine_->end(out);
  return resultJson(*engine_, out);
}

void Facade::reset() { engine_->reset(); }

std::string Facade::stateJson() const { return engine_->state().dump(); }

std::string Facade::metricsJson() const { return metricsToJson(engine_->metrics()); }

std::string Facade::statusJson() const { return resultJson(*engine_, {}); }

}  // namespace agui_sync
