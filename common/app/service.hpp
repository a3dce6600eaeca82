#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config/options.hpp"
#include "common/http/server.hpp"

namespace common::app {

/// Settings every HTTP service shares (listen address, limits, database, log format, threads).
struct ServiceConfig {
    config::HostPort listen;
    std::string database_url;
    http::Limits limits;
    std::size_t io_threads = 1;
    std::size_t db_workers = 4;
    std::optional<http::TlsFiles> tls;  ///< --tls-cert and --tls-key: the listener speaks HTTPS
};

/// The options behind ServiceConfig; `prefix` is "ORDERHUB" or "ORDERPOS" for the environment names.
std::vector<config::OptionSpec> service_options(const std::string& prefix, const std::string& default_listen);

/// The database option alone (for CLI commands that only need the database).
config::OptionSpec database_option(const std::string& prefix);

/// Builds a ServiceConfig; throws cli::UserError with a one-line message for a missing or bad value (TLS: both
/// files or neither, each readable, a certificate and key that load and match).
ServiceConfig service_config(const config::ParsedArgs& args, const std::string& prefix);

/// The whole-number setting `name` of a service within [min, max]; a cli::UserError naming it otherwise.
std::uint64_t number_setting(const config::ParsedArgs& args, const std::string& name, std::uint64_t min,
                             std::uint64_t max);

/// The duration setting `name` of a service ("90s", "30m", "2h") within [min, max]; a cli::UserError naming it
/// otherwise.
std::chrono::seconds duration_setting(const config::ParsedArgs& args, const std::string& name, std::chrono::seconds min,
                                      std::chrono::seconds max);

/// The database URL option's value or a clear UserError naming the variable.
std::string require_database_url(const config::ParsedArgs& args, const std::string& prefix);

/// Applies --log-format / *_LOG_FORMAT.
void apply_log_format(const config::ParsedArgs& args);

/// What a service does on signals.
struct SignalHooks {
    std::function<void()> on_stop{};    ///< SIGINT/SIGTERM, after the server stopped accepting
    std::function<bool()> busy{};       ///< keeps the process up (within the grace period) while true
    std::function<void()> on_reload{};  ///< SIGHUP (re-read certificates)
};

/// Runs `ioc` on `threads` threads until SIGINT or SIGTERM; then stops `server` from accepting, runs
/// `hooks.on_stop`, lets requests in flight finish and waits while `hooks.busy()` (both up to `grace`), and
/// returns 0. SIGHUP runs `hooks.on_reload`.
int run_until_signal(boost::asio::io_context& ioc, http::Server& server, std::size_t threads, SignalHooks hooks = {},
                     std::chrono::milliseconds grace = std::chrono::milliseconds(10'000));

/// Lets the allocator keep memory a thread freed for that thread's next use, instead of handing it back to the kernel
/// whenever its free top passes 128 KB (glibc's default). A database worker frees more than that after every group
/// commit (the batch's statement text and bodies), and returning it cost madvise, TLB shoot-downs and page faults
/// when the next batch took it back: 29 % of the workers' CPU at 64 connections (docs/performance.md). Kept: at most
/// 16 MB of free memory per arena; blocks from 4 MB up still come from and go back to mmap. Left alone when
/// GLIBC_TUNABLES sets a glibc.malloc tunable (the operator's choice). False when the allocator did not take the
/// settings or is not glibc's (a sanitizer's; tcmalloc, which the binaries are linked with by default and which
/// keeps freed memory by itself), or was left alone.
bool keep_freed_memory(const config::EnvLookup& env);

/// Under tcmalloc (the binaries' allocator, ORDERHUB_TCMALLOC): bounds what its threads' caches of freed blocks hold
/// together to kThreadCacheBytes. With its default, 32 MB, they grew for minutes at 256 connections (the hub's RSS
/// 35.7 MiB in minute 2, 38.4 MiB in minute 10); bounded, it was flat from the first minute at the same CPU per
/// order (docs/performance.md, "The allocator: tcmalloc"). Left alone when TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES is
/// set (the operator's choice). False when the allocator is not tcmalloc or was left alone.
bool bound_thread_caches(const config::EnvLookup& env);
/// What bound_thread_caches allows tcmalloc's thread caches together.
inline constexpr std::size_t kThreadCacheBytes = std::size_t{2} << 20;

/// The usual SIGHUP action: re-read the server's TLS certificate files, logging the outcome.
std::function<void()> reload_tls_on_hup(http::Server& server);

}  // namespace common::app
