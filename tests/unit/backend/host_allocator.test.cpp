// Host memory for tensors (backend/cpu/host_allocator.hpp): size classes, alignment, and the
// per-thread cache that recycles freed blocks.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/backend/cpu/host_allocator.hpp>

namespace test_backend_host_allocator {
namespace tf = tapeflow;
namespace host = tf::backend::cpu::host_memory;

TEST_CASE("requests round up to power-of-two classes from 128 B to 256 MiB", "[backend]") {
  CHECK(host::class_of(1) == 0);
  CHECK(host::class_of(128) == 0);
  CHECK(host::class_of(129) == 1);
  CHECK(host::class_bytes(host::class_of(129)) == 256);
  CHECK(host::class_bytes(host::class_of(4064)) == 4096);
  CHECK(host::class_bytes(host::class_of(std::size_t{256} << 20)) == (std::size_t{256} << 20));
  CHECK(host::class_of((std::size_t{256} << 20) + 1) == -1);  // past the largest: not cached
  CHECK(host::BlockCache::max_bytes() <= (std::size_t{4} << 30));
  CHECK(host::BlockCache::max_bytes() >= (std::size_t{64} << 20));
}

TEST_CASE("blocks are aligned and a freed block is reused by its class", "[backend]") {
  void* a = host::allocate(1000);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % host::alignment == 0);
  std::memset(a, 1, 1024);  // the whole class is usable
  host::deallocate(a, 1000);
  void* b = host::allocate(600);  // same class (1 KiB): this thread's cache hands it back
  CHECK(b == a);
  void* c = host::allocate(3000);  // another class: another block
  CHECK(c != b);
  host::deallocate(b, 600);
  host::deallocate(c, 3000);
  // Blocks too large to cache go straight back to the system, and are still aligned.
  std::size_t const big = (std::size_t{256} << 20) + 64;
  void* d = host::allocate(big);
  CHECK(reinterpret_cast<std::uintptr_t>(d) % host::alignment == 0);
  host::deallocate(d, big);
}

TEST_CASE("blocks from 8 MiB are aligned to huge pages, cached or not", "[backend]") {
  std::size_t const huge = std::size_t{2} << 20;
  for (std::size_t bytes : {std::size_t{9} << 20, (std::size_t{256} << 20) + 64}) {
    void* block = host::allocate(bytes);
    CHECK(reinterpret_cast<std::uintptr_t>(block) % huge == 0);
    std::memset(block, 1, bytes);
    host::deallocate(block, bytes);
  }
  void* small = host::allocate((std::size_t{8} << 20) - 1);  // the 8 MiB class: huge too
  CHECK(reinterpret_cast<std::uintptr_t>(small) % huge == 0);
  host::deallocate(small, (std::size_t{8} << 20) - 1);
  void* smaller = host::allocate(std::size_t{4} << 20);
  CHECK(reinterpret_cast<std::uintptr_t>(smaller) % host::alignment == 0);
  host::deallocate(smaller, std::size_t{4} << 20);
}

TEST_CASE("the cache is per thread and bounded", "[backend]") {
  void* mine = host::allocate(256);
  host::deallocate(mine, 256);
  void* theirs = nullptr;
  std::thread([&theirs] {
    theirs = host::allocate(256);  // another thread's cache is empty: a fresh block
    host::deallocate(theirs, 256);
  }).join();
  CHECK(theirs != mine);
  host::BlockCache cache;
  int const cls = host::class_of(128);
  int given = 0;
  while (given < 100) {
    void* block = host::allocate(128 << 10);  // a distinct class from the loop's frees
    if (!cache.give(cls, block)) {
      host::deallocate(block, 128 << 10);
      break;
    }
    ++given;
  }
  CHECK(given == 64);  // at most 64 blocks per class
  for (int i = 0; i < given; ++i) {
    void* block = cache.take(cls);
    REQUIRE(block != nullptr);
    host::deallocate(block, 128 << 10);
  }
  CHECK(cache.take(cls) == nullptr);
}

}  // namespace test_backend_host_allocator
