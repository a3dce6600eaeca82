#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace pos::http {

/// A few threads for PBKDF2 (about 0.25 s a check), so that password checks block neither the I/O threads nor
/// the database workers. `verify` resumes the awaiting coroutine on its own executor. Destroy it before the
/// io_context whose coroutines await it (pending checks finish first). At most `max_pending` logins hold a
/// place (checking or waiting for a thread) at a time: the rest are refused at once (503 busy), so that a flood
/// of logins queues no unbounded work. try_acquire is thread-safe.
class PasswordWorker {
public:
    /// One login's place; gives it back when destroyed.
    class Place {
    public:
        explicit Place(std::atomic<std::size_t>& pending) : pending_(&pending) {}
        Place(Place&& other) noexcept : pending_(std::exchange(other.pending_, nullptr)) {}
        Place& operator=(Place&&) = delete;
        Place(const Place&) = delete;
        Place& operator=(const Place&) = delete;
        ~Place() {
            if (pending_ != nullptr) pending_->fetch_sub(1);
        }

    private:
        std::atomic<std::size_t>* pending_;
    };

    PasswordWorker(std::size_t threads, std::size_t max_pending);
    ~PasswordWorker();
    PasswordWorker(const PasswordWorker&) = delete;
    PasswordWorker& operator=(const PasswordWorker&) = delete;

    /// verify_password(password, encoded) on a worker thread; with an empty `encoded` (unknown user),
    /// dummy_verify(password), which takes as long and answers false.
    boost::asio::awaitable<bool> verify(std::string password, std::string encoded);

    /// A place for one login, or nothing when `max_pending` logins hold one.
    std::optional<Place> try_acquire();

private:
    boost::asio::thread_pool pool_;
    std::size_t max_pending_;
    std::atomic<std::size_t> pending_{0};
};

}  // namespace pos::http
