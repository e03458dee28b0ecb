#pragma once
// A deterministic, seeded fault simulator of an SSE link (issue 7, part 1).
//
// It models what an AG-UI client *sees* when the path between agent and UI
// misbehaves at the level of SSE events: relays and fan-out layers that drop,
// duplicate or reorder events, connections that break in the middle of an event,
// and outages (tunnels) during which nothing can be sent at all. It is not a TCP
// model: bytes inside one delivered frame are never corrupted.
//
// Time is counted in steps; one step is one agent state update (the study uses
// 500 ms). Everything random is decided up front by a FaultSchedule built from a
// seed, so that every strategy of the study runs through the SAME faults:
//   - a Gilbert-Elliott channel: each step is `good` or `bad`; good -> bad with
//     pGoodToBad, bad -> good with pBadToGood (mean burst 1 / pBadToGood steps);
//     a frame sent in a good step is lost with lossGood, in a bad step with lossBad;
//   - per frame: duplicated (delivered twice, the copy right after the original)
//     with duplicateRate; reordered (held back and delivered after 1..reorderMaxDistance
//     later frames of the same connection) with reorderRate;
//   - per step: the connection drops with probability 1 / meanFramesBetweenDrops
//     (one live frame per step, so "every N frames on average"). With probability
//     truncateOnDrop the last frame of that step is cut partway (5%..95% of its
//     bytes arrive) before the break; otherwise the break follows a whole frame.
//     Frames still held for reordering die with the connection. The next
//     downtimeMin..downtimeMax steps are `down` (no connection possible).
// The fate of a frame depends only on (seed, step, index of the frame within the
// step), so two strategies that send the same frames at the same step see the same
// fates, and the channel state / drops / outages are identical for all of them.
//
// Part of the agui_sim library (bench/sim/), which bench/tax_study.cpp and
// tests/native/test_link_sim.cpp link; the bodies are in link_sim.cpp.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace agui_sim {

// A 64-bit mixer: derives independent streams (per frame, per trace) from one seed.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 53 bits of `h` (portable: no std distributions, whose
// output differs between standard libraries).
inline double unitFrom(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

// snprintf of one number, for the study's tables.
std::string fmt(const char* f, double v);

struct LinkProfile {
  std::string name;
  std::string summary;
  // Gilbert-Elliott channel, one transition per step.
  double pGoodToBad = 0;
  double pBadToGood = 1;
  double lossGood = 0;
  double lossBad = 0;
  // Per frame.
  double duplicateRate = 0;
  double reorderRate = 0;
  uint32_t reorderMaxDistance = 0;
  // Connection drops (0 = never), truncation, outage length in steps.
  double meanFramesBetweenDrops = 0;
  double truncateOnDrop = 0;
  uint32_t downtimeMinSteps = 1;
  uint32_t downtimeMaxSteps = 1;
  // The documented range of the long-run frame loss rate (checked by the tests).
  double lossRangeLo = 0;
  double lossRangeHi = 0;

  double badFraction() const {
    const double d = pGoodToBad + pBadToGood;
    return d > 0 ? pGoodToBad / d : 0;
  }
  // Stationary frame loss of the Gilbert-Elliott channel (drops and truncations excluded).
  double expectedLoss() const {
    const double b = badFraction();
    return (1 - b) * lossGood + b * lossBad;
  }
  double meanBurstSteps() const { return pBadToGood > 0 ? 1.0 / pBadToGood : std::numeric_limits<double>::infinity(); }

  // One markdown table row: | name | p(g→b) | p(b→g) | loss good | loss bad | E[loss] | ... |
  std::string markdownRow() const;
  static std::string markdownHeader();
};

// A perfect link: the zero-loss baseline.
LinkProfile lossless();
// Wired office/datacenter path: almost nothing goes wrong.
LinkProfile wired();
// Home/office Wi-Fi: light bursty loss, rare reconnects, a little reordering.
LinkProfile wifi();
// A phone on a train: loss in bursts, tunnels that cut the connection for
// 2-20 s, relays that duplicate and reorder.
LinkProfile mobileTrain();
// The three profiles of the study (the baseline is separate).
std::vector<LinkProfile> standardProfiles();

struct StepFaults {
  bool bad = false;       // Gilbert-Elliott state of this step
  bool down = false;      // inside an outage: no connection can exist
  bool drop = false;      // the connection breaks at the end of this step's first send
  bool truncate = false;  // ... cutting its last frame partway
  double cutAt = 0;       // fraction of that frame's bytes that get through
  uint64_t frameSeed = 0;
};

struct FrameFate {
  bool lost = false;
  bool duplicated = false;
  uint32_t delay = 0;  // > 0: delivered after this many later frames (reordered)
};

// Every fault of one link profile over `steps` steps, decided from `seed` up
// front so that all strategies of the study meet the same faults.
class FaultSchedule {
 public:
  FaultSchedule(LinkProfile profile, size_t steps, uint64_t seed);

  const LinkProfile& profile() const { return profile_; }
  uint64_t seed() const { return seed_; }
  size_t steps() const { return steps_.size(); }
  // Beyond the schedule: a quiet, connected, good step.
  const StepFaults& at(size_t step) const;
  // The fate of the `index`-th frame sent at `step` (a pure function of both).
  FrameFate frame(size_t step, size_t index) const;

  size_t drops() const { return drops_; }
  size_t downSteps() const { return downSteps_; }
  size_t badSteps() const { return badSteps_; }
  // Frame loss rate of this schedule for one frame per connected step.
  double lossRate() const;
  // A hash of every decision (for determinism checks).
  uint64_t fingerprint() const;

 private:
  LinkProfile profile_;
  uint64_t seed_;
  std::vector<StepFaults> steps_;
  size_t drops_ = 0, downSteps_ = 0, badSteps_ = 0;
};

struct LinkStats {
  uint64_t framesSent = 0;     // frames the server wrote (duplicates counted again)
  uint64_t bytesSent = 0;      // bytes on the wire: everything written, lost or not; a cut frame counts its prefix
  uint64_t bytesDelivered = 0;
  uint64_t framesLost = 0;
  uint64_t framesDuplicated = 0;
  uint64_t framesReordered = 0;
  uint64_t framesTruncated = 0;
  uint64_t framesDiscarded = 0;  // held for reordering when the connection died
  uint64_t connects = 0;
  uint64_t drops = 0;
};

// One client's view of the link: frames go in at a step, delivered byte chunks
// come out (a reordered frame comes out later; a cut frame as its prefix).
class Link {
 public:
  explicit Link(const FaultSchedule& schedule) : schedule_(schedule) {}

  bool up(size_t step) const { return !schedule_.at(step).down; }
  bool connected() const { return connected_; }
  const LinkStats& stats() const { return stats_; }

  // A new connection (first, after a drop, or a client's voluntary reconnect).
  // Frames held for reordering belonged to the old connection and are gone.
  void connect();
  // The client closes the connection itself (to reconnect with a catch-up request).
  void close();

  // Sends `frames` at `step`; delivered bytes are appended to `out`. Returns false
  // when the connection broke (a scheduled drop): the caller must connect() again
  // once up(). Must not be called while down or disconnected.
  bool send(size_t step, const std::vector<std::string>& frames, std::vector<std::string>& out);

 private:
  struct Held {
    std::string bytes;
    uint32_t remaining;  // later frames still to pass before this one is delivered
  };

  void deliver(const std::string& bytes, std::vector<std::string>& out);
  // A frame was delivered: every held frame is one frame closer to release.
  void releaseHeld(std::vector<std::string>& out);
  void discardHeld();

  const FaultSchedule& schedule_;
  std::vector<Held> held_;
  LinkStats stats_;
  size_t step_ = std::numeric_limits<size_t>::max();
  size_t index_ = 0;
  bool dropDone_ = false;
  bool connected_ = false;
};

}  // namespace agui_sim
