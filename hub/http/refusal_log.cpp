#include "hub/http/refusal_log.hpp"

#include "common/log/log.hpp"

namespace hub::http {

void UnknownKeyLog::count(std::string_view request_id) {
    std::lock_guard lock(mutex_);
    if (count_++ == 0) first_request_id_.assign(request_id);
}

std::uint64_t UnknownKeyLog::flush() {
    std::uint64_t n = 0;
    std::string first;
    const auto now = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point since;
    {
        std::lock_guard lock(mutex_);
        n = count_;
        since = since_;
        since_ = now;
        count_ = 0;
        first.swap(first_request_id_);
    }
    if (n == 0) return 0;
    common::log::write(common::log::Level::info, "requests refused",
                       {{"route", "/webhooks/{key}"},
                        {"status", 404},
                        {"outcome", "unknown_key"},
                        {"count", n},
                        {"period_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count()},
                        {"first_request_id", first}});
    return n;
}

void UnknownKeyLog::start(boost::asio::io_context& ioc) {
    timer_.emplace(ioc);
    schedule();
}

void UnknownKeyLog::schedule() {
    timer_->expires_after(kPeriod);
    timer_->async_wait([this](boost::system::error_code ec) {
        if (ec) return;
        flush();
        schedule();
    });
}

}  // namespace hub::http
