// Group commit in one statement (insert_orders): requests that share a batch are answered as if each had been
// stored alone, including repeats, conflicts, unknown branches, refused requests and jobs that fail.
#include <chrono>
#include <future>
#include <thread>

#include "common/crypto/encoding.hpp"
#include "hub/ingest/store_job.hpp"
#include "tests/pg/hub_support.hpp"

using namespace tests::hubdb;
using Kind = hub::ingest::StoreOutcome::Kind;

namespace {

/// One request of a batch: an order_created or order_updated body of `partner`, or (record) an inbox row alone.
struct Req {
    std::string partner;
    std::string body;
    bool record = false;
    std::string headers = "{}";
    std::string replay_of = {};  ///< the inbox id an `events replay` re-runs
};

struct Answer {
    std::optional<StoreOutcome> out;
    std::string error;
};

/// Stores `reqs` as ONE batch: the pool's only worker is held busy until every request has been queued. Through
/// the pipe (`pipe`), order_created requests and refused ones go in the pipe's statements instead, as they come,
/// and what it hands back waits for the pool's worker; every answer must be the same.
std::vector<Answer> one_batch(const std::string& url, bool pipe, const std::vector<Req>& reqs) {
    asio::io_context ioc;
    common::db::Pool pool({.url = url, .workers = 1, .on_connect = hub::db::prepare_all});
    std::optional<hub::ingest::PipeSettings> settings;
    if (pipe) settings = hub::ingest::PipeSettings{.url = url, .always = true};
    hub::ingest::OrderStore store(pool, 256, 1, std::chrono::microseconds(0), settings);
    if (pipe) wait_for_pipe(store);
    std::promise<void> release;
    auto released = release.get_future().share();
    pool.enqueue([released](pqxx::connection*, std::exception_ptr) { released.wait(); });
    std::vector<Answer> answers(reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        asio::co_spawn(
            ioc,
            [](hub::ingest::OrderStore& s, Req r, Answer& a) -> asio::awaitable<void> {
                auto inbox = inbox_for(r.partner, r.body);
                inbox.headers_json = r.headers;
                inbox.replay_of = r.replay_of;
                try {
                    if (r.record) {
                        inbox.http_status = 400;
                        inbox.outcome = "rejected";
                        inbox.error_code = "invalid_json";
                        StoreOutcome o;
                        o.inbox_id = co_await s.record(std::move(inbox));
                        a.out = o;
                    } else {
                        a.out = co_await store_owned(s, validated(r.body), std::move(inbox));
                    }
                } catch (const std::exception& e) {
                    a.error = e.what();
                }
            }(store, reqs[i], answers[i]),
            asio::detached);
    }
    ioc.poll();  // each coroutine runs up to its submit: all of them are queued behind the held worker
    release.set_value();
    ioc.run();
    return answers;
}

std::string inbox_field(HubDb& h, const std::string& inbox_id, const std::string& expr) {
    pqxx::connection c(h.db.url());
    return pqxx::nontransaction(c)
        .exec_params1("SELECT coalesce((" + expr + ")::text, '') FROM hub.inbox WHERE id = $1::bigint", inbox_id)[0]
        .as<std::string>();
}

}  // namespace

TEST_CASE("batch: repeats, conflicts and unknown branches inside one statement are answered one by one", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    std::string later = order_json("A-1");
    later.replace(later.find("18:02:11"), 8, "18:09:00");
    auto a = one_batch(h.db.url(), pipe,
                       {{"p1", order_json("A-1")},
                        {"p1", order_json("A-1")},
                        {"p1", order_json("A-1", "B1", "Omar")},
                        {"p2", order_json("A-1")},
                        {"p1", order_json("U-1", "NOPE")},
                        {"p1", later}});
    for (const auto& x : a) REQUIRE(x.error.empty());
    CHECK(a[0].out->kind == Kind::created);
    CHECK(a[1].out->kind == Kind::duplicate);
    CHECK(a[1].out->order_id == a[0].out->order_id);
    CHECK(a[2].out->kind == Kind::conflict);
    CHECK(a[2].out->order_id.empty());
    CHECK(a[3].out->kind == Kind::created);
    CHECK(a[3].out->order_id != a[0].out->order_id);
    CHECK(a[4].out->kind == Kind::unknown_branch);
    CHECK(a[5].out->kind == Kind::duplicate);
    CHECK(a[5].out->order_id == a[0].out->order_id);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.order_items") == 4);
    CHECK(h.count("SELECT count(*) FROM hub.order_item_options") == 4);
    CHECK(h.count("SELECT count(*) FROM hub.order_status_log") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.forward_jobs") == 2);
    // One statement, one transaction, one inbox row per request, each telling its own outcome.
    if (!pipe) CHECK(h.count("SELECT count(DISTINCT xmin::text) FROM hub.inbox") == 1);  // the pipe: one or more
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 6);
    const char* expected[] = {"stored|200|",
                              "duplicate|200|",
                              "conflict|409|order_id_conflict",
                              "stored|200|",
                              "rejected|422|unknown_branch",
                              "duplicate|200|"};
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO("request " << i);
        CHECK(inbox_field(h, a[i].out->inbox_id, "outcome || '|' || http_status || '|' || coalesce(error_code, '')") ==
              expected[i]);
        CHECK(inbox_field(h, a[i].out->inbox_id, "coalesce(order_id, '')") == a[i].out->order_id);
    }
}

TEST_CASE("batch: orders stored by earlier batches are found", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    auto first = one_batch(h.db.url(), pipe, {{"p1", order_json("A-1")}});
    auto a = one_batch(h.db.url(), pipe,
                       {{"p1", order_json("A-1", "B1", "Omar")}, {"p1", order_json("A-1")}, {"p1", order_json("A-2")}});
    CHECK(a[0].out->kind == Kind::conflict);
    CHECK(a[1].out->kind == Kind::duplicate);
    CHECK(a[1].out->order_id == first[0].out->order_id);
    CHECK(a[2].out->kind == Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
}

TEST_CASE("batch: an order another transaction commits while the statement waits is answered from it", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    // Another connection (another hub process, say) stores A-9 and holds its transaction open.
    pqxx::connection other(h.db.url());
    hub::db::prepare_all(other);
    auto v = validated(order_json("A-9"));
    hub::ingest::detail::Job job;
    job.created = true;
    job.inbox.partner_id = "p1";
    job.inbox.request_id = "other";
    job.inbox.event = "order_created";
    job.inbox.external_id = "A-9";
    job.inbox.headers_json = "{}";
    job.entry = hub::ingest::detail::make_entry(&v, job.inbox);
    const hub::ingest::detail::Job* jobs[] = {&job};
    std::vector<pqxx::binarystring> args;
    for (const auto& arg : hub::ingest::detail::insert_orders_args(jobs)) args.emplace_back(arg.data(), arg.size());
    pqxx::work tx(other);
    const std::string theirs =
        tx.exec_prepared1(hub::db::kInsertOrders, pqxx::prepare::make_dynamic_params(args))["order_id"]
            .as<std::string>();
    tx.exec0("DELETE FROM hub.inbox WHERE request_id = 'other'");  // only the batch's requests are counted below
    // The batch's insert waits on the open transaction; it commits after the statement took its snapshot.
    std::thread committer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        tx.commit();
    });
    auto a =
        one_batch(h.db.url(), pipe,
                  {{"p1", order_json("A-9")}, {"p1", order_json("A-9", "B1", "Omar")}, {"p1", order_json("A-10")}});
    committer.join();
    for (const auto& x : a) REQUIRE(x.error.empty());
    CHECK(a[0].out->kind == Kind::duplicate);
    CHECK(a[0].out->order_id == theirs);
    CHECK(a[1].out->kind == Kind::conflict);
    CHECK(a[2].out->kind == Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 3);
    CHECK(inbox_field(h, a[0].out->inbox_id, "outcome") == "duplicate");
    CHECK(inbox_field(h, a[1].out->inbox_id, "outcome") == "conflict");
}

TEST_CASE("batch: an inbox row alone keeps its exact bytes, headers are a JSON object", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    const std::string raw("\xff\xfe{\"event\": \x00 \"\\u0000\"\n", 22);
    auto a = one_batch(h.db.url(), pipe,
                       {{"p1", raw, true, R"({"user-agent":"bench/1.0","x-request-id":"r-1"})"},
                        {"p1", order_json("A-1"), false, R"({"content-type":"application/json"})"}});
    for (const auto& x : a) REQUIRE(x.error.empty());
    CHECK(a[1].out->kind == Kind::created);
    CHECK(inbox_field(h, a[0].out->inbox_id, "encode(body, 'hex')") == common::crypto::hex_encode(raw));
    CHECK(inbox_field(h, a[0].out->inbox_id, "outcome || '|' || http_status || '|' || error_code") ==
          "rejected|400|invalid_json");
    CHECK(inbox_field(h, a[0].out->inbox_id, "jsonb_typeof(headers) || '|' || (headers->>'user-agent')") ==
          "object|bench/1.0");
    CHECK(inbox_field(h, a[1].out->inbox_id, "headers->>'content-type'") == "application/json");
    CHECK(inbox_field(h, a[1].out->inbox_id, "convert_from(body, 'UTF8')") == order_json("A-1"));
}

TEST_CASE("batch: every inbox row of one statement holds its own request's bytes", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    // The raw bodies travel one after another in one parameter: orders and refused requests of different
    // lengths, an empty body and bytes that are not UTF-8, interleaved, each must come back whole and in place.
    std::vector<Req> reqs{{"p1", order_json("OFF-1")},
                          {"p1", std::string("\x00\xff", 2), true},
                          {"p2", order_json("OFF-2", "B1", "A much longer customer name than the others")},
                          {"p1", "", true},
                          {"p1", order_json("OFF-1")},
                          {"p2", std::string(3000, '{'), true},
                          {"p1", order_json("OFF-3", "B1", "\u00e9")}};
    auto a = one_batch(h.db.url(), pipe, reqs);
    REQUIRE(a.size() == reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        INFO("request " << i);
        REQUIRE(a[i].error.empty());
        CHECK(inbox_field(h, a[i].out->inbox_id, "encode(body, 'hex')") == common::crypto::hex_encode(reqs[i].body));
        CHECK(inbox_field(h, a[i].out->inbox_id, "partner_id") == reqs[i].partner);
    }
    CHECK(a[4].out->kind == Kind::duplicate);
    // One statement stored them all (the pipe sends what has come whenever it sends: one statement or several).
    if (!pipe) CHECK(h.count("SELECT count(DISTINCT xmin::text) FROM hub.inbox") == 1);
}

TEST_CASE("batch: a job that fails fails alone, the others of its batch are stored", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    // A partner that does not exist, and headers that are not JSON (which fails the whole statement first, then
    // its own savepoint); the jobs before and after them are stored and answered as stored.
    auto a = one_batch(h.db.url(), pipe,
                       {{"p1", order_json("A-1")},
                        {"nobody", order_json("A-2")},
                        {"p1", order_json("A-3"), false, "not json"},
                        {"p2", order_json("A-4")}});
    CHECK(a[0].error.empty());
    CHECK(a[0].out->kind == Kind::created);
    CHECK_FALSE(a[1].error.empty());
    CHECK_FALSE(a[2].error.empty());
    CHECK(a[3].error.empty());
    CHECK(a[3].out->kind == Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 2);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 2);
}

TEST_CASE("batch: an update in the same batch as its order finds it", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    auto a = one_batch(h.db.url(), pipe,
                       {{"p1", order_json("A-5")},
                        {"p1", update_json("A-5", "assigned", "2024-05-01 18:10:00")},
                        {"p1", order_json("A-6")}});
    for (const auto& x : a) REQUIRE(x.error.empty());
    CHECK(a[0].out->kind == Kind::created);
    CHECK(a[1].out->kind == Kind::appended);
    CHECK(a[1].out->order_id == a[0].out->order_id);
    CHECK(a[1].out->applied);
    CHECK(a[2].out->kind == Kind::created);
    CHECK(h.count("SELECT count(*) FROM hub.inbox") == 3);
}

TEST_CASE("batch: replays name the inbox row they re-ran", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    auto refused = one_batch(h.db.url(), pipe, {{"p1", "{", true}});
    const std::string first = refused[0].out->inbox_id;
    auto a =
        one_batch(h.db.url(), pipe, {{"p1", order_json("A-7"), false, "{}", first}, {"p1", "{", true, "{}", first}});
    for (const auto& x : a) REQUIRE(x.error.empty());
    CHECK(a[0].out->kind == Kind::created);
    CHECK(inbox_field(h, a[0].out->inbox_id, "replay_of") == first);
    CHECK(inbox_field(h, a[1].out->inbox_id, "replay_of") == first);
    CHECK(h.count("SELECT count(*) FROM hub.inbox WHERE replay_of IS NULL") == 1);
}

TEST_CASE("batch: large bodies are split over several statements, each answered", "[batch]") {
    HubDb h;
    const bool pipe = GENERATE(false, true);  // through the pool, then through the pipe
    CAPTURE(pipe);
    // 6 orders of about 1 MB each (an unknown extra field): more than one statement's worth.
    std::vector<Req> reqs;
    for (int i = 0; i < 6; ++i) {
        std::string body = order_json("BIG-" + std::to_string(i));
        body.insert(body.rfind('}'), R"(,"extra":")" + std::string(1'000'000, 'x') + "\"");
        reqs.push_back({"p1", body});
    }
    reqs.push_back({"p1", order_json("BIG-0")});
    auto a = one_batch(h.db.url(), pipe, reqs);
    for (int i = 0; i < 6; ++i) {
        REQUIRE(a[i].error.empty());
        CHECK(a[i].out->kind == Kind::created);
    }
    CHECK(a[6].out->kind == Kind::duplicate);
    CHECK(a[6].out->order_id == a[0].out->order_id);
    CHECK(h.count("SELECT count(*) FROM hub.orders") == 6);
    CHECK(h.count("SELECT count(DISTINCT xmin::text) FROM hub.inbox") > 1);
    CHECK(inbox_field(h, a[5].out->inbox_id, "length(body)") == std::to_string(reqs[5].body.size()));
}
