#include "common/http/client/connection.hpp"

#include <poll.h>

#include <boost/asio/ssl/context.hpp>

namespace common::http::detail {

Connection::Connection(const boost::asio::any_io_executor& ex, std::shared_ptr<boost::asio::ssl::context> context,
                       std::shared_ptr<std::atomic<std::size_t>> open_counter)
    : ctx(std::move(context)), counter_(std::move(open_counter)) {
    if (ctx)
        tls = std::make_unique<TlsStream>(ex, *ctx);
    else
        plain = std::make_unique<tcp::socket>(ex);
}

Connection::~Connection() {
    boost::system::error_code ignored;
    socket().close(ignored);
    if (counted_) counter_->fetch_sub(1);
}

void Connection::mark_open() {
    if (counted_) return;
    counted_ = true;
    counter_->fetch_add(1);
}

bool Connection::quiet() {
    if (!socket().is_open()) return false;
    pollfd p{socket().native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
}

}  // namespace common::http::detail
