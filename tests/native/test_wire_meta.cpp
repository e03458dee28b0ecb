// Version 2 of the wire (docs/wire.md section 10): our fields under one key of
// `metadata`. tests/vectors/wire_meta_vectors.json says, for each event, where
// its wire fields are and what the receiver decodes; the JS (wire-meta.test.mjs)
// and Python (test_wire_meta.py) suites hold their readers to the same file.
#include <catch2/catch.hpp>

#include <agui_sync/state_emitter.h>
#include "receive/event_decoder.h"
#include "test_support.h"
#include "wire/wire.h"
#include "wire/wire_meta.h"

using namespace agui_sync;
using nlohmann::json;

namespace {

template <typename T>
json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json vectors() { return agui_test::readJson(std::string(AGUI_SOURCE_DIR) + "/tests/vectors/wire_meta_vectors.json"); }

}  // namespace

TEST_CASE("wire metadata vectors: wireFields and the decoder read each event as the file says", "[vectors][wire]") {
  const json doc = vectors();
  REQUIRE(doc["cases"].size() >= 10);
  for (const json& c : doc["cases"]) {
    INFO(c["name"].get<std::string>());
    const json* fields = wireFields(c["event"]);
    CHECK((fields ? *fields : json(nullptr)) == c["fields"]);
    DecodedEvent event;
    DecodeError err;
    REQUIRE(decodeEvent(c["event"].dump(), Options{}, event, err));
    const json position = {{"seq", orNull(event.seq.seq)},
                           {"baseSeq", orNull(event.seq.baseSeq)},
                           {"epoch", orNull(event.seq.epoch)},
                           {"digest", orNull(event.seq.digest)}};
    CHECK(position == c["position"]);
  }
}

TEST_CASE("the emitter writes every wire field under the one key, and nothing else into metadata", "[wire][emitter]") {
  EmitterOptions o;
  o.epoch = "e";
  o.digestEvery = 1;
  o.snapshotRatio = 100;  // a delta, not the snapshot fallback
  StateEmitter em(o, json::object());
  std::vector<json> events = {em.snapshot()};
  for (const json& e : em.update(json{{"a", 1}})) events.push_back(e);
  for (const json& e : events) {
    REQUIRE(e["metadata"].size() == 1);
    const json& ours = e["metadata"][kWireKey];
    CHECK(ours.contains("seq"));
    CHECK(ours["epoch"] == "e");
    CHECK(ours.contains("digest"));
    CHECK(wireSeq(e) == ours["seq"].get<uint64_t>());
  }
  CHECK(events.back()["metadata"][kWireKey]["baseSeq"] == 0);
  CHECK(StateEmitter::encode(events.back()).rfind("id: 1\n", 0) == 0);
}
