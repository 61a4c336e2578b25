// armi: fine-grain parallel programming by remote method invocation.
// The umbrella header; it only includes.  See docs/design.md for the model.
#pragma once

#include <armi/config.hpp>
#include <armi/execute.hpp>
#include <armi/future.hpp>
#include <armi/group.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>
#include <armi/runtime/options.hpp>
#include <armi/serialization/serialize.hpp>
