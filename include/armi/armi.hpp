// armi: fine-grain parallel programming by remote method invocation.
// The umbrella header; it only includes.  See docs/design.md for the model.
#pragma once

/// @namespace armi
/// @brief armi: fine-grain parallel programming by remote method invocation.
///
/// A program calls armi::execute, which runs its body on every *location* (a thread, an MPI
/// rank's thread, or an emulated SP2 node).  Locations share *p_objects*: one instance per
/// location under a common handle.  Methods of a p_object run on any location through RMIs
/// (async_rmi, sync_rmi, opaque_rmi, broadcasts, reductions), which the runtime aggregates
/// into buffers; rmi_fence and the collectives make every request done.  Names in
/// armi::detail are the implementation and may change without notice.

#include <armi/config.hpp>
#include <armi/execute.hpp>
#include <armi/future.hpp>
#include <armi/global_array.hpp>
#include <armi/global_ptr.hpp>
#include <armi/group.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>
#include <armi/view.hpp>
#include <armi/when_all.hpp>
#include <armi/runtime/options.hpp>
#include <armi/serialization/serialize.hpp>
