#include "hub/ingest/store.hpp"

#include <boost/json/serialize.hpp>
#include <pqxx/pqxx>
#include <variant>

#include "common/crypto/uuid.hpp"
#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/order_document.hpp"

namespace hub::ingest {
namespace {

/// One unit of work for the batch: an order with its inbox row, or an inbox row alone.
struct Job {
    std::string partner_id;
    std::optional<Validated> order;
    InboxRecord inbox;
};

std::string insert_inbox(pqxx::transaction_base& tx, const InboxRecord& r) {
    auto row = tx.exec_prepared1(db::kInsertInbox, r.partner_id, r.request_id, r.event, r.external_id, r.order_id,
                                 r.headers_json, pqxx::binarystring(r.body.data(), r.body.size()),
                                 static_cast<int>(r.http_status), r.outcome, r.error_code, r.replay_of);
    return row[0].as<std::string>();
}

StoreOutcome apply(pqxx::transaction_base& tx, Job& job) {
    StoreOutcome out;
    if (!job.order) {
        out.inbox_id = insert_inbox(tx, job.inbox);
        return out;
    }
    const auto& v = *job.order;
    const auto& created = std::get<OrderCreated>(v.payload);
    const std::string hash = payload_hash(v.envelope, created);
    const std::string new_id = common::crypto::uuid_v7();
    auto row = tx.exec_prepared1(db::kInsertOrder, new_id, job.partner_id, hash,
                                 boost::json::serialize(order_document(v.envelope, created)));
    if (!row[0].is_null()) {
        out.kind = StoreOutcome::Kind::created;
        out.order_id = row[0].as<std::string>();
        job.inbox.outcome = "stored";
        job.inbox.http_status = 200;
    } else if (!row[1].as<bool>()) {
        out.kind = StoreOutcome::Kind::unknown_branch;
        job.inbox.outcome = "rejected";
        job.inbox.http_status = 422;
        job.inbox.error_code = "unknown_branch";
    } else {
        // The (partner, payload.id) exists: an exact repeat, or another order under a used id.
        auto existing = tx.exec_prepared1(db::kOrderByExternalId, job.partner_id, created.external_id);
        if (existing[1].as<std::string>() == hash) {
            out.kind = StoreOutcome::Kind::duplicate;
            out.order_id = existing[0].as<std::string>();
            job.inbox.outcome = "duplicate";
            job.inbox.http_status = 200;
        } else {
            out.kind = StoreOutcome::Kind::conflict;
            job.inbox.outcome = "conflict";
            job.inbox.http_status = 409;
            job.inbox.error_code = "order_id_conflict";
        }
    }
    job.inbox.order_id = out.order_id;
    out.inbox_id = insert_inbox(tx, job.inbox);
    return out;
}

void run_batch(pqxx::connection& conn, std::span<Job> jobs, std::span<StoreOutcome> results,
               std::span<std::exception_ptr> errors) {
    pqxx::work tx(conn);
    if (jobs.size() == 1) {
        results[0] = apply(tx, jobs[0]);
    } else {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            // A savepoint per job: one failing job must not take the others of its batch with it.
            try {
                pqxx::subtransaction sp(tx, "job");
                results[i] = apply(sp, jobs[i]);
                sp.commit();
            } catch (const pqxx::broken_connection&) {
                throw;
            } catch (const std::exception&) {
                if (common::db::is_unavailable(std::current_exception())) throw;
                errors[i] = std::current_exception();
            }
        }
    }
    tx.commit();
}

}  // namespace

struct OrderStore::Impl {
    Impl(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent)
        : batcher(pool, run_batch, max_batch, max_concurrent) {}
    common::db::Batcher<Job, StoreOutcome> batcher;
};

OrderStore::OrderStore(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent)
    : impl_(std::make_unique<Impl>(pool, max_batch, max_concurrent)) {}

OrderStore::~OrderStore() = default;

boost::asio::awaitable<StoreOutcome> OrderStore::store_order(std::string partner_id, Validated order,
                                                             InboxRecord inbox) {
    Job job{std::move(partner_id), std::move(order), std::move(inbox)};
    co_return co_await impl_->batcher.submit(std::move(job));
}

boost::asio::awaitable<std::string> OrderStore::record(InboxRecord inbox) {
    Job job{inbox.partner_id, std::nullopt, std::move(inbox)};
    auto out = co_await impl_->batcher.submit(std::move(job));
    co_return out.inbox_id;
}

}  // namespace hub::ingest
