#include "facade/segment_tax_facade.h"

#include <optional>

#include "facade/facade_json.h"

namespace agui_sync {

using json = nlohmann::json;

namespace {

std::optional<Failure> readOptions(const std::string& text, SegmentTaxOptions& out) {
  json opts;
  if (auto failure = parseBounded(text.empty() ? "{}" : text, 4, opts)) return failure;
  if (!opts.is_object()) return Failure{Code::InvalidOptions, "segment tax options must be an object", std::nullopt};
  if (auto failure = readPositive(opts, "window", out.window)) return failure;
  if (auto failure = readPositive(opts, "maxSegments", out.maxSegments)) return failure;
  auto it = opts.find("breakEven");
  if (it != opts.end() && !it->is_null()) {
    const bool number = it->is_number();
    const double value = number ? it->get<double>() : 0;
    if (!number || !(value > 0 && value <= 1)) {
      return Failure{Code::InvalidOptions, "option 'breakEven' must be a number in (0, 1]", std::nullopt};
    }
    out.breakEven = value;
  }
  return std::nullopt;
}

}  // namespace

SegmentTaxFacade::SegmentTaxFacade(const std::string& optionsJson) {
  SegmentTaxOptions options;
  if (auto failure = readOptions(optionsJson, options)) {
    initResult_ = failureJson(*failure);
    return;
  }
  tax_ = SegmentTax(options);
  initResult_ = okJson();
}

}  // namespace agui_sync
