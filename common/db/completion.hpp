#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <exception>
#include <type_traits>
#include <utility>

namespace common::db {

/// How a coroutine waiting in await_completion is resumed, once: `complete(error, result)` from any thread posts the
/// resumption to the coroutine's executor; resume(error, result), called on that executor (executor()), resumes it
/// at once, so that whoever answers many waiters posts once for all of them (hub/ingest/pipe.cpp). Empty when
/// default-constructed; a plain function given as `resume` (tests) is called as it is. Move-only, as the coroutine's
/// handler it holds: one allocation, no shared count.
template <class Result>
class Completion {
public:
    using Handler = boost::asio::any_completion_handler<void(std::exception_ptr, Result)>;

    Completion() = default;
    Completion(Completion&&) noexcept = default;
    Completion& operator=(Completion&& other) noexcept {
        // Not any_completion_handler's own: Boost 1.81's wraps its source in a new handler instead of moving it.
        Handler taken(std::move(other.resume_));
        resume_.swap(taken);  // the handler held before goes with `taken`
        executor_ = std::move(other.executor_);
        return *this;
    }
    template <class F>
    requires std::is_invocable_v<F&, std::exception_ptr, Result> Completion(
        F resume, boost::asio::any_io_executor executor = {})  // NOLINT(google-explicit-constructor)
        : resume_(std::move(resume)), executor_(std::move(executor)) {}

    /// Resumes the coroutine on its executor (a post), or calls `resume` where it has none.
    void operator()(std::exception_ptr error, Result result) {
        if (!executor_) {
            resume(error, std::move(result));
            return;
        }
        boost::asio::post(executor_, [resume = std::move(resume_), error, r = std::move(result)]() mutable {
            resume(error, std::move(r));
        });
    }

    /// Resumes the coroutine here and now: the caller runs on executor(). The completion is used up (the coroutine's
    /// executor no longer counts it as work), as by a post.
    void resume(std::exception_ptr error, Result result) {
        auto once = std::move(resume_);
        once(error, std::move(result));
    }

    /// The waiting coroutine's executor (empty for a plain function).
    const boost::asio::any_io_executor& executor() const { return executor_; }

    explicit operator bool() const { return static_cast<bool>(resume_); }

private:
    Handler resume_;
    boost::asio::any_io_executor executor_;
};

}  // namespace common::db
