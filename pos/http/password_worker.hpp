#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <string>

namespace pos::http {

/// A few threads for PBKDF2 (about 0.25 s a check), so that password checks block neither the I/O threads nor
/// the database workers. `verify` resumes the awaiting coroutine on its own executor. Destroy it before the
/// io_context whose coroutines await it (pending checks finish first).
class PasswordWorker {
public:
    explicit PasswordWorker(std::size_t threads);
    ~PasswordWorker();
    PasswordWorker(const PasswordWorker&) = delete;
    PasswordWorker& operator=(const PasswordWorker&) = delete;

    /// verify_password(password, encoded) on a worker thread; with an empty `encoded` (unknown user),
    /// dummy_verify(password), which takes as long and answers false.
    boost::asio::awaitable<bool> verify(std::string password, std::string encoded);

private:
    boost::asio::thread_pool pool_;
};

}  // namespace pos::http
