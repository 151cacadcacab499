// Fixture for the CTest `layering/include_graph_rejects_upward`: a data/ header that includes
// keras/, which tests/include_graph.txt forbids. Never compiled.
#pragma once

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/keras/model.hpp>
