#include "hub/verify/runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "common/http/client.hpp"

namespace hub::verify {
namespace {

namespace asio = boost::asio;

asio::awaitable<Answer> send(common::http::Client& client, const Settings& settings, const RunOptions& options,
                             Request request) {
    common::http::ClientRequest req;
    req.url = common::http::join_url(settings.base_url, request.path);
    req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    if (request.authorization) req.headers.emplace_back("Authorization", *request.authorization);
    req.body = std::move(request.body);
    req.ca_file = options.ca_file;
    auto res = co_await client.send(std::move(req));
    Answer a;
    a.latency = std::chrono::duration_cast<std::chrono::milliseconds>(res.latency);
    a.failure = res.failure;
    a.error = res.error;
    if (res.response) {
        a.status = res.response->status;
        a.body = std::move(res.response->body);
    }
    co_return a;
}

asio::awaitable<std::vector<RuleResult>> run_rules(common::http::Client& client, const Settings& settings,
                                                   const RunOptions& options) {
    std::vector<RuleResult> results;
    Facts facts;
    facts.reference_prefix = reference_prefix(settings);
    std::vector<std::string> secrets = {settings.password};
    if (settings.other_brand_token) secrets.push_back(*settings.other_brand_token);
    std::string unreachable_reason;
    for (const auto& rule : rules()) {
        if (!unreachable_reason.empty()) {
            results.push_back(not_checked(rule, unreachable_reason));
            continue;
        }
        Built built = rule.build(settings, facts);
        if (!built.request) {
            results.push_back(not_checked(rule, std::move(built.not_checked)));
            continue;
        }
        Answer answer = co_await send(client, settings, options, std::move(*built.request));
        if (unreachable(answer.failure))
            unreachable_reason = "the POS could not be reached (" + std::string(rule.id) + ": " +
                                 std::string(common::http::to_string(answer.failure)) + ")";
        results.push_back(judge_answer(rule, std::move(answer), facts, secrets, options.forward_timeout));
    }
    co_return results;
}

std::string transport(const Settings& settings, const RunOptions& options) {
    if (settings.base_url.rfind("https:", 0) != 0) return "plain HTTP: no certificate to verify";
    return "HTTPS: certificate chain and host name verified as the forwarder does, against " +
           (options.ca_file.empty() ? std::string("the system trust store") : "--ca-file " + options.ca_file);
}

}  // namespace

Report run(const Settings& settings, const RunOptions& options) {
    Report report;
    report.base_url = settings.base_url;
    report.branch = settings.branch;
    report.brand = settings.brand;
    report.reference_prefix = reference_prefix(settings);
    report.transport = transport(settings, options);
    report.forward_timeout = options.forward_timeout;

    asio::io_context ioc;
    common::http::ClientOptions copts;
    copts.read_timeout = options.forward_timeout + std::chrono::seconds(15);
    copts.max_connections_per_host = 1;
    {
        // Destroyed before the io_context, once no send() is in flight (common/http/client.hpp).
        common::http::Client client(ioc.get_executor(), copts);
        std::exception_ptr failure;
        // Stops the loop when the rules are done: the client's idle-connection sweep would keep it running.
        asio::co_spawn(ioc, run_rules(client, settings, options),
                       [&](std::exception_ptr e, std::vector<RuleResult> results) {
                           failure = std::move(e);
                           report.results = std::move(results);
                           ioc.stop();
                       });
        ioc.run();
        if (failure) std::rethrow_exception(failure);
    }
    return report;
}

}  // namespace hub::verify
