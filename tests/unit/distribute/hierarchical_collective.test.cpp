// The hierarchical collective (several replicas per worker) without MPI: two "workers" of two
// replica threads each, the workers' collective being an in-process group of their first
// replicas. Results come out in global replica order (worker * 2 + local), and the helpers every
// collective shares (fresh result tensors, the agreement signature) behave as they promise.
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/distribute/detail/collective_tensors.hpp>
#include <tapeflow/distribute/detail/hierarchical_collective.hpp>
#include <tapeflow/distribute/in_process_collective.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_hierarchical_collective {

namespace tf = tapeflow;
namespace dist = tf::distribute;
using Shared = dist::detail::HierarchicalShared<dist::InProcessCollective>;
using Hierarchical = dist::detail::HierarchicalCollective<dist::InProcessCollective>;

std::vector<float> floats(const tf::AnyTensor& t) { return t.as<float, 1>().numpy(); }

TEST_CASE("two workers of two replicas reduce, broadcast, gather and wait in global order",
          "[distribute]") {
  constexpr int workers = 2;
  constexpr int local = 2;
  const dist::InProcessGroup across(workers);
  std::vector<dist::InProcessGroup> locals;
  std::vector<std::shared_ptr<Shared>> shared;
  for (int w = 0; w < workers; ++w) {
    locals.emplace_back(local);
    shared.push_back(std::make_shared<Shared>(Shared{across.replica(w), workers, w, {}}));
  }
  struct Seen {
    int rank = -1, size = 0;
    std::vector<float> sum, mean, broadcast, gathered;
  };
  std::vector<Seen> seen(workers * local);
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < workers; ++w) {
      for (int r = 0; r < local; ++r) {
        threads.emplace_back([&, w, r] {
          Hierarchical c(locals[std::size_t(w)].replica(r), shared[std::size_t(w)]);
          Seen& out = seen[std::size_t(c.rank())];
          out.rank = c.rank();
          out.size = c.num_replicas();
          const float id = float(c.rank());
          std::vector<tf::AnyTensor> t = {tf::AnyTensor(tf::constant<float>({id + 1, 10 * id}))};
          c.all_reduce(t, dist::ReduceOp::sum);
          out.sum = floats(t[0]);
          t = {tf::AnyTensor(tf::constant<float>({id + 1, 10 * id}))};
          c.all_reduce(t, dist::ReduceOp::mean);
          out.mean = floats(t[0]);
          t = {tf::AnyTensor(tf::constant<float>({id, id}))};
          c.broadcast(t, 3);
          out.broadcast = floats(t[0]);
          for (const auto& piece : c.all_gather(tf::AnyTensor(tf::constant<float>({id})))) {
            out.gathered.push_back(floats(piece).at(0));
          }
          c.barrier();
        });
      }
    }
  }
  STATIC_REQUIRE(dist::Collective<Hierarchical>);
  for (int g = 0; g < workers * local; ++g) {
    INFO("replica " << g);
    const Seen& s = seen[std::size_t(g)];
    CHECK(s.rank == g);
    CHECK(s.size == 4);
    CHECK(s.sum == std::vector<float>{10, 60});
    CHECK(s.mean == std::vector<float>{2.5f, 15});
    CHECK(s.broadcast == std::vector<float>{3, 3});
    CHECK(s.gathered == std::vector<float>{0, 1, 2, 3});
  }
}

TEST_CASE("collectives' agreement signature", "[distribute]") {
  const std::vector<tf::AnyTensor> a = {tf::AnyTensor(tf::constant<float>({1, 2})),
                                        tf::AnyTensor(tf::constant<std::int64_t>({{1}}))};
  const std::vector<tf::AnyTensor> same_shapes = {tf::AnyTensor(tf::constant<float>({5, 6})),
                                                  tf::AnyTensor(tf::constant<std::int64_t>({{7}}))};
  const std::vector<tf::AnyTensor> other_shape = {tf::AnyTensor(tf::constant<float>({1, 2, 3})),
                                                  tf::AnyTensor(tf::constant<std::int64_t>({{1}}))};
  const std::vector<tf::AnyTensor> other_dtype = {tf::AnyTensor(tf::constant<double>({1, 2})),
                                                  tf::AnyTensor(tf::constant<std::int64_t>({{1}}))};
  const auto sig = dist::detail::signature(a, 1);
  CHECK(sig >= 0);
  CHECK(dist::detail::signature(same_shapes, 1) == sig);  // values do not count
  CHECK(dist::detail::signature(other_shape, 1) != sig);
  CHECK(dist::detail::signature(other_dtype, 1) != sig);
  CHECK(dist::detail::signature(a, 2) != sig);  // another operation
  CHECK(dist::detail::signature(std::span(a).first(1), 1) != sig);
  const std::vector<tf::AnyTensor> empty_slot = {tf::AnyTensor(), a[1]};
  CHECK(dist::detail::signature(empty_slot, 1) != sig);
}

}  // namespace test_distribute_hierarchical_collective
