// armi's pContainers: one sub-container per location, reached through RMI.
// The umbrella header; it only includes.  See README.md, "Containers and
// algorithms".
#pragma once

#include <armi/containers/distribution.hpp>
#include <armi/containers/graph_generators.hpp>
#include <armi/containers/kronecker.hpp>
#include <armi/containers/node_hash_map.hpp>
#include <armi/containers/node_hash_set.hpp>
#include <armi/containers/operations.hpp>
#include <armi/containers/parray.hpp>
#include <armi/containers/pbag.hpp>
#include <armi/containers/pdisjoint_set.hpp>
#include <armi/containers/pgraph.hpp>
#include <armi/containers/pmatrix.hpp>
#include <armi/containers/punordered_map.hpp>
#include <armi/containers/punordered_set.hpp>
#include <armi/containers/pvector.hpp>
#include <armi/containers/save_load.hpp>
#include <armi/containers/visitor.hpp>
