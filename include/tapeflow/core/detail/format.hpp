// Printing tensors the way TensorFlow does (`str(tensor)`), which uses NumPy's array
// formatting: common width per column, "maxprec" floats with 8 fractional digits at most,
// scientific notation for wide ranges, "..." summaries past 1000 elements.
// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

template <element_type T, std::size_t Rank>
class Tensor;

namespace detail::format {

inline constexpr std::int64_t summary_threshold = 1000;
inline constexpr std::int64_t edge_items = 3;
inline constexpr std::size_t line_width = 75;

/// Shortest round-trip text of a float in fixed notation, at most `max_frac` fractional digits.
template <class F>
std::string fixed(F value, int max_frac = 8) {
  char buf[512];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  auto dot = s.find('.');
  if (dot != std::string::npos && static_cast<int>(s.size() - dot - 1) > max_frac) {
    res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, max_frac);
    s.assign(buf, res.ptr);
    while (!s.empty() && s.back() == '0') {
      s.pop_back();
    }
  }
  if (s.find('.') == std::string::npos) {
    s += '.';
  }
  return s;
}

/// NumPy scalar spelling: positional "1.0"/"0.1" in [1e-4, 1e16), else "1e-05".
template <class F>
std::string scalar_float(F value) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  const F mag = std::fabs(value);
  if (mag != 0 && (mag < F(1e-4) || mag >= F(1e16))) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    std::string s(buf, res.ptr);
    // to_chars writes "1e-05"; NumPy writes the same (two exponent digits at least).
    return s;
  }
  char buf[512];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (s.find('.') == std::string::npos) {
    s += ".0";
  }
  return s;
}

/// Formats the shown elements of a float array with NumPy's column rules.
template <class F>
std::vector<std::string> float_column(std::span<const F> shown) {
  std::vector<std::string> out;
  out.reserve(shown.size());
  F max_abs = 0;
  F min_abs = std::numeric_limits<F>::infinity();
  bool any_finite_nonzero = false;
  for (F v : shown) {
    if (std::isfinite(v) && v != 0) {
      any_finite_nonzero = true;
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
  }
  const bool scientific =
      any_finite_nonzero && (max_abs >= F(1e8) || min_abs < F(1e-4) || max_abs / min_abs > F(1e3));
  auto special = [](F v) -> std::string {
    if (std::isnan(v)) {
      return "nan";
    }
    return v > 0 ? "inf" : "-inf";
  };
  if (scientific) {
    // mantissa digits padded with zeros to the longest, exponent at least two digits.
    std::vector<std::string> mant;
    std::vector<std::string> expo;
    std::size_t frac = 0;
    for (F v : shown) {
      if (!std::isfinite(v)) {
        mant.push_back(special(v));
        expo.emplace_back();
        continue;
      }
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
      std::string s(buf, res.ptr);
      auto e = s.find('e');
      std::string m = s.substr(0, e);
      std::string x = s.substr(e);
      auto dot = m.find('.');
      if (dot == std::string::npos) {
        m += '.';
        dot = m.size() - 1;
      }
      if (m.size() - dot - 1 > 8) {
        res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, 8);
        s.assign(buf, res.ptr);
        e = s.find('e');
        m = s.substr(0, e);
        x = s.substr(e);
        while (m.back() == '0') {
          m.pop_back();
        }
        dot = m.find('.');
      }
      frac = std::max(frac, m.size() - dot - 1);
      mant.push_back(m);
      expo.push_back(x);
    }
    frac = std::max<std::size_t>(frac, 1);
    std::size_t width = 0;
    for (std::size_t i = 0; i < mant.size(); ++i) {
      std::string s = mant[i];
      if (!expo[i].empty()) {
        s.append(frac - (s.size() - s.find('.') - 1), '0');
        s += expo[i];
      }
      width = std::max(width, s.size());
      out.push_back(std::move(s));
    }
    for (auto& s : out) {
      s.insert(0, width - s.size(), ' ');
    }
    return out;
  }
  std::size_t left = 0;
  std::size_t right = 0;
  std::vector<std::string> raw;
  raw.reserve(shown.size());
  for (F v : shown) {
    std::string s = std::isfinite(v) ? fixed(v) : special(v);
    auto dot = s.find('.');
    std::size_t l = dot == std::string::npos ? s.size() : dot;
    left = std::max(left, l);
    right = std::max(right, s.size() - l);
    raw.push_back(std::move(s));
  }
  for (auto& s : raw) {
    auto dot = s.find('.');
    std::size_t l = dot == std::string::npos ? s.size() : dot;
    std::string padded(left - l, ' ');
    padded += s;
    padded.append(right - (s.size() - l), ' ');
    out.push_back(std::move(padded));
  }
  return out;
}

/// Python's repr of a bytes object: b'abc', escapes for quotes, backslashes, non-printables.
inline std::string bytes_literal(const std::string& bytes) {
  const bool has_single = bytes.find('\'') != std::string::npos;
  const bool has_double = bytes.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out = "b";
  out += quote;
  static constexpr char hex[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

template <class T, class Shown>
std::vector<std::string> column(const Shown& shown) {
  if constexpr (std::is_floating_point_v<T>) {
    return float_column<T>(std::span<const T>(shown.data(), shown.size()));
  } else {
    std::vector<std::string> out;
    std::size_t width = 0;
    for (const auto& v : shown) {
      std::string s;
      if constexpr (std::is_same_v<T, bool>) {
        s = v ? "True" : "False";
      } else if constexpr (std::is_same_v<T, std::string>) {
        s = bytes_literal(v);
      } else {
        s = std::to_string(static_cast<std::int64_t>(v));
      }
      width = std::max(width, s.size());
      out.push_back(std::move(s));
    }
    if constexpr (!std::is_same_v<T, std::string>) {
      for (auto& s : out) {
        s.insert(0, width - s.size(), ' ');
      }
    }
    return out;
  }
}

/// Indices along one axis that are printed (all, or the first and last `edge_items`).
inline std::vector<std::int64_t> shown_indices(std::int64_t dim, bool summarize) {
  std::vector<std::int64_t> idx;
  if (summarize && dim > 2 * edge_items) {
    for (std::int64_t i = 0; i < edge_items; ++i) {
      idx.push_back(i);
    }
    idx.push_back(-1);  // the "..." marker
    for (std::int64_t i = dim - edge_items; i < dim; ++i) {
      idx.push_back(i);
    }
  } else {
    for (std::int64_t i = 0; i < dim; ++i) {
      idx.push_back(i);
    }
  }
  return idx;
}

/// NumPy's `str(array)` for a row-major array of the given shape.
template <class T>
std::string array_text(std::span<const T> values, const Shape& shape) {
  std::size_t const rank = shape.rank();
  if (rank == 0) {
    if constexpr (std::is_floating_point_v<T>) {
      return scalar_float(values[0]);
    } else {
      return column<T>(values).front();  // NOLINT: one element
    }
  }
  const bool summarize = shape.num_elements() > summary_threshold;
  // Collect the shown elements in print order (so widths come from what is printed).
  std::vector<std::vector<std::int64_t>> axes;
  for (std::size_t a = 0; a < rank; ++a) {
    axes.push_back(shown_indices(shape[a], summarize));
  }
  // vector<bool> is not contiguous; keep bools as bytes.
  std::vector<std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>> shown;
  std::vector<std::int64_t> strides(rank, 1);
  for (std::size_t a = rank - 1; a > 0; --a) {
    strides[a - 1] = strides[a] * shape[a];
  }
  auto gather = [&](auto&& self, std::size_t axis, std::int64_t offset) -> void {
    for (auto i : axes[axis]) {
      if (i < 0) {
        continue;
      }
      if (axis + 1 == rank) {
        shown.push_back(values[static_cast<std::size_t>(offset + i)]);
      } else {
        self(self, axis + 1, offset + i * strides[axis]);
      }
    }
  };
  if (shape.num_elements() > 0) {
    gather(gather, 0, 0);
  }
  std::vector<std::string> cells = column<T>(shown);
  std::size_t next_cell = 0;
  std::string out;
  auto emit = [&](auto&& self, std::size_t axis, const std::string& indent) -> void {
    out += '[';
    std::string const inner_indent = indent + ' ';
    if (axis + 1 == rank) {
      std::size_t line_start = out.rfind('\n');
      line_start = line_start == std::string::npos ? 0 : line_start + 1;
      bool first = true;
      for (auto i : axes[axis]) {
        std::string const cell = i < 0 ? std::string("...") : cells[next_cell++];
        if (!first) {
          // Wrap like NumPy: keep lines within line_width, continuing under the bracket.
          if (out.size() - line_start + 1 + cell.size() + 1 > line_width) {
            out += '\n';
            line_start = out.size();
            out += inner_indent;
          } else {
            out += ' ';
          }
        }
        out += cell;
        first = false;
      }
    } else {
      bool first = true;
      for (auto i : axes[axis]) {
        if (!first) {
          out.append(rank - axis - 1, '\n');
          out += inner_indent;
        }
        if (i < 0) {
          out += "...";
        } else {
          self(self, axis + 1, inner_indent);
        }
        first = false;
      }
    }
    out += ']';
  };
  emit(emit, 0, "");
  return out;
}

// With TAPEFLOW_PRECOMPILED, printing is compiled once, in tapeflow::instantiations.
#ifdef TAPEFLOW_PRECOMPILED
#define TAPEFLOW_PRINTING(T) \
  extern template std::string array_text<T>(std::span<const T>, const Shape&);
TAPEFLOW_PRINTING(float)
TAPEFLOW_PRINTING(double)
TAPEFLOW_PRINTING(std::int32_t)
TAPEFLOW_PRINTING(std::uint8_t)
TAPEFLOW_PRINTING(std::string)
TAPEFLOW_PRINTING(std::int64_t)
TAPEFLOW_PRINTING(bool)
#undef TAPEFLOW_PRINTING
#endif

}  // namespace detail::format

/// Prints like TensorFlow's `str(tensor)`: `tf.Tensor([1 2 3], shape=(3,), dtype=int32)`.
template <class T, std::size_t Rank>
std::ostream& operator<<(std::ostream& os, const Tensor<T, Rank>& t) {
  if (!t.has_value()) {
    return os << "tf.Tensor(" << (t.is_symbolic() ? "<symbolic>" : "<no value>")
              << ", shape=" << t.shape().to_string() << ", dtype=" << dtype_traits<T>::name << ")";
  }
  std::string text = detail::format::array_text<T>(t.values(), t.shape());
  if (text.find('\n') != std::string::npos) {
    text.insert(0, "\n");
  }
  return os << "tf.Tensor(" << text << ", shape=" << t.shape().to_string()
            << ", dtype=" << dtype_traits<T>::name << ")";
}

TAPEFLOW_END_NAMESPACE
