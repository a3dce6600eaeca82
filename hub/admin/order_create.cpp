// `orderhub order create`: an order pushed by an operator (hub/admin/order_create_rules.hpp), stored through the
// webhook's validation and storage path (hub/ingest/service.hpp create()), as `events replay` does.
#include "hub/admin/order_create.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "common/app/service.hpp"
#include "common/crypto/uuid.hpp"
#include "common/db/pool.hpp"
#include "common/http/request_id.hpp"
#include "common/json/parse.hpp"
#include "common/text/terminal.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/ingest_call.hpp"
#include "hub/admin/order_create_rules.hpp"
#include "hub/db/queries.hpp"
#include "hub/forward/job_state.hpp"
#include "hub/ingest/service.hpp"
#include "hub/ingest/store.hpp"

namespace hub::admin {
namespace {

using common::cli::UserError;
using common::config::ParsedArgs;

/// A file larger than a webhook body could be is refused before it is read.
constexpr std::streamoff kMaxFileBytes = 1 << 20;
constexpr auto kPollEvery = std::chrono::milliseconds(200);

boost::json::value read_order_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw UserError("cannot read the order file '" + path + "'");
    if (in.tellg() > kMaxFileBytes) throw UserError("the order file '" + path + "' is larger than 1 MiB");
    in.seekg(0);
    std::ostringstream text;
    text << in.rdbuf();
    auto parsed = common::json::parse_strict(text.str());
    if (!parsed.value) throw UserError("the order file '" + path + "' is not valid JSON: " + parsed.error);
    return std::move(*parsed.value);
}

/// The refusal of `result` as one message: the code, the message and each problem's path.
std::string refusal_text(const ingest::IngestResult& result) {
    const auto body = ingest::answer_body(result);
    const auto& error = body.at("error").as_object();
    std::string text = "the order was refused (" + std::to_string(result.http_status()) + " " +
                       std::string(error.at("code").as_string()) + "): " + std::string(error.at("message").as_string());
    for (const auto& d : error.at("details").as_array()) {
        const auto& o = d.as_object();
        text += "\n  " + std::string(o.at("path").as_string()) + ": " + std::string(o.at("message").as_string());
    }
    text += "\n(paths name the webhook body: /payload is the order file; nothing was stored)";
    return common::text::terminal_safe(text, common::text::LineBreaks::keep);
}

ingest::IngestResult store(const ParsedArgs& args, const ingest::Partner& partner, std::string body, bool test) {
    const ingest::Origin origin{.by_operator = true, .actor = "", .test = test};
    const boost::json::object headers{{"origin", "operator"}, {"test", test}};
    return run_ingest(args, [&](ingest::IngestService& service) {
        return service.create(partner, std::move(body), "operator-" + common::http::new_request_id(),
                              boost::json::serialize(headers), origin);
    });
}

/// Polls until the POS answered order `id` or `seconds` passed; exit 0 only when it was delivered.
int wait_for_pos(const ParsedArgs& args, boost::json::object out, long long seconds) {
    const std::string id(out.at("order_id").as_string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    auto conn = connect(args);
    for (;;) {
        std::optional<boost::json::object> answer;
        {
            pqxx::read_transaction tx(*conn);
            answer = delivery_answer(tx, id);
        }
        if (answer) {
            for (auto& [k, v] : *answer) out[k] = v;
            print_object(args, out);
            return forward::job_state_from_text(out.at("forwarding").as_string()) == forward::JobState::delivered ? 0
                                                                                                                  : 1;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(kPollEvery);
    }
    print_object(args, out);
    throw UserError("no answer from the POS within " + std::to_string(seconds) + " s; the order " + id +
                    " is stored and still queued (see `orderhub order show " + id + "`)");
}

int order_create(const ParsedArgs& args) {
    if (!args.positional.empty()) throw common::cli::UsageError("order create takes no positional arguments");
    OrderCreateRequest request{required(args, "branch"), std::nullopt, args.all("item"), args.has("test")};
    if (auto file = args.get("file")) request.file = read_order_file(*file);
    std::string error;
    auto wait_seconds =
        common::config::parse_uint(args.get("wait-seconds").value_or(std::to_string(kDefaultWaitSeconds)), 1,
                                   kMaxWaitSeconds, "--wait-seconds", error);
    if (!wait_seconds) throw common::cli::UsageError(error);
    std::string body = operator_body(request, "op-" + common::crypto::uuid_v7(),
                                     event_time_text(ingest::IngestService::system_clock_seconds()));
    ingest::Partner partner;
    {
        auto conn = connect(args);
        pqxx::read_transaction tx(*conn);
        partner = operator_partner(tx, request.branch);
    }
    const ingest::IngestResult result = store(args, partner, std::move(body), request.test);
    if (result.kind != ingest::Kind::created && result.kind != ingest::Kind::duplicate)
        throw UserError(refusal_text(result));
    if (result.kind == ingest::Kind::duplicate) {
        auto conn = connect(args);
        pqxx::read_transaction tx(*conn);
        require_same_test_mark(tx, result.order_id, request.test);
    }
    boost::json::object out{{"order_id", result.order_id},
                            {"external_id", result.external_id},
                            {"branch_id", request.branch},
                            {"test", request.test},
                            {"duplicate", result.kind == ingest::Kind::duplicate}};
    if (!args.has("wait")) {
        print_object(args, out);
        return 0;
    }
    return wait_for_pos(args, std::move(out), static_cast<long long>(*wait_seconds));
}

}  // namespace

common::cli::Command order_create_command() {
    return {{"order", "create"},
            "an order pushed by an operator: stored, logged (source operator) and sent to the POS like any other",
            "--branch B (--file ORDER.json | --item POS_PRODUCT_ID ...) [--test] [--wait]",
            db_options({{.name = "branch", .help = "the branch that receives it", .placeholder = "B"},
                        {.name = "file",
                         .help = "an order_created payload object (interface 2.5, without the envelope)",
                         .placeholder = "ORDER.json"},
                        {.name = "item",
                         .help = "a POS product id; repeat for more (a minimal order, one of each, amounts 0)",
                         .placeholder = "POS_PRODUCT_ID",
                         .repeatable = true},
                        {.name = "test", .help = "a test order: marked TEST everywhere, never counted as a sale"},
                        {.name = "wait", .help = "wait for the POS's answer and print it (exit 1 unless delivered)"},
                        {.name = "wait-seconds",
                         .help = "how long --wait waits",
                         .placeholder = "N",
                         .default_value = std::to_string(kDefaultWaitSeconds)}}),
            with_refusals(order_create)};
}

}  // namespace hub::admin
