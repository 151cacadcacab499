// tapeflow version. Keep in sync with project(tapeflow VERSION ...) in CMakeLists.txt: CMake
// checks at configure time that the two agree.
#ifndef TAPEFLOW_VERSION_HPP
#define TAPEFLOW_VERSION_HPP

#define TAPEFLOW_VERSION_MAJOR 0
#define TAPEFLOW_VERSION_MINOR 1
#define TAPEFLOW_VERSION_PATCH 0
#define TAPEFLOW_VERSION "0.1.0"

/// The version as one comparable number: major * 10000 + minor * 100 + patch.
#define TAPEFLOW_VERSION_NUMBER \
  (TAPEFLOW_VERSION_MAJOR * 10000 + TAPEFLOW_VERSION_MINOR * 100 + TAPEFLOW_VERSION_PATCH)

#endif  // TAPEFLOW_VERSION_HPP
