#include "pos/http/password_worker.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/crypto/password.hpp"

namespace pos::http {
namespace {

// Runs on the worker pool; state comes in as by-value parameters (GCC 12: no capturing coroutine lambdas).
boost::asio::awaitable<bool> verify_on_worker(std::string password, std::string encoded) {
    co_return encoded.empty() ? common::crypto::dummy_verify(password)
                              : common::crypto::verify_password(password, encoded);
}

}  // namespace

PasswordWorker::PasswordWorker(std::size_t threads, std::size_t max_pending)
    : pool_(threads == 0 ? 1 : threads), max_pending_(max_pending == 0 ? 1 : max_pending) {}

std::optional<PasswordWorker::Place> PasswordWorker::try_acquire() {
    std::size_t now = pending_.load();
    do {
        if (now >= max_pending_) return std::nullopt;
    } while (!pending_.compare_exchange_weak(now, now + 1));
    return Place(pending_);
}

PasswordWorker::~PasswordWorker() { pool_.join(); }

boost::asio::awaitable<bool> PasswordWorker::verify(std::string password, std::string encoded) {
    auto task = verify_on_worker(std::move(password), std::move(encoded));
    co_return co_await boost::asio::co_spawn(pool_.get_executor(), std::move(task), boost::asio::use_awaitable);
}

}  // namespace pos::http
