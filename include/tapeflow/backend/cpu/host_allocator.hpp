// Host memory for tensors: 64-byte-aligned blocks, recycled through a per-thread cache.
//
// Note [Buffer cache]: eager ops allocate an output per call, and for small and mid-size
// tensors the aligned allocation costs more than the arithmetic, and for large ones the kernel's
// fresh zeroed pages cost more than the arithmetic. Freed blocks of up to 256 MiB go to a
// per-thread cache by power-of-two size class and are reused by the next allocation of that
// class. The cache holds at most 4 GiB or a quarter of physical memory, whichever is less: a
// MobileNetV2 training step at batch 32 frees and reallocates more than 2 GiB each step, and
// with a 2 GiB bound it took a fresh page about 6,000 times a step and ran 12-14% slower, at
// the same peak resident memory (bench/RESULTS.md; TF's own allocator keeps everything it ever
// allocated). The cache holds raw memory, shared by every logical device whose memory is the
// host's; each device's accounting lives in its backend instance (backend/cpu/cpu_backend.hpp).
//
// Blocks of 8 MiB and more are aligned to 2 MiB and, on Linux, marked for transparent huge
// pages (madvise): a fresh 150 MB activation (MobileNetV2's at batch 32) then costs ~75 page
// faults instead of ~37,000, which took a fifth of that model's inference time.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu::host_memory {

inline constexpr std::size_t alignment = 64;  // cache line and AVX-512 loads
inline constexpr int min_class_log2 = 7;      // 128 B
inline constexpr int max_class_log2 = 28;     // 256 MiB

/// The size class of a `bytes` request, or -1 past the largest (not cached).
inline int class_of(std::size_t bytes) noexcept {
  int const log2 = std::max(min_class_log2, static_cast<int>(std::bit_width(bytes - 1)));
  return log2 > max_class_log2 || bytes == 0 ? (bytes == 0 ? 0 : -1) : log2 - min_class_log2;
}
inline std::size_t class_bytes(int size_class) noexcept {
  return std::size_t{1} << (size_class + min_class_log2);
}

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
inline constexpr std::size_t huge_block_bytes = std::size_t{8} << 20;  // huge pages from here

/// The bytes the block of a `bytes` request spans: its class's, or `bytes` past the classes.
inline std::size_t block_bytes(std::size_t bytes) noexcept {
  int const size_class = class_of(bytes);
  return size_class >= 0 ? class_bytes(size_class) : bytes;
}
/// The alignment of a block of `block` bytes (allocation and deallocation must agree).
inline std::align_val_t block_alignment(std::size_t block) noexcept {
  return std::align_val_t{block >= huge_block_bytes ? huge_page_bytes : alignment};
}

/// One thread's freed blocks by size class, bounded in bytes and in blocks per class.
class BlockCache {
 public:
  /// Bytes the cache holds at most: 4 GiB, or a quarter of physical memory if less.
  static std::size_t max_bytes() noexcept {
    static std::size_t const bound = [] {
      std::size_t const cap = std::size_t{4} << 30;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
      long const pages = ::sysconf(_SC_PHYS_PAGES);
      long const page = ::sysconf(_SC_PAGESIZE);
      if (pages > 0 && page > 0) {
        return std::min(cap, static_cast<std::size_t>(pages) / 4 * static_cast<std::size_t>(page));
      }
#endif
      return cap;
    }();
    return bound;
  }
  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache();
  /// A cached block of the class, or null.
  void* take(int size_class) noexcept {
    auto& list = free_[static_cast<std::size_t>(size_class)];
    if (list.empty()) {
      return nullptr;
    }
    void* block = list.back();
    list.pop_back();
    cached_ -= class_bytes(size_class);
    return block;
  }
  /// Keeps `block` for reuse; false when the cache is full (the caller frees it).
  bool give(int size_class, void* block) noexcept {
    const std::size_t bytes = class_bytes(size_class);
    auto& list = free_[static_cast<std::size_t>(size_class)];
    if (cached_ + bytes > max_bytes() || list.size() >= 64) {
      return false;
    }
    try {
      list.push_back(block);
    } catch (...) {
      return false;
    }
    cached_ += bytes;
    return true;
  }

 private:
  std::array<std::vector<void*>, max_class_log2 - min_class_log2 + 1> free_{};
  std::size_t cached_ = 0;
};

// Set when this thread's cache has been destroyed (thread exit): a tensor that outlives it (a
// static, destroyed after the main thread's thread_locals) then frees its block directly.
// A trivially destructible flag, so reading it after the cache's destruction is defined.
inline bool& cache_gone() noexcept {
  thread_local bool gone = false;
  return gone;
}
/// This thread's cache, or null once it has been destroyed.
inline BlockCache* block_cache() noexcept {
  if (cache_gone()) {
    return nullptr;
  }
  thread_local BlockCache cache;
  return &cache;
}

inline BlockCache::~BlockCache() {
  cache_gone() = true;
  for (std::size_t size_class = 0; size_class < free_.size(); ++size_class) {
    for (void* block : free_[size_class]) {
      ::operator delete(block, block_alignment(class_bytes(static_cast<int>(size_class))));
    }
  }
}

/// An aligned block of at least `bytes`; std::bad_alloc when the system has none.
inline void* allocate(std::size_t bytes) {
  const int size_class = class_of(bytes);
  BlockCache* cache = size_class >= 0 ? block_cache() : nullptr;
  void* raw = cache != nullptr ? cache->take(size_class) : nullptr;
  if (raw == nullptr) {
    const std::size_t block = block_bytes(bytes);
    raw = ::operator new(block, block_alignment(block));
#if defined(MADV_HUGEPAGE)
    if (block >= huge_block_bytes) {
      (void)::madvise(raw, block, MADV_HUGEPAGE);  // a hint: without huge pages, small ones
    }
#endif
  }
  return raw;
}

/// Frees a block `allocate(bytes)` returned.
inline void deallocate(void* block, std::size_t bytes) noexcept {
  const int size_class = class_of(bytes);
  BlockCache* cache = size_class >= 0 ? block_cache() : nullptr;
  if (cache == nullptr || !cache->give(size_class, block)) {
    ::operator delete(block, block_alignment(block_bytes(bytes)));
  }
}

}  // namespace backend::cpu::host_memory
TAPEFLOW_END_NAMESPACE
