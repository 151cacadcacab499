// The CUDA elementwise kernels' index arithmetic (backends/cuda/elementwise.hpp), which host
// and device share, checked on the CPU against coordinates computed directly, so every CI run
// tests it whether or not a GPU is present.
#include <array>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "../../../backends/cuda/elementwise.hpp"

namespace test_backend_cuda_broadcast {
namespace cuda = tapeflow::backend::cuda;

// The offset of output coordinate `at` in an operand of `dims`, right-aligned, reading axes
// of size 1 at 0.
std::int64_t reference_offset(const std::vector<std::int64_t>& dims,
                              const std::vector<std::int64_t>& at) {
  std::size_t const skip = at.size() - dims.size();
  std::int64_t offset = 0;
  for (std::size_t axis = 0; axis < dims.size(); ++axis) {
    std::int64_t const c = dims[axis] == 1 ? 0 : at[axis + skip];
    offset = offset * dims[axis] + c;
  }
  return offset;
}

void check_pattern(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b,
                   const std::vector<std::int64_t>& out) {
  cuda::Broadcast index;
  index.rank = static_cast<int>(out.size());
  std::copy(out.begin(), out.end(), index.out_dims);
  cuda::broadcast_strides(a, out, index.a_strides);
  cuda::broadcast_strides(b, out, index.b_strides);
  std::int64_t n = 1;
  for (auto d : out) {
    n *= d;
  }
  std::vector<std::int64_t> at(out.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t offset_a = -1;
    std::int64_t offset_b = -1;
    cuda::broadcast_offsets(index, i, offset_a, offset_b);
    INFO("output element " << i);
    REQUIRE(offset_a == reference_offset(a, at));
    REQUIRE(offset_b == reference_offset(b, at));
    for (std::size_t axis = at.size(); axis-- > 0;) {  // next coordinate, row-major
      if (++at[axis] < out[axis]) {
        break;
      }
      at[axis] = 0;
    }
  }
}

TEST_CASE("GPU broadcasting offsets match NumPy's rules", "[backend]") {
  check_pattern({3, 1, 4}, {2, 4}, {3, 2, 4});
  check_pattern({64, 1}, {1, 33}, {64, 33});
  check_pattern({5, 6, 7}, {5, 1, 7}, {5, 6, 7});
  check_pattern({}, {17, 3}, {17, 3});
  check_pattern({2, 1, 3, 1, 2}, {4, 1, 5, 1}, {2, 4, 3, 5, 2});
}

TEST_CASE("an operand's strides are 0 along the axes it broadcasts", "[backend]") {
  std::array<std::int64_t, 3> strides{};
  cuda::broadcast_strides(std::vector<std::int64_t>{4, 1}, std::vector<std::int64_t>{3, 4, 5},
                          strides.data());
  CHECK(strides == std::array<std::int64_t, 3>{0, 1, 0});
  cuda::broadcast_strides(std::vector<std::int64_t>{3, 4, 5}, std::vector<std::int64_t>{3, 4, 5},
                          strides.data());
  CHECK(strides == std::array<std::int64_t, 3>{20, 5, 1});
}

TEST_CASE("the elementwise functors are the arithmetic the CPU kernels apply", "[backend]") {
  namespace math = tapeflow::detail::scalar_math;
  STATIC_REQUIRE(math::Add{}(2, 3) == 5);  // constexpr: device code calls them too
  CHECK(math::Sub{}(2.5f, 4.0f) == -1.5f);
  CHECK(math::Mul{}(-3.0, 0.5) == -1.5);
  CHECK(math::Div{}(7.0f, 2.0f) == 3.5f);
  CHECK(math::Div{}(7, 2) == 3);
}

}  // namespace test_backend_cuda_broadcast
