// Compile-only: every source and adaptor of tf::data is a dataset, a C++20 view and input range,
// and a range-v3 view and input range, with an iterator that satisfies std::input_iterator and
// range-v3's input_iterator; adaptor closures are range-v3 view closures that compose; and
// tf::data::from_range maps range values to the documented element types.
#include <cstdint>
#include <iterator>
#include <list>
#include <map>
#include <ranges>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <range/v3/iterator/concepts.hpp>
#include <range/v3/range/concepts.hpp>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/take.hpp>

#include <tapeflow/data.hpp>

namespace tf = tapeflow;

namespace {

/// All that "datasets are ranges" promises of a dataset type D.
template <class D>
concept range_dataset =
    tf::data::dataset<D> && std::semiregular<D> &&
    // C++20
    std::ranges::input_range<D> && std::ranges::input_range<const D> && std::ranges::view<D> &&
    std::ranges::viewable_range<D> && std::input_iterator<std::ranges::iterator_t<const D>> &&
    std::sentinel_for<std::ranges::sentinel_t<const D>, std::ranges::iterator_t<const D>> &&
    std::same_as<std::ranges::range_value_t<D>, tf::data::element_t<D>> &&
    std::same_as<std::ranges::range_reference_t<D>, tf::data::element_t<D>&> &&
    // copies of an iterator share the epoch (range-v3 needs copyable iterators)
    std::copyable<std::ranges::iterator_t<D>> &&
    // range-v3
    ranges::input_range<D> && ranges::view_<D> && ranges::viewable_range<D> &&
    ranges::input_iterator<ranges::iterator_t<D>> &&
    ranges::sentinel_for<ranges::sentinel_t<D>, ranges::iterator_t<D>> &&
    // and a C++17 input iterator, like std::istream_iterator
    std::same_as<typename std::iterator_traits<std::ranges::iterator_t<D>>::iterator_category,
                 std::input_iterator_tag>;

using I64 = tf::Tensor<std::int64_t, 0>;
using F2 = tf::Tensor<float, 2>;
using S0 = tf::Tensor<std::string, 0>;

// A capturing lambda: neither default-constructible nor assignable, so it must be boxed. Used
// only inside decltype, hence [[maybe_unused]] (Clang's -Wunneeded-internal-declaration).
inline int captured = 1;
[[maybe_unused]] inline auto add = [c = captured](const I64& x) { return I64(x.item() + c); };
[[maybe_unused]] inline auto keep = [c = captured](const I64& x) { return x.item() > c; };
[[maybe_unused]] inline auto open = [c = captured](const I64& x) {
  return tf::data::range(x.item() + c);
};
[[maybe_unused]] inline auto gen = [c = captured] {
  return [i = c]() mutable -> std::optional<I64> {
    return i-- > 0 ? std::optional<I64>(I64(i)) : std::nullopt;
  };
};

using Range = tf::data::RangeDataset;
// sources
static_assert(range_dataset<Range>);
static_assert(range_dataset<decltype(tf::data::from_tensor_slices(F2{}))>);
static_assert(
    range_dataset<decltype(tf::data::from_tensor_slices(F2{}, tf::Tensor<std::int64_t, 1>{}))>);
static_assert(range_dataset<decltype(tf::data::from_tensors(F2{}))>);
static_assert(range_dataset<decltype(tf::data::from_generator(gen))>);
static_assert(range_dataset<decltype(tf::data::zip(Range{}, Range{}))>);
static_assert(range_dataset<decltype(tf::data::concatenate(Range{}, Range{}))>);
static_assert(range_dataset<tf::data::ListFilesDataset>);
static_assert(range_dataset<tf::data::TFRecordDataset>);
static_assert(range_dataset<tf::data::AnyDataset<I64>>);
static_assert(range_dataset<decltype(tf::data::from_range(std::declval<std::vector<float>&>()))>);
static_assert(range_dataset<decltype(tf::data::from_range(std::vector<float>{}))>);
static_assert(range_dataset<decltype(tf::data::from_range(
                  std::views::iota(0, 3) | std::views::transform([](int i) { return i * 0.5; })))>);
static_assert(range_dataset<decltype(tf::data::from_range(
                  std::views::istream<int>(std::declval<std::istringstream&>())))>);
// adaptors, piped and called
static_assert(range_dataset<decltype(Range{} | tf::data::map(add))>);
static_assert(range_dataset<decltype(tf::data::map(Range{}, add, {.num_parallel_calls = 2}))>);
static_assert(range_dataset<decltype(Range{} | tf::data::filter(keep))>);
static_assert(range_dataset<decltype(Range{} | tf::data::batch(2))>);
static_assert(
    range_dataset<decltype(tf::data::from_tensor_slices(F2{}) | tf::data::padded_batch(2))>);
static_assert(range_dataset<decltype(Range{} | tf::data::batch(2) | tf::data::unbatch())>);
static_assert(range_dataset<decltype(Range{} | tf::data::shuffle(4))>);
static_assert(range_dataset<decltype(Range{} | tf::data::cache())>);
static_assert(range_dataset<decltype(Range{} | tf::data::enumerate())>);
static_assert(range_dataset<decltype(Range{} | tf::data::repeat(2))>);
static_assert(range_dataset<decltype(Range{} | tf::data::take(2))>);
static_assert(range_dataset<decltype(Range{} | tf::data::skip(2))>);
static_assert(range_dataset<decltype(Range{} | tf::data::prefetch(2))>);
static_assert(range_dataset<decltype(Range{} | tf::data::interleave(open))>);
static_assert(range_dataset<decltype(Range{} | tf::data::concatenate(Range{}))>);

// Closures are range-v3 view closures: they compose with each other and with range-v3's views.
using Aug = decltype(tf::data::map(add) | tf::data::shuffle(4) | tf::data::batch(2));
static_assert(std::is_base_of_v<ranges::views::view_closure_base, Aug>);
static_assert(std::same_as<decltype(Range{} | std::declval<Aug>()),
                           decltype(Range{} | tf::data::map(add) | tf::data::shuffle(4) |
                                    tf::data::batch(2))>);
static_assert(
    ranges::input_range<decltype(Range{} | (tf::data::batch(2) | ranges::views::take(3)))>);
static_assert(
    ranges::input_range<decltype(Range{} | tf::data::prefetch(2) | ranges::views::enumerate)>);
static_assert(
    std::ranges::input_range<decltype(Range{} | tf::data::prefetch(2) | std::views::take(3))>);
// reduce is a value, not a view
static_assert(
    std::same_as<decltype(Range{} | tf::data::reduce(std::int64_t{0},
                                                     [](std::int64_t s, const I64&) { return s; })),
                 std::int64_t>);

// from_range's element types
template <class R>
using from_range_element_t = tf::data::element_t<decltype(tf::data::from_range(std::declval<R>()))>;
static_assert(std::same_as<from_range_element_t<std::vector<float>>, tf::Tensor<float, 0>>);
static_assert(std::same_as<from_range_element_t<const std::vector<bool>&>, tf::Tensor<bool, 0>>);
static_assert(std::same_as<from_range_element_t<std::list<std::string>&>, S0>);
static_assert(std::same_as<from_range_element_t<std::vector<F2>>, F2>);
static_assert(std::same_as<from_range_element_t<std::vector<std::tuple<F2, std::int32_t>>>,
                           std::tuple<F2, tf::Tensor<std::int32_t, 0>>>);
static_assert(std::same_as<from_range_element_t<std::map<std::string, double>&>,
                           std::pair<S0, tf::Tensor<double, 0>>>);
static_assert(
    std::same_as<from_range_element_t<std::vector<tf::data::Features>>, tf::data::Features>);
// other integers: int32 when signed and at most 32 bits wide, else int64
static_assert(
    std::same_as<from_range_element_t<std::vector<std::size_t>>, tf::Tensor<std::int64_t, 0>>);
static_assert(std::same_as<from_range_element_t<std::vector<short>>, tf::Tensor<std::int32_t, 0>>);
static_assert(
    std::same_as<from_range_element_t<std::vector<long long>>, tf::Tensor<std::int64_t, 0>>);
// a dataset given to from_range is returned as it is
static_assert(std::same_as<decltype(tf::data::from_range(Range{})), Range>);

}  // namespace
