// io (issue 6): (a) CRC-32C throughput, each kernel; (b) TFRecord read MB/s from the
// page cache with TFRecordReader and TFRecordDataset, against a plain sequential fread of the
// same file with the same buffer size (the *_vs_plain benchmarks time both passes in every
// iteration and report the ratio of their thread CPU times); (c) parse_single_example examples/s on
// the chapter's image+label Example and on a small numeric Example. Peer:
// bench/peers/tfrecord_tf.py (TensorFlow's TFRecordDataset and parse_single_example on the same
// files, written here to /tmp/tapeflow_bench_tfrecord/).
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/data/source/tfrecord_dataset.hpp>
#include <tapeflow/io.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

const fs::path dir = fs::temp_directory_path() / "tapeflow_bench_tfrecord";

// A 128 MiB file of `record_bytes`-sized random records (written once per process).
std::string records_file(std::size_t record_bytes) {
  fs::create_directories(dir);
  const auto path = (dir / ("records_" + std::to_string(record_bytes) + ".tfrecord")).string();
  if (!fs::exists(path)) {
    std::mt19937_64 rng(1);
    std::string rec(record_bytes, '\0');
    tf::io::TFRecordWriter w(path);
    for (std::size_t total = 0; total < (std::size_t{128} << 20); total += record_bytes) {
      for (auto& c : rec) {
        c = static_cast<char>(rng());
      }
      w.write(rec);
    }
  }
  return path;
}

void BM_crc32c(benchmark::State& state) {
  std::string buf(1 << 20, 'x');
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::io::crc32c(buf));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (1 << 20));
  using tf::detail::crc32c_impl::kernel;
  const kernel k = tf::detail::crc32c_impl::best_kernel();
  state.SetLabel(k == kernel::avx512     ? "avx512-vpclmulqdq"
                 : k == kernel::hardware ? "sse4.2"
                                         : "portable");
}
BENCHMARK(BM_crc32c);

// The SSE4.2 kernel (three interleaved crc32q streams), for comparison on AVX-512 CPUs.
void BM_crc32c_sse42(benchmark::State& state) {
  std::string buf(1 << 20, 'x');
  const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::detail::crc32c_impl::update_hardware(0xFFFFFFFFU, p, buf.size()));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (1 << 20));
}
BENCHMARK(BM_crc32c_sse42);

// Record-sized messages, one after another through a 256 KiB buffer (what the reader does with
// a buffer of small records): per-message setup and reduction dominate, not the 1 MiB speed.
void BM_crc32c_records(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::string buf(256 * 1024, 'x');
  std::mt19937 rng(5);
  for (auto& c : buf) {
    c = static_cast<char>(rng());
  }
  std::size_t messages = 0;
  for (auto _ : state) {
    std::uint32_t acc = 0;
    messages = 0;
    for (std::size_t off = 0; off + n + 16 <= buf.size(); off += n + 16, ++messages) {
      acc ^= tf::io::crc32c(buf.data() + off + 12, n);
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * messages * n));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * messages));
}
BENCHMARK(BM_crc32c_records)->Arg(100)->Arg(1000)->Arg(4000);

void BM_crc32c_portable(benchmark::State& state) {
  std::string buf(1 << 20, 'x');
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::detail::crc32c_impl::update_portable(
        0xFFFFFFFFU, reinterpret_cast<const unsigned char*>(buf.data()), buf.size()));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (1 << 20));
}
BENCHMARK(BM_crc32c_portable);

void BM_plain_read(benchmark::State& state) {
  const auto path = records_file(static_cast<std::size_t>(state.range(0)));
  std::vector<char> buf(256 * 1024);
  for (auto _ : state) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    std::setvbuf(f, nullptr, _IONBF, 0);
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
      benchmark::DoNotOptimize(buf.data());
    }
    std::fclose(f);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(fs::file_size(path)));
}
BENCHMARK(BM_plain_read)->Arg(100000)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_tfrecord_reader(benchmark::State& state) {
  const auto path = records_file(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    tf::io::TFRecordReader reader(path);
    std::string record;
    while (reader.read(record)) {
      benchmark::DoNotOptimize(record.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(fs::file_size(path)));
}
BENCHMARK(BM_tfrecord_reader)->Arg(100000)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_tfrecord_reader_view(benchmark::State& state) {
  const auto path = records_file(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    tf::io::TFRecordReader reader(path);
    std::string_view record;
    while (reader.read_view(record)) {
      benchmark::DoNotOptimize(record.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(fs::file_size(path)));
}
BENCHMARK(BM_tfrecord_reader_view)
    ->Arg(100000)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_tfrecord_dataset(benchmark::State& state) {
  const auto path = records_file(static_cast<std::size_t>(state.range(0)));
  tf::data::TFRecordDataset ds(path);
  for (auto _ : state) {
    for (const auto& t : ds) {
      benchmark::DoNotOptimize(t.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(fs::file_size(path)));
}
BENCHMARK(BM_tfrecord_dataset)
    ->Arg(100000)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same comparison with both passes in every iteration, so a change in the machine's load
// hits both alike: counters give each pass's thread CPU time and reader speed as a percentage
// of the plain read's (the aim: >= 80).
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}
double plain_read_pass(const std::string& path, std::vector<char>& buf) {
  const double t0 = thread_cpu_ms();
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::setvbuf(f, nullptr, _IONBF, 0);
  while (std::fread(buf.data(), 1, buf.size(), f) > 0) {
    benchmark::DoNotOptimize(buf.data());
  }
  std::fclose(f);
  return thread_cpu_ms() - t0;
}
template <class Pass>
void paired(benchmark::State& state, Pass pass) {
  const auto path = records_file(static_cast<std::size_t>(state.range(0)));
  std::vector<char> buf(256 * 1024);
  double plain = 0;
  double ours = 0;
  for (auto _ : state) {
    plain += plain_read_pass(path, buf);
    const double t0 = thread_cpu_ms();
    pass(path);
    ours += thread_cpu_ms() - t0;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["plain_cpu_ms"] = plain / n;
  state.counters["cpu_ms"] = ours / n;
  state.counters["pct_of_plain"] = 100 * plain / ours;
}
void BM_tfrecord_reader_vs_plain(benchmark::State& state) {
  paired(state, [](const std::string& path) {
    tf::io::TFRecordReader reader(path);
    std::string record;
    while (reader.read(record)) {
      benchmark::DoNotOptimize(record.data());
    }
  });
}
BENCHMARK(BM_tfrecord_reader_vs_plain)->Arg(100000)->Arg(1000)->Unit(benchmark::kMillisecond);
// Zero-copy: records viewed in the read buffer, CRC checked in place.
void BM_tfrecord_reader_view_vs_plain(benchmark::State& state) {
  paired(state, [](const std::string& path) {
    tf::io::TFRecordReader reader(path);
    std::string_view record;
    while (reader.read_view(record)) {
      benchmark::DoNotOptimize(record.data());
    }
  });
}
BENCHMARK(BM_tfrecord_reader_view_vs_plain)->Arg(100000)->Arg(1000)->Unit(benchmark::kMillisecond);
void BM_tfrecord_dataset_vs_plain(benchmark::State& state) {
  paired(state, [](const std::string& path) {
    for (const auto& t : tf::data::TFRecordDataset(path)) {
      benchmark::DoNotOptimize(t.data());
    }
  });
}
BENCHMARK(BM_tfrecord_dataset_vs_plain)->Arg(100000)->Arg(1000)->Unit(benchmark::kMillisecond);

// The chapter's Example: a 20 KB "JPEG" and a label.
std::string chapter_example() {
  return tf::train::Example({{"image", tf::io::bytes_feature(std::string(20000, 'j'))},
                             {"label", tf::io::int64_feature(1)}})
      .serialize();
}
std::string numeric_example() {
  return tf::train::Example({{"x", tf::io::float_feature(std::vector<float>(16, 0.5f))},
                             {"id", tf::io::int64_feature(123456789)},
                             {"name", tf::io::bytes_feature("sample")},
                             {"tags", tf::io::int64_feature({1, 2, 3, 4})}})
      .serialize();
}

void BM_parse_single_example_chapter(benchmark::State& state) {
  const std::string bytes = chapter_example();
  const tf::io::FeatureDescription description{
      {"image", tf::io::FixedLenFeature<std::string>{}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
  };
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::io::parse_single_example(bytes, description));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_parse_single_example_chapter);

void BM_parse_single_example_numeric(benchmark::State& state) {
  const std::string bytes = numeric_example();
  const tf::io::FeatureDescription description{
      {"x", tf::io::FixedLenFeature<float>{{16}}},
      {"id", tf::io::FixedLenFeature<std::int64_t>{}},
      {"name", tf::io::FixedLenFeature<std::string>{}},
      {"tags", tf::io::VarLenFeature<std::int64_t>{}},
  };
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::io::parse_single_example(bytes, description));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_parse_single_example_numeric);

void BM_example_serialize_chapter(benchmark::State& state) {
  const tf::train::Example ex({{"image", tf::io::bytes_feature(std::string(20000, 'j'))},
                               {"label", tf::io::int64_feature(1)}});
  for (auto _ : state) {
    benchmark::DoNotOptimize(ex.serialize());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_example_serialize_chapter);

}  // namespace

BENCHMARK_MAIN();
