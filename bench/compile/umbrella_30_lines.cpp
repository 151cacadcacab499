// Compile-time benchmark (bench/compile/run.sh): a ~30-line program through the umbrella header
// (constants, matmul, a GradientTape gradient, reduce_mean, printing). Placeholder: the program
// body is still to be written.
#include <tapeflow/tapeflow.hpp>

int main() { return 0; }
