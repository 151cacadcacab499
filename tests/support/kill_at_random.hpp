// Crash tests fork a child that writes in a loop and kill it with SIGKILL at a random moment,
// then check what it left on disk (tests/unit/reliability/crash.test.cpp,
// tests/unit/train/checkpoint.test.cpp).
#pragma once

#include <csignal>
#include <cstdlib>
#include <random>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

namespace tapeflow_test {

/// Forks `child` (which should never return), kills it with SIGKILL after a random 0-40 ms,
/// and reaps it.
template <class Child>
void kill_at_random(std::mt19937& rng, Child&& child) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    child();
    _exit(0);
  }
  usleep(static_cast<useconds_t>(std::uniform_int_distribution<int>(0, 40000)(rng)));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace tapeflow_test
