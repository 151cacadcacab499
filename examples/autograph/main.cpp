// The tf.function chapter's AutoGraph section: `square_if_positive`, whose `if` becomes a
// tf::cond (TensorFlow's StatelessIf), called on 1 and -1, then what the trace built, as
// tf.autograph.to_code shows it (tf::autograph::to_code: the traced graph as pseudo-code, not a
// rewritten source) and as the GraphDef text tf.io.write_graph(..., as_text=True) writes
// (tf::summary::graph_def_text; `--logdir DIR` also writes it to DIR/square_if_positive.pbtxt).
#include <cstdint>
#include <iostream>
#include <string>

#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/to_code.hpp>
#include <tapeflow/summary/graph.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

int main(int argc, char** argv) {
  examples::ArgumentParser parser(
      "autograph",
      "Runs the tf.function chapter's AutoGraph example: square_if_positive on 1 and -1, then\n"
      "prints its traced graph as pseudo-code (tf.autograph.to_code) and as GraphDef text\n"
      "(pbtxt, what tf.io.write_graph(..., as_text=True) writes).");
  auto& logdir = parser.add_argument("--logdir", std::string(),
                                     "also write the pbtxt to <logdir>/square_if_positive.pbtxt");
  parser.parse_args(argc, argv);
  return examples::run(parser, [&] {
    // [seed:autograph begin]
    // [snippet:square_if_positive]
    auto square_if_positive = tf::function(
        [](const tf::Tensor<std::int32_t, 0>& x) {
          return tf::cond(
              x > 0, [&] { return x * x; }, [&] { return tf::constant(0); });
        },
        {.name = "square_if_positive"});
    auto a = tf::constant(1);
    auto b = tf::constant(-1);
    std::cout << square_if_positive(a) << " " << square_if_positive(b) << "\n";
    std::cout << tf::autograph::to_code(square_if_positive);
    // [snippet:square_if_positive]
    // [seed:autograph end]
    // [snippet:pbtxt]
    const auto& traced = *square_if_positive.concrete_functions().at(0);
    std::cout << tf::summary::graph_def_text(traced);
    if (!logdir.empty()) {
      std::cout << "wrote " << tf::summary::write_graph(traced, logdir, "square_if_positive.pbtxt")
                << "\n";
    }
    // [snippet:pbtxt]
    return 0;
  });
}
