// The histogram of docs/design.md section 1, built against an installed armi.
// Exits 0 iff every RMI was counted exactly once.
#include <armi/armi.hpp>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

class histogram : public armi::p_object {
 public:
  explicit histogram(std::size_t bins) : counts_(bins) {}
  void add(std::size_t bin) { ++counts_[bin]; }
  std::size_t total() const { return std::reduce(counts_.begin(), counts_.end()); }

 private:
  std::vector<std::size_t> counts_;
};

int main(int argc, char** argv) {
  return armi::execute(argc, argv, []() -> int {
    constexpr std::size_t per_location = 10'000;
    histogram h(64);
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    for (std::size_t i = 0; i < per_location; ++i)
      armi::async_rmi((me + i) % n, h.get_rmi_handle(), &histogram::add, i % 64);
    armi::rmi_fence();

    armi::future<std::size_t> f = armi::opaque_rmi(n - 1, h.get_rmi_handle(), &histogram::total);
    while (!f.ready()) armi::rmi_poll();
    std::size_t const last = f.get();
    std::size_t const first = armi::sync_rmi(0, h.get_rmi_handle(), &histogram::total);
    std::size_t const sum = armi::reduce_rmi(h.get_rmi_handle(), &histogram::total, std::plus<>{});
    armi::rmi_fence();
    if (me == 0) armi::broadcast_rmi(h.get_rmi_handle(), &histogram::add, std::size_t{0});
    armi::rmi_fence();
    std::size_t const after = armi::allreduce_rmi(h.get_rmi_handle(), &histogram::total, std::plus<>{});

    std::size_t const expected = per_location * n;
    bool const ok = sum == expected && after == expected + n && first == per_location &&
                    last == per_location;
    if (me == 0 || !ok)
      std::printf("location %u of %u: total %zu (expected %zu), after broadcast %zu (expected %zu)%s\n",
                  static_cast<unsigned>(me), static_cast<unsigned>(n), sum, expected, after,
                  expected + n, ok ? "" : " WRONG");
    return ok ? 0 : 1;
  });
}
