// The hub's HTTP request path end to end: each input is written as a raw byte stream over a loopback TCP
// connection to a real common::http::Server (Beast's parser, the hub's limits and error rendering) whose handler
// is the hub's real router, hub::http::Routes, as `orderhub serve --role forwarder` builds it: no webhook
// handler (webhook URLs answer 404) and a database pool. The pool points at a Unix socket that does not exist,
// so /readyz answers 503 as when PostgreSQL is down; nothing else touches it.
//
// After writing the input the client half-closes the connection and reads until the server closes (every
// request was answered or refused, or the stream ended mid-request). Checked beyond sanitizer findings:
//   - the server closes within kAnswerTimeout (a wedged connection is a finding) and releases it;
//   - every answer is a complete HTTP/1.1 response with a status the hub may send (never 500, which means a
//     handler threw), exactly one per request that the session's read loop, replayed on the input, accepts,
//     plus one refusal for a malformed or over-limit request;
//   - a HEAD request is answered without a body (the client parses the answers the way a client would).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/db/pool.hpp"
#include "common/http/server.hpp"
#include "hub/http/routes.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using fuzz::require;

constexpr std::chrono::seconds kAnswerTimeout{5};
constexpr std::uint32_t kFirstClientAddress = 0x7f000101;  // 127.0.1.1
constexpr std::uint32_t kClientAddresses = 64;

// The hub's limits, except that headers and bodies are bounded at 2 KiB instead of 16 KiB and 1 MiB, so that
// inputs of libFuzzer's usual length reach the 431 and 413 refusals (the code paths do not depend on the values).
common::http::Limits limits() {
    common::http::Limits l;
    l.max_header = 2048;
    l.max_body = 2048;
    return l;
}

/// The listener and its router, started once and never destroyed (the fuzzer exits with them running).
struct Hub {
    Hub()
        : guard(asio::make_work_guard(ioc)),
          pool({.url = "postgresql:///orderhub?host=/nonexistent/orderhub-fuzz", .workers = 1}),
          routes(pool, nullptr),
          server(ioc, {"127.0.0.1", 0}, limits(), routes.handler(), hub::http::render_error, {}, std::nullopt,
                 1) {  // one thread runs ioc, as in orderhub serve: connections without strands
        server.start();
        thread = std::thread([this] { ioc.run(); });
    }

    asio::io_context ioc;
    asio::executor_work_guard<asio::io_context::executor_type> guard;
    common::db::Pool pool;
    hub::http::Routes routes;
    common::http::Server server;
    std::thread thread;
};

Hub& hub_instance() {
    static Hub* hub = new Hub();  // intentionally never deleted: see Hub
    return *hub;
}

/// The input as the server's socket shows it: all of it at once (one send() on loopback), then the end of the
/// stream. A SyncReadStream.
class InputStream {
public:
    explicit InputStream(std::string_view data) : data_(data) {}

    template <class Buffers>
    std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
        if (data_.empty()) {
            ec = asio::error::eof;
            return 0;
        }
        ec = {};
        const std::size_t n = asio::buffer_copy(buffers, asio::buffer(data_.data(), data_.size()));
        data_.remove_prefix(n);
        return n;
    }

    template <class Buffers>
    std::size_t read_some(const Buffers& buffers) {
        boost::system::error_code ec;
        const std::size_t n = read_some(buffers, ec);
        if (ec) throw boost::system::system_error(ec);
        return n;
    }

private:
    std::string_view data_;
};

/// The answers the server owes for `input`, in order, each with whether its request line said HEAD (the answer
/// then has no content): found by reading `input` exactly as the session does (one buffer for the connection,
/// a fresh parser with the same limits per request, Beast's read loop and read sizes, and while the connection
/// waits for a request, one read of common::http::kIdleReadBytes before the parser). That matters: Beast's
/// verdict depends on how the bytes are cut into reads. A header that never ends is refused at once when a bad
/// field arrives in the same read as the request line, otherwise the parser waits for more; and the header limit
/// is soft, a header up to about twice the limit passes when earlier reads let the parser consume whole lines.
std::vector<bool> expected_answers(std::string_view input) {
    const common::http::Limits l = limits();
    InputStream stream(input);
    beast::flat_buffer buffer;
    std::vector<bool> head;
    for (;;) {
        if (buffer.size() == 0) {
            // The session waits for the next request by reading (an end of stream there closes without an answer).
            boost::system::error_code ec;
            buffer.commit(stream.read_some(buffer.prepare(common::http::kIdleReadBytes), ec));
            if (ec || buffer.size() == 0) break;
        }
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(l.max_header));
        parser.body_limit(l.max_body);
        boost::system::error_code ec;
        bhttp::read(stream, buffer, parser, ec);
        if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) break;  // nothing to answer
        head.push_back(parser.get().method() == bhttp::verb::head);
        if (ec || !parser.get().keep_alive()) break;  // a refusal, or an answer that closes the connection
    }
    return head;
}

/// Sends `input`, half-closes, and reads until the server closes. `reset` tells a reset from an orderly close.
std::string exchange(std::uint16_t port, std::string_view input, bool& reset) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    require(fd >= 0, "socket()");
    timeval tv{};
    tv.tv_sec = kAnswerTimeout.count();
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    // The client half-closes first, so each of its connections ends in TIME_WAIT for a minute: spread them over
    // kClientAddresses loopback source addresses, or a long run would use up the ephemeral ports of one.
    static std::uint32_t next_client = 0;
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(kFirstClientAddress + next_client++ % kClientAddresses);
    const int defer_port = 1;  // the port is chosen by connect(), for the whole address pair
    ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &defer_port, sizeof defer_port);
    require(::bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) == 0, "bind() a loopback address");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int error = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
    if (error == EINTR) {
        // libFuzzer's -timeout alarm interrupted connect(); the connection completes on its own.
        pollfd p{fd, POLLOUT, 0};
        while (::poll(&p, 1, static_cast<int>(kAnswerTimeout.count() * 1000)) < 0 && errno == EINTR) {
        }
        socklen_t size = sizeof error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    }
    if (error != 0) std::fprintf(stderr, "connect(): %s\n", std::strerror(error));
    require(error == 0, "connect() to the hub");

    // The server may refuse (and close) before reading everything: EPIPE and ECONNRESET end the sending.
    for (std::size_t sent = 0; sent < input.size();) {
        const ssize_t n = ::send(fd, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        require(!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)), "the hub stopped reading without closing");
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);

    std::string answer;
    reset = false;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n > 0) {
            answer.append(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        require(!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)), "the hub did not close the connection in time");
        reset = n < 0;
        break;
    }
    ::close(fd);
    return answer;
}

bool allowed_status(unsigned status) {
    switch (status) {
        case 200:
        case 400:
        case 404:
        case 405:
        case 408:
        case 413:
        case 431:
        case 503: return true;
        default: return false;
    }
}

/// Prints the whole answer before an invariant fails, so that a report shows what the hub sent.
void require_answer(bool holds, std::string_view what, std::string_view answer) {
    if (!holds)
        std::fprintf(stderr, "hub answer (%zu bytes):\n%.*s\n", answer.size(), static_cast<int>(answer.size()),
                     answer.data());
    require(holds, what);
}

/// `head` is what expected_answers() found. A reset (the server closed with input unread) may lose answers.
void check_answers(std::string_view answer, bool reset, const std::vector<bool>& head) {
    const std::string_view whole = answer;
    std::size_t count = 0;
    while (!answer.empty()) {
        require_answer(answer.starts_with("HTTP/1.1 "), "every answer starts with HTTP/1.1", whole);
        bhttp::response_parser<bhttp::string_body> parser;
        parser.eager(true);
        parser.skip(count < head.size() && head[count]);
        boost::system::error_code ec;
        while (!parser.is_done() && !answer.empty()) {
            const std::size_t used = parser.put(asio::buffer(answer.data(), answer.size()), ec);
            answer.remove_prefix(used);
            if (ec == bhttp::error::need_more && used > 0) {
                ec = {};
                continue;
            }
            if (ec) break;
        }
        if (!parser.is_done()) {
            // Only a reset may cut the last answer short (the kernel drops what it had not sent yet).
            require_answer(reset && (!ec || ec == bhttp::error::need_more), "every answer is a complete HTTP response",
                           whole);
            break;
        }
        require_answer(allowed_status(parser.get().result_int()),
                       "the status is one the hub sends (500: a handler threw)", whole);
        require_answer(parser.get().has_content_length() || parser.get().chunked() || parser.get().body().empty(),
                       "answers are delimited", whole);
        ++count;
    }
    require_answer(reset ? count <= head.size() : count == head.size(), "one answer per request", whole);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    hub_instance();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Hub& hub = hub_instance();
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    bool reset = false;
    const std::string answer = exchange(hub.server.port(), input, reset);
    check_answers(answer, reset, expected_answers(input));

    // The connection is released shortly after the server closed it; a session that never ends is a leak.
    const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
    while (hub.server.connections() != 0) {
        require(std::chrono::steady_clock::now() < deadline, "the hub released the connection");
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    return 0;
}
