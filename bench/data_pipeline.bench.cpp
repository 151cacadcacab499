// tf::data benchmarks (issue 5). Peer: bench/peers/tf_data.py runs the same pipelines in tf.data.
//   MnistPipeline      the chapter's pipeline: from_tensor_slices(60000 28x28x1 uint8 + labels)
//                      | map(rot90, num_parallel_calls=2) | shuffle(10000) | batch(32)
//                      | prefetch(autotune); items = elements (images) per second
//   CpuHeavyMap/N      map doing ~100 us of arithmetic per element, num_parallel_calls = N
//   PrefetchOverlap/P  producer and consumer each busy 1 ms per element; P = 0 without
//                      prefetch, 1 with prefetch(autotune): time ~ max (1 ms), not sum (2 ms)
//   JpegDecodeResize/N decode_jpeg + resize to 256x256 of 500x375 JPEGs, num_parallel_calls = N
//   RangeFor           range-for over range(1 << 20) | take(-1) (scalar int64 elements): per
//                      element little but the iterator itself, the cost ranges-style iteration
//                      adds; items = elements per second
//   RangeV3Enumerate   the same through range-v3's views::enumerate (iterator copies inside zip)
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>
#include <range/v3/view/enumerate.hpp>

#include <tapeflow/data.hpp>
#include <tapeflow/image.hpp>

namespace tf = tapeflow;

namespace {
tf::Tensor<std::uint8_t, 4> mnist_like_images() {
  static const auto images = [] {
    auto t = tf::Tensor<std::uint8_t, 4>::uninitialized({60000, 28, 28, 1});
    auto* p = tf::detail::tensor_access::mutable_data(t);
    for (std::int64_t i = 0; i < t.num_elements(); ++i) {
      p[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
    }
    return t;
  }();
  return images;
}
tf::Tensor<std::int32_t, 1> mnist_like_labels() {
  auto t = tf::Tensor<std::int32_t, 1>::uninitialized({60000});
  for (std::int64_t i = 0; i < 60000; ++i) {
    tf::detail::tensor_access::mutable_data(t)[i] = static_cast<std::int32_t>(i % 10);
  }
  return t;
}

void MnistPipeline(benchmark::State& state) {
  auto images = mnist_like_images();
  auto labels = mnist_like_labels();
  auto rot90 = [](const tf::Tensor<std::uint8_t, 3>& x, const tf::Tensor<std::int32_t, 0>& y) {
    return std::tuple{tf::image::rot90(x), y};
  };
  auto ds = tf::data::from_tensor_slices(images, labels) |
            tf::data::map(rot90, {.num_parallel_calls = 2}) | tf::data::shuffle(10000) |
            tf::data::batch(32) | tf::data::prefetch(tf::data::autotune);
  std::int64_t n = 0;
  for (auto _ : state) {
    for (auto&& [x, y] : ds) {
      benchmark::DoNotOptimize(x.data());
      n += x.dim(0);
    }
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(MnistPipeline)->Unit(benchmark::kMillisecond)->UseRealTime();

tf::Tensor<float, 0> busy(const tf::Tensor<std::int64_t, 0>& x) {
  // ~100 us of dependent floating-point work
  float v = static_cast<float>(x.item());
  for (int i = 0; i < 25000; ++i) {
    v = std::sqrt(v * v + 1.0f) * 0.999f;
  }
  return {v};
}
void CpuHeavyMap(benchmark::State& state) {
  auto ds = tf::data::range(400) |
            tf::data::map(busy, {.num_parallel_calls = static_cast<int>(state.range(0))});
  std::int64_t n = 0;
  for (auto _ : state) {
    for (auto&& v : ds) {
      benchmark::DoNotOptimize(v.item());
      ++n;
    }
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(CpuHeavyMap)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}
void PrefetchOverlap(benchmark::State& state) {
  auto produce = [](const tf::Tensor<std::int64_t, 0>& x) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // e.g. reading a file
    return x;
  };
  auto base = tf::data::range(100) | tf::data::map(produce);
  for (auto _ : state) {
    if (state.range(0) == 0) {
      for (auto&& v : base) {
        benchmark::DoNotOptimize(v.item());
        spin_for(std::chrono::milliseconds(1));  // the training step
      }
    } else {
      for (auto&& v : base | tf::data::prefetch(tf::data::autotune)) {
        benchmark::DoNotOptimize(v.item());
        spin_for(std::chrono::milliseconds(1));
      }
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 100);
}
BENCHMARK(PrefetchOverlap)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

std::vector<std::string> jpegs() {
  static const auto files = [] {
    std::vector<std::string> out;
    for (int k = 0; k < 8; ++k) {
      auto img = tf::Tensor<std::uint8_t, 3>::uninitialized({375, 500, 3});
      auto* p = tf::detail::tensor_access::mutable_data(img);
      for (std::int64_t i = 0; i < 375; ++i) {
        for (std::int64_t j = 0; j < 500; ++j) {
          for (int c = 0; c < 3; ++c) {
            *p++ = static_cast<std::uint8_t>(
                128 + 100 * std::sin(0.05 * (i + k) + 0.03 * j * (c + 1)) + ((i * j * 7 + c) % 17));
          }
        }
      }
      out.push_back(tf::image::encode_jpeg(img, {.quality = 90}).item());
    }
    return out;
  }();
  return files;
}
void JpegDecodeResize(benchmark::State& state) {
  std::vector<std::string> bytes;
  for (int r = 0; r < 8; ++r) {
    for (const auto& j : jpegs()) {
      bytes.push_back(j);
    }
  }
  auto t = tf::Tensor<std::string, 1>::uninitialized({static_cast<std::int64_t>(bytes.size())});
  std::copy(bytes.begin(), bytes.end(), tf::detail::tensor_access::mutable_data(t));
  auto decode = [](const tf::Tensor<std::string, 0>& b) {
    return tf::image::resize(tf::image::decode_jpeg(b), {256, 256});
  };
  auto ds = tf::data::from_tensor_slices(t) |
            tf::data::map(decode, {.num_parallel_calls = static_cast<int>(state.range(0))});
  std::int64_t n = 0;
  for (auto _ : state) {
    for (auto&& img : ds) {
      benchmark::DoNotOptimize(img.data());
      ++n;
    }
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(JpegDecodeResize)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
void RangeFor(benchmark::State& state) {
  auto ds = tf::data::range(1 << 20) | tf::data::take(-1);
  std::int64_t n = 0;
  for (auto _ : state) {
    for (auto&& v : ds) {
      benchmark::DoNotOptimize(v.data());
      ++n;
    }
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(RangeFor)->Unit(benchmark::kMillisecond)->UseRealTime();

void RangeV3Enumerate(benchmark::State& state) {
  auto ds = tf::data::range(1 << 20) | tf::data::take(-1);
  std::int64_t n = 0;
  for (auto _ : state) {
    for (auto&& [i, v] : ds | ranges::views::enumerate) {
      benchmark::DoNotOptimize(v.data());
      n += static_cast<std::int64_t>(i & 1);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) << 20);
  benchmark::DoNotOptimize(n);
}
BENCHMARK(RangeV3Enumerate)->Unit(benchmark::kMillisecond)->UseRealTime();
}  // namespace

BENCHMARK_MAIN();
