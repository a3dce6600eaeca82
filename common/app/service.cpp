#include "common/app/service.hpp"

#include <dlfcn.h>
#include <malloc.h>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <csignal>
#include <fstream>
#include <thread>

#include "common/cli/cli.hpp"
#include "common/http/tls.hpp"
#include "common/log/log.hpp"
#include "common/log/spawned.hpp"

namespace common::app {

config::OptionSpec database_option(const std::string& prefix) {
    return {
        .name = "database-url", .env = prefix + "_DATABASE_URL", .help = "libpq connection URI", .placeholder = "URL"};
}

namespace {

// name, env after the prefix, placeholder, default, help: the options behind ServiceConfig after --database-url.
constexpr std::array<config::OptionRow, 10> kServiceOptions{{
    {"listen", "LISTEN", "ADDR", std::nullopt, "listen address"},
    {"max-body-bytes", "MAX_BODY_BYTES", "N", "1048576", "larger bodies get 413"},
    {"request-timeout", "REQUEST_TIMEOUT_MS", "MS", "30000", "milliseconds a client has to send a whole request"},
    {"max-connections", "MAX_CONNECTIONS", "N", "4096", "open connections at most"},
    {"io-threads", "IO_THREADS", "N", "1", "network threads"},
    {"io-uring", "IO_URING", "MODE", "auto",
     "auto: with one network thread and plain HTTP, the answers and reads of a burst take one io_uring call where the "
     "host allows it; off: one system call each"},
    {"db-workers", "DB_WORKERS", "N", "4", "database connections and threads"},
    {"log-format", "LOG_FORMAT", "FORMAT", "json", "json or text"},
    {"tls-cert", "TLS_CERT", "FILE", std::nullopt, "PEM certificate chain: serve HTTPS (TLS 1.2+) with --tls-key"},
    {"tls-key", "TLS_KEY", "FILE", std::nullopt, "PEM private key of --tls-cert"},
}};

}  // namespace

std::vector<config::OptionSpec> service_options(const std::string& prefix, const std::string& default_listen) {
    auto specs = config::option_specs(kServiceOptions, prefix);
    for (auto& spec : specs) {
        if (spec.name == "listen") spec.default_value = default_listen;
        // Both programs read the one ORDERHUB_LOG_FORMAT.
        if (spec.name == "log-format") spec.env = "ORDERHUB_LOG_FORMAT";
    }
    specs.insert(specs.begin(), database_option(prefix));
    return specs;
}

std::string require_database_url(const config::ParsedArgs& args, const std::string& prefix) {
    auto url = args.get("database-url");
    if (!url || url->empty())
        throw cli::UserError(prefix +
                             "_DATABASE_URL is not set: give a libpq URI such as "
                             "postgresql://user@127.0.0.1:5432/db (or --database-url)");
    return *url;
}

bool keep_freed_memory(const config::EnvLookup& env) {
#if defined(__GLIBC__)
    constexpr int kKeptFreeBytes = 16 << 20;
    constexpr int kMmapBytes = 4 << 20;
    if (const auto tunables = env("GLIBC_TUNABLES"); tunables && tunables->find("glibc.malloc.") != std::string::npos)
        return false;
    // Linked with tcmalloc (ORDERHUB_TCMALLOC), malloc is not glibc's: its mallopt takes and ignores the settings,
    // and its page heap keeps freed spans and hands them back gradually on its own.
    if (::dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty") != nullptr) return false;
    // The trim threshold alone would also fix the mmap threshold at its 128 KB default (mallopt turns the dynamic
    // one off): a large batch's text would then be mapped and unmapped every time instead.
    return mallopt(M_MMAP_THRESHOLD, kMmapBytes) == 1 && mallopt(M_TRIM_THRESHOLD, kKeptFreeBytes) == 1;
#else
    (void)env;
    return false;
#endif
}

bool bound_thread_caches(const config::EnvLookup& env) {
    // Looked up, not linked: the common library serves binaries with and without tcmalloc (the tests, sanitizers).
    using SetProperty = int (*)(const char*, std::size_t);
    void* const symbol = ::dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty");
    if (symbol == nullptr || env("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES")) return false;
    const auto set = reinterpret_cast<SetProperty>(symbol);  // NOLINT: dlsym's documented use
    return set("tcmalloc.max_total_thread_cache_bytes", kThreadCacheBytes) == 1;
}

void apply_log_format(const config::ParsedArgs& args) {
    log::Format f = log::Format::json;
    if (auto v = args.get("log-format"); v && !log::parse_format(*v, f))
        throw cli::UserError("log format must be 'json' or 'text', got '" + *v + "'");
    log::set_format(f);
}

namespace {

/// --tls-cert and --tls-key: both or neither; the files are loaded once here so that a bad pair is a one-line
/// user error at start-up rather than a failure of the listener.
std::optional<http::TlsFiles> tls_files(const config::ParsedArgs& args, const std::string& prefix) {
    auto cert = args.get("tls-cert").value_or("");
    auto key = args.get("tls-key").value_or("");
    if (cert.empty() && key.empty()) return std::nullopt;
    if (cert.empty() || key.empty())
        throw cli::UserError("HTTPS needs both " + prefix + "_TLS_CERT and " + prefix +
                             "_TLS_KEY (--tls-cert and --tls-key), or neither");
    for (const auto& [file, what] : {std::pair{cert, "certificate"}, std::pair{key, "private key"}}) {
        std::ifstream in(file);
        if (!in) throw cli::UserError(std::string("cannot read the TLS ") + what + " file '" + file + "'");
    }
    http::TlsFiles files{cert, key};
    try {
        (void)http::make_server_tls_context(files);
    } catch (const std::exception& e) {
        throw cli::UserError(e.what());
    }
    return files;
}

}  // namespace

std::uint64_t number_setting(const config::ParsedArgs& args, const std::string& name, std::uint64_t min,
                             std::uint64_t max) {
    std::string error;
    auto v = config::parse_uint(args.get(name).value_or(""), min, max, "--" + name, error);
    if (!v) throw cli::UserError(error);
    return *v;
}

std::chrono::seconds duration_setting(const config::ParsedArgs& args, const std::string& name, std::chrono::seconds min,
                                      std::chrono::seconds max) {
    std::string error;
    auto v = config::parse_duration(args.get(name).value_or(""), min, max, "--" + name, error);
    if (!v) throw cli::UserError(error);
    return *v;
}

ServiceConfig service_config(const config::ParsedArgs& args, const std::string& prefix) {
    ServiceConfig c;
    std::string error;
    auto listen = config::parse_host_port(args.get("listen").value_or(""), error);
    if (!listen) throw cli::UserError(error);
    c.listen = *listen;
    c.database_url = require_database_url(args, prefix);
    c.limits.max_body = number_setting(args, "max-body-bytes", 1024, 64ull * 1024 * 1024);
    c.limits.request_timeout = std::chrono::milliseconds(number_setting(args, "request-timeout", 100, 600'000));
    c.limits.max_connections = number_setting(args, "max-connections", 1, 1'000'000);
    c.io_threads = number_setting(args, "io-threads", 1, 64);
    const auto io_uring = args.get("io-uring").value_or("auto");
    if (io_uring != "auto" && io_uring != "off")
        throw cli::UserError("--io-uring must be 'auto' or 'off', got '" + io_uring + "'");
    c.limits.burst_sends = io_uring == "auto";
    c.db_workers = number_setting(args, "db-workers", 1, 256);
    c.tls = tls_files(args, prefix);
    apply_log_format(args);
    return c;
}

namespace {

boost::asio::awaitable<void> drain(boost::asio::io_context& ioc, http::Server& server, std::function<bool()> busy,
                                   std::chrono::milliseconds grace) {
    boost::asio::steady_timer t(ioc);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while ((server.connections() > 0 || (busy && busy())) && std::chrono::steady_clock::now() < deadline) {
        t.expires_after(std::chrono::milliseconds(20));
        co_await t.async_wait(boost::asio::use_awaitable);
    }
    ioc.stop();
}

}  // namespace

int run_until_signal(boost::asio::io_context& ioc, http::Server& server, std::size_t threads, SignalHooks hooks,
                     std::chrono::milliseconds grace) {
    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec) return;
        log::info("stopping", {{"signal", sig}});
        server.stop();
        if (hooks.on_stop) hooks.on_stop();
        boost::asio::co_spawn(ioc, drain(ioc, server, hooks.busy, grace), common::log::on_failure("draining failed"));
    });
    boost::asio::signal_set hup(ioc, SIGHUP);
    std::function<void(boost::system::error_code, int)> on_hup = [&](boost::system::error_code ec, int) {
        if (ec) return;
        if (hooks.on_reload) hooks.on_reload();
        hup.async_wait(on_hup);
    };
    hup.async_wait(on_hup);
    std::vector<std::thread> extra;
    for (std::size_t i = 1; i < threads; ++i) extra.emplace_back([&] { ioc.run(); });
    ioc.run();
    for (auto& t : extra) t.join();
    log::info("stopped");
    return 0;
}

std::function<void()> reload_tls_on_hup(http::Server& server) {
    return [&server] {
        try {
            server.reload_tls();
            log::info("tls certificates reloaded");
        } catch (const std::exception& e) {
            log::error("tls certificates not reloaded; the old ones stay in use", {{"error", e.what()}});
        }
    };
}

}  // namespace common::app
