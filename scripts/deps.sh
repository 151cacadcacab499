# shellcheck shell=bash disable=SC2034
# Sourced by the scripts in this folder: tapeflow_require_packages <debian package>...
# Installs missing Debian packages when root (non-interactive); otherwise prints the exact
# `sudo apt-get install` line and exits 1.
TAPEFLOW_PACKAGES=(cmake ninja-build g++ git libeigen3-dev librange-v3-dev catch2 libbenchmark-dev
                   libjpeg62-turbo-dev libpng-dev zlib1g-dev clang-format-16 python3 doxygen
                   libhdf5-dev libzip-dev pkg-config
                   libopenmpi-dev openmpi-bin)
# scripts/test.sh's second compiler (preset clang): Clang 16, the oldest Clang the README names,
# on Debian's libstdc++ 12 (from g++).
TAPEFLOW_CLANG_PACKAGES=(clang-16)

tapeflow_require_packages() {
  local missing=() package
  for package in "$@"; do
    dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "Installing missing packages: ${missing[*]}"
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
  else
    echo "Missing Debian packages. Run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}
