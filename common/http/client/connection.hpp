#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/http/client.hpp"

namespace boost::asio::ssl {
class context;
}

namespace common::http::detail {

/// One TCP (and maybe TLS) connection to a host. Used by one request at a time; between requests it sits in its
/// host's idle list (HostPools). Counted in `open_counter` from mark_open() until destroyed; closed when destroyed.
struct Connection {
    using tcp = boost::asio::ip::tcp;
    using TlsStream = boost::beast::ssl_stream<tcp::socket>;

    /// A TLS connection when `context` is set, else plain TCP.
    Connection(const boost::asio::any_io_executor& ex, std::shared_ptr<boost::asio::ssl::context> context,
               std::shared_ptr<std::atomic<std::size_t>> open_counter);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    tcp::socket& socket() { return tls ? tls->next_layer() : *plain; }
    /// The TCP connection is established: counted from now on.
    void mark_open();
    /// An idle connection must have nothing to read: pending bytes or an end of stream mean the server closed it
    /// (or sent something unasked), so it cannot carry another request.
    bool quiet();

    std::shared_ptr<boost::asio::ssl::context> ctx;  // declared before the stream: the SSL object refers to it
    std::unique_ptr<TlsStream> tls;
    std::unique_ptr<tcp::socket> plain;
    boost::beast::flat_buffer buffer;
    std::chrono::steady_clock::time_point idle_since{};

private:
    std::shared_ptr<std::atomic<std::size_t>> counter_;
    bool counted_ = false;
};

/// Why an attempt failed; `retryable` when the request cannot have reached the server on a reused connection.
struct Outcome {
    ClientFailure failure = ClientFailure::none;
    std::string error;
    bool retryable = false;
};

}  // namespace common::http::detail
