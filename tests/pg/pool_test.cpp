#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/db/pool.hpp"
#include "tests/pg/support.hpp"

namespace asio = boost::asio;

namespace {

asio::awaitable<void> one_query(asio::io_context& ioc, common::db::Pool& pool, int i, std::atomic<int>& ok,
                                std::atomic<int>& wrong_thread) {
    int v = co_await pool.run([i](pqxx::connection& c) {
        pqxx::work tx(c);
        auto r = tx.exec_params1("SELECT $1::int + 1 FROM pg_sleep(0.001)", i);
        tx.commit();
        return r[0].as<int>();
    });
    // The coroutine resumes on its own strand, never on a database worker thread.
    if (!ioc.get_executor().running_in_this_thread()) wrong_thread.fetch_add(1);
    if (v == i + 1) ok.fetch_add(1);
}

}  // namespace

TEST_CASE("pool: many coroutines share a few connections and resume on their own executors", "[pool]") {
    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 3, .on_connect = {}});
    std::atomic<int> ok{0}, wrong_thread{0};
    constexpr int kCoroutines = 300;
    for (int i = 0; i < kCoroutines; ++i)
        asio::co_spawn(asio::make_strand(ioc), one_query(ioc, pool, i, ok, wrong_thread), asio::detached);
    std::thread second([&] { ioc.run(); });
    ioc.run();
    second.join();
    CHECK(ok.load() == kCoroutines);
    CHECK(wrong_thread.load() == 0);
    auto stats = pool.stats();
    CHECK(stats.workers == 3);
    CHECK(stats.jobs == kCoroutines);
    CHECK(stats.reconnects <= 3);  // one connection per worker, reused
}

TEST_CASE("pool: an exception in the job reaches the awaiting coroutine", "[pool]") {
    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 1, .on_connect = {}});
    std::string caught;
    asio::co_spawn(
        ioc,
        [](common::db::Pool& p, std::string& out) -> asio::awaitable<void> {
            try {
                co_await p.run([](pqxx::connection& c) {
                    pqxx::work tx(c);
                    tx.exec("SELECT * FROM no_such_table");
                });
            } catch (const pqxx::sql_error& e) {
                out = e.sqlstate();
            }
        }(pool, caught),
        asio::detached);
    ioc.run();
    CHECK(caught == "42P01");
    // The worker and its connection survive the failed job.
    CHECK(pool.run_sync([](pqxx::connection& c) { return pqxx::nontransaction(c).exec1("SELECT 7")[0].as<int>(); }) ==
          7);
}

TEST_CASE("pool: connections run without JIT compilation, before on_connect", "[pool]") {
    tests::TempDatabase db;
    std::string seen_by_on_connect;
    common::db::Pool pool({.url = db.url(), .workers = 1, .on_connect = [&](pqxx::connection& c) {
                               pqxx::nontransaction nt(c);
                               seen_by_on_connect = nt.exec1("SHOW jit")[0].as<std::string>();
                           }});
    const auto jit = pool.run_sync([](pqxx::connection& c) {
        pqxx::read_transaction tx(c);
        return tx.exec1("SHOW jit")[0].as<std::string>();
    });
    CHECK(jit == "off");
    CHECK(seen_by_on_connect == "off");
}

TEST_CASE("pool: an unreachable server is reported as Unavailable", "[pool]") {
    common::db::Pool pool(
        {.url = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", .workers = 1, .on_connect = {}});
    std::exception_ptr error;
    try {
        pool.run_sync([](pqxx::connection&) { return 1; });
    } catch (...) {
        error = std::current_exception();
    }
    REQUIRE(error);
    CHECK(common::db::is_unavailable(error));
}

TEST_CASE("pool: reconnects after the server restarts", "[pool][restart]") {
    const char* restart = std::getenv("ORDERHUB_TEST_PG_RESTART");
    if (restart == nullptr || *restart == '\0') FAIL("ORDERHUB_TEST_PG_RESTART is not set: run via tests/run.sh");
    tests::TempDatabase db;
    common::db::Pool pool({.url = db.url(), .workers = 2, .on_connect = {}});
    auto pid = [](pqxx::connection& c) {
        return pqxx::nontransaction(c).exec1("SELECT pg_backend_pid()")[0].as<int>();
    };
    const int before = pool.run_sync(pid);
    REQUIRE(std::system(restart) == 0);
    // The first job on a dead connection may fail (its server went away); the pool must recover without help.
    int failures = 0;
    int after = 0;
    for (int attempt = 0; attempt < 10 && after == 0; ++attempt) {
        try {
            after = pool.run_sync(pid);
        } catch (...) {
            CHECK(common::db::is_unavailable(std::current_exception()));
            ++failures;
        }
    }
    CHECK(after != 0);
    CHECK(after != before);
    CHECK(failures <= 2);
    CHECK(pool.stats().reconnects >= 2);
}

TEST_CASE("pool: a statement past the statement time-out is cancelled and reported as Unavailable", "[pool]") {
    tests::TempDatabase db;
    common::db::Pool pool(
        {.url = db.url(), .workers = 1, .on_connect = {}, .statement_timeout = std::chrono::milliseconds(200)});
    CHECK(pool.run_sync([](pqxx::connection& c) {
        return pqxx::nontransaction(c).exec1("SHOW statement_timeout")[0].as<std::string>();
    }) == "200ms");
    std::exception_ptr error;
    try {
        pool.run_sync([](pqxx::connection& c) { pqxx::nontransaction(c).exec("SELECT pg_sleep(30)"); });
    } catch (...) {
        error = std::current_exception();
    }
    REQUIRE(error);
    CHECK(common::db::is_unavailable(error));  // an overloaded database: 503, retry later
}

TEST_CASE("pool: a job that waited in the queue past the queue time-out fails without running", "[pool]") {
    tests::TempDatabase db;
    common::db::Pool pool(
        {.url = db.url(), .workers = 1, .on_connect = {}, .queue_timeout = std::chrono::milliseconds(100)});
    std::atomic<bool> second_ran{false};
    std::exception_ptr second_error;
    std::mutex m;
    std::condition_variable cv;
    int finished = 0;
    // The first job holds the only worker for 500 ms: the second waits longer than its 100 ms in the queue.
    pool.enqueue([&](pqxx::connection* c, std::exception_ptr) {
        if (c != nullptr) pqxx::nontransaction(*c).exec("SELECT pg_sleep(0.5)");
        std::lock_guard lock(m);
        ++finished;
        cv.notify_all();
    });
    pool.enqueue([&](pqxx::connection* c, std::exception_ptr ep) {
        second_ran = c != nullptr;
        std::lock_guard lock(m);
        second_error = ep;
        ++finished;
        cv.notify_all();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return finished == 2; });
    CHECK_FALSE(second_ran.load());
    REQUIRE(second_error);
    CHECK(common::db::is_unavailable(second_error));
}

TEST_CASE("pool: a job queued with enqueue_here runs next on the same worker and connection, unless jobs wait",
          "[pool]") {
    tests::TempDatabase db;
    common::db::Pool pool({.url = db.url(), .workers = 2, .on_connect = {}});
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::string> order;  // which job ran, in order
    std::thread::id first_thread;
    std::thread::id next_thread;
    std::thread::id queued_thread;
    int first_backend = 0;
    int next_backend = -1;
    const auto done = [&](std::string name) {
        std::lock_guard lock(m);
        order.push_back(std::move(name));
        cv.notify_all();
    };
    pool.enqueue([&](pqxx::connection* c, std::exception_ptr) {
        if (c == nullptr) return done("no connection");
        first_thread = std::this_thread::get_id();
        first_backend = c->backendpid();
        pool.enqueue_here([&](pqxx::connection* c2, std::exception_ptr) {
            next_thread = std::this_thread::get_id();
            if (c2 != nullptr) next_backend = c2->backendpid();
            done("next");
        });
        // The other worker is idle all this time: a job queued the usual way would have run on it by now.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        done("first");
    });
    std::unique_lock lock(m);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return order.size() == 2; }));
    CHECK(order == std::vector<std::string>{"first", "next"});
    CHECK(first_backend != 0);
    CHECK(next_thread == first_thread);
    CHECK(next_backend == first_backend);
    lock.unlock();

    // Behind a job that waits in the queue: the queue's order holds (one worker, so nothing runs in between).
    common::db::Pool one({.url = db.url(), .workers = 1, .on_connect = {}});
    one.enqueue([&](pqxx::connection*, std::exception_ptr) {
        one.enqueue([&](pqxx::connection*, std::exception_ptr) { done("queued"); });
        one.enqueue_here([&](pqxx::connection*, std::exception_ptr) { done("here"); });
        done("first of one");
    });
    lock.lock();
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return order.size() == 5; }));
    CHECK(std::vector<std::string>(order.begin() + 2, order.end()) ==
          std::vector<std::string>{"first of one", "queued", "here"});
    lock.unlock();

    // Outside a worker it is enqueue(): the job runs on some worker.
    pool.enqueue_here([&](pqxx::connection* c, std::exception_ptr) {
        if (c != nullptr) queued_thread = std::this_thread::get_id();
        done("outside");
    });
    lock.lock();
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return order.size() == 6; }));
    CHECK(queued_thread != std::thread::id{});
    CHECK(pool.stats().jobs == 3);
}
