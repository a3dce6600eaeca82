#include "hub/forward/outbox.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <set>

#include "common/db/pool.hpp"
#include "common/db/savepoint.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"
#include "hub/forward/status_log.hpp"

namespace hub::forward {
namespace {

std::string text_or_empty(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

/// The lines of a claimed order as kClaimJobs writes them (hub/db/queries.cpp), with their mapped POS ids.
void read_lines(std::string_view json, PosSource& s) {
    const boost::json::value v = boost::json::parse(json);
    for (const auto& line : v.as_array()) {
        const auto& l = line.as_array();
        ingest::OrderItem item{std::string(l.at(0).as_string()),
                               l.at(1).to_number<std::int64_t>(),
                               l.at(2).to_number<std::int64_t>(),
                               l.at(3).is_null() ? std::string() : std::string(l.at(3).as_string()),
                               {}};
        if (!l.at(4).is_null()) s.item_map[item.id] = std::string(l.at(4).as_string());
        for (const auto& option : l.at(5).as_array()) {
            const auto& o = option.as_array();
            item.options.push_back({std::string(o.at(0).as_string()), o.at(1).to_number<std::int64_t>(),
                                    o.at(2).to_number<std::int64_t>()});
            if (!o.at(3).is_null()) s.option_map[item.options.back().id] = std::string(o.at(3).as_string());
        }
        s.items.push_back(std::move(item));
    }
}

/// The claim's columns by name (kClaimJobs), numbered once per result. `row["name"]` asks libpq's PQfnumber, which
/// copies the name and compares it with every column in turn: for a claim's 25 columns, on every row, that cost
/// more than reading the values (docs/performance.md).
struct ClaimColumns {
    using Column = pqxx::row::size_type;
    explicit ClaimColumns(const pqxx::result& r)
        : order_id(r.column_number("order_id")),
          attempt(r.column_number("attempt")),
          pos_branch_id(r.column_number("pos_branch_id")),
          brand_id(r.column_number("brand_id")),
          partner_label(r.column_number("partner_label")),
          external_id(r.column_number("external_id")),
          note(r.column_number("note")),
          subtotal(r.column_number("subtotal")),
          tax(r.column_number("tax")),
          total(r.column_number("total")),
          auto_accept(r.column_number("auto_accept")),
          customer_name(r.column_number("customer_name")),
          customer_phone(r.column_number("customer_phone")),
          delivery_status(r.column_number("delivery_status")),
          base_url(r.column_number("base_url")),
          token_sealed(r.column_number("token_sealed")),
          email(r.column_number("email")),
          password_sealed(r.column_number("password_sealed")),
          ca_file(r.column_number("ca_file")),
          environment(r.column_number("environment")),
          stored_at(r.column_number("stored_at")),
          is_schedule(r.column_number("is_schedule")),
          request_id(r.column_number("request_id")),
          lines(r.column_number("lines")) {}
    Column order_id, attempt, pos_branch_id, brand_id, partner_label, external_id, note, subtotal, tax, total,
        auto_accept, customer_name, customer_phone, delivery_status, base_url, token_sealed, email, password_sealed,
        ca_file, environment, stored_at, is_schedule, request_id, lines;
};

}  // namespace

std::vector<ClaimedJob> claim_jobs(pqxx::connection_base& conn, const std::string& forwarder, int limit,
                                   std::chrono::seconds lease, const std::string& environment) {
    return claim_jobs(conn, forwarder, ClaimPlan{limit, limit, {}}, lease, environment, std::chrono::minutes(30));
}

std::vector<ClaimedJob> claim_jobs(pqxx::connection_base& conn, const std::string& forwarder, const ClaimPlan& plan,
                                   std::chrono::seconds lease, const std::string& environment,
                                   std::chrono::seconds give_up) {
    boost::json::array quotas;
    quotas.reserve(plan.quotas.size());
    for (const auto& [brand, n] : plan.quotas) quotas.push_back({{"b", brand}, {"n", n}});
    pqxx::work tx(conn);
    // The claim must walk the partial indexes in order and stop after `limit` rows. With statistics older than
    // the backlog (thousands of jobs stored faster than autovacuum analyzes), the planner takes the backlog for a
    // few rows and prefers a bitmap scan that reads and sorts all of it: 9 ms per claim at 8,000 pending. Only
    // this transaction plans kClaimJobs, so the plan it caches is the index walk.
    tx.exec0("SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off");
    const auto rows =
        tx.exec_prepared(db::kClaimJobs, forwarder, static_cast<int>(lease.count()), plan.limit, environment,
                         plan.default_quota, boost::json::serialize(quotas), static_cast<int>(give_up.count()));
    std::vector<ClaimedJob> jobs;
    jobs.reserve(rows.size());
    const ClaimColumns c(rows);
    for (const auto& r : rows) {
        ClaimedJob j;
        j.order_id = r[c.order_id].as<std::string>();
        j.attempt = r[c.attempt].as<int>();
        auto& s = j.source;
        s.pos_branch_id = r[c.pos_branch_id].as<std::string>();
        s.brand_id = r[c.brand_id].as<std::string>();
        s.partner_label = r[c.partner_label].as<std::string>();
        s.external_id = r[c.external_id].as<std::string>();
        s.note = r[c.note].as<std::string>();
        s.subtotal = r[c.subtotal].as<std::int64_t>();
        s.tax = r[c.tax].as<std::int64_t>();
        s.total = r[c.total].as<std::int64_t>();
        s.auto_accept = r[c.auto_accept].as<bool>();
        if (!r[c.customer_name].is_null()) s.customer_name = r[c.customer_name].as<std::string>();
        if (!r[c.customer_phone].is_null()) s.customer_phone = r[c.customer_phone].as<std::string>();
        j.delivery_status = r[c.delivery_status].as<std::string>();
        if (!r[c.base_url].is_null())
            j.connection = PosConnection{s.brand_id,
                                         r[c.environment].as<std::string>(),
                                         r[c.base_url].as<std::string>(),
                                         text_or_empty(r[c.token_sealed]),
                                         text_or_empty(r[c.email]),
                                         text_or_empty(r[c.password_sealed]),
                                         text_or_empty(r[c.ca_file])};
        j.stored_at = r[c.stored_at].as<double>();
        j.scheduled = r[c.is_schedule].as<bool>();
        j.request_id = text_or_empty(r[c.request_id]);
        if (const auto lines = r[c.lines]; !lines.is_null())
            read_lines(std::string_view(lines.c_str(), lines.size()), s);
        jobs.push_back(std::move(j));
    }
    tx.commit();  // after reading: a claim whose orders cannot be read is not taken (rolled back)
    return jobs;
}

namespace {

/// Records one claim's end in `tx`; false when the claim had been lost (nothing but the attempts written).
bool finish_in(pqxx::work& tx, const FinishRequest& req) {
    const JobResult& result = req.result;
    int n = result.first_attempt;
    for (const auto& a : result.attempts)
        tx.exec_prepared(db::kInsertAttempt, result.order_id, n++, a.url, static_cast<int>(a.http_status), a.latency_ms,
                         std::string(to_text(a.outcome)), a.error, a.response_excerpt, req.forwarder, a.started_us);
    auto owner = tx.exec_prepared(db::kFinishJob, result.order_id, req.forwarder, std::string(to_text(result.state)),
                                  static_cast<std::int64_t>(result.delay.count()), result.pos_order_id, result.error);
    if (owner.empty()) return false;
    if (const auto row = status_log_row(result))
        tx.exec_prepared(db::kInsertStatusRow, result.order_id, owner[0]["branch_id"].as<std::string>(),
                         owner[0]["partner_id"].as<std::string>(), std::string(row->status), std::string(row->source),
                         row->actor, row->detail);
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
        boost::json::object end{{"order_id", r.order_id},
                                {"state", to_text(r.state)},
                                {"delay_ms", r.delay.count()},
                                {"pos_order_id", r.pos_order_id},
                                {"error", r.error}};
        if (const auto row = status_log_row(r)) {
            end["status"] = row->status;
            end["source"] = row->source;
            end["actor"] = row->actor;
            end["detail"] = row->detail;
        }
        ends.push_back(std::move(end));
        int n = r.first_attempt;
        for (const auto& a : r.attempts)
            attempts.push_back({{"order_id", r.order_id},
                                {"attempt", n++},
                                {"url", a.url},
                                {"http_status", a.http_status},
                                {"latency_ms", a.latency_ms},
                                {"outcome", to_text(a.outcome)},
                                {"error", a.error},
                                {"response_excerpt", a.response_excerpt},
                                {"retrying", req.retrying},
                                {"started_us", a.started_us}});
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
    // kFinishJobs names its jobs, but with statistics from when few jobs were in flight the planner reads them
    // through forward_jobs_brand_lease_idx. A bitmap scan of it never marks the entries of jobs that have left
    // in_flight as dead, so every end of claims visited every job claimed since forward_jobs was last vacuumed
    // (15,073 entries and 530 heap pages, 3 ms a statement, in forward-bench's run at 300 orders/s); an index scan
    // marks them, and visits each once. As for the claim, only this transaction plans kFinishJobs.
    tx.exec0("SET LOCAL enable_bitmapscan = off");
    if (requests.size() == 1) {
        // One statement as for many (not three), without a savepoint: its failure is this claim's alone.
        finish_bulk(tx, requests, owned);
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

namespace {

std::string json_strings(const std::vector<std::string>& values) {
    boost::json::array a;
    a.reserve(values.size());
    for (const auto& v : values) a.emplace_back(v);
    return boost::json::serialize(a);
}

}  // namespace

void give_back_jobs(pqxx::connection_base& conn, const std::string& forwarder, const std::vector<std::string>& orders) {
    pqxx::work tx(conn);
    tx.exec_prepared(db::kGiveBackJobs, forwarder, json_strings(orders));
    tx.commit();
}

void renew_leases(pqxx::connection_base& conn, const std::string& forwarder, std::chrono::seconds lease) {
    pqxx::work tx(conn);
    tx.exec_prepared(db::kRenewLeases, forwarder, static_cast<int>(lease.count()));
    tx.commit();
}

std::int64_t give_up_jobs(pqxx::connection_base& conn, std::chrono::seconds give_up) {
    pqxx::work tx(conn);
    const auto n = tx.exec_prepared1(db::kGiveUpJobs, static_cast<int>(give_up.count()))[0].as<std::int64_t>();
    tx.commit();
    return n;
}

std::int64_t time_out_held_jobs(pqxx::connection_base& conn) {
    pqxx::work tx(conn);
    const auto n = tx.exec_prepared1(db::kTimeOutHeldJobs)[0].as<std::int64_t>();
    tx.commit();
    return n;
}

std::vector<PosHostRow> pos_hosts(pqxx::connection_base& conn, const std::string& environment) {
    pqxx::read_transaction tx(conn);
    std::vector<PosHostRow> out;
    for (const auto& r : tx.exec_prepared(db::kPosHosts, environment))
        out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), text_or_empty(r[2]), r[3].as<std::int64_t>()});
    return out;
}

void write_pos_health(pqxx::connection_base& conn, const std::string& environment, const std::string& host, bool open,
                      const std::string& error, const std::vector<std::string>& brands, const std::string& forwarder) {
    pqxx::work tx(conn);
    tx.exec_prepared(db::kPosHealth, environment, host, error, open ? "open" : "closed", json_strings(brands),
                     forwarder);
    tx.commit();
}

}  // namespace hub::forward
