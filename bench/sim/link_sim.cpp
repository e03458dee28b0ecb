// The SSE link fault simulator: see link_sim.h for the model.
#include "sim/link_sim.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

namespace agui_sim {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// ---------------------------------------------------------------- profiles

std::string LinkProfile::markdownRow() const {
  std::string drops = meanFramesBetweenDrops > 0 ? fmt("%.0f", meanFramesBetweenDrops) : std::string("never");
  std::string down = meanFramesBetweenDrops > 0
                         ? std::to_string(downtimeMinSteps) + "–" + std::to_string(downtimeMaxSteps)
                         : std::string("–");
  return "| `" + name + "` | " + fmt("%.4g", pGoodToBad) + " | " + fmt("%.4g", pBadToGood) + " | " +
         fmt("%.4g", lossGood) + " | " + fmt("%.4g", lossBad) + " | " + fmt("%.2f%%", 100 * expectedLoss()) +
         " (" + fmt("%.2f", 100 * lossRangeLo) + "–" + fmt("%.2f%%", 100 * lossRangeHi) + ") | " +
         fmt("%.4g", duplicateRate) + " | " + fmt("%.4g", reorderRate) + " (≤" +
         std::to_string(reorderMaxDistance) + ") | " + drops + " | " + fmt("%.2g", truncateOnDrop) + " | " + down +
         " |";
}

std::string LinkProfile::markdownHeader() {
  return "| profile | p(good→bad) | p(bad→good) | loss good | loss bad | E[loss] (documented range) | "
         "duplicate | reorder (max distance) | drop every ~N frames | truncate on drop | outage steps |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|";
}

LinkProfile lossless() {
  LinkProfile p;
  p.name = "lossless";
  p.summary = "no faults at all (baseline)";
  return p;
}

LinkProfile wired() {
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

LinkProfile wifi() {
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

LinkProfile mobileTrain() {
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

std::vector<LinkProfile> standardProfiles() { return {wired(), wifi(), mobileTrain()}; }

// ---------------------------------------------------------------- the schedule

FaultSchedule::FaultSchedule(LinkProfile profile, size_t steps, uint64_t seed)
    : profile_(std::move(profile)), seed_(seed) {
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

const StepFaults& FaultSchedule::at(size_t step) const {
  static const StepFaults quiet{};
  return step < steps_.size() ? steps_[step] : quiet;
}

FrameFate FaultSchedule::frame(size_t step, size_t index) const {
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

double FaultSchedule::lossRate() const {
  size_t sent = 0, lost = 0;
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].down) continue;
    ++sent;
    lost += frame(s, 0).lost ? 1 : 0;
  }
  return sent ? static_cast<double>(lost) / static_cast<double>(sent) : 0;
}

uint64_t FaultSchedule::fingerprint() const {
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

// ---------------------------------------------------------------- the link

void Link::connect() {
  discardHeld();
  connected_ = true;
  ++stats_.connects;
}

void Link::close() {
  discardHeld();
  connected_ = false;
}

bool Link::send(size_t step, const std::vector<std::string>& frames, std::vector<std::string>& out) {
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

void Link::deliver(const std::string& bytes, std::vector<std::string>& out) {
  stats_.bytesDelivered += bytes.size();
  out.push_back(bytes);
}

void Link::releaseHeld(std::vector<std::string>& out) {
  for (size_t i = 0; i < held_.size();) {
    if (--held_[i].remaining == 0) {
      deliver(held_[i].bytes, out);
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Link::discardHeld() {
  stats_.framesDiscarded += held_.size();
  held_.clear();
}

}  // namespace agui_sim
