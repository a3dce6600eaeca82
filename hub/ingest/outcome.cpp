#include "hub/ingest/outcome.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/json/writer.hpp"

namespace hub::ingest {

Kind refusal_kind(std::string_view validation_error_code) {
    if (validation_error_code == kErrorNotAnObject) return Kind::not_an_object;
    if (validation_error_code == kErrorUnknownEvent) return Kind::unknown_event;
    return Kind::validation_failed;
}

std::string_view IngestResult::inbox_error_code() const {
    return inbox_error.empty() ? row().inbox_error : std::string_view(inbox_error);
}

boost::json::object answer_body(const IngestResult& result) {
    if (result.kind == Kind::replayed) {
        boost::system::error_code ec;
        auto v = boost::json::parse(result.replayed_answer, ec);
        if (!ec && v.is_object()) return std::move(v.as_object());
        return {};
    }
    const OutcomeRow& r = result.row();
    if (r.http_status < 300) {
        boost::json::object ok;
        if (r.answers_order_id) ok["order_id"] = result.order_id;
        ok["status"] = "success";
        return ok;
    }
    boost::json::object body = common::http::failure_body(error_of(result));
    if (result.event != kEventOrderUpdated) body["order_id"] = "";
    return body;
}

/// Room for a success answer with its order id, written at once.
constexpr std::size_t kAnswerReserve = 96;

std::string answer_text(const IngestResult& result) {
    const OutcomeRow& r = result.row();
    if (result.kind == Kind::replayed || r.http_status >= 300) return boost::json::serialize(answer_body(result));
    if (!r.answers_order_id) return R"({"status":"success"})";
    std::string out;
    {
        common::json::Writer w(out, kAnswerReserve);  // cuts `out` to the text when it ends, here
        w.raw(R"({"order_id":)");
        w.text(result.order_id);
        w.raw(R"(,"status":"success"})");
    }
    return out;
}

common::http::HttpError error_of(const IngestResult& result) {
    const OutcomeRow& r = result.row();
    common::http::HttpError e{r.http_status,
                              std::string(r.error_code),
                              result.message.empty() ? std::string(r.message) : result.message,
                              {},
                              {}};
    if (!result.errors.empty())
        e.details = errors_to_json(result.errors);
    else if (!r.detail_path.empty())
        e.details.push_back(boost::json::object{{"path", r.detail_path}, {"message", r.detail_message}});
    if (result.kind == Kind::rate_limited)
        e.retry_after = std::chrono::seconds(std::max<long long>(1, (result.retry_after.count() + 999) / 1000));
    else
        e.retry_after = std::chrono::seconds(r.retry_after);
    return e;
}

}  // namespace hub::ingest
