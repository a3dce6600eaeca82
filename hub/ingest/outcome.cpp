#include "hub/ingest/outcome.hpp"

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
    const OutcomeRow& r = result.row();
    if (r.http_status < 300) {
        boost::json::object ok;
        if (r.answers_order_id) ok["order_id"] = result.order_id;
        ok["status"] = "success";
        return ok;
    }
    boost::json::array details;
    if (!result.errors.empty())
        details = errors_to_json(result.errors);
    else if (!r.detail_path.empty())
        details.push_back(boost::json::object{{"path", r.detail_path}, {"message", r.detail_message}});
    boost::json::object body{{"status", "failed"},
                             {"error",
                              {{"code", r.error_code},
                               {"message", result.message.empty() ? r.message : std::string_view(result.message)},
                               {"details", std::move(details)}}}};
    if (result.event != kEventOrderUpdated) body["order_id"] = "";
    return body;
}

}  // namespace hub::ingest
