// tapeflow::nccl: the Collective of replicas on several GPUs over NCCL
// (distribute/nccl_collective.hpp; docs/guide/distribute.md, "The NCCL collective").
//
// Communicators are nonblocking (ncclConfig_t::blocking = 0), so no NCCL call can block a
// replica for good: each operation is enqueued on the device's stream inside one NCCL group
// call, then the replica polls the communicator's async error and the stream until the work is
// done, the group is broken by another replica, or the timeout passes (then it aborts its
// communicator, which frees the others' kernels, and names the replicas that never started the
// operation). Every operation is numbered per replica; a replica past the deadline compares
// the numbers to say who is missing.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/distribute/detail/collective_tensors.hpp>
#include <tapeflow/distribute/nccl_collective.hpp>

#include "../cuda/device_memory.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;
namespace devices = tapeflow::detail::devices;

// Up to this many dims travel in all_gather's shape exchange.
constexpr std::size_t max_gather_rank = 8;

// The NCCL type of `dtype`, or ncclNumTypes for one NCCL cannot carry (strings).
ncclDataType_t nccl_type(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32:
      return ncclFloat32;
    case DType::float64:
      return ncclFloat64;
    case DType::int32:
      return ncclInt32;
    case DType::int64:
      return ncclInt64;
    case DType::uint8:
    case DType::bool_:
      return ncclUint8;
    default:
      return ncclNumTypes;
  }
}

// Why `t` cannot take part in `what` (empty when it can): checked before the replicas agree,
// so that every replica fails together.
std::string unusable(const AnyTensor& t, bool reduce) {
  if (!t.has_value()) {
    return "a tensor without a value";
  }
  if (nccl_type(t.dtype()) == ncclNumTypes) {
    return std::string(dtype_name(t.dtype())) + " tensors cannot travel through NCCL";
  }
  if (reduce && (t.dtype() == DType::bool_ || t.dtype() == DType::uint8)) {
    return std::string(dtype_name(t.dtype())) +
           " tensors cannot be reduced (float32, float64, int32, int64)";
  }
  return {};
}

}  // namespace

// Shared by a group's handles (each replica thread uses its own communicator).
struct NcclState {
  std::vector<std::string> devices;
  std::vector<backend::cuda::CudaMemory*> memory;
  std::vector<ncclComm_t> comms;
  std::vector<char> aborted;  // per replica: its communicator was aborted
  std::unique_ptr<std::atomic<std::int64_t>[]> started;  // per replica: operations begun
  std::chrono::milliseconds timeout{};
  std::atomic<bool> broken{false};
  std::mutex mutex;  // guards failure
  std::string failure;

  [[nodiscard]] int size() const { return static_cast<int>(devices.size()); }

  // Breaks the group (the first failure is the one every replica reports).
  void fail(const std::string& why) {
    const std::lock_guard lock(mutex);
    if (!broken.load()) {
      failure = why;
      broken.store(true);
    }
  }
  std::string failure_message() {
    const std::lock_guard lock(mutex);
    return failure;
  }
  void abort_comm(int rank) {
    if (aborted[std::size_t(rank)] == 0) {
      aborted[std::size_t(rank)] = 1;
      (void)ncclCommAbort(comms[std::size_t(rank)]);
    }
  }
  std::string where(int rank) const {
    return devices[std::size_t(rank)] + " (replica " + std::to_string(rank) + " of " +
           std::to_string(size()) + ")";
  }
  std::string nccl_error(int rank, ncclResult_t result) const {
    const char* last = ncclGetLastError(comms[std::size_t(rank)]);
    return std::string(ncclGetErrorString(result)) +
           (last != nullptr && *last != '\0' ? std::string(": ") + last : std::string());
  }

  // Throws `unavailable` if another replica broke the group.
  void require_usable(int rank, const char* what) {
    if (broken.load()) {
      abort_comm(rank);
      throw unavailable("NCCL " + std::string(what) + " on " + where(rank) +
                        ": the group is broken: " + failure_message());
    }
  }

  // Enqueues `body(comm, stream)` as one NCCL group call on replica `rank`'s stream and waits
  // for it (see the file comment).
  template <class Body>
  void run(int rank, const char* what, Body&& body) {
    require_usable(rank, what);
    const std::int64_t op = ++started[std::size_t(rank)];
    auto& device = *memory[std::size_t(rank)];
    device.activate();
    ncclComm_t comm = comms[std::size_t(rank)];
    auto* stream = static_cast<cudaStream_t>(device.stream());
    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess) {
      body(comm, stream);
      result = ncclGroupEnd();
    }
    if (result != ncclSuccess && result != ncclInProgress) {
      const std::string why = "NCCL " + std::string(what) + " on " + where(rank) +
                              " failed: " + nccl_error(rank, result);
      fail(why);
      abort_comm(rank);
      throw unavailable(why);
    }
    wait(rank, what, op, comm, stream);
  }

  void wait(int rank, const char* what, std::int64_t op, ncclComm_t comm, cudaStream_t stream) {
    const auto deadline = Clock::now() + timeout;
    for (int spins = 0;; ++spins) {
      ncclResult_t async = ncclSuccess;
      const ncclResult_t polled = ncclCommGetAsyncError(comm, &async);
      if (polled != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
        const std::string why = "NCCL " + std::string(what) + " on " + where(rank) + " failed: " +
                                nccl_error(rank, polled != ncclSuccess ? polled : async);
        fail(why);
        abort_comm(rank);
        throw unavailable(why);
      }
      if (async == ncclSuccess) {
        const cudaError_t query = cudaStreamQuery(stream);
        if (query == cudaSuccess) {
          return;
        }
        if (query != cudaErrorNotReady) {
          const std::string why = "NCCL " + std::string(what) + " on " + where(rank) +
                                  ": CUDA error " + cudaGetErrorString(query);
          fail(why);
          abort_comm(rank);
          throw internal(why);
        }
      }
      require_usable(rank, what);
      if (Clock::now() > deadline) {
        std::string missing;
        for (int r = 0; r < size(); ++r) {
          if (started[std::size_t(r)].load() < op) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
          }
        }
        const std::string why =
            "NCCL " + std::string(what) + " on " + where(rank) + " did not complete within " +
            std::to_string(timeout.count()) + " ms: " +
            (missing.empty() ? std::string("every replica joined, but the operation stalled")
                             : "replica(s) " + missing + " never joined it");
        fail(why);
        abort_comm(rank);
        throw deadline_exceeded(why);
      }
      if (spins > 64) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }

  // Every replica's int64 values `mine` (the same count everywhere), in rank order: for the
  // agreement checks and all_gather's shapes.
  std::vector<std::int64_t> exchange(int rank, const char* what, std::vector<std::int64_t> mine) {
    const std::size_t count = mine.size();
    const AnyTensor send(from_vector(std::move(mine)));
    AnyTensor receive(
        Tensor<std::int64_t, 1>::uninitialized({static_cast<std::int64_t>(count) * size()}));
    run(rank, what, [&](ncclComm_t comm, cudaStream_t stream) {
      (void)ncclAllGather(send.device_data(), receive.mutable_device_data(), count, ncclInt64, comm,
                          stream);
    });
    return receive.as<std::int64_t, 1>().numpy();
  }

  // invalid_argument on every replica unless all passed the same operation and tensors, and
  // none found its tensors unusable (`why`, empty if they are fine). Returns the tensors on
  // this replica's device (copies of those elsewhere).
  std::vector<AnyTensor> agree(int rank, const char* what, std::span<const AnyTensor> tensors,
                               std::int64_t extra, bool reduce) {
    std::string why;
    for (const auto& t : tensors) {
      if (why.empty()) {
        why = unusable(t, reduce);
      }
    }
    const auto all = exchange(rank, what, {why.empty() ? signature(tensors, extra) : -1});
    if (!why.empty()) {
      throw invalid_argument("NCCL " + std::string(what) + " on " + where(rank) + ": " + why);
    }
    std::string differ;
    for (int r = 0; r < size(); ++r) {
      if (all[std::size_t(r)] != all[0] || all[std::size_t(r)] == -1) {
        differ += (differ.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (!differ.empty()) {
      throw invalid_argument("NCCL " + std::string(what) + " on " + where(rank) + ": replica(s) " +
                             differ +
                             " passed unusable tensors, or other dtypes or shapes than replica 0");
    }
    std::vector<AnyTensor> here;
    for (const auto& t : tensors) {
      here.push_back(t.on_allocation_device());
    }
    return here;
  }
};

namespace {

void check_rank(const NcclState& s, int rank, const char* what) {
  if (rank < 0 || rank >= s.size()) {
    throw invalid_argument(std::string(what) + ": rank " + std::to_string(rank) + " is not in 0.." +
                           std::to_string(s.size() - 1));
  }
}

// An operation that replaces each of `tensors` by a result of its dtype and shape: after the
// agreement, `enqueue(in, out, comm, stream)` for every non-empty tensor in one NCCL group call.
template <class Enqueue>
void each_tensor(NcclState& s, int rank, const char* what, std::span<AnyTensor> tensors,
                 std::int64_t operation, bool reduce, Enqueue&& enqueue) {
  const config::DeviceScope on_device(DeviceSpec::from_string(s.devices[std::size_t(rank)]));
  const std::vector<AnyTensor> in = s.agree(rank, what, tensors, operation, reduce);
  std::vector<AnyTensor> out;
  for (const auto& t : in) {
    out.push_back(AnyTensor::uninitialized(t.dtype(), t.shape()));
  }
  s.run(rank, what, [&](ncclComm_t comm, cudaStream_t stream) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (in[i].num_elements() > 0) {
        enqueue(in[i], out[i], comm, stream);
      }
    }
  });
  std::move(out.begin(), out.end(), tensors.begin());
}

class NcclReplicaGroup final : public ReplicaGroup {
 public:
  explicit NcclReplicaGroup(NcclGroup group) : group_(std::move(group)) {}
  AnyCollective replica(int rank) override { return AnyCollective(group_.replica(rank)); }
  void abort(int rank, const std::string& why) override { group_.abort(rank, why); }

 private:
  NcclGroup group_;
};

}  // namespace

std::shared_ptr<ReplicaGroup> make_nccl_group(const std::vector<std::string>& devices,
                                              std::chrono::milliseconds timeout) {
  return std::make_shared<NcclReplicaGroup>(NcclGroup(devices, {.timeout = timeout}));
}

}  // namespace detail

NcclGroup::NcclGroup(const std::vector<std::string>& devices, NcclOptions options) {
  if (devices.empty()) {
    throw invalid_argument("NcclGroup: no devices");
  }
  // Communicators still usable are finalized (bounded by the timeout: a nonblocking finalize
  // may take a moment) and destroyed; aborted ones are already gone.
  auto state = std::shared_ptr<detail::NcclState>(new detail::NcclState, [](detail::NcclState* s) {
    for (int r = 0; r < s->size(); ++r) {
      ncclComm_t comm = s->comms[std::size_t(r)];
      if (comm == nullptr || s->aborted[std::size_t(r)] != 0) {
        continue;
      }
      s->memory[std::size_t(r)]->activate();
      ncclResult_t status = ncclCommFinalize(comm);
      const auto deadline = detail::Clock::now() + s->timeout;
      while (status == ncclInProgress && detail::Clock::now() < deadline) {
        (void)ncclCommGetAsyncError(comm, &status);
      }
      (void)(status == ncclSuccess ? ncclCommDestroy(comm) : ncclCommAbort(comm));
    }
    delete s;
  });
  const auto n = devices.size();
  state->timeout = options.timeout;
  state->comms.assign(n, nullptr);
  state->aborted.assign(n, 0);
  state->started = std::make_unique<std::atomic<std::int64_t>[]>(n);
  std::vector<int> cards;
  for (const auto& name : devices) {
    const auto id = detail::devices::resolve(name);
    auto* memory = dynamic_cast<backend::cuda::CudaMemory*>(detail::devices::device_memory(id));
    if (memory == nullptr) {
      throw invalid_argument("NcclGroup: device '" + name + "' is not a GPU of this process");
    }
    if (std::ranges::find(cards, memory->ordinal()) != cards.end()) {
      throw invalid_argument("NcclGroup: device '" + name + "' shares CUDA device " +
                             std::to_string(memory->ordinal()) +
                             " with another replica; NCCL needs one replica per GPU (logical "
                             "GPUs on one card use the in-process collective)");
    }
    cards.push_back(memory->ordinal());
    state->devices.push_back(std::string(detail::devices::name(id)));
    state->memory.push_back(memory);
  }
  ncclUniqueId id{};
  ncclResult_t result = ncclGetUniqueId(&id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call returns; completion is polled (see the file comment)
  if (result == ncclSuccess) {
    result = ncclGroupStart();
  }
  if (result == ncclSuccess) {
    for (std::size_t r = 0; r < n && (result == ncclSuccess || result == ncclInProgress); ++r) {
      state->memory[r]->activate();
      result = ncclCommInitRankConfig(&state->comms[r], static_cast<int>(n), id,
                                      static_cast<int>(r), &config);
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (result == ncclSuccess || result == ncclInProgress) {
      result = ended;
    }
  }
  // Nonblocking initialization: wait until every communicator is ready, within the timeout.
  const auto deadline = detail::Clock::now() + options.timeout;
  bool late = false;
  for (std::size_t r = 0; r < n && (result == ncclSuccess || result == ncclInProgress); ++r) {
    do {
      ncclResult_t async = ncclSuccess;
      result = ncclCommGetAsyncError(state->comms[r], &async);
      if (result == ncclSuccess) {
        result = async;
      }
      late = result == ncclInProgress && detail::Clock::now() > deadline;
    } while (result == ncclInProgress && !late);
  }
  if (result != ncclSuccess) {
    for (std::size_t r = 0; r < n; ++r) {
      if (state->comms[r] != nullptr) {
        (void)ncclCommAbort(state->comms[r]);
        state->aborted[r] = 1;
      }
    }
    const std::string what =
        "NcclGroup: NCCL could not make the communicators over " + std::to_string(n) + " GPU(s)";
    if (late) {
      throw deadline_exceeded(what + " within " + std::to_string(options.timeout.count()) + " ms");
    }
    throw unavailable(what + ": " + ncclGetErrorString(result));
  }
  state_ = std::move(state);
}

int NcclGroup::num_replicas() const { return state_->size(); }

NcclCollective NcclGroup::replica(int rank) const {
  detail::check_rank(*state_, rank, "NcclGroup::replica");
  return NcclCollective(state_, rank);
}

void NcclGroup::abort(int rank, const std::string& why) const {
  state_->fail("replica " + std::to_string(rank) + " failed: " + why);
}

int NcclCollective::num_replicas() const { return state_->size(); }

void NcclCollective::all_reduce(std::span<AnyTensor> tensors, ReduceOp op) {
  detail::each_tensor(
      *state_, rank_, "all_reduce", tensors, 1, true,
      [&](const AnyTensor& in, AnyTensor& out, ncclComm_t comm, cudaStream_t stream) {
        (void)ncclAllReduce(in.device_data(), out.mutable_device_data(),
                            static_cast<std::size_t>(in.num_elements()),
                            detail::nccl_type(in.dtype()), op == ReduceOp::mean ? ncclAvg : ncclSum,
                            comm, stream);
      });
}

void NcclCollective::broadcast(std::span<AnyTensor> tensors, int root) {
  detail::check_rank(*state_, root, "NCCL broadcast: root");
  detail::each_tensor(
      *state_, rank_, "broadcast", tensors, 2 + root, false,
      [&](const AnyTensor& in, AnyTensor& out, ncclComm_t comm, cudaStream_t stream) {
        (void)ncclBroadcast(in.device_data(), out.mutable_device_data(),
                            static_cast<std::size_t>(in.num_elements()),
                            detail::nccl_type(in.dtype()), root, comm, stream);
      });
}

std::vector<AnyTensor> NcclCollective::all_gather(const AnyTensor& t) {
  auto& s = *state_;
  const config::DeviceScope on_device(DeviceSpec::from_string(s.devices[std::size_t(rank_)]));
  std::string why = detail::unusable(t, false);
  if (why.empty() && t.rank() > detail::max_gather_rank) {
    why = "rank " + std::to_string(t.rank()) + " > " + std::to_string(detail::max_gather_rank);
  }
  // Everyone's dtype, rank and dims first (pieces may differ in dim sizes); -1: unusable.
  std::vector<std::int64_t> meta(2 + detail::max_gather_rank, 0);
  meta[0] = why.empty() ? static_cast<std::int64_t>(t.dtype()) : -1;
  meta[1] = static_cast<std::int64_t>(t.rank());
  for (std::size_t i = 0; i < t.rank() && i < detail::max_gather_rank; ++i) {
    meta[2 + i] = t.shape()[i];
  }
  const auto all = s.exchange(rank_, "all_gather", meta);
  if (!why.empty()) {
    throw invalid_argument("NCCL all_gather on " + s.where(rank_) + ": " + why);
  }
  const AnyTensor in = t.on_allocation_device();
  const std::size_t stride = meta.size();
  std::int64_t most = 0;
  std::vector<Shape> shapes;
  for (int r = 0; r < s.size(); ++r) {
    const auto* m = all.data() + std::size_t(r) * stride;
    if (m[0] != meta[0] || m[1] != meta[1]) {
      throw invalid_argument("NCCL all_gather on " + s.where(rank_) + ": replica " +
                             std::to_string(r) +
                             " passed an unusable tensor, or another dtype or rank than replica " +
                             std::to_string(rank_));
    }
    std::vector<std::int64_t> dims(m + 2, m + 2 + m[1]);
    shapes.emplace_back(dims);
    most = std::max(most, shapes.back().num_elements());
  }
  // Equal-sized pieces travel (NCCL's all-gather), each padded to the largest.
  const std::size_t each = dtype_size(in.dtype());
  auto& device = *s.memory[std::size_t(rank_)];
  AnyTensor padded = in;
  if (in.num_elements() != most) {
    padded = AnyTensor::uninitialized(in.dtype(), Shape(std::vector<std::int64_t>{most}));
    if (in.num_elements() > 0) {
      device.copy_on_device(padded.mutable_device_data(), in.device_data(),
                            static_cast<std::size_t>(in.num_elements()) * each);
    }
  }
  AnyTensor gathered =
      AnyTensor::uninitialized(in.dtype(), Shape(std::vector<std::int64_t>{most * s.size()}));
  if (most > 0) {
    s.run(rank_, "all_gather", [&](ncclComm_t comm, cudaStream_t stream) {
      (void)ncclAllGather(padded.device_data(), gathered.mutable_device_data(),
                          static_cast<std::size_t>(most), detail::nccl_type(in.dtype()), comm,
                          stream);
    });
  }
  std::vector<AnyTensor> out;
  for (int r = 0; r < s.size(); ++r) {
    AnyTensor piece = AnyTensor::uninitialized(in.dtype(), shapes[std::size_t(r)]);
    const auto bytes = static_cast<std::size_t>(piece.num_elements()) * each;
    if (bytes > 0) {
      device.copy_on_device(piece.mutable_device_data(),
                            static_cast<const std::byte*>(gathered.device_data()) +
                                std::size_t(r) * std::size_t(most) * each,
                            bytes);
    }
    out.push_back(std::move(piece));
  }
  return out;
}

void NcclCollective::barrier() {
  AnyTensor token(from_vector(std::vector<float>{0.0f}));
  all_reduce(std::span<AnyTensor>(&token, 1), ReduceOp::sum);
}

static_assert(Collective<NcclCollective>);

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
