// The compile-time benchmark's baseline: a translation unit that includes
// what any threaded C++ program does (<vector>, <string>, <thread>,
// <functional>) and uses each a little.  The armi translation units are
// timed against it in the same run (measure.py).
#include <functional>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::function<std::size_t()> count = [&] { return args.size(); };
  std::size_t n = 0;
  std::thread t([&] { n = count(); });
  t.join();
  return n == args.size() ? 0 : 1;
}
