// tf::summary::histogram (TensorFlow: `tf.summary.histogram`).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of histogram().
struct HistogramOptions {
  /// Number of equal-width buckets between the data's min and max.
  std::int64_t buckets = 30;
  /// Markdown shown in TensorBoard's tooltip (TensorFlow: `description`).
  std::string description{};
};

namespace detail {
/// The serialized Summary.Value of a histogram: DT_DOUBLE [k, 3] rows (left, right, count).
template <class T, std::size_t R>
std::string histogram_value(std::string_view name, const Tensor<T, R>& data,
                            const HistogramOptions& options) {
  data.require_value("summary::histogram");
  if (options.buckets < 0) {
    throw invalid_argument("tf::summary::histogram: buckets must be >= 0, got " +
                           std::to_string(options.buckets));
  }
  std::vector<double> values(data.values().begin(), data.values().end());
  const std::vector<double> rows = histogram_buckets(values, options.buckets);
  std::string content(rows.size() * sizeof(double), '\0');
  std::memcpy(content.data(), rows.data(), content.size());  // little-endian hosts
  const std::int64_t dims[2] = {options.buckets, 3};
  return summary_value(
      name, [&](wire::Writer& t) { write_tensor_content(t, DType::float64, dims, content); },
      "histograms", {}, options.description);
}
}  // namespace detail

/// Writes a histogram of a numeric tensor's values (TensorFlow: `tf.summary.histogram`):
/// `buckets` equal-width buckets from min to max, as TensorFlow 2 computes them.
template <class T, std::size_t R>
bool histogram(std::string_view name, const Tensor<T, R>& data,
               std::optional<std::int64_t> step = {}, const HistogramOptions& options = {}) {
  static_assert(std::is_arithmetic_v<T>, "tf::summary::histogram: data must be numeric");
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  detail::Item item;
  item.kind = detail::Item::Kind::value;
  item.step = detail::resolve_step(step, "histogram");
  item.wall_time = detail::wall_time_now();
  item.bytes = detail::histogram_value(name, data, options);
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
