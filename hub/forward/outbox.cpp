#include "hub/forward/outbox.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <pqxx/pqxx>
#include <set>

#include "common/db/pool.hpp"
#include "common/db/savepoint.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"

namespace hub::forward {
namespace {

/// A PostgreSQL text[] literal of order ids (UUIDs: no characters that need quoting).
std::string id_array(const std::vector<std::string>& ids) {
    std::string s = "{";
    for (const auto& id : ids) s += (s.size() > 1 ? "," : "") + id;
    return s + "}";
}

std::string text_or_empty(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

}  // namespace

std::vector<ClaimedJob> claim_jobs(pqxx::connection_base& conn, const std::string& forwarder, int limit,
                                   std::chrono::seconds lease, const std::string& environment) {
    pqxx::work tx(conn);
    // The claim must walk the partial indexes in order and stop after `limit` rows. With statistics older than
    // the backlog (thousands of jobs stored faster than autovacuum analyzes), the planner takes the backlog for a
    // few rows and prefers a bitmap scan that reads and sorts all of it: 9 ms per claim at 8,000 pending. Only
    // this transaction plans kClaimJobs, so the plan it caches is the index walk.
    tx.exec0("SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off");
    auto claimed = tx.exec_prepared(db::kClaimJobs, forwarder, static_cast<int>(lease.count()), limit);
    std::vector<ClaimedJob> jobs;
    if (claimed.empty()) {
        tx.commit();
        return jobs;
    }
    std::map<std::string, std::size_t> index;
    std::vector<std::string> ids;
    for (const auto& r : claimed) {
        ClaimedJob j;
        j.order_id = r[0].as<std::string>();
        j.attempt = r[1].as<int>();
        index[j.order_id] = jobs.size();
        ids.push_back(j.order_id);
        jobs.push_back(std::move(j));
    }
    const std::string arr = id_array(ids);
    for (const auto& r : tx.exec_prepared(db::kJobSources, arr, environment)) {
        auto& j = jobs[index.at(r[0].as<std::string>())];
        auto& s = j.source;
        s.pos_branch_id = r[1].as<std::string>();
        s.brand_id = r[2].as<std::string>();
        s.partner_label = r[3].as<std::string>();
        s.external_id = r[4].as<std::string>();
        s.note = r[5].as<std::string>();
        s.subtotal = r[6].as<std::int64_t>();
        s.tax = r[7].as<std::int64_t>();
        s.total = r[8].as<std::int64_t>();
        s.auto_accept = r[9].as<bool>();
        if (!r[10].is_null()) s.customer_name = r[10].as<std::string>();
        if (!r[11].is_null()) s.customer_phone = r[11].as<std::string>();
        j.delivery_status = r[12].as<std::string>();
        j.stored_at = r[19].as<double>();
        j.scheduled = r[20].as<bool>();
        if (!r[13].is_null())
            j.connection = PosConnection{s.brand_id,           r[18].as<std::string>(), r[13].as<std::string>(),
                                         text_or_empty(r[14]), text_or_empty(r[15]),    text_or_empty(r[16]),
                                         text_or_empty(r[17])};
    }
    for (const auto& r : tx.exec_prepared(db::kJobItems, arr)) {
        auto& items = jobs[index.at(r[0].as<std::string>())].source.items;
        items.push_back(
            {r[2].as<std::string>(), r[3].as<std::int64_t>(), r[4].as<std::int64_t>(), r[5].as<std::string>(), {}});
    }
    for (const auto& r : tx.exec_prepared(db::kJobOptions, arr)) {
        auto& items = jobs[index.at(r[0].as<std::string>())].source.items;
        items.at(r[1].as<std::size_t>())
            .options.push_back({r[2].as<std::string>(), r[3].as<std::int64_t>(), r[4].as<std::int64_t>()});
    }
    for (const auto& r : tx.exec_prepared(db::kJobMappings, arr)) {
        auto& s = jobs[index.at(r[0].as<std::string>())].source;
        (r[1].as<std::string>() == "item" ? s.item_map : s.option_map)[r[2].as<std::string>()] = r[3].as<std::string>();
    }
    tx.commit();
    return jobs;
}

namespace {

/// Records one claim's end in `tx`; false when the claim had been lost (nothing but the attempts written).
bool finish_in(pqxx::work& tx, const FinishRequest& req) {
    const JobResult& result = req.result;
    int n = result.first_attempt;
    for (const auto& a : result.attempts)
        tx.exec_prepared(db::kInsertAttempt, result.order_id, n++, a.url, static_cast<int>(a.http_status), a.latency_ms,
                         a.outcome, a.error, a.response_excerpt, req.forwarder);
    auto owner = tx.exec_prepared(db::kFinishJob, result.order_id, req.forwarder, result.state,
                                  static_cast<std::int64_t>(result.delay.count()), result.pos_order_id, result.error);
    if (owner.empty()) return false;
    const std::string branch = owner[0][0].as<std::string>();
    const std::string partner = owner[0][1].as<std::string>();
    auto status_row = [&](const char* status, const char* source, const std::string& actor, const std::string& detail) {
        // Cut to 500 characters by PostgreSQL: a byte count could split a character of a POS's answer.
        tx.exec_prepared(db::kInsertStatusRow, result.order_id, branch, partner, status, source, actor, detail);
    };
    if (result.state == "delivered")
        status_row("pos_accepted", "pos", result.pos_order_id, "");
    else if (result.state == "rejected")
        status_row("pos_rejected", "pos", "", result.error);
    else if (result.state == "auth_failed")
        status_row("forward_auth_failed", "hub", "", result.error);
    else if (result.state == "dead")
        status_row("forward_dead", "hub", "", result.error);
    else if (result.state == "cancelled")
        status_row("forward_cancelled", "hub", "", result.error);
    if (result.new_token_sealed && req.token_owner)
        tx.exec_prepared(db::kStoreToken, req.token_owner->first, req.token_owner->second, *result.new_token_sealed);
    return true;
}

std::string what(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown error";
    }
}

/// All of `requests` in one statement (db::kFinishJobs), then the few refreshed tokens.
void finish_bulk(pqxx::work& tx, std::span<FinishRequest> requests, std::span<FinishOutcome> owned) {
    boost::json::array ends;
    boost::json::array attempts;
    ends.reserve(requests.size());
    attempts.reserve(requests.size());
    const std::string& forwarder = requests.front().forwarder;
    for (const auto& req : requests) {
        const JobResult& r = req.result;
        ends.push_back({{"order_id", r.order_id},
                        {"state", r.state},
                        {"delay_ms", r.delay.count()},
                        {"pos_order_id", r.pos_order_id},
                        {"error", r.error}});
        int n = r.first_attempt;
        for (const auto& a : r.attempts)
            attempts.push_back({{"order_id", r.order_id},
                                {"attempt", n++},
                                {"url", a.url},
                                {"http_status", a.http_status},
                                {"latency_ms", a.latency_ms},
                                {"outcome", a.outcome},
                                {"error", a.error},
                                {"response_excerpt", a.response_excerpt},
                                {"retrying", req.retrying}});
    }
    std::set<std::string> held;
    for (const auto& row :
         tx.exec_prepared(db::kFinishJobs, forwarder, boost::json::serialize(ends), boost::json::serialize(attempts)))
        held.insert(row[0].as<std::string>());
    for (std::size_t k = 0; k < requests.size(); ++k) {
        const auto& req = requests[k];
        owned[k].owned = held.contains(req.result.order_id);
        if (owned[k].owned && req.result.new_token_sealed && req.token_owner)
            tx.exec_prepared(db::kStoreToken, req.token_owner->first, req.token_owner->second,
                             *req.result.new_token_sealed);
    }
}

}  // namespace

void finish_jobs(pqxx::connection_base& conn, std::span<FinishRequest> requests, std::span<FinishOutcome> owned,
                 std::span<std::exception_ptr> errors) {
    pqxx::work tx(conn);
    if (requests.size() == 1) {
        owned[0].owned = finish_in(tx, requests[0]);
        // A lost claim keeps its attempts, unless an earlier try may have committed them already.
        if (!owned[0].owned && requests[0].retrying) return;  // rolled back
        tx.commit();
        return;
    }
    auto bulk = [&] {
        finish_bulk(tx, requests, owned);
        return common::db::Keep::yes;
    };
    if (auto error = common::db::in_savepoint(tx, bulk); !error) {
        tx.commit();
        return;
    } else {
        // One claim's data the statement refused: end them one by one, so only that one fails.
        common::log::warn("ending claims one by one after a bulk failure", {{"error", what(error)}});
        std::fill(owned.begin(), owned.end(), FinishOutcome{});
    }
    for (std::size_t k = 0; k < requests.size(); ++k) {
        errors[k] = common::db::in_savepoint(tx, [&] {
            owned[k].owned = finish_in(tx, requests[k]);
            // A lost claim keeps its attempts, unless an earlier try may have committed them already.
            return !owned[k].owned && requests[k].retrying ? common::db::Keep::no : common::db::Keep::yes;
        });
    }
    tx.commit();
}

bool finish_job(pqxx::connection_base& conn, const std::string& forwarder, const JobResult& result,
                const ClaimedJob& job, bool retrying) {
    FinishRequest req{forwarder, result, std::nullopt, retrying};
    if (job.connection) req.token_owner = std::pair{job.connection->brand_id, job.connection->environment};
    FinishOutcome owned;
    std::exception_ptr error;
    finish_jobs(conn, std::span(&req, 1), std::span(&owned, 1), std::span(&error, 1));
    if (error) std::rethrow_exception(error);
    return owned.owned;
}

void release_jobs(pqxx::connection_base& conn, const std::string& forwarder) {
    pqxx::work tx(conn);
    tx.exec_prepared(db::kReleaseJobs, forwarder);
    tx.commit();
}

}  // namespace hub::forward
