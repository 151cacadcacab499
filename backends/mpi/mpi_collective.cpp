// tapeflow::mpi: the Collective of worker processes over MPI (distribute/mpi_collective.hpp).
//
// Every operation starts with a rendezvous: a small nonblocking collective (the workers'
// agreement on what they pass) completed by `wait`, which polls it against the deadline and,
// between polls, answers the control messages of a second communicator: pings (a peer that
// timed out asks who is alive) and aborts (a peer failed). A dead or hung worker never arrives,
// so this is where it is found. The payload then moves with MPI's blocking collective, which
// is much faster than its nonblocking form (OpenMPI's libnbc: 233 against 143 us for 1 MiB,
// bench/RESULTS.md); every worker is known to be inside it. A worker that dies within that
// window would leave the others blocked in MPI: a watchdog thread then ends this process with a
// message naming the operation, so nothing hangs. Buffers of an operation that never completed
// are kept until exit, since MPI may still write into them.
#define OMPI_SKIP_MPICXX 1  // the C API only: no C++ bindings to compile or link
#define MPICH_SKIP_MPICXX 1
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <mpi.h>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/distribute/detail/collective_tensors.hpp>
#include <tapeflow/distribute/mpi_collective.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int ping_tag = 1;
constexpr int pong_tag = 2;
constexpr int abort_tag = 3;
// How long a worker that timed out waits for its peers to answer its ping.
constexpr auto ping_patience = std::chrono::seconds(2);
// Elements per MPI call: counts are C ints.
constexpr std::int64_t max_chunk = std::int64_t{1} << 30;
// A tensor of at least this many bytes is all-reduced on its own, without packing.
constexpr std::int64_t alone_bytes = std::int64_t{1} << 20;

// MPI's lifetime in this process: initialized by the first collective (unless the program
// did), finalized at exit unless an operation failed.
struct Runtime {
  bool initialized_here = false;
  std::atomic<bool> failed{false};
  Runtime() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized != 0) {
      return;
    }
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      throw unavailable("MPI_Init_thread failed: no MPI runtime (launch with mpirun)");
    }
    initialized_here = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      throw failed_precondition(
          "MPI: the library provides thread level " + std::to_string(provided) +
          "; tapeflow calls MPI from any one thread at a time (MPI_THREAD_SERIALIZED)");
    }
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // After a failure a dead peer would make MPI_Finalize wait forever.
    if (initialized_here && finalized == 0 && !failed.load()) {
      MPI_Finalize();
    }
  }
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

std::string mpi_error(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(code, text.data(), &length);
  return std::string(text.data(), static_cast<std::size_t>(std::max(length, 0)));
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
    case DType::int32:
      return MPI_INT32_T;
    case DType::int64:
      return MPI_INT64_T;
    case DType::uint8:
    case DType::bool_:
      return MPI_UINT8_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

std::size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::float64:
    case DType::int64:
      return 8;
    case DType::uint8:
    case DType::bool_:
      return 1;
    default:
      return 0;
  }
}

std::string describe(std::span<const AnyTensor> tensors) {
  std::string out;
  for (const auto& t : tensors) {
    out += (out.empty() ? "" : ", ") + std::string(dtype_name(t.dtype())) + t.shape().to_string();
  }
  return "[" + out + "]";
}

template <class T>
void divide(void* data, std::int64_t n, int workers) {
  auto* x = static_cast<T*>(data);
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<T>(x[i] / static_cast<T>(workers));
  }
}

// Ends the process when a blocking MPI call outlives its deadline (see the file comment).
// Arming and disarming are two atomic stores, so the fast path never wakes the thread, which
// looks every 100 ms.
class Watchdog {
 public:
  Watchdog() : thread_([this] { watch(); }) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  // `what` must outlive the call (a literal).
  void arm(const char* what, int rank, Clock::time_point deadline) {
    what_.store(what, std::memory_order_relaxed);
    rank_.store(rank, std::memory_order_relaxed);
    deadline_.store(deadline.time_since_epoch().count(), std::memory_order_release);
  }
  void disarm() { deadline_.store(0, std::memory_order_release); }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      const auto deadline = deadline_.load(std::memory_order_acquire);
      if (deadline != 0 && Clock::now().time_since_epoch().count() > deadline) {
        std::fprintf(stderr,
                     "tapeflow: MPI %s on worker %d is still blocked in MPI past its timeout, "
                     "after every worker had joined it: a worker died inside the collective. "
                     "Ending this process (MPI cannot cancel a blocking collective).\n",
                     what_.load(std::memory_order_relaxed), rank_.load(std::memory_order_relaxed));
        std::fflush(stderr);
        std::_Exit(70);
      }
    }
  }

  std::atomic<Clock::rep> deadline_{0};  // 0: disarmed
  std::atomic<const char*> what_{""};
  std::atomic<int> rank_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::jthread thread_;  // last: joined before the members it reads go
};

}  // namespace

struct MpiCollective::Impl {
  MpiOptions options;
  MPI_Comm data = MPI_COMM_NULL;     // the collectives
  MPI_Comm control = MPI_COMM_NULL;  // pings and aborts
  int rank = 0;
  int size = 1;
  std::mutex mutex;                               // calls on one handle do not overlap
  std::string broken;                             // once set, every call throws unavailable with it
  std::vector<std::vector<std::byte>> graveyard;  // buffers of operations that never completed
  std::vector<std::byte> receive;
  std::string abort_message;
  int ping_payload = 0;
  int pong_payload = 0;
  Watchdog watchdog;

  explicit Impl(MpiOptions o) : options(o) {
    (void)runtime();
    MPI_Comm_dup(MPI_COMM_WORLD, &data);
    MPI_Comm_dup(MPI_COMM_WORLD, &control);
    MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
    MPI_Comm_rank(data, &rank);
    MPI_Comm_size(data, &size);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0 && broken.empty()) {
      MPI_Comm_free(&data);
      MPI_Comm_free(&control);
    }
  }

  void require_usable(const char* what) const {
    if (!broken.empty()) {
      throw unavailable(std::string("MPI ") + what + ": the workers' group is broken: " + broken);
    }
  }

  // Marks the group broken, keeping the buffers MPI may still write, and throws `E`.
  template <class E>
  [[noreturn]] void fail(std::string message) {
    broken = message;
    runtime().failed = true;
    graveyard.push_back(std::move(receive));
    receive.clear();
    throw E(message);
  }

  // Answers pings; throws `unavailable` when a peer aborted.
  void serve_control(const char* what) {
    for (;;) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, control, &flag, &status);
      if (flag == 0) {
        return;
      }
      if (status.MPI_TAG == ping_tag) {
        MPI_Recv(&ping_payload, 1, MPI_INT, status.MPI_SOURCE, ping_tag, control,
                 MPI_STATUS_IGNORE);
        MPI_Request reply = MPI_REQUEST_NULL;
        MPI_Isend(&pong_payload, 1, MPI_INT, status.MPI_SOURCE, pong_tag, control, &reply);
        MPI_Request_free(&reply);
      } else if (status.MPI_TAG == abort_tag) {
        int length = 0;
        MPI_Get_count(&status, MPI_CHAR, &length);
        std::string why(static_cast<std::size_t>(std::max(length, 0)), '\0');
        MPI_Recv(why.data(), length, MPI_CHAR, status.MPI_SOURCE, abort_tag, control,
                 MPI_STATUS_IGNORE);
        fail<unavailable>(std::string("MPI ") + what + " on worker " + std::to_string(rank) +
                          ": worker " + std::to_string(status.MPI_SOURCE) + " failed: " + why);
      } else {
        // A stray pong from an earlier round: drop it.
        MPI_Recv(&ping_payload, 1, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, control,
                 MPI_STATUS_IGNORE);
      }
    }
  }

  // The peers that answer a ping within ping_patience; the others are dead or hung.
  std::vector<int> silent_peers() {
    std::vector<MPI_Request> pongs(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
    std::vector<int> answers(static_cast<std::size_t>(size), 0);
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) {
        continue;
      }
      MPI_Irecv(&answers[std::size_t(peer)], 1, MPI_INT, peer, pong_tag, control,
                &pongs[std::size_t(peer)]);
      MPI_Request ping = MPI_REQUEST_NULL;
      MPI_Isend(&ping_payload, 1, MPI_INT, peer, ping_tag, control, &ping);
      MPI_Request_free(&ping);
    }
    const auto until = Clock::now() + std::min<Clock::duration>(ping_patience, options.timeout);
    std::vector<int> silent;
    while (Clock::now() < until) {
      bool all = true;
      for (auto& p : pongs) {
        int done = 1;
        if (p != MPI_REQUEST_NULL) {
          MPI_Test(&p, &done, MPI_STATUS_IGNORE);
        }
        all = all && done != 0;
      }
      if (all) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int peer = 0; peer < size; ++peer) {
      auto& p = pongs[std::size_t(peer)];
      if (p != MPI_REQUEST_NULL) {
        silent.push_back(peer);
        MPI_Cancel(&p);
        MPI_Request_free(&p);
      }
    }
    graveyard.emplace_back(sizeof(int) * answers.size());  // cancelled receives' targets
    std::memcpy(graveyard.back().data(), answers.data(), graveyard.back().size());
    return silent;
  }

  // Tells every peer (a hung one may wake up later) that this worker stopped, and why.
  void send_abort(const std::string& why) {
    abort_message = why;
    std::vector<MPI_Request> sends;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) {
        continue;
      }
      sends.emplace_back();
      MPI_Isend(abort_message.data(), static_cast<int>(abort_message.size()), MPI_CHAR, peer,
                abort_tag, control, &sends.back());
    }
    // Give the messages a moment to leave before this process may exit; a dead peer's never do.
    const auto until = Clock::now() + std::chrono::milliseconds(500);
    int done = 0;
    while (done == 0 && Clock::now() < until) {
      MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
      if (done == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    for (auto& s : sends) {
      if (s != MPI_REQUEST_NULL) {
        MPI_Request_free(&s);
      }
    }
  }

  // Completes `request` or throws: deadline_exceeded past the timeout (naming the silent
  // workers), unavailable when MPI reports an error or a peer aborted.
  void wait(MPI_Request& request, const char* what) {
    const auto start = Clock::now();
    const auto deadline = start + options.timeout;
    for (std::uint64_t polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        give_up<unavailable>(what, "failed (" + mpi_error(rc) + ")");
      }
      if (done != 0) {
        return;
      }
      if (polls % 64 == 0) {
        serve_control(what);
        const auto now = Clock::now();
        if (now > deadline) {
          give_up<deadline_exceeded>(
              what, "did not complete within " + std::to_string(options.timeout.count()) + " ms");
        }
        // Spin while the others are likely close; then let the CPU go to them.
        if (now - start > std::chrono::microseconds(200)) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
      }
    }
  }

  // The operation cannot complete: names the peers that no longer answer, tells the others,
  // breaks the group and throws `E`.
  template <class E>
  [[noreturn]] void give_up(const char* what, const std::string& reason) {
    const std::vector<int> silent = silent_peers();
    std::string names;
    for (const int peer : silent) {
      names += (names.empty() ? "" : ", ") + std::to_string(peer);
    }
    const std::string why =
        std::string("MPI ") + what + " on worker " + std::to_string(rank) + " of " +
        std::to_string(size) + " " + reason + ": " +
        (silent.empty() ? std::string("every worker answers, but not all joined the operation")
                        : "worker" + std::string(silent.size() > 1 ? "s " : " ") + names +
                              " did not respond (dead or hung)");
    send_abort(why);
    fail<E>(why);
  }

  // Every worker's `value`, in rank order.
  std::vector<std::int64_t> gather_values(std::int64_t value, const char* what) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(size));
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, data, &request);
    wait(request, what);
    return all;
  }

  // Throws invalid_argument on every worker unless all passed tensors of the same signature.
  void agree(std::span<const AnyTensor> tensors, std::int64_t extra, const char* what) {
    const std::int64_t mine = detail::signature(tensors, extra);
    std::array<std::int64_t, 2> bounds = {mine, -mine};
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallreduce(MPI_IN_PLACE, bounds.data(), 2, MPI_INT64_T, MPI_MAX, data, &request);
    wait(request, what);
    if (bounds[0] == -bounds[1]) {
      return;
    }
    const auto all = gather_values(mine, what);  // only on the error path: name the workers
    std::string differ;
    for (int r = 0; r < size; ++r) {
      if (all[std::size_t(r)] != all[0]) {
        differ += (differ.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    throw invalid_argument(std::string("MPI ") + what + ": workers " + differ +
                           " passed tensors that differ from worker 0's in count, dtype or "
                           "shape (worker " +
                           std::to_string(rank) + " passed " + describe(tensors) + ")");
  }

  void check_values(std::span<const AnyTensor> tensors, const char* what) const {
    for (const auto& t : tensors) {
      if (!t.has_value() || mpi_type(t.dtype()) == MPI_DATATYPE_NULL) {
        throw invalid_argument(std::string("MPI ") + what + ": cannot send " +
                               (t.has_value() ? std::string(dtype_name(t.dtype())) + " tensors"
                                              : std::string("a tensor that holds no value")) +
                               " (float32, float64, int32, int64, uint8, bool)");
      }
    }
  }

  // A blocking MPI call, once every worker is known to have joined the operation: an error
  // is `unavailable`; the watchdog bounds how long it may block.
  template <class Call>
  void blocking(const char* what, Call&& call) {
    watchdog.arm(what, rank, Clock::now() + options.timeout);
    const int rc = call();
    watchdog.disarm();
    if (rc != MPI_SUCCESS) {
      give_up<unavailable>(what, "failed (" + mpi_error(rc) + ")");
    }
  }

  // One blocking MPI call per chunk of at most max_chunk elements.
  template <class Call>
  void chunked(std::int64_t elements, std::size_t bytes_each, const char* what, Call&& call) {
    for (std::int64_t first = 0; first < elements || first == 0; first += max_chunk) {
      const auto count = static_cast<int>(std::min(max_chunk, elements - first));
      blocking(what, [&] { return call(static_cast<std::size_t>(first) * bytes_each, count); });
      if (elements == 0) {
        break;
      }
    }
  }

  // MPI_SUM over `elements` of `dtype` at `bytes`, in place.
  void reduce_in_place(void* bytes, std::int64_t elements, DType dtype) {
    chunked(elements, element_size(dtype), "all_reduce", [&](std::size_t offset, int count) {
      return MPI_Allreduce(MPI_IN_PLACE, static_cast<std::byte*>(bytes) + offset, count,
                           mpi_type(dtype), MPI_SUM, data);
    });
  }

  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) {
    const std::lock_guard lock(mutex);
    require_usable("all_reduce");
    const bool valid = std::ranges::all_of(tensors, [](const AnyTensor& t) {
      return t.has_value() && mpi_type(t.dtype()) != MPI_DATATYPE_NULL;
    });
    // An unusable tensor still takes part in the agreement, so every worker fails together.
    agree(tensors, valid ? 0 : -1, "all_reduce");
    check_values(tensors, "all_reduce");
    // Tensors of one dtype travel together, packed in call order.
    std::vector<bool> done(tensors.size(), false);
    for (std::size_t first = 0; first < tensors.size(); ++first) {
      if (done[first]) {
        continue;
      }
      const DType dtype = tensors[first].dtype();
      const std::size_t each = element_size(dtype);
      if (dtype == DType::bool_ || dtype == DType::uint8) {
        throw invalid_argument("MPI all_reduce: " + std::string(dtype_name(dtype)) +
                               " tensors cannot be reduced (float32, float64, int32, int64)");
      }
      std::vector<std::size_t> group;
      for (std::size_t i = first; i < tensors.size(); ++i) {
        if (!done[i] && tensors[i].dtype() == dtype) {
          group.push_back(i);
          done[i] = true;
        }
      }
      // A large tensor goes alone, reduced in place in the caller's handle: in its own buffer
      // when no other handle shares it (a fresh gradient handed over), else in a copy. That is
      // at most one copy of its bytes where packing made two (into the pack and out of it):
      // 2-3 ms of the MNIST CNN's 13 MiB step (bench/RESULTS.md). The small ones share one
      // packed buffer. After a failure the handles passed hold unspecified values.
      std::vector<std::size_t> packed;
      std::int64_t packed_elements = 0;
      for (const std::size_t i : group) {
        const std::int64_t n = tensors[i].num_elements();
        if (n * std::int64_t(each) >= alone_bytes) {
          reduce_in_place(tensors[i].unshared_raw_data(), n, dtype);
        } else {
          packed.push_back(i);
          packed_elements += n;
        }
      }
      if (!packed.empty()) {
        receive.resize(static_cast<std::size_t>(packed_elements) * each);
        std::size_t offset = 0;
        for (const std::size_t i : packed) {
          const auto bytes = static_cast<std::size_t>(tensors[i].num_elements()) * each;
          if (bytes != 0) {
            std::memcpy(receive.data() + offset, tensors[i].raw_data(), bytes);
          }
          offset += bytes;
        }
        reduce_in_place(receive.data(), packed_elements, dtype);
        offset = 0;
        for (const std::size_t i : packed) {
          AnyTensor result = AnyTensor::uninitialized(dtype, tensors[i].shape());
          const auto bytes = static_cast<std::size_t>(result.num_elements()) * each;
          if (bytes != 0) {
            std::memcpy(result.mutable_raw_data(), receive.data() + offset, bytes);
          }
          offset += bytes;
          tensors[i] = std::move(result);
        }
      }
      if (op == ReduceOp::mean) {
        for (const std::size_t i : group) {
          visit_dtype(dtype, [&]<class T>() {
            if constexpr (std::is_arithmetic_v<T>) {
              divide<T>(tensors[i].mutable_raw_data(), tensors[i].num_elements(), size);
            }
          });
        }
      }
    }
  }

  void broadcast(std::span<AnyTensor> tensors, int root) {
    const std::lock_guard lock(mutex);
    require_usable("broadcast");
    if (root < 0 || root >= size) {
      throw invalid_argument("MPI broadcast: root " + std::to_string(root) + " is not a worker (" +
                             std::to_string(size) + " workers)");
    }
    const bool valid = std::ranges::all_of(tensors, [](const AnyTensor& t) {
      return t.has_value() && mpi_type(t.dtype()) != MPI_DATATYPE_NULL;
    });
    agree(tensors, valid ? root : -1, "broadcast");
    check_values(tensors, "broadcast");
    for (auto& t : tensors) {
      const std::size_t each = element_size(t.dtype());
      AnyTensor out = rank == root ? t : AnyTensor::uninitialized(t.dtype(), t.shape());
      // The root sends from its own tensor, which the operation leaves as it is.
      void* bytes = rank == root ? const_cast<void*>(t.raw_data()) : out.mutable_raw_data();
      chunked(t.num_elements(), each, "broadcast", [&](std::size_t offset, int count) {
        return MPI_Bcast(static_cast<std::byte*>(bytes) + offset, count, mpi_type(t.dtype()), root,
                         data);
      });
      t = std::move(out);
    }
  }

  std::vector<AnyTensor> all_gather(const AnyTensor& t) {
    const std::lock_guard lock(mutex);
    require_usable("all_gather");
    // Header: dtype (or -1 for a tensor that cannot be sent), rank, dims.
    constexpr std::size_t header_size = 2 + max_rank;
    std::array<std::int64_t, header_size> header{};
    const bool valid = t.has_value() && mpi_type(t.dtype()) != MPI_DATATYPE_NULL;
    header[0] = valid ? static_cast<std::int64_t>(t.dtype()) : -1;
    header[1] = static_cast<std::int64_t>(t.rank());
    for (std::size_t i = 0; i < t.rank(); ++i) {
      header[2 + i] = t.shape()[i];
    }
    std::vector<std::int64_t> headers(header_size * static_cast<std::size_t>(size));
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallgather(header.data(), static_cast<int>(header_size), MPI_INT64_T, headers.data(),
                   static_cast<int>(header_size), MPI_INT64_T, data, &request);
    wait(request, "all_gather");
    std::vector<AnyTensor> out;
    std::vector<int> counts;
    std::vector<int> offsets;
    std::int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      const std::int64_t* h = headers.data() + header_size * static_cast<std::size_t>(r);
      if (h[0] < 0 || h[0] != headers[0] || h[1] != headers[1]) {
        throw invalid_argument(
            "MPI all_gather: worker " + std::to_string(r) +
            (h[0] < 0 ? std::string(" passed a tensor that cannot be sent")
                      : " passed a tensor of another dtype or rank than worker 0's") +
            " (worker " + std::to_string(rank) + " passed " + describe({&t, 1}) + ")");
      }
      std::vector<std::int64_t> dims(h + 2, h + 2 + h[1]);
      out.push_back(AnyTensor::uninitialized(t.dtype(), Shape(dims)));
      const auto bytes = out.back().num_elements() * std::int64_t(element_size(t.dtype()));
      if (total + bytes > std::numeric_limits<int>::max()) {
        throw invalid_argument("MPI all_gather: " + std::to_string(total + bytes) +
                               " bytes in all; at most 2 GiB can be gathered in one call");
      }
      counts.push_back(static_cast<int>(bytes));
      offsets.push_back(static_cast<int>(total));
      total += bytes;
    }
    receive.resize(static_cast<std::size_t>(total));
    blocking("all_gather", [&] {
      return MPI_Allgatherv(t.raw_data(), counts[std::size_t(rank)], MPI_BYTE, receive.data(),
                            counts.data(), offsets.data(), MPI_BYTE, data);
    });
    for (int r = 0; r < size; ++r) {
      if (counts[std::size_t(r)] > 0) {
        std::memcpy(out[std::size_t(r)].mutable_raw_data(),
                    receive.data() + offsets[std::size_t(r)],
                    static_cast<std::size_t>(counts[std::size_t(r)]));
      }
    }
    return out;
  }

  void barrier() {
    const std::lock_guard lock(mutex);
    require_usable("barrier");
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibarrier(data, &request);
    wait(request, "barrier");
  }

  void abort(const std::string& why) {
    const std::lock_guard lock(mutex);
    if (!broken.empty()) {
      return;  // the others were told, or told us
    }
    broken = "worker " + std::to_string(rank) + " failed: " + why;
    runtime().failed = true;
    send_abort(why);
  }
};

MpiCollective::MpiCollective(MpiOptions options) : impl_(std::make_shared<Impl>(options)) {}

int MpiCollective::rank() const { return impl_->rank; }
int MpiCollective::num_replicas() const { return impl_->size; }

std::string MpiCollective::processor_name() const {
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  MPI_Get_processor_name(name.data(), &length);
  return std::string(name.data(), static_cast<std::size_t>(std::max(length, 0)));
}

void MpiCollective::all_reduce(std::span<AnyTensor> tensors, ReduceOp op) {
  impl_->all_reduce(tensors, op);
}
void MpiCollective::broadcast(std::span<AnyTensor> tensors, int root) {
  impl_->broadcast(tensors, root);
}
std::vector<AnyTensor> MpiCollective::all_gather(const AnyTensor& t) {
  return impl_->all_gather(t);
}
void MpiCollective::barrier() { impl_->barrier(); }
void MpiCollective::abort(const std::string& why) { impl_->abort(why); }

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
