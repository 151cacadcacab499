// Profile output: op timings as an XSpace (`<host>.xplane.pb`), the file TensorBoard's
// Profile plugin (tensorboard_plugin_profile / xprof) lists and opens in its trace viewer,
// plus RunMetadata.step_stats for the Graphs tab. docs/formats.md 8.2, 8.3; field numbers checked
// against tsl/profiler/protobuf/xplane.proto and step_stats.proto as shipped in TF 2.21.
// IWYU pragma: private, include <tapeflow/summary.hpp>
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary::detail {

namespace wire = tapeflow::detail::wire;

/// One timed activity (an op, a fused chain or a whole function call).
struct ProfileEvent {
  std::string name;       // node name, or the function's name for a call
  std::string op;         // op type ("MatMul"); empty for a function call
  std::int64_t start_ns;  // wall clock, ns since the epoch
  std::int64_t end_ns;
  std::int32_t thread;  // small per-thread number
};

/// A serialized XSpace with one "/host:CPU" plane (a line per thread; op events named
/// "<node>:<Op>", TensorFlow's TraceMe convention for ops) and the "Task Environment" plane
/// holding the capture's start and stop times.
inline std::string xspace(const std::vector<ProfileEvent>& events, const std::string& host,
                          std::int64_t start_ns, std::int64_t stop_ns) {
  std::map<std::string, std::int64_t> metadata_ids;  // event name -> XEventMetadata id
  std::map<std::int32_t, std::vector<const ProfileEvent*>> lines;
  for (const auto& e : events) {
    const std::string name = e.op.empty() ? e.name : e.name + ":" + e.op;
    metadata_ids.emplace(name, static_cast<std::int64_t>(metadata_ids.size()) + 1);
    lines[e.thread].push_back(&e);
  }
  std::string out;
  wire::Writer space(out);
  space.message_field(1, [&](wire::Writer& plane) {
    plane.int64_field_if_nonzero(1, 0);
    plane.string_field(2, "/host:CPU");
    // Named references, not structured bindings, wherever a lambda captures them: Clang < 16
    // cannot capture structured bindings (C++20 P1091/P1381).
    for (auto& line_entry : lines) {
      const std::int32_t thread = line_entry.first;
      std::vector<const ProfileEvent*>& list = line_entry.second;
      std::sort(list.begin(), list.end(), [](const ProfileEvent* a, const ProfileEvent* b) {
        return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
      });
      const std::int64_t base = list.front()->start_ns;
      plane.message_field(3, [&](wire::Writer& line) {
        line.int64_field(1, thread);
        line.string_field(2, "tapeflow thread " + std::to_string(thread));
        line.int64_field(3, base);
        for (const ProfileEvent* e : list) {
          const std::string name = e->op.empty() ? e->name : e->name + ":" + e->op;
          line.message_field(4, [&](wire::Writer& ev) {
            ev.int64_field(1, metadata_ids.at(name));
            ev.int64_field_if_nonzero(2, (e->start_ns - base) * 1000);
            ev.int64_field_if_nonzero(3, (e->end_ns - e->start_ns) * 1000);
          });
        }
      });
    }
    for (const auto& metadata : metadata_ids) {
      const std::string& name = metadata.first;
      const std::int64_t id = metadata.second;
      plane.message_field(4, [&](wire::Writer& entry) {
        entry.int64_field(1, id);
        entry.message_field(2, [&](wire::Writer& m) {
          m.int64_field(1, id);
          m.string_field(2, name);
        });
      });
    }
  });
  space.message_field(1, [&](wire::Writer& plane) {
    plane.string_field(2, "Task Environment");
    const char* stat_names[2] = {"profile_start_time", "profile_stop_time"};
    for (std::int64_t id = 1; id <= 2; ++id) {
      plane.message_field(5, [&](wire::Writer& entry) {
        entry.int64_field(1, id);
        entry.message_field(2, [&](wire::Writer& m) {
          m.int64_field(1, id);
          m.string_field(2, stat_names[id - 1]);
        });
      });
    }
    plane.message_field(6, [&](wire::Writer& stat) {
      stat.int64_field(1, 1);
      stat.uint64_field(3, static_cast<std::uint64_t>(start_ns));
    });
    plane.message_field(6, [&](wire::Writer& stat) {
      stat.int64_field(1, 2);
      stat.uint64_field(3, static_cast<std::uint64_t>(stop_ns));
    });
  });
  space.string_field(4, host);
  return out;
}

/// A serialized StepStats: one DeviceStepStats for the CPU with a NodeExecStats per op event.
inline std::string step_stats(const std::vector<ProfileEvent>& events) {
  std::string out;
  wire::Writer w(out);
  w.message_field(1, [&](wire::Writer& dev) {
    dev.string_field(1, "/job:localhost/replica:0/task:0/device:CPU:0");
    for (const auto& e : events) {
      if (e.op.empty()) {
        continue;
      }
      dev.message_field(2, [&](wire::Writer& n) {
        const std::int64_t ns = e.end_ns - e.start_ns;
        n.string_field(1, e.name);
        n.int64_field_if_nonzero(2, e.start_ns / 1000);
        n.int64_field_if_nonzero(4, ns / 1000);
        n.int64_field_if_nonzero(5, ns / 1000);
        n.string_field(8, e.name + " = " + e.op + "()");
        n.uint64_field_if_nonzero(10, static_cast<std::uint64_t>(e.thread));
        n.int64_field_if_nonzero(13, e.start_ns);
        n.int64_field_if_nonzero(15, ns);
        n.int64_field_if_nonzero(16, ns);
      });
    }
  });
  return out;
}

}  // namespace summary::detail
TAPEFLOW_END_NAMESPACE
