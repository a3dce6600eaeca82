#include "pos/http/orders_handler.hpp"

#include <boost/json.hpp>

#include "common/crypto/digest.hpp"
#include "common/log/log.hpp"
#include "pos/http/responses.hpp"
#include "pos/logic/bearer.hpp"
#include "pos/logic/order_request.hpp"
#include "pos/store/orders.hpp"
#include "pos/store/users.hpp"

namespace pos::http {
namespace {

using common::http::Response;

Response order_answer(const store::SubmitResult& result) {
    const bool created = result.outcome == store::SubmitOutcome::created;
    return common::http::json_response(created ? 201 : 200,
                                       {{"success", true},
                                        {"message", created ? "Order created" : "Order already received"},
                                        {"order_id", result.order_id}});
}

std::string_view outcome_name(store::SubmitOutcome outcome) {
    switch (outcome) {
        case store::SubmitOutcome::created: return "created";
        case store::SubmitOutcome::existing: return "existing";
        case store::SubmitOutcome::forbidden: return "forbidden";
        case store::SubmitOutcome::invalid: return "invalid";
    }
    return "";
}

}  // namespace

boost::asio::awaitable<Response> handle_orders(common::http::Request req, common::db::Pool& pool,
                                               store::OrderIntake& intake) {
    const auto token = bearer_token(req.header("Authorization"));
    if (!token) co_return unauthenticated();
    // The order waits for its batch; the token is checked alone, so that a refusal costs no batch a place.
    auto authenticate = [hash = common::crypto::sha256_hex(*token)](pqxx::connection& c) {
        return store::authenticate_token(c, hash);
    };
    std::string token_brand = co_await pool.run(std::move(authenticate));
    if (token_brand.empty()) co_return unauthenticated();

    Response refusal;
    const auto body = parse_json_body(req, refusal);
    if (!body) co_return refusal;
    store::OrderSubmission submission;
    submission.token_brand = std::move(token_brand);
    if (const auto* object = body->if_object()) {
        if (const auto* brand = object->if_contains("brand_id"); brand != nullptr && brand->is_string()) {
            submission.body_brand = std::string(brand->get_string());
        }
    }
    submission.parsed = parse_order_request(*body);
    submission.raw_body = std::move(req.body);

    const store::SubmitResult result = co_await intake.submit(std::move(submission));
    common::log::info(
        "order",
        {{"request_id", req.request_id}, {"outcome", outcome_name(result.outcome)}, {"order_id", result.order_id}});
    switch (result.outcome) {
        case store::SubmitOutcome::forbidden: co_return forbidden();
        case store::SubmitOutcome::invalid: co_return validation_failed(result.errors);
        default: co_return order_answer(result);
    }
}

}  // namespace pos::http
