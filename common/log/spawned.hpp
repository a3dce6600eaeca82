#pragma once

#include <exception>

#include "common/log/log.hpp"

namespace common::log {

/// The completion handler of every `co_spawn` whose result nobody awaits: an exception that escaped the coroutine
/// is logged as an error line `what` with its message, never lost (as `asio::detached` would lose it). `what` must
/// outlive the handler (a string literal).
inline auto on_failure(const char* what) {
    return [what](const std::exception_ptr& e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            error(what, {{"error", ex.what()}});
        } catch (...) {
            error(what, {{"error", "unknown exception"}});
        }
    };
}

}  // namespace common::log
