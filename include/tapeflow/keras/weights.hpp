// `model.save_weights(path)` / `model.load_weights(path)`: Keras 3's `*.weights.h5` (and the
// weights inside a `.keras` archive) and TensorFlow checkpoint prefixes as tf_keras writes them,
// chosen by the file name (docs/formats.md 13).
//
// Note [Keras 3 weights files]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Keras 3 walks the model and stores each object's own variables as datasets "0", "1", ... of a
// group `<path>/vars` whose `name` attribute is the object's name. A model's path is ""; a
// child's is its parent's path plus its attribute name (subclassed models, an LSTM's `cell`),
// or, for the layers a Sequential or Functional model keeps in its `layers` list,
// `layers/<class name in snake_case>` with `_1`, `_2`, ... for repeats of a class in that list.
// A compiled model adds `optimizer` (its `variables`: iterations, learning rate, then the slots).
// An object reached twice is written once. Paths, not layer names, match a file to a model, so
// a file loads into any model of the same structure. HDF5 itself is the compiled target
// tapeflow::keras_io (keras/detail/hdf5_weights.hpp); this header only walks the model.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/detail/hdf5_weights.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_state.hpp>
#include <tapeflow/train/tensor_bundle.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

/// What `load_weights` did. A TensorFlow checkpoint prefix gives its CheckpointLoadStatus (values
/// for layers not built yet wait for them); an HDF5 file is applied whole, so only what
/// `skip_mismatch` skipped is left to report.
class LoadWeightsStatus {
 public:
  /// The status of a checkpoint restore.
  explicit LoadWeightsStatus(train::CheckpointLoadStatus s) : checkpoint_(std::move(s)) {}
  /// The status of an HDF5 load: the paths skipped for a mismatch.
  explicit LoadWeightsStatus(std::vector<std::string> skipped) : skipped_(std::move(skipped)) {}

  /// The checkpoint restore's status, when the file was a checkpoint prefix.
  [[nodiscard]] const std::optional<train::CheckpointLoadStatus>& checkpoint() const noexcept {
    return checkpoint_;
  }
  /// "path: why" for each group `skip_mismatch` left unchanged.
  [[nodiscard]] const std::vector<std::string>& skipped() const noexcept { return skipped_; }
  /// Throws failed_precondition unless every value in the file went into the model and every
  /// weight of the model got one (see CheckpointLoadStatus::assert_consumed).
  const LoadWeightsStatus& assert_consumed() const {
    if (checkpoint_) {
      checkpoint_->assert_consumed();
    } else if (!skipped_.empty()) {
      throw failed_precondition("tf::keras load_weights: " + std::to_string(skipped_.size()) +
                                " group(s) skipped, first: " + skipped_.front());
    }
    return *this;
  }
  /// Marks a partial load as intended.
  const LoadWeightsStatus& expect_partial() const {
    if (checkpoint_) {
      checkpoint_->expect_partial();
    }
    return *this;
  }

 private:
  std::optional<train::CheckpointLoadStatus> checkpoint_;
  std::vector<std::string> skipped_;
};

}  // namespace keras

namespace detail::keras_weights {
using keras::Layer;
using keras::Model;
namespace optimizers = keras::optimizers;

/// Keras's `naming.to_snake_case`: "Conv2D" -> "conv2d", "BatchNormalization" ->
/// "batch_normalization", "ReLU" -> "re_lu", "LSTM" -> "lstm".
inline std::string to_snake_case(std::string_view name) {
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  std::string word;
  for (const char c : name) {
    if (upper(c) || lower(c) || (c >= '0' && c <= '9') || c == '_') {
      word += c;
    }
  }
  // re.sub("(.)([A-Z][a-z]+)", r"\1_\2"): matches do not overlap, so a match's lowercase run is
  // consumed before the next one can start.
  std::string a;
  for (std::size_t i = 0; i < word.size();) {
    if (i + 2 < word.size() && upper(word[i + 1]) && lower(word[i + 2])) {
      a += word[i];
      a += '_';
      a += word[i + 1];
      std::size_t j = i + 2;
      while (j < word.size() && lower(word[j])) {
        a += word[j++];
      }
      i = j;
    } else {
      a += word[i++];
    }
  }
  // re.sub("([a-z])([A-Z])", r"\1_\2").lower()
  std::string out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    out += upper(a[i]) ? char(a[i] - 'A' + 'a') : a[i];
    if (lower(a[i]) && i + 1 < a.size() && upper(a[i + 1])) {
      out += '_';
    }
  }
  return out;
}

/// One object's group: its path, name and own variables (Note [Keras 3 weights files]).
struct Group {
  std::string path;
  std::string name;
  std::vector<AnyVariable> variables;
  bool optimizer = false;  // a count mismatch skips it with a warning, as Keras does
  bool built = true;       // the layer has created its weights
};

inline std::string join(const std::string& path, const std::string& child) {
  return path.empty() ? child : path + "/" + child;
}

inline void walk(Layer<>& layer, const std::string& path, std::set<const void*>& seen,
                 std::vector<Group>& out) {
  if (!seen.insert(&layer).second) {
    return;
  }
  out.push_back({path, layer.name(), layer.own_variables(), false, layer.built()});
  if (auto list = layer.layer_list()) {
    std::map<std::string, int> used;
    for (Layer<>* child : *list) {
      std::string key = to_snake_case(child->class_name());
      if (auto [it, fresh] = used.emplace(key, 0); !fresh) {
        key += "_" + std::to_string(++it->second);
      }
      walk(*child, join(path, "layers/" + key), seen, out);
    }
    return;
  }
  // Keras visits attributes in sorted order: it decides which path names a shared layer.
  auto named = layer.named_sublayers();
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, child] : named) {
    walk(*child, join(path, name), seen, out);
  }
}

/// The groups of `model`, then its compiled optimizer's (Keras 3's `optimizer.variables`: the
/// `_variables` list of its Keras 3 object graph).
inline std::vector<Group> groups_of(Model<>& model) {
  std::vector<Group> out;
  std::set<const void*> seen;
  walk(model, "", seen, out);
  if (auto opt = model.compiled_optimizer()) {
    Group g{"optimizer", "", {}, true, true};
    if (auto* o = dynamic_cast<optimizers::Optimizer*>(opt->target())) {
      g.name = to_snake_case(o->name());
    }
    for (const auto& c : opt->target()->trackable_children(train::Layout::keras3)) {
      if (c.name == "_variables" && c.target() != nullptr) {
        for (const auto& e : c.target()->trackable_children(train::Layout::keras3)) {
          if (e.variable.has_value()) {
            g.variables.push_back(e.variable);
          }
        }
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

/// Which file `path` names, as Keras 3 decides it from the name.
enum class Format { checkpoint, weights_h5, keras_archive, legacy_h5 };

inline Format format_of(std::string_view path) {
  auto ends = [&](std::string_view s) {
    return path.size() >= s.size() && path.substr(path.size() - s.size()) == s;
  };
  if (ends(".weights.h5")) {
    return Format::weights_h5;
  }
  if (ends(".keras")) {
    return Format::keras_archive;
  }
  if (ends(".h5") || ends(".hdf5")) {
    return Format::legacy_h5;
  }
  return Format::checkpoint;
}

[[noreturn]] inline void no_hdf5(const std::string& path) {
  throw unimplemented("tf::keras: '" + path +
                      "' is a Keras 3 HDF5 weights file, which needs HDF5: install Debian's "
                      "libhdf5-dev, reconfigure tapeflow and link tapeflow::keras_io");
}

[[noreturn]] inline void legacy(const std::string& path) {
  throw unimplemented("tf::keras: '" + path +
                      "' names a legacy Keras 2 HDF5 file (.h5): save weights as "
                      "'*.weights.h5' (Keras 3) or as a TensorFlow checkpoint prefix");
}

/// Loads the groups of `model` from an open HDF5 file: every group is checked and read before
/// any variable is assigned, so a failed load leaves the model as it was.
template <class File>
std::vector<std::string> load_groups(Model<>& model, const File& file, bool skip_mismatch) {
  auto groups = groups_of(model);
  // Keras 3 refuses an unbuilt model too: its weights do not exist to receive the values. (The
  // root is a container that may never mark itself built.)
  for (std::size_t i = 1; i < groups.size(); ++i) {
    if (!groups[i].built) {
      throw failed_precondition("tf::keras load_weights: model '" + model.name() +
                                "' has not been built (layer '" + groups[i].name +
                                "' has no weights yet): call it on a batch (or build it) before "
                                "loading '" +
                                file.name() + "'");
    }
  }
  for (auto& g : groups) {
    if (g.optimizer && !g.variables.empty()) {
      // A compiled model that has not trained yet: create the slots the file holds.
      auto& opt = model.optimizer();
      if (!opt.built()) {
        if (auto stored = file.variables(g.path); stored && stored->size() > g.variables.size()) {
          opt.build(model.trainable_variables());
          g = groups_of(model).back();
        }
      }
    }
  }
  std::vector<std::pair<AnyVariable, AnyTensor>> staged;
  std::vector<std::string> skipped;
  for (const auto& g : groups) {
    const std::string where = g.path.empty() ? "vars" : g.path + "/vars";
    const auto stored = file.variables(g.path);
    if (!stored) {
      if (g.variables.empty()) {
        continue;
      }
      if (g.optimizer) {
        continue;  // a file saved before compile: the optimizer keeps its state
      }
      throw not_found("tf::keras load_weights: '" + file.name() + "' has no group '" + where +
                      "' for layer '" + g.name + "' (" + std::to_string(g.variables.size()) +
                      " variables): the file holds another model structure");
    }
    std::string why;
    if (stored->size() != g.variables.size()) {
      why = (g.optimizer ? "optimizer '" : "layer '") + g.name + "' expected " +
            std::to_string(g.variables.size()) + " variables, but the file has " +
            std::to_string(stored->size());
    }
    for (std::size_t i = 0; why.empty() && i < stored->size(); ++i) {
      const AnyVariable& v = g.variables[i];
      if ((*stored)[i].shape != v.shape()) {
        why = "'" + where + "/" + std::to_string(i) + "' has shape " +
              (*stored)[i].shape.to_string() + " but variable '" + v.name() + "' has shape " +
              v.shape().to_string();
      }
    }
    if (!why.empty()) {
      if (g.optimizer) {
        std::clog << "tapeflow: warning: load_weights: skipping the optimizer's state: " << why
                  << "\n";
        skipped.push_back(where + ": " + why);
        continue;
      }
      if (!skip_mismatch) {
        throw invalid_argument("tf::keras load_weights: '" + file.name() + "': " + why);
      }
      skipped.push_back(where + ": " + why);
      continue;
    }
    for (std::size_t i = 0; i < stored->size(); ++i) {
      const AnyVariable& v = g.variables[i];
      staged.emplace_back(
          v, train::detail_bundle::make_tensor(v.dtype(), v.shape(), [&](auto* d) {
            if constexpr (std::is_same_v<decltype(d), std::string*>) {
              throw unimplemented("tf::keras load_weights: string variable '" + v.name() + "'");
            } else {
              file.read(g.path, i, v.dtype(), v.num_elements(), d);
            }
          }));
    }
  }
  for (const auto& [var, value] : staged) {
    var.assign(value);
  }
  return skipped;
}

}  // namespace detail::keras_weights

namespace keras {

template <class D>
auto Model<void>::save_weights(const std::string& filepath, const SaveWeightsOptions& options) {
  namespace dw = tapeflow::detail::keras_weights;
  switch (dw::format_of(filepath)) {
    case dw::Format::weights_h5: {
#if TAPEFLOW_HAS_HDF5
      std::vector<tapeflow::detail::keras_hdf5::WeightsGroup> groups;
      for (const auto& g : dw::groups_of(*this)) {
        tapeflow::detail::keras_hdf5::WeightsGroup out{g.path, g.name, {}};
        for (const auto& v : g.variables) {
          out.values.push_back(v.value());
        }
        groups.push_back(std::move(out));
      }
      tapeflow::detail::keras_hdf5::write_weights(filepath, groups);
      return;
#else
      dw::no_hdf5(filepath);
#endif
    }
    case dw::Format::keras_archive:
      throw invalid_argument("tf::keras save_weights: '" + filepath +
                             "': a .keras file is a whole-model archive; weights files end in "
                             "'.weights.h5' (or are a TensorFlow checkpoint prefix)");
    case dw::Format::legacy_h5:
      dw::legacy(filepath);
    case dw::Format::checkpoint: {
      const std::string prefix = train::write_object(*this, filepath, options.layout);
      train::CheckpointState st;
      st.model_checkpoint_path = prefix;
      st.all_model_checkpoint_paths = {prefix};
      train::detail_state::write_state(train::detail_state::dirname(prefix), st);
      return;
    }
  }
}

template <class D>
auto Model<void>::load_weights(const std::string& filepath, const LoadWeightsOptions& options) {
  namespace dw = tapeflow::detail::keras_weights;
  switch (dw::format_of(filepath)) {
    case dw::Format::weights_h5:
    case dw::Format::keras_archive: {
#if TAPEFLOW_HAS_HDF5
      if (dw::format_of(filepath) == dw::Format::weights_h5) {
        const tapeflow::detail::keras_hdf5::WeightsFile file(filepath);
        return LoadWeightsStatus(dw::load_groups(*this, file, options.skip_mismatch));
      }
      const tapeflow::detail::keras_hdf5::WeightsFile file(
          tapeflow::detail::keras_hdf5::read_archive_member(filepath, "model.weights.h5"),
          filepath + " (model.weights.h5)");
      return LoadWeightsStatus(dw::load_groups(*this, file, options.skip_mismatch));
#else
      dw::no_hdf5(filepath);
#endif
    }
    case dw::Format::legacy_h5:
      dw::legacy(filepath);
    case dw::Format::checkpoint:
      break;
  }
  return LoadWeightsStatus(train::read_object(
      *this, filepath, {.skip_mismatch = options.skip_mismatch}, "tf::keras::Model::load_weights"));
}

}  // namespace keras
TAPEFLOW_END_NAMESPACE
