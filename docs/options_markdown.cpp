// Prints armi's options table as Markdown (detail::options_markdown()), the
// table docs/guide/options.md holds between its options markers.  Run by
// the armi_options_doc target (docs/splice_options.cmake).
#include <armi/runtime/options.hpp>

#include <cstdio>

int main() {
  std::fputs(armi::detail::options_markdown().c_str(), stdout);
  return 0;
}
