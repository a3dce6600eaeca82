// /readyz against a real database (issue 20, findings 3 and 12): cached like /metrics, and no reason on the public
// listener.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "common/app/health.hpp"
#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "tests/pg/support.hpp"

namespace asio = boost::asio;
using common::http::Request;
using common::http::Response;

namespace {

Response render(std::string_view, unsigned status, std::string_view code, std::string_view message) {
    return common::http::json_response(status, boost::json::object{{"code", code}, {"message", message}});
}

Response readyz(asio::io_context& ioc, const common::app::HealthTarget& t) {
    Request req;
    req.method = "GET";
    req.target = "/readyz";
    req.path = "/readyz";
    auto f = asio::co_spawn(ioc, common::app::health_routes(req, t), asio::use_future);
    ioc.restart();
    ioc.run();
    auto r = f.get();
    REQUIRE(r);
    return *r;
}

std::string message(const Response& r) {
    return std::string(boost::json::parse(r.body).as_object().at("message").as_string());
}

}  // namespace

TEST_CASE("readyz: one database read per interval however often it is asked", "[health]") {
    tests::TempDatabase db;
    {
        pqxx::connection c(db.url());
        common::db::migrate(c, "hub", common::db::migrations_hub());
    }
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 1, .on_connect = {}});
    const common::app::HealthTarget target{pool, "hub", common::db::migrations_hub(), render};
    for (int i = 0; i < 50; ++i) CHECK(readyz(ioc, target).status == 200);
    CHECK(pool.stats().jobs == 1);  // the interval is a second: 50 probes in a row share one read
}

TEST_CASE("readyz: the public answer says not ready, the detailed one says why", "[health]") {
    tests::TempDatabase db;  // not migrated
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 1, .on_connect = {}});
    common::app::HealthTarget target{pool, "hub", common::db::migrations_hub(), render};
    const Response plain = readyz(ioc, target);
    CHECK(plain.status == 503);
    CHECK(message(plain) == "not ready");
    target.details = true;
    const Response detailed = readyz(ioc, target);
    CHECK(detailed.status == 503);
    CHECK(message(detailed) != "not ready");
    CHECK_FALSE(message(detailed).empty());
}
