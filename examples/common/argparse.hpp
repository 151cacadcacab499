// The examples' command line, in the shape of Python's argparse, which the chapters' programs
// use:
//
//     examples::ArgumentParser parser("checkpoint", "Trains ... (what --help prints)");
//     auto& mode = parser.add_argument("--mode", std::string("train"), "train or test");
//     auto& batch_size = parser.add_argument("--batch_size", 50);
//     auto& data_dir = parser.add_data_dir();
//     parser.parse_args(argc, argv);  // --help prints usage and exits 0; a bad flag exits 2
//     return examples::run(parser, [&] { ...; return 0; });
//
// `add_argument` returns a reference to the value, which parse_args fills in. Values are given
// as `--name value` or `--name=value`; a bool argument is a flag (`--fit`), as argparse's
// store_true. `run` prints a tapeflow (or other) exception as `<prog>: <message>`, exit 1.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace examples {

namespace argparse_detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// Parses `text` as T; false when it is not one.
template <class T>
bool parse(std::string_view text, T& out) {
  if constexpr (is_optional<T>::value) {
    typename T::value_type v{};
    if (!parse(text, v)) {
      return false;
    }
    out = std::move(v);
    return true;
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>) {
    out = T(std::string(text));
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    try {
      std::size_t used = 0;
      const double v = std::stod(std::string(text), &used);
      out = static_cast<T>(v);
      return used == text.size();
    } catch (const std::exception&) {
      return false;
    }
  } else {
    static_assert(std::is_integral_v<T>, "examples::ArgumentParser: unsupported argument type");
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  }
}

template <class T>
std::string show(const T& v) {
  if constexpr (is_optional<T>::value) {
    return v ? show(*v) : std::string();  // no default shown
  } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
    return v.string();
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return v == std::numeric_limits<T>::max() ? "no limit" : std::to_string(v);
  } else {
    std::ostringstream os;
    os << v;
    return os.str();
  }
}
}  // namespace argparse_detail

class ArgumentParser {
 public:
  ArgumentParser(std::string prog, std::string description)
      : prog_(std::move(prog)), description_(std::move(description)) {}
  ArgumentParser(const ArgumentParser&) = delete;
  ArgumentParser& operator=(const ArgumentParser&) = delete;

  /// `--name VALUE` with a default; returns the value, set by parse_args.
  template <class T>
  T& add_argument(std::string name, T default_value, std::string help = "") {
    auto value = std::make_shared<T>(std::move(default_value));
    Option o{std::move(name),
             std::move(help),
             argparse_detail::show(*value),
             false,
             [value](std::string_view text) { return argparse_detail::parse(text, *value); },
             value};
    options_.push_back(std::move(o));
    return *value;
  }
  std::string& add_argument(std::string name, const char* default_value, std::string help = "") {
    return add_argument(std::move(name), std::string(default_value), std::move(help));
  }
  /// A flag (`--name`, no value): false unless given (argparse's action="store_true").
  bool& add_argument(std::string name, bool default_value, std::string help = "") {
    auto value = std::make_shared<bool>(default_value);
    options_.push_back({std::move(name), std::move(help), "", true,
                        [value](std::string_view) { return *value = true; }, value});
    return *value;
  }
  /// `--data_dir DIR`, which every example takes: where its dataset is, when not where
  /// tf::keras::utils::get_file finds it ($TAPEFLOW_DATASETS, the repository's data/, ...).
  std::optional<std::filesystem::path>& add_data_dir() {
    return add_argument<std::optional<std::filesystem::path>>(
        "--data_dir", std::nullopt,
        "the dataset's folder (default: where tf::keras::utils::get_file finds it:\n"
        "                          $TAPEFLOW_DATASETS, the repository's data/, ...)");
  }

  /// Fills the values from argv. `--help`/`-h` prints the usage and exits 0; an unknown flag,
  /// a missing or malformed value prints why and exits 2.
  void parse_args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string_view arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        print_help(std::cout);
        std::exit(0);
      }
      std::optional<std::string_view> inline_value;
      if (const auto eq = arg.find('='); eq != std::string_view::npos) {
        inline_value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      }
      Option* o = find(arg);
      if (o == nullptr) {
        fail("unknown argument " + std::string(arg));
      }
      if (o->flag) {
        if (inline_value) {
          fail(std::string(arg) + " takes no value");
        }
        o->set({});
        continue;
      }
      if (!inline_value && i + 1 >= argc) {
        fail(std::string(arg) + " needs a value");
      }
      const std::string_view text = inline_value ? *inline_value : std::string_view(argv[++i]);
      if (!o->set(text)) {
        fail("bad value for " + std::string(arg) + ": '" + std::string(text) + "'");
      }
    }
  }

  [[nodiscard]] const std::string& prog() const noexcept { return prog_; }

  void print_help(std::ostream& os) const {
    os << "usage: " << prog_ << " [options]\n" << description_ << "\n\noptions:\n";
    for (const auto& o : options_) {
      std::string left = "  " + o.name + (o.flag ? "" : " VALUE");
      left.resize(std::max<std::size_t>(left.size() + 2, 26), ' ');
      os << left << o.help;
      if (!o.flag && !o.default_text.empty()) {
        os << (o.help.empty() ? "" : " ") << "(default: " << o.default_text << ")";
      }
      os << "\n";
    }
    os << "  -h, --help              show this message\n";
  }

 private:
  struct Option {
    std::string name, help, default_text;
    bool flag;
    std::function<bool(std::string_view)> set;
    std::shared_ptr<void> value;
  };
  Option* find(std::string_view name) {
    for (auto& o : options_) {
      if (o.name == name) {
        return &o;
      }
    }
    return nullptr;
  }
  [[noreturn]] void fail(const std::string& why) const {
    std::cerr << prog_ << ": " << why << " (see --help)\n";
    std::exit(2);
  }

  std::string prog_, description_;
  std::vector<Option> options_;
};

/// Runs an example's body: an exception is printed as `<prog>: <what>` and exits 1.
inline int run(const ArgumentParser& parser, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << parser.prog() << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace examples
