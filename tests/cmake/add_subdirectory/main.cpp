#include <iostream>

#include <tapeflow/tapeflow.hpp>

int main() {
  auto a = tapeflow::constant<float>({{1, 2}, {3, 4}});
  std::cout << tapeflow::matmul(a, a) << "\n";
  return 0;
}
