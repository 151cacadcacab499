// The chapter's TensorArray example: write three scalars inside a tf::function, read them
// back. `arr = arr.write(i, v)` keeps the new array, as TensorFlow requires in graph mode.
#include <iostream>
#include <tuple>

#include <tapeflow/function/function.hpp>
#include <tapeflow/function/tensor_array.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

int main(int argc, char** argv) {
  examples::ArgumentParser parser(
      "tensor_array",
      "Writes 0.0, 1.0 and 2.0 to a tf::TensorArray inside a tf::function, reads them back and\n"
      "prints them, as the TensorFlow chapter's example does.");
  parser.parse_args(argc, argv);
  // [seed:tensor_array begin]
  // [snippet:tensor_array]
  auto array_write_and_read = tf::function([] {
    tf::TensorArray<float, 0> arr(3);
    arr = arr.write(0, tf::constant(0.0f));
    arr = arr.write(1, tf::constant(1.0f));
    arr = arr.write(2, tf::constant(2.0f));
    auto arr_0 = arr.read(0);
    auto arr_1 = arr.read(1);
    auto arr_2 = arr.read(2);
    return std::tuple{arr_0, arr_1, arr_2};
  });
  auto [a, b, c] = array_write_and_read();
  std::cout << a << " " << b << " " << c << "\n";
  // [snippet:tensor_array]
  // [seed:tensor_array end]
  return 0;
}
