// armi's pAlgorithms over the pContainers.  The umbrella header; it only
// includes.  See README.md, "Containers and algorithms".
#pragma once

#include <armi/algorithms/accumulate.hpp>
#include <armi/algorithms/bfs.hpp>
#include <armi/algorithms/bfs_validate.hpp>
#include <armi/algorithms/for_each.hpp>
#include <armi/algorithms/lu.hpp>
#include <armi/algorithms/prefix_sum.hpp>
#include <armi/algorithms/random_updates.hpp>
#include <armi/algorithms/sample_sort.hpp>
#include <armi/algorithms/scc.hpp>
