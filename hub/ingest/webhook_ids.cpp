#include "hub/ingest/webhook_ids.hpp"

#include <pqxx/pqxx>

#include "common/db/pool.hpp"
#include "hub/db/queries.hpp"

namespace hub::ingest {

boost::asio::awaitable<std::optional<RememberedAnswer>> WebhookIds::replayed(std::string webhook_id,
                                                                             InboxRecord inbox) {
    auto job = [id = std::move(webhook_id), inbox = std::move(inbox)](pqxx::connection& c) mutable {
        std::optional<RememberedAnswer> out;
        pqxx::work tx(c);
        const auto rows = tx.exec_prepared(db::kReplayWebhookId, inbox.partner_id, id);
        if (rows.empty()) return out;
        out.emplace();
        out->http_status = rows[0]["http_status"].as<unsigned>();
        out->answer = rows[0]["answer"].as<std::string>();
        if (rows[0]["replays"].as<int>() == 1) {
            inbox.http_status = out->http_status;
            inbox.outcome = "replay";
            insert_inbox(tx, inbox);
        }
        tx.commit();
        return out;
    };
    co_return co_await pool_.run(std::move(job));
}

boost::asio::awaitable<void> WebhookIds::remember(std::string partner_id, std::string webhook_id,
                                                  RememberedAnswer answer) {
    auto job = [partner = std::move(partner_id), id = std::move(webhook_id),
                answer = std::move(answer)](pqxx::connection& c) {
        pqxx::work tx(c);
        tx.exec_prepared0(db::kRememberWebhookId, partner, id, static_cast<int>(answer.http_status), answer.answer);
        tx.exec_prepared0(db::kPurgeWebhookIds, partner);
        tx.commit();
    };
    co_await pool_.run(std::move(job));
}

}  // namespace hub::ingest
