// tf.keras.utils.Progbar: the progress bar `fit` and `evaluate` print.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace utils {

/// Keras' progress bar: `  37/1200 [>.............................] - ETA: 12s - loss: 0.41`
/// redrawn in place on a terminal, and one summary line per epoch (`1200/1200 [=====] - 4s
/// 3ms/step - loss: 0.21 - ...`) when the output is not a terminal. verbose 0: silent;
/// 2: only the summary line. The summary line is printed by `update(..., finalize = true)`.
class Progbar {
 public:
  /// (name, value) pairs shown after the bar, in order.
  using Values = std::vector<std::pair<std::string, double>>;

  /// A bar for `target` steps (nullopt: unknown, shown as "n/Unknown") written to `out`.
  /// `dynamic` (redraw in place) defaults to whether `out` is std::cout on a terminal.
  explicit Progbar(std::optional<std::int64_t> target, int verbose = 1,
                   std::ostream& out = std::cout, std::optional<bool> dynamic = std::nullopt)
      : target_(target), verbose_(verbose), out_(out), start_(clock::now()) {
    dynamic_ = dynamic ? *dynamic : (&out == &std::cout && ::isatty(STDOUT_FILENO) != 0);
  }

  /// Sets the current step and the values to show (the running means, as Keras shows them).
  void update(std::int64_t current, const Values& values, bool finalize = false) {
    seen_ = current;
    if (verbose_ == 0) {
      return;
    }
    const auto now = clock::now();
    const double elapsed = seconds(now - start_);
    const bool done = finalize;
    if (!done) {
      if (verbose_ != 1 || !dynamic_ || seconds(now - last_draw_) < 0.05) {
        return;
      }
    }
    last_draw_ = now;
    std::ostringstream line;
    line << bar(current);
    if (!done) {
      if (target_ && current > 0) {
        const double eta = elapsed / double(current) * double(*target_ - current);
        line << " - ETA: " << format_duration(eta);
      } else {
        line << " - " << format_duration(elapsed);
      }
    } else {
      line << " - " << std::llround(elapsed) << "s";
      if (current > 0) {
        line << " " << per_step(elapsed / double(current));
      }
    }
    for (const auto& [name, v] : values) {
      line << " - " << name << ": " << format_value(v);
    }
    std::string text = line.str();
    if (dynamic_) {
      std::string pad;
      if (text.size() < width_) {
        pad.assign(width_ - text.size(), ' ');
      }
      width_ = text.size();
      out_ << '\r' << text << pad;
      if (done) {
        out_ << '\n';
      }
      out_.flush();
    } else if (done) {
      out_ << text << '\n';
      out_.flush();
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  static double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

  std::string bar(std::int64_t current) const {
    std::ostringstream s;
    if (!target_) {
      s << std::setw(7) << current << "/Unknown";
      return s.str();
    }
    const std::int64_t t = *target_;
    const int digits = int(std::to_string(t).size());
    s << std::setw(digits) << current << '/' << t << " [";
    constexpr int bar_width = 30;
    const double frac = t > 0 ? double(current) / double(t) : 1.0;
    int filled = int(bar_width * frac);
    if (filled > bar_width) {
      filled = bar_width;
    }
    if (filled > 0) {
      s << std::string(std::size_t(filled - 1), '=');
      s << (current < t ? '>' : '=');
    }
    s << std::string(std::size_t(bar_width - filled), '.') << ']';
    return s.str();
  }
  static std::string format_duration(double s) {
    std::ostringstream o;
    const auto secs = std::llround(s);
    if (secs > 3600) {
      o << secs / 3600 << ':' << std::setw(2) << std::setfill('0') << (secs % 3600) / 60 << ':'
        << std::setw(2) << secs % 60;
    } else if (secs > 60) {
      o << secs / 60 << ':' << std::setw(2) << std::setfill('0') << secs % 60;
    } else {
      o << secs << 's';
    }
    return o.str();
  }
  static std::string per_step(double s) {
    std::ostringstream o;
    if (s >= 1) {
      o << std::llround(s) << "s/step";
    } else if (s >= 1e-3) {
      o << std::llround(s * 1e3) << "ms/step";
    } else {
      o << std::llround(s * 1e6) << "us/step";
    }
    return o.str();
  }
  static std::string format_value(double v) {
    std::ostringstream o;
    if (std::abs(v) > 1e-3 || v == 0) {
      o << std::fixed << std::setprecision(4) << v;
    } else {
      o << std::scientific << std::setprecision(4) << v;
    }
    return o.str();
  }

  std::optional<std::int64_t> target_;
  int verbose_;
  std::ostream& out_;
  bool dynamic_ = false;
  clock::time_point start_;
  clock::time_point last_draw_{};
  std::int64_t seen_ = 0;
  std::size_t width_ = 0;
};

}  // namespace utils
}  // namespace keras
TAPEFLOW_END_NAMESPACE
