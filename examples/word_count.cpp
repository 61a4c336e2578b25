// word_count — counts the words of a generated corpus in a
// punordered_map<std::string, std::size_t>, one update per word.
//
// The corpus is --words words long; word i is drawn from a vocabulary of
// --vocabulary words with Zipf-like frequencies (rank r about as likely as
// 1/r, as in natural text), from a hash of (seed, i) alone.  Location l
// reads the l-th block of it, so the counts do not depend on the number of
// locations.  Every location then
//
//   counts.update(word, armi::plus_op{}, 1);      // one aggregated async_rmi to word's owner
//
// and after a fence the most frequent words are found with one
// allreduce_rmi that merges every location's local top list.  With
// --verify-max or fewer words, location 0 recounts the whole corpus
// sequentially into a std::unordered_map and every count is compared.
//
//   ./word_count --armi-locations=4 --words=2000000
//   mpiexec -n 2 ./word_count --armi-backend=mpi
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.
#include "example_flags.hpp"

#include <armi/armi.hpp>
#include <armi/containers/punordered_map.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using u64 = std::uint64_t;
using word_counts = armi::punordered_map<std::string, std::size_t>;
using ranking = std::vector<std::pair<std::string, std::size_t>>;  // most frequent first

constexpr std::size_t top_n = 10;

u64 mix(u64 x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The word of rank r: syllables spelled from r's digits in base 20, so
// distinct ranks give distinct words.
std::string spell(u64 r) {
  static constexpr char const* syllables[] = {"ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "va", "ze",
                                              "bo", "da", "fi", "gu", "he", "ja", "ke", "li", "mo", "ny"};
  std::string w;
  do {
    w += syllables[r % 20];
    r /= 20;
  } while (r != 0);
  return w;
}

// Word i of the corpus: rank floor(V^u) - 1 for u uniform in [0, 1), whose
// probability falls as 1/rank.
std::string corpus_word(u64 seed, u64 vocabulary, u64 i) {
  double const u = static_cast<double>(mix(seed * 0x9E3779B97F4A7C15ULL + i) >> 11) * 0x1p-53;
  u64 const rank = std::min<u64>(static_cast<u64>(std::pow(static_cast<double>(vocabulary), u)), vocabulary) - 1;
  return spell(rank);
}

bool more_frequent(std::pair<std::string, std::size_t> const& a, std::pair<std::string, std::size_t> const& b) {
  return a.second != b.second ? a.second > b.second : a.first < b.first;
}

ranking top_of(ranking r) {
  std::sort(r.begin(), r.end(), more_frequent);
  if (r.size() > top_n) r.resize(top_n);
  return r;
}

// The most frequent words: each location ranks the words it owns, and one
// allreduce_rmi merges the lists (a word lives on one location only, so
// merging lists is exact).
class top_words : public armi::p_object {
 public:
  explicit top_words(word_counts const& counts) : m_counts(&counts) {}

  ranking all() const {
    return armi::allreduce_rmi(get_rmi_handle(), &top_words::local_top, [](ranking a, ranking const& b) {
      a.insert(a.end(), b.begin(), b.end());
      return top_of(std::move(a));
    });
  }

 private:
  ranking local_top() const { return top_of(ranking(m_counts->local().begin(), m_counts->local().end())); }

  word_counts const* m_counts;
};

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "word_count", "counts the words of a generated corpus in a punordered_map");
  u64 const words = f.size("words", 1'000'000, "words in the corpus (all locations)");
  u64 const vocabulary = f.size("vocabulary", 50'000, "distinct words the corpus draws from");
  u64 const seed = f.size("seed", 1, "random seed");
  u64 const verify_max = f.size("verify-max", 4'000'000, "recount sequentially up to this many words");
  if (auto const status = f.finish()) return *status;
  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  if (vocabulary == 0) {
    if (me == 0) fmt::print(stderr, "word_count: error: --vocabulary must be at least 1\n");
    return 2;
  }

  u64 const first = words * me / p, last = words * (me + 1) / p;
  std::vector<std::string> text;
  text.reserve(last - first);
  for (u64 i = first; i < last; ++i) text.push_back(corpus_word(seed, vocabulary, i));

  word_counts counts;
  auto const t0 = std::chrono::steady_clock::now();
  for (std::string const& w : text) counts.update(w, armi::plus_op{}, 1);
  armi::rmi_fence();
  auto const t1 = std::chrono::steady_clock::now();
  std::size_t const distinct = counts.size();
  top_words const top(counts);
  ranking const best = top.all();

  int failures = 0;
  bool const verified = words <= verify_max;
  if (verified) {
    std::unordered_map<std::string, std::size_t> const all = counts.gather();  // small corpora only
    if (me == 0) {
      std::unordered_map<std::string, std::size_t> expect;
      for (u64 i = 0; i < words; ++i) ++expect[corpus_word(seed, vocabulary, i)];
      std::size_t wrong = all.size() == expect.size() ? 0 : 1;
      for (auto const& [w, c] : expect) {
        auto it = all.find(w);
        wrong += it == all.end() || it->second != c ? 1 : 0;
      }
      ranking const want = top_of(ranking(expect.begin(), expect.end()));
      if (wrong != 0 || want != best) {
        fmt::print(stderr, "word_count: check failed: {} counts differ from a sequential count{}\n", wrong,
                   want != best ? "; the top words differ" : "");
        ++failures;
      }
    }
  }

  if (me == 0) {
    double const secs = std::chrono::duration<double>(t1 - t0).count();
    fmt::print("word_count: {} words, {} distinct, {} location{}, aggregation {}\n", words, distinct, p,
               p == 1 ? "" : "s", armi_example::aggregation_text());
    fmt::print("  count: {:.6f} s, {:.2f} M words/s\n", secs, secs > 0 ? static_cast<double>(words) / secs / 1e6 : 0.0);
    for (auto const& [w, c] : best) fmt::print("  {:>12} {}\n", w, c);
    fmt::print("  {}: {}\n", verified ? "checked against a sequential count" : "not checked (--verify-max)",
               failures == 0 ? "OK" : "FAILED");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
