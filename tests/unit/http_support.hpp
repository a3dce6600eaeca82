#pragma once
// Helpers shared by the [http] tests: an io_context on threads, an in-process Server on 127.0.0.1:0, throwaway
// certificates from deploy/make-cert.sh, and a blocking bridge to Client::send.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/http/client.hpp"
#include "common/http/message.hpp"
#include "common/http/server.hpp"

namespace http_test {

namespace fs = std::filesystem;

/// An io_context run by `threads` threads until destroyed.
struct Loop {
    explicit Loop(int threads = 2) : guard(boost::asio::make_work_guard(ioc)) {
        for (int i = 0; i < threads; ++i) workers.emplace_back([this] { ioc.run(); });
    }
    ~Loop() {
        guard.reset();
        ioc.stop();
        for (auto& t : workers) t.join();
    }
    boost::asio::io_context ioc;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
    std::vector<std::thread> workers;
};

/// The server's own refusals as {"code": ...}.
inline common::http::Response render_error(std::string_view, unsigned status, std::string_view code, std::string_view) {
    return common::http::json_response(status, boost::json::object{{"code", code}});
}

/// A started Server on 127.0.0.1 with a free port; stopped when destroyed.
struct TestServer {
    /// `io_threads`: as Server's (0: not known); 1 only with a Loop(1).
    TestServer(Loop& loop, common::http::Handler handler, common::http::Limits limits = {},
               std::optional<common::http::TlsFiles> tls = std::nullopt, std::size_t io_threads = 0)
        : server(loop.ioc, {"127.0.0.1", 0}, limits, std::move(handler), render_error, {}, std::move(tls), io_threads) {
        server.start();
    }
    ~TestServer() { server.stop(); }
    std::string url(const std::string& path = "/", bool https = false, const std::string& host = "127.0.0.1") const {
        return std::string(https ? "https" : "http") + "://" + host + ":" + std::to_string(server.port()) + path;
    }
    common::http::Server server;
};

/// Sends from a coroutine on the loop and waits for the result.
inline common::http::ClientResult send(Loop& loop, common::http::Client& client, common::http::ClientRequest r) {
    return boost::asio::co_spawn(loop.ioc, client.send(std::move(r)), boost::asio::use_future).get();
}

/// Polls `done` until it holds or 10 s pass (a bound against hangs, never a pass/fail criterion on speed).
inline bool eventually(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

/// A throwaway CA, a localhost/127.0.0.1 certificate and a wrong.example one, made once per test process by
/// deploy/make-cert.sh in a temporary folder that is removed at exit.
struct Certs {
    fs::path dir;
    std::string ca() const { return (dir / "ca.pem").string(); }
    common::http::TlsFiles server() const { return {(dir / "server.pem").string(), (dir / "server.key").string()}; }
    common::http::TlsFiles wrong() const { return {(dir / "wrong.pem").string(), (dir / "wrong.key").string()}; }

    static const Certs& get() {
        static Certs certs;
        return certs;
    }
    Certs(const Certs&) = delete;
    Certs& operator=(const Certs&) = delete;
    ~Certs() {
        std::error_code ignored;
        if (!dir.empty()) fs::remove_all(dir, ignored);
    }

private:
    Certs() {
        const fs::path root = fs::path(__FILE__).parent_path().parent_path().parent_path();
        std::string tmpl = (fs::temp_directory_path() / "orderhub-certs-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        dir = tmpl;
        const std::string cmd =
            "bash '" + (root / "deploy" / "make-cert.sh").string() + "' '" + dir.string() + "' >/dev/null";
        if (std::system(cmd.c_str()) != 0) throw std::runtime_error("deploy/make-cert.sh failed");
    }
};

}  // namespace http_test
