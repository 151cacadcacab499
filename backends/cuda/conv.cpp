// Conv2D and its two backprops on a GPU through cuDNN's graph (backend) API: one operation
// per graph, the first engine configuration of heuristics mode A that finalizes (those
// computing in TF32 last), plans cached per device and geometry. Tensors stay NHWC (cuDNN reads
// them through strides); filters are rewritten between TensorFlow's HWIO and the KRSC layout
// cuDNN's channels-last convolutions take (filter_layout.hpp). Float only: the graph API has no
// double engines to rely on, so float64 convolutions are placed on the CPU.
#include "conv.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>
#include <cudnn.h>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>

#include "device_memory.hpp"
#include "filter_layout.hpp"

// OPERATIONGRAPH_HANDLE and EXECUTION_PLAN_HANDLE are marked deprecated in cuDNN 9's headers
// but remain how a graph is bound to a handle across every 9.x release.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

void check_dnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw internal(std::string("cuDNN: ") + what + " failed: " + cudnnGetErrorString(status));
  }
}

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    check_dnn(cudnnBackendCreateDescriptor(type, &descriptor_), "cudnnBackendCreateDescriptor");
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (descriptor_ != nullptr) {
      (void)cudnnBackendDestroyDescriptor(descriptor_);
    }
  }
  template <class V>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const V* values) {
    check_dnn(cudnnBackendSetAttribute(descriptor_, name, type, count, values),
              "cudnnBackendSetAttribute");
  }
  void set(cudnnBackendAttributeName_t name, const Descriptor& other) {
    cudnnBackendDescriptor_t d = other.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
  }
  void finalize() { check_dnn(cudnnBackendFinalize(descriptor_), "cudnnBackendFinalize"); }
  [[nodiscard]] cudnnBackendDescriptor_t get() const noexcept { return descriptor_; }

 private:
  cudnnBackendDescriptor_t descriptor_ = nullptr;
};

// Unique ids of the three tensors of a convolution graph.
constexpr std::int64_t x_uid = 'x';
constexpr std::int64_t w_uid = 'w';
constexpr std::int64_t y_uid = 'y';

// An NHWC tensor [n, h, w, c] as cuDNN's [n, c, h, w] with channels-last strides (also the
// KRSC filter: [k, r, s, c] is [k, c, r, s] the same way).
std::unique_ptr<Descriptor> nhwc_tensor(std::int64_t uid, const std::array<std::int64_t, 4>& nhwc,
                                        std::int64_t alignment) {
  auto t = std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  std::int64_t const dims[4] = {nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
  std::int64_t const strides[4] = {nhwc[1] * nhwc[2] * nhwc[3], 1, nhwc[2] * nhwc[3], nhwc[3]};
  cudnnDataType_t const type = CUDNN_DATA_FLOAT;
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  t->finalize();
  return t;
}

// A finalized execution plan and everything it was built from.
struct Plan {
  std::vector<std::unique_ptr<Descriptor>> parts;
  std::unique_ptr<Descriptor> plan;
  std::int64_t workspace = 0;
};

using PlanKey = std::tuple<const CudaMemory*, ConvDirection, std::array<std::int64_t, 4>,
                           std::array<std::int64_t, 4>, std::array<std::int64_t, 4>,
                           std::array<std::int64_t, 8>, std::int64_t>;

struct DeviceHandles {
  std::mutex mutex;  // cuDNN handles are not thread-safe; plans are built once
  std::map<const CudaMemory*, cudnnHandle_t> handles;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
};
DeviceHandles& handles() {
  static auto* const all = new DeviceHandles;  // never destroyed: used until exit
  return *all;
}

cudnnHandle_t handle_for(CudaMemory& device) {
  auto& all = handles();
  auto found = all.handles.find(&device);
  if (found != all.handles.end()) {
    return found->second;
  }
  device.activate();
  cudnnHandle_t handle = nullptr;
  check_dnn(cudnnCreate(&handle), "cudnnCreate");
  check_dnn(cudnnSetStream(handle, static_cast<cudaStream_t>(device.stream())), "cudnnSetStream");
  all.handles.emplace(&device, handle);
  return handle;
}

// Whether an engine configuration's engine carries cuDNN's tensor-core numerical note.
bool uses_tensor_cores(const Descriptor& config) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t got = 0;
  if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                               &raw) != CUDNN_STATUS_SUCCESS) {
    return false;
  }
  std::array<cudnnBackendNumericalNote_t, 16> notes{};
  std::int64_t count = 0;
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               static_cast<std::int64_t>(notes.size()), &count,
                               notes.data()) != CUDNN_STATUS_SUCCESS) {
    return false;
  }
  for (std::int64_t i = 0; i < count && i < static_cast<std::int64_t>(notes.size()); ++i) {
    if (notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<Plan> build_plan(cudnnHandle_t handle, const ConvGeometry& g,
                                 std::int64_t alignment) {
  auto result = std::make_unique<Plan>();
  auto& parts = result->parts;
  parts.push_back(nhwc_tensor(x_uid, g.input, alignment));
  parts.push_back(nhwc_tensor(w_uid, g.filter_krsc, alignment));
  parts.push_back(nhwc_tensor(y_uid, g.output, alignment));
  const Descriptor& x = *parts[0];
  const Descriptor& w = *parts[1];
  const Descriptor& y = *parts[2];

  auto conv = std::make_unique<Descriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  cudnnDataType_t const compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t const mode = CUDNN_CROSS_CORRELATION;
  std::int64_t const spatial = 2;
  conv->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv->set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv->set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  conv->set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, g.dilations.data());
  conv->set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, g.strides.data());
  conv->set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, g.pre_padding.data());
  conv->set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, g.post_padding.data());
  conv->finalize();

  float const alpha = 1.0f;
  float const beta = 0.0f;
  std::unique_ptr<Descriptor> op;
  switch (g.direction) {
    case ConvDirection::forward:
      op = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, *conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
      break;
    case ConvDirection::backward_data:
      op = std::make_unique<Descriptor>(
          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, *conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
      break;
    case ConvDirection::backward_filter:
      op = std::make_unique<Descriptor>(
          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, *conv);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
      break;
  }
  op->finalize();

  auto graph = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnBackendDescriptor_t const ops[1] = {op->get()};
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, ops);
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  graph->finalize();

  auto heuristics = std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t const heur_mode = CUDNN_HEUR_MODE_A;
  heuristics->set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *graph);
  heuristics->set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
  heuristics->finalize();
  std::int64_t count = 0;
  check_dnn(cudnnBackendGetAttribute(heuristics->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
            "reading the engine heuristics' count");
  std::vector<std::unique_ptr<Descriptor>> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  std::int64_t returned = 0;
  if (count > 0) {
    check_dnn(cudnnBackendGetAttribute(heuristics->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
              "reading the engine heuristics");
  }
  // Engines on tensor cores compute float convolutions in TF32 (10-bit mantissas); the
  // products run in full FP32 (cuBLAS, the CPU), so those engines are tried last.
  std::vector<std::int64_t> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::int64_t i = 0; i < returned; ++i) {
      if (uses_tensor_cores(*configs[static_cast<std::size_t>(i)]) == (pass == 1)) {
        order.push_back(i);
      }
    }
  }
  for (std::int64_t i : order) {
    auto plan = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[static_cast<std::size_t>(i)]);
    if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS) {
      continue;  // this engine does not take the problem; try the next
    }
    std::int64_t workspace = 0;
    std::int64_t got = 0;
    check_dnn(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                       CUDNN_TYPE_INT64, 1, &got, &workspace),
              "reading a plan's workspace size");
    result->workspace = workspace;
    result->plan = std::move(plan);
    parts.push_back(std::move(conv));
    parts.push_back(std::move(op));
    parts.push_back(std::move(graph));
    parts.push_back(std::move(heuristics));
    for (auto& config : configs) {
      parts.push_back(std::move(config));
    }
    return result;
  }
  throw unimplemented("cuDNN has no engine for this convolution (input " +
                      Shape(g.input).to_string() + ", filter KRSC " +
                      Shape(g.filter_krsc).to_string() + ", output " + Shape(g.output).to_string() +
                      ")");
}

std::int64_t alignment_of(const void* a, const void* b, const void* c) {
  auto const bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
                    reinterpret_cast<std::uintptr_t>(c);
  std::int64_t alignment = 16;
  while (alignment > 4 && (bits % static_cast<std::uintptr_t>(alignment)) != 0) {
    alignment /= 2;
  }
  return alignment;
}

// Scratch in the device's memory, returned on its stream when done.
class Scratch {
 public:
  Scratch(CudaMemory& device, std::size_t bytes)
      : device_(device), bytes_(bytes), data_(bytes > 0 ? device.allocate(bytes) : nullptr) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (data_ != nullptr) {
      device_.deallocate(data_, bytes_);
    }
  }
  [[nodiscard]] void* get() const noexcept { return data_; }

 private:
  CudaMemory& device_;
  std::size_t bytes_;
  void* data_;
};

}  // namespace

void run_convolution(CudaMemory& device, const ConvGeometry& g, const float* a, const float* b,
                     float* out) {
  FilterDims const filter{g.filter_krsc[1], g.filter_krsc[2], g.filter_krsc[3], g.filter_krsc[0]};
  std::size_t const filter_bytes =
      static_cast<std::size_t>(filter.kh * filter.kw * filter.in * filter.out) * sizeof(float);
  Scratch krsc(device, filter_bytes);
  auto* filter_krsc = static_cast<float*>(krsc.get());
  device.activate();
  // cuDNN's x, w (KRSC) and y operands: the filter is rewritten from HWIO for forward and
  // backward data, and written by backward filter then rewritten to HWIO.
  void* pointers[3] = {};
  switch (g.direction) {
    case ConvDirection::forward:  // a: input, b: filter, out: output
      launch_hwio_to_krsc(b, filter_krsc, filter, device.stream());
      pointers[0] = const_cast<float*>(a);
      pointers[2] = out;
      break;
    case ConvDirection::backward_data:  // a: filter, b: dy, out: dx
      launch_hwio_to_krsc(a, filter_krsc, filter, device.stream());
      pointers[0] = out;
      pointers[2] = const_cast<float*>(b);
      break;
    case ConvDirection::backward_filter:  // a: input, b: dy, out: dw
      pointers[0] = const_cast<float*>(a);
      pointers[2] = const_cast<float*>(b);
      break;
  }
  check(cudaGetLastError(), "filter layout kernel launch");
  pointers[1] = filter_krsc;
  std::int64_t const alignment = alignment_of(pointers[0], pointers[1], pointers[2]);
  std::lock_guard lock(handles().mutex);
  cudnnHandle_t const handle = handle_for(device);
  PlanKey const key{&device,
                    g.direction,
                    g.input,
                    g.filter_krsc,
                    g.output,
                    {g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.pre_padding[0],
                     g.pre_padding[1], g.post_padding[0], g.post_padding[1]},
                    alignment};
  auto& plans = handles().plans;
  auto found = plans.find(key);
  if (found == plans.end()) {
    found = plans.emplace(key, build_plan(handle, g, alignment)).first;
  }
  const Plan& plan = *found->second;
  Scratch workspace(device, static_cast<std::size_t>(plan.workspace));
  std::int64_t const uids[3] = {x_uid, w_uid, y_uid};
  void* const workspace_pointer = workspace.get();
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace_pointer);
  pack.finalize();
  check_dnn(cudnnBackendExecute(handle, plan.plan->get(), pack.get()), "cudnnBackendExecute");
  if (g.direction == ConvDirection::backward_filter) {
    launch_krsc_to_hwio(filter_krsc, out, filter, device.stream());
    check(cudaGetLastError(), "filter layout kernel launch");
  }
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
