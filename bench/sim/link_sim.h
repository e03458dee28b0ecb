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
// Header-only (bench/*.cpp are executables). Used by bench/tax_study.cpp and
// tests/native/test_link_sim.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace agui_sim {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 53 bits of `h` (portable: no std distributions, whose
// output differs between standard libraries).
inline double unitFrom(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

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
  std::string markdownRow() const {
    std::string drops = meanFramesBetweenDrops > 0 ? fmt("%.0f", meanFramesBetweenDrops) : std::string("never");
    std::string down = meanFramesBetweenDrops > 0
                           ? std::to_string(downtimeMinSteps) + "–" + std::to_string(downtimeMaxSteps)
                           : std::string("–");
    return "| `" + name + "` | " + fmt("%.4g", pGoodToBad) + " | " + fmt("%.4g", pBadToGood) + " | " +
           fmt("%.4g", lossGood) + " | " + fmt("%.4g", lossBad) + " | " + fmt("%.2f%%", 100 * expectedLoss()) +
           " (" + fmt("%.2f", 100 * lossRangeLo) + "–" + fmt("%.2f%%", 100 * lossRangeHi) + ") | " +
           fmt("%.4g", duplicateRate) + " | " + fmt("%.4g", reorderRate) + " (≤" +
           std::to_string(reorderMaxDistance) + ") | " + drops + " | " + fmt("%.2g", truncateOnDrop) + " | " +
           down + " |";
  }
  static std::string markdownHeader() {
    return "| profile | p(good→bad) | p(bad→good) | loss good | loss bad | E[loss] (documented range) | "
           "duplicate | reorder (max distance) | drop every ~N frames | truncate on drop | outage steps |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|";
  }
};

// A perfect link: the zero-loss baseline.
inline LinkProfile lossless() {
  LinkProfile p;
  p.name = "lossless";
  p.summary = "no faults at all (baseline)";
  return p;
}

// Wired office/datacenter path: almost nothing goes wrong.
inline LinkProfile wired() {
  LinkProfile p;
  p.name = "wired";
  p.summary = "near-zero loss, a reconnect every ~5,000 frames";
  p.pGoodToBad = 0.0005;
  p.pBadToGood = 0.5;
  p.lossGood = 0;
  p.lossBad = 0.2;
  p.meanFramesBetweenDrops = 5000;
  p.truncateOnDrop = 0.5;
  p.downtimeMinSteps = 1;
  p.downtimeMaxSteps = 2;
  p.lossRangeLo = 0;
  p.lossRangeHi = 0.001;
  return p;
}

// Home/office Wi-Fi: light bursty loss, rare reconnects, a little reordering.
inline LinkProfile wifi() {
  LinkProfile p;
  p.name = "wifi";
  p.summary = "light bursty loss, rare reconnects";
  p.pGoodToBad = 0.01;
  p.pBadToGood = 0.3;
  p.lossGood = 0.001;
  p.lossBad = 0.15;
  p.duplicateRate = 0.001;
  p.reorderRate = 0.002;
  p.reorderMaxDistance = 2;
  p.meanFramesBetweenDrops = 800;
  p.truncateOnDrop = 0.5;
  p.downtimeMinSteps = 2;
  p.downtimeMaxSteps = 6;
  p.lossRangeLo = 0.002;
  p.lossRangeHi = 0.015;
  return p;
}

// A phone on a train: loss in bursts, tunnels that cut the connection for
// 2-20 s, relays that duplicate and reorder.
inline LinkProfile mobileTrain() {
  LinkProfile p;
  p.name = "mobile-train";
  p.summary = "bursty loss, frequent disconnects (tunnels), duplicates and reordering";
  p.pGoodToBad = 0.01;
  p.pBadToGood = 0.25;
  p.lossGood = 0.002;
  p.lossBad = 0.4;
  p.duplicateRate = 0.005;
  p.reorderRate = 0.01;
  p.reorderMaxDistance = 3;
  p.meanFramesBetweenDrops = 150;
  p.truncateOnDrop = 0.7;
  p.downtimeMinSteps = 4;
  p.downtimeMaxSteps = 40;
  p.lossRangeLo = 0.01;
  p.lossRangeHi = 0.03;
  return p;
}

// The three profiles of the study (the baseline is separate).
inline std::vector<LinkProfile> standardProfiles() { return {wired(), wifi(), mobileTrain()}; }

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

class FaultSchedule {
 public:
  FaultSchedule(LinkProfile profile, size_t steps, uint64_t seed) : profile_(std::move(profile)), seed_(seed) {
    std::mt19937_64 rng(seed);
    auto u = [&rng] { return unitFrom(rng()); };
    steps_.resize(steps);
    bool bad = false;
    uint32_t downLeft = 0;
    const double dropHazard = profile_.meanFramesBetweenDrops > 0 ? 1.0 / profile_.meanFramesBetweenDrops : 0;
    const uint32_t dmin = std::min(profile_.downtimeMinSteps, profile_.downtimeMaxSteps);
    const uint32_t dmax = std::max(profile_.downtimeMinSteps, profile_.downtimeMaxSteps);
    for (size_t s = 0; s < steps; ++s) {
      StepFaults& f = steps_[s];
      // Fixed number of draws per step, whatever happens, so one parameter never
      // shifts the random stream of another.
      const double ge = u(), dropU = u(), truncU = u(), cutU = u();
      const uint64_t downR = rng();
      f.frameSeed = rng();
      if (s > 0) bad = bad ? !(ge < profile_.pBadToGood) : (ge < profile_.pGoodToBad);
      f.bad = bad;
      if (downLeft > 0) {
        f.down = true;
        --downLeft;
        ++downSteps_;
        continue;
      }
      if (s > 0 && dropU < dropHazard) {
        f.drop = true;
        f.truncate = truncU < profile_.truncateOnDrop;
        f.cutAt = 0.05 + 0.9 * cutU;
        downLeft = dmin + static_cast<uint32_t>(downR % (dmax - dmin + 1));
        ++drops_;
      }
    }
    for (const auto& f : steps_) badSteps_ += f.bad ? 1 : 0;
  }

  const LinkProfile& profile() const { return profile_; }
  uint64_t seed() const { return seed_; }
  size_t steps() const { return steps_.size(); }
  // Beyond the schedule: a quiet, connected, good step.
  const StepFaults& at(size_t step) const {
    static const StepFaults quiet{};
    return step < steps_.size() ? steps_[step] : quiet;
  }
  FrameFate frame(size_t step, size_t index) const {
    const StepFaults& f = at(step);
    FrameFate fate;
    const uint64_t h1 = splitmix64(f.frameSeed ^ splitmix64(index + 1));
    const uint64_t h2 = splitmix64(h1), h3 = splitmix64(h2), h4 = splitmix64(h3);
    fate.lost = unitFrom(h1) < (f.bad ? profile_.lossBad : profile_.lossGood);
    fate.duplicated = unitFrom(h2) < profile_.duplicateRate;
    if (profile_.reorderMaxDistance > 0 && unitFrom(h3) < profile_.reorderRate)
      fate.delay = 1 + static_cast<uint32_t>(h4 % profile_.reorderMaxDistance);
    return fate;
  }

  size_t drops() const { return drops_; }
  size_t downSteps() const { return downSteps_; }
  size_t badSteps() const { return badSteps_; }
  // Frame loss rate of this schedule for one frame per connected step.
  double lossRate() const {
    size_t sent = 0, lost = 0;
    for (size_t s = 0; s < steps_.size(); ++s) {
      if (steps_[s].down) continue;
      ++sent;
      lost += frame(s, 0).lost ? 1 : 0;
    }
    return sent ? static_cast<double>(lost) / static_cast<double>(sent) : 0;
  }
  // A hash of every decision (for determinism checks).
  uint64_t fingerprint() const {
    uint64_t h = 0x243f6a8885a308d3ull;
    for (size_t s = 0; s < steps_.size(); ++s) {
      const StepFaults& f = steps_[s];
      const FrameFate a = frame(s, 0), b = frame(s, 1);
      uint64_t v = (f.bad ? 1u : 0u) | (f.down ? 2u : 0u) | (f.drop ? 4u : 0u) | (f.truncate ? 8u : 0u) |
                   (a.lost ? 16u : 0u) | (a.duplicated ? 32u : 0u) | (b.lost ? 64u : 0u);
      v |= static_cast<uint64_t>(a.delay) << 8;
      v ^= static_cast<uint64_t>(f.cutAt * 1e6) << 16;
      h = splitmix64(h ^ v ^ (f.frameSeed * 31));
    }
    return h;
  }

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
  void connect() {
    discardHeld();
    connected_ = true;
    ++stats_.connects;
  }
  // The client closes the connection itself (to reconnect with a catch-up request).
  void close() {
    discardHeld();
    connected_ = false;
  }

  // Sends `frames` at `step`; delivered bytes are appended to `out`. Returns false
  // when the connection broke (a scheduled drop): the caller must connect() again
  // once up(). Must not be called while down or disconnected.
  bool send(size_t step, const std::vector<std::string>& frames, std::vector<std::string>& out) {
    if (step != step_) {
      step_ = step;
      index_ = 0;
      dropDone_ = false;
    }
    const StepFaults& f = schedule_.at(step);
    const bool dropNow = f.drop && !dropDone_;
    for (size_t i = 0; i < frames.size(); ++i) {
      const std::string& frame = frames[i];
      const FrameFate fate = schedule_.frame(step, index_++);
      ++stats_.framesSent;
      if (dropNow && f.truncate && i + 1 == frames.size()) {
        const size_t keep = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(frame.size()) * f.cutAt));
        stats_.bytesSent += keep;
        ++stats_.framesTruncated;
        if (fate.lost) ++stats_.framesLost;
        else deliver(frame.substr(0, keep), out);
        break;
      }
      stats_.bytesSent += frame.size();
      if (fate.lost) {
        ++stats_.framesLost;
        continue;
      }
      if (fate.delay > 0) {
        ++stats_.framesReordered;
        held_.push_back(Held{frame, fate.delay});
      } else {
        deliver(frame, out);
        releaseHeld(out);
      }
      if (fate.duplicated) {
        ++stats_.framesSent;
        ++stats_.framesDuplicated;
        stats_.bytesSent += frame.size();
        deliver(frame, out);
      }
    }
    if (dropNow) {
      dropDone_ = true;
      ++stats_.drops;
      close();
      return false;
    }
    return true;
  }

 private:
  struct Held {
    std::string bytes;
    uint32_t remaining;  // later frames still to pass before this one is delivered
  };

  void deliver(const std::string& bytes, std::vector<std::string>& out) {
    stats_.bytesDelivered += bytes.size();
    out.push_back(bytes);
  }
  // A frame was delivered: every held frame is one frame closer to release.
  void releaseHeld(std::vector<std::string>& out) {
    for (size_t i = 0; i < held_.size();) {
      if (--held_[i].remaining == 0) {
        deliver(held_[i].bytes, out);
        held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  void discardHeld() {
    stats_.framesDiscarded += held_.size();
    held_.clear();
  }

  const FaultSchedule& schedule_;
  std::vector<Held> held_;
  LinkStats stats_;
  size_t step_ = std::numeric_limits<size_t>::max();
  size_t index_ = 0;
  bool dropDone_ = false;
  bool connected_ = false;
};

}  // namespace agui_sim
